"""The evaluator interface, the registry of evaluator types, and the run context evaluators see.

An evaluator is a strict pydantic model (its options) with a ``type`` and an
optional ``criterion`` name. Three scopes:

``case``
    judged from one case's record (answer, state);
``system``
    needs the live system right after the case (replays, outcome observation),
    which it reaches only through the :class:`RunContext` protocol;
``run``
    judged across cases when frames are built (metamorphic pairs).

Evaluator families live in ``oloproof_nb/evaluators/``, one module each, and
register themselves under their ``type`` with :func:`register`; the suite
loader (``_config``) looks types up in :data:`EVALUATORS`, so it never imports
a family itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from .case import Case
from .lists import ListMatch
from .receipts import Evidence, OutcomeContract
from .trajectory import Change, ToolErrorRule, Trajectory

if TYPE_CHECKING:
    from .records import CaseRecord, ComparisonRow, PairRow, ReceiptRow, ReplayRow, RunVerdictRow, VerdictRow

__all__ = [
    "Evaluator",
    "Evaluation",
    "CaseContext",
    "RunContext",
    "Replay",
    "UserCall",
    "EVALUATORS",
    "register",
]

Scope = Literal["case", "system", "run"]


#: What a control replay must reproduce: the recorded trajectory, the state it left, the path patterns at which
#: the replay's state may differ from it (the ``state_matches`` ``ignore:`` patterns every ``changes`` or ``whole``
#: check gives: ``_config.shared_rules.ignored_paths``), and the paths another check judges, which must reproduce
#: under those patterns too (``evaluators.state.pinned_paths``), and the list rules every state check gives
#: (``_config.shared_rules.shared_list_rules``), by which its lists are aligned.
Reproduce = tuple[Trajectory, "dict[str, Any] | None", Sequence[str], Sequence[str], "Mapping[str, ListMatch]"]


@dataclass
class Replay:
    """One replay's outcome, from the system or from the replay cache.

    ``trajectory`` and ``state`` are what the replay produced (``state`` None
    when the system is not stateful); ``error`` says why there is no
    trajectory (``diverged``: the system raised ``ReplayDiverged``).
    """

    trajectory: Trajectory | None = None
    state: dict[str, Any] | None = None
    cached: bool = False
    error: str | None = None
    diverged: bool = False


@dataclass
class UserCall:
    """What a call into the suite's own Python code returned (``value``), or why it returned nothing.

    ``error`` is one line (``ValueError: boom``, ``timeout: …``, or why the
    code could not be imported); ``traceback`` is the full traceback of an
    exception the code raised.
    """

    value: Any = None
    error: str | None = None
    traceback: str | None = None


class RunContext(Protocol):
    """What a live run offers ``system``-scope evaluators (implemented in ``_run/context``).

    Evaluators never touch the system, the disk or the user's code
    themselves: a replay, a call to the system's ``observe``, a file
    observation and a call of a suite's Python check go through here, under
    the run's timeout, cache and store.
    """

    @property
    def case_started_at(self) -> datetime:
        """When the current case started (before its sandbox was reset)."""
        ...

    @property
    def evaluators(self) -> Sequence[Evaluator]:
        """The suite's evaluators (a fault replay is judged with the suite's own checks)."""
        ...

    @property
    def tool_errors(self) -> ToolErrorRule:
        """The suite's rule for a tool result that reports a failure (oloproof.yaml ``tool_errors``)."""
        ...

    def untouched_since_reset(self, contract: OutcomeContract) -> bool:
        """Whether the file at the contract's ``locator`` is the one the sandbox's reset left, unchanged."""
        ...

    def shown_to_an_earlier_case(self, evidence: Evidence) -> bool:
        """Whether this version of the artifact (modification time and digest) was observed for another case
        of the run before this case started."""
        ...

    def replay(self, case: Case, recorded: Trajectory, checkpoint: int, change: Change | None, *,
               record: Mapping[str, Any], reproduce: Reproduce | None) -> Replay:
        """Reset the sandbox and replay ``recorded`` from ``checkpoint`` with ``change`` (None: the control).

        ``record`` holds the fields identifying the replay in ``replays.jsonl``
        (criterion, tool, fault); ``reproduce`` is the recording (trajectory,
        state, and the path patterns its state may differ at) a control must reproduce to be cached or taken
        from the cache.
        """
        ...

    def collect_evidence(self, contract: OutcomeContract, system: Any, validators: Sequence[str], *,
                         observe_timeout_s: float | None = None,
                         max_artifact_bytes: int | None = None) -> tuple[Evidence | None, str | None]:
        """Observe a promised artifact: ``(evidence, None)``, or ``(None, why)`` when no evidence is available."""
        ...

    def call_check(self, spec: str, *args: Any) -> UserCall:
        """Call the suite's Python check ``spec`` (``module:function``, imported from the suite folder) with
        ``args`` under the run's timeout; what it raised is reported, never raised."""
        ...


@dataclass
class CaseContext:
    """Everything an evaluator may look at for one case.

    ``state`` is None when the system recorded no state; ``failure`` is the
    reason every verdict is missing (the system raised or timed out), else None.
    ``system`` and ``run`` are only set while the run is live. ``finished``
    holds, by criterion, the rows a ``system``-scope evaluator finished before
    a call of the system timed out or raised under it: its
    :meth:`Evaluator.interrupted` reports them with the rest (``fault_recovery``
    with ``calls: every``: the calls replayed before the interrupted one).
    """

    case: Case
    status: str
    trajectory: Trajectory | None
    state: dict[str, Any] | None
    failure: str | None = None
    system: Any = None
    run: RunContext | None = None
    finished: dict[str, list[ReplayRow]] = field(default_factory=dict)


@dataclass
class Evaluation:
    """What an evaluator produced for one case: verdict rows and supporting records."""

    verdicts: list[VerdictRow] = field(default_factory=list)
    comparisons: list[ComparisonRow] = field(default_factory=list)
    replays: list[ReplayRow] = field(default_factory=list)
    receipts: list[ReceiptRow] = field(default_factory=list)

    def extend(self, other: Evaluation) -> None:
        """Append ``other``'s rows to this one's, list by list (in place)."""
        self.verdicts += other.verdicts
        self.comparisons += other.comparisons
        self.replays += other.replays
        self.receipts += other.receipts


class Evaluator(BaseModel):
    """Base of every evaluator type; subclasses are registered with :func:`register`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    criterion: str | None = None

    scope: ClassVar[Scope] = "case"
    #: Observe the sandbox before any evaluator that replays (and so resets) it.
    observes_after_case: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """The criterion name used in every table and in release.yaml."""
        return self.criterion or self.default_criterion()

    def default_criterion(self) -> str:
        """The criterion name when the suite gives none: the evaluator's ``type`` (a family may derive its own)."""
        return self.type

    def settings(self) -> dict[str, Any]:
        """What the check judges by, to tell two runs' checks apart: its configuration without the criterion
        name (the names match already, written out or not), lists of plain text sorted (paths, ignore
        patterns, escalation tools are sets: their order changes nothing). What it refers to elsewhere (a
        transform's template, a registered validator, a python check's code) is not in it: a run's digests
        hold the code (see :func:`~oloproof_nb._analysis.run_checks.changed_checks`)."""
        out = {}
        for key, value in self.model_dump().items():
            if key == "criterion":
                continue
            if isinstance(value, list) and all(isinstance(item, str) for item in value):
                value = sorted(value)
            out[key] = value
        return out

    def verdict(self, verdict: Literal["pass", "fail", "missing"], reason: str = "") -> VerdictRow:
        """One verdict row for this criterion."""
        return {"criterion": self.name, "evaluator": self.type, "verdict": verdict, "reason": reason}

    def missing(self, reason: str) -> Evaluation:
        """An Evaluation holding one ``missing`` verdict for this criterion, with ``reason``."""
        return Evaluation(verdicts=[self.verdict("missing", reason)])

    def interrupted(self, ctx: CaseContext, reason: str, *, timed_out: bool) -> Evaluation:
        """What a ``system``-scope evaluator gives when the system timed out (``timed_out``) or raised while it
        judged the case (``reason`` says why): a ``missing`` verdict, with whatever records it owes (a receipt)."""
        return self.missing(reason)

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        """Judge one case (scopes ``case`` and ``system``); an empty Evaluation means not applicable."""
        raise NotImplementedError

    def evaluate_run(self, records: Sequence[CaseRecord], labels: Mapping[str, Sequence[Mapping[str, Any]]],
                     transforms: Mapping[str, Any], n_derived: int,
                     ignore: Sequence[str] = (), keep: Sequence[str] = (),
                     lists: Mapping[str, ListMatch] | None = None) -> tuple[list[RunVerdictRow], list[PairRow]]:
        """Judge across the run's records (scope ``run``): verdict rows and pair rows. ``n_derived``: the pairs
        of each transform in the suite, recorded or not; ``ignore``: the ``state_matches`` ``ignore:`` patterns
        of every ``changes`` or ``whole`` check (``_config.shared_rules.ignored_paths``); ``keep``: the paths another
        check judges, compared under those patterns too (``evaluators.state.pinned_paths``); ``lists``: the list
        rules every state check gives (``_config.shared_rules.shared_list_rules``)."""
        return [], []

    def check_suite(self, transforms: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Cross-checks against the rest of the suite: ``(key, message)`` problems, none by default."""
        return []

    def validator_names(self) -> list[str]:
        """Registered outcome validators this evaluator may run (checked against oloproof.yaml's registry)."""
        return []

    #: Whether the verdicts depend on the rest of the suite (``fault_recovery``: a replay is judged with the
    #: suite's ``answer_matches``, ``state_matches`` and ``state_unchanged`` checks, and its ``tool_errors`` rule
    #: says whether an escalation failed), so those are part of this check.
    judged_with_the_suite: ClassVar[bool] = False

    def validators_run(self, registered: Sequence[str]) -> list[str]:
        """The names among ``registered`` (oloproof.yaml's ``validators``) whose code this evaluator's verdicts
        depend on: none by default."""
        return []

    def user_code(self) -> list[tuple[str, str]]:
        """``(option, "module:function")`` of the suite's own code this evaluator calls (imported when the suite
        loads, so a wrong name fails there)."""
        return []


#: Evaluator types by their ``type`` name, filled by :func:`register` when ``oloproof_nb.evaluators`` is imported.
EVALUATORS: dict[str, type[Evaluator]] = {}


def register(cls: type[Evaluator]) -> type[Evaluator]:
    """Class decorator: register an evaluator under the literal value of its ``type`` field."""
    annotation = cls.model_fields["type"].annotation
    args: tuple[Any, ...] = getattr(annotation, "__args__", ())
    if not args:
        raise TypeError(f"{cls.__name__}.type must be a Literal of the evaluator's type name")
    EVALUATORS[str(args[0])] = cls
    return cls

