"""``_analysis/gate_settings.approximate_where``: which release settings a reason of
``approximate_methods_not_allowed`` names, one branch each as the docstring states them."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb._analysis.gate_settings import ReleaseLike, approximate_reason, approximate_where
from oloproof_nb._config.release import ReleaseConfig

GIVE = "give one that does with op.gate(run, release=...) to gate this run"


@pytest.mark.parametrize("given", [ReleaseConfig(), {"confidence": 0.9}])
def test_settings_given_in_code_are_named_as_given_whether_or_not_the_run_stored_any(given: ReleaseLike) -> None:
    """A model or a mapping given as ``release=`` is "the release configuration given", not the run's release.yaml
    (the gate read the given settings, so telling the user to edit the run's file names the wrong settings).
    Mutant: the ``release is not None`` branch deleted named the run's stored file instead."""
    for stored in (True, False):
        assert approximate_where(given, stored) == "the release configuration given"
    reason = approximate_reason(ReleaseConfig(), True)
    assert "and the release configuration given does not allow clustered" in reason


def test_a_path_is_named_as_given_and_none_names_the_runs_own_file_by_default(tmp_path: Path) -> None:
    """A path is named as it was given (str or Path); None names the run's own release.yaml unless the caller says
    the run stored none (``stored`` defaults to True: the run's own file). Mutant: ``stored=False`` by default named
    the defaults for a run that has a release.yaml."""
    assert approximate_where("ci/strict.yaml") == "ci/strict.yaml"
    assert approximate_where(tmp_path / "r.yaml") == str(tmp_path / "r.yaml")
    own = f"the run's release.yaml (stored when it started: {GIVE}, or set it for the next run)"
    assert approximate_where(None) == own
    assert approximate_where(None, False) == f"the default release configuration (the run has no release.yaml: {GIVE})"
