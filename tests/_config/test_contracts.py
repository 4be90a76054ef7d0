"""Contract files (``oloproof receipt CONTRACT.json``): hostile files give one line naming the file.

The everyday format (required keys, the validator forms, timestamps) is tested with the
observer in tests/_run/test_observe.py; here: what an adversary would hand over instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _hostile_files import SPECIAL_KINDS, bounded, make_special

from oloproof_nb._config import contracts
from oloproof_nb._config.contracts import (
    DEFAULT_MAX_ARTIFACT_BYTES,
    DEFAULT_OBSERVE_TIMEOUT_S,
    MAX_CONTRACT_BYTES,
    load_contract_file,
)
from oloproof_nb.errors import ContractFileError

MINIMAL = {"artifact_id": "a", "locator": "out/report.json", "run_started_at": "2026-07-25T14:00:00Z"}


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "contract.json"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _error(path: Path) -> str:
    with pytest.raises(ContractFileError) as info:
        bounded(lambda: load_contract_file(path), 5, unblock=[path])
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message


def test_defaults_of_the_observation_limits(tmp_path: Path) -> None:
    spec = load_contract_file(_write(tmp_path, json.dumps(MINIMAL)))
    assert (spec.observe_timeout_s, spec.max_artifact_bytes) == (60.0, 1 << 30)
    assert (DEFAULT_OBSERVE_TIMEOUT_S, DEFAULT_MAX_ARTIFACT_BYTES) == (60.0, 1_073_741_824)
    spec = load_contract_file(_write(tmp_path, json.dumps({**MINIMAL, "observe_timeout_s": 2,
                                                           "max_artifact_bytes": 1})))
    assert (spec.observe_timeout_s, spec.max_artifact_bytes) == (2.0, 1)
    assert spec.contract.artifact_id == "a"  # the limits are not contract fields


@pytest.mark.parametrize(("key", "value"), [
    ("observe_timeout_s", 0), ("observe_timeout_s", -1), ("observe_timeout_s", "5"), ("observe_timeout_s", True),
    ("observe_timeout_s", 1e999), ("observe_timeout_s", 10**400),  # an int no float holds: an OverflowError before
    ("max_artifact_bytes", 0), ("max_artifact_bytes", 1.5),
    ("max_artifact_bytes", True), ("max_artifact_bytes", None),
])
def test_bad_observation_limits_name_the_key(tmp_path: Path, key: str, value: object) -> None:
    text = json.dumps({**MINIMAL, key: value}).replace("Infinity", "1e999")
    assert f"key {key!r} must be a positive" in _error(_write(tmp_path, text))


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_a_contract_file_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    """Before: a FIFO hung `oloproof receipt`."""
    path = make_special(tmp_path / "contract.json", kind)
    assert "cannot read contract file: is " in _error(path)


@pytest.mark.parametrize(("text", "words"), [
    ('{"artifact_id": ' * 50_000 + "1" + "}" * 50_000, "not valid JSON: nested too deeply"),
    ('{"artifact_id": ' + "9" * 5000 + "}", "not valid JSON: Exceeds the limit (4300 digits)"),
    (json.dumps({**MINIMAL, "require_fresh": 10 ** 4000}), "key 'require_fresh' must be true or false, got 1000"),
    (json.dumps({**MINIMAL, "expected_sha256": "x" * 500_000}), "key 'expected_sha256': "),
    (json.dumps({**MINIMAL, "locator": ["x"] * 100_000}), "key 'locator' must be a non-empty string, got [\"x\""),
    (json.dumps({**MINIMAL, "validator": {"command": [[[["x"]]]] * 1000}}), "key 'validator.command'"),
    (json.dumps({**MINIMAL, "run_started_at": 1e308 * 10}), "key 'run_started_at' must be"),
    # valid ISO-8601 whose UTC time is outside years 1-9999: OverflowError, an "internal error" before
    (json.dumps({**MINIMAL, "run_started_at": "0001-01-01T00:00:00+14:00"}), "of a year 1–9999 in UTC, got"),
    (json.dumps({**MINIMAL, "run_started_at": "9999-12-31T23:59:59-14:00"}), "of a year 1–9999 in UTC, got"),
])
def test_deep_huge_and_long_contracts_give_one_short_line(tmp_path: Path, text: str, words: str) -> None:
    """Before: deep nesting and long numbers escaped as RecursionError / ValueError tracebacks."""
    message = _error(_write(tmp_path, text))
    assert words in message, message
    assert len(message) < 400 + len(str(tmp_path)), len(message)


def test_a_contract_file_bigger_than_its_cap_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert MAX_CONTRACT_BYTES == 1 << 20
    text = json.dumps(MINIMAL)
    path = _write(tmp_path, text)
    monkeypatch.setattr(contracts, "MAX_CONTRACT_BYTES", len(text))
    assert load_contract_file(path).contract.artifact_id == "a"  # exactly at the cap
    monkeypatch.setattr(contracts, "MAX_CONTRACT_BYTES", len(text) - 1)
    assert f"is {len(text)} bytes; a file of this kind may hold at most {len(text) - 1}" in _error(path)


@pytest.mark.parametrize(("extra", "words"), [
    ('"validator": {"command": ["python3", "ch\\u0000eck.py"]}', "key 'validator.command' must be a non-empty list "
                                                                 "of non-empty strings without a NUL character"),
    ('"validator": {"command": ["python3", "\\ud800"]}', "the string '\\ud800' holds a lone surrogate escape"),
    ('"validator": "\\ud800"', "the string '\\ud800' holds a lone surrogate escape"),
    ('"note_\\udc80": 1', "the string 'note_\\udc80' holds a lone surrogate escape"),
])
def test_a_nul_or_a_lone_surrogate_is_a_contract_error(tmp_path: Path, extra: str, words: str) -> None:
    """Both reached the validator's process start (ValueError: embedded null byte, UnicodeEncodeError): an
    internal error, and with --json nothing on stdout for the hook to read."""
    text = json.dumps(MINIMAL)[:-1] + ", " + extra + "}"
    assert words in _error(_write(tmp_path, text))


def test_a_nul_in_the_locator_is_a_contract_error(tmp_path: Path) -> None:
    """It was an "unverified" receipt ("the artifact cannot read: embedded null byte"): the file's error."""
    text = json.dumps({**MINIMAL, "locator": "out/rep\x00ort.json"})
    assert _error(_write(tmp_path, text)).endswith("key 'locator' holds a NUL character, which no path can hold")


def test_a_byte_order_mark_before_the_contract_is_not_content(tmp_path: Path) -> None:
    spec = load_contract_file(_write(tmp_path, b"\xef\xbb\xbf" + json.dumps(MINIMAL).encode("utf-8")))
    assert spec.contract.artifact_id == "a"
    assert "not valid JSON" in _error(_write(tmp_path, b"\xef\xbb\xbf\xef\xbb\xbf" + json.dumps(MINIMAL).encode()))
