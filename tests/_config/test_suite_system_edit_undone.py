"""A suite loaded before its system's module was edited, loaded again, and the edit undone is refused
saying to load the suite again, not to restart the process.

``Suite.system_edited`` reads the modules the system's code imports *by name* (``stale_import``): after a second load
the suite folder's module of that name is the second load's, whose code is the edit, so the first suite, whose file
holds its code again, was refused with "Python keeps that import (a package, a dotted module, ...) ... restart the
process (in a notebook: the kernel)". A new load imports the file again, and runs: no restart is needed. The first
suite stays refused: run, it would record the code fingerprint of the second load's module (fdee… for the edit where
its own code gives 9268…; found by letting it run), under which its replays would be cached.
Module names are this file's own (Python keeps one module of a name per process).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

YES = '''class Desk:
    version = "desk-f53"

    def reset(self, state):
        pass

    def snapshot(self):
        return {}

    def run(self, input):
        return {"steps": [], "answer": "yes", "status": "completed"}
'''
NO = YES.replace('"yes"', '"no"')


def _suite(make_suite: Callable[..., Path], module: str, folder: str) -> Path:
    """3 cases expecting ``yes`` (distinct inputs), the desk in ``<module>.py``: every case passes."""
    root = make_suite([{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "yes"}} for i in range(3)],
                      evaluators=[{"type": "answer_matches"}], system=f"{module}:Desk", system_code="",
                      folder=folder)
    (root / f"{module}.py").write_text(YES, encoding="utf-8")
    return root


def _fingerprint(run: op.Run) -> str | None:
    return run.manifest.code_fingerprint


def test_a_suite_whose_system_file_was_edited_and_restored_is_reloaded_not_restarted(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Edit the desk, load the suite again, undo the edit: the first suite is refused naming the file and saying to
    load the suite again (no restart); the new load runs (3 of 3 pass) under the fingerprint a run of that code had
    before the edit. The second suite, holding the edit, is refused as before."""
    root = _suite(make_suite, "f53desk_a", "a")
    desk = root / "f53desk_a.py"
    first = op.load_suite(root)
    before = _fingerprint(op.run(first, out=tmp_path / "before", progress=False))
    desk.write_text(NO, encoding="utf-8")
    second = op.load_suite(root)
    desk.write_text(YES, encoding="utf-8")
    for n, suite in enumerate((first, second)):
        assert suite.system_edited() == (desk, False)
        with pytest.raises(ConfigError) as info:
            op.run(suite, out=tmp_path / f"refused{n}", progress=False)
        assert info.value.key == "system"
        assert f"{desk} changed since this suite was loaded" in str(info.value)
        assert "load the suite again (op.load_suite;" in str(info.value)
        assert "restart the process (in a notebook: the kernel) and" not in str(info.value)
        assert not (tmp_path / f"refused{n}").exists()
    run = op.run(op.load_suite(root), out=tmp_path / "again", progress=False)
    assert list(run.verdicts["verdict"]) == ["pass"] * 3
    assert _fingerprint(run) == before


def test_an_executor_worker_loads_the_restored_suite_again(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The same suite folder on a ``ThreadPoolExecutor`` (its worker is this process, and loads the suite itself):
    the suite loaded after the undo runs there, 3 of 3 pass."""
    root = _suite(make_suite, "f53desk_b", "b")
    desk = root / "f53desk_b.py"
    op.load_suite(root)
    desk.write_text(NO, encoding="utf-8")
    op.load_suite(root)
    desk.write_text(YES, encoding="utf-8")
    with ThreadPoolExecutor(max_workers=2) as pool:
        run = op.run(op.load_suite(root), out=tmp_path / "run", executor=pool, chunk_size=1, progress=False)
    assert list(run.verdicts["verdict"]) == ["pass"] * 3


def test_a_helper_the_system_imports_edited_after_both_loads_still_refuses_both(make_suite: Callable[..., Path],
                                                                                tmp_path: Path) -> None:
    """A module of the suite folder the desk takes its answer from, edited after both loads: Python keeps it, so
    both suites are refused naming it and saying to restart; the edit undone, the first runs (3 of 3 pass)."""
    root = _suite(make_suite, "f53desk_c", "c")
    helper = root / "f53rules_c.py"
    helper.write_text('ANSWER = "yes"\n', encoding="utf-8")
    (root / "f53desk_c.py").write_text("from f53rules_c import ANSWER\n\n" + YES.replace('"yes"', "ANSWER"),
                                       encoding="utf-8")
    first = op.load_suite(root)
    second = op.load_suite(root)
    helper.write_text('ANSWER = "no"\n', encoding="utf-8")
    for n, suite in enumerate((first, second)):
        assert suite.system_edited() == (helper, True)
        with pytest.raises(ConfigError, match="f53rules_c.py changed since the system was imported from it.*restart"):
            op.run(suite, out=tmp_path / f"run{n}", progress=False)
    helper.write_text('ANSWER = "yes"\n', encoding="utf-8")
    assert list(op.run(first, out=tmp_path / "undone", progress=False).verdicts["verdict"]) == ["pass"] * 3


def test_a_suite_loaded_without_its_system_refuses_a_helper_python_kept(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    """``load_suite(import_system_now=False)`` after a helper of the desk was edited: Python keeps the helper as
    imported, so ``op.run`` ran the old desk (3 of 3 pass where the helper now answers ``no``) without a word, where
    the same folder loaded at once is refused naming the helper and the restart (README: "op.load_suite and op.run
    refuse it"). Now the run is refused the same way, before anything is written."""
    root = _suite(make_suite, "f53desk_d", "d")
    helper = root / "f53rules_d.py"
    helper.write_text('ANSWER = "yes"\n', encoding="utf-8")
    (root / "f53desk_d.py").write_text("from f53rules_d import ANSWER\n\n" + YES.replace('"yes"', "ANSWER"),
                                       encoding="utf-8")
    assert list(op.run(op.load_suite(root), out=tmp_path / "before", progress=False).verdicts["verdict"]) == \
        ["pass"] * 3
    helper.write_text('ANSWER = "no"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="f53rules_d.py changed since the system was imported from it.*restart"):
        op.load_suite(root)
    lazy = op.load_suite(root, import_system_now=False)
    with pytest.raises(ConfigError) as info:
        op.run(lazy, out=tmp_path / "lazy", progress=False)
    assert info.value.key == "system"
    assert f"{helper} changed since the system was imported from it" in str(info.value)
    assert "restart the process (in a notebook: the kernel)" in str(info.value)
    assert not (tmp_path / "lazy").exists()
