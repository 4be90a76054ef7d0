"""The Parameters sections of ``_core``'s functions name each parameter of the signature, and no other.

STYLE.md item 10 asks every public function for numpydoc Parameters; ``tests/test_architecture.py`` checks that the
section is there for ``op``'s names. This checks what it says, for every function a ``_core`` module lists in
``__all__`` whose docstring has the section: a parameter added to a signature (``compare_state``'s ``paths``) or
renamed must be described where it is.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import oloproof_nb._core as core

_SECTION = re.compile(r"^Parameters\n-+\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", re.S | re.M)


def _documented(doc: str) -> set[str] | None:
    """The names a numpydoc Parameters section describes (``a, b : int`` names two); None without the section."""
    found = _SECTION.search(doc)
    if found is None:
        return None
    names: set[str] = set()
    for line in found.group(1).splitlines():
        if line and not line.startswith(" "):
            names |= {name.strip().lstrip("*") for name in line.split(" :")[0].split(",")}
    return names


def _functions() -> list[object]:
    out = []
    for info in pkgutil.iter_modules(core.__path__):
        module = importlib.import_module(f"{core.__name__}.{info.name}")
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.isfunction(value) and _documented(inspect.getdoc(value) or "") is not None:
                out.append(pytest.param(f"{info.name}.{name}", value, id=f"{info.name}.{name}"))
    return out


def test_the_section_reader_reads_a_section_as_numpydoc_writes_it() -> None:
    doc = "One line.\n\nParameters\n----------\na, b : int\n    Two.\nc : str\n    One.\n\nReturns\n-------\nint\n"
    assert _documented(doc) == {"a", "b", "c"}
    assert _documented("No sections.") is None


@pytest.mark.parametrize(("name", "function"), _functions())
def test_every_parameter_is_described_and_nothing_else(name: str, function: object) -> None:
    documented = _documented(inspect.getdoc(function) or "") or set()
    params = set(inspect.signature(function).parameters)  # type: ignore[arg-type]
    assert (sorted(params - documented), sorted(documented - params)) == ([], []), name
