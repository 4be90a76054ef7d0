"""A fault criterion whose tool the system writes in another Unicode form says so.

``tool: rembourser_café`` (NFC, as typed) while the system records ``rembourser_cafe`` + U+0301 (NFD, as some
editors and macOS file names write it): no case calls the tool as written, the criterion is vacuous, and the
finding said ``did you mean rembourser_café?``, the same text to the eye. Now it names both with escapes.
"""

from __future__ import annotations

import json
import unicodedata
import warnings
from pathlib import Path

import oloproof_nb as op

NFC = unicodedata.normalize("NFC", "rembourser_café")
NFD = unicodedata.normalize("NFD", "rembourser_café")

DESK = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "uni-r37"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def refund(self):
        self.state["refunded"] = True
        return {{"ok": True}}

    def act(self, input, rec):
        rec.tool({recorded!r}, self.refund)
        return "refunded"
'''


def _reason(tmp_path: Path, recorded: str, configured: str, module: str) -> str:
    """The gate's reason for a ``fault_recovery`` of tool ``configured`` on a desk that records ``recorded``
    (no case calls the tool as configured: the run has no replay)."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / f"{module}.py").write_text(DESK.format(recorded=recorded), encoding="utf-8")
    (root / "cases.jsonl").write_text(json.dumps({"id": "a", "input": {}, "initial_state": {},
                                                  "expected": {"answer": "refunded"}}) + "\n", encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        f"name: uni\nsystem: {module}:Desk\nevaluators:\n  - {{type: answer_matches}}\n"
        f"  - {{type: fault_recovery, tool: {configured}, fault: error}}\n", encoding="utf-8")
    run = op.run(root, out=tmp_path / "run", progress=False)
    assert len(run.replays) == 0
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        table = op.gate(run).table.set_index("criterion")
    reason = str(table.loc[f"recovers_from_error_at_{configured}", "reason"])
    assert "no case called tool" in reason, reason
    return reason


def test_a_tool_named_in_another_unicode_form_is_named_with_escapes(tmp_path: Path) -> None:
    assert NFC != NFD
    reason = _reason(tmp_path, NFD, NFC, "uni_desk_r37")
    assert "the system called 'rembourser_cafe\\u0301', the same letters as 'rembourser_caf\\xe9'" in reason
    assert "did you mean" not in reason  # before: "did you mean rembourser_café?"


def test_a_tool_named_in_another_letter_case_is_no_other_unicode_form(tmp_path: Path) -> None:
    """``Refund`` and ``refund`` differ in a letter, not in how one letter is encoded (their
    NFC forms differ): the hint is difflib's "did you mean Refund?", never "the same letters in another Unicode
    form"."""
    reason = _reason(tmp_path, "Refund", "refund", "case_desk_m39")
    assert "did you mean Refund?" in reason and "Unicode form" not in reason
