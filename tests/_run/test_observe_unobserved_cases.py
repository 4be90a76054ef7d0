"""A case that promises no artifact ran beside one that observes it, and wrote the file it observes.

A report desk writes ``out/report.txt`` when asked. Case ``draft`` (no outcome contract: its state or answer is
judged) writes it; case ``publish`` promises it (``locator: out/report.txt``) and its agent writes nothing. Run
alone, ``publish`` is ``stale`` (the file the reset left). On 2 workers the two ran side by side (only cases whose
contracts share a locator were kept apart), ``draft`` wrote the file while ``publish`` ran, and ``publish`` was
``verified: present, fresh``: ``outcome_verified`` 1 of 1 for an agent that delivered nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from _outcome_systems import waiting_desk

import oloproof_nb as op
from oloproof_nb._run.observe import OBSERVES, UNOBSERVED, HeldBack


def _suite(root: Path, isolation: str) -> Path:
    root.mkdir()
    (root / "desk.py").write_text(waiting_desk("desk-r53", "draft", "publish", ("report.txt",), "report.txt"),
                                  encoding="utf-8")  # draft writes the report while publish waits for one
    cases = [
        {"id": "draft", "input": {"role": "draft"}, "expected": {"answer": "done"}},
        {"id": "publish", "input": {"role": "publish"}, "expected": {"answer": "done"},
         "outcome": {"artifact_id": "report", "locator": "out/report.txt"}},
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = {"name": "r53", "system": "desk:Desk", "cases": "cases.jsonl", "isolation": isolation,
              "evaluators": [{"type": "answer_matches"}, {"type": "outcome_contract"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_case_that_promises_nothing_does_not_run_beside_one_that_observes_its_file(tmp_path: Path,
                                                                                     isolation: str) -> None:
    suite = _suite(tmp_path / "desk", isolation)
    run = op.run(op.load_suite(suite), out=tmp_path / "run", workers=2)
    receipts = run.receipts
    assert receipts.case_id.tolist() == ["publish"]
    # not verified: the report there is draft's, written before publish started (the reset left it: stale)
    assert receipts.status.tolist() == ["stale"], receipts.reason.tolist()
    table = op.gate(run).table.set_index("criterion")
    assert (table.loc["outcome_verified", "n"], table.loc["outcome_verified", "passed"]) == (1, 0)


def test_observing_and_unobserved_items_keep_apart_but_not_from_their_own_kind() -> None:
    keys = {"o1": frozenset(["/out/a", OBSERVES]), "o2": frozenset(["/out/b", OBSERVES]),
            "u1": frozenset([UNOBSERVED]), "u2": frozenset([UNOBSERVED])}
    held = HeldBack(["o1", "u1", "o2", "u2"], keys.__getitem__)
    busy: set[str] = set()
    assert held.next_free(busy.__contains__) == ("o1", keys["o1"])
    busy |= keys["o1"]  # o1 runs: u1 waits; o2 (another file) goes beside it, past u1
    assert held.next_free(busy.__contains__) == ("o2", keys["o2"])
    busy |= keys["o2"]
    assert held.next_free(busy.__contains__) is None  # u1 and u2 wait while an observer runs
    busy = set()  # both observers done: u1 starts, and u2 beside it
    assert held.next_free(busy.__contains__) == ("u1", keys["u1"])
    busy |= keys["u1"]
    assert held.next_free(busy.__contains__) == ("u2", keys["u2"])
    assert held.next_free(busy.__contains__) is None and held.done
