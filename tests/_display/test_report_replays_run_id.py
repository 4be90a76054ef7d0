"""The fault replays section of a report names ``run_id=`` on a pooled run only. A suite that made no fault replay
left the section out, so a mutant that named ``run_id=`` for a run of its own too passed: the example makes them."""

from __future__ import annotations

from pathlib import Path

import oloproof_nb as op
from oloproof_nb._display.report import write_report


def test_the_replays_section_names_run_id_on_a_pooled_run_only(tmp_path: Path, plots_not_encoded: None) -> None:
    """Only the reports' text is read: their plots are drawn, not encoded (most of a report's time)."""
    from oloproof_nb.examples import init_example

    suite = init_example("stateful-agent", tmp_path / "suite")
    runs = [op.run(suite, out=tmp_path / name, progress=False, cache=False) for name in ("a", "b")]
    single = write_report(runs[0], tmp_path / "one.md").read_text(encoding="utf-8")
    assert "See `run.replays` and `run.panel(case_id)` for each one." in single
    pooled = op.load_runs([r.directory for r in runs])
    text = write_report(pooled, tmp_path / "pooled.md").read_text(encoding="utf-8")
    assert "See `run.replays` and `run.panel(case_id, run_id=run_id)` for each one." in text
