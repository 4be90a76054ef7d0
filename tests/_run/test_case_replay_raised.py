"""A case whose replay raised hands the next case a fresh system instance, as a case that raised does.

What a raise leaves on an instance outlives the sandbox's reset. An agent that holds its own connection to the
sandbox's SQLite file and opens a transaction there before a tool call raised on the fault result
(``KeyError: 'refund_id'``) with the transaction still open: the next case's reset, on the same instance, met
``database is locked`` and that case, whose agent never ran, was an ``error``. A case whose own run raised the same
way was followed by a fresh instance, and its next case passed.

So do the case's own later replays: a ``lookup`` fault criterion judged after the ``issue_refund`` one replayed on
the instance its raise left, and every one of its verdicts was ``missing`` (``reset() raised OperationalError:
database is locked``) where it passes alone, on every way of running.
"""

from __future__ import annotations

import importlib.util
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op

DESK = '''
import os, shutil, sqlite3, tempfile, weakref

import oloproof_nb as op


def _close(held):
    for db in held[:2]:
        db.close()
    shutil.rmtree(held[2], ignore_errors=True)


class HeldDesk(op.RecordedAgent):
    """A sandbox's connection to a file, and one the agent holds across cases to the same file."""

    version = "held-1"

    def __init__(self):
        folder = tempfile.mkdtemp()
        path = os.path.join(folder, "shop.db")
        # a short busy timeout: a lock never released fails the reset at once rather than after 5 s
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=0.05)
        db.execute("CREATE TABLE refunds (order_id TEXT PRIMARY KEY, amount REAL NOT NULL)")
        agent_db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=0.05)
        self.held = [db, agent_db, folder]
        weakref.finalize(self, _close, self.held)

    def reset(self, state):
        db = self.held[0]
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM refunds")
        db.executemany("INSERT INTO refunds VALUES (?, ?)",
                       [(key, row["amount"]) for key, row in state.get("refunds", {}).items()])
        db.execute("COMMIT")

    def snapshot(self):
        return {"refunds": {key: {"amount": amount}
                            for key, amount in self.held[0].execute("SELECT order_id, amount FROM refunds")}}

    def lookup(self, order_id):
        return {"ok": True, "order_id": order_id}

    def issue_refund(self, order_id, amount):
        self.held[1].execute("INSERT INTO refunds VALUES (?, ?)", (order_id, amount))
        return {"ok": True, "refund_id": "rf-" + order_id}

    def act(self, input, rec):
        rec.tool("lookup", self.lookup, order_id=input["order_id"])  # what it found is not needed
        self.held[1].execute("BEGIN IMMEDIATE")  # the refund in a transaction of the agent's own
        out = rec.tool("issue_refund", self.issue_refund, order_id=input["order_id"], amount=input["amount"])
        refund_id = out["refund_id"]  # a failed refund has none: KeyError, the transaction left open
        self.held[1].execute("COMMIT")
        return "refunded " + refund_id
'''


def _suite(root: Path, faults: tuple[str, ...] = ("issue_refund",)) -> Path:
    root.mkdir()
    (root / "held_desk.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": f"o{i}", "input": {"order_id": f"o{i}", "amount": 10.0 * i}, "initial_state": {"refunds": {}},
              "expected": {"state": {"refunds": {f"o{i}": {"amount": 10.0 * i}}}}} for i in (1, 2, 3)]
    (root / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: held\nsystem: held_desk:HeldDesk\ncases: cases.jsonl\ncase_timeout_s: 30\nevaluators:\n"
        "  - {type: state_matches, mode: changes}\n"
        + "".join(f"  - {{type: fault_recovery, tool: {tool}, fault: error}}\n" for tool in faults), encoding="utf-8")
    return root


def test_the_case_after_a_replay_that_raised_runs_on_a_fresh_instance(tmp_path: Path) -> None:
    run = op.run(_suite(tmp_path / "suite"), out=tmp_path / "run", progress=False)

    assert list(run.cases["status"]) == ["completed"] * 3  # o2 was an error: reset() raised ... database is locked
    verdicts = run.verdicts.set_index(["case_id", "criterion"])["verdict"]
    assert [verdicts[(f"o{i}", "state_matches")] for i in (1, 2, 3)] == ["pass"] * 3
    reasons = run.verdicts[run.verdicts["criterion"] == "recovers_from_error_at_issue_refund"]["reason"]
    assert list(reasons.str.startswith("replay_raised: KeyError: 'refund_id'")) == [True] * 3


def _run(root: Path, out: Path, how: str) -> op.Run:
    if how == "executor":
        with ThreadPoolExecutor(2) as executor:
            return op.run(root, out=out, executor=executor, chunk_size=2, progress=False, cache=False)
    settings: dict[str, Any] = {"threads": {"workers": 2}, "process": {"isolation": "process"}}.get(how, {})
    return op.run(root, out=out, progress=False, cache=False, **settings)


@pytest.mark.parametrize("how", ["serial", "threads", "process", "executor"])
def test_the_replays_after_one_that_raised_run_on_a_fresh_instance(tmp_path: Path, how: str) -> None:
    alone = op.run(_suite(tmp_path / "alone", ("lookup",)), out=tmp_path / "alone_run", progress=False, cache=False)
    run = _run(_suite(tmp_path / "suite", ("issue_refund", "lookup")), tmp_path / "run", how)

    assert list(run.cases["status"]) == ["completed"] * 3
    verdicts = run.verdicts.set_index(["case_id", "criterion"])
    refund = verdicts.xs("recovers_from_error_at_issue_refund", level="criterion")["reason"]
    assert list(refund.str.startswith("replay_raised: KeyError: 'refund_id'")) == [True] * 3
    lookup = verdicts.xs("recovers_from_error_at_lookup", level="criterion")
    # each was "missing: replay_raised: reset() raised OperationalError: database is locked"
    judged_alone = alone.verdicts[alone.verdicts["criterion"] == "recovers_from_error_at_lookup"]
    assert list(lookup["verdict"]) == list(judged_alone["verdict"]) == ["pass"] * 3
    assert list(lookup["reason"]) == list(judged_alone["reason"])


def test_on_the_one_instance_given_the_reason_says_an_earlier_replay_raised(tmp_path: Path) -> None:
    root = _suite(tmp_path / "suite", ("issue_refund", "lookup"))
    spec = importlib.util.spec_from_file_location("held_desk_given", root / "held_desk.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run = op.run(root, system=module.HeldDesk(), out=tmp_path / "run", progress=False, cache=False)

    verdicts = run.verdicts
    lookup = verdicts[(verdicts["case_id"] == "o1") & (verdicts["criterion"] == "recovers_from_error_at_lookup")]
    assert list(lookup["verdict"]) == ["missing"]
    assert list(lookup["reason"]) == [
        "replay_raised: reset() raised OperationalError: database is locked (after an earlier replay of this case "
        "raised on the one system instance given to the run, which cannot be replaced: give the class or a factory "
        "to run each replay after one that raised on a fresh instance)"]
    # the replay that raised first has no earlier one to blame: its reason is its own
    refund = verdicts[(verdicts["case_id"] == "o1") & (verdicts["criterion"] == "recovers_from_error_at_issue_refund")]
    assert list(refund["reason"].str.startswith("replay_raised: KeyError: 'refund_id'")) == [True]
    assert not refund["reason"].str.contains("after an earlier replay", regex=False).any()



LICENSED = '''

class LicensedDesk(HeldDesk):
    """A desk built only while the file ``licences`` beside it (if there) holds a licence left: each build takes one."""

    def __init__(self):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "licences")
        if os.path.exists(path):
            left = int(open(path).read())
            if left < 1:
                raise RuntimeError("no licence left")
            open(path, "w").write(str(left - 1))
        super().__init__()
'''


def test_a_replay_the_cache_gives_after_one_that_raised_builds_no_fresh_instance(tmp_path: Path) -> None:
    """The fresh instance is built for a replay that runs live: one built for the cached ``lookup`` replays failed
    (a licence the run needed no more of) and made their verdict ``missing``, ``not run: … no licence left``."""
    root = _suite(tmp_path / "suite", ("issue_refund", "lookup"))
    with (root / "held_desk.py").open("a", encoding="utf-8") as desk:
        desk.write(LICENSED)
    (root / "cases.jsonl").write_text((root / "cases.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n",
                                      encoding="utf-8")
    text = (root / "oloproof.yaml").read_text(encoding="utf-8")
    (root / "oloproof.yaml").write_text(text.replace("held_desk:HeldDesk", "held_desk:LicensedDesk"), encoding="utf-8")
    first = op.run(root, out=tmp_path / "first", progress=False)
    first_lookup = first.verdicts[first.verdicts["criterion"] == "recovers_from_error_at_lookup"]
    assert list(first_lookup["verdict"]) == ["pass"]  # its replays ran live on a fresh instance, and were cached

    (root / "licences").write_text("1", encoding="utf-8")  # the run's first instance alone
    again = op.run(root, out=tmp_path / "again", progress=False)

    lookup = again.verdicts[again.verdicts["criterion"] == "recovers_from_error_at_lookup"]
    assert list(lookup["verdict"]) == ["pass"], list(lookup["reason"])
    assert list(again.replays[again.replays["criterion"] == "recovers_from_error_at_lookup"]["cached"]) == [True]
    assert (root / "licences").read_text(encoding="utf-8") == "0"
def _desk_class(root: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"held_desk_{root.name}", root / "held_desk.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.HeldDesk


def test_only_the_replays_after_one_that_raised_get_a_fresh_instance(tmp_path: Path) -> None:
    """By hand, serially: one instance for the run, and per case one more for the ``lookup`` replay after the
    ``issue_refund`` one raised: 1 + 3. The ``lookup`` replay passes on it, so the case goes on with it and the next
    case needs none (a replay that did not raise is no reason for another instance)."""
    root = _suite(tmp_path / "suite", ("issue_refund", "lookup"))
    desk = _desk_class(root)
    built: list[Any] = []

    def factory() -> Any:
        built.append(desk())
        return built[-1]

    run = op.run(root, system=factory, out=tmp_path / "run", progress=False, cache=False)

    assert list(run.cases["status"]) == ["completed"] * 3
    assert len(built) == 4


def test_a_replay_that_raised_on_a_fresh_instance_does_not_blame_an_earlier_one(tmp_path: Path) -> None:
    """Two fault criteria on ``issue_refund`` each raise ``KeyError: 'refund_id'``; the second runs on a fresh
    instance, so neither reason says it ran on the instance an earlier raise left."""
    root = _suite(tmp_path / "suite")
    config = (root / "oloproof.yaml").read_text(encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        config + "  - {type: fault_recovery, tool: issue_refund, fault: timeout}\n",
        encoding="utf-8")
    run = op.run(root, out=tmp_path / "run", progress=False, cache=False)

    faults = run.verdicts[run.verdicts["criterion"].str.startswith("recovers_from")]
    assert len(faults) == 6 and set(faults["verdict"]) == {"missing"}
    assert set(faults["reason"].str.startswith("replay_raised: KeyError: 'refund_id'")) == {True}
    assert not faults["reason"].str.contains("earlier replay").any()


STALLS = '''

import threading

#: Set by the test once it has looked: until then a refund on a fresh instance never returns.
GO_ON = threading.Event()


class StallingDesk(HeldDesk):
    """The run's first instance refunds at once; every later one (built after a replay raised) stalls."""

    built = 0

    def __init__(self):
        super().__init__()
        StallingDesk.built += 1
        self.fresh = StallingDesk.built > 1

    def issue_refund(self, order_id, amount):
        if self.fresh:
            GO_ON.wait(60)
        return super().issue_refund(order_id, amount)
'''


def test_a_call_abandoned_on_the_fresh_instance_is_noted_on_that_instance(tmp_path: Path) -> None:
    """The ``lookup`` replay after the ``issue_refund`` one raised runs on a fresh instance, and its refund there
    exceeds ``case_timeout_s``: the call left running is on the fresh instance, so no later run of this process
    may be given it while the call runs (its factory may hand out an instance it built before); the first
    instance, which no call runs on, may be."""
    from oloproof_nb._run.systems import BUSY_INSTANCE, Held
    from oloproof_nb.errors import OloproofError

    root = _suite(tmp_path / "suite", ("issue_refund", "lookup"))
    with (root / "held_desk.py").open("a", encoding="utf-8") as desk:
        desk.write(STALLS)
    (root / "cases.jsonl").write_text((root / "cases.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n",
                                      encoding="utf-8")
    text = (root / "oloproof.yaml").read_text(encoding="utf-8")
    (root / "oloproof.yaml").write_text(text.replace("case_timeout_s: 30", "case_timeout_s: 1"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("held_desk_stalls", root / "held_desk.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built: list[Any] = []

    def factory() -> Any:
        built.append(module.StallingDesk())
        return built[-1]

    try:
        op.run(root, system=factory, out=tmp_path / "run", progress=False, cache=False)
        assert len(built) >= 2 and built[1].fresh
        with pytest.raises(OloproofError) as caught:
            Held().add(built[1])
        assert str(caught.value) == BUSY_INSTANCE
        assert Held().add(built[0]) is built[0]
    finally:
        module.GO_ON.set()



PAYS_TWICE = '''
import oloproof_nb as op

BUILT = []


class PaysTwice(op.RecordedAgent):
    """Pays two orders and reads each payment's id, so a replay that faults either call raises (KeyError); its
    first instance is the only one that can be built."""

    version = "pays-twice-1"

    def __init__(self):
        if BUILT:
            raise RuntimeError("one desk only")
        BUILT.append(self)

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def pay(self, order):
        self.state["paid"][order] = True
        return {"ok": True, "paid_id": order}

    def act(self, input, rec):
        for order in ("o1", "o2"):
            rec.tool("pay", self.pay, order=order)["paid_id"]
        return "paid"
'''


def test_calls_never_run_for_want_of_a_fresh_instance_say_so_not_that_a_replay_raised(tmp_path: Path) -> None:
    """calls: every, two faults; the error fault's replay raised, and no fresh instance could be built for the
    timeout fault's: both of its calls were not run for that reason, and both rows say it (its second said
    ``not run: the replay at step 0 raised``, of a replay never run)."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "pays_twice.py").write_text(PAYS_TWICE, encoding="utf-8")
    case = {"id": "c0", "input": {}, "initial_state": {"paid": {}}, "expected": {"answer": "paid"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: twice\nsystem: pays_twice:PaysTwice\nevaluators:\n"
        + "".join(f"  - {{type: fault_recovery, tool: pay, fault: {fault}, calls: every}}\n"
                  for fault in ("error", "timeout")), encoding="utf-8")

    run = op.run(root, out=tmp_path / "run", progress=False, cache=False)
    rows = run.replays.set_index(["criterion", "checkpoint"])["reason"]
    assert rows[("recovers_from_error_at_pay", 0)].startswith("replay_raised: KeyError: 'paid_id'")
    assert rows[("recovers_from_error_at_pay", 1)] == "replay_raised: not run: the replay at step 0 raised"
    unbuilt = "replay_raised: not run: a replay of this case raised and no fresh system instance could be built"
    assert rows[("recovers_from_timeout_at_pay", 0)].startswith(unbuilt)
    assert "one desk only" in rows[("recovers_from_timeout_at_pay", 0)]
    assert rows[("recovers_from_timeout_at_pay", 1)] == rows[("recovers_from_timeout_at_pay", 0)]
