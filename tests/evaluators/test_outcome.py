"""The ``outcome_contract`` evaluator, validators in oloproof.yaml, case contracts, and the false-success example."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, ClassVar, Literal

import pandas as pd
import pytest
from _outcome_systems import (
    CONTENT_SENTINEL,
    LOCATOR_SENTINEL,
    OUTCOME_SYSTEM,
    case,
    grep_tree,
    locator,
    read_records,
    write_checks,
)

import oloproof_nb as op
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb._core.case import case_digest, case_from_mapping
from oloproof_nb._core.trajectory import Trajectory
from oloproof_nb.errors import CaseFileError, ConfigError
from oloproof_nb.evaluators import EVALUATORS, CaseContext, Evaluation, Evaluator, OutcomeContractEvaluator, register
from oloproof_nb.examples import init_example

# sha256sum of the "good" artifact's bytes, computed outside the toolkit:
#   printf '{"marker": "CONTENT-SENTINEL-4f7z", "total": 3}\n' | sha256sum
GOOD_SHA256 = "f5976e09954710ebf51876f454492d81c2be3b02eadcbbeccba5b78ac52a3278"
# openssl dgst -sha256 -hmac "hmac-KEY-never-stored-55" of the same bytes
HMAC_KEY = "hmac-KEY-never-stored-55"
GOOD_HMAC = "89a38f9e859ebd8b8e0e4e902b4f114228925bff17ef142f1d1d57daf1d05911"
# The false-success example, counted by hand from its cases.jsonl and report_writer.py.
EXAMPLE_STATUS = {
    "fs-01": "verified",
    "fs-02": "verified",
    "fs-03": "missing",
    "fs-04": "stale",
    "fs-05": "hash_mismatch",
    "fs-06": "validator_failed",
}
OUTCOME_EVALUATORS = [{"type": "answer_matches"}, {"type": "outcome_contract"}]


@pytest.fixture
def outcome_suite(make_suite: Callable[..., Path]) -> Callable[..., Path]:
    """A suite on the outcome test systems, with the validators of ``_outcome_systems.CHECKS``."""

    def make(cases: list[dict[str, Any]], *, system: str = "sysmod:Observing",
             validators: dict[str, str] | None = None, evaluators: list[dict[str, Any]] | None = None,
             **config: Any) -> Path:
        if validators is None:
            validators = {"schema": "checks:schema", "other": "checks:other", "crash": "checks:crash"}
        root = make_suite(cases, system=system, system_code=OUTCOME_SYSTEM,
                          evaluators=OUTCOME_EVALUATORS if evaluators is None else evaluators,
                          validators=validators, **config)
        write_checks(root)
        return root

    return make


def statuses(run: op.Run) -> dict[str, str]:
    return dict(zip(run.receipts["case_id"], run.receipts["status"], strict=True))


def outcome_verdicts(run: op.Run) -> pd.DataFrame:
    return run.verdicts[run.verdicts["criterion"] == "outcome_verified"]


# ----------------------------------------------------------------------------- the example


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    root = init_example("false-success", tmp_path_factory.mktemp("fs") / "false-success")
    return op.run(op.load_suite(root), progress=False)


def test_example_every_run_completes_and_claims_done(example_run: op.Run) -> None:
    cases = example_run.cases.set_index("case_id")
    assert cases["status"].to_dict() == dict.fromkeys(EXAMPLE_STATUS, "completed")
    claims = example_run.verdicts[example_run.verdicts["criterion"] == "answer_matches"]
    assert (claims["verdict"] == "pass").sum() == 6


def test_example_contract_verifies_two_and_names_four_failures(example_run: op.Run) -> None:
    assert statuses(example_run) == EXAMPLE_STATUS
    verdicts = outcome_verdicts(example_run).set_index("case_id")["verdict"].to_dict()
    assert verdicts == {cid: "pass" if s == "verified" else "fail" for cid, s in EXAMPLE_STATUS.items()}
    reasons = outcome_verdicts(example_run).set_index("case_id")["reason"]
    for cid, status in EXAMPLE_STATUS.items():
        if status != "verified":
            assert reasons[cid].startswith(f"{status}:"), reasons[cid]


def test_a_case_outcome_without_an_outcome_contract_check_is_never_judged(tmp_path: Path) -> None:
    """README section 5: "A case's outcome is judged only by an outcome_contract evaluator: in a
    suite without one it gets no receipt and no verdict, and nothing is counted for it." The example without its
    outcome_contract line: six cases that each promise a report, four of them defective, and the run holds no
    receipt, no outcome_verified row, and the gate's table has only answer_matches (6 of 6 pass). ``load_suite``
    says so: the six promises, the first case's line, and what to add."""
    root = init_example("false-success", tmp_path / "fs")
    config = root / "oloproof.yaml"
    text = config.read_text(encoding="utf-8")
    assert text.count("  - {type: outcome_contract}") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # with the evaluator, or without outcomes (the refund desk), nothing to say
        op.load_suite(root)
        op.load_suite(init_example("stateful-agent", tmp_path / "desk"))
    config.write_text(text.replace("  - {type: outcome_contract}", ""), encoding="utf-8")
    (root / "release.yaml").write_text("criteria: {answer_matches: 0.1}\n", encoding="utf-8")  # no outcome_verified
    with pytest.warns(UserWarning) as caught:
        suite = op.load_suite(root)
    [message] = [str(w.message) for w in caught]
    assert message.startswith(f"{root / 'cases.jsonl'}: 6 case(s) give an outcome (first: line 1, case 'fs-01') but "
                              f"{root / 'oloproof.yaml'} has no outcome_contract evaluator"), message
    assert "add '- {type: outcome_contract}' under evaluators" in message
    assert sum(c.get("outcome") is not None for c in map(json.loads, (root / "cases.jsonl").read_text(
        encoding="utf-8").splitlines())) == 6
    run = op.run(suite, progress=False)
    assert run.receipts.empty
    assert set(run.verdicts["criterion"]) == {"answer_matches"}
    table = op.gate(run).table
    assert table["criterion"].tolist() == ["answer_matches"] and table["passed"].tolist() == [6]


RESET_WRITER = '''
from pathlib import Path

OUT = Path(__file__).parent / "out"


class Desk:
    """Its reset restores the reports of initial_state["files"] as a fixture copy would: written now, so newer
    than the case start. Its agent writes input["write"] (if any) to its report."""

    def reset(self, state):
        OUT.mkdir(exist_ok=True)
        for old in OUT.iterdir():
            old.unlink()
        for name, text in state.get("files", {}).items():
            (OUT / name).write_text(text, encoding="utf-8")
        self.state = state

    def snapshot(self):
        return {"files": sorted(p.name for p in OUT.iterdir())}

    def run(self, input):
        if input.get("write") is not None:
            (OUT / input["report"]).write_text(input["write"], encoding="utf-8")
        return {"steps": [], "answer": "done", "status": "completed"}
'''


def test_a_file_the_reset_writes_is_stale_unless_the_case_writes_it_again(make_suite: Any, tmp_path: Path) -> None:
    """A reset that restores an earlier report (a plain copy: written now) made it newer than the case start:
    verified, though the agent wrote nothing. The file at the locator is now noted right after the reset;
    unchanged after the case, it is stale. Rewritten by the agent, or written new, it is verified."""
    def case(cid: str, earlier: str | None, write: str | None) -> dict[str, Any]:
        return {"id": cid, "input": {"report": f"{cid}.txt", "write": write},
                "initial_state": {"files": {f"{cid}.txt": earlier} if earlier is not None else {}},
                "expected": {"answer": "done"}, "outcome": {"artifact_id": cid, "locator": f"out/{cid}.txt"}}

    cases = [case("kept", "Q1 report\n", None), case("rewritten", "Q1 report\n", "Q2 report, new\n"),
             case("new", None, "Q2 report\n")]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract"}], system="sysmod:Desk",
                      system_code=RESET_WRITER)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    assert statuses(run) == {"kept": "stale", "rewritten": "verified", "new": "verified"}
    reason = run.receipts.set_index("case_id").loc["kept", "reason"]
    assert reason == "stale: unchanged since the sandbox was reset: the file the reset left, not one this case wrote"
    assert run.receipts.set_index("case_id").loc["kept", "modified_at"] > run.cases.set_index("case_id").loc[
        "kept", "started_at"]  # newer than the case start: only the note taken after the reset tells


def test_example_summary_hand_count(example_run: op.Run) -> None:
    summary = op.outcome_summary(example_run.receipts).iloc[0]
    assert (summary["expected"], summary["verified"], summary["failed"], summary["waiting"],
            summary["unverified"]) == (6, 2, 4, 0, 0)
    assert summary["verified_share"] == pytest.approx(2 / 6)
    assert summary["check_coverage"] == 1.0  # four contracts name report_schema, two pin their bytes (sha256)


def test_example_evidence_digests_and_sources(example_run: op.Run) -> None:
    r = example_run.receipts.set_index("case_id")
    # sha256sum of the exact ledger bytes finance expects (two-decimal amounts), computed by hand
    assert r.loc["fs-02", "observed_digest"] == "b324fb2629fbf58121e0eac9bd45b5333c6d9d8bbb6fa46f9da638a98e08ab1c"
    assert r.loc["fs-05", "expected_sha256"] == "342e0b9a6312a838b0d12280fa46c4a0e0c7d2d0b7faf3fbafdfb2db66aa97ad"
    assert r.loc["fs-05", "observed_digest"] != r.loc["fs-05", "expected_sha256"]
    assert r.loc["fs-04", "validator_exit_code"] == 0  # the old draft passes its schema: stale still wins
    assert r.loc["fs-06", "validator_exit_code"] == 1
    assert pd.isna(r.loc["fs-03", "evidence_source"])
    assert set(r.drop(index="fs-03")["evidence_source"]) == {"system_observe"}
    assert r.loc["fs-04", "modified_at"] == pd.Timestamp("2026-04-01T09:00:00Z")


def test_example_run_started_at_is_case_start_minus_slack(example_run: op.Run) -> None:
    r = example_run.receipts.set_index("case_id")
    assert len(example_run.records) == len(r) == len(EXAMPLE_STATUS)  # one receipt per case run, each checked below
    for record in example_run.records:
        started = pd.Timestamp(record["started_at"])
        assert r.loc[record["case"]["id"], "run_started_at"] == started - pd.Timedelta(milliseconds=10)


def test_example_run_directory_holds_no_path_or_content(example_run: op.Run) -> None:
    # a line only the ledger artifact of fs-05 contains, and the prefix of the system's private folder
    assert grep_tree(example_run.directory, "2026-05-06,south,310.4") == []
    assert grep_tree(example_run.directory, "oloproof-report-writer-") == []
    # the search does read the run's files: the case id of that case is there (an empty or unread folder passed)
    found = {Path(p).name for p in grep_tree(example_run.directory, "fs-05")}
    assert "cases.jsonl" in found


def test_example_with_two_workers_gives_the_same_receipts(example_run: op.Run, tmp_path: Path) -> None:
    root = init_example("false-success", tmp_path / "fs")
    run = op.run(op.load_suite(root), workers=2, progress=False)
    assert statuses(run) == EXAMPLE_STATUS


# ----------------------------------------------------------------------------- observing


def test_locator_path_uses_the_local_file_observer(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite([
        case("good", {"artifact_id": "good", "locator": locator("good"), "validator": "schema",
                      "expected_sha256": GOOD_SHA256}, write=["good"]),
        case("bad", {"artifact_id": "bad", "locator": locator("bad"), "validator": "schema"}, write=["bad"]),
        case("old", {"artifact_id": "old", "locator": locator("old")}, write=["old"]),
        case("none", {"artifact_id": "good", "locator": locator("good")}, write=[]),
        case("wrong-bytes", {"artifact_id": "good", "locator": locator("good"), "expected_sha256": "0" * 64},
             write=["good"]),
    ], system="sysmod:Writer")
    run = op.run(op.load_suite(root), progress=False)
    assert statuses(run) == {"good": "verified", "bad": "validator_failed", "old": "stale", "none": "missing",
                             "wrong-bytes": "hash_mismatch"}
    r = run.receipts.set_index("case_id")
    assert r.loc["good", "observed_digest"] == GOOD_SHA256
    assert set(r.drop(index="none")["evidence_source"]) == {"local_file_stat"}
    assert grep_tree(run.directory, LOCATOR_SENTINEL) == []
    assert grep_tree(run.directory, CONTENT_SENTINEL) == []


def test_stored_case_leaves_out_the_locator_but_keeps_the_digest(outcome_suite: Callable[..., Path]) -> None:
    line = case("good", {"artifact_id": "good", "locator": locator("good")}, write=["good"])
    root = outcome_suite([line], system="sysmod:Writer")
    run = op.run(op.load_suite(root), progress=False)
    stored = read_records(run.directory)[0]["case"]
    assert stored["outcome"] == {"artifact_id": "good"}
    assert stored["digest"] == case_digest(line)


def test_observe_wins_over_a_locator(outcome_suite: Callable[..., Path]) -> None:
    # the locator points at a file that never exists; observe() points at the real one
    root = outcome_suite([case("c", {"artifact_id": "good", "locator": "nowhere.json", "validator": "schema"},
                               write=["good"], observe="path")])
    run = op.run(op.load_suite(root), progress=False)
    r = run.receipts.iloc[0]
    assert (r["status"], r["evidence_source"], r["validator_exit_code"]) == ("verified", "system_observe", 0)



def test_a_system_that_observes_its_artifacts_is_not_judged_by_the_file_at_the_locator(
        outcome_suite: Callable[..., Path]) -> None:
    """The note taken after the reset is of the locator's file, and only for a system without ``observe``
    (``_run/case.py``): here observe() points at the report the case wrote, while the locator names an old file
    nobody touches. That old file, unchanged since the reset, must not make the observed report stale."""
    root = outcome_suite([case("c", {"artifact_id": "good", "locator": "old.json", "validator": "schema"},
                               write=["good"], observe="path")])
    (root / "old.json").write_text('{"written": "before the run"}\n', encoding="utf-8")
    run = op.run(op.load_suite(root), progress=False)
    r = run.receipts.iloc[0]
    assert (r["status"], r["evidence_source"]) == ("verified", "system_observe"), r["reason"]

@pytest.mark.parametrize(
    ("observe", "status", "source", "reason"),
    [
        ("dict", "verified", "system_observe", "verified: present, fresh, validator schema exit 0"),
        # False read as exit 0 made a failed check verified
        ("dict_false", "unverified", None, "unverified: observe() returned invalid evidence: validator_exit_code: "
                                           "must be an exit code (0 passes), got False"),
        ("evidence", "unverified", "bucket_head", "unverified: no result from validator schema"),
        ("none", "missing", None, "missing: no artifact observed"),
        ("invalid", "unverified", None, "unverified: observe() returned invalid evidence: observed_at"),
        ("raise", "unverified", None, "unverified: observe() raised OSError"),
        ("int", "unverified", None, "unverified: observe() returned int"),
        # "a path" read as a str: the reason says which kind of path is taken
        ("text", "unverified", None, "unverified: observe() returned str; expected Evidence, a dict of its fields, "
                                     "a pathlib.Path (a str is not read as a path) or None"),
    ],
)
def test_what_observe_returns(outcome_suite: Callable[..., Path], observe: str, status: str,
                              source: str | None, reason: str) -> None:
    root = outcome_suite([case("c", {"artifact_id": "good", "validator": "schema"}, write=["good"],
                               observe=observe)])
    run = op.run(op.load_suite(root), progress=False)
    r = run.receipts.iloc[0]
    assert r["status"] == status
    assert (None if pd.isna(r["evidence_source"]) else r["evidence_source"]) == source
    assert r["reason"].startswith(reason), r["reason"]
    verdict = outcome_verdicts(run).iloc[0]
    assert verdict["verdict"] == ("pass" if status == "verified" else "fail")
    # an observer's exception message quoted a path and the content: neither is stored
    assert grep_tree(run.directory, LOCATOR_SENTINEL) == []
    assert grep_tree(run.directory, CONTENT_SENTINEL) == []


def test_no_observer_and_no_locator_is_unverified(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite([case("c", {"artifact_id": "good"}, write=["good"])], system="sysmod:Writer")
    run = op.run(op.load_suite(root), progress=False)
    r = run.receipts.iloc[0]
    assert r["status"] == "unverified"
    assert "no observe(artifact_id) and the contract no locator" in r["reason"]
    assert outcome_verdicts(run).iloc[0]["verdict"] == "fail"


def test_validator_crash_is_unverified(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite([case("c", {"artifact_id": "good", "validator": "crash"}, write=["good"])])
    run = op.run(op.load_suite(root), progress=False)
    r = run.receipts.iloc[0]
    assert (r["status"], r["reason"]) == ("unverified", "unverified: validator crash raised ValueError")
    assert grep_tree(run.directory, LOCATOR_SENTINEL) == []


def test_hmac_digest_needs_the_key_and_never_stores_it(outcome_suite: Callable[..., Path],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    contract = {"artifact_id": "good", "expected_sha256": GOOD_HMAC, "digest_key_env": "OLOPROOF_TEST_KEY"}
    root = outcome_suite([case("c", contract, write=["good"])])
    monkeypatch.setenv("OLOPROOF_TEST_KEY", HMAC_KEY)
    run = op.run(op.load_suite(root), progress=False)
    r = run.receipts.iloc[0]
    assert (r["status"], r["digest_kind"], r["observed_digest"]) == ("verified", "hmac-sha256", GOOD_HMAC)
    assert r["observed_digest"] != GOOD_SHA256
    assert grep_tree(run.directory, HMAC_KEY) == []

    monkeypatch.delenv("OLOPROOF_TEST_KEY")
    again = op.run(op.load_suite(root), progress=False)
    r = again.receipts.iloc[0]
    assert r["status"] == "unverified"
    assert "OLOPROOF_TEST_KEY is unset" in r["reason"]


# ----------------------------------------------------------------------------- waiting and failures


def test_waiting_is_neither_a_pass_nor_a_failure(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite(
        [
            case("ok", {"artifact_id": "good"}, write=["good"]),
            case("gone", {"artifact_id": "bad"}, write=[]),
            case("wait", {"artifact_id": "old", "validator": "schema"}, write=[], status="waiting"),
        ],
        release={"criteria": {"outcome_verified": 0.5}},
    )
    run = op.run(op.load_suite(root), progress=False)
    assert statuses(run) == {"ok": "verified", "gone": "missing", "wait": "waiting"}
    # no verdict row for the waiting case: the gate counts two rows, one passed
    assert sorted(outcome_verdicts(run)["case_id"]) == ["gone", "ok"]
    row = op.gate(run).table.set_index("criterion").loc["outcome_verified"]
    assert (row["n"], row["passed"]) == (2, 1)
    summary = op.outcome_summary(run.receipts).iloc[0]
    assert (summary["expected"], summary["verified"], summary["failed"], summary["waiting"]) == (2, 1, 1, 1)
    assert summary["verified_share"] == pytest.approx(0.5)


@pytest.mark.parametrize("waiting", [0, 1, 6])
def test_a_wait_holds_back_a_pass_of_the_outcome_criterion(outcome_suite: Callable[..., Path], waiting: int) -> None:
    """A waiting case has no verdict row, so an agent that delivered 30 of 60 artifacts and answered
    "waiting" on the rest passed outcome_verified at 30/30 (exit 0), although DESIGN says a wait is never a
    success. While any case waits, the criterion's PASS is INSUFFICIENT_EVIDENCE (outcome_waiting); the rows
    and the interval are those of the delivered outcomes, as before, and the other criteria are untouched."""
    cases = [case(f"ok{i:02d}", {"artifact_id": "good"}, write=["good"], n=i) for i in range(24)]  # 24 distinct
    cases += [case(f"wait{i}", {"artifact_id": "good"}, write=[], status="waiting", n=i) for i in range(waiting)]
    root = outcome_suite(cases,
                         release={"criteria": {"outcome_verified": 0.8, "answer_matches": 0.8}})
    table = op.gate(op.run(op.load_suite(root), progress=False)).table.set_index("criterion")
    row = table.loc["outcome_verified"]
    assert (row["n"], row["passed"], row["ci_low"]) == (24, 24, pytest.approx(0.025 ** (1 / 24)))  # > 0.8
    if waiting:
        assert row["verdict"] == "INSUFFICIENT_EVIDENCE"
        assert row["reason"].startswith(f"outcome_waiting: {waiting} case run(s) declared a wait, so their outcomes "
                                        "are not known")
    else:
        assert row["verdict"] == "PASS"  # these contracts check no content: the reason says so
        assert row["reason"].startswith("ci_low_at_or_above_threshold; outcome_content_unchecked: ")
    assert "outcome_waiting" not in table.loc["answer_matches", "reason"]


def test_a_pass_on_contracts_that_check_no_content_says_so(outcome_suite: Callable[..., Path]) -> None:
    """Before, 24 contracts with only an ``artifact_id`` (check_coverage 0: any fresh file, an empty one
    included, is verified) passed ``outcome_verified`` with the plain reason, in the table, the notebook view and
    the command's lines alike. The PASS stays (the contracts are the suite's), its reason says what it rests on;
    with one contract naming a validator (check_coverage 1/24) the reason is the plain one."""
    cases = [case(f"ok{i:02d}", {"artifact_id": "good"}, write=["good"], n=i) for i in range(24)]
    for checked in (False, True):
        if checked:
            cases[0] = case("ok00", {"artifact_id": "good", "validator": "schema"}, write=["good"], n=0)
        root = outcome_suite(cases, release={"criteria": {"outcome_verified": 0.8}})
        run = op.run(op.load_suite(root), progress=False)
        assert op.outcome_summary(run.receipts)["check_coverage"].iloc[0] == (1 / 24 if checked else 0.0)
        row = op.gate(run).table.set_index("criterion").loc["outcome_verified"]
        assert (row["n"], row["passed"], row["verdict"]) == (24, 24, "PASS")
        assert row["reason"] == ("ci_low_at_or_above_threshold" if checked else (
            "ci_low_at_or_above_threshold; outcome_content_unchecked: no contract of the 24 expected outcomes "
            "checks the artifact's content (check_coverage 0: no validator, no expected_sha256), so any fresh "
            "file, an empty one included, was verified"))


def test_only_the_outcome_criterions_pass_says_its_content_is_unchecked(outcome_suite: Callable[..., Path]) -> None:
    """The note is about the contracts, so it goes to the outcome criterion's PASS alone; the
    answer criterion of the same run (24 of 24 answers ``done`` as expected) passes with the plain reason."""
    cases = [case(f"ok{i:02d}", {"artifact_id": "good"}, write=["good"], n=i) for i in range(24)]
    root = outcome_suite(cases, release={"criteria": {"outcome_verified": 0.8, "answer_matches": 0.8}})
    table = op.gate(op.run(op.load_suite(root), progress=False)).table.set_index("criterion")
    assert table.loc["outcome_verified", "reason"].startswith("ci_low_at_or_above_threshold; outcome_content_unchecked")
    assert (table.loc["answer_matches", "verdict"], table.loc["answer_matches", "reason"]) == (
        "PASS", "ci_low_at_or_above_threshold")


def test_a_wait_leaves_a_fail_a_fail(outcome_suite: Callable[..., Path]) -> None:
    """A wait holds back a PASS only: 0 of 24 delivered outcomes verified is a FAIL at 0.8 whatever waits (by hand,
    Clopper–Pearson's upper end 1 − 0.025^(1/24) = 0.1426), not INSUFFICIENT_EVIDENCE."""
    cases = [case(f"gone{i:02d}", {"artifact_id": "bad"}, write=[], n=i) for i in range(24)]
    cases += [case(f"wait{i}", {"artifact_id": "good"}, write=[], status="waiting", n=i) for i in range(2)]
    root = outcome_suite(cases, release={"criteria": {"outcome_verified": 0.8}})
    row = op.gate(op.run(op.load_suite(root), progress=False)).table.set_index("criterion").loc["outcome_verified"]
    assert (row["n"], row["passed"], row["ci_high"]) == (24, 0, pytest.approx(1 - 0.025 ** (1 / 24), abs=1e-12))
    assert (row["verdict"], row["reason"]) == ("FAIL", "ci_high_below_threshold")


def test_a_wait_holds_back_a_pass_of_a_reduced_outcome_criterion(outcome_suite: Callable[..., Path]) -> None:
    """outcome_waiting holds for a criterion reduced with pass^k as for a mean one: 24 cases verified in both
    epochs pass pass^2 (ci_low 0.025^(1/24) = 0.857 > 0.8, by hand) until one case waits, in each of its 2 epochs."""
    cases = [case(f"ok{i:02d}", {"artifact_id": "good"}, write=["good"], n=i) for i in range(24)]
    release = {"criteria": {"outcome_verified": {"threshold": 0.8, "reduce": "pass^2"}}}
    for waiting, verdict in ((0, "PASS"), (1, "INSUFFICIENT_EVIDENCE")):
        extra = [case(f"wait{i}", {"artifact_id": "good"}, write=[], status="waiting", n=i) for i in range(waiting)]
        root = outcome_suite(cases + extra, release=release)
        g = op.gate(op.run(op.load_suite(root), epochs=2, progress=False))
        row = g.table.set_index("criterion").loc["outcome_verified"]
        assert (row["reduce"], row["n"], row["passed"]) == ("pass^2", 24, 24)
        assert row["ci_low"] == pytest.approx(0.025 ** (1 / 24), abs=1e-12) and row["verdict"] == verdict
        if waiting:
            assert row["reason"].startswith("outcome_waiting: 2 case run(s) declared a wait")


def test_a_case_that_raised_is_missing_with_an_unverified_receipt(outcome_suite: Callable[..., Path]) -> None:
    boom = case("boom", {"artifact_id": "good", "validator": "schema"}, write=["good"], **{"raise": True})
    root = outcome_suite([boom, case("ok", {"artifact_id": "good"}, write=["good"])])
    run = op.run(op.load_suite(root), progress=False)
    assert statuses(run) == {"boom": "unverified", "ok": "verified"}
    verdict = outcome_verdicts(run).set_index("case_id").loc["boom"]
    assert verdict["verdict"] == "missing"
    assert verdict["reason"].startswith("RuntimeError")
    r = run.receipts.set_index("case_id").loc["boom"]
    assert r["reason"] == "unverified: not observed: the case ended with status error"
    assert pd.isna(r["evidence_source"])


def test_cases_without_outcome_get_no_receipt(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite([case("plain", None, write=[]), case("ok", {"artifact_id": "good"}, write=["good"])])
    run = op.run(op.load_suite(root), progress=False)
    assert list(run.receipts["case_id"]) == ["ok"]
    assert list(outcome_verdicts(run)["case_id"]) == ["ok"]


def test_run_reloaded_from_disk_has_the_same_receipts(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite([case("ok", {"artifact_id": "good"}, write=["good"]),
                          case("gone", {"artifact_id": "bad"}, write=[])])
    run = op.run(op.load_suite(root), progress=False)
    pd.testing.assert_frame_equal(op.load_run(run.directory).receipts, run.receipts)


# ----------------------------------------------------------------------------- configuration


def test_evaluator_validators_restrict_what_runs(outcome_suite: Callable[..., Path]) -> None:
    evaluators = [{"type": "outcome_contract", "validators": ["schema"]}]
    root = outcome_suite([case("c", {"artifact_id": "good", "validator": "schema"}, write=["good"])],
                         evaluators=evaluators)
    assert statuses(op.run(op.load_suite(root), progress=False)) == {"c": "verified"}


def test_case_validator_outside_the_evaluator_list_names_the_line(outcome_suite: Callable[..., Path]) -> None:
    evaluators = [{"type": "outcome_contract", "validators": ["schema"]}]
    root = outcome_suite([case("a", {"artifact_id": "good"}, write=[]),
                          case("b", {"artifact_id": "good", "validator": "other"}, write=[])],
                         evaluators=evaluators)
    with pytest.raises(CaseFileError) as info:
        op.load_suite(root)
    message = str(info.value)
    assert "cases.jsonl: line 2:" in message and "'other'" in message and "evaluators[0].validators" in message


def test_case_naming_an_unregistered_validator_names_the_line(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite([case("a", {"artifact_id": "good", "validator": "nosuch"}, write=[])])
    with pytest.raises(CaseFileError) as info:
        op.load_suite(root)
    assert "cases.jsonl: line 1:" in str(info.value) and "'nosuch' is not registered" in str(info.value)


def test_evaluator_naming_an_unregistered_validator(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite([case("a", {"artifact_id": "good"}, write=[])],
                         evaluators=[{"type": "answer_matches"}, {"type": "outcome_contract", "validators": ["zz"]}])
    with pytest.raises(ConfigError) as info:
        op.load_suite(root)
    assert info.value.key == "evaluators[1].validators[0]"
    assert str(info.value).startswith(str(root / "oloproof.yaml"))
    assert "'zz' is not registered" in str(info.value)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("checks.schema", "must be 'module:function'"),
        ("checks:", "must be 'module:function'"),
        ("nosuchmodule:schema", "cannot import 'nosuchmodule'"),
        ("checks:absent", "has no attribute 'absent'"),
        ("checks:NOT_CALLABLE", "not a function"),
    ],
)
def test_bad_validator_entries_name_the_key(outcome_suite: Callable[..., Path], spec: str, words: str) -> None:
    root = outcome_suite([case("a", {"artifact_id": "good"}, write=[])], validators={"v": spec})
    with pytest.raises(ConfigError) as info:
        op.load_suite(root)
    assert info.value.key == "validators.v"
    assert "oloproof.yaml" in str(info.value) and words in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("outcome", "words"),
    [
        ({"artifact_id": "good", "path": "x.json"}, "unknown key 'outcome.path'; allowed under 'outcome':"),
        ({"validator": "schema"}, "missing required key 'outcome.artifact_id'"),
        ({"artifact_id": "good", "expected_sha256": "abc"}, "'outcome.expected_sha256': "),
        ("good", "'outcome' must be an object"),
    ],
)
def test_bad_case_outcome_names_file_and_line(outcome_suite: Callable[..., Path], outcome: Any, words: str) -> None:
    root = outcome_suite([case("a", {"artifact_id": "good"}, write=[]), case("b", None, write=[])])
    lines = (root / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[1])
    bad["outcome"] = outcome
    lines[1] = json.dumps(bad)
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CaseFileError) as info:
        op.load_suite(root)
    assert info.value.line == 2
    assert str(info.value).startswith(f"{root / 'cases.jsonl'}: line 2: ")
    assert words in str(info.value)


def test_evaluator_options_are_strict() -> None:
    with pytest.raises(ConfigError) as info:
        parse_suite_config({"name": "x", "system": "m:S",
                                     "evaluators": [{"type": "outcome_contract", "paths": ["a"]}]})
    assert info.value.key == "evaluators[0].paths"
    assert "validators" in str(info.value)


def test_run_started_at_precedes_a_fresh_write(outcome_suite: Callable[..., Path]) -> None:
    root = outcome_suite([case("c", {"artifact_id": "good"}, write=["good"])])
    run = op.run(op.load_suite(root), progress=False)
    r = run.receipts.iloc[0]
    started = datetime.fromisoformat(read_records(run.directory)[0]["started_at"].replace("Z", "+00:00"))
    assert r["run_started_at"].to_pydatetime() == started - timedelta(seconds=0.01)
    assert r["modified_at"] >= r["run_started_at"]


class _ResetsSandbox(Evaluator):
    """A system-scope evaluator that resets the sandbox (as a replay does), for the ordering test."""

    type: Literal["test_resets_sandbox"]
    scope: ClassVar[Literal["case", "system", "run"]] = "system"

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        ctx.system.reset({})
        return Evaluation()


def test_outcome_is_observed_before_an_evaluator_that_resets_the_sandbox(
        outcome_suite: Callable[..., Path]) -> None:
    evaluators = [{"type": "test_resets_sandbox"}, {"type": "outcome_contract"}]
    root = outcome_suite([case("c", {"artifact_id": "good"}, write=["good"])], evaluators=evaluators)
    register(_ResetsSandbox)  # for this test only: registered for the whole session, every other test's list of
    try:                      # allowed evaluator types named it
        assert statuses(op.run(op.load_suite(root), progress=False)) == {"c": "verified"}
    finally:
        EVALUATORS.pop("test_resets_sandbox", None)


def test_an_artifact_with_a_modification_time_beyond_year_9999_leaves_the_run_going(
        outcome_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Before: ValueError (year 10000 is out of range) out of the evaluator ended the whole run as an internal
    error; an agent could stop every run by stamping its report so (tmpfs and btrfs hold such times)."""
    ns = 253_402_300_800 * 10**9  # 10000-01-01T00:00:00Z
    far = None
    for folder in (tmp_path, Path("/dev/shm")):
        if folder.is_dir() and os.access(folder, os.W_OK):
            candidate = folder / f"far-{os.getpid()}.json"
            candidate.write_bytes(b"{}")
            os.utime(candidate, ns=(ns, ns))
            if os.stat(candidate).st_mtime_ns == ns:
                far = candidate
                break
            candidate.unlink()
    if far is None:
        pytest.skip("no writable file system here holds a modification time past the year 9999")
    try:
        root = outcome_suite([case("far", {"artifact_id": "far", "locator": str(far)}, write=[]),
                              case("good", {"artifact_id": "good", "locator": locator("good")}, write=["good"])],
                             system="sysmod:Writer")
        run = op.run(op.load_suite(root), progress=False)
    finally:
        far.unlink()
    assert statuses(run) == {"far": "unverified", "good": "verified"}
    reasons = dict(zip(run.receipts["case_id"], run.receipts["reason"], strict=True))
    assert reasons["far"] == "unverified: the artifact has a modification time outside the years 1–9999"


EPOCH_WRITER = '''
import time
from pathlib import Path

OUT = Path(__file__).parent / "out"


class OwnFiles:
    """Places its reports itself (observe): sleeps input["sleep"][epoch - 1] (if given), then writes
    input["text"][epoch - 1] (default: a text of its epoch, new content each time) in the epochs input["write_in"]
    names (default: every epoch) and nothing in the others; its reset keeps what earlier cases wrote, times
    included."""

    def reset(self, state):
        OUT.mkdir(exist_ok=True)

    def snapshot(self):
        return {}

    def observe(self, artifact_id):
        path = OUT / artifact_id
        return path if path.is_file() else None

    def run(self, input, epoch=1):
        time.sleep(input.get("sleep", [0] * epoch)[epoch - 1])
        if epoch in input.get("write_in", [epoch]):
            texts = input.get("text") or [f"{input['id']} epoch {e}" for e in range(1, epoch + 1)]
            (OUT / input["id"]).write_text(texts[epoch - 1], encoding="utf-8")
        return {"steps": [], "answer": "done", "status": "completed"}


class SharedLocator:
    """Its reset removes the report at the locator; epoch 1 writes it after input["write_after"] seconds,
    the other epochs write nothing and take input["idle"] seconds."""

    def reset(self, state):
        OUT.mkdir(exist_ok=True)
        (OUT / "report.json").unlink(missing_ok=True)

    def snapshot(self):
        return {}

    def run(self, input, epoch=1):
        if epoch == 1:
            time.sleep(input["write_after"])
            (OUT / "report.json").write_text("{}", encoding="utf-8")
        else:
            time.sleep(input["idle"])
        return {"steps": [], "answer": "done", "status": "completed"}
'''


@pytest.mark.parametrize(("isolation", "workers"), [("thread", 1), ("process", 1), ("process", 2)])
def test_the_artifact_an_earlier_epoch_left_is_stale_within_the_freshness_margin(make_suite: Any, tmp_path: Path,
                                                                               isolation: str, workers: int) -> None:
    """Epoch 1 writes the report, epoch 2 writes nothing, a few milliseconds later: its start minus the margin
    (here 5 s, so the test does not depend on the machine's speed) was before epoch 1's write, so epoch 2 was
    ``verified`` on epoch 1's file and the gate passed. Now a version (time and digest) an earlier case was
    shown before this one started is ``stale``. A case that writes new content in the next epoch is not."""
    cases = [{"id": "once", "input": {"id": "once", "write_in": [1], "text": ["Q2\n"]},
              "outcome": {"artifact_id": "once"}},
             {"id": "twice", "input": {"id": "twice", "write_in": [1, 2], "text": ["Q2\n", "Q2, revised\n"]},
              "outcome": {"artifact_id": "twice"}}]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract", "clock_slack_s": 5}], system="sysmod:OwnFiles",
                      system_code=EPOCH_WRITER, epochs=2)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False, isolation=isolation, workers=workers)
    got = {(r.case_id, r.epoch): (r.status, r.reason) for r in run.receipts.itertuples()}
    assert {k: v[0] for k, v in got.items()} == {("once", 1): "verified", ("once", 2): "stale",
                                                 ("twice", 1): "verified", ("twice", 2): "verified"}
    assert got[("once", 2)][1] == ("stale: the artifact an earlier case of this run was shown (the same "
                                   "modification time and digest), not one this case wrote")


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_cases_that_observe_one_locator_never_run_at_once(make_suite: Any, tmp_path: Path, isolation: str) -> None:
    """Two workers, two epochs of a case whose report is at one locator: epoch 2 (writes nothing, 0.6 s) ran
    beside epoch 1 (writes after 0.2 s) and was ``verified`` on epoch 1's file. Cases sharing a locator now
    wait for each other: epoch 2's reset removes the report, and it is ``missing``, as in a serial run."""
    slow = isolation == "process"  # so the second worker process is up (about 0.5 s) before epoch 1 is done
    cases = [{"id": "c", "input": {"write_after": 1.5 if slow else 0.2, "idle": 2.0 if slow else 0.6},
              "outcome": {"artifact_id": "c", "locator": "out/report.json"}}]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract"}], system="sysmod:SharedLocator",
                      system_code=EPOCH_WRITER, epochs=2)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False, workers=2, isolation=isolation)
    assert dict(zip(run.receipts["epoch"], run.receipts["status"], strict=True)) == {1: "verified", 2: "missing"}
    starts = run.cases.set_index("epoch")["started_at"]
    ends = starts + pd.to_timedelta(run.cases.set_index("epoch")["duration_s"], unit="s")
    assert starts[2] >= ends[1] or starts[1] >= ends[2]  # one after the other


SLOW_OBSERVER = '''
import time


class SlowObserver:
    def reset(self, state):
        pass

    def snapshot(self):
        return {}

    def observe(self, artifact_id):
        if artifact_id == "slow":
            time.sleep(5)
        return None

    def run(self, input):
        return {"steps": [], "answer": "done", "status": "completed"}
'''


def test_an_observe_that_times_out_leaves_a_receipt_the_summary_counts(make_suite: Any, tmp_path: Path) -> None:
    """observe() past case_timeout_s gave a missing verdict and no receipt: outcome_summary said 0 of 1
    expected outcomes where 2 were expected (1 missing, 1 never observed)."""
    cases = [{"id": "quick", "input": {}, "outcome": {"artifact_id": "quick"}},
             {"id": "stuck", "input": {}, "outcome": {"artifact_id": "slow"}}]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract"}], system="sysmod:SlowObserver",
                      system_code=SLOW_OBSERVER, case_timeout_s=0.5)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    assert statuses(run) == {"quick": "missing", "stuck": "unverified"}
    assert run.receipts.set_index("case_id").loc["stuck", "reason"] == (
        "unverified: not observed: the system timed out while observing it")
    verdict = run.verdicts.set_index("case_id").loc["stuck"]
    assert verdict["verdict"] == "missing" and verdict["reason"].startswith("timeout")
    summary = op.outcome_summary(run.receipts).iloc[0]
    assert (summary["expected"], summary["verified"], summary["unverified"]) == (2, 0, 1)


@pytest.mark.parametrize(("option", "value"), [("clock_slack_s", "5"), ("observe_timeout_s", "60"),
                                               ("max_artifact_bytes", True), ("max_artifact_bytes", "10")])
def test_outcome_options_take_numbers_only(option: str, value: Any) -> None:
    """``max_artifact_bytes: true`` was 1 byte (every artifact unverified) and ``"5"`` was 5 seconds."""
    with pytest.raises(ConfigError) as info:
        parse_suite_config({"name": "x", "system": "m:S", "evaluators": [{"type": "outcome_contract", option: value}]})
    assert info.value.key == f"evaluators[0].{option}"


@pytest.mark.parametrize("value", ["no", "off", 0, "false"])
def test_require_fresh_is_true_or_false_only(value: Any) -> None:
    """"no", "off" or 0 turned the freshness check off, silently."""
    with pytest.raises(ValueError, match="require_fresh"):
        op.OutcomeContract.model_validate({"artifact_id": "a", "require_fresh": value})


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_epochs_of_one_artifact_wait_for_each_other_while_other_cases_go_ahead(make_suite: Any, tmp_path: Path,
                                                                              isolation: str) -> None:
    """Cases sharing an artifact run one after the other, but the queue of those waiting was as long as the
    workers were many: one case's epochs filled it and the run went nearly serial (4 × 10 on 4 workers). Now
    the epochs of each case never overlap and the four cases do."""
    # epochs of 0.15 s: long beside a worker's own work even on a loaded 2-core machine (0.05 s ones were not);
    # 0.3 s with process workers, whose start (an interpreter and its imports each) took longer than a case's ten
    # 0.15 s epochs at load 8 (2 overlapping, on Python 3.10); 10 of them, more than such a queue held, so the
    # test fails with it
    sleep = 0.15 if isolation == "thread" else 0.3
    cases = [{"id": f"c{i}", "input": {"id": f"c{i}", "sleep": [sleep] * 10}, "outcome": {"artifact_id": f"c{i}"}}
             for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract"}], system="sysmod:OwnFiles",
                      system_code=EPOCH_WRITER, epochs=10)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False, workers=4, isolation=isolation)
    assert (run.receipts["status"] == "verified").all() and len(run.receipts) == 40  # each epoch wrote its own
    frame = run.cases.assign(end=run.cases["started_at"] + pd.to_timedelta(run.cases["duration_s"], unit="s"))
    spans = list(zip(frame["case_id"], frame["started_at"], frame["end"], strict=True))
    same = [(a, b) for a in spans for b in spans if a is not b and a[0] == b[0] and a[1] < b[2] and b[1] < a[2]]
    assert same == []  # no two epochs of one case at once
    # the cases themselves ran side by side (4 workers; a full queue allowed 2 at most): counted over each case's
    # span, first epoch to last, not epoch by epoch, whose gaps on a loaded machine made 2 of a run with 4 (seen
    # at load 5-7; with the queue of 4 back, both counts are 2 in 3 runs of 3)
    cases_at = frame.groupby("case_id").agg(start=("started_at", "min"), end=("end", "max"))
    overlapping = max(int(((cases_at["start"] <= t) & (t < cases_at["end"])).sum()) for t in cases_at["start"])
    assert overlapping >= 3


@pytest.mark.parametrize("how", ["process", "executor"])
def test_an_earlier_epoch_on_another_worker_is_stale_too(make_suite: Any, tmp_path: Path, how: str) -> None:
    """A worker process (or an executor's) knew only the versions its own cases were shown: the next epoch of a
    case on another worker was ``verified`` on its twin's file (epochs 2–4 on a 4-process executor). The run's
    process now notes every receipt and hands them to the worker of the next case of that artifact. Here y's
    epochs keep the first worker busy so that x's second epoch lands on the other one (processes), or the
    executor hands the epochs to its processes as they come."""
    from concurrent.futures import ProcessPoolExecutor

    cases = [{"id": "y", "input": {"id": "y", "sleep": [0.6] * 4, "write_in": [1, 2, 3, 4]},
              "outcome": {"artifact_id": "y"}},
             {"id": "x", "input": {"id": "x", "sleep": [1.5, 0, 0, 0], "write_in": [1]},
              "outcome": {"artifact_id": "x"}}]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract", "clock_slack_s": 5}], system="sysmod:OwnFiles",
                      system_code=EPOCH_WRITER, epochs=2 if how == "process" else 4)
    if how == "process":
        run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False, workers=2, isolation="process")
    else:
        with ProcessPoolExecutor(4) as pool:
            run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False, executor=pool, chunk_size=1)
    got = {(r.case_id, r.epoch): r.status for r in run.receipts.itertuples()}
    epochs = 2 if how == "process" else 4
    assert got == {**{("y", e): "verified" for e in range(1, epochs + 1)}, ("x", 1): "verified",
                   **{("x", e): "stale" for e in range(2, epochs + 1)}}


def test_a_resumed_epoch_is_stale_on_the_file_an_epoch_before_the_resume_left(make_suite: Any,
                                                                              tmp_path: Path) -> None:
    """The versions shown were remembered by the process that ran the cases: after an interruption, a resumed
    epoch that wrote nothing was ``verified`` on the file the epoch before the interruption left. A resume now
    notes the receipts of the recorded cases first."""
    cases = [{"id": "once", "input": {"id": "once", "write_in": [1], "text": ["Q2\n"]},
              "outcome": {"artifact_id": "once"}}]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract", "clock_slack_s": 5}], system="sysmod:OwnFiles",
                      system_code=EPOCH_WRITER, epochs=2)
    out = tmp_path / "run"
    op.run(op.load_suite(root), out=out, progress=False)
    first = (out / "cases.jsonl").read_bytes().split(b"\n")[0]  # as if stopped after epoch 1
    (out / "cases.jsonl").write_bytes(first + b"\n")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    resumed = op.run(op.load_suite(root), out=out, resume=True, progress=False)
    got = {r.epoch: r.status for r in resumed.receipts.itertuples()}
    assert got == {1: "verified", 2: "stale"}


# -- mutation-testing gaps -----------------------------------------------------------------------------------


def test_the_validators_an_outcome_check_may_run() -> None:
    """``validators`` empty (the default): every registered validator may run, so each one's code is part of what
    the verdicts depend on (runs pooled with another validator's code are refused); a list: those only."""
    from oloproof_nb.evaluators.outcome import OutcomeContractEvaluator

    every = OutcomeContractEvaluator(type="outcome_contract")
    assert every.validators_run(["schema", "size"]) == ["schema", "size"]
    some = OutcomeContractEvaluator(type="outcome_contract", validators=["size"])
    assert some.validators_run(["schema", "size"]) == ["size"]
    assert some.validators_run(["schema"]) == []




class _LiveRun:
    """A live case whose artifact is there, fresh and right (what ``collect_evidence`` would find on disk)."""

    case_started_at = datetime(2026, 7, 25, 14, 0, tzinfo=timezone.utc)

    def collect_evidence(self, contract: Any, system: Any, validators: Any, **_: Any) -> tuple[Any, None]:
        from oloproof_nb._core.receipts import Evidence

        return Evidence(artifact_id=contract.artifact_id, observed_at=self.case_started_at + timedelta(seconds=5),
                        modified_at=self.case_started_at + timedelta(seconds=1),
                        evidence_source="local_file_stat"), None

    def untouched_since_reset(self, contract: Any) -> bool:
        return False

    def shown_to_an_earlier_case(self, evidence: Any) -> bool:
        return False


def _outcome_ctx(status: str, failure: str | None) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(case=SimpleNamespace(id="c1", outcome={"artifact_id": "good"}), run=_LiveRun(),
                           status=status, failure=failure, system=None)


@pytest.mark.parametrize("status", ["error", "timeout"])
def test_a_case_that_failed_in_any_way_is_missing_and_never_observed(status: str) -> None:
    """A timed-out case is as unobserved as one that raised, even with the promised file fresh on disk."""
    from oloproof_nb.evaluators.outcome import OutcomeContractEvaluator

    result = OutcomeContractEvaluator(type="outcome_contract").evaluate(_outcome_ctx(status, f"{status}: boom"))
    assert [(v["verdict"], v["reason"]) for v in result.verdicts] == [("missing", f"{status}: boom")]
    (receipt,) = result.receipts
    assert (receipt["status"], receipt["reason"]) == (
        "unverified", f"unverified: not observed: the case ended with status {status}")


def test_an_interrupted_observation_dates_the_run_from_the_case_start_minus_the_slack() -> None:
    """run_started_at = case_started_at - clock_slack_s on every receipt, that of an observe() that timed out too:
    14:00:00.000000 - 0.25 s = 13:59:59.750000."""
    from oloproof_nb.evaluators.outcome import OutcomeContractEvaluator

    ev = OutcomeContractEvaluator(type="outcome_contract", clock_slack_s=0.25)
    result = ev.interrupted(_outcome_ctx("completed", None), "timeout: observe", timed_out=True)
    (receipt,) = result.receipts
    assert receipt["run_started_at"] == "2026-07-25T13:59:59.750000Z"
    assert receipt["reason"] == "unverified: not observed: the system timed out while observing it"
    assert [v["verdict"] for v in result.verdicts] == ["missing"]


@pytest.mark.parametrize(("option", "value", "ok"), [
    ("clock_slack_s", -0.001, False), ("clock_slack_s", 0.0, True), ("clock_slack_s", 60.0, True),
    ("clock_slack_s", 60.5, False), ("observe_timeout_s", 0.0, False), ("observe_timeout_s", 0.001, True),
    ("max_artifact_bytes", 0, False), ("max_artifact_bytes", 1, True),
])
def test_outcome_options_are_refused_outside_their_documented_bounds(option: str, value: Any, ok: bool) -> None:
    """The documented ranges: a clock slack of 0 to 60 s (a negative one moved the run's start after the case's,
    so a file the case wrote could be stale), a positive observe timeout, at least one byte read."""
    raw = {"name": "x", "system": "m:S", "evaluators": [{"type": "outcome_contract", option: value}]}
    if ok:
        assert getattr(parse_suite_config(raw).evaluators[0], option) == value
    else:
        with pytest.raises(ConfigError) as info:
            parse_suite_config(raw)
        assert info.value.key == f"evaluators[0].{option}"


def test_the_evaluators_observation_limits_reach_the_observer(outcome_suite: Callable[..., Path], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``observe_timeout_s`` and ``max_artifact_bytes`` set on the evaluator are the limits the artifact is
    observed with (not the defaults, 60 s and 1 GiB), and the receipt keeps the contract's expected digest."""
    from oloproof_nb._run import context

    seen: list[tuple[Any, Any]] = []
    real = context.collect_evidence

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append((kwargs.get("observe_timeout_s"), kwargs.get("max_artifact_bytes")))
        return real(*args, **kwargs)

    monkeypatch.setattr(context, "collect_evidence", spy)
    root = outcome_suite([case("a", {"artifact_id": "good"}, write=["good"])],
                         evaluators=[{"type": "outcome_contract", "observe_timeout_s": 7.5,
                                      "max_artifact_bytes": 4096}])
    op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    assert seen == [(7.5, 4096)]


def test_an_unobserved_receipt_keeps_what_the_contract_promised() -> None:
    """Nothing observed, yet the receipt says which digest and validator were expected, and when the run began."""
    from oloproof_nb.evaluators.outcome import unobserved_receipt

    at = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)
    contract = op.OutcomeContract(artifact_id="a", expected_sha256="ab" * 32, validator="schema")
    r = unobserved_receipt(contract, at, "observe() raised OSError")
    assert (r.artifact_id, r.expected_sha256, r.validator, r.run_started_at) == ("a", "ab" * 32, "schema", at)
    assert (r.status, r.reason) == ("unverified", "unverified: observe() raised OSError")


def test_a_wait_is_counted_once_per_case_run_whatever_checks_its_outcome(outcome_suite: Callable[..., Path]) -> None:
    """Two outcome_contract criteria read one contract: each waiting case run has a receipt per criterion, and is
    one case run that declared a wait (2 by hand), not 4."""
    cases = [case(f"ok{i:02d}", {"artifact_id": "good"}, write=["good"], n=i) for i in range(24)]
    cases += [case(f"wait{i}", {"artifact_id": "good"}, write=[], status="waiting", n=i) for i in range(2)]
    evaluators = [*OUTCOME_EVALUATORS, {"type": "outcome_contract", "criterion": "outcome_again"}]
    root = outcome_suite(cases, evaluators=evaluators, release={"criteria": {"outcome_verified": 0.8}})
    run = op.run(op.load_suite(root), progress=False)
    table = op.gate(run).table.set_index("criterion")
    assert table.loc["outcome_verified", "reason"].startswith("outcome_waiting: 2 case run(s) declared a wait")
    # README section 5: the receipts are stored once per evaluator, and outcome_summary counts each (24 + 2 by hand)
    summary = op.outcome_summary(run.receipts).iloc[0]
    assert (len(run.receipts), summary["expected"], summary["waiting"]) == (52, 48, 4)


# -- gaps a mutant showed ----------------------------------------------------------------------------------


def test_an_outcome_judged_without_a_live_run_is_missing_not_left_out() -> None:
    """A case promising an outcome, judged with no run to observe with (a stored record judged again): ``missing``
    with the reason, never no row (which would leave the promise out of the summary and the gate)."""
    case = case_from_mapping({"id": "c1", "input": {}, "outcome": {"artifact_id": "report"}})
    ctx = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="done"), state=None, run=None)
    result = OutcomeContractEvaluator(type="outcome_contract").evaluate(ctx)
    assert [(v["verdict"], v["reason"]) for v in result.verdicts] == [
        ("missing", "outcome_contract needs a live run (nothing to observe with)")]
    assert result.receipts == []
