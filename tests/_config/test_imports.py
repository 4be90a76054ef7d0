"""Importing the user's code from a suite folder leaves the process as it found it (apart from what is documented)."""

from __future__ import annotations

import gc
import os
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._config.imports import import_system, load_validators
from oloproof_nb.errors import ConfigError


def _write(folder: Path, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sysmod.py").write_text(text, encoding="utf-8")


def test_sys_path_and_bytecode_flag_are_restored(tmp_path: Path) -> None:
    _write(tmp_path / "s", "import sys\nSEEN = list(sys.path)\nclass S:\n    pass\n")
    path_before, flag_before = list(sys.path), sys.dont_write_bytecode
    cls = import_system(tmp_path / "s", "sysmod:S")
    assert sys.path == path_before and sys.dont_write_bytecode is flag_before
    seen = sys.modules[cls.__module__].SEEN
    assert str((tmp_path / "s").resolve()) == seen[0]  # on sys.path while the module ran, not after
    assert not (tmp_path / "s" / "__pycache__").exists()


def test_a_failed_import_restores_sys_path_too(tmp_path: Path) -> None:
    _write(tmp_path / "s", "raise RuntimeError('boom')\n")
    before = list(sys.path)
    with pytest.raises(ConfigError, match="raised RuntimeError: boom"):
        import_system(tmp_path / "s", "sysmod:S")
    assert sys.path == before
    assert not [name for name in sys.modules if name.endswith("_sysmod") and "_oloproof_suite_" in name
                and getattr(sys.modules[name], "__file__", "").startswith(str(tmp_path))]


def test_an_edited_module_replaces_the_old_copy_which_is_freed(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    _write(folder, "class S:\n    v = 1\n")
    old = import_system(folder, "sysmod:S")
    name = old.__module__
    old_module = weakref.ref(sys.modules[name])
    _write(folder, "class S:\n    v = 2  # edited\n")
    new = import_system(folder, "sysmod:S")
    assert new.v == 2 and new.__module__ == name and sys.modules[name].S is new
    assert import_system(folder, "sysmod:S") is new  # unchanged content: the same module, not imported again
    del old
    gc.collect()
    assert old_module() is None  # oloproof keeps no reference to the edited-away copy
    entries = [n for n in sys.modules if n == name]
    assert entries == [name]  # one entry per folder and module


def test_two_suites_with_a_module_of_the_same_name_do_not_collide(tmp_path: Path) -> None:
    _write(tmp_path / "a", "class S:\n    who = 'a'\n")
    _write(tmp_path / "b", "class S:\n    who = 'b'\n")
    assert import_system(tmp_path / "a", "sysmod:S").who == "a"
    assert import_system(tmp_path / "b", "sysmod:S").who == "b"


def test_validators_are_imported_the_same_way(tmp_path: Path) -> None:
    _write(tmp_path / "s", "def ok(path):\n    return True\nNOT_CALLABLE = 3\n")
    before = list(sys.path)
    found = load_validators(tmp_path / "s", {"v": "sysmod:ok"}, "oloproof.yaml")
    assert found["v"](Path("x")) is True and sys.path == before
    with pytest.raises(ConfigError, match=r"validators\.w: 'sysmod:NOT_CALLABLE' is a int, not a function"):
        load_validators(tmp_path / "s", {"w": "sysmod:NOT_CALLABLE"}, "oloproof.yaml")


# -- the suite folder's modules a system or a check imports count in its code digest -------------------------

POLICY_SYSTEM = '''
import copy

import {policy}


class Desk:
    def __init__(self):
        self.state = {{}}

    def reset(self, state):
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        return {{"steps": [], "answer": {policy}.answer(input["n"]), "status": "completed"}}
'''


def test_suite_imports_follows_the_imports_the_code_spells_out(tmp_path: Path) -> None:
    """Read from the code, not from what this process happens to have imported: a package's submodules, a
    module another one imports, an import inside a function; not the standard library, not an unused file."""
    from oloproof_nb._config.imports import suite_imports

    (tmp_path / "sub").mkdir()
    files = {"sysmod.py": "import json\nimport numpy\nimport agent_policy\nfrom sub import tools\n"
                          "def later():\n    import lazy_helper\n",
             "agent_policy.py": "import second\n", "second.py": "X = 1\n", "sub/__init__.py": "",
             "sub/tools.py": "from . import deep\n", "sub/deep.py": "Y = 2\n", "lazy_helper.py": "Z = 3\n",
             "unused.py": "W = 4\n", "broken.py": "def (:\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = {p.relative_to(tmp_path).as_posix() for p in suite_imports(tmp_path, tmp_path / "sysmod.py")}
    assert found == {"sysmod.py", "agent_policy.py", "second.py", "sub/__init__.py", "sub/tools.py", "sub/deep.py",
                     "lazy_helper.py"}
    assert suite_imports(tmp_path, tmp_path / "broken.py") == set()  # the import reports the syntax error


@pytest.mark.parametrize("edited", ["agent_policy.py", "helpers.py"])
def test_resume_refuses_a_suite_whose_imported_helper_changed(make_suite: Any, tmp_path: Path, edited: str) -> None:
    """Review R: ``--resume`` compared the digests of the system's own file and the check's, not of the suite
    folder's modules they import. A run stopped after 3 of 6 cases and resumed after ``agent_policy.py`` (the
    system's) or ``helpers.py`` (a python check's) changed gated one mix of two versions: PASS, where a fresh
    run of the new code failed half. Both are refused now, nothing written."""
    import json

    import oloproof_nb as op

    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(6)]
    token = tmp_path.name.replace("-", "_")[-12:] + os.urandom(4).hex()  # Python keeps one module per name
    policy, helpers = f"agent_policy_{token}", f"helpers_{token}"
    root = make_suite(cases, system="sysmod:Desk", system_code=POLICY_SYSTEM.format(policy=policy),
                      evaluators=[{"type": "answer_matches"}, {"type": "python", "check": "checks:judge"}])
    (root / f"{policy}.py").write_text("def answer(n):\n    return 'ok'\n", encoding="utf-8")
    (root / f"{helpers}.py").write_text("def strict(answer):\n    return answer == 'ok'\n", encoding="utf-8")
    (root / "checks.py").write_text(f"from {helpers} import strict\n\n\ndef judge(case, initial, final, "
                                    "trajectory):\n    return strict(trajectory.answer)\n", encoding="utf-8")
    full = op.run(op.load_suite(root), out=tmp_path / "full", progress=False)
    out = tmp_path / "stopped"  # the run as a kill after three cases leaves it
    out.mkdir()
    manifest = json.loads((full.directory / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = (full.directory / "cases.jsonl").read_bytes().splitlines(keepends=True)
    (out / "cases.jsonl").write_bytes(b"".join(lines[:3]))
    path = root / (f"{policy}.py" if edited == "agent_policy.py" else f"{helpers}.py")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("'ok'", "'ok' if n > 2 else 'bad'") if edited == "agent_policy.py"
                    else text.replace("answer == 'ok'", "True"), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(op.OloproofError, match="changed since this run started"):
        op.run(op.load_suite(root), out=out, resume=True, progress=False)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"} == before
