"""The local-file observer: stat an artifact, digest its bytes, run its validator.

Also reads the contract file of ``oloproof receipt CONTRACT.json``. Evidence built
here never holds the artifact's content, its path or an HMAC key: a crashing
validator is reported by its exception's type only (a message could quote the
content or the path), a command by its program's base name.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from oloproof_nb.errors import OloproofError
from oloproof_nb.receipts import Evidence, OutcomeContract, Receipt, classify_outcome, digest_key_from_env

__all__ = [
    "COMMAND_VALIDATOR",
    "CONTRACT_FILE_KEYS",
    "EVIDENCE_SOURCE",
    "ContractFileError",
    "Validator",
    "load_contract_file",
    "observe_file",
    "verify_contract_file",
]

#: A validator: a Python callable ``f(path) -> bool | int | None``, or a command (argv list) that gets
#: the artifact's absolute path appended as its last argument.
Validator = Callable[[Path], bool | int | None] | Sequence[str]

#: ``evidence_source`` of evidence made by :func:`observe_file`.
EVIDENCE_SOURCE = "local_file_stat"
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
_CHUNK = 1 << 20


class ContractFileError(OloproofError):
    """A contract file cannot be used; the message is one line naming the file and the key."""


# --------------------------------------------------------------------------- observing


def observe_file(
    contract: OutcomeContract,
    path: Path | str,
    *,
    validators: Mapping[str, Validator] | None = None,
    validator_timeout_s: float = 60.0,
    validator_cwd: Path | str | None = None,
    environ: Mapping[str, str] = os.environ,
    now: Callable[[], datetime] | None = None,
) -> Evidence | None:
    """Observe a local file as evidence for ``contract``.

    Parameters
    ----------
    contract : OutcomeContract
        The promise; its ``digest_key_env`` selects keyed digests, its ``validator`` names
        the entry of ``validators`` to run.
    path : Path or str
        The artifact's file.
    validators : Mapping[str, Validator], optional
        Registered validators by name: a callable ``f(path) -> bool | int | None`` (``True``,
        ``0`` or ``None`` pass as exit 0, ``False`` is exit 1, an int is that exit code), or a
        command (list of argv strings) run with the artifact's absolute path appended.
    validator_timeout_s : float
        Seconds a validator may run. A timed-out callable keeps running in a daemon thread
        (Python cannot stop it); a timed-out command is killed.
    validator_cwd : Path or str, optional
        Working directory of command validators (default: the current one).
    environ : Mapping[str, str]
        Where ``digest_key_env`` is looked up.
    now : callable, optional
        Returns the (timezone-aware) observation time; default ``datetime.now(timezone.utc)``.

    Returns
    -------
    Evidence or None
        ``None`` when the file does not exist. Otherwise ``modified_at`` from the file's
        mtime (UTC), ``sha256`` the plain or keyed digest of its bytes, and the validator's
        exit code, or ``validator_error`` saying why there is none (not registered, crashed,
        timed out), and ``evidence_source="local_file_stat"``.

    Raises
    ------
    DigestKeyError
        ``digest_key_env`` is set and the variable is unset or empty (checked first, so a
        misconfigured key is reported even when the file is missing).
    ValueError
        ``path`` exists but is not a regular file or cannot be read; bad timeout.
    """
    if not validator_timeout_s > 0:
        raise ValueError(
            f"validator_timeout_s must be a positive number of seconds, got {validator_timeout_s!r}"
        )
    key = digest_key_from_env(contract.digest_key_env, environ) if contract.digest_key_env else None
    path = Path(path)
    if not path.exists():
        return None
    if not path.is_file():
        raise ValueError(f"artifact {contract.artifact_id!r}: {path} exists but is not a regular file")
    hasher = hmac.new(key, digestmod=hashlib.sha256) if key is not None else hashlib.sha256()
    try:
        with path.open("rb") as handle:
            mtime_ns = os.fstat(handle.fileno()).st_mtime_ns
            observed_at = (now or _utc_now)()
            while chunk := handle.read(_CHUNK):
                hasher.update(chunk)
    except OSError as exc:
        raise ValueError(f"artifact {contract.artifact_id!r}: cannot read {path}: {exc.strerror}") from None
    exit_code, error = None, None
    if contract.validator is not None:
        exit_code, error = _run_named_validator(
            contract, path, validators or {}, validator_timeout_s, validator_cwd
        )
    return Evidence(
        artifact_id=contract.artifact_id,
        observed_at=observed_at,
        modified_at=_from_ns(mtime_ns),
        sha256=hasher.hexdigest(),
        digest_kind=contract.digest_kind,
        validator=contract.validator,
        validator_exit_code=exit_code,
        validator_error=error,
        evidence_source=EVIDENCE_SOURCE,
    )


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _from_ns(ns: int) -> datetime:
    seconds, rest = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, timezone.utc) + timedelta(microseconds=rest // 1000)


def _run_named_validator(
    contract: OutcomeContract,
    path: Path,
    validators: Mapping[str, Validator],
    timeout_s: float,
    cwd: Path | str | None,
) -> tuple[int | None, str | None]:
    name = str(contract.validator)
    spec = validators.get(name)
    if spec is None:
        known = ", ".join(sorted(validators)) or "none"
        return None, f"validator {name} is not registered (registered: {known})"
    if callable(spec):
        code, error = _run_callable(spec, path, name, timeout_s)
    elif (
        isinstance(spec, Sequence)
        and not isinstance(spec, str)
        and spec
        and all(isinstance(arg, str) and arg for arg in spec)
    ):
        code, error = _run_command(list(spec), path, name, timeout_s, cwd)
    else:
        raise TypeError(
            f"validator {name!r} must be a callable or a non-empty list of argv strings, got {spec!r}"
        )
    return code, error


def _run_callable(
    fn: Callable[[Path], Any], path: Path, name: str, timeout_s: float
) -> tuple[int | None, str | None]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn(path)
        except BaseException as exc:  # noqa: B036 - report any crash, SystemExit included, as evidence
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"oloproof-validator-{name}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        return None, f"validator {name} timed out after {timeout_s:g}s"
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, SystemExit) and (exc.code is None or isinstance(exc.code, int)):
            return int(exc.code or 0), None
        # the exception's type only: its message could quote the artifact's content
        return None, f"validator {name} raised {type(exc).__name__}"
    result = box.get("result")
    if result is None or result is True:
        return 0, None
    if result is False:
        return 1, None
    if isinstance(result, int):
        return int(result), None
    return None, f"validator {name} returned {type(result).__name__}; expected bool, int or None"


def _run_command(
    argv: list[str], path: Path, name: str, timeout_s: float, cwd: Path | str | None
) -> tuple[int | None, str | None]:
    program = os.path.basename(argv[0])
    try:
        done = subprocess.run(
            [*argv, str(path.resolve())],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"validator {name} ({program}) timed out after {timeout_s:g}s"
    except FileNotFoundError:
        return None, f"validator {name}: command {program!r} not found"
    except PermissionError:
        return None, f"validator {name}: command {program!r} is not executable"
    except OSError as exc:
        return None, f"validator {name}: command {program!r} could not start: {exc.strerror}"
    if done.returncode < 0:
        return None, f"validator {name} ({program}) was killed by signal {-done.returncode}"
    return done.returncode, None


# --------------------------------------------------------------------------- contract files


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
        err = exc.errors()[0]
        key = ".".join(str(part) for part in err["loc"]) or "?"
        _fail(path, f"key {key!r}: {err['msg'].removeprefix('Value error, ')}")
    return contract, path.parent / data["locator"], started, command


def verify_contract_file(
    path: Path | str,
    *,
    validators: Mapping[str, Validator] | None = None,
    validator_timeout_s: float = 60.0,
    environ: Mapping[str, str] = os.environ,
    now: Callable[[], datetime] | None = None,
) -> Receipt:
    """Verify the outcome a contract file promises, now: load, observe, classify.

    Parameters
    ----------
    path : Path or str
        The contract file (see :func:`load_contract_file`).
    validators : Mapping[str, Validator], optional
        Registered validators, for a contract whose ``validator`` is a name.
    validator_timeout_s, environ, now
        As in :func:`observe_file`.

    Returns
    -------
    Receipt
        Classified with the file's ``run_started_at``; never waiting.

    Raises
    ------
    ContractFileError
        The contract file is unusable.
    DigestKeyError
        ``digest_key_env`` names an unset or empty variable.
    """
    contract, artifact, started, command = load_contract_file(path)
    registry: dict[str, Validator] = dict(validators or {})
    if command is not None:
        registry[COMMAND_VALIDATOR] = command
    evidence = observe_file(
        contract,
        artifact,
        validators=registry,
        validator_timeout_s=validator_timeout_s,
        validator_cwd=Path(path).parent,
        environ=environ,
        now=now,
    )
    return classify_outcome(contract, evidence, run_started_at=started)


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
