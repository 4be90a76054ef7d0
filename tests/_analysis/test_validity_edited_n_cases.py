"""``op.validity`` counts the pairs of the run as read, as the gate's rows and the copies left out do.

``run.manifest.n_cases`` edited in place makes the gate ``edited_frames``, but ``op.validity`` counted
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


def test_a_pool_counts_the_pairs_of_each_members_manifest(make_suite: Callable[..., Path],
                                                              tmp_path: Path) -> None:
    """The pairs are each member's, not the pool's first. A run of c1, c2 pooled with one of c1,
    c2, c3 killed after its first record (no c3~t recorded): 3 pairs derived (c1~t, c2~t, c3~t, by hand), the pool's
    frames holding 2 of them (the labels, one file, judge c1~t and c2~t)."""
    ids = ["c1", "c2", "c3"]
    root = mm_suite(make_suite, [case(i) for i in ids[:2]], [transform("t")],
                    [{"type": "metamorphic_relation", "relation": "same_output", "transform": "t"}],
                    {"t": all_valid(ids[:2], "t")})
    first = op.run(op.load_suite(root), out=tmp_path / "first", progress=False).directory
    with (root / "cases.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(case("c3")) + "\n")
    second = op.run(op.load_suite(root), out=tmp_path / "second", progress=False).directory
    journal = second / "cases.jsonl"
    journal.write_text(journal.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    stored = json.loads((second / "manifest.json").read_text(encoding="utf-8"))
    stored.pop("finished_at")
    (second / "manifest.json").write_text(json.dumps(stored), encoding="utf-8")
    pooled = op.load_runs([first, second])
    assert "c3~t" not in set(pooled.cases["case_id"])
    assert int(op.validity(pooled).iloc[0]["derived"]) == 3
