"""A suite loaded before its checks' code was edited is refused at ``op.run``, as its system is.

Before, ``op.run(suite)`` on a Suite loaded before ``checks.py`` or a helper module it imports was edited
judged with the code imported at load, 4 of 4 passes where the edited check fails every case, without a word (the
refusal came only at the next ``load_suite``). Module names are this file's own: Python keeps one module of a name
per process, whichever suite folder imported it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

DESK = '''import copy


class Desk:
    version = "desk"

    def reset(self, state):
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        return {"steps": [], "answer": "no", "status": "completed"}
'''

LOOSE, STRICT = 'ACCEPT = {"ok", "no"}\n', 'ACCEPT = {"ok"}\n'


def _suite(make_suite: Callable[..., Path], prefix: str, check: str, helper: str = LOOSE) -> Path:
    root = make_suite([{"id": f"c{i}", "input": {"n": i}} for i in range(4)],
                      evaluators=[{"type": "python", "name": "answer_ok", "check": f"{prefix}_checks:answer_ok"}],
                      system="sysmod:Desk", system_code=DESK, folder=prefix)
    (root / f"{prefix}_accept.py").write_text(helper, encoding="utf-8")
    (root / f"{prefix}_checks.py").write_text(check, encoding="utf-8")
    return root


def _passes(run: op.Run) -> int:
    return int((run.verdicts["verdict"] == "pass").sum())


def test_a_helper_edited_after_load_suite_stops_the_run_before_it_writes(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    check = "from ec1_accept import ACCEPT\n\n\ndef answer_ok(case, initial_state, final_state, trajectory):\n" \
            "    return trajectory.answer in ACCEPT\n"
    root = _suite(make_suite, "ec1", check)
    suite = op.load_suite(root)
    (root / "ec1_accept.py").write_text(STRICT, encoding="utf-8")  # tightened: every "no" must fail now
    with pytest.raises(ConfigError) as info:
        op.run(suite, out=tmp_path / "run", progress=False)  # before: 4 of 4 passes, by the loose ACCEPT
    assert str(info.value) == (
        f"{root / 'oloproof.yaml'}: evaluators[0].check: {root / 'ec1_accept.py'} changed since this suite was loaded, "
        "and the suite holds ec1_checks:answer_ok as it was imported then: a run would judge with the old code; "
        "restart the process (in a notebook: the kernel), load the suite again and run that one (Python keeps that "
        "import: a new load in this process would still hold the old code)")
    assert not (tmp_path / "run").exists()  # nothing written
    # before, the message said "load the suite again and run that one", which was refused in turn (Python keeps
    # the helper's import): a load in this process cannot take the edited helper, so the message says restart
    with pytest.raises(ConfigError, match=r"ec1_accept\.py changed since this process imported it.*restart the "
                                          r"process"):
        op.load_suite(root)


def test_an_edited_check_module_is_refused_then_taken_by_a_new_load(make_suite: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    """A top-level module of the suite folder is imported again by ``load_suite``: the new load runs the new code
    (a hand count: the desk answers "no" on all 4 cases; the edited check accepts only "ok")."""
    accept_all = "def answer_ok(case, initial_state, final_state, trajectory):\n    return True\n"
    root = _suite(make_suite, "ec2", accept_all)
    suite = op.load_suite(root)
    assert _passes(op.run(suite, out=tmp_path / "first", progress=False)) == 4
    (root / "ec2_checks.py").write_text(accept_all.replace("True", 'trajectory.answer == "ok"'), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"evaluators\[0\]\.check: .*ec2_checks\.py changed since this suite was "
                                          r"loaded"):
        op.run(suite, out=tmp_path / "stale", progress=False)
    assert _passes(op.run(op.load_suite(root), out=tmp_path / "again", progress=False)) == 0


def test_a_byte_identical_rewrite_runs(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Only other code is refused: the same bytes written again (an editor saving an unchanged file) run."""
    check = "from ec3_accept import ACCEPT\n\n\ndef answer_ok(case, initial_state, final_state, trajectory):\n" \
            "    return trajectory.answer in ACCEPT\n"
    root = _suite(make_suite, "ec3", check)
    suite = op.load_suite(root)
    for name in ("ec3_accept.py", "ec3_checks.py"):
        (root / name).write_bytes((root / name).read_bytes())
    assert _passes(op.run(suite, out=tmp_path / "run", progress=False)) == 4


def test_an_edited_check_of_a_package_says_to_restart(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A check in a package of the suite folder (``ec4pkg.checks:answer_ok``) edited after the load: Python
    keeps a dotted module, so a new load in this process is refused too; the run's refusal says restart, not
    "load the suite again" (a hand count: 4 of 4 cases pass with the loaded check)."""
    root = make_suite([{"id": f"c{i}", "input": {"n": i}} for i in range(4)],
                      evaluators=[{"type": "python", "name": "answer_ok", "check": "ec4pkg.checks:answer_ok"}],
                      system="sysmod:Desk", system_code=DESK, folder="ec4")
    (root / "ec4pkg").mkdir()
    (root / "ec4pkg" / "__init__.py").write_text("", encoding="utf-8")
    check = "def answer_ok(case, initial_state, final_state, trajectory):\n    return True\n"
    (root / "ec4pkg" / "checks.py").write_text(check, encoding="utf-8")
    suite = op.load_suite(root)
    assert _passes(op.run(suite, out=tmp_path / "first", progress=False)) == 4
    (root / "ec4pkg" / "checks.py").write_text(check.replace("True", "False"), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        op.run(suite, out=tmp_path / "stale", progress=False)
    assert info.value.key == "evaluators[0].check"
    assert info.value.message.startswith(f"{root / 'ec4pkg' / 'checks.py'} changed since this suite was loaded")
    assert "restart the process (in a notebook: the kernel)" in info.value.message
    assert "load the suite again (op.load_suite)" not in info.value.message
    assert not (tmp_path / "stale").exists()
    with pytest.raises(ConfigError, match="restart the process"):  # what a new load in this process says too
        op.load_suite(root)
