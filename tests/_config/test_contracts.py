"""Contract files (``oloproof receipt CONTRACT.json``): hostile files give one line naming the file.

The everyday format (required keys, the validator forms, timestamps) is tested with the
observer in tests/_run/test_observe.py; here: what an adversary would hand over instead.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
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


def test_a_contract_file_that_is_a_dangling_link_names_where_it_points(tmp_path: Path) -> None:
    """Before: "cannot read contract file: file not found" of a link that is there."""
    path = tmp_path / "contract.json"
    path.symlink_to("moved/contract.json")
    with pytest.raises(ContractFileError) as info:
        load_contract_file(path)
    assert str(info.value) == (f"{path}: cannot read contract file: is a dangling symbolic link (it points to "
                               "'moved/contract.json', which does not exist); point it at the file, or remove it")


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_a_contract_file_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    """Before: a FIFO hung `oloproof receipt`."""
    path = make_special(tmp_path / "contract.json", kind)
    assert "cannot read contract file: is " in _error(path)


@pytest.mark.parametrize(("text", "words"), [
    ('{"artifact_id": ' * 50_000 + "1" + "}" * 50_000, "not valid JSON: nested too deeply"),
    ('{"artifact_id": ' + "9" * 5000 + "}", "not valid JSON: a number of more than 4,300 digits"),
    (json.dumps({**MINIMAL, "require_fresh": 10 ** 4000}), "key 'require_fresh' must be true or false (got 1000"),
    (json.dumps({**MINIMAL, "expected_sha256": "x" * 500_000}),
     "key 'expected_sha256' must be null or 64 lowercase hexadecimal characters (got 'xxx"),
    (json.dumps({**MINIMAL, "locator": ["x"] * 100_000}), "key 'locator' must be a non-empty string"),
    (json.dumps({**MINIMAL, "validator": {"command": [[[["x"]]]] * 1000}}),
     "its 'command' must be a non-empty list of non-empty strings"),
    (json.dumps({**MINIMAL, "run_started_at": 1e308 * 10}), "key 'run_started_at' must be"),
    # valid ISO-8601 whose UTC time is outside years 1-9999: OverflowError, an "internal error" before
    (json.dumps({**MINIMAL, "run_started_at": "0001-01-01T00:00:00+14:00"}),
     "of a year 1–9999 in UTC (got '0001-01-01T00:00:00+14:00')"),
    (json.dumps({**MINIMAL, "run_started_at": "9999-12-31T23:59:59-14:00"}),
     "of a year 1–9999 in UTC (got '9999-12-31T23:59:59-14:00')"),
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
    ('"validator": {"command": ["python3", "ch\\u0000eck.py"]}', "its 'command' must be a non-empty list of non-empty "
                                                                 "strings without a NUL character"),
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
    assert _error(_write(tmp_path, text)).endswith("key 'locator' holds a NUL character, which no path can hold "
                                                    "(got 'out/rep\\x00ort.json')")


def test_a_byte_order_mark_before_the_contract_is_not_content(tmp_path: Path) -> None:
    spec = load_contract_file(_write(tmp_path, b"\xef\xbb\xbf" + json.dumps(MINIMAL).encode("utf-8")))
    assert spec.contract.artifact_id == "a"
    assert "not valid JSON" in _error(_write(tmp_path, b"\xef\xbb\xbf\xef\xbb\xbf" + json.dumps(MINIMAL).encode()))


# --------------------------------------------------------------------------- the strict model, key by key

#: The keys of a contract file, written out by hand: DESIGN.md's six and the two observation limits.
ALLOWED_KEYS = ("artifact_id, locator, run_started_at, expected_sha256, validator, digest_key_env, require_fresh, "
                "observe_timeout_s, max_artifact_bytes")
VALIDATOR_FORMS = 'null, a registered validator name, or {"command": ["program", "arg", ...]}'
ARGV = "a non-empty list of non-empty strings without a NUL character"


@pytest.mark.parametrize(("data", "problem"), [
    ({**MINIMAL, "timeout": 5}, f"unknown key 'timeout'; allowed keys: {ALLOWED_KEYS}"),
    # a misspelt required key is named as unknown, with the keys allowed, rather than the right one as missing
    ({"artifactid": "a", "locator": "x", "run_started_at": "2026-07-25T14:00:00Z"},
     f"unknown key 'artifactid'; allowed keys: {ALLOWED_KEYS}"),
    ({"artifact_id": "a", "locator": "x"},
     "missing required key 'run_started_at'; required: artifact_id, locator, run_started_at"),
    ({**MINIMAL, "artifact_id": "  "}, "key 'artifact_id' must be a non-empty string (got '  ')"),
    ({**MINIMAL, "run_started_at": "2026-07-25"},
     "key 'run_started_at' must be an ISO-8601 timestamp with a timezone, e.g. 2026-07-25T14:00:00Z "
     "(got '2026-07-25')"),
    # CPython 3.11's parser stops at a NUL: this read as 14:00 UTC there (and was refused on 3.10)
    ({**MINIMAL, "run_started_at": "2026-07-25T14:00:00Z\x00junk"},
     "key 'run_started_at' must be an ISO-8601 timestamp with a timezone, e.g. 2026-07-25T14:00:00Z "
     "(got '2026-07-25T14:00:00Z\\x00junk')"),
    # the whole digest is shown, so a wrong character can be found
    ({**MINIMAL, "expected_sha256": "A" * 64},
     f"key 'expected_sha256' must be null or 64 lowercase hexadecimal characters (got '{'A' * 64}')"),
    ({**MINIMAL, "expected_sha256": 12},
     "key 'expected_sha256' must be null or 64 lowercase hexadecimal characters (got 12)"),
    ({**MINIMAL, "digest_key_env": "REPORT-KEY"},
     "key 'digest_key_env' must be null or the name of an environment variable (letters, digits, underscore) "
     "(got 'REPORT-KEY')"),
    ({**MINIMAL, "validator": ""}, f"key 'validator' must be {VALIDATOR_FORMS} (got '')"),
    ({**MINIMAL, "validator": {}}, f"key 'validator' must be {VALIDATOR_FORMS}; its 'command' is missing"),
    ({**MINIMAL, "validator": {"cmd": ["x"]}},
     f"key 'validator' must be {VALIDATOR_FORMS}; 'cmd' is not one of its keys"),
    ({**MINIMAL, "validator": {"command": ["python3", 3]}},
     f"key 'validator' must be {VALIDATOR_FORMS}; its 'command' must be {ARGV}"),
    ({**MINIMAL, "require_fresh": 0}, "key 'require_fresh' must be true or false (got 0)"),
    # exactly 0 is not positive; a boolean is not a number of seconds (false is not 0, true not 1)
    ({**MINIMAL, "observe_timeout_s": 0},
     "key 'observe_timeout_s' must be a positive, finite number of seconds (got 0)"),
    ({**MINIMAL, "observe_timeout_s": False},
     "key 'observe_timeout_s' must be a positive, finite number of seconds (got false)"),
    # past the largest float (about 1.8e308): no float holds it, and no OverflowError escapes
    ({**MINIMAL, "observe_timeout_s": 10 ** 309},
     "key 'observe_timeout_s' must be a positive, finite number of seconds (got 1" + "0" * 17 + "..." + "0" * 19 + ")"),
    ({**MINIMAL, "max_artifact_bytes": 1.0},
     "key 'max_artifact_bytes' must be a positive whole number of bytes (got 1.0)"),
    ({**MINIMAL, "max_artifact_bytes": False},
     "key 'max_artifact_bytes' must be a positive whole number of bytes (got false)"),
])
def test_each_key_refuses_in_one_line_what_it_does_not_allow(tmp_path: Path, data: dict[str, object],
                                                             problem: str) -> None:
    """The whole line after the file's name: the key, what it allows and the value given."""
    path = _write(tmp_path, json.dumps(data))
    assert _error(path) == f"{path}: {problem}"


@pytest.mark.parametrize(("key", "value", "read"), [
    ("observe_timeout_s", 5e-324, 5e-324),  # the smallest positive float (a subnormal) is positive
    ("observe_timeout_s", 10 ** 308, 1e308),  # an integer a float holds
    ("observe_timeout_s", 2, 2.0),
    ("max_artifact_bytes", 1, 1),
    ("max_artifact_bytes", 10 ** 55, 10 ** 55),  # no float in between: every byte counts
])
def test_the_smallest_and_largest_limits_are_read(tmp_path: Path, key: str, value: float, read: float) -> None:
    spec = load_contract_file(_write(tmp_path, json.dumps({**MINIMAL, key: value})))
    got = spec.observe_timeout_s if key == "observe_timeout_s" else spec.max_artifact_bytes
    assert got == read and type(got) is type(read)


def test_a_registered_validator_name_and_a_command_are_told_apart(tmp_path: Path) -> None:
    by_name = load_contract_file(_write(tmp_path, json.dumps({**MINIMAL, "validator": "report_schema_v3"})))
    assert (by_name.contract.validator, by_name.command) == ("report_schema_v3", None)
    by_command = load_contract_file(_write(tmp_path, json.dumps({**MINIMAL, "validator": {"command": ["p", " "]}})))
    assert (by_command.contract.validator, by_command.command) == ("command", ["p", " "])


# --------------------------------------------------------------------------- edges found by mutation testing


@pytest.mark.parametrize("stamp", ["2026-07-25T14:00:00Z", "2026-07-25T14:00:00z", " 2026-07-25T16:00:00+02:00 "])
def test_a_start_time_reads_as_the_same_instant_in_utc_however_it_is_written(tmp_path: Path, stamp: str) -> None:
    """RFC 3339 allows a lowercase ``z`` for UTC, and blanks around the value are no part of it (a hand-edited
    file). By hand: 16:00 at +02:00 is 14:00 UTC."""
    spec = load_contract_file(_write(tmp_path, json.dumps({**MINIMAL, "run_started_at": stamp})))
    assert spec.run_started_at == datetime(2026, 7, 25, 14, tzinfo=timezone.utc)
    assert spec.run_started_at.utcoffset() == timedelta(0)


@pytest.mark.parametrize(("stamp", "instant"), [
    ("2026-07-25T14:00:00.123456789Z", datetime(2026, 7, 25, 14, 0, 0, 123456, tzinfo=timezone.utc)),  # date +%N
    ("2026-07-25T14:00:00,123456789+00:00", datetime(2026, 7, 25, 14, 0, 0, 123456, tzinfo=timezone.utc)),  # date -Ins
    ("2026-07-25T14:00:00.12345Z", datetime(2026, 7, 25, 14, 0, 0, 123450, tzinfo=timezone.utc)),  # Go's RFC 3339
    ("2026-07-25T14:00:00.5Z", datetime(2026, 7, 25, 14, 0, 0, 500000, tzinfo=timezone.utc)),
    ("2026-07-25T16:00:00+0200", datetime(2026, 7, 25, 14, tzinfo=timezone.utc)),  # date +%z
    ("2026-07-25T08:30:00.25-0530", datetime(2026, 7, 25, 14, 0, 0, 250000, tzinfo=timezone.utc)),
    ("2026-07-25T16:00:00+02", datetime(2026, 7, 25, 14, tzinfo=timezone.utc)),
    ("20260725T140000Z", datetime(2026, 7, 25, 14, tzinfo=timezone.utc)),  # date -u +%Y%m%dT%H%M%SZ
    ("20260725T160000,5+0200", datetime(2026, 7, 25, 14, 0, 0, 500000, tzinfo=timezone.utc)),
])
def test_a_start_time_written_by_date_or_go_reads_alike_on_every_python(tmp_path: Path, stamp: str,
                                                                         instant: datetime) -> None:
    """Python 3.10's ``fromisoformat`` reads a fraction of 3 or 6 digits after a point and an offset with a colon
    only; these forms, which Python 3.11 reads, were contract errors there. The instants by hand: a fraction cut to
    microseconds, 16:00 at +02:00 and 08:30 at -05:30 both 14:00 UTC."""
    spec = load_contract_file(_write(tmp_path, json.dumps({**MINIMAL, "run_started_at": stamp})))
    assert spec.run_started_at == instant


#: What Python 3.10's ``datetime.fromisoformat`` reads, by its documentation: YYYY-MM-DD[*HH[:MM[:SS[.fff[fff]]]]
#: [+HH:MM[:SS[.ffffff]]]].
_PY310_ISO = re.compile(r"\d{4}-\d\d-\d\d.\d\d(:\d\d(:\d\d(\.\d{3}(\d{3})?)?)?)?([+-]\d\d:\d\d(:\d\d(\.\d{6})?)?)?")


@pytest.mark.parametrize("stamp", ["20260725T140000Z", "20260725T140000.123456789+0200", "20260725T1400-05:30",
                                   "2026-07-25T14:00:00,5+0200"])
def test_a_start_time_is_read_in_the_form_python_3_10_reads(stamp: str) -> None:
    """Python 3.11 reads a date and time written without their separators; 3.10 does not (a contract error there that
    blocked every stop of a hook), so it is read as the extended form, which both read."""
    assert _PY310_ISO.fullmatch(contracts._extended(stamp))
@pytest.mark.parametrize(("stamp", "written"), [
    ("2026-07-25T14:00:00.123456789Z", "2026-07-25T14:00:00.123456+00:00"),
    ("2026-07-25T14:00:00,123456789+00:00", "2026-07-25T14:00:00.123456+00:00"),
    ("2026-07-25T14:00:00.12345Z", "2026-07-25T14:00:00.123450+00:00"),
    ("2026-07-25T14:00:00,5z", "2026-07-25T14:00:00.500000+00:00"),
    ("2026-07-25T16:00:00+0200", "2026-07-25T16:00:00+02:00"),
    ("2026-07-25T08:30:00.25-0530", "2026-07-25T08:30:00.250000-05:30"),
    ("2026-07-25T16:00:00.123456+02", "2026-07-25T16:00:00.123456+02:00"),
    ("2026-07-25T16:00:00+02", "2026-07-25T16:00:00+02:00"),
    ("2026-07-25T16:00:00+02:00", "2026-07-25T16:00:00+02:00"),
])
def test_a_start_time_is_rewritten_in_the_one_form_python_3_10_reads(stamp: str, written: str) -> None:
    """What Python 3.10's ``fromisoformat`` is given: a point and 6 digits for the fraction, an offset with a colon
    (3.11 reads the other forms too, so on it only the text shows the rewriting; by hand from the stamps)."""
    assert contracts._extended(stamp) == written


@pytest.mark.parametrize("stamp", ["2026-07-25", "2026-07-25T14:00:00", "2026-07-25T14:00:00+2",
                                   "2026-07-25T14:00:00+020"])
def test_a_start_time_without_a_timezone_or_with_a_broken_one_stays_refused(tmp_path: Path, stamp: str) -> None:
    """Reading the forms above takes no part of a date for an offset (``-25`` of ``2026-07-25``), and no offset of
    one or three digits for one of two or four."""
    assert "key 'run_started_at' must be an ISO-8601 timestamp with a timezone" in _error(
        _write(tmp_path, json.dumps({**MINIMAL, "run_started_at": stamp})))


@pytest.mark.parametrize("command", [[], [""], ["python3", ""]])
def test_a_command_without_a_program_or_with_an_empty_argument_is_refused(tmp_path: Path,
                                                                          command: list[str]) -> None:
    """``[]`` names no program to start, and an empty argument is a slip (a path left blank), not a setting."""
    path = _write(tmp_path, json.dumps({**MINIMAL, "validator": {"command": command}}))
    assert _error(path) == f"{path}: key 'validator' must be {VALIDATOR_FORMS}; its 'command' must be {ARGV}"


def test_a_minimal_contract_requires_a_fresh_artifact_found_beside_the_contract_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented defaults of a contract file that gives only the required keys: ``require_fresh`` true, no
    expected digest, no validator; the artifact is ``locator`` joined to the contract file's folder, not to the
    working directory."""
    folder = tmp_path / "job"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)  # elsewhere than the contract's folder
    spec = load_contract_file(_write(folder, json.dumps(MINIMAL)))
    assert spec.contract.require_fresh is True
    assert (spec.contract.expected_sha256, spec.contract.validator, spec.command) == (None, None, None)
    assert spec.artifact == folder / "out" / "report.json"
    assert spec.run_started_at == datetime(2026, 7, 25, 14, 0, tzinfo=timezone.utc)


# -- more edges found by mutation testing -------------------------------------------------------------------


def test_of_two_unknown_keys_in_a_command_validator_the_first_written_is_named(tmp_path: Path) -> None:
    """``{"comand": [...], "argv": [...]}``: the misspelt key the user wrote first is the one named (with the
    missing ``command`` it stands for, pydantic lists the missing key first and the unknown ones after)."""
    path = _write(tmp_path, json.dumps({**MINIMAL, "validator": {"comand": ["python3", "check.py"], "argv": ["x"]}}))
    assert _error(path).endswith("; 'comand' is not one of its keys")


def test_a_trailing_comma_in_a_contract_is_named_at_the_comma(tmp_path: Path) -> None:
    """A contract written by hand over several lines, a comma left after its last key: Python before 3.13 said
    "Expecting property name enclosed in double quotes" at the bracket (line 4, column 1), and the user looked for a
    quote that was there. Counted by hand: the comma ends line 3, ``  "expected_sha256": null,``, at column 26."""
    text = '{\n  "artifact_id": "report",\n  "expected_sha256": null,\n}\n'
    path = _write(tmp_path, text)
    assert _error(path) == f"{path}: not valid JSON: a comma after the last item at line 3, column 26, before '}}'"
    assert _error(_write(tmp_path, '{\n  "artifact_id": }\n')) == (f"{path}: not valid JSON (line 2, column 18): "
                                                                   "Expecting value")
