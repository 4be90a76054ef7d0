"""Epochs (pass^k, pass@k, reduced sums): edges the other epoch tests leave unpinned, each killing a mutant.

The agent is the seeded coin of ``_epoch_systems.py`` (right with probability p, from an RNG seeded by (case, epoch));
every expected number is computed here from that seeding rule, never read from the code's output.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from _epoch_systems import STOCHASTIC, P, coin_answers_right

import oloproof_nb as op


@pytest.fixture(scope="module")
def two_epochs(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    root = tmp_path_factory.mktemp("m40") / "suite"
    root.mkdir()
    (root / "sysmod.py").write_text(STOCHASTIC, encoding="utf-8")
    cases = [{"id": f"c{i}", "input": {"id": f"c{i}", "p": p}, "expected": {"answer": "yes"}} for i, p in enumerate(P)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    body: dict[str, Any] = {"name": "coin", "system": "sysmod:Coin", "evaluators": [{"type": "answer_matches"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    return op.run(op.load_suite(root), epochs=2, out=Path(root).parent / "run", progress=False)


def test_pass_at_1_of_two_epochs_is_the_mean_of_halves_not_a_binary_rate(two_epochs: op.Run) -> None:
    """Mutant ``binary = denominator == 1`` → ``denominator <= 2``: with 2 epochs, pass@1 = pass^1 = c/2 takes the
    value ½ (common denominator C(2, 1) = 2), so its values are not binary; read as binary they were rounded
    (½ → 0) and the rate fell below the mean of the values."""
    passes = [sum(coin_answers_right(f"c{i}", p, e) for e in (1, 2)) for i, p in enumerate(P)]
    assert 1 in passes  # the design: some case passes one epoch of two (a value of ½)
    hand = float(np.mean([c / 2 for c in passes]))
    table = op.reduce_epochs(two_epochs, reduce=["pass^1", "pass@1"]).set_index("reduce")
    for text in ("pass^1", "pass@1"):
        assert table.loc[text, "rate"] == pytest.approx(hand, abs=1e-12)
        assert table.loc[text, "ci_low"] < hand < table.loc[text, "ci_high"]


def test_two_epochs_get_pass_hat_2_and_pass_at_2_by_default(two_epochs: op.Run) -> None:
    """Mutant ``k > 1`` → ``k > 2`` in the default reductions: a run of 2 epochs lost pass^2 and pass@2 from
    ``op.reduce_epochs(run)``. By hand: pass^2 = share of cases passing both epochs, pass@2 = share passing one."""
    passes = [sum(coin_answers_right(f"c{i}", p, e) for e in (1, 2)) for i, p in enumerate(P)]
    table = op.reduce_epochs(two_epochs)
    assert table["reduce"].tolist() == ["mean", "pass^2", "pass@2"]
    rate = table.set_index("reduce")["rate"]
    assert rate["mean"] == pytest.approx(sum(passes) / 16, abs=1e-12)
    assert rate["pass^2"] == pytest.approx(sum(c == 2 for c in passes) / 8, abs=1e-12)
    assert rate["pass@2"] == pytest.approx(sum(c >= 1 for c in passes) / 8, abs=1e-12)


def test_a_value_a_hair_below_one_is_not_counted_at_one() -> None:
    """Mutant ``values == 1.0`` → ``values >= 0.999``: pass@10 of 20 epochs with 10 passes is
    1 − C(10, 10)/C(20, 10) = 1 − 1/184756, below 1; such a case is no case "at one" (the gate's ``passed``) and its
    cluster is a failing cluster."""
    from oloproof_nb._analysis.reduce import reduced_sums
    from oloproof_nb._core.epochs import parse_reduce

    counts = pd.DataFrame({"criterion": ["a", "a"], "case_id": ["c0", "c1"], "cluster": ["g0", "g1"],
                           "epochs": [20, 20], "passes": [10, 20], "missing": [0, 0]})
    rs = reduced_sums(counts, parse_reduce("pass@10"))
    assert 1 - 1 / math.comb(20, 10) > 0.999  # the design: a value within 0.001 of 1
    assert rs.sums.tolist() == pytest.approx([1 - 1 / math.comb(20, 10), 1.0], abs=1e-15)
    assert (rs.cases_at_one, rs.failing_clusters) == (1, 1)


def test_a_frame_of_categorical_ids_reduces_only_the_cases_that_have_rows(two_epochs: op.Run) -> None:
    """A verdicts frame whose ids are categorical (``astype("category")``, as a large frame is often kept), less one
    case: its category stays. Grouped on all categories (pandas 2's default), the case without rows was reduced as a
    case of 0 epochs, counted in the mean's ``cases`` and in pass^2's ``left_out``, and the gate read pass^2
    too_few_epochs; each criterion's category was counted as rows left out as repeats ("0 row(s) repeat a try").
    By hand, over the 7 cases left: pass^2 is the share passing both epochs."""
    run = op.load_run(two_epochs.directory)  # its own frames: the module's run stays as it was
    verdicts = run.verdicts.astype({"criterion": "category", "case_id": "category"})
    run.verdicts = verdicts[verdicts["case_id"] != "c7"]
    passes = [sum(coin_answers_right(f"c{i}", p, e) for e in (1, 2)) for i, p in enumerate(P[:7])]
    table = op.reduce_epochs(run).set_index("reduce")
    assert table["cases"].tolist() == [7, 7, 7] and table["left_out"].tolist() == [0, 0, 0]
    assert table.loc["pass^2", "rate"] == pytest.approx(sum(c == 2 for c in passes) / 7, abs=1e-12)
    assert table.loc["mean", "rate"] == pytest.approx(sum(passes) / 14, abs=1e-12)
    assert not table["reason"].str.contains("repeat").any()
    by_case = op.reduce_epochs(run, reduce="pass^2", by_case=True)
    assert sorted(by_case["case_id"].astype(str)) == [f"c{i}" for i in range(7)]
    release = {"criteria": {"answer_matches": {"threshold": 0.01, "reduce": "pass^2"}}}
    row = op.gate(run, release=release).table.set_index("criterion").loc["answer_matches"]
    assert row["n"] == 7 and "too_few_epochs" not in row["reason"]
