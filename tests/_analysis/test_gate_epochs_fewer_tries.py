"""A run that tried each case fewer times than its oloproof.yaml's ``epochs`` has no release decision.

``oloproof run SUITE --epochs 1`` (or ``op.run(suite, epochs=1)``) on a suite of ``epochs: 3`` gated the regressed
desk below PASS, exit 0, without a word: it lends a book the first time it is asked and answers "lent" without
lending on every later try of the same request, so the suite's own 3 epochs pass ``state_matches`` on 40 of 120
case runs (FAIL) while the first try alone passes 40 of 40. Counts here are by hand from the desk's rule.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from _epoch_systems import library_suite
from scipy import stats

import oloproof_nb as op

CASES = 40


def _suite(root: Path, epochs: int = 3) -> Path:
    """The library suite run by the regressed desk (``Forgetful``: it lends only on a request's first try)."""
    release = {"allow_approximate_methods": True, "criteria": {"answer_matches": 0.8, "state_matches": 0.8}}
    return library_suite(root, "Forgetful", epochs=epochs, release=release)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _suite(tmp_path_factory.mktemp("f40") / "library")


def _rows(g: op.Gate, criterion: str) -> tuple[int, int]:
    row = g.table.set_index("criterion").loc[criterion]
    return int(row["n"]), int(row["passed"])


def test_the_suites_own_epochs_block_the_forgetful_desk(suite: Path, tmp_path: Path) -> None:
    """The reference: with oloproof.yaml's 3 epochs only the first try of each case lends (40 of 120)."""
    g = op.gate(op.run(op.load_suite(suite), out=tmp_path / "own", progress=False))
    assert _rows(g, "state_matches") == (3 * CASES, CASES)
    assert g.table.set_index("criterion").loc["state_matches", "verdict"] == "FAIL"
    assert g.verdict == "BLOCK" and g.reason == ""


def test_fewer_epochs_than_the_suite_asks_is_no_pass(suite: Path, tmp_path: Path) -> None:
    """epochs=1 of a 3-epoch suite: every criterion passes its rows (40 of 40), and the gate is BLOCK all the same,
    saying why; without the rule it was PASS."""
    run = op.run(op.load_suite(suite), out=tmp_path / "one", epochs=1, progress=False)
    g = op.gate(run)
    assert _rows(g, "state_matches") == (CASES, CASES)
    assert set(g.table["verdict"]) == {"PASS"}  # the table still shows what the tries made give
    assert g.verdict == "BLOCK"
    assert g.reason.startswith("fewer_epochs: the run tried each case once")
    assert "epochs: 3" in g.reason


def test_as_many_epochs_as_asked_or_more_is_judged(tmp_path: Path) -> None:
    """The rule does not bind at the suite's epochs, nor above them: a 1-epoch suite run with epochs=2 is judged
    by its criteria (this desk passes 1 of 2 tries: FAIL, with no reason of the run's)."""
    root = _suite(tmp_path / "lib1", epochs=1)
    g = op.gate(op.run(op.load_suite(root), out=tmp_path / "two", epochs=2, progress=False))
    assert _rows(g, "state_matches") == (2 * CASES, CASES)
    assert g.verdict == "BLOCK" and g.reason == ""


def test_pooled_runs_each_need_the_suites_epochs(suite: Path, tmp_path: Path) -> None:
    """Three 1-epoch runs of the 3-epoch suite pooled hold 3 tries a case, each the first try of a fresh desk: it
    lends on all 120, so the pool read PASS; each run must hold the suite's epochs. Two 3-epoch runs pooled are
    judged (80 of 240: FAIL)."""
    ones = [op.run(op.load_suite(suite), out=tmp_path / f"r{i}", epochs=1, progress=False) for i in range(3)]
    pooled = op.gate(op.load_runs([r.directory for r in ones]))
    assert _rows(pooled, "state_matches") == (3 * CASES, 3 * CASES)
    assert pooled.verdict == "BLOCK"
    assert pooled.reason.startswith(f"fewer_epochs: run {ones[0].run_id} of the 3 pooled tried each case once")
    threes = [op.run(op.load_suite(suite), out=tmp_path / f"t{i}", progress=False) for i in range(2)]
    whole = op.gate(op.load_runs([r.directory for r in threes]))
    assert _rows(whole, "state_matches") == (6 * CASES, 2 * CASES)
    assert whole.reason == "" and whole.verdict == "BLOCK"


def test_the_command_exits_1_and_says_why(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof run SUITE --epochs 1`` exited 0 (``gate: PASS — exit 0: all 2 gated criteria pass``)."""
    from _reliability_systems import main_in_process

    out = tmp_path / "cli"
    done = main_in_process(capsys, "run", str(suite), "--quiet", "--epochs", "1", "--out", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("gate: BLOCK — exit 1: fewer_epochs: the run tried each case once")
    again = main_in_process(capsys, "gate", str(out))
    assert again.returncode == 1, again.stdout + again.stderr
    assert "fewer_epochs" in again.stdout.strip().splitlines()[-1]



def test_pooled_runs_need_the_most_epochs_any_of_them_was_made_with(tmp_path: Path) -> None:
    """Three runs made while oloproof.yaml asked for ``epochs: 1`` (each holds its suite's epochs then), pooled with
    one made after the suite was raised to ``epochs: 3``: the pool holds three first tries of every case beside the
    new run's three tries, 160 of 240 (4 of 6 in every cluster, by hand), and the gate PASSed it at 0.5 in either
    order, without a word in the order that put the 3-epoch run first, where that run alone FAILs (40 of 120). Each
    run must hold the most epochs any run of the pool was made with."""
    root = _suite(tmp_path / "library", epochs=1)
    ones = [op.run(op.load_suite(root), out=tmp_path / f"r{i}", progress=False) for i in range(3)]
    config = root / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("epochs: 1", "epochs: 3"), encoding="utf-8")
    three = op.run(op.load_suite(root), out=tmp_path / "t", progress=False)
    alone = op.gate(three, criteria={"state_matches": 0.5})
    assert _rows(alone, "state_matches") == (3 * CASES, CASES)
    assert alone.table.set_index("criterion").loc["state_matches", "verdict"] == "FAIL"
    # every cluster passes the same share, 4 of 6: Clopper–Pearson on n_min = 240²/(40·6²) = 40 rows
    low = float(stats.beta.ppf(0.025, 40 * 4 / 6, 40 - 40 * 4 / 6 + 1))
    for runs in ([three, *ones], [*ones, three]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the drift of oloproof.yaml, said only where a 1-epoch run is first
            g = op.gate(op.load_runs([r.directory for r in runs]), criteria={"state_matches": 0.5})
        row = g.table.set_index("criterion").loc["state_matches"]
        assert _rows(g, "state_matches") == (6 * CASES, 4 * CASES)
        assert row["verdict"] == "PASS" and row["ci_low"] == pytest.approx(low, abs=1e-9)  # the rows' own verdict
        assert g.verdict == "BLOCK"
        assert g.reason.startswith(f"fewer_epochs: run {ones[0].run_id} of the 4 pooled tried each case once as the "
                                   f"oloproof.yaml it was made with asked, where run {three.run_id}'s asks for "
                                   "epochs: 3 (the suite's epochs changed between the runs); ")


def test_a_pooled_run_given_its_own_epochs_is_not_said_to_run_as_its_oloproof_yaml_asked(tmp_path: Path) -> None:
    """A run of ``epochs: 1`` given ``epochs=2``, pooled with one made after the suite was raised to 3: it tried each
    case twice because it was told to, not as the oloproof.yaml it was made with asked (once)."""
    root = _suite(tmp_path / "library", epochs=1)
    two = op.run(op.load_suite(root), out=tmp_path / "two", epochs=2, progress=False)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("epochs: 1", "epochs: 3"), encoding="utf-8")
    three = op.run(op.load_suite(root), out=tmp_path / "t", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the drift of oloproof.yaml between the runs
        g = op.gate(op.load_runs([two.directory, three.directory]), criteria={"state_matches": 0.5})
    assert g.verdict == "BLOCK"
    assert g.reason.startswith(f"fewer_epochs: run {two.run_id} of the 2 pooled tried each case 2 times (epochs "
                               "given to op.run(epochs=) or oloproof run --epochs), where the suite's oloproof.yaml "
                               "asks for epochs: 3; ")
