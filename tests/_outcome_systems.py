"""Systems and helpers for the outcome-receipt tests (written into suite folders by the tests).

The case input never carries a path or an artifact's content: the system module holds them,
so a search of the run directory for either finds only what the toolkit itself stored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: A locator and a content string that must never appear in a run directory or CLI output.
LOCATOR_SENTINEL = "LOCATOR-SENTINEL-91xq"
CONTENT_SENTINEL = "CONTENT-SENTINEL-4f7z"

#: The bytes the systems write for artifact "good" (and its plain SHA-256, computed by hand with sha256sum).
GOOD_BYTES = ('{"marker": "' + CONTENT_SENTINEL + '", "total": 3}\n').encode("utf-8")

OUTCOME_SYSTEM = f'''
import json
import os
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent
ARTIFACTS = ROOT / ".oloproof" / "artifacts"
CONTENT = {CONTENT_SENTINEL!r}
FILES = {{
    "good": ("{LOCATOR_SENTINEL}-good.json", ('{{"marker": "' + CONTENT + '", "total": 3}}' + "\\n")),
    "bad": ("{LOCATOR_SENTINEL}-bad.json", '{{"marker": "' + CONTENT + '"}}' + "\\n"),
    "old": ("{LOCATOR_SENTINEL}-old.json", ('{{"marker": "' + CONTENT + '", "total": 3}}' + "\\n")),
}}
OLD = datetime(2020, 1, 1, tzinfo=timezone.utc).timestamp()


class Writer:
    """Writes the files the input names into <suite>/.oloproof/artifacts/; no observe()."""

    version = "writer-1"

    def __init__(self):
        self.request = {{}}

    def reset(self, state):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for name, _ in FILES.values():
            if (ARTIFACTS / name).exists():
                (ARTIFACTS / name).unlink()

    def snapshot(self):
        return {{"written": sorted(p.name.split("-")[-1] for p in ARTIFACTS.iterdir())}}

    def run(self, input):
        self.request = input
        if input.get("raise"):
            raise RuntimeError("the agent crashed")
        for key in input.get("write", []):
            name, text = FILES[key]
            path = ARTIFACTS / name
            path.write_text(text, encoding="utf-8")
            if key == "old":
                os.utime(path, (OLD, OLD))
        return {{"steps": [], "answer": "done", "status": input.get("status", "completed")}}


class Observing(Writer):
    """Also answers observe(artifact_id), in the way the case input asks for."""

    def observe(self, artifact_id):
        how = self.request.get("observe", "path")
        now = datetime.now(timezone.utc)
        if how == "path":
            path = ARTIFACTS / FILES[artifact_id][0]
            return path if path.exists() else None
        if how == "none":
            return None
        if how == "text":  # the path as a str, as os.path.join gives it
            return str(ARTIFACTS / FILES[artifact_id][0])
        if how == "dict":
            return {{"artifact_id": artifact_id, "observed_at": now.isoformat(), "modified_at": now.isoformat(),
                    "validator": "schema", "validator_exit_code": 0}}
        if how == "dict_false":  # its own check's result as a callable validator gives it: False, "fails"
            return {{"artifact_id": artifact_id, "observed_at": now.isoformat(), "modified_at": now.isoformat(),
                    "validator": "schema", "validator_exit_code": False}}
        if how == "evidence":
            import oloproof_nb as op
            return op.Evidence(artifact_id=artifact_id, observed_at=now, modified_at=now,
                               evidence_source="bucket_head")
        if how == "invalid":
            return {{"artifact_id": artifact_id}}
        if how == "raise":
            raise OSError("cannot open " + str(ARTIFACTS / FILES["good"][0]) + " " + CONTENT)
        return 42
'''

CHECKS = '''
import json
import time
from pathlib import Path


def schema(path):
    """Accept JSON with a numeric total."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return isinstance(data.get("total"), (int, float))


def other(path):
    return True


def crash(path):
    raise ValueError("crashed while reading " + str(path))


NOT_CALLABLE = 3
'''


def locator(key: str) -> str:
    """The locator (relative to the suite folder) of one of the system's files."""
    return f".oloproof/artifacts/{LOCATOR_SENTINEL}-{key}.json"


def write_checks(root: Path) -> None:
    (root / "checks.py").write_text(CHECKS, encoding="utf-8")


def case(cid: str, outcome: dict[str, Any] | None, **request: Any) -> dict[str, Any]:
    """A case whose input tells the system what to do (never a path or content)."""
    row: dict[str, Any] = {"id": cid, "input": request, "expected": {"answer": "done"}}
    if outcome is not None:
        row["outcome"] = outcome
    return row


def grep_tree(root: Path, needle: str) -> list[str]:
    """Files under ``root`` whose bytes contain ``needle``."""
    hits = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            if needle.encode("utf-8") in path.read_bytes():
                hits.append(str(path))
    return hits


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "cases.jsonl").read_text(encoding="utf-8").splitlines()]


#: A report writer (``writer.py`` of a suite folder; ``VERSION`` replaced by :func:`report_writer`): ``write_report``
#: writes ``out/<name>`` (``total,3``); its agent answers ``done`` whatever the tool returned, unless the case's
#: input says otherwise: ``retries`` (a second call after a failed one, which writes the report), ``escalates`` (calls
#: ``escalate`` after a failed one; with ``claims`` false it answers ``escalated``).
_REPORT_WRITER = '''
import copy
from pathlib import Path

import oloproof_nb as op

OUT = Path(__file__).resolve().parent / "out"


class Writer(op.RecordedAgent):
    version = "VERSION"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        OUT.mkdir(exist_ok=True)
        for f in OUT.iterdir():
            f.unlink()
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return {"files": {f.name: f.read_text() for f in sorted(OUT.iterdir())}}

    def write_report(self, name):
        (OUT / name).write_text("total,3\\n")
        return {"ok": True}

    def escalate(self):
        return {"ok": True}

    def act(self, input, rec):
        result = rec.tool("write_report", self.write_report, name=input["name"])
        if not result.get("ok"):
            if input.get("retries"):  # a second call, after the faulted one: it writes the report
                rec.tool("write_report", self.write_report, name=input["name"])
            if input.get("escalates"):
                rec.tool("escalate", self.escalate)
                if not input.get("claims", True):
                    return "escalated"
        return "done"  # whatever happened
'''


def report_writer(version: str) -> str:
    """The source of the report writer of :data:`_REPORT_WRITER`, its ``version`` given."""
    return _REPORT_WRITER.replace("VERSION", version)


_WAITING_DESK = '''
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
WRITER, WAITER, WRITES, WAITED = ROLES


def _wait_for(path, seconds):
    end = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.01)


class Desk:
    version = "VERSION"

    def reset(self, state):
        OUT.mkdir(exist_ok=True)

    def snapshot(self):
        return {}

    def run(self, input):
        if input["role"] == WRITER:
            _wait_for(OUT / f"{WAITER}-started", 1.0)
            for name in WRITES:
                (OUT / name).write_text(name + "\\n")
        else:
            (OUT / f"{WAITER}-started").write_text("")
            _wait_for(OUT / WAITED, 2.0)
        return {"steps": [], "answer": "done", "status": "completed"}
'''


def waiting_desk(version: str, writer: str, waiter: str, writes: tuple[str, ...], waited: str) -> str:
    """A desk (``desk.py`` of a suite folder) whose two roles overlap whatever the machine's speed unless the runner
    keeps them apart: the case of role ``waiter`` marks its start and waits (at most 2 s) for ``out/<waited>``; the
    case of role ``writer`` waits (at most 1 s) for that mark, then writes ``out/<name>`` for each of ``writes``.
    Two such systems: a draft at the report's path, and an export writing another locator's file."""
    roles = repr((writer, waiter, writes, waited))
    return _WAITING_DESK.replace("VERSION", version).replace("ROLES", roles)


def done_writer(validator: str) -> str:
    """A system module whose ``Writer`` writes ``report.txt`` beside itself each case, followed by ``validator``
    (the source of the validators the suite registers from it, e.g. ``def ok(path): return True``)."""
    return '''
from pathlib import Path

ROOT = Path(__file__).resolve().parent


class Writer:
    version = "r64"

    def reset(self, state):
        pass

    def snapshot(self):
        return {}

    def run(self, input):
        (ROOT / "report.txt").write_text("all good\\n", encoding="utf-8")
        return {"steps": [], "answer": "done", "status": "completed"}


''' + validator
