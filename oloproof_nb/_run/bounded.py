"""Tasks submitted to an executor with a bounded number in flight, results yielded as they complete.

Shared by a thread run (:func:`~.runner._run_threaded`) and a run on the user's executor
(:func:`~.remote.run_on_executor`).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import TypeVar

from .observe import HeldBack

__all__ = ["bounded"]

T = TypeVar("T")
R = TypeVar("R")


#: How often the wait for the tasks in flight looks for one the executor cancelled: ``Future.cancel()``, which an
#: executor shut down with ``cancel_futures=True`` calls on each task still in its queue, wakes no
#: ``concurrent.futures.wait``, and the run waited for such a task for ever.
_CANCELLED_POLL_S = 0.5


def bounded(submit: Callable[[T], Future[R]], items: Iterable[T], limit: int,
            keys: Callable[[T], frozenset[str]] = lambda item: frozenset(),
            lost: Callable[[T, Exception], Exception | None] = lambda item, exc: None) -> Iterator[R]:
    """Submit ``items`` with at most ``limit`` tasks in flight; yield results as they complete.

    An item sharing one of its ``keys`` (files it observes, see :func:`~.observe.shared_files`) with a task in flight
    waits until that task is done; later items go ahead meanwhile (:class:`HeldBack`). The tasks one wait finds
    done are taken in the order submitted: each that succeeded is yielded, then the first that failed is raised
    as ``lost(item, error)`` says (None: its own error). When the caller stops early (an error, Ctrl-C), the
    tasks still in flight are cancelled: those not started never run (a Dask cluster ran every queued batch
    of a stopped run, whose records nobody kept, and a resume ran their cases again). A task the executor
    cancelled is failed with ``CancelledError``, though no ``wait`` sees it end (:data:`_CANCELLED_POLL_S`).
    """
    in_flight: dict[Future[R], tuple[T, frozenset[str]]] = {}
    busy: collections.Counter[str] = collections.Counter()
    waiting = HeldBack(items, keys)
    try:
        while True:
            while len(in_flight) < limit and (free := waiting.next_free(lambda k: busy[k] > 0)) is not None:
                item, held = free
                busy.update(held)
                in_flight[submit(item)] = (item, held)
            if not in_flight:
                return  # nothing in flight holds a key: nothing waits
            done, _ = wait(in_flight, timeout=_CANCELLED_POLL_S, return_when=FIRST_COMPLETED)
            done |= {future for future in in_flight if future.cancelled()}  # no wait() sees them end
            # in the order submitted, every success before the first failure: raised first, a batch that finished
            # in the same wait was dropped, its records never written, and the resume ran its cases again
            finished = collections.deque(future for future in in_flight if future in done)
            del done
            failed: tuple[T, Exception] | None = None  # the first, in the order submitted
            while finished:
                future = finished.popleft()
                item, held = in_flight.pop(future)
                busy.subtract(held)
                try:
                    result = future.result()
                except Exception as exc:
                    failed = failed or (item, exc)
                    continue
                # not held while the caller works and the next wait runs: a Dask future held keeps its result on
                # the worker, and when that worker died the scheduler ran the batch again, a recorded case twice
                del future
                yield result
            if failed is not None:
                first, error = failed
                if (instead := lost(first, error)) is None:
                    raise error
                raise instead from error
    finally:
        for future in in_flight:
            future.cancel()
