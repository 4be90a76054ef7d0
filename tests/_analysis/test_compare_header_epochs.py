"""``oloproof compare``'s header: a run of one epoch pairs cases, and says so
with no epoch clause; 40 cases of 1 epoch are 40 (counted by hand from the library suite: 40 loans)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _epoch_systems import library_suite

import oloproof_nb as op
from oloproof_nb.cli import main


def test_one_epoch_runs_pair_cases_not_case_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for name, system in (("base", "Good"), ("cand", "Forgetful")):
        suite = op.load_suite(library_suite(tmp_path / f"suite-{name}", system,
                                            release={"allow_approximate_methods": True,
                                                     "regression": {"margin": 0.1}}))
        runs.append(op.run(suite, out=tmp_path / "runs" / name, progress=False, epochs=1))
    main(["compare", str(runs[0].directory), str(runs[1].directory)])
    header = capsys.readouterr().out.splitlines()[1]
    assert header.startswith("40 paired cases; diff = candidate - base with its "), header
