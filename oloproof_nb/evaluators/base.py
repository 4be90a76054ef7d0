"""The evaluator interface and the registry of evaluator types.

An evaluator is a strict pydantic model (its options) with a ``type`` and an
optional ``criterion`` name. Three scopes:

``case``
    judged from one case's record (answer, state);
``system``
    needs the live system right after the case (replays, outcome observation);
``run``
    judged across cases when frames are built (metamorphic pairs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from ..cases import Case
    from ..system import Trajectory

__all__ = [
    "Evaluator",
    "Evaluation",
    "CaseContext",
    "EVALUATORS",
    "register",
    "VERDICTS",
]

VERDICTS: tuple[str, ...] = ("pass", "fail", "missing")


@dataclass
class CaseContext:
    """Everything an evaluator may look at for one case.

    ``state`` is None when the system recorded no state; ``failure`` is the
    reason every verdict is missing (the system raised or timed out), else None.
    ``system`` and ``services`` are only set while the run is live.
    """

    case: Case
    status: str
    trajectory: Trajectory | None
    state: dict[str, Any] | None
    failure: str | None = None
    system: Any = None
    services: Any = None


@dataclass
class Evaluation:
    """What an evaluator produced for one case: verdict rows and supporting records."""

    verdicts: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    replays: list[dict[str, Any]] = field(default_factory=list)
    receipts: list[dict[str, Any]] = field(default_factory=list)

    def extend(self, other: Evaluation) -> None:
        self.verdicts += other.verdicts
        self.comparisons += other.comparisons
        self.replays += other.replays
        self.receipts += other.receipts


class Evaluator(BaseModel):
    """Base of every evaluator type; subclasses are registered with :func:`register`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    criterion: str | None = None

    scope: ClassVar[Literal["case", "system", "run"]] = "case"

    @property
    def name(self) -> str:
        """The criterion name used in every table and in release.yaml."""
        return self.criterion or self.default_criterion()

    def default_criterion(self) -> str:
        return self.type

    def verdict(self, verdict: str, reason: str = "") -> dict[str, Any]:
        """One verdict row for this criterion."""
        return {"criterion": self.name, "evaluator": self.type, "verdict": verdict, "reason": reason}

    def missing(self, reason: str) -> Evaluation:
        return Evaluation(verdicts=[self.verdict("missing", reason)])

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        """Judge one case (scopes ``case`` and ``system``); an empty Evaluation means not applicable."""
        raise NotImplementedError

    def check_suite(self, suite_root: Path | None, transforms: dict[str, Any]) -> list[tuple[str, str]]:
        """Cross-checks against the rest of the suite: ``(key, message)`` problems, none by default."""
        return []


EVALUATORS: dict[str, type[Evaluator]] = {}


def register(cls: type[Evaluator]) -> type[Evaluator]:
    """Class decorator: register an evaluator under the literal value of its ``type`` field."""
    annotation = cls.model_fields["type"].annotation
    args: tuple[Any, ...] = getattr(annotation, "__args__", ())
    if not args:
        raise TypeError(f"{cls.__name__}.type must be a Literal of the evaluator's type name")
    EVALUATORS[str(args[0])] = cls
    return cls

