"""Where a report's release settings came from: a run whose suite had no release.yaml, or Inspect AI logs, which have
none of their own, gate no criterion, and the report names no file that never was; it says, as `oloproof gate` does,
which settings name no criterion and where the thresholds go."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _inspect_logs import refund_desk, shared_logs

import oloproof_nb as op
from oloproof_nb._display.report import write_report
from oloproof_nb.cli import main

OWN_FILE = "the run's own release.yaml (as recorded in its manifest)"


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The refund-desk logs of tests/_inspect_task.py (read only)."""
    with shared_logs(tmp_path_factory, "refund-desk", refund_desk) as root:
        yield root / "logs"


def _suite_run(make_suite: Any, tmp_path: Path, release: dict[str, Any] | None) -> op.Run:
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release=release)
    return op.run(op.load_suite(root), out=tmp_path / "run", progress=False)


def _text(path: Path) -> str:
    """The report's text, its lines joined by spaces (a line of the Markdown report is one paragraph)."""
    return " ".join(path.read_text(encoding="utf-8").split())


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_a_suite_without_release_yaml_is_reported_as_having_none(make_suite: Any, tmp_path: Path, suffix: str,
                                                                 plots_not_encoded: None) -> None:
    """Before, the report of a run whose suite had no release.yaml said its settings were `the run's own
    release.yaml (as recorded in its manifest)`, a file that never was, and not why nothing was gated, where
    `oloproof gate` names the file missing and what to write."""
    run = _suite_run(make_suite, tmp_path, release=None)
    text = _text(write_report(run, tmp_path / f"r{suffix}"))
    assert OWN_FILE not in text
    assert ("Release settings: none, the suite had no release.yaml when the run started (the defaults, which gate "
            "no criterion); min_clusters 20") in text
    assert f"{run.suite_root / 'release.yaml'}: there was none when the run started, so no criterion is gated" in text


def test_a_suite_with_release_yaml_keeps_its_own_file_named_and_no_note(make_suite: Any, tmp_path: Path,
                                                                        plots_not_encoded: None) -> None:
    run = _suite_run(make_suite, tmp_path, release={"criteria": {"answer_matches": 0.5}})
    text = _text(write_report(run, tmp_path / "r.md"))
    assert f"Release settings: {OWN_FILE}; min_clusters 20" in text
    assert "no criterion" not in text


def test_a_release_yaml_written_since_the_run_started_is_named_as_there_now(make_suite: Any, tmp_path: Path,
                                                                          plots_not_encoded: None) -> None:
    run = _suite_run(make_suite, tmp_path, release=None)
    path = run.suite_root / "release.yaml"
    path.write_text("criteria:\n  answer_matches: 0.5\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="differs from the release settings run"):
        text = _text(write_report(run, tmp_path / "r.md"))
    assert f"{path}: there was none when the run started, so no criterion is gated; it is there now: give it" in text
    assert "write one listing" not in text


@pytest.mark.parametrize("own", [{"criteria": {"answer_matches": 0.5}}, None])
def test_a_release_file_given_that_names_no_criterion_is_named(make_suite: Any, tmp_path: Path,
                                                               plots_not_encoded: None,
                                                               own: dict[str, Any] | None) -> None:
    """Whether or not the suite had a release.yaml as the run started: the file given is the one that names no
    criterion."""
    run = _suite_run(make_suite, tmp_path, release=own)
    empty = tmp_path / "empty.yaml"
    empty.write_text("min_clusters: 20\n", encoding="utf-8")
    text = _text(write_report(run, tmp_path / "r.md", release=empty))
    assert f"Release settings: {empty} (given for this report)" in text
    assert f"{empty} names no criterion to gate" in text


def test_an_inspect_log_s_report_says_it_has_no_release_yaml_and_where_the_thresholds_go(
        inspect_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], plots_not_encoded: None) -> None:
    """Before, the report of Inspect AI logs named `the run's own release.yaml`; the logs have none, and `oloproof
    gate` of them says to give the thresholds with --release."""
    assert main(["gate", str(inspect_logs)]) == 1
    hint = "no criterion to gate: give the thresholds with --release RELEASE_YAML"
    assert capsys.readouterr().out.splitlines()[-2] == hint
    for name in ("r.md", "r.html"):
        assert main(["report", str(inspect_logs), "--out", str(tmp_path / name)]) == 1
        text = _text(tmp_path / name)
        assert OWN_FILE not in text
        assert ("Release settings: none, Inspect AI logs have no release.yaml of their own (the defaults, which gate "
                "no criterion)") in text
        assert "No criterion to gate: give the thresholds with --release RELEASE_YAML." in text
