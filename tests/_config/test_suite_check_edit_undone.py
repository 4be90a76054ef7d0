"""A suite loaded before its check's module was edited, loaded again, and the edit undone:
the first suite runs, for its file holds the code it imported again, and a suite whose file holds other code is
still refused. Module names are this file's own (Python keeps one module of a name per process)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

DESK = '''class Desk:
    version = "desk"

    def run(self, input):
        return {"steps": [], "answer": "no", "status": "completed"}
'''

ACCEPT_ALL = "def answer_ok(case, initial_state, final_state, trajectory):\n    return True\n"
REFUSE_ALL = ACCEPT_ALL.replace("True", "False")


def _suite(make_suite: Callable[..., Path], prefix: str) -> Path:
    """A suite of 3 cases whose python check is ``<prefix>_checks:answer_ok`` (every case passes)."""
    root = make_suite([{"id": f"c{i}", "input": {"n": i}} for i in range(3)],
                      evaluators=[{"type": "python", "name": "answer_ok", "check": f"{prefix}_checks:answer_ok"}],
                      system="sysmod:Desk", system_code=DESK, folder=prefix)
    (root / f"{prefix}_checks.py").write_text(ACCEPT_ALL, encoding="utf-8")
    return root


def test_a_suite_whose_check_file_holds_its_code_again_runs(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Edit the check, load the suite again, undo the edit: the first suite's check is the file's code again and
    its run judges with it (3 of 3 pass, as the file says); before, it was refused as edited, for the module of
    that name was the second load's (``suite_imports`` by name), whose digest the file no longer had. The second
    suite, which holds the edited check (every case fails), is refused now that the file holds the first code."""
    root = _suite(make_suite, "f51a")
    check = root / "f51a_checks.py"
    first = op.load_suite(root)
    check.write_text(REFUSE_ALL, encoding="utf-8")
    second = op.load_suite(root)
    check.write_text(ACCEPT_ALL, encoding="utf-8")
    run = op.run(first, out=tmp_path / "first", progress=False)
    assert list(run.verdicts["verdict"]) == ["pass"] * 3
    with pytest.raises(ConfigError) as info:
        op.run(second, out=tmp_path / "second", progress=False)
    assert info.value.key == "evaluators[0].check"
    assert f"{check} changed since this suite was loaded" in str(info.value)
    assert not (tmp_path / "second").exists()


def test_a_suite_whose_check_file_was_edited_and_loaded_again_is_refused(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    """The edit kept (the file holds the second load's code): the first suite is refused, naming the file, and
    nothing is written; the second suite runs with the edited check (3 of 3 fail)."""
    root = _suite(make_suite, "f51b")
    check = root / "f51b_checks.py"
    first = op.load_suite(root)
    check.write_text(REFUSE_ALL, encoding="utf-8")
    second = op.load_suite(root)
    with pytest.raises(ConfigError) as info:
        op.run(first, out=tmp_path / "first", progress=False)
    assert info.value.key == "evaluators[0].check"
    assert f"{check} changed since this suite was loaded" in str(info.value)
    assert not (tmp_path / "first").exists()
    run = op.run(second, out=tmp_path / "second", progress=False)
    assert list(run.verdicts["verdict"]) == ["fail"] * 3


def test_a_helper_the_check_imports_edited_after_a_second_load_refuses_both(make_suite: Callable[..., Path],
                                                                            tmp_path: Path) -> None:
    """A helper module of the suite folder the check takes its verdict from, edited after both loads: both suites
    hold the code imported before (Python keeps the helper), so both are refused naming the helper; undone, the
    first runs (3 of 3 pass)."""
    root = _suite(make_suite, "f51c")
    helper = root / "f51c_rules.py"
    helper.write_text("VERDICT = True\n", encoding="utf-8")
    (root / "f51c_checks.py").write_text(
        "from f51c_rules import VERDICT\n\n\ndef answer_ok(case, initial_state, final_state, trajectory):\n"
        "    return VERDICT\n", encoding="utf-8")
    first = op.load_suite(root)
    second = op.load_suite(root)
    helper.write_text("VERDICT = False\n", encoding="utf-8")
    for n, suite in enumerate((first, second)):
        with pytest.raises(ConfigError, match="f51c_rules.py changed since this suite was loaded"):
            op.run(suite, out=tmp_path / f"run{n}", progress=False)
    helper.write_text("VERDICT = True\n", encoding="utf-8")
    assert list(op.run(first, out=tmp_path / "undone", progress=False).verdicts["verdict"]) == ["pass"] * 3
