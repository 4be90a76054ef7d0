"""What a gate says changed since the run (``_analysis/gate_drift.py``): unit tests; the gate's drift warnings
end to end are in test_gate.py."""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof_nb._analysis.gate_drift as gate_drift


@pytest.mark.parametrize(("n", "said"), [(0, ""), (1, "s1"), (3, "s1, s2, s3"), (4, "s1, s2, s3 and 1 more"),
                                         (6, "s1, s2, s3 and 3 more")])
def test_a_release_drift_of_exactly_three_settings_names_them_all(n: int, said: str) -> None:
    """test_gate.py's release drift test has four settings; with exactly three, all three are
    named and nothing is counted ("and 0 more" was not caught). Stand-in changes, counted by hand."""
    from types import SimpleNamespace

    listed = [f"s{i}" for i in range(1, n + 1)]
    run = SimpleNamespace(release=None)
    assert gate_drift._drift(run, (Path("release.yaml"), None), lambda was, now: listed) == said  # type: ignore[arg-type]
