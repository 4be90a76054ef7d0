"""``_analysis/baseline.py``: which case a baseline lacks, and how the idle rate of a reduced criterion is made
(edges the other baseline tests leave unpinned).

Suite: 4 cases on the scripted sandbox (``other.k`` tells them apart); c0, c1 expect the agent to write
``acct.n`` (the idle agent leaves it at 0), c2, c3 expect no change. Hand count for the no-op system:
state_matches 2 of 4 rows per epoch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from math import comb
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main

CASES = [{"id": f"c{i}", "input": {"answer": "done", "writes": [{"path": ["acct", "n"], "value": 1}] if i < 2 else []},
          "initial_state": {"acct": {"n": 0}, "other": {"k": i}},
          "expected": {"answer": "done", "state": {"acct": {"n": 1 if i < 2 else 0}}}} for i in range(4)]
EVALUATORS = [{"type": "state_matches"}]
RELEASE = {"criteria": {"state_matches": 0.3}}


def test_a_baseline_missing_a_case_of_the_run_names_that_case(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """The baseline was made before c3 was added: the run holds a case the baseline does not, so the message
    names c3, the one case in either set alone (by hand: {c0..c3} ^ {c0..c2} = {c3}). Mutant: the cases of the
    baseline alone (an empty set here) were named, and ``differ[0]`` raised IndexError, not the one-line error."""
    older = make_suite(CASES[:3], evaluators=EVALUATORS, release=RELEASE)
    idle = op.baseline(older, progress=False)
    run = op.run(make_suite(CASES, evaluators=EVALUATORS, release=RELEASE), out=tmp_path / "run", progress=False)
    with pytest.raises(op.OloproofError, match=r"a baseline of other cases than run .*\(1 case\(s\) added, removed "
                                               r"or edited, first 'c3'\): another version of suite 'tiny'"):
        op.gate(run, baseline=idle)


def test_the_reduced_idle_rate_is_the_mean_of_the_cases_values(make_suite: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    """Two epochs, pass^2: the idle agent fails c0 and c1 in both epochs and passes c2 and c3 in both, so the cases'
    values are C(0, 2)/C(2, 2) = 0 twice and C(2, 2)/C(2, 2) = 1 twice, mean 0.5 (worked out below from the
    baseline's verdict rows with pandas and math.comb): below the threshold 0.6, so not ``passes_when_idle``.
    Mutant: the largest value, not the mean (1.0, which met the threshold: a false red flag)."""
    suite = make_suite(CASES, evaluators=EVALUATORS, epochs=2,
                       release={"criteria": {"state_matches": {"threshold": 0.6, "reduce": "pass^2"}}})
    idle = op.baseline(suite, progress=False)
    rows = idle.run.verdicts
    passes = (rows["verdict"] == "pass").groupby(rows["case_id"]).agg(["sum", "size"])
    assert passes["sum"].tolist() == [0, 0, 2, 2] and passes["size"].tolist() == [2] * 4  # the hand count above
    by_hand = sum(comb(int(c), 2) / comb(int(n), 2) for c, n in zip(passes["sum"], passes["size"], strict=True)) / 4
    assert by_hand == 0.5
    run = op.run(suite, out=tmp_path / "run", progress=False)
    row = op.gate(run, baseline=idle).table.set_index("criterion").loc["state_matches"]
    assert (row["reduce"], row["noop_rate"], bool(row["passes_when_idle"])) == ("pass^2", by_hand, False)


def test_a_baseline_of_fewer_epochs_than_a_reduction_needs_is_refused(make_suite: Callable[..., Path],
                                                                      tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The baseline was made with the suite's 1 epoch; the gate reduces state_matches with pass^2 (given to it, not
    in the release.yaml the baseline was made with). No case of the baseline has 2 rows, so its noop_rate read NaN
    and passes_when_idle False, though the idle agent passes c2 and c3 in every epoch: the red flag was gone
    without a word. The gate refuses it in one line naming the baseline's folder, its epochs and the k asked,
    as it refuses a run of fewer epochs than a reduction's k; the command line exits 2."""
    suite = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)
    idle = op.baseline(suite, progress=False)
    assert idle.run.epochs == 1
    run = op.run(suite, out=tmp_path / "run", epochs=2, progress=False)
    reduced = {"state_matches": {"threshold": 0.4, "reduce": "pass^2"}}
    said = (rf"{idle.run.directory}: the baseline has epochs=1, and state_matches is gated with reduce: pass\^2, "
            r"which needs 2 epochs of each case")
    with pytest.raises(op.OloproofError, match=said):
        op.gate(run, baseline=idle, criteria=reduced)
    release = tmp_path / "release-pass2.yaml"
    release.write_text("criteria:\n  state_matches: {threshold: 0.4, reduce: pass^2}\n", encoding="utf-8")
    code = main(["gate", str(run.directory), "--release", str(release), "--baseline", str(idle.run.directory)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and re.search(said, err), err
    # a baseline of the epochs pass^2 needs gives the idle agent's pass^2 (c2 and c3 pass both epochs: 2 of 4)
    again = op.baseline(make_suite(CASES, evaluators=EVALUATORS, release={"criteria": reduced}), progress=False)
    assert again.run.epochs == 2
    row = op.gate(run, baseline=again.run.directory, criteria=reduced).table.set_index("criterion").loc["state_matches"]
    assert (row["noop_rate"], bool(row["passes_when_idle"])) == (0.5, True)
