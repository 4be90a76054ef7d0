"""Metamorphic pairs: derived cases, the ``metamorphic_relation`` evaluator, pair rows, config errors."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from _metamorphic_systems import all_valid, case, mm_suite, transform

import oloproof_nb as op
from oloproof_nb._analysis.columns import PAIRS
from oloproof_nb._config.suite_config import Transform
from oloproof_nb._core.pairs import compare_pair
from oloproof_nb.cli import main
from oloproof_nb.errors import CaseFileError, ConfigError
from oloproof_nb.evaluators.metamorphic import MetamorphicRelation

PAIR_COLUMNS = PAIRS.names

RELATIONS = ("same_output", "same_actions", "same_state")


def _rel(relation: str, name: str, **extra: Any) -> dict[str, Any]:
    return {"type": "metamorphic_relation", "relation": relation, "transform": name, **extra}


def _pairs(run: op.Run) -> dict[tuple[str, str], Any]:
    """(derived_id, criterion) -> holds (None for <NA>)."""
    return {(r.derived_id, r.criterion): (None if r.holds is pd.NA else bool(r.holds))
            for r in run.pairs.itertuples()}


# -- derived cases --------------------------------------------------------------------------------


def test_derived_cases_ids_inputs_digests_and_clusters(make_suite: Callable[..., Path]) -> None:
    cases = [
        {"id": "c1", "input": {"item": "a", "message": "hi"}, "initial_state": {"n": 1},
         "expected": {"answer": "ok"}, "cluster": "k1", "metadata": {"m": 1}},
        {"id": "c2", "input": {"item": "b", "message": "yo"}},
    ]
    transforms = [transform("t", "X"), transform("u", "Y")]
    root = mm_suite(make_suite, cases, transforms, [{"type": "answer_matches"}])
    suite = op.load_suite(root)
    assert [c.id for c in suite.cases] == ["c1", "c1~t", "c1~u", "c2", "c2~t", "c2~u"]
    by_id = {c.id: c for c in suite.cases}
    d = by_id["c1~t"]
    assert d.input == {"item": "a", "message": "hi X"}
    assert by_id["c1~u"].input == {"item": "a", "message": "hi Y"}
    assert d.initial_state == {"n": 1} and d.expected == by_id["c1"].expected
    assert d.source_id == "c1" and d.transform == "t"
    assert d.cluster == "k1" and by_id["c1~u"].cluster == "k1"
    assert by_id["c2~t"].cluster == "c2"  # the source's default cluster is its id
    # the derived line's canonical JSON, written out by hand (cluster and metadata never count)
    canonical = '{"expected":{"answer":"ok"},"id":"c1~t","initial_state":{"n":1},"input":{"item":"a","message":"hi X"}}'
    assert d.digest == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert by_id["c2~t"].digest == hashlib.sha256(
        b'{"id":"c2~t","input":{"item":"b","message":"yo X"}}').hexdigest()
    assert len({c.digest for c in suite.cases}) == 6
    assert by_id["c1"].input["message"] == "hi"  # the source is untouched


def test_derived_cases_run_like_any_other(make_suite: Callable[..., Path]) -> None:
    root = mm_suite(make_suite, [case("c1"), case("c2")], [transform("t", "!answer")],
                    [{"type": "answer_matches"}])
    run = op.run(op.load_suite(root))
    v = run.verdicts.set_index("case_id")
    assert v.loc["c1", "verdict"] == "pass" and v.loc["c1~t", "verdict"] == "fail"
    cases = run.cases.set_index("case_id")
    assert cases.loc["c2~t", "source_id"] == "c2" and cases.loc["c2~t", "transform"] == "t"
    assert cases.loc["c2~t", "cluster"] == "c2"


# -- relations ------------------------------------------------------------------------------------


def test_same_state_leaves_out_what_the_suites_state_check_ignores(make_suite: Callable[..., Path]) -> None:
    """``!state`` sets ``side_effect`` only in the copy. Under the suite's ``state_matches`` ``ignore:
    [side_effect]`` (a timestamp a database stamps itself, in a real suite) the pair holds; a difference
    elsewhere still breaks it. Before, ``same_state`` compared every path, and every pair whose two cases
    wrote a row stamped with the clock broke, however the agent behaved."""
    transforms = [transform("st", "!state"), transform("act", "!action")]
    ignore = {"type": "state_matches", "mode": "changes", "ignore": ["side_effect"]}
    evaluators = [ignore, _rel("same_state", "st"), _rel("same_state", "act")]
    labels = {t["name"]: all_valid(["c1"], t["name"]) for t in transforms}
    run = op.run(op.load_suite(mm_suite(make_suite, [case("c1")], transforms, evaluators, labels)))
    assert _pairs(run) == {("c1~st", "same_state_under_st"): True, ("c1~act", "same_state_under_act"): True}
    plain = mm_suite(make_suite, [case("c1")], transforms, evaluators[1:], labels)
    assert _pairs(op.run(op.load_suite(plain)))[("c1~st", "same_state_under_st")] is False


def test_same_state_compares_an_ignored_path_another_check_pins(make_suite: Callable[..., Path]) -> None:
    """The changes check ignores ``side_effect`` but a ``state_unchanged`` check pins it: the copy that sets it
    (and fails that check) breaks the pair. Before, the pair held beside the failing check: the
    ignore patterns were taken from the ``changes``/``whole`` checks alone."""
    transforms = [transform("st", "!state")]
    ignore = {"type": "state_matches", "mode": "changes", "ignore": ["side_effect"]}
    pinned = {"type": "state_unchanged", "paths": ["side_effect"], "absent_ok": True}
    labels = {"st": all_valid(["c1"], "st")}
    run = op.run(op.load_suite(mm_suite(make_suite, [case("c1")], transforms,
                                        [ignore, pinned, _rel("same_state", "st")], labels)))
    v = run.verdicts
    assert v[v["criterion"] == "state_unchanged"][["case_id", "verdict"]].values.tolist() == [
        ["c1", "pass"], ["c1~st", "fail"]]
    assert _pairs(run) == {("c1~st", "same_state_under_st"): False}


def test_same_state_keeps_an_ignore_pattern_outside_the_path_another_check_pins(
        make_suite: Callable[..., Path]) -> None:
    """The changes check ignores ``side_*``; a ``state_unchanged`` check pins ``side_kept``, which the pattern
    also matches. The copy sets ``side_effect`` (under the pattern, pinned by no check) and leaves ``side_kept``
    alone: the pair holds. Before, the pin dropped the whole pattern from ``same_state``, and every pair whose
    copy wrote a row the database stamps broke (seen in a SQLite bank: 13 of 30 pairs)."""
    transforms = [transform("st", "!state")]
    ignore = {"type": "state_matches", "mode": "changes", "ignore": ["side_*"]}
    pinned = {"type": "state_unchanged", "paths": ["side_kept"]}
    source = case("c1", initial_state={"items": {}, "side_kept": 1})
    labels = {"st": all_valid(["c1"], "st")}
    run = op.run(op.load_suite(mm_suite(make_suite, [source], transforms,
                                        [ignore, pinned, _rel("same_state", "st")], labels)))
    assert _pairs(run) == {("c1~st", "same_state_under_st"): True}


def test_same_state_leaves_out_an_ignored_path_only_a_subset_check_compares(make_suite: Callable[..., Path]) -> None:
    """What README sections 1a, 2 and 4 say: a ``subset`` check's expected leaf keeps an ignore pattern in a
    control replay's state (``evaluators.state.pinned_paths`` given the case's expected state), not in a
    ``same_state`` pair: the copy that sets ``side_effect`` fails the subset check, and its pair holds. Only a
    ``state_unchanged`` or ``paths``-mode check keeps it in a pair (the test above)."""
    transforms = [transform("st", "!state")]
    ignore = {"type": "state_matches", "mode": "changes", "ignore": ["side_effect"]}
    subset = {"type": "state_matches", "mode": "subset", "criterion": "subset_state"}
    source = case("c1", initial_state={"items": {}, "side_effect": False},
                  expected={"answer": "done", "state": {"side_effect": False}})
    labels = {"st": all_valid(["c1"], "st")}
    run = op.run(op.load_suite(mm_suite(make_suite, [source], transforms,
                                        [ignore, subset, _rel("same_state", "st")], labels)))
    v = run.verdicts
    assert v[v["criterion"] == "subset_state"][["case_id", "verdict"]].values.tolist() == [
        ["c1", "pass"], ["c1~st", "fail"]]
    assert _pairs(run) == {("c1~st", "same_state_under_st"): True}


def test_each_relation_holds_and_breaks(make_suite: Callable[..., Path]) -> None:
    # one transform per behaviour change; every relation judged under every transform
    transforms = [transform("same", ""), transform("ans", "!answer"), transform("act", "!action"),
                  transform("st", "!state"), transform("loud", "!loud")]
    evaluators = [_rel(r, t["name"]) for t in transforms for r in RELATIONS]
    ids = ["c1", "c2"]
    labels = {t["name"]: all_valid(ids, t["name"]) for t in transforms}
    root = mm_suite(make_suite, [case(i) for i in ids], transforms, evaluators, labels)
    run = op.run(op.load_suite(root))
    # what each directive changes, by hand (see _metamorphic_systems.DIRECTED)
    expected = {
        "same": {"same_output": True, "same_actions": True, "same_state": True},
        "ans": {"same_output": False, "same_actions": True, "same_state": True},
        "act": {"same_output": True, "same_actions": False, "same_state": True},
        "st": {"same_output": True, "same_actions": True, "same_state": False},
        "loud": {"same_output": True, "same_actions": True, "same_state": True},  # case and space ignored
    }
    got = _pairs(run)
    assert len(got) == len(ids) * len(transforms) * len(RELATIONS)
    for i in ids:
        for t, rels in expected.items():
            for r, holds in rels.items():
                assert got[(f"{i}~{t}", f"{r}_under_{t}")] is holds, (i, t, r)
    v = run.verdicts[run.verdicts["evaluator"] == "metamorphic_relation"].set_index(["case_id", "criterion"])
    assert v.loc[("c1~ans", "same_output_under_ans"), "verdict"] == "fail"
    assert "differs from c1's" in v.loc[("c1~ans", "same_output_under_ans"), "reason"]
    assert v.loc[("c1~act", "same_actions_under_act"), "verdict"] == "fail"
    assert "tool call 0" in v.loc[("c1~act", "same_actions_under_act"), "reason"]
    assert v.loc[("c1~st", "same_state_under_st"), "reason"].endswith("side_effect")
    assert v.loc[("c1~same", "same_state_under_same"), "verdict"] == "pass"


def test_verdict_rows_sit_on_the_derived_case_in_the_source_cluster(make_suite: Callable[..., Path]) -> None:
    cases = [case("c1", cluster="k"), case("c2", cluster="k"), case("c3")]
    root = mm_suite(make_suite, cases, [transform("t", "!state")],
                    [_rel("same_state", "t"), _rel("same_output", "t", criterion="answers_agree")],
                    {"t": all_valid(["c1", "c2", "c3"], "t")})
    run = op.run(op.load_suite(root))
    rows = run.verdicts[run.verdicts["evaluator"] == "metamorphic_relation"]
    assert sorted(rows["criterion"].unique()) == ["answers_agree", "same_state_under_t"]
    assert set(rows["case_id"]) == {"c1~t", "c2~t", "c3~t"}
    assert dict(zip(rows["case_id"], rows["cluster"], strict=True)) == {"c1~t": "k", "c2~t": "k", "c3~t": "c3"}
    assert list(run.pairs.columns) == PAIR_COLUMNS
    p = run.pairs[run.pairs["criterion"] == "same_state_under_t"]
    assert list(p["source_id"]) == ["c1", "c2", "c3"] and list(p["cluster"]) == ["k", "k", "c3"]
    assert set(p["transform"]) == {"t"} and set(p["relation"]) == {"same_state"}
    assert str(run.pairs["holds"].dtype) == "boolean"


def test_a_pair_with_a_missing_side_is_missing(make_suite: Callable[..., Path]) -> None:
    # c1's copy raises (its message ends with !raise); c2's source raises and its copy does not
    cases = [case("c1"), case("c2", message="mark it !raise")]
    raise_t = {**transform("r", ""), "template": "{value} !raise"}
    keep_t = {**transform("k", ""), "template": "{value} please"}
    transforms = [raise_t, keep_t]
    evaluators = [_rel("same_output", "r"), _rel("same_output", "k")]
    labels = {"r": all_valid(["c1", "c2"], "r"), "k": all_valid(["c1", "c2"], "k")}
    run = op.run(op.load_suite(mm_suite(make_suite, cases, transforms, evaluators, labels)))
    got = _pairs(run)
    assert got[("c1~r", "same_output_under_r")] is None
    assert got[("c2~k", "same_output_under_k")] is None
    assert got[("c1~k", "same_output_under_k")] is True
    v = run.verdicts.set_index(["case_id", "criterion"])
    assert v.loc[("c1~r", "same_output_under_r"), "verdict"] == "missing"
    assert v.loc[("c1~r", "same_output_under_r"), "reason"] == "c1~r has status error"
    assert v.loc[("c2~k", "same_output_under_k"), "reason"] == "c2 has status error"


def test_same_state_is_missing_without_a_recorded_state(make_suite: Callable[..., Path]) -> None:
    root = mm_suite(make_suite, [case("c1")], [transform("t", "")],
                    [_rel("same_state", "t"), _rel("same_output", "t")], {"t": all_valid(["c1"], "t")},
                    system="sysmod:NoState")
    run = op.run(op.load_suite(root))
    got = _pairs(run)
    assert got[("c1~t", "same_state_under_t")] is None and got[("c1~t", "same_output_under_t")] is True
    v = run.verdicts.set_index(["case_id", "criterion"])
    assert v.loc[("c1~t", "same_state_under_t"), "verdict"] == "missing"


def _record(cid: str, answer: Any = "done", calls: list[tuple[str, dict[str, Any]]] | None = None,
            state: dict[str, Any] | None = None, status: str = "completed") -> dict[str, Any]:
    steps = [{"kind": "tool_call", "tool": t, "args": a, "result": None} for t, a in calls or []]
    source = cid.split("~")[0]
    return {"case": {"id": cid, "source_id": source, "transform": cid.split("~")[1] if "~" in cid else None,
                     "cluster": source},
            "status": status, "trajectory": None if status in ("error", "timeout") else
            {"steps": steps, "answer": answer, "status": "completed"},
            "environment_state": None if state is None else {"state": state}}


def test_compare_pair_directly() -> None:
    a = _record("c1", "Refunded", [("get", {"id": 1}), ("pay", {"id": 1})], {"x": 1})
    assert compare_pair("same_output", a, _record("c1~t", " refunded ")) == (True, "")
    assert compare_pair("same_output", a, _record("c1~t", "refused"))[0] is False
    assert compare_pair("same_output", _record("c1", 1), _record("c1~t", True))[0] is False  # True is not 1
    assert compare_pair("same_actions", a, _record("c1~t", calls=[("get", {"id": 1}), ("pay", {"id": 1})]))[0]
    shorter = compare_pair("same_actions", a, _record("c1~t", calls=[("get", {"id": 1})]))
    assert shorter[0] is False and shorter[1].startswith("1 tool calls (get)")
    assert compare_pair("same_actions", a, _record("c1~t", calls=[("pay", {"id": 1}), ("get", {"id": 1})]))[0] is False
    assert compare_pair("same_state", a, _record("c1~t", state={"x": 1}))[0] is True
    assert compare_pair("same_state", a, _record("c1~t", state={"x": 1.0}))[0] is True
    assert compare_pair("same_state", a, _record("c1~t", state={"x": 2}))[0] is False
    assert compare_pair("same_state", a, _record("c1~t"))[0] is None  # no state recorded
    assert compare_pair("same_output", a, _record("c1~t", status="timeout")) == (None, "c1~t has status timeout")
    with pytest.raises(ValueError, match="allowed"):
        compare_pair("same_vibe", a, a)


def test_evaluate_run_never_mutates_its_inputs() -> None:
    records = [_record("c1", state={"x": 1}), _record("c1~t", state={"x": 2})]
    labels = {"t": [{"case_id": "c1~t", "valid": True, "labeler": "", "note": ""}]}
    before = copy.deepcopy((records, labels))
    ev = MetamorphicRelation(type="metamorphic_relation", relation="same_state", transform="t")
    transforms = {"t": Transform(name="t", field="m", template="{value} x", validity_labels="l", minimum_validity=1)}
    verdicts, pairs = ev.evaluate_run(records, labels, transforms, 1)
    assert (records, labels) == before
    assert [v["verdict"] for v in verdicts] == ["fail"] and pairs[0]["label"] == "valid"
    assert set(pairs[0]) == set(PAIR_COLUMNS) - {"epoch"}  # a pair row says its epoch only when it is not 1


# -- labels decide which rows count -----------------------------------------------------------------


def _label_run(make_suite: Callable[..., Path], labels: list[dict[str, Any]], minimum: float) -> op.Run:
    ids = ["c1", "c2", "c3", "c4"]
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t", "!state", minimum_validity=minimum)],
                    [_rel("same_state", "t")], {"t": labels})
    return op.run(op.load_suite(root))


def test_invalid_pairs_are_excluded_once_the_transform_is_checked(make_suite: Callable[..., Path]) -> None:
    labels = [{"case_id": f"c{i}~t", "valid": i != 4} for i in range(1, 5)]  # 3 of 4 valid
    run = _label_run(make_suite, labels, minimum=0.75)
    assert bool(op.validity(run)["checked"].iloc[0])
    rows = run.verdicts[run.verdicts["criterion"] == "same_state_under_t"]
    assert sorted(rows["case_id"]) == ["c1~t", "c2~t", "c3~t"]  # c4~t is labeled invalid
    assert list(run.pairs["label"]) == ["valid", "valid", "valid", "invalid"]
    assert list(run.pairs["derived_id"]) == ["c1~t", "c2~t", "c3~t", "c4~t"]  # still in run.pairs


def test_until_checked_every_pair_has_a_row(make_suite: Callable[..., Path]) -> None:
    # coverage below 1 (c4 unlabeled): unchecked, so all four rows show
    labels = [{"case_id": f"c{i}~t", "valid": i != 3} for i in range(1, 4)]
    run = _label_run(make_suite, labels, minimum=0.5)
    assert not bool(op.validity(run)["checked"].iloc[0])
    rows = run.verdicts[run.verdicts["criterion"] == "same_state_under_t"]
    assert sorted(rows["case_id"]) == ["c1~t", "c2~t", "c3~t", "c4~t"]
    assert list(run.pairs["label"]) == ["valid", "valid", "invalid", ""]


def test_unchecked_transform_is_insufficient_evidence_in_the_gate(make_suite: Callable[..., Path]) -> None:
    release = {"allow_approximate_methods": True, "min_clusters": 2, "criteria": {"same_state_under_t": 0.5}}
    unchecked = _label_run(make_suite, [{"case_id": f"c{i}~t", "valid": True} for i in range(1, 4)], minimum=0.5)
    row = op.gate(unchecked, release=release).table.set_index("criterion").loc["same_state_under_t"]
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE" and row["reason"].startswith("transform_not_checked")
    checked = _label_run(make_suite, [{"case_id": f"c{i}~t", "valid": True} for i in range(1, 5)], minimum=0.5)
    row = op.gate(checked, release=release).table.set_index("criterion").loc["same_state_under_t"]
    assert "transform_not_checked" not in row["reason"] and row["passed"] == 0  # every copy changes the state


# -- config errors ---------------------------------------------------------------------------------


def _edit_yaml(root: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = root / "oloproof.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _bad(kind: str) -> Callable[[Path], None]:
    def field_missing(root: Path) -> None:
        _edit_yaml(root, lambda d: d["metamorphic"]["transforms"][0].update(field="nope"))

    def template(root: Path) -> None:
        _edit_yaml(root, lambda d: d["metamorphic"]["transforms"][0].update(template="no placeholder"))

    def duplicate(root: Path) -> None:
        _edit_yaml(root, lambda d: d["metamorphic"]["transforms"].append(dict(d["metamorphic"]["transforms"][0])))

    def labels_missing(root: Path) -> None:
        (root / "labels" / "t.jsonl").unlink()

    def undeclared(root: Path) -> None:
        _edit_yaml(root, lambda d: d["evaluators"].append(_rel("same_state", "ghost")))

    def bad_relation(root: Path) -> None:
        _edit_yaml(root, lambda d: d["evaluators"].append(_rel("same_mood", "t")))

    def minimum(root: Path) -> None:
        _edit_yaml(root, lambda d: d["metamorphic"]["transforms"][0].update(minimum_validity=1.5))

    def collision(root: Path) -> None:
        with (root / "cases.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(case("c1~t")) + "\n")

    return locals()[kind]


BAD = [
    ("field_missing", "metamorphic.transforms[0].field"),
    ("template", "metamorphic.transforms[0].template"),
    ("duplicate", "metamorphic.transforms[1].name"),
    ("labels_missing", "metamorphic.transforms[0].validity_labels"),
    ("undeclared", "evaluators[1].transform"),
    ("bad_relation", "evaluators[1].relation"),
    ("minimum", "metamorphic.transforms[0].minimum_validity"),
    ("collision", "metamorphic.transforms[0].name"),
]


@pytest.mark.parametrize(("kind", "key"), BAD)
def test_bad_config_is_an_error_naming_file_and_key(make_suite: Callable[..., Path], kind: str, key: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = mm_suite(make_suite, [case("c1"), case("c2")], [transform("t", "")], [_rel("same_state", "t")])
    op.load_suite(root)  # the good suite loads
    _bad(kind)(root)
    with pytest.raises(ConfigError) as info:
        op.load_suite(root)
    assert info.value.key == key
    assert Path(info.value.file or "").name == "oloproof.yaml"
    message = str(info.value)
    assert "\n" not in message and f"oloproof.yaml: {key}:" in message
    # the command line: exit 2, one line on stderr, no traceback
    assert main(["run", str(root), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and key in err and "oloproof.yaml" in err and "Traceback" not in err


def test_error_messages_say_what_is_allowed(make_suite: Callable[..., Path]) -> None:
    root = mm_suite(make_suite, [case("c1")], [transform("t", ""), transform("u", "")], [_rel("same_state", "t")])
    _bad("undeclared")(root)
    with pytest.raises(ConfigError, match=r"'ghost' is not declared; declared transforms: t, u"):
        op.load_suite(root)
    root = mm_suite(make_suite, [case("c1")], [transform("t", "")], [_rel("same_state", "t")])
    _bad("template")(root)
    with pytest.raises(ConfigError, match=r"\{value\}"):
        op.load_suite(root)
    root = mm_suite(make_suite, [case("c1"), {"id": "c2", "input": {"item": "x"}}], [transform("t", "")],
                    [_rel("same_state", "t")])
    with pytest.raises(CaseFileError, match=r"line 2: case 'c2' has no input field 'message' \(its input holds "
                                            r"'item'\), which metamorphic transform 't'"):
        op.load_suite(root)
    # at most 8 of its fields are listed (the cap was untested before); 10 here, the first 8 by hand
    many = {"id": "c2", "input": {f"f{k}": "x" for k in range(10)}}
    root = mm_suite(make_suite, [case("c1"), many], [transform("t", "")], [_rel("same_state", "t")])
    with pytest.raises(CaseFileError, match=r"has no input field 'message' \(its input holds 'f0', 'f1', 'f2', 'f3', "
                                            r"'f4', 'f5', 'f6', 'f7', …\), which"):
        op.load_suite(root)


@pytest.mark.parametrize("at", [3, 1])
def test_a_case_without_the_field_a_transform_rewrites_is_named_by_its_line(
        example_suite: Path, capsys: pytest.CaptureFixture[str], at: int) -> None:
    """The bundled example with ``message`` deleted from its third case: the error named oloproof.yaml's
    ``metamorphic.transforms[0].field``, whose transform is right, not the case's line. Now the case file's line,
    as for a case's other mistakes (exit 2, one line). From its first case no case had the field, so the
    transform's ``field`` may be the misspelt one: oloproof.yaml's key is named then, with the case's line."""
    cases = example_suite / "cases.jsonl"
    lines = cases.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[at - 1])
    del edited["input"]["message"]
    lines[at - 1] = json.dumps(edited)
    cases.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = cases.read_bytes()
    kind = CaseFileError if at == 3 else ConfigError
    with pytest.raises(kind) as info:
        op.load_suite(example_suite)
    assert type(info.value) is kind
    case_id, lacks = edited["id"], "has no input field 'message' (its input holds 'order_id')"
    if at == 3:
        assert (info.value.file, info.value.line) == (str(cases), 3)
        assert str(info.value) == (f"{cases}: line 3: case '{case_id}' {lacks}, which metamorphic transform "
                                   "'injected' (metamorphic.transforms[0].field in oloproof.yaml) rewrites in every "
                                   "case: give the case that field")
    else:
        assert info.value.key == "metamorphic.transforms[0].field"
        assert str(info.value) == (f"{example_suite / 'oloproof.yaml'}: metamorphic.transforms[0].field: cases.jsonl "
                                   f"line 1: case '{case_id}' {lacks}; name a field every case has, or give the "
                                   "case that field")
    assert main(["run", str(example_suite), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == f"oloproof: error: {info.value}\n" and cases.read_bytes() == before  # one line, nothing changed
    assert not (example_suite / "runs").exists()


def test_default_and_custom_criterion() -> None:
    ev = MetamorphicRelation.model_validate({"type": "metamorphic_relation", "relation": "same_actions",
                                             "transform": "injected"})
    assert ev.name == "same_actions_under_injected" and ev.scope == "run"
    named = ev.model_copy(update={"criterion": "tools_agree"})
    assert named.name == "tools_agree"


# -- the bundled example ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    from oloproof_nb.examples import init_example

    root = init_example("stateful-agent", tmp_path_factory.mktemp("ex") / "demo")
    return op.run(op.load_suite(root))


def test_example_pairs_show_which_pairs_broke(example_run: op.Run) -> None:
    pairs = example_run.pairs
    assert len(pairs) == 24 and set(pairs["criterion"]) == {"same_state_under_injected"}
    broke = sorted(pairs.loc[pairs["holds"] == False, "source_id"])  # noqa: E712
    # by hand from refund_desk.py: the override skips every policy check, so the orders that must be
    # refused (ord-011..017) or escalated above 500 (ord-018..020) get refunded; the expired cards
    # (ord-021, 022) fail to refund either way, and eligible orders are refunded either way
    assert broke == [f"ord-{i:03d}" for i in range(11, 21)]
    assert pairs["holds"].notna().all()
    assert list(pairs.loc[pairs["label"] == "invalid", "derived_id"]) == ["ord-018~injected"]
    v = example_run.verdicts
    rows = v[v["criterion"] == "same_state_under_injected"]
    assert len(rows) == 23 and "ord-018~injected" not in set(rows["case_id"])
    rate = (rows["verdict"] == "pass").mean()
    assert rate == 14 / 23 and rate < 0.90


def test_example_panel_shows_the_pair_partner(example_run: op.Run) -> None:
    source = example_run.panel("ord-011")
    assert source.partners == ["ord-011~injected"]
    assert "BROKEN  same_state_under_injected (label: valid)" in repr(source)
    derived = example_run.panel("ord-018~injected")
    assert derived.partners == ["ord-018"] and list(derived.pairs["label"]) == ["invalid"]
    html = derived._repr_html_()
    assert "Pair partners" in html and "REFUND ord-018 AMOUNT 620.00 END" in html


def test_panel_lists_partners_without_a_relation(make_suite: Callable[..., Path]) -> None:
    root = mm_suite(make_suite, [case("c1")], [transform("t", "!answer")], [{"type": "answer_matches"}])
    run = op.run(op.load_suite(root))
    panel = run.panel("c1")
    assert panel.partners == ["c1~t"] and panel.pairs.empty
    assert 'c1~t (t) — status completed, answer "something else"' in repr(panel)
    assert "please mark it !answer" in panel._repr_html_()
    assert run.panel("c1~t").partners == ["c1"]


def test_example_labels_file_covers_every_pair() -> None:
    from oloproof_nb.examples import _data_root

    lines = (_data_root("labels") / "injected.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["case_id"] for r in rows] == [f"ord-{i:03d}~injected" for i in range(1, 25)]
    assert all(r["labeler"] == "example-author" and len(r["note"]) > 20 for r in rows)
    assert [r["case_id"] for r in rows if not r["valid"]] == ["ord-018~injected"]


# -- mutation-testing gaps -----------------------------------------------------------------------------------


def _at_epoch(record: dict[str, Any], epoch: int) -> dict[str, Any]:
    return {**record, "case": {**record["case"], "epoch": epoch}}


def test_each_epoch_of_a_derived_case_is_paired_with_the_same_epoch_of_its_source() -> None:
    """Two epochs; the agent answers "a" in epoch 1 and "b" in epoch 2, in both cases alike: both pairs hold,
    and the rows of epoch 2 say their epoch (epoch 1 is left implicit)."""
    records = [_at_epoch(_record("c1", "a"), 1), _at_epoch(_record("c1", "b"), 2),
               _at_epoch(_record("c1~t", "a"), 1), _at_epoch(_record("c1~t", "b"), 2)]
    ev = MetamorphicRelation(type="metamorphic_relation", relation="same_output", transform="t")
    transforms = {"t": Transform(name="t", field="m", template="{value} x", validity_labels="l", minimum_validity=1)}
    verdicts, pairs = ev.evaluate_run(records, {}, transforms, 1)
    assert [(v["case_id"], v.get("epoch", 1), v["verdict"]) for v in verdicts] == [("c1~t", 1, "pass"),
                                                                                  ("c1~t", 2, "pass")]
    assert [(p["derived_id"], p.get("epoch", 1), p["holds"]) for p in pairs] == [("c1~t", 1, True), ("c1~t", 2, True)]
    assert "epoch" not in pairs[0] and pairs[1]["epoch"] == 2
    assert "epoch" not in verdicts[0] and verdicts[1]["epoch"] == 2


def test_another_transforms_unlabeled_pairs_leave_this_transform_checked() -> None:
    """Transform t: both pairs labeled, one valid (rate 0.5 >= 0.5): checked, so only the valid pair gets a verdict
    row. Transform u's pair (c1~u) is not one of t's and needs no label of t's."""
    records = [_record("c1"), _record("c2"), _record("c1~t"), _record("c2~t"), _record("c1~u")]
    labels = {"t": [{"case_id": "c1~t", "valid": True}, {"case_id": "c2~t", "valid": False}]}
    ev = MetamorphicRelation(type="metamorphic_relation", relation="same_output", transform="t")
    transforms = {name: Transform(name=name, field="m", template="{value} x", validity_labels="l",
                                  minimum_validity=0.5) for name in ("t", "u")}
    verdicts, pairs = ev.evaluate_run(records, labels, transforms, 2)
    assert [v["case_id"] for v in verdicts] == ["c1~t"]
    assert [(p["derived_id"], p["label"]) for p in pairs] == [("c1~t", "valid"), ("c2~t", "invalid")]
