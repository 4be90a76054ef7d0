"""A system whose ``reset``, ``snapshot`` or ``observe`` cannot be read (a property that raises, a ``__getattr__``
that raises for it) is the system's error in one line naming it, read once as each instance is built: read first by
a case, it was an internal error of oloproof_nb (exit 2, "a bug in oloproof_nb, not in your system", a traceback
file in the run folder)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb import cli

PROPERTY = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "d1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    @property
    def {name}(self):
        raise RuntimeError("no database configured")

    def act(self, input, rec):
        return "ok"
'''

GETATTR = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "d1"

    def __getattr__(self, name):
        if name == "{name}":
            raise RuntimeError("no database configured")
        raise AttributeError(name)

    def act(self, input, rec):
        return "ok"
'''

CASES = [{"id": "c0", "input": {"q": 1}, "initial_state": {}, "expected": {"answer": "ok"}}]


@pytest.mark.parametrize("name", ["reset", "snapshot", "observe"])
@pytest.mark.parametrize("code", [PROPERTY, GETATTR], ids=["property", "getattr"])
def test_a_sandbox_method_that_cannot_be_read_stops_the_run_in_one_line_naming_it(
        make_suite: Callable[..., Path], tmp_path: Path, code: str, name: str) -> None:
    root = make_suite(CASES, system="sysmod:Desk", system_code=code.replace("{name}", name),
                      evaluators=[{"type": "answer_matches"}])
    with pytest.raises(op.OloproofError) as info:
        op.run(root, out=tmp_path / "run", progress=False)
    assert str(info.value) == (f"{root / 'oloproof.yaml'}: system: reading the system's {name} raised RuntimeError: "
                               "no database configured")


def test_the_command_exits_2_with_the_system_s_error_and_writes_no_traceback_file(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_suite(CASES, system="sysmod:Desk", system_code=PROPERTY.replace("{name}", "snapshot"),
                      evaluators=[{"type": "answer_matches"}])
    assert cli.main(["run", str(root), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"oloproof: error: {root / 'oloproof.yaml'}: system: reading the system's "
                                        "snapshot raised RuntimeError: no database configured"]
    assert not (tmp_path / "run" / "internal-error.txt").exists()


def test_a_sandbox_method_that_cannot_be_read_by_a_worker_process_s_instance_is_one_line_too(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = make_suite(CASES, system="sysmod:Desk", system_code=PROPERTY.replace("{name}", "snapshot"),
                      evaluators=[{"type": "answer_matches"}])
    with pytest.raises(op.OloproofError, match=r"reading the system's snapshot raised RuntimeError: no database"):
        op.run(root, isolation="process", out=tmp_path / "run", progress=False)
