"""The report's errors section once told a pooled run's reader that ``run.panel(case_id)`` shows the case;
on a pooled run that call raises for a case id several of the runs hold (it needs ``run_id=``). The failing cases
and fault replays sections said the same; each names ``run_id=`` on a pooled run now."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._display.report import write_report

RAISING = """
class Raising:
    version = "raising-1"

    def run(self, input):
        if input["answer"] == "boom":
            raise KeyError("member")
        return {"steps": [], "answer": input["answer"], "status": "completed"}
"""


def test_the_errors_section_of_a_pooled_run_names_the_call_that_shows_a_case(make_suite: Callable[..., Path],
                                                                               tmp_path: Path) -> None:
    cases = [{"id": f"c{i}", "input": {"answer": a, "n": i}, "expected": {"answer": "ok"}}
             for i, a in enumerate(["boom", "ok"])]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Raising", system_code=RAISING)
    runs = [op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b")]
    pooled = op.load_runs([r.directory for r in runs])
    text = write_report(pooled, tmp_path / "pooled.md").read_text(encoding="utf-8")
    assert "`run.cases` holds each, `run.panel(case_id, run_id=run_id)` shows the case." in text  # errors
    assert "`run.panel(case_id, run_id=run_id)` shows a case;" in text  # and the failing cases, which said the same
    assert "`run.panel(case_id)`" not in text
    with pytest.raises(op.OloproofError, match="pick one run"):  # what the old sentence led to
        pooled.panel("c0")
    assert pooled.panel("c0", run_id=runs[1].run_id).case_id == "c0"  # what the sentence says now
    single = write_report(runs[0], tmp_path / "one.md").read_text(encoding="utf-8")
    assert "`run.cases` holds each, `run.panel(case_id)` shows the case." in single  # a run of its own: as before
    assert "run_id=run_id" not in single
