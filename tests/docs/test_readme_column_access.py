"""README code never reads a frame column as an attribute where a DataFrame attribute has the column's name.

``run.cases.transform`` is ``DataFrame.transform``, a method: ``run.pairs.transform == "x"`` compares a method with
a string (False for every row, no error). The names at risk are built, not listed: DESIGN.md's frame columns (the
comments after the frames of its Python API) that ``pandas.DataFrame`` also has as an attribute.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent.parent
DESIGN = Path("/work/shared/DESIGN.md")
#: Names that are not frames: ``op.Case`` has a ``transform`` field (a check's ``case.transform``), and
#: ``DataFrame.transform`` names the method itself.
NOT_FRAMES = {"case", "DataFrame"}


def _design_columns() -> set[str]:
    """The column names DESIGN.md's API block lists after a frame (``run.pairs  # source_id, …``)."""
    text = DESIGN.read_text(encoding="utf-8") if DESIGN.exists() else ""
    columns: set[str] = {"transform"}  # the one shadowing name known when this was written, should DESIGN be absent
    frame = re.compile(r"^\s*(run\.\w+|gate\.table|op\.(validity|slice_table|outcome_summary)\(.*?\))\s*#\s*(.*)$")
    follow = re.compile(r"^\s*#\s*(.*)$")
    listing = False
    for line in text.splitlines():
        match, more = frame.match(line), follow.match(line)
        if match:
            comment, listing = match.group(3), True
        elif listing and more:
            comment = more.group(1)
        else:
            listing = False
            continue
        comment = re.sub(r"\(.*?\)", "", comment).split(" when ")[0]  # "(pass|fail|missing)", "(leaves that differ …)"
        columns |= set(re.findall(r"\b[a-z_][a-z0-9_]*\b", comment.replace("+", ",")))
    return columns


def _readme_and_notebook_code() -> list[tuple[str, str]]:
    """(where, code) for each README code block, inline code span and notebook code cell."""
    out: list[tuple[str, str]] = []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```[a-z]*\n(.*?)```", readme, flags=re.S)
    out += [("README.md code block", b) for b in blocks]
    prose = re.sub(r"```[a-z]*\n.*?```", "", readme, flags=re.S)
    out += [("README.md inline code", span) for span in re.findall(r"`([^`\n]+)`", prose)]
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                out.append((nb.name, "".join(cell["source"])))
    return out


def test_the_shadowed_columns_are_found() -> None:
    shadowed = _design_columns() & set(dir(pd.DataFrame))
    assert "transform" in shadowed  # the column of cases, pairs and op.validity that DataFrame.transform hides
    assert "holds" not in shadowed and "verdict" not in shadowed


def test_no_readme_or_notebook_code_reads_a_shadowed_column_as_an_attribute() -> None:
    shadowed = sorted(_design_columns() & set(dir(pd.DataFrame)))
    attribute = re.compile(r"(\w+)(\[[^\]]*\]|\([^)]*\))*\.(" + "|".join(map(re.escape, shadowed)) + r")\b(?!\s*\()")
    found = [(where, m.group(0)) for where, code in _readme_and_notebook_code() for m in attribute.finditer(code)
             if m.group(1) not in NOT_FRAMES]
    assert found == []


def test_the_readme_says_to_index_columns_by_name() -> None:
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert re.search(r"Index a column by its name \(`run\.pairs\[\"holds\"\]`.{0,300}`DataFrame\.transform`", text)
