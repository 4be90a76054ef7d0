"""The Run: a stored run's manifest, records and tidy frames (no display here; the face adds it)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from .._config.release import ReleaseConfig
from .._config.suite import SuiteConfig, parse_suite_config, release_from_manifest
from .._core.records import CaseRecord, Manifest, PairRow, ReplayRecord, RunVerdictRow
from ..errors import OloproofError, RunDirError
from .._run.store import MANIFEST, read_cases, read_manifest, read_replays
from . import frames

__all__ = ["Run", "load_run"]

R = TypeVar("R", bound="Run")


class Run:
    """A finished (or interrupted) run, read from its directory.

    Every frame is built on first access from the stored records, so a Run
    from ``op.run`` and one from ``op.load_run`` are the same.

    Attributes
    ----------
    directory : Path
        The run directory.
    manifest : Manifest
        Its ``manifest.json``.
    records : list of CaseRecord
        The case records of ``cases.jsonl``, in case order.
    replay_records : list of ReplayRecord
        The records of ``replays.jsonl`` (control and faulted replays).
    config : SuiteConfig
        The suite configuration the run used.
    release : ReleaseConfig or None
        The suite's release.yaml, if it had one.
    """

    def __init__(self, directory: Path, manifest: Manifest, records: list[CaseRecord],
                 replay_records: list[ReplayRecord]) -> None:
        self.directory = directory
        self.manifest = manifest
        self.records = records
        self.replay_records = replay_records
        stored = manifest.suite_config
        self.config: SuiteConfig = parse_suite_config(stored.config, directory / MANIFEST)
        self.release: ReleaseConfig | None = release_from_manifest(stored.release)
        self.labels: dict[str, list[dict[str, Any]]] = stored.labels
        self.suite_root = Path(stored.root) if stored.root else None
        self._by_id = {rec["case"]["id"]: rec for rec in records}

    @classmethod
    def load(cls: type[R], directory: str | Path) -> R:
        """Rebuild a run from its directory.

        A torn last line (the process died mid-write) is ignored; a case recorded
        twice (never written by oloproof) keeps its first record.
        """
        directory = Path(directory)
        if not directory.is_dir():
            raise RunDirError(f"{directory}: no such run directory")
        manifest = read_manifest(directory)
        seen: set[str] = set()
        records = []
        for rec in read_cases(directory):
            cid = rec["case"]["id"]
            if cid not in seen:
                seen.add(cid)
                records.append(rec)
        records.sort(key=lambda rec: rec["index"])
        replays = [r for r in read_replays(directory) if r.get("case_id") in seen]
        return cls(directory, manifest, records, replays)

    # -- identity ---------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def suite_name(self) -> str:
        return self.manifest.suite

    @property
    def system_version(self) -> str | None:
        return self.manifest.system_version

    @property
    def finished(self) -> bool:
        """True when the run completed (``finished_at`` is in the manifest)."""
        return self.manifest.finished_at is not None

    @property
    def criteria(self) -> list[str]:
        return self.config.criteria

    def record(self, case_id: str) -> CaseRecord:
        """The stored record of one case."""
        try:
            return self._by_id[case_id]
        except KeyError:
            raise OloproofError(f"no case {case_id!r} in run {self.run_id}") from None

    # -- frames -----------------------------------------------------------------------------
    @cached_property
    def cases(self) -> pd.DataFrame:
        """One row per case.

        Columns: ``case_id, source_id, transform, cluster, digest, status, answer,
        n_tool_calls, trajectory_length, duration_s, error, has_state, started_at,
        metadata`` (see ``oloproof_nb._analysis.columns.CASES`` for each one's
        dtype and meaning). ``status`` is the trajectory's own (``completed``,
        ``failed``, ``waiting``) or the harness's (``error``, ``timeout``).
        """
        return frames.cases_frame(self.records)

    @cached_property
    def steps(self) -> pd.DataFrame:
        """One row per trajectory step.

        Columns: ``case_id, step, kind, tool, args, result, is_error, role, content``;
        ``kind`` is ``tool_call`` or ``message``, tool fields are empty on message rows.
        """
        return frames.steps_frame(self.records, self.config.tool_errors)

    @cached_property
    def snapshots(self) -> pd.DataFrame:
        """One row per recorded state (``environment_state/v1``).

        Columns: ``case_id, schema, captured_at, state_digest, state, case_digest,
        system_version, run_id``.
        """
        return frames.snapshots_frame(self.records)

    @cached_property
    def changes(self) -> pd.DataFrame:
        """One row per leaf of a recorded state that differs from ``initial_state``.

        Columns: ``case_id, path, before, after`` (ABSENT on the side where the leaf does not exist).
        """
        return frames.changes_frame(self.records)

    @cached_property
    def _run_scope(self) -> tuple[list[RunVerdictRow], list[PairRow]]:
        verdicts: list[RunVerdictRow] = []
        pairs: list[PairRow] = []
        transforms = {t.name: t for t in self.config.metamorphic.transforms}
        for ev in self.config.evaluators:
            if ev.scope == "run":
                v, p = ev.evaluate_run(self.records, self.labels, transforms)
                verdicts += v
                pairs += p
        return verdicts, pairs

    @cached_property
    def verdicts(self) -> pd.DataFrame:
        """One row per case × criterion.

        Columns: ``case_id, cluster, criterion, evaluator, verdict, reason``; ``verdict``
        is ``pass``, ``fail`` or ``missing`` (a missing case never passes).
        """
        return frames.verdicts_frame(self.records, self._run_scope[0])

    @cached_property
    def comparisons(self) -> pd.DataFrame:
        """One row per compared path.

        Columns: ``case_id, criterion, path, expected, actual, ok``.
        """
        return frames.comparisons_frame(self.records)

    @cached_property
    def replays(self) -> pd.DataFrame:
        """One row per fault replay of a case.

        Columns: ``case_id, criterion, tool, fault, checkpoint, control_reproduced,
        recovered, escalated, constraint_broken, verdict, reason, cached``.
        """
        return frames.replays_frame(self.records)

    @cached_property
    def pairs(self) -> pd.DataFrame:
        """One row per metamorphic pair and relation.

        Columns: ``source_id, derived_id, transform, relation, criterion, holds, label, cluster``.
        """
        return frames.pairs_frame(self._run_scope[1])

    @cached_property
    def receipts(self) -> pd.DataFrame:
        """One row per outcome receipt.

        Columns: ``case_id, artifact_id, run_started_at, observed_at, modified_at,
        expected_sha256, observed_digest, digest_kind, validator, validator_exit_code,
        evidence_source, status, reason``.
        """
        return frames.receipts_frame_from_rows([r for rec in self.records for r in rec.get("receipts", [])])

    def summary(self) -> pd.DataFrame:
        """Per criterion: rows and pass / fail / missing counts (raw counts, unrounded)."""
        v = self.verdicts
        if v.empty:
            return pd.DataFrame(columns=["criterion", "evaluator", "n", "passed", "failed", "missing"])
        counts = pd.crosstab([v["criterion"], v["evaluator"]], v["verdict"])
        for col in ("pass", "fail", "missing"):
            if col not in counts.columns:
                counts[col] = 0
        out = counts.reset_index().rename(columns={"pass": "passed", "fail": "failed"})
        out.columns.name = None  # not the crosstab's "verdict" label
        out["n"] = out["passed"] + out["failed"] + out["missing"]
        order = {name: i for i, name in enumerate(self.criteria)}
        out = out.sort_values("criterion", key=lambda s: s.map(order).fillna(len(order)))
        return out[["criterion", "evaluator", "n", "passed", "failed", "missing"]].reset_index(drop=True)


def load_run(directory: str | Path) -> Run:
    """Rebuild a :class:`Run` from its directory (see :meth:`Run.load`)."""
    return Run.load(directory)
