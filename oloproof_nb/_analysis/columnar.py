"""The columnar copy of a run: one Parquet file per frame under ``runs/<run_id>/frames/``.

::

    runs/<run_id>/frames/
      cases.parquet  steps.parquet  snapshots.parquet  changes.parquet  verdicts.parquet
      comparisons.parquet  replays.parquet  pairs.parquet  receipts.parquet
      _source.json     what the copy was built from (the format, the oloproof_nb release that made it, the size
                       and mtime of each journal file) and what it holds (the size and mtime of each frame file)
      .commit.lock     puts the copies of the run in place one at a time

The JSONL journal stays the record of truth (append + flush, resume); the copy is
derived from it and rebuilt whenever it is missing, does not match the
journal, was made by another release of oloproof_nb (``oloproof_nb.__version__``:
a release may derive a frame otherwise without changing :data:`FORMAT`), or has a
frame file other than the one it wrote (:func:`is_fresh`): a frame file edited,
touched or copied in from another run is never read as the run's. Each file has the explicit schema of its frame's
:class:`~oloproof_nb._analysis.columns.FrameSpec` (:meth:`FrameSpec.arrow_schema`):
text as UTF-8 strings, counts as ``int64``, flags as ``bool``, times as
``timestamp[us, UTC]``; the nullable pandas dtypes (``Int64``, ``boolean``)
as nullable Arrow columns, named in the file's ``pandas`` metadata so that a reader
without oloproof_nb (``pd.read_parquet``, Dask) gets the frame's dtypes too.

Users' values (``args``, ``result``, ``answer``, ``metadata``, ``content``,
``before``/``after``, ``expected``/``actual``) are stored as **JSON text**, one
string per cell, and ABSENT as a null. Not Arrow structs, because those values
have no one schema: arguments differ per tool and states per case, a field may be
``1`` in one row and ``1.5`` or ``"x"`` in the next (a struct would widen ``1`` to
``1.0`` or fail), Parquet has no union type, dict key order is part of what a
user wrote, and ABSENT must stay distinct from ``null``. JSON text keeps every
value exactly as the journal holds it (Python's ``json`` writes ``1`` and ``1.0``
differently and keeps NaN and infinities), still compresses well, and other
tools (DuckDB's ``json`` functions, ``json.loads`` in Dask) can read it. Reading
decodes each distinct text once: cells that hold equal values may share one
Python object, so copy a cell before changing it.

States are not copied: ``snapshots.parquet`` has one more column, ``state_ref``,
each row's state address in the run's ``states.jsonl`` (where each distinct state
is stored once, see ``_run/states.py``), and its ``state`` column is null on
those rows. The states are read when ``run.snapshots`` is, each distinct one once.
A run written before states were stored by address keeps its states as JSON
text in ``state`` (and a null ``state_ref``).

The copy is written into a temporary folder, then moved into ``frames/`` file by
file, each file replaced in one step (``os.replace``), so a reader never finds a
file missing or half written, not even one that opened the run earlier and reads
its frames now. ``_source.json`` is removed first and put back last: a copy being
replaced is never taken for fresh. Copies of one run are put in place one at a
time (an OS lock, ``frames/.commit.lock``; none on Windows), and a copy whose run
already has a fresh one is dropped instead, so two processes that open one
unconverted run at the same moment both read a whole copy and leave nothing
behind. A run opened earlier reads its frames from a copy of the journal it opened
(``_source.json``, checked before and after each file is read, and each frame
file against the size and mtime recorded there) or not at all: never some frames
from one copy and some from a newer one, and never a file changed since it was
written (a copy of the same journal being put in place meanwhile is waited for, on the commit lock, and
read). The temporary
folder of a process killed while it wrote a copy
(``frames.tmp-<host>-<pid>-<random>``) is removed by the next copy of the run
put in place on that host, or by the next load there that finds the copy in place fresh.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import socket
import stat
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .._config.files import UnreadableFile, read_regular
from .._core.canonical import dump_json, parse_json
from .._core.paths import ABSENT
from .._run.disk import make_folders, open_fd, owner_reads_and_writes
from .._run.lock import process_alive
from .._run.store import CASES, MANIFEST, REPLAYS, read_manifest
from .._version import __version__
from ..errors import CopyChangedError, OloproofError, RunDirError, quote_value
from .columns import ARROW_TYPES, FRAMES, TEXT, TIME, Column, FrameSpec, missing_scalar

if sys.platform != "win32":
    import fcntl

__all__ = ["FRAMES_DIR", "SOURCE_FILE", "FORMAT", "STATE_REF", "journal_fingerprint", "frames_fingerprint",
           "is_fresh", "fresh_source",
           "copy_source", "same_copy", "copied_stat", "copied_size", "copied_unchanged", "copy_changed",
           "CopyWriter", "read_frame", "sweep_abandoned",
           "to_arrow", "from_arrow", "json_text", "frame_path", "read_pool"]

FRAMES_DIR = "frames"
SOURCE_FILE = "_source.json"
#: The layout of the copy; a copy of another format is rebuilt (so is one another release made: :func:`fresh_source`).
FORMAT = 5  # 2: every frame has ``epoch``; 3: ``_source.json`` records each frame file's size and mtime; 4: no
#             verdict rows of copies labeled invalid; 5: each file's ``pandas`` metadata gives its columns' dtypes
#: The journal files a copy depends on. ``states.jsonl`` is not one: it only ever gains states (by
#: address), and a state added changes no frame; a state changed after it was written is refused when it is
#: read (its text no longer has its address), so ``snapshots`` never shows a state the copy's ``changes`` were
#: not computed from. The gate (``verdicts``) does not need it.
_JOURNAL = (MANIFEST, CASES, REPLAYS)
#: Rows buffered per frame before a row group is written.
_ROW_GROUP = 1 << 19
#: A frame with fewer rows at :meth:`CopyWriter.commit` is a *small file*: encoded in memory in one piece
#: with :data:`SMALL_FILE` and written with one call. The fixed costs of a Parquet file (Zstandard's set-up
#: per column chunk, dictionary pages, statistics) are most of the time a small frame takes to write, and
#: buy nothing at that size. See ``benchmarks/README.md`` section 1 and ``benchmarks/codecs.py``.
SMALL_ROWS = 1024
SMALL_FILE: dict[str, Any] = {"compression": "snappy", "use_dictionary": False, "write_statistics": False}
#: A frame of at least :data:`SMALL_ROWS` but fewer than these rows at commit (never streamed: all its rows were
#: still buffered) is a *medium file*: encoded in one piece with :data:`MEDIUM_FILE`, Zstandard without dictionary
#: pages or statistics. At that size dictionary pages and statistics cost time and buy no disk (the nine files of
#: the desk's 2,000 cases, ``python benchmarks/codecs.py`` on 6 Dec: 5.5 ms and 332 KiB against 8.3 ms and 374 KiB
#: with :func:`large_file`; the small-file setting faster but 741 KiB); a larger frame is streamed with
#: :func:`large_file`, whose dictionary pages the reader of a 100,000-case run reads its JSON columns from.
MEDIUM_ROWS = 1 << 16
MEDIUM_FILE: dict[str, Any] = {"compression": "zstd", "compression_level": 1, "use_dictionary": False,
                               "write_statistics": False}
LARGE_FILE: dict[str, Any] = {"compression": "zstd", "compression_level": 1}
#: Columns whose every row holds a value of its own (digests, times, durations): in a large file they are written
#: without a dictionary page, which would hold every value once more (and the reader never asks for them
#: dictionary-encoded). See ``benchmarks/README.md`` section 1.
ONE_PER_ROW = frozenset({"digest", "case_digest", "state_digest", "started_at", "captured_at", "duration_s"})
_ENCODING = "oloproof.encoding"


def large_file(columns: Sequence[str]) -> dict[str, Any]:
    """The writer options of a large file of ``columns``: :data:`LARGE_FILE`, dictionary pages but for the
    :data:`ONE_PER_ROW` columns."""
    return {**LARGE_FILE, "use_dictionary": [name for name in columns if name not in ONE_PER_ROW]}


#: The extra column of ``snapshots.parquet``: each row's state address in ``states.jsonl``.
STATE_REF = "state_ref"
_STATE_REF_FIELD = pa.field(STATE_REF, pa.large_string(), metadata={_ENCODING: "state_ref"})
#: ``_source.json`` holds a format number, a release and twelve pairs of numbers; anything bigger is no copy's.
_SOURCE_MAX_BYTES = 1 << 16



def _local_file(path: Path, mode: str = "rb") -> pa.NativeFile:
    """``path`` opened by Arrow as a local file, by its bytes: given as text, Arrow reads a path as a URI and
    encodes it as UTF-8, which a folder name of bytes that are not UTF-8 (``\\udcff`` once decoded) cannot be
    (``oloproof gate`` of such a run was an internal error)."""
    return pa.OSFile(os.fsencode(path), mode)


def frame_path(directory: Path, name: str) -> Path:
    """The Parquet file of frame ``name`` in run directory ``directory``."""
    return directory / FRAMES_DIR / f"{name}.parquet"


def _stat_pair(path: Path) -> list[int] | None:
    """``[size, mtime_ns]`` of a regular file (None: missing, or not a regular file, or one that cannot be
    stat'ed: a link to itself, which reading it then refuses naming it, not a raw ``OSError``)."""
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return [st.st_size, st.st_mtime_ns] if stat.S_ISREG(st.st_mode) else None


def journal_fingerprint(directory: Path) -> dict[str, list[int] | None]:
    """``{file: [size, mtime_ns]}`` of each journal file the copy depends on (None: the file does not exist,
    or is no regular file).

    The journal only grows (and a resume only cuts a torn last line or rewrites ``replays.jsonl``), so a
    copy whose fingerprint differs from the journal's is older than it.
    """
    return {name: _stat_pair(directory / name) for name in _JOURNAL}


def frames_fingerprint(folder: Path) -> dict[str, list[int] | None]:
    """``{frame: [size, mtime_ns]}`` of each frame file in ``folder`` (None: missing or not a regular file).

    Recorded in ``_source.json`` when a copy is written; ``os.replace`` keeps both numbers, so a frame file
    that differs from the record was changed (edited, touched, copied in) after its copy was put in place.
    """
    return {name: _stat_pair(folder / f"{name}.parquet") for name in FRAMES}


def copy_source(directory: Path) -> str | None:
    """The text of the copy's ``_source.json`` (None: no copy, or one being put in place).

    It names what the copy was built from, so two copies with the same text hold the same frames.
    """
    try:  # never blocks: a named pipe or a device put there is no copy (it is replaced by the next one)
        return read_regular(directory / FRAMES_DIR / SOURCE_FILE, _SOURCE_MAX_BYTES).decode("utf-8")
    except (UnreadableFile, UnicodeDecodeError):
        return None


def _source_data(text: str | None) -> dict[str, Any] | None:
    """The parsed text of a copy's ``_source.json`` (None: no copy, or not a JSON object)."""
    try:
        data = parse_json(text or "")
    except (ValueError, RecursionError):  # RecursionError: nested too deeply for the parser
        return None
    return data if isinstance(data, dict) else None


def fresh_source(directory: Path) -> str | None:
    """The :func:`copy_source` of ``directory``'s columnar copy when the copy is complete, of this :data:`FORMAT`,
    made by this release of oloproof_nb, and built from the journal as it is now; None otherwise.

    The release: one may change how a frame is derived from the journal and keep the format (the files' layout),
    so a copy another release made is rebuilt, once, from the journal. Two releases that read one folder in turn
    rebuild it in turn (each in the time a copy takes to build, ``benchmarks/convert.py``).
    """
    text = copy_source(directory)
    source = _source_data(text)
    if source is None or source.get("format") != FORMAT or source.get("oloproof_nb") != __version__:
        return None
    if source.get("journal") != journal_fingerprint(directory):
        return None
    written = source.get("frames")
    if not isinstance(written, dict) or None in written.values():
        return None
    return text if written == frames_fingerprint(directory / FRAMES_DIR) else None


def is_fresh(directory: Path) -> bool:
    """Whether ``directory`` has a complete columnar copy built from its journal as it is now."""
    return fresh_source(directory) is not None


_TMP = f"{FRAMES_DIR}.tmp-"


def _tmp_folder(directory: Path) -> Path:
    """A new temporary folder's path for a copy: ``frames.tmp-<host>-<pid>-<random>``, so the folder of a
    process killed while writing is known for what it is (see :func:`sweep_abandoned`)."""
    return directory / f"{_TMP}{_host()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _host() -> str:
    """This machine's name as it may stand in a folder name."""
    return re.sub(r"[^A-Za-z0-9._]", "_", socket.gethostname())


def sweep_abandoned(directory: Path) -> None:
    """Remove the temporary folders of copies whose process died on this machine before it finished (a
    SIGKILL, the out-of-memory killer, ``os._exit``); a folder of another host or of a live process stays.

    Called as a copy is put in place, and as a run whose copy is fresh is opened: a process killed while it
    rebuilt a fresh copy (``run.write_columnar()``), or while it converted a run another process had just put a
    copy of in place, left its folder, with the frame files it had written, beside a copy no later load replaces.
    A folder that cannot be removed (a read-only run folder) stays, and nothing is said."""
    if sys.platform == "win32":  # pragma: no cover - os.kill(pid, 0) is no probe there
        return
    host = _host()
    for folder in directory.glob(f"{_TMP}*"):
        owner, _, pid = folder.name[len(_TMP):].rpartition("-")[0].rpartition("-")
        if owner == host and pid.isdigit() and not process_alive(int(pid)):
            try:  # an empty one first: of mode 0 (made under umask 777 before make_folders), rmtree cannot open it
                folder.rmdir()
            except OSError:
                shutil.rmtree(folder, ignore_errors=True)


#: The lock file (inside ``frames/``) that puts the copies of one run in place one at a time.
COMMIT_LOCK = ".commit.lock"
#: Seconds a copy waits for another process's commit (a commit is a few renames) before giving up.
COMMIT_WAIT_S = 30.0


@contextmanager
def _one_commit_at_a_time(frames_dir: Path) -> Iterator[None]:
    """Hold the commit lock of a run's ``frames/`` (``flock``), waiting at most :data:`COMMIT_WAIT_S`.

    Where the file system has no ``flock`` (and on Windows) the copy is put in place unlocked, as before
    the lock existed. A symbolic link at the lock's path is replaced by the lock file, never opened, and a folder
    there is removed. A holder that does not let go in time raises :class:`OSError` (the caller then keeps the
    frames in memory, with a warning).
    """
    if sys.platform == "win32":  # pragma: no cover - no flock: copies are put in place unlocked there
        yield
        return
    path = frames_dir / COMMIT_LOCK
    if path.is_symlink():  # a folder copied with its links: opened through it, the lock made a file where it points
        path.unlink(missing_ok=True)
    elif path.is_dir():  # no lock's: opening it failed ("Is a directory") and every load kept its frames in memory
        shutil.rmtree(path, ignore_errors=True)
    # never descriptor 1 or 2 (a system may have closed them), never through a link put back meanwhile
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = open_fd(path, os.O_RDWR | os.O_CREAT | nofollow)
    except PermissionError:  # another user's lock (mode 0644): flock locks a descriptor opened for reading as well,
        fd = open_fd(path, os.O_RDONLY | nofollow)  # and every load kept its frames in memory (where NFS refuses
        # flock on such a descriptor, the copy is put in place unlocked, as where there is no flock)
    try:
        deadline = time.monotonic() + COMMIT_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OSError(f"{path}: another process has been putting its copy in place for "
                                  f"{COMMIT_WAIT_S:g} s") from None
                time.sleep(0.005)
            except OSError:  # no flock on this file system: unlocked
                break
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


#: Times a frame file is checked against the copy in place while other processes keep putting copies there.
_CHECKS = 3


def _settled_source(directory: Path) -> str | None:
    """:func:`copy_source` of ``directory``, read once no process is putting a copy in place there: while one is,
    ``_source.json`` is missing (removed first, put back last), and a Run that loaded a copy of the same journal
    took the moment for a run that changed ("load it again") as it read a frame or a record."""
    text = copy_source(directory)
    if text is None and _wait_for_commit(directory / FRAMES_DIR):
        text = copy_source(directory)
    return text


def _wait_for_commit(frames_dir: Path) -> bool:
    """Wait, at most :data:`COMMIT_WAIT_S`, until no process holds the commit lock of ``frames_dir`` (a shared
    ``flock``, which a reader takes on a descriptor opened for reading: nothing is written, and a read-only folder
    is read as before); whether there is a lock to wait on. No lock file, a link or anything else there, or no
    ``flock`` on the file system: nothing is waited for."""
    if sys.platform == "win32":  # pragma: no cover - copies are put in place unlocked there
        return False
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # a named pipe never blocks
    try:
        fd = open_fd(frames_dir / COMMIT_LOCK, flags)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        deadline = time.monotonic() + COMMIT_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return True
                time.sleep(0.005)
            except OSError:  # no flock on this file system
                return False
    finally:
        os.close(fd)  # closing the descriptor releases the lock


# -- pandas <-> Arrow -------------------------------------------------------------------------------------


def _json_encoder() -> Callable[[Any], str]:
    """One JSON text per value, as ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` writes it."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the pure-Python encoder, same text
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode

    def refuse(value: Any) -> Any:
        raise TypeError(f"{type(value).__name__} is not JSON serialisable")

    iterencode = make(None, refuse, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    return lambda value: "".join(iterencode(value, 0))


_encode = _json_encoder()


_quote = json.encoder.encode_basestring  # the text the encoder writes for a str (non-ASCII kept)


def json_text(value: Any) -> str | None:
    """The JSON text a JSON column's cell is stored as (ABSENT: None, a null): ``json.dumps(value,
    ensure_ascii=False, separators=(",", ":"))``. The commonest cells are written without a call into the encoder,
    whose set-up is most of a small value's time: a string is quoted directly, None is ``null`` (the rows a column
    does not apply to) and an empty dict ``{}`` (a case without ``metadata``).

    The copy's rows carry this text from the moment a record's rows are made (:func:`~.frames.chunk_items`), not the
    value: a run's records are let go of as they are turned into rows, and what a chunk holds until it becomes Arrow
    columns is text, which the garbage collector does not walk (holding the values, 2,000 desk cases made 71 young
    and middle collections and, every other run, a full one).
    """
    return (_quote(value) if type(value) is str else "null" if value is None else None if value is ABSENT
            else "{}" if type(value) is dict and not value else _encode(value))


def _times(values: Sequence[Any]) -> pa.Array:
    """ISO-8601 times (None: null) as ``timestamp[us, UTC]``, parsed by Arrow (by pandas when Arrow cannot)."""
    try:
        return pa.array(values, type=pa.large_string()).cast(ARROW_TYPES[TIME])
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        parsed = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601").astype(TIME)
        return pa.array(parsed, type=ARROW_TYPES[TIME], from_pandas=True)


def _column(col: Column, values: Sequence[Any]) -> pa.Array:
    if col.is_json:  # the rows hold the JSON text already (json_text)
        return pa.array(values, type=pa.large_string())
    if col.dtype == TIME:
        return _times(values)
    try:
        return pa.array(values, type=ARROW_TYPES[col.dtype], from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):  # e.g. a number in a text column:
        if col.dtype == TEXT:  # its text, as pandas 3's "str" dtype makes it (pandas 2's object dtype keeps the
            values = [v if v is None or isinstance(v, str) or missing_scalar(v) else str(v) for v in values]  # number)
            return pa.array(values, type=ARROW_TYPES[TEXT], from_pandas=True)
        series = pd.Series(values, dtype=object).astype(col.dtype)    # what the frame's dtype makes of it
        return pa.array(series, type=ARROW_TYPES[col.dtype], from_pandas=True)


def _only_words(col: Column, array: pa.Array) -> None:
    """A :class:`ValueError` naming the first value of ``array`` that is none of ``col.words`` (a null is none):
    a verdict row reading ``"FAIL"`` or ``"skip"`` counted as not passed, silently. One vectorised pass."""
    import pyarrow.compute as pc  # imported by pandas with pyarrow already: nothing to load

    known = pc.is_in(array, value_set=pa.array(col.words, type=array.type))
    if not pc.all(known).as_py():
        bad = array.filter(pc.invert(known))[0].as_py()
        raise ValueError(f"{col.name} {quote_value(bad)} is not one of the words allowed: {', '.join(col.words)}")


def to_arrow(spec: FrameSpec, items: Sequence[Any], state_refs: Sequence[str | None] | None = None) -> pa.Table:
    """The Arrow table of a frame's items as the copy makes them (:func:`~.frames.chunk_items`: what
    :meth:`FrameSpec.build` makes a DataFrame of, each JSON cell as its :func:`json_text`), with the spec's schema;
    :func:`from_arrow` turns it into the DataFrame :meth:`FrameSpec.build` makes of the items themselves.

    ``state_refs`` (``snapshots`` only): each row's state address in ``states.jsonl`` (None: the state is
    not stored there). The table then has one more column, ``state_ref``; ``state`` is null on the rows whose
    state is stored by address (their items hold none).
    """
    if not items:
        return _empty_table(spec, state_refs is not None)
    arrays = []
    schema = spec.arrow_schema()
    for col, values in zip(spec.columns, spec.values(items), strict=True):
        arrays.append(_column(col, values))
        if col.words:
            _only_words(col, arrays[-1])
    if state_refs is not None:
        arrays.append(pa.array(list(state_refs), type=pa.large_string()))
        schema = schema.append(_STATE_REF_FIELD)
    return pa.Table.from_arrays(arrays, schema=schema)


@functools.lru_cache(maxsize=2 * len(FRAMES))
def _empty_table(spec: FrameSpec, state_refs: bool) -> pa.Table:
    """The table of a frame without rows (with the ``state_ref`` column when ``state_refs``): made once per
    frame, as most chunks of most runs have no replays, pairs or receipts."""
    schema = spec.arrow_schema().append(_STATE_REF_FIELD) if state_refs else spec.arrow_schema()
    return schema.empty_table()


def _objects(values: list[Any]) -> np.ndarray:
    return np.fromiter(values, dtype=object, count=len(values))


def _decode_json(column: pa.ChunkedArray) -> np.ndarray:
    """JSON text cells -> Python values (null -> ABSENT); each distinct text is parsed once."""
    parts = []
    for chunk in column.chunks:
        if not isinstance(chunk, pa.DictionaryArray):
            chunk = chunk.dictionary_encode()
        texts = chunk.dictionary.to_pylist()
        values = _objects([*parse_json("[" + ",".join(texts) + "]"), ABSENT]) if texts else _objects([ABSENT])
        # a cell such as '1,2' (not one the copy writes) would shift the rest; a count, so cells that make up each
        # other's count ('[1', '2]' beside '3,4') pass it: damage is caught, forgery is not
        if len(values) != len(texts) + 1:
            raise ValueError(f"{len(texts)} JSON cells hold {len(values) - 1} values")
        codes = chunk.indices.fill_null(len(texts)).to_numpy(zero_copy_only=False)
        parts.append(values.take(codes))
    return np.concatenate(parts) if parts else np.empty(0, dtype=object)


def _decode_refs(column: pa.ChunkedArray, states: Callable[[Iterable[str]], list[Any]]) -> np.ndarray:
    """State addresses -> the states (each distinct state read once); None where there is no address."""
    parts = []
    for chunk in column.chunks:
        if not isinstance(chunk, pa.DictionaryArray):
            chunk = chunk.dictionary_encode()
        refs = chunk.dictionary.to_pylist()
        values = _objects([*states(refs), None])
        parts.append(values.take(chunk.indices.fill_null(len(refs)).to_numpy(zero_copy_only=False)))
    return np.concatenate(parts) if parts else np.empty(0, dtype=object)


def from_arrow(spec: FrameSpec, table: pa.Table,
               states: Callable[[Iterable[str]], list[Any]] | None = None) -> pd.DataFrame:
    """The frame of an Arrow table written by :func:`to_arrow`: the spec's columns and pandas dtypes.

    ``states`` reads states by address (needed when the table has a ``state_ref`` column).
    """
    out: dict[str, Any] = {}
    for col in spec.columns:
        if col.name not in table.column_names:
            continue
        data = table.column(col.name)
        if col.is_json:
            values = _decode_json(data)
            if col.name == "state" and STATE_REF in table.column_names:
                if states is None:
                    raise RunDirError(f"frame {spec.name}: its states are stored by address; read it through its run")
                by_ref = _decode_refs(table.column(STATE_REF), states)
                stored = np.fromiter((r is not None for r in by_ref), dtype=bool, count=len(by_ref))
                values[stored] = by_ref[stored]
            out[col.name] = pd.Series(values, dtype=object)
        else:
            if pa.types.is_dictionary(data.type):
                data = data.cast(data.type.value_type)
            series = data.to_pandas(types_mapper=_NULLABLE.get if col.dtype in ("Int64", "boolean") else None)
            out[col.name] = series if str(series.dtype) == col.dtype else series.astype(col.dtype)
    names = [c.name for c in spec.columns if c.name in out]
    return pd.DataFrame(out, columns=names)


_NULLABLE: dict[pa.DataType, Any] = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}


# -- files ------------------------------------------------------------------------------------------------


def read_pool() -> pa.MemoryPool:
    """The Arrow memory pool frame files are read into: the C library's allocator (``malloc``), not Arrow's
    default pool (mimalloc in the pip wheels), whatever the process's default is.

    The text columns of a frame read stay Arrow buffers in the frame (pandas' ``str`` dtype), and the reader's
    working buffers come and go around them. mimalloc keeps far more of that memory resident than the bytes it
    holds: at 100,000 cases the frames hold 187 MiB of Arrow data, and ``load_run``, every frame and the gate
    peaked 37–81 MiB higher (66 on average) read into the default pool than into this one, whose reads are
    about 7% slower (14% in CPU time; ``benchmarks/README.md`` section 4). Only the reads use it: the process's
    default pool, and what else Arrow allocates, are left as they are.
    """
    return pa.system_memory_pool()


def _read_table(handle: pa.NativeFile, columns: Sequence[str], dictionary: Sequence[str]) -> pa.Table:
    """``columns`` of the Parquet file open as ``handle``, ``dictionary`` of them dictionary-encoded, read into
    :func:`read_pool`: what ``pq.read_table(handle, columns=…, read_dictionary=…)`` reads (the same table, schema
    and chunks), through the reader that takes a memory pool."""
    import pyarrow.dataset as ds  # imported on first read, as ``pq.read_table`` does: keeps ``import oloproof_nb`` fast

    parquet = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=list(dictionary)))
    return parquet.make_fragment(handle).to_table(columns=list(columns), use_threads=True, memory_pool=read_pool())


def read_frame(directory: Path, name: str, states: Callable[[Iterable[str]], list[Any]] | None = None,
               columns: Sequence[str] | None = None, source: str | None = None,
               run_id: str | None = None) -> pd.DataFrame:
    """Frame ``name`` from the columnar copy of ``directory`` (only ``columns``, if given).

    ``source``: the copy's :func:`copy_source` when the caller loaded it; the frame is then read from that
    copy, or from another built from the same journal, or not at all (:class:`CopyChangedError`). This is
    checked before and after the file is read: a copy is put in place with ``_source.json`` removed first
    and put back last, one copy at a time, so a file read between two matching checks belongs to a copy
    built from the same journal. The file itself must be the one its copy wrote (its size and mtime as
    ``_source.json`` records them), before and after the read; else :class:`RunDirError`, and loading the
    run again rebuilds the copy from the journal. ``run_id``: the run loaded, which the error names when the
    folder now holds another (:func:`copy_changed`).
    """
    import pyarrow.parquet as pq  # imported on first read: keeps ``import oloproof_nb`` fast

    spec = FRAMES[name]
    wanted = spec.names if columns is None else [c for c in spec.names if c in columns]
    path = frame_path(directory, name)
    if source is not None:
        _as_loaded(directory, name, source, run_id)  # refuses a special file too
    else:
        _refuse_special(path)
    try:
        with _local_file(path) as handle:
            if name == "snapshots" and "state" in wanted and STATE_REF in pq.read_schema(handle).names:
                wanted = [*wanted, STATE_REF]
            handle.seek(0)
            table = _read_table(handle, wanted, [c for c in wanted if c in spec.json_columns or c == STATE_REF])
    except (OSError, pa.ArrowException, UnicodeDecodeError) as exc:  # a column name that is no UTF-8 (read_schema)
        if source is not None:
            _as_loaded(directory, name, source, run_id)  # a file gone with its copy: say so, not "cannot read"
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # Arrow's can run over many lines
        raise RunDirError(f"{path}: cannot read the columnar copy ({reason}); delete {path.parent} to rebuild "
                          "it from the journal") from None
    if source is not None:
        _as_loaded(directory, name, source, run_id)
    _check_types(path, spec, table)
    _check_text(path, table)
    try:
        return from_arrow(spec, table, states)
    except OloproofError:  # e.g. a state the store does not hold: its own line
        raise
    except (ValueError, RecursionError) as exc:  # a cell no copy writes (the types are checked above)
        raise RunDirError(f"{path}: not what a columnar copy writes ({type(exc).__name__}: {exc}); delete "
                          f"{path.parent} to rebuild it from the journal") from None


def _check_types(path: Path, spec: FrameSpec, table: pa.Table) -> None:
    """Raise :class:`RunDirError` for a column whose Arrow type is not the one :func:`to_arrow` writes (text may
    be read dictionary-encoded): turning it into the frame's dtype failed as an internal error, or gave a frame
    of another dtype."""
    expected = spec.arrow_schema()
    for field in table.schema:
        want = expected.field(field.name).type if field.name in expected.names else _STATE_REF_FIELD.type
        got = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if got != want and not (_is_text(got) and _is_text(want)):
            raise RunDirError(f"{path}: not what a columnar copy writes (column {field.name} is {got}, not {want}); "
                              f"delete {path.parent} to rebuild it from the journal")


def _check_text(path: Path, table: pa.Table) -> None:
    """Raise :class:`RunDirError` for a column whose text is no UTF-8 (or whose buffers do not hold what its type
    says): Parquet's reader does not check text, so a damaged cell was read into the frame as it was, and the
    gate stopped on it as an internal error (a ``criterion``), or gated it without a word (a ``case_id``).
    Arrow's full validation, 40 ms for 110 MB of columns."""
    for name, column in zip(table.column_names, table.columns, strict=True):
        try:
            column.validate(full=True)
        except pa.ArrowInvalid as exc:
            reason = (str(exc).strip().splitlines() or ["ArrowInvalid"])[0]
            raise RunDirError(f"{path}: not what a columnar copy writes (column {name}: {reason}); delete "
                              f"{path.parent} to rebuild it from the journal") from None


def _is_text(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _refuse_special(path: Path) -> None:
    """Raise for a frame path that exists but is no regular file (Arrow would wait on a named pipe for ever)."""
    if path.exists() and not path.is_file():
        raise RunDirError(f"{path}: not a regular file; delete {path.parent} to rebuild the columnar copy "
                          "from the journal")


def _built_from(source: dict[str, Any] | None) -> Any:
    """What a copy's parsed ``_source.json`` says it was built from (its format, the release that made it, and its
    journal fingerprint)."""
    return None if source is None else (source.get("format"), source.get("oloproof_nb"), source.get("journal"))


def _same_copy(directory: Path, source: str) -> dict[str, Any] | None:
    """The parsed ``_source.json`` of the copy in place in ``directory`` when it is built from the journal the
    loaded copy (``source``, its :func:`copy_source`) was; None when it is not (or there is no copy)."""
    current = _source_data(_settled_source(directory))
    return current if current is not None and _built_from(current) == _built_from(_source_data(source)) else None


def same_copy(directory: Path, source: str) -> bool:
    """Whether the copy in place in ``directory`` is built from the journal the loaded copy (``source``, its
    :func:`copy_source`) was: what a Run read from ``source`` and what it reads now are of one moment of the run."""
    return _same_copy(directory, source) is not None


def copied_stat(source: str, name: str) -> list[int] | None:
    """``[size, mtime_ns]`` of journal file ``name`` when the copy ``source`` (its :func:`copy_source`) was built
    from it (None: it had none, or the record holds no such pair)."""
    journal = (_source_data(source) or {}).get("journal")
    pair = journal.get(name) if isinstance(journal, dict) else None
    return pair if isinstance(pair, list) else None


def copied_size(source: str, name: str) -> int:
    """The size in bytes journal file ``name`` had when the copy ``source`` (its :func:`copy_source`) was built
    from it (0: it had none)."""
    pair = copied_stat(source, name)
    return pair[0] if pair and isinstance(pair[0], int) else 0


def copied_unchanged(directory: Path, source: str, name: str) -> bool:
    """Whether journal file ``name`` of ``directory`` has the size and mtime it had when the copy ``source`` (its
    :func:`copy_source`) was built from it: read now, it is the file that copy was built from."""
    pair = copied_stat(source, name)
    return pair is not None and pair == _stat_pair(directory / name)


def copy_changed(directory: Path, run_id: str | None = None) -> CopyChangedError:
    """The one line for a run whose folder no longer holds the copy it was loaded with: the folder is gone
    (moved, renamed or deleted), holds another run than ``run_id`` (the run loaded: the folder was replaced),
    or the run went on (it was resumed, or a live run finished), or another release of oloproof_nb rebuilt the copy
    (:func:`fresh_source`)."""
    if not directory.is_dir():
        return CopyChangedError(f"{directory}: the run folder is gone since the run was loaded (moved, renamed or "
                                "deleted), so nothing more can be read from it; load the run from where it is now "
                                "with op.load_run")
    again = f"op.load_run({str(directory)!r})"
    now = run_id
    if run_id is not None:
        try:
            now = read_manifest(directory).run_id
        except OloproofError:  # no manifest (a new run being created there), or a damaged one
            now = None
    if now != run_id:
        holds = f"now holds run {now}" if now is not None else "no longer holds a readable run"
        return CopyChangedError(f"{directory}: {holds}, not run {run_id} that was loaded (the folder was replaced), "
                                f"so nothing more is read from it for run {run_id}; to use what it holds now, load "
                                f"it again: {again}")
    return CopyChangedError(f"{directory}: the run changed after it was loaded (it went on, or was resumed, or "
                            "another release of oloproof_nb rebuilt its columnar copy), so its "
                            f"frames would no longer match one another; load it again: {again}")


def _as_loaded(directory: Path, name: str, source: str, run_id: str | None = None) -> None:
    """Raise unless the run's copy in place is built from the journal the loaded copy (``source``) was, and
    frame ``name``'s file is the one that copy wrote (its size and mtime as :func:`frames_fingerprint`).

    A copy another process puts in place meanwhile (one built from the same journal: a frame file had been
    touched) is waited for, never taken for a file changed since its copy wrote it: looked at between its
    ``_source.json`` and its file, the file was already the new copy's."""
    path = frame_path(directory, name)
    for _ in range(_CHECKS):
        text = _settled_source(directory)
        current = _source_data(text)
        if current is None or _built_from(current) != _built_from(_source_data(source)):
            raise copy_changed(directory, run_id)
        _refuse_special(path)
        written = current.get("frames")
        if not isinstance(written, dict):
            raise RunDirError(f"{directory / FRAMES_DIR / SOURCE_FILE}: not what a columnar copy writes (its frames "
                              "are not a mapping of file to size and modification time); load the run again to "
                              f"rebuild the copy from the journal: op.load_run({str(directory)!r})")
        if _stat_pair(path) == written.get(name):
            return
        if copy_source(directory) == text:  # the copy looked at is still in place: its file changed since
            break
    raise RunDirError(f"{path}: not the file its columnar copy wrote (its size or modification time differs "
                      f"from what {SOURCE_FILE} records: edited, touched or copied in since); load the run "
                      f"again to rebuild the copy from the journal: op.load_run({str(directory)!r})")


def _clear_folder(path: Path) -> None:
    """Remove a folder standing where a copy's file goes (a file put there, a pipe or a link, is replaced by
    ``os.replace``; a folder is not, and every load then rebuilt the frames in memory)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)


def _whole_file(table: pa.Table, options: dict[str, Any]) -> pa.Buffer:
    """The bytes of a Parquet file holding ``table`` in one row group, written with ``options``."""
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, **options) as whole:
        whole.write_table(table, row_group_size=max(table.num_rows, 1))
    return sink.getvalue()


@functools.lru_cache(maxsize=4 * len(FRAMES))
def _empty_file(schema: bytes) -> pa.Buffer:
    """The bytes of the small file of a frame without rows, its Arrow schema given serialized (not as a
    ``pa.Schema``, whose ``==`` ignores the metadata each field's dtype is read from): made once per schema
    (0.14 ms a file)."""
    return _whole_file(pa.ipc.read_schema(pa.py_buffer(schema)).empty_table(), SMALL_FILE)


class CopyWriter:
    """Writes a run's columnar copy frame by frame, chunk by chunk, then puts it in place.

    ``write(name, frame)`` appends rows (buffered into row groups); :meth:`commit` writes every frame not
    written yet as an empty file, records the journal fingerprint taken before the journal was read, and
    moves the files into ``frames/`` (see the module's docstring). :meth:`abort` removes the temporary folder.
    """

    def __init__(self, directory: Path, fingerprint: dict[str, list[int] | None]) -> None:
        import pyarrow.parquet as pq

        self._pq = pq
        self.directory = directory
        self.fingerprint = fingerprint
        self.tmp = _tmp_folder(directory)
        make_folders(self.tmp, parents=False)  # one its owner cannot write into (umask 777) is removed, never left
        self._writers: dict[str, Any] = {}
        self._sinks: dict[str, pa.NativeFile] = {}  # the writers' files: a writer given one does not close it
        self._buffers: dict[str, list[pa.Table]] = {}
        self._rows: dict[str, int] = {}
        self.written: str | None = None  # the copy's _source.json, once committed (see copy_source)

    def write(self, name: str, table: pa.Table) -> None:
        """Append the rows of ``table`` (from :func:`to_arrow`) to frame ``name``."""
        self._buffers.setdefault(name, []).append(table)
        self._rows[name] = self._rows.get(name, 0) + table.num_rows
        if self._rows[name] >= _ROW_GROUP:
            self._flush(name)

    def _flush(self, name: str, last: bool = False) -> None:
        buffer = self._buffers.get(name)
        if not buffer:
            return
        table = pa.concat_tables(buffer) if len(buffer) > 1 else buffer[0]
        self._buffers[name] = []
        self._rows[name] = 0
        writer = self._writers.get(name)
        if writer is None and last and table.num_rows < MEDIUM_ROWS:  # the whole file, a small or medium one
            if table.num_rows:
                data = _whole_file(table, SMALL_FILE if table.num_rows < SMALL_ROWS else MEDIUM_FILE)
            else:  # most runs' replays, pairs and receipts: the same bytes every time for a schema
                data = _empty_file(table.schema.serialize().to_pybytes())
            (self.tmp / f"{name}.parquet").write_bytes(data)
            return
        if writer is None:
            self._sinks[name] = _local_file(self.tmp / f"{name}.parquet", "wb")
            writer = self._pq.ParquetWriter(self._sinks[name], table.schema, **large_file(table.schema.names))
            self._writers[name] = writer
        writer.write_table(table, row_group_size=max(table.num_rows, 1))

    def commit(self) -> None:
        """Finish every file, record what the copy was built from, and put it in place of ``frames/``."""
        for name, spec in FRAMES.items():
            if not self._buffers.get(name) and name not in self._writers:
                self._buffers[name] = [to_arrow(spec, [], [] if name == "snapshots" else None)]
            self._flush(name, last=True)
            if name in self._writers:
                self._writers[name].close()
                self._sinks[name].close()
        for name in FRAMES:  # readable by their owner whatever the umask (see owner_reads_and_writes)
            owner_reads_and_writes(self.tmp / f"{name}.parquet")
        source = {"format": FORMAT, "oloproof_nb": __version__, "journal": self.fingerprint,
                  "frames": frames_fingerprint(self.tmp)}
        self.written = dump_json(source) + "\n"  # not json.dumps: a system on a thread may replace it
        (self.tmp / SOURCE_FILE).write_text(self.written, encoding="utf-8")
        owner_reads_and_writes(self.tmp / SOURCE_FILE)
        target = self.directory / FRAMES_DIR
        # a link (e.g. into another run's folder, copied with its links): never written through; a file or a named
        # pipe: no copy's, and mkdir failed ("File exists") at every load, which kept its frames in memory
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            target.unlink(missing_ok=True)
        try:  # never one its owner cannot use (a system's umask 777 made it mode 0, and no copy was ever put there)
            make_folders(target, parents=False)
        except FileExistsError:
            if not target.is_dir():
                raise
        with _one_commit_at_a_time(target):
            sweep_abandoned(self.directory)
            if not is_fresh(self.directory):  # else another process has just put the same copy (or a newer) there
                _clear_folder(target / SOURCE_FILE)
                (target / SOURCE_FILE).unlink(missing_ok=True)  # from here until it is back: not fresh
                for name in FRAMES:
                    _clear_folder(frame_path(self.directory, name))
                    os.replace(self.tmp / f"{name}.parquet", frame_path(self.directory, name))
                os.replace(self.tmp / SOURCE_FILE, target / SOURCE_FILE)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def abort(self) -> None:
        """Drop what was written (the journal is untouched)."""
        for closable in [*self._writers.values(), *self._sinks.values()]:
            try:
                closable.close()
            except (OSError, pa.ArrowException):
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)
