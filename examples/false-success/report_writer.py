"""The report writer: a tiny agent that writes report files, and the folder it owns.

Each system instance owns a private folder (a temporary directory, removed when the
instance is garbage-collected or the process exits); the suite folder is never written.
``reset`` empties the folder, loads the sales figures of the case and puts back any
earlier reports the case says exist; ``snapshot`` lists the reports by id and size (never
their content); ``observe(artifact_id)`` tells the toolkit where an artifact is, so the
toolkit can stat it, digest it and run its registered validator.

The agent always ends with status ``completed`` and the answer ``done``. Four defects make
that claim false in four different ways:

1. a period without sales is "nothing to report": it writes no file at all;
2. a report that already exists is "already done": it keeps an old draft;
3. the ledger export prints amounts with ``str(float)``, so ``310.40`` becomes ``310.4``;
4. a report filtered to one region leaves out its ``total``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from datetime import datetime
from pathlib import Path
from typing import Any

import oloproof_nb as op

__all__ = ["ReportWriter", "render_ledger", "render_report"]


def render_report(artifact_id: str, period: str, rows: list[dict[str, Any]], region: str | None = None,
                  with_total: bool = True) -> bytes:
    """A revenue report as JSON bytes: ``artifact_id, period, region, rows, total``."""
    report: dict[str, Any] = {"artifact_id": artifact_id, "period": period, "region": region, "rows": rows}
    if with_total:
        report["total"] = round(sum(row["amount"] for row in rows), 2)
    return (json.dumps(report, indent=2, sort_keys=True) + "\n").encode("utf-8")


def render_ledger(rows: list[dict[str, Any]], amount_format: str = "{:.2f}") -> bytes:
    """A ledger export as CSV bytes: ``date,region,amount`` with two-decimal amounts."""
    lines = ["date,region,amount"]
    lines += [f"{row['date']},{row['region']},{amount_format.format(row['amount'])}" for row in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


class ReportWriter:
    """Writes revenue reports (JSON) and ledger exports (CSV) into a folder it owns.

    Input: ``{"request": str, "kind": "revenue_report" | "quarterly_summary" | "ledger_export",
    "period": str, "region": str (optional), "artifact_id": str}``.
    State: ``{"sales": {period: [{date, region, amount}, ...]},
    "earlier_reports": {artifact_id: {"period": str, "written_at": ISO-8601}}}``.
    """

    version = "1.0"

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="oloproof-report-writer-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)
        self.sales: dict[str, list[dict[str, Any]]] = {}

    # -- the sandbox ------------------------------------------------------------------------
    def _path(self, artifact_id: str) -> Path:
        return self.folder / artifact_id

    def reset(self, state: dict[str, Any]) -> None:
        for child in self.folder.iterdir():
            child.unlink()
        self.sales = state.get("sales", {})
        for artifact_id, earlier in state.get("earlier_reports", {}).items():
            path = self._path(artifact_id)
            path.write_bytes(render_report(artifact_id, earlier["period"], self.sales.get(earlier["period"], [])))
            stamp = datetime.fromisoformat(earlier["written_at"].replace("Z", "+00:00")).timestamp()
            os.utime(path, (stamp, stamp))

    def snapshot(self) -> dict[str, Any]:
        files = sorted(self.folder.iterdir())
        return {"reports": {p.name: {"bytes": p.stat().st_size} for p in files}}

    def observe(self, artifact_id: str) -> Path | None:
        """Where the artifact is (the toolkit observes it), or None when there is no such file."""
        path = self._path(artifact_id)
        return path if path.is_file() else None

    # -- the agent --------------------------------------------------------------------------
    def run(self, request: dict[str, Any]) -> op.Trajectory:
        kind, period, artifact_id = request["kind"], request["period"], request["artifact_id"]
        region = request.get("region")
        rows = [row for row in self.sales.get(period, []) if region is None or row["region"] == region]
        steps: list[Any] = [op.ToolCall(tool="load_sales", args={"period": period, "region": region},
                                        result={"ok": True, "rows": len(rows)})]
        if not rows:  # defect 1: nothing to report, so nothing is written
            steps.append(op.Message(role="assistant", content="No sales in that period; nothing to write."))
        elif self._path(artifact_id).exists():  # defect 2: an existing file counts as done, however old
            steps.append(op.Message(role="assistant", content="That report already exists."))
        else:
            if kind == "ledger_export":  # defect 3: str(float) drops a trailing zero
                data = render_ledger(rows, amount_format="{}")
            else:  # defect 4: a regional report leaves out its total
                data = render_report(artifact_id, period, rows, region=region, with_total=region is None)
            self._path(artifact_id).write_bytes(data)
            steps.append(op.ToolCall(tool="write_file", args={"artifact_id": artifact_id},
                                     result={"ok": True, "bytes": len(data)}))
        return op.Trajectory(steps=steps, answer="done", status="completed")
