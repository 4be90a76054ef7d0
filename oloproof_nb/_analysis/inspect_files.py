"""Which files are Inspect AI logs, and guarding a log before inspect-ai reads it (see :mod:`.inspect_log`).

A log is known by its first bytes (:func:`is_inspect_log`, inspect-ai not imported); a folder's logs are those in it
and in its folders, two levels (:func:`inspect_log_files`). Before inspect-ai reads a log, :func:`check_log_nesting`
refuses what would exhaust its reader: JSON nested too deep, an integer too long for Python to convert, an archive
member too large uncompressed.
"""

from __future__ import annotations

import json
import os
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .._config.files import UnreadableFile, dangling_link, folder_problem, open_regular
from .._config.suite_config import SUITE_FILE
from .._run.store import MANIFEST
from ..errors import OloproofError

__all__ = ["is_inspect_log", "inspect_log_files", "is_inspect_source", "check_log_nesting"]

#: A ``.json`` log is recognised by these keys in its first bytes.
_HEAD_BYTES = 65536
#: A ``.json`` log's first key is ``version`` (Inspect writes ``EvalLog`` fields in order). Inspect's
#: ``logs.json`` (the listing an ``eval_set`` writes beside its logs) holds ``"version"`` and ``"eval"``
#: one level down, under each log's name: it is not a log.
_JSON_LOG_START = re.compile(rb'\{\s*"version"\s*:')
#: A string (a key when a ``:`` follows it) or a bracket of JSON text, for :func:`_top_keys`.
_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"\s*:?|[\[\]{}]')
#: The name Inspect AI gives a log file starts with the time the eval was created (``2026-07-25T14-00-00-00-00_``);
#: its own listing (``inspect_ai.log.list_eval_logs``) takes a ``.json`` file so named for a log, whatever it holds.
_LOG_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")


#: Deepest nesting of a log's JSON handed to inspect-ai. Its reader's memory grows faster than the depth: a
#: 200 KB ``.json`` log nested 100,000 deep took 24 GB before the kernel killed the process. Real logs nest a
#: few dozen levels (a tool's arguments, a state); oloproof refuses values deeper than 200 itself.
MAX_LOG_DEPTH = 1000
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(data: bytes) -> int:
    """How deeply the JSON text ``data`` nests (0: a scalar), counted from its brackets outside strings.

    Vectorised (a regular expression drops the strings, NumPy sums the brackets), so a large log costs
    about as much as reading it once. Text that is not JSON gets some number; its reader refuses it.

    Examples
    --------
    >>> json_depth(b'{"a": [1, {"b": "[[[["}]}'), json_depth(b"3")
    (3, 0)
    """
    return _bracket_depth(_JSON_STRING.sub(b"", data))


def _bracket_depth(outside: bytes) -> int:
    """:func:`json_depth` of JSON text whose strings are already dropped."""
    brackets = outside.translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int64)
    return int(np.cumsum(steps).max())


#: Largest member of an ``.eval`` archive read (uncompressed). A zip of 1 MB can hold a 1 GiB member (one such
#: took 2.2 GB of memory); one sample's JSON, attachments included, is far below this.
MAX_LOG_MEMBER_BYTES = 256 * 1024 * 1024


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, file: Path) -> bytes:
    """One member's bytes, never more than :data:`MAX_LOG_MEMBER_BYTES` (its declared size is not trusted)."""
    data = b""
    if info.file_size <= MAX_LOG_MEMBER_BYTES:
        with archive.open(info) as handle:
            data = handle.read(MAX_LOG_MEMBER_BYTES + 1)
    if info.file_size > MAX_LOG_MEMBER_BYTES or len(data) > MAX_LOG_MEMBER_BYTES:
        raise OloproofError(f"{file}: {info.filename}: more than {MAX_LOG_MEMBER_BYTES // 2**20} MiB uncompressed "
                            "(a compressed archive can hold far more than it takes on disk); not an Inspect AI log "
                            "oloproof reads")
    return data


#: ``bytes.translate`` table: every digit to ``0``, anything else to a space (a long run of digits is then found by a
#: substring search, and the slower regular expression that reads where the run starts only runs when there is one).
_DIGITS_AS_ZEROS = bytes(ord("0") if ord("0") <= code <= ord("9") else ord(" ") for code in range(256))


def check_log_nesting(file: Path) -> None:
    """Refuse a log whose JSON (a ``.json`` log, or any member of an ``.eval`` archive) nests deeper than
    :data:`MAX_LOG_DEPTH`, holds a number whose integer part has more digits than Python converts
    (``sys.get_int_max_str_digits()``, 4,300 by default: ijson 3.6's C parser, which inspect-ai reads with, then
    crashed the process with SIGSEGV, exit 139, on such an integer; one followed by a fraction or an exponent, which
    it reads, is refused too), or an archive member larger than :data:`MAX_LOG_MEMBER_BYTES` uncompressed, before
    inspect-ai reads it (one line naming the file and the member). An archive that cannot be read is one line naming
    the file and why: no zip, an encrypted member (RuntimeError), or a member whose compressed bytes are damaged, which
    its decompressor refuses with its own kind of error (``zlib.error``, ``EOFError``, ``lzma.LZMAError``, zstandard's
    ``ZstdError`` for the zstd members Inspect AI writes: a log with a few damaged bytes was an internal error, "a
    bug in oloproof_nb")."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()

    def check(data: bytes, where: str) -> None:
        outside = _JSON_STRING.sub(b"", data)
        depth = _bracket_depth(outside)
        if depth > MAX_LOG_DEPTH:
            raise OloproofError(f"{where}: nested {depth} levels deep (at most {MAX_LOG_DEPTH}); not an Inspect AI "
                                "log oloproof reads")
        if limit and b"0" * (limit + 1) in outside.translate(_DIGITS_AS_ZEROS) and re.search(
                rb"(?<![\d.eE+])(?<![eE]-)\d{%d}" % (limit + 1), outside):  # the regex only when digits run that long
            # inspect-ai reads logs with ijson, whose C parser crashes the process (SIGSEGV) on such a number
            raise OloproofError(f"{where}: holds a number whose integer part runs past {limit:,} digits (Python's "
                                "limit for reading text as an integer); not an Inspect AI log oloproof reads")

    for data, where in _json_texts(file):  # what is read is checked outside its reading's catch-all: a bug of
        check(data, where)                    # ours in the check stays an internal error, not a damaged log


def _json_texts(file: Path) -> Iterator[tuple[bytes, str]]:
    """The bytes of a ``.json`` log, or of each ``.json`` member of an ``.eval`` archive, with where they are (see
    :func:`check_log_nesting`). Reading an archive or a damaged member raises many kinds of error (a damaged
    zstd member of a real log: ``BadZipFile``, ``ZstdError``, ``EOFError``, ``OSError``, ``NotImplementedError``),
    each one line naming the file; only the reading is under that catch, never what the caller does with a member
    (an exception raised there is not thrown into this generator)."""
    try:
        if file.suffix != ".eval":
            data = file.read_bytes()
        else:
            with zipfile.ZipFile(file) as archive:
                for info in archive.infolist():
                    if info.filename.endswith(".json"):
                        yield _member(archive, info, file), f"{file}: {info.filename}"
            return
    except (OloproofError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged archive or member raises many kinds (see the docstring)
        raise OloproofError(f"{file}: cannot read this Inspect AI log ({type(exc).__name__}: {exc})") from None
    yield data, str(file)


def is_inspect_log(path: str | Path) -> bool:
    """Whether ``path`` is an Inspect AI log file, from its first bytes (inspect-ai is not imported).

    An ``.eval`` log is a zip archive holding ``header.json`` or ``_journal/start.json``; a ``.json``
    log is a JSON object whose first key is ``"version"`` and whose first bytes name ``"eval"`` (the
    ``logs.json`` listing an ``eval_set`` writes is not one), or, its keys in another order, one whose first
    bytes hold its key ``"eval"`` and name ``"run_id"`` and ``"task"``.
    """
    p = Path(path)
    if not p.is_file():
        return False
    if p.suffix == ".eval":
        try:
            with zipfile.ZipFile(p) as z:
                names = set(z.namelist())
        except (OSError, zipfile.BadZipFile):
            return False
        return "header.json" in names or "_journal/start.json" in names
    if p.suffix == ".json":
        try:
            with p.open("rb") as handle:
                head = handle.read(_HEAD_BYTES).lstrip()
        except OSError:
            return False
        if _JSON_LOG_START.match(head) is not None:
            return b'"eval"' in head
        # a log another tool wrote again with its keys sorted (``jq -S``, ``json.dump(sort_keys=True)``) starts with
        # another key: it was skipped, and its folder judged on its other logs (8 samples of 16), silently; a log
        # now, it is read, or refused naming it (inspect-ai cannot read such a log's header alone)
        return head.startswith(b"{") and b'"eval"' in _top_keys(head) and b'"run_id"' in head and b'"task"' in head
    return False


def _top_keys(head: bytes) -> set[bytes]:
    """The keys of the outermost JSON object among the first bytes ``head`` (each with its quotes).

    Examples
    --------
    >>> sorted(_top_keys(b'{"error": null, "eval": {"task": "x", "s": "{\\"a\\": 1"}, "plan": [{"eval": 1}]'))
    [b'"error"', b'"eval"', b'"plan"']
    """
    keys: set[bytes] = set()
    depth = 0
    for token in _JSON_TOKEN.findall(head):
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and token.endswith(b":"):
            keys.add(token[:token.rindex(b'"') + 1])
    return keys


def _cannot_read(file: Path) -> str | None:
    """Why the regular file ``file`` cannot be opened for reading (``cannot read: Permission denied``), or None.

    :func:`is_inspect_log` answers False for such a file, as for a file that is no log: a log of a folder that
    could not be read was left out without a word, its folder judged on the other logs, and one given alone was
    "not an Inspect AI log"."""
    try:
        handle, _ = open_regular(file)
    except UnreadableFile as exc:
        return str(exc)
    handle.close()
    return None


def log_folder_files(folder: Path) -> list[Path]:
    """The files a folder of Inspect AI logs is read from: those in it and in its folders, two levels (Inspect AI
    writes its logs flat into its log folder, an eval set too), sorted. Deeper files are not looked at, so an old
    ``.eval`` somewhere below a folder of projects is not taken for one of its logs."""
    near: list[Path] = []
    for child in sorted(folder.iterdir()):
        near.append(child)
        if child.is_dir():
            near += sorted(child.iterdir())
    return [f for f in near if not f.is_dir()]


def is_inspect_source(path: Path) -> bool:
    """Whether ``path`` is read as Inspect AI logs: a log file (by its suffix, so that :func:`inspect_log_files`
    says what is wrong with a damaged one), or a folder holding a log where :func:`log_folder_files` looks, and
    neither a run manifest nor a suite file, nor a run or suite folder among its folders (a folder of projects is
    not a log folder, and a suite folder stands for its latest run, whatever logs it keeps)."""
    if folder_problem(path) is not None:  # an unreadable folder: the caller says what is wrong with it
        return False
    if path.exists() and not path.is_dir():  # a FIFO named x.eval: "not a regular file", never opened
        return path.suffix in (".eval", ".json") or (path.is_file() and is_inspect_log(path))
    # lexists: a run whose manifest.json is a dangling link is a run that cannot be read, not a folder of logs
    if not path.is_dir() or os.path.lexists(path / MANIFEST) or (path / SUITE_FILE).exists():
        return False
    try:
        if any((f / MANIFEST).is_file() or (f / SUITE_FILE).is_file() for f in path.iterdir()):
            return False
        near = log_folder_files(path)
    except OSError:  # an unreadable folder: the caller says what is wrong with it
        return False
    unread = [f for f in near if f.suffix == ".json" and (f.is_file() or f.is_symlink())  # may be logs
              and _cannot_read(f) is not None]
    # a .json named as Inspect AI names its logs is one (an empty one a killed eval left): a folder holding only it
    # is a log folder whose log :func:`inspect_log_files` names, not "not a run directory"
    return bool(unread) or any(f.suffix == ".eval" or _named_json_log(f)
                               or (f.suffix == ".json" and (is_inspect_log(f) or _unreadable_json_log(f) is not None))
                               for f in near)


_TRUNCATED_JSON = ("it starts as an Inspect AI .json log does, with its \"version\" key, but its JSON ends before the "
                   "log's \"eval\" key: cut short")


#: The first key of a ``.json`` log another tool wrote again with its keys sorted (:func:`is_inspect_log`).
_SORTED_LOG_START = re.compile(rb'\{\s*"eval"\s*:\s*\{')

_TRUNCATED_SORTED = ("its keys in another order, it starts with an Inspect AI log's \"eval\" key, but its JSON ends "
                     "before the eval names its \"run_id\" and \"task\": cut short")


#: A UTF-8 byte order mark: an editor or a tool that saved a log again may put it first (PowerShell's ``Set-Content
#: -Encoding UTF8``, Notepad), and Inspect AI cannot read a log that starts with it.
_BOM = b"\xef\xbb\xbf"

_BOM_JSON = ("it starts with a UTF-8 byte order mark (added by a tool that saved it again), which Inspect AI cannot "
             "read: remove its first 3 bytes")


def _unreadable_json_log(f: Path) -> str | None:
    """How the ``.json`` file ``f`` is a log Inspect AI cannot read, or None: it starts with a UTF-8 byte order mark
    and then as a log does (:data:`_BOM_JSON`: a log with one in a folder of logs was skipped without a word, the
    folder judged on its other logs), or it is a log cut short: it starts as an Inspect AI log does (its first key
    ``version``: :data:`_JSON_LOG_START`) but ends before the log's ``eval`` key (:data:`_TRUNCATED_JSON`), or, its
    keys sorted, starts with the log's ``eval`` object but ends before the ``run_id`` and ``task`` that make it a
    log (:data:`_TRUNCATED_SORTED`; once skipped without a word, its folder judged on the other logs). Only a
    file within :data:`_HEAD_BYTES` can be cut short (a longer log names ``eval`` in its first bytes, and is read as
    a log, whose reader says what is wrong), and one that is whole JSON is another file. A file that is not a
    regular one (a FIFO named ``x.json``) is none, and never opened: reading a FIFO waits for a writer."""
    try:
        handle, _ = open_regular(f)
    except UnreadableFile:
        return None
    try:
        with handle:
            data = handle.read(_HEAD_BYTES + 1)
    except OSError:
        return None
    if data.startswith(_BOM):
        rest = data[len(_BOM):].lstrip()
        return _BOM_JSON if _JSON_LOG_START.match(rest) or _SORTED_LOG_START.match(rest) else None
    head = data.lstrip()
    if len(data) > _HEAD_BYTES:
        return None
    if _JSON_LOG_START.match(head) is not None:
        if b'"eval"' in data:
            return None
        why = _TRUNCATED_JSON
    elif _SORTED_LOG_START.match(head) is not None and not is_inspect_log(f):
        why = _TRUNCATED_SORTED
    else:
        return None
    try:
        json.loads(data)
    except ValueError:  # UnicodeDecodeError too
        return why
    return None


def _damage(p: Path) -> str | None:
    """What is wrong with ``p``, given alone, when it is a log by its name or its first key but no readable one:
    an ``.eval`` that is no zip archive holding ``header.json`` (cut short, damaged), a ``.json`` cut short or
    starting with a byte order mark (:func:`_unreadable_json_log`) or named as Inspect AI names its logs; None for
    another file."""
    if p.suffix == ".eval":
        return ("an .eval log is a zip archive holding header.json or _journal/start.json, and this file is not one: "
                "cut short or damaged")
    cut = _unreadable_json_log(p)
    if cut is not None:
        return cut
    if _named_json_log(p):
        return "named as Inspect AI names its logs, but not an eval log's JSON"
    return None


def _named_json_log(f: Path) -> bool:
    """Whether ``f`` is a ``.json`` file named as Inspect AI names its logs (:data:`_LOG_NAME`): a log by its name,
    as Inspect's own listing takes it, whatever it holds."""
    return f.suffix == ".json" and _LOG_NAME.match(f.name) is not None and f.is_file()


def inspect_log_files(path: str | Path) -> list[Path]:
    """The Inspect AI logs at ``path``: the file itself, or every log in the folder and its folders
    (:func:`log_folder_files`).

    Raises
    ------
    OloproofError
        When ``path`` is neither an Inspect log nor a folder holding one.
    """
    p = Path(path)
    problem = folder_problem(p)
    if problem is not None:
        raise OloproofError(f"{p}: {problem}; give an Inspect AI log or a folder of logs you can read")
    if p.is_file():
        unread = _cannot_read(p)
        if unread is not None:
            raise OloproofError(f"{p}: {unread}; give an Inspect AI log you can read")
        if not is_inspect_log(p):
            damage = _damage(p)
            if damage is not None:  # a log by its name or its first key: "not an Inspect AI log (an .eval ...)" misled
                raise OloproofError(f"{p}: not a readable Inspect AI log ({damage}); repair it, or give the whole log")
            raise OloproofError(f"{p}: not an Inspect AI log (an .eval or .json eval log)")
        return [p]
    if p.is_dir():
        near = log_folder_files(p)
        for f in near:  # a log that cannot be read, left out, would judge the folder on part of its samples
            # a symbolic link whose log is gone (moved, a link loop) is a log that cannot be read too: a folder of
            # links to logs, one of whose logs was moved, was judged on the others (30 of 30 passing, PASS)
            linked = f.is_file() or f.is_symlink()
            unread = _cannot_read(f) if f.suffix in (".eval", ".json") and linked else None
            if unread is not None:
                raise OloproofError(f"{f}: {unread}; a log of this folder that cannot be read would leave its samples "
                                    "out: make it readable, or move it out of the folder")
        found = [f for f in near if f.suffix in (".eval", ".json") and is_inspect_log(f)]
        damaged = [f for f in near if f.suffix == ".eval" and f not in found]
        if damaged:  # an .eval is a log by its name: skipping it would judge the folder on the others
            raise OloproofError(f"{damaged[0]}: not a readable Inspect AI log (an .eval log is a zip archive with "
                                "header.json); repair or remove it, or read the other logs one by one")
        # a .json named as Inspect names its logs is one too (Inspect lists it): an empty one, left by an eval
        # killed as it wrote its log, was skipped without a word and its folder judged on the other logs
        damaged = [f for f in near if _named_json_log(f) and f not in found]
        if damaged:
            raise OloproofError(f"{damaged[0]}: not a readable Inspect AI log ({_damage(damaged[0])}); repair or "
                                "remove it, or read the other logs one by one")
        # so is one that starts as a log does but ends before its "eval" key (a copy cut short, renamed), or one
        # that starts with a byte order mark: skipped without a word, its folder was judged on the other logs
        cut = [(f, why) for f in near if f.suffix == ".json" and f not in found and (why := _unreadable_json_log(f))]
        if cut:
            raise OloproofError(f"{cut[0][0]}: not a readable Inspect AI log ({cut[0][1]}); repair or remove it, or "
                                "read the other logs one by one")
        if not found:
            raise OloproofError(f"{p}: no Inspect AI log (.eval or .json) in this folder or its folders (two levels "
                                "are read: Inspect AI writes its logs flat into its log folder)")
        return found
    if p.exists():  # a FIFO, a socket, a device: never opened (reading a FIFO would wait for a writer)
        raise OloproofError(f"{p}: not a regular file or folder; give an Inspect AI log (an .eval or .json file) "
                            "or a folder of logs")
    link = dangling_link(p)
    if link is not None:  # "no such file or folder" of a link that is there, as the command line names it
        raise OloproofError(f"{p}: {link}; point it at an Inspect AI log or a folder of logs, or remove it")
    raise OloproofError(f"{p}: no such file or folder")
