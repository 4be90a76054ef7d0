"""A slice table of a pooled run counts a try another run of the pool holds once, as the gate does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oloproof_nb as op

#: Seeded by its epoch (README 6b): answers wrong in epoch 2 of cases 0-5, right otherwise; no tool call.
DESK = '''
class Desk:
    version = "desk-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input, epoch):
        return {"answer": "no" if epoch == 2 and input["n"] < 6 else "ok", "status": "completed"}
'''


def test_a_pool_of_two_runs_given_their_epoch_reduces_each_try_once(tmp_path: Path) -> None:
    """Two 2-epoch runs of a system given its epoch hold the same (case, epoch) tries twice. By hand: cases 0-5
    fail epoch 2, so pass^2 over their 2 tries is 0, and the bin's rate is 24/30. Read as 4 tries (2 passes of 4)
    each of those cases was worth C(2,2)/C(4,2) = 1/6, a rate of 25/30."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "desk.py").write_text(DESK, encoding="utf-8")
    (root / "cases.jsonl").write_text("".join(json.dumps({"id": f"c{n:02d}", "input": {"n": n}, "initial_state": {},
                                                          "expected": {"answer": "ok"}}) + "\n" for n in range(30)),
                                      encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: desk\nsystem: desk:Desk\nevaluators:\n  - type: answer_matches\n",
                                        encoding="utf-8")
    suite = op.load_suite(root)
    a, b = (op.run(suite, out=tmp_path / name, epochs=2, progress=False) for name in ("a", "b"))
    pooled = op.load_runs([a.directory, b.directory])
    release = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}}
    table = op.slice_table(pooled, "tool_calls:1", release=release).set_index("bin")
    row = table.loc["<1"]
    assert (row["support"], row["passed"]) == (30, 24)
    assert row["rate"] == pytest.approx(24 / 30)
    gated = op.gate(pooled, release=release).table.set_index("criterion").loc["answer_matches"]
    assert (gated["n"], gated["passed"]) == (30, 24)  # the gate's count of the same pool, for the reader
