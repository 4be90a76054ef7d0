"""Acceptance checks for the report writer's artifacts, registered in oloproof.yaml ``validators``."""

from __future__ import annotations

import json
from pathlib import Path

REPORT_KEYS = {"artifact_id", "period", "region", "rows", "total"}


def report_schema(path: Path) -> bool:
    """Accept a revenue report: JSON with every key of ``REPORT_KEYS``, numeric rows, and a total that adds up."""
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    if not isinstance(report, dict) or set(report) != REPORT_KEYS or not isinstance(report["rows"], list):
        return False
    amounts = [row.get("amount") for row in report["rows"] if isinstance(row, dict)]
    if len(amounts) != len(report["rows"]) or not all(isinstance(a, (int, float)) for a in amounts):
        return False
    total = report["total"]
    return isinstance(total, (int, float)) and abs(total - sum(amounts)) < 0.005
