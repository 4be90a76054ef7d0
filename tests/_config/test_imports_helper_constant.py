"""A constant taken from another suite folder's copy of a helper module.

Two copies of a suite in one process (a notebook): the second copy's ``checks.py`` (or system module) takes a
constant from its own, edited ``helpers.py`` with ``from helpers import ACCEPT``. Python imports a module name once
per process, so it got the first copy's ``ACCEPT``; a set among the module's names is neither a module nor a
function, so nothing noticed it (the package-copy tests cover a module, a function or a class taken from there): the
second suite loaded and judged with the first copy's constant, without a word. It is now refused as those are. Expected
verdicts are by hand: the desk answers ``no``, which only the loose helper accepts.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

CASES = [{"id": "c1", "input": {"n": 1}, "expected": {"answer": "no"}}]

CHECK = '''from {helper} import ACCEPT


def answer_ok(case, initial_state, final_state, trajectory):
    return trajectory.answer in ACCEPT
'''

DESK = '''class Desk:
    def run(self, input):
        return {"steps": [], "answer": "no", "status": "completed"}
'''

DESK_FROM_HELPER = '''from {helper} import ANSWER


class Desk:
    def run(self, input):
        return {{"steps": [], "answer": ANSWER, "status": "completed"}}
'''


def _copy(first: Path, second: Path, helper: str, text: str) -> Path:
    shutil.copytree(first, second)
    (second / f"{helper}.py").write_text(text, encoding="utf-8")
    return second


def test_a_check_taking_a_constant_from_another_copy_of_its_helper_is_refused(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    name = f"f49_{uuid.uuid4().hex[:8]}"  # names no other test imports
    helper, checks = f"{name}_helpers", f"{name}_checks"
    first = make_suite(CASES, evaluators=[{"type": "python", "name": "answer_ok", "check": f"{checks}:answer_ok"}],
                       system="sysmod:Desk", system_code=DESK)
    (first / f"{helper}.py").write_text('ACCEPT = {"ok"}\n', encoding="utf-8")  # strict: "no" fails
    (first / f"{checks}.py").write_text(CHECK.format(helper=helper), encoding="utf-8")
    assert op.run(op.load_suite(first), progress=False).verdicts["verdict"].tolist() == ["fail"]

    same = _copy(first, tmp_path / "same", helper, 'ACCEPT = {"ok"}\n')
    assert op.run(op.load_suite(same), progress=False).verdicts["verdict"].tolist() == ["fail"]  # same code: loads

    loose = _copy(first, tmp_path / "loose", helper, 'ACCEPT = {"ok", "no"}\n')  # its own helper passes "no"
    with pytest.raises(ConfigError) as info:  # before: loaded, and judged "no" a fail by the first copy's ACCEPT
        op.load_suite(loose)
    err = info.value
    assert err.key == "evaluators[0].check" and "\n" not in str(err)
    assert err.message.startswith(f"module '{helper}' is already imported from {first / f'{helper}.py'}, not from "
                                  f"this suite folder ({loose})")
    assert "restart the process (in a notebook: the kernel)" in err.message


def test_a_system_taking_a_constant_from_another_copy_of_its_helper_is_refused(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    helper = f"f49_{uuid.uuid4().hex[:8]}_rules"
    first = make_suite(CASES, evaluators=[{"type": "answer_matches"}], system="sysmod:Desk",
                       system_code=DESK_FROM_HELPER.format(helper=helper))
    (first / f"{helper}.py").write_text('ANSWER = "no"\n', encoding="utf-8")
    assert op.run(op.load_suite(first), progress=False).verdicts["verdict"].tolist() == ["pass"]
    edited = _copy(first, tmp_path / "edited", helper, 'ANSWER = "yes"\n')  # its own desk answers wrong
    with pytest.raises(ConfigError) as info:  # before: loaded, and passed with the first copy's ANSWER
        op.load_suite(edited)
    assert info.value.key == "system"
    assert info.value.message.startswith(f"module '{helper}' is already imported from {first / f'{helper}.py'}")
