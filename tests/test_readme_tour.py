"""The README's tour, sections 1 to 5, runs as a notebook user pastes it: every Python block in order, in one
namespace, in a folder holding the two examples as the README's commands make them (review U5).

The numbers the README states beside those blocks are checked against counts taken from the frames.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb.examples import init_example

README = Path(__file__).resolve().parent.parent / "README.md"


def _tour_blocks(first: str, last: str) -> list[str]:
    """The ```python blocks of the README from heading ``first`` up to (not including) heading ``last``."""
    text = README.read_text(encoding="utf-8")
    region = text[text.index(first):text.index(last)]
    return re.findall(r"```python\n(.*?)```", region, re.S)


def test_sections_1_to_5_run_as_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: section 5's last line called op.classify_outcome(contract, evidence, run_started_at=t_start)
    # with none of the three defined (NameError)
    init_example("stateful-agent", tmp_path / "demo")  # oloproof init --example stateful-agent demo
    init_example("false-success", tmp_path / "fs")  # oloproof init --example false-success fs
    monkeypatch.chdir(tmp_path)
    blocks = _tour_blocks("## A tour", "### 6. The release gate")
    assert len(blocks) >= 7 and any("classify_outcome" in block for block in blocks)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for block in blocks:
        exec(compile(block, "<README>", "exec"), namespace)  # the README's own snippets, as pasted

    run, fs, receipt = namespace["run"], namespace["fs"], namespace["receipt"]
    verdicts = run.verdicts
    passed = verdicts[verdicts.verdict == "pass"].groupby("criterion").size()
    scored = verdicts.groupby("criterion").size()
    # §2: refunds_follow_policy 38 of 47; §4: same_state_under_injected 14 of 23; §3: 38 rows of run.replays
    assert (passed["refunds_follow_policy"], scored["refunds_follow_policy"]) == (38, 47)
    assert (passed["same_state_under_injected"], scored["same_state_under_injected"]) == (14, 23)
    assert len(run.replays) == 38
    # §5: six cases, all completed with answer "done"; 2 verified, and one of each failure the table names
    cases = fs.cases
    assert len(cases) == 6 and set(cases.status) == {"completed"} and set(cases.answer) == {"done"}
    assert Counter(fs.receipts.status) == {"verified": 2, "missing": 1, "stale": 1, "hash_mismatch": 1,
                                           "validator_failed": 1}
    summary = namespace["op"].outcome_summary(fs.receipts).iloc[0]
    assert summary[["expected", "verified", "failed"]].tolist() == [6, 2, 4]
    assert summary["verified_share"] == pytest.approx(2 / 6) and summary["check_coverage"] == 1.0
    # the pure classifier: a file modified the day before the run started is stale, whatever its validator said
    assert receipt.status == "stale"
    assert receipt.reason == ("stale: modified at 2026-07-24T09:00:00.000000Z, before the run started at "
                              "2026-07-25T14:00:00.000000Z")
