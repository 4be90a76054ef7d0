"""The replay and reset parts of ``_run/sandbox``: what ``replay_case`` hands the system and what it stores.

Each test pins a rule the nearest tests would let change unseen; the expected values are the ones
the test gives the system (or the contract in the module docstrings), never read back from the code.
"""

from __future__ import annotations

from typing import Any

from oloproof_nb._core.case import Case, case_digest
from oloproof_nb._core.trajectory import Change, ToolCall, Trajectory
from oloproof_nb._run.sandbox import replay_case

RECORDED = Trajectory(steps=[ToolCall(tool="look", result=1), ToolCall(tool="pay", args={"k": 1}, result={"ok": True})],
                      answer="paid")


def _case(epoch: int = 1, **kw: Any) -> Case:
    raw = {"id": "c1", "input": {"q": "x"}, **kw}
    case = Case.model_validate({**raw, "cluster": "c1", "digest": case_digest(raw), "source_id": "c1"})
    return case if epoch == 1 else case.model_copy(update={"epoch": epoch})


class _Desk:
    """A dict sandbox that remembers what each call was given."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {"left": "by the last case"}
        self.seen: dict[str, Any] = {}

    def reset(self, state: dict[str, Any]) -> None:
        self.seen["reset"] = dict(state)
        self.state = dict(state)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.state)

    def run(self, given: Any) -> Any:
        return Trajectory(answer="ran")

    def replay(self, recorded: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory:
        self.seen["replay"] = (checkpoint, change)
        return Trajectory(steps=recorded.steps[:checkpoint], answer="replayed")


def _replay(system: Any, case: Case, checkpoint: int = 1, change: Change | None = None) -> Any:
    return replay_case(system, case, RECORDED, checkpoint, change, run_id="r", system_version=None, timeout_s=None)


def test_replay_is_called_with_the_checkpoint_and_the_change_it_was_given() -> None:
    """Each replay gets the checkpoint it was given (not ``checkpoint + 1``) and its change (not ``change=None``, the
    control replay instead of the faulted one)."""
    fault = Change(result={"ok": False})
    for checkpoint, change in ((0, None), (1, fault)):
        desk = _Desk()
        out = _replay(desk, _case(), checkpoint, change)
        assert desk.seen["replay"] == (checkpoint, change)
        assert len(out.trajectory.steps) == checkpoint  # the desk keeps the steps before the checkpoint it got


def test_a_replay_gets_the_epoch_when_its_own_signature_asks_not_when_run_does() -> None:
    """Whether ``replay`` gets ``epoch=`` follows ``replay``'s signature (``replay_case`` docstring), not
    ``run``'s. A ``run`` with ``epoch`` and a ``replay`` without must not be given one (it would raise TypeError),
    and a ``replay`` with ``epoch`` is given the case's epoch even when ``run`` has none."""
    class RunOnly(_Desk):
        def run(self, given: Any, epoch: int = 1) -> Any:
            return Trajectory(answer=str(epoch))

    class ReplayOnly(_Desk):
        def replay(self, recorded: Trajectory, *, checkpoint: int, change: Change | None,
                   epoch: int = 0) -> Trajectory:
            self.seen["epoch"] = epoch
            return Trajectory(answer="replayed")

    assert _replay(RunOnly(), _case(epoch=3)).trajectory.answer == "replayed"
    desk = ReplayOnly()
    _replay(desk, _case(epoch=3))
    assert desk.seen["epoch"] == 3


def test_a_sandbox_that_can_only_be_reset_is_reset_before_a_replay() -> None:
    """Not reset only when the system also has ``snapshot``: "a sandbox that can only be reset is still
    reset" (``_in_sandbox``), so its replay starts from the case's ``initial_state``, not the world the last case
    left; with no snapshot there is no stored state."""
    class ResetOnly:
        def __init__(self) -> None:
            self.state: dict[str, Any] = {"left": "by the last case"}
            self.seen: dict[str, Any] = {}

        def reset(self, state: dict[str, Any]) -> None:
            self.state = dict(state)

        def replay(self, recorded: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory:
            self.seen["world"] = dict(self.state)
            return Trajectory(answer="replayed")

    desk = ResetOnly()
    out = _replay(desk, _case(initial_state={"balance": 7}))
    assert desk.seen["world"] == {"balance": 7}
    assert out.env is None


def test_the_state_of_a_later_epochs_replay_says_its_epoch() -> None:
    """The ``epoch`` key is kept: an ``environment_state/v1`` record of epoch 2 names its epoch, one
    of epoch 1 has no such key (as a case record)."""
    assert _replay(_Desk(), _case(epoch=2, initial_state={"n": 1})).env["epoch"] == 2
    assert "epoch" not in _replay(_Desk(), _case(initial_state={"n": 1})).env


def test_a_replays_trajectory_carries_the_cases_input() -> None:
    """The input is attached: what a replay returned is stored with the case's input, as a run's
    trajectory is, whatever input the system put in it."""
    class OwnInput(_Desk):
        def replay(self, recorded: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory:
            return Trajectory(answer="replayed", input={"q": "made up"})

    out = _replay(OwnInput(), _case(initial_state={"n": 1}))
    assert out.trajectory.input == {"q": "x"} and out.stored["input"] == {"q": "x"}


def test_epoch_given_names_each_method_that_declares_epoch() -> None:
    """Not only ``run`` is looked at: the manifest's ``epoch_given`` names ``replay`` too when its signature
    declares ``epoch`` (a pool reads it to tell which runs' tries are the same), and is None when neither does."""
    from oloproof_nb._run.sandbox import epoch_given

    class Both(_Desk):
        def run(self, given: Any, *, epoch: int = 1) -> Any:
            return Trajectory(answer="ran")

        def replay(self, recorded: Trajectory, *, checkpoint: int, change: Change | None,
                   epoch: int = 1) -> Trajectory:
            return recorded

    class ReplayOnly(_Desk):
        def replay(self, recorded: Trajectory, *, checkpoint: int, change: Change | None,
                   epoch: int = 1) -> Trajectory:
            return recorded

    assert (epoch_given(Both()), epoch_given(ReplayOnly()), epoch_given(_Desk())) == (["run", "replay"], ["replay"],
                                                                                       None)
