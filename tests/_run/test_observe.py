"""Tests for oloproof_nb.observe: the local-file observer and contract files."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _hostile_files import SPECIAL_KINDS, bounded, make_special
from _processes import gone_within, running

from oloproof_nb._config.contracts import load_contract_file
from oloproof_nb._core.receipts import OutcomeContract, classify_outcome
from oloproof_nb._run.observe import UnobservableArtifact, observe_file, verify_contract_file
from oloproof_nb.errors import ContractFileError, DigestKeyError, OloproofError

T0 = datetime(2026, 7, 25, 14, 0, tzinfo=timezone.utc)
CONTENT = b'{"total": 4711, "marker": "ZEBRA-CONTENT-7f3a"}'
KEY = "k3y-VALUE-never-shown-9c1e"
PY = sys.executable


@pytest.fixture()
def artifact(tmp_path: Path) -> Path:
    path = tmp_path / "secret-folder-QX81" / "report-QX81.json"
    path.parent.mkdir()
    path.write_bytes(CONTENT)
    return path


def set_mtime(path: Path, when: datetime) -> None:
    ns = int(when.timestamp()) * 1_000_000_000
    os.utime(path, ns=(ns, ns))


def fixed_now() -> datetime:
    return T0 + timedelta(hours=2)


def verify(contract: OutcomeContract, path: Path, **kw: object):  # noqa: ANN201
    ev = observe_file(contract, path, now=fixed_now, **kw)  # type: ignore[arg-type]
    return ev, classify_outcome(contract, ev, run_started_at=T0)


# --------------------------------------------------------------------------- observing


def test_missing_file_gives_none_and_missing(tmp_path: Path) -> None:
    ev, r = verify(OutcomeContract(artifact_id="monthly-report"), tmp_path / "nope.json")
    assert ev is None and r.status == "missing"


def test_observation_stats_and_digests_the_file(artifact: Path) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=30))
    expected = hashlib.sha256(CONTENT).hexdigest()
    ev, r = verify(OutcomeContract(artifact_id="monthly-report", expected_sha256=expected), artifact)
    assert ev is not None
    assert ev.modified_at == datetime(2026, 7, 25, 14, 30, tzinfo=timezone.utc)
    assert ev.observed_at == fixed_now()
    assert (ev.sha256, ev.digest_kind, ev.evidence_source) == (expected, "sha256", "local_file_stat")
    assert r.status == "verified"


def test_large_file_is_digested_in_full(tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    data = os.urandom(3 * (1 << 20) + 17)  # more than two read chunks
    path.write_bytes(data)
    ev = observe_file(OutcomeContract(artifact_id="big"), path)
    assert ev is not None and ev.sha256 == hashlib.sha256(data).hexdigest()


def test_stale_when_mtime_is_before_run_start(artifact: Path) -> None:
    set_mtime(artifact, T0 - timedelta(days=1))
    _, r = verify(OutcomeContract(artifact_id="monthly-report"), artifact)
    assert r.status == "stale"


def test_wrong_bytes_give_hash_mismatch(artifact: Path) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    c = OutcomeContract(artifact_id="monthly-report", expected_sha256=hashlib.sha256(b"other").hexdigest())
    assert verify(c, artifact)[1].status == "hash_mismatch"


def test_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a regular file"):
        observe_file(OutcomeContract(artifact_id="a"), tmp_path)


def test_non_positive_timeout_is_an_error(artifact: Path) -> None:
    with pytest.raises(ValueError, match="validator_timeout_s"):
        observe_file(OutcomeContract(artifact_id="a"), artifact, validator_timeout_s=0)


# --------------------------------------------------------------------------- keyed digests


def test_keyed_digest_needs_the_key_and_differs_from_plain(artifact: Path) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    keyed = hmac.new(KEY.encode(), CONTENT, hashlib.sha256).hexdigest()
    c = OutcomeContract(artifact_id="monthly-report", expected_sha256=keyed, digest_key_env="OLOPROOF_TEST_KEY")
    ev, r = verify(c, artifact, environ={"OLOPROOF_TEST_KEY": KEY})
    assert ev is not None
    assert (ev.sha256, ev.digest_kind) == (keyed, "hmac-sha256")
    assert keyed != hashlib.sha256(CONTENT).hexdigest()
    assert r.status == "verified" and "hmac-sha256 matches" in r.reason
    # a different key gives a different digest
    _, wrong = verify(c, artifact, environ={"OLOPROOF_TEST_KEY": KEY + "x"})
    assert wrong.status == "hash_mismatch"
    for text in (repr(c), repr(ev), repr(r), json.dumps(r.to_json_dict())):
        assert KEY not in text


def test_unset_key_is_a_clear_error_naming_the_variable(artifact: Path) -> None:
    c = OutcomeContract(artifact_id="monthly-report", digest_key_env="OLOPROOF_TEST_KEY")
    with pytest.raises(DigestKeyError, match="OLOPROOF_TEST_KEY") as info:
        observe_file(c, artifact, environ={"UNRELATED": KEY})
    assert KEY not in str(info.value)
    assert isinstance(info.value, OloproofError)


# --------------------------------------------------------------------------- privacy


def test_receipt_never_holds_content_or_locator(artifact: Path) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))

    def crashing(path: Path) -> bool:
        raise RuntimeError(f"cannot parse {path}: {path.read_text()}")

    locator = "secret-folder-QX81/report-QX81.json"
    for validator in (lambda p: True, crashing):
        c = OutcomeContract(
            artifact_id="monthly-report",
            expected_sha256=hashlib.sha256(CONTENT).hexdigest(),
            validator="check",
            locator=locator,
        )
        ev, r = verify(c, artifact, validators={"check": validator})
        dumped = json.dumps(r.to_json_dict()) + repr(r) + repr(ev)
        for secret in ("ZEBRA-CONTENT-7f3a", "QX81", str(artifact), locator):
            assert secret not in dumped
    assert r.status == "unverified" and "raised RuntimeError" in r.reason


# --------------------------------------------------------------------------- validators


@pytest.mark.parametrize(
    ("returned", "status", "code"),
    [
        (True, "verified", 0),
        (None, "verified", 0),
        (0, "verified", 0),
        (False, "validator_failed", 1),
        (3, "validator_failed", 3),
    ],
)
def test_callable_validator_results(artifact: Path, returned: object, status: str, code: int) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    seen: list[Path] = []

    def check(path: Path) -> object:
        seen.append(path)
        return returned

    c = OutcomeContract(artifact_id="monthly-report", validator="report_schema_v3")
    ev, r = verify(c, artifact, validators={"report_schema_v3": check})
    assert seen == [artifact]
    assert (r.status, r.validator_exit_code, ev.validator) == (status, code, "report_schema_v3")


def test_callable_calling_sys_exit_reports_its_code(artifact: Path) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    c = OutcomeContract(artifact_id="monthly-report", validator="v")
    _, r = verify(c, artifact, validators={"v": lambda p: sys.exit(5)})
    assert (r.status, r.validator_exit_code) == ("validator_failed", 5)


@pytest.mark.parametrize(
    ("validator", "reason_part"),
    [
        (lambda p: 1 / 0, "raised ZeroDivisionError"),
        (lambda p: time.sleep(2), "timed out after 0.2s"),
        (lambda p: "yes", "returned str"),
    ],
)
def test_crashing_or_slow_callable_is_unverified(artifact: Path, validator: object, reason_part: str) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    c = OutcomeContract(artifact_id="monthly-report", validator="v")
    started = time.monotonic()
    ev, r = verify(c, artifact, validators={"v": validator}, validator_timeout_s=0.2)
    assert time.monotonic() - started < 1.5
    assert ev.validator_exit_code is None
    assert r.status == "unverified" and reason_part in r.reason


def test_unregistered_validator_is_unverified(artifact: Path) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    c = OutcomeContract(artifact_id="monthly-report", validator="report_schema_v3")
    _, r = verify(c, artifact, validators={"other": lambda p: True})
    assert r.status == "unverified" and "report_schema_v3 is not registered" in r.reason


def test_string_is_not_a_command(artifact: Path) -> None:
    c = OutcomeContract(artifact_id="monthly-report", validator="v")
    with pytest.raises(TypeError, match="list of argv strings"):
        observe_file(c, artifact, validators={"v": "python check.py"})


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("import sys; sys.exit(0 if open(sys.argv[-1]).read().startswith('{') else 4)", "verified"),
        ("import sys; sys.exit(0 if open(sys.argv[-1]).read() == 'x' else 4)", "validator_failed"),
    ],
)
def test_command_validator_gets_the_path_last(artifact: Path, code: str, status: str) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    c = OutcomeContract(artifact_id="monthly-report", validator="cmd")
    ev, r = verify(c, artifact, validators={"cmd": [PY, "-c", code]})
    assert r.status == status
    assert r.validator_exit_code == (0 if status == "verified" else 4)


def test_slow_command_is_killed_and_unverified(artifact: Path) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    c = OutcomeContract(artifact_id="monthly-report", validator="cmd")
    started = time.monotonic()
    _, r = verify(c, artifact, validators={"cmd": [PY, "-c", "import time; time.sleep(10)"]}, validator_timeout_s=0.5)
    assert time.monotonic() - started < 5
    assert r.status == "unverified" and "timed out after 0.5s" in r.reason
    assert r.validator_exit_code is None


def test_missing_or_non_executable_command_is_unverified(artifact: Path, tmp_path: Path) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    script = tmp_path / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    c = OutcomeContract(artifact_id="monthly-report", validator="cmd")
    _, r = verify(c, artifact, validators={"cmd": ["oloproof-no-such-command-x1"]})
    assert r.status == "unverified" and "not found" in r.reason
    _, r = verify(c, artifact, validators={"cmd": [str(script)]})
    assert r.status == "unverified" and "not executable" in r.reason


# --------------------------------------------------------------------------- contract files


def write_contract(folder: Path, data: object, name: str = "contract.json") -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


MINIMAL = {
    "artifact_id": "monthly-report",
    "locator": "out/report.json",
    "run_started_at": "2026-07-25T14:00:00Z",
}


def test_load_minimal_contract_file(tmp_path: Path) -> None:
    path = write_contract(tmp_path, MINIMAL)
    contract, artifact, started, command, timeout_s, max_bytes = load_contract_file(path)
    assert (timeout_s, max_bytes) == (60.0, 1 << 30)  # the documented defaults
    assert contract == OutcomeContract(artifact_id="monthly-report", locator="out/report.json")
    assert artifact == tmp_path / "out" / "report.json"
    assert started == T0 and command is None


def test_load_full_contract_file(tmp_path: Path) -> None:
    data = {
        **MINIMAL,
        "run_started_at": "2026-07-25T16:00:00+02:00",
        "expected_sha256": "a" * 64,
        "validator": {"command": ["python3", "check.py"]},
        "digest_key_env": "REPORT_KEY",
        "require_fresh": False,
    }
    contract, _, started, command, _, _ = load_contract_file(write_contract(tmp_path, data))
    assert started == T0
    assert command == ["python3", "check.py"]
    assert (contract.validator, contract.digest_key_env, contract.require_fresh) == (
        "command",
        "REPORT_KEY",
        False,
    )


@pytest.mark.parametrize(
    ("data", "key_part"),
    [
        ("{not json", "not valid JSON (line 1"),
        ([1, 2], "must be a JSON object"),
        ({k: v for k, v in MINIMAL.items() if k != "locator"}, "missing required key 'locator'"),
        ({**MINIMAL, "path": "x"}, "unknown key 'path'"),
        ({**MINIMAL, "run_started_at": "2026-07-25T14:00:00"}, "key 'run_started_at'"),
        ({**MINIMAL, "run_started_at": "yesterday"}, "key 'run_started_at'"),
        ({**MINIMAL, "run_started_at": 1753452000}, "key 'run_started_at'"),
        ({**MINIMAL, "artifact_id": ""}, "key 'artifact_id'"),
        ({**MINIMAL, "locator": 3}, "key 'locator'"),
        ({**MINIMAL, "require_fresh": "yes"}, "key 'require_fresh' must be true or false"),
        ({**MINIMAL, "expected_sha256": "ABC"}, "key 'expected_sha256'"),
        ({**MINIMAL, "expected_sha256": 12}, "key 'expected_sha256'"),
        ({**MINIMAL, "digest_key_env": "has space"}, "key 'digest_key_env'"),
        ({**MINIMAL, "validator": {"command": []}}, "key 'validator' must be null, a registered validator name, or "
                                                    '{"command": ["program", "arg", ...]}; its \'command\' must be'),
        ({**MINIMAL, "validator": {"command": "python3 check.py"}}, "its 'command' must be a non-empty list"),
        ({**MINIMAL, "validator": {"cmd": ["x"]}}, "'cmd' is not one of its keys"),
        ({**MINIMAL, "validator": 7}, "key 'validator'"),
        ('{"artifact_id": "a", "artifact_id": "b"}', "key 'artifact_id' appears twice"),
    ],
)
def test_contract_file_errors_name_file_and_key(tmp_path: Path, data: object, key_part: str) -> None:
    path = write_contract(tmp_path, data)
    with pytest.raises(ContractFileError) as info:
        load_contract_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert key_part in message
    assert "\n" not in message
    assert isinstance(info.value, ValueError)


def test_unreadable_contract_file(tmp_path: Path) -> None:
    with pytest.raises(ContractFileError, match="cannot read contract file"):
        load_contract_file(tmp_path / "absent.json")


def test_verify_contract_file_runs_command_in_the_contract_folder(tmp_path: Path) -> None:
    (tmp_path / "check.py").write_text(
        "import json, sys\nsys.exit(0 if json.load(open(sys.argv[-1]))['total'] == 4711 else 1)\n"
    )
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    report.write_bytes(CONTENT)
    set_mtime(report, T0 + timedelta(minutes=3))
    data = {
        **MINIMAL,
        "expected_sha256": hashlib.sha256(CONTENT).hexdigest(),
        "validator": {"command": [PY, "check.py"]},
    }
    r = verify_contract_file(write_contract(tmp_path, data), now=fixed_now)
    assert r.status == "verified"
    assert (r.validator, r.validator_exit_code) == ("command", 0)
    assert "out/report.json" not in json.dumps(r.to_json_dict())

    set_mtime(report, T0 - timedelta(minutes=3))
    assert verify_contract_file(tmp_path / "contract.json").status == "stale"
    report.unlink()
    assert verify_contract_file(tmp_path / "contract.json").status == "missing"


def test_verify_contract_file_with_registered_validator_name(tmp_path: Path) -> None:
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    report.write_bytes(CONTENT)
    set_mtime(report, T0 + timedelta(minutes=3))
    path = write_contract(tmp_path, {**MINIMAL, "validator": "report_schema_v3"})
    r = verify_contract_file(path, validators={"report_schema_v3": lambda p: False})
    assert (r.status, r.validator, r.validator_exit_code) == ("validator_failed", "report_schema_v3", 1)
    # nothing registered under that name: it could never verify, so the file is wrong, not the artifact (it was
    # an "unverified" receipt, and `oloproof receipt` printed it as one, not as a contract error)
    with pytest.raises(ContractFileError, match=r"key 'validator': 'report_schema_v3' is not a registered "
                                                r"validator \(registered: none\); give the check as"):
        verify_contract_file(path)


# --------------------------------------------------------------------------- hostile locators


SPECIAL_REASONS = {"fifo": "is a named pipe (FIFO), not a regular file",
                   "dir": "is a directory, not a regular file",
                   "device": "is a character device, not a regular file"}


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_a_locator_that_is_not_a_regular_file_is_unobservable_without_blocking(tmp_path: Path, kind: str) -> None:
    """Before: a FIFO or /dev/zero behind a locator was opened and read (a hang, or an endless digest)."""
    target = make_special(tmp_path / "out" / "report.json", kind)
    with pytest.raises(UnobservableArtifact) as info:
        bounded(lambda: observe_file(OutcomeContract(artifact_id="a"), target), 5, unblock=[target])
    assert info.value.reason == SPECIAL_REASONS[kind]
    assert str(tmp_path) not in str(info.value)  # never the path: receipts hold no locator
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_verify_contract_file_makes_a_special_locator_unverified(tmp_path: Path, kind: str) -> None:
    """Before: `oloproof receipt` on a directory or FIFO locator ended in a ValueError traceback."""
    target = make_special(tmp_path / "out" / "report.json", kind)
    r = bounded(lambda: verify_contract_file(write_contract(tmp_path, MINIMAL), now=fixed_now), 5, unblock=[target])
    assert (r.status, r.reason) == ("unverified", f"unverified: the artifact {SPECIAL_REASONS[kind]}")
    assert r.observed_digest is None


def test_an_8_gb_artifact_is_not_read(tmp_path: Path) -> None:
    """Before: hashed in full outside any timeout (about 5 s here: benchmarks/hostile.py); now refused by its size."""
    path = tmp_path / "huge.bin"
    with path.open("wb") as fh:
        fh.truncate(8 << 30)  # sparse: takes no disk
    started = time.monotonic()
    with pytest.raises(UnobservableArtifact) as info:
        bounded(lambda: observe_file(OutcomeContract(artifact_id="a"), path), 5)
    assert time.monotonic() - started < 1
    assert info.value.reason == "is 8589934592 bytes, more than max_artifact_bytes=1073741824"


def test_the_size_cap_is_inclusive(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 1000)
    ev = observe_file(OutcomeContract(artifact_id="a"), path, max_artifact_bytes=1000)
    assert ev is not None and ev.sha256 == hashlib.sha256(b"x" * 1000).hexdigest()
    with pytest.raises(UnobservableArtifact, match="is 1000 bytes, more than max_artifact_bytes=999"):
        observe_file(OutcomeContract(artifact_id="a"), path, max_artifact_bytes=999)


def _open_on(path: Path) -> bool:
    """Whether this process still has ``path`` open (the reader thread has not let go of it)."""
    target = str(path.resolve())
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == target:
                return True
        except OSError:
            continue
    return False


def test_reading_stops_at_the_time_budget(tmp_path: Path) -> None:
    """A 512 MB file under a 0.1 s budget: unverified at once, and the abandoned read lets go of the file."""
    path = tmp_path / "slow.bin"
    with path.open("wb") as fh:
        fh.truncate(512 << 20)
    started = time.monotonic()
    with pytest.raises(UnobservableArtifact) as info:
        observe_file(OutcomeContract(artifact_id="a"), path, observe_timeout_s=0.1)
    assert time.monotonic() - started < 1
    assert info.value.reason == "was not read within observe_timeout_s=0.1s"
    deadline = time.monotonic() + 2
    while _open_on(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _open_on(path)  # the read stopped at its next chunk instead of digesting the rest


@pytest.mark.parametrize(("kw", "words"), [({"observe_timeout_s": 0}, "observe_timeout_s"),
                                            ({"max_artifact_bytes": 0}, "max_artifact_bytes"),
                                            ({"max_artifact_bytes": 1.5}, "max_artifact_bytes")])
def test_bad_limits_are_errors(artifact: Path, kw: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        observe_file(OutcomeContract(artifact_id="a"), artifact, **kw)


# --------------------------------------------------------------------------- validator processes


FORKING_VALIDATOR = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(60)
"""


def test_a_timed_out_validator_is_killed_with_the_children_it_forked(artifact: Path, tmp_path: Path) -> None:
    """Before: only the validator was killed; its child kept running after the receipt was written."""
    set_mtime(artifact, T0 + timedelta(minutes=1))
    pid_file = tmp_path / "child.pid"
    c = OutcomeContract(artifact_id="monthly-report", validator="cmd")
    _, r = verify(c, artifact, validators={"cmd": [PY, "-c", FORKING_VALIDATOR, str(pid_file)]},
                  validator_timeout_s=1.0)
    assert r.status == "unverified" and "timed out after 1s" in r.reason
    child = int(pid_file.read_text())
    try:
        assert gone_within(child, 3.0)
    finally:
        if running(child):
            os.kill(child, 9)


LEAVING_VALIDATOR = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(1.5); open(sys.argv[1], 'w').write('x')",
                          sys.argv[-1]])
open(sys.argv[1], "w").write(str(child.pid))
"""


def test_a_validator_that_exits_0_leaves_nothing_running(artifact: Path, tmp_path: Path) -> None:
    """Before: a validator that forked a child and exited 0 got 'verified', and the child, still running, rewrote
    the artifact after the verdict (only a timed-out validator's group was killed). Now its group goes with it."""
    set_mtime(artifact, T0 + timedelta(minutes=1))
    before = artifact.read_bytes()
    pid_file = tmp_path / "child.pid"
    c = OutcomeContract(artifact_id="monthly-report", validator="cmd")
    _, r = verify(c, artifact, validators={"cmd": [PY, "-c", LEAVING_VALIDATOR, str(pid_file)]})
    assert r.status == "verified"
    child = int(pid_file.read_text())
    try:
        assert gone_within(child, 3.0)  # an ended child writes no more: had it lived to write, the write is seen now
        assert artifact.read_bytes() == before
    finally:
        if running(child):
            os.kill(child, 9)


def test_a_validator_whose_exit_status_cannot_be_read_is_unverified(artifact: Path) -> None:
    """A host program that ignores SIGCHLD: the kernel reaps the validator at once and Popen reports 0, so a
    validator that exits 1 verified the artifact. Now the validator is not run and the receipt is unverified."""
    set_mtime(artifact, T0 + timedelta(minutes=1))
    c = OutcomeContract(artifact_id="monthly-report", validator="cmd")
    failing = {"cmd": [PY, "-c", "raise SystemExit(1)"]}
    assert verify(c, artifact, validators=failing)[1].status == "validator_failed"
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        _, r = verify(c, artifact, validators=failing)
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert r.status == "unverified" and "ignores SIGCHLD" in r.reason


ENV_VALIDATOR = """
import json, os, sys
json.dump([os.environ.get("OLOPROOF_TEST_KEY"), os.environ.get("OLOPROOF_OTHER")], open(sys.argv[1], "w"))
"""


def test_a_command_validator_never_sees_the_hmac_key(artifact: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the validator inherited the whole environment, the digest key included."""
    monkeypatch.setenv("OLOPROOF_TEST_KEY", KEY)
    monkeypatch.setenv("OLOPROOF_OTHER", "other")
    set_mtime(artifact, T0 + timedelta(minutes=1))
    seen = tmp_path / "seen.json"
    c = OutcomeContract(artifact_id="monthly-report", validator="cmd", digest_key_env="OLOPROOF_TEST_KEY")
    ev, r = verify(c, artifact, validators={"cmd": [PY, "-c", ENV_VALIDATOR, str(seen)]})
    assert r.status == "verified" and ev is not None and ev.digest_kind == "hmac-sha256"  # the key was used
    assert json.loads(seen.read_text()) == [None, "other"]
    assert os.environ["OLOPROOF_TEST_KEY"] == KEY  # this process keeps it


# --------------------------------------------------------------------------- during a run


OUTCOME_CASES_SYSTEM = """
class Quiet:
    def reset(self, state):
        pass

    def snapshot(self):
        return {}

    def run(self, input):
        return {"steps": [], "answer": "done", "status": "completed"}
"""


def test_a_run_with_hostile_locators_finishes_with_reasons(make_suite: Any, tmp_path: Path) -> None:
    """FIFO, directory, device and oversized locators: every receipt unverified with its reason, no hang."""
    names = {"fifo": "fifo.json", "dir": "dir.json", "device": "dev.json"}
    cases = [{"id": kind, "input": {}, "outcome": {"artifact_id": kind, "locator": f"out/{name}",
                                                   "require_fresh": False}} for kind, name in names.items()]
    cases += [{"id": "at-cap", "input": {}, "outcome": {"artifact_id": "c", "locator": "out/cap.bin",
                                                        "require_fresh": False}},
              {"id": "over-cap", "input": {}, "outcome": {"artifact_id": "o", "locator": "out/over.bin",
                                                          "require_fresh": False}}]
    root = make_suite(cases, system="sysmod:Quiet", system_code=OUTCOME_CASES_SYSTEM,
                      evaluators=[{"type": "outcome_contract", "max_artifact_bytes": 64, "observe_timeout_s": 5}])
    specials = [make_special(root / "out" / name, kind) for kind, name in names.items()]
    (root / "out" / "cap.bin").write_bytes(b"x" * 64)
    (root / "out" / "over.bin").write_bytes(b"x" * 65)
    import oloproof_nb as op

    run = bounded(lambda: op.run(op.load_suite(root), out=tmp_path / "run", progress=False), 30, unblock=specials)
    reasons = dict(zip(run.receipts["case_id"], run.receipts["reason"], strict=True))
    statuses = dict(zip(run.receipts["case_id"], run.receipts["status"], strict=True))
    for kind in names:
        assert (statuses[kind], reasons[kind]) == ("unverified", f"unverified: the artifact {SPECIAL_REASONS[kind]}")
    assert statuses["at-cap"] == "verified"
    assert reasons["over-cap"] == "unverified: the artifact is 65 bytes, more than max_artifact_bytes=64"
    assert str(root / "out") not in json.dumps(run.receipts.astype(str).to_dict())


def test_the_outcome_evaluator_limits_are_strict_and_documented() -> None:
    from oloproof_nb.evaluators.outcome import OutcomeContractEvaluator

    ev = OutcomeContractEvaluator(type="outcome_contract")
    assert (ev.observe_timeout_s, ev.max_artifact_bytes) == (60.0, 1 << 30)
    for bad in ({"observe_timeout_s": 0}, {"observe_timeout_s": float("inf")}, {"max_artifact_bytes": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):  # the message names the setting
            OutcomeContractEvaluator(type="outcome_contract", **bad)


# --------------------------------------------------------------------------- one version of the file


def test_a_file_replaced_while_its_validator_runs_is_unverified(artifact: Path, tmp_path: Path) -> None:
    # The validator is given the path, not the bytes digested: an old, valid report moved into place after the
    # digest (here by the validator itself, as deterministic stand-in for a racing process) would otherwise
    # be validated, and the receipt's fresh time and digest would be of the file that was there before.
    old = tmp_path / "old-valid.json"
    old.write_bytes(CONTENT)
    set_mtime(old, T0 - timedelta(days=30))
    artifact.write_bytes(b"not json at all")
    set_mtime(artifact, T0 + timedelta(minutes=5))

    def swap_then_check(path: Path) -> bool:
        os.replace(old, path)
        return "total" in json.loads(path.read_text(encoding="utf-8"))

    contract = OutcomeContract(artifact_id="monthly-report", validator="schema")
    with pytest.raises(UnobservableArtifact, match="replaced or changed while its validator ran"):
        observe_file(contract, artifact, validators={"schema": swap_then_check}, now=fixed_now)
    # the same validator on a file left alone: verified (the check above is about the swap, not the validator)
    artifact.write_bytes(CONTENT)
    set_mtime(artifact, T0 + timedelta(minutes=5))
    _, r = verify(contract, artifact, validators={"schema": lambda p: "total" in json.loads(p.read_text())})
    assert r.status == "verified"


def test_a_file_that_grows_while_it_is_read_is_unobservable(artifact: Path) -> None:
    # the observation time is taken between the open and the read: appending there is a writer still at work
    def now_while_written() -> datetime:
        with artifact.open("ab") as handle:
            handle.write(b" and more")
        return fixed_now()

    with pytest.raises(UnobservableArtifact, match="changed while it was read"):
        observe_file(OutcomeContract(artifact_id="monthly-report"), artifact, now=now_while_written)


def _far_mtime_file(tmp_path: Path, ns: int) -> Path | None:
    """A file whose modification time is ``ns``, on a file system that holds it (tmpfs does; ext4 clamps)."""
    for folder in (tmp_path, Path("/dev/shm")):
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            continue
        path = folder / f"far-mtime-{os.getpid()}-{ns}.json"
        path.write_bytes(CONTENT)
        try:
            os.utime(path, ns=(ns, ns))
            if os.stat(path).st_mtime_ns == ns:
                return path
        except OSError:
            pass
        path.unlink()
    return None


@pytest.mark.parametrize("ns", [253_402_300_800 * 10**9, -62_135_596_801 * 10**9], ids=["year-10000", "year-0"])
def test_a_modification_time_outside_datetime_is_unverified(tmp_path: Path, ns: int) -> None:
    path = _far_mtime_file(tmp_path, ns)
    if path is None:
        pytest.skip("no writable file system here holds a modification time outside the years 1-9999")
    try:
        contract = tmp_path / "contract.json"
        contract.write_text(json.dumps({"artifact_id": "a", "locator": str(path),
                                        "run_started_at": "2026-07-25T14:00:00Z"}), encoding="utf-8")
        r = verify_contract_file(contract)
        assert (r.status, r.reason) == ("unverified",
                                        "unverified: the artifact has a modification time outside the years 1–9999")
    finally:
        path.unlink()


def test_what_cases_share_is_their_locator_or_else_their_artifact(tmp_path: Path) -> None:
    """Cases of one artifact id at their own locators go side by side (every case of an artifact id waited for
    the others: 8 cases of 0.5 s on 4 workers took 4.7 s, 1.4 s before); without a locator the artifact id is what
    they share (a system that places its files itself); without an outcome check, nothing."""
    from oloproof_nb._core.case import Case, case_from_mapping
    from oloproof_nb._run.observe import OBSERVES, shared_files
    from oloproof_nb.evaluators.outcome import OutcomeContractEvaluator

    check = [OutcomeContractEvaluator(type="outcome_contract")]

    def case(cid: str, **outcome: str) -> Case:
        return case_from_mapping({"id": cid, "input": {}, "outcome": {"artifact_id": "report", **outcome}})

    def files(c: Case, evaluators: list[Any]) -> frozenset[str]:  # without OBSERVES (test_observe_unobserved_cases)
        return shared_files(c, evaluators, tmp_path) - {OBSERVES}

    a = files(case("a", locator="out/a.json"), check)
    b = files(case("b", locator="out/b.json"), check)
    assert a == {str((tmp_path / "out" / "a.json").resolve())} and not a & b
    assert files(case("c", locator="out/./a.json"), check) == a  # one file, however written
    assert files(case("d"), check) == files(case("e"), check) == {"artifact:report"}
    assert shared_files(case("f", locator="out/a.json"), [], tmp_path) == frozenset()


def test_a_file_rewritten_in_place_to_the_same_size_while_its_validator_runs_is_unverified(artifact: Path) -> None:
    # same device, inode and size, a new modification time: another version of the file than the one digested
    # (the docstring names all four); the stale bytes' digest must not be paired with the new bytes' validation
    artifact.write_bytes(b'{"total": 1}')
    set_mtime(artifact, T0 + timedelta(minutes=5))

    def rewrite_then_check(path: Path) -> bool:
        path.write_bytes(b'{"total": 2}')  # 12 bytes, as before, into the same inode
        set_mtime(path, T0 + timedelta(minutes=6))
        return True

    contract = OutcomeContract(artifact_id="monthly-report", validator="schema")
    with pytest.raises(UnobservableArtifact, match="replaced or changed while its validator ran"):
        observe_file(contract, artifact, validators={"schema": rewrite_then_check}, now=fixed_now)


def test_a_command_validator_ended_by_the_os_gives_no_exit_code(artifact: Path) -> None:
    # Evidence: validator_exit_code is None "when it did not run to completion"; a command ended by SIGKILL
    # (Popen's return code -9) did not, so the receipt is unverified, not validator_failed with exit -9
    c = OutcomeContract(artifact_id="monthly-report", validator="cmd")
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    ev, r = verify(c, artifact, validators={"cmd": [PY, "-c", code]})
    assert ev is not None and ev.validator_exit_code is None
    assert ev.validator_error == f"validator cmd ({os.path.basename(PY)}) was killed by signal 9"
    assert r.status == "unverified"


# --------------------------------------------------------------------------- holding back cases that share a file


def test_an_item_waits_behind_an_earlier_waiting_item_that_shares_a_key() -> None:
    from oloproof_nb._run.observe import HeldBack

    # x holds a and b; a is running, so x waits. y (b) and z (b) share b with x: they wait behind it, in order,
    # though b itself is not running; w (c) shares nothing and goes ahead
    keys = {"x": frozenset("ab"), "y": frozenset("b"), "z": frozenset("b"), "w": frozenset("c")}
    held = HeldBack(["x", "y", "z", "w"], keys.__getitem__)
    busy = {"a"}
    assert held.next_free(busy.__contains__) == ("w", keys["w"])  # x, y, z read and held back
    assert held.next_free(busy.__contains__) is None  # y is no freer on a second look: x is still ahead of it
    busy.clear()
    assert [held.next_free(busy.__contains__) for _ in range(3)] == [("x", keys["x"]), ("y", keys["y"]),
                                                                       ("z", keys["z"])]
    assert held.done


def test_at_most_max_waiting_items_are_held_back() -> None:
    from oloproof_nb._run.observe import MAX_WAITING, HeldBack

    read: list[int] = []

    def items() -> Iterator[int]:  # a generator that counts what was taken from it
        for i in range(MAX_WAITING + 500):
            read.append(i)
            yield i

    held = HeldBack(items(), lambda item: frozenset(["one file"]))
    assert held.next_free(lambda key: True) is None
    assert len(read) == MAX_WAITING == 1024 and not held.exhausted


def test_a_validator_run_after_a_case_gets_the_case_timeout(artifact: Path) -> None:
    # collect_evidence: "its validator runs under timeout_s (the case timeout)", not the 60 s default
    from oloproof_nb._run.observe import collect_evidence

    def slow(path: Path) -> bool:
        time.sleep(1.5)
        return True

    contract = OutcomeContract(artifact_id="monthly-report", validator="slow", locator=artifact.name)
    started = time.monotonic()
    evidence, why = collect_evidence(contract, object(), call=lambda f: f(), validators={"slow": slow},
                                     timeout_s=0.2, suite_root=artifact.parent)
    assert why is None and evidence is not None
    assert (evidence.validator_exit_code, evidence.validator_error) == (None, "validator slow timed out after 0.2s")
    assert time.monotonic() - started < 1.4


# --------------------------------------------------------------------------- edges no other test pins


@pytest.mark.parametrize(
    ("returned", "status", "code"),
    [
        (np.array([1, 2]).all(), "verified", 0),  # np.True_: what ``(df.x > 0).all()`` returns
        (np.array([1, 0]).all(), "validator_failed", 1),
        (np.int64(3), "validator_failed", 3),
        (np.int32(0), "verified", 0),
    ],
)
def test_a_validator_returning_numpy_bools_or_ints_is_read_like_python_ones(
        artifact: Path, returned: object, status: str, code: int) -> None:
    # before: "validator v returned bool; expected bool, int or None" and an unverified receipt
    set_mtime(artifact, T0 + timedelta(minutes=1))
    assert type(returned).__module__ == "numpy"
    c = OutcomeContract(artifact_id="monthly-report", validator="v")
    ev, r = verify(c, artifact, validators={"v": lambda p: returned})
    assert (r.status, ev.validator_exit_code, ev.validator_error) == (status, code, None)


def test_a_file_removed_while_its_validator_runs_is_unverified(artifact: Path) -> None:
    """A validator (or a racing process) that removes the artifact after it was digested: what was digested is no
    longer there, so the receipt cannot say the validator's result and the digest are of one file."""
    set_mtime(artifact, T0 + timedelta(minutes=5))
    contract = OutcomeContract(artifact_id="monthly-report", validator="schema")

    def check_then_remove(path: Path) -> bool:
        ok = "total" in json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
        return ok

    with pytest.raises(UnobservableArtifact, match="replaced or changed while its validator ran"):
        observe_file(contract, artifact, validators={"schema": check_then_remove}, now=fixed_now)
    assert not artifact.exists()


@pytest.mark.parametrize(
    ("code", "status", "exit_code", "error"),
    [
        (None, "verified", 0, None),  # sys.exit(): a process exits 0
        (True, "validator_failed", 1, None),  # sys.exit(True): exit status 1, as Python's own
        ("not a report", "unverified", None, "validator v raised SystemExit"),  # text: no exit code to read
    ],
)
def test_a_callable_validator_calling_sys_exit_without_a_number(artifact: Path, code: object, status: str,
                                                                    exit_code: int | None, error: str | None) -> None:
    set_mtime(artifact, T0 + timedelta(minutes=1))
    c = OutcomeContract(artifact_id="monthly-report", validator="v")
    ev, r = verify(c, artifact, validators={"v": lambda p: sys.exit(code)})
    assert (r.status, ev.validator_exit_code, ev.validator_error) == (status, exit_code, error)


@pytest.mark.parametrize(("given", "source"), [({}, "system_observe"),
                                               ({"evidence_source": "vendor_api"}, "vendor_api")])
def test_an_observe_dict_keeps_its_own_evidence_source_and_defaults_to_system_observe(
        given: dict[str, str], source: str) -> None:
    from oloproof_nb._run.observe import collect_evidence

    class Reports:
        def observe(self, artifact_id: str) -> dict[str, Any]:
            return {"artifact_id": artifact_id, "observed_at": fixed_now(), "sha256": "ab" * 32, **given}

    evidence, why = collect_evidence(OutcomeContract(artifact_id="monthly-report"), Reports(), call=lambda f: f(),
                                     validators={}, timeout_s=None, suite_root=None)
    assert why is None and evidence is not None
    assert (evidence.artifact_id, evidence.evidence_source) == ("monthly-report", source)


@pytest.mark.parametrize("as_evidence", [False, True])
def test_a_systems_own_evidence_never_reads_as_the_toolkits_file_observer(as_evidence: bool) -> None:
    """A system's ``observe()`` that names its evidence ``local_file_stat`` (no file there at all, its
    own digest and validator result) gave a receipt that read as one the toolkit stat'ed, digested and validated
    itself. That name is the toolkit's own observer's: a system's evidence keeping it reads ``system_observe``, as
    the evidence of a path the system returns does; any other name it gives is kept."""
    from oloproof_nb._core.receipts import Evidence
    from oloproof_nb._run.observe import collect_evidence

    fields = {"artifact_id": "monthly-report", "observed_at": datetime.now(timezone.utc), "sha256": "ab" * 32,
              "evidence_source": "local_file_stat"}

    class Reports:
        def observe(self, artifact_id: str) -> Any:
            return Evidence(**fields) if as_evidence else fields

    evidence, why = collect_evidence(OutcomeContract(artifact_id="monthly-report"), Reports(), call=lambda f: f(),
                                     validators={}, timeout_s=None, suite_root=None)
    assert why is None and evidence is not None
    assert (evidence.evidence_source, evidence.sha256) == ("system_observe", "ab" * 32)


@pytest.mark.parametrize("ahead_s", [3600.0, 3.0])
def test_evidence_observed_by_a_clock_ahead_of_this_machines_shows_no_freshness(ahead_s: float) -> None:
    """A system's ``observe()`` reads a row's time and its own ``now`` from a database whose clock runs
    ahead of this machine's (an hour; 3 s). A row an earlier run wrote before this run started reads, by that
    clock, as written after the start and no later than the observation the system reports: it was ``verified``
    (an hour ahead, end to end: 3 of 3 cases whose agent wrote nothing). A file's time is checked against this
    machine's clock (more than 2 s ahead: ``unverified``); an observation reported more than 2 s after this
    machine's clock gets the same."""
    from oloproof_nb._run.observe import collect_evidence

    class Refunds:
        def observe(self, artifact_id: str) -> dict[str, Any]:
            db_now = datetime.now(timezone.utc) + timedelta(seconds=ahead_s)
            return {"artifact_id": artifact_id, "observed_at": db_now, "modified_at": db_now - timedelta(seconds=1),
                    "sha256": "ab" * 32, "evidence_source": "sqlite_refunds"}

    evidence, why = collect_evidence(OutcomeContract(artifact_id="refund-57"), Refunds(), call=lambda f: f(),
                                     validators={}, timeout_s=None, suite_root=None)
    assert evidence is None
    assert why is not None and why.startswith("observe() reported an observation at ")
    assert "after this machine's clock" in why


@pytest.mark.parametrize("as_evidence", [False, True])
@pytest.mark.parametrize(("after_s", "refused"), [(-3600.0, False), (0.0, False), (2.0, False), (2.000001, True)])
def test_a_systems_observation_is_refused_only_when_more_than_two_seconds_after_this_machines_clock(
        monkeypatch: pytest.MonkeyPatch, as_evidence: bool, after_s: float, refused: bool) -> None:
    """On a frozen clock: an observation an hour before now, at now, or exactly
    FUTURE_MTIME_TOLERANCE (2 s) after now is the system's own evidence; one a microsecond later is refused; the
    same whether ``observe()`` returns an Evidence or a dict of its fields."""
    from oloproof_nb._core.receipts import FUTURE_MTIME_TOLERANCE, Evidence
    from oloproof_nb._run.observe import collect_evidence

    assert FUTURE_MTIME_TOLERANCE == timedelta(seconds=2)
    monkeypatch.setattr("oloproof_nb._run.observe.utc_now", lambda: T0)
    seen = T0 + timedelta(seconds=after_s)
    fields = {"artifact_id": "refund-57", "observed_at": seen, "modified_at": T0 - timedelta(hours=2),
              "sha256": "ab" * 32, "evidence_source": "sqlite_refunds"}

    class Refunds:
        def observe(self, artifact_id: str) -> Any:
            return Evidence(**fields) if as_evidence else fields

    evidence, why = collect_evidence(OutcomeContract(artifact_id="refund-57"), Refunds(), call=lambda f: f(),
                                     validators={}, timeout_s=None, suite_root=None)
    if refused:
        assert evidence is None and why is not None and "after this machine's clock" in why
    else:
        assert why is None and evidence is not None and evidence.observed_at == seen


def test_a_relative_path_a_systems_observe_returns_is_read_from_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README section 5: a relative path from ``observe()`` is observed from the process's working directory
    (where the system's own relative paths point), not from the suite folder: the digest is the working
    directory's file's, hashed here by hand, beside a decoy of the same name in the suite folder."""
    from oloproof_nb._run.observe import collect_evidence

    work, suite = tmp_path / "work", tmp_path / "suite"
    for folder, text in ((work, b"the agent's report"), (suite, b"a decoy")):
        (folder / "out").mkdir(parents=True)
        (folder / "out" / "report.json").write_bytes(text)
    monkeypatch.chdir(work)

    class Reports:
        def observe(self, artifact_id: str) -> Path:
            return Path("out/report.json")

    evidence, why = collect_evidence(OutcomeContract(artifact_id="report"), Reports(), call=lambda f: f(),
                                     validators={}, timeout_s=None, suite_root=suite)
    assert why is None and evidence is not None
    assert evidence.sha256 == hashlib.sha256(b"the agent's report").hexdigest()
