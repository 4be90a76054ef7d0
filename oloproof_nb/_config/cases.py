"""Case files: stream cases from JSONL with errors that name the file and the line."""

from __future__ import annotations

import codecs
import json
import re
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .._core.case import Case, case_content_and_copies, case_from_mapping, content_digest
from .._core.lists import is_absent_marker
from .._core.paths import MAX_DEPTH, exceeds_depth, format_path
from .._core.records import RepeatedCases
from ..errors import CaseFileError, clip, lone_cr_hint, parse_problem, quote, value_kind, wide_text
from .files import KeyTwice, NumberTooLarge, UnreadableFile, finite_float, keys_once, open_regular

__all__ = ["iter_cases", "iter_cases_with_content", "load_cases", "RepeatScan", "repeats_warning", "repeats_note",
           "reads_as_written", "respelt_key", "key_look"]


#: Bytes read at a time; a line is only held whole once it is known to start like a case (``{``).
_PIECE = 1 << 16


def _read_line(handle: IO[bytes], first: bool) -> tuple[bytes | None, bool]:
    """The next line without its leading whitespace (None at the end), and whether it was read whole.

    Read in bounded pieces, so memory never grows with a file's size: a blank
    line of any length is dropped piece by piece, and a long line that does not
    start with ``{`` stops at its first piece (it cannot be a case; that piece
    is enough to say so). A UTF-8 byte-order mark at the start of the file is skipped.
    """
    piece = handle.readline(_PIECE)
    if not piece:
        return None, True
    if first and piece.startswith(codecs.BOM_UTF8):
        piece = piece[len(codecs.BOM_UTF8):]
    parts: list[bytes] = []
    while True:
        ended = piece.endswith(b"\n")
        if not parts:
            piece = piece.lstrip()
            if piece and not ended and not piece.startswith(b"{"):
                return piece, False
        if piece:
            parts.append(piece)
        if ended:
            return b"".join(parts), True
        piece = handle.readline(_PIECE)
        if not piece:
            return b"".join(parts), True


def iter_cases(path: str | Path) -> Iterator[tuple[int, Case]]:
    """Stream ``(line_number, Case)`` from a JSONL file, one line at a time.

    Blank lines are skipped. Raises :class:`CaseFileError` naming the file and
    line for a line that is not UTF-8, not JSON, not an object, nested deeper
    than :data:`~oloproof_nb.paths.MAX_DEPTH` levels, holds an escaped lone
    surrogate, lacks ``id``/``input``, has an unknown key or repeats an id — also one
    that reads as an earlier id (:func:`key_look`: the same once invisible characters
    and surrounding spaces are dropped and accents composed): each copy would count as a case of its own,
    and in a table it looks like the first; and one whose ``cluster`` reads as an
    earlier cluster name that differs (the same rule, surrounding spaces dropped too):
    one cluster would count as two; and one whose ``cluster`` reads as nothing (``""``,
    blank space, invisible characters): every such case would fall in one nameless cluster.
    ``NaN`` and ``Infinity`` tokens are accepted (Python's JSON reads and the
    run store writes them); a number too large for a float (``1e400``) is refused, not read as infinity.
    Memory is bounded by the largest case, not the file.
    The file must be a regular file (a directory, a named pipe or a device is refused
    before it is opened, so it never blocks).
    """
    for lineno, case, _, _ in _iter_lines(path, content=False):
        yield lineno, case


def iter_cases_with_content(path: str | Path) -> Iterator[tuple[int, Case, str]]:
    """Stream ``(line_number, Case, content digest)`` from a JSONL file (:func:`iter_cases`; the digest is
    :func:`~oloproof_nb._core.case.content_digest`'s, made with the case's own: :class:`RepeatScan`)."""
    for lineno, case, key, _ in _iter_lines(path, content=True):
        yield lineno, case, key


def iter_cases_with_copies(path: str | Path, rewrites: Sequence[tuple[str, str]]
                           ) -> Iterator[tuple[int, Case, str, tuple[str | None, ...]]]:
    """:func:`iter_cases_with_content`, and the content digests of each case's copies that rewrite an input field
    (``rewrites``: ``(field, template)`` per such transform; see
    :func:`~oloproof_nb._core.case.case_content_and_copies`)."""
    yield from _iter_lines(path, content=True, rewrites=rewrites)


def _iter_lines(path: str | Path, content: bool, rewrites: Sequence[tuple[str, str]] = (),
                ) -> Iterator[tuple[int, Case, str, tuple[str | None, ...]]]:
    """The cases of a JSONL file, one line at a time (:func:`iter_cases`), with their content digest when
    ``content`` (else "") and their copies' (:func:`iter_cases_with_copies`)."""
    path = Path(path)
    seen: dict[str, int] = {}  # id -> its line
    looks: dict[str, tuple[int, str]] = {}  # key_look(id) -> (line, id), for ids that read otherwise than written
    clusters = LookAlikes()
    try:
        handle, _ = open_regular(path)
    except UnreadableFile as exc:
        raise CaseFileError(path, None, f"cannot read the case file: {exc}") from None
    with handle:
        lineno = 0
        while True:
            try:
                raw, complete = _read_line(handle, first=lineno == 0)
            except UnreadableFile as exc:
                raise CaseFileError(path, lineno + 1, str(exc)) from None
            if raw is None:
                break
            lineno += 1
            if lineno == 1 and (wide := wide_text(raw)):  # before it is read as a line that starts otherwise than "{"
                raise CaseFileError(path, lineno, wide)
            if not complete:
                start = raw[:20].decode("utf-8", errors="replace")
                raise CaseFileError(path, lineno, f"expected a JSON object, got a line starting {quote(start)}")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CaseFileError(path, lineno, f"not UTF-8 text ({exc.reason}){lone_cr_hint(raw)}") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line, object_pairs_hook=keys_once, parse_float=finite_float)
            except KeyTwice as exc:  # {"expected": {...}, "expected": {...}}: the last one would win silently
                raise CaseFileError(path, lineno, f"key {quote(exc.args[0])} appears twice in one object; give "
                                    "each key once") from None
            except NumberTooLarge as exc:  # 1e400 read as infinity: 1e400 and 1e500 one number
                raise CaseFileError(path, lineno, f"the number {clip(exc.args[0], 40)} is too large for a float "
                                    "(it would be read as infinity); write a number within ±1.7976931348623157e308, "
                                    "or Infinity (-Infinity) where infinity is meant") from None
            except (ValueError, RecursionError) as exc:  # JSONDecodeError, or a number too long to convert
                raise CaseFileError(path, lineno, f"not valid JSON ({parse_problem(exc)}); each line must be one "
                                    f"JSON object{lone_cr_hint(line)}") from None
            if not isinstance(obj, dict):
                raise CaseFileError(path, lineno, f"expected a JSON object, got {value_kind(obj)}")
            # fewer opening brackets than MAX_DEPTH (inside strings or not) cannot nest deeper
            if line.count("{") + line.count("[") > MAX_DEPTH and exceeds_depth(obj):
                raise CaseFileError(path, lineno, f"nested deeper than {MAX_DEPTH} levels of objects and lists")
            try:  # an escaped lone surrogate (e.g. "\\ud800") is JSON but not text: it could never be stored
                if "\\u" in line:  # UTF-8 text holds no surrogate: only an escape can make one
                    json.dumps(obj, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError as exc:
                raise CaseFileError(path, lineno, f"a string holds {quote(exc.object[exc.start:exc.end])}, a lone "
                                    "surrogate escape that is not Unicode text") from None
            try:
                case, key, copies = (case_content_and_copies(obj, rewrites) if content else
                                     (case_from_mapping(obj), "", ()))
            except (ValueError, RecursionError) as exc:
                raise CaseFileError(path, lineno, str(exc) or "nested too deeply") from None
            # walked on every line: a key with a space before or after it reads as written (a text test of the line
            # for one cost more than the walk, which looks at the keys of expected.state and, where one is missing,
            # of initial_state at that level)
            if case.expected.state:
                respelt = respelt_key(case.initial_state, case.expected.state)
                if respelt is not None:
                    keys, held = respelt
                    raise CaseFileError(path, lineno, f"expected.state names {format_path(keys)}, whose key "
                                        f"{quote(keys[-1])} reads as the key {quote(held)} initial_state holds there: "
                                        f"they differ only in {LOOK_ALIKE_HELP}, so the check looks at a key the state "
                                        "does not hold (a removal written {\"$absent\": true} passes an agent that "
                                        "does nothing); write the key as initial_state does (or name both keys if "
                                        "the case expects the key respelt)")
            if case.id in seen:
                raise CaseFileError(path, lineno, f"duplicate case id {quote(case.id)} (also line {seen[case.id]})")
            # surrounding spaces too: an id is its case's cluster unless it names one, so "x" and "x " were two
            # clusters shown as one, as two written cluster names that differ so are refused
            look = key_look(case.id)
            if look in seen or look in looks:
                first = looks[look][1] if look in looks else look
                earlier = f"{quote(first)} at line {looks[look][0]}" if look in looks else quote(look)
                why = ID_LOOK_HELP if id_look(first) == id_look(case.id) else LOOK_ALIKE_HELP
                raise CaseFileError(path, lineno, f"case id {quote(case.id)} reads as the case id {earlier}: they "
                                    f"differ only in {why}; give each case an id of its own")
            seen[case.id] = lineno
            if look != case.id:
                looks[look] = (lineno, case.id)
            written = obj.get("cluster") is not None
            if written and not key_look(case.cluster):  # "", " ", "\u200b": every such case in one cluster
                raise CaseFileError(path, lineno, f"'cluster' is {quote(case.cluster)}, a name that reads as "
                                    "nothing: every case given it would fall in one nameless cluster; give the "
                                    "cluster a name, or leave 'cluster' out (the case's id is then its cluster)")
            clash = clusters.clash(f"line {lineno}", case.cluster, written)
            if clash:
                own = "" if written else " (its id: the case gives no cluster)"
                raise CaseFileError(path, lineno, f"cluster {quote(case.cluster)}{own} reads as the cluster {clash}: "
                                    f"they differ only in {LOOK_ALIKE_HELP}, so the rows of one cluster would "
                                    "count as two independent clusters while every table shows one name; give "
                                    "the cases of one cluster one name, or names that read apart")
            yield lineno, case, key, copies


#: Characters that show nothing where they stand: zero-width space and word joiners, direction marks and
#: embeddings, the soft hyphen, the byte-order mark. Joiners that change what a reader sees (U+200C, U+200D
#: in Persian words or emoji), variation selectors and tag characters (flags) are not among them.
_INVISIBLE = frozenset([0x00AD, 0x034F, 0x180E, 0x200B, 0x200E, 0x200F, *range(0x202A, 0x202F),
                        *range(0x2060, 0x2065), *range(0x2066, 0x206A), 0xFEFF])
ID_LOOK_HELP = ("invisible characters (a zero-width space, a direction mark, a soft hyphen) or in how an accent is "
                "encoded")


def id_look(case_id: str) -> str:
    """How a case id reads: without invisible or control characters, then composed (NFC).

    ``"c00\u200b"`` (a zero-width space after it) reads as ``"c00"``, and ``"cafe\u0301"`` (an ``e`` and a
    combining accent) as ``"café"``; ``"ｃ００"`` (full-width) and ``"x²"`` read as themselves: a reader sees
    them differ.

    Examples
    --------
    >>> id_look("c00\u200b"), id_look("cafe\u0301") == "café", id_look("ｃ００"), id_look("ord-7~injected")
    ('c00', True, 'ｃ００', 'ord-7~injected')
    """
    if case_id.isascii() and case_id.isprintable():
        return case_id
    kept = "".join(ch for ch in case_id if ord(ch) not in _INVISIBLE and unicodedata.category(ch) != "Cc")
    return unicodedata.normalize("NFC", kept)


def respelt_key(initial: Any, expected: Any) -> tuple[tuple[str, ...], str] | None:
    """A key of ``expected`` (a case's ``expected.state``) that ``initial`` (its ``initial_state``) does not
    hold at that place while it holds a key that reads the same (:func:`id_look`, surrounding spaces stripped) and
    that ``expected`` does not name: ``(path of the key in expected, the key initial holds)``, or None. Mappings
    are followed, lists are not.

    ``expected`` naming ``"josé"`` with a combining accent where the state holds ``"josé"`` composed compares a key
    the state never holds: a removal asked with ``{"$absent": true}`` passes an agent that does nothing, and a
    value asked there fails whatever the agent does, on a row that shows the same name on both sides. So does
    ``"ord-7 "`` (a trailing space, which no table shows) where the state holds ``"ord-7"``.

    Examples
    --------
    >>> keys, held = respelt_key({"users": {"jos\u00e9": {}}}, {"users": {"jose\u0301": {"$absent": True}}})
    >>> keys == ("users", "jose\u0301"), held == "jos\u00e9"
    (True, True)
    >>> respelt_key({"users": {"a": 1}}, {"users": {"b": 2}}) is None
    True
    >>> respelt_key({"orders": {"ord-7": {}}}, {"orders": {"ord-7 ": {"$absent": True}}})
    (('orders', 'ord-7 '), 'ord-7')
    """
    stack: list[tuple[tuple[str, ...], Any, Any]] = [((), initial, expected)]
    while stack:
        keys, before, want = stack.pop()
        if not (isinstance(before, dict) and isinstance(want, dict)) or is_absent_marker(want):
            continue
        odd: dict[str, str] | None = None  # look -> key, of the keys of `before` that read otherwise than written
        for key, value in want.items():
            if key in before:
                stack.append(((*keys, key), before[key], value))
                continue
            look = key_look(key)
            if look != key and look in before and look not in want:
                return (*keys, key), look
            if odd is None:  # built once a level, only where expected names a key the level does not hold
                odd = {}
                for other in before:
                    if (not reads_as_written(other) or other != other.strip()) and other not in want:
                        odd.setdefault(key_look(other), other)
            held = odd.get(look)
            if held is not None:
                return (*keys, key), held
    return None


def key_look(key: str) -> str:
    """How a key of a state (:func:`respelt_key`, the removal scan) or a cluster name reads: :func:`id_look`,
    surrounding spaces stripped ("" for a name that reads as nothing)."""
    return id_look(key).strip()


#: Characters :func:`id_look` drops: the invisible ones and the control characters (Unicode category Cc).
_DROPPED = re.compile("[\x00-\x1f\x7f-\x9f" + "".join(f"\\u{c:04x}" for c in sorted(_INVISIBLE)) + "]")


def reads_as_written(text: str) -> bool:
    """Whether every string a JSON text holds (or ``text`` itself) reads as written (:func:`id_look` keeps it):
    no escape, nothing :func:`id_look` drops, composed (NFC). One pass in C, so a case line whose strings all read
    as written is not walked.

    Examples
    --------
    >>> reads_as_written('{"users": {"jos\u00e9": 1}}'), reads_as_written('{"users": {"jose\u0301": 1}}')
    (True, False)
    >>> reads_as_written('{"a": "x\\\\u200b"}'), reads_as_written("ord-7\u00ad")
    (False, False)
    """
    if text.isascii():
        return "\\" not in text and text.isprintable()
    return "\\" not in text and not _DROPPED.search(text) and unicodedata.is_normalized("NFC", text)


LOOK_ALIKE_HELP = ("invisible characters (a zero-width space, a direction mark, a soft hyphen), surrounding spaces "
                     "or in how an accent is encoded")


class LookAlikes:
    """Names that read alike (:func:`id_look`, surrounding spaces stripped) but differ: cluster names of a case
    file or of an Inspect AI log's ``--cluster`` key, and criterion names.

    Two such cluster names split one cluster in two: the gate counts two independent clusters (an interval narrower
    than the evidence supports, ``min_clusters`` met) while every table shows one name; two such criteria are two
    rows of the gate shown as one. In a case file a name written in a case's ``cluster`` is checked against every
    cluster name before it, a case's id standing in as its cluster against the written ones (two ids are held apart
    by the rule of ids, :func:`key_look`).
    """

    def __init__(self) -> None:
        self._names: set[str] = set()  # every cluster name so far (a written one, or a case's id)
        self._written: dict[str, str] = {}  # names written in a case's "cluster" -> where first ("line 3")
        self._looks: dict[str, str] = {}  # look -> the first name read that way, for names that are not their look

    def clash(self, where: str, name: str, written: bool) -> str:
        """The earlier cluster name that ``name`` (read at ``where``: ``line 3``, ``sample 't4'``) reads as, quoted
        with where it was first read when known, or "" when there is none. ``written``: the case gives ``name`` in
        its ``cluster`` key (else it is its id)."""
        look = key_look(name)
        other = self._looks.get(look, look if look in self._names else None)
        if other is not None and other != name and (written or other in self._written):
            first = f" at {self._written[other]}" if other in self._written else " (a case's id)"
            return quote(other) + first
        if name not in self._names:
            self._names.add(name)
            if written:
                self._written[name] = where
            if look != name:
                self._looks.setdefault(look, name)
        return ""


def load_cases(path: str | Path) -> list[Case]:
    """Load every case of a JSONL file (one JSON object per line; see :func:`iter_cases`).

    Parameters
    ----------
    path : str or Path
        The case file (``cases.jsonl``). Blank lines are skipped.

    Returns
    -------
    list of Case
        In file order.

    Raises
    ------
    CaseFileError
        One line naming the file, the line and what is allowed: not JSON, not an object, a key written
        twice, a case id used twice, a field of the wrong type, or no case at all.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "cases.jsonl"
    >>> _ = path.write_text('{"id": "c1", "input": {"request": "refund order 7"}}\\n'
    ...                     '{"id": "c1", "input": {"request": "refund order 8"}}\\n')
    >>> op.load_cases(path)
    Traceback (most recent call last):
    ...
    oloproof_nb.errors.CaseFileError: ...cases.jsonl: line 2: duplicate case id 'c1' (also line 1)
    >>> _ = path.write_text('{"id": "c1", "input": {"request": "refund order 7"}}\\n')
    >>> [(case.id, case.input) for case in op.load_cases(path)]
    [('c1', {'request': 'refund order 7'})]
    >>> tmp.cleanup()
    """
    cases = [case for _, case in iter_cases(path)]
    if not cases:
        raise CaseFileError(path, None, "holds no cases; write one JSON object per line with 'id' and 'input'")
    return cases


#: Groups of equal cases a message names, and ids named of each.
_SHOWN_GROUPS, _SHOWN_IDS = 3, 3
#: Longest quoted id in such a message.
_ID_QUOTE = 60


class RepeatScan:
    """Cases that hold the same content under different ids, found in one pass over the case file.

    Each case is keyed by :func:`~oloproof_nb._core.case.content_digest` (its ``input``, ``initial_state``,
    ``expected`` and ``outcome``; not its ``id``, ``cluster`` nor ``metadata``): one dictionary look-up per
    case, so the cost is linear in the file. An epoch is a repeat by design and never reaches it. A
    metamorphic copy is seen too (:meth:`observe_copy`), and counts when it holds a source case's content —
    a hand-written variant of another case that a transform also makes, run and counted twice, or a copy no
    different from its own source — but not for repeating another copy (copies of repeated sources are the
    sources' repeats).

    Examples
    --------
    >>> scan = RepeatScan()
    >>> for line, (case_id, x) in enumerate([("a", 1), ("b", 2), ("c", 1)], start=1):
    ...     scan.observe(line, case_from_mapping({"id": case_id, "input": {"x": x}}))
    >>> scan.found()
    RepeatedCases(count=1, groups=1, shown="'a' = 'c' (lines 1, 3)")
    """

    def __init__(self) -> None:
        self._first: dict[str, tuple[int, str]] = {}  # content digest -> (line, id) of its first case
        self._sizes: dict[str, int] = {}  # content digest -> cases holding it, for contents held more than once
        self._shown: dict[str, list[tuple[int, str]]] = {}  # the first groups: their first (line, id)s
        self._copies: dict[str, tuple[int, str, int]] = {}  # a copy's content no source held yet -> (line, id, copies)

    def observe(self, line: int, case: Case, content: str = "") -> None:
        """Note ``case``, read at ``line`` of the case file (``content``: its content digest, when known)."""
        key = content or content_digest(case)
        first = self._first.setdefault(key, (line, case.id))
        if first[0] != line:
            self._repeat(key, first, (line, case.id))
            return
        copied = self._copies.pop(key, None)
        if copied is not None:  # copies read before it hold its content
            self._repeat(key, copied[:2], (line, case.id), copied[2])

    def observe_copy(self, line: int, copy_id: str, content: str) -> None:
        """Note the metamorphic copy ``copy_id`` of the case read at ``line``, whose content digest is ``content``."""
        source = self._first.get(content)
        if source is not None:
            self._repeat(content, source, (line, copy_id))
            return
        held = self._copies.get(content)
        self._copies[content] = (line, copy_id, 1) if held is None else (held[0], held[1], held[2] + 1)

    def _repeat(self, key: str, first: tuple[int, str], this: tuple[int, str], more: int = 1) -> None:
        """``this`` (and ``more - 1`` others) hold the content ``first`` holds."""
        self._sizes[key] = self._sizes.get(key, 1) + more
        if key in self._shown or len(self._shown) < _SHOWN_GROUPS:
            ids = self._shown.setdefault(key, [first])
            if len(ids) < _SHOWN_IDS:
                ids.append(this)

    def found(self) -> RepeatedCases:
        """How many cases repeat an earlier one, in how many groups, and the first groups in words."""
        parts = []
        for key, ids in self._shown.items():
            more = self._sizes[key] - len(ids)
            names = " = ".join(quote(case_id, _ID_QUOTE) for _, case_id in ids) + (f" = {more} more" if more else "")
            parts.append(f"{names} (lines {', '.join(str(line) for line, _ in ids)}{', …' if more else ''})")
        rest = len(self._sizes) - len(self._shown)
        shown = "; ".join(parts) + (f"; and {rest} more group(s)" if rest else "")
        return RepeatedCases(count=sum(self._sizes.values()) - len(self._sizes), groups=len(self._sizes), shown=shown)


def repeats_warning(file: str | Path, repeated: RepeatedCases) -> str:
    """The ``DuplicateCaseWarning`` of a case file whose cases ``repeated`` names: which, what it does, the fix."""
    return (f"{file}: {repeated.count} case(s) hold the same input, initial_state, expected and outcome as an earlier "
            f"case under another id: {repeated.shown}; each copy is run and counted as a case of its own (and a "
            "cluster, unless they share one), so n counts the same evidence more than once and the interval is "
            "narrower than the evidence supports (a regressed agent can pass on it); remove the copies or give each "
            "distinct content (epochs: k repeats a case on purpose)")


def repeats_note(repeated: RepeatedCases) -> str:
    """The gate's note on a criterion of a run whose case file repeats cases (empty when it does not)."""
    if not repeated.count:
        return ""
    return (f"n counts {repeated.count} case(s) that repeat another's content under another id, so the interval is "
            f"narrower than the evidence supports: {repeated.shown}")
