"""The one sandbox routine: reset → act → snapshot, shared by every case and every replay.

A case and a replay reach the user's system the same way: the sandbox is reset
to a fresh copy of the case's ``initial_state`` (when the system has
``reset``), the system acts (``run`` for a case, ``replay`` for a replay), and
the state it left is taken with ``snapshot()`` (when it has one), all under the
run's per-call timeout. What the system returned is then checked and turned
into what is stored: a trajectory as JSON and an ``environment_state/v1``
record, both through the one conversion of system values
(:func:`~oloproof_nb._core.jsonsafe.to_json`); evaluators see only these JSON
copies. A value with no exact JSON form makes the case ``error`` with a reason
naming where it is and how to fix it. Nothing else in the package calls
``reset``, ``run``, ``replay`` or ``snapshot``.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import threading
import time
import typing
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .._core.canonical import canonical_json, iso, parse_json, utc_now
from .._core.case import Case
from .._core.jsonsafe import NotJSONError, copy_json, to_json
from .._core.paths import MAX_DEPTH, format_path
from .._core.records import ENV_SCHEMA, EnvironmentState, TrajectoryDict, step_raised, step_timed_out
from .._core.trajectory import Change, Message, ToolCall, Trajectory
from ..errors import clip, describe_exception, format_loc, quote, storable, validation_problem
from .timeouts import CaseTimeout, SystemRaised, call_with_timeout, system_traceback

__all__ = ["SandboxResult", "SystemContractError", "Idle", "run_case", "replay_case", "failure_reason",
           "environment_state", "stored_trajectory", "trajectory_from_stored", "takes_epoch",
           "epoch_given"]


class SystemContractError(Exception):
    """The system broke its contract (returned the wrong thing); the message says how."""


#: Attribute :func:`_in_sandbox` sets on an exception the system raised: which of its methods raised it.
_STEP = "__oloproof_step__"


def failure_reason(exc: BaseException) -> str:
    """``timeout: …`` for a timeout, ``ExceptionName: message`` otherwise (one line, even when ``str`` raises),
    led by the system's method that raised it when the sandbox routine noted one (``reset() raised
    ConnectionRefusedError: …``: a service the sandbox needs is down, not the agent's doing)."""
    if isinstance(exc, (CaseTimeout, SystemContractError)):  # their messages say what happened
        # a path naming a key UTF-8 cannot store (a set under 'caf\udce9.txt') is quoted by its escape: the record
        # quoting it could not be written, and the run stopped with an internal error
        return storable(str(exc))
    step = _noted_step(exc)
    lead = "" if step is None else step_raised(step)
    if isinstance(exc, SystemRaised):  # an exception of the system's that refused to be marked in place
        return lead + describe_exception(exc.error)
    return lead + describe_exception(exc)


def _note_step(exc: BaseException, step: str | None) -> None:
    """Note on ``exc`` (the system's, marked) which of its methods raised it (None: ``run()`` or ``replay()``),
    beside the mark of this raise (:func:`~.timeouts.system_traceback`); an exception that refuses it stays as it
    is (its reason then names the exception alone).

    Noted even when None, and read only beside the same mark (:func:`_noted_step`): one exception object the
    system raises again (a stored ``ConnectionError`` raised by ``reset()`` in one case and by ``run()`` in the
    next, or by a factory) kept the note of its first raise, and the agent's error read ``reset() raised …``."""
    try:
        setattr(exc, _STEP, (step, system_traceback(exc)))
    except BaseException:  # noqa: BLE001 - a class that refuses attributes: its reason names no step
        pass


def _noted_step(exc: BaseException) -> str | None:
    """The method :func:`_note_step` noted on ``exc`` for the raise that marked it last, else None. Read from the
    exception's own ``__dict__``: a class whose ``__getattr__`` answers any name (a payload's ``KeyError``) is
    never asked, as the reason of every case run it raised in is made from it (asked, it stopped the run)."""
    try:
        noted = vars(exc).get(_STEP)
    except BaseException:  # noqa: BLE001 - an object without a readable __dict__ was never noted
        return None
    if not (isinstance(noted, tuple) and len(noted) == 2 and isinstance(noted[0], str)):
        return None
    mark = system_traceback(exc)
    return noted[0] if mark is not None and noted[1] is mark else None


def to_trajectory(value: Any, what: str) -> Trajectory:
    """Accept a :class:`Trajectory` or a plain dict with the same fields (``what`` names the call in errors)."""
    if isinstance(value, Trajectory):
        return value
    if isinstance(value, dict):
        try:
            return Trajectory.model_validate(value)
        except ValidationError as exc:
            raise SystemContractError(f"{what} returned an invalid trajectory: {_trajectory_problem(exc)}") from None
    raise SystemContractError(f"{what} returned {type(value).__name__}; expected a Trajectory or a dict")


#: A step's branch as pydantic names it in an error's location, and what the message calls it.
_STEP_BRANCHES: dict[str, tuple[type[BaseModel], str]] = {
    "tool_call": (ToolCall, "a tool call step"),
    "message": (Message, "a message step (one without a 'tool' key)"),
}


def _trajectory_problem(exc: ValidationError) -> str:
    """The first problem of a trajectory dict, as ``key: message``; an unknown key lists the keys allowed there.

    pydantic names a step's branch in the location (``steps[0].tool_call.type``), a key nobody wrote: it is
    taken out, and the branch named in the message instead, with its keys (a step ``{"type": "tool_call", ...}``,
    another framework's spelling, read ``steps[0].tool_call.type: unknown key`` and no more); a ``kind`` that
    is neither branch names the kinds there are, not pydantic's discriminator function.
    """
    key, message, err = validation_problem(exc)
    loc = tuple(err["loc"])
    step = len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int)
    if step and err["type"] == "union_tag_invalid":
        tag = (err.get("ctx") or {}).get("tag")
        kinds = ", ".join(_STEP_BRANCHES)
        return f"{format_loc((*loc[:2], 'kind'))}: {quote(tag)} is not a step kind; allowed: {kinds}"
    branch = _STEP_BRANCHES.get(str(loc[2])) if step and len(loc) >= 3 else None
    if branch is not None:
        model, what = branch
        key = format_loc((*loc[:2], *loc[3:]))
        if err["type"] == "extra_forbidden":
            return f"{key}: unknown key; {what} allows: {', '.join(model.model_fields)}"
        return f"{key}: {message}"
    if err["type"] == "extra_forbidden" and len(loc) == 1:
        allowed = [name for name in Trajectory.model_fields if name != "input"]  # input: the runner sets it
        return f"{key}: unknown key; allowed: {', '.join(allowed)}"
    return f"{key}: {message}"


class _Invalid(ValueError):
    """A trajectory field pydantic would refuse, found in one it did not validate (:func:`_trajectory_json`)."""


#: The statuses a trajectory may end with (:class:`Trajectory`'s ``status``).
_STATUSES: tuple[str, ...] = typing.get_args(Trajectory.model_fields["status"].annotation)


def _text(value: Any, loc: tuple[str | int, ...]) -> str:
    """A name field of a trajectory as it is stored: text (a ``str`` subclass, or an ``Enum`` whose value is text,
    as its plain text, as :func:`to_json` stores any value); :class:`_Invalid` otherwise, in the words a
    trajectory given as a dict gets (:func:`to_trajectory`).

    pydantic checks these fields when a trajectory is validated, not in one made with ``model_construct`` (as a
    :class:`~oloproof_nb.Recorder` makes its steps) or changed after it was made: ``rec.tool(7, fn)`` stored a tool
    named ``7``, which a frame read as the number from the journal and as the text ``"7"`` from its columnar copy.
    """
    text = value if type(value) is str else to_json(value, what=format_loc(loc))
    if type(text) is not str:
        raise _Invalid(f"{format_loc(loc)}: Input should be a valid string (got {quote(value)})")
    return text


def _whole(step: Any) -> bool:
    """Whether ``step`` is a :class:`ToolCall` or :class:`Message` as pydantic builds one: a tool call has its
    ``tool`` and its ``args`` are an object, a message's ``args`` are one or None. ``model_construct`` checks
    neither: ``ToolCall.model_construct(args={})`` has no ``tool`` (read, an ``AttributeError`` that the case's
    error gave as the agent's own), and ``args=[1, 2]`` was stored as a list."""
    if isinstance(step, ToolCall):
        fields = vars(step)
        return "tool" in fields and isinstance(fields.get("args"), dict)
    if isinstance(step, Message):
        args = vars(step).get("args")
        return args is None or isinstance(args, dict)
    return False


def _fields(step: Any) -> Any:
    """A step as :func:`_steps_of` validates it: a :class:`ToolCall` or :class:`Message` (or an instance of a
    subclass) as a dict of the fields it holds of its class (a subclass's own fields are not stored: alone, the step
    was stored without them, and beside a dict step refused for them); anything else as it is."""
    for model, kind in ((ToolCall, "tool_call"), (Message, "message")):
        if isinstance(step, model):
            return {**{name: value for name, value in vars(step).items() if name in model.model_fields}, "kind": kind}
    return step


def _steps_of(steps: Any) -> list[ToolCall | Message]:
    """The steps of a trajectory pydantic did not validate, one of which is not :func:`_whole` (a dict, as
    ``Trajectory(steps=[{...}])`` takes it, kept as it is by ``model_construct``; a step made with
    ``model_construct`` without its ``tool``, or with ``args`` that are no object), validated as the steps of a
    trajectory given as a dict are (:func:`to_trajectory`); :class:`_Invalid` in the words that gets. Read as a
    message, a dict step raised ``AttributeError``, which the case's error gave as the agent's own."""
    given = [_fields(step) for step in steps]
    try:
        return list(Trajectory.model_validate({"steps": given}).steps)
    except ValidationError as exc:
        raise _Invalid(_trajectory_problem(exc)) from None


def _trajectory_json(trajectory: Trajectory) -> TrajectoryDict:
    """The trajectory as JSON, every value through :func:`to_json` (same keys and order as ``model_dump``); a tool's
    name, a message's role and name are text (:func:`_text`) and the status one of :data:`_STATUSES`, whether or not
    pydantic validated the trajectory."""
    steps: list[dict[str, Any]] = []
    given = list(trajectory.steps)  # read once: steps given as an iterator (model_construct takes one)
    if not all(_whole(step) for step in given):
        given = _steps_of(given)
    for i, step in enumerate(given):
        if isinstance(step, ToolCall):
            steps.append({"kind": "tool_call", "tool": _text(step.tool, ("steps", i, "tool")),
                          "args": to_json(step.args, what=f"step {i}'s arguments"),
                          "result": to_json(step.result, what=f"step {i}'s result")})
        else:
            steps.append({"kind": "message", "role": _text(step.role, ("steps", i, "role")),
                          "content": to_json(step.content, what=f"step {i}'s content"),
                          "name": None if step.name is None else _text(step.name, ("steps", i, "name")),
                          "args": None if step.args is None else to_json(step.args, what=f"step {i}'s arguments")})
    # a str enum member or a str subclass equal to one is stored as that plain text, as pydantic reads it in a dict
    status = next((s for s in _STATUSES if isinstance(trajectory.status, str) and trajectory.status == s), None)
    if status is None:
        allowed = ", ".join(repr(s) for s in _STATUSES[:-1]) + f" or {_STATUSES[-1]!r}"
        raise _Invalid(f"status: Input should be {allowed} (got {quote(trajectory.status)})")
    return {"steps": steps, "answer": to_json(trajectory.answer, what="the answer"), "status": status,
            "input": None if trajectory.input is None else to_json(trajectory.input, what="the input")}


def _not_utf8(value: Any, what: str) -> str | None:
    """Where the first text of a JSON ``value`` (a key or a string) that UTF-8 cannot hold sits, in words naming
    ``what`` it is, its path and the fix; None when there is none.

    Such text holds a lone surrogate: a name read from bytes that are not UTF-8 (``os.listdir`` of a file named
    in Latin-1 gives ``'caf\\udce9.txt'``). Refused only when the JSON text is encoded, it was named by its offset
    in that text (``can't encode character '\\udce9' in position 40``), not where it sits in the state."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        node, keys = stack.pop()
        if type(node) is dict:
            items = list(node.items())
            for key, item in reversed(items):  # the first key is looked at first
                stack.append((item, (*keys, key)))
            texts = [(key, (*keys, key)) for key, _ in items]
        elif type(node) is list:
            stack.extend((item, (*keys, str(i))) for i, item in reversed(list(enumerate(node))))
            continue
        else:
            texts = [(node, keys)] if type(node) is str else []
        for text, at in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                where = f"at {clip(storable(format_path(at)), 120)}" if at else "itself"  # as NotJSONError's path
                return (f"{what} holds text with a lone surrogate {quote(exc.object[exc.start:exc.end])} {where}, "
                        "which UTF-8 cannot store (text decoded from bytes that are not UTF-8): decode the bytes "
                        "with their own encoding, or keep the escape (text.encode('utf-8', "
                        "'backslashreplace').decode())")
    return None


#: ``json.dumps(value, ensure_ascii=False)``, made when this module is imported (a system's replacement of
#: ``json.dumps`` is its own: :data:`~oloproof_nb._run.store.dumps`).
_TEXT = json.JSONEncoder(ensure_ascii=False)


def stored_trajectory(trajectory: Trajectory, what: str) -> TrajectoryDict:
    """The trajectory as it is stored (JSON); :class:`SystemContractError` when it cannot be stored.

    Tool arguments and results, messages and the answer go through
    :func:`~oloproof_nb._core.jsonsafe.to_json` (pydantic models, dataclasses,
    datetimes and Decimals are converted; bytes, sets and other objects are
    refused, naming where they are; each value nests at most ``MAX_DEPTH``
    levels); strings must be encodable as UTF-8.
    """
    try:
        data = _trajectory_json(trajectory)
        written = _TEXT.encode(data)  # what the store will write
    except _Invalid as exc:
        raise SystemContractError(f"{what} returned an invalid trajectory: {exc}") from None
    except (ValueError, TypeError, RecursionError) as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SystemContractError(f"{what} returned a trajectory that cannot be stored as JSON: {text}") from None
    try:
        written.encode("utf-8")  # it can be written
    except UnicodeEncodeError as exc:
        problem = _not_utf8(data, "it") or str(exc)
        raise SystemContractError(f"{what} returned a trajectory that cannot be stored as JSON: {problem}") from None
    return data


def trajectory_from_stored(data: TrajectoryDict) -> Trajectory:
    """The :class:`Trajectory` of a stored (already checked) JSON trajectory, without validating it again."""
    steps = [ToolCall.model_construct(**step) if step["kind"] == "tool_call" else Message.model_construct(**step)
             for step in data["steps"]]
    return Trajectory.model_construct(steps=steps, answer=data["answer"], status=data["status"],  # type: ignore[arg-type]
                                      input=data["input"])


def environment_state(state: Any, *, run_id: str, case: Case, system_version: str | None) -> EnvironmentState:
    """The ``environment_state/v1`` record of a snapshot.

    The state is converted with :func:`to_json` (a dataclass or pydantic model at the top is an object of its
    fields, as anywhere inside; what converts to anything but an object is refused), then stored as its
    canonical JSON reads back (keys in sorted order), so two snapshots of the same world are stored alike
    whatever order the system built it in.
    """
    copied: Any = None
    try:
        copied = to_json(state, what="the state")  # a dataclass or pydantic model becomes an object of its fields
        text = canonical_json(copied)
        data = text.encode("utf-8")
    except NotJSONError as exc:
        if exc.too_deep:
            raise SystemContractError(f"snapshot() returned a state nested deeper than {MAX_DEPTH} levels") from None
        raise SystemContractError(f"snapshot() returned a state that is not JSON: {exc}") from None
    except UnicodeEncodeError as exc:
        problem = _not_utf8(copied, "the state") or str(exc)
        raise SystemContractError(f"snapshot() returned a state that is not JSON: {problem}") from None
    except (TypeError, ValueError) as exc:
        raise SystemContractError(f"snapshot() returned a state that is not JSON: {exc}") from None
    if not isinstance(copied, dict):  # every path starts with a key
        raise SystemContractError(f"snapshot() returned {type(state).__name__}; expected a dict (or a dataclass or "
                                  "pydantic model, stored as an object of its fields) whose keys name the world's "
                                  "parts, e.g. {'accounts': ..., 'transfers': ...}")
    env: EnvironmentState = {
        "schema": ENV_SCHEMA,
        "run_id": run_id,
        "case_id": case.id,
        "case_digest": case.digest,
        "system_version": system_version,
        "captured_at": iso(utc_now()),
        "state": parse_json(text),
        "state_digest": hashlib.sha256(data).hexdigest(),
    }
    if case.epoch != 1:
        env["epoch"] = case.epoch
    return env


@dataclass
class SandboxResult:
    """What one pass through the sandbox produced: the trajectory (with the case's input), as stored, and its state."""

    trajectory: Trajectory
    stored: TrajectoryDict
    env: EnvironmentState | None
    #: What ``after_reset`` returned, called right after the sandbox was reset (None without one).
    after_reset: Any = None

    @property
    def state(self) -> dict[str, Any] | None:
        return None if self.env is None else self.env["state"]


def _not_awaitable(value: Any, what: str) -> Any:
    """``value``, unless the method that returned it is ``async def``: :class:`SystemContractError` then.

    The runner calls the system's methods as plain functions and never awaits what they return: an ``async def
    reset`` was never run (every case judged on the world the one before left, with no error), and an ``async def
    run`` gave a coroutine, refused only as "not a trajectory". The coroutine is closed unstarted, so Python does
    not warn later that it was never awaited, pointing at oloproof's line instead of the system's. A
    :class:`Trajectory` or a dict is what the contract asks for and is taken as it is, even one that can also be
    awaited (a result type made for both sync and async callers, which ``await`` in async code only).
    """
    if not inspect.isawaitable(value) or isinstance(value, (Trajectory, dict)):
        return value
    close = getattr(value, "close", None)
    if callable(close):
        close()
    raise SystemContractError(
        f"{what} returned a {type(value).__name__} (an async def method?): the runner calls reset, run, replay and "
        "snapshot as plain functions and never awaits what they return; make it a plain def that runs the coroutine, "
        "e.g. def run(self, input): return asyncio.run(self.arun(input)) (called on a thread of its own, where "
        "asyncio.run works, in Jupyter too)")


#: The systems with ``snapshot()`` but no ``reset()`` that have been through the sandbox once (by weak reference):
#: nothing sets their world back, so a second pass would start from the world the first left (:func:`_in_sandbox`).
_UNRESET: list[weakref.ref[Any]] = []
_UNRESET_LOCK = threading.Lock()


class Idle:
    """A system that takes no step of its own on the sandbox it wraps (the baseline's no-op,
    :class:`~.baseline.NoOpSystem`): a pass of it leaves that world as it found it."""

    def __init__(self, sandbox: Any) -> None:
        self._sandbox = sandbox


def _drifted(system: Any) -> bool:
    """Whether ``system`` (one with ``snapshot()`` but no ``reset()``) has been through the sandbox before; notes it
    as having been. Told by identity, never ``==`` or a hash (two equal dataclass instances are two worlds; an
    unhashable one is still noted). An instance that takes no weak reference is never noted (runs as it did).

    An :class:`Idle` system is told by the sandbox it wraps, and notes nothing: its passes leave the world as the
    constructor built it (the second case of a baseline on each no-op instance was an ``error``, the next one on a
    fresh instance: a rate of 0.5 for an idle agent that passes 4 of 4), while a sandbox a case of the agent ran
    on before has drifted for it too."""
    idle = isinstance(system, Idle)
    world = system._sandbox if idle else system
    with _UNRESET_LOCK:
        _UNRESET[:] = [ref for ref in _UNRESET if ref() is not None]
        if any(ref() is world for ref in _UNRESET):
            return True
        if not idle:
            try:
                _UNRESET.append(weakref.ref(world))
            except TypeError:  # no weak references to it
                pass
    return False


def _in_sandbox(system: Any, case: Case, act: Callable[[], Any], what: str, *, run_id: str,
                system_version: str | None, timeout_s: float | None,
                after_reset: Callable[[], Any] | None = None) -> SandboxResult:
    """The one sandbox routine: reset to a copy of ``case.initial_state``, ``act()``, snapshot, in one timed call.

    ``reset`` runs when the system has one, ``snapshot`` when it has one (a system with ``snapshot`` but no
    ``reset`` is an error of its case when the case has an ``initial_state``); ``after_reset`` runs between the
    reset and ``act``. What the system returned is turned into JSON copies inside the same call, under
    ``timeout_s`` (reading it runs the system's code). ``what`` names the call in errors (``"run()"``).

    Returns
    -------
    SandboxResult
        The trajectory rebuilt from its stored JSON (with the case's input), that JSON, the
        ``environment_state/v1`` record (None without ``snapshot``) and what ``after_reset`` returned.

    Raises
    ------
    CaseTimeout
        The call exceeded ``timeout_s`` (its message names ``reset()`` or ``snapshot()`` when that is the method
        that overran: ``timeout: reset() exceeded case_timeout_s=5``).
    SystemContractError
        The system returned something that is not a trajectory, or a state that is not JSON.
    BaseException
        Whatever the system raised, marked as the system's (:func:`~.timeouts.system_traceback`).
    """
    stateful = callable(getattr(system, "snapshot", None))
    resettable = callable(getattr(system, "reset", None))  # a sandbox that can only be reset is still reset
    initial = copy_json(case.initial_state) if resettable else None  # harness work stays outside the call
    # a world nothing resets: only its first pass starts where the instance was built (a second one counted the
    # first case's writes as its own: a till that paid once per case passed the first case and failed the rest)
    drifted = stateful and not resettable and not case.initial_state and _drifted(system)
    seen: list[Any] = [None]
    #: The system's method running when it is not the one that acts (``reset()``, ``snapshot()``; None otherwise),
    #: named in the reason of what it raises (:func:`_note_step`): what ``run()`` or ``replay()`` raised is read
    #: as the agent's, as before, while a reset that raised means no agent ran (a service the sandbox needs down).
    #: Each with the time it began (``time.monotonic``): a timeout names the step running at the deadline, which
    #: the abandoned call may have left by the time the timeout is handled.
    steps: list[tuple[str | None, float]] = [(None, 0.0)]

    def step(name: str | None) -> None:
        steps.append((name, time.monotonic()))

    def calls() -> tuple[TrajectoryDict, EnvironmentState | None]:
        if stateful and not resettable and case.initial_state:  # the system's shape: an error of its case
            raise SystemContractError(
                "the system has snapshot() but no reset(): the case's initial_state would never be set, and its state "
                "would be judged against a world it did not start from; add reset(state), which the runner calls "
                "before each case with a copy of initial_state")
        if drifted:
            # oloproof's refusal, not an exception of the system's: its reason names no TypeError (a replay's read
            # "replay_raised: TypeError: …", as if replay() had raised one)
            raise SystemContractError(
                "the system has snapshot() but no reset(): this instance already ran a case (or a replay), and nothing "
                "set its world back, so this one would start from the world that one left and its state would be "
                "judged against it; add reset(state), which the runner calls before each case with a copy of "
                "initial_state ({} for a case without one)")
        if resettable:
            step("reset()")
            _not_awaitable(system.reset(initial), "reset()")
            step(None)
        if after_reset is not None:
            seen[0] = after_reset()
        out = _not_awaitable(act(), what)
        step("snapshot()" if stateful else None)
        state = _not_awaitable(system.snapshot(), "snapshot()") if stateful else None
        # turned into JSON copies here, under the timeout and as the system's own doing: reading what it returned
        # runs its code (a Mapping that fetches rows, a model's serializer, a dict its thread still changes)
        step(None)
        trajectory = to_trajectory(out, what).model_copy(update={"input": case.input})
        stored = stored_trajectory(trajectory, what)
        step("snapshot()" if stateful else None)
        env = environment_state(state, run_id=run_id, case=case, system_version=system_version) if stateful else None
        return stored, env

    started = time.monotonic()
    try:
        stored, env = call_with_timeout(calls, timeout_s)
    except CaseTimeout as exc:
        # the step running when the time was up: the abandoned call goes on, and may have moved to the next step
        # by now (a reset() a few ms past the deadline was named run()'s in 5 of 40 tries on a busy machine)
        deadline = started + exc.seconds
        hung = next((name for name, at in reversed(list(steps)) if at <= deadline), None)
        if hung is None:  # run() or replay(): the agent's, as before
            raise
        # a reset() that hangs (a database that does not answer) is not the agent's doing, as a reset() that raised
        raise CaseTimeout(exc.seconds, f"{step_timed_out(hung)}exceeded case_timeout_s={exc.seconds:g}") from None
    except BaseException as exc:
        if system_traceback(exc) is not None:  # the system's (not a Ctrl-C while waiting): say which call raised
            _note_step(exc, steps[-1][0])
        raise
    # evaluators judge the JSON copies, never the system's live objects
    return SandboxResult(trajectory_from_stored(stored), stored, env, seen[0])


def run_case(system: Any, case: Case, *, run_id: str, system_version: str | None,
             timeout_s: float | None, after_reset: Callable[[], Any] | None = None) -> SandboxResult:
    """Reset, ``system.run(input)``, snapshot: one case (exceptions from the system propagate).

    A system whose ``run`` declares a parameter named ``epoch`` is called ``run(input, epoch=e)`` (the
    case's epoch, 1-based), so a stochastic system can seed itself per (case, epoch). ``after_reset`` is
    called between the reset and the run (what it returns is the result's ``after_reset``).
    """
    given = copy_json(case.input)
    extra = _epoch_keyword(system, "run", case)
    return _in_sandbox(system, case, lambda: system.run(given, **extra), "run()", run_id=run_id,
                       system_version=system_version, timeout_s=timeout_s, after_reset=after_reset)


def _epoch_keyword(system: Any, method: str, case: Case) -> dict[str, int]:
    """``{"epoch": e}`` when ``system.<method>`` declares ``epoch`` (see :func:`takes_epoch`), else nothing."""
    return {"epoch": case.epoch} if takes_epoch(system, method) else {}


def epoch_given(system: Any) -> list[str] | None:
    """The methods of ``system`` (``run``, ``replay``) the runner gives the case's epoch (:func:`takes_epoch`), as
    the manifest records them (``epoch_given``); None for none."""
    return [method for method in ("run", "replay") if takes_epoch(system, method)] or None


def takes_epoch(system: Any, method: str = "run") -> bool:
    """Whether ``system.<method>`` (``run`` or ``replay``) declares a parameter named ``epoch`` (then the
    runner passes the case's epoch)."""
    bound = getattr(system, method, None)
    if bound is None:
        return False
    func = getattr(bound, "__func__", bound)  # a bound method: its function (one signature per class, not per call)
    try:
        return _declares_epoch(func)
    except TypeError:  # unhashable: inspect it every time
        return _declares_epoch.__wrapped__(func)


@functools.lru_cache(maxsize=256)
def _declares_epoch(func: Any) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin or an object without a signature: called with the input only
        return False
    param = params.get("epoch")
    return param is not None and param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                 inspect.Parameter.KEYWORD_ONLY)


def replay_case(system: Any, case: Case, recorded: Trajectory, checkpoint: int, change: Change | None, *,
                run_id: str, system_version: str | None, timeout_s: float | None) -> SandboxResult:
    """Reset, ``system.replay(recorded, checkpoint=…, change=…)``, snapshot: one replay.

    A ``replay`` that declares a parameter named ``epoch`` gets the case's epoch too, as ``run`` does: a
    system that seeds itself per epoch must seed its replays of that epoch the same way, or its control
    replay cannot reproduce the recording.
    """
    given = recorded.model_copy(deep=True)
    extra = _epoch_keyword(system, "replay", case)
    return _in_sandbox(system, case, lambda: system.replay(given, checkpoint=checkpoint, change=change, **extra),
                       "replay()", run_id=run_id, system_version=system_version, timeout_s=timeout_s)
