"""``changed_checks``'s ``same_state`` rule: the paths a ``state_unchanged``
check keeps under the ``ignore:`` patterns are part of how a pair is compared, as the patterns are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

import oloproof_nb as op
from oloproof_nb._analysis.run_checks import changed_checks

SHOP = '''
class Shop:
    version = "v1"
    def reset(self, state): self.state = {"items": dict(state["items"]), "log": list(state["log"])}
    def snapshot(self): return self.state
    def run(self, input):
        self.state["items"][input["item"]] = 1
        return {"steps": [], "answer": "ok", "status": "completed"}
'''
RELATION = "same_state_under_injected"
CASES = 4


def _shop(root: Path, kept: list[str]) -> Path:
    """4 cases with an injected copy each; state_matches ignores ``log``; ``kept``: a state_unchanged check's
    paths (none: no such check)."""
    root.mkdir(parents=True)
    (root / "shop.py").write_text(SHOP, encoding="utf-8")
    cases = [{"id": f"c{i}", "input": {"item": f"i{i}", "message": f"add i{i}"},
              "initial_state": {"items": {}, "log": []},
              "expected": {"answer": "ok", "state": {"items": {f"i{i}": 1}}}} for i in range(CASES)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "labels").mkdir()
    (root / "labels" / "injected.jsonl").write_text("".join(
        json.dumps({"case_id": f"c{i}~injected", "valid": True, "labeler": "ann"}) + "\n" for i in range(CASES)),
        encoding="utf-8")
    evaluators: list[dict[str, Any]] = [
        {"type": "state_matches", "mode": "changes", "ignore": ["log"]},
        {"type": "metamorphic_relation", "relation": "same_state", "transform": "injected"}]
    if kept:
        evaluators.append({"type": "state_unchanged", "paths": kept})
    body = {"name": "shop", "system": "shop:Shop", "evaluators": evaluators,
            "metamorphic": {"transforms": [{"name": "injected", "field": "message", "template": "{value} OVERRIDE",
                                            "validity_labels": "labels/injected.jsonl", "minimum_validity": 0.5}]}}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump({"allow_approximate_methods": True}), encoding="utf-8")
    return root


def _run(tmp_path: Path, name: str, kept: list[str]) -> op.Run:
    return op.run(op.load_suite(_shop(tmp_path / f"suite-{name}", kept)), out=tmp_path / "runs" / name,
                  progress=False)


def test_a_pair_compared_at_a_kept_path_no_more_is_another_check(tmp_path: Path) -> None:
    """The base keeps ``log`` (a state_unchanged check on it): its pairs compare ``log`` though state_matches
    ignores it. The candidate's suite dropped that check: its pairs leave ``log`` out, the relation's own
    settings and the ignore patterns unchanged."""
    base, cand = _run(tmp_path, "base", ["log"]), _run(tmp_path, "cand", [])
    assert changed_checks(base, cand) == {
        RELATION: "the state checks' ignore patterns or kept paths (or list rules) its pairs are compared by differ"}
    assert changed_checks(cand, base) == {
        RELATION: "the state checks' ignore patterns or kept paths (or list rules) its pairs are compared by differ"}


def test_the_same_kept_paths_in_another_order_are_the_same_check(tmp_path: Path) -> None:
    base, cand = _run(tmp_path, "base", ["log", "items"]), _run(tmp_path, "cand", ["items", "log", "log"])
    assert RELATION not in changed_checks(base, cand)
