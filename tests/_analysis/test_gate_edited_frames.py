"""``edited_frames``: which Runs have no release decision, and when that ends.

A frame set in the session (``run.verdicts = frame``) makes the gate of that Run BLOCK with ``edited_frames``;
``write_columnar`` reads the frames again from the run folder (the set frame is gone), so the Run is the folder's
again. ``compare`` asks it of both runs: an edited base run can hide a regression as surely as an edited candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

import oloproof_nb as op

ANSWERS = """
class Answers:
    version = "answers-1"

    def __init__(self, wrong=6):
        self.wrong = wrong

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        return {"answer": "bad" if input["n"] < self.wrong else "ok", "steps": []}
"""


def _suite(make_suite: Callable[..., Path], **release: Any) -> Path:
    """40 independent cases, each expecting the answer ``ok``; release.yaml asks answer_matches ≥ 0.8."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(40)]
    return make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Answers", system_code=ANSWERS,
                      release={"criteria": {"answer_matches": 0.8}, **release})


def test_a_run_whose_frames_are_read_again_from_its_folder_is_no_longer_edited(make_suite: Callable[..., Path],
                                                                             tmp_path: Path) -> None:
    """By hand: 34 of 40 pass (c00-c05 answer ``bad``); scipy's exact 95% interval is [0.702, 0.943], so the
    folder's gate BLOCKs on the criterion (INSUFFICIENT_EVIDENCE) and its reason is empty. The 6 failing rows
    dropped in the session give 34 of 34 and ``edited_frames``; ``write_columnar`` drops that frame, and with it
    the note: the reason would otherwise name a frame the Run no longer holds."""
    run = op.run(op.load_suite(_suite(make_suite)), out=tmp_path / "run", progress=False)
    kept = run.verdicts
    run.verdicts = kept[kept["verdict"] == "pass"]
    assert op.gate(run).table.loc[0, "n"] == 34 and op.gate(run).reason.startswith("edited_frames: run.verdicts")
    run.write_columnar()
    assert run.replaced == ()
    g = op.gate(run)
    row = g.table.iloc[0]
    assert (row["n"], row["passed"], row["verdict"], g.verdict, g.reason) == (40, 34, "INSUFFICIENT_EVIDENCE",
                                                                               "BLOCK", "")
    assert row["ci_low"] == pytest.approx(stats.binomtest(34, 40).proportion_ci(0.95, "exact").low, abs=1e-12)


def test_the_frames_set_are_named_in_the_order_of_the_runs_frames(make_suite: Callable[..., Path],
                                                                  tmp_path: Path) -> None:
    """``run.replaced`` follows the frames' order (cases, steps, snapshots, …, verdicts; DESIGN.md), not the order
    set nor the alphabet: steps comes before snapshots, and the reason's example is the first of them."""
    run = op.run(op.load_suite(_suite(make_suite)), out=tmp_path / "run", progress=False)
    run.verdicts = run.verdicts
    run.snapshots = run.snapshots
    run.steps = run.steps
    assert run.replaced == ("steps", "snapshots", "verdicts")
    assert op.gate(run).reason.startswith("edited_frames: run.steps, run.snapshots, run.verdicts set in this "
                                          "session (run.steps = …)")


def test_an_edited_base_run_is_no_comparison_decision(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """By hand: the base system answers all 40 cases right, the candidate fails c00-c05 (34 of 40): 6 regressions,
    never NO_REGRESSION. A base whose verdicts were set in the session to fail the same 6 rows pairs exactly with
    the candidate: 0 discordant pairs of 40, whose Clopper-Pearson 95% upper bound 1 - 0.025**(1/40) = 0.088 is
    inside the margin 0.1, NO_REGRESSION, as two real runs of the candidate's system read. A base frame edited in a
    notebook is no more evidence than a candidate's: the comparison is INSUFFICIENT_EVIDENCE and says why."""
    folder = _suite(make_suite, regression={"margin": 0.1})
    sysmod: dict[str, Any] = {}
    exec(ANSWERS, sysmod)  # the suite's own class, built here with the number of wrong answers
    base = op.run(folder, system=sysmod["Answers"](0), out=tmp_path / "base", progress=False)
    cand = op.run(folder, system=sysmod["Answers"](6), out=tmp_path / "cand", progress=False)
    twin = op.run(folder, system=sysmod["Answers"](6), out=tmp_path / "twin", progress=False)
    assert (cand.verdicts["verdict"] == "pass").sum() == 34 and (base.verdicts["verdict"] == "pass").sum() == 40
    assert 1 - 0.025 ** (1 / 40) == pytest.approx(stats.binomtest(0, 40).proportion_ci(0.95, "exact").high)
    assert op.compare(base, cand).verdict != "NO_REGRESSION"  # the folders: 6 regressions of 40
    assert op.compare(twin, cand).verdict == "NO_REGRESSION"  # the same verdicts, recorded: what the edit reads as
    edited = base.verdicts
    edited.loc[edited["case_id"] < "c06", "verdict"] = "fail"
    base.verdicts = edited
    cmp = op.compare(base, cand)
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert f"the base run {base.run_id}: edited_frames: run.verdicts set in this session" in cmp.reason
