"""The sentences README and the docstrings gained on 5 Dec 2026 that no test reproduced.

Each test names the sentence it pins; the figures are counted by hand or hashed here, never read back from the code
that made them. The claims other tests already reproduce are not repeated here.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _metamorphic_systems import case, mm_suite, transform

import oloproof_nb as op
from oloproof_nb._config import labels as labels_module
from oloproof_nb._config.imports import import_system, suite_imports
from oloproof_nb._config.labels import load_labels
from oloproof_nb._run import observe
from oloproof_nb._run.observe import _version, verify_contract_file
from oloproof_nb.cli import main
from oloproof_nb.errors import LabelFileError

# --- README section 3: "The modules followed are those named at the top of a module (…, under an `if` or a `try`
# too)". The `try` form is pinned by tests/_run/test_replay_cache_helper_values.py; the `if` form was not.


def test_a_helper_imported_under_an_if_at_the_top_is_part_of_the_fingerprint(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    root.mkdir()
    desk = root / "desk_c13_if.py"
    desk.write_text("import sys\n\nif sys.version_info >= (3,):\n    from rules_c13_if import ESCALATE\n"
                    "else:\n    ESCALATE = False\n\n\nclass Desk:\n    def run(self, input):\n"
                    "        return {'answer': str(ESCALATE)}\n", encoding="utf-8")
    helper = root / "rules_c13_if.py"
    helper.write_text("ESCALATE = True\n", encoding="utf-8")
    try:
        found = suite_imports(root, [import_system(root, "desk_c13_if:Desk")])
    finally:
        for name in ("desk_c13_if", "rules_c13_if"):
            sys.modules.pop(name, None)
    assert sorted(found) == sorted([desk, helper])  # listed by hand: the desk and the helper its `if` imports


# --- README section 4: "a named labeler judges a pair once, names compared without case, width, spacing or
# invisible characters: `"Bob "` after `"bob"` is refused at its line".


@pytest.mark.parametrize(("first", "second"), [("bob", "Bob "),  # README's own example
                                               ("ana lu", "Ana  Lu"),  # a run of spaces inside the name
                                               ("bob", "\uff42\uff4f\uff42")])  # full-width letters
def test_the_readme_labeler_examples_are_refused_at_their_line(tmp_path: Path, first: str, second: str) -> None:
    path = tmp_path / "t.jsonl"
    rows = [{"case_id": "c1~t", "valid": True, "labeler": first}, {"case_id": "c1~t", "valid": False,
                                                                   "labeler": second}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(LabelFileError) as info:
        load_labels(path, {"c1~t"}, "t")
    assert info.value.line == 2
    # the message says what the comparison drops; "surrounding space" alone did not cover the last two rows
    assert str(info.value).endswith("(names are compared without case, width, extra blank space or invisible "
                                    "characters)")


# --- oloproof_nb/_analysis/gate_drift.py, label_drift: a label file "refused now (…, more than MAX_LABEL_BYTES) is
# named as one that cannot be read now". The second judgement and UTF-16 are pinned in
# tests/_analysis/test_validity.py.


def test_a_label_file_grown_past_the_limit_is_named_by_the_gate(make_suite: Callable[..., Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    ids = ["c1", "c2", "c3"]
    labels = {"t": [{"case_id": f"{i}~t", "valid": True, "labeler": "ana"} for i in ids]}
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t", "!answer", minimum_validity=0.5)],
                    [{"type": "answer_matches"}], labels, release={"criteria": {"answer_matches": 0.1}})
    run = op.run(op.load_suite(root), progress=False)
    size = (root / "labels" / "t.jsonl").stat().st_size
    monkeypatch.setattr(labels_module, "MAX_LABEL_BYTES", size - 1)  # the file now holds one byte too many
    with pytest.warns(UserWarning, match=r"t\.jsonl differs from the validity labels run .* was made with \(it "
                                         r"cannot be read now: cannot read the label file"):
        op.gate(run)


# --- README section 5 and OutcomeContractEvaluator.interrupted: an observe() that raises an exception is a `fail`;
# one that raises SystemExit or KeyboardInterrupt is `missing` (as a timeout), each with an `unverified` receipt.

QUITTER = '''
class Quitter:
    def reset(self, state):
        pass

    def snapshot(self):
        return {}

    def observe(self, artifact_id):
        if artifact_id == "exit":
            raise SystemExit(3)
        if artifact_id == "interrupt":
            raise KeyboardInterrupt
        raise OSError("the disk")

    def run(self, input):
        return {"steps": [], "answer": "done", "status": "completed"}
'''


def test_an_observe_that_exits_is_missing_and_one_that_raises_an_exception_fails(make_suite: Callable[..., Path],
                                                                                tmp_path: Path) -> None:
    cases = [{"id": kind, "input": {}, "outcome": {"artifact_id": kind}} for kind in ("exit", "interrupt", "error")]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract"}], system="sysmod:Quitter", system_code=QUITTER)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    verdicts = {r.case_id: (r.verdict, r.reason) for r in run.verdicts.itertuples()}
    receipts = {r.case_id: (r.status, r.reason) for r in run.receipts.itertuples()}
    assert verdicts == {"exit": ("missing", "system_raised: SystemExit: 3"),
                        "interrupt": ("missing", "system_raised: KeyboardInterrupt"),
                        "error": ("fail", "unverified: observe() raised OSError")}
    unobserved = ("unverified", "unverified: not observed: the system raised while observing it")
    assert receipts == {"exit": unobserved, "interrupt": unobserved,
                        "error": ("unverified", "unverified: observe() raised OSError")}


# --- README section 8, `oloproof receipt`: "a folder on that path swapped while it runs and back after is not seen".
# A limit, pinned as the README states it (as tests/evaluators/test_fault_applied_effect.py pins its own).

GOOD = b'{"total": 3}\n'
BAD = b'{"totl": 0}\n\n'  # as long as GOOD
CHECK = "import json, sys\nsys.exit(0 if json.load(open(sys.argv[-1])).get('total') == 3 else 1)\n"


def test_a_folder_swapped_while_the_validator_runs_and_back_is_not_seen(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for folder, text in (("out", BAD), ("good", GOOD)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "report.json").write_bytes(text)
    (tmp_path / "check.py").write_text(CHECK, encoding="utf-8")
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "r", "locator": "out/report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z",
                                    "validator": {"command": [sys.executable, "check.py"]}}), encoding="utf-8")
    original: Callable[..., Any] = observe._run_named_validator

    def swapping(*args: Any) -> Any:  # the writer: the good report's folder in place of out/ while the check runs
        (tmp_path / "out").rename(tmp_path / "bad")
        (tmp_path / "good").rename(tmp_path / "out")
        try:
            return original(*args)
        finally:
            (tmp_path / "out").rename(tmp_path / "good")
            (tmp_path / "bad").rename(tmp_path / "out")

    monkeypatch.setattr(observe, "_run_named_validator", swapping)
    receipt = verify_contract_file(contract)
    assert receipt.observed_digest == hashlib.sha256(BAD).hexdigest()  # the bad report was digested …
    assert (receipt.status, receipt.validator_exit_code) == ("verified", 0)  # … and the good one checked
    monkeypatch.setattr(observe, "_run_named_validator", original)
    assert verify_contract_file(contract).status == "validator_failed"  # nobody swapping: the bad report fails


# --- oloproof_nb/_run/observe.py, _version: "a file rewritten with its modification time put back (os.utime), or
# renamed away and back, is another version". The pause stands for a validator's start (a process): a kernel with
# coarse timestamps gives two changes within one tick the same status change time.


def test_a_rewrite_with_its_time_put_back_and_a_rename_away_and_back_are_other_versions(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_bytes(BAD)
    first = os.stat(path)
    time.sleep(0.05)
    path.write_bytes(GOOD)  # as long as BAD: same size
    os.utime(path, ns=(first.st_atime_ns, first.st_mtime_ns))
    rewritten = os.stat(path)
    assert (rewritten.st_ino, rewritten.st_size, rewritten.st_mtime_ns) == (first.st_ino, first.st_size,
                                                                           first.st_mtime_ns)
    assert _version(rewritten) != _version(first)
    time.sleep(0.05)
    path.rename(tmp_path / "away")
    (tmp_path / "away").rename(path)
    assert _version(os.stat(path)) != _version(rewritten)


# --- README section 5: "A file is judged fresh by its modification time, which anyone who can write the file sets:
# `touch` on last week's report makes it fresh (…), and only `expected_sha256` pins the bytes."


def test_touch_makes_last_week_s_report_fresh_and_only_a_pinned_digest_tells(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    report = tmp_path / "out" / "report.json"
    report.write_bytes(GOOD)
    started = time.time()
    week_ago = started - 7 * 24 * 3600
    os.utime(report, (week_ago, week_ago))
    contract = tmp_path / "contract.json"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    contract.write_text(json.dumps({"artifact_id": "r", "locator": "out/report.json", "run_started_at": stamp}),
                        encoding="utf-8")
    assert verify_contract_file(contract).status == "stale"
    os.utime(report)  # touch: the bytes of last week, the time of now
    receipt = verify_contract_file(contract)
    assert (receipt.status, receipt.reason) == ("verified", "verified: present, fresh")
    other = hashlib.sha256(b'{"total": 4}\n').hexdigest()  # the digest of the report this run should have written
    contract.write_text(json.dumps({"artifact_id": "r", "locator": "out/report.json", "run_started_at": stamp,
                                    "expected_sha256": other}), encoding="utf-8")
    assert verify_contract_file(contract).status == "hash_mismatch"


# --- README section 8 and 10: `--help` of `oloproof gate` and `oloproof report` shows the `NAME=X` form.


@pytest.mark.parametrize("command", ["gate", "report"])
def test_the_help_shows_the_per_criterion_threshold(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps at the terminal's width
    assert info.value.code == 0
    assert "[--pass-threshold X|NAME=X]" in out
    assert "NAME=X, repeated, gives each criterion named its own X (the others keep the default)" in out
