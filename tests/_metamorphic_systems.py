"""Purpose-built tiny systems for the metamorphic tests, and a helper that writes a suite around them.

``DIRECTED`` reads directives from the case's ``message``; a transform that
appends a directive changes exactly one thing about what the system does:

======================  ==========================================================
``!answer``             a different final answer (actions and state unchanged)
``!loud``               the same answer in upper case with spaces around it
``!action``             ``lookup`` is called with other args (a read: state unchanged)
``!state``              the state changes silently (no extra tool call, same answer)
``!raise``              the system raises when the message *ends* with it
======================  ==========================================================

Without a directive the system calls ``lookup(item=<input.item>)`` then
``mark(item=...)``, which sets ``items.<item>`` to ``"marked"``, and answers
``input.answer``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

DIRECTED = '''
import copy


class Directed:
    version = "directed-1"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        msg = input["message"]
        if msg.endswith("!raise"):
            raise RuntimeError("asked to raise")
        item = input["item"]
        steps = []
        args = {"item": item, "verbose": True} if "!action" in msg else {"item": item}
        steps.append({"kind": "tool_call", "tool": "lookup", "args": args, "result": {"ok": True}})
        self.state.setdefault("items", {})[item] = "marked"
        steps.append({"kind": "tool_call", "tool": "mark", "args": {"item": item}, "result": {"ok": True}})
        if "!state" in msg:
            self.state["side_effect"] = True
        answer = input.get("answer", "done")
        if "!answer" in msg:
            answer = "something else"
        if "!loud" in msg:
            answer = "  " + str(answer).upper() + "\\n"
        steps.append({"kind": "message", "role": "assistant", "content": str(answer)})
        return {"steps": steps, "answer": answer, "status": "completed"}


class NoState:
    """No reset, no snapshot: records no state."""

    def run(self, input):
        return {"steps": [], "answer": input.get("answer", "done")}
'''


def case(cid: str, message: str = "please mark it", **extra: Any) -> dict[str, Any]:
    """A source case for :data:`DIRECTED`."""
    item = extra.pop("item", cid)
    return {"id": cid, "input": {"item": item, "message": message, **extra.pop("input", {})},
            "initial_state": {"items": {}}, "expected": {"answer": "done"}, **extra}


def transform(name: str, directive: str = "", minimum_validity: float = 0.5,
              labels: str | None = None, field: str = "message") -> dict[str, Any]:
    """A transform appending ``directive`` to the message (``{value}`` alone when empty)."""
    template = "{value} " + directive if directive else "{value} (kind regards)"
    return {"name": name, "field": field, "template": template,
            "validity_labels": labels or f"labels/{name}.jsonl", "minimum_validity": minimum_validity}


def write_labels(root: Path, name: str, rows: list[dict[str, Any]] | list[str], path: str | None = None) -> Path:
    """Write a label file (dicts are dumped as JSON, strings written as they are)."""
    target = root / (path or f"labels/{name}.jsonl")
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return target


def relabel(label_file: Path, judgements: dict[str, bool | None]) -> None:
    """Rewrite ``label_file`` with each named copy's judgements replaced by one judgement (``None``: none at all)."""
    kept = [line for line in label_file.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["case_id"] not in judgements]
    kept += [json.dumps({"case_id": c, "valid": v, "labeler": "reviewer"}) for c, v in judgements.items()
             if v is not None]
    label_file.write_text("\n".join(kept) + "\n", encoding="utf-8")


def all_valid(ids: list[str], name: str) -> list[dict[str, Any]]:
    """One ``valid`` judgement for ``<id>~<name>`` of every id."""
    return [{"case_id": f"{i}~{name}", "valid": True, "labeler": "t"} for i in ids]


def mm_suite(make_suite: Callable[..., Path], cases: list[dict[str, Any]], transforms: list[dict[str, Any]],
             evaluators: list[dict[str, Any]], labels: dict[str, list[dict[str, Any]]] | None = None,
             system: str = "sysmod:Directed", **config: Any) -> Path:
    """Write a suite with ``DIRECTED`` as ``sysmod.py``; every transform gets a label file (default: empty)."""
    root = make_suite(cases, evaluators=evaluators, system=system, system_code=DIRECTED,
                      metamorphic={"transforms": transforms}, **config)
    labels = labels or {}
    for t in transforms:
        write_labels(root, t["name"], labels.get(t["name"], []), t["validity_labels"])
    return root


def state_path_suite(root: Path, system_code: str, cases: list[dict[str, Any]], state_check: str,
                     transform: str, state_path: str, template: str) -> Path:
    """Write a suite at ``root``: ``system_code`` as ``desk.py`` (class ``Desk``), ``cases``, the check
    ``state_check`` (a YAML flow item), a ``same_state`` relation under ``transform`` (rewriting ``state_path`` by
    ``template``) and a label file judging every copy valid; return ``root``."""
    (root / "labels").mkdir(parents=True)
    (root / "desk.py").write_text(system_code, encoding="utf-8")
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    labels = all_valid([c["id"] for c in cases], transform)
    (root / "labels" / f"{transform}.jsonl").write_text("".join(json.dumps(j) + "\n" for j in labels),
                                                        encoding="utf-8")
    spec = {"name": transform, "state_path": state_path, "template": template,
            "validity_labels": f"labels/{transform}.jsonl", "minimum_validity": 0.5}
    (root / "oloproof.yaml").write_text(
        f"name: {transform}\nsystem: desk:Desk\nevaluators:\n  - {state_check}\n"
        f"  - {{type: metamorphic_relation, relation: same_state, transform: {transform}}}\n"
        f"metamorphic:\n  transforms:\n    - {json.dumps(spec)}\n", encoding="utf-8")
    return root
