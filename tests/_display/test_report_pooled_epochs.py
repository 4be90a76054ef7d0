"""The report's cases that did not pass, of runs with epochs pooled by ``op.load_runs``: a criterion reduced over
epochs lists each case once, and each epoch that did not pass with the run it is of."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import oloproof_nb as op
from oloproof_nb._display.report import build_sections, write_report

RELEASE = {"allow_approximate_methods": True, "min_clusters": 2,
           "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}}


def test_a_pooled_case_reduced_over_epochs_names_the_run_of_each_epoch(make_suite: Any, tmp_path: Path,
                                                                       plots_not_encoded: None) -> None:
    """Two 2-epoch runs of 6 cases pooled, c4 and c5 answering wrong in every epoch (by hand: 4 tries each, none
    passed, pass^2 0). Their epochs not passed read ``1, 1, 2, 2 of 4``: which two were of which run, no reader
    could tell. Each is named with its run now, by run then epoch; a run alone lists its epochs as before."""
    cases = [{"id": f"c{i}", "input": {"tag": str(i), "answer": "ok" if i < 4 else "no"},
              "expected": {"answer": "ok"}} for i in range(6)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], epochs=2, release=RELEASE)
    a, b = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b"))
    pool = op.load_runs([a.directory, b.directory])
    failing = next(sec for sec in build_sections(pool) if sec.key == "failing")
    (_, _, raw), = failing.tables
    tries = f"1 in {a.run_id}, 2 in {a.run_id}, 1 in {b.run_id}, 2 in {b.run_id} of 4"
    assert raw[["case_id", "pass^2", "epochs not passed"]].values.tolist() == [["c4", 0.0, tries],
                                                                                ["c5", 0.0, tries]]
    assert any(line.endswith("the epochs that did not pass, each with the run it is of.") for line in failing.text)
    md = write_report(pool, tmp_path / "r.md").read_text(encoding="utf-8")
    assert md.count(f"| {tries} ") == 2

    (_, _, alone), = next(sec for sec in build_sections(a) if sec.key == "failing").tables
    assert alone["epochs not passed"].tolist() == ["1, 2 of 2", "1, 2 of 2"]
