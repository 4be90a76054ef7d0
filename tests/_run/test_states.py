"""States stored by content: exact round trips, each node once, small deltas for small changes, markers as data."""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof_nb._run import states
from oloproof_nb._run.states import STATES, StateReader, encode_state, read_state_refs
from oloproof_nb.errors import RunDirError


def exact(value: Any) -> str:
    """A value's JSON text, key order and number types included (``1`` and ``1.0`` differ; NaN equals NaN)."""
    return json.dumps(value, ensure_ascii=False)


def write(directory: Path, *values: Any) -> list[str]:
    """Store ``values`` as the run store does (each node once, in order) and return their addresses."""
    directory.mkdir(parents=True, exist_ok=True)
    written: set[str] = set()
    refs = []
    with (directory / STATES).open("a", encoding="utf-8") as handle:
        for value in values:
            ref, nodes = encode_state(value)
            for r, line in nodes.items():
                if r not in written:
                    handle.write(line)
                    written.add(r)
            refs.append(ref)
    return refs


def catalog(n: int, changed: int | None = None) -> dict[str, Any]:
    return {"catalog": {f"sku-{i:05d}": {"name": f"item {i}", "price": i / 4, "stock": 0 if i == changed else 7}
                        for i in range(n)}, "owner": "shop"}


MARKER_DICTS = [{"$ref": "0" * 64}, {"$dict": ["0" * 64]}, {"$list": []}, {"$lit": {"$ref": 1}}, {"$ref": None}]

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.text(max_size=30),
                      st.floats(allow_nan=True, allow_infinity=True))
json_value = st.recursive(
    json_leaf | st.sampled_from(MARKER_DICTS),
    lambda inner: st.lists(inner, max_size=90) | st.dictionaries(st.text(max_size=12), inner, max_size=90)
    | st.dictionaries(st.sampled_from(["$ref", "$dict", "$list", "$lit"]), inner, min_size=1, max_size=1),
    max_leaves=300)


def small_nodes(mp: pytest.MonkeyPatch) -> None:
    """Tiny thresholds, so hypothesis' modest values exercise nodes and chunks."""
    mp.setattr(states, "NODE_BYTES", 40)
    mp.setattr(states, "CHUNK_MIN", 4)
    mp.setattr(states, "_CHUNK_MASK", 1)
    mp.setattr(states, "_CHUNK_MAX", 5)


@settings(max_examples=60, deadline=None)  # 150 took 30-40 s of CI; 60 still reach the chunked sizes
@given(value=st.dictionaries(st.text(max_size=12), json_value, max_size=20))
def test_any_state_reads_back_exactly(value: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        small_nodes(mp)
        [ref] = write(Path(tmp), value)
        assert exact(StateReader(Path(tmp))(ref)) == exact(value)


def test_each_node_is_stored_once_and_addressed_by_its_text(tmp_path: Path) -> None:
    base, changed = catalog(2000), catalog(2000, changed=1234)
    refs = write(tmp_path, base, base, changed, base)
    assert refs[0] == refs[1] == refs[3] != refs[2]
    size = (tmp_path / STATES).stat().st_size
    one = len(exact(base).encode())
    assert one < size < 1.1 * one  # two states of ~one state's size: the change cost a chunk and the parents
    lines = (tmp_path / STATES).read_bytes().splitlines()
    assert len({json.loads(line)["ref"] for line in lines}) == len(lines)
    for line in lines:
        record = json.loads(line)
        text = line[len(b'{"ref":"') + 64 + len(b'","node":'):-1]
        assert record["ref"] == hashlib.sha256(text).hexdigest()
    reader = StateReader(tmp_path)
    assert exact(reader(refs[2])) == exact(changed) and exact(reader(refs[0])) == exact(base)


def test_an_insertion_changes_a_few_chunks_not_the_container(tmp_path: Path) -> None:
    base = catalog(3000)
    grown = {"catalog": dict(sorted({**base["catalog"], "sku-01500x": {"name": "new"}}.items())), "owner": "shop"}
    _, before = encode_state(base)
    _, after = encode_state(grown)
    new = set(after) - set(before)
    assert 0 < len(new) <= 3  # the chunk holding the new key, the chunk list, the root
    assert sum(len(after[r]) for r in new) < 0.1 * len(exact(grown))


def test_a_small_state_is_one_node_of_plain_json(tmp_path: Path) -> None:
    ref, nodes = encode_state({"b": 1, "a": [1.0, None, True]})
    assert list(nodes) == [ref] and nodes[ref] == '{"ref":"' + ref + '","node":{"b":1,"a":[1.0,null,true]}}\n'


@pytest.mark.parametrize("value", MARKER_DICTS)
def test_a_dict_that_looks_like_a_reference_is_data(tmp_path: Path, value: dict[str, Any]) -> None:
    state = {"note": value, "many": [value] * 200, "wide": {f"k{i}": value for i in range(100)}, "top": value}
    for candidate in (state, value, {"x": value}):
        [ref] = write(tmp_path / str(abs(hash(exact(candidate)))), candidate)
        assert exact(StateReader(tmp_path / str(abs(hash(exact(candidate)))))(ref)) == exact(candidate)


def test_nan_and_number_types_survive(tmp_path: Path) -> None:
    state = {"n": [1, 1.0, -0.0, float("inf"), float("nan")] * 300}
    [ref] = write(tmp_path, state)
    back = StateReader(tmp_path)(ref)["n"]
    assert [type(v) for v in back[:5]] == [int, float, float, float, float] and math.isnan(back[4])
    assert exact(back) == exact(state["n"])


def test_a_torn_last_node_is_ignored_and_a_lost_node_is_named(tmp_path: Path) -> None:
    [ref] = write(tmp_path, catalog(500))
    with (tmp_path / STATES).open("a", encoding="utf-8") as handle:
        handle.write('{"ref":"' + "f" * 64 + '","node":{"cut')
    assert "f" * 64 not in read_state_refs(tmp_path)
    assert exact(StateReader(tmp_path)(ref)) == exact(catalog(500))
    lines = (tmp_path / STATES).read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / STATES).write_text("".join(lines[1:]), encoding="utf-8")  # a chunk lost
    with pytest.raises(RunDirError, match=r"states\.jsonl: no state [0-9a-f]{64} \(referred to by a record\)"):
        StateReader(tmp_path)(ref)
    (tmp_path / STATES).write_text('{"ref": 1}\n', encoding="utf-8")
    with pytest.raises(RunDirError, match=r"states\.jsonl: line 1: .*damaged"):
        read_state_refs(tmp_path)


def test_states_sharing_a_node_share_one_object(tmp_path: Path) -> None:
    refs = write(tmp_path, catalog(800), catalog(800, changed=3))
    a, b = StateReader(tmp_path).many(refs)
    assert a["catalog"]["sku-00700"] is b["catalog"]["sku-00700"]
    assert a["catalog"] is not b["catalog"] and a["catalog"]["sku-00003"] != b["catalog"]["sku-00003"]


# -- the thresholds at their exact values (module docstring: "at least NODE_BYTES", "more than CHUNK_MIN") ------


def _node(line: str) -> Any:
    return json.loads(line)["node"]


def test_a_container_of_exactly_node_bytes_is_a_node_of_its_own() -> None:
    assert len(json.dumps(["x" * 1020])) == 1024 == states.NODE_BYTES  # '["' + 1020 + '"]'
    for size, count in ((1019, 1), (1020, 2)):  # 1023 bytes stays inline in its parent; 1024 is a node
        ref, nodes = encode_state({"a": ["x" * size]})
        assert len(nodes) == count, size
        assert _node(nodes[ref]) == ({"a": ["x" * size]} if count == 1 else {"a": {"$ref": _node_ref(nodes, ref)}})


def _node_ref(nodes: dict[str, str], root: str) -> str:
    (other,) = [r for r in nodes if r != root]
    return other


def test_a_container_of_exactly_chunk_min_children_is_not_chunked() -> None:
    for n, chunked in ((64, False), (65, True)):
        value = {f"key-{i:03d}": "v" * 20 for i in range(n)}  # some 1,900 bytes: a node either way
        ref, nodes = encode_state(value)
        root = _node(nodes[ref])
        assert (set(root) == {"$dict"}) is chunked, n
        if not chunked:  # one node, addressed by the SHA-256 of the state's own compact JSON text
            assert root == value and len(nodes) == 1
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            assert ref == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_chunk_ends_after_chunk_max_children_at_the_latest() -> None:
    # 200 list elements none of which ends a chunk by the CRC of its text: the chunks hold 128 (4 << CHUNK_BITS)
    # and 72 (some 2,000 bytes of text in all, so the list is stored in chunks)
    items = [s for s in (f"item-{i}" for i in range(2000)) if zlib.crc32(json.dumps(s).encode()) & 31 != 31][:200]
    ref, nodes = encode_state(items)
    chunks = [_node(nodes[r]) for r in _node(nodes[ref])["$list"]]
    assert [len(c) for c in chunks] == [128, 72] and [x for c in chunks for x in c] == items


def test_a_last_chunk_of_one_marker_key_reads_back_as_data(tmp_path: Path) -> None:
    # 70 keys (chunked), the next to last ends a chunk by its CRC, so the last chunk is {"$ref": ...} alone:
    # stored bare, it would be read as a reference to a node that does not exist
    ender = next(k for k in (f"end-{i}" for i in range(1000)) if zlib.crc32(k.encode()) & 31 == 31)
    keys = [k for k in (f"key-{i}" for i in range(200)) if zlib.crc32(k.encode()) & 31 != 31][:68]
    value: dict[str, Any] = {k: 1 for k in keys}
    value[ender] = 2
    value["$ref"] = "0" * 64
    (ref,) = write(tmp_path, value)
    back = StateReader(tmp_path)(ref)
    assert exact(back) == exact(value)


def test_a_large_state_with_number_keys_and_tuples_is_stored_as_json_keeps_it(tmp_path: Path) -> None:
    # encode_state: what storing as JSON keeps of a value, text keys and lists for tuples, also when it is
    # large enough to be cut into nodes (json.dumps is the outside reference)
    value = {1: "x" * 1100, "pair": (1, 2), "rows": [{2: "y"}] * 3}
    (ref,) = write(tmp_path, value)
    assert exact(StateReader(tmp_path)(ref)) == exact(json.loads(json.dumps(value)))


def test_a_reader_finds_a_state_written_after_its_first_use(tmp_path: Path) -> None:
    # a live run's states.jsonl grows while it is read: a reader that indexed the file once must index it again
    # for an address it has not seen, not call the run directory incomplete
    (first,) = write(tmp_path, catalog(300))
    reader = StateReader(tmp_path)
    assert exact(reader(first)) == exact(catalog(300))
    (later,) = write(tmp_path, catalog(300, changed=5))
    assert reader(later)["catalog"]["sku-00005"]["stock"] == 0


def test_a_states_file_written_with_spaces_reads_back(tmp_path: Path) -> None:
    # lines written by another JSON writer ({"ref": "…", "node": …}, with spaces) miss the fast path and are
    # parsed one by one: their markers must still be followed, for a state cut into nodes and chunks
    (ref,) = write(tmp_path, catalog(300))
    lines = (tmp_path / STATES).read_text(encoding="utf-8").splitlines()
    assert len(lines) > 2 and any('"$dict"' in line for line in lines)  # chunked, so some nodes hold markers
    (tmp_path / STATES).write_text("".join(json.dumps(json.loads(line), ensure_ascii=False) + "\n" for line in lines),
                                   encoding="utf-8")
    assert exact(StateReader(tmp_path)(ref)) == exact(catalog(300))


# -- edges no other test pins ------------------------------------------------------------------------------


def test_a_line_whose_address_is_not_ascii_is_damage_named_by_its_line_not_a_decode_error(tmp_path: Path) -> None:
    """A line shaped like a node but with 64 non-ASCII bytes where the address goes gave UnicodeDecodeError (from
    ``op.load_run(...)`` and ``oloproof run --resume``) instead of the damaged-run line the other bad lines give."""
    [ref] = write(tmp_path, catalog(3))
    with (tmp_path / STATES).open("ab") as handle:
        handle.write(b'{"ref":"' + b"\xff" * 64 + b'","node":{}}\n')  # line 2: not UTF-8
    damaged = r"states\.jsonl: line 2: a stored state is not valid JSON; the run directory is damaged"
    with pytest.raises(RunDirError, match=damaged):
        read_state_refs(tmp_path)
    with pytest.raises(RunDirError, match=damaged):
        StateReader(tmp_path)(ref)
    lines = (tmp_path / STATES).read_bytes().splitlines(keepends=True)
    accented = "\u00e9" * 32  # 64 bytes of UTF-8: valid JSON, a ref no record refers to
    (tmp_path / STATES).write_bytes(lines[0] + b'{"ref":"' + accented.encode("utf-8") + b'","node":{}}\n')
    assert read_state_refs(tmp_path) == {ref, accented}
    assert exact(StateReader(tmp_path)(ref)) == exact(catalog(3))


def test_a_line_whose_address_is_not_64_characters_is_indexed_by_its_json_ref(tmp_path: Path) -> None:
    """Only a line of the store's own shape (``{"ref":"`` + 64 characters + ``","node":``) is indexed from its first
    bytes; another (a short ref written by hand) is read as JSON, so its ref is the one it says, and reading it
    names the line whose text is not what its address says (not a state that is missing)."""
    [ref] = write(tmp_path, catalog(3))
    with (tmp_path / STATES).open("a", encoding="utf-8") as handle:
        handle.write('{"ref":"abc","node":{"n":1}}\n')
    assert read_state_refs(tmp_path) == {ref, "abc"}
    with pytest.raises(RunDirError, match=r"line 2: the stored state abc… is not the text its address"):
        StateReader(tmp_path)("abc")


def test_a_node_holding_two_values_is_damage_named_by_its_line(tmp_path: Path) -> None:
    """``"node":1,2``: read in one batch with the other nodes it gave one value too many; the line is named as
    damaged (not a ValueError from pairing the values with their lines)."""
    [ref] = write(tmp_path, catalog(3))
    forged = "0" * 64
    with (tmp_path / STATES).open("a", encoding="utf-8") as handle:
        handle.write('{"ref":"' + forged + '","node":1,2}\n')
    with pytest.raises(RunDirError, match=r"states\.jsonl: line 2: a stored state is not valid JSON; the run "
                                          r"directory is damaged"):
        StateReader(tmp_path).many([ref, forged])


def test_a_line_of_the_stores_length_under_another_key_is_no_address(tmp_path: Path) -> None:
    """The fast read needs the line to start ``{"ref":"``; a line with another key of the same
    length in its place (``{"rex":"`` + 64 characters + ``","node":``) has no ref, and is damage named by its
    line, not an address taken from where the ref would be."""
    write(tmp_path, catalog(3))
    with (tmp_path / STATES).open("a", encoding="utf-8") as handle:
        handle.write('{"rex":"' + "0" * 64 + '","node":{"n":1}}\n')
    with pytest.raises(RunDirError, match=r"states\.jsonl: line 2: a stored state has no ref or node"):
        read_state_refs(tmp_path)


def test_a_small_state_is_one_node_unless_its_text_holds_a_marker_prefix(tmp_path: Path) -> None:
    """The module's docstring: a state shorter than NODE_BYTES is one node, its plain JSON text, unless its text
    holds ``"$`` (a key that may read as a marker); then its containers of more than CHUNK_MIN children are
    chunked even though the state is small. Both read back as they were written."""
    plain = {"x": 1, **{f"k{i}": i for i in range(states.CHUNK_MIN + 6)}}  # 71 children
    marked = {"$x": 1, **{f"k{i}": i for i in range(states.CHUNK_MIN + 6)}}
    assert all(len(json.dumps(s, separators=(",", ":"))) < states.NODE_BYTES for s in (plain, marked))
    plain_ref, plain_nodes = encode_state(plain)
    assert list(plain_nodes) == [plain_ref]
    text = json.dumps(plain, separators=(",", ":"))
    assert plain_nodes[plain_ref] == '{"ref":"' + plain_ref + '","node":' + text + "}\n"
    marked_ref, marked_nodes = encode_state(marked)
    assert len(marked_nodes) > 1  # the root names its chunks
    (tmp_path / STATES).write_text("".join([*plain_nodes.values(), *marked_nodes.values()]), encoding="utf-8")
    assert StateReader(tmp_path).many([plain_ref, marked_ref]) == [plain, marked]
