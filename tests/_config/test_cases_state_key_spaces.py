"""Look-alike keys of ``expected.state`` that differ from a held key by a surrounding space: the edges (a space
before an invisible character, a space before the key, both spellings named) the null-state tests leave open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_nb._config.cases import load_cases, respelt_key
from oloproof_nb.errors import CaseFileError


def _write(path: Path, *rows: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_space_before_an_invisible_character_is_still_a_surrounding_space(tmp_path: Path) -> None:
    """``"ord-7 \\u200b"``: a space, then a zero-width space (which no table shows). Read as the state's key reads
    (invisible characters dropped, then surrounding spaces), it is ``ord-7``; stripping spaces before dropping
    the invisible character leaves ``"ord-7 "`` and let the removal through."""
    named = "ord-7 \u200b"
    assert respelt_key({"orders": {"ord-7": {}}}, {"orders": {named: {"$absent": True}}}) == (("orders", named),
                                                                                            "ord-7")
    path = _write(tmp_path / "cases.jsonl", {"id": "c1", "input": {}, "initial_state": {"orders": {"ord-7": {}}},
                                             "expected": {"state": {"orders": {named: {"$absent": True}}}}})
    with pytest.raises(CaseFileError, match=r"line 1: expected\.state names orders\."):
        load_cases(path)


def test_both_spellings_named_load_whichever_one_the_state_holds(tmp_path: Path) -> None:
    """The state holds ``"a "`` (with the space); expected.state names it and ``"a"`` too: the key respelt on
    purpose, as the mirror case (the state holds ``"a"``) already loads. Neither is a look-alike of a key
    expected.state does not name."""
    rows = [{"id": "c1", "input": {}, "initial_state": {"o": {"a ": 1}},
             "expected": {"state": {"o": {"a ": {"$absent": True}, "a": 1}}}},
            {"id": "c2", "input": {}, "initial_state": {"o": {"a ": 1}},
             "expected": {"state": {"o": {"a": 1, "a ": {"$absent": True}}}}}]
    path = _write(tmp_path / "cases.jsonl", *rows)
    assert [c.expected.state for c in load_cases(path)] == [r["expected"]["state"] for r in rows]


@pytest.mark.parametrize("held", [" ord-7", "\tord-7", "ord-7\u2003"])
def test_a_state_key_with_a_space_before_it_is_looked_up_too(tmp_path: Path, held: str) -> None:
    """The state holds the key with a space (or a tab, or an em space) before or after it, expected.state names it
    without: refused, the mirror of ``"ord-7 "`` named where the state holds ``"ord-7"``. The null-state tests held
    a trailing space only; a walk that looked at trailing spaces alone let ``" ord-7"`` through."""
    path = _write(tmp_path / "cases.jsonl", {"id": "c1", "input": {}, "initial_state": {"orders": {held: {}}},
                                             "expected": {"state": {"orders": {"ord-7": {"$absent": True}}}}})
    with pytest.raises(CaseFileError) as err:
        load_cases(path)
    assert f"whose key 'ord-7' reads as the key {held!r} initial_state holds there" in str(err.value)
