"""A release given in code as a model is validated as release.yaml is.

pydantic runs no validator in ``model_copy(update=...)`` or ``model_construct``: a notebook that tweaked the
gate's own settings, ``op.gate(run, release=g.release.model_copy(update={"confidence": 0.05}))``, gated 34 of 40 at
a 5% interval and PASSed at 0.8, where ``op.gate(run, confidence=0.05)`` and the same dict are refused.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from scipy import stats

import oloproof_nb as op
from oloproof_nb._config.release import ReleaseConfig


def _run(make_suite: Callable[..., Path], tmp_path: Path, out: str = "run") -> op.Run:
    """40 independent cases, the first 6 answered wrong; release.yaml asks answer_matches ≥ 0.8."""
    cases = [{"id": f"c{i:02d}", "input": {"answer": "bad" if i < 6 else "ok", "n": i}, "expected": {"answer": "ok"}}
             for i in range(40)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.8}})
    return op.run(op.load_suite(root), out=tmp_path / out, progress=False)


def test_a_release_model_copied_with_an_update_is_validated(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    run, again = _run(make_suite, tmp_path), _run(make_suite, tmp_path, "again")
    g = op.gate(run)
    row = g.table.iloc[0]
    # by hand: 34 of 40, the exact 95% interval from scipy holds 0.8, so no PASS
    assert row["ci_low"] == pytest.approx(stats.binomtest(34, 40).proportion_ci(0.95, "exact").low, abs=1e-12)
    assert (row["verdict"], g.verdict) == ("INSUFFICIENT_EVIDENCE", "BLOCK")
    alpha = g.release.model_copy(update={"confidence": 0.05})  # no validator runs here
    assert stats.binomtest(34, 40).proportion_ci(0.05, "exact").low > 0.8  # what a 5% interval would have PASSed
    for call in (lambda: op.gate(run, release=alpha), lambda: op.slice_table(run, "tool_calls:1", release=alpha),
                 lambda: op.reduce_epochs(run, "mean", release=alpha), lambda: op.compare(run, again, release=alpha)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(op.ConfigError, match=r"^release: confidence: 0\.05 is below 0\.5: .* not alpha"):
                call()
    built = ReleaseConfig.model_construct(criteria={"answer_matches": -1.0})  # nor here
    with pytest.raises(op.ConfigError, match=r"criteria: threshold of 'answer_matches' must be between 0 and 1"):
        op.gate(run, release=built)
    text = g.release.model_copy(update={"criteria": {"answer_matches": "0.8"}})  # was a TypeError in the gate
    with pytest.raises(op.ConfigError, match=r"must be a number between 0 and 1, got '0\.8'"):
        op.gate(run, release=text)
    assert op.gate(run, release=g.release.model_copy(update={"confidence": 0.9})).release.confidence == 0.9


def test_a_gate_of_a_frame_set_in_the_session_is_no_release_decision(make_suite: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    """``run.verdicts = frame`` replaces what the run computes from, on purpose (README §2): a notebook that dropped
    the 6 failing rows got a table of 34 of 34 (scipy: exact lower bound 0.897) and ``gate.verdict`` PASS, while
    ``oloproof gate`` of the same folder BLOCKs (34 of 40, 0.702). The table stays that frame's; the verdict is
    BLOCK (``edited_frames``), and a Run loaded again is the folder's. An edit in place never reached the gate."""
    run = _run(make_suite, tmp_path)
    scratch = run.verdicts
    scratch.loc[scratch["verdict"] != "pass", "verdict"] = "pass"  # a copy: the run is untouched
    assert (op.gate(run).table.loc[0, "passed"], op.gate(run).reason) == (34, "")
    kept = run.verdicts
    run.verdicts = kept[kept["verdict"] == "pass"]
    g = op.gate(run)
    row = g.table.iloc[0]
    assert (row["n"], row["passed"], row["verdict"]) == (34, 34, "PASS")
    assert row["ci_low"] == pytest.approx(stats.binomtest(34, 34).proportion_ci(0.95, "exact").low, abs=1e-12)
    assert g.verdict == "BLOCK" and run.replaced == ("verdicts",)
    assert g.reason.startswith("edited_frames: run.verdicts set in this session (run.verdicts = …), so the table is "
                               "of that frame, not of the run's records, and has no release decision")
    assert "edited_frames" in repr(op.gate(run))
    again = op.load_run(run.directory)
    assert again.replaced == () and (op.gate(again).verdict, op.gate(again).reason) == ("BLOCK", "")
    base = _run(make_suite, tmp_path, "base")
    cmp = op.compare(base, run)  # the candidate's edited frame cannot clear a comparison either
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE" and "edited_frames" in cmp.reason


def test_the_runs_own_release_settings_cannot_be_set_in_a_notebook(make_suite: Callable[..., Path],
                                                                  tmp_path: Path) -> None:
    """``run.release = run.release.model_copy(update={"criteria": {"answer_matches": 0.5}})`` was taken for the
    settings the run was made with: 34 of 40 (ci_low 0.702) PASSed at 0.5 with no ``relaxed`` against the run's own,
    and the warning said the run had been made with 0.5 (``0.5 → 0.8``). Other settings go to the gate."""
    run = _run(make_suite, tmp_path)
    own = run.release
    with pytest.raises(op.OloproofError, match=r"^run\.release is the release settings the run was made with, .*"
                                               r"op\.gate\(run, release=\.\.\.\)"):
        run.release = own.model_copy(update={"criteria": {"answer_matches": 0.5}})
    assert run.release == own and op.gate(run).verdict == "BLOCK"
    given = op.gate(run, release=own.model_copy(update={"criteria": {"answer_matches": 0.5}}))
    assert given.verdict == "PASS" and given.relaxed == ("criteria.answer_matches 0.8 → 0.5",)


def test_the_runs_own_labels_and_configuration_cannot_be_set_or_edited_in_a_notebook(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """``run.labels`` and ``run.config`` were plain attributes. 40 sources, every pair holding, and no
    label yet: the relation is ``transform_not_checked``, BLOCK. Labels set in a notebook (or edited in place) were
    the run's own, and the gate judged the relation on them: the same labels in the file and a run made with them
    PASS, 40 of 40 (ci_low 0.025^(1/40) = 0.912 by hand, above 0.85). Setting either is refused now, and
    ``run.labels`` gives a copy, so an edit of it never reaches the gate."""
    from _metamorphic_systems import all_valid, case, mm_suite, transform, write_labels

    ids = [f"c{i:02d}" for i in range(40)]
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("polite")],
                    [{"type": "metamorphic_relation", "relation": "same_output", "transform": "polite"}],
                    release={"allow_approximate_methods": True, "criteria": {"same_output_under_polite": 0.85}})
    run = op.run(op.load_suite(root), out=tmp_path / "unlabeled", progress=False)
    g = op.gate(run)
    assert g.verdict == "BLOCK"
    assert g.table.set_index("criterion").loc["same_output_under_polite", "reason"].startswith("transform_not_checked")
    full = {"polite": all_valid(ids, "polite")}
    with pytest.raises(op.OloproofError, match=r"^run\.labels are the validity labels the run was made with, .*"
                                               r"run the suite again"):
        run.labels = full
    run.labels["polite"].extend(full["polite"])  # an edit of the copy it gives
    assert run.labels == {"polite": []}
    with pytest.raises(op.OloproofError, match=r"^run\.config is the suite configuration the run was made with"):
        run.config = run.config.model_copy(update={"epochs": 2})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the label file is still the run's (no drift yet)
        assert op.gate(run).verdict == "BLOCK"
    write_labels(root, "polite", full["polite"])  # the way to judge it on those labels: label, then run again
    labeled = op.run(op.load_suite(root), out=tmp_path / "labeled", progress=False)
    row = op.gate(labeled).table.set_index("criterion").loc["same_output_under_polite"]
    assert (row["verdict"], row["passed"], row["n"]) == ("PASS", 40, 40)
    assert row["ci_low"] == pytest.approx(0.025 ** (1 / 40))  # Clopper-Pearson of 40 of 40: (α/2)^(1/n)


def test_a_frame_set_on_a_run_of_a_pooled_run_is_no_release_decision_of_the_pool(make_suite: Callable[..., Path],
                                                                                   tmp_path: Path) -> None:
    """``pooled.runs[1].cases = frame`` set a frame on a run of the pool, not on the pool (its
    ``replaced`` stayed empty), and the pool's ``mixed_cases`` check reads each run's ``cases``: a run of 20 cases
    pooled with a run of the same 20 and 4 new failing ones is ``mixed_cases`` (BLOCK), and PASSed (40 of 44 at 0.5)
    once the new cases were dropped from the second run's frame, while its verdict rows still held them."""
    good = [{"id": f"c{i:02d}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(20)]
    root = make_suite(good, evaluators=[{"type": "answer_matches"}],
                      release={"allow_approximate_methods": True, "criteria": {"answer_matches": 0.5}})
    first = op.run(op.load_suite(root), out=tmp_path / "first", progress=False)
    bad = [{"id": f"n{i}", "input": {"answer": "bad", "n": 100 + i}, "expected": {"answer": "ok"}} for i in range(4)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in good + bad), encoding="utf-8")
    second = op.run(op.load_suite(root), out=tmp_path / "second", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the case file changed since the first run
        pooled = op.load_runs([first.directory, second.directory])
        g = op.gate(pooled)
        assert (g.verdict, g.reason.split(":")[0], g.table.loc[0, "verdict"]) == ("BLOCK", "mixed_cases", "PASS")
        cases = pooled.runs[1].cases
        pooled.runs[1].cases = cases[~cases["case_id"].str.startswith("n")]
        edited = op.gate(pooled)
    assert (edited.table.loc[0, "passed"], edited.table.loc[0, "n"]) == (40, 44)  # by hand: 20 + 20 of 20 + 24
    assert pooled.replaced == ("cases",) and edited.verdict == "BLOCK"
    assert edited.reason.startswith("edited_frames: run.cases set in this session")
