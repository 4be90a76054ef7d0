"""Contract files for ``oloproof receipt CONTRACT.json``: read, checked key by key, one-line errors."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from pydantic import ValidationError

from .._core.receipts import OutcomeContract
from ..errors import ContractFileError, quote, validation_problem
from .files import KeyTwice, UnreadableFile, keys_once, lone_surrogate, read_regular

__all__ = ["COMMAND_VALIDATOR", "CONTRACT_FILE_KEYS", "DEFAULT_MAX_ARTIFACT_BYTES", "DEFAULT_OBSERVE_TIMEOUT_S",
           "MAX_CONTRACT_BYTES", "ContractFile", "load_contract_file"]

#: Name under which a contract file's ``{"command": [...]}`` validator is registered and reported.
COMMAND_VALIDATOR = "command"
#: Keys a contract file may have, required ones first.
CONTRACT_FILE_KEYS = (
    "artifact_id",
    "locator",
    "run_started_at",
    "expected_sha256",
    "validator",
    "digest_key_env",
    "require_fresh",
    "observe_timeout_s",
    "max_artifact_bytes",
)
_REQUIRED_KEYS = CONTRACT_FILE_KEYS[:3]
#: Largest contract file read (it is read whole): 1 MiB.
MAX_CONTRACT_BYTES = 1 << 20
#: Seconds an artifact may take to be read and digested, unless a contract file or evaluator says otherwise.
DEFAULT_OBSERVE_TIMEOUT_S = 60.0
#: Largest artifact read and digested (1 GiB), unless a contract file or evaluator says otherwise.
DEFAULT_MAX_ARTIFACT_BYTES = 1 << 30


class ContractFile(NamedTuple):
    """What a contract file says: the contract, where the artifact is, when the run started, how to check it."""

    #: With ``validator="command"`` for a command validator.
    contract: OutcomeContract
    #: ``locator`` joined to the contract file's folder.
    artifact: Path
    #: In UTC.
    run_started_at: datetime
    #: The command validator's argv (run with cwd = the contract file's folder), else ``None``.
    command: list[str] | None
    #: Seconds the artifact may take to be read and digested.
    observe_timeout_s: float = DEFAULT_OBSERVE_TIMEOUT_S
    #: Largest artifact (bytes) that is read and digested.
    max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES


def load_contract_file(path: Path | str) -> ContractFile:
    """Read a contract file (JSON) for ``oloproof receipt``.

    Parameters
    ----------
    path : Path or str
        A regular file of at most :data:`MAX_CONTRACT_BYTES` holding a JSON object with the keys of
        :data:`CONTRACT_FILE_KEYS`; ``artifact_id``, ``locator`` (relative to the file's folder) and
        ``run_started_at`` (ISO-8601 with a timezone) are required. ``validator`` is
        ``{"command": [argv...]}`` or the name of a registered validator; ``observe_timeout_s``
        (a positive number, default :data:`DEFAULT_OBSERVE_TIMEOUT_S`) and ``max_artifact_bytes``
        (a positive integer, default :data:`DEFAULT_MAX_ARTIFACT_BYTES`) bound reading the artifact.

    Returns
    -------
    ContractFile
        ``(contract, artifact, run_started_at, command, observe_timeout_s, max_artifact_bytes)``.

    Raises
    ------
    ContractFileError
        One line naming the file, the key and what is allowed: also for a path that is not a
        regular file (a directory, a named pipe, a device), a bigger file, JSON nested too deeply
        to read or a number too long to convert.
    """
    path = Path(path)
    data = _read_json_object(path)
    bad = lone_surrogate(data)
    if bad is not None:  # "\ud800": JSON, but no text (it stopped oloproof receipt as an internal error)
        _fail(path, f"the string {quote(bad)} holds a lone surrogate escape, which is not Unicode text")
    for key in data:
        if key not in CONTRACT_FILE_KEYS:
            _fail(path, f"unknown key {quote(key)}; allowed keys: {', '.join(CONTRACT_FILE_KEYS)}")
    for key in _REQUIRED_KEYS:
        if key not in data:
            _fail(path, f"missing required key {quote(key)}; required: {', '.join(_REQUIRED_KEYS)}")
    for key in ("artifact_id", "locator"):
        if not isinstance(data[key], str) or not data[key].strip():
            _fail(path, f"key {quote(key)} must be a non-empty string, got {_show(data[key])}")
    if "\x00" in data["locator"]:
        _fail(path, "key 'locator' holds a NUL character, which no path can hold")
    started = _parse_timestamp(path, data["run_started_at"])
    if not isinstance(data.get("require_fresh", True), bool):
        _fail(path, f"key 'require_fresh' must be true or false, got {_show(data['require_fresh'])}")
    for key in ("expected_sha256", "digest_key_env"):
        if data.get(key) is not None and not isinstance(data[key], str):
            _fail(path, f"key {quote(key)} must be a string or null, got {_show(data[key])}")
    timeout_s = data.get("observe_timeout_s", DEFAULT_OBSERVE_TIMEOUT_S)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not (
            0 < timeout_s and _finite(timeout_s)):
        _fail(path, f"key 'observe_timeout_s' must be a positive number of seconds, got {_show(timeout_s)}")
    max_bytes = data.get("max_artifact_bytes", DEFAULT_MAX_ARTIFACT_BYTES)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        _fail(path, f"key 'max_artifact_bytes' must be a positive whole number of bytes, got {_show(max_bytes)}")
    fields = {k: v for k, v in data.items() if k not in ("run_started_at", "observe_timeout_s", "max_artifact_bytes")}
    fields["validator"], command = _parse_validator(path, data.get("validator"))
    try:
        contract = OutcomeContract.model_validate(fields)
    except ValidationError as exc:
        key, message, _ = validation_problem(exc)
        _fail(path, f"key {key or '?'!r}: {message}")
    return ContractFile(contract, path.parent / data["locator"], started, command, float(timeout_s), max_bytes)


def _finite(number: float) -> bool:
    """A finite number of seconds (an int too large for a float, 10**400, is not: math.isfinite raised on it)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def _fail(path: Path, message: str) -> NoReturn:
    raise ContractFileError(f"{path}: {message}")


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):  # an integer too long to write, a value nested too deeply
        text = f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _read_json_object(path: Path) -> dict[str, Any]:
    try:
        text = read_regular(path, MAX_CONTRACT_BYTES).decode("utf-8-sig")  # a leading byte-order mark is not content
    except UnreadableFile as exc:
        raise ContractFileError(f"{path}: cannot read contract file: {exc}") from None
    except UnicodeDecodeError:
        raise ContractFileError(f"{path}: contract file is not UTF-8 text") from None
    try:
        data = json.loads(text, object_pairs_hook=keys_once)
    except KeyTwice as exc:
        raise ContractFileError(f"{path}: key {quote(exc.args[0])} appears twice") from None
    except json.JSONDecodeError as exc:
        raise ContractFileError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except RecursionError:
        raise ContractFileError(f"{path}: not valid JSON: nested too deeply") from None
    except ValueError as exc:  # a number of more than 4300 digits
        raise ContractFileError(f"{path}: not valid JSON: {str(exc).split(':')[0]}") from None
    if not isinstance(data, dict):
        raise ContractFileError(f"{path}: a contract file must be a JSON object, got {type(data).__name__}")
    return data


def _parse_timestamp(path: Path, value: Any) -> datetime:
    allowed = "an ISO-8601 timestamp with a timezone, e.g. 2026-07-25T14:00:00Z"
    if not isinstance(value, str):
        _fail(path, f"key 'run_started_at' must be {allowed}, got {_show(value)}")
    try:
        parsed = datetime.fromisoformat(re.sub(r"[zZ]$", "+00:00", value.strip()))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        _fail(path, f"key 'run_started_at' must be {allowed}, got {_show(value)}")
    try:
        return parsed.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:00+14:00 is before year 1 in UTC
        _fail(path, f"key 'run_started_at' must be {allowed}, of a year 1–9999 in UTC, got {_show(value)}")


def _parse_validator(path: Path, value: Any) -> tuple[str | None, list[str] | None]:
    allowed = 'null, a registered validator name, or {"command": ["program", "arg", ...]}'
    if value is None:
        return None, None
    if isinstance(value, str) and value.strip():
        return value, None
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"command"})
        if unknown:
            _fail(path, f"key 'validator.{unknown[0]}' is not allowed; validator must be {allowed}")
        argv = value.get("command")
        if isinstance(argv, list) and argv and all(isinstance(arg, str) and arg and "\x00" not in arg for arg in argv):
            return COMMAND_VALIDATOR, list(argv)
        _fail(
            path, f"key 'validator.command' must be a non-empty list of non-empty strings without a NUL character, "
                  f"got {_show(argv)}"
        )
    _fail(path, f"key 'validator' must be {allowed}, got {_show(value)}")
