"""A constant taken from another copy's helper after another import (``_imports_elsewhere``): it must be refused
however many modules a check's import statements name before it. Comparing the first module alone let a constant
taken from another copy's helper after ``import json`` pass.
Expected verdicts are by hand: the desk answers ``no``, which only the loose helper accepts."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

CHECK = '''import json
from {helper} import ACCEPT


def answer_ok(case, initial_state, final_state, trajectory):
    return json.dumps(trajectory.answer) in {{json.dumps(a) for a in ACCEPT}}
'''

DESK = '''class Desk:
    def run(self, input):
        return {"steps": [], "answer": "no", "status": "completed"}
'''


def test_a_constant_from_another_copy_s_helper_is_refused_after_another_import(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    name = f"m52_{uuid.uuid4().hex[:8]}"  # names no other test imports
    helper, checks = f"{name}_helpers", f"{name}_checks"
    first = make_suite([{"id": "c1", "input": {"n": 1}, "expected": {"answer": "no"}}],
                       evaluators=[{"type": "python", "name": "answer_ok", "check": f"{checks}:answer_ok"}],
                       system="sysmod:Desk", system_code=DESK)
    (first / f"{helper}.py").write_text('ACCEPT = {"ok"}\n', encoding="utf-8")  # strict: "no" fails
    (first / f"{checks}.py").write_text(CHECK.format(helper=helper), encoding="utf-8")
    assert op.run(op.load_suite(first), progress=False).verdicts["verdict"].tolist() == ["fail"]

    loose = tmp_path / "loose"
    shutil.copytree(first, loose)
    (loose / f"{helper}.py").write_text('ACCEPT = {"ok", "no"}\n', encoding="utf-8")  # its own helper passes "no"
    with pytest.raises(ConfigError) as info:
        op.load_suite(loose)
    assert info.value.key == "evaluators[0].check"
    assert info.value.message.startswith(f"module '{helper}' is already imported from {first / f'{helper}.py'}, not "
                                         f"from this suite folder ({loose})")
