"""What a system under test returns and offers: trajectory types, the system protocols and fault results."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal, Protocol, TypeGuard, runtime_checkable

from pydantic import BaseModel, ConfigDict, Discriminator, Field, SerializerFunctionWrapHandler, Tag, model_serializer

from ..errors import describe_exception

__all__ = [
    "ToolCall",
    "Message",
    "Step",
    "Trajectory",
    "Change",
    "Stateful",
    "Replayable",
    "FAULTS",
    "fault_result",
    "MALFORMED_RESULT",
    "result_is_error",
    "raised_result",
    "is_raised_result",
    "same_raise",
    "step_is_error",
    "ToolErrorRule",
    "DEFAULT_TOOL_ERRORS",
]


class ToolCall(BaseModel):
    """A tool call and the result it returned (``result`` may be any JSON value).

    Attributes
    ----------
    kind : {"tool_call"}
        Tells a step that is a tool call from a :class:`Message`.
    tool : str
        The tool's name.
    args : dict
        The arguments it was called with (default ``{}``).
    result : Any
        What it returned (default ``None``).

    Examples
    --------
    >>> call = ToolCall(tool="get_order", args={"order_id": "ord-1"}, result={"status": "delivered"})
    >>> call.tool, call.result["status"]
    ('get_order', 'delivered')
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["tool_call"] = "tool_call"
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None


class Message(BaseModel):
    """A message or model step; ``name``/``args`` describe a recorded model call.

    Attributes
    ----------
    kind : {"message"}
        Tells a step that is a message from a :class:`ToolCall`.
    role : str
        Who speaks (default ``"assistant"``).
    content : Any
        The message's text, or a model call's output (default ``None``).
    name, args : str or None, dict or None
        The model call's name and arguments, for a call recorded by :meth:`Recorder.model`; ``None`` for a
        plain message.

    Examples
    --------
    >>> Message(content="It was delivered.").role
    'assistant'
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["message"] = "message"
    role: str = "assistant"
    content: Any = None
    name: str | None = None
    args: dict[str, Any] | None = None


def _step_kind(value: Any) -> str:
    if isinstance(value, dict):
        if "kind" in value:
            return str(value["kind"])
        return "tool_call" if "tool" in value else "message"
    return str(getattr(value, "kind", "message"))


Step = Annotated[
    Annotated[ToolCall, Tag("tool_call")] | Annotated[Message, Tag("message")],
    Discriminator(_step_kind),
]


class Trajectory(BaseModel):
    """What a system did for one case: its steps, final answer and status.

    ``status`` is ``completed``, ``failed`` or ``waiting`` (the run declared a
    wait: an approval, a dependency). ``input`` is set by the runner.

    Attributes
    ----------
    steps : list of ToolCall or Message
        The steps in order (a mapping with a ``tool`` key and no ``kind`` is read as a tool call, any other
        as a message).
    answer : Any
        The final answer (default ``None``).
    status : {"completed", "failed", "waiting"}
        How the case ended (default ``"completed"``).
    input : dict or None
        The case's input, set by the runner (a replay needs it).

    Examples
    --------
    >>> t = Trajectory(steps=[{"tool": "get_order", "args": {"order_id": "ord-1"}},
    ...                       {"role": "assistant", "content": "It was delivered."}], answer="delivered")
    >>> [type(s).__name__ for s in t.steps], t.status
    (['ToolCall', 'Message'], 'completed')
    >>> t.tool_calls()[0][0], t.first_call("get_order"), t.first_call("issue_refund")
    (0, 0, None)
    """

    model_config = ConfigDict(extra="forbid")

    steps: list[Step] = Field(default_factory=list)
    answer: Any = None
    status: Literal["completed", "failed", "waiting"] = "completed"
    input: dict[str, Any] | None = None

    def tool_calls(self) -> list[tuple[int, ToolCall]]:
        """``(index, call)`` for every tool call, in order."""
        return [(i, s) for i, s in enumerate(self.steps) if isinstance(s, ToolCall)]

    def first_call(self, tool: str) -> int | None:
        """Index in ``steps`` of the first call of ``tool``, or None."""
        for i, step in enumerate(self.steps):
            if isinstance(step, ToolCall) and step.tool == tool:
                return i
        return None


class Change(BaseModel):
    """What the call at a replay's checkpoint returns instead of its own result.

    ``effect`` says whether the call itself runs: ``skipped`` (the default: it
    does not run, as when a request never reached the service) or ``applied``
    (it runs, with its side effects, and then its result is replaced, as when
    a transfer went out but the response timed out). A Replayable system
    written without the :class:`~oloproof_nb.Recorder` must honour it.

    Attributes
    ----------
    result : Any
        The result the call returns instead of its own.
    effect : {"skipped", "applied"}
        Whether the call itself runs (default ``"skipped"``).

    Examples
    --------
    >>> Change(result=fault_result("timeout", "issue_refund"), effect="applied").effect
    'applied'
    >>> Change(result=None).model_dump()  # the default effect is left out of what is stored
    {'result': None}
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    result: Any
    effect: Literal["skipped", "applied"] = "skipped"

    @model_serializer(mode="wrap")
    def _default_effect_left_out(self, handler: SerializerFunctionWrapHandler) -> Any:
        # a skipped change serialises as it always did, so replay-cache keys of existing changes stay the same
        data = handler(self)
        if isinstance(data, dict) and self.effect == "skipped":
            data.pop("effect", None)
        return data


FAULTS: tuple[str, ...] = ("error", "timeout", "malformed")
#: The result a ``malformed`` fault puts in place of the tool's result.
MALFORMED_RESULT = "<<malformed>>"


def fault_result(fault: str, tool: str) -> Any:
    """The fixed result that replaces a call of ``tool`` under ``fault``.

    Parameters
    ----------
    fault : {"error", "timeout", "malformed"}
        The fault (one of :data:`FAULTS`).
    tool : str
        The tool whose call it replaces (named in the message).

    Returns
    -------
    Any
        The result below: a mapping for ``error`` and ``timeout``, the string :data:`MALFORMED_RESULT` for
        ``malformed``.

    Raises
    ------
    ValueError
        For a fault not in :data:`FAULTS`.

    Notes
    -----
    ============  ==============================================================
    ``error``     ``{"ok": false, "error": "error", "message": "<tool> failed"}``
    ``timeout``   ``{"ok": false, "error": "timeout", "message": "<tool> timed out"}``
    ``malformed`` the string ``"<<malformed>>"``
    ============  ==============================================================

    Examples
    --------
    >>> fault_result("error", "issue_refund")
    {'ok': False, 'error': 'error', 'message': 'issue_refund failed'}
    >>> fault_result("malformed", "issue_refund")
    '<<malformed>>'
    """
    if fault == "error":
        return {"ok": False, "error": "error", "message": f"{tool} failed"}
    if fault == "timeout":
        return {"ok": False, "error": "timeout", "message": f"{tool} timed out"}
    if fault == "malformed":
        return MALFORMED_RESULT
    raise ValueError(f"fault {fault!r} is not known; allowed: {', '.join(FAULTS)}")


#: The keys of the result a :class:`~oloproof_nb._core.recorder.Recorder` records for a tool call that raised.
RAISED_KEYS = frozenset({"ok", "error", "raised"})


def raised_result(exc: Exception) -> dict[str, Any]:
    """The result a :class:`~oloproof_nb._core.recorder.Recorder` records for a tool call that raised ``exc`` (the
    agent gets ``exc`` itself): a failure under the default ``tool_errors`` rule (``ok`` false, an ``error``
    text), and the exception's class name.

    Examples
    --------
    >>> raised_result(KeyError("ord-9"))
    {'ok': False, 'error': "KeyError: 'ord-9'", 'raised': 'KeyError'}
    """
    return {"ok": False, "error": describe_exception(exc), "raised": type(exc).__name__}


def is_raised_result(result: Any) -> TypeGuard[dict[str, Any]]:
    """True when ``result`` is what the Recorder records for a tool call that raised (``raised_result``): exactly
    ``{"ok": false, "error": TEXT, "raised": CLASS NAME}``.

    Examples
    --------
    >>> is_raised_result({"ok": False, "error": "Refused: o1", "raised": "Refused"})
    True
    >>> is_raised_result({"ok": False, "error": "error", "message": "pay failed"}), is_raised_result("raised")
    (False, False)
    """
    return (isinstance(result, dict) and result.keys() == RAISED_KEYS and result["ok"] is False
            and isinstance(result["raised"], str) and isinstance(result["error"], str))


def same_raise(recorded: Any, replayed: Any) -> bool:
    """Whether two tool results are the same raise: both :func:`is_raised_result`, of one exception class by name
    (the text is not compared: it may hold a time or an address). The one rule the Recorder replaying and a
    control replay's comparison (``_core/faults.py``) read a raised call by.

    Examples
    --------
    >>> same_raise({"ok": False, "error": "Refused: [10:01]", "raised": "Refused"},
    ...            {"ok": False, "error": "Refused: [10:02]", "raised": "Refused"})
    True
    """
    return is_raised_result(recorded) and is_raised_result(replayed) and recorded["raised"] == replayed["raised"]


class ToolErrorRule(BaseModel):
    """When a tool result reports a failure: the one rule behind ``steps.is_error``.

    A call that raised (its result :func:`is_raised_result`) is an error whatever the rule says: it returned
    nothing, so a rule written for the dicts a suite's tools return, which need not read ``ok`` or ``error``,
    cannot make it a success (an escalation tool that raised would have handed the case over). Otherwise a
    result is an error when it is the malformed-fault string, or a mapping with

    - a key of ``ok_keys`` whose value is ``false`` (an explicit failure flag), or
    - a key of ``error_keys`` whose value is not ``null``, ``false``, ``0``, ``""``, ``[]`` or ``{}``
      (``{"ok": true, "error": null}`` is a success: many APIs always carry an ``error`` field, and an
      error *code* of 0 means none), or
    - a key of ``status_keys`` whose value is one of ``status_values`` (compared without case).

    Defaults: ``ok_keys [ok]``, ``error_keys [error, isError]`` (``isError`` is MCP's flag),
    ``status_keys [status]``, ``status_values [error]``. ``failed`` is not a default status: it is
    often data (a payment whose status a tool reports), not the call's own outcome. A suite
    overrides the rule in oloproof.yaml under ``tool_errors:`` (an empty list turns a signal off).

    Examples
    --------
    >>> rule = ToolErrorRule()
    >>> rule.is_error({"ok": True, "error": None}), rule.is_error({"error": "not_found"})
    (False, True)
    >>> rule.is_error({"status": "Error"}), rule.is_error({"status": "failed"})
    (True, False)
    >>> rule.is_error({"error": 0}), rule.is_error({"error": 7}), rule.is_error({"ok": 0})
    (False, True, False)
    >>> ToolErrorRule(status_values=["error", "failed"]).is_error({"status": "failed"})
    True
    >>> ToolErrorRule(ok_keys=[], error_keys=[]).is_error({"ok": False, "error": "Refused: o1", "raised": "Refused"})
    True
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    ok_keys: list[str] = Field(default_factory=lambda: ["ok"])
    error_keys: list[str] = Field(default_factory=lambda: ["error", "isError"])
    status_keys: list[str] = Field(default_factory=lambda: ["status"])
    status_values: list[str] = Field(default_factory=lambda: ["error"])

    def is_error(self, result: Any) -> bool:
        """True when ``result`` reports a failure under this rule."""
        if isinstance(result, dict):  # plain loops: this runs for every tool call of every stored case
            if "raised" in result and is_raised_result(result):  # the call raised: never a success
                return True
            get = result.get
            for k in self.ok_keys:
                if get(k, True) is False:
                    return True
            for k in self.error_keys:
                if get(k) not in _NO_ERROR:
                    return True
            for k in self.status_keys:
                value = get(k)
                if isinstance(value, str) and value.casefold() in _casefolded(tuple(self.status_values)):
                    return True
            return False
        return bool(result == MALFORMED_RESULT)


#: The values of an ``error_keys`` key that report no error (``0`` and ``0.0`` too: they equal ``False``). One
#: tuple for every call (never changed): written in the condition, the ``[]`` and ``{}`` were made anew per key
#: and tool call.
_NO_ERROR: tuple[Any, ...] = (None, False, "", [], {})


@functools.lru_cache(maxsize=64)
def _casefolded(values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(v.casefold() for v in values)


#: The default rule (see :class:`ToolErrorRule`).
DEFAULT_TOOL_ERRORS = ToolErrorRule()


def result_is_error(result: Any, rule: ToolErrorRule = DEFAULT_TOOL_ERRORS) -> bool:
    """True for a tool result that reports a failure under ``rule`` (see :class:`ToolErrorRule`).

    Examples
    --------
    >>> result_is_error({"ok": False}), result_is_error({"ok": True, "error": None}), result_is_error(MALFORMED_RESULT)
    (True, False, True)
    """
    return rule.is_error(result)


def step_is_error(step: ToolCall | Message, rule: ToolErrorRule = DEFAULT_TOOL_ERRORS) -> bool:
    """True for a tool call whose result reports a failure (see :class:`ToolErrorRule`)."""
    return isinstance(step, ToolCall) and rule.is_error(step.result)


@runtime_checkable
class Stateful(Protocol):
    """A system with a sandbox: ``reset`` to a state before each case, ``snapshot`` after.

    A protocol: any object with these two methods is one (``isinstance`` checks them); the runner also calls
    the system's ``run(input)``, which returns a :class:`Trajectory` (or a mapping of the same shape).

    Methods
    -------
    reset(state)
        Put the sandbox in ``state`` (a deep copy of the case's ``initial_state``; ``{}`` when it has none).
    snapshot()
        The sandbox's state now, as a JSON-ready mapping; right after ``reset(s)`` it must give ``s`` back.

    Examples
    --------
    >>> class Desk:
    ...     def reset(self, state): self.state = state
    ...     def snapshot(self): return self.state
    ...     def run(self, input): return Trajectory(answer="ok")
    >>> isinstance(Desk(), Stateful), isinstance(object(), Stateful)
    (True, False)
    """

    def reset(self, state: dict[str, Any]) -> None: ...

    def snapshot(self) -> dict[str, Any]: ...


@runtime_checkable
class Replayable(Protocol):
    """A system that can re-run a recorded trajectory with one call's result changed.

    Calls before ``checkpoint`` must reproduce the recording; the call at it
    returns ``change.result`` (after running, when ``change.effect`` is
    ``applied``); later calls run live. ``change=None`` is the control replay.
    A :class:`RecordedAgent` is one without writing ``replay``.

    Methods
    -------
    replay(trajectory, *, checkpoint, change)
        The new :class:`Trajectory`: ``trajectory`` (as recorded, ``input`` set) re-run with the step at index
        ``checkpoint`` of ``trajectory.steps`` given ``change`` (a :class:`Change`, or None).

    Examples
    --------
    >>> import oloproof_nb as op
    >>> class Agent(op.RecordedAgent):
    ...     def act(self, input, rec):
    ...         return rec.tool("add", lambda a, b: a + b, a=input["a"], b=2)
    >>> agent = Agent()
    >>> isinstance(agent, Replayable)
    True
    >>> recorded = agent.run({"a": 1})
    >>> recorded.input = {"a": 1}  # the runner sets it
    >>> agent.replay(recorded, checkpoint=0, change=Change(result=99)).answer
    99
    """

    def replay(self, trajectory: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory: ...
