"""At most ``limit`` tasks in flight, results as they complete, items that share a key never at once, the tasks
in flight cancelled when the caller stops, a failed task raised as ``lost`` says (``_run/bounded.py``)."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait

import pytest

import oloproof_nb as op
from oloproof_nb._run.bounded import bounded


def test_bounded_never_has_more_than_its_limit_in_flight() -> None:
    in_flight = 0
    most = 0
    pending: list[Future[int]] = []

    def submit(item: int) -> Future[int]:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        future: Future[int] = Future()
        future.set_result(item)
        pending.append(future)
        return future

    got = []
    for item in bounded(submit, range(10), 3):
        in_flight -= 1
        got.append(item)
    assert sorted(got) == list(range(10))
    assert most == 3


def test_bounded_cancels_the_tasks_in_flight_when_its_caller_stops() -> None:
    """Ctrl-C (or an error) while batches wait on an executor: those not started never run. Before, a Dask
    cluster ran every batch queued (64 in flight) after the run had stopped: cases with side effects that no
    record kept, run again by the resume."""
    futures: list[Future[int]] = []

    def submit(item: int) -> Future[int]:
        futures.append(Future())
        if item == 0:  # the first task is done; the others wait on the executor
            futures[-1].set_result(0)
        return futures[-1]

    results = bounded(submit, range(10), 3)
    assert next(results) == 0
    results.close()  # the caller stops (Ctrl-C, an error)
    assert len(futures) == 3 and all(f.cancelled() for f in futures[1:])


def test_bounded_raises_a_failed_task_as_lost_says() -> None:
    """A task's own error is raised as it is; one ``lost`` recognises (an executor's) as ``lost`` words it."""
    def submit(item: int) -> Future[int]:
        future: Future[int] = Future()
        future.set_exception(KeyError(item) if item else RuntimeError("gone"))
        return future

    def lost(item: int, exc: Exception) -> Exception | None:
        return op.OloproofError(f"lost {item}") if isinstance(exc, RuntimeError) else None

    with pytest.raises(op.OloproofError, match="lost 0"):
        list(bounded(submit, [0], 1, lost=lost))
    with pytest.raises(KeyError):
        list(bounded(submit, [1], 1, lost=lost))


def test_bounded_gives_every_task_done_in_the_same_wait_before_raising_a_failed_one() -> None:
    """Tasks a wait finds done, two failed among them: each that succeeded is given, in the order submitted, and
    then the first failure submitted is raised. Raised first, a batch that had finished was dropped: its records
    were never written and a resume ran its cases again."""
    def task(item: int) -> int:
        if item in (0, 3):
            raise KeyError(item)
        return item

    submitted: list[Future[int]] = []
    got: list[int] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        def submit(item: int) -> Future[int]:
            submitted.append(pool.submit(task, item))
            if len(submitted) == 6:  # all done before bounded waits: one wait finds every task done
                wait(submitted)
            return submitted[-1]

        with pytest.raises(KeyError) as raised:
            for result in bounded(submit, range(6), 6):
                got.append(result)
    assert got == [1, 2, 4, 5]
    assert raised.value.args == (0,)


@pytest.mark.parametrize("seed", range(5))
def test_items_that_share_a_key_never_run_at_once_and_all_finish(seed: int) -> None:
    """``bounded`` with keys (the files cases observe): random items on 3 threads, each holding 0–2 of 4 keys.
    Every item runs exactly once, no two items sharing a key overlap, items sharing a key start in their
    order, and items with free keys go ahead (the run is not serial)."""
    rng = random.Random(seed)
    items = [(i, frozenset(rng.sample("abcd", rng.randint(0, 2)))) for i in range(60)]
    lock = threading.Lock()
    running: dict[int, frozenset[str]] = {}
    clashes: list[tuple[int, int]] = []
    order: list[int] = []
    most = [0]

    def task(item: tuple[int, frozenset[str]]) -> int:
        i, keys = item
        with lock:
            clashes.extend((i, j) for j, other in running.items() if other & keys)
            running[i] = keys
            order.append(i)
            most[0] = max(most[0], len(running))
        time.sleep(rng.uniform(0, 0.004))
        with lock:
            del running[i]
        return i

    with ThreadPoolExecutor(max_workers=3) as pool:
        done = list(bounded(lambda item: pool.submit(task, item), items, 6, keys=lambda item: item[1]))
    assert sorted(done) == list(range(60)) and not clashes
    for key in "abcd":
        mine = [i for i, keys in items if key in keys]
        assert [i for i in order if i in mine] == mine  # in their order
    assert most[0] >= 2


def test_bounded_holds_no_task_whose_result_it_gave() -> None:
    """A result given, its task is no longer referenced while the caller works and the next wait runs. Held, a Dask
    future keeps its result on the worker, and when that worker died the scheduler ran the batch again (a case
    already recorded ran twice: its side effects too) for a result nobody would read."""
    import gc
    import weakref

    refs: dict[int, weakref.ReferenceType[Future[int]]] = {}

    def submit(item: int) -> Future[int]:
        future: Future[int] = Future()
        future.set_result(item)
        refs[item] = weakref.ref(future)
        return future

    results = bounded(submit, range(3), 3)
    for got in results:
        gc.collect()
        assert refs[got]() is None, f"the task of item {got} is still referenced"
    assert sorted(refs) == [0, 1, 2]
