"""Observing promised artifacts: the system's ``observe``, the local-file observer, and validators.

Evidence built here never holds the artifact's content, its path or an HMAC
key: a crashing validator is reported by its exception's type only (a message
could quote the content or the path), a command by its program's base name.
``oloproof receipt`` verifies a contract file with :func:`verify_contract_file`.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._config.contracts import COMMAND_VALIDATOR, load_contract_file
from .._core.canonical import utc_now
from .._core.receipts import Evidence, OutcomeContract, Receipt, classify_outcome, digest_key_from_env
from ..errors import DigestKeyError, validation_problem
from .timeouts import CaseTimeout, call_with_timeout

__all__ = [
    "EVIDENCE_SOURCE",
    "SYSTEM_OBSERVE",
    "Validator",
    "collect_evidence",
    "observe_file",
    "verify_contract_file",
]

#: A validator: a Python callable ``f(path) -> bool | int | None``, or a command (argv list) that gets
#: the artifact's absolute path appended as its last argument.
Validator = Callable[[Path], bool | int | None] | Sequence[str]

#: ``evidence_source`` of evidence made by :func:`observe_file`.
EVIDENCE_SOURCE = "local_file_stat"
#: ``evidence_source`` of evidence that came from the system's ``observe(artifact_id)``.
SYSTEM_OBSERVE = "system_observe"
_CHUNK = 1 << 20


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
            observed_at = (now or utc_now)()
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
    try:
        result = call_with_timeout(lambda: fn(path), timeout_s)
    except CaseTimeout:
        return None, f"validator {name} timed out after {timeout_s:g}s"
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return int(exc.code or 0), None
        return None, f"validator {name} raised SystemExit"
    except BaseException as exc:  # noqa: B036 - report any crash as evidence
        # the type only: its message could quote the artifact's content
        return None, f"validator {name} raised {type(exc).__name__}"
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


# --------------------------------------------------------------------------- during a run


def collect_evidence(contract: OutcomeContract, system: Any, *, call: Callable[[Callable[[], Any]], Any],
                     validators: Mapping[str, Validator], timeout_s: float | None,
                     suite_root: Path | None) -> tuple[Evidence | None, str | None]:
    """Observe a promised artifact right after a case: ``(evidence, None)``, or ``(None, why)``.

    ``(None, None)`` means the observer looked and found no artifact. In order:

    1. a system with ``observe(artifact_id)`` is asked (through ``call``, under the
       case timeout; a :class:`CaseTimeout` propagates): it may return ``None``, an
       :class:`~oloproof_nb.Evidence` or a dict of its fields (``evidence_source``
       defaults to ``system_observe``), or a :class:`os.PathLike` to observe as a local file;
    2. otherwise a contract with a ``locator`` is observed at ``locator`` relative
       to the suite folder;
    3. otherwise nothing can observe it.
    """
    observe = getattr(system, "observe", None)
    if callable(observe):
        try:
            result = call(lambda: observe(contract.artifact_id))
        except CaseTimeout:
            raise  # the system is stuck: the case records a missing verdict and replaces it
        except Exception as exc:  # noqa: BLE001 - a broken observer leaves the outcome unverified
            # the type only: a message could quote a path or the content
            return None, f"observe() raised {type(exc).__name__}"
        if result is None or isinstance(result, Evidence):
            return result, None
        if isinstance(result, os.PathLike):
            return _observe_path(contract, Path(os.fspath(result)), SYSTEM_OBSERVE, validators, timeout_s,
                                 suite_root)
        if isinstance(result, Mapping):
            try:
                return Evidence.model_validate({"evidence_source": SYSTEM_OBSERVE, **result}), None
            except ValidationError as exc:
                key, message, _ = validation_problem(exc)
                return None, f"observe() returned invalid evidence: {key or 'evidence'}: {message}"
        return None, (f"observe() returned {type(result).__name__}; expected Evidence, a dict of its fields, "
                      "a path or None")
    if contract.locator is not None:
        root = suite_root if suite_root is not None else Path.cwd()
        return _observe_path(contract, root / contract.locator, EVIDENCE_SOURCE, validators, timeout_s, suite_root)
    return None, (f"nothing can observe artifact {contract.artifact_id!r}: the system has no "
                  "observe(artifact_id) and the contract no locator")


#: Seconds a validator may run when the run sets no case timeout.
DEFAULT_VALIDATOR_TIMEOUT_S = 60.0


def _observe_path(contract: OutcomeContract, path: Path, source: str, validators: Mapping[str, Validator],
                  timeout_s: float | None, suite_root: Path | None) -> tuple[Evidence | None, str | None]:
    try:
        evidence = observe_file(contract, path, validators=validators,
                                validator_timeout_s=timeout_s or DEFAULT_VALIDATOR_TIMEOUT_S,
                                validator_cwd=suite_root)
    except DigestKeyError as exc:  # names the variable, never its value
        return None, str(exc)
    except ValueError:  # its message names the path: say what happened without it
        return None, f"artifact {contract.artifact_id!r} exists but could not be read as a regular file"
    if evidence is None or evidence.evidence_source == source:
        return evidence, None
    return evidence.model_copy(update={"evidence_source": source}), None
