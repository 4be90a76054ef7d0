"""op.compare: base rows that did not pass and have no row in the candidate are weighed as ties.

A fault replay exists only where the system called the tool. A candidate that no longer calls it in a case whose
replay the base failed takes a tie out of the paired difference, which raises the interval where gains outnumber
losses: left out alone, a candidate made worse read better than before. Expected values are hand counts and the
reference interval of ``tests/_cr2_reference.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cr2_reference import paired_interval

import oloproof_nb as op

RECOVERS = "recovers_from_error_at_refund"
EVALUATORS = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "refund", "fault": "error"}]
RELEASE = {"regression": {"margin": 0.05, "criteria": [RECOVERS]}, "min_clusters": 10}
LOST = {f"c{i:02d}" for i in range(5)}  # the base retries a failed refund here, the candidate does not
GAINED = {f"c{i:02d}" for i in range(5, 19)}  # the other way round; c19: neither retries


class Desk(op.RecordedAgent):
    """Refunds the order of each case and retries a failed refund for the orders of ``retry`` (else it answers
    "done" as if it had refunded: the fault replay fails); on the orders of ``skip`` it calls no tool and answers
    wrong."""

    def __init__(self, retry: set[str], skip: set[str], version: str) -> None:
        super().__init__()
        self.retry, self.skip, self.version, self.state = retry, skip, version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def refund(self, order: str) -> dict[str, Any]:
        self.state[order] = "refunded"
        return {"ok": True}

    def act(self, input: dict[str, Any], rec: Any) -> str:  # noqa: A002 - the system protocol's parameter name
        tag = input["tag"]
        if tag in self.skip:
            return "wrong"
        if not rec.tool("refund", self.refund, order=tag).get("ok"):
            if tag not in self.retry:
                return "done"
            rec.tool("refund", self.refund, order=tag)
        return "ok"


def test_a_candidate_that_no_longer_reaches_a_check_the_base_failed_reads_no_better(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """20 cases. The candidate loses the fault replay of c00-c04 and gains c05-c18; c19 fails in both: by hand
    5 pass → fail and 14 fail → pass of 20, ci_low below −0.05. The same candidate made worse on c19 (no refund,
    a wrong answer) has no replay there: of the 19 rows left ci_low is above −0.05, which read NO_REGRESSION.
    Counted as a tie, as before, the row keeps it INSUFFICIENT_EVIDENCE."""
    suite = op.load_suite(make_suite([{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}"}, "expected": {"answer": "ok"}}
                                      for i in range(20)], evaluators=EVALUATORS))

    def run(retry: set[str], skip: set[str], name: str) -> op.Run:
        return op.run(suite, system=lambda: Desk(retry, skip, name), out=tmp_path / name, progress=False)

    base, still, worse = run(LOST, set(), "base"), run(GAINED, set(), "still"), run(GAINED, {"c19"}, "worse")
    b = [1] * 5 + [0] * 15  # c00-c19: the base passes the replay of c00-c04
    k = [0] * 5 + [1] * 14 + [0]
    low20 = paired_interval(b, k, [1] * 20)[0]
    low19 = paired_interval(b[:19], k[:19], [1] * 19)[0]
    assert low20 < -0.05 <= low19  # the design: left out, the tie raises ci_low across −margin

    before = op.compare(base, still, release=RELEASE).table.set_index("criterion").loc[RECOVERS]
    assert (before["n"], before["pass_to_fail"], before["fail_to_pass"]) == (20, 5, 14)
    assert before["ci_low"] == pytest.approx(low20, abs=1e-10) and before["verdict"] == "INSUFFICIENT_EVIDENCE"

    cmp = op.compare(base, worse, release=RELEASE)
    row = cmp.table.set_index("criterion").loc[RECOVERS]
    assert (row["n"], row["one_sided"], row["pass_to_fail"], row["fail_to_pass"]) == (19, 1, 5, 14)
    assert row["ci_low"] == pytest.approx(low19, abs=1e-10)  # the table still shows the paired rows
    assert row["verdict"] == cmp.verdict == "INSUFFICIENT_EVIDENCE"  # was NO_REGRESSION
    assert row["reason"].startswith(f"unpaired_ties: 1 row(s) the base run did not pass have no row in the "
                                    f"candidate (e.g. a fault replay of a tool it no longer calls); counted as ties, "
                                    f"as if the candidate failed there too, ci_low is {low20:.4g}, below −margin")


def test_ties_that_still_clear_the_margin_leave_no_regression(make_suite: Callable[..., Path],
                                                              tmp_path: Path) -> None:
    """The same runs at margin 0.1: counted as a tie or left out, ci_low clears −0.1 (by the reference interval),
    so the candidate's NO_REGRESSION stands."""
    suite = op.load_suite(make_suite([{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}"}, "expected": {"answer": "ok"}}
                                      for i in range(20)], evaluators=EVALUATORS))
    base = op.run(suite, system=lambda: Desk(LOST, set(), "base"), out=tmp_path / "base", progress=False)
    worse = op.run(suite, system=lambda: Desk(GAINED, {"c19"}, "worse"), out=tmp_path / "worse", progress=False)
    b, k = [1] * 5 + [0] * 15, [0] * 5 + [1] * 14 + [0]
    assert paired_interval(b, k, [1] * 20)[0] >= -0.1
    release = {**RELEASE, "regression": {"margin": 0.1, "criteria": [RECOVERS]}}
    row = op.compare(base, worse, release=release).table.set_index("criterion").loc[RECOVERS]
    assert row["verdict"] == "NO_REGRESSION", row["reason"]


class Unreproduced(Desk):
    """`Desk`, whose refund in the cases of ``unsteady`` names another order on every call after the first: the
    recording's call is not made again, so each fault replay of such a case does not reproduce it (missing)."""

    def __init__(self, retry: set[str], skip: set[str], version: str, unsteady: set[str]) -> None:
        super().__init__(retry, skip, version)
        self.unsteady = unsteady
        self.calls: dict[str, int] = {}

    def act(self, input: dict[str, Any], rec: Any) -> str:  # noqa: A002 - the system protocol's parameter name
        tag = input["tag"]
        if tag not in self.unsteady:
            return super().act(input, rec)
        self.calls[tag] = self.calls.get(tag, 0) + 1
        order = tag if self.calls[tag] == 1 else f"{tag}-{self.calls[tag]}"
        return "ok" if rec.tool("refund", self.refund, order=order).get("ok") else "done"


def test_ties_and_rows_the_base_did_not_measure_are_weighed_together(make_suite: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    """20 cases. The base passes the replay of c00-c03 and its replay of c18 does not reproduce the recording
    (missing); the candidate passes c04-c17, fails c18 and no longer calls the tool in c19, whose replay the base
    failed. By hand: 4 pass → fail, 14 fail → pass, 1 base row missing, 1 tie left out. With the missing row
    counted as a base pass ci_low clears −0.05, and so it does with the tie counted; with both, the worst case
    for the candidate (the same rows as a base that passed c18), it does not: NO_REGRESSION read exit 0."""
    suite = op.load_suite(make_suite([{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}"}, "expected": {"answer": "ok"}}
                                      for i in range(20)], evaluators=EVALUATORS))
    unsteady = Unreproduced(set(), set(), "base", {"c18"})  # one instance: its calls are counted across replays
    unsteady.retry = {f"c{i:02d}" for i in range(4)}
    base = op.run(suite, system=lambda: unsteady, out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=lambda: Desk({f"c{i:02d}" for i in range(4, 18)}, {"c19"}, "cand"),
                  out=tmp_path / "cand", progress=False)
    b, k = [1] * 4 + [0] * 14, [0] * 4 + [1] * 14  # c00-c17; then c18 (missing in the base, failed) and c19 (tie)
    as_pass = paired_interval([*b, 1], [*k, 0], [1] * 19)[0]
    as_tie = paired_interval([*b, 0, 0], [*k, 0, 0], [1] * 20)[0]
    both = paired_interval([*b, 1, 0], [*k, 0, 0], [1] * 20)[0]
    assert min(as_pass, as_tie) >= -0.05 > both  # each alone holds, together they do not

    cmp = op.compare(base, cand, release=RELEASE)
    row = cmp.table.set_index("criterion").loc[RECOVERS]
    assert (row["n"], row["one_sided"], row["pass_to_fail"], row["fail_to_pass"], row["missing"]) == (19, 1, 4, 14, 1)
    assert row["verdict"] == cmp.verdict == "INSUFFICIENT_EVIDENCE"  # was NO_REGRESSION
    assert row["reason"].startswith("base_missing: 1 paired row(s) are missing in the base run")
    assert f"as ties, ci_low is {both:.4g}, below −margin" in row["reason"]


class Crashes(Desk):
    """`Desk`, whose run of the cases of ``crash`` raises: the base measured nothing there (missing)."""

    def __init__(self, retry: set[str], skip: set[str], version: str, crash: set[str]) -> None:
        super().__init__(retry, skip, version)
        self.crash = crash

    def act(self, input: dict[str, Any], rec: Any) -> str:  # noqa: A002 - the system protocol's parameter name
        if input["tag"] in self.crash:
            raise RuntimeError("the sandbox went down")
        return super().act(input, rec)


def test_ties_of_another_criterion_are_not_weighed_with_rows_the_base_did_not_measure(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """20 cases, both criteria gated at margin 0.4. The base's run of c19 raises (missing in both criteria); the
    candidate calls no tool in c18, whose replay the base failed, and answers it wrong. answer_matches: 18 ties and
    1 loss paired, 1 base row missing; the tie of c18 belongs to the fault replay's criterion and is no row of
    answer_matches, so its worst case is the missing row alone, counted as a base pass (by hand: 1 loss of 20)."""
    suite = op.load_suite(make_suite([{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}"}, "expected": {"answer": "ok"}}
                                      for i in range(20)], evaluators=EVALUATORS))
    everyone = {f"c{i:02d}" for i in range(20)}
    base = op.run(suite, system=lambda: Crashes(everyone - {"c18"}, set(), "base", {"c19"}), out=tmp_path / "base",
                  progress=False)
    cand = op.run(suite, system=lambda: Desk(everyone, {"c18"}, "cand"), out=tmp_path / "cand", progress=False)
    release = {"regression": {"margin": 0.4, "criteria": ["answer_matches", RECOVERS]}, "min_clusters": 10}
    worst = paired_interval([1] * 20, [1] * 18 + [0, 1], [1] * 20)[0]  # c19: the candidate passes, a tie at worst
    assert worst >= -0.4  # the design: the missing row as a base pass still clears the margin

    cmp = op.compare(base, cand, release=release)
    table = cmp.table.set_index("criterion")
    assert table.loc[RECOVERS, "one_sided"] == 2  # c18, the tie (the base failed its replay), and c19 (no base run)
    row = table.loc["answer_matches"]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"], row["missing"]) == (20, 1, 1, 1)  # c19: missing
    assert row["verdict"] == "NO_REGRESSION", row["reason"]
    assert row["reason"] == ("ci_low_at_or_above_minus_margin; 1 paired row(s) are missing in the base run, which "
                             "measured nothing there (e.g. a case run that ended in error or timeout, a replay that "
                             "did not reproduce its recording); counted as base passes, the most the base could have "
                             f"done, ci_low is {worst:.4g}: NO_REGRESSION holds either way")
