"""Contract files for ``oloproof receipt CONTRACT.json``: read, checked key by key, one-line errors."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from .._core.receipts import OutcomeContract
from ..errors import ContractFileError, validation_problem

__all__ = ["COMMAND_VALIDATOR", "CONTRACT_FILE_KEYS", "load_contract_file"]

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
)
_REQUIRED_KEYS = CONTRACT_FILE_KEYS[:3]


def load_contract_file(
    path: Path | str,
) -> tuple[OutcomeContract, Path, datetime, list[str] | None]:
    """Read a contract file (JSON) for ``oloproof receipt``.

    Parameters
    ----------
    path : Path or str
        A JSON object with the keys of :data:`CONTRACT_FILE_KEYS`; ``artifact_id``, ``locator``
        (relative to the file's folder) and ``run_started_at`` (ISO-8601 with a timezone) are
        required. ``validator`` is ``{"command": [argv...]}`` or the name of a registered validator.

    Returns
    -------
    contract : OutcomeContract
        With ``validator="command"`` for a command validator.
    artifact_path : Path
        ``locator`` joined to the contract file's folder.
    run_started_at : datetime
        In UTC.
    command : list of str or None
        The command validator's argv (run with cwd = the contract file's folder), else ``None``.

    Raises
    ------
    ContractFileError
        One line naming the file, the key and what is allowed.
    """
    path = Path(path)
    data = _read_json_object(path)
    for key in data:
        if key not in CONTRACT_FILE_KEYS:
            _fail(path, f"unknown key {key!r}; allowed keys: {', '.join(CONTRACT_FILE_KEYS)}")
    for key in _REQUIRED_KEYS:
        if key not in data:
            _fail(path, f"missing required key {key!r}; required: {', '.join(_REQUIRED_KEYS)}")
    for key in ("artifact_id", "locator"):
        if not isinstance(data[key], str) or not data[key].strip():
            _fail(path, f"key {key!r} must be a non-empty string, got {_show(data[key])}")
    started = _parse_timestamp(path, data["run_started_at"])
    if not isinstance(data.get("require_fresh", True), bool):
        _fail(path, f"key 'require_fresh' must be true or false, got {_show(data['require_fresh'])}")
    for key in ("expected_sha256", "digest_key_env"):
        if data.get(key) is not None and not isinstance(data[key], str):
            _fail(path, f"key {key!r} must be a string or null, got {_show(data[key])}")
    fields = {k: v for k, v in data.items() if k != "run_started_at"}
    fields["validator"], command = _parse_validator(path, data.get("validator"))
    try:
        contract = OutcomeContract.model_validate(fields)
    except ValidationError as exc:
        key, message, _ = validation_problem(exc)
        _fail(path, f"key {key or '?'!r}: {message}")
    return contract, path.parent / data["locator"], started, command


def _fail(path: Path, message: str) -> NoReturn:
    raise ContractFileError(f"{path}: {message}")


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _read_json_object(path: Path) -> dict[str, Any]:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ContractFileError(f"{path}: cannot read contract file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ContractFileError(f"{path}: contract file is not UTF-8 text") from None

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise ContractFileError(f"{path}: key {key!r} appears twice")
            seen[key] = value
        return seen

    try:
        data = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise ContractFileError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
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
    return parsed.astimezone(timezone.utc)


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
        if isinstance(argv, list) and argv and all(isinstance(arg, str) and arg for arg in argv):
            return COMMAND_VALIDATOR, list(argv)
        _fail(
            path, f"key 'validator.command' must be a non-empty list of non-empty strings, got {_show(argv)}"
        )
    _fail(path, f"key 'validator' must be {allowed}, got {_show(value)}")
