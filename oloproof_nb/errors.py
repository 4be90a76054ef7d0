"""Every user-facing error, the one formatter of pydantic validation problems, and the one way to warn.

Every error here renders as one line naming the file (and line or key) and what
is allowed, so the command line can print it and exit 2 without a traceback.
All derive from :class:`OloproofError` (a ``ValueError``). Every warning of the
library goes through :func:`warn_at_caller`, which names the user's line.
"""

from __future__ import annotations

import datetime
import os
import re
import reprlib
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

__all__ = [
    "OloproofError",
    "ConfigError",
    "CaseFileError",
    "LabelFileError",
    "RunDirError",
    "ContractFileError",
    "DigestKeyError",
    "SliceSpecError",
    "ExportError",
    "VacuousCheckWarning",
    "DuplicateCaseWarning",
    "SliceWarning",
    "warn_at_caller",
    "RunLockedError",
    "CopyChangedError",
    "StoreWriteError",
    "InternalError",
    "describe_exception",
    "parse_problem",
    "format_loc",
    "validation_problem",
    "clip",
    "cut_middle",
    "quote",
    "storable",
    "terminal_text",
]

#: Longest piece of a user's value quoted in an error message.
QUOTE_LIMIT = 200
#: Longest error message: a safety net under :data:`QUOTE_LIMIT` (a message quotes a value or two, a path and
#: what is allowed; a longer one is cut).
MESSAGE_LIMIT = 2000


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (with ``…``): an error never quotes more of a value than that.

    Examples
    --------
    >>> clip("x" * 5, 3)
    'xx…'
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def storable(text: str) -> str:
    """``text`` with every character UTF-8 cannot hold (a lone surrogate: a file name read from bytes that are
    not UTF-8) written as its escape, so a record quoting it can be stored.

    Examples
    --------
    >>> storable("no file attachment-\\udce9.txt")
    'no file attachment-\\\\udce9.txt'
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def terminal_text(text: str) -> str:
    """``text`` with every character a terminal would act on written as an escape (``\\r``, ``\\x1b``,
    ``\\u202e``, a line break): one line, shown as written.

    A carriage return could overwrite what was printed before it (``gate: BLOCK`` with a
    ``PASS`` printed over it), an ANSI sequence could recolour or clear the screen, a
    bidirectional override could reorder what the reader sees.

    Examples
    --------
    >>> print(terminal_text("ok\\rPASS \\x1b[2J"))
    ok\\rPASS \\x1b[2J
    """
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text))


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxset = 3, 8, 8, 6, 8
_REPR.maxstring = _REPR.maxother = QUOTE_LIMIT
_REPR.maxlong = 40
#: A line break of a repr with the blanks around it (:func:`quote`).
_LAYOUT_BREAK = re.compile(r"[ \t]*[\r\n]+[ \t]*")


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` for an error message, at most ``limit`` characters, at a bounded cost.

    Unlike ``clip(repr(value))`` it never builds the whole text of a huge value first (a list
    that YAML aliases expand to millions of items, a 10 MB string), and never raises (Python
    refuses ``repr`` of an integer of more than 4300 digits).

    Examples
    --------
    >>> quote("abc")
    "'abc'"
    >>> len(quote("x" * 10_000)) <= 200
    True
    >>> quote(10 ** 5000)[:8]
    '<int of '
    """
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a repr that raises (a huge int) is described instead
        text = f"<int of {value.bit_length()} bits>" if isinstance(value, int) else f"<{type(value).__name__}>"
    # a repr over several lines (a pandas Series, a 2-D array) kept on one: a text's own line breaks are escaped
    # by its repr, so only an object's layout is joined
    return clip(_LAYOUT_BREAK.sub(" ", text), limit)


def _trailing_comma(exc: Any) -> str:
    """``a comma after the last item at column 8, before '}'`` for a :class:`json.JSONDecodeError` of a comma before a
    closing bracket, else "". Python 3.13 says "Illegal trailing comma before end of object" at the comma; before
    it, "Expecting property name enclosed in double quotes" (or "Expecting value", in a list) at the bracket, which
    sent a user looking for a quote that was there. The position is the comma's, its line too in a text of several
    lines (a contract file): "before '}' at column 8" read as the bracket's column, on a line not named."""
    doc, at = exc.doc, exc.pos
    if not isinstance(doc, str):
        return ""
    if exc.msg.startswith("Illegal trailing comma"):
        comma = at
    elif exc.msg.startswith(("Expecting property name", "Expecting value")):
        comma = len(doc[:at].rstrip(" \t\r\n")) - 1
    else:
        return ""
    close = doc[comma + 1:].lstrip(" \t\r\n")[:1] if 0 <= comma < len(doc) and doc[comma] == "," else ""
    if close not in ("}", "]"):
        return ""
    column = comma - doc.rfind("\n", 0, comma)  # of the comma, 1-based, on its own line
    line = f"line {doc.count(chr(10), 0, comma) + 1}, " if "\n" in doc.rstrip("\n") else ""
    return f"a comma after the last item at {line}column {column}, before {close!r}"


def parse_problem(exc: ValueError | RecursionError) -> str:
    """What is wrong with a text ``json.loads`` (or PyYAML) refused, worded the same on every Python.

    The decoder's own message for a :class:`json.JSONDecodeError`; ``nested too deeply`` for a
    :class:`RecursionError`; for the :class:`ValueError` of Python's limit on converting a long run of
    digits to an int (``sys.get_int_max_str_digits()``, 4,300 by default, since CPython 3.10.7 and 3.11),
    ``a number of more than 4,300 digits``: Python 3.10 words it "Exceeds the limit (4300) for integer
    string conversion", 3.11 "Exceeds the limit (4300 digits) …", so a message copied from it differed
    by the Python it ran on. Any other :class:`ValueError` is given by its first clause.

    Examples
    --------
    >>> import json
    >>> parse_problem(RecursionError())
    'nested too deeply'
    >>> try:
    ...     json.loads("9" * 5000)
    ... except ValueError as exc:
    ...     parse_problem(exc)
    'a number of more than 4,300 digits'
    """
    import json

    if isinstance(exc, json.JSONDecodeError):
        return _trailing_comma(exc) or exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit and "integer string conversion" in str(exc):
        return f"a number of more than {limit:,} digits"
    return str(exc).split(":")[0]


def quote_value(value: Any) -> str:
    """A value read from a user's JSON or YAML file, in the file's words: ``null``, ``true``,
    ``false`` rather than Python's ``None``, ``True``, ``False``; anything else as :func:`quote`.

    Examples
    --------
    >>> quote_value(None), quote_value(False), quote_value("no"), quote_value(1.5)
    ('null', 'false', "'no'", '1.5')

    A date or a time YAML read (``name: 2026-06-01``) as written, not as ``datetime.date(2026, 6, 1)``:

    >>> import datetime
    >>> quote_value(datetime.date(2026, 6, 1)), quote_value(datetime.datetime(2026, 6, 1, 14, 30))
    ('2026-06-01', '2026-06-01 14:30:00')
    """
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if type(value) in (datetime.date, datetime.datetime):  # as YAML gives them; a pandas Timestamp keeps its repr
        return str(value)
    return quote(value)


def decode_line(exc: UnicodeDecodeError) -> int:
    """The line (from 1) of the first byte that is not UTF-8, for an error that names it: the file's own line even
    after a byte-order mark (``utf-8-sig`` reports offsets of the bytes after it).

    Examples
    --------
    >>> try:
    ...     b"a: 1\\nb: \\xff\\n".decode("utf-8")
    ... except UnicodeDecodeError as exc:
    ...     decode_line(exc)
    2
    """
    return bytes(exc.object[: exc.start]).count(b"\n") + 1


#: The byte-order marks of the encodings an editor saves "Unicode" text in other than UTF-8 (UTF-32 first: its
#: little-endian mark starts with UTF-16's).
_WIDE_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
               (b"\xfe\xff", "UTF-16"))


def wide_text(raw: bytes) -> str:
    """Why ``raw``, the start of a file that is not UTF-8, cannot be read, when it starts with a UTF-16 or UTF-32
    byte-order mark (Windows PowerShell's ``>`` and Notepad's "Unicode" save UTF-16): ``not UTF-8 text: it is
    UTF-16 (…); save it as UTF-8``, else ``""``. Said as "not UTF-8 text (invalid start byte at line 1, byte 0)",
    the file looked like UTF-8 in the editor that saved it, and nothing named the encoding to change.

    Examples
    --------
    >>> wide_text("a: 1".encode("utf-16"))
    'not UTF-8 text: it is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8'
    >>> wide_text(b"a: 1")
    ''
    """
    name = next((name for mark, name in _WIDE_MARKS if raw.startswith(mark)), "")
    return f"not UTF-8 text: it is {name} (it starts with a {name} byte-order mark); save it as UTF-8" if name else ""


def lone_cr_hint(line: str | bytes) -> str:
    """The clause a JSONL file's line error ends with when ``line`` (as read up to its LF) holds a carriage return
    with more of the line after it: a file saved with lone-CR line endings (classic Mac OS), which end no JSONL line,
    so its every record is read as line 1 and the error named line 1 of a file of many with no word why; else "".

    Examples
    --------
    >>> lone_cr_hint('{"a": 1}\\r{"b": 2}\\r').startswith("; its lines end with a lone CR")
    True
    >>> lone_cr_hint('{"a": 1}\\r\\n'), lone_cr_hint(b'{"a": \\xff}\\n'), lone_cr_hint('\\r{"a": }\\n')
    ('', '', '')
    """
    text = line.decode("latin-1") if isinstance(line, bytes) else line
    # between two parts of the line: a CR that leads it is JSON whitespace, as in a file of LF CR line endings
    if "\r" not in text.strip(" \t\r\n"):
        return ""
    return ("; its lines end with a lone CR (classic Mac OS line endings), which ends no line of a JSONL file: save it "
            "with LF or CRLF line endings")


def decode_byte(exc: UnicodeDecodeError, raw: bytes) -> int:
    """The offset (from 0) in ``raw``, the bytes of the file decoded, of its first byte that is not UTF-8:
    ``utf-8-sig`` reports the offset in the bytes after a byte-order mark, three less than in the file (an error
    said ``byte 16`` of a byte at 19, as ``xxd`` shows it).

    Examples
    --------
    >>> raw = b"\\xef\\xbb\\xbfa: \\xff"
    >>> try:
    ...     raw.decode("utf-8-sig")
    ... except UnicodeDecodeError as exc:
    ...     exc.start, decode_byte(exc, raw)
    (3, 6)
    """
    return exc.start + len(raw) - len(exc.object)


def value_kind(value: Any) -> str:
    """What a value read from a user's JSON or YAML file is, in the file's words (``null``, ``true``, ``a list``,
    ``a mapping``), never Python's type names (``NoneType``, ``str``, ``dict``): an error saying what a line or a
    file holds where an object (a mapping) was wanted.

    Examples
    --------
    >>> [value_kind(v) for v in (None, True, 7, 0.5, "x", [1], {"k": 1})]
    ['null', 'true', 'a number (7)', 'a number (0.5)', "a string ('x')", 'a list', 'a mapping']
    """
    if value is None or isinstance(value, bool):
        return quote_value(value)
    if isinstance(value, (int, float)):
        return f"a number ({quote(value, 40)})"
    if isinstance(value, str):
        return f"a string ({quote(value, 40)})"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def cut_middle(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` at most ``limit`` characters: a longer one is cut in the middle (``…``), so that its head (the
    file, the key) and its tail (what is allowed) are both kept.

    Examples
    --------
    >>> cut_middle("file.yaml: " + "z" * 50 + ": allowed: a, b", limit=30)
    'file.yaml: zzz…: allowed: a, b'
    """
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[: half - 1] + "…" + text[-half:]


class OloproofError(ValueError):
    """Base class of every error caused by user input (files, arguments, configs).

    A message longer than :data:`MESSAGE_LIMIT` characters is cut in the middle (the values it quotes are
    already cut to :data:`QUOTE_LIMIT`; this is the net under every message): its head names the file and the
    key, its tail what is allowed, and a path of the user's making between them (``cases: <5,000 characters>``)
    no longer cuts the reason off.
    """

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (cut_middle(args[0]),)
        super().__init__(*args)


def _where(file: str | Path | None, line: int | None = None, key: str | None = None) -> str:
    parts: list[str] = []
    if file is not None:
        parts.append(str(file))
    if line is not None:
        parts.append(f"line {line}")
    if key:
        parts.append(key)
    return ": ".join(parts)


class ConfigError(OloproofError):
    """A mistake in ``oloproof.yaml`` or ``release.yaml``: names the file and the key.

    Raised when a suite or release settings are loaded (``op.load_suite``, ``op.gate(release=...)``, the
    command line). Fix the key the message names; ``file``, ``key`` and ``message`` hold its parts.
    """

    def __init__(self, file: str | Path | None, key: str | None, message: str) -> None:
        self.file = None if file is None else str(file)
        self.key = key
        self.message = message
        where = _where(file, key=key)
        super().__init__(f"{where}: {message}" if where else message)

    def __reduce__(self) -> tuple[type, tuple[str | None, str | None, str]]:  # pickled back from another process
        return type(self), (self.file, self.key, self.message)


class CaseFileError(OloproofError):
    """A mistake in a JSONL input (cases, labels): names the file and the line.

    Raised when the case file is read (``op.load_suite``, ``op.load_cases``), or when it changed since the
    suite was loaded. Fix the line the message names (or load the suite again); ``file``, ``line`` and
    ``message`` hold its parts.
    """

    def __init__(self, file: str | Path, line: int | None, message: str) -> None:
        self.file = str(file)
        self.line = line
        self.message = message
        super().__init__(f"{_where(file, line)}: {message}")

    def __reduce__(self) -> tuple[type, tuple[str, int | None, str]]:  # pickled back from another process
        return type(self), (self.file, self.line, self.message)


class LabelFileError(CaseFileError):
    """A mistake in a validity-label file: names the file and the line; fix that line."""


class RunDirError(OloproofError):
    """A run directory that cannot be created, resumed or read.

    Raised by ``op.run``, ``op.load_run`` and the commands that read a run; the message names the folder and
    what is wrong with it (a suite folder given where a run is wanted names its latest run instead).
    """


class CopyChangedError(RunDirError):
    """A loaded run's columnar copy was replaced by a newer one (the run went on, or was resumed): a frame
    read now would not match the frames read before, so the run must be loaded again."""


class RunLockedError(RunDirError):
    """Another process holds the run directory (it is creating, running or resuming that run)."""


class StoreWriteError(RunDirError):
    """A write to the run directory failed (disk full, I/O error): the harness's failure, never the system's."""


class InternalError(Exception):
    """A bug in oloproof_nb itself (not the user's input, not the system under test); the message says where
    the traceback was saved."""


def describe_exception(exc: BaseException, limit: int = 500) -> str:
    """``ExceptionName: first line of its message`` (at most ``limit`` characters), even when ``str(exc)`` raises.

    Examples
    --------
    >>> describe_exception(ValueError("bad\\nsecond line"))
    'ValueError: bad'
    >>> class Odd(Exception):
    ...     def __str__(self):
    ...         raise RuntimeError("no")
    >>> describe_exception(Odd())
    'Odd: <str() of the exception raised>'
    """
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises is still described
        text = "<str() of the exception raised>"
    if not isinstance(text, str):
        text = "<str() of the exception returned a non-string>"
    text = text.strip()
    first = clip(text.splitlines()[0], limit) if text else ""
    name = type(exc).__name__
    return storable(f"{name}: {first}" if first else name)


class ContractFileError(OloproofError):
    """A contract file (``oloproof receipt``) that cannot be used; one line naming the file and the key.

    Raised by ``op.verify_contract_file``; fix the key the message names.
    """


class DigestKeyError(OloproofError):
    """The environment variable that should hold an HMAC key is unset or empty.

    Raised when a contract's ``digest_key_env`` is read (``op.observe_file``, ``op.verify_contract_file``):
    set that variable to the key, or leave ``digest_key_env`` out for plain SHA-256 digests.
    """


class SliceSpecError(OloproofError):
    """A malformed slice spec; the message names the spec and what is allowed."""

    ALLOWED = ("allowed: tool_calls:<edges> or trajectory_length:<edges>, edges ascending non-negative integers "
               "separated by commas, e.g. tool_calls:1,2")

    def __init__(self, spec: object, problem: str) -> None:
        self.spec = spec
        self.problem = problem
        super().__init__(f"slice spec {quote(spec)}: {problem}; {self.ALLOWED}")


class ExportError(OloproofError):
    """An export that cannot be written (unknown suffix, not a table)."""


class VacuousCheckWarning(UserWarning):
    """A check that cannot fail as configured, found at ``load_suite`` (or, for a fault, after the run).

    A ``state_unchanged`` path or a ``state_matches`` ``paths:`` entry that no case's ``initial_state``
    (nor, for ``state_matches``, ``expected.state``) contains passes for every case that leaves it alone:
    a typo such as ``orders.ord-99`` gives a perfect score. The message names the evaluator, the path and
    the nearest existing path; the evaluator option ``absent_ok: true`` says the path must stay absent on
    purpose and silences it. A ``fault_recovery`` whose ``tool`` no case called gets the same finding once
    the run is known. The gate marks such a criterion ``vacuous``.
    """


class DuplicateCaseWarning(UserWarning):
    """Cases of the case file that hold the same content under different ids, found at ``load_suite``.

    Two lines with the same ``input``, ``initial_state``, ``expected`` and ``outcome`` (``cluster`` and
    ``metadata`` aside) are one case written twice, often by copy-paste or by merging task files: each copy is
    run, judged and counted as a case of its own (and a cluster, unless they share one), so ``n`` holds more
    evidence than the suite has and the interval is narrower than it supports. The message names the ids
    and lines of the first groups and how many cases repeat an earlier one; the gate notes the count in
    each criterion's reason, and ``op.compare`` in its notes. Remove the copies, or give each distinct
    content; ``epochs: k`` repeats a case on purpose (its runs stay in one cluster), and a metamorphic copy
    is never a repeat. A warning, not an error: a suite may repeat a case deliberately
    (``warnings.simplefilter("ignore", op.DuplicateCaseWarning)``).
    """


class SliceWarning(UserWarning):
    """A slice table of a reduced criterion (pass^k, pass@k) that could not place some of its cases in any bin.

    A case is reduced in a bin only when at least k of its epochs fall there; a case whose epochs took
    paths of different lengths (often one that fails on some tries) may have fewer than k in every bin.
    The gate still counts it; the message says how many such cases each criterion has. Also a slice table of
    runs of different systems or case files pooled by ``op.load_runs``: each bin's rate is of no one system.
    """


#: This package's folder (with its separator): a frame whose file is under it is oloproof_nb's own.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_caller(message: Warning | str, category: type[Warning] = UserWarning) -> None:
    """Warn as from the first frame outside the oloproof_nb package: the user's line that called into it.

    ``warnings.warn(stacklevel=2)`` names whichever frame of the package called the function that warns (through
    ``op.gate``, ``oloproof_nb/_display/notebook.py``), and ``skip_file_prefixes`` needs Python 3.12. This walks
    out of the package's frames and warns at the first other one (the outermost frame when every frame is the
    package's) as ``warnings.warn`` would at that level: its file, line, module and ``__warningregistry__``,
    so filters, ``-W`` options and "shown once per line" work as usual.

    Parameters
    ----------
    message : Warning or str
        The warning, or its text (then of ``category``).
    category : type of Warning, default UserWarning
        The category of a text ``message``; a Warning instance is of its own class.
    """
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    module_globals = frame.f_globals
    file = frame.f_code.co_filename
    # the globals let a loader give the line's source (a zipped module); a script given with `python -c` or on
    # stdin has no source to give, and its __main__'s loader raises ImportError when asked (even with warnings off)
    warnings.warn_explicit(message, category, file, frame.f_lineno,
                           module=module_globals.get("__name__", "<string>"),
                           registry=module_globals.setdefault("__warningregistry__", {}),
                           module_globals=None if file in ("<string>", "<stdin>") else module_globals)


def format_loc(loc: tuple[Any, ...], prefix: str = "") -> str:
    """A pydantic error location as a key: ``("evaluators", 1, "mode")`` → ``evaluators[1].mode``.

    Examples
    --------
    >>> format_loc(("evaluators", 1, "mode"))
    'evaluators[1].mode'
    >>> format_loc(("state",), prefix="expected")
    'expected.state'

    A mapping's key that is itself wrong is named as written (pydantic adds ``[key]`` after it):

    >>> format_loc(("validators", "-schema", "[key]"))
    'validators.-schema'

    A key that is empty or begins or ends with a space is quoted, so the line still names it (a criterion
    ``"state_matches "`` read as ``criteria.state_matches : no such criterion``, the name it lists):

    >>> format_loc(("criteria", "state_matches ")), format_loc(("",))
    ("criteria.'state_matches '", "''")
    """
    out = prefix
    for part in loc:
        if part == "[key]":  # pydantic's mark of a key's own error, after the key
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = str(part)
            text = text if text and text == text.strip() else quote(text)
            out = f"{out}.{text}" if out else text
    return out


#: How pydantic names a union's scalar branches in an error's location.
_SCALAR_BRANCHES = frozenset({"str", "int", "float", "bool", "bytes", "none"})


def _union_branch(errors: list[ErrorDetails]) -> ErrorDetails:
    """The error to report: the first, unless it is a union's scalar branch refusing a mapping.

    For a value that may be a text or a mapping (``honest_answers: [{regex: ...}]``, ``lists: {tx: {by_key:
    id}}``), pydantic reports each branch, and the first is "Input should be a valid string" at a key ending
    in the branch's name (``honest_answers[0].str``). The mapping's own problem is in the branch that takes
    mappings: reported instead, an unknown key first, with the branch's name taken out of the key. A value
    that is neither (``lists: {tx: sorted}``) is reported at its own key, the branch's name taken out too.
    """
    first = errors[0]
    loc = tuple(first["loc"])
    tag = loc[-1] if loc else None  # pydantic names a union's branch in the location: str, literal['a','b']
    if not (isinstance(tag, str) and (tag in _SCALAR_BRANCHES or tag.startswith("literal["))):
        return first
    parent = loc[:-1]
    if not isinstance(first.get("input"), dict):
        # a union's other branches were given the same value and refused it otherwise; a mapping's other keys
        # (``{str: x, b: y}``) hold other values, or the same value refused the same way
        siblings = [e for e in errors[1:] if len(e["loc"]) == len(loc) and tuple(e["loc"])[:-1] == parent
                    and e["type"] != first["type"] and e.get("input") == first.get("input")]
        if not siblings:  # no union: a key that happens to be called ``str``
            return first
        # neither branch took the value: name the key the user wrote, not pydantic's name of a branch
        # (``lists.tx.literal['ordered','unordered']``), and say that a mapping is allowed there too
        mapping = any(e["type"] in ("model_type", "dict_type", "model_attributes_type") for e in siblings)
        return {**first, "loc": parent, "msg": f"{first['msg']}, or a mapping" if mapping else first["msg"]}
    deeper = [e for e in errors[1:] if tuple(e["loc"])[: len(parent)] == parent and len(e["loc"]) > len(loc)]
    if not deeper:
        return first
    pick = next((e for e in deeper if e["type"] == "extra_forbidden"), deeper[0])
    return {**pick, "loc": (*parent, *tuple(pick["loc"])[len(parent) + 1:])}


def validation_problem(exc: ValidationError, prefix: str = "",
                       rank: Callable[[ErrorDetails], Any] | None = None) -> tuple[str, str, ErrorDetails]:
    """The first problem of a pydantic validation error, in words: ``(key, message, error)``.

    The one formatter every file format uses: ``key`` is the location as
    :func:`format_loc` writes it (``""`` for the whole value), ``message``
    says what is wrong without pydantic's prefixes and quotes at most
    :data:`QUOTE_LIMIT` characters of the offending value, and ``error`` is
    pydantic's own record (its ``type`` tells ``extra_forbidden`` and
    ``missing`` apart, for messages that list what is allowed; a key that
    takes a mapping of its own keys, ``bootstrap:``, says ``Input should be
    a mapping``, not the name of the class that reads it). ``rank``,
    when given, is a sort key over pydantic's error records: the lowest is
    reported (ties in pydantic's order), for a format whose most telling
    problem is not the first one pydantic lists.

    Examples
    --------
    >>> from pydantic import BaseModel
    >>> class M(BaseModel):
    ...     n: int
    >>> try:
    ...     M.model_validate({"n": "x"})
    ... except ValidationError as exc:
    ...     key, message, _ = validation_problem(exc)
    >>> key, message
    ('n', "Input should be a valid integer, unable to parse string as an integer (got 'x')")
    """
    errors = exc.errors(include_url=False)
    if rank is not None:  # a format whose most telling problem is not pydantic's first (stable: ties keep its order)
        errors = sorted(errors, key=rank)
    err = _union_branch(errors)
    key = format_loc(tuple(err["loc"]), prefix)
    if err["type"] == "extra_forbidden":
        return key, "unknown key", err
    if err["type"] == "missing":
        return key, "is required", err
    msg = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if err["type"] == "model_type":  # not "a valid dictionary or instance of BootstrapConfig": a class never written
        msg = "Input should be a mapping"
    got = err.get("input")
    if err["type"] == "int_type" and isinstance(got, float):  # a strict whole number given 20.0 (or 2.5)
        msg = "must be a whole number" + (" written without a decimal point" if got.is_integer() else "")
    if isinstance(got, str) and len(got) > QUOTE_LIMIT:  # a validator's message that quotes the whole value
        msg = msg.replace(repr(got), quote(got))
    msg = clip(msg, QUOTE_LIMIT + 100)  # the net: a few words and one quoted value
    plain = isinstance(got, (dict, list)) or err["type"].startswith("value_error")
    shown = "" if plain else f" (got {quote_value(got)})"
    # YAML's reading, not the user's (a date or a time as YAML gives it)
    if type(got) in (datetime.date, datetime.datetime) and err["type"] == "string_type":
        shown = f" (got {quote_value(got)}, which YAML reads as a {_date_kind(got)}: quote it for text)"
    return key, f"{msg}{shown}", err


def _date_kind(value: datetime.date) -> str:
    """``date``, or ``time`` for a date with a time of day (PyYAML's timestamp)."""
    return "time" if isinstance(value, datetime.datetime) else "date"
