"""The sandbox routine stores JSON copies: non-JSON answers, results and states are converted or refused per case.

Before, a ``bytes``, ``Decimal`` or ``set`` answer or state crashed the whole run (and every ``--resume`` the same
way): the evaluators saw the live objects and the store could not write them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from _reliability_systems import assert_same_frames

import oloproof_nb as op
from oloproof_nb._core.canonical import canonical_json
from oloproof_nb._core.case import Case, case_digest
from oloproof_nb._core.trajectory import ToolCall, Trajectory
from oloproof_nb._run.sandbox import SystemContractError, failure_reason, replay_case, run_case, takes_epoch
from oloproof_nb.cli import main as cli_main

SYSTEM = '''
import datetime as dt
from decimal import Decimal

from pydantic import BaseModel


class Receipt(BaseModel):
    total: Decimal
    at: dt.datetime


ANSWERS = {
    "bytes": lambda: b"refunded",
    "decimal": lambda: Decimal("1.50"),
    "set": lambda: {"a", "b"},
    "model": lambda: Receipt(total=Decimal("9.50"), at=dt.datetime(2026, 7, 25, tzinfo=dt.timezone.utc)),
    "ok": lambda: "ok",
}
STATES = {
    "set": lambda: {"tags": {"x"}},
    "bytes": lambda: {"files": {"a.bin": b"\\x00"}},
    "rich": lambda: {"balance": Decimal("10.50"), "when": dt.date(2026, 1, 2), "receipt": ANSWERS["model"]()},
}


class Odd:
    def reset(self, state):
        self.state = state

    def snapshot(self):
        kind = self.state.get("snapshot")
        return STATES[kind]() if kind else dict(self.state)

    def run(self, input):
        result = ANSWERS[input.get("result", "ok")]()
        return {"steps": [{"tool": "lookup", "args": {"n": 1}, "result": result}],
                "answer": ANSWERS[input.get("answer", "ok")]()}
'''


def _suite(make_suite: Any) -> Path:
    cases = [
        {"id": "a-bytes", "input": {"answer": "bytes"}, "expected": {"answer": "refunded"}},
        {"id": "a-decimal", "input": {"answer": "decimal"}, "expected": {"answer": "1.50"}},
        {"id": "a-set", "input": {"answer": "set"}, "expected": {"answer": "ok"}},
        {"id": "a-model", "input": {"answer": "model"},
         "expected": {"answer": {"total": "9.50", "at": "2026-07-25T00:00:00Z"}}},
        {"id": "r-set", "input": {"result": "set"}, "expected": {"answer": "ok"}},
        {"id": "s-set", "input": {}, "initial_state": {"snapshot": "set"}, "expected": {"answer": "ok"}},
        {"id": "s-bytes", "input": {}, "initial_state": {"snapshot": "bytes"}, "expected": {"answer": "ok"}},
        {"id": "s-rich", "input": {}, "initial_state": {"snapshot": "rich"},
         "expected": {"answer": "ok", "state": {"balance": "10.50", "when": "2026-01-02"}}},
        {"id": "plain", "input": {}, "expected": {"answer": "ok"}},
    ]
    return make_suite(cases, system="sysmod:Odd", system_code=SYSTEM)


def test_non_json_values_are_converted_or_refused_per_case_and_the_run_goes_on(make_suite: Any,
                                                                              tmp_path: Path) -> None:
    run = op.run(_suite(make_suite), out=tmp_path / "run", progress=False)
    assert run.finished
    cases = run.cases.set_index("case_id")
    errors = {cid: cases.loc[cid, "error"] for cid in cases.index if cases.loc[cid, "status"] == "error"}
    assert errors == {
        "a-bytes": "run() returned a trajectory that cannot be stored as JSON: the answer is a bytes value, which "
                   "has no exact JSON form: decode it to text (or base64-encode it) before returning it",
        "a-set": "run() returned a trajectory that cannot be stored as JSON: the answer is a set value, which has "
                 "no exact JSON form: a set has no order; return a sorted list instead",
        "r-set": "run() returned a trajectory that cannot be stored as JSON: step 0's result is a set value, which "
                 "has no exact JSON form: a set has no order; return a sorted list instead",
        "s-set": "snapshot() returned a state that is not JSON: the state holds a set value at tags, which has no "
                 "exact JSON form: a set has no order; return a sorted list instead",
        "s-bytes": "snapshot() returned a state that is not JSON: the state holds a bytes value at "
                   'files["a.bin"], which has no exact JSON form: decode it to text (or base64-encode it) before '
                   "returning it",
    }
    v = run.verdicts
    verdicts = v[v.criterion == "answer_matches"].set_index("case_id")["verdict"]
    assert all(verdicts[cid] == "missing" for cid in errors)
    assert verdicts["a-decimal"] == verdicts["a-model"] == verdicts["s-rich"] == verdicts["plain"] == "pass"
    assert v[(v.case_id == "s-rich") & (v.criterion == "state_matches")]["verdict"].tolist() == ["pass"]
    # converted once, as documented: Decimals as exact text, models through model_dump(mode="json")
    assert cases.loc["a-decimal", "answer"] == "1.50"
    state = run.record("s-rich")["environment_state"]
    assert state["state"] == {"balance": "10.50", "when": "2026-01-02",
                              "receipt": {"total": "9.50", "at": "2026-07-25T00:00:00Z"}}
    assert state["state_digest"] == hashlib.sha256(canonical_json(state["state"]).encode()).hexdigest()


def test_a_run_interrupted_among_such_cases_resumes_to_the_same_frames(make_suite: Any, tmp_path: Path) -> None:
    suite = _suite(make_suite)
    whole = op.run(suite, out=tmp_path / "whole", progress=False)
    part = tmp_path / "part"
    op.run(suite, out=part, progress=False)
    manifest = json.loads((part / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]  # as if the process had died after three cases
    (part / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = (part / "cases.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (part / "cases.jsonl").write_text("".join(lines[:3]), encoding="utf-8")
    assert cli_main(["run", str(suite), "--out", str(part), "--resume"]) == 1  # finished; the gate BLOCKs
    assert_same_frames(op.load_run(part), whole)


NO_RESET = '''
class Counter:
    """Snapshots but cannot be reset (its author named the method restore): every case pays once more."""

    def __init__(self):
        self.state = {"paid": 0}

    def restore(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        self.state["paid"] += 1
        return {"steps": [], "answer": "ok"}


def make():
    return Counter()
'''


RESETS = '''

class Given(Counter):
    """reset set on the instance."""

    def __init__(self):
        super().__init__()
        self.reset = self.restore


class Wrapped:
    """A wrapper that hands every other attribute to the system it wraps."""

    def __init__(self):
        self._inner = Given()

    def __getattr__(self, name):
        return getattr(self._inner, name)
'''


def test_a_system_that_snapshots_but_cannot_be_reset_is_refused(make_suite: Any) -> None:
    """With ``snapshot`` and no ``reset`` the sandbox was never set to a case's initial_state,
    so the states 1, 2, 3 it drifted through matched initial states 1, 2, 3 and every state check passed.
    Each case that has an initial_state is an ``error`` naming the cause (the instance is what is asked: a class
    whose instances get ``reset`` in ``__init__`` or through ``__getattr__`` is fine, so nothing is refused at
    load_suite, where only the class is known); without initial states it still runs."""
    cases = [{"id": f"c{i}", "input": {}, "initial_state": {"paid": i}, "expected": {"state": {"paid": i}}}
             for i in (1, 2, 3)]
    evaluators = [{"type": "state_unchanged", "paths": ["paid"]}, {"type": "state_matches"}]
    for system in ("sysmod:Counter", "sysmod:make"):  # the class, and a factory of it
        folder = make_suite(cases, evaluators=evaluators, system=system, system_code=NO_RESET)
        run = op.run(op.load_suite(folder), progress=False)
        assert list(run.cases["status"]) == ["error"] * 3
        assert all("has snapshot() but no reset()" in e for e in run.cases["error"])
        assert set(run.verdicts["verdict"]) == {"missing"}
    # the first version of this check missed it: reset given to the instance, not the class, was refused
    for shape in ("Given", "Wrapped"):
        folder = make_suite(cases, evaluators=evaluators, system=f"sysmod:{shape}", system_code=NO_RESET + RESETS)
        run = op.run(op.load_suite(folder), progress=False)
        assert list(run.cases["status"]) == ["completed"] * 3
        assert [s["paid"] for s in run.snapshots["state"]] == [2, 3, 4]  # reset to i, then paid once: judged
        assert set(run.verdicts["verdict"]) == {"fail"}                  # against the world each case began in
    stateless = [{"id": "c1", "input": {}, "expected": {"state": {"paid": 1}}}]
    run = op.run(op.load_suite(make_suite(stateless, evaluators=evaluators[1:], system="sysmod:Counter",
                                          system_code=NO_RESET)), progress=False)
    assert list(run.cases["status"]) == ["completed"] and list(run.verdicts["verdict"]) == ["pass"]



def test_a_system_that_snapshots_but_cannot_be_reset_runs_one_pass_per_instance(make_suite: Any) -> None:
    """Nothing sets such a world back, so cases without an initial_state drifted too: the till paid once per case
    and was judged on the total (1, 2, 3), passing the first case and failing the others for the first's write.
    Only an instance's first pass is judged; a later one is an ``error`` naming the cause, and the run goes on
    on a fresh instance, whose first pass starts from the world its constructor built."""
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"state": {"paid": 1}}} for i in (1, 2, 3, 4)]
    folder = make_suite(cases, evaluators=[{"type": "state_matches"}], system="sysmod:Counter",
                        system_code=NO_RESET)
    run = op.run(op.load_suite(folder), progress=False)
    assert list(run.cases["status"]) == ["completed", "error", "completed", "error"]
    assert all("already ran a case" in e for e in run.cases["error"].dropna())
    assert [s["paid"] for s in run.snapshots["state"]] == [1, 1]
    assert list(run.verdicts["verdict"]) == ["pass", "missing", "pass", "missing"]


def test_the_baseline_of_a_system_that_cannot_be_reset_judges_every_case(make_suite: Any) -> None:
    """The no-op takes no step, so its passes leave the world as the constructor built it: each case of the
    baseline is judged (2 of 4 were an ``error``, a rate of 0.5 for an idle agent that passes all 4)."""
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"state": {"paid": 0}}} for i in (1, 2, 3, 4)]
    folder = make_suite(cases, evaluators=[{"type": "state_matches"}], system="sysmod:Counter",
                        system_code=NO_RESET)
    idle = op.baseline(op.load_suite(folder), progress=False)
    assert list(idle.run.cases["status"]) == ["completed"] * 4
    assert list(idle.run.verdicts["verdict"]) == ["pass"] * 4
    assert list(idle.rates["rate"]) == [1.0]


def test_the_baseline_on_an_instance_a_run_left_is_told_it_drifted(make_suite: Any) -> None:
    """A suite that names one instance: the run's case paid on it, so the baseline after it in the same process
    would judge the no-op on the till the agent left (paid 1); each of its cases is an ``error`` instead."""
    cases = [{"id": "c1", "input": {"n": 1}, "expected": {"state": {"paid": 0}}}]
    folder = make_suite(cases, evaluators=[{"type": "state_matches"}], system="sysmod:TILL",
                        system_code=NO_RESET + "\n\nTILL = Counter()\n")
    suite = op.load_suite(folder)
    assert list(op.run(suite, progress=False).cases["status"]) == ["completed"]
    idle = op.baseline(suite, progress=False)
    assert list(idle.run.cases["status"]) == ["error"]
    assert "already ran a case" in idle.run.cases["error"].iloc[0]


RESET_LOG = """
class Logs:
    version = "logs-1"

    def reset(self, state):
        self.state = dict(state, resets=1)  # what reset was given, plus a mark: the snapshot shows both

    def snapshot(self):
        return self.state

    def run(self, input):
        return {"steps": [], "answer": "ok", "status": "completed"}
"""


def test_a_case_without_initial_state_is_reset_to_an_empty_world(make_suite: Any, tmp_path: Path) -> None:
    """README: a case without ``initial_state`` is reset to ``{}`` (a first-hour user once had to read the runner
    to learn it)."""
    cases = [{"id": "bare", "input": {}}, {"id": "given", "input": {}, "initial_state": {"books": {}}}]
    run = op.run(make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Logs",
                            system_code=RESET_LOG), out=tmp_path / "run", progress=False)
    states = dict(zip(run.snapshots["case_id"], run.snapshots["state"], strict=True))
    assert states == {"bare": {"resets": 1}, "given": {"books": {}, "resets": 1}}


def _case(**kw: Any) -> Case:
    raw = {"id": "c1", "input": {"q": "x"}, **kw}
    return Case.model_validate({**raw, "cluster": "c1", "digest": case_digest(raw), "source_id": "c1"})


class _World:
    """A sandbox whose ``run`` and ``replay`` change the world in place (and the trajectory it is given)."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = state

    def snapshot(self) -> dict[str, Any]:
        return self.state

    def run(self, given: dict[str, Any]) -> Any:
        self.state["z"], self.state["a"] = 1, 2  # built z first
        return Trajectory(steps=[ToolCall(tool="pay", args={"amt": 5})], answer="ok")

    def replay(self, recorded: Any, *, checkpoint: int, change: Any) -> Any:
        recorded.steps[0].args["amt"] = 999  # a replay that edits the trajectory it was handed
        recorded.steps.clear()
        return recorded


def test_the_stored_state_has_its_keys_in_sorted_order_whatever_order_the_system_built_it_in() -> None:
    """Two snapshots of one world are stored alike: keys sorted (``a`` before ``z``), at every level."""
    out = run_case(_World(), _case(initial_state={"o": {"y": 1, "b": 2}}), run_id="r", system_version=None,
                   timeout_s=None)
    assert out.state == {"a": 2, "o": {"b": 2, "y": 1}, "z": 1}
    assert list(out.state) == ["a", "o", "z"] and list(out.state["o"]) == ["b", "y"]


def test_a_replay_gets_a_copy_of_the_recorded_trajectory() -> None:
    """A ``replay`` that edits the trajectory it is handed leaves the recorded one as it was (the next replay of
    the case starts from the same recording)."""
    recorded = Trajectory(steps=[ToolCall(tool="pay", args={"amt": 5})], answer="ok")
    replay_case(_World(), _case(), recorded, 0, None, run_id="r", system_version=None, timeout_s=None)
    assert recorded.steps == [ToolCall(tool="pay", args={"amt": 5})]


def test_after_reset_sees_the_world_the_reset_left() -> None:
    """``after_reset`` is called between the reset and the run: it sees the case's ``initial_state``, not the
    world before the reset nor the one the run leaves."""
    world = _World()
    world.state = {"left": "by the last case"}
    out = run_case(world, _case(initial_state={"n": 1}), run_id="r", system_version=None, timeout_s=None,
                   after_reset=lambda: dict(world.state))
    assert out.after_reset == {"n": 1}


def test_a_run_whose_epoch_is_positional_only_is_not_given_one() -> None:
    """``epoch`` is passed by keyword, so only a parameter that takes a keyword gets it: Python refuses
    ``run(x, epoch=1)`` when ``epoch`` is positional-only, and such a run is called with the input alone."""
    class Positional:
        def run(self, given: Any, epoch: int = 1, /) -> Any:
            return epoch

        def replay(self, recorded: Any, *epoch: Any, checkpoint: int, change: Any) -> Any:
            return recorded

    class Keyword:
        def run(self, given: Any, *, epoch: int) -> Any:
            return epoch

    with pytest.raises(TypeError):
        Positional().run({}, epoch=2)  # type: ignore[call-arg]
    assert takes_epoch(Positional()) is False and takes_epoch(Positional(), "replay") is False
    assert takes_epoch(Keyword()) is True


def test_a_reset_or_snapshot_attribute_that_is_not_callable_is_no_method() -> None:
    """A system whose ``reset`` and ``snapshot`` are data (None here) has neither: it is run without a reset and
    records no state, instead of the case failing on a call of None."""
    class Plain:
        reset = None
        snapshot = None

        def run(self, given: dict[str, Any]) -> Any:
            return {"answer": "ok"}

    out = run_case(Plain(), _case(initial_state={"n": 1}), run_id="r", system_version=None, timeout_s=None)
    assert out.env is None and out.trajectory.answer == "ok"


def test_a_snapshot_that_is_not_a_dict_breaks_the_contract() -> None:
    """A state is a mapping of keys (every path starts with a key): a snapshot returning a list is the
    system's error, named as such, not a state stored and judged."""
    class Listed(_World):
        def snapshot(self) -> Any:
            return [self.state]

    with pytest.raises(SystemContractError) as err:
        run_case(Listed(), _case(), run_id="r", system_version=None, timeout_s=None)
    assert failure_reason(err.value).startswith("snapshot() returned list; expected a dict (or a dataclass")


def test_a_snapshot_with_a_parent_pointer_names_the_back_reference_not_the_depth() -> None:
    """A state kept in objects (BFCL's file system: each directory a dataclass with a pointer to its parent)
    refers to itself through that pointer. Before, the case's error said ``snapshot() returned a state nested
    deeper than 200 levels`` of a tree two levels deep; now it names the pointer and the object it points to."""
    @dataclasses.dataclass
    class Directory:
        name: str
        parent: Any = None
        contents: dict[str, Any] = dataclasses.field(default_factory=dict)

    class Files(_World):
        def snapshot(self) -> Any:
            root = Directory("/")
            root.contents["docs"] = Directory("docs", parent=root)
            return {"root": root}

    with pytest.raises(SystemContractError) as err:
        run_case(Files(), _case(), run_id="r", system_version=None, timeout_s=None)
    reason = failure_reason(err.value)
    assert reason.startswith("snapshot() returned a state that is not JSON: the state holds a Directory value at "
                             "root.contents.docs.parent, which has no exact JSON form: it refers to itself (it is "
                             "the object at root)"), reason
    assert "nested deeper" not in reason


ASYNC_METHODS = """
import asyncio


class Desk:
    version = "async-1"

    def __init__(self):
        self.state = {"left": "by the constructor"}

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        self.state["paid"] = self.state.get("paid", 0) + 1
        return {"steps": [], "answer": "ok", "status": "completed"}


class AsyncReset(Desk):
    async def reset(self, state):
        self.state = dict(state)


class AsyncRun(Desk):
    async def run(self, input):
        return Desk.run(self, input)


class AsyncSnapshot(Desk):
    async def snapshot(self):
        return dict(self.state)


class Wrapped(Desk):
    async def arun(self, input):
        await asyncio.sleep(0)
        return Desk.run(self, input)

    def run(self, input):  # what the error says to write: a plain def that runs the coroutine
        return asyncio.run(self.arun(input))
"""


@pytest.mark.filterwarnings("error::RuntimeWarning")  # "coroutine ... was never awaited" fails the test
def test_an_async_method_is_an_error_of_its_case_naming_it(make_suite: Any, tmp_path: Path) -> None:
    """A system driven from Jupyter: the runner calls ``reset``, ``run`` and ``snapshot`` as plain
    functions. An ``async def reset`` returned a coroutine nobody awaited, so the sandbox was never reset: every
    case completed, judged on the world the constructor and the case before left (``{"left": …, "paid": 3}`` for
    the third case), and the only sign was a RuntimeWarning pointing at oloproof's line. An ``async def run`` was an
    error saying only "run() returned coroutine", with the same warning. Each is now an error of its case naming the
    method and the fix; the coroutine is closed, so nothing warns; a plain def that runs the coroutine works."""
    cases = [{"id": f"c{i}", "input": {"n": i}, "initial_state": {"paid": 0}, "expected": {"state": {"paid": 1}}}
             for i in (1, 2, 3)]
    evaluators = [{"type": "state_matches"}]
    for shape, method in (("AsyncReset", "reset()"), ("AsyncRun", "run()"), ("AsyncSnapshot", "snapshot()")):
        folder = make_suite(cases, evaluators=evaluators, system=f"sysmod:{shape}", system_code=ASYNC_METHODS)
        run = op.run(op.load_suite(folder), out=tmp_path / shape, progress=False)
        assert list(run.cases["status"]) == ["error"] * 3, shape
        assert all(e.startswith(f"{method} returned a coroutine (an async def method?)") and "asyncio.run(" in e
                   for e in run.cases["error"]), shape
        assert set(run.verdicts["verdict"]) == {"missing"}, shape
    folder = make_suite(cases, evaluators=evaluators, system="sysmod:Wrapped", system_code=ASYNC_METHODS)
    run = op.run(op.load_suite(folder), out=tmp_path / "wrapped", progress=False)
    assert list(run.cases["status"]) == ["completed"] * 3
    assert [s for s in run.snapshots["state"]] == [{"paid": 1}] * 3
    assert set(run.verdicts["verdict"]) == {"pass"}


class _Pending:
    """An awaitable that is no coroutine and has no ``close`` (an ``asyncio``-style future of a system's own)."""

    def __await__(self) -> Any:
        yield
        return {"steps": [], "answer": "ok", "status": "completed"}


class _AwaitingDesk:
    """``run`` returns an awaitable that is no coroutine; ``replay`` is ``async def``."""

    def reset(self, state: dict[str, Any]) -> None:
        self.state = dict(state)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.state)

    def run(self, input: dict[str, Any]) -> _Pending:
        return _Pending()

    async def replay(self, trajectory: Trajectory, checkpoint: int, change: Any) -> dict[str, Any]:
        return {"steps": [], "answer": "ok", "status": "completed"}


@pytest.mark.filterwarnings("error::RuntimeWarning")  # "coroutine ... was never awaited" fails the test
def test_any_awaitable_a_method_returns_is_refused_by_its_type_and_method() -> None:
    """Not only a coroutine: any awaitable (an object with ``__await__``, a future) returned by
    a method is refused, named by its type, though it has no ``close``; an ``async def replay`` is refused naming
    ``replay()``, its coroutine closed so nothing warns that it was never awaited."""
    import gc

    case = _case(initial_state={"paid": 0})
    with pytest.raises(SystemContractError) as err:
        run_case(_AwaitingDesk(), case, run_id="r", system_version=None, timeout_s=None)
    assert str(err.value).startswith("run() returned a _Pending (an async def method?): the runner calls reset, run, "
                                     "replay and snapshot as plain functions")
    with pytest.raises(SystemContractError) as err:
        replay_case(_AwaitingDesk(), case, Trajectory(answer="ok"), 0, None, run_id="r", system_version=None,
                    timeout_s=None)
    assert str(err.value).startswith("replay() returned a coroutine (an async def method?)")
    del err
    gc.collect()  # a coroutine left unclosed would warn here, when collected


class _Awaitable:
    """A result type made for sync and async callers alike: usable as it is, or awaited in async code."""

    def __await__(self) -> Any:
        return iter(())


class _AwaitableTrajectory(_Awaitable, Trajectory):
    pass


class _AwaitableDict(_Awaitable, dict):  # type: ignore[type-arg]
    pass


def test_a_trajectory_or_a_dict_that_can_also_be_awaited_is_taken_as_it_is() -> None:
    """The refusal of an awaitable (an ``async def`` method) refused a Trajectory subclass, or a dict,
    that also defines ``__await__`` (a dual-use result type), which the runner took before: it is what the
    contract asks for, so it is judged (a coroutine is still refused: the test above)."""

    class Desk:
        def __init__(self, shape: str) -> None:
            self.shape, self.state = shape, {}

        def reset(self, state: dict[str, Any]) -> None:
            self.state = dict(state)

        def snapshot(self) -> dict[str, Any]:
            return _AwaitableDict(self.state) if self.shape == "snapshot" else dict(self.state)

        def run(self, input: Any) -> Any:
            self.state["paid"] = 1
            if self.shape == "trajectory":
                return _AwaitableTrajectory(steps=[], answer="ok", status="completed")
            if self.shape == "dict":
                return _AwaitableDict(steps=[], answer="ok", status="completed")
            return {"steps": [], "answer": "ok", "status": "completed"}

    for shape in ("trajectory", "dict", "snapshot"):
        result = run_case(Desk(shape), _case(initial_state={"paid": 0}), run_id="r", system_version=None,
                          timeout_s=None)
        assert (result.trajectory.answer, result.state) == ("ok", {"paid": 1}), shape


EQUAL_TILLS = '''
import dataclasses


@dataclasses.dataclass
class Till:
    """Equal to every other till with the same total, and unhashable (a dataclass with eq and no frozen)."""

    paid: int = 0

    def snapshot(self):
        return {"paid": self.paid}

    def run(self, input):
        self.paid += 1
        return {"steps": [], "answer": "ok"}
'''


def test_a_fresh_instance_without_reset_is_told_from_an_equal_one_by_identity(make_suite: Any) -> None:
    """Instances are told apart by identity: a dataclass system is unhashable, and a fresh one equals another."""
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"state": {"paid": 1}}} for i in (1, 2, 3)]
    folder = make_suite(cases, evaluators=[{"type": "state_matches"}], system="sysmod:Till",
                        system_code=EQUAL_TILLS)
    run = op.run(op.load_suite(folder), progress=False)
    assert list(run.cases["status"]) == ["completed", "error", "completed"]
    assert list(run.verdicts["verdict"]) == ["pass", "missing", "pass"]
