"""Review L6: ``op.validity`` counts the pairs of the run as read, as the gate's rows and the copies left out do.

``run.manifest.n_cases`` edited in place makes the gate ``edited_frames`` (review R60), but ``op.validity`` counted
the pairs from the edited figure: 3 source cases and their 3 copies (``n_cases`` 6 by the manifest.json) edited to
10 gave 5 pairs, 3 of them labeled (coverage 3/5 = 0.6 by hand), and the transform unchecked, beside the verdicts
and ``run.unscored_ids`` of the 3 pairs the run holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from _metamorphic_systems import all_valid, case, mm_suite, transform

import oloproof_nb as op


def test_validity_reads_the_pairs_of_the_run_as_read_not_an_edited_n_cases(make_suite: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    ids = ["c1", "c2", "c3"]
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t")],
                    [{"type": "metamorphic_relation", "relation": "same_output", "transform": "t"}],
                    {"t": all_valid(ids, "t")})
    directory = op.run(op.load_suite(root), out=tmp_path / "run", progress=False).directory
    assert json.loads((directory / "manifest.json").read_text(encoding="utf-8"))["n_cases"] == 6
    run = op.load_run(directory)
    before = op.validity(run)[["derived", "labeled", "coverage", "checked"]].iloc[0].tolist()
    assert before == [3, 3, 1.0, True]
    run.manifest.n_cases = 10
    after = op.validity(run)[["derived", "labeled", "coverage", "checked"]].iloc[0].tolist()
    assert after == before  # was [5, 3, 0.6, False]
    assert op.gate(run).reason.startswith("edited_frames: run.manifest.n_cases")  # the gate still says so
