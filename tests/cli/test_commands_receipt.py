"""``oloproof receipt CONTRACT.json`` on real files, and the CLI's errors for outcome configuration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _hostile_files import SPECIAL_KINDS, bounded, make_special
from _outcome_systems import CONTENT_SENTINEL, LOCATOR_SENTINEL, OUTCOME_SYSTEM, case, write_checks
from _reliability_systems import one_error_line

from oloproof_nb.cli import main

PY = sys.executable
CONTENT = ('{"marker": "' + CONTENT_SENTINEL + '", "total": 3}\n').encode("utf-8")
# printf '{"marker": "CONTENT-SENTINEL-4f7z", "total": 3}\n' | sha256sum
CONTENT_SHA256 = "f5976e09954710ebf51876f454492d81c2be3b02eadcbbeccba5b78ac52a3278"
STARTED = "2026-07-25T14:00:00Z"
AFTER = 1785074400.0  # 2026-07-26T14:00:00Z, a day after STARTED
BEFORE = 1784901600.0  # 2026-07-24T14:00:00Z, a day before
CHECK = "import json, sys\nsys.exit(0 if 'total' in json.load(open(sys.argv[-1])) else 3)\n"


def make_contract(folder: Path, *, write: bool = True, mtime: float = AFTER, content: bytes = CONTENT,
                  **fields: Any) -> Path:
    """An artifact under a sentinel-named folder and a contract file next to that folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "check.py").write_text(CHECK, encoding="utf-8")
    artifact = folder / LOCATOR_SENTINEL / "report.json"
    if write:
        artifact.parent.mkdir(exist_ok=True)
        artifact.write_bytes(content)
        os.utime(artifact, (mtime, mtime))
    body = {"artifact_id": "monthly-report", "locator": f"{LOCATOR_SENTINEL}/report.json",
            "run_started_at": STARTED, **fields}
    path = folder / "contract.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def receipt_cli(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["receipt", str(path)])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def assert_no_leak(*texts: str) -> None:
    for text in texts:
        assert LOCATOR_SENTINEL not in text
        assert CONTENT_SENTINEL not in text


def test_verified_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make_contract(tmp_path, expected_sha256=CONTENT_SHA256, validator={"command": [PY, "check.py"]})
    code, receipt, err = receipt_cli(path, capsys)
    assert code == 0
    assert (receipt["status"], receipt["observed_digest"], receipt["validator_exit_code"]) == (
        "verified", CONTENT_SHA256, 0)
    assert receipt["evidence_source"] == "local_file_stat"
    assert err == ""
    assert_no_leak(json.dumps(receipt), err)


@pytest.mark.parametrize(
    ("kwargs", "status"),
    [
        ({"write": False}, "missing"),
        ({"mtime": BEFORE}, "stale"),
        ({"expected_sha256": "0" * 64}, "hash_mismatch"),
        ({"content": b'{"marker": "' + CONTENT_SENTINEL.encode() + b'"}\n',
          "validator": {"command": [PY, "check.py"]}}, "validator_failed"),
        ({"validator": {"command": ["no-such-program-8x1"]}}, "unverified"),
        ({"mtime": BEFORE, "expected_sha256": "0" * 64}, "stale"),  # stale wins over a mismatch
    ],
)
def test_every_failure_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], kwargs: dict[str, Any],
                               status: str) -> None:
    path = make_contract(tmp_path, **kwargs)
    code, receipt, err = receipt_cli(path, capsys)
    assert (code, receipt["status"]) == (2, status)
    assert receipt["reason"].startswith(f"{status}:")
    assert_no_leak(json.dumps(receipt), err)


def test_console_script_exit_codes_in_a_subprocess(tmp_path: Path) -> None:
    good = make_contract(tmp_path / "good")
    gone = make_contract(tmp_path / "gone", write=False)
    script = [PY, "-m", "oloproof_nb.cli", "receipt"]
    done = subprocess.run([*script, str(good)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "verified"
    done = subprocess.run([*script, str(gone)], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and json.loads(done.stdout)["status"] == "missing"
    assert_no_leak(done.stdout, done.stderr)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"artifact_id": "a", "locator": "x", "run_started_at": STARTED, "path": "y"}),
         "unknown key 'path'"),
        (json.dumps({"artifact_id": "a", "locator": "x"}), "missing required key 'run_started_at'"),
        (json.dumps({"artifact_id": "a", "locator": "x", "run_started_at": "yesterday"}), "run_started_at"),
    ],
)
def test_bad_contract_file_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                 words: str) -> None:
    path = tmp_path / "contract.json"
    path.write_text(text, encoding="utf-8")
    code = main(["receipt", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err and words in err
    assert "Traceback" not in err


def test_an_empty_contract_path_is_a_contract_error_and_json_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof receipt "$CONTRACT" --json`` with the variable unset gave ``{"error": "contract error",
    ...}`` on stdout (naming ``.``); a later fix refused the empty path in argparse, which printed nothing on stdout
    and a third kind of error line, where the hook's reader expects one JSON line. It is a contract error naming the
    argument, in both forms."""
    monkeypatch.chdir(tmp_path)
    said = "argument contract: an empty path names no file or folder (an unset shell variable?); give a path"
    assert main(["receipt", "", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out.splitlines() == [json.dumps({"error": "contract error", "message": said})]
    assert one_error_line(err) == f"oloproof: error: contract error: {said}"
    assert main(["receipt", ""]) == 2
    out, err = capsys.readouterr()
    assert out == "" and one_error_line(err) == f"oloproof: error: contract error: {said}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"artifact_id": ' * 50_000 + "1" + "}" * 50_000, "not valid JSON: nested too deeply"),
        ('{"artifact_id": ' + "9" * 5000 + "}", "not valid JSON: a number of more than 4,300 digits"),
        ('{"artifact_id": "a", "locator": "x", "run_started_at": ' + "7" * 4000 + "}", "key 'run_started_at'"),
        (json.dumps({"artifact_id": "a", "locator": "x", "run_started_at": STARTED, "expected_sha256": "y" * 10**5}),
         "key 'expected_sha256'"),
        ('{"artifact_id": "a", "locator": "x", "run_started_at": "' + STARTED + '", "observe_timeout_s": 1e999}',
         "key 'observe_timeout_s'"),
    ],
)
def test_deep_huge_or_long_contracts_exit_2_with_one_short_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                text: str, words: str) -> None:
    """Before: a RecursionError or ValueError traceback (and exit 1) for the first two."""
    path = tmp_path / "contract.json"
    path.write_text(text, encoding="utf-8")
    code = main(["receipt", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    message = one_error_line(err)
    assert str(path) in message and words in message and len(message) < 500 + len(str(path)), message


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_a_special_contract_file_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      kind: str) -> None:
    path = make_special(tmp_path / "contract.json", kind)
    code = bounded(lambda: main(["receipt", str(path)]), 5, unblock=[path])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert one_error_line(err).endswith(f"{path}: cannot read contract file: is {KIND_WORDS[kind]}, not a regular file")


KIND_WORDS = {"fifo": "a named pipe (FIFO)", "dir": "a directory", "device": "a character device"}


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_a_special_locator_is_an_unverified_receipt_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          kind: str) -> None:
    """Before: a directory or FIFO locator gave a ValueError traceback; /dev/zero was digested without end."""
    path = make_contract(tmp_path, write=False, validator={"command": [PY, "check.py"]})
    target = make_special(tmp_path / LOCATOR_SENTINEL / "report.json", kind)
    code = bounded(lambda: main(["receipt", str(path)]), 5, unblock=[target])
    out, err = capsys.readouterr()
    receipt = json.loads(out)
    assert (code, receipt["status"]) == (2, "unverified")
    assert receipt["reason"] == f"unverified: the artifact is {KIND_WORDS[kind]}, not a regular file"
    assert receipt["validator_exit_code"] is None  # the validator never ran on it
    assert err == f"oloproof: {receipt['reason']}\n"  # stderr names the status (not a contract error)
    assert_no_leak(out, err)


def test_an_oversized_artifact_is_unverified_unless_the_contract_raises_the_cap(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make_contract(tmp_path, max_artifact_bytes=len(CONTENT) - 1)
    code, receipt, _ = receipt_cli(path, capsys)
    assert (code, receipt["status"]) == (2, "unverified")
    assert receipt["reason"] == (f"unverified: the artifact is {len(CONTENT)} bytes, more than "
                                 f"max_artifact_bytes={len(CONTENT) - 1}")
    path = make_contract(tmp_path, max_artifact_bytes=len(CONTENT))
    code, receipt, _ = receipt_cli(path, capsys)
    assert (code, receipt["status"]) == (0, "verified")


def test_missing_digest_key_exits_2_without_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLOPROOF_CLI_KEY", raising=False)
    path = make_contract(tmp_path, digest_key_env="OLOPROOF_CLI_KEY")
    code = main(["receipt", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "OLOPROOF_CLI_KEY" in err


# ----------------------------------------------------------------------------- oloproof run: configuration


@pytest.fixture
def outcome_suite(make_suite: Callable[..., Path]) -> Callable[..., Path]:
    def make(cases: list[dict[str, Any]], **config: Any) -> Path:
        config.setdefault("validators", {"schema": "checks:schema"})
        config.setdefault("evaluators", [{"type": "outcome_contract"}])
        root = make_suite(cases, system="sysmod:Observing", system_code=OUTCOME_SYSTEM, **config)
        write_checks(root)
        return root

    return make


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"validators": {"schema": "checks-schema"}}, "validators.schema"),
        ({"validators": {"schema": "nosuchmodule:schema"}}, "validators.schema"),
        ({"validators": {"schema": "checks:absent"}}, "validators.schema"),
        ({"evaluators": [{"type": "outcome_contract", "validators": ["zz"]}]}, "evaluators[0].validators[0]"),
        ({"evaluators": [{"type": "outcome_contract", "validator": "schema"}]}, "evaluators[0].validator"),
    ],
)
def test_run_config_errors_exit_2_naming_the_key(outcome_suite: Callable[..., Path],
                                                 capsys: pytest.CaptureFixture[str], config: dict[str, Any],
                                                 key: str) -> None:
    root = outcome_suite([case("a", {"artifact_id": "good"}, write=["good"])], **config)
    code, out, err = run_cli(["run", str(root), "--quiet"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert f"{root / 'oloproof.yaml'}: {key}: " in err
    assert not (root / "runs").exists()


def test_run_case_outcome_errors_exit_2_naming_file_and_line(outcome_suite: Callable[..., Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = outcome_suite([case("a", {"artifact_id": "good"}, write=[]),
                          case("b", {"artifact_id": "good", "where": "x"}, write=[])])
    code, out, err = run_cli(["run", str(root), "--quiet"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"{root / 'cases.jsonl'}: line 2: unknown key 'outcome.where'" in err

    root = outcome_suite([case("a", {"artifact_id": "good", "validator": "nosuch"}, write=[])])
    code, out, err = run_cli(["run", str(root), "--quiet"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"{root / 'cases.jsonl'}: line 1: outcome.validator 'nosuch' is not registered" in err


def test_init_and_run_the_false_success_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "fs"
    code, out, _ = run_cli(["init", "--example", "false-success", str(dest)], capsys)
    assert code == 0
    assert sorted(p.name for p in dest.iterdir()) == [
        "README.md", "cases.jsonl", "checks.py", "oloproof.yaml", "release.yaml", "report_writer.py"]
    code, out, err = run_cli(["run", str(dest), "--quiet"], capsys)
    assert code == 1, err  # outcome_verified blocks: two of six verified
    assert "outcome_verified" in out
    runs = list((dest / "runs").iterdir())
    assert len(runs) == 1
    records = [json.loads(line) for line in (runs[0] / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["receipts"][0]["status"] for r in records) == sorted(
        ["verified", "verified", "missing", "stale", "hash_mismatch", "validator_failed"])


# ----------------------------------------------------------------------------- a leftover made to look fresh


def test_an_old_report_stamped_in_the_future_is_not_verified(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Before: exit 0, "verified: present, fresh" for a report left by an earlier run whose time lies ahead of
    the clock (`touch -d 2100-01-01`, or written before the clock was set back)."""
    ahead = 4102444800.0  # 2100-01-01T00:00:00Z
    path = make_contract(tmp_path, mtime=ahead, expected_sha256=CONTENT_SHA256,
                         validator={"command": [PY, "check.py"]})
    code, receipt, err = receipt_cli(path, capsys)
    assert (code, receipt["status"]) == (2, "unverified")
    assert receipt["reason"].startswith(
        "unverified: freshness cannot be shown: modified at 2100-01-01T00:00:00.000000Z, after it was observed")
    assert err == f"oloproof: {receipt['reason']}\n"


SWAP_THEN_CHECK = """import json, os, sys
# stands in for a process racing the hook: an old, valid report is moved into place after the digest
os.replace(os.path.join(os.path.dirname(sys.argv[-1]), "old-valid.json"), sys.argv[-1])
sys.exit(0 if "total" in json.load(open(sys.argv[-1])) else 3)
"""


def test_a_report_swapped_in_before_the_validator_reads_it_is_not_verified(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: exit 0, "verified": the fresh time and digest were of the file digested (which fails the
    validator), the validator's exit 0 of an old report moved into its place afterwards."""
    path = make_contract(tmp_path, content=b"not a report\n", validator={"command": [PY, "swap.py"]})
    (tmp_path / "swap.py").write_text(SWAP_THEN_CHECK, encoding="utf-8")
    old = tmp_path / LOCATOR_SENTINEL / "old-valid.json"
    old.write_bytes(CONTENT)
    os.utime(old, (BEFORE, BEFORE))
    code, receipt, err = receipt_cli(path, capsys)
    assert (code, receipt["status"]) == (2, "unverified")
    assert receipt["reason"] == ("unverified: the artifact was replaced or changed while its validator ran: the "
                                 "digest and the validator's result are not of one file")
    assert_no_leak(json.dumps(receipt), err)


def test_a_missing_digest_key_error_names_the_contract_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLOPROOF_CLI_KEY", raising=False)
    path = make_contract(tmp_path, digest_key_env="OLOPROOF_CLI_KEY")
    code = main(["receipt", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert one_error_line(err).startswith(f"oloproof: error: contract error: {path}: digest_key_env: ")
    assert json.loads(out)["message"].startswith(f"{path}: digest_key_env: environment variable OLOPROOF_CLI_KEY")


STDIO_CHECK = """import os, sys
assert sys.stdin.read() == ""              # stdin is /dev/null: end of file at once, not a closed descriptor
print("validator noise " * 4000)           # 64 KiB to stdout and stderr: written away, never into the receipt
sys.stderr.write("validator complaint " * 4000)
open(os.path.join(os.getcwd(), "cwd.txt"), "w").write(os.getcwd())
"""


def test_a_command_validator_runs_in_the_contract_folder_with_stdio_on_dev_null(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The README says the validator's stdin, stdout and stderr are /dev/null and it runs in the contract file's
    folder: what it prints reaches neither the hook's JSON on stdout nor its stderr, and reading stdin ends."""
    folder = tmp_path / "contracts"
    path = make_contract(folder, validator={"command": [PY, "stdio.py"]})
    (folder / "stdio.py").write_text(STDIO_CHECK, encoding="utf-8")
    code = main(["receipt", str(path), "--json"])
    out, err = capfd.readouterr()  # the file descriptors: a child that inherited them would write here
    assert code == 0 and err == ""
    assert json.loads(out)["receipt"]["status"] == "verified"  # one JSON line: nothing of the validator's
    assert (folder / "cwd.txt").read_text() == str(folder.resolve())


def test_a_key_that_is_not_utf8_is_its_bytes(tmp_path: Path) -> None:
    """A key variable holding bytes that are not UTF-8 stopped ``oloproof receipt`` with an internal error
    whose message quoted one byte of the key. The key is the bytes the process was given: the HMAC of the
    artifact under ``secret\\xff`` (computed here with hmac, outside the toolkit) verifies."""
    import hashlib
    import hmac

    key = b"secret\xff"
    expected = hmac.new(key, CONTENT, hashlib.sha256).hexdigest()
    path = make_contract(tmp_path, digest_key_env="OLOPROOF_RAW_KEY", expected_sha256=expected)
    env = {**os.environ, "OLOPROOF_RAW_KEY": os.fsdecode(key)}  # the child gets the raw bytes
    done = subprocess.run([PY, "-m", "oloproof_nb.cli", "receipt", str(path)], capture_output=True, text=True,
                          check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "verified"
    wrong = make_contract(tmp_path / "wrong", digest_key_env="OLOPROOF_RAW_KEY",
                          expected_sha256=hmac.new(b"secret", CONTENT, hashlib.sha256).hexdigest())
    done = subprocess.run([PY, "-m", "oloproof_nb.cli", "receipt", str(wrong)], capture_output=True, text=True,
                          check=False, env=env)
    assert done.returncode == 2 and json.loads(done.stdout)["status"] == "hash_mismatch"
    assert "internal error" not in done.stderr and "\\udcff" not in done.stderr


def _latin1_locale(folder: Path) -> dict[str, str]:
    """The environment of a process under a Latin-1 locale (``LOCPATH``, ``LC_ALL``, ``PYTHONUTF8=0``), made with
    ``localedef`` in ``folder``; the test is skipped where it cannot be made."""
    try:
        made = subprocess.run(["localedef", "-i", "C", "-f", "ISO-8859-1", str(folder / "latin1")],
                              capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        made = None
    if made is None or made.returncode != 0 or not (folder / "latin1").is_dir():
        pytest.skip("no localedef to make a Latin-1 locale")
    env = {**os.environ, "LOCPATH": str(folder), "LC_ALL": "latin1", "PYTHONUTF8": "0"}
    probe = subprocess.run([PY, "-c", "import sys; print(sys.getfilesystemencoding())"], capture_output=True,
                           text=True, check=False, env=env)
    if probe.stdout.strip().replace("-", "").replace("_", "").lower() not in ("iso88591", "latin1"):
        pytest.skip(f"the Latin-1 locale made is not used here ({probe.stdout.strip()})")
    return env


def test_a_non_ascii_key_is_its_utf8_bytes_under_a_latin1_locale(tmp_path: Path) -> None:
    """Under a Latin-1 locale Python reads the two UTF-8 bytes of ``é`` in the environment as ``Ã©``, whose UTF-8 is
    four other bytes: the key was not the one given, and a keyed digest made with it (hmac over the key's UTF-8,
    computed here) was a ``hash_mismatch``."""
    import hashlib
    import hmac

    key = "clé-secrète"
    expected = hmac.new(key.encode("utf-8"), CONTENT, hashlib.sha256).hexdigest()
    path = make_contract(tmp_path / "suite", digest_key_env="OLOPROOF_KEY", expected_sha256=expected)
    env = {**_latin1_locale(tmp_path), "OLOPROOF_KEY": key, "PYTHONIOENCODING": "latin-1"}
    done = subprocess.run([PY, "-m", "oloproof_nb.cli", "receipt", str(path)], capture_output=True, check=False,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "verified"


def test_a_locator_the_locale_cannot_encode_is_unverified_without_its_text(tmp_path: Path) -> None:
    """Under ``LC_ALL=C`` with ``PYTHONUTF8=0`` a locator holding ``é`` cannot be opened; the receipt is
    ``unverified`` (exit 2), and its reason (the codec's words quoted the character) holds nothing of the locator."""
    folder = tmp_path / "suite"
    (folder / "sortie").mkdir(parents=True)
    (folder / "sortie" / "rapport-été.json").write_bytes(CONTENT)
    path = folder / "contract.json"
    path.write_text(json.dumps({"artifact_id": "monthly-report", "locator": "sortie/rapport-été.json",
                                "run_started_at": STARTED}), encoding="utf-8")
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([PY, "-m", "oloproof_nb.cli", "receipt", str(path)], capture_output=True, text=True,
                          encoding="utf-8", check=False, env=env)
    receipt = json.loads(done.stdout)
    assert done.returncode == 2 and receipt["status"] == "unverified", done.stderr
    assert "encoding" in receipt["reason"]
    for text in (receipt["reason"], done.stderr):
        for piece in ("é", "\\xe9", "\\u00e9", "rapport", "position"):
            assert piece not in text


def test_a_validator_name_in_a_contract_file_is_a_contract_error(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof receipt`` registers no validators: a name could never verify. It was an ``unverified``
    receipt; it is the file's error, one line naming the key."""
    path = make_contract(tmp_path, validator="report_schema")
    code = main(["receipt", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"oloproof: error: contract error: {path}: key 'validator': 'report_schema' is not a "
                          "registered validator (registered: none)") and err.count("\n") == 1


SLOW_CHECK = "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(60)\n"


def _signum(name: str) -> int:
    """``SIGUSR1`` → 10; ``SIGRTMIN+1`` → the first real-time signal after SIGRTMIN."""
    import signal

    base, _, offset = name.partition("+")
    return int(getattr(signal, base)) + int(offset or 0)


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups (POSIX)")
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP",
                                     # each ended the hook 128 + N and left the validator running
                                     "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGXCPU", "SIGVTALRM", "SIGPROF",
                                     "SIGABRT", "SIGRTMIN+1"])
def test_a_hook_stopped_by_a_signal_exits_2_and_stops_its_validator(tmp_path: Path, signame: str) -> None:
    """A completion hook blocks only on exit 2: Ctrl-C gave 130, SIGTERM and SIGHUP killed the hook by the
    signal (the agent's runner then lets the agent stop), and the validator, in a session of its own, kept
    running. Now each is exit 2, one line, and the validator is gone; so is every other signal that ends a
    process by default (SIGQUIT, a Ctrl-\\; SIGUSR1 ...)."""
    import signal
    import time

    if not hasattr(signal, signame.partition("+")[0]):
        pytest.skip(f"no {signame} here")

    pid_file = tmp_path / "validator.pid"
    (tmp_path / "slow.py").write_text(SLOW_CHECK, encoding="utf-8")
    path = make_contract(tmp_path, validator={"command": [PY, "slow.py", str(pid_file)]})
    # SIGINT as a terminal leaves it, and the signal sent at its default: a test run started in the background of a
    # shell inherits SIGINT ignored, one under nohup SIGHUP, and the hook then keeps that disposition (a hook a runner
    # starts with a signal ignored is not stopped by it)
    sent = _signum(signame)

    def defaults() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(sent, signal.SIG_DFL)

    hook = subprocess.Popen([PY, "-m", "oloproof_nb.cli", "receipt", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=defaults)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    validator = int(pid_file.read_text())
    hook.send_signal(sent)
    out, err = hook.communicate(timeout=30)
    assert hook.returncode == 2, (hook.returncode, err)
    assert err == f"oloproof: not verified: stopped by {signame} (the validator it ran was stopped too)\n"
    gone = time.monotonic() + 10
    while time.monotonic() < gone:
        try:
            os.kill(validator, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(validator, signal.SIGKILL)
        raise AssertionError("the validator outlived the hook")


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups (POSIX)")
@pytest.mark.parametrize(("signame", "then"), [("SIGINT", None), ("SIGTERM", None), ("SIGINT", "SIGTERM")])
def test_a_stop_that_arrives_while_the_validator_starts_still_stops_it(tmp_path: Path, signame: str, then: str | None,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above failed under load ("the validator outlived the hook"): a signal that reached the hook while
    ``subprocess.Popen`` still read the child's exec status raised inside Popen, after the child was made, and
    left it running. Here the signal arrives there every time (raised in Popen after the child started); the stop
    waits until the group can be killed, and the validator is gone (reaped) when the stop reaches the caller.
    ``then``: a second stop (Ctrl-C, then SIGTERM) raised just before the group is killed left it
    running; it waits for the kill too, and is the stop the caller gets."""
    import signal

    from oloproof_nb._run import observe
    from oloproof_nb.cli.process import StopOnSignals, Stopped

    (tmp_path / "slow.py").write_text(SLOW_CHECK, encoding="utf-8")
    path = make_contract(tmp_path, validator={"command": [PY, "slow.py", str(tmp_path / "validator.pid")]})
    real, real_killpg, started = subprocess.Popen, os.killpg, []

    def popen(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        proc = real(*args, **kwargs)  # type: ignore[call-overload]
        started.append(proc)
        signal.raise_signal(getattr(signal, signame))  # before Popen has returned
        return proc

    def killpg(pgid: int, sig: int) -> None:
        signal.raise_signal(getattr(signal, str(then)))  # the second stop, before the group is killed
        real_killpg(pgid, sig)

    monkeypatch.setattr(observe.subprocess, "Popen", popen)
    if then is not None:
        monkeypatch.setattr(observe.os, "killpg", killpg)
    try:
        with pytest.raises(Stopped) as info, StopOnSignals(interrupt=True):
            observe.verify_contract_file(path)
        assert info.value.args[0] == (then or signame)
        assert started and started[0].poll() is not None  # killed and reaped, not left sleeping 60 s
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_a_ctrl_c_while_a_validator_fails_to_start_still_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C while ``subprocess.Popen`` then fails (the command cannot start) stops the verification;
    it is not swallowed into the receipt's "not found", and Python's handler is as it was."""
    import signal

    from oloproof_nb._run import observe

    path = make_contract(tmp_path, validator={"command": [PY, "check.py"]})

    def popen(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        signal.raise_signal(signal.SIGINT)
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(observe.subprocess, "Popen", popen)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            observe.verify_contract_file(path)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


def test_an_artifact_that_cannot_be_read_says_so_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A locator longer than a path may be gave "the artifact cannot read: File name too
    long" (a file reader's "cannot read: …" joined to "the artifact")."""
    path = make_contract(tmp_path, write=False, locator=f"{LOCATOR_SENTINEL}/{'r/' * 2500}.json")
    code, receipt, err = receipt_cli(path, capsys)
    assert (code, receipt["status"]) == (2, "unverified")
    assert receipt["reason"] == "unverified: the artifact cannot be read: File name too long"
    assert_no_leak(json.dumps(receipt), err)


def _hook(path: Path, **popen: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([PY, "-m", "oloproof_nb.cli", "receipt", str(path)], timeout=120, **popen)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("streams", ["stdout closed", "stderr closed", "both closed", "stdout full", "both full"])
def test_the_hook_exit_code_does_not_depend_on_its_standard_streams(tmp_path: Path, streams: str) -> None:
    """With standard output closed (`>&-`) an unverified receipt exited 120 with a traceback, and with
    standard error closed or full it exited 1; a completion hook blocks on 2 only, so the agent could stop. Now
    an unverified receipt is 2 whatever the streams; a verified one is 0 unless its output was lost (2). Streams
    unbuffered (each line written at once); the next test leaves them buffered, as a hook runner may."""
    missing = make_contract(tmp_path / "missing", write=False)
    verified = make_contract(tmp_path / "verified", expected_sha256=CONTENT_SHA256)  # no content warning
    unbuffered = {**os.environ, "PYTHONUNBUFFERED": "1"}  # whatever the environment running the tests says

    def close(*fds: int) -> Callable[[], None]:
        return lambda: [os.close(fd) for fd in fds] and None  # type: ignore[func-returns-value]

    with open("/dev/full", "wb") as full:
        popen: dict[str, Any] = {
            "stdout closed": {"preexec_fn": close(1), "stderr": subprocess.PIPE},
            "stderr closed": {"preexec_fn": close(2), "stdout": subprocess.DEVNULL},
            "both closed": {"preexec_fn": close(1, 2)},
            "stdout full": {"stdout": full, "stderr": subprocess.PIPE},
            "both full": {"stdout": full, "stderr": full},
        }[streams]
        unverified = _hook(missing, env=unbuffered, **popen)
        assert unverified.returncode == 2, unverified.stderr
        if unverified.stderr is not None:
            assert b"Traceback" not in unverified.stderr and unverified.stderr.count(b"\n") == 1
        done = _hook(verified, env=unbuffered, **popen)
    assert done.returncode == (2 if "full" in streams else 0), done.stderr
    if streams == "stdout full":
        assert done.stderr == b"oloproof: error: standard output: No space left on device\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("streams", ["stdout full", "stderr full", "both full"])
def test_the_hook_exit_code_on_a_full_disk_does_not_depend_on_buffered_streams(tmp_path: Path, streams: str) -> None:
    """The test above runs with PYTHONUNBUFFERED=1 when the test runner sets it; a shell or a
    hook runner that does not leaves the streams buffered, and then the line that could not be written was
    flushed once more as the interpreter exited, failed again, and the hook exited 120 (not 2: the agent could
    stop). Python itself documents 120 as the exit code when flushing the standard streams fails at exit."""
    missing = make_contract(tmp_path / "missing", write=False)
    verified = make_contract(tmp_path / "verified", expected_sha256=CONTENT_SHA256)  # no content warning
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with open("/dev/full", "wb") as full:
        popen: dict[str, Any] = {
            "stdout full": {"stdout": full, "stderr": subprocess.PIPE},
            "stderr full": {"stdout": subprocess.DEVNULL, "stderr": full},
            "both full": {"stdout": full, "stderr": full},
        }[streams]
        unverified = _hook(missing, env=env, **popen)
        done = _hook(verified, env=env, **popen)
    assert unverified.returncode == 2, unverified.stderr
    assert done.returncode == (0 if streams == "stderr full" else 2), done.stderr
    if streams == "stdout full":
        assert unverified.stderr == (b"oloproof: missing: no artifact observed\n"
                                     b"oloproof: error: standard output: No space left on device\n")
        assert done.stderr == b"oloproof: error: standard output: No space left on device\n"
