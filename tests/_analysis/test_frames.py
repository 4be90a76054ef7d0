"""Frame columns pinned to shared/DESIGN.md (documented columns first, in order) and frame contents by hand."""

from __future__ import annotations

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._analysis import columns, frames
from oloproof_nb._core.paths import ABSENT

# Copied from shared/DESIGN.md, "The Python API": the documented columns, in the documented order.
DOCUMENTED = {
    "cases": ["case_id", "source_id", "transform", "cluster", "digest", "status", "answer", "n_tool_calls",
              "trajectory_length", "duration_s", "error", "has_state"],
    "steps": ["case_id", "step", "kind", "tool", "args", "result", "is_error"],
    "snapshots": ["case_id", "schema", "captured_at", "state_digest", "state"],
    "changes": ["case_id", "path", "before", "after"],
    "verdicts": ["case_id", "cluster", "criterion", "evaluator", "verdict", "reason"],
    "comparisons": ["case_id", "criterion", "path", "expected", "actual", "ok"],
    "replays": ["case_id", "criterion", "tool", "fault", "checkpoint", "control_reproduced", "recovered",
                "escalated", "constraint_broken", "verdict", "reason", "cached"],
    "pairs": ["source_id", "derived_id", "transform", "relation", "criterion", "holds", "label", "cluster"],
    # "case_id, artifact_id, status, reason, ... (the receipt fields above)": the receipt record's fields
    "receipts": ["case_id", "artifact_id", "run_started_at", "observed_at", "modified_at", "expected_sha256",
                 "observed_digest", "digest_kind", "validator", "validator_exit_code", "evidence_source", "status",
                 "reason"],
}
CONSTANTS = {name: spec.names for name, spec in columns.FRAMES.items()}


def _prefix(columns: list[str], documented: list[str]) -> None:
    assert list(columns)[: len(documented)] == documented, f"{list(columns)} does not start with {documented}"
    assert len(set(columns)) == len(list(columns))


@pytest.mark.parametrize("name", sorted(CONSTANTS))
def test_column_constants_start_with_the_documented_columns(name: str) -> None:
    _prefix(CONSTANTS[name], DOCUMENTED[name])
    assert columns.FRAMES[name].documented == len(DOCUMENTED[name])


@pytest.mark.parametrize("name", sorted(CONSTANTS))
def test_every_column_is_documented_on_the_run_property(name: str) -> None:
    doc = getattr(op.Run, name).__doc__
    missing = [c for c in CONSTANTS[name] if f"{c}" not in doc]
    assert not missing, f"Run.{name} docstring does not name {missing}"


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    from oloproof_nb.examples import init_example

    root = tmp_path_factory.mktemp("frames")
    suite = init_example("stateful-agent", root / "demo")
    return op.run(op.load_suite(suite), out=root / "out")


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_example_run_frames_have_the_documented_columns(example_run: op.Run, name: str) -> None:
    _prefix(getattr(example_run, name).columns, DOCUMENTED[name])


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_empty_frames_keep_their_columns(make_suite, name: str) -> None:
    folder = make_suite([{"id": "c", "input": {}}], evaluators=[], system="sysmod:Stateless")
    run = op.run(op.load_suite(folder), out=folder / "o")
    _prefix(getattr(run, name).columns, DOCUMENTED[name])


def test_example_frames_are_tidy(example_run: op.Run) -> None:
    cases = example_run.cases
    assert cases["case_id"].is_unique
    sources = cases[cases["transform"].isna()]
    assert len(sources) == 24 and (sources["case_id"] == sources["source_id"]).all()
    assert set(example_run.verdicts["verdict"]) <= {"pass", "fail", "missing"}
    # every frame's ids join back to run.cases
    for name in ("steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "receipts"):
        assert set(getattr(example_run, name)["case_id"].dropna()) <= set(cases["case_id"])
    # one snapshot per case that recorded a state
    assert len(example_run.snapshots) == int(cases["has_state"].sum()) == len(cases)


# -- contents of each frame from hand-written records ------------------------------------------------


RECORDS = [
    {
        "index": 0,
        "case": {"id": "a", "input": {"q": 1}, "initial_state": {"o": {"x": 1, "y": [1, 2]}}, "cluster": "a",
                 "metadata": {"k": "v"}, "digest": "d" * 64, "source_id": "a", "transform": None},
        "status": "completed", "error": None, "started_at": "2026-07-25T14:00:00.000000Z", "duration_s": 0.5,
        "trajectory": {"steps": [
            {"kind": "message", "role": "assistant", "content": "plan", "name": "parse", "args": {"m": "x"}},
            {"kind": "tool_call", "tool": "get", "args": {"id": "a"}, "result": {"ok": True}},
            {"kind": "tool_call", "tool": "pay", "args": {"id": "a"}, "result": {"ok": False, "error": "declined"}},
            {"kind": "tool_call", "tool": "pay", "args": {"id": "a"}, "result": "<<malformed>>"},
        ], "answer": "done", "status": "completed", "input": {"q": 1}},
        "environment_state": {"schema": "environment_state/v1", "run_id": "r", "case_id": "a", "case_digest": "d" * 64,
                              "system_version": "v1", "captured_at": "2026-07-25T14:00:01.000000Z",
                              "state": {"o": {"x": 2, "y": [1], "z": None}}, "state_digest": "e" * 64},
        "verdicts": [{"criterion": "answer_matches", "evaluator": "answer_matches", "verdict": "pass", "reason": ""}],
        "comparisons": [{"case_id": "a", "criterion": "answer_matches", "path": "answer", "expected": "done",
                         "actual": "done", "ok": True},
                        {"case_id": "a", "criterion": "s", "path": "o.w", "expected": {"$absent": True},
                         "actual": None, "ok": False}],
        "replays": [], "receipts": [],
    },
    {
        "index": 1,
        "case": {"id": "b", "input": {}, "cluster": "a", "metadata": {}, "digest": "f" * 64, "source_id": "a",
                 "transform": "t"},
        "status": "error", "error": "KeyError: 'x'", "started_at": "2026-07-25T14:00:02.000000Z", "duration_s": 0.1,
        "trajectory": None, "environment_state": None,
        "verdicts": [{"criterion": "answer_matches", "evaluator": "answer_matches", "verdict": "missing",
                      "reason": "KeyError: 'x'"}],
        "comparisons": [], "replays": [], "receipts": [],
    },
]


def test_cases_frame_by_hand() -> None:
    df = frames.cases_frame(RECORDS)
    a, b = df.iloc[0], df.iloc[1]
    assert (a.case_id, a.source_id, a.cluster, a.status, a.answer) == ("a", "a", "a", "completed", "done")
    assert (a.n_tool_calls, a.trajectory_length, a.has_state, a.duration_s) == (3, 4, True, 0.5)
    assert a["metadata"] == {"k": "v"} and pd.isna(a["transform"]) and pd.isna(a["error"])
    assert (b["transform"], b["status"], b["error"], b["has_state"]) == ("t", "error", "KeyError: 'x'", False)
    assert pd.isna(b.n_tool_calls) and pd.isna(b.trajectory_length) and b.answer is None
    assert df["has_state"].dtype == bool and df["duration_s"].dtype == "float64"


def test_steps_frame_by_hand() -> None:
    df = frames.steps_frame(RECORDS)
    assert list(df["case_id"]) == ["a"] * 4 and list(df["step"]) == [0, 1, 2, 3]
    assert list(df["kind"]) == ["message", "tool_call", "tool_call", "tool_call"]
    assert list(df["tool"]) == ["parse", "get", "pay", "pay"]
    assert list(df["is_error"]) == [False, False, True, True]
    assert df.loc[2, "result"] == {"ok": False, "error": "declined"} and df.loc[0, "content"] == "plan"


def test_snapshots_and_changes_by_hand() -> None:
    snaps = frames.snapshots_frame(RECORDS)
    assert list(snaps["case_id"]) == ["a"] and snaps.loc[0, "state"] == {"o": {"x": 2, "y": [1], "z": None}}
    assert snaps.loc[0, "captured_at"] == pd.Timestamp("2026-07-25T14:00:01Z")
    changes = frames.changes_frame(RECORDS)
    rows = list(changes[["case_id", "path", "before", "after"]].itertuples(index=False, name=None))
    assert rows == [("a", "o.x", 1, 2), ("a", "o.y.1", 2, ABSENT), ("a", "o.z", ABSENT, None)]


def test_verdicts_and_comparisons_by_hand() -> None:
    v = frames.verdicts_frame(RECORDS)
    assert v[["case_id", "cluster", "verdict"]].values.tolist() == [["a", "a", "pass"], ["b", "a", "missing"]]
    c = frames.comparisons_frame(RECORDS)
    assert len(c) == 2 and c.loc[1, "expected"] is ABSENT and c.loc[1, "actual"] is None
    assert c["ok"].dtype == bool


def test_ended_case_runs_are_the_errors_and_timeouts_with_their_first_line() -> None:
    """By hand: b raised (a two-line message), c overran its time, e raised without a message; d stopped at an
    Inspect message limit (``failed``), which is still scored, so it did not end in error."""
    cases = pd.DataFrame({"case_id": ["a", "b", "c", "d", "e"],
                          "status": ["completed", "error", "timeout", "failed", "error"],
                          "error": [None, "KeyError: 'x'\n  raised in act()", "case_timeout_s 5 reached",
                                    "message limit reached (10)", None]})
    ended = frames.ended_case_runs(cases)
    assert ended[["case_id", "status", "message"]].values.tolist() == [
        ["b", "error", "KeyError: 'x'"], ["c", "timeout", "case_timeout_s 5 reached"], ["e", "error", "(no message)"]]


def test_the_unscored_copies_of_each_checked_transform() -> None:
    """Two sources, two transforms (6 cases an epoch, so 2 copies each). t labels s1~t invalid and u labels s2~u
    invalid: each 1 of 2 valid, at its minimum 0.5, so checked, and both copies are scored by no criterion."""
    from types import SimpleNamespace

    from oloproof_nb._config.suite_config import Transform

    transforms = [Transform(name=name, field="q", template="{value}!", validity_labels=f"{name}.jsonl",
                            minimum_validity=0.5) for name in ("t", "u")]
    config = SimpleNamespace(metamorphic=SimpleNamespace(transforms=transforms))
    labels = {"t": {"s1~t": "invalid", "s2~t": "valid"}, "u": {"s1~u": "valid", "s2~u": "invalid"}}
    assert frames.unscored_cases(config, labels, 6) == {"s1~t", "s2~u"}  # type: ignore[arg-type]


def test_user_values_keep_their_python_types() -> None:
    # null stays None (never NaN), ints stay ints, whatever the other rows hold
    recs = [{**RECORDS[0], "comparisons": [
        {"case_id": "a", "criterion": "s", "path": "p1", "expected": None, "actual": "x", "ok": False},
        {"case_id": "a", "criterion": "s", "path": "p2", "expected": "y", "actual": None, "ok": False},
        {"case_id": "a", "criterion": "s", "path": "p3", "expected": 1, "actual": {"$absent": True}, "ok": False},
    ]}]
    c = frames.comparisons_frame(recs)
    assert c["expected"].tolist() == [None, "y", 1] and c["actual"].tolist() == ["x", None, ABSENT]
    assert type(c.loc[2, "expected"]) is int
    cases = frames.cases_frame([{**RECORDS[0], "trajectory": {**RECORDS[0]["trajectory"], "answer": None}},
                                RECORDS[1]])
    assert cases["answer"].tolist() == [None, None]
    changes = frames.changes_frame([{**RECORDS[0], "environment_state": {**RECORDS[0]["environment_state"],
                                                                        "state": {"o": {"x": None, "y": [1, 2]}}}}])
    assert changes[["path", "before", "after"]].values.tolist() == [["o.x", 1, None]]
    assert type(changes.loc[0, "before"]) is int



def test_a_stored_dict_with_more_than_the_absent_key_is_the_users_value_not_absent() -> None:
    # only the exact encoding {"$absent": true} stands for ABSENT (store.dumps writes nothing else for it)
    value = {"$absent": True, "note": "the user's own key"}
    assert frames.decode_absent(value) == value
    record = {**RECORDS[0], "comparisons": [{"case_id": "a", "criterion": "s", "path": "o.w", "expected": value,
                                             "actual": {"$absent": True}, "ok": False}]}
    c = frames.comparisons_frame([record])
    assert c.loc[0, "expected"] == value and c.loc[0, "actual"] is ABSENT


def test_the_verdicts_of_unscored_copies_are_left_out() -> None:
    v = frames.verdicts_frame(RECORDS, unscored={"b"})
    assert v[["case_id", "verdict"]].values.tolist() == [["a", "pass"]]


def test_a_verdict_judged_across_cases_keeps_its_epoch() -> None:
    row = {"case_id": "b", "cluster": "a", "criterion": "mr", "evaluator": "metamorphic", "verdict": "pass",
           "reason": "", "epoch": 2}
    items = frames.verdicts_items([], [row])
    assert items == [("b", "a", "mr", "metamorphic", "pass", "", 2)]  # the frame's row, column by column
    assert frames.verdicts_frame([], [row])["epoch"].tolist() == [2]


def test_concat_of_one_part_has_a_fresh_index() -> None:
    part = frames.verdicts_frame(RECORDS).set_axis([7, 9])
    out = frames.concat(columns.VERDICTS, [frames.verdicts_frame([]), part])
    assert list(out.index) == [0, 1] and out["case_id"].tolist() == ["a", "b"]


# -- the case panel --------------------------------------------------------------------------------------


def test_case_panel(make_suite) -> None:
    cases = [{"id": "h1", "input": {"answer": "<b>x</b>", "writes": [{"path": ["o", "s"], "value": "<i>"}]},
              "initial_state": {"o": {"s": "a"}}, "expected": {"answer": "<b>y</b>", "state": {"o": {"s": "<i>"}}}}]
    folder = make_suite(cases)
    run = op.run(op.load_suite(folder), out=folder / "out")
    panel = run.panel("h1")
    assert panel.input == cases[0]["input"] and panel.status == "completed" and panel.answer == "<b>x</b>"
    assert list(panel.comparisons["path"]) == ["answer", "o.s"] and list(panel.comparisons["ok"]) == [False, True]
    assert list(panel.verdicts["verdict"]) == ["fail", "pass"]
    text = repr(panel)
    assert "o.s" in text and "FAIL" in text
    html = panel._repr_html_()
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html  # user text is escaped
    with pytest.raises(op.OloproofError, match="nope"):
        run.panel("nope")
    page = run._repr_html_()
    assert run.run_id in page and "answer_matches" in page and "state_matches" in page
    assert "cases=1" in repr(run)
