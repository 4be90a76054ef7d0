"""Symbolic links to nothing given on the command line: a run folder whose manifest.json is one, the run folder
itself, ``--release`` and ``--baseline``. They said "not a run directory (no manifest.json), a suite folder (no
oloproof.yaml) or Inspect AI logs", "no such file or folder" or "file not found", and the user looked for a file
that is there, as a link. Each now names the link and where it points (``files.dangling_link``): one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb.cli import main

CASES = [{"id": f"c{i}", "input": {"answer": "done"}, "expected": {"answer": "done"}} for i in range(3)]
DANGLING = "is a dangling symbolic link (it points to '{}', which does not exist)"


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _broken_run(tmp_path: Path) -> tuple[Path, Path]:
    """A run folder whose manifest.json points to a file that is gone, and where it points."""
    run, gone = tmp_path / "broken", tmp_path / "gone" / "manifest.json"
    run.mkdir()
    (run / "manifest.json").symlink_to(gone)
    return run, gone


def test_gate_of_a_run_whose_manifest_is_a_dangling_link_names_it(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run, gone = _broken_run(tmp_path)
    assert main(["gate", str(run)]) == 2
    assert _error(capsys) == (f"oloproof: error: {run / 'manifest.json'}: {DANGLING.format(gone)}; point it at the "
                              "file, or remove it")
    (tmp_path / "linked").symlink_to("moved")  # the run folder itself
    assert main(["gate", str(tmp_path / "linked")]) == 2
    assert _error(capsys) == (f"oloproof: error: {tmp_path / 'linked'}: {DANGLING.format('moved')}; give a run "
                              "directory, a suite folder or Inspect AI logs")


def test_release_and_baseline_that_are_dangling_links_name_them(make_suite, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # 3 of 3 pass: the Clopper-Pearson lower bound 0.025 ** (1 / 3) = 0.292 >= 0.2
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.2}})
    assert main(["run", str(folder), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    capsys.readouterr()
    release = tmp_path / "release.yaml"
    release.symlink_to(tmp_path / "gone.yaml")
    for command in ("gate", "report"):
        out = ["--out", str(tmp_path / "r.md")] if command == "report" else []
        assert main([command, str(tmp_path / "run"), "--release", str(release), *out]) == 2
        assert _error(capsys) == (f"oloproof: error: {release}: {DANGLING.format(tmp_path / 'gone.yaml')}; point it "
                                  "at the file, or remove it")
    broken, gone = _broken_run(tmp_path)
    assert main(["gate", str(tmp_path / "run"), "--baseline", str(broken)]) == 2
    assert _error(capsys) == (f"oloproof: error: {broken / 'manifest.json'}: {DANGLING.format(gone)}; point it at "
                              "the file, or remove it")
    assert not (tmp_path / "r.md").exists()
