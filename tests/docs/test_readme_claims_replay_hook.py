"""README claims on replay keys, fault replays and the receipt hook that no test pinned.

- Section 3: an agent that runs in a service the system calls is code the replay key does not see, even with its
  files in the suite folder and its policy imported there through ``sys.path``: a fixed build is judged by the
  replays its broken build left in the cache (and a broken one keeps its former passes), unless ``fingerprint()``
  returns the build the service runs.
- Section 3: a system without ``replay()`` has every fault row ``missing`` (``not_replayable: <class> has no
  replay(); …``), and a gated fault criterion is ``INSUFFICIENT_EVIDENCE`` (``all_missing``).
- Receipts: the hook's validator may run 60 s, "which the contract file cannot change".
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main

# The service: a program of its own that imports its policy from its folder through sys.path, as a service's
# entry point does; the desk calls it once per request (a process per call stands for an HTTP round trip: either
# way its code runs outside the process whose imports the replay key follows).
SERVICE = """
import json, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from policy import AFTER_FAILED_PAY

print(json.dumps({"action": AFTER_FAILED_PAY}))
"""

DESK = '''
import json
import subprocess
import sys
from pathlib import Path

import oloproof_nb as op

SERVICE = Path(__file__).parent / "service" / "app.py"


def ask_service(result):
    out = subprocess.run([sys.executable, str(SERVICE)], input=json.dumps(result), capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)["action"]


class Desk(op.RecordedAgent):
    version = "desk-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def pay(self):
        self.state["paid"] = True
        return {{"ok": True}}

    def escalate(self):
        self.state["escalated"] = True
        return {{"ok": True}}

    def act(self, input, rec):
        result = rec.tool("pay", self.pay)
        if result.get("ok"):
            return "paid"
        if rec.model("service", ask_service, result=result) == "escalate":
            rec.tool("escalate", self.escalate)
            return "escalated"
        return "paid"
{fingerprint}'''

BUILD = '''
    def fingerprint(self):  # the build the service runs: here, the digest of its files (or its commit, /version)
        import hashlib
        files = sorted((Path(__file__).parent / "service").glob("*.py"))
        return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
'''


BROKEN, FIXED = '"claim success"', '"escalate"'  # what the service does after a failed payment


def _service_suite(make_suite: Callable[..., Path], fingerprint: bool, policy: str) -> Path:
    cases = [{"id": f"c{i}", "input": {"n": i}, "initial_state": {},
              "expected": {"answer": "paid", "state": {"paid": True}}} for i in range(2)]
    evaluators = [{"type": "state_matches", "mode": "changes"},
                  {"type": "fault_recovery", "tool": "pay", "fault": "error", "escalate_tools": ["escalate"]}]
    root = make_suite(cases, evaluators=evaluators, system="sysmod:Desk",
                      system_code=DESK.format(fingerprint=BUILD if fingerprint else ""))
    (root / "service").mkdir()
    (root / "service" / "app.py").write_text(SERVICE, encoding="utf-8")
    (root / "service" / "policy.py").write_text(f"AFTER_FAILED_PAY = {policy}\n", encoding="utf-8")
    return root


def _fault_rows(root: Path, out: Path, **options: Any) -> list[tuple[str, bool]]:
    run = op.run(op.load_suite(root), out=out, progress=False, **options)
    return [(r.verdict, bool(r.cached)) for r in run.replays.itertuples()]


@pytest.mark.parametrize(("fingerprint", "before", "after"), [
    (False, BROKEN, FIXED), (True, BROKEN, FIXED),  # the README's case: a fix not seen
    (False, FIXED, BROKEN),                         # and the other way: a build broken since keeps its passes
])
def test_a_service_changed_in_its_own_files_needs_its_build_in_fingerprint(
        make_suite: Callable[..., Path], tmp_path: Path, fingerprint: bool, before: str, after: str) -> None:
    """README section 3. The reference is the changed build run with ``cache=False``. Without
    ``fingerprint()`` the run after the change takes the former build's two replays from the cache, though the
    service's files lie in the suite folder; with it, they are replayed again."""
    verdict = {BROKEN: "fail", FIXED: "pass"}
    root = _service_suite(make_suite, fingerprint, before)
    assert _fault_rows(root, tmp_path / "before") == [(verdict[before], False)] * 2
    (root / "service" / "policy.py").write_text(f"AFTER_FAILED_PAY = {after}\n", encoding="utf-8")
    assert _fault_rows(root, tmp_path / "live", cache=False) == [(verdict[after], False)] * 2  # what it does now
    got = _fault_rows(root, tmp_path / "after")
    assert got == ([(verdict[after], False)] * 2 if fingerprint else [(verdict[before], True)] * 2)


PLAIN = """
class SupportDesk:
    version = "plain-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        self.state["closed"] = True
        step = {"kind": "tool_call", "tool": "close_ticket", "args": {"id": input["id"]}, "result": {"ok": True}}
        return {"steps": [step], "answer": "closed", "status": "completed"}
"""


def test_a_system_without_replay_has_its_gated_fault_criterion_all_missing(make_suite: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    """README section 3: every fault row ``missing``, the reason naming the class, and the gated fault criterion
    INSUFFICIENT_EVIDENCE (``all_missing``), so the gate BLOCKs (by hand: 3 cases, each called the tool once)."""
    cases = [{"id": f"t{i}", "input": {"id": i}, "initial_state": {}, "expected": {"answer": "closed"}}
             for i in range(3)]
    evaluators = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "close_ticket", "fault": "error"}]
    root = make_suite(cases, evaluators=evaluators, system="sysmod:SupportDesk", system_code=PLAIN,
                      release={"criteria": {"recovers_from_error_at_close_ticket": 0.5}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    fault = run.verdicts[run.verdicts["criterion"] == "recovers_from_error_at_close_ticket"]
    assert list(fault["verdict"]) == ["missing"] * 3
    assert all(r.startswith("not_replayable: SupportDesk has no replay(); write it on op.RecordedAgent, ")
               for r in fault["reason"])
    g = op.gate(run)
    row = g.table.set_index("criterion").loc["recovers_from_error_at_close_ticket"]
    assert (row["verdict"], row["reason"].split(";")[0], g.verdict) == ("INSUFFICIENT_EVIDENCE", "all_missing", "BLOCK")


def test_the_hooks_60_s_cannot_be_changed_by_the_contract_file(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """README, receipts: a contract file that asks for another validator timeout, at the top or in the command's
    object, is a contract error naming the key (exit 2), not a longer wait."""
    started = (datetime.now(timezone.utc) - timedelta(minutes=5)).isoformat()
    (tmp_path / "report.json").write_text("{}", encoding="utf-8")
    validator: dict[str, Any] = {"command": [sys.executable, "-c", "pass"]}
    for extra, key in (({"validator_timeout_s": 600}, "validator_timeout_s"),
                       ({"validator": {**validator, "timeout": 600}}, "timeout")):
        path = tmp_path / "contract.json"
        path.write_text(json.dumps({"artifact_id": "r", "locator": "report.json", "run_started_at": started,
                                    "validator": validator, **extra}), encoding="utf-8")
        assert main(["receipt", "--json", str(path)]) == 2
        out = json.loads(capsys.readouterr().out)
        assert out["error"] == "contract error" and key in out["message"], out
