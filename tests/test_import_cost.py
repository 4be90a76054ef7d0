"""Cold start: ``import oloproof_nb`` loads none of the heavy modules it needs only later.

Timing is measured by ``benchmarks/coldstart.py`` (recorded in benchmarks/README.md); this checks what the
timing depends on: which modules an import pulls in, in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

#: Imported on first use only: plotting, HTML templates, statistics, Parquet files, progress bars, YAML, tables.
LAZY = ["matplotlib", "jinja2", "scipy", "statsmodels", "pyarrow.parquet", "tqdm", "yaml", "tabulate", "dask",
        "IPython"]


@pytest.fixture(scope="module")
def loaded() -> set[str]:
    code = "import sys, oloproof_nb; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("module", LAZY)
def test_import_does_not_load(loaded: set[str], module: str) -> None:
    assert module not in loaded


def test_the_check_sees_what_is_loaded(loaded: set[str]) -> None:
    assert {"oloproof_nb", "pandas", "pydantic", "oloproof_nb._analysis.columnar"} <= loaded
