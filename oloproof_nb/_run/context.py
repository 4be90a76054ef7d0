"""The run context evaluators see: one :class:`LiveCase` per case, built on the run's :class:`RunSettings`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from .._core.case import Case
from .._core.evaluator import Evaluator, Replay
from .._core.receipts import Evidence, OutcomeContract
from .._core.records import ReplayRecord
from .._core.trajectory import Change, Trajectory
from .observe import Validator, collect_evidence
from .replay_cache import ReplayCache
from .replays import make_replay
from .timeouts import call_with_timeout

__all__ = ["RunSettings", "LiveCase"]

T = TypeVar("T")


@dataclass(frozen=True)
class RunSettings:
    """What every case of a run shares: ids, the timeout, the evaluators, validators, the replay cache and sink."""

    run_id: str
    system_version: str | None
    timeout_s: float | None
    suite_root: Path | None
    evaluators: Sequence[Evaluator]
    validators: Mapping[str, Validator] = field(default_factory=dict)
    #: Where replay records go (``RunStore.append_replay``, or a list on a remote worker).
    append_replay: Callable[[ReplayRecord], None] = lambda record: None
    #: The replay cache; None: replays are not cached.
    cache: ReplayCache | None = None
    #: The fingerprint of the system's code (part of every replay's cache key; None: never cached).
    code_fingerprint: str | None = None


@dataclass
class LiveCase:
    """The :class:`~oloproof_nb._core.evaluator.RunContext` of one case on one system instance."""

    settings: RunSettings
    system: Any
    case_started_at: datetime

    @property
    def evaluators(self) -> Sequence[Evaluator]:
        return self.settings.evaluators

    def call(self, fn: Callable[[], T]) -> T:
        """Call into the system with the run's per-call timeout."""
        return call_with_timeout(fn, self.settings.timeout_s)

    def replay(self, case: Case, recorded: Trajectory, checkpoint: int, change: Change | None, *,
               record: Mapping[str, Any], reproduce: tuple[Trajectory, dict[str, Any] | None] | None) -> Replay:
        s = self.settings
        return make_replay(self.system, case, recorded, checkpoint, change, record=record, reproduce=reproduce,
                           run_id=s.run_id, system_version=s.system_version, code_fingerprint=s.code_fingerprint,
                           timeout_s=s.timeout_s, cache=s.cache, append=s.append_replay)

    def collect_evidence(self, contract: OutcomeContract, system: Any,
                         validators: Sequence[str]) -> tuple[Evidence | None, str | None]:
        allowed = set(validators)
        registry = {name: fn for name, fn in self.settings.validators.items() if not allowed or name in allowed}
        return collect_evidence(contract, system, call=self.call, validators=registry,
                                timeout_s=self.settings.timeout_s, suite_root=self.settings.suite_root)
