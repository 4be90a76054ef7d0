"""A baseline made with other validity labels than the run is refused, and a pair judged on one side only is named
as such, the run's side first: the run was made before ord-001~injected was judged (23 of 24 labeled: the
transform unchecked, no copy left out), the baseline after (24 of 24, ord-018~injected invalid: left out)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _metamorphic_systems import relabel

import oloproof_nb as op


def test_a_pair_the_run_had_no_label_for_is_named_on_the_run_side(example_suite: Path, tmp_path: Path) -> None:
    label_file = example_suite / "labels" / "injected.jsonl"
    relabel(label_file, {"ord-001~injected": None})
    run = op.run(op.load_suite(example_suite), out=tmp_path / "run", progress=False)
    relabel(label_file, {"ord-001~injected": True})
    idle = op.baseline(example_suite, out=tmp_path / "idle", progress=False)
    said = (rf"a baseline made with other validity labels than run {re.escape(run.run_id)} \(transform injected: "
            rf"ord-001~injected is not labeled in run {re.escape(run.run_id)} and labeled valid in the baseline\)")
    with pytest.warns(UserWarning), pytest.raises(op.OloproofError, match=said):
        op.gate(run, baseline=idle)
