"""The README lists every column of every frame, in the code's order: parsed from its list, compared with the specs."""

from __future__ import annotations

import re
from pathlib import Path

from oloproof_nb._analysis.baseline import BASELINE_RATES, IDLE_COLUMNS
from oloproof_nb._analysis.columns import FRAMES, GATE, SLICES, VALIDITY

README = Path(__file__).resolve().parent.parent.parent / "README.md"


def _readme_lists() -> dict[str, list[str]]:
    text = README.read_text(encoding="utf-8")
    region = text[text.index("<!-- columns:"):text.index("<!-- /columns -->")]
    items = re.split(r"\n- ", region)[1:]
    out = {}
    for item in items:
        name, rest = item.split(":", 1)
        names = " ".join(rest.split()).split(" — ")[0]  # the list ends where the explanation starts
        extra = re.search(r"with `baseline=`, ([\w, ]+)\.", rest.replace("\n", " ").replace("  ", " "))
        columns = [c.strip() for c in names.rstrip(".").split(",")]
        if extra:
            columns += [c.strip() for c in extra.group(1).split(",")]
        out[name.strip("`")] = columns
    return out


def test_the_readme_lists_every_column_of_every_frame() -> None:
    expected = {f"run.{name}": spec.names for name, spec in FRAMES.items()}
    expected["gate.table"] = GATE.names + IDLE_COLUMNS.names
    expected["op.slice_table(run, spec)"] = SLICES.names
    expected["op.validity(run)"] = VALIDITY.names
    expected["op.baseline(suite).rates"] = BASELINE_RATES.names
    assert _readme_lists() == expected
