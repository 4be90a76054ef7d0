"""A ``replay()`` that returns what is not a trajectory makes that replay's error (its row is ``missing``), as one
that raises does; the run goes on, and nothing is cached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.trajectory import Change, ToolCall, Trajectory
from oloproof_nb._run.replay_cache import ReplayCache
from oloproof_nb._run.replays import make_replay

RECORDED = Trajectory(steps=[ToolCall(tool="look", result=1), ToolCall(tool="pay", args={"k": 1}, result={"ok": True})],
                      answer="paid")


class Returns:
    """A dict sandbox whose ``replay`` returns ``value``."""

    version = "v1"

    def __init__(self, value: Any) -> None:
        self.value, self.state = value, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = dict(state)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.state)

    def replay(self, trajectory: Trajectory, *, checkpoint: int, change: Change | None) -> Any:
        return self.value


@pytest.mark.parametrize(("value", "error"), [
    ("done", "replay() returned str; expected a Trajectory or a dict"),
    (None, "replay() returned NoneType; expected a Trajectory or a dict"),
])
def test_a_replay_that_returns_no_trajectory_is_an_error_of_that_replay(tmp_path: Path, value: Any,
                                                                        error: str) -> None:
    lines: list[dict[str, Any]] = []
    cache = ReplayCache(tmp_path / "replays")
    case = case_from_mapping({"id": "c0", "input": {"q": 1}, "initial_state": {"paid": False}})
    out = make_replay(Returns(value), case, RECORDED, 1, None,
                      record={"criterion": "recovers", "tool": "pay", "fault": "error"},
                      reproduce=(RECORDED, {"paid": False}, (), (), {}), run_id="r1", system_version="v1",
                      code_fingerprint="f" * 64, timeout_s=None, cache=cache,
                      append=lines.append)  # type: ignore[arg-type]  # a record is a dict
    assert (out.trajectory, out.error, out.diverged, out.cached) == (None, error, False, False)
    (line,) = lines
    assert (line["kind"], line["trajectory"], line["error"]) == ("control", None, error)
    assert "traceback" not in line  # the system broke its contract; no code of its raised
    assert not (tmp_path / "replays").exists() or not list((tmp_path / "replays").glob("*.json"))
