"""Contract files for ``oloproof receipt CONTRACT.json``: read, checked by a strict model, one-line errors."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, NamedTuple, NoReturn

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from .._core.receipts import EnvName, Hex64, Name, OutcomeContract
from ..errors import (
    ContractFileError,
    decode_byte,
    decode_line,
    parse_problem,
    quote,
    validation_problem,
    value_kind,
    wide_text,
)
from .files import KeyTwice, UnreadableFile, home_shorthand, keys_once, lone_surrogate, read_regular

__all__ = ["COMMAND_VALIDATOR", "CONTRACT_FILE_KEYS", "DEFAULT_MAX_ARTIFACT_BYTES", "DEFAULT_OBSERVE_TIMEOUT_S",
           "MAX_CONTRACT_BYTES", "ContractFile", "load_contract_file"]

#: Name under which a contract file's ``{"command": [...]}`` validator is registered and reported.
COMMAND_VALIDATOR = "command"
#: Largest contract file read (it is read whole): 1 MiB.
MAX_CONTRACT_BYTES = 1 << 20
#: Seconds an artifact may take to be read and digested, unless a contract file or evaluator says otherwise.
DEFAULT_OBSERVE_TIMEOUT_S = 60.0
#: Largest artifact read and digested (1 GiB), unless a contract file or evaluator says otherwise.
DEFAULT_MAX_ARTIFACT_BYTES = 1 << 30

#: Type of the errors that say the whole problem in their own words; every other error is reported with
#: what its key allows (the description of the key's field).
_WORDED = "contract_file"
_TIMESTAMP = "an ISO-8601 timestamp with a timezone, e.g. 2026-07-25T14:00:00Z"


def _worded(text: str) -> PydanticCustomError:
    return PydanticCustomError(_WORDED, "{text}", {"text": text})


#: A fraction of a second after the seconds, of any length, with a point or a comma (``date +%N`` writes 9 digits,
#: ``date -Ins`` a comma, Go's RFC 3339 as many as are not trailing zeros).
_FRACTION = re.compile(r"(?<=:\d\d)[.,](\d+)")
#: A UTC offset after a time, written ``+0200`` (``date +%z``) or ``+02``.
_SHORT_OFFSET = re.compile(r"(?:(?<=:\d\d)|(?<=\.\d{6}))([+-]\d\d)(\d\d)?$")
#: A date and time written without their separators (``date -u +%Y%m%dT%H%M%SZ``, an ``X-Amz-Date``): Python 3.11
#: reads ``20260725T140000Z``, 3.10 does not.
_BASIC = re.compile(r"^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)?(?![\d:])")


def _extended(text: str) -> str:
    """ISO-8601 text in the one form every supported Python's ``datetime.fromisoformat`` reads: ``Z`` as ``+00:00``,
    the fraction of a second as 6 digits after a point (cut, as Python 3.11 cuts a longer one), the offset with a
    colon, the date and time with their ``-`` and ``:``. Python 3.10 reads only that form: a start time written
    ``…:00.123456789Z``, ``…:00.12345Z``, ``…:00+0000`` or ``20260725T140000Z``, which 3.11 reads, was a contract
    error there, one that blocked every stop of a hook.

    Examples
    --------
    >>> _extended("2026-07-25T14:00:00.123456789Z"), _extended("2026-07-25T16:00:00,5+0200")
    ('2026-07-25T14:00:00.123456+00:00', '2026-07-25T16:00:00.500000+02:00')
    >>> _extended("20260725T140000Z"), _extended("20260725T1600+0200")
    ('2026-07-25T14:00:00+00:00', '2026-07-25T16:00+02:00')
    """
    text = re.sub(r"[zZ]$", "+00:00", text)
    text = _BASIC.sub(lambda found: "{}-{}-{}T{}:{}".format(*found.groups()[:5])
                      + (f":{found.group(6)}" if found.group(6) else ""), text, count=1)
    text = _FRACTION.sub(lambda found: "." + found.group(1).ljust(6, "0")[:6], text, count=1)
    return _SHORT_OFFSET.sub(lambda found: f"{found.group(1)}:{found.group(2) or '00'}", text)


def _utc_timestamp(value: Any) -> Any:
    """``run_started_at`` in UTC from its ISO-8601 text (``Z`` for UTC; read alike on every supported Python:
    :func:`_extended`); a value not text is left to be refused."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not (text.isascii() and text.isprintable()):  # CPython 3.11's parser stops at a NUL: "…Z\x00junk" was a time
        raise ValueError("not an ISO-8601 timestamp")
    try:
        parsed = datetime.fromisoformat(_extended(text))
    except ValueError:
        raise ValueError("not an ISO-8601 timestamp") from None
    if parsed.tzinfo is None:
        raise ValueError("no timezone")
    try:
        return parsed.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:00+14:00 is before year 1 in UTC
        raise _worded(f"must be {_TIMESTAMP}, of a year 1–9999 in UTC") from None


def _no_nul(locator: str) -> str:
    if "\x00" in locator:  # it made an "unverified" receipt ("embedded null byte"), not the file's error
        raise _worded("holds a NUL character, which no path can hold")
    return locator


class _CommandValidator(BaseModel):
    """``{"command": ["program", "arg", ...]}``: a program that checks the artifact, run in the contract's folder."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    # a NUL stopped the validator's process start ("embedded null byte") as an internal error
    command: list[Annotated[str, Field(pattern=r"^[^\x00]+$")]] = Field(
        min_length=1, description="a non-empty list of non-empty strings without a NUL character")


def _inside(value: Any, exc: ValidationError) -> str:
    """What is wrong inside a ``{"command": [...]}`` mapping, for the message of its key (empty otherwise)."""
    if not isinstance(value, dict):
        return ""
    inside = [e for e in exc.errors(include_url=False) if len(e["loc"]) > 1 and e["loc"][0] == "_CommandValidator"]
    if not inside:
        return ""
    inner = min(inside, key=lambda e: e["type"] != "extra_forbidden")  # a misspelt key before the one it misses
    key = inner["loc"][1]
    if inner["type"] == "extra_forbidden":
        return f"; {quote(key)} is not one of its keys"
    if inner["type"] == "missing":
        return f"; its {quote(key)} is missing"
    return f"; its {quote(key)} must be {_CommandValidator.model_fields[str(key)].description}"


class _ContractFileModel(BaseModel):
    """The keys of a contract file, their types and bounds; each field's description says what its key allows.

    Strict: a number written as text (``"5"``), a boolean where a number goes (``true`` as 1 byte) or a
    whole number written ``1.0`` is a mistake, not a setting. The required keys come first.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    artifact_id: Name = Field(description="a non-empty string")
    locator: Annotated[Name, AfterValidator(_no_nul)] = Field(description="a non-empty string")
    run_started_at: Annotated[datetime, BeforeValidator(_utc_timestamp)] = Field(description=_TIMESTAMP)
    expected_sha256: Hex64 = Field(default=None, description="null or 64 lowercase hexadecimal characters")
    # the command form first: a mapping's problem is then reported at its own key (validator.command)
    validator: _CommandValidator | Name | None = Field(
        default=None, description='null, a registered validator name, or {"command": ["program", "arg", ...]}')
    digest_key_env: EnvName = Field(
        default=None, description="null or the name of an environment variable (letters, digits, underscore)")
    require_fresh: bool = Field(default=True, description="true or false")
    observe_timeout_s: float = Field(default=DEFAULT_OBSERVE_TIMEOUT_S, gt=0, allow_inf_nan=False,
                                     description="a positive, finite number of seconds")
    max_artifact_bytes: int = Field(default=DEFAULT_MAX_ARTIFACT_BYTES, ge=1,
                                    description="a positive whole number of bytes")

    @field_validator("*", mode="wrap")
    @classmethod
    def _in_its_words(cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        """Any value a key refuses is reported with what the key allows (its field's description), unless a
        check said the problem in its own words; the branches of a union and the keys inside a value are not
        reported one by one."""
        try:
            return handler(value)
        except ValidationError as exc:
            worded = next((e for e in exc.errors(include_url=False) if e["type"] == _WORDED), None)
            if worded is not None:
                raise _worded(worded["msg"]) from None
            allowed = cls.model_fields[str(info.field_name)].description
            raise _worded(f"must be {allowed}{_inside(value, exc)}") from None


#: Keys a contract file may have, required ones first.
CONTRACT_FILE_KEYS: tuple[str, ...] = tuple(_ContractFileModel.model_fields)
_REQUIRED_KEYS = tuple(key for key, field in _ContractFileModel.model_fields.items() if field.is_required())


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
        Checked by a strict pydantic model: no other key, and no value of another type (``"5"`` or
        ``true`` for a number, ``1.0`` for a whole number, ``"yes"`` for ``true``).

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
    given, path = os.fspath(path), Path(path)  # as written: a Path drops the "./" of "./~/c.json"
    home = home_shorthand(given) if isinstance(given, str) and not os.path.lexists(path) else None
    if home is not None:  # no shell expanded it (a quoted "~/c.json", a hook run without a shell), nor does Python
        _fail(path, f"cannot read contract file: file not found; {home}")
    data = _read_json_object(path)
    bad = lone_surrogate(data)
    if bad is not None:  # "\ud800": JSON, but no text (it stopped oloproof receipt as an internal error)
        _fail(path, f"the string {quote(bad)} holds a lone surrogate escape, which is not Unicode text")
    try:
        spec = _ContractFileModel.model_validate(data)
    except ValidationError as exc:
        _fail(path, _problem(exc))
    validator = spec.validator
    command: list[str] | None = None
    if isinstance(validator, _CommandValidator):
        command = list(validator.command)
        validator = COMMAND_VALIDATOR
    contract = OutcomeContract(artifact_id=spec.artifact_id, expected_sha256=spec.expected_sha256, validator=validator,
                               require_fresh=spec.require_fresh, digest_key_env=spec.digest_key_env,
                               locator=spec.locator)
    return ContractFile(contract, path.parent / spec.locator, spec.run_started_at, command, spec.observe_timeout_s,
                        spec.max_artifact_bytes)


#: Which problem is reported: an unknown key first (often a misspelt one), then a missing key, then the first
#: key (in the order of :data:`CONTRACT_FILE_KEYS`) whose value is wrong.
_KIND_ORDER = {"extra_forbidden": 0, "missing": 1}


def _rank(err: ErrorDetails) -> tuple[int, int]:
    """Sort key of the errors of :class:`_ContractFileModel`: unknown keys, missing keys, then the keys in order."""
    kind = _KIND_ORDER.get(err["type"], 2)
    return (kind, 0) if kind < 2 else (kind, CONTRACT_FILE_KEYS.index(str(err["loc"][0])))


def _problem(exc: ValidationError) -> str:
    """The problem reported for a contract file (see :data:`_KIND_ORDER`), in the words of
    :func:`~oloproof_nb.errors.validation_problem`, with the keys allowed or required."""
    key, message, err = validation_problem(exc, rank=_rank)
    if err["type"] == "extra_forbidden":
        return f"unknown key {quote(key)}; allowed keys: {', '.join(CONTRACT_FILE_KEYS)}"
    if err["type"] == "missing":
        return f"missing required key {quote(key)}; required: {', '.join(_REQUIRED_KEYS)}"
    return f"key {quote(key)} {message}"


def _fail(path: Path, message: str) -> NoReturn:
    raise ContractFileError(f"{path}: {message}")


def _read_json_object(path: Path) -> dict[str, Any]:
    raw = b""
    try:
        raw = read_regular(path, MAX_CONTRACT_BYTES)
        text = raw.decode("utf-8-sig")  # a leading byte-order mark is not content
    except UnreadableFile as exc:
        raise ContractFileError(f"{path}: cannot read contract file: {exc}") from None
    except UnicodeDecodeError as exc:  # where, as every other file's error says (the file's byte, after a BOM too)
        if wide := wide_text(raw):
            raise ContractFileError(f"{path}: contract file is {wide}") from None
        raise ContractFileError(f"{path}: contract file is not UTF-8 text ({exc.reason} at line {decode_line(exc)}, "
                                f"byte {decode_byte(exc, raw)})") from None
    try:
        data = json.loads(text, object_pairs_hook=keys_once)
    except KeyTwice as exc:
        raise ContractFileError(f"{path}: key {quote(exc.args[0])} appears twice") from None
    except json.JSONDecodeError as exc:
        # a trailing comma is named so, at the comma, as on every Python (3.12 sent the user to look for a quote,
        # at the bracket); any other error at the decoder's place
        problem = parse_problem(exc)
        where = f" (line {exc.lineno}, column {exc.colno})" if problem == exc.msg else ""
        raise ContractFileError(f"{path}: not valid JSON{where}: {problem}") from None
    except RecursionError:
        raise ContractFileError(f"{path}: not valid JSON: nested too deeply") from None
    except ValueError as exc:  # a number of more than 4300 digits
        raise ContractFileError(f"{path}: not valid JSON: {parse_problem(exc)}") from None
    if not isinstance(data, dict):
        raise ContractFileError(f"{path}: a contract file must be a JSON object, got {value_kind(data)}")
    return data
