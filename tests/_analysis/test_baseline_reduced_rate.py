"""The do-nothing baseline of a criterion release.yaml reduces with pass^k or pass@k.

The gate compares a reduced criterion's threshold with the mean of its cases' pass^k / pass@k values, so the idle
agent's rate it is set against must be reduced the same way: the plain share of rows is another quantity. A sandbox
whose state is right in one epoch of three whatever the agent does (a flaky environment) gives the idle agent 1 pass
in 3 rows of every case: a share of 1/3, but pass@3 = 1 − C(2, 3)/C(3, 3) = 1 (a check the idle agent passes) and
pass^3 = C(1, 3)/C(3, 3) = 0 (one it never passes). Before, ``noop_rate`` read 1/3 for both: the pass@3 check lost
its red flag (``passes_when_idle`` False at a threshold of 0.9) and the pass^3 one got a false one (True at 0.3).
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from pathlib import Path

import pytest

import oloproof_nb as op

#: The sandbox's state ``ok`` is True in the first of every three resets of a case (counted per case id, so the
#: order of the case runs does not matter); the agent sets it True itself.
FLAKY = '''
class Flaky:
    version = "flaky-1"
    resets = {}

    def reset(self, state):
        n = Flaky.resets[state["id"]] = Flaky.resets.get(state["id"], 0) + 1
        self.state = {"id": state["id"], "ok": n % 3 == 1}

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        self.state["ok"] = True
        return {"steps": [], "answer": "done", "status": "completed"}
'''

CASES = [{"id": f"c{i}", "input": {"i": i}, "initial_state": {"id": f"c{i}"},
          "expected": {"answer": "done", "state": {"ok": True}}} for i in range(6)]
EVALUATORS = [{"type": "state_matches", "mode": "subset"}, {"type": "answer_matches"}]


@pytest.fixture
def flaky(make_suite: Callable[..., Path]) -> Path:
    return make_suite(CASES, evaluators=EVALUATORS, system="sysmod:Flaky", system_code=FLAKY, epochs=3,
                      release={"allow_approximate_methods": True, "min_clusters": 2,
                               "criteria": {"state_matches": {"threshold": 0.9, "reduce": "pass@3"},
                                            "answer_matches": 0.5}})


def test_noop_rate_of_a_reduced_criterion_is_the_idle_agents_reduced_rate(flaky: Path) -> None:
    idle = op.baseline(flaky, progress=False)
    rows = idle.run.verdicts[idle.run.verdicts["criterion"] == "state_matches"]
    per_case = rows.groupby("case_id")["verdict"].agg(lambda v: int((v == "pass").sum()))
    assert rows.groupby("case_id").size().tolist() == [3] * 6 and per_case.tolist() == [1] * 6  # hand count
    assert idle.rates.set_index("criterion").loc["state_matches", "rate"] == pytest.approx(1 / 3)  # rows: the mean
    at_k = 1 - comb(3 - 1, 3) / comb(3, 3)  # pass@3 of 1 pass in 3 epochs: 1
    all_k = comb(1, 3) / comb(3, 3)  # pass^3: 0
    assert (at_k, all_k) == (1.0, 0.0)

    run = op.run(op.load_suite(flaky), progress=False)
    table = op.gate(run, baseline=idle).table.set_index("criterion")
    assert table.loc["state_matches", "reduce"] == "pass@3"
    assert table.loc["state_matches", "noop_rate"] == pytest.approx(at_k)  # was 1/3
    assert bool(table.loc["state_matches", "passes_when_idle"])  # was False: the red flag was lost
    assert table.loc["answer_matches", "noop_rate"] == 0.0  # a mean stays the share of rows
    assert not table.loc["answer_matches", "passes_when_idle"]

    pass_hat = op.gate(run, baseline=idle, criteria={"state_matches": {"threshold": 0.3, "reduce": "pass^3"}})
    row = pass_hat.table.set_index("criterion").loc["state_matches"]
    assert row["noop_rate"] == pytest.approx(all_k)  # was 1/3, at or above 0.3
    assert not row["passes_when_idle"]  # was True: a false red flag


def test_a_reduction_the_baseline_has_too_few_epochs_for_is_refused(flaky: Path) -> None:
    """No idle case has 6 rows: ``noop_rate`` was left blank and ``passes_when_idle`` False without a word, which
    reads as a check the idle agent does not pass. Refused, as a run of fewer epochs than a reduction's k is."""
    idle = op.baseline(flaky, progress=False)  # 3 epochs
    run = op.load_runs([op.run(op.load_suite(flaky), progress=False).directory,
                        op.run(op.load_suite(flaky), progress=False).directory])  # 6 rows per case pooled
    with pytest.raises(op.OloproofError, match=r"the baseline has epochs=3, and state_matches is gated with reduce: "
                                               r"pass\^6, which needs 6 epochs of each case: .*--epochs 6"):
        op.gate(run, baseline=idle, criteria={"state_matches": {"threshold": 0.5, "reduce": "pass^6"}})
