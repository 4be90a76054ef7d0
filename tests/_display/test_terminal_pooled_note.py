"""``pooled_note``: what ``n`` counts in runs pooled by ``op.load_runs``, said under the gate's verdict in its text,
its HTML and the report, also when the runs have epochs or a criterion is reduced over them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import oloproof_nb as op
from oloproof_nb._display.report import write_report
from oloproof_nb._display.terminal import pooled_note

RELEASE = {"allow_approximate_methods": True, "min_clusters": 2}
REDUCED = "; a criterion reduced over epochs (pass^k, pass@k) counts a case once, its epochs in all the runs together"


def _pool(make_suite: Any, tmp_path: Path) -> Any:
    """Two runs of 6 cases with 2 epochs each, pooled; the answer of c4 and c5 is wrong."""
    cases = [{"id": f"c{i}", "input": {"tag": str(i), "answer": "ok" if i < 4 else "no"},
              "expected": {"answer": "ok"}} for i in range(6)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], epochs=2,
                      release={"criteria": {"answer_matches": 0.5}, **RELEASE})
    a, b = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b"))
    return op.load_runs([a.directory, b.directory])


def test_the_note_of_pooled_runs_with_epochs_says_what_n_counts(make_suite: Any, tmp_path: Path) -> None:
    """Two 2-epoch runs of 6 cases pooled: a mean's n is 24 (6 cases, 2 epochs, 2 runs) and pass^2's is 6 (each
    case once, its 4 tries together), where the note said that n counts a case once in each run (12) for both."""
    pool = _pool(make_suite, tmp_path)
    ids = tuple(member.run_id for member in pool.runs)
    mean = op.gate(pool)
    assert mean.table["n"].tolist() == [6 * 2 * 2] == [len(pool.verdicts)]
    note = (f"pooled: 2 runs ({', '.join(ids)}); n counts a case once an epoch in each run that holds it, and its "
            "rows in all of them are one cluster")
    assert repr(mean).splitlines()[1] == f"  {note}"
    assert f">{note}<" in mean._repr_html_()
    assert note == pooled_note(ids, epochs=True)

    reduced = op.gate(pool, release={"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}},
                                     **RELEASE})
    assert reduced.table["n"].tolist() == [6] == [pool.cases["case_id"].nunique()]
    assert repr(reduced).splitlines()[1] == f"  {note}{REDUCED}"
    assert f">{note}{REDUCED}<" in reduced._repr_html_()


def test_the_report_of_pooled_runs_with_epochs_says_what_n_counts(make_suite: Any, tmp_path: Path,
                                                                  plots_not_encoded: None) -> None:
    """The gate section of the report says it as the gate does: each case once an epoch in each run."""
    pool = _pool(make_suite, tmp_path)
    md = write_report(pool, tmp_path / "r.md").read_text(encoding="utf-8")
    gate_md = md.split("## Release gate", 1)[1].split("\n## ", 1)[0]
    assert "n counts a case once an epoch in each run that holds it, and its rows in all of them are one " in gate_md
    assert "reduced over epochs (pass^k" not in gate_md
    page = write_report(pool, tmp_path / "r.html", release={
        "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}, **RELEASE}).read_text(encoding="utf-8")
    assert f"once an epoch in each run that holds it, and its rows in all of them are one cluster{REDUCED}." in page


def test_the_note_of_pooled_runs_of_one_epoch_is_as_before() -> None:
    """Runs of one epoch each: n counts a case once in each run, as the note always said."""
    assert pooled_note(("a", "b")) == ("pooled: 2 runs (a, b); n counts a case once in each run that holds it, and "
                                       "its rows in all of them are one cluster")
