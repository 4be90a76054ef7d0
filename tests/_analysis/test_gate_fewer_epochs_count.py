"""``fewer_epochs`` (a run tried each case fewer times than its suite asks): the count of tries it names."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

import oloproof_nb as op
from oloproof_nb._analysis.gate import fewer_epochs

DESK = '''
class Desk:
    version = "d1"
    def reset(self, state): self.state = state
    def snapshot(self): return self.state
    def run(self, input):
        self.state["loans"][input["book"]] = "m1"
        return {"steps": [], "answer": "lent", "status": "completed"}
'''


def _suite(root: Path, epochs: int) -> Path:
    root.mkdir(parents=True)
    (root / "desk.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": f"b{i}", "input": {"book": f"b{i}"}, "initial_state": {"loans": {}},
              "expected": {"state": {"loans": {f"b{i}": "m1"}}}} for i in range(4)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    body = {"name": "lib", "system": "desk:Desk", "epochs": epochs,
            "evaluators": [{"type": "state_matches", "mode": "changes"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump({"allow_approximate_methods": True,
                                                       "criteria": {"state_matches": 0.5}}), encoding="utf-8")
    return root


def test_two_tries_of_a_three_epoch_suite_are_named_two_not_once(tmp_path: Path) -> None:
    """4 cases × 2 tries = 8 rows, all passing; the suite asks for 3: BLOCK, and the reason says 2 times."""
    run = op.run(op.load_suite(_suite(tmp_path / "s", 3)), out=tmp_path / "r", epochs=2, progress=False)
    g = op.gate(run)
    row = g.table.set_index("criterion").loc["state_matches"]
    assert (int(row["n"]), int(row["passed"])) == (8, 8)
    assert g.verdict == "BLOCK"
    assert g.reason.startswith("fewer_epochs: the run tried each case 2 times (")
    assert g.reason == fewer_epochs(run) and "asks for epochs: 3;" in g.reason


def test_a_pool_names_the_first_of_its_runs_made_with_the_most_epochs(tmp_path: Path) -> None:
    """One run made while oloproof.yaml asked for ``epochs: 1``, two made after it was raised to 3: the reason names
    the short run and, of the two that ask for 3, the first in the pool's order, whichever order that is."""
    root = _suite(tmp_path / "s", 1)
    one = op.run(op.load_suite(root), out=tmp_path / "one", progress=False)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("epochs: 1", "epochs: 3"), encoding="utf-8")
    first, second = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b"))
    for runs, asking in (([one, first, second], first), ([second, one, first], second)):
        pool = op.load_runs([r.directory for r in runs])
        assert fewer_epochs(pool).startswith(
            f"fewer_epochs: run {one.run_id} of the 3 pooled tried each case once as the oloproof.yaml it was made "
            f"with asked, where run {asking.run_id}'s asks for epochs: 3 (the suite's epochs changed between the "
            "runs); ")
