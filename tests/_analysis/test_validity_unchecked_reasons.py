"""Why a transform is not checked (``unchecked_reasons``): edges the other tests do not pin.
Every expected line is written by hand from the labels given."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _metamorphic_systems import case, mm_suite, transform

import oloproof_nb as op
from oloproof_nb._analysis.validity import unchecked_reasons


def _j(case_id: str, valid: bool) -> dict[str, Any]:
    return {"case_id": case_id, "valid": valid}


def test_each_reason_names_the_unlabeled_pairs_and_counts_them_by_hand(make_suite: Callable[..., Path]) -> None:
    """5 source cases, 4 transforms: ``four`` has 1 pair labeled (4 without a label: the first three named, then
    "…"), ``three`` 2 labeled (3 without: all three named, no "…"), ``one`` 4 labeled (1 without: "has", not
    "have"), ``low`` all 5 labeled with 2 valid (a share of 0.4 below its minimum_validity 0.9: its reason is the
    share, not a count of 0 pairs without a label)."""
    ids = [f"c{i}" for i in range(1, 6)]
    names = ["four", "three", "one", "low"]
    transforms = [transform(name, "", minimum_validity=0.9) for name in names]
    evaluators = [{"type": "metamorphic_relation", "relation": "same_state", "transform": name,
                   "criterion": f"same_{name}"} for name in names]
    labels = {"four": [_j("c1~four", True)],
              "three": [_j("c1~three", True), _j("c2~three", True)],
              "one": [_j(f"c{i}~one", True) for i in range(1, 5)],
              "low": [_j(f"c{i}~low", i <= 2) for i in range(1, 6)]}
    run = op.run(op.load_suite(mm_suite(make_suite, [case(i) for i in ids], transforms, evaluators, labels)),
                 progress=False)
    assert unchecked_reasons(run) == {
        "four": "4 of its 5 pairs have no label (c2~four, c3~four, c4~four …)",
        "three": "3 of its 5 pairs have no label (c3~three, c4~three, c5~three)",
        "one": "1 of its 5 pairs has no label (c5~one)",
        "low": "2 of its 5 pairs are labeled valid, a share below its minimum_validity 0.9",
    }


def test_a_pool_of_two_case_files_counts_every_pair_either_run_derived(make_suite: Callable[..., Path],
                                                                        tmp_path: Path) -> None:
    """Two runs of one suite folder whose case file changed between them (c2 replaced by c3), pooled: each run has
    2 pairs of transform t, the pool 3 distinct ones (c1~t, c2~t, c3~t, counted by hand), of which the labels judge
    one (c1~t). Coverage is 1 of 3, not 1 of 2 (each run's own count), and two pairs have no label."""
    transforms = [transform("t", "", minimum_validity=0.9)]
    evaluators = [{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}]
    root = mm_suite(make_suite, [case("c1"), case("c2")], transforms, evaluators, {"t": [_j("c1~t", True)]})
    first = op.run(op.load_suite(root), out=tmp_path / "first", progress=False)
    (root / "cases.jsonl").write_text((root / "cases.jsonl").read_text(encoding="utf-8").replace('"c2"', '"c3"'),
                                      encoding="utf-8")
    second = op.run(op.load_suite(root), out=tmp_path / "second", progress=False)
    assert sorted(second.cases["case_id"]) == ["c1", "c1~t", "c3", "c3~t"]
    pooled = op.load_runs([first.directory, second.directory])
    row = op.validity(pooled).iloc[0]
    assert (row["derived"], row["labeled"], row["valid"], bool(row["checked"])) == (3, 1, 1, False)
    assert row["coverage"] == 1 / 3
    assert unchecked_reasons(pooled) == {"t": "2 of its 3 pairs have no label (c2~t, c3~t)"}


@pytest.mark.parametrize(("labeled", "reason"), [
    (["c1~t", "c2~t", "c4~t"], "1 of its 4 pairs has no label (one the run has not recorded)"),
    (["c1~t"], "3 of its 4 pairs have no label (c2~t and 2 the run has not recorded)"),
])
def test_a_stopped_run_counts_the_unlabeled_pairs_it_has_not_recorded(make_suite: Callable[..., Path], tmp_path: Path,
                                                                      labeled: list[str], reason: str) -> None:
    """4 source cases, the run stopped after 4 case runs (c1, c1~t, c2, c2~t): the pairs are the suite's 4, and the
    unlabeled ones it has not recorded are counted in words, not left out of the names (the line read "1 of its 4
    pairs has no label ()", naming nothing)."""
    transforms = [transform("t", "", minimum_validity=0.9)]
    evaluators = [{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}]
    root = mm_suite(make_suite, [case(f"c{i}") for i in range(1, 5)], transforms, evaluators,
                    {"t": [_j(c, True) for c in labeled]})

    def stop_after_four(done: int, total: int) -> None:
        if done >= 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(op.load_suite(root), out=tmp_path / "stopped", progress=stop_after_four)
    run = op.load_run(tmp_path / "stopped")
    assert sorted(run.cases["case_id"]) == ["c1", "c1~t", "c2", "c2~t"]
    assert unchecked_reasons(run) == {"t": reason}
