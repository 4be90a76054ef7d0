"""States stored once, by content: ``states.jsonl`` of a run directory.

Every initial and final state of a run (a case's ``initial_state``, the state
each case and replay left) is stored by **address** — the SHA-256 of its stored
text — so a state that many cases and replays share is stored once. Large
states are stored as a tree of nodes, each addressed the same way:

- a container (dict or list) whose JSON text is at least :data:`NODE_BYTES`
  long is a node of its own, referred to from its parent as ``{"$ref": ADDR}``;
- a container with more than :data:`CHUNK_MIN` children is cut into chunks
  at content-defined boundaries (after a child whose key — a list element:
  whose text — has a CRC-32 ending in :data:`CHUNK_BITS` one-bits), each chunk
  a node, the container ``{"$dict": [ADDR, …]}`` or ``{"$list": [ADDR, …]}``.

So a final state that differs from its initial state in a few leaves costs
the nodes on the paths to those leaves, not a copy of the whole state; a
boundary depends only on nearby content, so an insertion changes one chunk.
A user's own dict of one key among ``$ref``, ``$dict``, ``$list``, ``$lit``
is stored wrapped as ``{"$lit": …}``, so nothing a system records is ever
read as a reference. A state whose text is shorter than :data:`NODE_BYTES` and
holds no ``"$`` is one node, its plain JSON text; one that holds ``"$`` goes
through the rules above (so a container of more than :data:`CHUNK_MIN`
children in it is chunked even when the state is small).

``states.jsonl`` has one line per node, ``{"ref":"<64 hex>","node":<text>}``,
children before their parents, all written before the record that refers to
the root: a torn last line is a node nothing refers to yet.

Reading (:class:`StateReader`) parses each node once; states and subtrees that
share a node share one Python object, so copy a state before changing it.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .._core.canonical import parse_json
from .._core.records import CaseRecord, EnvironmentState, ReplayRecord
from ..errors import RunDirError
from .lines import complete_lines, open_journal

__all__ = ["STATES", "NODE_BYTES", "CHUNK_MIN", "CHUNK_BITS", "encode_state", "split_case_states",
           "split_replay_states", "read_state_refs", "StateReader", "resolve_states", "state_refs_of"]

STATES = "states.jsonl"
#: A container whose JSON text is at least this long is stored as a node of its own.
NODE_BYTES = 1024
#: A container with more children than this is stored in chunks.
CHUNK_MIN = 64
#: A chunk ends after a child whose CRC-32 has its low CHUNK_BITS bits set (about 2**CHUNK_BITS children a chunk).
CHUNK_BITS = 5
_CHUNK_MASK = (1 << CHUNK_BITS) - 1
#: A chunk is cut after this many children at the latest.
_CHUNK_MAX = 4 << CHUNK_BITS
_MARKERS = frozenset({"$ref", "$dict", "$list", "$lit"})

_encode: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                                                 check_circular=False).encode

_HEAD = b'{"ref":"'
_MID = b'","node":'
_AT = len(_HEAD) + 64 + len(_MID)


def _address(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _line(ref: str, text: str) -> str:
    return '{"ref":"' + ref + '","node":' + text + "}\n"


# -- writing ------------------------------------------------------------------------------------------------


class _Encoder:
    """Turns one state into nodes (``ref -> line``, children first); returns the text a parent embeds."""

    def __init__(self) -> None:
        self.nodes: dict[str, str] = {}

    def node(self, text: str) -> str:
        ref = _address(text)
        if ref not in self.nodes:
            self.nodes[ref] = _line(ref, text)
        return ref

    def value(self, value: Any) -> str:
        if type(value) is dict:
            parts = [_encode(k) + ":" + self.value(v) for k, v in value.items()]
            if len(parts) > CHUNK_MIN:
                return self._chunked("$dict", parts, [str(k) for k in value], "{", "}")
            text = "{" + ",".join(parts) + "}"
            if len(value) == 1 and next(iter(value)) in _MARKERS:
                text = '{"$lit":' + text + "}"
        elif type(value) is list:
            parts = [self.value(v) for v in value]
            if len(parts) > CHUNK_MIN:
                return self._chunked("$list", parts, parts, "[", "]")
            text = "[" + ",".join(parts) + "]"
        else:
            return _encode(value)
        return '{"$ref":"' + self.node(text) + '"}' if len(text) >= NODE_BYTES else text

    def _chunked(self, kind: str, parts: list[str], keys: list[str], open_: str, close: str) -> str:
        refs = []
        start = 0
        for i, key in enumerate(keys):
            if (zlib.crc32(key.encode("utf-8")) & _CHUNK_MASK) == _CHUNK_MASK or i + 1 - start == _CHUNK_MAX \
                    or i + 1 == len(keys):
                text = open_ + ",".join(parts[start : i + 1]) + close
                if kind == "$dict" and i == start and key in _MARKERS:  # a chunk of one key that reads as a marker
                    text = '{"$lit":' + text + "}"
                refs.append(self.node(text))
                start = i + 1
        return '{"' + kind + '":[' + ",".join('"' + r + '"' for r in refs) + "]}"


def _plain(value: Any) -> bool:
    """Only JSON types with text keys (anything else is stored as one node, as ``json`` writes it)."""
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if type(value) is list:
        return all(_plain(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def encode_state(state: Any) -> tuple[str, dict[str, str]]:
    """``(ref, nodes)``: a state's address and its ``states.jsonl`` lines (``ref -> line``, children first).

    Examples
    --------
    >>> ref, nodes = encode_state({"b": 1, "a": [1.0]})
    >>> list(nodes) == [ref] and nodes[ref] == '{"ref":"' + ref + '","node":{"b":1,"a":[1.0]}}' + chr(10)
    True
    >>> ref2, nodes2 = encode_state({"big": ["x" * 40] * 100})
    >>> len(nodes2) > 1 and all(r in nodes2 for r in nodes2)
    True
    """
    enc = _Encoder()
    text = _encode(state)
    if len(text) >= NODE_BYTES or '"$' in text:  # large, or may hold a dict that reads as a marker
        if not _plain(state):
            state = parse_json(text)  # what storing it as JSON keeps of it (text keys, lists for tuples)
        text = enc.value(state)
        if text.startswith('{"$ref":"') and len(text) == 75:  # the root itself became a node: refer to it directly
            return text[9:73], enc.nodes
    return enc.node(text), enc.nodes


def _by_ref(mapping: dict[str, Any], key: str, ref_key: str, nodes: dict[str, str]) -> dict[str, Any]:
    """``mapping`` with ``key`` replaced, in place in the key order, by ``ref_key``: the address of its value."""
    ref, new = encode_state(mapping[key])
    nodes.update(new)
    return {(ref_key if k == key else k): (ref if k == key else v) for k, v in mapping.items()}


def split_case_states(record: CaseRecord) -> tuple[CaseRecord, dict[str, str]]:
    """The record as stored (initial and final states by address) and the nodes of its states.

    The record given is not changed.
    """
    nodes: dict[str, str] = {}
    out: dict[str, Any] = dict(record)
    if "initial_state" in record["case"]:
        out["case"] = _by_ref(dict(record["case"]), "initial_state", "initial_state_ref", nodes)
    env = record.get("environment_state")
    if env is not None and "state" in env:
        out["environment_state"] = _by_ref(dict(env), "state", "state_ref", nodes)
    return out, nodes  # type: ignore[return-value]


def split_replay_states(record: ReplayRecord) -> tuple[ReplayRecord, dict[str, str]]:
    """The replay record as stored (its final state by address) and the nodes of that state."""
    env = record.get("environment_state")
    if env is None or "state" not in env:
        return record, {}
    nodes: dict[str, str] = {}
    out: dict[str, Any] = {**record, "environment_state": _by_ref(dict(env), "state", "state_ref", nodes)}
    return out, nodes  # type: ignore[return-value]


# -- reading ------------------------------------------------------------------------------------------------


def _damaged(path: Path, lineno: int, why: str) -> RunDirError:
    return RunDirError(f"{path}: line {lineno}: {why}; the run directory is damaged")


def _line_ref(path: Path, lineno: int, raw: bytes) -> str:
    ref = raw[len(_HEAD):len(_HEAD) + 64]
    if raw.startswith(_HEAD) and raw[_AT - len(_MID):_AT] == _MID and ref.isascii():  # else: read as JSON
        return ref.decode("ascii")
    try:
        record = parse_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _damaged(path, lineno, "a stored state is not valid JSON") from None
    if not isinstance(record, dict) or not isinstance(record.get("ref"), str) or "node" not in record:
        raise _damaged(path, lineno, "a stored state has no ref or node")
    return str(record["ref"])


def read_state_refs(directory: Path) -> set[str]:
    """The addresses of the nodes in ``states.jsonl``."""
    path = directory / STATES
    return {_line_ref(path, lineno, raw) for lineno, _, raw in complete_lines(path)}


def _node_text(raw: bytes) -> bytes:
    return raw[_AT:-2] if raw.startswith(_HEAD) and raw.endswith(b"}\n") else b""


class StateReader:
    """Reads the states of a run directory by address, lazily: ``states.jsonl`` is indexed on first use.

    Each node is parsed once; callers asking for the same state (or states sharing a subtree) get the same
    objects. The reader belongs to one loaded run and holds what it has parsed, no more.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / STATES
        self._index: dict[str, tuple[int, int, int]] | None = None  # ref -> (offset, length, line number)
        self._parsed: dict[str, Any] = {}  # ref -> the node's value as parsed (markers not yet followed)
        self._values: dict[str, Any] = {}  # ref -> the value with every marker followed

    def _spans(self, refs: set[str]) -> list[tuple[int, int, int, str]]:
        if self._index is None or any(r not in self._index for r in refs):  # first use, or the file grew
            self._index = {}
            for lineno, offset, raw in complete_lines(self.path):
                self._index.setdefault(_line_ref(self.path, lineno, raw), (offset, len(raw), lineno))
        missing = sorted(r for r in refs if r not in self._index)
        if missing:
            raise RunDirError(f"{self.path}: no state {missing[0]} (referred to by a record); "
                              "the run directory is incomplete")
        return sorted(self._index[r] + (r,) for r in refs)

    def _parse(self, refs: set[str]) -> None:
        """Parse the nodes ``refs`` and every node they refer to, level by level, each level in one batch."""
        todo = {r for r in refs if r not in self._parsed}
        while todo:
            spans = self._spans(todo)
            raws = []
            handle = open_journal(self.path)
            if handle is None:
                raise RunDirError(f"{self.path}: missing (the run's records refer to its states); "
                                  "the run directory is incomplete")
            with handle:
                for offset, length, _, _ in spans:
                    handle.seek(offset)
                    raws.append(handle.read(length))
            texts = [_node_text(raw) for raw in raws]
            values: Any = None
            if all(texts):
                try:
                    values = parse_json((b"[" + b",".join(texts) + b"]").decode("utf-8"))  # strict, as each line
                except (UnicodeDecodeError, ValueError, RecursionError):
                    values = None
            if not isinstance(values, list) or len(values) != len(texts):
                values = [self._parse_line(lineno, raw) for (_, _, lineno, _), raw in zip(spans, raws, strict=True)]
            for (_, _, lineno, ref), value, text in zip(spans, values, texts, strict=True):
                # a node is the text its address is the SHA-256 of: one edited after it was written is refused
                if (hashlib.sha256(text).hexdigest() if text else _address(_encode(value))) != ref:
                    raise _damaged(self.path, lineno, f"the stored state {ref[:12]}… is not the text its address "
                                                      "is the SHA-256 of (changed after it was written)")
            children: set[str] = set()
            for (_, _, _, ref), value, text in zip(spans, values, texts, strict=True):
                self._parsed[ref] = value
                if b'"$' in text or not text:
                    _collect_refs(value, children)
                else:  # no marker in it: the node is the value
                    self._values[ref] = value
            todo = {r for r in children if r not in self._parsed}

    def _parse_line(self, lineno: int, raw: bytes) -> Any:
        try:
            record = parse_json(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise _damaged(self.path, lineno, "a stored state is not valid JSON") from None
        if not isinstance(record, dict) or "node" not in record:
            raise _damaged(self.path, lineno, "a stored state has no node")
        return record["node"]

    def _value(self, ref: str) -> Any:
        value = self._values.get(ref)
        if value is None and ref not in self._values:
            value = _follow(self._parsed[ref], self._value)
            self._values[ref] = value
        return value

    def __call__(self, ref: str) -> Any:
        """The state stored under ``ref``."""
        try:
            return self._values[ref]
        except KeyError:
            return self.many([ref])[0]

    def release(self) -> None:
        """Let go of every state read so far (the index of ``states.jsonl`` stays); they are read again when
        asked for."""
        self._parsed.clear()
        self._values.clear()

    def many(self, refs: Iterable[str]) -> list[Any]:
        """The states stored under ``refs``, in order (the nodes not parsed yet are parsed in batches)."""
        refs = list(refs)
        self._parse({r for r in refs if r not in self._values})
        return [self._value(r) for r in refs]


def _collect_refs(value: Any, out: set[str]) -> None:
    """Every address a parsed node refers to (``$ref``, ``$dict``, ``$list``), not inside a ``$lit``."""
    if type(value) is dict:
        if len(value) == 1:
            (key, inner), = value.items()
            if key == "$ref":
                out.add(inner)
                return
            if key in ("$dict", "$list"):
                out.update(inner)
                return
            if key == "$lit":
                for v in inner.values():
                    _collect_refs(v, out)
                return
        for v in value.values():
            _collect_refs(v, out)
    elif type(value) is list:
        for v in value:
            _collect_refs(v, out)


def _follow(value: Any, node: Callable[[str], Any]) -> Any:
    """A parsed node with every marker replaced by what it stands for (``node(ref)``: a node's value)."""
    if type(value) is dict:
        if len(value) == 1:
            (key, inner), = value.items()
            if key == "$ref":
                return node(inner)
            if key == "$dict":
                merged: dict[str, Any] = {}
                for ref in inner:
                    merged.update(node(ref))
                return merged
            if key == "$list":
                return [item for ref in inner for item in node(ref)]
            if key == "$lit":
                return {k: _follow(v, node) for k, v in inner.items()}
        return {k: _follow(v, node) for k, v in value.items()}
    if type(value) is list:
        return [_follow(v, node) for v in value]
    return value


def _resolved(mapping: dict[str, Any], key: str, ref_key: str, states: Callable[[str], Any]) -> dict[str, Any]:
    return {(key if k == ref_key else k): (states(v) if k == ref_key else v) for k, v in mapping.items()}


def resolve_states(record: dict[str, Any], states: Callable[[str], Any]) -> dict[str, Any]:
    """A stored case or replay record with its states put back (``states``: address -> state).

    Each state goes back under its key (``case.initial_state``, ``environment_state.state``) in place of
    its address, so the record reads exactly as it was before it was stored. A record that holds its states
    inline (written before states were stored by address) is returned as is.
    """
    out = record
    case = record.get("case")
    if isinstance(case, dict) and "initial_state_ref" in case:
        out = {**out, "case": _resolved(case, "initial_state", "initial_state_ref", states)}
    env: EnvironmentState | None = record.get("environment_state")
    if env is not None and "state_ref" in env:
        out = {**out, "environment_state": _resolved(dict(env), "state", "state_ref", states)}
    return out


def state_refs_of(record: dict[str, Any]) -> list[str]:
    """The addresses of the states a stored record refers to."""
    out = []
    ref = (record.get("case") or {}).get("initial_state_ref")
    if ref is not None:
        out.append(ref)
    env = record.get("environment_state")
    if env is not None and "state_ref" in env:
        out.append(env["state_ref"])
    return out
