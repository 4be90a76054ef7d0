"""One labeler's name written two ways is one labeler, and a label id that reads as a copy's is named.

A pair's label is the majority of its judgements, one per named labeler. ``"bob"`` and ``"Bob "`` (or a
no-break space, a zero-width space after the name) were two labelers, so one person's second judgement of a
pair outvoted a colleague, or tied one valid judgement of their own, and a tie is ``invalid``: the copy then
left every criterion once the transform was checked.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _metamorphic_systems import case, mm_suite, transform, write_labels

import oloproof_nb as op
from oloproof_nb._config.labels import load_labels, same_name
from oloproof_nb._core.labels import pair_labels
from oloproof_nb.cli import main
from oloproof_nb.errors import LabelFileError

KNOWN = {"c1~t", "c2~t", "caf\u00e9~t"}


def _file(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("second", ["Bob", "bob ", " BOB", "bob\u00a0", "bob\u200b", "\uff42\uff4f\uff42",
                                    "bob\u200d", "bob\u200c", "\u061cbob"])  # a joiner, a non-joiner, a letter mark
def test_a_labeler_written_otherwise_judges_a_pair_once(tmp_path: Path, second: str) -> None:
    # bob judged c1~t invalid twice under two spellings, ana valid: counted as two people, 2 to 1 invalid
    rows = [{"case_id": "c1~t", "valid": True, "labeler": "ana"},
            {"case_id": "c1~t", "valid": False, "labeler": "bob"},
            {"case_id": "c1~t", "valid": False, "labeler": second}]
    assert pair_labels(rows) == {"c1~t": "invalid"}  # what the file said, read as three labelers
    with pytest.raises(LabelFileError) as info:
        load_labels(_file(tmp_path, rows), KNOWN, "t")
    assert info.value.line == 3
    assert f"labeler {second!r} already judged 'c1~t' at line 2 (written 'bob' there)" in str(info.value)


def test_one_labeler_on_two_pairs_and_blank_names_are_still_accepted(tmp_path: Path) -> None:
    rows = [{"case_id": "c1~t", "valid": True, "labeler": "Bob"}, {"case_id": "c2~t", "valid": False, "labeler": "bob"},
            {"case_id": "c1~t", "valid": False, "labeler": "bo"},  # another name: another labeler
            {"case_id": "c1~t", "valid": True, "labeler": " "}, {"case_id": "c1~t", "valid": True, "labeler": ""}]
    got = load_labels(_file(tmp_path, rows), KNOWN, "t")
    assert [j["labeler"] for j in got] == ["Bob", "bob", "bo", " ", ""]  # kept as written
    assert pair_labels(got) == {"c1~t": "valid", "c2~t": "invalid"}  # 3 valid to 1 invalid, counted by hand


def test_same_name() -> None:
    assert same_name("  Ana\u00a0 Lu\u200b ") == "ana lu" == same_name("ANA LU")
    assert same_name("cafe\u0301") == same_name("caf\u00e9") and same_name("bo") != same_name("bob")


@pytest.mark.parametrize(("written", "known"), [
    ("cafe\u0301~t", "caf\u00e9~t"),  # a decomposed accent: the error showed the two ids alike
    ("c1~t ", "c1~t"), ("C1~t", "c1~t"), ("c1\u200b~t", "c1~t"),
])
def test_a_label_id_that_reads_as_a_copy_is_named(tmp_path: Path, written: str, known: str) -> None:
    with pytest.raises(LabelFileError) as info:
        load_labels(_file(tmp_path, [{"case_id": written, "valid": True}]), KNOWN, "t")
    message = str(info.value)
    assert "is not a derived case of transform 't'" in message
    assert f"it reads as {known!r}, a derived case of this suite" in message and "\n" not in message


@pytest.mark.parametrize(("written", "known"), [("C1~t", "c1~t"), ("c1~T", "c1~t"), ("c1~t ", "c1~t")])
def test_a_label_id_that_reads_as_a_copy_is_told_only_that(tmp_path: Path, written: str, known: str) -> None:
    """One piece of advice: the copy it reads as. The guess at what else it names ("the suite has no case 'C1' …
    take its line out", "it names case 'c1' under transform 'T'") told the labeler to drop a judgement of a copy the
    suite holds, beside the clause saying to copy its id."""
    with pytest.raises(LabelFileError) as info:
        load_labels(_file(tmp_path, [{"case_id": written, "valid": True}]), KNOWN, "t")
    assert str(info.value) == (f"{tmp_path / 't.jsonl'}: line 1: case id {written!r} is not a derived case of "
                               f"transform 't' of this suite; it reads as {known!r}, a derived case of this suite, but "
                               "differs from it only in case, width, blank space, invisible characters or how an "
                               "accent is encoded: copy the id as run.cases shows it")


def test_an_id_like_no_copy_gets_no_hint(tmp_path: Path) -> None:
    with pytest.raises(LabelFileError) as info:
        load_labels(_file(tmp_path, [{"case_id": "c9~t", "valid": True}]), KNOWN, "t")
    assert "reads as" not in str(info.value)


def test_a_suite_whose_labeler_judged_twice_is_refused_before_anything_runs(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = mm_suite(make_suite, [case("c1"), case("c2")], [transform("t", "!state")],
                    [{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}])
    label_file = write_labels(root, "t", [{"case_id": "c1~t", "valid": True, "labeler": "ana"},
                                          {"case_id": "c2~t", "valid": True, "labeler": "ana"},
                                          {"case_id": "c1~t", "valid": False, "labeler": "Ana "}])
    before = label_file.read_bytes()
    assert main(["run", str(root), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 3: labeler 'Ana ' already judged 'c1~t' at line 1" in err[0]
    assert "Traceback" not in err[0] and label_file.read_bytes() == before and not (tmp_path / "run").exists()
    with pytest.raises(LabelFileError):
        op.load_suite(root)


def test_another_fault_of_the_line_is_said_without_the_hint(tmp_path: Path) -> None:
    with pytest.raises(LabelFileError) as info:
        load_labels(_file(tmp_path, [{"case_id": "C1~t", "valid": "yes"}]), KNOWN, "t")
    assert "'valid' must be true or false" in str(info.value) and "reads as" not in str(info.value)
