"""Every third-party module the package imports is a dependency it declares.

A module that arrives only as another package's dependency (``typing_extensions`` through pydantic,
``markupsafe`` through jinja2) works until that package drops it; then ``import oloproof_nb`` fails on a
user's machine and nowhere here. The declared requirements are read from the installed metadata, so this
checks what ``pip install`` of the project really asks for. And a deprecation a dependency reports against the
package's own code fails the test that meets it (pyproject.toml's ``filterwarnings``).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import sys
import warnings
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name as _name
from packaging.version import Version

import oloproof_nb

PACKAGE = Path(oloproof_nb.__file__).parent

#: A declared distribution's own core, which that distribution pins to one exact version (checked below).
PINNED_BY = {"pydantic_core": "pydantic"}

#: Imported though not declared, each for a reason; never at module level (checked below).
LAZY_UNDECLARED = {
    "jsonpatch": "inspect-ai's own dependency, imported only while reading an Inspect AI log",
    "ipywidgets": "optional: tried only to choose tqdm's notebook bar, and a failed import falls back to text",
    "IPython": "the kernel's own: imported only inside a Jupyter kernel (found running) to draw the text bar there",
}


def _requires(distribution: str) -> list[Requirement]:
    """What the installed ``distribution`` declares it needs."""
    return [Requirement(text) for text in metadata.requires(distribution) or []]


def _declared() -> tuple[set[str], set[str]]:
    """(required, extras-only) distribution names of the installed oloproof_nb."""
    required: set[str] = {_name(r.name) for r in _requires("oloproof_nb") if r.marker is None}
    extras: set[str] = {_name(r.name) for r in _requires("oloproof_nb") if r.marker is not None}
    return required, extras - required


def _imports() -> dict[str, list[tuple[str, bool]]]:
    """Top-level module name → (file:line, at module level?) of each absolute third-party import."""
    found: dict[str, list[tuple[str, bool]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_level = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "oloproof_nb":
                    where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                    found.setdefault(top, []).append((where, id(node) in module_level))
    return found


def test_the_scan_sees_the_imports_it_must_judge() -> None:
    """The scan is not empty-handed: it finds the package's known imports, module-level and inside functions."""
    found = _imports()
    assert {"pandas", "pydantic", "typing_extensions", "markupsafe"} <= set(found)
    assert any(level for _, level in found["pandas"])
    assert not any(level for _, level in found["inspect_ai"])  # read lazily, inside the log reader


def _providers() -> dict[str, list[str]]:
    """Top-level module name → the installed distributions that provide it.

    What ``importlib.metadata.packages_distributions`` gives on Python 3.11 and later: a distribution's
    ``top_level.txt`` when it has one, else the top level of the ``.py`` files its RECORD lists. Python 3.10's
    reads ``top_level.txt`` only, which wheels built without setuptools lack (numpy, pandas, pydantic, …),
    so there every such module came from "no installed distribution".
    """
    providers: dict[str, list[str]] = {}
    for dist in metadata.distributions():
        declared = (dist.read_text("top_level.txt") or "").split()
        inferred = {file.parts[0] if len(file.parts) > 1 else file.with_suffix("").name
                    for file in dist.files or () if file.suffix == ".py"}
        for module in declared or inferred:
            providers.setdefault(module, []).append(dist.metadata["Name"])
    return providers


def test_the_providers_are_found_as_python_3_11_finds_them() -> None:
    """For every module the package imports, the mapping above is the standard library's where the standard library
    reads RECORD (3.11 and later; 3.13's also lists names that are no module, ``__pycache__``, ``COPYING``)."""
    ours = {module: sorted(names) for module, names in _providers().items()}
    assert {"numpy", "pandas", "pydantic", "oloproof_nb"} <= set(ours)
    assert _name(ours["numpy"][0]) == "numpy" and _name(ours["oloproof_nb"][0]) == "oloproof-nb"
    if sys.version_info >= (3, 11):
        theirs = {module: sorted(names) for module, names in metadata.packages_distributions().items()}
        imported = sorted(_imports())
        assert len(imported) > 10 and [ours.get(m) for m in imported] == [theirs.get(m) for m in imported]


def test_every_imported_module_comes_from_a_declared_distribution() -> None:
    required, extras = _declared()
    assert {"pandas", "pyarrow"} <= required and "inspect-ai" in extras  # the metadata was read
    providers = _providers()
    missing = []
    for module, places in sorted(_imports().items()):
        if module in PINNED_BY or module in LAZY_UNDECLARED:
            continue
        names = {_name(dist) for dist in providers.get(module, [])}
        if not names and _name(module) in extras:  # an extra not installed here (.ci/oldest leaves inspect-ai out)
            names = {_name(module)}
        if not names:
            missing.append(f"{module} ({places[0][0]}): no installed distribution provides it")
        elif not names & (required | extras):
            missing.append(f"{module} ({places[0][0]}): from {sorted(names)}, which pyproject.toml does not declare")
        elif not names & required and any(level for _, level in places):
            at = next(where for where, level in places if level)
            missing.append(f"{module} ({at}): an extra's module imported at module level, so every user needs it")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("module", sorted(LAZY_UNDECLARED))
def test_an_undeclared_module_is_never_imported_at_module_level(module: str) -> None:
    places = _imports().get(module)
    assert places, f"{module} is no longer imported: drop it from LAZY_UNDECLARED"
    assert not any(level for _, level in places), places


@pytest.mark.parametrize(("module", "parent"), sorted(PINNED_BY.items()))
def test_a_core_module_is_pinned_by_its_declared_parent(module: str, parent: str) -> None:
    assert parent in _declared()[0]
    pins = [r for r in _requires(parent) if r.marker is None and any(s.operator == "==" for s in r.specifier)]
    assert any(_name(r.name) == _name(module) for r in pins), f"{parent} does not pin {module}: declare it"


def _version(requirement: Requirement, operator: str) -> Version:
    """The version of a requirement's single ``>=`` (its floor) or ``==`` (its pin)."""
    (version,) = [s.version for s in requirement.specifier if s.operator == operator]
    return Version(version)


def _oldest_pins() -> dict[str, Version]:
    """``.ci/oldest.txt``: distribution name → its ``==`` version."""
    oldest = Path(__file__).resolve().parents[1] / ".ci" / "oldest.txt"
    lines = [line for line in oldest.read_text(encoding="utf-8").splitlines() if line.strip() and line[0] != "#"]
    return {_name(r.name): _version(r, "==") for r in map(Requirement, lines)}


#: Pinned in .ci/oldest.txt beside the floors: the release of another distribution that an extra's floor brings
#: (dask[distributed]'s distributed, released with it).
COMPANIONS = {"distributed": "dask"}


def test_the_oldest_versions_ci_installs_are_the_declared_floors() -> None:
    """``.ci/oldest`` runs the suite on ``.ci/oldest.txt``: one ``==`` pin per required distribution, equal to its
    ``>=`` floor, and the dask extra's, so a floor raised or a dependency added without testing the oldest
    version shows here."""
    floors = {_name(r.name): _version(r, ">=") for r in _requires("oloproof_nb")
              if r.marker is None or _name(r.name) == "dask"}  # inspect-ai: see .ci/oldest
    pins = _oldest_pins()
    assert {"pandas", "pydantic", "pyarrow", "dask"} <= set(floors)
    assert {name: pin for name, pin in pins.items() if name not in COMPANIONS} == floors
    assert all(pins[companion] == pins[of] for companion, of in COMPANIONS.items())


def test_the_oldest_pins_follow_pyproject_not_only_the_installed_metadata() -> None:
    """The metadata of an editable install is pyproject.toml as it was when installed: a floor raised since then
    (and .ci/oldest.txt forgotten) passes the test above until a reinstall. pyproject.toml read as it is now."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as CI
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    declared = [Requirement(text) for text in project["project"]["dependencies"]]
    declared += [Requirement(text) for text in project["project"]["optional-dependencies"]["dask"]]
    pins = _oldest_pins()
    floors = {_name(r.name): _version(r, ">=") for r in declared}
    assert floors == {name: pin for name, pin in pins.items() if name not in COMPANIONS}


def _deprecated_api() -> None:
    """Stands in for a library's deprecated function: it blames its caller, as pandas, numpy and the standard
    library do (``stacklevel=2``)."""
    warnings.warn("this API goes away in the next major release", DeprecationWarning, stacklevel=2)


@pytest.mark.parametrize("module", ["oloproof_nb", "oloproof_nb._run.runner"])
@pytest.mark.parametrize("category", [DeprecationWarning, PendingDeprecationWarning, FutureWarning])
def test_a_deprecation_our_code_runs_into_fails_the_test(module: str, category: type[Warning]) -> None:
    """pyproject.toml's ``filterwarnings`` turns a deprecation warning blamed on any oloproof_nb module into an
    error, so a deprecated pandas/numpy/stdlib call in the package fails the test that reaches it, on CI's
    Python, instead of scrolling by in the warnings summary until the release that removes the API. The call
    is made from code whose module is ``module`` (the warnings machinery reads the caller frame's
    ``__name__``), as the package's own code would make it."""
    source = "_deprecated_api()" if category is DeprecationWarning else f"_warnings.warn('old', {category.__name__})"
    caller = {"__name__": module, "_deprecated_api": _deprecated_api, "_warnings": warnings}
    with pytest.raises(category):
        exec(compile(source, f"<{module}>", "exec"), caller)
