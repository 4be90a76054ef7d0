"""``cases: ""`` in oloproof.yaml is refused by its key.

Before, the empty name was joined to the suite folder, and the error named the folder itself
(``.: cannot read the case file: is a directory, not a regular file``), not oloproof.yaml nor its ``cases`` key.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb.cli import main


def test_an_empty_cases_name_is_refused_naming_the_file_and_key(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "oloproof.yaml").write_text(
        'name: s\nsystem: desk:Desk\ncases: ""\nevaluators:\n  - {type: answer_matches}\n', encoding="utf-8")
    (folder / "desk.py").write_text("class Desk:\n    def run(self, input):\n        return {'answer': 'ok'}\n",
                                    encoding="utf-8")
    (folder / "cases.jsonl").write_text('{"id": "c1", "input": {}, "expected": {"answer": "ok"}}\n', encoding="utf-8")
    code = main(["run", str(folder)])
    out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "oloproof.yaml: cases:" in lines[0] and "at least 1 character" in lines[0]
    assert "is a directory" not in err and "Traceback" not in err + out
