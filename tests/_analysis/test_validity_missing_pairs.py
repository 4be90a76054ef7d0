"""The count of the copies left out whose pair did not hold (``op.gate(run).unscored_broken``).

The suite: 20 source cases of ``DIRECTED``; the transform appends ``"se"`` to the message, so the copies of c05,
c11 and c17 (whose message ends ``"!rai"``) end ``"!raise"`` and raise: their pairs are missing (``holds`` NA,
a row that never passes), the other 17 copies answer as their source and hold.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _metamorphic_systems import case, mm_suite

import oloproof_nb as op

RAISING = ("c05", "c11", "c17")
SOURCES = [f"c{i:02d}" for i in range(20)]
RELATION = "same_output_under_t"


def _run(make_suite: Callable[..., Path], out: Path, invalid: set[str]) -> op.Run:
    cases = [case(s, "please mark it !rai" if s in RAISING else "please mark it") for s in SOURCES]
    t = {"name": "t", "field": "message", "template": "{value}se", "validity_labels": "labels/t.jsonl",
         "minimum_validity": 0.85}
    evaluators = [{"type": "metamorphic_relation", "relation": "same_output", "transform": "t"}]
    labels = [{"case_id": f"{s}~t", "valid": s not in invalid} for s in SOURCES]
    release = {"allow_approximate_methods": True, "min_clusters": 5, "criteria": {RELATION: 0.8}}
    root = mm_suite(make_suite, cases, [t], evaluators, {"t": labels}, release=release)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op.run(op.load_suite(root), out=out, progress=False)


def _row(run: op.Run) -> list[Any]:
    return op.gate(run).table.set_index("criterion").loc[RELATION, ["n", "passed", "verdict"]].tolist()


def test_a_copy_whose_pair_is_missing_counts_as_one_that_did_not_hold(make_suite: Callable[..., Path],
                                                                     tmp_path: Path) -> None:
    """A copy that raised is a missing row, which never passes: 17 of 20 (counted by hand), INSUFFICIENT_EVIDENCE
    at 0.8. Labeling exactly those 3 invalid (17 of 20 valid = 0.85, checked) makes it 17 of 17, PASS, as labeling
    3 copies that broke their pair does; the gate's line counted only ``holds`` False, so it said nothing of them
    (unscored_broken was empty)."""
    honest = _run(make_suite, tmp_path / "honest", set())
    assert _row(honest) == [20, 17, "INSUFFICIENT_EVIDENCE"]
    assert honest.pairs.set_index("derived_id").loc[[f"{s}~t" for s in RAISING], "holds"].isna().all()
    moved = _run(make_suite, tmp_path / "moved", set(RAISING))
    assert _row(moved) == [17, 17, "PASS"]
    gate = op.gate(moved)
    assert gate.unscored == gate.unscored_broken == ("c05~t", "c11~t", "c17~t")
    assert "3 of them broke their pair, so the verdict leans on their labels" in repr(gate)
    # one raising copy and two that held labeled invalid: 1 of the 3 left out (a hand count)
    mixed = op.gate(_run(make_suite, tmp_path / "mixed", {"c05", "c00", "c01"}))
    assert (mixed.unscored, mixed.unscored_broken) == (("c00~t", "c01~t", "c05~t"), ("c05~t",))
