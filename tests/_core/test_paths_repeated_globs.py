"""A pattern with several ``**`` keys is matched in time polynomial in its length and the path's: a run of ``**``
is read as one, and each (pattern key, path key) is tried once. Before, each ``**`` tried every split of the path
again: ``**.**.**.**.**.**.z`` against one path of 40 keys asked millions of key matches (seconds for one path),
and ``find_paths`` walked a state's subtree once per way of reaching it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof_nb._core import paths
from oloproof_nb._core.paths import find_paths, parse_path, parse_pattern, pattern_matches


def _reference(pattern: Sequence[str], keys: Sequence[str], within: bool) -> bool:
    """The definition, tried every way: ``**`` takes any number of keys, ``*`` in a key any characters."""
    if not pattern:
        return within or not keys
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_reference(rest, keys[j:], within) for j in range(len(keys) + 1))
    if not keys:
        return False
    piece = head.split("*")
    key = keys[0]
    if len(piece) == 1:
        fits = head == key
    else:  # a prefix, a suffix and the pieces between in order
        fits = key.startswith(piece[0]) and key.endswith(piece[-1]) and len(key) >= len(piece[0]) + len(piece[-1])
        at = len(piece[0])
        for middle in piece[1:-1]:
            found = key.find(middle, at, len(key) - len(piece[-1]))
            fits = fits and found >= 0
            at = found + len(middle)
    return fits and _reference(rest, keys[1:], within)


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = paths._key_matches

    def counted(pattern_key: str, key: str) -> bool:
        calls.append(1)
        return real(pattern_key, key)

    monkeypatch.setattr(paths, "_key_matches", counted)
    return calls


@pytest.mark.parametrize(("pattern", "keys"), [
    ("**.**.**.**.**.**.z", ("**", "z")),
    ("a.**.**.b.**.**", ("a", "**", "b", "**")),
    ('**.["**"].x', ("**", "x")),  # a bracketed "**" is the same key: it matches any number of keys too
    ("**.a.**", ("**", "a", "**")),
])
def test_a_run_of_double_stars_is_read_as_one(pattern: str, keys: tuple[str, ...]) -> None:
    assert parse_pattern(pattern) == keys


def test_a_pattern_of_separate_double_stars_tries_each_key_pair_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # 4 named pattern keys, 40 path keys: at most 4 * 40 = 160 key matches, each (pattern key, path key) once
    # (before: one per way of splitting the 40 keys among the ** keys, 102,090)
    calls = _counted(monkeypatch)
    assert not pattern_matches(parse_pattern("**.a.**.a.**.a.**.z"), ("a",) * 40)
    assert 0 < len(calls) <= 4 * 40


def test_repeated_double_stars_match_a_long_path_in_few_key_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counted(monkeypatch)
    pattern = ("**",) * 6 + ("z",)  # as a caller may build it, not parsed
    assert not pattern_matches(pattern, tuple(f"k{i}" for i in range(40)))
    assert pattern_matches(pattern, tuple(f"k{i}" for i in range(39)) + ("z",))
    assert 0 < len(calls) <= 2 * 41


def test_find_paths_walks_each_path_once_per_pattern_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # a chain of 40 keys "a": with the pattern's 3 named "a" keys and "z", each node is tried at most once per
    # pattern key: at most 4 * 40 key matches (before: one per way of reaching a node, 102,090)
    state: Any = 1
    for _ in range(40):
        state = {"a": state}
    calls = _counted(monkeypatch)
    assert find_paths(state, parse_pattern("**.a.**.a.**.a.**.z")) == []
    assert 0 < len(calls) <= 4 * 40
    assert set(find_paths({"a": {"a": {"z": 1}}, "z": 2}, parse_pattern("**.**.z"))) == {("a", "a", "z"), ("z",)}


_PATTERN_KEYS = st.sampled_from(["**", "*", "a", "b", "a*", "*b"])
_PATH_KEYS = st.sampled_from(["a", "b", "ab", "ba"])


@settings(max_examples=400, deadline=None)
@given(pattern=st.lists(_PATTERN_KEYS, min_size=1, max_size=7), keys=st.lists(_PATH_KEYS, max_size=6),
       within=st.booleans())
def test_a_parsed_pattern_matches_the_paths_its_text_says(pattern: list[str], keys: list[str], within: bool) -> None:
    text = ".".join(pattern)
    expected = _reference(parse_path(text), keys, within)  # every ** kept, every split tried
    assert pattern_matches(parse_pattern(text), keys, within=within) is expected
    assert pattern_matches(tuple(pattern), keys, within=within) is expected  # unparsed, runs of ** kept


@settings(max_examples=200, deadline=None)
@given(pattern=st.lists(_PATTERN_KEYS, min_size=1, max_size=6), depth=st.integers(0, 4))
def test_find_paths_finds_the_paths_the_pattern_matches(pattern: list[str], depth: int) -> None:
    # a small tree whose every path has keys from a and b; find_paths against the reference over all its paths
    def tree(level: int) -> Any:
        return level if level == 0 else {"a": tree(level - 1), "ab": level, "b": tree(level - 1)}

    state = tree(depth)
    every: list[tuple[str, ...]] = []

    def walk(node: Any, prefix: tuple[str, ...]) -> None:
        if prefix:
            every.append(prefix)
        if isinstance(node, dict):
            for key, child in node.items():
                walk(child, (*prefix, key))

    walk(state, ())
    found = find_paths(state, parse_pattern(".".join(pattern)))
    assert sorted(found) == sorted(k for k in every if _reference(tuple(pattern), k, False))


@pytest.mark.parametrize(("pattern", "keys", "expected"), [
    ("ord-**", ("ord-1",), True),  # a key holding ** is a wildcard of one key, as ord-* is
    ("ord-**", ("ord-1", "note"), False),
    ("ord-**", ("x", "ord-1"), False),
    ("**b.z", ("a", "b", "z"), False),
    ("**b.z", ("ab", "z"), True),
])
def test_a_key_holding_double_stars_among_other_characters_matches_one_key(pattern: str, keys: tuple[str, ...],
                                                                          expected: bool) -> None:
    # only a key that is exactly ** matches any number of keys (parse_pattern's docstring)
    assert pattern_matches(parse_pattern(pattern), keys) is expected
    assert find_paths({"ord-1": {"note": 1}, "x": {"ord-1": 2}}, parse_pattern("ord-**")) == [("ord-1",)]
