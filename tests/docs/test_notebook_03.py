"""notebooks/03-outcome-receipts.ipynb: committed without outputs, and runs headless from start to end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from _shared import made_once
from nbclient import NotebookClient

from .test_notebooks import kernel_tmpdir, walls

pytestmark = pytest.mark.slow  # a developer loop skips these: pytest -m 'not slow'

NOTEBOOK = Path(__file__).resolve().parent.parent.parent / "notebooks" / "03-outcome-receipts.ipynb"


def _text(cell: nbformat.NotebookNode) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        data = output.get("data", {})
        parts.append(data.get("text/plain", ""))
    return "".join(parts)


def test_notebook_is_committed_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[nbformat.NotebookNode]:
    """The notebook executed once per session, whichever xdist worker asks first (tests/_shared.py), read back."""
    def build(root: Path) -> None:
        nb = nbformat.read(NOTEBOOK, as_version=4)
        cwd = tmp_path_factory.mktemp("nb03")
        tmp = tmp_path_factory.mktemp("nb03-tmpdir")
        with kernel_tmpdir(tmp):
            NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
        assert not any(tmp.iterdir()), f"the notebook left temporary folders: {sorted(p.name for p in tmp.iterdir())}"
        nbformat.write(nb, root / NOTEBOOK.name)

    with made_once(tmp_path_factory, "notebook-03", build) as root:
        yield nbformat.read(root / NOTEBOOK.name, as_version=4)


def test_notebook_runs_without_errors(executed: nbformat.NotebookNode) -> None:
    for cell in executed.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.get("output_type") == "error"], cell.source


def test_notebook_shows_the_side_by_side_and_the_hook(executed: nbformat.NotebookNode) -> None:
    text = "\n".join(_text(cell) for cell in executed.cells if cell.cell_type == "code")
    for status in ("verified", "missing", "stale", "hash_mismatch", "validator_failed", "wrong_artifact",
                   "unverified", "waiting"):
        assert status in text, status
    assert "terminal status == completed" in text and "outcome contract verified" in text
    assert "gate: BLOCK" in text
    assert "exit code: 0" in text and "exit code: 2" in text
    assert "hmac-sha256" in text


def test_notebook_shows_selections_not_walls(executed: nbformat.NotebookNode) -> None:
    """Each frame and printed line is one a reader takes in at a glance (tests/docs/test_notebooks.py ``walls``)."""
    assert walls(executed) == []


def test_notebook_says_a_waiting_case_holds_back_a_pass(executed: nbformat.NotebookNode) -> None:
    """The notebook said a ``waiting`` case has no verdict row, "so the gate leaves it out too" — read
    alone, an agent answering ``waiting`` wherever it cannot deliver would pass. The gate holds back an outcome
    criterion's PASS while any case waits (``outcome_waiting``, tests/evaluators/test_outcome.py); the prose says
    so. The gate's 2 of 6 is checked against scipy's Clopper–Pearson in the notebook, and the hook section names
    the warning of a contract that checks no content."""
    prose = " ".join(" ".join(cell.source for cell in executed.cells if cell.cell_type == "markdown").split())
    assert "so the gate leaves it out too" not in prose
    assert "the gate never passes its outcome criterion: a PASS becomes INSUFFICIENT_EVIDENCE (`outcome_waiting`)" \
        in prose
    assert "says so on stderr: `outcome_content_unchecked`" in prose
    gate_cell = next(cell.source for cell in executed.cells
                     if cell.cell_type == "code" and cell.source.lstrip().startswith(("gate =", "from scipy")))
    assert "beta.ppf(0.025, k, n - k + 1)" in gate_cell and "beta.ppf(0.975, k + 1, n - k)" in gate_cell
