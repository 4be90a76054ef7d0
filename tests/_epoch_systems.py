"""Systems for tests of epochs: a seeded coin, and a scripted system whose epochs take different paths."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path
from typing import Any

import yaml

import oloproof_nb as op

#: Right with probability ``input["p"]``, from an RNG seeded by (case, epoch); the world records the answer.
STOCHASTIC = '''
import random, zlib

class Coin:
    """Right with probability input["p"], from an RNG seeded by (case, epoch); the world records the answer."""
    version = "coin-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input, epoch):
        rng = random.Random(zlib.crc32(f"{input['id']}/{epoch}".encode()))
        answer = "yes" if rng.random() < input["p"] else "no"
        self.state["answered"] = answer
        return {"steps": [{"kind": "tool_call", "tool": "answer", "args": {"a": answer}, "result": {"ok": True}}],
                "answer": answer, "status": "completed"}
'''

#: The probabilities of the coin cases ``c0``…``c7``.
P = [0.9, 0.5, 0.2, 0.8, 0.6, 0.95, 0.4, 0.7]


def coin_answers_right(case_id: str, p: float, epoch: int) -> bool:
    """Whether ``STOCHASTIC`` answers right on (case, epoch): the same seeding rule, computed outside the run."""
    return random.Random(zlib.crc32(f"{case_id}/{epoch}".encode())).random() < p


#: Takes the epoch in ``run`` and has a setting (``careful``): a system the manifest records both of.
SEEDED = '''
class Seeded:
    version = "seeded-1"

    def __init__(self, careful=True):
        self.careful = careful

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input, epoch):
        self.state["epoch"] = epoch
        return {"answer": "ok", "status": "completed"}
'''

#: Epoch e of a case makes ``calls[e-1]`` tool calls and answers right when ``plan[e-1]``.
SCRIPTED = '''
class Scripted:
    version = "scripted-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input, epoch):
        ok, calls = input["plan"][epoch - 1], input["calls"][epoch - 1]
        steps = [{"kind": "tool_call", "tool": "t", "args": {"i": i}, "result": {"ok": True}} for i in range(calls)]
        return {"steps": steps, "answer": "yes" if ok else "no", "status": "completed"}
'''


def scripted_run(tmp_path: Path, name: str, steady: int, wrong: int, wrong_calls: list[int],
                 release: dict[str, object] | None = None, **config: object) -> op.Run:
    """A run of 3 epochs of :data:`SCRIPTED`: ``steady`` cases right in every epoch with 1 call, ``wrong`` cases
    wrong in epoch 2, whose epochs make ``wrong_calls`` calls; ``config`` goes to oloproof.yaml, ``release`` to
    release.yaml."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "sysmod.py").write_text(SCRIPTED, encoding="utf-8")
    cases = [{"id": f"ok{i:02d}", "input": {"plan": [True] * 3, "calls": [1, 1, 1], "n": i},
              "expected": {"answer": "yes"}} for i in range(steady)]
    cases += [{"id": f"{name}{i}", "input": {"plan": [True, False, True], "calls": wrong_calls, "n": i},
               "expected": {"answer": "yes"}} for i in range(wrong)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({
        "name": name, "system": "sysmod:Scripted", "epochs": 3, "evaluators": [{"type": "answer_matches"}],
        **config}), encoding="utf-8")
    if release is not None:
        (root / "release.yaml").write_text(yaml.safe_dump(release), encoding="utf-8")
    return op.run(op.load_suite(root), out=tmp_path / "run", progress=False)


def flaky_run(tmp_path: Path, flaky: int = 4) -> op.Run:
    """20 cases right in all 3 epochs with 1 call; ``flaky`` (4) wrong in epoch 2, which takes a second call;
    release.yaml reduces answer_matches with pass^3."""
    return scripted_run(tmp_path, "flaky", 20, flaky, [1, 2, 1], slices=["tool_calls:2"],
                        release={"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}})


#: A desk whose fault replays recover in some epochs (see its docstring), for pooled runs and the replay cache.
RECOVERING = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    """Pays a bill; after a failed payment it escalates in epoch e of case n when (n + e) % 3 != 0, else it
    claims the bill paid (a false success)."""

    version = "desk-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def _pay(self):
        self.state["paid"] = True
        return {"ok": True}

    def _escalate(self):
        self.state["ticket"] = True
        return {"ok": True}

    def act(self, input, rec):
        if rec.tool("pay", self._pay).get("ok"):
            return "paid"
        if (input["n"] + self.epoch) % 3:
            rec.tool("escalate", self._escalate)
            return "escalated"
        return "paid"

    def run(self, input, epoch):
        self.epoch = epoch
        return super().run(input)

    def replay(self, trajectory, *, checkpoint, change, epoch):
        self.epoch = epoch
        return super().replay(trajectory, checkpoint=checkpoint, change=change)
'''


def recovering_desk_suite(root: Path) -> Path:
    """A suite at ``root`` of 8 cases ``b0`` … ``b7`` of 2 epochs run by :data:`RECOVERING`, with
    answer_matches, state_matches (subset) and a fault replay of ``pay`` (error; ``escalate`` counts as recovery)."""
    root.mkdir()
    (root / "desk.py").write_text(RECOVERING, encoding="utf-8")
    cases = [{"id": f"b{n}", "input": {"n": n}, "initial_state": {},
              "expected": {"answer": "paid", "state": {"paid": True}}} for n in range(8)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({
        "name": "desk", "system": "desk:Desk", "epochs": 2, "evaluators": [
            {"type": "answer_matches"}, {"type": "state_matches", "mode": "subset"},
            {"type": "fault_recovery", "tool": "pay", "fault": "error", "escalate_tools": ["escalate"]}]}),
        encoding="utf-8")
    return root


#: A library desk that lends a book (Good), one that lends only on a request's first try and answers "lent" on
#: every later try (Forgetful: the instance lives across cases, so a suite's epochs find it), and
#: one that never lends (Idle).
LIBRARY_DESKS = '''
import oloproof_nb as op

class Good(op.RecordedAgent):
    """Lends every time it is asked."""
    version = "desk-1"
    def reset(self, state): self.state = state
    def snapshot(self): return self.state
    def lend(self, book, member):
        self.state["loans"][book] = member
        return {"ok": True}
    def act(self, input, rec):
        rec.tool("lend", self.lend, book=input["book"], member=input["member"])
        return "lent"

class Forgetful(Good):
    """Lends the first time a request is made; answers "lent" without lending on every later try (F40's desk)."""
    version = "desk-2"
    def __init__(self):
        self.seen = set()
    def act(self, input, rec):
        key = (input["book"], input["member"])
        if key in self.seen:
            return "lent"
        self.seen.add(key)
        return super().act(input, rec)

class Idle(Good):
    """Answers "lent" and never lends."""
    version = "desk-3"
    def act(self, input, rec):
        return "lent"
'''

LOANS = 40


def library_suite(root: Path, system: str, epochs: int = 3, release: dict[str, Any] | None = None) -> Path:
    """A suite of ``LOANS`` loans, one cluster each, judged by ``answer_matches`` and ``state_matches`` (mode
    ``changes``) over ``epochs`` epochs; ``system``: the class of :data:`LIBRARY_DESKS` it runs."""
    root.mkdir(parents=True)
    (root / "desk.py").write_text(LIBRARY_DESKS, encoding="utf-8")
    lines = [{"id": f"b{i:02d}", "input": {"book": f"b{i:02d}", "member": "m1"}, "initial_state": {"loans": {}},
              "expected": {"answer": "lent", "state": {"loans": {f"b{i:02d}": "m1"}}}} for i in range(LOANS)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines), encoding="utf-8")
    body = {"name": "library", "system": f"desk:{system}", "epochs": epochs,
            "evaluators": [{"type": "answer_matches"}, {"type": "state_matches", "mode": "changes"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump(release or {}, sort_keys=False), encoding="utf-8")
    return root
