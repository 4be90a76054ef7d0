"""The run context evaluators see: one :class:`LiveCase` per case, built on the run's :class:`RunSettings`."""

from __future__ import annotations

import os
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from .._config.imports import load_check
from .._config.suite_config import SuiteConfig
from .._core.canonical import utc_now
from .._core.case import Case
from .._core.evaluator import Evaluator, Replay, Reproduce, UserCall
from .._core.receipts import Evidence, OutcomeContract
from .._core.records import ReplayRecord
from .._core.trajectory import DEFAULT_TOOL_ERRORS, Change, ToolErrorRule, Trajectory
from ..errors import ConfigError, OloproofError, quote, storable
from .observe import Validator, collect_evidence, locator_path
from .replay_cache import ReplayCache
from .replays import make_replay
from .sandbox import failure_reason
from .systems import ReplayPrints
from .timeouts import CaseTimeout, call_with_timeout

__all__ = ["RunSettings", "LiveCase", "ShownArtifacts"]

T = TypeVar("T")


class ShownArtifacts:
    """The versions of promised artifacts observed for the cases of a run (on this process), and when.

    A version is an artifact id with the modification time and digest observed. A case shown a version
    that an earlier case was shown before this case started gets the earlier case's artifact: the
    freshness margin (``clock_slack_s``) cannot tell it from a new one when the earlier case ended a few
    milliseconds before (epochs of a case and a source's metamorphic copies run back to back). Once more
    than :data:`LIMIT` versions are held, those noted more than :data:`KEEP` ago are dropped, oldest first.
    Age alone does not make a version useless: a case that started right after the version was written, and
    is observed minutes later (an agent that thinks for minutes), must still find it; dropped by age at any
    note, another worker's case observed meanwhile made the case before's row ``verified`` in the next.
    """

    #: How long a version is remembered at least: more than ``clock_slack_s`` can be (60 s).
    KEEP = timedelta(seconds=120)
    #: How many versions are held before any is dropped (a few tens of MB at most).
    LIMIT = 100_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: artifact id -> {version: when first observed}; and the notes in the order they were taken (to drop)
        self._by_artifact: dict[str, dict[tuple[Any, ...], datetime]] = {}
        self._order: deque[tuple[datetime, tuple[Any, ...]]] = deque()

    def __getstate__(self) -> dict[str, Any]:  # a copy sent to another process starts empty (no lock to send)
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def shown_before(self, evidence: Evidence, started: datetime) -> bool:
        """Whether ``evidence``'s version was observed before ``started``; notes it as observed now."""
        if evidence.modified_at is None:
            return False  # no time to tell versions apart (and no freshness to show)
        key = (evidence.artifact_id, evidence.modified_at, evidence.sha256, evidence.digest_kind)
        return self._note(key, utc_now()) < started

    def note_receipts(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Note the versions a case's receipts record as observed now (the run's process, for its workers)."""
        for row in rows:
            modified = row.get("modified_at")
            if isinstance(modified, str):
                at = datetime.fromisoformat(modified.replace("Z", "+00:00"))
                self._note((row["artifact_id"], at, row.get("observed_digest"), row.get("digest_kind")), utc_now())

    def entries(self, artifact_ids: Iterable[str]) -> list[tuple[tuple[Any, ...], datetime]]:
        """The versions of these artifacts noted, with when (to hand to the worker that runs their next case)."""
        with self._lock:
            return [item for aid in set(artifact_ids) for item in self._by_artifact.get(aid, {}).items()]

    def seed(self, entries: Iterable[tuple[tuple[Any, ...], datetime]]) -> None:
        """Take versions noted elsewhere (by the run's process, from other workers' cases)."""
        for key, at in entries:
            self._note(key, at)

    def _note(self, key: tuple[Any, ...], at: datetime) -> datetime:
        """Note ``key`` as observed at ``at`` (the earliest time is kept); its first time. Drops old entries."""
        with self._lock:
            versions = self._by_artifact.setdefault(key[0], {})
            first = versions.get(key)
            if first is None or at < first:
                versions[key] = first = at
                self._order.append((at, key))
            cutoff = utc_now() - self.KEEP
            while len(self._order) > self.LIMIT and self._order[0][0] < cutoff:
                when, old = self._order.popleft()
                kept = self._by_artifact.get(old[0])
                if kept is not None and kept.get(old) == when:
                    del kept[old]
                    if not kept:
                        del self._by_artifact[old[0]]
        return first


@dataclass(frozen=True)
class RunSettings:
    """What every case of a run shares: ids, the timeout, the evaluators, validators, the replay cache and sink."""

    run_id: str
    system_version: str | None
    timeout_s: float | None
    suite_root: Path | None
    evaluators: Sequence[Evaluator]
    validators: Mapping[str, Validator] = field(default_factory=dict)
    #: The suite's python checks, ``{"module:function": callable}``, as imported when the suite loaded (their
    #: code is what the run's digests record); a check not in it is imported from the suite folder.
    checks: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    #: The suite's rule for a tool result that reports a failure (a failed escalation hands nothing over).
    tool_errors: ToolErrorRule = DEFAULT_TOOL_ERRORS
    #: Where replay records go (``RunStore.append_replay``, or a list on a remote worker).
    append_replay: Callable[[ReplayRecord], None] = lambda record: None
    #: The replay cache; None: replays are not cached.
    cache: ReplayCache | None = None
    #: The fingerprint of the system's code and settings (``systems.replay_fingerprint``; part of every replay's
    #: cache key; None: never cached).
    code_fingerprint: str | None = None
    #: What keys each instance's replays, read as it was built (``systems.ReplayPrints``): a factory's instances may
    #: be built with other settings than the first one's. None: :attr:`code_fingerprint` keys every instance's.
    replay_prints: ReplayPrints | None = None
    #: The artifact versions observed so far (an artifact an earlier case left is ``stale``).
    shown: ShownArtifacts = field(default_factory=ShownArtifacts, compare=False)
    #: Called with ``(case id, epoch, False)`` as each case run starts on a system of this process, and with
    #: ``True`` when it has finished but its record waits for another thread to append it (``RunStore.note_case``:
    #: what was in flight when the process ended).
    note_case: Callable[[str, int, bool], None] = lambda case_id, epoch, finished: None

    @classmethod
    def of(cls, config: SuiteConfig, **fields: Any) -> RunSettings:
        """The settings of a run of a suite with ``config``: its ``case_timeout_s``, its evaluators and its rule for
        tool errors, with ``fields`` (every other field, by name) as given."""
        return cls(timeout_s=config.case_timeout_s, evaluators=list(config.evaluators), tool_errors=config.tool_errors,
                   **fields)


def located_file(contract: OutcomeContract, settings: RunSettings) -> tuple[int, int, int] | None:
    """``(modification time in ns, size, inode)`` of the file at the contract's ``locator``, relative to the
    suite folder as :func:`collect_evidence` observes it; None when there is no such file (or no locator).

    Only the locator: a system that places its artifacts itself (``observe``) is not asked before its run,
    which could block or leave traces in the state being judged.
    """
    path = locator_path(contract, settings.suite_root)
    if path is None:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


#: Why a replay that raised after another replay of its case raised may be the first one's doing: the run was given
#: one system instance, so the replays of a case run on it whatever an earlier one left there.
ON_THE_GIVEN_INSTANCE = ("after an earlier replay of this case raised on the one system instance given to the run, "
                         "which cannot be replaced: give the class or a factory to run each replay after one that "
                         "raised on a fresh instance")


@dataclass
class LiveCase:
    """The :class:`~oloproof_nb._core.evaluator.RunContext` of one case on one system instance."""

    settings: RunSettings
    system: Any
    case_started_at: datetime
    #: The promised artifact's file as the sandbox's reset left it (:func:`located_file`); None: not located,
    #: or no such file then.
    reset_file: tuple[int, int, int] | None = None
    #: Why the system instance takes no more calls in this case: a call of the case timed out and may still be
    #: running on it, changing its sandbox (None: none did). Set by the case (``_run/case``).
    stuck: CaseTimeout | None = None
    #: The checkpoints where a control replay in this case ran live: the cache held no control that reproduces
    #: this recording (none, or one made in another world: a file the system reads, a service it calls), so the
    #: faulted replays from there run live too, never the cached ones of that other world. A checkpoint stays
    #: here for the case: another fault's control there is the live one just stored, taken from the cache, and
    #: its faulted replay in the cache is still of that other world.
    live_controls: set[int] = field(default_factory=set)
    #: A replay of this case ran on the instance and raised (or returned what is not a trajectory): the case's next
    #: replay (:attr:`renew`) and the next case run on a fresh instance, as after a case that raised. What the raise
    #: left on this one (a transaction the agent opened on its own connection, the lock it holds) outlives the
    #: sandbox's reset: the next case's reset met ``database is locked``, an error of a case whose agent never ran.
    replay_raised: bool = False
    #: Builds a fresh instance of the system, as the runner does after a failed case (None: the run was given one
    #: instance, which cannot be replaced). After a replay that raised, the case's next live one runs on one: on the
    #: instance the raise left, a later fault criterion's replay met ``database is locked`` in the reset.
    renew: Callable[[], Any] | None = None
    #: Why :attr:`renew` could build no fresh instance for this case (None: it has not failed): the case's later
    #: replays are not run for that reason, never built for again (a constructor that hangs cost every later replay
    #: of the case its ``case_timeout_s``, each one a call left running).
    not_renewed: str | None = None

    def abandon(self, timeout: CaseTimeout) -> None:
        """A call of this case timed out: later replays and observations of the case are not run on this
        instance (its abandoned call may still write into their sandbox) but missing, saying why."""
        if self.stuck is None:
            self.stuck = CaseTimeout(timeout.seconds, f"timeout: not run: an earlier call of this case exceeded "
                                     f"case_timeout_s={timeout.seconds:g} and may still be running on this "
                                     "system instance")

    def _refuse_if_stuck(self) -> None:
        """Raise the :class:`CaseTimeout` of :meth:`abandon` once a call of this case timed out, else nothing."""
        if self.stuck is not None:
            raise CaseTimeout(self.stuck.seconds, str(self.stuck))

    def untouched_since_reset(self, contract: OutcomeContract) -> bool:
        """Whether the artifact at the contract's locator is the file the sandbox's reset left, unchanged."""
        return self.reset_file is not None and located_file(contract, self.settings) == self.reset_file

    def shown_to_an_earlier_case(self, evidence: Evidence) -> bool:
        """Whether this version of the artifact (its modification time and digest) was observed for another
        case of the run before this case started (see :class:`ShownArtifacts`)."""
        return self.settings.shown.shown_before(evidence, self.case_started_at)

    @property
    def evaluators(self) -> Sequence[Evaluator]:
        return self.settings.evaluators

    @property
    def tool_errors(self) -> ToolErrorRule:
        return self.settings.tool_errors

    def call(self, fn: Callable[[], T]) -> T:
        """Call into the system with the run's per-call timeout (:class:`CaseTimeout` once the instance is stuck)."""
        self._refuse_if_stuck()
        return call_with_timeout(fn, self.settings.timeout_s)

    def replay(self, case: Case, recorded: Trajectory, checkpoint: int, change: Change | None, *,
               record: Mapping[str, Any], reproduce: Reproduce | None) -> Replay:
        """One replay on this case's system instance (:func:`~.replays.make_replay`: cached, or run through the
        sandbox routine, and recorded); :class:`CaseTimeout` once a call of the case timed out."""
        self._refuse_if_stuck()  # a replay on a stuck instance would share its sandbox with the abandoned call
        raised_before = self.replay_raised
        renewing = raised_before and self.renew is not None
        if renewing and self.not_renewed is not None:
            return Replay(error=self.not_renewed)
        s = self.settings
        prints = s.replay_prints
        try:
            replay = make_replay(self.system, case, recorded, checkpoint, change, record=record, reproduce=reproduce,
                                 run_id=s.run_id, system_version=s.system_version,
                                 code_fingerprint=s.code_fingerprint if prints is None else prints.of(self.system),
                                 timeout_s=s.timeout_s, cache=s.cache, append=s.append_replay,
                                 from_cache=change is None or checkpoint not in self.live_controls,
                                 live_on=self._renewed if renewing else None,
                                 fingerprint_of=None if prints is None else prints.of)
        except OloproofError:
            if not renewing or self.not_renewed is None:
                raise
            return Replay(error=self.not_renewed)  # the case's record is kept; the run's rebuild after it stops it
        if change is None and not replay.cached:
            self.live_controls.add(checkpoint)
        if replay.error is not None and not replay.cached:
            self.replay_raised = True
            if raised_before and self.renew is None:  # on the one instance the run was given, as the raise left it
                replay = replace(replay, error=f"{replay.error} ({ON_THE_GIVEN_INSTANCE})")
        return replay

    def _renewed(self) -> Any:
        """A fresh instance (:attr:`renew`) for a replay that runs live after one of the case raised; a replay the
        cache gives builds none (a cached one whose build failed was ``missing``, a fresh instance built for nothing
        the rest of the time). :class:`OloproofError` when none can be built (:attr:`not_renewed` says why)."""
        assert self.renew is not None
        try:
            self.system = self.renew()
        except OloproofError as exc:
            self.not_renewed = (f"not run: a replay of this case raised and no fresh system instance could be built "
                                f"for the next: {exc}")
            raise
        self.replay_raised = False
        return self.system

    def collect_evidence(self, contract: OutcomeContract, system: Any, validators: Sequence[str], *,
                         observe_timeout_s: float | None = None,
                         max_artifact_bytes: int | None = None) -> tuple[Evidence | None, str | None]:
        """Observe the contract's artifact (:func:`~.observe.collect_evidence`) with the run's validators, only
        those named in ``validators`` when it names any; a limit left None keeps the observer's default."""
        allowed = set(validators)
        registry = {name: fn for name, fn in self.settings.validators.items() if not allowed or name in allowed}
        limits: dict[str, Any] = {"observe_timeout_s": observe_timeout_s, "max_artifact_bytes": max_artifact_bytes}
        return collect_evidence(contract, system, call=self.call, validators=registry,
                                timeout_s=self.settings.timeout_s, suite_root=self.settings.suite_root,
                                **{k: v for k, v in limits.items() if v is not None})

    def call_check(self, spec: str, *args: Any) -> UserCall:
        """Call a suite's Python check under the run's timeout; an exception it raises is reported with its traceback.

        The check is the one imported when the suite loaded (``RunSettings.checks``): an edit of its file
        during the run does not change what the run judges by. One not there is imported from the suite
        folder by ``_config``.
        """
        fn = self.settings.checks.get(spec)
        if fn is None:
            root = self.settings.suite_root
            if root is None:
                return UserCall(error=f"check {quote(spec)}: the run has no suite folder to import it from")
            try:
                fn = load_check(root, spec)
            except ConfigError as exc:
                return UserCall(error=f"check {quote(spec)} cannot be loaded: {exc.message}")
        try:
            return UserCall(value=call_with_timeout(lambda: fn(*args), self.settings.timeout_s, on_system=False))
        except CaseTimeout as exc:
            return UserCall(error=failure_reason(exc))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's check raised: that case is missing
            return UserCall(error=failure_reason(exc), traceback=storable(traceback.format_exc()))
