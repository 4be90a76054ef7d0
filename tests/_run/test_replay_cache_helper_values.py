"""A helper of the suite folder from which the system takes a value, not a module, function or class.

``from rules import ESCALATE`` leaves a bool among the desk's names: the fingerprint followed only the modules,
functions and classes a module names, so ``rules.py`` was not part of it, and its edit kept the cached replays
(6 of 6 fault rows passed from the cache where ``--no-cache`` failed all 6). README section 3 says the modules
followed are those named at the top of a module: now its import statements are read too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _reliability_systems import run_cli

import oloproof_nb as op
from oloproof_nb._config.imports import import_system, suite_imports

DESK = '''
{imports}

import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "split-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def pay(self):
        self.state["paid"] = True
        return {{"ok": True}}

    def escalate(self):
        self.state["escalated"] = True
        return {{"ok": True}}

    def act(self, input, rec):
        if rec.tool("pay", self.pay).get("ok"):
            return "paid"
        if {escalates}:
            rec.tool("escalate", self.escalate)
            return "escalated"
        return "paid"
'''

# (the desk's import lines, the expression that says whether it escalates, the helper files): each helper holds
# ESCALATE = True; an instance, a cached function and a constant are no module, function or class
FORMS = {
    "constant": ("from {m} import ESCALATE", "ESCALATE", {"{m}.py": "ESCALATE = True\n"}),
    "instance": ("from {m} import POLICY", "POLICY.escalate",
                 {"{m}.py": "class _P:\n    escalate = True\n\n\nPOLICY = _P()\n"}),
    "cached function": ("from {m} import escalates", "escalates()",
                        {"{m}.py": "import functools\n\n\n@functools.cache\ndef escalates():\n    return True\n"}),
    "package module": ("from {m}_pkg.rules import ESCALATE", "ESCALATE",
                       {"{m}_pkg/__init__.py": "", "{m}_pkg/rules.py": "ESCALATE = True\n"}),
    "class body": ("class _Policy:\n    from {m} import ESCALATE", "_Policy.ESCALATE", {"{m}.py": "ESCALATE = True\n"}),
    "under try": ("try:\n    from {m} import ESCALATE\nexcept ImportError:\n    ESCALATE = False", "ESCALATE",
                  {"{m}.py": "ESCALATE = True\n"}),
}


def _write(root: Path, form: str, module: str) -> list[Path]:
    """The suite folder's desk (``desk_<module>.py``) and helpers for ``form``; the helper files written."""
    imports, escalates, helpers = FORMS[form]
    root.mkdir(parents=True)
    (root / f"desk_{module}.py").write_text(DESK.format(imports=imports.format(m=module), escalates=escalates),
                                            encoding="utf-8")
    written = []
    for name, text in helpers.items():
        path = root / name.format(m=module)
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_helper_the_system_takes_a_value_from_is_part_of_its_fingerprint(tmp_path: Path, form: str) -> None:
    """The files listed by hand: the desk's module and each helper it imports (a package's ``__init__`` too)."""
    module = f"r37_{form.replace(' ', '_')}"
    root = tmp_path / "suite"
    helpers = _write(root, form, module)
    try:
        desk = import_system(root, f"desk_{module}:Desk")
        found = suite_imports(root, [desk])
    finally:
        for name in [n for n in sys.modules if n.startswith(module)]:
            del sys.modules[name]
    assert sorted(found) == sorted([root / f"desk_{module}.py", *helpers])  # before: the desk's module alone


def _cli_suite(root: Path, module: str, cases: int) -> None:
    """oloproof.yaml and ``cases`` cases, each expecting the payment made, with a fault of ``pay`` an escalation
    handles, for the desk of ``desk_<module>.py``."""
    expected = {"answer": "paid", "state": {"paid": True}}
    lines = [{"id": f"c{i}", "input": {"n": i}, "initial_state": {}, "expected": expected} for i in range(cases)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines), encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        f"name: split\nsystem: desk_{module}:Desk\nevaluators:\n  - {{type: state_matches, mode: changes}}\n"
        "  - {type: fault_recovery, tool: pay, fault: error, escalate_tools: [escalate]}\n", encoding="utf-8")


def _rows(root: Path, out: Path) -> list[tuple[str, str, bool]]:
    """The fault rows of a run of ``root`` made by the command line, in a process of its own."""
    assert run_cli("run", str(root), "--out", str(out), "--quiet").returncode == 1  # no release.yaml: BLOCK
    return [(r.verdict, r.reason, bool(r.cached)) for r in op.load_run(out).replays.itertuples()]


def test_an_edited_constant_of_a_helper_is_replayed_again(tmp_path: Path) -> None:
    """End to end, each run in a process of its own: the helper's constant turned from escalating to claiming
    success after a failed payment. Before: the second run served the first one's replay from the cache,
    ``("pass", "escalated", True)``, where the desk now claims a payment that failed."""
    root = tmp_path / "split"
    _write(root, "constant", "rules_r37")
    _cli_suite(root, "rules_r37", 1)
    assert _rows(root, tmp_path / "a") == [("pass", "escalated", False)]
    (root / "rules_r37.py").write_text("ESCALATE = False\n", encoding="utf-8")
    assert _rows(root, tmp_path / "b") == [("fail", "false_success", False)]
    assert _rows(root, tmp_path / "c") == [("fail", "false_success", True)]  # unchanged since: from the cache


READS_FILE = ("import json\nfrom pathlib import Path\n\n"
              "POLICY = json.loads((Path(__file__).parent / 'policy.json').read_text())")
FILE_FINGERPRINT = '''

    def fingerprint(self):
        import hashlib
        from pathlib import Path
        return hashlib.sha256((Path(__file__).parent / "policy.json").read_bytes()).hexdigest()
'''


@pytest.mark.parametrize("declares_fingerprint", [False, True])
def test_a_file_the_system_reads_is_no_code_unless_its_fingerprint_says_so(tmp_path: Path,
                                                                           declares_fingerprint: bool) -> None:
    """README section 3's limit and its remedy: ``policy.json`` read at import, edited from escalating to claiming
    success. Without ``fingerprint()`` the 6 cached passes are kept (``--no-cache`` fails all 6); with one that
    digests the file, the edited desk is replayed again."""
    root = tmp_path / "split"
    root.mkdir()
    desk = DESK.format(imports=READS_FILE, escalates='POLICY["escalate"]')
    (root / "desk_data_r37.py").write_text(desk + (FILE_FINGERPRINT if declares_fingerprint else ""),
                                           encoding="utf-8")
    (root / "policy.json").write_text('{"escalate": true}', encoding="utf-8")
    _cli_suite(root, "data_r37", 6)
    assert _rows(root, tmp_path / "a") == [("pass", "escalated", False)] * 6
    (root / "policy.json").write_text('{"escalate": false}', encoding="utf-8")
    stale = [("pass", "escalated", True)] * 6
    assert _rows(root, tmp_path / "b") == ([("fail", "false_success", False)] * 6 if declares_fingerprint else stale)
    run = op.run(root, out=tmp_path / "live", cache=False, progress=False)  # this process has not imported it
    assert [(r.verdict, r.reason) for r in run.replays.itertuples()] == [("fail", "false_success")] * 6
