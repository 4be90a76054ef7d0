"""Cold start: ``import oloproof_nb`` loads the package face only; each public name's module on first use.

Timing is measured by ``benchmarks/coldstart.py`` (recorded in benchmarks/README.md); this checks what the
timing depends on: which modules an import pulls in, in a fresh interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import oloproof_nb as op

#: Imported on first use only: plotting, HTML templates, statistics, Parquet files, progress bars, YAML, tables.
LAZY = ["matplotlib", "jinja2", "scipy", "statsmodels", "pyarrow.parquet", "tqdm", "yaml", "tabulate", "dask",
        "IPython"]


def _loaded(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.fixture(scope="module")
def face() -> set[str]:
    return _loaded("import oloproof_nb")


@pytest.fixture(scope="module")
def whole() -> set[str]:
    """Every public name used once (the whole face, as a notebook that touches everything loads it)."""
    return _loaded("import oloproof_nb as op\nfor name in op.__all__:\n    getattr(op, name)")


@pytest.mark.parametrize("module", LAZY)
def test_using_every_public_name_does_not_load(whole: set[str], module: str) -> None:
    assert module not in whole


def test_the_check_sees_what_is_loaded(whole: set[str]) -> None:
    assert {"oloproof_nb", "pandas", "pydantic", "oloproof_nb._analysis.columnar"} <= whole


def test_import_loads_the_evaluators_but_not_pandas(face: set[str]) -> None:
    """What the ``oloproof receipt`` completion hook needs: no pandas, no frames; the evaluator types registered."""
    assert "oloproof_nb.evaluators.state" in face and "pydantic" in face
    assert not {"pandas", "pyarrow", "oloproof_nb._analysis.run", "oloproof_nb._display.notebook"} & face


def test_the_receipt_command_does_not_load_pandas(tmp_path: Path) -> None:
    """The completion hook runs at every agent stop: verifying a receipt needs neither pandas nor Arrow."""
    (tmp_path / "out.txt").write_text("report\n", encoding="utf-8")
    contract = tmp_path / "CONTRACT.json"
    contract.write_text('{"artifact_id": "r1", "locator": "out.txt", "run_started_at": "2026-01-01T00:00:00Z"}',
                        encoding="utf-8")
    code = ("import sys\nfrom oloproof_nb.cli import main\n"
            f"code = main(['receipt', {str(contract)!r}, '--json'])\n"
            "print(code, 'pandas' in sys.modules, 'pyarrow' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert '"status": "verified"' in out.stdout
    assert out.stderr.strip().splitlines()[-1] == "0 False False"


def test_every_public_name_is_reachable_and_typed() -> None:
    """``__all__``, the lazy table and the type checkers' imports name the same things, each one importable."""
    source = Path(op.__file__).read_text(encoding="utf-8")
    typed: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            typed |= {alias.asname or alias.name for stmt in node.body if isinstance(stmt, ast.ImportFrom)
                      for alias in stmt.names}
    names = set(op.__all__) - {"__version__"}
    assert names == set(op._WHERE) == typed
    for name in op.__all__:
        assert getattr(op, name) is not None
    assert set(op.__all__) <= set(dir(op))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        op.nope  # noqa: B018
