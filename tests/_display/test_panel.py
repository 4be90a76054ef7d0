"""oloproof_nb._display.panel: how a case panel names each step (its values' escaping is tested in test_html.py
and test_report.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import oloproof_nb as op

NAMED = '''
class Desk:
    version = "named-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        return {"steps": [{"kind": "message", "role": "assistant", "name": "parse_request", "content": {"id": 7}},
                          {"kind": "tool_call", "tool": "lookup", "args": {"id": 7}, "result": {"ok": True}},
                          {"kind": "message", "role": "assistant", "content": "done"}],
                "answer": "done", "status": "completed"}
'''


def test_a_recorded_model_call_is_named_as_its_fault_replay_names_it(make_suite: Callable[..., Path],
                                                                     tmp_path: Path) -> None:
    """Review U3: the panel listed the example's recorded ``parse_request`` call as ``assistant:`` while the
    fault-replay view beside it (and the steps frame's ``tool`` column) named it ``parse_request``. A message
    without a recorded call keeps its role."""
    folder = make_suite([{"id": "c1", "input": {}, "initial_state": {}, "expected": {"answer": "done"}}],
                        evaluators=[{"type": "answer_matches"}], system="sysmod:Desk", system_code=NAMED)
    panel = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1")
    lines = [line.strip() for line in repr(panel).splitlines() if line.strip().startswith("[")]
    assert lines == ['[0] parse_request: {"id": 7}', '[1] lookup({"id": 7}) -> {"ok": true}', '[2] assistant: "done"']
    assert re.findall(r"<td><i>(.*?)</i></td>", panel._repr_html_()) == ["parse_request", "assistant"]
