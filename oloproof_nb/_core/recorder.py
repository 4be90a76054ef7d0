"""The Recorder: record every nondeterministic call of an agent, and replay a recording."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any, Literal

from ..errors import OloproofError
from .jsonsafe import NotJSONError, to_json
from .paths import values_equal
from .trajectory import Change, Message, ToolCall, Trajectory, raised_result, same_raise

__all__ = ["Recorder", "RecordedAgent", "ReplayDiverged", "raised_result"]


class ReplayDiverged(RuntimeError):
    """A replayed call did not match the recording: raised by a :class:`Recorder` replaying.

    A call up to the checkpoint that differs from the recorded one in its kind, name or arguments, or
    that the recording does not have; a tool before the checkpoint (or at it, in the control replay)
    that returns another result than the recorded one (the sandbox was not reset to the recorded
    state); a replay that ends before reaching the checkpoint. The agent is not deterministic given its
    recorded calls: send every nondeterministic call (a clock, a random draw, a model) through
    :meth:`Recorder.tool` or :meth:`Recorder.model`.
    """


#: What a tool call raising passes on unrecorded: the recorder's own refusals and a value with no JSON form
#: (a call inside the tool that could not be recorded), never the tool's outcome.
_OWN_ERRORS = (ReplayDiverged, NotJSONError, OloproofError)


class Recorder:
    """Records every nondeterministic call of an agent, and replays a recording.

    Write the agent so that every tool call goes through :meth:`tool` and every
    model call through :meth:`model`. Recording (``Recorder()``), each call
    runs and is recorded. Replaying (:meth:`replaying`), calls before the
    checkpoint must be the recorded calls: tools re-execute against the sandbox
    and must return their recorded results, model calls return their recorded
    output without running; the call at the checkpoint returns
    ``change.result`` instead of its own result — without running, or, when
    ``change.effect`` is ``applied``, after running (its side effects happen,
    its result is dropped); later calls run live. Any mismatch raises
    :class:`ReplayDiverged`.

    **What is recorded is a JSON copy made at call time.** Arguments, results,
    model outputs, messages and the answer are converted with the one
    conversion every stored value gets (:func:`~oloproof_nb._core.jsonsafe.to_json`:
    pydantic models through ``model_dump(mode="json")``, dataclasses as
    objects, datetimes as ISO text, Decimals as their exact text), so a tool
    that returns a live object which a later call mutates cannot rewrite the
    recording. The agent itself still gets the tool's own return value. A value
    with no exact JSON form (bytes, a set, an arbitrary object) raises
    :class:`~oloproof_nb._core.jsonsafe.NotJSONError` naming the call, the path
    inside the value and the fix, and the case ends with status ``error``.
    Replayed model outputs (before the checkpoint) are their recorded JSON form.

    **A tool that raises is recorded, and its exception raised again.** The step's result is
    :func:`raised_result` (``{"ok": false, "error": "Refused: order o1 is delivered", "raised": "Refused"}``), so
    the call is counted, is a failed step under the default ``tool_errors`` rule and can be faulted like any
    other; the agent gets the exception itself, as it would without the recorder. Replaying, the call must
    raise an exception of the same class again (its text is not compared). A call at the checkpoint runs only
    with ``effect: applied``, and then what it raises is dropped with its result. The recorder's own errors
    (:class:`ReplayDiverged`, :class:`~oloproof_nb._core.jsonsafe.NotJSONError`, an ``OloproofError``) and a
    ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``) pass through
    unrecorded; the recorder's own errors are raised again by :meth:`trajectory`, so an agent that catches
    every exception cannot end the case with a call its steps do not show.

    **A call inside another cannot be replayed.** A call made through the
    recorder while another runs on the same thread (``rec.model`` inside a tool
    that ``rec.tool`` runs, to record the tool's random draw) is recorded
    before the call it belongs to, so a replay can never match the recording
    there. Recording, it is kept as before (the case's own checks need no
    replay); replaying, such a call at or before the checkpoint raises
    :class:`ReplayDiverged` naming both calls and the fix: make the inner call
    first and pass its result to the tool. A call the tool makes on a thread
    it starts and waits for (a thread pool's worker) is named the same way
    when the tool returns, as the call recorded where the tool's step should
    be. Calls an agent makes at the same time from threads of its own are not
    inside each other and are not refused; they replay only when they are
    recorded in the same order again.

    Attributes
    ----------
    steps : list of ToolCall or Message
        The calls made so far, as recorded (JSON copies).
    status : {"completed", "failed", "waiting"}
        The status :meth:`trajectory` gives (default ``"completed"``).
    is_replaying : bool
        Whether this recorder replays a recording (made by :meth:`replaying`).

    Examples
    --------
    >>> rec = Recorder()
    >>> rec.tool("add", lambda a, b: a + b, a=1, b=2)
    3
    >>> traj = rec.trajectory("3")
    >>> again = Recorder.replaying(traj, checkpoint=0, change=Change(result=5))
    >>> again.tool("add", lambda a, b: a + b, a=1, b=2)
    5
    """

    def __init__(self) -> None:
        self.steps: list[ToolCall | Message] = []
        self.status: Literal["completed", "failed", "waiting"] = "completed"
        self._recording: list[ToolCall | Message] | None = None
        self._checkpoint: int | None = None
        self._change: Change | None = None
        self._running: dict[int, str] = {}   # thread id -> the call running on it
        self._refused: str | None = None
        self._failed: Exception | None = None  # the first of the recorder's own errors a call raised

    @classmethod
    def replaying(cls, trajectory: Trajectory, *, checkpoint: int, change: Change | None) -> Recorder:
        """A recorder that replays ``trajectory`` from ``checkpoint`` (``change=None``: the control)."""
        rec = cls()
        rec._recording = list(trajectory.steps)
        rec._checkpoint = checkpoint
        rec._change = change
        return rec

    @property
    def is_replaying(self) -> bool:
        return self._recording is not None

    def _recorded(self, idx: int, kind: type, name: str, args: dict[str, Any]) -> ToolCall | Message:
        assert self._recording is not None
        if idx >= len(self._recording):
            raise ReplayDiverged(f"step {idx}: the replay made a call the recording does not have ({name})")
        step = self._recording[idx]
        same_name = (isinstance(step, ToolCall) and step.tool == name) or (
            isinstance(step, Message) and step.name == name
        )
        if not isinstance(step, kind) or not same_name or not values_equal(step.args or {}, args):
            raise ReplayDiverged(f"step {idx}: the replay called {name}({args}) where the recording has {step}")
        return step

    def _not_inside(self, what: str, mode: str) -> None:
        """Refuse, replaying up to the checkpoint, a call made while another runs on this thread (class notes)."""
        outer = self._running.get(threading.get_ident())
        if outer is not None and mode != "live":
            self._refuse(what, outer)

    def _refuse(self, inner: str, outer: str, where: str = "") -> None:
        """Raise :class:`ReplayDiverged` for call ``inner`` made inside ``outer``; later calls raise it too."""
        self._refused = (f"{inner} was called while {outer} was running{where}: a call inside another is recorded "
                         f"before the call it belongs to, so no replay can match the recording up to its "
                         f"checkpoint; make it before {outer} and pass its result in")
        raise ReplayDiverged(self._refused)

    def _recorded_tool(self, idx: int, name: str, args: dict[str, Any]) -> ToolCall | Message:
        """The recorded step ``idx`` for tool ``name`` that ran replaying; when it differs and calls were recorded
        while the tool ran (on a thread it started: :meth:`_not_inside` sees only its own), those calls are named."""
        try:
            return self._recorded(idx, ToolCall, name, args)
        except ReplayDiverged:
            if len(self.steps) > idx:  # steps idx.. were recorded while this tool ran: its own step comes after them
                self._refuse(_call_name(self.steps[idx]), f"tool {name}", " (on another thread)")
            raise

    def _call(self, what: str, fn: Callable[..., Any], args: dict[str, Any]) -> Any:
        """``fn(**args)``, noting that ``what`` runs on this thread while it does.

        A refusal of a call inside it (:meth:`_not_inside`) is raised again when ``fn`` returns, so a tool
        that catches every exception (and returns it as an error text) cannot hide it.
        """
        thread = threading.get_ident()
        outer = self._running.get(thread)  # a call this one runs inside of, recording (kept as before)
        self._running[thread] = what
        try:
            out = fn(**args)
        finally:
            if outer is None:
                del self._running[thread]
            else:
                self._running[thread] = outer
        if self._refused is not None:
            raise ReplayDiverged(self._refused)
        return out

    def _outcome(self, what: str, fn: Callable[..., Any], args: dict[str, Any]) -> tuple[Any, Exception | None]:
        """``(result, None)`` of :meth:`_call`, or ``(None, exc)`` when ``fn`` raised ``exc`` (not one of the
        recorder's own errors, nor after a call inside it was refused: those are raised)."""
        try:
            return self._call(what, fn, args), None
        except _OWN_ERRORS:
            raise
        except Exception as exc:
            if self._refused is not None:  # a refusal inside, which the tool turned into an exception of its own
                raise ReplayDiverged(self._refused) from exc
            return None, exc

    def _mode(self, idx: int) -> str:
        if self._recording is None or self._checkpoint is None:
            return "live"
        if idx < self._checkpoint:
            return "before"
        if idx == self._checkpoint:
            return "change" if self._change is not None else "live-checked"
        return "live"

    def _failing(self, exc: Exception) -> None:
        """Note ``exc``, one of the recorder's own errors leaving a call, for :meth:`trajectory` to raise again."""
        if self._failed is None:
            self._failed = exc

    def tool(self, name: str, fn: Callable[..., Any], /, **args: Any) -> Any:
        """Call tool ``name`` as ``fn(**args)``, record a JSON copy of the call, and return its result.

        The arguments are given by name, as they are recorded: an agent that calls its env's methods by position
        (``env.book_flight("u03", "F118")``) gets a stand-in that names them,
        ``rec.tool(name, fn, **inspect.signature(fn).bind(*args, **kwargs).arguments)`` (README section 1a).
        """
        try:
            return self._tool(name, fn, args)
        except _OWN_ERRORS as exc:
            self._failing(exc)
            raise

    def _tool(self, name: str, fn: Callable[..., Any], args: dict[str, Any]) -> Any:
        idx = len(self.steps)
        mode = self._mode(idx)
        self._not_inside(f"tool {name}", mode)
        args_json = to_json(args, what=f"tool {name}'s arguments")
        if mode == "change":
            self._recorded(idx, ToolCall, name, args_json)
            assert self._change is not None
            if self._change.effect == "applied":  # the call took effect; only its result is lost
                self._outcome(f"tool {name}", fn, args)  # what it raised included
            result = copy.deepcopy(self._change.result)
            result_json = to_json(result, what=f"the change at {name}")
            raised = None
        else:
            result, raised = self._outcome(f"tool {name}", fn, args)
            if raised is None:
                result_json = to_json(result, what=f"tool {name}'s result")
            else:
                result_json = raised_result(raised)
            if mode in ("before", "live-checked"):
                recorded = self._recorded_tool(idx, name, args_json).result  # type: ignore[union-attr]
                if raised is None and not values_equal(recorded, result_json):
                    raise ReplayDiverged(f"step {idx}: {name} returned {result_json!r}, recorded {recorded!r}")
                if raised is not None and not same_raise(recorded, result_json):
                    raise ReplayDiverged(f"step {idx}: {name} raised {result_json['error']!r}, recorded "
                                         f"{recorded!r}") from raised
        self.steps.append(ToolCall.model_construct(tool=name, args=args_json, result=result_json))
        if raised is not None:
            raise raised
        return result

    def model(self, name: str, fn: Callable[..., Any], /, **args: Any) -> Any:
        """Call a model (or any nondeterministic function) ``name`` as ``fn(**args)`` and record its output.

        Before a replay's checkpoint the recorded output is returned without calling ``fn``.
        """
        try:
            return self._model(name, fn, args)
        except _OWN_ERRORS as exc:
            self._failing(exc)
            raise

    def _model(self, name: str, fn: Callable[..., Any], args: dict[str, Any]) -> Any:
        idx = len(self.steps)
        mode = self._mode(idx)
        self._not_inside(f"model call {name}", mode)
        args_json = to_json(args, what=f"model call {name}'s arguments")
        if mode == "before":
            recorded = self._recorded(idx, Message, name, args_json)
            content = copy.deepcopy(recorded.content if isinstance(recorded, Message) else None)
        elif mode == "change":
            self._recorded(idx, Message, name, args_json)
            assert self._change is not None
            if self._change.effect == "applied":
                self._call(f"model call {name}", fn, args)
            content = copy.deepcopy(self._change.result)
        else:
            content = self._call(f"model call {name}", fn, args)
        content_json = to_json(content, what=f"model call {name}'s output")
        self.steps.append(Message.model_construct(kind="message", role="assistant", content=content_json, name=name,
                                                  args=args_json))
        return content

    def say(self, content: Any, role: str = "assistant") -> None:
        """Record a deterministic message (nothing to replay); a JSON copy of ``content`` is kept."""
        self.steps.append(Message(role=role, content=to_json(content, what="a message")))

    def wait(self) -> None:
        """Declare that the run waits (an approval, a dependency): status ``waiting``."""
        self.status = "waiting"

    def fail(self) -> None:
        """Declare that the run failed: status ``failed``."""
        self.status = "failed"

    def trajectory(self, answer: Any = None) -> Trajectory:
        """The recorded trajectory with ``answer`` and the recorder's status.

        Replaying, a run that ended before reaching the checkpoint did not reproduce
        the recording (the change was never applied): that raises :class:`ReplayDiverged`.
        An error of the recorder's own that a call raised (:class:`ReplayDiverged`, a value with no JSON form)
        is raised again here, so an agent that caught it (``except Exception`` around its tool calls) does not
        end the case with a call missing from its steps.
        """
        if self._failed is not None:
            raise self._failed
        if self._checkpoint is not None and len(self.steps) <= self._checkpoint:
            raise ReplayDiverged(f"the replay ended after {len(self.steps)} steps, before the checkpoint "
                                 f"(step {self._checkpoint}) the recording reached")
        return Trajectory.model_construct(steps=list(self.steps), answer=to_json(answer, what="the answer"),
                                          status=self.status, input=None)


def _call_name(step: ToolCall | Message) -> str:
    """A recorded call as the recorder's messages name it (``tool pay``, ``model call flake``)."""
    return f"tool {step.tool}" if isinstance(step, ToolCall) else f"model call {step.name}"


class RecordedAgent:
    """Base class: write ``act(input, rec)`` on a :class:`Recorder`; get ``run`` and ``replay``.

    Subclasses that also define ``reset`` and ``snapshot`` are :class:`Stateful`
    and :class:`Replayable` systems. ``run(input)`` calls ``act`` on a new
    recorder and returns its trajectory; ``replay(trajectory, checkpoint=,
    change=)`` calls ``act(trajectory.input, ...)`` on a recorder replaying it
    (a ``ValueError`` when ``trajectory.input`` is not set; the runner sets it).

    Attributes
    ----------
    version : str or None
        The agent's version, set on the subclass (replays are cached per version); default ``None``.

    Examples
    --------
    >>> class Adder(RecordedAgent):
    ...     version = "adder-1"
    ...     def act(self, input, rec):
    ...         return rec.tool("add", lambda a, b: a + b, a=input["a"], b=input["b"])
    >>> traj = Adder().run({"a": 1, "b": 2})
    >>> traj.answer, traj.steps[0].tool, traj.steps[0].result
    (3, 'add', 3)
    """

    version: str | None = None

    def act(self, input: dict[str, Any], rec: Recorder) -> Any:  # pragma: no cover - interface
        raise NotImplementedError("a RecordedAgent defines act(input, rec) and returns the final answer")

    def run(self, input: dict[str, Any]) -> Trajectory:
        rec = Recorder()
        answer = self.act(input, rec)
        return rec.trajectory(answer)

    def replay(self, trajectory: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory:
        if trajectory.input is None:
            raise ValueError("replay needs trajectory.input (the runner sets it)")
        rec = Recorder.replaying(trajectory, checkpoint=checkpoint, change=change)
        answer = self.act(trajectory.input, rec)
        return rec.trajectory(answer)
