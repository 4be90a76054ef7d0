"""A suite's own package that another suite's copy of it was imported under first.

A wrapped benchmark keeps its code in a package of the suite folder (``bench/``) that the system module imports.
Python imports a package name once per process, so the second of two suites in one notebook ran the first one's
``bench`` without a word; ``load_suite`` now refuses it, as it refused a python check's helper module already.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

CASES = [{"id": "c1", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]

DESK = '''
from {package}.agent import Agent


class Desk:
    def run(self, input):
        return {{"steps": [], "answer": Agent().answer(input), "status": "completed"}}
'''

AGENT = '''
class Agent:
    def answer(self, input):
        return {answer!r}
'''


def _with_package(folder: Path, package: str, answer: str) -> Path:
    (folder / package).mkdir()
    (folder / package / "__init__.py").write_text("", encoding="utf-8")
    (folder / package / "agent.py").write_text(AGENT.format(answer=answer), encoding="utf-8")
    return folder


def test_a_system_whose_package_another_suite_imported_first_is_refused(make_suite, tmp_path: Path) -> None:
    package = f"bench_{uuid.uuid4().hex[:8]}"  # a name no other test imports
    first = _with_package(make_suite(CASES, evaluators=[{"type": "answer_matches"}],
                                     system_code=DESK.format(package=package), system="sysmod:Desk"), package, "ok")
    run = op.run(op.load_suite(first), progress=False)
    assert run.verdicts["verdict"].tolist() == ["pass"]

    second = tmp_path / "second"
    shutil.copytree(first, second)
    assert op.load_suite(second).name == "tiny"  # a byte-identical copy runs the same code: loaded

    (second / package / "agent.py").write_text(AGENT.format(answer="wrong"), encoding="utf-8")
    with pytest.raises(ConfigError) as info:  # before: loaded, and run with the first suite's Agent (a pass)
        op.load_suite(second)
    err = info.value
    assert err.key == "system" and "\n" not in str(err)
    assert err.message.startswith(f"module '{package}.agent' is already imported from {first / package / 'agent.py'}")
    assert "restart the process (in a notebook: the kernel)" in err.message


def test_a_package_module_the_system_imports_edited_since_is_refused(make_suite, tmp_path: Path) -> None:
    """``bench/agent.py`` edited in a notebook after the suite ran ran the old agent again (Python keeps
    the module it imported), its replays from the cache, without a word: the suite is refused, with a restart."""
    package = f"bench_{uuid.uuid4().hex[:8]}"
    folder = _with_package(make_suite(CASES, evaluators=[{"type": "answer_matches"}],
                                      system_code=DESK.format(package=package), system="sysmod:Desk"), package, "ok")
    suite = op.load_suite(folder)
    assert op.run(suite, progress=False).verdicts["verdict"].tolist() == ["pass"]
    (folder / package / "agent.py").write_text(AGENT.format(answer="wrong"), encoding="utf-8")
    for attempt in (lambda: op.load_suite(folder), lambda: op.run(suite, progress=False)):
        with pytest.raises(ConfigError) as info:
            attempt()
        assert info.value.key == "system"
        assert info.value.message.startswith(f"{folder / package / 'agent.py'} changed since the system was imported")
        assert "restart the process (in a notebook: the kernel)" in info.value.message
    (folder / package / "agent.py").write_text(AGENT.format(answer="ok"), encoding="utf-8")  # put back: the same code
    assert op.run(op.load_suite(folder), progress=False).verdicts["verdict"].tolist() == ["pass"]
