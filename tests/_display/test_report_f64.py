"""Review F64 (mutants on review L7's report sentences): the fault replays section names ``run_id=`` on a pooled run
only. L7's test suite made no fault replay, so the section was absent and a mutant that named ``run_id=`` for a
run of its own too passed."""

from __future__ import annotations

from pathlib import Path

import oloproof_nb as op
from oloproof_nb._display.report import write_report


def test_the_replays_section_names_run_id_on_a_pooled_run_only(tmp_path: Path) -> None:
    from oloproof_nb.examples import init_example

    suite = init_example("stateful-agent", tmp_path / "suite")
    runs = [op.run(suite, out=tmp_path / name, progress=False, cache=False) for name in ("a", "b")]
    single = write_report(runs[0], tmp_path / "one.md").read_text(encoding="utf-8")
    assert "See `run.replays` and `run.panel(case_id)` for each one." in single
    pooled = op.load_runs([r.directory for r in runs])
    text = write_report(pooled, tmp_path / "pooled.md").read_text(encoding="utf-8")
    assert "See `run.replays` and `run.panel(case_id, run_id=run_id)` for each one." in text
