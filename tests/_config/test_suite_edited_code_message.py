"""Mutants of ``Suite._refuse_edited_code`` the nearest tests let through: what the refusal of an
edited check says to do, and which key of oloproof.yaml it names. Module names are this file's own (Python keeps
one module of a name per process)."""

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


def _suite(make_suite: Callable[..., Path], prefix: str, checks: int) -> Path:
    """A suite of 2 cases whose ``checks`` python evaluators all name ``<prefix>_checks:answer_ok``."""
    evaluators = [{"type": "python", "name": f"answer_ok_{i}", "check": f"{prefix}_checks:answer_ok"}
                  for i in range(checks)]
    root = make_suite([{"id": f"c{i}", "input": {"n": i}} for i in range(2)], evaluators=evaluators,
                      system="sysmod:Desk", system_code=DESK, folder=prefix)
    (root / f"{prefix}_checks.py").write_text(ACCEPT_ALL, encoding="utf-8")
    return root


def test_an_edited_top_level_check_module_says_load_the_suite_again(make_suite: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    """The check's own top-level module of the suite folder is imported again by a new load, so the refusal says
    to load the suite again, not to restart the process (the exact text; ``reloads`` in ``_refuse_edited_code``)."""
    root = _suite(make_suite, "m52a", 1)
    suite = op.load_suite(root)
    (root / "m52a_checks.py").write_text(ACCEPT_ALL.replace("True", "False"), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        op.run(suite, out=tmp_path / "stale", progress=False)
    assert str(info.value) == (
        f"{root / 'oloproof.yaml'}: evaluators[0].check: {root / 'm52a_checks.py'} changed since this suite was "
        "loaded, and the suite holds m52a_checks:answer_ok as it was imported then: a run would judge with the old "
        "code; load the suite again (op.load_suite) and run that one")
    assert not (tmp_path / "stale").exists()
    run = op.run(op.load_suite(root), out=tmp_path / "again", progress=False)  # what the message says works
    assert list(run.verdicts["verdict"]) == ["fail"] * 2


def test_a_check_two_evaluators_name_is_refused_under_the_last_key(make_suite: Callable[..., Path],
                                                                   tmp_path: Path) -> None:
    """Two evaluators name one check: the refusal names the last one's key, as ``_code_keys`` documents."""
    root = _suite(make_suite, "m52b", 2)
    suite = op.load_suite(root)
    (root / "m52b_checks.py").write_text(ACCEPT_ALL.replace("True", "False"), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        op.run(suite, out=tmp_path / "stale", progress=False)
    assert info.value.key == "evaluators[1].check"


def test_a_check_taken_from_a_module_outside_the_suite_edited_after_load_is_refused(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's checks module takes its function from a module installed outside the suite folder, which
    ``stale_import`` (the suite folder's own modules) does not read: ``stale_function`` sees that file changed
    since the load. The run judged with the code imported then (2 of 2 passes where the edited check fails both)
    without it; the refusal says restart (a new load keeps the import)."""
    outside = tmp_path / "installed"
    outside.mkdir()
    (outside / "m52c_lib.py").write_text(ACCEPT_ALL, encoding="utf-8")
    monkeypatch.syspath_prepend(str(outside))
    root = _suite(make_suite, "m52c", 1)
    (root / "m52c_checks.py").write_text("from m52c_lib import answer_ok\n", encoding="utf-8")
    suite = op.load_suite(root)
    (outside / "m52c_lib.py").write_text(ACCEPT_ALL.replace("True", "False"), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        op.run(suite, out=tmp_path / "stale", progress=False)
    assert info.value.key == "evaluators[0].check"
    assert info.value.message.startswith(f"{outside / 'm52c_lib.py'} changed since this suite was loaded")
    assert "restart the process (in a notebook: the kernel)" in info.value.message
    assert not (tmp_path / "stale").exists()


def test_a_suite_loaded_through_a_symlinked_folder_says_load_the_suite_again(make_suite: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    """Loaded through a symlink, the suite's root is the folder resolved while Python names the module by the link
    (``link/m52d_checks.py``): the edited file is still the check's own top-level module, which a new load imports
    again (compared resolved), so the refusal says to load the suite again, not to restart."""
    root = _suite(make_suite, "m52d", 1)
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    suite = op.load_suite(link)
    (link / "m52d_checks.py").write_text(ACCEPT_ALL.replace("True", "False"), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        op.run(suite, out=tmp_path / "stale", progress=False)
    assert info.value.message.endswith("a run would judge with the old code; load the suite again (op.load_suite) "
                                       "and run that one")
