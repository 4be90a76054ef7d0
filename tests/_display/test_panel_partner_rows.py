"""A case panel's partner rows: which copy, what its input changed, the relation's word and the pair's label."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _metamorphic_systems import case, mm_suite, transform

import oloproof_nb as op


@pytest.mark.filterwarnings("ignore::oloproof_nb.VacuousCheckWarning")  # two pairs, one labeled: not the point
def test_a_source_cases_partner_row_names_its_copy_the_changed_input_and_the_label(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """By hand: the transform appends `` !state`` to c1's message (the copy changes the state silently), so the
    copy ``c1~t`` is c1's only partner, its one changed input is ``message``, same_state is BROKEN, and the pair
    is labeled valid; c2's copy is left unlabeled."""
    root = mm_suite(make_suite, [case("c1"), case("c2")], [transform("t", "!state")],
                    [{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}],
                    {"t": [{"case_id": "c1~t", "valid": True, "labeler": "ana"}]})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    panel = run.panel("c1")
    assert panel.partners == ["c1~t"]
    rows = panel.partner_rows()
    assert [(r["partner"], r["kind"], r["changed"], r["word"]) for r in rows] == [
        ("c1~t", "t", {"message": "please mark it !state"}, "BROKEN")]
    assert rows[0]["label"] == "valid"  # the one judgement, valid (the pairs frame: valid, invalid or empty)
    assert run.panel("c2").partner_rows()[0]["label"] == "unlabeled"
