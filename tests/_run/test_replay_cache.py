"""The replay cache can never hand one agent's replays to another (issue 13 §1).

Routes to a stale replay, each reproduced on a real suite: the system's code changed without a new
``version`` (the bundled refund desk, broken after its error handling was fixed), the recording
before the checkpoint took another path (an "LLM" that answered differently), a system spread over
several files (its ``fingerprint()``), and a cache file edited or corrupted on disk. Plus: a bug
while checking a cached replay is never silently a miss, ``cache=False`` / ``--no-cache``, and the
run says how many replays ran live and how many came from the cache.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import textwrap
import threading
from pathlib import Path

import pytest
from _hostile_files import SPECIAL_KINDS, bounded, make_special
from _reliability_systems import EVALUATORS, FAULT_EVALUATOR, cli_env, make_case, run_cli, write_suite

import oloproof_nb as op
from oloproof_nb import cli
from oloproof_nb._run import replays as replays_module
from oloproof_nb._run.replay_cache import REPLAY_CACHE_DIR, recording_digest, replay_key
from oloproof_nb.errors import InternalError
from oloproof_nb.examples import init_example

CRITERION = "recovers_from_error_at_issue_refund"
HANG_LIMIT_S = 30
BROKEN = '''        rec.tool("issue_refund", self.sandbox.issue_refund, order_id=order_id)
        # defect 2: the refund's result is never checked
        rec.say(f"Order {order_id} has been refunded.")
        return "refunded"
'''
FIXED = '''        result = rec.tool("issue_refund", self.sandbox.issue_refund, order_id=order_id)
        if not result.get("ok"):
            rec.tool("escalate_to_human", self.sandbox.escalate_to_human, order_id=order_id,
                     reason="the refund failed")
            rec.say("The refund failed; a colleague will take it from here.")
            return "escalated"
        rec.say(f"Order {order_id} has been refunded.")
        return "refunded"
'''


def _fault_rows(run: op.Run) -> list[tuple[str, bool]]:
    df = run.replays
    return [(r.verdict, bool(r.cached)) for r in df[df["criterion"] == CRITERION].itertuples()]


def test_a_code_change_without_a_version_bump_never_reuses_the_old_verdicts(tmp_path: Path) -> None:
    """The issue's route: fix the desk's error handling (38/38 recover), break it again keeping `version`."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    source = folder / "refund_desk.py"
    broken = source.read_text(encoding="utf-8")
    assert BROKEN in broken and 'version = "refund-desk-1.0"' in broken
    source.write_text(broken.replace(BROKEN, FIXED), encoding="utf-8")

    fixed = op.run(folder, out=tmp_path / "fixed", progress=False)
    assert _fault_rows(fixed) == [("pass", False)] * 38  # every faulted replay recovers (escalates), all live

    source.write_text(broken, encoding="utf-8")  # the defect is back; the version string is unchanged
    again = op.run(folder, out=tmp_path / "again", progress=False)
    # the old key (version, case, checkpoint, change) would serve 38 cached passes here
    assert _fault_rows(again) == [("fail", False)] * 38
    table = op.gate(again).table.set_index("criterion")
    assert table.loc[CRITERION, "passed"] == 0 and table.loc[CRITERION, "verdict"] == "FAIL"
    assert fixed.manifest.code_fingerprint != again.manifest.code_fingerprint
    assert fixed.system_version == again.system_version == "refund-desk-1.0"

    third = op.run(folder, out=tmp_path / "third", progress=False)  # unchanged code: everything cached
    assert _fault_rows(third) == [("fail", True)] * 38


def _mood_suite(root: Path, mood_file: Path) -> Path:
    cases = [make_case(f"m{i}", mood_file=str(mood_file)) for i in range(4)]
    return write_suite(root, cases, evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="relsys:VersionedDesk")


def test_a_different_recording_before_the_checkpoint_is_replayed_again(tmp_path: Path) -> None:
    """The "model" answered differently this time: the cached faulted replay of the old path is not reused."""
    mood = tmp_path / "mood.txt"
    root = _mood_suite(tmp_path / "suite", mood)
    mood.write_text("careful", encoding="utf-8")
    first = op.run(root, out=tmp_path / "first", progress=False)
    assert [v for v, _ in _rows(first)] == ["pass"] * 4  # a careful agent escalates the failed payment
    mood.write_text("hasty", encoding="utf-8")  # same case, same version, same code: another recording
    second = op.run(root, out=tmp_path / "second", progress=False)
    assert second.record("m0")["trajectory"]["steps"][0]["content"] == "hasty"  # the recording differs
    assert first.record("m0")["trajectory"]["steps"][0]["content"] == "careful"
    assert _rows(second) == [("fail", False)] * 4  # replayed live on this path: it claims success, no escalation
    third = op.run(root, out=tmp_path / "third", progress=False)
    assert _rows(third) == [("fail", True)] * 4


def test_the_step_just_before_the_checkpoint_is_part_of_the_recording_key() -> None:
    """Only steps[checkpoint - 1] differs (the result the agent saw last before the faulted call): the recording
    digest and the replay key change. A digest of steps[:checkpoint - 1] left it out and reused the old replay."""
    look = {"kind": "tool_call", "tool": "look", "args": {}, "result": 1}
    pay = {"kind": "tool_call", "tool": "pay", "args": {"k": 1}, "result": {"ok": True}}
    a = [look, {"kind": "tool_call", "tool": "balance", "args": {}, "result": 100}, pay]
    b = [look, {"kind": "tool_call", "tool": "balance", "args": {}, "result": 0}, pay]
    assert recording_digest(a, 2) != recording_digest(b, 2)
    key = {"system_version": "v1", "code_fingerprint": "f" * 64, "case_digest": "d" * 64, "checkpoint": 2,
           "change": {"result": {"ok": False}}}
    assert replay_key(**key, recording=recording_digest(a, 2)) != replay_key(**key, recording=recording_digest(b, 2))


def test_the_call_at_the_checkpoint_is_part_of_the_recording_key_when_it_is_the_last_step() -> None:
    """The faulted call is the recording's last step (the agent stopped after it): another argument of that call
    is another replay, as when steps follow it; its result is not part of the key."""
    look = {"kind": "tool_call", "tool": "look", "args": {}, "result": 1}
    pay_1 = {"kind": "tool_call", "tool": "pay", "args": {"k": 1}, "result": {"ok": True}}
    pay_2 = {**pay_1, "args": {"k": 2}}
    assert recording_digest([look, pay_1], 1) != recording_digest([look, pay_2], 1)
    assert recording_digest([look, pay_1], 1) == recording_digest([look, {**pay_1, "result": {"ok": False}}], 1)


def _rows(run: op.Run) -> list[tuple[str, bool]]:
    df = run.replays
    return [(r.verdict, bool(r.cached)) for r in df.itertuples()]


HELPER_SYSTEM = '''
import hashlib
from pathlib import Path

from policy import escalates

import oloproof_nb as op

HERE = Path(__file__).resolve().parent


class Desk(op.RecordedAgent):
    version = "split-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def pay(self):
        self.state["paid"] = True
        return {"ok": True}

    def act(self, input, rec):
        result = rec.tool("pay", self.pay)
        if not result.get("ok") and escalates():
            rec.tool("escalate", lambda: {"ok": True})
            return "escalated"
        return "paid"
'''
FINGERPRINT = '''
    def fingerprint(self):
        return hashlib.sha256((HERE / "policy.py").read_bytes()).hexdigest()
'''


def _split_suite(root: Path, split: str, system: str = "split:Desk") -> Path:
    """A one-case suite folder: ``split.py`` (the Desk of HELPER_SYSTEM, or ``split``), ``policy.py`` whose
    ``escalates()`` is True, and a fault of ``pay`` that an escalation handles."""
    root.mkdir()
    (root / "split.py").write_text(split, encoding="utf-8")
    (root / "policy.py").write_text("def escalates():\n    return True\n", encoding="utf-8")
    (root / "cases.jsonl").write_text(json.dumps({"id": "a", "input": {}, "initial_state": {},
                                                  "expected": {"answer": "paid", "state": {"paid": True}}}) + "\n")
    (root / "oloproof.yaml").write_text(
        f"name: split\nsystem: {system}\nevaluators:\n  - {{type: fault_recovery, tool: pay, fault: error, "
        "escalate_tools: [escalate]}\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("declares_fingerprint", [True, False])
def test_a_system_over_several_files_of_its_suite_folder_is_fingerprinted_whole(tmp_path: Path,
                                                                                declares_fingerprint: bool) -> None:
    root = _split_suite(tmp_path / "split", HELPER_SYSTEM + (FINGERPRINT if declares_fingerprint else ""))
    # each run in a new process, as a user runs it (a process keeps the helper module it imported)
    assert run_cli("run", str(root), "--out", str(tmp_path / "a"), "--quiet").returncode == 1
    assert _rows(op.load_run(tmp_path / "a")) == [("pass", False)]
    (root / "policy.py").write_text("def escalates():\n    return False\n", encoding="utf-8")
    # policy.py is imported by the system's module, not named by `system:`: a module of the suite folder the
    # system's code imports is part of its fingerprint (before, without fingerprint() the edited
    # desk took the old one's cached replay, ("pass", True), and the gate passed an agent that never escalates)
    assert run_cli("run", str(root), "--out", str(tmp_path / "b"), "--quiet").returncode == 1
    second = op.load_run(tmp_path / "b")
    assert _rows(second) == [("fail", False)]
    if not declares_fingerprint:
        assert second.manifest.code_fingerprint != op.load_run(tmp_path / "a").manifest.code_fingerprint


def test_a_helper_the_helper_imports_is_fingerprinted_too(tmp_path: Path) -> None:
    """``split.py`` imports ``policy``, which imports ``rules``: an edit two imports away is still the system's."""
    root = _split_suite(tmp_path / "split", HELPER_SYSTEM)
    (root / "rules.py").write_text("ESCALATE = True\n", encoding="utf-8")
    (root / "policy.py").write_text("import rules\n\n\ndef escalates():\n    return rules.ESCALATE\n",
                                    encoding="utf-8")
    assert run_cli("run", str(root), "--out", str(tmp_path / "a"), "--quiet").returncode == 1
    assert _rows(op.load_run(tmp_path / "a")) == [("pass", False)]
    (root / "rules.py").write_text("ESCALATE = False\n", encoding="utf-8")
    assert run_cli("run", str(root), "--out", str(tmp_path / "b"), "--quiet").returncode == 1
    assert _rows(op.load_run(tmp_path / "b")) == [("fail", False)]  # before: ("pass", True), from the cache


def _cache_files(root: Path) -> list[Path]:
    return sorted((root / REPLAY_CACHE_DIR).glob("*.json"))


def test_an_edited_or_corrupted_cache_entry_is_never_trusted(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}", escalate=True) for i in range(3)],
                       evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="relsys:VersionedDesk")
    first = op.run(root, out=tmp_path / "first", progress=False)
    assert _rows(first) == [("pass", False)] * 3
    files = _cache_files(root)
    assert len(files) == 6  # a control and a faulted replay per case
    faulted = [f for f in files if json.loads(f.read_text())["entry"]["change"] is not None]
    # an edit that keeps the file valid JSON: the faulted replay now claims the agent never escalated
    data = json.loads(faulted[0].read_text())
    data["entry"]["trajectory"]["steps"] = data["entry"]["trajectory"]["steps"][:2]
    data["entry"]["trajectory"]["answer"] = "done"
    faulted[0].write_text(json.dumps(data), encoding="utf-8")
    faulted[1].write_text(faulted[1].read_text()[:-40], encoding="utf-8")  # torn
    second = op.run(root, out=tmp_path / "second", progress=False)
    rows = second.replays.set_index("case_id")
    edited = {json.loads(f.read_text())["entry"]["case_id"] for f in faulted[:2]}
    assert sorted(rows.index) == ["c0", "c1", "c2"] and len(edited) == 2  # before: no rows at all passed too
    for cid in rows.index:
        assert rows.loc[cid, "verdict"] == "pass"  # the edit never reached a verdict
        assert bool(rows.loc[cid, "cached"]) == (cid not in edited)
    again = json.loads(faulted[0].read_text())
    assert again["digest"] == hashlib.sha256(json.dumps(again["entry"], sort_keys=True, separators=(",", ":"),
                                                        ensure_ascii=False).encode()).hexdigest()


def test_an_entry_edited_with_its_digest_is_a_forgery_the_next_run_takes(tmp_path: Path) -> None:
    """What README section 3 says the digest is not: a signature. Whoever can write ``.oloproof/`` (the system
    under test included) rewrites a faulted replay and its SHA-256, and the next run takes it as the agent's
    (cached, its verdict turned from pass to fail), with no word. A limitation pinned, not a fix: the README's
    advice is ``--no-cache`` for a cache from somewhere you do not trust
    (``test_cache_false_runs_every_replay_live…``)."""
    root = write_suite(tmp_path / "suite", [make_case("c0", escalate=True)],
                       evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="relsys:VersionedDesk")
    assert _rows(op.run(root, out=tmp_path / "first", progress=False)) == [("pass", False)]
    (faulted,) = [f for f in _cache_files(root) if json.loads(f.read_text())["entry"]["change"] is not None]
    data = json.loads(faulted.read_text())
    data["entry"]["trajectory"]["steps"] = data["entry"]["trajectory"]["steps"][:2]  # never escalated
    data["entry"]["trajectory"]["answer"] = "done"
    data["digest"] = hashlib.sha256(json.dumps(data["entry"], sort_keys=True, separators=(",", ":"),
                                               ensure_ascii=False).encode()).hexdigest()
    faulted.write_text(json.dumps(data), encoding="utf-8")
    assert _rows(op.run(root, out=tmp_path / "second", progress=False)) == [("fail", True)]


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_a_cache_entry_that_is_not_a_file_is_a_miss_never_a_hang(tmp_path: Path, kind: str) -> None:
    """A named pipe, a directory or a device (``/dev/zero``) at an entry's path: before, a pipe hung the run
    and ``/dev/zero`` read zeros until memory ran out; now it is a miss, replayed live (a pipe or device is
    then replaced by the entry; a directory cannot be, and stays a miss)."""
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}", escalate=True) for i in range(2)],
                       evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="relsys:VersionedDesk")
    first = op.run(root, out=tmp_path / "first", progress=False)
    files = _cache_files(root)
    assert len(files) == 4 and _rows(first) == [("pass", False)] * 2
    # a faulted replay's entry (a control's that misses replays its faulted one live too), whatever the keys' order
    hostile = next(f for f in files if json.loads(f.read_text(encoding="utf-8"))["entry"]["change"] is not None)
    kept = [f for f in files if f != hostile]
    make_special(hostile, kind)
    second = bounded(lambda: op.run(root, out=tmp_path / "second", progress=False), HANG_LIMIT_S,
                     unblock=[hostile])
    assert [verdict for verdict, _ in _rows(second)] == ["pass", "pass"]
    assert second.replay_counts() == (1, 3)
    assert hostile.is_dir() if kind == "dir" else hostile.is_file() and not hostile.is_symlink()
    assert all(f.is_file() for f in kept)


def test_a_bug_while_checking_a_cached_replay_stops_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a failed parse or digest check is a miss; any other error there is oloproof's own, not a miss."""
    root = write_suite(tmp_path / "suite", [make_case("c0", escalate=True)],
                       evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="relsys:VersionedDesk")
    op.run(root, out=tmp_path / "first", progress=False)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in oloproof while checking a cached state")

    monkeypatch.setattr(replays_module, "environment_state", broken)
    with pytest.raises(InternalError, match="RuntimeError: a bug in oloproof while checking a cached state"):
        op.run(root, out=tmp_path / "second", progress=False)
    assert "a bug in oloproof" in (tmp_path / "second" / "internal-error.txt").read_text(encoding="utf-8")
    assert op.load_run(tmp_path / "second").records == []  # nothing was recorded as if it were the system's


def test_cache_false_runs_every_replay_live_and_leaves_the_cache_alone(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}", escalate=True) for i in range(3)],
                       evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="relsys:VersionedDesk",
                       release={"criteria": {"answer_matches": 0.1}})
    off = op.run(root, out=tmp_path / "off", progress=False, cache=False)
    assert _rows(off) == [("pass", False)] * 3 and not (root / REPLAY_CACHE_DIR).exists()
    assert off.replay_counts() == (6, 0)

    assert cli.main(["run", str(root), "--out", str(tmp_path / "fill"), "--quiet"]) == 0
    assert "; replay runs (control + faulted): 6 live, 0 from the cache" in capsys.readouterr().out
    snapshot = {f.name: f.read_bytes() for f in _cache_files(root)}
    assert len(snapshot) == 6

    assert cli.main(["run", str(root), "--out", str(tmp_path / "hit"), "--quiet"]) == 0
    assert "; replay runs (control + faulted): 0 live, 6 from the cache" in capsys.readouterr().out
    assert cli.main(["run", str(root), "--out", str(tmp_path / "nocache"), "--quiet", "--no-cache"]) == 0
    assert "; replay runs (control + faulted): 6 live, 0 from the cache" in capsys.readouterr().out
    assert {f.name: f.read_bytes() for f in _cache_files(root)} == snapshot

    hit = op.load_run(tmp_path / "hit")
    assert "Replay runs (a control and a faulted run per replay): 0 live, 6 from the cache." in hit._repr_html_()
    assert "replay runs: 0 live, 6 from the cache" in repr(hit)
    assert len(hit.replays) == 3  # one row per replay: its control and faulted runs are the 6 counted




def test_an_edit_to_a_base_class_in_another_file_is_seen(tmp_path: Path) -> None:
    """`system: desk:Desk` subclasses the Desk of split.py: only desk.py was digested, so split.py changed to stop
    escalating kept the cached 'escalated' verdict (pass, cached). The classes of the system's own MRO (outside
    oloproof_nb) now count with their files; a function it calls in another file still needs fingerprint()."""
    root = _split_suite(tmp_path / "based", HELPER_SYSTEM, system="desk:Desk")
    (root / "desk.py").write_text("from split import Desk as Base\n\n\nclass Desk(Base):\n    pass\n",
                                  encoding="utf-8")
    assert run_cli("run", str(root), "--out", str(tmp_path / "a"), "--quiet").returncode == 1
    assert _rows(op.load_run(tmp_path / "a")) == [("pass", False)]
    assert run_cli("run", str(root), "--out", str(tmp_path / "b"), "--quiet").returncode == 1
    assert _rows(op.load_run(tmp_path / "b")) == [("pass", True)]  # unchanged: served from the cache
    (root / "split.py").write_text(HELPER_SYSTEM.replace("and escalates()", "and False"), encoding="utf-8")
    assert run_cli("run", str(root), "--out", str(tmp_path / "c"), "--quiet").returncode == 1
    assert _rows(op.load_run(tmp_path / "c")) == [("fail", False)]  # the base class's edit: replayed live


def test_a_class_defined_in_no_file_is_never_cached() -> None:
    """A class typed into a notebook cell has no file to digest: no fingerprint, so no cache and no resume."""
    from oloproof_nb._config.imports import class_source, user_classes

    namespace: dict[str, object] = {"__name__": "cell_module_without_a_file"}
    exec(compile("class Cell:\n    pass\n", "<ipython-input-1-0f3a>", "exec"), namespace)  # noqa: S102
    cell = namespace["Cell"]
    assert isinstance(cell, type) and class_source(cell) is None and user_classes(cell()) == [cell]
    assert class_source(op.RecordedAgent) is not None and user_classes(op.RecordedAgent()) == []
    # a base written in C (threading.local is _thread._local) has no source but is no user's code:
    # left out, so such a system is still fingerprinted and cached
    local = type("Local", (threading.local,), {})
    assert user_classes(local()) == [local] and class_source(local) == Path(__file__)
    # a base from the standard library or an installed package changes with its version, not with the user's
    # code: counted, it refused a resume after an upgrade (typing.Protocol, pydantic's BaseModel)
    import typing

    import pydantic

    class Agent(pydantic.BaseModel, typing.Generic[typing.TypeVar("T")]):
        pass

    assert user_classes(Agent()) == [Agent]




def test_another_class_of_the_same_file_never_gets_the_first_ones_replays(tmp_path: Path) -> None:
    """Two classes in one file with one ``version`` (a subclass that escalates a failed refund) had one code
    fingerprint: the second was judged by the first's cached replays (0/38 recover, 38/38 live). The classes
    the system is made of are now part of it."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    source = folder / "refund_desk.py"
    text = source.read_text(encoding="utf-8")
    act = text[text.index("    def act(self, input"):]  # RefundDesk.act, the file's last method
    checked_desk = "\n\nclass CheckedDesk(RefundDesk):\n" + act.replace(BROKEN, FIXED)  # same version, escalates
    source.write_text(text + checked_desk, encoding="utf-8")
    first = op.run(folder, out=tmp_path / "first", progress=False)
    assert _fault_rows(first) == [("fail", False)] * 38
    (folder / "oloproof.yaml").write_text((folder / "oloproof.yaml").read_text(encoding="utf-8").replace(
        "refund_desk:RefundDesk", "refund_desk:CheckedDesk"), encoding="utf-8")
    checked = op.run(folder, out=tmp_path / "checked", progress=False)
    assert _fault_rows(checked) == [("pass", False)] * 38  # live: nothing of the other class's replays
    assert first.manifest.code_fingerprint != checked.manifest.code_fingerprint
    assert first.system_version == checked.system_version


def test_a_method_assigned_to_the_system_class_never_gets_the_class_files_replays(tmp_path: Path) -> None:
    """``RefundDesk.act = act`` from a file of fixes (tried in a notebook) escalates a failed refund: 38/38 pass.
    The file's own ``act`` assigned back broke it again, and took the fixed desk's replays from the cache: the
    class file is unchanged (38/38 pass, cached; 0/38 live). A method typed into a cell is never cached."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    text = (folder / "refund_desk.py").read_text(encoding="utf-8")
    act = text[text.index("    def act(self, input"):].replace(BROKEN, FIXED)  # RefundDesk.act, escalating
    suite = op.load_suite(folder)
    desk = suite.resolve_system()
    names = vars(importlib.import_module(desk.__module__))
    fixes = tmp_path / "fixes.py"  # outside the suite folder
    fixes.write_text("from typing import Any\n\n" + textwrap.dedent(act), encoding="utf-8")
    namespace = dict(names, __name__="fixes_of_the_desk")
    exec(compile(fixes.read_text(encoding="utf-8"), str(fixes), "exec"), namespace)  # noqa: S102 - imported
    original = desk.act
    try:
        desk.act = namespace["act"]
        fixed = op.run(suite, out=tmp_path / "fixed", progress=False)
        assert _fault_rows(fixed) == [("pass", False)] * 38
        desk.act = original
        again = op.run(suite, out=tmp_path / "again", progress=False)
        assert _fault_rows(again) == [("fail", False)] * 38  # was [("pass", True)] * 38
        assert op.gate(again).table.set_index("criterion").loc[CRITERION, "verdict"] == "FAIL"
        cell = dict(names, __name__="__notebook_cell_without_a_file__")
        exec(compile(textwrap.dedent(act), "<ipython-input-7-2b0c>", "exec"), cell)  # noqa: S102 - a cell
        desk.act = cell["act"]
        for name in ("cell1", "cell2"):
            in_cell = op.run(suite, out=tmp_path / name, progress=False)
            assert _fault_rows(in_cell) == [("pass", False)] * 38 and in_cell.manifest.code_fingerprint is None
    finally:
        desk.act = original


READS_POLICY = '''        result = rec.tool("issue_refund", self.sandbox.issue_refund, order_id=order_id)
        policy = json.loads((Path(__file__).parent / "policy.json").read_text(encoding="utf-8"))
        if not result.get("ok") and policy["escalate"]:
            rec.tool("escalate_to_human", self.sandbox.escalate_to_human, order_id=order_id, reason="failed")
            rec.say("The refund failed; a colleague will take it from here.")
            return "escalated"
        rec.say(policy["done"].format(order_id=order_id))
        return "refunded"
'''


def test_a_faulted_replay_after_a_control_that_did_not_come_from_the_cache_runs_live(tmp_path: Path) -> None:
    """A desk reads ``policy.json`` at each case (no code: README section 3's limit), edited from escalating a
    failed refund to claiming it, and its success message reworded. The cached controls no longer reproduce the
    recordings (the message differs), so they ran live, yet each faulted replay was taken from the cache of the
    escalating desk: 38/38 pass where ``cache=False`` fails 38/38, on rows that said ``cached`` False."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    source = folder / "refund_desk.py"
    text = source.read_text(encoding="utf-8").replace(BROKEN, READS_POLICY)
    source.write_text(text.replace("import re\n", "import json\nimport re\nfrom pathlib import Path\n", 1),
                      encoding="utf-8")
    policy = folder / "policy.json"
    policy.write_text(json.dumps({"escalate": True, "done": "Order {order_id} has been refunded."}), encoding="utf-8")
    first = op.run(folder, out=tmp_path / "first", progress=False)
    assert _fault_rows(first) == [("pass", False)] * 38
    policy.write_text(json.dumps({"escalate": False, "done": "Refunded {order_id}."}), encoding="utf-8")
    edited = op.run(folder, out=tmp_path / "edited", progress=False)
    assert _fault_rows(edited) == [("fail", False)] * 38  # was [("pass", False)] * 38
    faulted = [line for line in map(json.loads, (tmp_path / "edited" / "replays.jsonl").read_text(
        encoding="utf-8").splitlines()) if line["kind"] == "fault"]
    assert len(faulted) == 38 and not any(line["cached"] for line in faulted)
    assert _fault_rows(op.run(folder, out=tmp_path / "again", progress=False)) == [("fail", True)] * 38
    assert _fault_rows(op.run(folder, out=tmp_path / "live", cache=False, progress=False)) == [("fail", False)] * 38


def test_every_fault_replayed_at_a_checkpoint_whose_control_ran_live_runs_live(tmp_path: Path) -> None:
    """The desk of the test above, judged by two faults of ``issue_refund`` (an error and a timeout: one checkpoint,
    one control key). After ``policy.json`` changed, the error's control ran live and was stored; the timeout's
    control then came from the cache (the one just stored) and its faulted replay too, from the escalating desk's
    world: 38/38 pass, cached, where ``cache=False`` fails 38/38."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    source = folder / "refund_desk.py"
    text = source.read_text(encoding="utf-8").replace(BROKEN, READS_POLICY)
    source.write_text(text.replace("import re\n", "import json\nimport re\nfrom pathlib import Path\n", 1),
                      encoding="utf-8")
    config = folder / "oloproof.yaml"
    error = "  - {type: fault_recovery, tool: issue_refund, fault: error, escalate_tools: [escalate_to_human]}\n"
    timeout = error.replace("fault: error", "fault: timeout")
    config.write_text(config.read_text(encoding="utf-8").replace(error, error + timeout), encoding="utf-8")
    policy = folder / "policy.json"
    policy.write_text(json.dumps({"escalate": True, "done": "Order {order_id} has been refunded."}), encoding="utf-8")
    criteria = (CRITERION, "recovers_from_timeout_at_issue_refund")

    def rows(run: op.Run) -> dict[str, set[tuple[str, bool]]]:
        df = run.replays
        assert (df["criterion"].value_counts()[list(criteria)] == 38).all()
        return {c: {(r.verdict, bool(r.cached)) for r in df[df["criterion"] == c].itertuples()} for c in criteria}

    assert rows(op.run(folder, out=tmp_path / "first", progress=False)) == dict.fromkeys(criteria, {("pass", False)})
    policy.write_text(json.dumps({"escalate": False, "done": "Refunded {order_id}."}), encoding="utf-8")
    edited = rows(op.run(folder, out=tmp_path / "edited", progress=False))
    assert edited == dict.fromkeys(criteria, {("fail", False)})  # the timeout's was {("pass", True)}
    assert rows(op.run(folder, out=tmp_path / "live", cache=False, progress=False)) == edited
    assert rows(op.run(folder, out=tmp_path / "again", progress=False)) == dict.fromkeys(criteria, {("fail", True)})


def test_a_system_given_with_other_arguments_never_gets_the_first_ones_replays(tmp_path: Path) -> None:
    """``system=Desk(careful=False)`` after ``system=Desk(careful=True)``: one file, one class, one ``version``, so
    one code fingerprint, and the careless desk was judged by the careful one's cached replays (38/38 pass,
    cached; 0/38 live). What the built instance holds (``careful``) and a partial's arguments are now part of
    the key."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    source = folder / "refund_desk.py"
    text = source.read_text(encoding="utf-8")
    careful = FIXED.replace("if not result.get", "if self.careful and not result.get")
    text = text.replace(BROKEN, careful).replace(
        "    def __init__(self) -> None:\n", "    def __init__(self, careful: bool = True) -> None:\n"
        "        self.careful = careful\n")
    source.write_text(text, encoding="utf-8")
    suite = op.load_suite(folder)
    desk = suite.resolve_system()

    first = op.run(suite, system=functools.partial(desk, careful=True), out=tmp_path / "p1", progress=False)
    assert _fault_rows(first) == [("pass", False)] * 38
    again = op.run(suite, system=functools.partial(desk, careful=True), out=tmp_path / "p2", progress=False)
    assert _fault_rows(again) == [("pass", True)] * 38  # the same arguments: served from the cache
    careless = op.run(suite, system=functools.partial(desk, careful=False), out=tmp_path / "p3", progress=False)
    assert _fault_rows(careless) == [("fail", False)] * 38  # was [("pass", True)] * 38
    assert op.gate(careless).table.set_index("criterion").loc[CRITERION, "passed"] == 0

    for name, cached in (("i1", False), ("i2", True)):  # an instance: what it holds keys its replays
        instance = op.run(suite, system=desk(careful=True), out=tmp_path / name, progress=False)
        assert _fault_rows(instance) == [("pass", cached)] * 38
    instance = op.run(suite, system=desk(careful=False), out=tmp_path / "i3", progress=False)
    assert _fault_rows(instance) == [("fail", False)] * 38  # was [("pass", True)] * 38
    assert instance.manifest.code_fingerprint == careless.manifest.code_fingerprint  # resume and pools: unchanged


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_setting_the_suites_factory_reads_from_the_environment_keys_the_replays(tmp_path: Path,
                                                                                  isolation: str) -> None:
    """``system: refund_desk:make`` builds ``RefundDesk(careful=os.environ[...])``: same file, same version, so
    ``oloproof run`` with the setting off took the careful run's cached replays and exited 0 (38/38 pass, cached;
    0/38 live). The instance's ``careful`` now keys them."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    source = folder / "refund_desk.py"
    text = source.read_text(encoding="utf-8").replace(
        BROKEN, FIXED.replace("if not result.get", "if self.careful and not result.get")).replace(
        "    def __init__(self) -> None:\n", "    def __init__(self, careful: bool = True) -> None:\n"
        "        self.careful = careful\n")
    source.write_text(text + '\n\ndef make():\n    import os\n\n'
                      '    return RefundDesk(careful=os.environ.get("DESK_CAREFUL") == "1")\n', encoding="utf-8")
    suite_file = folder / "oloproof.yaml"
    suite_file.write_text(suite_file.read_text(encoding="utf-8").replace("refund_desk:RefundDesk", "refund_desk:make"),
                          encoding="utf-8")
    for name, careful, rows in (("a", "1", [("pass", False)]), ("b", "1", [("pass", True)]),
                                ("c", "0", [("fail", False)])):  # c was [("pass", True)] * 38
        done = run_cli("run", str(folder), "--out", str(tmp_path / name), "--isolation", isolation, "--quiet",
                       env=cli_env(DESK_CAREFUL=careful))
        assert done.returncode == 1, done.stderr  # the example's other criteria block
        assert _fault_rows(op.load_run(tmp_path / name)) == rows * 38


def test_a_suite_whose_system_file_changed_since_it_was_loaded_does_not_run(tmp_path: Path) -> None:
    """A notebook loads the suite, fixes the desk, runs the same suite object: the old code ran, and its
    replays were cached under the fixed file's fingerprint, so the fixed desk, loaded again, was judged by
    the broken one's replays (0/38, 38/38 live). Now the run refuses, naming the file; loaded again, it runs
    the fixed code live."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    suite = op.load_suite(folder)
    source = folder / "refund_desk.py"
    source.write_text(source.read_text(encoding="utf-8").replace(BROKEN, FIXED), encoding="utf-8")
    with pytest.raises(op.ConfigError, match=rf"system: {source.resolve()} changed since this suite was loaded"):
        op.run(suite, out=tmp_path / "stale", progress=False)
    assert not (folder / ".oloproof" / "replays").exists() or not any((folder / ".oloproof" / "replays").iterdir())
    fixed = op.run(op.load_suite(folder), out=tmp_path / "fixed", progress=False)
    assert _fault_rows(fixed) == [("pass", False)] * 38


def test_a_system_python_keeps_the_old_import_of_is_refused_at_load_saying_restart(tmp_path: Path) -> None:
    """A system in a package (``agents.desk:Desk``): loading the suite again after an edit gave the same old
    class (Python keeps a package's import), so the advice "load the suite again" could not help. The second
    load now refuses, saying to restart the process."""
    root = tmp_path / "suite"
    (root / "agents").mkdir(parents=True)
    (root / "agents" / "__init__.py").write_text("", encoding="utf-8")
    desk = root / "agents" / "desk.py"
    desk.write_text("class Desk:\n    def run(self, input):\n        return {'steps': [], 'answer': 'a', "
                    "'status': 'completed'}\n", encoding="utf-8")
    (root / "cases.jsonl").write_text('{"id": "c1", "input": {}, "expected": {"answer": "a"}}\n', encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: pkg\nsystem: agents.desk:Desk\nevaluators: [{type: answer_matches}]\n",
                                        encoding="utf-8")
    suite = op.load_suite(root)
    desk.write_text(desk.read_text(encoding="utf-8").replace("'a'", "'b'"), encoding="utf-8")
    with pytest.raises(op.ConfigError, match="load the suite again"):
        op.run(suite, out=tmp_path / "stale", progress=False)
    with pytest.raises(op.ConfigError, match=r"Python keeps that import .* restart the process \(in a notebook: "
                                             r"the kernel\) and load the suite again"):
        op.load_suite(root)


def test_a_cache_entry_is_made_like_any_file_of_the_user_so_a_teammate_can_read_it(tmp_path: Path) -> None:
    """Entries were made by mkstemp, mode 0o600 whatever the umask, so a teammate sharing the suite
    folder could not read them and silently replayed everything again; every other file is 0o666 less the umask."""
    import os
    import stat

    from oloproof_nb._run.replay_cache import ReplayCache

    cache = ReplayCache(tmp_path / "replays")
    key = replay_key("v1", "f" * 64, "d" * 64, 0, None, "r" * 64)
    old = os.umask(0o022)
    try:
        cache.put(key, {"trajectory": {"steps": []}, "state": {}})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(cache.path(key)).st_mode) == 0o644
    assert [p.name for p in (tmp_path / "replays").iterdir() if p.name.endswith(".tmp")] == []
    assert cache.get(key) == {"trajectory": {"steps": []}, "state": {}}


# --------------------------------------------------------------------------- edges no other test pins


def test_the_replay_key_is_the_sha256_of_the_canonical_json_of_its_nine_parts() -> None:
    """The formula of the module's docstring, computed here with hashlib and json: so each part counts (the same
    recording at another checkpoint, of another case, or under another change is another replay; oloproof_nb's
    own version is the eighth part, the run's ``case_timeout_s`` the ninth)."""
    parts = {"schema": "oloproof_replay_cache/v2", "oloproof_nb": op.__version__, "system_version": "v1",
             "code_fingerprint": "f" * 64,
             "case_digest": "d" * 64, "checkpoint": 2, "change": {"result": {"ok": False}}, "recording": "r" * 64,
             "case_timeout_s": None}
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    key = replay_key("v1", "f" * 64, "d" * 64, 2, {"result": {"ok": False}}, "r" * 64)
    assert key == hashlib.sha256(text.encode("utf-8")).hexdigest()
    others = {replay_key("v1", "f" * 64, "d" * 64, 3, {"result": {"ok": False}}, "r" * 64),
              replay_key("v1", "f" * 64, "e" * 64, 2, {"result": {"ok": False}}, "r" * 64),
              replay_key("v1", "f" * 64, "d" * 64, 2, None, "r" * 64),
              replay_key("v1", "f" * 64, "d" * 64, 2, {"result": {"ok": False}}, "r" * 64, timeout_s=60.0)}
    assert len(others) == 4 and key not in others


def test_only_an_entry_of_its_own_key_and_schema_holding_a_trajectory_is_used(tmp_path: Path) -> None:
    """Each is a miss, never trusted and never a crash: the file of another replay copied under this key (its
    digest covers the entry, not the key), an entry of another schema, a verified entry without a trajectory
    (reading it stopped the run with a KeyError), and a file nested deeper than JSON can be read."""
    from oloproof_nb._run.replay_cache import ReplayCache

    cache = ReplayCache(tmp_path / "replays")
    mine, other = (replay_key("v1", "f" * 64, "d" * 64, checkpoint, None, "r" * 64) for checkpoint in (0, 1))
    entry: dict[str, object] = {"trajectory": {"steps": []}, "state": {}}
    cache.put(other, entry)
    cache.path(mine).write_bytes(cache.path(other).read_bytes())
    assert cache.get(other) == entry and cache.get(mine) is None
    data = json.loads(cache.path(other).read_text(encoding="utf-8"))
    cache.path(other).write_text(json.dumps({**data, "schema": "oloproof_replay_cache/v1"}), encoding="utf-8")
    assert cache.get(other) is None
    cache.put(mine, {"state": {}})
    assert cache.get(mine) is None
    cache.path(mine).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert cache.get(mine) is None


def test_an_entry_is_written_and_read_whatever_json_dumps_and_json_loads_now_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A system run on a thread of the run's process shares its ``json`` module: one that replaced ``json.loads``
    (a library's shim) made every entry read back a miss, each replay run live again; one whose ``json.dumps``
    returns bytes (as ``orjson.dumps`` does) made the write fail."""
    from oloproof_nb._run.replay_cache import ReplayCache

    cache = ReplayCache(tmp_path / "replays")
    first, second = (replay_key("v1", "f" * 64, "d" * 64, checkpoint, None, "r" * 64) for checkpoint in (0, 1))
    entry: dict[str, object] = {"trajectory": {"steps": [{"tool": "look", "args": {}, "result": "é"}]}, "state": {}}
    cache.put(first, entry)
    monkeypatch.setattr(json, "loads", lambda *args, **kwargs: {"patched": True})
    monkeypatch.setattr(json, "dumps", lambda *args, **kwargs: b"{}")
    cache.put(second, entry)
    assert cache.get(first) == entry and cache.get(second) == entry


def test_a_write_that_fails_leaves_no_temporary_file_and_no_entry(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache is optional: a full disk at the rename is ignored, and the half-made file is removed."""
    import os

    from oloproof_nb._run.replay_cache import ReplayCache

    def full(src: str, dst: object) -> None:
        raise OSError(28, "No space left on device")

    cache = ReplayCache(tmp_path / "replays")
    key = replay_key("v1", "f" * 64, "d" * 64, 0, None, "r" * 64)
    monkeypatch.setattr(os, "replace", full)
    cache.put(key, {"trajectory": {"steps": []}, "state": {}})
    monkeypatch.undo()
    assert list((tmp_path / "replays").iterdir()) == [] and cache.get(key) is None


def test_a_cache_put_under_a_umask_that_takes_the_owners_permissions_leaves_no_folder(tmp_path: Path) -> None:
    """A replay cached under ``os.umask(0o777)`` (the CLI refuses it, the library did not) made the suite's
    ``.oloproof`` of mode 0 and failed (silently: the cache is optional); the folder stayed, and every put after it,
    under any umask, failed too: the suite was never cached again until someone ran ``chmod``. Now nothing is
    left, and the next put under a usual umask is cached."""
    import subprocess
    import sys

    from _processes import without_root_powers

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    key = replay_key("v1", "f" * 64, "d" * 64, 0, None, "r" * 64)
    script = ("import os, sys\nfrom pathlib import Path\nfrom oloproof_nb._run.replay_cache import ReplayCache\n"
              "cache = ReplayCache(Path(sys.argv[1]))\nentry = {'trajectory': {'steps': []}, 'state': {}}\n"
              "os.umask(0o777)\ncache.put(sys.argv[2], entry)\n"
              "print(sorted(os.listdir(sys.argv[3])))\n"
              "os.umask(0o022)\ncache.put(sys.argv[2], entry)\nprint(cache.get(sys.argv[2]) == entry)\n")
    suite = tmp_path / "suite"
    suite.mkdir()
    done = subprocess.run([*prefix, sys.executable, "-c", script, str(suite / REPLAY_CACHE_DIR), key, str(suite)],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout == "[]\nTrue\n", done.stderr


def test_calls_every_replays_each_call_once_and_a_second_run_takes_them_all_from_the_cache(tmp_path: Path) -> None:
    """calls: every: the key holds the checkpoint and the recorded steps up to it, so each
    call's control and faulted replay is an entry of its own. By hand: 2 cases x 2 calls x 2 replays = 8 live, then
    8 from the cache; a suite that faulted the first call alone before reuses those 4 and makes the real refund's 4."""
    from _fault_systems import DryRunFirst
    from _fault_systems import write_suite as write_fault_suite

    folder = write_fault_suite(tmp_path / "every", calls="every")
    first_desk = DryRunFirst()
    first = op.run(folder, system=first_desk, progress=False)
    assert first_desk.replay_calls == 8 and first.replay_tally() == (8, 0, 0)
    assert len(list((folder / REPLAY_CACHE_DIR).glob("*.json"))) == 8
    second_desk = DryRunFirst()
    second = op.run(folder, system=second_desk, progress=False)
    assert second_desk.replay_calls == 0 and second.replay_tally() == (0, 8, 0)
    cols = ["case_id", "checkpoint", "verdict", "reason"]
    assert second.replays[cols].equals(first.replays[cols]) and second.replays["cached"].all()
    assert list(second.replays["checkpoint"]) == [1, 2, 1, 2]

    before = write_fault_suite(tmp_path / "first_then_every")  # calls: first
    op.run(before, system=DryRunFirst(), progress=False)
    write_fault_suite(before, calls="every")
    desk = DryRunFirst()
    op.run(before, system=desk, progress=False)
    assert desk.replay_calls == 4  # only the real refund's control and faulted replay, per case
