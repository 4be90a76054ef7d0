"""The package's structure: layers that import one way, no cycles, doctests that run, no process-wide side effects."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import oloproof_nb

PACKAGE = Path(oloproof_nb.__file__).resolve().parent
REPO = PACKAGE.parent
MODULES = sorted(name for _, name, _ in pkgutil.walk_packages(oloproof_nb.__path__, "oloproof_nb."))


def _import_graph() -> grimp.ImportGraph:
    # grimp counts every import: module level, inside functions and under TYPE_CHECKING
    return grimp.build_graph("oloproof_nb", cache_dir=None)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    modules = sorted(graph.modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_module_imports_itself_back_through_others() -> None:
    assert _cycles(_import_graph()) == []


@pytest.mark.parametrize("name", ["run_copy", "run", "run_checks", "run_pool"])
def test_each_module_of_the_run_imports_first(name: str) -> None:
    """The Run is split by concern, each module importing only the ones before it: ``run_copy`` (the columnar
    copy, a mixin of Run) <- ``run`` (the Run) <- ``run_checks`` (how two runs' checks differ) <- ``run_pool``
    (pooling runs). Imported first in a fresh interpreter, each imports: one that imported a later one back would
    find it half initialised."""
    proc = subprocess.run([sys.executable, "-c", f"import oloproof_nb._analysis.{name}"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_cycle_finder_finds_a_planted_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "knot"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from . import c\n")  # inside a function: still an import
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    sys.path.insert(0, str(tmp_path))
    try:
        graph = grimp.build_graph("knot", cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))
    assert _cycles(graph) == [["knot.a", "knot.b", "knot.c"]]


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    return subprocess.run([exe, "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root,
                          capture_output=True, text=True, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_the_layers_contract_is_kept_and_an_upward_import_breaks_it(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(PACKAGE, copy / "oloproof_nb", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(REPO / "pyproject.toml", copy / "pyproject.toml")
    kept = _lint_imports(copy)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "BROKEN" not in kept.stdout
    paths = copy / "oloproof_nb" / "_core" / "paths.py"
    paths.write_text(paths.read_text() + "\nfrom .._display import theme  # an upward import\n")
    broken = _lint_imports(copy)
    assert broken.returncode == 1
    assert re.search(r"Layers import one way.*BROKEN", broken.stdout, re.S)
    assert "oloproof_nb._core.paths -> oloproof_nb._display.theme" in broken.stdout


@pytest.mark.parametrize("name", MODULES)
def test_doctests_of_every_module_pass(name: str) -> None:
    """Each example runs in the module's own namespace, given nothing else: it imports what it uses (``op``
    among them), as a reader pasting it, or ``pytest --doctest-modules oloproof_nb``, runs it."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False)
    assert result.failed == 0


def test_the_public_face_only_reexports() -> None:
    """Imports, ``__all__``, the table of where each name lives, and the PEP 562 hooks that read it: no logic."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    kinds = []
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            kinds.append("docstring")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            kinds.append("import")
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            assert all(isinstance(stmt, ast.ImportFrom) for stmt in node.body)
            kinds.append("typing imports")
        elif isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"]:
            kinds.append("__all__")
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "_WHERE":
            assert isinstance(node.value, ast.Dict)
            assert all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.value.values)
            kinds.append("_WHERE")
        elif isinstance(node, ast.FunctionDef) and node.name in ("__getattr__", "__dir__"):
            kinds.append(node.name)
        else:
            kinds.append(type(node).__name__)
    assert set(kinds) == {"docstring", "import", "typing imports", "__all__", "_WHERE", "__getattr__", "__dir__"}
    assert len(oloproof_nb.__all__) == len(set(oloproof_nb.__all__))
    for name in oloproof_nb.__all__:
        assert hasattr(oloproof_nb, name), name


def test_no_public_function_shadows_a_module() -> None:
    import oloproof_nb.evaluators  # noqa: F401 - a real subpackage

    for name in oloproof_nb.__all__:
        assert f"oloproof_nb.{name}" not in MODULES or name == "plots", name
    assert importlib.import_module("oloproof_nb._analysis.gate").__name__ == "oloproof_nb._analysis.gate"


def test_no_library_module_switches_the_garbage_collector() -> None:
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if re.search(r"gc\.(freeze|unfreeze|disable|enable)\(", p.read_text(encoding="utf-8"))]
    assert offenders == []


#: Public names whose docstring needs fewer numpydoc sections than their kind, each with the reason.
_DOC_EXEMPT: dict[str, tuple[str, str]] = {
    **{name: ("Examples", "an error: its docstring says when it is raised and what to do; raising it is not shown")
       for name in ("OloproofError", "ConfigError", "CaseFileError", "LabelFileError", "RunDirError",
                    "ContractFileError", "DigestKeyError", "ReplayDiverged")},
    **{name: ("Examples", "a warning: its docstring says when it is warned and what to do")
       for name in ("VacuousCheckWarning", "DuplicateCaseWarning", "SliceWarning")},
}
_DOC_SECTION = re.compile(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", re.MULTILINE)


def test_every_public_class_and_function_has_its_numpydoc_sections() -> None:
    """STYLE.md item 10, on what ``help(op.X)`` shows: a function has Parameters, Returns and Examples; a class
    has Attributes (or Parameters; Methods for a protocol) and Examples; errors and warnings are exempt from
    Examples (see :data:`_DOC_EXEMPT`). numpydoc is not in the test extras: the section headers are read."""
    missing = []
    for name in oloproof_nb.__all__:
        value = getattr(oloproof_nb, name)
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        doc = inspect.getdoc(value) or ""
        sections = set(_DOC_SECTION.findall(doc))
        exempt = {_DOC_EXEMPT[name][0]} if name in _DOC_EXEMPT else set()
        if inspect.isclass(value):
            needed = [] if issubclass(value, (Exception, Warning)) else [("Attributes", "Parameters", "Methods")]
        else:
            needed = [("Parameters",), ("Returns",)]
        needed.append(("Examples",))
        lacks = [" or ".join(any_of) for any_of in needed if not sections & set(any_of) and not exempt & set(any_of)]
        if not doc.strip() or lacks:
            missing.append(f"{name}: {', '.join(lacks) or 'a docstring'}")
        if name in _DOC_EXEMPT:
            assert _DOC_EXEMPT[name][0] not in sections, f"{name} is exempt from a section it has"
    assert missing == []
