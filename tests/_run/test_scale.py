"""The optimisations behind the scale benchmarks keep their contracts.

Each fast path is checked against a plain reference written here (the definition it replaced): batched
record parsing against line-by-line parsing and its errors, the pruned ``leaf_diff`` against flatten-both-
states-and-compare, ``values_equal``'s fast paths against its rules, ``copy_json`` against ``copy.deepcopy``,
and the collector pause of ``load_run`` leaves the garbage collector as it found it.
"""

from __future__ import annotations

import copy
import gc
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oloproof_nb as op
from oloproof_nb._core.jsonsafe import copy_json
from oloproof_nb._core.paths import ABSENT, format_path, leaf_diff, values_equal
from oloproof_nb._run.store import read_jsonl
from oloproof_nb.errors import RunDirError

# -- batched parsing of store files ---------------------------------------------------------------------------


def write_lines(path: Path, lines: list[str], torn: str | None = None) -> None:
    path.write_bytes(("".join(line + "\n" for line in lines) + (torn or "")).encode("utf-8"))


def test_records_across_several_batches_come_back_in_order(tmp_path: Path) -> None:
    rows = [{"i": i, "case": {"id": f"c{i}"}, "s": "é" * (i % 3)} for i in range(1_300)]
    write_lines(tmp_path / "a.jsonl", [json.dumps(r, ensure_ascii=False) for r in rows], torn='{"i": 13')
    assert list(read_jsonl(tmp_path / "a.jsonl")) == rows  # the torn last line is ignored


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]", "", '{"a": 1}, {"b": 2}', "7"])
def test_a_bad_line_in_a_late_batch_is_named_by_its_line_number(tmp_path: Path, bad: str) -> None:
    lines = [json.dumps({"i": i}) for i in range(1_100)]
    lines[1_033] = bad  # line 1034, in the third batch of 512
    write_lines(tmp_path / "a.jsonl", lines)
    seen = []
    with pytest.raises(RunDirError, match=r"a\.jsonl: line 1034: a stored record is not"):
        for rec in read_jsonl(tmp_path / "a.jsonl"):
            seen.append(rec["i"])
    assert seen == list(range(1_033))  # every record before the bad line was returned


def test_invalid_utf8_is_an_error_not_a_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"i": 0}\n{"s": "\xed\xa0\x80"}\n')  # an encoded surrogate: not valid UTF-8
    with pytest.raises(RunDirError, match="line 2"):
        list(read_jsonl(path))


# -- no process-wide side effects -----------------------------------------------------------------------------------


def test_load_run_and_frames_never_touch_the_garbage_collector(example_suite: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    run = op.run(example_suite, out=example_suite / "runs" / "r", progress=False)
    calls: list[str] = []
    for name in ("disable", "enable", "freeze", "unfreeze", "collect"):
        monkeypatch.setattr(gc, name, lambda *a, _n=name, **k: calls.append(_n))
    again = op.load_run(run.directory)
    _ = again.cases, again.steps, again.verdicts, again.changes, again.snapshots, again.pairs, op.gate(again)
    assert calls == []


# -- leaf_diff and values_equal against their definitions ------------------------------------------------------------


def reference_values_equal(e: Any, a: Any, tol: float | None = None) -> bool:
    """The comparison rules as documented (no fast paths)."""
    if e is ABSENT or a is ABSENT:
        return e is a
    if isinstance(e, bool) or isinstance(a, bool):
        return type(e) is type(a) and e == a
    if isinstance(e, (int, float)) and isinstance(a, (int, float)):
        if isinstance(e, float) and isinstance(a, float) and math.isnan(e) and math.isnan(a):
            return True
        return e == a or (tol is not None and abs(e - a) <= tol)  # equal infinities: no distance, still equal
    if isinstance(e, Mapping) and isinstance(a, Mapping):
        return e.keys() == a.keys() and all(reference_values_equal(e[k], a[k], tol) for k in e)
    if isinstance(e, list) and isinstance(a, list):
        return len(e) == len(a) and all(reference_values_equal(x, y, tol) for x, y in zip(e, a, strict=True))
    if type(e) is not type(a) and not (isinstance(e, str) and isinstance(a, str)):
        return False
    return bool(e == a)


def _type_changes(before: Any, after: Any, keys: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Paths (below the root) where one state holds a dict and the other a list, reached through same-typed parents."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before.keys() & after.keys():
            yield from _type_changes(before[key], after[key], (*keys, key))
    elif isinstance(before, list) and isinstance(after, list):
        for i in range(min(len(before), len(after))):
            yield from _type_changes(before[i], after[i], (*keys, str(i)))
    elif keys and isinstance(before, (dict, list)) and isinstance(after, (dict, list)):
        yield keys


def _flatten_stopping(node: Any, stops: set[tuple[str, ...]], keys: tuple[str, ...] = ()) -> dict[str, Any]:
    """:func:`flatten`, except that a path in ``stops`` is one leaf holding its whole container."""
    if keys in stops:
        return {format_path(keys): node}
    if isinstance(node, (dict, list)) and node:
        out: dict[str, Any] = {}
        for key, value in (node.items() if isinstance(node, dict) else enumerate(node)):
            out.update(_flatten_stopping(value, stops, (*keys, str(key))))
        return out
    return {format_path(keys): node} if keys else {}


def reference_leaf_diff(before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    """Flatten both states whole and compare every leaf (the definition); a container whose type changed
    (dict <-> list) is one leaf on both sides."""
    stops = set(_type_changes(before, after))
    old, new = _flatten_stopping(before, stops), _flatten_stopping(after, stops)
    rows = [(p, v, new.get(p, ABSENT)) for p, v in old.items() if not reference_values_equal(v, new.get(p, ABSENT))]
    return rows + [(p, ABSENT, v) for p, v in new.items() if p not in old]


LEAF = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(width=16), st.sampled_from(["a", "b", ""]))
KEY = st.sampled_from(["a", "b", "0", "1", "x.y", 'q"'])
TREE = st.recursive(LEAF, lambda ch: st.one_of(st.lists(ch, max_size=3), st.dictionaries(KEY, ch, max_size=3)),
                    max_leaves=12)


def same_rows(x: list[tuple[str, Any, Any]], y: list[tuple[str, Any, Any]]) -> bool:
    return len(x) == len(y) and all(
        p == q and reference_values_equal(b, c) and reference_values_equal(d, e)
        for (p, b, d), (q, c, e) in zip(x, y, strict=True))


@settings(max_examples=600, deadline=None)
@given(TREE, TREE)
def test_leaf_diff_matches_its_definition(before: Any, after: Any) -> None:
    assert same_rows(leaf_diff(before, after), reference_leaf_diff(before, after))


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(KEY, TREE, min_size=1, max_size=4), KEY, TREE)
def test_leaf_diff_of_one_edit_matches_its_definition(before: dict[str, Any], key: str, value: Any) -> None:
    after = copy.deepcopy(before)
    after[key] = value  # mostly-equal states: where pruning applies
    assert same_rows(leaf_diff(before, after), reference_leaf_diff(before, after))


@settings(max_examples=1_000, deadline=None)
@given(TREE, TREE, st.one_of(st.none(), st.floats(0, 2)))
def test_values_equal_matches_its_rules(a: Any, b: Any, tol: float | None) -> None:
    assert values_equal(a, b, tol) == reference_values_equal(a, b, tol)
    assert values_equal(a, copy.deepcopy(a), tol) == reference_values_equal(a, copy.deepcopy(a), tol)


# -- copy_json -----------------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(TREE)
def test_copy_json_is_a_deep_copy(value: Any) -> None:
    twin = copy_json(value)
    assert reference_values_equal(twin, value)  # NaN counts as equal to NaN here
    stack = [(twin, value)]
    while stack:  # no container is shared with the original
        x, y = stack.pop()
        if isinstance(y, (dict, list)):
            assert x is not y
            stack.extend(zip(x.values(), y.values(), strict=True) if isinstance(y, dict) else zip(x, y, strict=True))


def test_copy_json_falls_back_to_deepcopy_for_other_values() -> None:
    inner = {1, 2}
    value = {"when": (inner,), 3: ["x"]}  # a tuple, a set, a non-string key
    twin = copy_json(value)
    assert twin == value and twin["when"][0] is not inner and twin[3] is not value[3]
