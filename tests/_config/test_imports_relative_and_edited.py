"""The modules a suite's import statements name (``_top_imports``): relative imports, a helper taken by a relative
import, and an edited module imported again."""

from __future__ import annotations

from pathlib import Path

from oloproof_nb._config.imports import _top_imports, import_system, suite_imports


def test_relative_imports_are_resolved_against_the_package(tmp_path: Path) -> None:
    """``from .policy import LIMITS`` in package ``pkg`` names ``pkg``, ``pkg.policy`` and ``pkg.policy.LIMITS``;
    ``from . import rules`` names ``pkg`` and ``pkg.rules``; ``from .. import x`` in a top-level package cannot be
    resolved and names nothing. Listed by hand from the import statements."""
    f = tmp_path / "agent.py"
    f.write_text("from .policy import LIMITS\nfrom . import rules\n", encoding="utf-8")
    assert _top_imports(f, "m39-a", "pkg") == ("pkg", "pkg.policy", "pkg.policy.LIMITS", "pkg.rules")
    g = tmp_path / "top.py"
    g.write_text("from .. import x\nimport json\n", encoding="utf-8")
    assert _top_imports(g, "m39-b", "pkg") == ("json",)


def test_a_helper_a_package_module_takes_a_value_from_by_a_relative_import_is_followed(tmp_path: Path) -> None:
    """The system's module takes ``decide`` from ``pkg_m39.agent_m39`` (a namespace package: no ``__init__.py``,
    so no file whose names lead on), which takes a dict from ``.policy_m39``: no name of either module is a module,
    so only the relative import statement leads to the policy file. The reference: the three files written, listed
    by hand."""
    suite = tmp_path / "suite_m39"
    pkg = suite / "pkg_m39"
    pkg.mkdir(parents=True)
    (pkg / "policy_m39.py").write_text("LIMITS = {'refund': 500}\n", encoding="utf-8")
    (pkg / "agent_m39.py").write_text("from .policy_m39 import LIMITS\n\n\ndef decide(x):\n"
                                      "    return x <= LIMITS['refund']\n", encoding="utf-8")
    (suite / "sysmod.py").write_text("from pkg_m39.agent_m39 import decide\n\n\nclass S:\n    def run(self, x):\n"
                                     "        return decide(x)\n", encoding="utf-8")
    cls = import_system(suite, "sysmod:S")
    found = suite_imports(suite, [cls])
    assert sorted(str(p.relative_to(suite)) for p in found) == [
        "pkg_m39/agent_m39.py", "pkg_m39/policy_m39.py", "sysmod.py"]


def test_an_edited_module_imported_again_is_read_for_its_new_imports(tmp_path: Path) -> None:
    """The system's module, edited to take its limit from another helper and imported again in the same process
    (a notebook's second load_suite), names the new helper, not the one its first text imported."""
    suite = tmp_path / "suite_m39b"
    suite.mkdir()
    (suite / "rules_a_m39.py").write_text("LIMIT = 1\n", encoding="utf-8")
    (suite / "rules_b_m39.py").write_text("LIMIT = 2\n", encoding="utf-8")
    body = "\n\nclass S:\n    def run(self, x):\n        return x <= LIMIT\n"
    (suite / "sysmod.py").write_text("from rules_a_m39 import LIMIT" + body, encoding="utf-8")
    first = suite_imports(suite, [import_system(suite, "sysmod:S")])
    assert sorted(p.name for p in first) == ["rules_a_m39.py", "sysmod.py"]
    (suite / "sysmod.py").write_text("from rules_b_m39 import LIMIT  # edited" + body, encoding="utf-8")
    cls = import_system(suite, "sysmod:S")
    assert cls.run(None, 2) is True  # the edited text runs: LIMIT is rules_b's 2
    assert sorted(p.name for p in suite_imports(suite, [cls])) == ["rules_b_m39.py", "sysmod.py"]
