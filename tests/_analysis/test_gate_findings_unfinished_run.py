"""The gate's finding that a ``fault_recovery`` tool was never called says so of the records a run holds.

``oloproof report`` (and ``gate``, ``op.gate``) of an unfinished run that had not reached the cases calling the
tool warned ``vacuous check: … no case called tool 'issue_refund', so no fault was replayed``, a check that
"cannot fail as configured", of a run of 2 of 48 cases whose 46 others called it. The finding is still made (a
typo in the tool's name shows as early as it can), saying the run is unfinished, with how many case runs ran.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _vacuous_desk import SYSTEM, suite

import oloproof_nb as op
from oloproof_nb._analysis.gate import vacuous_findings

#: Calls ``issue_refund`` in the last case only (ord-003): a run stopped before it has not called it yet.
LATE_CALL = SYSTEM.replace('''        rec.tool("lookup", self.lookup, order_id=input["order_id"])''',
                           '''        rec.tool("lookup", self.lookup, order_id=input["order_id"])
        if input["order_id"] == "ord-003":
            rec.tool("issue_refund", self.lookup, order_id=input["order_id"])''')
FAULT = {"type": "fault_recovery", "tool": "issue_refund", "fault": "error"}
CRITERION = "recovers_from_error_at_issue_refund"


def _cut(out: Path, keep: int, unfinish: bool) -> op.Run:
    """The run in ``out`` with its first ``keep`` records only; unfinished (no ``finished_at``) when ``unfinish``."""
    lines = (out / "cases.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "cases.jsonl").write_text("".join(lines[:keep]), encoding="utf-8")
    if unfinish:
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        manifest.pop("finished_at")
        (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    shutil.rmtree(out / "frames", ignore_errors=True)  # the columnar copy of the whole run
    return op.load_run(out)


def _finding(run: op.Run) -> tuple[str, bool]:
    with pytest.warns(op.VacuousCheckWarning) as caught:
        g = op.gate(run)
    (message,) = [str(w.message) for w in caught if issubclass(w.category, op.VacuousCheckWarning)]
    row = g.table.set_index("criterion").loc[CRITERION]
    assert message in row["reason"]
    return message, bool(row["vacuous"])


@pytest.mark.parametrize(("unfinish", "partial"), [
    (True, "the run is unfinished (2 of 4 cases recorded)"),
    (False, "only 2 of the run's 4 cases are recorded"),  # a finished run whose journal lost records
])
def test_a_run_that_has_not_reached_the_tool_s_cases_says_so(tmp_path: Path, unfinish: bool, partial: str) -> None:
    folder = suite(tmp_path / "s", [FAULT])
    (folder / "desk.py").write_text(LATE_CALL)
    out = tmp_path / "run"
    whole = op.run(op.load_suite(folder), out=out, progress=False)
    assert "issue_refund" in set(whole.steps["tool"])  # the whole run called it: no finding
    assert CRITERION not in vacuous_findings(whole)
    message, vacuous = _finding(_cut(out, 2, unfinish))
    assert message == (f"fault_recovery (criterion {CRITERION}): no case recorded so far called tool 'issue_refund', "
                       f"so no fault was replayed yet; {partial}, and a case run not recorded may call it; tools "
                       "called: lookup")
    assert vacuous  # still marked: never hidden while it may be so


def test_a_whole_run_that_never_called_the_tool_is_vacuous_as_before(tmp_path: Path) -> None:
    folder = suite(tmp_path / "s", [FAULT])
    message, vacuous = _finding(op.run(op.load_suite(folder), out=tmp_path / "run", progress=False))
    assert message == (f"fault_recovery (criterion {CRITERION}): no case called tool 'issue_refund', so no fault was "
                       "replayed; tools called: lookup") and vacuous


def test_a_pool_with_a_run_of_several_epochs_counts_case_runs(tmp_path: Path) -> None:
    """A pool of a one-epoch run and a two-epoch run counts case runs, not cases (by hand: 2 + 2 of
    4 x 1 + 4 x 2 = 12 recorded), as the gate's unfinished reason of the same pool does; it said "cases" when the
    word followed every run's epochs rather than any run's."""
    folder = suite(tmp_path / "s", [FAULT])
    (folder / "desk.py").write_text(LATE_CALL)
    op.run(op.load_suite(folder), out=tmp_path / "a", progress=False)
    config = folder / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "epochs: 2\n", encoding="utf-8")
    op.run(op.load_suite(folder), out=tmp_path / "b", progress=False)
    _cut(tmp_path / "a", 2, False)
    _cut(tmp_path / "b", 2, True)
    pool = op.load_runs([tmp_path / "a", tmp_path / "b"])
    assert [r.manifest.epochs for r in pool.runs] == [1, 2]
    (message,) = vacuous_findings(pool)[CRITERION]
    assert "so no fault was replayed yet; the run is unfinished (4 of 12 case runs recorded), and" in message


def test_a_finished_run_of_several_epochs_that_lost_records_counts_case_runs(tmp_path: Path) -> None:
    """A finished two-epoch run whose journal kept 2 of its 8 records (by hand: 4 cases x 2
    epochs) says "only 2 of the run's 8 case runs are recorded", the word the unfinished branch uses too; the
    finished branch's "cases" was seen only of one-epoch runs."""
    folder = suite(tmp_path / "s", [FAULT])
    (folder / "desk.py").write_text(LATE_CALL)
    config = folder / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "epochs: 2\n", encoding="utf-8")
    op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    run = _cut(tmp_path / "run", 2, False)
    assert run.finished and run.manifest.epochs == 2
    (message,) = vacuous_findings(run)[CRITERION]
    assert "so no fault was replayed yet; only 2 of the run's 8 case runs are recorded, and" in message
