"""same_name (case folding, invisible characters) and the one-judgement-per-labeler rule of a label file: edges
the labeler-name tests leave open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_nb._config.labels import load_labels, same_name
from oloproof_nb._core.labels import pair_labels
from oloproof_nb.errors import LabelFileError

KNOWN = {"c1~t", "c2~t"}


def _file(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_same_name_folds_case_as_unicode_does_and_drops_a_grapheme_joiner() -> None:
    """Unicode's full case folding (CaseFolding.txt: 00DF; F; 0073 0073) makes "Weiß" and "WEISS" one name,
    which ``lower()`` keeps apart ("weiß" and "weiss"); U+034F COMBINING GRAPHEME JOINER is invisible (a
    combining mark, category Mn, so not dropped as a format character) and id_look drops it."""
    assert same_name("Wei\u00df") == "weiss" == same_name("WEISS")
    assert same_name("bob\u034f") == "bob" and same_name("bo\u034fb") == "bob"


@pytest.mark.parametrize("second", ["WEISS", "weiss"])
def test_weiss_written_with_sharp_s_and_without_is_one_labeler(tmp_path: Path, second: str) -> None:
    rows = [{"case_id": "c1~t", "valid": True, "labeler": "Wei\u00df"},
            {"case_id": "c1~t", "valid": False, "labeler": second}]
    with pytest.raises(LabelFileError) as info:
        load_labels(_file(tmp_path, rows), KNOWN, "t")
    assert info.value.line == 2 and "already judged 'c1~t' at line 1 (written 'Weiß' there)" in str(info.value)


def test_names_of_blank_space_or_invisible_characters_alone_are_anonymous(tmp_path: Path) -> None:
    """A name that reads as nothing (" ", a no-break space, a zero-width space) is no name: like "", it may judge
    a pair any number of times. Counted by hand: 3 valid (the three anonymous) to 1 invalid (ana) -> valid."""
    rows = [{"case_id": "c1~t", "valid": True, "labeler": " "},
            {"case_id": "c1~t", "valid": True, "labeler": "\u00a0"},
            {"case_id": "c1~t", "valid": True, "labeler": "\u200b"},
            {"case_id": "c1~t", "valid": False, "labeler": "ana"}]
    got = load_labels(_file(tmp_path, rows), KNOWN, "t")
    assert [j["labeler"] for j in got] == [" ", "\u00a0", "\u200b", "ana"]
    assert pair_labels(got) == {"c1~t": "valid"}


def test_a_name_written_the_same_both_times_is_not_said_twice(tmp_path: Path) -> None:
    """"(written 'bob' there)" is said only where the first line spelt the name otherwise."""
    rows = [{"case_id": "c2~t", "valid": True, "labeler": "bob"}, {"case_id": "c2~t", "valid": True, "labeler": "bob"}]
    with pytest.raises(LabelFileError) as info:
        load_labels(_file(tmp_path, rows), KNOWN, "t")
    assert "labeler 'bob' already judged 'c2~t' at line 1; one judgement per labeler and pair" in str(info.value)
    assert "(written " not in str(info.value)


def test_a_faulty_line_read_without_the_suites_ids_is_the_error_alone(tmp_path: Path) -> None:
    """label_drift reads a label file without the suite's ids (``known_ids=None``): a faulty line there is the
    line's error, no hint and no TypeError from looking an id up in no collection."""
    path = _file(tmp_path, [{"case_id": "c1~t", "valid": "yes"}])
    with pytest.raises(LabelFileError) as info:
        load_labels(path, None, "t")
    assert info.value.line == 1 and "'valid' must be true or false, got \"yes\"" in str(info.value)
    assert "reads as" not in str(info.value)
