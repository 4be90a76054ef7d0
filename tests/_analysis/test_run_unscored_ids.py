"""``run.unscored_ids`` cannot be set.

It was a cached property, which takes an assignment: ``run.unscored_ids = frozenset()`` made the gate's line
("3 copies labeled invalid, scored by no criterion") and ``Gate.unscored`` say no copy was left out, beside a
table built without them (its verdicts come from the labels, not from this attribute), and a copy named there
was called left out while its rows were scored.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from _metamorphic_systems import case, mm_suite

import oloproof_nb as op
from oloproof_nb.errors import OloproofError


def test_the_copies_left_out_cannot_be_set(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """6 sources, minimum_validity 0.5: c1~t and c4~t labeled invalid, 4 of 6 valid, so the transform is checked
    and both copies are left out of answer_matches: 6 + 4 = 10 rows (hand count)."""
    sources = [f"c{i}" for i in range(6)]
    labels = [{"case_id": f"{s}~t", "valid": s not in ("c1", "c4"), "labeler": "ana"} for s in sources]
    t = {"name": "t", "field": "message", "template": "{value} please", "validity_labels": "labels/t.jsonl",
         "minimum_validity": 0.5}
    root = mm_suite(make_suite, [case(s) for s in sources], [t], [{"type": "answer_matches"}], {"t": labels})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    for value in (frozenset(), frozenset({"c0~t"})):
        with pytest.raises(OloproofError, match=r"^run\.unscored_ids are the copies the run's validity labels"):
            run.unscored_ids = value  # type: ignore[misc]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = op.gate(run)
    assert run.unscored_ids == frozenset({"c1~t", "c4~t"}) and g.unscored == ("c1~t", "c4~t")
    assert int(g.table.set_index("criterion").loc["answer_matches", "n"]) == 10
