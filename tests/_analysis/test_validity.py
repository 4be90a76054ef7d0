"""``op.validity``: coverage, validity rate with a Wilson interval (checked against statsmodels), ``checked``."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _metamorphic_systems import case, mm_suite, transform
from statsmodels.stats.proportion import proportion_confint

import oloproof_nb as op
from oloproof_nb._analysis.validity import VALIDITY_COLUMNS, checked_transforms, validity_table
from oloproof_nb._core.labels import transform_checked

COLUMNS = ["transform", "derived", "labeled", "valid", "coverage", "rate", "ci_low", "ci_high",
           "minimum_validity", "checked"]


def _j(case_id: str, valid: bool, labeler: str = "") -> dict[str, Any]:
    return {"case_id": case_id, "valid": valid, "labeler": labeler, "note": ""}


def _t(name: str, minimum: float) -> SimpleNamespace:
    return SimpleNamespace(name=name, minimum_validity=minimum)


def test_columns_are_pinned() -> None:
    assert VALIDITY_COLUMNS == COLUMNS
    df = validity_table([_t("t", 0.5)], {}, {"t": 1})
    assert list(df.columns) == COLUMNS
    assert {c: str(df[c].dtype) for c in ("derived", "labeled", "valid", "checked")} == {
        "derived": "int64", "labeled": "int64", "valid": "int64", "checked": "bool"}
    assert list(validity_table([], {}, {}).columns) == COLUMNS
    # the Wilson intervals' level travels with the table (a plot labels its axis with it)
    assert df.attrs["confidence"] == 0.95
    assert validity_table([_t("t", 0.5)], {}, {"t": 1}, confidence=0.9).attrs["confidence"] == 0.9


def test_hand_counted_row_and_wilson_from_statsmodels() -> None:
    # 10 pairs; 9 labeled: 6 valid by one vote, 1 valid 2-1, 1 tie (invalid), 1 invalid; 1 unlabeled
    ids = [f"c{i}~t" for i in range(10)]
    js = [_j(ids[i], True) for i in range(6)]
    js += [_j(ids[6], True, "a"), _j(ids[6], True, "b"), _j(ids[6], False, "c")]
    js += [_j(ids[7], True, "a"), _j(ids[7], False, "b")]
    js += [_j(ids[8], False)]
    row = validity_table([_t("t", 0.75)], {"t": js}, {"t": len(ids)}).iloc[0]
    assert (row.derived, row.labeled, row.valid) == (10, 9, 7)
    assert row.coverage == 9 / 10 and row.rate == 7 / 9
    low, high = proportion_confint(7, 9, alpha=0.05, method="wilson")
    assert row.ci_low == pytest.approx(low, abs=1e-12) and row.ci_high == pytest.approx(high, abs=1e-12)
    assert row.minimum_validity == 0.75 and not row.checked  # coverage below 1


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.99])
def test_wilson_at_other_confidence(confidence: float) -> None:
    ids = [f"c{i}~t" for i in range(20)]
    js = [_j(i, n % 5 != 0) for n, i in enumerate(ids)]  # 16 of 20 valid
    row = validity_table([_t("t", 0.5)], {"t": js}, {"t": len(ids)}, confidence).iloc[0]
    low, high = proportion_confint(16, 20, alpha=1 - confidence, method="wilson")
    assert row.rate == 0.8
    assert row.ci_low == pytest.approx(low, abs=1e-12) and row.ci_high == pytest.approx(high, abs=1e-12)


def test_coverage_below_one_keeps_it_unchecked_even_with_a_perfect_rate() -> None:
    ids = ["a~t", "b~t", "c~t"]
    js = [_j("a~t", True), _j("b~t", True)]
    row = validity_table([_t("t", 0.0)], {"t": js}, {"t": len(ids)}).iloc[0]
    assert row.rate == 1.0 and row.coverage == 2 / 3 and not row.checked
    assert not transform_checked(js, len(ids), 0.0)
    assert transform_checked(js + [_j("c~t", True)], len(ids), 1.0)


def test_validity_below_the_minimum_keeps_it_unchecked() -> None:
    ids = [f"c{i}~t" for i in range(20)]
    js = [_j(i, n >= 4) for n, i in enumerate(ids)]  # 16 of 20 valid = 0.8
    assert not transform_checked(js, len(ids), 0.85)
    assert transform_checked(js, len(ids), 0.8)  # the minimum itself is enough
    row = validity_table([_t("t", 0.85)], {"t": js}, {"t": len(ids)}).iloc[0]
    assert row.coverage == 1.0 and row.rate == 0.8 and not row.checked


def test_nothing_labeled() -> None:
    row = validity_table([_t("t", 0.5)], {}, {"t": 1}).iloc[0]
    assert (row.labeled, row.valid, row.coverage) == (0, 0, 0.0)
    assert math.isnan(row.rate) and math.isnan(row.ci_low) and math.isnan(row.ci_high) and not row.checked
    none = validity_table([_t("t", 0.0)], {}, {"t": 0}).iloc[0]
    assert none.derived == 0 and math.isnan(none.coverage) and not none.checked


def test_inputs_are_not_mutated() -> None:
    js = [_j("a~t", True)]
    validity_table([_t("t", 0.5)], {"t": js}, {"t": 1})
    assert js == [_j("a~t", True)]


# -- op.validity on runs ---------------------------------------------------------------------------


def _run(make_suite: Callable[..., Path], labels: dict[str, list[dict[str, Any]]],
         release: dict[str, Any] | None = None) -> op.Run:
    ids = ["c1", "c2", "c3", "c4", "c5"]
    transforms = [transform("t", "", minimum_validity=0.8), transform("u", "!state", minimum_validity=0.5)]
    evaluators = [{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"},
                  {"type": "metamorphic_relation", "relation": "same_state", "transform": "u"}]
    root = mm_suite(make_suite, [case(i) for i in ids], transforms, evaluators, labels, release=release)
    return op.run(op.load_suite(root))


def test_validity_of_a_run(make_suite: Callable[..., Path]) -> None:
    labels = {"t": [_j(f"c{i}~t", i != 5) for i in range(1, 6)],         # 4 of 5 valid, all labeled
              "u": [_j(f"c{i}~u", True) for i in range(1, 5)]}           # 4 of 5 labeled
    run = _run(make_suite, labels, release={"confidence": 0.9})
    v = op.validity(run)
    assert list(v.columns) == COLUMNS and list(v["transform"]) == ["t", "u"]
    t, u = v.iloc[0], v.iloc[1]
    assert (t.derived, t.labeled, t.valid, t.coverage, t.rate, bool(t.checked)) == (5, 5, 4, 1.0, 0.8, True)
    assert (u.derived, u.labeled, u.valid, u.coverage, u.rate, bool(u.checked)) == (5, 4, 4, 0.8, 1.0, False)
    low, high = proportion_confint(4, 5, alpha=0.1, method="wilson")  # the release's confidence
    assert t.ci_low == pytest.approx(low, abs=1e-12) and t.ci_high == pytest.approx(high, abs=1e-12)
    low95, _ = proportion_confint(4, 5, alpha=0.05, method="wilson")
    assert op.validity(run, confidence=0.95).iloc[0].ci_low == pytest.approx(low95, abs=1e-12)
    assert checked_transforms(run) == {"t": True, "u": False}
    # the same numbers from the stored run
    again = op.validity(op.load_run(run.directory))
    assert again.equals(v)


def test_the_gate_and_validity_never_copy_the_runs_labels(make_suite: Callable[..., Path],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``run.labels`` deep-copies every judgement each read (an edit of it must not reach the gate); the gate, its
    label-drift check, ``op.validity`` and a pooled run's checks read the Run's own (``stored_pair_labels``): reading
    the copy, 50,000 judgements made the gate of the 100,000-case benchmark 0.46 s slower warm and ``op.validity``
    0.16 s (``python benchmarks/frames.py --sizes 100000``). Counted, not timed: no read of the copy."""
    from oloproof_nb._analysis.run import Run

    labels = {"t": [_j(f"c{i}~t", i != 5) for i in range(1, 6)], "u": [_j(f"c{i}~u", True) for i in range(1, 6)]}
    run, other = _run(make_suite, labels), _run(make_suite, labels)
    pooled = op.load_runs([run.directory, other.directory])
    reads = []
    copying = Run.labels
    monkeypatch.setattr(Run, "labels", property(lambda self: reads.append(1) or copying.fget(self)))  # type: ignore[attr-defined]
    for each in (run, pooled):
        op.gate(each)
        op.validity(each)
    op.compare(run, other)
    assert reads == []
    assert len(run.labels["t"]) == 5 and reads == [1]  # the count would see a read


def test_validity_defaults_to_095_without_a_release(make_suite: Callable[..., Path]) -> None:
    run = _run(make_suite, {"t": [_j(f"c{i}~t", i != 1) for i in range(1, 6)]})
    low, high = proportion_confint(4, 5, alpha=0.05, method="wilson")
    row = op.validity(run).iloc[0]
    assert row.ci_low == pytest.approx(low, abs=1e-12) and row.ci_high == pytest.approx(high, abs=1e-12)


def test_example_validity_is_checked(example_suite: Path) -> None:
    run = op.run(op.load_suite(example_suite))
    v = op.validity(run)
    assert list(v["transform"]) == ["injected"]
    row = v.iloc[0]
    # 24 pairs, all labeled by the example's author, 23 valid (ord-018's ticket line is not)
    assert (row.derived, row.labeled, row.valid) == (24, 24, 23)
    assert row.coverage == 1.0 and row.rate == 23 / 24 and row.minimum_validity == 0.85 and bool(row.checked)
    low, high = proportion_confint(23, 24, alpha=0.05, method="wilson")
    assert row.ci_low == pytest.approx(low, abs=1e-12) and row.ci_high == pytest.approx(high, abs=1e-12)
    gate = op.gate(run).table.set_index("criterion").loc["same_state_under_injected"]
    assert gate["rate"] == 14 / 23 and gate["rate"] < 0.90 and "transform_not_checked" not in gate["reason"]
    # the release's rule for the level: 0.05 (alpha) made a 5% interval that read as a tight 95% one
    with pytest.raises(op.ConfigError, match=r"validity\(confidence=\).*confidence.*0.05 is below 0.5.*not alpha"):
        op.validity(run, confidence=0.05)
    half = op.validity(run, confidence=0.5).iloc[0]  # the boundary is allowed
    assert (half.ci_low, half.ci_high) == pytest.approx(proportion_confint(23, 24, alpha=0.5, method="wilson"))


def _relabel(label_file: Path, case_id: str, lines: list[str]) -> None:
    """The label file with ``case_id``'s judgements replaced by ``lines``."""
    kept = [line for line in label_file.read_text(encoding="utf-8").splitlines() if f'"{case_id}"' not in line]
    label_file.write_text("\n".join([*kept, *lines]) + "\n", encoding="utf-8")


def _scored(run: op.Run, criterion: str = "answer_matches") -> set[str]:
    v = run.verdicts
    return set(v.loc[v["criterion"] == criterion, "case_id"])


def test_a_copy_labeled_invalid_is_scored_by_no_criterion(example_suite: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           plots_not_encoded: None) -> None:
    """ord-018~injected is labeled invalid: the injected text makes its ticket malformed, so the source's expected
    escalation is not its own. It was still scored against it by every criterion (a failing answer_matches row,
    and a copy that happened to pass could lift a criterion to PASS). Now no criterion scores it; it stays a case
    of the run, and an unlabeled copy or one labeled valid is scored as before."""
    run = op.run(op.load_suite(example_suite), out=tmp_path / "labeled", progress=False)
    copy = "ord-018~injected"
    assert copy in set(run.cases["case_id"]) and copy in set(run.steps["case_id"])  # it ran and is kept
    assert copy not in set(run.verdicts["case_id"])  # by no criterion, relations included
    derived = {c for c in run.cases["case_id"] if c.endswith("~injected")}
    assert _scored(run) == set(run.cases["case_id"]) - {copy} and len(derived) == 24
    table = op.gate(run).table.set_index("criterion")
    assert table.loc["answer_matches", "n"] == 47 and table.loc["other_order_untouched", "n"] == 47  # 48 − 1
    shutil.rmtree(run.directory / "frames")  # the columnar copy built again from the journal (lost, or outdated)
    rebuilt = op.load_run(run.directory)
    assert copy not in set(rebuilt.verdicts["case_id"])
    assert op.gate(rebuilt).table.set_index("criterion").loc["answer_matches", "n"] == 47
    # a release manager reading the gate is told which rows no criterion counts
    from oloproof_nb._display.report import write_report
    from oloproof_nb.cli import main

    # the copy's same_state pair did not hold (the desk escalated the source's well-formed ticket and refunded the
    # copy's malformed one: the broken count, read from run.pairs by hand): left out, its failure no longer counts
    pair = run.pairs.set_index("derived_id").loc[copy]
    assert (pair["relation"], bool(pair["holds"]), pair["label"]) == ("same_state", False, "invalid")
    note = ("1 copy labeled invalid, scored by no criterion: ord-018~injected (see op.validity(run)); it broke its "
            "pair, so the verdict leans on its label")
    assert main(["gate", str(run.directory)]) == 1
    assert note in " ".join(capsys.readouterr().out.split())  # wrapped to the terminal's width
    report = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8").replace("\\~", "~")  # ~ escaped
    assert ("Copies labeled invalid, scored by no criterion (1): ord-018~injected. It broke its pair, so the "
            "verdict leans on its label.") in report
    g = op.gate(run)  # and so is a notebook's reader: the gate's repr and HTML said nothing of it
    assert (g.unscored, g.unscored_broken) == ((copy,), (copy,))
    assert f"  {note}" in repr(g)
    assert f'<p class="oloproof-unscored">{note}</p>' in g._repr_html_()
    label_file = example_suite / "labels" / "injected.jsonl"
    yes, no = (json.dumps({"case_id": copy, "valid": v, "labeler": who}) for v, who in ((True, "a"), (False, "b")))
    for lines, scored in [([yes], True), ([yes, no], False),  # valid; a tie: invalid
                          ([], True)]:  # nobody judged it (the transform is then not checked)
        _relabel(label_file, copy, lines)
        again = op.run(op.load_suite(example_suite), progress=False)
        assert (copy in _scored(again)) is scored and (copy in _scored(again, "state_matches")) is scored


def test_the_labels_of_a_transform_that_is_not_checked_leave_no_copy_out(example_suite: Path, tmp_path: Path) -> None:
    """Labeling every failing copy invalid dropped them all, though validity then fell to
    0.5 against a minimum of 0.85 (the transform not checked): answer_matches 34 of 36, PASS at 0.6, exit 0. Labels
    a transform's own rule rejects decide nothing: every copy is scored, as its relation is held back."""
    first = op.run(op.load_suite(example_suite), out=tmp_path / "first", progress=False)
    v = first.verdicts
    failing = sorted(set(v.loc[(v["criterion"] == "answer_matches") & (v["verdict"] != "pass")
                           & v["case_id"].str.endswith("~injected"), "case_id"]) | {"ord-018~injected"})
    assert len(failing) == 12  # by the run: 11 failing copies, and the malformed ticket's
    label_file = example_suite / "labels" / "injected.jsonl"
    kept = [line for line in label_file.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["case_id"] not in failing]
    label_file.write_text("\n".join(kept + [json.dumps({"case_id": c, "valid": False, "labeler": "x"})
                                            for c in failing]) + "\n", encoding="utf-8")
    run = op.run(op.load_suite(example_suite), out=tmp_path / "relabeled", progress=False)
    row = op.validity(run).iloc[0]
    assert (row.valid, row.labeled, bool(row.checked)) == (12, 24, False)  # 0.5 < 0.85
    assert set(failing) <= set(run.verdicts["case_id"])  # every copy scored
    gate = op.gate(run, criteria={"answer_matches": 0.6}).table.set_index("criterion").loc["answer_matches"]
    assert (gate["n"], gate["passed"]) == (48, 34) and gate["verdict"] != "PASS"
    from oloproof_nb._analysis.validity import unscored_copies

    assert unscored_copies(run) == [] and unscored_copies(first) == ["ord-018~injected"]


def test_runs_made_with_different_labels_are_not_pooled(example_suite: Path, tmp_path: Path) -> None:
    """Run a starts with ord-020~injected labeled valid; the label is corrected to invalid before run b. Each
    run judged its pairs, and left out its invalid copies, by its own labels, so pooled, a's rows of the pair b
    calls invalid were counted, while op.validity of the pooled run called it invalid. Such runs are not pooled."""
    label_file = example_suite / "labels" / "injected.jsonl"
    a = op.run(op.load_suite(example_suite), out=tmp_path / "a", progress=False)
    _relabel(label_file, "ord-020~injected", ['{"case_id": "ord-020~injected", "valid": false, "labeler": "b"}'])
    b = op.run(op.load_suite(example_suite), out=tmp_path / "b", progress=False)
    assert "ord-020~injected" in _scored(a) and "ord-020~injected" not in _scored(b)
    for order in ([a, b], [b, a]):
        with pytest.raises(op.OloproofError, match=r"were made with different validity labels \(transform injected: "
                                                   r"ord-020~injected is labeled otherwise\); pool runs made with"):
            op.load_runs([r.directory for r in order])
    c = op.run(op.load_suite(example_suite), out=tmp_path / "c", progress=False)
    assert len(op.load_runs([b.directory, c.directory]).verdicts) == len(b.verdicts) + len(c.verdicts)
    # a reworded note, or one more judgement that moves no majority, labels no pair otherwise: pooled
    _relabel(label_file, "ord-020~injected", ['{"case_id": "ord-020~injected", "valid": false, "labeler": "b", '
                                              '"note": "reworded"}',
                                              '{"case_id": "ord-020~injected", "valid": false, "labeler": "c"}'])
    d = op.run(op.load_suite(example_suite), out=tmp_path / "d", progress=False)
    assert len(op.load_runs([c.directory, d.directory]).verdicts) == len(c.verdicts) + len(d.verdicts)


def test_a_run_pooled_with_its_twin_keeps_its_labels(example_suite: Path, tmp_path: Path) -> None:
    """Two equal anonymous "valid" lines and one named "invalid" make ord-018~injected valid, 2 to 1. Pooled with
    a second run of the same label file, the judgements were de-duplicated within a run as well as across runs:
    one to one, a tie, invalid. Each judgement now counts as often as the run holding it most often."""
    label_file = example_suite / "labels" / "injected.jsonl"
    lines = [line for line in label_file.read_text(encoding="utf-8").splitlines() if "ord-018~injected" not in line]
    lines += ['{"case_id": "ord-018~injected", "valid": true}'] * 2
    lines.append('{"case_id": "ord-018~injected", "valid": false, "labeler": "ana"}')
    label_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    a = op.run(op.load_suite(example_suite), out=tmp_path / "a", progress=False)
    b = op.run(op.load_suite(example_suite), out=tmp_path / "b", progress=False)
    single = op.validity(a).iloc[0]
    assert (single.labeled, single.valid) == (24, 24)  # ord-018 valid by 2 to 1
    pooled = op.validity(op.load_runs([a.directory, b.directory])).iloc[0]
    assert (pooled.labeled, pooled.valid, pooled.rate) == (24, 24, single.rate)
    assert len(op.load_runs([a.directory, b.directory]).labels["injected"]) == len(a.labels["injected"]) == 26


def test_copies_labeled_invalid_are_named_in_case_order_and_only_those_the_run_holds(
        example_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], plots_not_encoded: None) -> None:
    """With the transform's minimum lowered to 0 its labels are checked however many pairs they call invalid: the 22
    copies ord-001~injected … ord-022~injected labeled invalid are each scored by no criterion, named in case order;
    the report names the first 20 and says there are more, the command line the first 3. A run stopped after its
    first 10 case runs (ord-001 … ord-005 and their copies) holds none of the copies the labels leave out of ord-006
    on, and names only the 5 it holds."""
    from oloproof_nb._analysis.validity import unscored_copies
    from oloproof_nb._display.report import write_report
    from oloproof_nb.cli import main

    config = example_suite / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("minimum_validity: 0.85", "minimum_validity: 0.0"),
                      encoding="utf-8")
    copies = [f"ord-{i:03d}~injected" for i in range(1, 25)]
    invalid = copies[:22]
    (example_suite / "labels" / "injected.jsonl").write_text(
        "".join(json.dumps({"case_id": c, "valid": c not in invalid}) + "\n" for c in copies), encoding="utf-8")
    run = op.run(op.load_suite(example_suite), out=tmp_path / "run", progress=False)
    assert unscored_copies(run) == invalid
    report = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8").replace("\\~", "~")
    assert f"Copies labeled invalid, scored by no criterion (22): {', '.join(invalid[:20])} …." in report
    main(["gate", str(run.directory)])
    assert ("22 copies labeled invalid, scored by no criterion: ord-001~injected, ord-002~injected, "
            "ord-003~injected and 19 more (see op.validity(run))") in " ".join(capsys.readouterr().out.split())
    g = op.gate(run)
    assert g.unscored == tuple(invalid)
    assert (f"22 copies labeled invalid, scored by no criterion: {', '.join(invalid[:20])} and 2 more "
            "(see op.validity(run))") in g._repr_html_()  # a notebook has room for the report's 20

    def stop_after_ten(done: int, total: int) -> None:
        if done >= 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(op.load_suite(example_suite), out=tmp_path / "stopped", progress=stop_after_ten)
    stopped = op.load_run(tmp_path / "stopped")
    assert stopped.n_cases == 10 and unscored_copies(stopped) == invalid[:5]
    run.cases = run.cases.iloc[::-1].reset_index(drop=True)  # sorted, whatever the frame's order
    assert unscored_copies(run) == invalid


def test_a_stopped_run_leaves_out_the_copies_its_relation_and_validity_call_checked(example_suite: Path,
                                                                                     tmp_path: Path) -> None:
    """ord-002~injected is labeled invalid besides ord-018~injected: 22 of the suite's 24
    pairs valid, 0.92 >= the minimum 0.85, so the transform is checked. The run is stopped after 6 case runs
    (ord-001 … ord-003 and their copies). The copies left out were decided over the suite's 24 pairs, the relation
    and op.validity over the 3 recorded (2 of 3 valid, 0.67: not checked): ord-002~injected lost its answer and
    state rows but kept its same_state row. Now all three count the suite's pairs: a copy is left out exactly when
    its relation treats the transform as checked, as the finished run does. With ord-024~injected (not recorded)
    unlabeled, the transform is checked nowhere: 23 of 24 labeled, every copy scored and related."""
    from oloproof_nb._analysis.validity import unscored_copies

    label_file = example_suite / "labels" / "injected.jsonl"
    _relabel(label_file, "ord-002~injected", ['{"case_id": "ord-002~injected", "valid": false, "labeler": "x"}'])
    recorded = ["ord-001~injected", "ord-002~injected", "ord-003~injected"]

    def stop_after_six(done: int, total: int) -> None:
        if done >= 6:
            raise KeyboardInterrupt

    def stopped(name: str) -> op.Run:
        with pytest.raises(KeyboardInterrupt):
            op.run(op.load_suite(example_suite), out=tmp_path / name, progress=stop_after_six)
        run = op.load_run(tmp_path / name)
        assert sorted(c for c in run.cases["case_id"] if c.endswith("~injected")) == recorded
        return run

    def related(run: op.Run) -> set[str]:
        return _scored(run, "same_state_under_injected")

    run = stopped("checked")
    row = op.validity(run).iloc[0]
    assert (row.derived, row.labeled, row.valid, bool(row.checked)) == (24, 24, 22, True)  # the suite's pairs
    assert unscored_copies(run) == ["ord-002~injected"]
    for criterion in ("answer_matches", "state_matches", "same_state_under_injected"):  # left out everywhere
        assert "ord-002~injected" not in _scored(run, criterion)
    assert related(run) == {"ord-001~injected", "ord-003~injected"}  # checked: only the pairs labeled valid
    left_out = {c for c in recorded if c not in _scored(run)}
    assert left_out == set(recorded) - related(run)  # left out iff the relation drops it as checked
    assert checked_transforms(run) == {"injected": True}  # what the gate reads for transform_not_checked

    _relabel(label_file, "ord-024~injected", [])
    run = stopped("unchecked")
    row = op.validity(run).iloc[0]
    assert (row.derived, row.labeled, row.valid, bool(row.checked)) == (24, 23, 21, False)
    assert unscored_copies(run) == [] and _scored(run) >= set(recorded) and related(run) == set(recorded)
    assert checked_transforms(run) == {"injected": False}


def test_labels_changed_since_the_run_are_named_and_the_stored_ones_decide(
        make_suite: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    """c1~t was labeled invalid when the run was made, so its failing answer_matches row was left out;
    the labeler then corrected it to valid, and `oloproof gate` of the stored run still left the row out without a
    word (the run's labels decide, as its release.yaml does). Now a warning names the label file and the pair, as
    for a changed release.yaml; a reworded note (the same majority) and a label file gone say nothing."""
    import warnings

    from oloproof_nb.cli import main

    ids = ["c1", "c2", "c3", "c4", "c5"]
    labels = {"t": [_j("c1~t", False), *(_j(f"{i}~t", True) for i in ids[1:])]}  # 4 of 5 valid: checked at 0.5
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t", "!answer", minimum_validity=0.5)],
                    [{"type": "answer_matches"}], labels, release={"criteria": {"answer_matches": 0.1}})
    run = op.run(op.load_suite(root), progress=False)
    label_file = root / "labels" / "t.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # unchanged: no word
        table = op.gate(run).table.set_index("criterion")
    assert (table.loc["answer_matches", "n"], table.loc["answer_matches", "passed"]) == (9, 5)  # c1~t left out
    _relabel(label_file, "c1~t", [json.dumps({"case_id": "c1~t", "valid": False, "note": "reworded"})])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same label, another note: no difference
        op.gate(run)
    _relabel(label_file, "c1~t", [json.dumps({"case_id": "c1~t", "valid": True})])
    with pytest.warns(UserWarning, match=r"t\.jsonl differs from the validity labels run .* was made with \("
                                         r"transform t: c1~t is labeled otherwise\); this gate uses the run's"):
        table = op.gate(run).table.set_index("criterion")
    assert table.loc["answer_matches", "n"] == 9  # the stored labels still decide
    main(["gate", str(run.directory)])
    assert "transform t: c1~t is labeled otherwise" in capsys.readouterr().err
    with label_file.open("a") as handle:  # a second judgement by one labeler: the file is refused now
        handle.write(json.dumps({"case_id": "c2~t", "valid": True, "labeler": "ana"}) + "\n"
                     + json.dumps({"case_id": "c2~t", "valid": False, "labeler": "Ana "}) + "\n")
    with pytest.warns(UserWarning, match=r"t\.jsonl differs from the validity labels run .* was made with \(it "
                                         r"cannot be read now: line \d+: labeler 'Ana ' already judged 'c2~t'"):
        assert op.gate(run).table.set_index("criterion").loc["answer_matches", "n"] == 9
    label_file.write_bytes(label_file.read_text(encoding="utf-8").encode("utf-16"))  # an editor's "Unicode"
    with pytest.warns(UserWarning, match=r"t\.jsonl differs from the validity labels run .* was made with \(it "
                                         r"cannot be read now: line 1: not UTF-8 text"):
        op.gate(run)  # was skipped as if gone: the next run stops on it
    label_file.unlink()  # a moved suite folder, a run copied elsewhere: nothing to compare with
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        op.gate(run)
    label_file.mkdir()  # a folder where the file was: no file to compare with either
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        op.gate(run)


def test_a_label_given_or_taken_out_since_the_run_is_named_as_such(make_suite: Callable[..., Path]) -> None:
    """c1~t had no label when the run was made (the transform not checked yet); the labeler labeled it since. The
    warning said ``c1~t is labeled otherwise``, and the user looked for a label turned from valid to invalid in a file
    where nothing had turned: it now says the pair was not labeled in the run and is labeled valid in the file. A
    judgement taken out of the file is said so too."""
    ids = ["c1", "c2", "c3"]
    labels = {"t": [_j(f"{i}~t", True) for i in ids[1:]]}  # c1~t unlabeled
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t", "!answer", minimum_validity=0.5)],
                    [{"type": "answer_matches"}], labels, release={"criteria": {"answer_matches": 0.1}})
    run = op.run(op.load_suite(root), progress=False)
    label_file = root / "labels" / "t.jsonl"
    _relabel(label_file, "c1~t", [json.dumps({"case_id": "c1~t", "valid": True})])
    with pytest.warns(UserWarning, match=r"t\.jsonl differs from the validity labels run .* was made with \("
                                         r"transform t: c1~t is not labeled in the run and labeled valid in the file "
                                         r"now\); this gate uses the run's"):
        op.gate(run)
    _relabel(label_file, "c1~t", [])
    _relabel(label_file, "c2~t", [])
    with pytest.warns(UserWarning, match=r"\(transform t: c2~t is labeled valid in the run and not labeled in the "
                                         r"file now\)"):
        op.gate(run)


def test_the_unscored_note_names_up_to_shown_copies_and_counts_the_rest() -> None:
    """Lines by hand: one copy, exactly three (no 'and 0 more'), four (one more), and a notebook's
    twenty of twenty-two."""
    from oloproof_nb._analysis.validity import unscored_note

    tail = "(see op.validity(run))"
    assert unscored_note(["a~t"]) == f"1 copy labeled invalid, scored by no criterion: a~t {tail}"
    assert unscored_note(["a~t", "b~t", "c~t"]) == (
        f"3 copies labeled invalid, scored by no criterion: a~t, b~t, c~t {tail}")
    assert unscored_note(["a~t", "b~t", "c~t", "d~t"]) == (
        f"4 copies labeled invalid, scored by no criterion: a~t, b~t, c~t and 1 more {tail}")
    many = [f"c{i:02d}~t" for i in range(22)]
    assert unscored_note(many, shown=20) == (
        f"22 copies labeled invalid, scored by no criterion: {', '.join(many[:20])} and 2 more {tail}")


def test_a_copy_labeled_invalid_is_named_once_whatever_its_epochs(example_suite: Path, tmp_path: Path) -> None:
    """Run with 2 epochs, ord-018~injected (labeled invalid) has two case runs and is one copy
    scored by no criterion: named once, by unscored_copies and the gate."""
    from oloproof_nb._analysis.validity import unscored_copies

    run = op.run(op.load_suite(example_suite), out=tmp_path / "run", progress=False, epochs=2)
    assert (run.cases["case_id"] == "ord-018~injected").sum() == 2
    assert unscored_copies(run) == ["ord-018~injected"] and op.gate(run).unscored == ("ord-018~injected",)
