"""op.compare when the base run measured nothing on some paired rows.

A paired row whose base verdict is ``missing`` (the base's case run ended in error or timeout: its sandbox was
down) counts as not passed, so the candidate's failure there was a tie and its pass a gain: a candidate that fails
every case the base could not measure read NO_REGRESSION, exit 0. Such a row now holds NO_REGRESSION back
(``base_missing``) unless it still clears −margin with those rows counted as base passes; a row missing in the
candidate alone still counts as not passed. The expected numbers are
counted by hand; the interval of no change is d̂ ± (1 − 0.025^(1/n)) on n independent rows (Clopper–Pearson's
bound of 0 in n, written out here, not read from the code)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import oloproof_nb as op
from oloproof_nb.cli import main

MARGIN_10 = {"regression": {"margin": 0.1}}


class Desk:
    """Answers ``ok``; ``down``: cases whose sandbox raises (the run ends in error), ``wrong``: cases answered
    wrong."""

    def __init__(self, down: frozenset[int] = frozenset(), wrong: frozenset[int] = frozenset(),
                 version: str = "a") -> None:
        self.down, self.wrong, self.version, self.state = down, wrong, version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        if input["n"] in self.down:
            raise ConnectionError("sandbox database unreachable")
        return {"steps": [], "answer": "no" if input["n"] in self.wrong else "ok", "status": "completed"}


def _pair(make_suite: Callable[..., Path], tmp_path: Path, base: dict[str, Any],
          candidate: dict[str, Any], n: int = 60) -> tuple[op.Run, op.Run]:
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(n)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    runs = []
    for name, spec in (("base", base), ("cand", candidate)):
        runs.append(op.run(suite, system=lambda s=spec, v=name: Desk(**s, version=v), out=tmp_path / name,
                           progress=False))
    return runs[0], runs[1]


HALF = frozenset(range(30, 60))


def test_failures_where_the_base_measured_nothing_are_not_no_regression(make_suite: Callable[..., Path],
                                                                        tmp_path: Path) -> None:
    """The base's sandbox was down on c30 … c59 (error: every verdict missing); the candidate answers all 30 wrong.
    By hand: 60 paired rows, 30 missing, no flip, so d̂ = 0 ± (1 − 0.025^(1/60)) = ±0.0596, inside margin 0.1:
    NO_REGRESSION before, though the candidate fails every case the base could not measure."""
    base, cand = _pair(make_suite, tmp_path, {"down": HALF}, {"wrong": HALF})
    assert (base.cases["status"] == "error").sum() == 30
    cmp = op.compare(base, cand, release=MARGIN_10)
    row = cmp.table.iloc[0]
    assert (row["n"], row["missing"], row["pass_to_fail"], row["fail_to_pass"]) == (60, 30, 0, 0)
    assert row["ci_low"] == pytest.approx(-(1 - 0.025 ** (1 / 60)), abs=1e-12) and row["ci_low"] > -0.1
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert row["reason"].startswith("base_missing: 30 paired row(s) are missing in the base run")
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"


def test_gains_over_rows_the_base_never_measured_do_not_hide_losses(make_suite: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    """Base down on c30 … c59; the candidate passes those 30 and answers c00 … c09 wrong, which the base passed: it
    lost 10 of the 30 cases both runs measured. By hand: pass_to_fail 10, fail_to_pass 30, d̂ = +20/60, an interval
    far above −0.1: NO_REGRESSION before, the 30 unmeasured rows counted as gains."""
    base, cand = _pair(make_suite, tmp_path, {"down": HALF}, {"wrong": frozenset(range(10))})
    row = op.compare(base, cand, release=MARGIN_10).table.iloc[0]
    assert (row["pass_to_fail"], row["fail_to_pass"], row["missing"]) == (10, 30, 30)
    assert row["difference"] == pytest.approx(20 / 60, abs=1e-15) and row["ci_low"] > -0.1
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE" and row["reason"].startswith("base_missing: 30 ")


def test_a_row_missing_in_the_candidate_alone_still_counts_as_not_passed(make_suite: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    """The rule is the base's: the candidate's sandbox down on c00, which the base answered wrong, is a tie of two
    non-passes (it can only count against the candidate) and NO_REGRESSION stands; down on c01 too, which the base
    passed, it is a loss (pass_to_fail 1)."""
    base, cand = _pair(make_suite, tmp_path, {"wrong": frozenset({0})}, {"down": frozenset({0})})
    row = op.compare(base, cand, release=MARGIN_10).table.iloc[0]
    assert (row["missing"], row["pass_to_fail"], row["fail_to_pass"]) == (1, 0, 0)
    assert row["verdict"] == "NO_REGRESSION"
    assert row["ci_low"] == pytest.approx(-(1 - 0.025 ** (1 / 60)), abs=1e-12)
    _, worse = _pair(make_suite, tmp_path / "again", {}, {"down": frozenset({0, 1})})
    lost = op.compare(base, worse, release=MARGIN_10).table.iloc[0]
    assert (lost["missing"], lost["pass_to_fail"], lost["fail_to_pass"]) == (2, 1, 0)


SCRIPTED = '''
class Sys:
    version = "base"
    def reset(self, state): self.state = dict(state)
    def snapshot(self): return dict(self.state)
    def run(self, input, epoch):
        if input["n"] >= 30 and epoch == 2:
            raise ConnectionError("sandbox database unreachable")
        return {"steps": [], "answer": "ok", "status": "completed"}

class Cand(Sys):
    version = "cand"
    def run(self, input, epoch):
        return {"steps": [], "answer": "ok" if input["n"] < 30 or epoch == 1 else "no", "status": "completed"}
'''


def test_a_reduced_criterion_with_base_epochs_missing(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """pass^2 over 2 epochs: the base's sandbox was down in epoch 2 of c30 … c59, the candidate fails epoch 2 there.
    Per case by hand: base value C(1,2)/C(2,2) = 0 (the missing epoch counts as not passed), candidate 0: a tie on
    each of the 30 cases, so no flip among 60 cases, d̂ = 0 ± (1 − 0.025^(1/60)): NO_REGRESSION before."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(60)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Sys", system_code=SCRIPTED,
                      epochs=2)
    suite = op.load_suite(root)
    base = op.run(suite, out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=_cand(suite), out=tmp_path / "cand", progress=False)
    release = {"allow_approximate_methods": True, "regression": {"margin": 0.1},
               "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}}
    row = op.compare(base, cand, release=release).table.iloc[0]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"]) == (60, 0, 0)
    assert row["ci_low"] == pytest.approx(-(1 - 0.025 ** (1 / 60)), abs=1e-12)
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE" and row["reason"].startswith("base_missing: 30 ")


def _cand(suite: op.Suite) -> Any:
    """The scripted module's ``Cand`` (the module the suite's ``system:`` was imported from)."""
    import sys

    return sys.modules[suite.resolve_system().__module__].Cand


def test_oloproof_compare_exits_1_naming_base_missing(make_suite: Callable[..., Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The command line said ``compare: NO_REGRESSION — exit 0`` for the first test's runs."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(60)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release=MARGIN_10)
    suite = op.load_suite(root)
    base = op.run(suite, system=lambda: Desk(down=HALF), out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=lambda: Desk(wrong=HALF, version="b"), out=tmp_path / "cand", progress=False)
    assert main(["compare", str(base.directory), str(cand.directory)]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("compare: INSUFFICIENT_EVIDENCE — exit 1: not decided: base_missing: 30 paired row(s)")
    assert not math.isnan(op.compare(base, cand).table.iloc[0]["ci_low"])


PLANNED = '''
class Sys:
    version = "base"
    plan = "b"
    def reset(self, state): self.state = dict(state)
    def snapshot(self): return dict(self.state)
    def run(self, input, epoch):
        return {"steps": [], "answer": "ok" if input[self.plan][epoch - 1] else "no", "status": "completed"}

class Cand(Sys):
    version = "cand"
    plan = "c"
'''


def test_another_reduction_given_to_compare_is_named_weaker(make_suite: Callable[..., Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """3 epochs; c00 … c29 pass every epoch in both runs; c30 … c59 pass epoch 1 in the base and no epoch in the
    candidate. By the runs' own rule (the mean, margin 0.06) the candidate lost 30 of 180 case runs: d̂ = −1/6,
    REGRESSION. Given a file that reduces with pass^3 (harder to pass than the mean), every case is 1 or 0 alike in
    both runs (C(1,3)/C(3,3) = 0 = C(0,3)/C(3,3)): d̂ = 0 ± (1 − 0.025^(1/60)), NO_REGRESSION, exit 0 — with no word
    before, since only an easier reduction was counted weaker; a comparison judges a difference, which pass^3 hides
    here. The rule given still decides; the note and the last line say it is weaker than the base run's own."""
    plans = [{"b": [True] * 3, "c": [True] * 3}] * 30 + [{"b": [True, False, False], "c": [False] * 3}] * 30
    cases = [{"id": f"c{i:02d}", "input": {**plan, "n": i}, "expected": {"answer": "ok"}} for i, plan in
             enumerate(plans)]
    own = {"allow_approximate_methods": True, "regression": {"margin": 0.06}, "criteria": {"answer_matches": 0.3}}
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Sys", system_code=PLANNED,
                      epochs=3, release=own)
    suite = op.load_suite(root)
    base = op.run(suite, out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=_cand(suite), out=tmp_path / "cand", progress=False)
    mean = op.compare(base, cand)
    row = mean.table.iloc[0]
    assert (row["n"], row["pass_to_fail"], row["difference"]) == (180, 30, pytest.approx(-1 / 6, abs=1e-15))
    assert mean.verdict == "REGRESSION"
    given = tmp_path / "pass3.yaml"
    given.write_text(yaml.safe_dump({**own, "criteria": {"answer_matches": {"threshold": 0.3, "reduce": "pass^3"}}}),
                     encoding="utf-8")
    cmp = op.compare(base, cand, release=given)
    row = cmp.table.iloc[0]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"]) == (60, 0, 0)
    assert row["ci_low"] == pytest.approx(-(1 - 0.025 ** (1 / 60)), abs=1e-12) and cmp.verdict == "NO_REGRESSION"
    assert cmp.relaxed == ('reductions.answer_matches "mean" → "pass^3"',)
    assert cmp.weaker_than == "the base run's own release settings"
    assert main(["compare", str(base.directory), str(cand.directory), "--release", str(given)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith(
        "by 1 setting weaker than the base run's own release settings")


def test_no_regression_that_holds_with_the_base_missing_rows_counted_as_passes_stands(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The base's sandbox was down on c00 only; the candidate passes it. Counted as a base pass (the most the base
    could have done there) the row is a tie, so every row ties: d̂ = 0 ± (1 − 0.025^(1/60)), inside margin 0.1.
    NO_REGRESSION stands, with a note naming the bound (a rule that held back every comparison with one errored
    base case would make compare useless on real runs)."""
    base, cand = _pair(make_suite, tmp_path, {"down": frozenset({0})}, {})
    row = op.compare(base, cand, release=MARGIN_10).table.iloc[0]
    assert (row["missing"], row["fail_to_pass"]) == (1, 1)
    assert row["verdict"] == "NO_REGRESSION"
    bound = -(1 - 0.025 ** (1 / 60))
    assert "1 paired row(s) are missing in the base run" in row["reason"]
    assert f"ci_low is {bound:.4g}: NO_REGRESSION holds either way" in row["reason"]


def test_the_bound_is_the_comparison_with_a_base_that_passed_there_and_its_margin_is_inclusive(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Base down on c00, the candidate answers c00 wrong: a tie of two non-passes as recorded, a loss if the base
    would have passed. The bound is therefore the ci_low of the same candidate against a base that passed c00 (a
    metamorphic reference: another path through compare, no missing row). At margin = −bound NO_REGRESSION holds
    (ci_low ≥ −margin); one float below, it is held back as ``base_missing``. The bound in its words is on the side
    of −margin the verdict read it on: at ci_low = −margin, four digits (``-0.1148``, below −0.1147995…) read "ci_low
    is -0.1148: NO_REGRESSION holds either way"; it is written with every digit there."""
    down, cand = _pair(make_suite, tmp_path, {"down": frozenset({0})}, {"wrong": frozenset({0})})
    passed_base, same_cand = _pair(make_suite, tmp_path / "again", {}, {"wrong": frozenset({0})})
    reference = op.compare(passed_base, same_cand, release=MARGIN_10).table.iloc[0]
    assert (reference["pass_to_fail"], reference["missing"]) == (1, 0)
    low = float(reference["ci_low"])
    assert low < -(1 - 0.025 ** (1 / 60))  # one loss is worse than no change
    at = op.compare(down, cand, release={"regression": {"margin": -low}}).table.iloc[0]
    assert f"{low:.4g}" == "-0.1148" and float(f"{low:.4g}") < low  # the premise: four digits lie below −margin
    assert at["verdict"] == "NO_REGRESSION" and f"ci_low is {low!r}: NO_REGRESSION holds either way" in at["reason"]
    below = op.compare(down, cand, release={"regression": {"margin": math.nextafter(-low, 0.0)}}).table.iloc[0]
    assert below["verdict"] == "INSUFFICIENT_EVIDENCE" and below["reason"].startswith("base_missing: 1 ")


# --- the base_missing rule: it only ever holds a NO_REGRESSION back ---


def test_a_regression_with_base_missing_rows_stays_a_regression(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """Base down on c50 … c59; the candidate answers c00 … c29 and c50 … c59 wrong. By hand: 60 paired rows, base
    passes 50, candidate 20, pass_to_fail 30, d̂ = (20 − 50)/60 = −0.5, and counting the 10 unmeasured rows as base
    passes only makes it worse (−40/60). REGRESSION, not held back as ``base_missing`` (which would turn a decided
    regression into INSUFFICIENT_EVIDENCE: the rule applies to a NO_REGRESSION only)."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(60)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    base = op.run(suite, system=lambda: Desk(down=frozenset(range(50, 60))), out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=lambda: Desk(wrong=frozenset([*range(30), *range(50, 60)]), version="b"),
                  out=tmp_path / "cand", progress=False)
    cmp = op.compare(base, cand, release={"regression": {"margin": 0.1}})
    row = cmp.table.iloc[0]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"], row["missing"]) == (60, 30, 0, 10)
    assert row["difference"] == pytest.approx(-0.5, abs=1e-15) and row["ci_high"] < -0.1
    assert row["verdict"] == "REGRESSION" and "base_missing" not in row["reason"]
    assert cmp.verdict == "REGRESSION"


def test_each_criterion_is_bounded_on_its_own_rows(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Two criteria; the base's sandbox was down on c00 (both missing there), the candidate passes every case.
    Counted as a base pass, c00 ties, so each criterion's 60 rows all tie: by hand d̂ = 0 ± (1 − 0.025^(1/60)),
    inside margin 0.1, NO_REGRESSION with the note, for each criterion alone (the bound of one criterion is taken
    on its rows, not on the 120 rows of both)."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(60)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"},
                                                        {"type": "answer_matches", "criterion": "answer_again"}]))
    base = op.run(suite, system=lambda: Desk(down=frozenset({0})), out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=lambda: Desk(version="b"), out=tmp_path / "cand", progress=False)
    table = op.compare(base, cand, release={"regression": {"margin": 0.1}}).table.set_index("criterion")
    bound = -(1 - 0.025 ** (1 / 60))
    assert sorted(table.index) == ["answer_again", "answer_matches"]
    for criterion in table.index:
        row = table.loc[criterion]
        assert (row["n"], row["missing"], row["fail_to_pass"]) == (60, 1, 1)
        assert row["verdict"] == "NO_REGRESSION"
        assert "1 paired row(s) are missing in the base run" in row["reason"]
        assert f"ci_low is {bound:.4g}: NO_REGRESSION holds either way" in row["reason"]


EPOCHS = '''
class Sys:
    version = "base"
    def reset(self, state): self.state = dict(state)
    def snapshot(self): return dict(self.state)
    def run(self, input, epoch):
        if input["n"] == 0 and epoch == 2:
            raise ConnectionError("sandbox database unreachable")
        return {"steps": [], "answer": "ok", "status": "completed"}

class Cand(Sys):
    version = "cand"
    def run(self, input, epoch):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def test_the_mean_over_two_epochs_is_bounded_row_by_row(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """30 cases of 2 epochs reduced by the mean (rows clustered by case); the base's sandbox was down in epoch 2 of
    c00, the candidate passes every row. As recorded: one gain, cluster_t ci_low −0.100 ≥ −0.2, NO_REGRESSION.
    Counted as a base pass that row ties, so every case's two rows tie: no change in 30 clusters, by hand
    d̂ = 0 with ci_low −(1 − 0.025^(1/30)) = −0.1157: NO_REGRESSION holds either way. The bound is the mean's over
    the 60 rows, not a per-case reduction (which has no interval for 2 epochs reduced by the mean)."""
    import sys

    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(30)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Sys", system_code=EPOCHS,
                      epochs=2)
    suite = op.load_suite(root)
    base = op.run(suite, out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=sys.modules[suite.resolve_system().__module__].Cand, out=tmp_path / "cand",
                  progress=False)
    row = op.compare(base, cand, release={"allow_approximate_methods": True,
                                          "regression": {"margin": 0.2}}).table.iloc[0]
    assert (row["n"], row["missing"], row["fail_to_pass"], row["pass_to_fail"]) == (60, 1, 1, 0)
    assert row["verdict"] == "NO_REGRESSION"
    assert "1 paired row(s) are missing in the base run" in row["reason"]
    bound = -(1 - 0.025 ** (1 / 30))  # no change in any of 30 clusters: Clopper-Pearson's bound of 0 in 30
    assert f"ci_low is {bound:.4g}: NO_REGRESSION holds either way" in row["reason"] and f"{bound:.4g}" == "-0.1157"
