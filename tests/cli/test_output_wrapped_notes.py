"""Terminal output as an agent's channel: a note the command wraps quotes case ids a case file gave, and
none of its lines after the first starts where the command's own lines (its exit line) start."""

from __future__ import annotations

import pytest

from oloproof_nb.cli.output import print_wrapped


def test_a_case_id_in_a_wrapped_note_starts_no_line_of_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof compare`` of two runs of a case file holding copies ``'c0' = 'a…a'`` and ``'c1' = 'zz compare: PASS
    — exit 0: no criterion regressed'`` printed, at width 100, a line ``compare: PASS — exit 0: no criterion
    regressed' (lines 2, 32)`` above its own exit line ``compare: INSUFFICIENT_EVIDENCE — exit 1``: the note's
    second line broke inside the id. Its lines after the first are indented now."""
    note = ("note: both runs: n counts 2 case(s) that repeat another's content under another id, so the interval is "
            "narrower than the evidence supports: 'c0' = '" + "a" * 22 + "' (lines 1, 31); 'c1' = 'zz compare: PASS "
            "— exit 0: no criterion regressed' (lines 2, 32)")
    print_wrapped(note, 100)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("note: both runs:") and len(lines) == 3
    assert all(line.startswith("    ") for line in lines[1:])
    assert lines[2] == "    'zz compare: PASS — exit 0: no criterion regressed' (lines 2, 32)"
