"""A run folder given below a file (``notes.txt/r1``): nothing can be there, and the line says which part is a file.

Loading it said ``no such run directory``, the command line ``no such file or folder`` and a resume ``no run to
resume (no such folder); start the run without resume=True`` (which fails too): the user, who sees ``notes.txt``
there, looked for a folder of that name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.errors import RunDirError


def _suite(folder: Path) -> Path:
    folder.mkdir()
    (folder / "pathdesk.py").write_text('class Desk:\n    version = "d"\n\n    def run(self, input):\n'
                                        '        return {"steps": [], "answer": "ok"}\n', encoding="utf-8")
    (folder / "oloproof.yaml").write_text("name: paths\nsystem: pathdesk:Desk\nevaluators:\n"
                                          "  - {type: answer_matches}\n", encoding="utf-8")
    (folder / "cases.jsonl").write_text(json.dumps({"id": "c0", "input": {"q": "x"}, "expected": {"answer": "ok"}})
                                        + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("mine\n", encoding="utf-8")
    return path


def test_a_run_folder_below_a_file_says_the_path_goes_through_it(notes: Path) -> None:
    below = notes / "r1"
    with pytest.raises(RunDirError) as caught:
        op.load_run(below)
    assert str(caught.value) == (f"{below}: no run directory can be there: {notes} is a file, not a folder; give a "
                                 "run directory (it holds manifest.json and cases.jsonl)")
    assert notes.read_text(encoding="utf-8") == "mine\n"


def test_a_resume_below_a_file_says_so(tmp_path: Path, notes: Path) -> None:
    suite = op.load_suite(_suite(tmp_path / "s"))
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=notes / "r1", resume=True, progress=False)
    assert str(caught.value) == (f"{notes / 'r1'}: no run to resume: {notes} is a file, not a folder; choose another "
                                 "out=")
    assert notes.read_text(encoding="utf-8") == "mine\n"


def test_the_command_line_says_it_in_one_line_exit_2(tmp_path: Path, notes: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = op.run(op.load_suite(_suite(tmp_path / "s")), progress=False)
    below = str(notes / "r1")
    for args, said in ((["gate", below], f"{below}: nothing can be there: {notes} is a file, not a folder; give a run "
                                         "directory, a suite folder or Inspect AI logs"),
                       (["compare", str(run.directory), below], f"{below}: nothing can be there: {notes} is a file, "
                                                                "not a folder; give a run directory or a suite folder"),
                       (["gate", str(run.directory), "--baseline", below], f"{below}: no run directory can be there: "
                                                                           f"{notes} is a file, not a folder")):
        assert main(args) == 2, args
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1 and said in err, (args, err)
