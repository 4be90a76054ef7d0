"""``unchecked_reasons`` names the transforms that are not checked, and only those."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from _metamorphic_systems import case, mm_suite, transform

import oloproof_nb as op
from oloproof_nb._analysis.validity import unchecked_notes, unchecked_reasons


def test_a_checked_transform_gets_no_reason_and_no_note(make_suite: Callable[..., Path]) -> None:
    """5 source cases, every pair labeled. ``all_valid``: 5 of 5 valid, minimum 0.9; ``at_minimum``: 4 of 5 valid
    (0.8, DESIGN.md: "at least minimum_validity" checks it), minimum 0.8; both checked. ``low``: 2 of 5 valid, a
    share below 0.9: the one reason (counted by hand). Mutant: the ``if t.checked: continue`` deleted gave the two
    checked transforms a reason, "5 of its 5 pairs are labeled valid, a share below its minimum_validity 0.9", and
    the gate a note that they are not checked."""
    ids = [f"c{i}" for i in range(1, 6)]
    minimum = {"all_valid": 0.9, "at_minimum": 0.8, "low": 0.9}
    valid = {"all_valid": 5, "at_minimum": 4, "low": 2}
    transforms = [transform(name, "", minimum_validity=m) for name, m in minimum.items()]
    evaluators = [{"type": "metamorphic_relation", "relation": "same_state", "transform": name,
                   "criterion": f"same_{name}"} for name in minimum]
    labels = {name: [{"case_id": f"c{i}~{name}", "valid": i <= valid[name]} for i in range(1, 6)] for name in minimum}
    run = op.run(op.load_suite(mm_suite(make_suite, [case(i) for i in ids], transforms, evaluators, labels)),
                 progress=False)
    why = "2 of its 5 pairs are labeled valid, a share below its minimum_validity 0.9"
    assert unchecked_reasons(run) == {"low": why}
    notes = unchecked_notes(run, [f"same_{name}" for name in minimum])
    assert len(notes) == 1 and notes[0].startswith("transform low is not checked: 2 of its 5 pairs")
