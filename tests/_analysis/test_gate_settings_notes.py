"""The gate's settings notes (``_analysis/gate_settings.py``): each expected text is written out
by hand."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

import oloproof_nb as op
from oloproof_nb._analysis.gate_settings import approximate_once, approximate_reason

GIVE = "--release to gate this run"
NOTE = ("the run is clustered (a case's epochs, a copy and its source, or cases given one cluster share a cluster), "
        "and the run's release.yaml (stored when it started: give one that does with --release to gate this run, or "
        "set it for the next run) does not allow clustered (approximate) intervals: `allow_approximate_methods: "
        "true` decides them (README section 6)")


def test_one_approximate_reason_among_report_only_rows_is_cut_and_its_note_said_once() -> None:
    """A mutant (``.any()`` → ``.all()``) passed every other gate and command test: a clustered run whose
    release.yaml gates one criterion and reports another has one ``approximate_methods_not_allowed`` reason beside
    a REPORT_ONLY row's empty one (REPORT_ONLY is decided before the clustered rule), so a table whose reasons
    were not all of that code kept the long reason in its row and printed no note under it. By hand: the gated row
    is cut back to its code, the others are untouched, and the note is said once."""
    reasons = pd.Series([approximate_reason(None, True, GIVE) + "; 2 epochs", "", "all_missing"])
    cut, note = approximate_once(reasons, None, True, GIVE)
    assert cut.tolist() == ["approximate_methods_not_allowed; 2 epochs", "", "all_missing"]
    assert note == NOTE
    assert reasons.iloc[0] == f"approximate_methods_not_allowed: {NOTE}; 2 epochs"  # the reason the note is cut from


def test_a_table_without_the_code_is_left_as_it_is_with_no_note() -> None:
    reasons = pd.Series(["", "interval_includes_threshold"])
    cut, note = approximate_once(reasons, None, True, GIVE)
    assert (cut.tolist(), note) == (["", "interval_includes_threshold"], None)


def test_clustered_settings_are_not_called_weaker_where_no_interval_is_clustered(tmp_path: Path) -> None:
    """A mutant (``relaxed_gate_settings`` reading the clustering of rows without an interval) passed
    every other gate and command test. 24 one-case clusters in 3 epochs: answer_matches reduced with pass^3 is one value
    per case, one case per cluster (Clopper–Pearson), and state_matches has no row (no case expects a state), so it
    has no interval: only the row's clustering, which is the run's (clustered by its epochs). Then
    ``min_clusters`` and ``allow_approximate_methods`` decide no verdict of this gate, and loosening them is no
    weaker gate; a threshold lowered still is (``0.5 → 0.4``, written by hand)."""
    from _epoch_systems import scripted_run

    own = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)  # state_matches: no case expects a state
        run = scripted_run(tmp_path, "flaky", 20, 4, [1, 2, 1], release=own,
                           evaluators=[{"type": "answer_matches"}, {"type": "state_matches"}])
        table = op.gate(run).table.set_index("criterion")
        assert table.loc["answer_matches", "method"] == "clopper_pearson"
        assert (table.loc["state_matches", "n"], table.loc["state_matches", "method"]) == (0, "")
        loose = {**own, "min_clusters": 2, "allow_approximate_methods": True}
        assert op.gate(run, release=loose).relaxed == ()
        lower = {**loose, "criteria": {"answer_matches": {"threshold": 0.4, "reduce": "pass^3"}}}
        assert op.gate(run, release=lower).relaxed == ("criteria.answer_matches 0.5 → 0.4",)
