"""``Suite.system_edited`` and ``Suite.resolve_system``: a suite folder reached through a
symbolic link, and a lazily imported system whose class lives in a module outside the suite folder.

Module names are this file's own (Python keeps one module of a name per process).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

DESK = '''class Desk:
    version = "desk-f54"

    def run(self, input):
        return {"steps": [], "answer": "yes", "status": "completed"}
'''
NO = DESK.replace('"yes"', '"no"')


def _suite(root: Path, system: str) -> Path:
    """2 cases expecting ``yes`` (distinct inputs), judged by ``answer_matches``, with ``system:`` as given."""
    root.mkdir(parents=True)
    (root / "cases.jsonl").write_text("".join(json.dumps({"id": f"c{i}", "input": {"n": i},
                                                          "expected": {"answer": "yes"}}) + "\n" for i in range(2)),
                                      encoding="utf-8")
    (root / "oloproof.yaml").write_text(f"name: f54\nsystem: {system}\nevaluators:\n  - type: answer_matches\n",
                                        encoding="utf-8")
    return root


def test_a_suite_reached_through_a_link_says_load_again_for_its_own_module(tmp_path: Path) -> None:
    """Loaded through a link to its folder, the system's own top-level module edited: the file the system was
    imported from is the link's path, the suite's own module the resolved one; they are one file, so the suite says
    to load it again (no restart), and the new load runs the edit (the desk now answers no: 0 of 2 pass)."""
    real = _suite(tmp_path / "real", "f54desk_link:Desk")
    desk = real / "f54desk_link.py"
    desk.write_text(DESK, encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    suite = op.load_suite(link)
    desk.write_text(NO, encoding="utf-8")
    edited = suite.system_edited()
    assert edited is not None
    assert os.path.realpath(edited[0]) == os.path.realpath(desk) and edited[1] is False
    with pytest.raises(ConfigError) as info:
        op.run(suite, out=tmp_path / "refused", progress=False)
    assert "changed since this suite was loaded" in str(info.value)
    assert "load the suite again (op.load_suite;" in str(info.value)
    assert "restart the process (in a notebook: the kernel) and" not in str(info.value)
    run = op.run(op.load_suite(link), out=tmp_path / "again", progress=False)
    assert list(run.verdicts["verdict"]) == ["fail", "fail"]


def test_a_lazily_imported_system_whose_class_lives_outside_the_folder_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's module takes its class from a module outside the suite folder (on the path), which Python keeps:
    edited after a load, ``load_suite`` refuses the folder, and so must a suite loaded with
    ``import_system_now=False`` (its check of the suite folder's own modules does not see a file outside it); before
    the run writes anything. Without the check, 2 of 2 passed on the old class where the file now answers no."""
    lib = tmp_path / "lib"
    lib.mkdir()
    monkeypatch.syspath_prepend(str(lib))
    outside = lib / "f54out_desk.py"
    outside.write_text(DESK, encoding="utf-8")
    root = _suite(tmp_path / "suite", "f54agent_out:Desk")
    (root / "f54agent_out.py").write_text("from f54out_desk import Desk\n", encoding="utf-8")
    op.load_suite(root)
    outside.write_text(NO, encoding="utf-8")
    with pytest.raises(ConfigError, match="f54out_desk.py changed since the system was imported from it"):
        op.load_suite(root)
    lazy = op.load_suite(root, import_system_now=False)
    with pytest.raises(ConfigError) as info:
        op.run(lazy, out=tmp_path / "lazy", progress=False)
    assert info.value.key == "system"
    assert f"{outside} changed since the system was imported from it" in str(info.value)
    assert "restart the process (in a notebook: the kernel)" in str(info.value)
    assert not (tmp_path / "lazy").exists()
