"""``--out`` below a symbolic link that leads through a file (``link -> notes.txt/x``). The line named
the link "a file", which it is not (``ls`` shows a link; ``cat`` says "Not a directory"); it now says where the link
points. Pins ``file_above``'s ``is_symlink`` too (without it the line named no file at all)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import RunDirError


def _suite(folder: Path) -> Path:
    folder.mkdir()
    (folder / "m55desk_s.py").write_text('class Desk:\n    version = "d"\n\n    def run(self, input):\n'
                                         '        return {"steps": [], "answer": "ok"}\n', encoding="utf-8")
    (folder / "oloproof.yaml").write_text("name: m55\nsystem: m55desk_s:Desk\nevaluators:\n"
                                          "  - {type: answer_matches}\n", encoding="utf-8")
    (folder / "cases.jsonl").write_text(json.dumps({"id": "c0", "input": {"q": "x"}, "expected": {"answer": "ok"}})
                                        + "\n", encoding="utf-8")
    return folder


def test_out_below_a_link_through_a_file_names_the_link_and_where_it_points(tmp_path: Path) -> None:
    suite = op.load_suite(_suite(tmp_path / "s"))
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "link").symlink_to("notes.txt/x")
    out = tmp_path / "link" / "r1"
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, progress=False)
    # before: "…/link is a file, not a folder"
    assert str(caught.value) == (f"{out}: cannot create the run directory: {tmp_path / 'link'} is a symbolic link to "
                                 "'notes.txt/x', which is not a folder; choose another out=")
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert (tmp_path / "link").is_symlink() and not (tmp_path / "notes.txt").is_dir()


def test_out_below_a_link_to_a_file_names_the_link(tmp_path: Path) -> None:
    """A link that resolves to a file (``link -> notes.txt``): named as a link to it as well."""
    suite = op.load_suite(_suite(tmp_path / "s"))
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "link").symlink_to("notes.txt")
    out = tmp_path / "link" / "r1"
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, progress=False)
    assert str(caught.value) == (f"{out}: cannot create the run directory: {tmp_path / 'link'} is a symbolic link to "
                                 "'notes.txt', which is not a folder; choose another out=")
