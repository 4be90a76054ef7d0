"""Reading user files safely, and turning validation problems into one-line config errors naming file and key.

Every input file (oloproof.yaml, release.yaml, cases, labels, contract files) is
opened by :func:`open_regular`: stat first and refuse anything but a regular file
(a directory, a named pipe, a device, a socket), then open without blocking and
check the open descriptor again, so a file swapped for a FIFO in between cannot
hang the process. Files read whole are read by :func:`read_regular`, with a size
cap. YAML is parsed by :func:`read_yaml`, which refuses duplicate keys, aliases
that refer to themselves and aliases that expand a document past
:data:`MAX_YAML_VALUES` values (a "billion laughs" alias bomb).
"""

from __future__ import annotations

import difflib
import io
import math
import numbers
import operator
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ValidationError

from .._core.scoremap import is_bool
from ..errors import (
    ConfigError,
    clip,
    decode_byte,
    decode_line,
    parse_problem,
    quote,
    validation_problem,
    value_kind,
    wide_text,
)

if TYPE_CHECKING:
    import yaml

__all__ = ["MAX_YAML_BYTES", "MAX_YAML_VALUES", "LINK_HINT", "UnreadableFile", "KeyTwice", "config_error",
           "user_keys", "refuse_internal_keys", "dangling_link", "file_above", "named_alike", "folder_problem",
           "lone_surrogate", "open_regular", "read_regular", "read_yaml", "home_shorthand", "not_home",
           "NumberTooLarge", "finite_float", "keys_once", "a_number", "plain_number", "text_number", "yaml_number",
           "float_text"]

#: Largest oloproof.yaml or release.yaml read (they are read whole): 4 MiB.
MAX_YAML_BYTES = 4 << 20
#: Most values (scalars, lists and mappings, keys included) a YAML document may hold once its aliases are
#: expanded. A real config holds a few hundred; a 464-byte alias bomb expands to 387 million.
MAX_YAML_VALUES = 100_000
_PIECE = 1 << 16
#: ``os.readv`` where the platform has it (POSIX): a read lands in the caller's buffer without a copy.
_READV: Callable[[int, Sequence[Any]], int] | None = getattr(os, "readv", None)


class UnreadableFile(Exception):
    """A file that is not an ordinary readable file (or is too big to read whole); the message says why.

    The message does not name the file: each caller raises its own error naming it
    (:class:`~oloproof_nb.errors.ConfigError`, :class:`~oloproof_nb.errors.CaseFileError`, ...).
    ``missing`` is true when nothing is at the path (``file not found``); ``dangling`` when the path is a symbolic
    link to nothing (:func:`dangling_link`: not ``missing``, the link is there); ``denied`` when the file is there but
    this process may not open it (``cannot read: Permission denied``: its mode or owner, not its kind).
    """

    def __init__(self, message: str, *, missing: bool = False, dangling: bool = False, denied: bool = False) -> None:
        super().__init__(message)
        self.missing = missing
        self.dangling = dangling
        self.denied = denied


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _reason(exc: BaseException) -> str:
    """The OS's words for ``exc``; for a path the file system's encoding cannot write (under ``LC_ALL=C`` with
    ``PYTHONUTF8=0`` an ``é`` in it), words that quote none of the path: the codec's quoted the character, and a
    receipt's reason is never to hold a piece of its locator."""
    if isinstance(exc, UnicodeError):
        return (f"its path holds a character the file system's encoding ({sys.getfilesystemencoding()}) cannot "
                "encode; run with a UTF-8 locale (LC_ALL=C.UTF-8) or PYTHONUTF8=1")
    return str(getattr(exc, "strerror", None) or exc)


#: What to do with a file that is a symbolic link to nothing, said after :func:`dangling_link`'s words for it.
LINK_HINT = "point it at the file, or remove it"


def dangling_link(path: str | Path) -> str | None:
    """Why ``path`` names nothing when it is a symbolic link to nothing (a dangling link), in words for an error
    that names it: ``is a dangling symbolic link (it points to '../gone.yaml', which does not exist)``; None when
    it is no link, or a link that leads to something (or to a loop of links, which the OS's own words name).

    The one wording of a dangling link (a file read, a run folder to create): "file not found" or "no
    manifest.json" sent the user looking for a file that is there, as a link.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.symlink("gone.yaml", os.path.join(folder, "release.yaml"))
    ...     print(dangling_link(os.path.join(folder, "release.yaml")), dangling_link(folder), sep="; ")
    is a dangling symbolic link (it points to 'gone.yaml', which does not exist); None
    """
    try:
        target = os.readlink(path)
    except (OSError, ValueError):  # no link, nothing there, a NUL byte
        return None
    try:
        os.stat(path)
    except FileNotFoundError:  # what it points to is not there (one through a file: "Not a directory", not this)
        if os.path.lexists(os.path.join(os.path.dirname(path), target)):
            # a link to a link (latest -> run-7 -> /mnt/old/run-7): 'run-7' is there, as a link; where the chain
            # ends is not (it said "it points to 'run-7', which does not exist", beside an ls that lists it)
            return (f"is a dangling symbolic link (it points to {quote(target)}, a link that leads to "
                    f"{quote(os.path.realpath(path))}, which does not exist)")
        return f"is a dangling symbolic link (it points to {quote(target)}, which does not exist)"
    except (OSError, ValueError):  # a loop of links, no permission: the caller's own words
        return None
    return None


def file_above(path: str | Path) -> str | None:
    """Why nothing can be at ``path`` when a path above it is there as no folder (a file, or a symbolic link that
    leads to none), in words for an error that names ``path``: ``notes.txt is a file, not a folder``; None when
    none is (every path above is a folder, or not there).

    ``notes.txt/r1`` given for a run folder was told ``no such run directory`` or ``no such file or folder``, and the
    user, who sees ``notes.txt`` there, looked for a folder of that name.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = open(os.path.join(folder, "notes.txt"), "w").close()
    ...     said = file_above(os.path.join(folder, "notes.txt", "r1"))
    ...     print(said.replace(folder, "…"), file_above(os.path.join(folder, "r1")), sep="; ")
    …/notes.txt is a file, not a folder; None
    """
    for parent in Path(path).parents:
        try:
            info = os.lstat(parent)
        except (FileNotFoundError, NotADirectoryError):  # not there, or under a file: the path above may say
            continue
        except (OSError, ValueError):  # a folder that cannot be searched (Path.exists raised then before 3.12)
            return None
        if os.path.isdir(parent):  # a folder, or a link to one
            return None
        if stat.S_ISLNK(info.st_mode):
            try:
                return f"{parent} is a symbolic link to {quote(os.readlink(parent))}, which is not a folder"
            except OSError:
                return None
        return f"{parent} is a file, not a folder"
    return None


def home_shorthand(path: str) -> str | None:
    """Why ``path`` names no file in the home folder though it is written so (``~/data/cases.jsonl``, or ``~``), in
    words for an error that names it, with the path in full to write instead; None when its first part is not
    ``~`` (``~alice/x`` is left to be read as written).

    ``~`` is the home folder only to a shell, which expands it unquoted at the start of a word (not in quotes, nor
    after ``--out=``), and never inside a file: ``--out=~/runs/r1`` made a folder named ``~`` in the current
    folder, and ``cases: ~/data/cases.jsonl`` was looked for in a folder ``~`` of the suite folder.

    Examples
    --------
    >>> said = home_shorthand("~/runs/r1")
    >>> said.startswith("'~/runs/r1' starts with '~', which only a shell expands to the home folder")
    True
    >>> home_shorthand("runs/~"), home_shorthand("~alice/x"), home_shorthand("~backup.jsonl"), home_shorthand("./~/x")
    (None, None, None, None)
    """
    # the text as written, not its parts: pathlib drops a leading "./", and ./~/x names a folder '~' on purpose
    if path != "~" and not path.startswith(tuple(f"~{sep}" for sep in (os.sep, os.altsep) if sep)):
        return None
    return (f"{quote(path)} starts with '~', which only a shell expands to the home folder (here it names a folder "
            f"'~'); write the path in full: {quote(os.path.expanduser(path))}")


def not_home(path: str | Path) -> str:
    """``path`` as text that cannot be read as the home folder's: a relative path whose first part is a folder named
    ``~`` written ``./~/…``, as the user gave it (``Path("./~/runs")`` is ``~/runs``: printed so, it named the home
    folder's ``runs``, and a command quoting it was refused, :func:`home_shorthand`).

    Examples
    --------
    >>> not_home(Path("./~/runs")), not_home("~"), not_home("runs/~"), not_home("~backup")
    ('./~/runs', './~', 'runs/~', '~backup')
    """
    text = str(path)
    return f".{os.sep}{text}" if home_shorthand(text) is not None else text


#: Most entries of a folder :func:`named_alike` reads: a suite folder holds a handful.
_ALIKE_SCAN = 1000


def named_alike(path: str | Path) -> str | None:
    """The name of a file beside the missing ``path`` that is spelled much like it (``oloproof.yml`` for
    ``oloproof.yaml``, ``cases.json`` for ``cases.jsonl``), or None when its folder holds none (or cannot be read).

    A suite whose oloproof.yaml was saved as ``oloproof.yml`` was told only ``file not found``, and one whose
    release file was ``release.yml`` was gated on nothing, while the folder showed the file the user had written.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = open(os.path.join(folder, "oloproof.yml"), "w").close()
    ...     print(named_alike(os.path.join(folder, "oloproof.yaml")), named_alike(os.path.join(folder, "cases.jsonl")))
    oloproof.yml None
    """
    path = Path(path)
    names: list[str] = []
    try:
        with os.scandir(path.parent) as entries:
            for entry in entries:
                if entry.name != path.name and entry.is_file():
                    names.append(entry.name)
                if len(names) >= _ALIKE_SCAN:
                    break
    except (OSError, ValueError):  # no folder there, no permission, a NUL in the path: nothing to suggest
        return None
    near = difflib.get_close_matches(path.name, sorted(names), n=1, cutoff=0.8)
    if not near:
        folded = [name for name in sorted(names) if name.casefold() == path.name.casefold()]
        return folded[0] if folded else None
    return near[0]


def folder_problem(path: str | Path) -> str | None:
    """Why the folder ``path`` cannot be read, in words for an error that names it (``cannot read this folder
    (Permission denied)``); ``None`` when it can be, and when nothing, or no folder, is there (each caller says
    that in its own words).

    A folder without read or search permission, or one below a folder that cannot be searched, made
    ``Path.exists()`` and ``Path.is_dir()`` raise a raw :class:`PermissionError` (they answer only "no such
    file" themselves), which left ``op.load_suite`` and ``op.load_run`` as a traceback.
    """
    try:
        if not stat.S_ISDIR(os.stat(path).st_mode):
            return None
        with os.scandir(path):  # read permission: its entries can be listed
            pass
        os.stat(os.path.join(path, os.curdir))  # search permission: its entries can be opened
    except PermissionError as exc:
        return f"cannot read this folder ({_reason(exc)})"
    except (OSError, ValueError):  # nothing there, a NUL byte, a loop of links: each caller's own words
        return None
    return None


class _NonBlockingRaw(io.RawIOBase):
    """A raw reader over a descriptor opened with ``O_NONBLOCK``: a read that would block is an error, never a wait.

    A regular file on a disk never blocks; a kernel file that does (``/proc/kmsg``) is refused
    when it has nothing to give instead of hanging the process.
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        try:
            return os.lseek(self._fd, offset, whence)
        except OSError as exc:
            raise UnreadableFile(f"cannot read: {_reason(exc)}") from None

    def tell(self) -> int:
        return self.seek(0, os.SEEK_CUR)

    def readinto(self, buffer: Any) -> int:
        try:
            if _READV is not None:  # straight into the caller's buffer
                return _READV(self._fd, [buffer])
            data = os.read(self._fd, len(buffer))
        except BlockingIOError:
            raise UnreadableFile("reading it would wait for data: it is not an ordinary file") from None
        except OSError as exc:
            raise UnreadableFile(f"cannot read: {_reason(exc)}") from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            try:
                os.close(self._fd)
            finally:
                super().close()


def _not_found(path: str | Path) -> UnreadableFile:
    """``file not found`` (``missing``), or, for a symbolic link to nothing, the link and where it points: the file is
    there, as a link, and reading it as absent would change what is decided (a run folder taken for no run)."""
    link = dangling_link(path)
    if link is not None:
        return UnreadableFile(f"{link}; {LINK_HINT}", dangling=True)
    return UnreadableFile("file not found", missing=True)


def open_regular(path: str | Path) -> tuple[BinaryIO, os.stat_result]:
    """Open a regular file for reading without ever blocking: ``(binary handle, its stat)``.

    The path is stat'ed first, and anything but a regular file (following symlinks) is
    refused before it is opened; the file is then opened with ``O_NONBLOCK`` (opening a
    FIFO swapped in meanwhile returns at once) and its descriptor checked again.

    Raises
    ------
    UnreadableFile
        ``file not found``; ``is a dangling symbolic link (it points to …, which does not exist)``
        (:func:`dangling_link`; not ``missing``); ``is a directory, not a regular file`` (or a named pipe, a
        device, a socket); ``cannot read: <reason>``.
    """
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # nothing there (a parent is a file: nothing there either)
        raise _not_found(path) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise UnreadableFile(f"cannot read: {_reason(exc)}", denied=isinstance(exc, PermissionError)) from None
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFile(f"is {_kind(info.st_mode)}, not a regular file")
    # O_NONBLOCK is POSIX's (Windows has none, and no FIFO to wait on: os.O_NONBLOCK raised AttributeError there,
    # on every file read); O_BINARY is Windows': without it the C runtime reads in text mode, "\r\n" as "\n" and
    # a 0x1A byte as the end of the file (an artifact's digest of other bytes than the file's)
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_BINARY", 0))
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:  # removed since the stat
        raise _not_found(path) from None
    except (OSError, ValueError) as exc:
        raise UnreadableFile(f"cannot read: {_reason(exc)}", denied=isinstance(exc, PermissionError)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(f"is {_kind(info.st_mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return io.BufferedReader(_NonBlockingRaw(fd), _PIECE), info


def read_regular(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (see :func:`open_regular`).

    Raises
    ------
    UnreadableFile
        As :func:`open_regular`, and ``is N bytes; at most M are read`` for a bigger file
        (its size as stat'ed, or as read for a file that grows or reports no size).
    """
    handle, info = open_regular(path)
    with handle:
        if info.st_size > max_bytes:
            raise UnreadableFile(f"is {info.st_size} bytes; a file of this kind may hold at most {max_bytes}")
        pieces, total = [], 0
        want = info.st_size + 1 if info.st_size else _PIECE  # a size known: the whole file in one read
        while total <= max_bytes and (piece := handle.read(min(want, max_bytes + 1 - total))):
            pieces.append(piece)
            total += len(piece)
            want = _PIECE
    if total > max_bytes:
        raise UnreadableFile(f"holds more than {max_bytes} bytes, the most a file of this kind may hold")
    return b"".join(pieces)


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation can hold: itself, or inside a union, a list, a mapping, ``Annotated``.

    A parametrised generic such as ``list[X]`` is looked into, never passed to ``issubclass``: Python 3.10 takes it
    for a class (``isinstance(list[X], type)`` is true there) and ``issubclass`` then raises TypeError.
    """
    if get_origin(annotation) is not None:
        for arg in get_args(annotation):
            yield from _models_in(arg)
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation


def user_keys(model: type[BaseModel]) -> list[str]:
    """The top-level keys a user may write in the file ``model`` validates, in the model's order (no internal
    field)."""
    return _allowed_keys(model, ("",))


def _allowed_keys(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model that an extra key was found in.

    The path is walked through the models' fields; a part that names no field of the model reached (a list index,
    a key of a mapping such as ``lists: {tx: …}``, the union branch pydantic adds) is passed over.
    """
    current: Any = model
    for part in loc[:-1]:
        field = None if current is None else current.model_fields.get(part)
        if field is not None:
            current = next(_models_in(field.annotation), None)
    if current is None:
        return []
    return [name for name, f in current.model_fields.items() if not f.exclude and not _internal(f)]


def _internal(field: Any) -> bool:
    """Whether a model field is internal (``json_schema_extra={"internal": True}``): the model fills it,
    the user never writes it."""
    return isinstance(field.json_schema_extra, dict) and bool(field.json_schema_extra.get("internal"))


def refuse_internal_keys(raw: Any, model: type[BaseModel], file: str | Path) -> None:
    """Refuse a top-level key of a user's mapping that names an internal field of ``model``.

    An internal field (``json_schema_extra={"internal": True}``) is filled by the model from what the user
    writes elsewhere and kept in the files the toolkit writes (a run's manifest); written by hand it would be
    obeyed while no message offers it, so it is refused as any unknown key is, with the keys allowed there.
    """
    if not isinstance(raw, dict):
        return
    for key in raw:
        field = model.model_fields.get(key) if isinstance(key, str) else None
        if field is not None and _internal(field):
            raise ConfigError(file, key, f"unknown key; allowed: {', '.join(_allowed_keys(model, (key,)))}")


def config_error(file: str | Path, exc: ValidationError, model: type[BaseModel] | None = None,
                 prefix: str = "") -> ConfigError:
    """The first problem of a validation error as a :class:`ConfigError` naming the file and the key.

    An unknown key lists the keys ``model`` allows at that place, and a value that should be a mapping of keys
    (``bootstrap: 5``) the keys it may hold. A boolean where text goes (``criterion: no``, ``fault: on``) says that
    YAML 1.1 read it so: ``Input should be a valid string (got false)`` named a value the file does not hold.
    """
    key, message, err = validation_problem(exc, prefix)
    if is_bool(err.get("input")) and err["type"] in ("string_type", "literal_error"):
        message += "; YAML 1.1 reads yes, no, on and off as true or false: quote the word for text"
    if err["type"] == "extra_forbidden":
        allowed = _allowed_keys(model, tuple(err["loc"]))
        message += f"; allowed: {', '.join(allowed)}" if allowed else ""
    elif err["type"] == "model_type":  # the keys of the mapping at err["loc"]: those of a key one level down
        allowed = _allowed_keys(model, (*err["loc"], ""))
        message += f"; allowed keys: {', '.join(allowed)}" if allowed else ""
    return ConfigError(file, key or None, message)


@cache
def _unique_key_loader() -> type[yaml.SafeLoader]:
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping (PyYAML keeps the last silently), and
    merge keys (``<<``) whose result PyYAML does not give as YAML defines it.

    YAML's merge gives a mapping's own keys first, then the earlier of the mappings merged; PyYAML 6.0.4 keeps the
    last of them instead, except for keys Python happens to hold as one string object (a one-letter key):
    ``criteria: {<<: [{answer_matches: 0.9}, {answer_matches: 0.1}]}`` gated at 0.1 (a regressed agent at 0.625
    passed) where YAML says 0.9. So ``<<`` is written at most once in a mapping, and the mappings it merges give
    each key once between them, none overriding a key it merges itself (merged again, such a mapping lost its own
    key to the merged one where the key is one letter); a key of the mapping itself still overrides a merged one.
    A key given twice with the same value is no conflict: two mappings that merge one anchor (``x: {<<: *base}``,
    ``y: {<<: *base}``, then ``<<: [*x, *y]``) give its keys from the same node, which YAML and PyYAML both take.

    Built on first use, so ``import oloproof_nb`` does not import yaml.
    """
    import yaml

    merge_tag = "tag:yaml.org,2002:merge"

    def _same_value(a: yaml.Node, b: yaml.Node) -> bool:
        """Whether two value nodes give the same value whichever a merge takes: one node (an anchor's key reached by
        two merges), or scalars of one tag written alike."""
        return a is b or (isinstance(a, yaml.ScalarNode) and isinstance(b, yaml.ScalarNode) and a.tag == b.tag
                          and a.value == b.value)

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            if isinstance(node, yaml.MappingNode):  # !!map [a], !!set [a]: PyYAML's own refusal, not a TypeError
                self._keys_of(node)
            return super().construct_mapping(node, deep=deep)

        def _keys_of(self, node: yaml.MappingNode) -> dict[Any, yaml.Node]:
            """The keys ``node`` gives, its own and those it merges, with the value node each gives, checked as the
            class says; each node once, and before PyYAML flattens it (a mapping flattened holds its merged keys
            beside its own)."""
            return self._keys_and_overrides(node)[0]

        def _keys_and_overrides(self, node: yaml.MappingNode) -> tuple[dict[Any, yaml.Node], set[Any]]:
            """:meth:`_keys_of` of ``node``, and those of its own keys that override a key it merges with another
            value."""
            known: dict[int, tuple[dict[Any, yaml.Node], set[Any]]] = self.__dict__.setdefault("_known_keys", {})
            if id(node) in known:
                return known[id(node)]
            own: dict[Any, yaml.Node] = {}
            merged: dict[Any, yaml.Node] = {}
            merges = 0
            for key_node, value_node in node.value:
                if key_node.tag == merge_tag:
                    merges += 1
                    if merges > 1:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"key {quote('<<')} is written twice; merge several mappings with one: "
                            "<<: [*a, *b]", key_node.start_mark)
                    merged = self._merged_keys(value_node)
                    continue
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node)
                _refuse_key_not_text(key_node, key)
                if isinstance(key, (str, int, float, bool)) or key is None:
                    if key in own:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"key {quote(key)} is written twice; keep one", key_node.start_mark)
                    own[key] = value_node
            overrides = {key for key in own.keys() & merged.keys() if not _same_value(own[key], merged[key])}
            known[id(node)] = found = ({**merged, **own}, overrides)
            return found

        def _merged_keys(self, value: yaml.Node) -> dict[Any, yaml.Node]:
            """The keys of the mappings ``<<`` merges (one, or a list of them) with the value each gives, refusing a
            key two of them give with other values."""
            parts = value.value if isinstance(value, yaml.SequenceNode) else [value]
            seen: dict[Any, yaml.Node] = {}
            for part in parts:
                if not isinstance(part, yaml.MappingNode):
                    continue  # PyYAML says what a merge takes
                keys, overrides = self._keys_and_overrides(part)
                if overrides:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {quote(min(overrides, key=str))} of a mapping merged with << overrides a key "
                        "that mapping merges itself, which PyYAML may not keep; write the mapping merged out",
                        part.start_mark)
                twice = {key for key in keys.keys() & seen.keys() if not _same_value(keys[key], seen[key])}
                if twice:
                    key = min(twice, key=str)
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {quote(key)} is given by two of the mappings merged with <<; keep one "
                        "(PyYAML and YAML take different ones)", part.start_mark)
                seen = {**keys, **seen}  # the earlier mapping's, as YAML merges
            return seen

        def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
            _refuse_empty_number(node, "!!int")
            value: int = super().construct_yaml_int(node)
            _refuse_yaml11_number(str(node.value), value, node.start_mark.line + 1)
            _refuse_long_int(str(node.value), value, node.start_mark.line + 1)
            return value

        def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
            _refuse_empty_number(node, "!!float")
            try:
                value: float = super().construct_yaml_float(node)
            except OverflowError:  # a base-60 number of more places than a float holds: 1:59:59:…
                raise YamlNumberProblem(f"{clip(str(node.value), 40)} is a base-60 number too large for a float to "
                                        "YAML 1.1 (and text to YAML 1.2); write the number itself, or quote it for "
                                        "text", node.start_mark.line + 1) from None
            _refuse_yaml11_number(str(node.value), value, node.start_mark.line + 1)
            return value

        def construct_yaml_bool(self, node: yaml.ScalarNode) -> bool:
            text = self.construct_scalar(node)
            if text.lower() not in self.bool_values:  # PyYAML raised a KeyError
                raise yaml.constructor.ConstructorError(
                    None, None, f"{quote(text)} is tagged !!bool but is none of true, false, yes, no, on, off",
                    node.start_mark)
            value: bool = super().construct_yaml_bool(node)
            return value

        def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
            text = self.construct_scalar(node)
            if self.timestamp_regexp.match(text) is None:  # PyYAML raised an AttributeError
                raise yaml.constructor.ConstructorError(
                    None, None, f"{quote(text)} is tagged !!timestamp but is no date (2026-06-01) or time",
                    node.start_mark)
            return super().construct_yaml_timestamp(node)

    UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", UniqueKeyLoader.construct_yaml_int)
    UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", UniqueKeyLoader.construct_yaml_float)
    UniqueKeyLoader.add_constructor("tag:yaml.org,2002:bool", UniqueKeyLoader.construct_yaml_bool)
    UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", UniqueKeyLoader.construct_yaml_timestamp)
    return UniqueKeyLoader


class YamlNumberProblem(Exception):
    """A number (or a key, :func:`_refuse_key_not_text`) YAML 1.1 (PyYAML) reads otherwise than it is written:
    ``args[0]`` says how, ``line`` where."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def _refuse_key_not_text(node: yaml.ScalarNode, key: Any) -> None:
    """Raise :class:`YamlNumberProblem` for a mapping key YAML reads as no text: every key of oloproof.yaml and
    release.yaml is a name.

    ``on:``, ``yes:``, ``no:`` and ``off:`` are true and false to YAML 1.1, ``1:`` a number, ``2026-06-01:`` a date
    and ``~:`` null: pydantic refused such a key at ``[1]`` (a criterion ``on`` of release.yaml was
    ``criteria[1]: Input should be a valid string (got true)``), a place no line of the file is.

    Examples
    --------
    >>> import yaml
    >>> _refuse_key_not_text(yaml.compose("on: 0.9").value[0][0], True)
    Traceback (most recent call last):
    ...
    oloproof_nb._config.files.YamlNumberProblem: the key on is true to YAML 1.1 (it reads yes, no, on and off as ...
    """
    if isinstance(key, str):
        return
    written = str(node.value)
    if is_bool(key):
        read = f"{str(key).lower()} to YAML 1.1 (it reads yes, no, on and off as true or false)"
    elif key is None:
        read = "null to YAML"
    elif isinstance(key, bytes):  # !!binary: not "a time", as every other kind of key was said to be
        read = "binary data (!!binary) to YAML"
    elif isinstance(key, (int, float)):
        read = "a number to YAML"
    else:  # a date or a timestamp
        read = f"a {'date' if type(key).__name__ == 'date' else 'time'} to YAML"
    shown = written if written else "(empty)"
    raise YamlNumberProblem(f"the key {shown} is {read}, and a key here is a name; write it quoted: {quote(written)}",
                            node.start_mark.line + 1)


def _refuse_empty_number(node: yaml.ScalarNode, tag: str) -> None:
    """Raise a ``ConstructorError`` for an empty text tagged as a number (``!!int ''``), where PyYAML raised an
    IndexError."""
    import yaml

    if isinstance(node, yaml.ScalarNode) and not str(node.value).replace("_", "").lstrip("+-"):
        raise yaml.constructor.ConstructorError(None, None, f"{quote(str(node.value))} is tagged {tag} but holds no "
                                                "digits", node.start_mark)


def _refuse_long_int(text: str, value: int, line: int) -> None:
    """Raise :class:`YamlNumberProblem` for a whole number of more digits than Python writes (4,300 by default):
    ``0x`` and ``0b`` numbers are read at any length, and such a ``min_clusters`` or ``seed`` stopped a run that had
    started with a ValueError naming no file, where the same number written in decimal is refused.

    Examples
    --------
    >>> _refuse_long_int("0x10", 16, 1)
    >>> _refuse_long_int("0x" + "f" * 4000, int("f" * 4000, 16), 2)
    Traceback (most recent call last):
    ...
    oloproof_nb._config.files.YamlNumberProblem: 0x... is a number of more than 4,300 digits; write a smaller number
    """
    limit: int = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit and value.bit_length() > limit * 3:  # cheap: 3 bits are fewer than one decimal digit
        try:
            str(value)
        except ValueError:
            raise YamlNumberProblem(f"{clip(text, 40)} is a number of more than {limit:,} digits; write a smaller "
                                    "number", line) from None


def _refuse_yaml11_number(text: str, value: float, line: int) -> None:
    """Raise :class:`YamlNumberProblem` for a number PyYAML (YAML 1.1) reads as another number than a reader does.

    ``012`` is the octal number 10 to YAML 1.1 (``min_clusters: 012`` asked for 10 clusters), and ``1:30`` the
    base-60 number 90; YAML 1.2 (and JSON, and most other tools) read the first as 12 and the second as text.
    A leading zero that changes nothing (``007``, ``00``) and ``0x``/``0b`` numbers are kept as written.

    Examples
    --------
    >>> _refuse_yaml11_number("007", 7, 1)
    >>> _refuse_yaml11_number("012", 10, 3)
    Traceback (most recent call last):
    ...
    oloproof_nb._config.files.YamlNumberProblem: 012 is the octal number 10 to YAML 1.1 (a leading 0 means octal), ...
    """
    digits = text.replace("_", "").lstrip("+-")
    if ":" in digits:
        shown = yaml_number(value) if isinstance(value, float) else str(value)
        raise YamlNumberProblem(f"{text} is the base-60 number {shown} to YAML 1.1 (and text to YAML 1.2); write "
                                "the number itself (e.g. seconds), or quote it for text", line)
    if (len(digits) > 1 and digits[0] == "0" and digits.isdigit() and isinstance(value, int)
            and abs(value) != int(digits)):
        decimal = int(text.replace("_", ""))
        raise YamlNumberProblem(f"{text} is the octal number {value} to YAML 1.1 (a leading 0 means octal), not "
                                f"{decimal}; write {value} or {decimal} without the leading zero (or quote it for "
                                "text)", line)


def yaml_number(value: float) -> str:
    """A finite ``value`` written as YAML 1.1 reads it back as the same number: every digit it holds, no exponent,
    no ``.0`` on a whole number. ``f"{value:g}"`` kept six significant digits (0.9999995 was shown as 1, 223384.5
    as 223384) and wrote ``1e-05``, which YAML 1.1 reads as text (an exponent needs a dot before it).

    Examples
    --------
    >>> yaml_number(0.9999995), yaml_number(1e-05), yaml_number(90.0), yaml_number(223384.5)
    ('0.9999995', '0.00001', '90', '223384.5')
    """
    text = format(Decimal(repr(float(value))), "f")  # repr: the shortest text that reads back as value
    return text.rstrip("0").rstrip(".") if "." in text else text


def float_text(x: float, sign: bool = False) -> str:
    """``x`` to three decimals, or, when three round a value that is not whole to a whole number (0.9996 to
    ``1.000``, 0.00004 to ``0.000``), to the fewest more that do not (``0.9996``, ``0.00004``); ``x`` as it is
    when none up to 17 do. ``sign``: a leading ``+`` or ``-``. The one rule every rate and difference shown is
    written by (``_display.theme.fmt_number``, a baseline's repr): a rate of 19,999 of 20,000 showed as ``1.000``.

    Examples
    --------
    >>> float_text(19999 / 20000), float_text(0.12345), float_text(-0.00004, sign=True), float_text(1.0)
    ('0.99995', '0.123', '-0.00004', '1.000')
    """
    if math.isinf(x):
        return ("+∞" if sign else "∞") if x > 0 else "−∞"
    spec = "+" if sign else ""
    text = f"{x:{spec}.3f}"
    if x == round(x):
        return text
    digits = 3
    while float(text) == round(float(text)) and digits < 17:
        digits += 1
        text = f"{x:{spec}.{digits}f}"
    if float(text) == round(float(text)):
        return f"{x:+}" if sign else repr(x)
    return text


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _alias_problem(root: yaml.Node, limit: int) -> str | None:
    """Why the composed document cannot be loaded safely, or None.

    An alias is the same node object appearing twice in the graph PyYAML composes,
    so the graph is walked once (iteratively, memoising each node's expanded size):
    a node reached again while its own subtree is open is a cycle (``&a [*a]``), and a
    graph whose expanded size passes ``limit`` is an alias bomb. The walk costs one
    step per distinct node, however large the expansion.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        if finished:
            open_nodes.discard(id(node))
            sizes[id(node)] = total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > limit:
                return (f"YAML aliases expand it past {limit:,} values (at line {node.start_mark.line + 1}); "
                        "write the values out, or use fewer aliases")
            continue
        if id(node) in sizes:
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                return (f"a YAML alias at line {node.start_mark.line + 1} refers to a value that contains it; "
                        "recursive values are not allowed")
            if id(child) not in sizes:
                stack.append((child, False))
    return None


def read_yaml(path: Path) -> dict[str, Any]:
    """``yaml.safe_load`` a file that must hold a mapping; errors name the file and line.

    The file must be a regular file of at most :data:`MAX_YAML_BYTES` bytes of UTF-8,
    with no key written twice in one mapping, no recursive alias and at most
    :data:`MAX_YAML_VALUES` values once its aliases are expanded.
    """
    raw = b""
    try:
        raw = read_regular(path, MAX_YAML_BYTES)
        text = raw.decode("utf-8-sig")  # a leading byte-order mark is not content
    except UnreadableFile as exc:
        raise ConfigError(path, None, str(exc)) from None
    except UnicodeDecodeError as exc:  # its line too, as the case and label files say (after a BOM, if any)
        if wide := wide_text(raw):
            raise ConfigError(path, None, f"cannot read: {wide}") from None
        raise ConfigError(path, None, f"cannot read: not UTF-8 text ({exc.reason} at line {decode_line(exc)}, "
                          f"byte {decode_byte(exc, raw)})") from None
    import yaml

    loader: yaml.SafeLoader | None = None
    try:
        loader = _unique_key_loader()(text)  # refuses a non-printable character here
        node = loader.get_single_node()
        problem = None if node is None else _alias_problem(node, MAX_YAML_VALUES)
        if problem is not None:
            raise ConfigError(path, None, problem)
        data = None if node is None else loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        # PyYAML's words for a tab say what it found, not what goes there (a tab after a value, or one that indents)
        fix = "; YAML takes no tab there: indent and separate with spaces" if "'\\t'" in what else ""
        raise ConfigError(path, None, f"not valid YAML{where}: {clip(what)}{fix}") from None
    except RecursionError:
        raise ConfigError(path, None, "not valid YAML: nested too deeply") from None
    except YamlNumberProblem as exc:
        raise ConfigError(path, None, f"line {exc.line}: {exc}") from None
    except ConfigError:  # a ValueError too: said already
        raise
    except ValueError as exc:  # PyYAML turning a number of more than 4,300 digits into an int
        raise ConfigError(path, None, f"not valid YAML: {clip(parse_problem(exc))}") from None
    finally:
        if loader is not None:
            loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, None, f"must be a mapping of keys to values, got {value_kind(data)}")
    bad = lone_surrogate(data)
    if bad is not None:
        raise ConfigError(path, None, f"the string {quote(bad)} holds a lone surrogate escape, which is not "
                          "Unicode text")
    return data


def a_number(what: str, allowed: str = "") -> BeforeValidator:
    """A pydantic ``BeforeValidator`` for a number setting that refuses a boolean and text, ``what`` naming the number.

    pydantic reads ``true`` as 1 and ``false`` as 0 where a number goes, and YAML 1.1 reads ``yes``, ``on``,
    ``no`` and ``off`` as booleans: ``tolerance: yes`` was an absolute tolerance of 1 (an amount off by 0.99
    passed) and ``minimum_validity: no`` a floor of 0. pydantic also reads the text ``"0.95"`` as a number, so
    ``confidence: "0.95"`` was taken while a quoted threshold was refused: every number of a file is strict.
    ``allowed``: the setting's range in words, said after the refusal of NaN (which the setting's own range check
    would have said, had NaN reached it).

    Examples
    --------
    >>> check = a_number("an absolute tolerance").func
    >>> check(0.5)
    0.5
    >>> check(True)
    Traceback (most recent call last):
    ...
    ValueError: must be an absolute tolerance, not true (YAML reads yes, no, on and off as true or false)
    >>> check("0.5")
    Traceback (most recent call last):
    ...
    ValueError: must be an absolute tolerance, not the text '0.5' (write the number without quotes)
    >>> check(-0.0)  # -0.0 is 0: a margin of -0.0 was shown as "margin -0"
    0.0
    >>> check(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: must be an absolute tolerance, not NaN (.nan), which is no number
    >>> import numpy as np
    >>> check(np.int64(30))  # a NumPy integer is the int it is: a strict whole number takes it
    30
    >>> check(np.False_)  # a NumPy bool is refused as Python's
    Traceback (most recent call last):
    ...
    ValueError: must be an absolute tolerance, not false (YAML reads yes, no, on and off as true or false)
    """

    def refuse(value: Any) -> Any:
        if is_bool(value):
            raise ValueError(f"must be {what}, not {str(value).lower()} (YAML reads yes, no, on and off as true or "
                             "false)")
        if isinstance(value, (str, bytes, bytearray)):
            raise ValueError(f"must be {what}, not the text {quote(value)}{text_number(value) or _unquote_hint(value)}")
        value = plain_number(value)
        if isinstance(value, float) and math.isnan(value):  # pydantic said "Input should be less than 1 (got nan)"
            raise ValueError(f"must be {what}, not NaN (.nan), which is no number{'; ' + allowed if allowed else ''}")
        return value + 0.0 if isinstance(value, float) else value  # + 0.0 turns -0.0 into 0.0

    return BeforeValidator(refuse)


def plain_number(value: Any) -> Any:
    """A NumPy number given for a setting as the Python number it is; anything else as it is.

    A NumPy integer (``rng.integers(1000)`` for a seed) is the whole number it is, as op.run's epochs= reads it: a
    strict whole number refused it as "not a valid integer". A NumPy float of another precision than Python's
    (``float32``, ``float16``) is the number its own shortest text says, the decimal the user wrote:
    ``np.float32(0.95)`` is 0.95, where ``float()`` widened it to 0.949999988079071 (a confidence the gate called
    weaker than the run's 0.95), and the same float32 as a threshold was refused as "must be a number". A NumPy
    bool is no Integral nor Real (and its ``__index__`` warns on NumPy 2.0): it stays as it is, for the caller to
    refuse.

    Examples
    --------
    >>> import numpy as np
    >>> plain_number(np.int64(30)), plain_number(np.float32(0.95)), plain_number(np.float16(0.1)), plain_number(0.7)
    (30, 0.95, 0.1, 0.7)
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, int):
        return operator.index(value)
    if isinstance(value, numbers.Real) and not isinstance(value, (float, numbers.Rational)):
        try:  # str: NumPy's shortest text of the value in its own precision ("0.95"; "nan" and "inf" read back)
            return float(str(value))
        except ValueError:  # another kind of real number, whose text is no float: as Python widens it
            return float(value)
    return value


def _unquote_hint(value: str | bytes | bytearray) -> str:
    """`` (write the number without quotes)`` for text that is a number quoted (``"0.95"``), or ``""``: ``0o17``,
    ``85%`` or ``30s`` were written without quotes, and were told to drop quotes they do not have.

    Examples
    --------
    >>> _unquote_hint("0.95"), _unquote_hint(b"0.95"), _unquote_hint("85%"), _unquote_hint("inf")
    (' (write the number without quotes)', ' (write the number without quotes)', '', '')
    """
    try:
        number = float(value)
    except ValueError:
        return ""
    return " (write the number without quotes)" if math.isfinite(number) else ""


def text_number(value: Any) -> str:
    """Why a number reached a setting as text, or ``""``: YAML 1.1 reads a number with an exponent as a string
    unless it has a dot and a signed exponent (``9e-1`` and ``0.9e0`` are text, ``9.0e-1`` a number), and YAML 1.2's
    octal ``0o17`` as text too (its octal is ``017``, which these files refuse for the 17 a reader sees).

    Examples
    --------
    >>> text_number("9e-1")
    ' (YAML 1.1 reads a number with an exponent as text unless it has a dot and a signed exponent; write 0.9)'
    >>> text_number("0o17")
    ' (YAML 1.1 reads 0o17 as text, not as the octal number 15; write 15)'
    >>> text_number("0.9"), text_number("1e999"), text_number(0.9), text_number("0o9")
    ('', '', '', '')
    """
    if isinstance(value, str) and value.lstrip("+-")[:2].lower() == "0o":
        try:
            octal = int(value, 8)
        except ValueError:
            return ""
        return f" (YAML 1.1 reads {value} as text, not as the octal number {octal}; write {octal})"
    if isinstance(value, str) and "e" in value.lower():
        try:
            number = float(value)
        except ValueError:
            return ""
        if not math.isfinite(number):  # 1e999: no number to write
            return ""
        return (f" (YAML 1.1 reads a number with an exponent as text unless it has a dot and a signed exponent; "
                f"write {yaml_number(number)})")
    return ""


class KeyTwice(Exception):
    """A JSON object holding one key twice (``args[0]``: the key); raised by :func:`keys_once`."""


def keys_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook`` for user files: an object holding a key twice raises
    :class:`KeyTwice` (the last one would win silently: ``"valid": false, "valid": true`` read as valid)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise KeyTwice(key)
        out[key] = value
    return out


class NumberTooLarge(Exception):
    """A number of a JSON text too large for a float (``args[0]``: it as written); raised by :func:`finite_float`."""


def finite_float(text: str) -> float:
    """``json.loads``'s ``parse_float`` for user files: a number past a float's range (``1e400``, ``-1e400``) raises
    :class:`NumberTooLarge`. Python reads it as infinity without a word, so two numbers written apart (``1e400``,
    ``1e500``) were read as one, and a state expecting one passed an agent that left the other. The ``Infinity``
    token, which says infinity as written, is no number of this kind (``parse_constant``'s).

    Examples
    --------
    >>> import json
    >>> json.loads('[0.5, 1e308, Infinity]', parse_float=finite_float)
    [0.5, 1e+308, inf]
    >>> json.loads('[1e400]', parse_float=finite_float)
    Traceback (most recent call last):
    ...
    oloproof_nb._config.files.NumberTooLarge: 1e400
    """
    value = float(text)
    if math.isinf(value):
        raise NumberTooLarge(text)
    return value


def lone_surrogate(data: Any) -> str | None:
    """The first string in ``data`` that cannot be UTF-8 (a ``"\\ud800"`` escape), walked without recursion."""
    seen: set[int] = set()
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return node
        elif isinstance(node, (dict, list)) and id(node) not in seen:  # aliases share one object
            seen.add(id(node))
            stack.extend([*node.keys(), *node.values()] if isinstance(node, dict) else node)
    return None
