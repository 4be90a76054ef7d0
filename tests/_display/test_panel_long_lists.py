"""oloproof_nb._display.panel: a case with thousands of steps, changes and compared paths shows a bounded panel."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import oloproof_nb as op
from oloproof_nb._display.panel import SHOWN


def _panel(make_suite: Callable[..., Path], tmp_path: Path, mode: str) -> op.CasePanel:
    """One case that writes 1,200 rows, one step each (and its answer: 1,201 steps); its expected state names the
    first 600, the 600th with another value. ``subset`` compares those 600 paths (the 600th fails); ``changes``
    compares every changed path, 1,200, of which the 600 it does not name are unexpected changes."""
    writes = [{"path": ["rows", f"r{i:04d}"], "value": i} for i in range(1200)]
    expected = {"rows": {f"r{i:04d}": i for i in range(599)} | {"r0599": -1}}
    folder = make_suite([{"id": "bulk", "input": {"answer": "ok", "writes": writes}, "initial_state": {},
                          "expected": {"answer": "ok", "state": expected}}],
                        evaluators=[{"type": "state_matches", "mode": mode}])
    return op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("bulk")


def test_a_panel_shows_at_most_so_many_rows_of_each_long_list_and_says_how_many_more(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Every step, unexpected change and compared path was a row of the panel: a state check of a table of 100,000
    rows wrote 14 MB of HTML and 6 MB of text into the cell. Each list shows its first rows and how many more the
    attributes (which keep them all) hold."""
    panel = _panel(make_suite, tmp_path, "changes")
    assert (len(panel.steps), len(panel.comparisons), len(panel.unexpected)) == (1201, 1200, 600)
    html, text = panel._repr_html_(), repr(panel)
    for shown in (html, text):
        assert "… and 701 more steps: see panel.steps" in shown
        assert "… and 700 more compared paths: see panel.comparisons" in shown
        assert "… and 100 more unexpected changes: see panel.unexpected" in shown
    assert SHOWN == 500
    assert len(re.findall(r"<tr><td>\d+</td><td><code>write\(", html)) == 500
    assert len(re.findall(r"^  \[\d+\] write", text, flags=re.MULTILINE)) == 500
    assert len(re.findall(r"^    (?:ok |BAD) ", text, flags=re.MULTILINE)) == 500
    assert len(re.findall(r"^    state_matches: ", text, flags=re.MULTILINE)) == 500


def test_a_failed_compared_path_past_the_shown_rows_is_shown(make_suite: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    """The one failed path is the 600th: the panel picks the failed paths first, then the matched ones in order."""
    panel = _panel(make_suite, tmp_path, "subset")
    assert (len(panel.comparisons), len(panel.unexpected)) == (600, 0)
    text = repr(panel)
    bad = [line for line in text.splitlines() if line.startswith("    BAD ")]
    assert len(bad) == 1 and "r0599" in bad[0]
    assert "r0599" in panel._repr_html_().split("Compared paths")[1]
    ok = [line for line in text.splitlines() if line.startswith("    ok ")]
    assert len(ok) == 499 and "r0000" in ok[0] and "r0498" in ok[-1]
