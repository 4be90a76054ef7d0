"""The do-nothing system and how its run is started (oloproof_nb._run.baseline), without running a suite.

Each expected value is written by hand; the whole baseline (a real suite, the gate's idle columns) is in
tests/_analysis/test_baseline.py.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oloproof_nb._run import baseline as noop


class Box:
    """A user's system: a sandbox and an agent that must never be called by the no-op."""

    version = "box-1"

    def reset(self, state: dict[str, Any]) -> None: ...

    def snapshot(self) -> dict[str, Any]:
        return {"orders": []}

    def run(self, input: Any) -> Any:  # noqa: A002 - the system protocol's parameter name
        raise AssertionError("the no-op system called the user's agent")

    def fingerprint(self) -> str:
        return "box-code"


def _suite(epochs: int, reductions: dict[str, str] | None, system: Any = Box, root: Path = Path("/s")) -> Any:
    release = None if reductions is None else SimpleNamespace(reductions=reductions)
    return SimpleNamespace(config=SimpleNamespace(epochs=epochs), release=release, root=root,
                           resolve_system=lambda: system)


def test_the_no_op_takes_no_step_gives_no_answer_and_never_runs_the_agent() -> None:
    """Mutants caught: ``run`` handed to the user's system (Box.run raises), an answer or a status other than
    ``completed``, the user's version kept, any other attribute (``fingerprint``) lent."""
    idle = noop.NoOpSystem(Box())
    trajectory = idle.run({"order_id": "ord-1"})
    assert (trajectory.steps, trajectory.answer, trajectory.status) == ([], None, "completed")
    assert idle.version == noop.NOOP_VERSION == "oloproof-noop"
    assert idle.snapshot() == {"orders": []}
    assert not hasattr(idle, "fingerprint") and not hasattr(idle, "observe")  # Box has no observe: none lent


def test_a_class_gives_a_fresh_sandbox_per_no_op_and_an_instance_is_shared() -> None:
    """Mutant caught: one sandbox built once and shared by every no-op of a class (workers would share state)."""
    build = noop.noop_system(_suite(1, None, system=Box))
    assert callable(build)
    first, second = build(), build()
    assert isinstance(first, noop.NoOpSystem) and first.snapshot.__self__ is not second.snapshot.__self__
    box = Box()
    shared = noop.noop_system(_suite(1, None, system=box))
    assert isinstance(shared, noop.NoOpSystem) and shared.snapshot.__self__ is box


@pytest.mark.parametrize(("epochs", "given", "reductions", "expected"), [
    (2, None, None, 2),  # no release.yaml: the suite's epochs
    (2, None, {"a": "mean"}, 2),  # mean needs one epoch
    (2, None, {"a": "pass^3", "b": "pass@5", "c": "mean"}, 5),  # the largest k, by hand max(2, 3, 5, 1)
    (2, 7, {"a": "pass^3"}, 7),  # the real run's epochs, already more than k
    (4, 1, {}, 1),  # the real run's epochs win over the suite's
])
def test_the_baseline_runs_the_epochs_its_reductions_need(epochs: int, given: int | None,
                                                          reductions: dict[str, str] | None, expected: int) -> None:
    """Mutants caught: ``min`` for ``max`` over the ks, the real run's epochs ignored, the suite's kept over them."""
    assert noop.baseline_epochs(_suite(epochs, reductions), given) == expected


def test_the_baseline_goes_to_baselines_by_thread_and_never_to_the_replay_cache(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Mutants caught: the default folder under ``runs/``, the replay cache on (the no-op's runs would go into the
    real system's cache), process isolation, the reduction's epochs not passed."""
    calls: list[dict[str, Any]] = []

    def run_suite(suite: Any, **kwargs: Any) -> Path:
        calls.append(kwargs)
        return Path(kwargs["out"])

    monkeypatch.setattr(noop, "run_suite", run_suite)
    suite = _suite(1, {"a": "pass^2"}, root=tmp_path)
    assert noop.run_baseline(suite, run_id="idle-1") == tmp_path / "baselines" / "idle-1"
    (kwargs,) = calls
    assert (kwargs["cache"], kwargs["isolation"], kwargs["epochs"], kwargs["run_id"]) == (False, "thread", 2, "idle-1")
    assert noop.run_baseline(suite, out=tmp_path / "elsewhere", run_id="idle-2") == tmp_path / "elsewhere"
