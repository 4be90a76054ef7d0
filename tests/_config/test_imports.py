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
    module another one imports, an import inside a function, a relative import in a package, a system named as
    a dotted module or a package (review K: those were not scanned); not the standard library, not an unused
    file, not the module's own file (its code digest covers it)."""
    from oloproof_nb._config.imports import suite_imports

    files = {"sysmod.py": "import json\nimport numpy\nimport agent_policy\nfrom sub import tools\n"
                          "def later():\n    import lazy_helper\n",
             "agent_policy.py": "import second\n", "second.py": "X = 1\n", "sub/__init__.py": "",
             "sub/tools.py": "from . import deep\n", "sub/deep.py": "Y = 2\n", "lazy_helper.py": "Z = 3\n",
             "unused.py": "W = 4\n", "broken.py": "def (:\n",
             "agents/__init__.py": "", "agents/policy.py": "from .helpers import X\n", "agents/helpers.py": "X = 1\n",
             "agent/__init__.py": "from . import rules\n", "agent/rules.py": "R = 1\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")

    def found(module: str) -> set[str]:
        return {p.relative_to(tmp_path).as_posix() for p in suite_imports(tmp_path, module)}

    assert found("sysmod") == {"agent_policy.py", "second.py", "sub/__init__.py", "sub/tools.py", "sub/deep.py",
                               "lazy_helper.py"}
    assert found("agents.policy") == {"agents/__init__.py", "agents/helpers.py"}  # dotted, relative import
    assert found("agent") == {"agent/rules.py"}  # a package system: its own __init__ is its code digest's
    assert found("second") == set() and found("broken") == set() and found("nosuch") == set()


def test_a_scan_is_kept_until_a_file_it_read_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review K: the scan ran again for every check, validator and system of a suite (load_suite of a suite
    folder holding a large package went from 1.8 s to 10 s). One scan per module now, done again when a file it
    read changes (an edit of the helper, or of the module adding an import)."""
    import modulefinder

    from oloproof_nb._config import imports

    (tmp_path / "checks.py").write_text("import helpers\n", encoding="utf-8")
    (tmp_path / "helpers.py").write_text("A = 1\n", encoding="utf-8")
    (tmp_path / "extra.py").write_text("B = 1\n", encoding="utf-8")
    scans = []
    real = modulefinder.ModuleFinder.import_hook

    def counted(self: modulefinder.ModuleFinder, *args: Any, **kwargs: Any) -> Any:
        scans.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(modulefinder.ModuleFinder, "import_hook", counted)
    first = imports.imports_digest(tmp_path, "checks:a")
    assert imports.imports_digest(tmp_path, "checks:b") == first and scans.count("checks") == 1  # one scan
    os.utime(tmp_path / "helpers.py", ns=(1, 1))  # another modification time: read again
    (tmp_path / "helpers.py").write_text("A = 2\n", encoding="utf-8")
    assert imports.imports_digest(tmp_path, "checks:a") not in (first, None) and scans.count("checks") == 2
    (tmp_path / "checks.py").write_text("import helpers\nimport extra\n", encoding="utf-8")
    os.utime(tmp_path / "checks.py", ns=(2, 2))
    assert {p.name for p in imports.suite_imports(tmp_path, "checks")} == {"helpers.py", "extra.py"}


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


def test_a_run_recorded_before_imports_were_digested_resumes_and_compares_as_before(
        make_suite: Any, tmp_path: Path) -> None:
    """Review K: the first version of the import scan folded the helpers into the code digests, so the same code
    got another digest than a run made before: an old base compared as check_changed (exit 1), a resume of an
    old run was refused. The helpers have a digest of their own now; a run that recorded none cannot tell, and
    resumes and compares as before. Recorded by both, a change is seen (test above)."""
    import json

    import oloproof_nb as op

    token = tmp_path.name.replace("-", "_")[-12:] + os.urandom(4).hex()
    policy, helpers = f"agent_policy_{token}", f"helpers_{token}"
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(6)]
    root = make_suite(cases, system="sysmod:Desk", system_code=POLICY_SYSTEM.format(policy=policy),
                      evaluators=[{"type": "answer_matches"}, {"type": "python", "check": "checks:judge"}])
    (root / f"{policy}.py").write_text("def answer(n):\n    return 'ok'\n", encoding="utf-8")
    (root / f"{helpers}.py").write_text("def strict(answer):\n    return answer == 'ok'\n", encoding="utf-8")
    (root / "checks.py").write_text(f"from {helpers} import strict\n\n\ndef judge(case, initial, final, "
                                    "trajectory):\n    return strict(trajectory.answer)\n", encoding="utf-8")
    suite = op.load_suite(root)
    assert {k for k in suite.digests if k.startswith("imports:")} == {"imports:sysmod:Desk", "imports:checks:judge"}
    full = op.run(suite, out=tmp_path / "full", progress=False)
    old = tmp_path / "old"  # as the version before wrote it: no imports digest, and stopped after three cases
    old.mkdir()
    manifest = json.loads((full.directory / "manifest.json").read_text(encoding="utf-8"))
    manifest["digests"] = {k: v for k, v in manifest["digests"].items() if not k.startswith("imports:")}
    del manifest["finished_at"]
    (old / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = (full.directory / "cases.jsonl").read_bytes().splitlines(keepends=True)
    (old / "cases.jsonl").write_bytes(b"".join(lines[:3]))
    resumed = op.run(op.load_suite(root), out=old, resume=True, progress=False)
    assert resumed.n_cases == 6 and len(resumed.records) == 6
    cmp = op.compare(resumed, full)
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"  # six cases: no margin can be cleared; but no check changed
    assert not any("check_changed" in reason for reason in cmp.table["reason"])


def _helper_suite(make_suite: Any, tmp_path: Path, **config: Any) -> tuple[Path, str, str]:
    """A suite whose system imports ``agent_policy_<token>`` and whose python check imports ``helpers_<token>``
    (unique names: Python keeps one module per name in a process)."""
    token = tmp_path.name.replace("-", "_")[-12:] + os.urandom(4).hex()
    policy, helpers = f"agent_policy_{token}", f"helpers_{token}"
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(6)]
    root = make_suite(cases, system="sysmod:Desk", system_code=POLICY_SYSTEM.format(policy=policy),
                      evaluators=[{"type": "answer_matches"}, {"type": "python", "check": "checks:judge"}], **config)
    (root / f"{policy}.py").write_text("def answer(n):\n    return 'ok'\n", encoding="utf-8")
    (root / f"{helpers}.py").write_text("def strict(answer):\n    return answer == 'ok'\n", encoding="utf-8")
    (root / "checks.py").write_text(f"from {helpers} import strict\n\n\ndef judge(case, initial, final, "
                                    "trajectory):\n    return strict(trajectory.answer)\n", encoding="utf-8")
    return root, policy, helpers


def test_a_suite_loaded_by_a_relative_path_records_the_same_digests_and_runs_in_processes(
        make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review M: the finder gives absolute paths, and a suite loaded as ``op.load_suite("suite0")`` kept none of
    its helpers; its process workers (which load the suite from its absolute folder) found them, so every run
    with isolation: process was refused ("changed since the suite was loaded")."""
    import oloproof_nb as op

    root, _, _ = _helper_suite(make_suite, tmp_path, isolation="process")
    absolute = {k: v for k, v in op.load_suite(root).digests.items() if k.startswith("imports:")}
    assert set(absolute) == {"imports:sysmod:Desk", "imports:checks:judge"}
    monkeypatch.chdir(root.parent)
    suite = op.load_suite(root.name)
    assert {k: v for k, v in suite.digests.items() if k.startswith("imports:")} == absolute
    run = op.run(suite, out=tmp_path / "processes", progress=False)
    assert run.n_cases == 6 and set(run.verdicts["verdict"]) == {"pass"}


def test_an_import_the_finder_cannot_follow_keeps_the_others(tmp_path: Path) -> None:
    """Review M: a folder without ``__init__.py`` (``from tools.fmt import f``), or a data folder named like a
    library the code imports (``email/``), made the finder raise, and the whole scan was dropped: the helpers
    it had found with it went undigested, silently."""
    from oloproof_nb._config.imports import suite_imports

    (tmp_path / "tools").mkdir()
    (tmp_path / "email").mkdir()
    (tmp_path / "tools" / "fmt.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (tmp_path / "email" / "notes.txt").write_text("data\n", encoding="utf-8")
    (tmp_path / "helpers.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "sysmod.py").write_text("from tools.fmt import f\nimport email\nimport helpers\n", encoding="utf-8")
    assert {p.name for p in suite_imports(tmp_path, "sysmod")} == {"helpers.py"}


def test_a_helper_created_after_the_scan_is_found_by_the_next_one(tmp_path: Path) -> None:
    """Review M: a kept scan was checked against the files it read only, so a module created afterwards (``try:
    import local_overrides``) was never digested in that process, while a fresh worker process found it. The
    folders the scan searched are watched too: a new file changes its folder."""
    from oloproof_nb._config.imports import suite_imports

    (tmp_path / "sysmod.py").write_text("try:\n    import local_overrides\nexcept ImportError:\n    pass\n",
                                        encoding="utf-8")
    assert suite_imports(tmp_path, "sysmod") == frozenset()
    os.utime(tmp_path, ns=(1, 1))  # the folder's time before the file arrives (a coarse clock cannot hide it)
    (tmp_path / "local_overrides.py").write_text("X = 1\n", encoding="utf-8")
    assert {p.name for p in suite_imports(tmp_path, "sysmod")} == {"local_overrides.py"}


def test_pooling_compares_the_helpers_of_runs_after_one_that_recorded_none(make_suite: Any, tmp_path: Path) -> None:
    """Review M: ``load_runs([r0, r1, r2])`` with r0 recorded before (no imports digest) pooled r1 and r2 whose
    check helpers differ, while ``load_runs([r1, r2])`` refused them."""
    import json

    import oloproof_nb as op

    root, _, helpers = _helper_suite(make_suite, tmp_path)
    runs = [op.run(op.load_suite(root), out=tmp_path / f"r{i}", progress=False).directory for i in range(2)]
    manifest = json.loads((runs[0] / "manifest.json").read_text(encoding="utf-8"))
    manifest["digests"] = {k: v for k, v in manifest["digests"].items() if not k.startswith("imports:")}
    (runs[0] / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (root / f"{helpers}.py").write_text("def strict(answer):\n    return True\n", encoding="utf-8")
    later = tmp_path / "later"  # the loosened helper, run in a new process (this one keeps the old import)
    from _reliability_systems import run_cli

    assert run_cli("run", str(root), "--out", str(later), "--quiet").returncode == 1  # no release.yaml: BLOCK
    with pytest.raises(op.OloproofError, match="the suite modules checks:judge imports differ"):
        op.load_runs([runs[0], runs[1], later])


def test_a_system_given_in_python_is_not_held_to_the_suite_systems_helpers(make_suite: Any, tmp_path: Path) -> None:
    """Review M: a run made with ``system=`` (a class that never imports the suite system's helper) was refused
    on resume after that helper changed; its cache key already left the helper out."""
    import json

    import oloproof_nb as op

    root, policy, _ = _helper_suite(make_suite, tmp_path)

    class Own:
        version = "own-1"

        def reset(self, state: Any) -> None:
            self.state = dict(state)

        def snapshot(self) -> Any:
            return dict(self.state)

        def run(self, input: Any) -> Any:
            return {"steps": [], "answer": "ok", "status": "completed"}

    full = op.run(op.load_suite(root), system=Own, out=tmp_path / "full", progress=False)
    assert not any(k.startswith("imports:sysmod") for k in full.manifest.digests)
    out = tmp_path / "stopped"
    out.mkdir()
    manifest = json.loads((full.directory / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (out / "cases.jsonl").write_bytes(b"".join((full.directory / "cases.jsonl").read_bytes().splitlines(True)[:3]))
    (root / f"{policy}.py").write_text("def answer(n):\n    return 'bad'\n", encoding="utf-8")
    assert len(op.run(op.load_suite(root), system=Own, out=out, resume=True, progress=False).records) == 6
