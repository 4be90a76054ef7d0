"""The do-nothing baseline: which criteria an idle agent already passes, and that it never changes the gate.

Suite: 6 cases on the scripted sandbox. Cases c0–c3 expect the agent to write ``acct.n`` (an idle agent leaves
it at 0: ``state_matches`` fails); c4, c5 expect nothing to change (``expected.state`` equals the initial
state: an idle agent passes them). Every case expects the answer ``done`` (an idle agent gives none), and
``other_kept`` checks a path no case touches (an idle agent keeps it). Hand count for the no-op system:
answer_matches 0/6, state_matches 2/6 (c4, c5), other_kept 6/6.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _metamorphic_systems import relabel

import oloproof_nb as op

CASES = [
    {"id": f"c{i}", "input": {"answer": "done", "writes": [{"path": ["acct", "n"], "value": i + 1}]},
     "initial_state": {"acct": {"n": 0}, "other": {"k": i}},
     "expected": {"answer": "done", "state": {"acct": {"n": i + 1}}}}
    for i in range(4)
] + [
    {"id": f"c{i}", "input": {"answer": "done"}, "initial_state": {"acct": {"n": 0}, "other": {"k": i}},
     "expected": {"answer": "done", "state": {"acct": {"n": 0}}}}  # nothing may change
    for i in range(4, 6)
]
EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches"},
              {"type": "state_unchanged", "criterion": "other_kept", "paths": ["other"]}]
RELEASE = {"criteria": {"answer_matches": 0.3, "state_matches": 0.3, "other_kept": 0.3}}


def labels_edited() -> pytest.WarningsRecorder:
    """The gate's warning that the suite's label file now labels a pair otherwise than the run's labels."""
    return pytest.warns(UserWarning, match=r"labels/injected.jsonl differs from the validity labels run")


@pytest.fixture
def desk(make_suite) -> Path:
    return make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)


def test_the_baseline_runs_the_users_sandbox_with_no_agent(desk: Path) -> None:
    idle = op.baseline(desk, progress=False)
    run = idle.run
    assert run.system_version == "oloproof-noop"
    assert run.directory.parent == desk / "baselines"  # apart from runs/: never taken for the latest real run
    assert run.steps.empty and run.cases["answer"].isna().all()
    assert list(run.cases["status"]) == ["completed"] * 6
    states = run.snapshots.set_index("case_id")["state"]
    for case in CASES:  # reset to initial_state, then nothing: the snapshot is the initial state
        assert states[case["id"]] == case["initial_state"]
    rates = idle.rates.set_index("criterion")
    assert list(idle.rates.columns) == ["criterion", "n", "passed", "missing", "rate"]
    assert (rates.loc["answer_matches", "passed"], rates.loc["state_matches", "passed"],
            rates.loc["other_kept", "passed"]) == (0, 2, 6)
    assert rates.loc["state_matches", "rate"] == pytest.approx(2 / 6)


def test_the_baseline_marks_state_matches_exactly_on_cases_that_expect_no_change(desk: Path) -> None:
    v = op.baseline(desk, progress=False).run.verdicts
    passed = set(v.loc[(v["criterion"] == "state_matches") & (v["verdict"] == "pass"), "case_id"])
    assert passed == {"c4", "c5"}


def test_gate_gains_noop_rate_and_passes_when_idle_and_keeps_every_verdict(desk: Path) -> None:
    run = op.run(desk, progress=False)
    idle = op.baseline(desk, progress=False)
    plain = op.gate(run)
    with_idle = op.gate(run, baseline=idle)
    assert list(with_idle.table.columns) == [*plain.table.columns, "noop_rate", "passes_when_idle"]
    assert with_idle.verdict == plain.verdict == "PASS"
    assert with_idle.table[plain.table.columns].equals(plain.table)
    t = with_idle.table.set_index("criterion")
    assert t["noop_rate"].to_dict() == pytest.approx({"answer_matches": 0.0, "state_matches": 2 / 6,
                                                      "other_kept": 1.0})
    assert t["passes_when_idle"].to_dict() == {"answer_matches": False, "state_matches": True, "other_kept": True}
    assert str(with_idle.table["passes_when_idle"].dtype) == "bool"
    assert op.gate(run, baseline=idle.run).table.equals(with_idle.table)  # a baseline Run works as well


def test_a_baseline_with_a_frame_set_in_the_session_is_refused(desk: Path) -> None:
    """The idle agent keeps ``other`` in 6 of 6 cases (by hand), so ``other_kept`` passes when idle at
    0.3, and ``state_matches`` in 2 of 6. A baseline whose ``verdicts`` were set in the session to its failing rows
    gave noop_rate NaN and 0.0 for them and passes_when_idle False, the red flags gone without a word, where the gate
    of an edited run says
    ``edited_frames``. Refused, naming the frame; the baseline loaded again is taken."""
    run = op.run(desk, progress=False)
    idle = op.baseline(desk, progress=False)
    verdicts = idle.run.verdicts
    idle.run.verdicts = verdicts[verdicts["verdict"] != "pass"]
    with pytest.raises(op.OloproofError, match=r"the baseline's run\.verdicts was set in this session, .* not of "
                                               r"the do-nothing run"):
        op.gate(run, baseline=idle)
    again = op.gate(run, baseline=idle.run.directory).table.set_index("criterion")
    assert (again.loc["other_kept", "noop_rate"], bool(again.loc["other_kept", "passes_when_idle"])) == (1.0, True)


def test_a_baseline_folder_is_taken_as_oloproof_gate_takes_it(desk: Path) -> None:
    """`oloproof gate RUN --baseline baselines/<id>` takes the folder, and op.gate takes a run as a
    folder, but op.gate(run, baseline="demo/baselines/<id>") was refused ("got str"). The folder is opened; the
    suite folder given instead names its baselines — before, its runs, whose run the baseline check refuses."""
    run = op.run(desk, progress=False)
    idle = op.baseline(desk, progress=False)
    by_folder = op.gate(run, baseline=str(idle.run.directory)).table.set_index("criterion")
    # the hand count of the module docstring: answer 0/6, state_matches 2/6 (c4, c5), other_kept 6/6
    assert by_folder["noop_rate"].to_dict() == pytest.approx({"answer_matches": 0.0, "state_matches": 2 / 6,
                                                              "other_kept": 1.0})
    assert op.gate(run, baseline=idle.run.directory).table.equals(op.gate(run, baseline=idle).table)
    with pytest.raises(op.OloproofError) as refused:
        op.gate(run, baseline=desk)
    assert str(refused.value) == (f"{desk}: not a run directory (no manifest.json); it is a suite folder: give its "
                                  f"baseline, {str(idle.run.directory)!r}")


def test_passes_when_idle_at_the_threshold_boundary(desk: Path) -> None:
    run = op.run(desk, progress=False)
    idle = op.baseline(desk, progress=False)
    at = op.gate(run, baseline=idle, criteria={"state_matches": 2 / 6}).table.set_index("criterion")
    above = op.gate(run, baseline=idle, criteria={"state_matches": 2 / 6 + 1e-9}).table.set_index("criterion")
    assert bool(at.loc["state_matches", "passes_when_idle"]) is True  # noop_rate == threshold: meets it
    assert bool(above.loc["state_matches", "passes_when_idle"]) is False
    unlisted = op.gate(run, baseline=idle, release={"criteria": {"answer_matches": 0.3}}).table.set_index("criterion")
    assert unlisted.loc["other_kept", "verdict"] == "REPORT_ONLY"
    assert bool(unlisted.loc["other_kept", "passes_when_idle"]) is False  # no threshold: nothing to meet


def test_the_baseline_never_changes_a_blocking_verdict(make_suite) -> None:
    wrong = [{**c, "input": {**c["input"], "answer": "oops"}} for c in CASES]  # the real agent answers wrong
    folder = make_suite(wrong, evaluators=EVALUATORS, release=RELEASE)
    run = op.run(folder, progress=False)
    idle = op.baseline(folder, progress=False)
    plain, with_idle = op.gate(run), op.gate(run, baseline=idle)
    assert plain.verdict == with_idle.verdict == "BLOCK"
    assert with_idle.table[plain.table.columns].equals(plain.table)


def test_the_report_shows_the_baseline(desk: Path, tmp_path: Path) -> None:
    from oloproof_nb._display.report import write_report

    run = op.run(desk, progress=False)
    idle = op.baseline(desk, progress=False)
    md = write_report(run, tmp_path / "report.md", baseline=idle).read_text(encoding="utf-8")
    assert "noop_rate" in md and "passes_when_idle" in md and "Passes when idle: state_matches, other_kept" in md
    plain = write_report(run, tmp_path / "plain.md").read_text(encoding="utf-8")
    assert "noop_rate" not in plain
    # idle rates 0/6 and 2/6 (by hand) stay below 0.3 and 0.5: the report says no criterion passes when idle
    strict = {"criteria": {"answer_matches": 0.3, "state_matches": 0.5}}
    none = write_report(run, tmp_path / "none.md", release=strict, baseline=idle).read_text(encoding="utf-8")
    assert "No gated criterion passes when idle." in none and "Passes when idle:" not in none


def test_the_gate_repr_names_the_idle_criteria(desk: Path) -> None:
    run = op.run(desk, progress=False)
    text = repr(op.gate(run, baseline=op.baseline(desk, progress=False)))
    lines = {line.split()[1]: line for line in text.splitlines()[1:]}
    assert "noop=0.333 (passes when idle)" in lines["state_matches"]
    assert "noop=0.000" in lines["answer_matches"] and "passes when idle" not in lines["answer_matches"]
    assert "noop" not in repr(op.gate(run))


def test_the_baseline_runs_the_epochs_a_reduction_needs(make_suite, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """release.yaml reduces answer_matches with pass^3: the no-op run was made with the suite's 1 epoch and
    refused by the reduction check (op.baseline raised; oloproof run --epochs 3 --baseline exited 2 after
    the run finished). It now runs 3 epochs (the no-op does the same in each), or the run's own epochs."""
    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {"answer_matches": {"threshold": 0.3, "reduce": "pass^3"}, "other_kept": 0.3}}
    suite = make_suite(CASES, evaluators=EVALUATORS, release=release)
    idle = op.baseline(suite, progress=False)
    assert idle.run.epochs == 3 and len(idle.run.cases) == 3 * len(CASES)
    # its repr counts cases and epochs apart: 6 cases run 3 times
    assert repr(idle).startswith(f"Baseline({idle.run.run_id!r}, cases=6, epochs=3, answer_matches=0.000")
    run = op.run(suite, out=tmp_path / "run", epochs=3, progress=False)
    table = op.gate(run, baseline=idle).table.set_index("criterion")
    assert table.loc["answer_matches", "noop_rate"] == 0.0 and table.loc["other_kept", "noop_rate"] == 1.0
    from _reliability_systems import main_in_process

    out = main_in_process(capsys, "run", str(suite), "--epochs", "4", "--baseline", "--quiet", "--out",
                          str(tmp_path / "cli"))
    assert out.returncode in (0, 1), out.stderr
    epochs = sorted(op.load_run(b).epochs for b in (suite / "baselines").iterdir())
    assert epochs == [3, 4]  # op.baseline's 3 (what pass^3 needs), the command line's 4 (the run's epochs)


def test_only_a_do_nothing_run_of_the_same_suite_is_a_baseline(desk: Path, make_suite, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Any run was taken: the real run itself gave its own rates as the idle agent's (every criterion "passes
    when idle"), another suite's baseline blank columns. Now each is one line naming the folder."""
    run = op.run(desk, out=tmp_path / "run", progress=False)
    with pytest.raises(op.OloproofError, match=r"run: not a do-nothing baseline \(its system is .*not oloproof-noop"):
        op.gate(run, baseline=run)
    other = op.baseline(make_suite(CASES, evaluators=EVALUATORS, release=RELEASE, name="other"), progress=False)
    with pytest.raises(op.OloproofError, match="a baseline of suite 'other', not of 'tiny'"):
        op.gate(run, baseline=other)
    from _reliability_systems import main_in_process, one_error_line

    out = main_in_process(capsys, "gate", str(run.directory), "--baseline", str(run.directory))
    assert out.returncode == 2 and "not a do-nothing baseline" in one_error_line(out.stderr)
    assert "noop_rate" in op.gate(run, baseline=op.baseline(desk, progress=False)).table.columns


def test_an_interrupted_baseline_is_refused(desk: Path, tmp_path: Path) -> None:
    """A baseline stopped after c0–c3 (Ctrl-C) was taken whole: its state_matches rate was 0/4 (c0–c3 expect a
    write the idle agent never makes; by hand the whole baseline passes 2/6, c4 and c5), so passes_when_idle
    said False at threshold 0.3 and the red flag was gone. Now it is one line naming the folder."""
    from oloproof_nb._run.baseline import run_baseline

    suite = op.load_suite(desk)
    run = op.run(suite, out=tmp_path / "run", progress=False)

    def stop_after_four(done: int, total: int) -> None:
        if done >= 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_baseline(suite, out=tmp_path / "idle", progress=stop_after_four)
    idle = op.load_run(tmp_path / "idle")
    assert (idle.finished, idle.n_cases, idle.system_version) == (False, 4, "oloproof-noop")
    with pytest.raises(op.OloproofError, match=r"idle: the baseline holds 4 of its 6 case runs \(it did not finish"):
        op.gate(run, baseline=idle)
    whole = op.gate(run, baseline=op.baseline(desk, progress=False)).table.set_index("criterion")
    assert whole.loc["state_matches", "noop_rate"] == pytest.approx(2 / 6)
    assert bool(whole.loc["state_matches", "passes_when_idle"]) is True


def _stopped_run(suite: op.Suite, out: Path, after: int) -> op.Run:
    """The run of ``suite`` into ``out`` as stored once a Ctrl-C stopped it after ``after`` case runs."""
    def stop(done: int, total: int) -> None:
        if done >= after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(suite, out=out, progress=stop)
    return op.load_run(out)


def test_a_run_that_did_not_finish_takes_a_whole_baseline(desk: Path, tmp_path: Path) -> None:
    """A run stopped after c0–c2 holds part of the baseline's cases: the gate is BLOCK (unfinished) with the idle
    columns, not an error saying the suite changed (the report of a partial run crashed on it)."""
    partial = _stopped_run(op.load_suite(desk), tmp_path / "run", after=3)
    g = op.gate(partial, baseline=op.baseline(desk, progress=False))
    assert (g.verdict, g.reason.split(":")[0]) == ("BLOCK", "unfinished") and "noop_rate" in g.table.columns


def test_a_baseline_of_another_version_of_the_suite_is_refused(desk: Path, make_suite, tmp_path: Path) -> None:
    """The same suite name with the cases edited since the baseline: c4 and c5 now expect the write too. The old
    baseline's state_matches rate 2/6 (its c4, c5 expected no change) was given as the idle agent's on cases
    where the idle agent passes none (0/6 by hand), and passes_when_idle said True at 0.3."""
    old_idle = op.baseline(desk, progress=False)
    edited = [{**c, "input": {**c["input"], "writes": [{"path": ["acct", "n"], "value": i + 1}]},
               "expected": {"answer": "done", "state": {"acct": {"n": i + 1}}}} for i, c in enumerate(CASES)]
    new = make_suite(edited, evaluators=EVALUATORS, release=RELEASE)
    run = op.run(new, out=tmp_path / "run", progress=False)
    assert op.load_suite(new).name == op.load_suite(desk).name == "tiny"
    with pytest.raises(op.OloproofError, match=r"a baseline of other cases than run .*\(2 case\(s\) added, "
                                               r"removed or edited, first 'c4'\): another version of suite 'tiny'"):
        op.gate(run, baseline=old_idle)
    fresh = op.gate(run, baseline=op.baseline(new, progress=False)).table.set_index("criterion")
    assert fresh.loc["state_matches", "noop_rate"] == 0.0
    assert bool(fresh.loc["state_matches", "passes_when_idle"]) is False


def test_a_baseline_judged_by_other_checks_is_refused(desk: Path, make_suite, tmp_path: Path) -> None:
    """The same cases, but the run's suite watches `other` only at `other.k` while the baseline's watched all of
    `other`: the baseline's rates are another check's (here both pass, but a loosened check would pass idle where
    the baseline's did not, and passes_when_idle would say False). The same suite's baseline is accepted."""
    loosened = [*EVALUATORS[:2], {**EVALUATORS[2], "paths": ["other.k"]}]
    other = make_suite(CASES, evaluators=loosened, release=RELEASE)
    run = op.run(other, out=tmp_path / "run", progress=False)
    with pytest.raises(op.OloproofError, match=r"a baseline that judges other_kept with another check than run "
                                               r".* \(configured differently\)"):
        op.gate(run, baseline=op.baseline(desk, progress=False))
    assert "noop_rate" in op.gate(run, baseline=op.baseline(other, progress=False)).table.columns


@pytest.mark.parametrize("evaluators", [
    [*EVALUATORS, {"type": "state_unchanged", "criterion": "acct_kept", "paths": ["other"]}],  # a check added
    [*EVALUATORS[:2], {**EVALUATORS[2], "criterion": "acct_kept"}],  # other_kept renamed
], ids=["added", "renamed"])
def test_a_baseline_that_does_not_judge_a_criterion_of_the_run_is_refused(desk: Path, make_suite, tmp_path: Path,
                                                                          evaluators: list[dict[str, Any]],
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The same cases, but the run's suite judges ``acct_kept`` (it watches ``other``, which no case touches: the
    idle agent keeps it in 6 of 6 cases by hand) and the baseline was made before it was added or named so. The
    baseline was taken: ``noop_rate`` NaN and ``passes_when_idle`` False, the red flag gone without a word. Now it
    is one line naming the folder and the criterion (exit 2 from the command line); a baseline of the run's suite
    gives 1.0."""
    old_idle = op.baseline(desk, progress=False)
    new = make_suite(CASES, evaluators=evaluators, release={"criteria": {"acct_kept": 0.3}})
    run = op.run(new, out=tmp_path / "run", progress=False)
    said = (f"{old_idle.run.directory}: a baseline that does not judge acct_kept (1 criterion(s) of run {run.run_id} "
            "added or renamed since it was made), so its noop_rate would be blank and never flag a check the idle "
            "agent passes; make one with op.baseline(suite) on the suite of this run")
    with pytest.raises(op.OloproofError) as refused:
        op.gate(run, baseline=old_idle)
    assert str(refused.value) == said
    from _reliability_systems import main_in_process, one_error_line

    out = main_in_process(capsys, "gate", str(run.directory), "--baseline", str(old_idle.run.directory))
    assert out.returncode == 2 and one_error_line(out.stderr) == f"oloproof: error: {said}"
    fresh = op.gate(run, baseline=op.baseline(new, progress=False)).table.set_index("criterion")
    assert fresh.loc["acct_kept", "noop_rate"] == 1.0
    assert bool(fresh.loc["acct_kept", "passes_when_idle"]) is True


def test_the_baseline_observes_artifacts_through_the_users_sandbox(tmp_path: Path) -> None:
    """The no-op system took only reset and snapshot from the user's system, so every outcome row
    of a baseline read "nothing can observe artifact": an outcome check an idle agent passes (a report from an
    earlier run counts, require_fresh: false) showed noop 0.000 and was not flagged. ``observe`` reads the
    sandbox, not the agent: it is the sandbox's own now."""
    import json

    from oloproof_nb.examples import init_example

    folder = init_example("false-success", tmp_path / "fs")
    lines = [json.loads(line) for line in (folder / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    for case in lines:
        artifact = case["outcome"]["artifact_id"]
        case["initial_state"]["earlier_reports"] = {artifact: {"period": case["input"]["period"],
                                                               "written_at": "2026-01-01T00:00:00Z"}}
        case["outcome"] = {"artifact_id": artifact, "require_fresh": False}
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines), encoding="utf-8")
    idle = op.baseline(folder, progress=False)
    rows = idle.run.verdicts[idle.run.verdicts["criterion"] == "outcome_verified"]
    assert len(rows) == len(lines) and set(rows["verdict"]) == {"pass"}, rows["reason"].tolist()
    assert not rows["reason"].str.contains("nothing can observe").any()
    assert idle.rates.set_index("criterion").loc["outcome_verified", "rate"] == 1.0


def test_a_do_nothing_run_is_no_release_evidence(desk: Path) -> None:
    """``oloproof gate baselines/<id>`` passed the no-op run (exit 0) and ``op.load_runs`` pooled it
    with the agent's run, whose INSUFFICIENT_EVIDENCE became PASS on the idle rows. A no-op run is BLOCKed with
    its reason, and pooling it with the agent's runs is refused."""
    idle = op.baseline(desk, progress=False).run
    release = {"criteria": {"other_kept": 0.3}}  # the idle agent keeps `other` in every case
    g = op.gate(idle, release=release)
    assert g.table.set_index("criterion").loc["other_kept", "verdict"] == "PASS"  # the row says what it shows
    assert g.verdict == "BLOCK" and g.reason.startswith(f"noop_baseline: run {idle.run_id} is the do-nothing baseline")
    real = op.run(op.load_suite(desk), progress=False)
    assert op.gate(real, release=release).verdict == "PASS"
    with pytest.raises(op.OloproofError, match=r"is the do-nothing baseline \(system oloproof-noop\), not the agent"):
        op.load_runs([real.directory, idle.directory])


def test_a_baseline_made_with_labels_that_leave_out_other_copies_is_refused(example_suite: Path, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Gap left open: a baseline made with other validity labels was accepted silently. The run leaves out
    ord-018~injected (the example's labels); ord-001~injected is labeled invalid before the baseline, which then
    leaves out both (22 of 24 valid, still checked at 0.85). By hand its answer_matches rows are 46 of the run's 47
    cases: the idle agent's rate over other rows. Refused, as a baseline of other cases or checks is; labels that
    differ but leave out the same copies (no transform checked in either) give the same rows and are accepted."""
    from _reliability_systems import main_in_process, one_error_line

    label_file = example_suite / "labels" / "injected.jsonl"
    run = op.run(op.load_suite(example_suite), out=tmp_path / "run", progress=False)
    relabel(label_file, {"ord-001~injected": False})
    idle = op.baseline(example_suite, out=tmp_path / "idle", progress=False)
    assert int(idle.rates.set_index("criterion").loc["answer_matches", "n"]) == 46
    message = (r"idle: a baseline made with other validity labels than run .* \(transform injected: ord-001~injected "
               r"is labeled otherwise\), so its rates count other copies \(1 scored in one of the two only, first "
               r"'ord-001~injected'\); make the baseline with the labels and suite the run was made with")
    with labels_edited(), pytest.raises(op.OloproofError, match=message):
        op.gate(run, baseline=idle)  # the run's own labels decide, and the file as it is now is named
    out = main_in_process(capsys, "gate", str(run.directory), "--baseline", str(idle.run.directory))
    assert out.returncode == 2 and "a baseline made with other validity labels" in one_error_line(out.stderr)
    relabel(label_file, {"ord-001~injected": True})  # the run's labels again: accepted
    same = op.baseline(example_suite, out=tmp_path / "same", progress=False)
    assert "noop_rate" in op.gate(run, baseline=same).table.columns
    # neither checked (ord-024~injected, then ord-023~injected unlabeled too): every copy scored in both
    relabel(label_file, {"ord-024~injected": None})
    unchecked = op.run(op.load_suite(example_suite), out=tmp_path / "unchecked", progress=False)
    relabel(label_file, {"ord-023~injected": None})
    fewer = op.baseline(example_suite, out=tmp_path / "fewer", progress=False)
    with labels_edited():  # since the run: its own labels decide, and the file is named
        rates = op.gate(unchecked, baseline=fewer).table.set_index("criterion")
    assert int(fewer.rates.set_index("criterion").loc["answer_matches", "n"]) == 48
    assert rates.loc["answer_matches", "noop_rate"] == fewer.rates.set_index("criterion").loc["answer_matches", "rate"]


# --------------------------------------------------------------------------- edges found by mutation testing


def _stand_in(verdicts: dict[str, list[str]]) -> object:
    """What ``baseline_rates`` reads of a run: its verdict rows and its criteria (one with no row stays listed)."""
    rows = [(criterion, verdict) for criterion, column in verdicts.items() for verdict in column]
    return SimpleNamespace(criteria=list(verdicts), verdicts=pd.DataFrame(rows, columns=["criterion", "verdict"]))


def test_the_idle_rate_counts_missing_rows_as_not_passed_and_no_row_as_no_rate() -> None:
    """By hand: 2 pass, 1 fail and 1 missing is 2/4 (missing is not passed, as in the gate); a criterion with no
    row has no rate (NaN), and one the baseline does not judge has no noop_rate, not 0."""
    from oloproof_nb._analysis.baseline import baseline_rates, with_idle_columns

    idle = _stand_in({"kept": ["pass", "pass", "fail", "missing"], "silent": []})
    rates = baseline_rates(idle).set_index("criterion")  # type: ignore[arg-type]
    assert rates.loc["kept", ["n", "passed", "missing"]].tolist() == [4, 2, 1]
    assert rates.loc["kept", "rate"] == 0.5
    assert (int(rates.loc["silent", "n"]), bool(np.isnan(rates.loc["silent", "rate"]))) == (0, True)
    table = pd.DataFrame({"criterion": ["kept", "silent", "unjudged"], "threshold": [0.5, 0.0, 0.0]})
    out = with_idle_columns(table, idle)  # type: ignore[arg-type]
    assert out["noop_rate"].tolist()[0] == 0.5 and np.isnan(out["noop_rate"].tolist()[1:]).all()
    assert out["passes_when_idle"].tolist() == [True, False, False]  # threshold 0 is not met without a rate


def test_a_baseline_whose_records_are_lost_or_that_never_finished_is_refused(desk: Path, tmp_path: Path) -> None:
    """Either gives the rates of the case runs it holds: a finished baseline that lost one record (5 of 6), and
    one that holds all 6 but was stopped before it wrote that it finished."""
    import json

    run = op.run(desk, out=tmp_path / "run", progress=False)
    lost = op.baseline(desk, out=tmp_path / "lost", progress=False).run.directory
    journal = lost / "cases.jsonl"
    journal.write_text("".join(journal.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    with pytest.raises(op.OloproofError, match=r"lost: the baseline holds 5 of its 6 case runs"):
        op.gate(run, baseline=op.load_run(lost))
    open_ended = op.baseline(desk, out=tmp_path / "open", progress=False).run.directory
    manifest = json.loads((open_ended / "manifest.json").read_text(encoding="utf-8"))
    manifest.pop("finished_at")
    (open_ended / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    idle = op.load_run(open_ended)
    assert (idle.finished, idle.n_cases) == (False, 6)
    with pytest.raises(op.OloproofError, match=r"open: the baseline holds its 6 case runs but did not finish \(its "
                                                 r"manifest records no finished_at"):
        op.gate(run, baseline=idle)


def test_a_baseline_whose_sandbox_failed_on_some_cases_is_refused(make_suite, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The sandbox's reset raised on c4 and c5 while the baseline ran (a database down): their rows
    are missing, counted as not passed, so the idle state_matches read 0/6 (by hand the whole baseline passes 2/6,
    c4 and c5), passes_when_idle False at threshold 0.3, and `oloproof gate --baseline` said PASS, exit 0, with the
    red flag gone. Now it is one line naming the folder, the count and the first case's error."""
    from conftest import SCRIPTED_SYSTEM

    flaky = SCRIPTED_SYSTEM.replace("    def reset(self, state):\n        self.state = state", (
        "    def reset(self, state):\n"
        "        import pathlib\n"
        "        if pathlib.Path(__file__).with_name('down').exists() and state['other']['k'] >= 4:\n"
        "            raise ConnectionError('sandbox database unavailable')\n"
        "        self.state = state"))
    assert flaky != SCRIPTED_SYSTEM
    desk = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE, system_code=flaky)
    run = op.run(desk, out=tmp_path / "run", progress=False)
    (desk / "down").touch()
    failed = op.baseline(desk, out=tmp_path / "failed", progress=False)
    assert failed.run.cases.set_index("case_id")["status"].to_dict() == {
        "c0": "completed", "c1": "completed", "c2": "completed", "c3": "completed", "c4": "error", "c5": "error"}
    with pytest.raises(op.OloproofError, match=r"failed: 2 of the baseline's 6 case runs ended in error \(the first, "
                                               r"case 'c4': reset\(\) raised ConnectionError: sandbox database "
                                               r"unavailable\)"):
        op.gate(run, baseline=failed)
    from _reliability_systems import main_in_process, one_error_line

    out = main_in_process(capsys, "gate", str(run.directory), "--baseline", str(failed.run.directory))
    assert out.returncode == 2 and "2 of the baseline's 6 case runs ended in error" in one_error_line(out.stderr)
    (desk / "down").unlink()
    whole = op.gate(run, baseline=op.baseline(desk, progress=False)).table.set_index("criterion")
    assert whole.loc["state_matches", "noop_rate"] == pytest.approx(2 / 6)
    assert bool(whole.loc["state_matches", "passes_when_idle"]) is True


def test_a_baseline_whose_sandbox_timed_out_on_one_case_is_refused(make_suite, tmp_path: Path) -> None:
    """A timeout ends a case run as an error does (its rows missing, counted as not passed), and
    one such case run is enough: the sandbox's reset of c5 outlasts ``case_timeout_s`` while the baseline runs (by
    hand, 1 of the 6 case runs, status ``timeout``), and the baseline is refused, naming it."""
    from conftest import SCRIPTED_SYSTEM

    slow = SCRIPTED_SYSTEM.replace("    def reset(self, state):\n        self.state = state", (
        "    def reset(self, state):\n"
        "        import pathlib, time\n"
        "        if pathlib.Path(__file__).with_name('slow').exists() and state['other']['k'] == 5:\n"
        "            time.sleep(5)\n"
        "        self.state = state"))
    assert slow != SCRIPTED_SYSTEM
    desk = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE, system_code=slow, case_timeout_s=0.2)
    run = op.run(desk, out=tmp_path / "run", progress=False)
    (desk / "slow").touch()
    timed = op.baseline(desk, out=tmp_path / "timed", progress=False)
    assert timed.run.cases.set_index("case_id")["status"].to_dict() == {
        "c0": "completed", "c1": "completed", "c2": "completed", "c3": "completed", "c4": "completed",
        "c5": "timeout"}
    with pytest.raises(op.OloproofError, match=r"timed: 1 of the baseline's 6 case runs ended in timeout \(the "
                                               r"first, case 'c5'"):
        op.gate(run, baseline=timed)


def test_a_run_that_did_not_finish_is_refused_a_baseline_of_other_cases(desk: Path, make_suite,
                                                                      tmp_path: Path) -> None:
    """The cases of an unfinished run need only be among the baseline's, but they must be: c0 edited since the
    baseline (it now expects 99) is one case the baseline never ran."""
    old_idle = op.baseline(desk, progress=False)
    edited = [{**CASES[0], "expected": {"answer": "done", "state": {"acct": {"n": 99}}}}, *CASES[1:]]
    suite = op.load_suite(make_suite(edited, evaluators=EVALUATORS, release=RELEASE))
    partial = _stopped_run(suite, tmp_path / "run", after=3)
    assert "c0" in set(partial.cases["case_id"])
    with pytest.raises(op.OloproofError, match=r"a baseline of other cases than run .*\(1 case\(s\) added, removed "
                                               r"or edited, first 'c0'\)"):
        op.gate(partial, baseline=old_idle)


def test_a_baseline_that_scores_copies_the_run_left_out_is_refused(example_suite: Path, tmp_path: Path) -> None:
    """The other direction of the labels test above: the run is made with ord-001~injected labeled invalid (it
    leaves out ord-001~injected and ord-018~injected), the baseline with the example's labels (ord-018~injected
    only). By hand the baseline's answer_matches rows are 47, the run's 46."""
    label_file = example_suite / "labels" / "injected.jsonl"
    relabel(label_file, {"ord-001~injected": False})
    run = op.run(op.load_suite(example_suite), out=tmp_path / "run", progress=False)
    relabel(label_file, {"ord-001~injected": True})
    idle = op.baseline(example_suite, out=tmp_path / "idle", progress=False)
    assert int(idle.rates.set_index("criterion").loc["answer_matches", "n"]) == 47
    with labels_edited(), pytest.raises(op.OloproofError, match=r"so its rates count other copies \(1 scored in one "
                                                             r"of the two only, first 'ord-001~injected'\)"):
        op.gate(run, baseline=idle)


def test_a_baseline_whose_suite_checks_the_labels_against_another_minimum_is_refused(example_suite: Path,
                                                                                   tmp_path: Path) -> None:
    """A bug: the same labels, but the baseline's suite asks 0.99 of transform
    ``injected`` (23 of 24 valid is below it: not checked, no copy left out) where the run's asked 0.85 (checked:
    ord-018~injected left out). By hand the baseline's answer_matches rows are 48, the run's 47: the idle rate of
    other rows, and it was accepted because only a difference in the labels themselves was looked for."""
    run = op.run(op.load_suite(example_suite), out=tmp_path / "run", progress=False)
    config = example_suite / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("minimum_validity: 0.85", "minimum_validity: 0.99"),
                      encoding="utf-8")
    idle = op.baseline(example_suite, out=tmp_path / "idle", progress=False)
    assert int(idle.rates.set_index("criterion").loc["answer_matches", "n"]) == 48
    message = (r"idle: a baseline whose suite checks the validity labels otherwise than run .*'s \(transform injected: "
               r"minimum_validity 0.99, not 0.85\), so its rates count other copies \(1 scored in one of the two "
               r"only, first 'ord-018~injected'\)")
    with pytest.raises(op.OloproofError, match=message):
        op.gate(run, baseline=idle)


def test_the_baseline_progress_bar_is_shown_as_asked_and_always_closed(desk: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal, progress=False shows no bar; progress=True opens one and closes it once the baseline is
    made, as op.run does."""
    from oloproof_nb._display import baseline as face

    opened: list[str] = []
    closed: list[str] = []

    def bar(title: str) -> tuple[object, object]:
        opened.append(title)
        return (lambda done, total: None), (lambda: closed.append(title))

    monkeypatch.setattr(face, "stderr_is_tty", lambda: True)
    monkeypatch.setattr(face, "progress_bar", bar)
    op.baseline(desk, out=desk / "baselines" / "quiet", progress=False)
    assert opened == [] and closed == []
    op.baseline(desk, out=desk / "baselines" / "shown", progress=True)
    assert len(opened) == 1 and closed == opened


def test_the_baseline_uses_the_workers_given(desk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # op.baseline(workers=2) runs the no-op system on 2 sandboxes, as op.run(workers=2) does
    from oloproof_nb._display import baseline as face

    given: list[object] = []
    real = face.run_baseline

    def spy(suite: op.Suite, **kwargs: object) -> Path:
        given.append(kwargs["workers"])
        return real(suite, **kwargs)

    monkeypatch.setattr(face, "run_baseline", spy)
    op.baseline(desk, workers=2, progress=False)
    assert given == [2]


def test_the_no_op_system_lends_the_sandbox_but_never_replay() -> None:
    """reset, snapshot and observe are the sandbox's own; replay does not exist even when the user's system has one
    (the no-op made no call to replay)."""
    from oloproof_nb._run.baseline import NoOpSystem

    class Box:
        def reset(self, state: dict) -> None: ...
        def snapshot(self) -> dict: return {}
        def observe(self, artifact_id: str) -> None: ...
        def replay(self, *args: object) -> None: ...

    box = Box()
    idle = NoOpSystem(box)
    assert (idle.reset, idle.snapshot, idle.observe) == (box.reset, box.snapshot, box.observe)
    assert not hasattr(idle, "replay")


def test_two_do_nothing_runs_pool_as_one(desk: Path) -> None:
    """Pooling refuses a do-nothing run beside the agent's (its passes would raise the agent's rate); two of them hold
    no agent to flatter, so they pool: 6 cases twice, 12 case runs, the no-op's version."""
    first = op.baseline(desk, out=desk / "baselines" / "one", progress=False).run
    second = op.baseline(desk, out=desk / "baselines" / "two", progress=False).run
    pooled = op.load_runs([first.directory, second.directory])
    assert (len(pooled.cases), pooled.epochs, pooled.system_version) == (12, 2, "oloproof-noop")


def test_the_idle_rate_of_one_row_and_the_missing_rows_apart_from_the_failed_ones() -> None:
    """By hand: a criterion judged on one row that passed has rate 1/1 (not NaN: one row is a rate); 1 pass,
    2 fails and 1 missing count 1 missing (not the 2 fails); the repr shows a criterion without rows as n/a."""
    from oloproof_nb._analysis.baseline import Baseline, baseline_rates

    idle = _stand_in({"one": ["pass"], "mixed": ["pass", "fail", "fail", "missing"], "silent": []})
    rates = baseline_rates(idle).set_index("criterion")  # type: ignore[arg-type]
    assert rates.loc["one", ["n", "passed", "missing"]].tolist() == [1, 1, 0] and rates.loc["one", "rate"] == 1.0
    assert rates.loc["mixed", ["n", "passed", "missing"]].tolist() == [4, 1, 1] and rates.loc["mixed", "rate"] == 0.25
    idle.run_id, idle.n_cases, idle.epochs = "idle-1", 4, 1
    assert repr(Baseline(idle)) == "Baseline('idle-1', cases=4, one=1.000, mixed=0.250, silent=n/a)"  # type: ignore[arg-type]


def test_idle_columns_follow_the_criterion_not_the_row_label() -> None:
    """A gate table whose rows are labelled 5, 7, 9 (sorted or filtered by the caller): each row gets its own
    criterion's idle rate (hand count: 2/4 and none), three rows, not six half-empty ones."""
    from oloproof_nb._analysis.baseline import with_idle_columns

    idle = _stand_in({"kept": ["pass", "pass", "fail", "missing"], "silent": []})
    table = pd.DataFrame({"criterion": ["silent", "kept", "unjudged"], "threshold": [0.0, 0.5, 0.0]}, index=[5, 7, 9])
    out = with_idle_columns(table, idle)  # type: ignore[arg-type]
    assert out["criterion"].tolist() == ["silent", "kept", "unjudged"]
    assert np.isnan(out["noop_rate"].tolist()[0]) and out["noop_rate"].tolist()[1] == 0.5
    assert out["passes_when_idle"].tolist() == [False, True, False]


def test_a_baseline_of_another_type_is_refused_in_one_line() -> None:
    """Neither op.baseline(suite), a Run nor a folder: an OloproofError naming what to give, not an AttributeError."""
    from oloproof_nb._analysis.baseline import check_baseline
    from oloproof_nb.errors import OloproofError

    with pytest.raises(OloproofError, match=r"^baseline: give op.baseline\(suite\), its run or its folder, got int$"):
        check_baseline(object(), 42)  # type: ignore[arg-type]


def test_an_idle_rate_that_is_not_whole_never_shows_as_one() -> None:
    """The repr wrote rates to three decimals, so an idle agent passing 2,499 of 2,500 rows showed
    ``1.000`` (every row), the case that most needs reading right. It shows 0.9996 (a hand count)."""
    from oloproof_nb._analysis.baseline import Baseline

    idle = _stand_in({"almost": ["pass"] * 2499 + ["fail"], "all": ["pass"] * 3})
    idle.run_id, idle.n_cases, idle.epochs = "idle-2", 2500, 1
    assert repr(Baseline(idle)) == "Baseline('idle-2', cases=2500, almost=0.9996, all=1.000)"  # type: ignore[arg-type]
