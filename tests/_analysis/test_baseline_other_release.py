"""A baseline made by another oloproof_nb release is refused, as ``op.load_runs`` refuses to pool runs of
two releases (they "may judge, reset or replay a case otherwise"), and a resume to mix them.

Before, ``op.gate(run, baseline=…)`` and ``oloproof gate RUN --baseline DIR`` took such a baseline without a word
and set its rates (``noop_rate``, ``passes_when_idle``) beside the run's, made by this release's rules.
Suite: 2 cases; the idle agent gives no answer and keeps ``other`` (hand count: answer_matches 0/2, other_kept 2/2).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main

CASES = [{"id": f"c{i}", "input": {"answer": "done"}, "initial_state": {"other": {"k": i}},
          "expected": {"answer": "done"}} for i in range(2)]
EVALUATORS = [{"type": "answer_matches"}, {"type": "state_unchanged", "criterion": "other_kept", "paths": ["other"]}]


def test_a_baseline_of_another_release_is_refused(make_suite: Callable[..., Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = make_suite(CASES, evaluators=EVALUATORS, release={"criteria": {"other_kept": 0.1}})
    run = op.run(root, progress=False)
    idle = op.baseline(root, progress=False).run.directory
    taken = op.gate(run, baseline=idle).table.set_index("criterion")["noop_rate"].to_dict()
    assert taken == {"answer_matches": 0.0, "other_kept": 1.0}  # the same release: taken (hand count)
    manifest = idle / "manifest.json"
    stored = json.loads(manifest.read_text(encoding="utf-8"))
    stored["oloproof_nb"] = "0.1.0"  # as the first release's baselines say
    manifest.write_text(json.dumps(stored), encoding="utf-8")
    before = manifest.read_bytes()
    said = (f"{idle}: a baseline made by oloproof_nb 0.1.0, run {run.run_id} by {op.__version__}, which may judge, "
            "reset or replay a case otherwise, so its rates are judged by another release's rules; make one with "
            "op.baseline(suite) or oloproof run --baseline")
    with pytest.raises(op.OloproofError) as refused:
        op.gate(run, baseline=idle)
    assert str(refused.value) == said
    assert main(["gate", str(run.directory), "--baseline", str(idle)]) == 2
    assert capsys.readouterr().err == f"oloproof: error: {said}\n"
    assert manifest.read_bytes() == before
