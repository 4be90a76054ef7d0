"""The do-nothing baseline: every case of a suite on the user's own sandbox, with an agent that does nothing.

The no-op system wraps an instance of the suite's ``system``: ``reset``,
``snapshot`` and ``observe`` are the sandbox's own (so the state is reset to
``initial_state``, read back and its artifacts observed exactly as in a real
run), ``run`` takes no step and gives no answer. It goes through the one sandbox routine and the one runner, so every
criterion judges it as it judges the real system. A criterion whose threshold
this baseline already meets cannot tell a working agent from an idle one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._config.suite import Suite
from .._core.epochs import parse_reduce
from .._core.trajectory import Trajectory
from .runner import Finish, Progress, refuse_home_shorthand, run_suite
from .sandbox import Idle
from .store import new_run_id
from .systems import as_factory

__all__ = ["NoOpSystem", "NOOP_VERSION", "BASELINE_DIR", "noop_system", "run_baseline"]

#: ``system_version`` of every baseline run (the run's manifest says it was the no-op system).
NOOP_VERSION = "oloproof-noop"
#: Folder of the suite where baseline runs go by default (``baselines/<run_id>/``), apart from ``runs/``.
BASELINE_DIR = "baselines"

#: What the no-op system takes from the user's: the sandbox, none of the agent. ``observe`` reads the artifacts the
#: sandbox holds (an outcome check of the baseline judged "nothing can observe" where the sandbox held a valid one).
_SANDBOX_METHODS = frozenset({"reset", "snapshot", "observe"})


class NoOpSystem(Idle):
    """The user's sandbox with an agent that does nothing: no step, no answer, status ``completed``.

    ``reset``, ``snapshot`` and ``observe`` are the wrapped system's own, and exist only when it has them;
    ``replay`` does not exist (fault replays have no call to replace). A sandbox with ``snapshot()`` and no
    ``reset()`` runs every case (:class:`~.sandbox.Idle`): the no-op leaves its world as it found it.
    """

    version = NOOP_VERSION

    def __getattr__(self, name: str) -> Any:
        if name in _SANDBOX_METHODS:
            return getattr(self._sandbox, name)  # AttributeError when the system has none: not stateful
        raise AttributeError(name)

    def run(self, input: Any) -> Trajectory:  # noqa: A002 - the system protocol's parameter name
        """Do nothing: no step, no answer."""
        return Trajectory(steps=[], answer=None, status="completed")


def noop_system(suite: Suite) -> Callable[[], NoOpSystem] | NoOpSystem:
    """A factory of no-op systems around fresh instances of the suite's system (one shared instance if so given)."""
    factory, fresh = as_factory(suite.resolve_system())
    if not fresh:
        return NoOpSystem(factory())

    def build() -> NoOpSystem:
        return NoOpSystem(factory())

    return build


def baseline_epochs(suite: Suite, epochs: int | None = None) -> int:
    """The epochs of a do-nothing run: ``epochs`` (the real run's), else the suite's, raised to the largest k of
    a ``pass^k`` / ``pass@k`` reduction in release.yaml (the no-op does the same every epoch, and a gate
    reducing with k needs k of them)."""
    needed = max((parse_reduce(text).k for text in (suite.release.reductions if suite.release else {}).values()),
                 default=1)
    return max(suite.config.epochs if epochs is None else epochs, needed)


def run_baseline(suite: Suite, out: str | Path | None = None, workers: int = 1,
                 progress: Progress | None = None, run_id: str | None = None, epochs: int | None = None,
                 finish: Finish | None = None) -> Path:
    """Run every case of ``suite`` with the no-op system into a run directory and return it.

    Parameters
    ----------
    suite : Suite
        The suite; its ``system`` provides the sandbox (``reset``/``snapshot``/``observe``).
    out : path, optional
        The run directory (default ``baselines/<run_id>/`` in the suite folder).
    workers : int
        Sandboxes used concurrently (threads).
    progress : callable, optional
        ``progress(done, total)``, as for the runner.
    run_id : str, optional
        The baseline run's id (default: a new one).
    epochs : int, optional
        The real run's epochs (default: the suite's); raised to what release.yaml's reductions need
        (:func:`baseline_epochs`), which the no-op run would otherwise refuse.
    finish : callable, optional
        What the messages of a stopped baseline say about finishing it (default: run ``op.baseline`` again;
        ``oloproof run --baseline`` says it in its own words).

    Returns
    -------
    Path
        The baseline's run directory: an ordinary run whose ``system_version`` is ``oloproof-noop``.

    Notes
    -----
    Threads, not processes (the no-op calls only ``reset``, ``snapshot`` and ``observe``), and no replay
    cache (the no-op makes no call to replay, and must never add to the cache of the real system).
    """
    refuse_home_shorthand(out)  # before it is made absolute: the "~" is its first part only as given
    run_id = run_id or new_run_id()
    directory = Path(out).absolute() if out is not None else suite.root / BASELINE_DIR / run_id
    return run_suite(suite, system=noop_system(suite), workers=workers, out=directory, progress=progress,
                     cache=False, isolation="thread", run_id=run_id, epochs=baseline_epochs(suite, epochs),
                     finish=finish or _start_again)


def _start_again(directory: Path, fingerprint: str | None) -> str:
    """What the messages of a stopped baseline say about finishing it: it is run again. ``op.baseline`` takes no
    ``resume``, and ``op.run(suite, out=..., resume=True)``, which a stopped run's messages name, refuses the
    folder of a baseline (its system is the no-op, not the suite's: "the system version changed")."""
    return "a baseline cannot be resumed: run op.baseline(suite) again, into a new folder"
