"""A user's file that holds the wrong kind of thing is refused in the file's words, not Python's.

A mutation fuzzer run over the example suites' files found every mutant refused on one line, exit 2,
but some lines said what the file held by its Python type: ``cases.jsonl: line 1: expected a JSON object, got
NoneType`` for a line ``null``, ``got str``, ``got list``; ``oloproof.yaml: must be a mapping of keys to values, got
int``; ``a contract file must be a JSON object, got list``; and an evaluator written without ``type`` was
``evaluators[0].type: unknown evaluator type None`` (the key is missing, and YAML's word is ``null``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from oloproof_nb.cli import main
from oloproof_nb.evaluators import EVALUATORS

PYTHON_WORDS = ("NoneType", "None", "got str", "got int", "got list", "got dict", "got bool", "got float")
CASE = {"id": "c1", "input": {"message": "hi"}, "initial_state": {"n": 1}, "expected": {"state": {"n": 1}}}
#: The evaluator types the refusal lists: the registry's, read when the test runs (the built-in ones, and any
#: another test registers in code for itself).
ALLOWED = "allowed: {}"
BUILT_IN = {"answer_matches", "fault_recovery", "metamorphic_relation", "outcome_contract", "python", "state_matches",
            "state_unchanged"}


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one stderr line of a command that must exit 2; it never speaks Python."""
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert not any(word in lines[0] for word in PYTHON_WORDS), lines[0]
    return lines[0]


@pytest.mark.parametrize(("line", "kind"), [
    ("null", "null"), ('"x"', "a string ('x')"), ("true", "true"), ("[1, 2]", "a list"), ("7", "a number (7)"),
])
def test_a_case_line_that_is_no_object_says_what_it_is(make_suite: Callable[..., Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str], line: str,
                                                       kind: str) -> None:
    folder = make_suite([CASE])
    (folder / "cases.jsonl").write_text(line + "\n" + json.dumps(CASE) + "\n", encoding="utf-8")
    error = _refused(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert error.endswith(f"{folder / 'cases.jsonl'}: line 1: expected a JSON object, got {kind}")


@pytest.mark.parametrize(("text", "kind"), [("- a\n- b\n", "a list"), ("42\n", "a number (42)"),
                                            ("yes\n", "true"), ("hello\n", "a string ('hello')")])
@pytest.mark.parametrize("name", ["oloproof.yaml", "release.yaml"])
def test_a_yaml_file_that_is_no_mapping_says_what_it_is(make_suite: Callable[..., Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str], text: str, kind: str,
                                                        name: str) -> None:
    folder = make_suite([CASE], release={"criteria": {"state_matches": 0.5}})
    (folder / name).write_text(text, encoding="utf-8")
    error = _refused(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert error.endswith(f"{folder / name}: must be a mapping of keys to values, got {kind}")


@pytest.mark.parametrize(("evaluator", "words"), [
    ({"criterion": "x"}, f"evaluators[0].type: is required; {ALLOWED}"),
    ({"type": None}, f"evaluators[0].type: unknown evaluator type null; {ALLOWED}"),
    ({"type": False}, f"evaluators[0].type: unknown evaluator type false; {ALLOWED}"),
])
def test_an_evaluator_without_a_type_says_the_key_is_required(make_suite: Callable[..., Path], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              evaluator: dict[str, object], words: str) -> None:
    folder = make_suite([CASE], evaluators=[evaluator])
    error = _refused(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert BUILT_IN <= set(EVALUATORS)
    assert error.endswith(f"{folder / 'oloproof.yaml'}: {words.format(', '.join(sorted(EVALUATORS)))}")


def test_a_label_line_that_is_no_object_says_what_it_is(make_suite: Callable[..., Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    transform = {"name": "t", "field": "message", "template": "{value} X", "validity_labels": "labels.jsonl",
                 "minimum_validity": 0.5}
    folder = make_suite([CASE], metamorphic={"transforms": [transform]},
                        evaluators=[{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}])
    (folder / "labels.jsonl").write_text("null\n", encoding="utf-8")
    error = _refused(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert str(folder / "labels.jsonl") in error and "line 1" in error
    assert error.endswith("got null")


def test_a_case_outcome_that_is_no_object_says_what_it_is(make_suite: Callable[..., Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite([{**CASE, "outcome": "report.json"}], evaluators=[{"type": "outcome_contract"}])
    error = _refused(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert str(folder / "cases.jsonl") in error and "line 1" in error
    assert error.endswith("got a string ('report.json')")


@pytest.mark.parametrize(("text", "kind"), [("[1]", "a list"), ("null", "null"), ('"c"', "a string ('c')")])
def test_a_contract_file_that_is_no_object_says_what_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           text: str, kind: str) -> None:
    contract = tmp_path / "contract.json"
    contract.write_text(text, encoding="utf-8")
    error = _refused(["receipt", str(contract)], capsys)
    assert error.endswith(f"{contract}: a contract file must be a JSON object, got {kind}")
    assert contract.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(("value", "word"), [(None, "null"), (True, "true")])
def test_a_case_id_or_label_id_of_the_wrong_kind_is_quoted_as_written(make_suite: Callable[..., Path],
                                                                      tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      value: object, word: str) -> None:
    """``'id' must be a non-empty string, got None`` (or ``True``) for ``"id": null``: said as the file says it."""
    folder = make_suite([CASE])
    (folder / "cases.jsonl").write_text(json.dumps({**CASE, "id": value}) + "\n", encoding="utf-8")
    error = _refused(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert error.endswith(f"{folder / 'cases.jsonl'}: line 1: 'id' must be a non-empty string, got {word}")
    transform = {"name": "t", "field": "message", "template": "{value} X", "validity_labels": "labels.jsonl",
                 "minimum_validity": 0.5}
    labeled = make_suite([CASE], metamorphic={"transforms": [transform]},
                         evaluators=[{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}])
    (labeled / "labels.jsonl").write_text(json.dumps({"case_id": value, "valid": True}) + "\n", encoding="utf-8")
    error = _refused(["run", str(labeled), "--out", str(tmp_path / "out2"), "--quiet"], capsys)
    assert error.endswith(f"{labeled / 'labels.jsonl'}: line 1: 'case_id' must be a non-empty string, got {word}")


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_byte_not_utf8_in_a_label_file_names_its_line(make_suite: Callable[..., Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str], bom: bytes) -> None:
    """The case file names the line of a byte that is not UTF-8; the label file named none (it is read whole)."""
    transform = {"name": "t", "field": "message", "template": "{value} X", "validity_labels": "labels.jsonl",
                 "minimum_validity": 0.5}
    folder = make_suite([CASE], metamorphic={"transforms": [transform]},
                        evaluators=[{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}])
    good = json.dumps({"case_id": "c1~t", "valid": True}).encode()
    data = bom + b"\n" + good + b"\n" + b'{"case_id": "c1~t", "valid": true, "note": "caf\xe9"}\n'
    (folder / "labels.jsonl").write_bytes(data)
    error = _refused(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert error.endswith(f"{folder / 'labels.jsonl'}: line 3: not UTF-8 text (invalid continuation byte)")
    assert (folder / "labels.jsonl").read_bytes() == data


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_byte_not_utf8_in_a_yaml_or_contract_file_names_its_line(make_suite: Callable[..., Path], tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   bom: bytes) -> None:
    """oloproof.yaml said only ``at byte 814``, a contract file not even that."""
    folder = make_suite([CASE])
    yaml_file = folder / "oloproof.yaml"
    data = bom + yaml_file.read_bytes().replace(b"name: tiny", b"name: tiny\xff", 1)
    yaml_file.write_bytes(data)
    byte = data.index(b"\xff")
    line = 1 + data[:byte].count(b"\n")
    error = _refused(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    # the byte as the file holds it (xxd's offset), a byte-order mark counted: it said 3 less after one
    assert error.endswith(f"{yaml_file}: cannot read: not UTF-8 text (invalid start byte at line {line}, byte "
                          f"{byte})")
    assert yaml_file.read_bytes() == data
    contract = tmp_path / "contract.json"
    contract.write_bytes(bom + b'{"artifact_id": "a",\n "locator": "r\xe9.json",\n "run_started_at": "2026-01-01"}')
    error = _refused(["receipt", str(contract)], capsys)
    assert error.endswith(f"{contract}: contract file is not UTF-8 text (invalid continuation byte at line 2, "
                          f"byte {len(bom) + 35})")  # counted by hand: the BOM's 3, 21 bytes of line 1, then 14
