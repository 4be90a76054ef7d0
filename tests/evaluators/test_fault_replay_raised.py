"""A faulted replay that raised (its control did not) says what the agent was handed and what to do.

An example: a τ-bench-style banking benchmark whose tools return JSON text, wrapped with each ``env.step`` sent
through ``rec.tool`` as it is: its agent ``json.loads`` every result, so on ``op.fault_result`` (a dict) each of the
42 faulted replays raised and was ``missing`` with ``replay_raised: TypeError: the JSON object must be str, bytes
or bytearray, not dict``, a reason that named neither the fault result nor the fix (README section 1a).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _fault_systems import DictDesk, RaisesOnFault, refund_case, write_suite

import oloproof_nb as op

CRITERION = "recovers_from_{fault}_at_issue_refund"


class ParsesText(DictDesk):
    """Reads the refund's result as the JSON text a benchmark's tool returns."""

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        result = rec.tool("issue_refund", lambda **kw: json.dumps(self.issue_refund(**kw)), order_id=input["order_id"])
        return "refunded" if json.loads(result).get("ok") else "sorry"


def _reasons(tmp_path: Path, system: Any, fault: str) -> list[str]:
    run = op.run(write_suite(tmp_path / "suite", fault=fault), system=system, progress=False)
    df = run.replays
    return list(df[df["criterion"] == CRITERION.format(fault=fault)]["reason"])


def test_an_agent_that_parses_text_names_the_fault_result_it_was_handed(tmp_path: Path) -> None:
    reasons = _reasons(tmp_path, ParsesText(), "error")
    assert reasons and set(reasons) == {
        "replay_raised: TypeError: the JSON object must be str, bytes or bytearray, not dict (the control replay "
        "ran; here issue_refund returned the fault result {'error': 'error', 'message': 'issue_refund failed', "
        "'ok': False}: give the agent the failure in the form issue_refund's own failures take, README section 1a)"}


@pytest.mark.parametrize(("fault", "shown"), [("timeout", "{'error': 'timeout', 'message': 'issue_refund timed out', "
                                                          "'ok': False}"),
                                              ("malformed", "'<<malformed>>'")])
def test_each_fault_names_its_own_result(tmp_path: Path, fault: str, shown: str) -> None:
    reasons = _reasons(tmp_path, RaisesOnFault(), fault)
    assert reasons and all(r.startswith("replay_raised: KeyError: 'refund_id' (the control replay ran; here "
                                        f"issue_refund returned the fault result {shown}: ") for r in reasons)


class NeverReset(DictDesk):
    """A sandbox with ``snapshot()`` and no ``reset()``: its world is the one its constructor built."""

    def __init__(self) -> None:
        super().__init__()
        self.state = {"orders": {"ord-001": {"status": "paid", "amount": 40.0}}}

    def __getattribute__(self, name: str) -> Any:
        if name == "reset":
            raise AttributeError(name)
        return super().__getattribute__(name)


@pytest.mark.filterwarnings("ignore::oloproof_nb.VacuousCheckWarning")  # no initial_state: the bystander's check
def test_a_replay_the_runner_refused_names_no_exception_of_the_systems(tmp_path: Path) -> None:
    """A system with ``snapshot()`` and no ``reset()`` cannot be replayed on the instance that ran the case: the
    runner refuses before it calls ``replay()``. The reason read ``replay_raised: TypeError: the system has
    snapshot() but no reset(): …``, as if the system's replay() had raised a TypeError; it names the refusal alone,
    and the replays journal holds no traceback (it showed oloproof's own lines)."""
    folder = write_suite(tmp_path / "suite", cases=[{"id": "ord-001", "input": {"order_id": "ord-001"},
                                                    "expected": {"answer": "refunded"}}])
    run = op.run(folder, system=NeverReset(), out=tmp_path / "run", progress=False)
    assert list(run.cases["status"]) == ["completed"]  # the case itself: the instance's first pass
    reasons = list(run.replays["reason"])
    assert reasons == ["replay_raised: the system has snapshot() but no reset(): this instance already ran a case "
                       "(or a replay), and nothing set its world back, so this one would start from the world that "
                       "one left and its state would be judged against it; add reset(state), which the runner calls "
                       "before each case with a copy of initial_state ({} for a case without one)"]
    journal = [json.loads(line) for line in (tmp_path / "run" / "replays.jsonl").read_text().splitlines()]
    assert journal and all("traceback" not in line for line in journal)


@pytest.mark.filterwarnings("ignore::oloproof_nb.VacuousCheckWarning")
def test_a_case_the_runner_refused_names_no_exception_of_the_systems(tmp_path: Path) -> None:
    """A case with an ``initial_state`` on a system with ``snapshot()`` and no ``reset()`` is refused before the
    system is called: its error names the refusal, not a ``TypeError`` the system never raised."""
    folder = write_suite(tmp_path / "suite", cases=[{"id": "ord-001", "input": {"order_id": "ord-001"},
                                                    "initial_state": {"orders": {}},
                                                    "expected": {"answer": "refunded"}}])
    run = op.run(folder, system=NeverReset(), out=tmp_path / "run", progress=False)
    assert list(run.cases["status"]) == ["error"]
    assert list(run.cases["error"]) == ["the system has snapshot() but no reset(): the case's initial_state would "
                                        "never be set, and its state would be judged against a world it did not "
                                        "start from; add reset(state), which the runner calls before each case with "
                                        "a copy of initial_state"]


class ClockChangesOnTheFault(DictDesk):
    """Reads a clock before the refund; the hour turns between the control replay and the faulted one (the case
    is the clock's first read, the control its second), so only the faulted replay leaves the recording."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def clock(self) -> dict[str, Any]:
        self.reads += 1
        return {"ok": True, "hour": 10 if self.reads < 3 else 11}

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        rec.tool("clock", self.clock)
        return super().act(input, rec)


def test_a_faulted_replay_that_left_the_recording_before_the_fault_is_not_applied(tmp_path: Path) -> None:
    """The Recorder raised ``ReplayDiverged`` at step 0, before the refund at step 2: the agent was never handed the
    fault. The reason read ``replay_raised: ReplayDiverged: … (the control replay ran; here issue_refund returned the
    fault result …: give the agent the failure in the form issue_refund's own failures take …)``, a fix for a fault
    result that never reached the agent; it is the case of a replay that is not the recording up to the fault."""
    folder = write_suite(tmp_path / "suite", cases=[refund_case("ord-001")])
    run = op.run(folder, system=ClockChangesOnTheFault(), progress=False)
    rows = run.replays[run.replays["criterion"] == CRITERION.format(fault="error")].to_dict("records")
    assert [(r["checkpoint"], r["control_reproduced"], r["verdict"]) for r in rows] == [(2, True, "missing")]
    assert rows[0]["reason"] == (
        "fault_not_applied: ReplayDiverged: step 0: clock returned {'ok': True, 'hour': 11}, recorded {'ok': True, "
        "'hour': 10} (the control replay reproduced the recording, this one did not before the fault: the system is "
        "not deterministic given its recorded calls, README section 3)")
