"""Suites for tests of the removal scan (``{"$absent": true}`` asked of something ``initial_state`` never held)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: A removal: the key (or by_key element) must be gone after the case.
GONE = {"$absent": True}

#: A desk that does nothing: it leaves ``initial_state`` as it was and answers "ok".
IDLE = """\
import oloproof_nb as op

class Desk(op.RecordedAgent):
    version = "idle-1"
    def reset(self, state): self.state = state
    def snapshot(self): return self.state
    def act(self, input, rec): return "ok"
"""


def removal_suite(folder: Path, cases: list[dict[str, Any]], *evaluators: str,
                  release: str | None = "criteria: {state_matches: 0.5}\n") -> Path:
    """Write a suite of the idle desk, ``cases`` (ids and inputs filled in) and ``evaluators`` (YAML flow items; a
    plain ``state_matches`` when none) and ``release`` (none when None); return its folder."""
    folder.mkdir(parents=True)
    lines = "".join(f"  - {e}\n" for e in evaluators or ("{type: state_matches}",))
    (folder / "oloproof.yaml").write_text(f"name: removals\nsystem: desk:Desk\nevaluators:\n{lines}", encoding="utf-8")
    if release is not None:
        (folder / "release.yaml").write_text(release, encoding="utf-8")
    (folder / "desk.py").write_text(IDLE, encoding="utf-8")
    for i, case in enumerate(cases):
        case.setdefault("id", f"c{i + 1}")
        case.setdefault("input", {"n": i})
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return folder


def state_case(initial: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """A case that starts from ``initial`` and expects the state ``expected``."""
    return {"initial_state": initial, "expected": {"state": expected}}
