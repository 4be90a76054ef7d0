"""Evidence a system's ``observe()`` reports that the toolkit could not hold stopped the whole run as an internal
error (``OverflowError``; ``ValidationError`` for ``Receipt``; ``UnicodeEncodeError`` as the journal was written).
Now a time with no UTC value is invalid evidence (``unverified``) and text quoting a name that is not UTF-8 is kept
as its escape: every case gets its receipt and verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op

REPORTER = '''
from datetime import datetime, timedelta, timezone


class Reporter:
    """Reports, for its artifacts, the evidence input["report"] names."""

    def reset(self, state):
        pass

    def snapshot(self):
        return {}

    def run(self, input):
        self.how = input["report"]
        self.done_at = datetime.now(timezone.utc)
        return {"steps": [], "answer": "done", "status": "completed"}

    def observe(self, artifact_id):
        now = datetime.now(timezone.utc)
        if self.how == "never":  # "never modified", as datetime.min in the local time zone
            return {"artifact_id": artifact_id, "observed_at": now,
                    "modified_at": datetime.min.replace(tzinfo=timezone(timedelta(hours=2)))}
        # its own check could not open a file whose name is not UTF-8
        return {"artifact_id": artifact_id, "observed_at": now, "modified_at": self.done_at,
                "evidence_source": "share-\\udcff", "validator": "schema",
                "validator_error": "schema: no such file: report-\\udce9.json"}
'''


@pytest.mark.parametrize(("report", "reason"), [
    ("never", "unverified: observe() returned invalid evidence: modified_at: datetime 0001-01-01T00:00:00+02:00 is "
              "outside the years 1–9999 in UTC"),
    ("surrogate", "unverified: schema: no such file: report-\\udce9.json"),
])
def test_evidence_the_toolkit_cannot_hold_as_given_leaves_the_run_going(make_suite: Any, tmp_path: Path,
                                                                        report: str, reason: str) -> None:
    cases = [{"id": f"c{i}", "input": {"report": report}, "outcome": {"artifact_id": f"a{i}", "validator": "schema"}}
             for i in (1, 2)]
    root = make_suite(cases, evaluators=[{"type": "outcome_contract"}], system="sysmod:Reporter",
                      system_code=REPORTER, validators={"schema": "checks:schema"})
    (root / "checks.py").write_text("def schema(path):\n    return True\n", encoding="utf-8")
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    assert run.receipts["status"].tolist() == ["unverified", "unverified"]
    assert run.receipts["reason"].tolist() == [reason, reason]
    assert run.verdicts["verdict"].tolist() == ["fail", "fail"]
    again = op.load_run(tmp_path / "run")
    assert again.receipts["reason"].tolist() == [reason, reason]
