"""Outcome receipts: contracts, evidence, the ordered classification and digests.

This module is pure: it knows nothing of files, pandas or the command line. The
local-file observer lives in ``_run/observe``; frames are built in ``_analysis/receipts``.

Notes
-----
A receipt says, for one promised artifact, which check decided its status. The
checks run in a fixed order and the first that applies wins::

    0. waiting           the run declared a wait (never a failure, never success)
    1. missing           no artifact observed
    2. wrong_artifact    the observation belongs to another target
    3. stale             modified before the run started
    4. hash_mismatch     exact bytes required and they differ
    5. validator_failed  the artifact exists but fails acceptance
    6. unverified        a required check did not run or its evidence is unavailable (also: a
                         modification time after the observation, which shows no freshness)
    7. verified          every required condition passed

The order puts identity before age before bytes before acceptance: a stale file
with the wrong bytes is reported as ``stale`` because the age already proves it
is not this run's artifact, whatever its bytes.

Secrets: an HMAC key is read from the environment only when digesting and is
never stored in a model, a receipt, an error message or a ``repr``.
"""

from __future__ import annotations

import hashlib
import hmac
import numbers
import os
import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import DigestKeyError, quote, storable
from .canonical import iso

__all__ = [
    "EXIT_CODE_RANGE",
    "FAILURE_STATUSES",
    "FUTURE_MTIME_TOLERANCE",
    "STATUSES",
    "DigestKind",
    "Evidence",
    "OutcomeContract",
    "Receipt",
    "ReceiptStatus",
    "classify_outcome",
    "digest_key_from_env",
    "hmac_sha256_hex",
    "sha256_hex",
]

ReceiptStatus = Literal[
    "missing",
    "wrong_artifact",
    "stale",
    "hash_mismatch",
    "validator_failed",
    "unverified",
    "verified",
    "waiting",
]
DigestKind = Literal["sha256", "hmac-sha256"]

#: Every receipt status, in the order the checks run (``waiting`` last: it is decided before all others).
STATUSES: tuple[str, ...] = get_args(ReceiptStatus)
#: Statuses that mean the promised outcome was not delivered.
FAILURE_STATUSES: tuple[str, ...] = (
    "missing",
    "wrong_artifact",
    "stale",
    "hash_mismatch",
    "validator_failed",
)

#: How far a modification time may lie after the observation and still show freshness: file systems stamp
#: from a coarse clock (behind, never ahead, on a local disk); a network file system's server clock, or FAT's
#: two-second times, may put it slightly ahead. Further ahead, the time was set by hand or by a clock since
#: set back (a file left by an earlier run), and it shows nothing about this run.
FUTURE_MTIME_TOLERANCE = timedelta(seconds=2)

#: The exit codes evidence and receipts hold: a 64-bit signed integer, as the receipts frame's ``Int64`` column
#: and its Parquet copy store it (a callable validator that returned ``2**70`` stopped the run with an
#: ``OverflowError`` while its receipt was written to the columnar copy, and every later load of the run too).
EXIT_CODE_RANGE: tuple[int, int] = (-(1 << 63), (1 << 63) - 1)

_HEX64 = re.compile(r"[0-9a-f]{64}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --------------------------------------------------------------------------- validators


def _utc(value: datetime) -> datetime:
    """Reject naive datetimes, and aware ones that fall outside the years 1–9999 in UTC; return aware ones
    converted to UTC (an ``OverflowError`` here stopped a run whose system's ``observe()`` gave such a time)."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError(
            f"datetime {value.isoformat()} has no timezone; give an aware datetime, "
            "e.g. datetime(..., tzinfo=timezone.utc) or '2026-07-25T14:00:00Z'"
        )
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:  # datetime.min at +02:00 is before year 1 in UTC
        raise ValueError(f"datetime {value.isoformat()} is outside the years 1–9999 in UTC") from None


def _hex64(value: str | None) -> str | None:
    if value is not None and not _HEX64.fullmatch(value):
        raise ValueError(f"must be 64 lowercase hexadecimal characters, got {quote(value)}")
    return value


def _non_empty(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must be a non-empty string")
    return value


def _exit_code(value: Any) -> Any:
    """An exit code as given (a strict int field refuses text and floats), refusing a bool and taking a NumPy
    integer as the whole number it is."""
    if isinstance(value, bool):
        raise ValueError(f"must be an exit code (0 passes), got {value}: give 0 for a pass and 1 for a "
                         "failure (False read as exit 0 would pass a failed check)")
    if isinstance(value, numbers.Integral) and not isinstance(value, int):
        return int(value)  # a NumPy integer (read from a frame of results): a whole number all the same
    return value


def _storable(value: str | None) -> str | None:
    """Text a system reports (its message may quote a file name that is not UTF-8) with every lone surrogate
    written as its escape: a receipt holding it is stored (it stopped the run as it was written)."""
    return None if value is None else storable(value)


def _env_name(value: str | None) -> str | None:
    if value is not None and not _ENV_NAME.fullmatch(value):
        raise ValueError("must be the name of an environment variable (letters, digits, underscore)")
    return value


UtcDatetime = Annotated[datetime, AfterValidator(_utc)]
Hex64 = Annotated[str | None, AfterValidator(_hex64)]
Name = Annotated[str, AfterValidator(_non_empty)]
OptionalName = Annotated[str | None, AfterValidator(_non_empty)]
EnvName = Annotated[str | None, AfterValidator(_env_name)]
ReportedName = Annotated[str, AfterValidator(_non_empty), AfterValidator(_storable)]
ReportedText = Annotated[str | None, AfterValidator(_storable)]


# --------------------------------------------------------------------------- models


class OutcomeContract(BaseModel):
    """The outcome a run promised, written before the run.

    Parameters
    ----------
    artifact_id : str
        Opaque id of the promised artifact (never a path or a customer name).
    expected_sha256 : str or None
        Expected digest, 64 lowercase hex. Plain SHA-256 of the expected bytes, or, when
        ``digest_key_env`` is set, the expected HMAC-SHA256 of those bytes under that key.
    validator : str or None
        Name of a registered validator the artifact must pass.
    require_fresh : bool
        The artifact must be modified at or after the run started (default true).
    digest_key_env : str or None
        Name of an environment variable holding an HMAC key; digests are then keyed.
    locator : str or None
        Where a local-file observer finds the artifact, relative to the contract's folder.
        Used to observe only; never copied into a receipt.

    Attributes
    ----------
    digest_kind : {"sha256", "hmac-sha256"}
        ``"hmac-sha256"`` when ``digest_key_env`` is set, else ``"sha256"``.

    Examples
    --------
    >>> c = OutcomeContract(artifact_id="monthly-report", expected_sha256="ab" * 32)
    >>> c.require_fresh, c.digest_kind
    (True, 'sha256')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    artifact_id: Name
    expected_sha256: Hex64 = None
    validator: OptionalName = None
    require_fresh: bool = Field(default=True, strict=True)  # "no", "off" or 0 do not turn freshness off
    digest_key_env: EnvName = None
    locator: OptionalName = None

    @property
    def digest_kind(self) -> DigestKind:
        """``"hmac-sha256"`` when ``digest_key_env`` is set, else ``"sha256"``."""
        return "hmac-sha256" if self.digest_key_env else "sha256"


class Evidence(BaseModel):
    """What an observer saw of an artifact (``None`` stands for "nothing observed").

    Parameters
    ----------
    artifact_id : str
        The target the observation belongs to.
    observed_at : datetime
        When the observation was made (timezone-aware; stored in UTC).
    modified_at : datetime or None
        When the artifact was last modified, if known (timezone-aware; stored in UTC).
    sha256 : str or None
        The observed digest, plain or keyed (see ``digest_kind``), 64 lowercase hex.
    digest_kind : {"sha256", "hmac-sha256"} or None
        Kind of ``sha256``; defaults to ``"sha256"`` when a digest is given.
    validator : str or None
        Name of the validator that ran (or was asked for).
    validator_exit_code : int or None
        Its exit code; 0 passes. ``None`` when it did not run to completion. A whole number only (a NumPy
        integer too) within :data:`EXIT_CODE_RANGE` (64 bits, signed): a bool, text or a float is refused
        (``False``, a validator's "fails", would read as exit 0, a pass).
    validator_error : str or None
        Why the validator gave no exit code (crashed, timed out, not registered).
    evidence_source : str
        Who observed, e.g. ``"local_file_stat"`` or ``"system_observe"``.

        In both, a character UTF-8 cannot hold (a lone surrogate: a file name read from bytes that are not
        UTF-8) is kept as its escape (``\\udcff``), so a receipt quoting it can be stored.

    Notes
    -----
    Naive datetimes are rejected with a ``ValueError`` rather than guessed to be UTC.

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> ev = Evidence(artifact_id="monthly-report", observed_at=datetime(2026, 7, 25, 14, tzinfo=timezone.utc),
    ...               sha256="ab" * 32, evidence_source="local_file_stat")
    >>> ev.digest_kind
    'sha256'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    artifact_id: Name
    observed_at: UtcDatetime
    modified_at: UtcDatetime | None = None
    sha256: Hex64 = None
    digest_kind: DigestKind | None = None
    validator: OptionalName = None
    # strict: False (a validator's "fails", as a callable validator returns it) is no exit 0, "0" no number
    validator_exit_code: int | None = Field(default=None, strict=True, ge=EXIT_CODE_RANGE[0], le=EXIT_CODE_RANGE[1])
    validator_error: ReportedText = None
    evidence_source: ReportedName

    _exit_code_not_bool = field_validator("validator_exit_code", mode="before")(_exit_code)

    @model_validator(mode="before")
    @classmethod
    def _default_digest_kind(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("sha256") is not None and data.get("digest_kind") is None:
            data = {**data, "digest_kind": "sha256"}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Evidence:
        if self.sha256 is None and self.digest_kind is not None:
            raise ValueError("digest_kind is given but sha256 is not; give both or neither")
        if self.validator is None and (self.validator_exit_code is not None or self.validator_error):
            raise ValueError("validator_exit_code or validator_error is given without the validator's name")
        if self.validator_exit_code is not None and self.validator_error is not None:
            raise ValueError(
                "give validator_exit_code (the validator ran) or validator_error (it did not), not both"
            )
        return self


class Receipt(BaseModel):
    """The classified outcome of one contract: status, the check that decided it, and its evidence.

    Never holds the artifact's content, its locator or any key.

    Parameters
    ----------
    artifact_id : str
        The contract's artifact id.
    run_started_at : datetime
        When the run started (UTC).
    observed_at, modified_at : datetime or None
        From the evidence (UTC); ``None`` when nothing was observed.
    expected_sha256 : str or None
        From the contract.
    observed_digest : str or None
        The observed digest, of kind ``digest_kind``.
    digest_kind : {"sha256", "hmac-sha256"} or None
        Kind of the observed digest.
    validator : str or None
        The validator the contract names.
    validator_exit_code : int or None
        Exit code of that validator, when the evidence has one for it (within :data:`EXIT_CODE_RANGE`).
    evidence_source : str or None
        Who observed; ``None`` when nothing was observed.
    status : str
        One of :data:`STATUSES`.
    reason : str
        Which check decided, in words.

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> t0 = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)
    >>> r = classify_outcome(OutcomeContract(artifact_id="monthly-report"), None, run_started_at=t0)
    >>> r.status, r.observed_at, r.evidence_source
    ('missing', None, None)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    artifact_id: Name
    run_started_at: UtcDatetime
    observed_at: UtcDatetime | None = None
    modified_at: UtcDatetime | None = None
    expected_sha256: Hex64 = None
    observed_digest: Hex64 = None
    digest_kind: DigestKind | None = None
    validator: str | None = None
    # strict, as the evidence's: a receipt read back with False, "0" or 0.0 held exit 0 beside validator_failed
    validator_exit_code: int | None = Field(default=None, strict=True, ge=EXIT_CODE_RANGE[0], le=EXIT_CODE_RANGE[1])
    evidence_source: str | None = None
    status: ReceiptStatus

    _exit_code_not_bool = field_validator("validator_exit_code", mode="before")(_exit_code)
    reason: str = Field(min_length=1)

    def to_json_dict(self) -> dict[str, Any]:
        """Return the receipt as a JSON-ready dict; datetimes as ISO-8601 UTC strings ending in ``Z``.

        Examples
        --------
        >>> from datetime import datetime, timezone
        >>> r = Receipt(artifact_id="a", run_started_at=datetime(2026, 7, 25, 14, tzinfo=timezone.utc),
        ...             status="missing", reason="no artifact observed")
        >>> r.to_json_dict()["run_started_at"]
        '2026-07-25T14:00:00.000000Z'
        """
        out = self.model_dump()
        for key in ("run_started_at", "observed_at", "modified_at"):
            out[key] = None if out[key] is None else iso(out[key])
        return out


# --------------------------------------------------------------------------- classification


def classify_outcome(
    contract: OutcomeContract,
    evidence: Evidence | None,
    *,
    run_started_at: datetime,
    waiting: bool = False,
    untouched: bool = False,
    earlier: bool = False,
) -> Receipt:
    """Classify one promised outcome; the first check that applies wins.

    Parameters
    ----------
    contract : OutcomeContract
        What the run promised.
    evidence : Evidence or None
        What was observed; ``None`` when no artifact was observed.
    run_started_at : datetime
        When the run started (timezone-aware). Freshness means ``modified_at >= run_started_at``, and
        ``modified_at`` no later than ``observed_at`` + :data:`FUTURE_MTIME_TOLERANCE` (a time further
        ahead was set by hand or by a clock since set back: ``unverified``), and ``observed_at`` not before
        ``run_started_at`` (an observation taken before the run, as a cached one, shows nothing it wrote:
        ``unverified``).
    waiting : bool
        The run declared a wait (an approval, a dependency): status ``waiting``.
    untouched : bool
        The artifact is the very file the sandbox's reset left (the same modification time, size and inode
        just after the reset and after the case): with freshness required it is ``stale``, however recent
        its modification time (a reset that writes its fixture files makes them newer than the case start).
    earlier : bool
        The artifact is the version (the same modification time and digest) an earlier case of the run was
        shown before this case started: with freshness required it is ``stale``, however close its time to
        the start (the freshness margin cannot tell a file the case before wrote a few milliseconds earlier).

    Returns
    -------
    Receipt
        ``status`` is one of :data:`STATUSES`; ``reason`` names the check that decided.

    Notes
    -----
    Order (first that applies wins): ``waiting``; ``missing`` (no evidence);
    ``wrong_artifact`` (evidence for another id); ``stale`` (freshness required and
    ``untouched``, ``earlier`` or ``modified_at < run_started_at``); ``hash_mismatch``
    (``expected_sha256`` set, an observed digest of the same kind, and they differ);
    ``validator_failed`` (the contract's validator ran and exited non-zero); ``unverified``
    (a required check has no evidence, or freshness is required and the modification time
    lies after the observation or the observation before the run started); ``verified``.

    Keyed digests: when ``digest_key_env`` is set, the contract's ``expected_sha256`` holds the
    expected HMAC-SHA256 hex and the evidence must carry ``digest_kind="hmac-sha256"``. A digest
    of the other kind cannot be compared, so the digest check lacks evidence (``unverified``,
    reason "digest kind differs"), never ``hash_mismatch``.

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> t0 = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)
    >>> c = OutcomeContract(artifact_id="monthly-report")
    >>> classify_outcome(c, None, run_started_at=t0).status
    'missing'
    """
    start = _utc(run_started_at)
    validator = contract.validator
    exit_code = None
    if evidence is not None and validator is not None and evidence.validator == validator:
        exit_code = evidence.validator_exit_code
    fields: dict[str, Any] = {
        "artifact_id": contract.artifact_id,
        "run_started_at": start,
        "expected_sha256": contract.expected_sha256,
        "validator": validator,
        "validator_exit_code": exit_code,
    }
    if evidence is not None:
        fields.update(
            observed_at=evidence.observed_at,
            modified_at=evidence.modified_at,
            observed_digest=evidence.sha256,
            digest_kind=evidence.digest_kind,
            evidence_source=evidence.evidence_source,
        )
    status, reason = _decide(contract, evidence, start, waiting, untouched, earlier)
    return Receipt(**fields, status=status, reason=reason)


def _decide(
    contract: OutcomeContract, ev: Evidence | None, start: datetime, waiting: bool, untouched: bool = False,
    earlier: bool = False,
) -> tuple[ReceiptStatus, str]:
    if waiting:
        return "waiting", "waiting: the run declared a wait; the outcome is not yet due"
    if ev is None:
        return "missing", "missing: no artifact observed"
    if ev.artifact_id != contract.artifact_id:
        return "wrong_artifact", (
            f"wrong_artifact: evidence is for {quote(ev.artifact_id)}, contract promises {quote(contract.artifact_id)}"
        )
    if contract.require_fresh and untouched:
        return "stale", "stale: unchanged since the sandbox was reset: the file the reset left, not one this case wrote"
    if contract.require_fresh and earlier:
        return "stale", ("stale: the artifact an earlier case of this run was shown (the same modification time "
                         "and digest), not one this case wrote")
    if contract.require_fresh and ev.modified_at is not None and ev.modified_at < start:
        return "stale", (
            f"stale: modified at {iso(ev.modified_at)}, before the run started at {iso(start)}"
        )
    kind = contract.digest_kind
    expected, observed = contract.expected_sha256, ev.sha256
    comparable = expected is not None and observed is not None and ev.digest_kind == kind
    if comparable and not hmac.compare_digest(str(observed), str(expected)):
        return "hash_mismatch", f"hash_mismatch: observed {kind} differs from expected_sha256"
    ran = contract.validator is not None and ev.validator == contract.validator
    if ran and ev.validator_exit_code is not None and ev.validator_exit_code != 0:
        return "validator_failed", (
            f"validator_failed: validator {contract.validator} exited {ev.validator_exit_code}"
        )

    lacking: list[str] = []
    passed = ["present"]
    if contract.require_fresh:
        if ev.modified_at is None:
            lacking.append("freshness required but no modification time observed")
        elif ev.observed_at < start:  # and modified at or after the start: after it was seen, within the tolerance
            lacking.append(
                f"freshness cannot be shown: observed at {iso(ev.observed_at)}, before the run started at "
                f"{iso(start)} (an observation taken before the run cannot have seen what it wrote)"
            )
        elif ev.modified_at > ev.observed_at + FUTURE_MTIME_TOLERANCE:
            lacking.append(
                f"freshness cannot be shown: modified at {iso(ev.modified_at)}, after it was observed at "
                f"{iso(ev.observed_at)} (a time set by hand, a clock since set back, or a file server whose "
                "clock runs ahead of this machine's)"
            )
        else:
            passed.append("fresh")
    if contract.expected_sha256 is not None:
        if ev.sha256 is None:
            lacking.append(f"expected_sha256 set but no digest observed ({kind} required)")
        elif ev.digest_kind != kind:
            lacking.append(f"digest kind differs: observed {ev.digest_kind}, contract requires {kind}")
        else:
            passed.append(f"{kind} matches")
    if contract.validator is not None:
        if ev.validator != contract.validator:
            source = f"evidence is from validator {quote(ev.validator)}" if ev.validator else "evidence names none"
            lacking.append(f"no result from validator {contract.validator} ({source})")
        elif ev.validator_exit_code is None:
            missing_why = f"validator {contract.validator} did not report an exit code"
            lacking.append(ev.validator_error or missing_why)
        else:
            passed.append(f"validator {contract.validator} exit 0")
    if lacking:
        return "unverified", "unverified: " + "; ".join(lacking)
    return "verified", "verified: " + ", ".join(passed)


# --------------------------------------------------------------------------- digests


def sha256_hex(data: bytes) -> str:
    """Return the SHA-256 of ``data`` as 64 lowercase hex characters.

    Examples
    --------
    >>> sha256_hex(b"")[:16]
    'e3b0c44298fc1c14'
    """
    return hashlib.sha256(data).hexdigest()


def hmac_sha256_hex(data: bytes, key: bytes) -> str:
    """Return the HMAC-SHA256 of ``data`` under ``key`` as 64 lowercase hex characters.

    Examples
    --------
    >>> hmac_sha256_hex(b"", b"k") != sha256_hex(b"")
    True
    """
    if not key:
        raise ValueError("HMAC key must be non-empty bytes")
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def digest_key_from_env(env_name: str, environ: Mapping[str, str] | None = None) -> bytes:
    """Read an HMAC key from the environment variable ``env_name``: from ``os.environ``, the bytes the process was
    given, whatever the locale's encoding; from another mapping, its text's UTF-8 bytes (a value that is not UTF-8,
    its bytes escaped as ``os.environ`` escapes them, gives those bytes).

    Parameters
    ----------
    env_name : str
        Name of the variable (the contract's ``digest_key_env``).
    environ : Mapping[str, str], optional
        Where to look; ``None`` (the default) is ``os.environ`` when called.

    Returns
    -------
    bytes
        The key. Never logged, stored or put in a message.

    Raises
    ------
    DigestKeyError
        When the variable is unset, empty or no bytes (a lone surrogate); the message names the variable, never
        a value.
    """
    environ = os.environ if environ is None else environ
    value = environ.get(env_name)
    if not value:
        state = "unset" if value is None else "empty"
        raise DigestKeyError(
            f"digest_key_env: environment variable {env_name} is {state}; "
            "set it to the HMAC key before verifying keyed digests"
        )
    try:
        if environ is os.environ:  # text decoded by the locale's encoding: under Latin-1 the two bytes of "é" read
            return os.fsencode(value)  # "Ã©", whose UTF-8 is four other bytes; fsencode gives the bytes back
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise DigestKeyError(f"digest_key_env: environment variable {env_name} holds text that has no bytes "
                             "(a lone surrogate); set it to the HMAC key") from None
