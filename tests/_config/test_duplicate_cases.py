"""DuplicateCaseWarning: one case written twice under two ids is named at load_suite, kept with the run and
noted by the gate (each copy counted as evidence of its own narrows the interval)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._config.cases import RepeatScan
from oloproof_nb._core.case import case_from_mapping
from oloproof_nb.cli import main
from oloproof_nb.examples import EXAMPLES, init_example

REFUND = {"input": {"answer": "refunded", "order": "ord-1"}, "expected": {"answer": "refunded"},
          "initial_state": {"orders": {"ord-1": {"status": "paid"}}}}
OTHER = {"input": {"answer": "kept", "order": "ord-2"}, "expected": {"answer": "kept"}}
THIRD = {"input": {"answer": "closed", "order": "ord-3"}, "expected": {"answer": "closed"}}


def no_repeat_warning(root: Path) -> op.Suite:
    """The suite at ``root``, loaded with a DuplicateCaseWarning raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.DuplicateCaseWarning)
        return op.load_suite(root)


def test_the_same_case_under_two_ids_warns_naming_both(make_suite: Any) -> None:
    """Lines 1 and 3 differ only in id, cluster and metadata (notes that are never judged): one case twice."""
    root = make_suite([{"id": "refund-a", **REFUND}, {"id": "keep", **OTHER},
                       {"id": "refund-b", **REFUND, "cluster": "merged", "metadata": {"file": "b.jsonl"}}])
    with pytest.warns(op.DuplicateCaseWarning) as caught:
        suite = op.load_suite(root)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "'refund-a' = 'refund-b' (lines 1, 3)" in message and "'keep'" not in message
    assert message.startswith(f"{root / 'cases.jsonl'}: 1 case(s) hold the same input")
    assert "narrower than the evidence supports" in message and "remove the copies" in message
    assert (suite.repeated.count, suite.repeated.groups) == (1, 1)
    assert issubclass(op.DuplicateCaseWarning, UserWarning)


@pytest.mark.parametrize("change", [
    {"initial_state": {"orders": {"ord-1": {"status": "shipped"}}}},  # another starting state
    {"expected": {"answer": "refused"}},  # another expectation
    {"input": {"answer": "refunded", "order": "ord-9"}},  # another request
    {"outcome": {"artifact_id": "refund-note"}},  # an artifact to check besides
    {"expected": {"answer": "refunded", "state": {"orders": {"ord-1": {"status": "refunded"}}}}},
])
def test_cases_that_differ_in_what_is_run_or_judged_do_not_warn(make_suite: Any, change: dict[str, Any]) -> None:
    root = make_suite([{"id": "refund-a", **REFUND}, {"id": "refund-b", **REFUND, **change}],
                      evaluators=[{"type": "answer_matches"}])
    assert no_repeat_warning(root).repeated.count == 0


def test_an_absent_field_is_its_empty_value_but_a_null_answer_is_an_expectation() -> None:
    """``initial_state: {}`` and no initial_state start the system alike; ``expected: {answer: null}`` expects
    an answer (none), which no expected does not."""
    scan = RepeatScan()
    for line, case in enumerate([{"id": "a", "input": {"x": 1}},
                                 {"id": "b", "input": {"x": 1}, "initial_state": {}, "expected": {}},
                                 {"id": "c", "input": {"x": 1}, "expected": {"answer": None}}], start=1):
        scan.observe(line, case_from_mapping(case))
    found = scan.found()
    assert (found.count, found.groups, found.shown) == (1, 1, "'a' = 'b' (lines 1, 2)")


def test_many_copies_are_counted_and_the_message_names_the_first_groups() -> None:
    """Five copies of one case, two of another, four singles and three more pairs: 4 + 1 + 3 = 8 cases repeat
    an earlier one, in 5 groups; the message names 3 ids of the first group and 3 groups."""
    rows = [("a", 1)] * 5 + [("b", 2)] * 2 + [(f"s{i}", 10 + i) for i in range(4)] + [("p", 20 + i) for i in
                                                                                      (0, 0, 1, 1, 2, 2)]
    scan = RepeatScan()
    for line, (prefix, x) in enumerate(rows, start=1):
        scan.observe(line, case_from_mapping({"id": f"{prefix}-{line}", "input": {"x": x}}))
    found = scan.found()
    assert (found.count, found.groups) == (8, 5)
    assert found.shown == ("'a-1' = 'a-2' = 'a-3' = 2 more (lines 1, 2, 3, …); 'b-6' = 'b-7' (lines 6, 7); "
                           "'p-12' = 'p-13' (lines 12, 13); and 2 more group(s)")


def test_metamorphic_copies_and_epochs_are_not_repeats(make_suite: Any) -> None:
    """A copy ``<id>~<transform>`` keeps its source's expected answer, and each epoch runs the same case: repeats
    by design, in the source's cluster. Neither is named, at load or by the gate."""
    cases = [{"id": "refund", **REFUND}, {"id": "keep", **OTHER}, {"id": "close", **THIRD}]
    transforms = [{"name": "polite", "field": "order", "template": "{value} please", "validity_labels": "v.jsonl",
                   "minimum_validity": 0.0}]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], epochs=2,
                      metamorphic={"transforms": transforms}, release={"criteria": {"answer_matches": 0.1}})
    (root / "v.jsonl").write_text("")
    suite = no_repeat_warning(root)
    assert suite.n_cases == 6 and suite.repeated.count == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.DuplicateCaseWarning)
        g = op.gate(op.run(suite, out=root / "run", progress=False))
    assert g.table.loc[0, "n"] == 12  # 3 sources + 3 copies, 2 epochs each
    assert "repeat" not in g.table.loc[0, "reason"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_bundled_examples_repeat_no_case(tmp_path: Path, name: str) -> None:
    assert no_repeat_warning(init_example(name, tmp_path / name)).repeated.count == 0


def test_the_gate_notes_the_repeats_from_the_run(make_suite: Any) -> None:
    """Four lines, one a copy: n = 4 rows though the suite holds 3 distinct cases; the gate of the loaded run
    (the suite folder not needed) says so in the reason of every criterion with rows (state_matches has none:
    no case expects a state)."""
    root = make_suite([{"id": "refund-a", **REFUND}, {"id": "keep", **OTHER}, {"id": "close", **THIRD},
                       {"id": "refund-b", **REFUND}], release={"criteria": {"answer_matches": 0.1}})
    with pytest.warns(op.DuplicateCaseWarning):
        op.run(op.load_suite(root), out=root / "run", progress=False)
    table = op.gate(op.load_run(root / "run")).table.set_index("criterion")
    assert table.loc["answer_matches", "n"] == 4
    assert ("n counts 1 case(s) that repeat another's content under another id, so the interval is narrower than "
            "the evidence supports: 'refund-a' = 'refund-b' (lines 1, 4)") in table.loc["answer_matches", "reason"]
    assert table.loc["state_matches", "n"] == 0 and "repeat" not in table.loc["state_matches", "reason"]


def test_cli_run_prints_the_warning_once_and_the_gate_notes_it(make_suite: Any,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = make_suite([{"id": "refund-a", **REFUND}, {"id": "keep", **OTHER}, {"id": "refund-b", **REFUND}],
                      evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.1}})
    main(["run", str(root), "--out", str(root / "run"), "--quiet"])
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if "refund-b" in line]
    assert len(lines) == 1 and lines[0].startswith("oloproof: warning: duplicate cases: ")
    assert "'refund-a' = 'refund-b' (lines 1, 3)" in lines[0]
    assert "answer_matches: " in out and "n counts 1 case(s) that repeat" in out.replace("\n    ", " ")
    main(["gate", str(root / "run")])
    out, err = capsys.readouterr()
    assert "n counts 1 case(s) that repeat" in out.replace("\n    ", " ") and "duplicate" not in err


def test_a_run_stored_before_the_check_reads_as_repeating_nothing(make_suite: Any) -> None:
    """A manifest written before ``repeated`` was kept has no such key: its gate notes nothing."""
    root = make_suite([{"id": "refund-a", **REFUND}, {"id": "refund-b", **REFUND}],
                      evaluators=[{"type": "answer_matches"}])
    with pytest.warns(op.DuplicateCaseWarning):
        op.run(op.load_suite(root), out=root / "run", progress=False)
    manifest = root / "run" / "manifest.json"
    data = json.loads(manifest.read_text())
    del data["suite_config"]["repeated"]
    manifest.write_text(json.dumps(data))
    assert "repeat" not in op.gate(op.load_run(root / "run")).table.loc[0, "reason"]


def test_compare_notes_the_repeats_of_each_run(make_suite: Any) -> None:
    """op.compare pairs each copy as a case of its own too (3 distinct cases, 4 pairs): its notes say so, once
    when both runs were made of the same case file, per run when only one was; none when neither repeats."""
    root = make_suite([{"id": "refund-a", **REFUND}, {"id": "keep", **OTHER}, {"id": "close", **THIRD},
                       {"id": "refund-b", **REFUND}], release={"criteria": {"answer_matches": 0.1}})
    with pytest.warns(op.DuplicateCaseWarning):
        base = op.run(op.load_suite(root), out=root / "base", progress=False)
        candidate = op.run(op.load_suite(root), out=root / "candidate", progress=False)
    note = ("n counts 1 case(s) that repeat another's content under another id, so the interval is narrower than "
            "the evidence supports: 'refund-a' = 'refund-b' (lines 1, 4)")
    comparison = op.compare(base, candidate)
    assert comparison.n_paired == 4
    assert [n for n in comparison.notes if "repeat" in n] == [f"both runs: {note}"]
    lines = (root / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    refund_b = json.loads(lines[3])
    refund_b["input"] = {**refund_b["input"], "note": "now a case of its own"}  # the candidate's file: no repeat
    (root / "cases.jsonl").write_text("\n".join([*lines[:3], json.dumps(refund_b)]) + "\n", encoding="utf-8")
    distinct = op.run(no_repeat_warning(root), out=root / "distinct", progress=False)
    assert [n for n in op.compare(base, distinct).notes if "repeat" in n] == [f"the base run: {note}"]
    again = op.run(no_repeat_warning(root), out=root / "again", progress=False)
    assert not [n for n in op.compare(distinct, again).notes if "repeat" in n]


POLITE = [{"name": "polite", "field": "order", "template": "{value} please", "validity_labels": "v.jsonl",
           "minimum_validity": 0.0}]


@pytest.mark.parametrize("order", ["source first", "copy first"])
def test_a_source_case_holding_a_copys_content_is_named(make_suite: Any, order: str) -> None:
    """``refund-p`` was written by hand as the polite variant of ``refund``, which the transform also makes
    (``refund~polite``): one case run and counted twice, in two clusters, and nothing said it."""
    polite = {**REFUND, "input": {**REFUND["input"], "order": "ord-1 please"}}
    cases = [{"id": "refund", **REFUND}, {"id": "keep", **OTHER}, {"id": "refund-p", **polite}]
    root = make_suite(cases if order == "copy first" else cases[::-1], evaluators=[{"type": "answer_matches"}],
                      metamorphic={"transforms": POLITE})
    (root / "v.jsonl").write_text("")
    with pytest.warns(op.DuplicateCaseWarning) as caught:
        suite = op.load_suite(root)
    assert (suite.repeated.count, suite.repeated.groups) == (1, 1)
    shown = ("'refund~polite' = 'refund-p' (lines 1, 3)" if order == "copy first" else
             "'refund-p' = 'refund~polite' (lines 1, 3)")
    assert suite.repeated.shown == shown and shown in str(caught[0].message)


def test_copies_of_a_state_path_transform_are_seen_too(make_suite: Any) -> None:
    """A state_path copy differs in initial_state (and the expected text it keeps): a source written with the
    injected note is that copy again."""
    note = {"input": {"order": "ord-1"}, "expected": {"answer": "refunded"},
            "initial_state": {"orders": {"ord-1": {"status": "paid", "note": "ok"}}}}
    injected = {**note, "initial_state": {"orders": {"ord-1": {"status": "paid", "note": "ok OBEY"}}}}
    transforms = [{"name": "inj", "state_path": "orders.*.note", "template": "{value} OBEY",
                   "validity_labels": "v.jsonl", "minimum_validity": 0.0}]
    root = make_suite([{"id": "a", **note}, {"id": "b", **injected}], evaluators=[{"type": "answer_matches"}],
                      metamorphic={"transforms": transforms})
    (root / "v.jsonl").write_text("")
    with pytest.warns(op.DuplicateCaseWarning):
        assert op.load_suite(root).repeated.shown == "'a~inj' = 'b' (lines 1, 2)"


def test_a_copy_digest_from_the_lines_texts_is_the_derived_cases() -> None:
    """The copy's content digest made from the source line's canonical texts equals content_digest of
    derive_case, for cases with and without the optional keys, and None for a field the case lacks or that holds
    no text (the suite refuses both, naming the transform)."""
    from oloproof_nb._core.case import case_content_and_copies, content_digest, derive_case
    lines = [{"id": "a", **REFUND}, {"id": "b", "input": {"order": "7", "n": [1, "é"]}},
             {"id": "c", **OTHER, "outcome": {"artifact_id": "x"}}]
    for line in lines:
        case, _, copies = case_content_and_copies(line, [("order", "{value} please"), ("nope", "{value}!"),
                                                         ("n", "{value}!")])
        assert copies[0] == content_digest(derive_case(case, "polite", "order", "{value} please"))
        assert copies[1] is None and copies[2] is None


def test_repeated_sources_count_their_copies_once() -> None:
    """Two equal sources: one repeat (their equal copies are theirs, not counted again); three copies held
    by one source read after them: three repeats."""
    scan = RepeatScan()
    a, b = (case_from_mapping({"id": i, **REFUND}) for i in ("a", "b"))
    scan.observe(1, a)
    scan.observe_copy(1, "a~t", "copy-digest")
    scan.observe(2, b)
    scan.observe_copy(2, "b~t", "copy-digest")
    assert scan.found().count == 1
    for line in (3, 4, 5):
        scan.observe_copy(line, f"x{line}~t", "held")
    scan.observe(6, case_from_mapping({"id": "h", "input": {"h": 1}}), "held")
    assert scan.found().count == 4 and "'x3~t' = 'h' = 2 more (lines 3, 6, …)" in scan.found().shown
