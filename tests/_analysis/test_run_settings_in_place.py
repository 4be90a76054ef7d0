"""The run's own settings stay the run's when edited in place, not only when set.

``run.release``, ``run.config`` and ``run.labels`` refuse to be set (``test_gate_release_model.py``), and
``run.labels`` gives a copy; but ``run.release`` and ``run.config`` gave the run's own objects, whose dicts and lists
take an edit in place, and the Run's labels were the lists of ``run.manifest`` (a plain model). Each edit below turned
the gate's BLOCK into a PASS, with a warning that the run had been made with the edited value.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from scipy import stats

import oloproof_nb as op


def test_a_threshold_lowered_in_place_in_the_runs_release_never_reaches_the_gate(make_suite: Callable[..., Path],
                                                                                 tmp_path: Path) -> None:
    """40 cases, 34 pass; release.yaml asks 0.8. The exact 95% lower bound of 34 of 40 (scipy) is 0.702: BLOCK at
    0.8, PASS at 0.5. ``run.release.criteria["answer_matches"] = 0.5`` changed the run's stored settings: PASS,
    ``relaxed`` empty once the suite folder is gone, and a warning calling 0.5 the run's own."""
    cases = [{"id": f"c{i:02d}", "input": {"answer": "bad" if i < 6 else "ok", "n": i}, "expected": {"answer": "ok"}}
             for i in range(40)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.8}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    low = stats.binomtest(34, 40).proportion_ci(0.95, "exact").low
    assert 0.5 < low < 0.8
    assert op.gate(run).verdict == "BLOCK"
    edited = run.release
    assert edited is not None
    edited.criteria["answer_matches"] = 0.5
    edited.reductions["answer_matches"] = "pass@1"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the file and the run's settings still agree: no drift to warn of
        g = op.gate(run)
    assert run.release is not None and run.release.criteria == {"answer_matches": 0.8}
    assert run.release.reductions == {}
    assert (g.verdict, g.table.loc[0, "threshold"], g.relaxed) == ("BLOCK", 0.8, ())
    assert g.table.loc[0, "ci_low"] == pytest.approx(low, abs=1e-12)


def test_a_transform_edited_in_place_in_the_runs_configuration_never_reaches_the_gate(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """10 of 40 pairs labeled valid, below ``minimum_validity`` 0.5: the relation is ``transform_not_checked``,
    BLOCK. ``run.config.metamorphic.transforms[0] = t.model_copy(update={"minimum_validity": 0.1})`` checked it in
    the gate (10 of 40 ≥ 0.1) and its 40 holding pairs PASSed at 0.85."""
    run = _mostly_invalid_run(tmp_path, make_suite)
    config = run.config
    config.metamorphic.transforms[0] = config.metamorphic.transforms[0].model_copy(update={"minimum_validity": 0.1})
    config.evaluators.clear()
    config.slices.append("tool_calls:1")
    assert run.config.metamorphic.transforms[0].minimum_validity == 0.5
    assert (run.criteria, run.config.slices) == (["same_output_under_polite"], [])
    g = op.gate(run)
    row = g.table.set_index("criterion").loc["same_output_under_polite"]
    assert g.verdict == "BLOCK" and row["reason"].startswith("transform_not_checked")


def test_labels_edited_in_the_runs_manifest_never_reach_the_gate(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """No pair labeled: ``transform_not_checked``, BLOCK. The Run's labels were the very lists of
    ``run.manifest.suite_config.labels``: every pair labeled valid there (replaced or extended in place) PASSed
    40 of 40 at 0.85, while ``run.labels`` itself refuses to be set and gives a copy."""
    from _metamorphic_systems import all_valid, case, mm_suite, transform

    ids = [f"c{i:02d}" for i in range(40)]
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("polite")],
                    [{"type": "metamorphic_relation", "relation": "same_output", "transform": "polite"}],
                    release={"allow_approximate_methods": True, "criteria": {"same_output_under_polite": 0.85}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    again = op.load_run(run.directory)
    run.manifest.suite_config.labels["polite"] = all_valid(ids, "polite")
    again.manifest.suite_config.labels["polite"].extend(all_valid(ids, "polite"))
    for one in (run, again):
        assert one.labels == {"polite": []}
        g = op.gate(one)
        row = g.table.set_index("criterion").loc["same_output_under_polite"]
        assert g.verdict == "BLOCK" and row["reason"].startswith("transform_not_checked")


def test_judgements_edited_in_place_in_the_runs_manifest_never_reach_the_gate(make_suite: Callable[..., Path],
                                                                             tmp_path: Path) -> None:
    """The Run copies each judgement, not only each list. 10 of 40 pairs labeled valid (by
    hand), below ``minimum_validity`` 0.5: BLOCK. Each judgement of ``run.manifest`` marked valid in place left
    the Run's labels as they were (10 valid) and its gate's BLOCK."""
    run = _mostly_invalid_run(tmp_path, make_suite)
    for judgement in run.manifest.suite_config.labels["polite"]:
        judgement["valid"] = True
    assert sum(judgement["valid"] for judgement in run.labels["polite"]) == 10
    g = op.gate(run)
    row = g.table.set_index("criterion").loc["same_output_under_polite"]
    assert g.verdict == "BLOCK" and row["reason"].startswith("transform_not_checked")


def _mostly_invalid_run(tmp_path: Path, make_suite: Callable[..., Path]) -> op.Run:
    """A run of 40 cases whose transform ``polite`` has 10 of its 40 copies labeled valid, below its
    ``minimum_validity`` 0.5 (``transform_not_checked``: BLOCK), its relation gated at 0.85."""
    from _metamorphic_systems import all_valid, case, mm_suite, transform

    ids = [f"c{i:02d}" for i in range(40)]
    labels = all_valid(ids, "polite")
    for judgement in labels[:30]:
        judgement["valid"] = False
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("polite", minimum_validity=0.5)],
                    [{"type": "metamorphic_relation", "relation": "same_output", "transform": "polite"}],
                    labels={"polite": labels},
                    release={"allow_approximate_methods": True, "criteria": {"same_output_under_polite": 0.85}})
    return op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
