"""``mypy`` stays clean in the environment the README's Notebooks section builds (``pip install jupyterlab``).

jupyterlab installs ipywidgets, which has no type stubs: the import in ``oloproof_nb._display.notebook`` was
silenced inline for ``import-not-found`` only, so beside jupyterlab mypy failed on it (``import-untyped``, and the
ignore reported unused) — CI's own check, broken by following the README. The module is ignored in pyproject.toml
instead, which covers both: absent, and installed without stubs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def test_ipywidgets_is_ignored_in_pyproject_not_by_an_inline_code_one_environment_lacks() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as CI
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    ignored = {m for o in config.get("overrides", []) if o.get("ignore_missing_imports") for m in o["module"]}
    assert "ipywidgets" in ignored
    source = (ROOT / "oloproof_nb" / "_display" / "notebook.py").read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if re.match(r"\s*import ipywidgets\b", line)]
    assert imports and not any("type: ignore" in line for line in imports)
