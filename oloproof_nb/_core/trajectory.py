"""What a system under test returns and offers: trajectory types, the system protocols and fault results."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

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
    "step_is_error",
]


class ToolCall(BaseModel):
    """A tool call and the result it returned (``result`` may be any JSON value)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["tool_call"] = "tool_call"
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None


class Message(BaseModel):
    """A message or model step; ``name``/``args`` describe a recorded model call."""

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
    """What the call at a replay's checkpoint returns instead of running."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    result: Any


FAULTS: tuple[str, ...] = ("error", "timeout", "malformed")
#: The result a ``malformed`` fault puts in place of the tool's result.
MALFORMED_RESULT = "<<malformed>>"


def fault_result(fault: str, tool: str) -> Any:
    """The fixed result that replaces a call of ``tool`` under ``fault``.

    ============  ==============================================================
    ``error``     ``{"ok": false, "error": "error", "message": "<tool> failed"}``
    ``timeout``   ``{"ok": false, "error": "timeout", "message": "<tool> timed out"}``
    ``malformed`` the string ``"<<malformed>>"``
    ============  ==============================================================

    Examples
    --------
    >>> fault_result("error", "issue_refund")
    {'ok': False, 'error': 'error', 'message': 'issue_refund failed'}
    """
    if fault == "error":
        return {"ok": False, "error": "error", "message": f"{tool} failed"}
    if fault == "timeout":
        return {"ok": False, "error": "timeout", "message": f"{tool} timed out"}
    if fault == "malformed":
        return MALFORMED_RESULT
    raise ValueError(f"fault {fault!r} is not known; allowed: {', '.join(FAULTS)}")


def result_is_error(result: Any) -> bool:
    """True for a tool result that reports a failure: the one rule for ``steps.is_error``.

    A mapping with ``ok`` false or an ``error`` key, or the malformed-fault string.

    Examples
    --------
    >>> result_is_error({"ok": False}), result_is_error({"ok": True}), result_is_error(MALFORMED_RESULT)
    (True, False, True)
    """
    if isinstance(result, dict):
        return result.get("ok") is False or "error" in result
    return bool(result == MALFORMED_RESULT)


def step_is_error(step: ToolCall | Message) -> bool:
    """True for a tool call whose result reports a failure (see :func:`result_is_error`)."""
    return isinstance(step, ToolCall) and result_is_error(step.result)


@runtime_checkable
class Stateful(Protocol):
    """A system with a sandbox: ``reset`` to a state before each case, ``snapshot`` after."""

    def reset(self, state: dict[str, Any]) -> None: ...

    def snapshot(self) -> dict[str, Any]: ...


@runtime_checkable
class Replayable(Protocol):
    """A system that can re-run a recorded trajectory with one call's result changed."""

    def replay(self, trajectory: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory: ...
