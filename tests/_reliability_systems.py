"""Helpers for the reliability tests: a scriptable system, suite writers, frame comparison, folder snapshots.

The system (:data:`SYSTEM_SOURCE`) is written into each test suite folder as
``relsys.py`` so that subprocesses can import it from there. It is driven by the
case input and by environment variables, so one module covers every scenario:

``RELSYS_LOG``
    A side-channel file: every constructor call, run and replay appends one
    JSON line ``[event, case_id, instance, detail]`` (event ``init``, ``run``,
    ``replay``). Tests count what ran from it, never from the tool's own output.
``RELSYS_KILL``
    ``run:<case id>`` or ``replay:<case id>``: the process SIGKILLs itself when it
    starts running that case (or its faulted replay) — a crash at a known point.
``RELSYS_SLEEP``
    Seconds every ``run`` sleeps first (so a test can kill a run from outside).
``RELSYS_RELEASE``
    A file whose appearance ends every ``hang`` (so in-process tests do not leave
    threads behind); without it a hang lasts an hour.
``RELSYS_IMPORT``
    What the module does when it is imported: ``sysexit`` (``sys.exit(0)``),
    ``keyboard`` (raises ``KeyboardInterrupt``), ``os_exit`` (``os._exit(0)``), ``hang``
    (blocks until the ``RELSYS_RELEASE`` file exists, at most a minute).
``RELSYS_INIT``
    What the constructor does: ``sysexit`` (``sys.exit(0)``), ``keyboard``,
    ``raise``, ``gil_hog`` (holds the GIL for minutes), ``hang_after:N`` (instances after
    the N-th of this process hang for an hour), ``exit_after:N`` (they end the process: ``os._exit(3)``),
    ``raise_after:N`` (they raise) or
    ``raise_if:PATH`` (raises while the file PATH exists).
``RELSYS_ONCE``
    A folder: a case of op ``exit_once`` (``os._exit(3)``) or ``segfault_once`` ends the process the first time
    it runs (it leaves ``<case id>.crashed`` there), and runs normally after; ``sigint_once``, ``sigterm_once`` and
    ``sighup_once`` send that signal to the process (and to it alone) instead, ``group_sigint_once`` a SIGINT to its
    whole process group, as a terminal's Ctrl-C does (run the command with ``start_new_session=True``: the group is
    then its own).
``RELSYS_MARK``
    A file the module appends its process id to when it is imported (which process imported the system?).

The case input: ``{"cid": id, "op": ..., "answer": ..., "pay": bool, "message": ...,
"replay_op": ...}``. ``op`` is ``ok`` (default), ``raise``, ``hang``, ``sleep_forever``,
``sysexit``, ``garbage``, ``unserialisable``, ``surrogate``, ``deep_answer``, or one of the
misbehaviours of issue 14: ``sysexit0`` (``sys.exit(0)``), ``os_exit`` (``os._exit(0)``), ``exit_once`` and
``segfault_once`` (see ``RELSYS_ONCE``),
``keyboard`` (raises ``KeyboardInterrupt``), ``cancelled`` (``asyncio.CancelledError``),
``base`` (a ``BaseException`` subclass of its own), ``generator_exit``, ``bad_str`` (an exception
whose ``__str__`` raises), ``segfault`` (reads address 0 through ctypes), ``gil_hog`` (a regular
expression that holds the GIL for minutes), ``leak_thread`` (leaves a non-daemon thread sleeping an
hour, then answers normally). ``replay_op`` is ``raise``, ``hang``, ``sleep_forever``,
``unserialisable``, ``keyboard``, ``base`` or ``sysexit0`` (applied to replays only). With
``"mood_file": path`` the agent first asks its "model" for a mood read from that file (a stand-in
for an LLM that may answer differently from run to run) and escalates a failed payment only when
the mood is ``careful``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

SYSTEM_SOURCE = r'''
import asyncio
import itertools
import json
import os
import re
import signal
import sys
import threading
import time

import oloproof_nb as op

_COUNTER = itertools.count()
BYSTANDER = "bystander"

if os.environ.get("RELSYS_MARK"):
    with open(os.environ["RELSYS_MARK"], "a", encoding="utf-8") as _fh:
        _fh.write(f"{os.getpid()}\n")
_IMPORT = os.environ.get("RELSYS_IMPORT")
if _IMPORT == "sysexit":
    sys.exit(0)
if _IMPORT == "keyboard":
    raise KeyboardInterrupt("raised by the system's module")
if _IMPORT == "os_exit":
    os._exit(0)
if _IMPORT == "hang":
    for _ in range(600):
        if os.path.exists(os.environ.get("RELSYS_RELEASE", "")):
            break
        time.sleep(0.1)


class Meltdown(BaseException):
    """A BaseException of the system's own."""


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("this exception cannot be printed")


def _fork_helper():
    """Fork a helper that lives until the test's release file exists (at most a minute)."""
    if os.fork() == 0:
        release = os.environ.get("RELSYS_RELEASE")
        for _ in range(600):
            if release and os.path.exists(release):
                break
            time.sleep(0.1)
        os._exit(0)


def _misbehave(what):
    if what == "sysexit0":
        sys.exit(0)
    if what == "os_exit":
        os._exit(0)
    if what == "exit3":
        os._exit(3)
    if what in ("fork_exit", "fork_helper"):  # a helper process left running, holding what it inherited
        _fork_helper()
        if what == "fork_exit":  # and the process dies (a worker: its pipe stays open in the helper)
            os._exit(7)
    if what == "keyboard":
        raise KeyboardInterrupt("raised by the system, not by the user")
    if what == "cancelled":
        raise asyncio.CancelledError()
    if what == "base":
        raise Meltdown("the reactor melted")
    if what == "generator_exit":
        raise GeneratorExit()
    if what == "bad_str":
        raise Unprintable()
    if what == "segfault":
        import ctypes
        ctypes.string_at(0)
    if what == "gil_hog":
        re.match(r"(a+)+$", "a" * 30 + "b")  # catastrophic backtracking: minutes, holding the GIL
    if what == "close_std":  # a system that detaches from the terminal: descriptors 1 and 2 are free numbers
        os.close(1)
        os.close(2)
    if what == "close_fds":  # a system that closes every descriptor it did not open (os.closerange, a daemon's)
        os.closerange(3, 65536)
    if what == "print_std":  # a debugging line, or a C library's, written to whatever 1 and 2 now are
        for fd in (1, 2):
            try:
                os.write(fd, b"a debugging line of the system\n")
            except OSError:
                pass
    if what == "leak_thread":
        threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
    if what == "umask_777":  # the process's umask, which every file the run makes after it gets
        os.umask(0o777)


def _log(event, cid, instance, detail=None):
    path = os.environ.get("RELSYS_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps([event, cid, instance, detail]) + "\n")


def _maybe_kill(where, cid):
    if os.environ.get("RELSYS_KILL") == f"{where}:{cid}":
        os.kill(os.getpid(), signal.SIGKILL)


def _read_mood(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read().strip()


def _block(seconds):
    release = os.environ.get("RELSYS_RELEASE")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if release and os.path.exists(release):
            return
        time.sleep(0.02)


class Desk(op.RecordedAgent):
    """A dict sandbox with a lookup tool, a pay tool (the one faults replace) and an escalate tool."""

    version = None

    def __init__(self):
        number = next(_COUNTER)
        self.instance = f"{os.getpid()}-{number}"
        self.state = {}
        _log("init", None, self.instance)
        init = os.environ.get("RELSYS_INIT", "")
        if init == "sysexit":
            sys.exit(0)
        if init == "keyboard":
            raise KeyboardInterrupt("raised by the constructor")
        if init == "raise":
            raise RuntimeError("the constructor failed")
        if init == "gil_hog":
            _misbehave("gil_hog")
        if init.startswith("exit_after:") and number >= int(init.split(":")[1]):
            os._exit(3)
        if init.startswith("raise_after:") and number >= int(init.split(":")[1]):
            raise RuntimeError(f"the constructor failed: instance {number} of this process")
        if init.startswith("raise_if:") and os.path.exists(init.split(":", 1)[1]):
            raise RuntimeError("the constructor failed: " + os.path.basename(init.split(":", 1)[1]))
        if init.startswith("hang_after:") and number >= int(init.split(":")[1]):
            _block(3600)

    # -- Stateful ---------------------------------------------------------------------------
    def reset(self, state):
        if state.get("fault") == "reset":
            raise OSError("reset failed: sandbox locked")
        self.state = state

    def snapshot(self):
        if self.state.get("fault") == "snapshot":
            raise RuntimeError("snapshot failed: disk unreadable")
        if self.state.get("fault") == "snapshot_not_json":
            return {"when": object()}
        if self.state.get("fault") == "snapshot_deep":
            x = 1
            for _ in range(5000):
                x = [x]
            return {"deep": x}
        return json.loads(json.dumps(self.state))

    # -- tools ------------------------------------------------------------------------------
    def lookup(self, key):
        return {"ok": True, "key": key, "known": key in self.state.get("accounts", {})}

    def pay(self, key):
        self.state.setdefault("paid", {})[key] = self.state.get("accounts", {}).get(key, 0)
        return {"ok": True, "paid": key}

    def escalate(self, key):
        self.state.setdefault("escalations", {})[key] = "open"
        return {"ok": True}

    def act(self, input, rec):
        key = input["cid"]
        mood = None
        if input.get("mood_file"):
            mood = rec.model("mood", _read_mood, path=input["mood_file"])
        rec.tool("lookup", self.lookup, key=key)
        if input.get("pay"):
            result = rec.tool("pay", self.pay, key=key)
            if not (isinstance(result, dict) and result.get("ok")):
                if input.get("escalate") or mood == "careful":
                    rec.tool("escalate", self.escalate, key=key)
                    return "escalated"
                return input.get("answer")
        rec.say(f"done with {key} ✓ café")
        return input.get("answer")

    # -- the entry points the runner calls --------------------------------------------------
    def run(self, input):
        cid = input["cid"]
        _log("run", cid, self.instance)
        _maybe_kill("run", cid)
        time.sleep(float(os.environ.get("RELSYS_SLEEP", "0") or 0))
        op_ = input.get("op", "ok")
        if op_ == "raise":
            raise RuntimeError(input.get("message", "boom"))
        if op_ == "hang":
            _block(3600)
        if op_ == "sleep_forever":
            time.sleep(3600)
        if op_ == "sysexit":
            sys.exit(3)
        if op_ == "garbage":
            return 42
        if op_ == "unserialisable":
            return {"steps": [{"tool": "lookup", "args": {}, "result": object()}], "answer": "x"}
        if op_ == "surrogate":
            return {"steps": [], "answer": "\ud800"}
        if op_ in ("exit_once", "segfault_once"):  # ends the process the first time it runs this case
            mark = os.path.join(os.environ["RELSYS_ONCE"], f"{cid}.crashed")
            if not os.path.exists(mark):
                open(mark, "w").close()
                _misbehave("segfault" if op_ == "segfault_once" else "exit3")
        if op_ in ("sigint_once", "sigterm_once", "sighup_once"):  # the first time, that signal to its process alone
            mark = os.path.join(os.environ["RELSYS_ONCE"], f"{cid}.crashed")  # (a shell tool's kill $PPID)
            if not os.path.exists(mark):
                open(mark, "w").close()
                os.kill(os.getpid(), getattr(signal, op_.split("_")[0].upper()))
                _block(10)  # the process stops meanwhile: its main thread waits for this call
        if op_ == "group_sigint_once":  # the first time, a SIGINT to its process group: the user's Ctrl-C, forged
            mark = os.path.join(os.environ["RELSYS_ONCE"], f"{cid}.crashed")
            if not os.path.exists(mark):
                open(mark, "w").close()
                os.killpg(os.getpgrp(), signal.SIGINT)
                _block(10)
        if op_ == "deep_answer":
            x = 1
            for _ in range(5000):
                x = [x]
            return {"steps": [], "answer": x}
        _misbehave(op_)
        return super().run(input)

    def replay(self, trajectory, *, checkpoint, change):
        cid = trajectory.input["cid"]
        _log("replay", cid, self.instance, "control" if change is None else "fault")
        if change is not None:
            _maybe_kill("replay", cid)
        replay_op = trajectory.input.get("replay_op")
        if replay_op == "raise":
            raise RuntimeError(trajectory.input.get("message", "replay boom"))
        if replay_op == "hang":
            _block(3600)
        if replay_op == "sleep_forever":
            time.sleep(3600)
        if replay_op == "unserialisable" and change is not None:
            return {"steps": [{"tool": "lookup", "args": {}, "result": object()}], "answer": "x"}
        if replay_op in ("keyboard", "base", "sysexit0") and change is not None:
            _misbehave(replay_op)
        return super().replay(trajectory, checkpoint=checkpoint, change=change)


class VersionedDesk(Desk):
    """The same desk with a ``version``: its replays are cached under .oloproof/replays."""

    version = "relsys-1"
'''

#: Evaluators of the reliability suites: every family that judges one case.
EVALUATORS: list[dict[str, Any]] = [
    {"type": "answer_matches"},
    {"type": "state_matches", "mode": "subset"},
    {"type": "state_unchanged", "criterion": "bystander_untouched", "paths": ["accounts.bystander"]},
]
FAULT_EVALUATOR: dict[str, Any] = {"type": "fault_recovery", "tool": "pay", "fault": "error",
                                   "escalate_tools": ["escalate"]}

#: Columns that depend on when or as which run a case ran; everything else must be equal.
TIMING_COLUMNS = ("duration_s", "started_at", "captured_at", "run_id", "observed_at", "run_started_at")
FRAMES = ("cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs", "receipts")


def make_case(cid: str, *, op: str = "ok", answer: str = "done", expected_answer: str | None = None,
              pay: bool = True, **extra: Any) -> dict[str, Any]:
    """A case of the reliability desk (``expected_answer`` defaults to ``answer``)."""
    input_ = {"cid": cid, "op": op, "answer": answer, "pay": pay, "note": "naïve café ☕ 😀", **extra}
    state = {"accounts": {cid: 10, "bystander": 5}}
    expected_state = {"paid": {cid: 10}} if pay else {"accounts": {cid: 10}}
    return {"id": cid, "input": input_, "initial_state": state,
            "expected": {"answer": expected_answer if expected_answer is not None else answer,
                         "state": expected_state},
            "metadata": {"kind": op}}


def standard_cases(n: int = 8) -> list[dict[str, Any]]:
    """``n`` cases: mostly fine, one raising, one with a wrong expected answer, one that never pays."""
    cases = []
    for i in range(n):
        cid = f"c{i}"
        if i == 3:
            cases.append(make_case(cid, op="raise", message="boom at c3: ledger locked"))
        elif i == 5:
            cases.append(make_case(cid, expected_answer="something else"))
        elif i == 6:
            cases.append(make_case(cid, pay=False))
        else:
            cases.append(make_case(cid, escalate=(i % 2 == 0)))
    return cases


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def write_suite(root: Path, cases: list[dict[str, Any]], *, evaluators: list[dict[str, Any]] | None = None,
                system: str = "relsys:Desk", name: str = "reliability", release: dict[str, Any] | None = None,
                **config: Any) -> Path:
    """Write a suite folder (oloproof.yaml, cases.jsonl, relsys.py, optional release.yaml) and return it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "relsys.py").write_text(SYSTEM_SOURCE, encoding="utf-8")
    write_jsonl(root / "cases.jsonl", cases)
    body = {"name": name, "system": system, "cases": "cases.jsonl",
            "evaluators": EVALUATORS if evaluators is None else evaluators, **config}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(body, sort_keys=False, allow_unicode=True), encoding="utf-8")
    if release is not None:
        (root / "release.yaml").write_text(yaml.safe_dump(release, sort_keys=False), encoding="utf-8")
    return root


def read_log(path: Path) -> list[list[Any]]:
    """The side-channel events ``[event, case_id, instance, detail]`` (none when the file is absent)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def runs_of(events: list[list[Any]]) -> list[str]:
    """Case ids in the order their ``run`` started."""
    return [cid for event, cid, _, _ in events if event == "run"]


def interrupt_once_running(log: Path, settle_s: float) -> threading.Thread:
    """A started thread that sends the main thread a SIGINT (a terminal's or a notebook's Ctrl-C, or one reaching a
    worker process: a real signal, which breaks its wait for the call at once) ``settle_s`` after the system logged
    its first ``run`` (the call hangs), so the main thread is waiting for the call by then."""
    main = threading.main_thread().ident
    assert main is not None

    def watch() -> None:
        deadline = time.monotonic() + 30
        while not runs_of(read_log(log)) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(settle_s)
        signal.pthread_kill(main, signal.SIGINT)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for a CLI subprocess: this one, plus ``extra`` (RELSYS_* variables)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELSYS_")}
    env.update(extra)
    return env


def cli_command(*args: str) -> list[str]:
    """``python -m oloproof_nb.cli ARGS`` with this interpreter."""
    return [sys.executable, "-m", "oloproof_nb.cli", *args]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the command line in a subprocess and capture its output."""
    return subprocess.run(cli_command(*args), env=env or cli_env(), capture_output=True, text=True,
                          timeout=timeout, check=False)


def main_in_process(capsys: Any, *args: str) -> subprocess.CompletedProcess[str]:
    """``oloproof ARGS`` called in this process (``cli.main``), its exit code and output as :func:`run_cli` gives
    them, ``capsys`` capturing: for a test of what a command says and its code, where a new process adds a start-up
    and nothing it checks (the process boundary itself is tested in ``tests/cli/``)."""
    from oloproof_nb.cli import main

    capsys.readouterr()  # what the test printed before is not the command's
    try:
        code = main(list(args))
    except SystemExit as stop:  # a usage error, --help or --version: the code the process would exit with
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["oloproof", *args], code, out, err)


def kill_after_records(command: list[str], env: dict[str, str], out: Path, records: int = 3) -> None:
    """Start ``command`` (a run into ``out``), SIGKILL it from outside once ``out``'s cases.jsonl holds ``records``
    lines, and wait for it to end (the test fails when it ends first or records nothing within 60 s)."""
    import time

    import pytest

    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            path = out / "cases.jsonl"
            if path.exists() and path.read_bytes().count(b"\n") >= records:
                break
            if proc.poll() is not None:
                pytest.fail(f"the run ended before it could be killed: {proc.stderr.read()!r}")  # type: ignore[union-attr]
            time.sleep(0.02)
        else:
            pytest.fail("the run recorded nothing within 60 s")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL


def killed_then_resumed(root: Path, out: Path, victim: str) -> Any:
    """The run of the suite in ``root`` into ``out``, made by ``op.run`` in a Python process of its own (a notebook
    kernel) that SIGKILLs itself as it starts case ``victim``, then resumed here (``op.run(resume=True)``): the
    case run in flight ran again, and the manifest's ``abrupt_ends`` keeps the end (how it ended: not seen)."""
    code = f"import oloproof_nb as op; op.run({str(root)!r}, out={str(out)!r}, progress=False)"
    killed = subprocess.run([sys.executable, "-c", code], env=cli_env(RELSYS_KILL=f"run:{victim}"), timeout=120,
                            check=False)
    assert killed.returncode == -signal.SIGKILL
    import oloproof_nb as op

    return op.run(root, out=out, resume=True, progress=False)


def comparable_frames(run: Any) -> dict[str, pd.DataFrame]:
    """Every frame of a run with the timing and run-id columns dropped (what must equal another run's)."""
    out = {}
    for name in FRAMES:
        df = getattr(run, name)
        out[name] = df.drop(columns=[c for c in TIMING_COLUMNS if c in df.columns]).reset_index(drop=True)
    return out


def assert_same_frames(left: Any, right: Any) -> None:
    """pandas.testing.assert_frame_equal on every frame, timing columns dropped."""
    a, b = comparable_frames(left), comparable_frames(right)
    for name in FRAMES:
        try:
            pd.testing.assert_frame_equal(a[name], b[name])
        except AssertionError as exc:
            raise AssertionError(f"frame {name!r} differs: {exc}") from None


def tree_snapshot(root: Path, skip: tuple[str, ...] = ("runs", ".oloproof")) -> dict[str, str]:
    """``{relative path: sha256 or '<dir>'}`` of every entry under ``root`` outside the ``skip`` folders."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d not in skip]
        for d in dirnames:
            out[str(rel_dir / d)] = "<dir>"
        for f in filenames:
            path = Path(dirpath) / f
            out[str(rel_dir / f)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def one_error_line(stderr: str) -> str:
    """The single ``oloproof: error: …`` line of ``stderr`` (asserts there is exactly one line, no traceback)."""
    lines = stderr.splitlines()
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}: {stderr[:2000]!r}"
    assert lines[0].startswith("oloproof: error: "), lines[0]
    return lines[0]


#: A minimal stateful system for hostile-input tests: the state it is reset to is the state it reports,
#: and its answer is ``input["answer"]`` (when the input has one).
ECHO_SOURCE = '''
class Echo:
    version = "echo-1"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state

    def run(self, input):
        return {"steps": [{"tool": "look", "args": {"keys": sorted(map(str, input))}, "result": {"ok": True}}],
                "answer": input.get("answer"), "status": "completed"}

    def snapshot(self):
        return self.state
'''
