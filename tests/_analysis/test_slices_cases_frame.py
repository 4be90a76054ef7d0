"""Slice tables of a run whose ``run.cases`` was set by hand (filtered to no rows, a measure that is no number), and
of slices of many edges, whose work grows with the bins that hold rows, not with bins × edges."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _cr2_reference import brute_force_low
from _epoch_systems import scripted_run

import oloproof_nb as op
import oloproof_nb._analysis.slices as slices_module
from oloproof_nb._core.slicespec import SliceSpec
from oloproof_nb.errors import OloproofError


def _run(tmp_path: Path) -> op.Run:
    """3 epochs of 4 cases: ok00, ok01 right with 1 call each epoch; w0, w1 wrong in epoch 2, which makes 2 calls."""
    return scripted_run(tmp_path, "w", 2, 2, [1, 2, 1])


def test_a_cases_frame_filtered_to_no_rows_puts_every_verdict_in_n_a(tmp_path: Path) -> None:
    run = _run(tmp_path)
    run.cases = run.cases[run.cases["status"] == "error"]  # no case run ended in error: no rows left
    table = op.slice_table(run, "tool_calls:2").set_index("bin")
    assert (table.loc["<2", "support"], table.loc["≥2", "support"]) == (0, 0)
    na = table.loc["n/a"]
    # by hand: 12 rows (4 cases × 3 epochs) in 4 clusters of 3; ok00, ok01 pass 3 each, w0, w1 pass 2 each
    assert (na["support"], na["clusters"], na["passed"]) == (12, 4, 10)
    assert na["rate"] == 10 / 12
    assert na["method"] == "cluster_t"  # each case's 3 epochs are one cluster
    low, high = brute_force_low([3, 3, 2, 2], [3] * 4), 1 - brute_force_low([0, 0, 1, 1], [3] * 4)
    assert na["ci_low"] == pytest.approx(low, abs=1e-9) and na["ci_high"] == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize(("value", "shown"), [
    ("many", "'many'"),
    (pd.Timestamp("2024-01-01"), "Timestamp('2024-01-01 00:00:00')"),
])
def test_a_measure_that_is_no_number_is_one_line_naming_the_column(tmp_path: Path, value: Any, shown: str) -> None:
    run = _run(tmp_path)
    cases = run.cases
    cases["n_tool_calls"] = [value] + [1] * (len(cases) - 1)
    run.cases = cases
    with pytest.raises(OloproofError) as info:
        op.slice_table(run, "tool_calls:2")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"slice tool_calls:2: run.cases.n_tool_calls holds {shown}, not a number")


def test_numbers_written_as_text_still_bin_as_numbers(tmp_path: Path) -> None:
    run = _run(tmp_path)
    cases = run.cases
    cases["n_tool_calls"] = cases["n_tool_calls"].astype(str)  # read back from a CSV written by hand, say
    run.cases = cases
    table = op.slice_table(run, "tool_calls:2").set_index("bin")
    # by hand: the 2 epochs of 2 calls (w0, w1 in epoch 2) in ≥2, both wrong; the other 10 rows in <2, all right
    assert (table.loc["<2", "support"], table.loc["<2", "passed"]) == (10, 10)
    assert (table.loc["≥2", "support"], table.loc["≥2", "passed"]) == (2, 0)
    assert math.isnan(table.loc["n/a", "rate"])


def _counting_text(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count how often a slice spec's canonical text is built."""
    built = [0]
    plain = SliceSpec.text.fget
    assert plain is not None

    def text(self: SliceSpec) -> str:
        built[0] += 1
        return plain(self)

    monkeypatch.setattr(SliceSpec, "text", property(text))
    return built


def _edges(n: int) -> str:
    return "tool_calls:" + ",".join(str(e) for e in range(1, n + 1))


def test_a_slice_of_many_edges_builds_its_text_as_often_as_one_of_few(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path)
    built = _counting_text(monkeypatch)
    few = op.slice_table(run, _edges(2))
    at_few, built[0] = built[0], 0
    many = op.slice_table(run, _edges(400))
    # each text joins every edge: built once a bin, 400 edges joined 401 times over per criterion
    assert built[0] == at_few
    assert len(few) == 4 and len(many) == 402 and set(many["slice"]) == {_edges(400)}


def test_a_reduced_slice_of_many_edges_counts_epochs_only_in_bins_that_hold_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path)
    release = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}}
    calls = [0]
    counted = slices_module.epoch_counts

    def epoch_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
        calls[0] += 1
        return counted(verdicts)

    monkeypatch.setattr(slices_module, "epoch_counts", epoch_counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.SliceWarning)  # w0, w1 took 1 and 2 calls: in no pass^3 bin
        table = op.slice_table(run, _edges(400), release=release)
    # the rows fall in one bin ([1, 2): ok00, ok01 whole there); the 401 others are empty
    assert calls[0] <= 3
    held = table[table["support"] > 0]
    assert held["bin"].tolist() == ["[1, 2)"] and int(held["support"].iloc[0]) == 2
    assert int(held["passed"].iloc[0]) == 2 and (table["support"] > 0).sum() == 1


def test_a_reduced_slice_finds_the_cases_split_between_bins_without_comparing_ids_pairwise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy's isin compares object (text) arrays pair by pair: a slice of 150,000 rows whose cases' epochs fell in
    different bins took minutes in that one call. The split cases are still named as such (in no bin)."""
    run = _run(tmp_path)
    release = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}}
    isin = np.isin

    def hashed_only(element: Any, test_elements: Any, *args: Any, **kwargs: Any) -> Any:
        assert np.asarray(element).dtype != object, "case ids compared pair by pair"
        return isin(element, test_elements, *args, **kwargs)

    monkeypatch.setattr(np, "isin", hashed_only)
    with pytest.warns(op.SliceWarning, match=r"2 case\(s\) of answer_matches are in no pass\^3 bin"):
        table = op.slice_table(run, "tool_calls:2", release=release).set_index("bin")
    # by hand: ok00, ok01 make 1 call in every epoch (whole in <2, pass^3 = 1); w0, w1 make 1, 2, 1 (split)
    assert (table.loc["<2", "support"], table.loc["<2", "passed"]) == (2, 2)
    assert table.loc["≥2", "support"] == 0
