"""The records of a run folder, as types shared by the writer (``_run``) and every reader (``_analysis``).

A run folder holds ``manifest.json`` (:class:`Manifest`, validated when read),
``cases.jsonl`` (one :class:`CaseRecord` per finished case),
``replays.jsonl`` (one :class:`ReplayRecord` per replay) and ``states.jsonl``
(one :class:`StateRecord` per node of a distinct state: every initial and
final state of the cases and replays, stored once and referenced by its
address). Records are
``TypedDict``\\ s: JSON objects with a checked shape and no per-record
validation cost when 100,000 of them are read back.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator
from typing_extensions import NotRequired

from ..errors import quote

__all__ = [
    "RUN_SCHEMA",
    "ENV_SCHEMA",
    "Manifest",
    "AbruptEnd",
    "StoredSuite",
    "RepeatedCases",
    "CaseDict",
    "TrajectoryDict",
    "EnvironmentState",
    "VerdictRow",
    "RunVerdictRow",
    "ComparisonRow",
    "ReplayRow",
    "ReceiptRow",
    "PairRow",
    "CaseRecord",
    "ReplayRecord",
    "StateRecord",
    "Verdict",
    "VERDICT_WORDS",
    "ENDED",
    "step_raised",
    "step_timed_out",
]

RUN_SCHEMA = "oloproof_run/v1"
ENV_SCHEMA = "environment_state/v1"

Verdict = Literal["pass", "fail", "missing"]
#: The words a verdict row may hold (every one the runner ever wrote): a journal's row holding another is damage.
VERDICT_WORDS: tuple[str, ...] = get_args(Verdict)
#: The statuses of a case run that ended before it could be judged: it raised, or overran ``case_timeout_s``
#: (every verdict of it is ``missing``; an Inspect AI sample that errored or timed out reads the same).
ENDED: tuple[str, ...] = ("error", "timeout")


def step_raised(step: str) -> str:
    """How the ``error`` of a case run (and the reason of its verdicts) begins when the system's ``step`` raised:
    ``reset() raised `` (then ``ConnectionRefusedError: …``).

    Examples
    --------
    >>> step_raised("reset()") + "ConnectionRefusedError: [Errno 111] Connection refused"
    'reset() raised ConnectionRefusedError: [Errno 111] Connection refused'
    """
    return f"{step} raised "


def step_timed_out(step: str) -> str:
    """How the ``error`` of a case run (and the reason of its verdicts) begins when the system's ``step`` overran
    ``case_timeout_s``: ``timeout: reset() `` (then ``exceeded case_timeout_s=5``), led by ``timeout:`` as every
    timeout's reason is.

    Examples
    --------
    >>> step_timed_out("reset()") + "exceeded case_timeout_s=5"
    'timeout: reset() exceeded case_timeout_s=5'
    """
    return f"timeout: {step} "


class RepeatedCases(BaseModel):
    """Cases of a case file that hold an earlier case's content under another id (``DuplicateCaseWarning``)."""

    model_config = ConfigDict(extra="forbid")

    #: Cases that repeat an earlier one: a group of g equal cases counts g - 1.
    count: int = Field(default=0, ge=0)
    #: Groups of equal cases (each of two or more).
    groups: int = Field(default=0, ge=0)
    #: The first groups' ids and lines, for a message: ``'c1' = 'c7' (lines 1, 7); …``.
    shown: str = ""


class _KeepsFields(BaseModel):
    """A model of ``manifest.json`` whose fields cannot be deleted: ``del run.manifest.finished_at`` of a run whose
    value was None changed no value, so it was no edit (``edited_frames``), and every later read of the field (its
    ``repr``, the gate) raised AttributeError far from the cause. Setting a field stays possible (an
    edit the Run tells: ``Run.manifest_edits``)."""

    def __delattr__(self, name: str) -> None:
        if name in type(self).model_fields:
            raise AttributeError(f"{name}: a field of manifest.json cannot be deleted (it is read later: the run's "
                                 f"repr, its gate); set it instead, or load the run again (op.load_run) for its own")
        super().__delattr__(name)


class StoredSuite(_KeepsFields):
    """What a run keeps of its suite, so frames and the gate rebuild without the suite folder."""

    model_config = ConfigDict(extra="forbid")

    root: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    release: dict[str, Any] | None = None
    labels: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)

    @field_validator("labels")
    @classmethod
    def _judgements(cls, value: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
        """Each stored judgement names its copy and says true or false, as its label file had to (a damaged
        manifest's ``"valid": "false"`` counted as valid, and one without ``case_id`` was an internal error)."""
        for transform, judgements in value.items():
            for i, judgement in enumerate(judgements):
                if not (isinstance(judgement.get("case_id"), str) and isinstance(judgement.get("valid"), bool)):
                    raise ValueError(f"judgement {i} of {quote(transform)} needs case_id (text) and valid (true or "
                                     "false); the run directory is damaged")
        return value

    #: Checks that cannot fail, found by ``load_suite``: criterion → one message per finding.
    vacuous: dict[str, list[str]] = Field(default_factory=dict)
    #: Cases that repeat another's content under another id, found by ``load_suite``.
    repeated: RepeatedCases = Field(default_factory=RepeatedCases)


class AbruptEnd(BaseModel):
    """An end of the run's process after which a resume ran case runs again: those in flight when it could not
    blame the end on the system (a kill from outside, SIGKILL or SIGTERM; a notebook kernel killed; a power loss),
    and those another worker thread had finished but not yet recorded. An end the command saw the system cause
    (an exit, a segfault) makes each case run in flight ``error`` instead."""

    model_config = ConfigDict(extra="forbid")

    #: How the process ended, as the command saw it (``killed by signal SIGKILL``); None when nothing saw it end
    #: (``op.run``, or the command was killed too).
    how: str | None = None
    #: The ``(case id, epoch)`` of each case run in flight, run again by the resume.
    rerun: list[tuple[str, int]] = Field(default_factory=list)

    @field_validator("rerun", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        """JSON writes each ``(case id, epoch)`` as a list: made a tuple, so a strict reading (``read_manifest``)
        checks its two items instead of refusing every stored pair."""
        if isinstance(value, list):
            return [tuple(item) if isinstance(item, list) else item for item in value]
        return value


class Manifest(_KeepsFields):
    """``manifest.json``: who ran what, when, with which files; ``finished_at`` is absent while running.

    Read strictly from a run folder (``model_validate(data, strict=True)``): ``"n_cases": "5"``, ``5.0`` or
    ``true`` for a number, a number for a text, and a key this version does not write are a damaged manifest.
    """

    model_config = ConfigDict(extra="forbid")

    schema_: str = Field(default=RUN_SCHEMA, alias="schema")
    suite: str
    run_id: str
    system_version: str | None = None
    started_at: str
    finished_at: str | None = None
    oloproof_nb: str
    n_cases: int
    #: How many times each case runs (each a fresh reset): ``epochs`` of oloproof.yaml or ``op.run(epochs=)``.
    epochs: int = Field(default=1, ge=1)
    digests: dict[str, str] = Field(default_factory=dict)
    #: Digest of the system's code (its module file, the file defining it, and its ``fingerprint()``);
    #: None when it cannot be computed. ``--resume`` refuses a system whose fingerprint differs.
    code_fingerprint: str | None = None
    suite_config: StoredSuite = Field(default_factory=StoredSuite)
    #: The journals (``cases.jsonl``, ``replays.jsonl``) whose bytes were not those the run wrote when it finished:
    #: something else wrote into the run folder while it ran. Absent when none was; such a run is never loaded.
    journal_changed: list[str] | None = None
    #: The run id of the run that was the latest of the folder this run was created in, when that run started
    #: at this run's start time or later by its manifest (the clock was set back between the two, or that run
    #: came from a machine whose clock ran ahead): this run is the later of the two for ``oloproof gate SUITE``.
    #: Absent otherwise.
    follows: str | None = None
    #: The ends of the run's process that a resume could not blame on the system, each with the case runs in
    #: flight that ran again (:class:`AbruptEnd`), in the order they happened. Absent when there was none.
    abrupt_ends: list[AbruptEnd] | None = None
    #: The system's methods (``run``, ``replay``) that declare ``epoch``, so the runner gave them the case's epoch:
    #: a system seeded by it makes the same tries in every run, and runs of it pooled hold epoch e once per run
    #: (pass^k and pass@k count such a repeat once). Absent when none does, and in runs made before this version.
    epoch_given: list[str] | None = None
    #: The digest of the system's code and the settings it was built with (its constructor's parameters kept as
    #: attributes, a ``functools.partial``'s arguments: ``_run/systems.replay_fingerprint``) when it has such
    #: settings: ``Desk(careful=False)`` and ``Desk(careful=True)`` share a code fingerprint, so ``--resume`` and
    #: a pooled gate compare this too. Absent for a system without settings, and in runs made before this version.
    settings_fingerprint: str | None = None

    @field_validator("schema_")
    @classmethod
    def _this_schema(cls, value: str) -> str:
        """A manifest of another schema (a later oloproof_nb's run folder, another tool's manifest.json) is refused:
        read as this version's, its keys could mean something else."""
        if value != RUN_SCHEMA:
            # the value is a schema, not a folder (it once said "'oloproof_run/v9' is not a run folder")
            raise ValueError(f"{quote(value)} is not a schema this version of oloproof_nb reads (a run folder of "
                             f"another version, or another tool's manifest.json); allowed: {RUN_SCHEMA}")
        return value

    def to_json(self) -> dict[str, Any]:
        """The manifest as written to disk (``finished_at`` left out until the run finishes, ``journal_changed``
        unless a journal changed, ``follows`` unless the clock read an earlier time than a run before,
        ``abrupt_ends`` unless there was one, ``epoch_given`` unless the system takes the epoch,
        ``settings_fingerprint`` unless it has settings)."""
        # python mode: a suite's ``case_timeout_s: .inf`` stays a float (JSON mode would write null)
        unset = {name for name in ("finished_at", "journal_changed", "follows", "abrupt_ends", "epoch_given",
                                   "settings_fingerprint")
                 if getattr(self, name) is None}
        return self.model_dump(by_alias=True, exclude=unset)


class CaseDict(TypedDict, total=False):
    """A case as stored (:meth:`~oloproof_nb._core.case.Case.to_record`); ``outcome`` never holds its locator.

    In ``cases.jsonl`` the ``initial_state`` is replaced by ``initial_state_ref``, the address of the state
    in ``states.jsonl`` (records written before states were stored by address keep it inline); readers put
    it back.
    """

    id: str
    #: The repetition (1-based) when the run has ``epochs`` > 1; absent for epoch 1.
    epoch: int
    input: dict[str, Any]
    initial_state: dict[str, Any]
    initial_state_ref: str
    expected: dict[str, Any]
    outcome: dict[str, Any]
    cluster: str
    metadata: dict[str, Any]
    digest: str
    source_id: str
    transform: str | None


class TrajectoryDict(TypedDict):
    """A trajectory as JSON: ``steps`` (tool calls and messages), ``answer``, ``status``, ``input``."""

    steps: list[dict[str, Any]]
    answer: Any
    status: str
    input: dict[str, Any] | None


class _EnvironmentState(TypedDict):
    schema: str
    run_id: str
    case_id: str
    case_digest: str
    system_version: str | None
    captured_at: str
    state_digest: str


class EnvironmentState(_EnvironmentState, total=False):
    """The ``environment_state/v1`` record of one snapshot.

    ``state`` is the state itself in memory; in ``cases.jsonl`` and ``replays.jsonl`` it is replaced by
    ``state_ref``, its address in ``states.jsonl`` (records written before states were stored by address
    keep it inline). Readers put it back, so every reader sees ``state``.
    """

    state: dict[str, Any]
    state_ref: str
    #: The case's epoch (absent for epoch 1).
    epoch: int


class VerdictRow(TypedDict):
    """One criterion's verdict on one case (the case and cluster come from the record that holds it)."""

    criterion: str
    evaluator: str
    verdict: Verdict
    reason: str


class RunVerdictRow(VerdictRow):
    """A verdict judged across cases (a metamorphic pair), carrying its case and cluster."""

    case_id: str
    cluster: str
    #: The epoch of the derived case (and of the source it was compared with); absent for epoch 1.
    epoch: NotRequired[int]


class ComparisonRow(TypedDict):
    """One compared path; ``expected``/``actual`` may be ABSENT (stored as ``{"$absent": true}``)."""

    case_id: str
    criterion: str
    path: str
    expected: Any
    actual: Any
    ok: bool


class ReplayRow(TypedDict):
    """One fault replay's summary: a row of ``run.replays``."""

    case_id: str
    criterion: str
    tool: str
    fault: str
    checkpoint: int
    control_reproduced: bool | None
    recovered: bool | None
    escalated: bool | None
    constraint_broken: bool | None
    verdict: Verdict
    reason: str
    cached: bool


class ReceiptRow(TypedDict, total=False):
    """An outcome receipt as stored: the case id and the receipt's JSON fields."""

    case_id: str
    artifact_id: str
    run_started_at: str
    observed_at: str | None
    modified_at: str | None
    expected_sha256: str | None
    observed_digest: str | None
    digest_kind: str | None
    validator: str | None
    validator_exit_code: int | None
    evidence_source: str | None
    status: str
    reason: str


class PairRow(TypedDict):
    """One source/derived pair under one relation: a row of ``run.pairs``."""

    source_id: str
    derived_id: str
    transform: str
    relation: str
    criterion: str
    holds: bool | None
    label: str
    cluster: str
    #: The epoch of both sides of the pair; absent for epoch 1.
    epoch: NotRequired[int]


class CaseRecord(TypedDict):
    """One line of ``cases.jsonl``: a finished case, its trajectory, state and verdicts."""

    #: The run that wrote the record (absent in journals of versions before it, and in records read from an
    #: Inspect AI log): a folder holding another run's journal is refused by it, also where no record has a state.
    run_id: NotRequired[str]
    index: int
    case: CaseDict
    status: str
    error: str | None
    started_at: str
    duration_s: float
    trajectory: TrajectoryDict | None
    environment_state: EnvironmentState | None
    verdicts: list[VerdictRow]
    comparisons: list[ComparisonRow]
    replays: list[ReplayRow]
    receipts: list[ReceiptRow]
    #: The full traceback when the system's own code raised (``error`` holds its one-line reason).
    traceback: NotRequired[str | None]


class StateRecord(TypedDict):
    """One line of ``states.jsonl``: a node of a stored state, under its address.

    ``ref`` is the SHA-256 hex of ``node``'s JSON text as stored. A small state is one node, its plain JSON
    (key order kept, so a state read back is the state written); a large one is a tree of nodes that refer
    to each other (``{"$ref": ADDR}``, ``{"$dict": [ADDR, …]}``, ``{"$list": [ADDR, …]}``; see
    ``_run/states.py``). A record refers to its state by the address of the root node.
    """

    ref: str
    node: Any


class ReplayRecord(TypedDict):
    """One line of ``replays.jsonl``: a control or faulted replay with its trajectory and state."""

    case_id: str
    #: The epoch of the case replayed (absent for epoch 1).
    epoch: NotRequired[int]
    criterion: str
    kind: Literal["control", "fault"]
    tool: str
    fault: str
    checkpoint: int
    change: dict[str, Any] | None
    trajectory: TrajectoryDict | None
    environment_state: EnvironmentState | None
    cached: bool
    error: str | None
    #: The full traceback when the system's ``replay`` raised.
    traceback: NotRequired[str | None]
