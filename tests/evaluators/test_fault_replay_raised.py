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
from _fault_systems import DictDesk, RaisesOnFault, write_suite

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
