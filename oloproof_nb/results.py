"""The Run: a stored run's records as tidy DataFrames, case panels and an HTML summary."""

from __future__ import annotations

import contextlib
import gc
import html
import threading
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from . import frames
from .errors import OloproofError, RunDirError
from .panel import CasePanel
from .release import ReleaseConfig
from .store import CASES, REPLAYS, read_jsonl, read_manifest
from .suite import SuiteConfig, parse_suite_config, release_from_manifest

__all__ = ["Run", "load_run"]

_GC_LOCK = threading.Lock()
_GC_PAUSES = 0
_GC_WAS_ENABLED = False


class _gc_paused(contextlib.ContextDecorator):
    """Pause Python's cyclic garbage collector while records or frame rows are built in bulk.

    Records and rows are acyclic dicts and lists, freed by reference counting
    alone; with the collector on, its passes walk every record already loaded
    again and again, which made loading 100,000 records about four times
    slower. When the last pause ends, what was built is moved straight to the
    oldest generation (``gc.freeze()`` then ``gc.unfreeze()``, no pass over
    it: it is long-lived) and the collector comes back if it was on. Nested
    and concurrent pauses are counted.
    """

    def __enter__(self) -> None:
        global _GC_PAUSES, _GC_WAS_ENABLED
        with _GC_LOCK:
            if _GC_PAUSES == 0:
                _GC_WAS_ENABLED = gc.isenabled()
                gc.disable()
            _GC_PAUSES += 1

    def __exit__(self, *exc: object) -> None:
        global _GC_PAUSES
        with _GC_LOCK:
            _GC_PAUSES -= 1
            if _GC_PAUSES == 0:
                gc.freeze()
                gc.unfreeze()
                if _GC_WAS_ENABLED:
                    gc.enable()


class Run:
    """A finished (or interrupted) run, read from its directory.

    Every frame is built on first access from the stored records, so a Run
    from :func:`oloproof_nb.run` and one from :func:`load_run` are the same.

    Attributes
    ----------
    cases, steps, snapshots, changes, verdicts, comparisons, replays, pairs, receipts : pandas.DataFrame
        See each frame's columns in the docs (``frames.*_COLUMNS``).
    config : SuiteConfig
        The suite configuration the run used.
    release : ReleaseConfig or None
        The suite's release.yaml, if it had one.
    """

    def __init__(self, directory: Path, manifest: dict[str, Any], records: list[dict[str, Any]],
                 replay_records: list[dict[str, Any]]) -> None:
        self.directory = directory
        self.manifest = manifest
        self.records = records
        self.replay_records = replay_records
        stored = manifest.get("suite_config", {})
        self.config: SuiteConfig = parse_suite_config(stored.get("config", {}), directory / "manifest.json")
        self.release: ReleaseConfig | None = release_from_manifest(stored.get("release"))
        self.labels: dict[str, list[dict[str, Any]]] = stored.get("labels", {})
        self.suite_root = Path(stored["root"]) if stored.get("root") else None
        self._by_id = {rec["case"]["id"]: rec for rec in records}

    # -- identity ---------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    @property
    def suite_name(self) -> str:
        return str(self.manifest.get("suite", ""))

    @property
    def system_version(self) -> str | None:
        return self.manifest.get("system_version")

    @property
    def finished(self) -> bool:
        """True when the run completed (``finished_at`` is in the manifest)."""
        return "finished_at" in self.manifest

    @property
    def criteria(self) -> list[str]:
        return self.config.criteria

    def record(self, case_id: str) -> dict[str, Any]:
        """The stored record of one case."""
        try:
            return self._by_id[case_id]
        except KeyError:
            raise OloproofError(f"no case {case_id!r} in run {self.run_id}") from None

    # -- frames -----------------------------------------------------------------------------
    @cached_property
    @_gc_paused()
    def cases(self) -> pd.DataFrame:
        return frames.cases_frame(self.records)

    @cached_property
    @_gc_paused()
    def steps(self) -> pd.DataFrame:
        return frames.steps_frame(self.records)

    @cached_property
    @_gc_paused()
    def snapshots(self) -> pd.DataFrame:
        return frames.snapshots_frame(self.records)

    @cached_property
    @_gc_paused()
    def changes(self) -> pd.DataFrame:
        return frames.changes_frame(self.records)

    @cached_property
    @_gc_paused()
    def _run_scope(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        verdicts: list[dict[str, Any]] = []
        pairs: list[dict[str, Any]] = []
        transforms = {t.name: t for t in self.config.metamorphic.transforms}
        for ev in self.config.evaluators:
            if ev.scope == "run":
                v, p = ev.evaluate_run(self.records, self.labels, transforms)  # type: ignore[attr-defined]
                verdicts += v
                pairs += p
        return verdicts, pairs

    @cached_property
    @_gc_paused()
    def verdicts(self) -> pd.DataFrame:
        return frames.verdicts_frame(self.records, self._run_scope[0])

    @cached_property
    @_gc_paused()
    def comparisons(self) -> pd.DataFrame:
        return frames.comparisons_frame(self.records)

    @cached_property
    @_gc_paused()
    def replays(self) -> pd.DataFrame:
        return frames.replays_frame(self.records)

    @cached_property
    @_gc_paused()
    def pairs(self) -> pd.DataFrame:
        return frames.pairs_frame(self._run_scope[1])

    @cached_property
    @_gc_paused()
    def receipts(self) -> pd.DataFrame:
        from .outcomes import receipts_frame

        rows = [r for rec in self.records for r in rec.get("receipts", [])]
        return receipts_frame(rows, [r["case_id"] for r in rows])

    # -- views ------------------------------------------------------------------------------
    def panel(self, case_id: str) -> CasePanel:
        """The case panel: input, steps, verdicts and every compared path (HTML in Jupyter)."""
        return CasePanel(self, case_id)

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

    def __repr__(self) -> str:
        status = self.cases["status"].value_counts().to_dict() if len(self.records) else {}
        return (f"Run({self.run_id!r}, suite={self.suite_name!r}, cases={len(self.records)}, "
                f"status={status}, criteria={self.criteria})")

    def _repr_html_(self) -> str:
        esc = html.escape
        status = self.cases["status"].value_counts() if len(self.records) else pd.Series(dtype=int)
        status_txt = ", ".join(f"{esc(str(k))}: {v}" for k, v in status.items()) or "none"
        head = (f"<h4>oloproof run <code>{esc(self.run_id)}</code> — suite <b>{esc(self.suite_name)}</b></h4>"
                f"<p>{len(self.records)} cases ({status_txt}); system version "
                f"<code>{esc(str(self.system_version))}</code>; "
                f"{'finished' if self.finished else '<b>not finished</b> (resume it)'}.</p>")
        summary = self.summary().to_html(index=False, border=0)
        return head + summary + self._next_html()

    def _next_html(self) -> str:
        """'Where to look next': the gate, a failing case per criterion, replays, validity, slices."""
        esc = html.escape
        items = ["<code>op.gate(run)</code>: the release decision, a rate and interval per criterion"]
        v = self.verdicts
        bad = v[v["verdict"] != "pass"] if not v.empty else v
        for criterion in self.criteria:
            sub = bad[bad["criterion"] == criterion]
            if sub.empty:
                continue
            first = str(sub["case_id"].iloc[0])
            items.append(f"<code>{esc(str(criterion))}</code>: {len(sub)} not passed, e.g. "
                         f"<code>run.panel({esc(repr(first))})</code>")
        if len(self.replay_records) or any(rec.get("replays") for rec in self.records):
            items.append("<code>run.replays</code>: every fault replay (control, recovered, escalated)")
        if self.config.metamorphic.transforms:
            items.append("<code>op.validity(run)</code>: are the transforms' pairs labeled and valid?")
        for spec in self.config.slices[:2]:
            items.append(f"<code>op.slice_table(run, {esc(repr(spec))})</code>: pass rate per bin (descriptive)")
        return "<p><b>Where to look next</b></p><ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"


def load_run(directory: str | Path) -> Run:
    """Rebuild a :class:`Run` from its directory.

    A torn last line (the process died mid-write) is ignored; a case recorded
    twice (never written by oloproof) keeps its first record.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise RunDirError(f"{directory}: no such run directory")
    manifest = read_manifest(directory)
    seen: set[str] = set()
    records = []
    with _gc_paused():
        for rec in read_jsonl(directory / CASES):
            cid = rec["case"]["id"]
            if cid not in seen:
                seen.add(cid)
                records.append(rec)
        records.sort(key=lambda rec: rec["index"])
        replays = [r for r in read_jsonl(directory / REPLAYS) if r.get("case_id") in seen]
    return Run(directory, manifest, records, replays)
