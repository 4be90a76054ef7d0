"""Inspect AI logs as a new user first meets them: a log file in the folder that does not read is named, never
left out; a reduction the logs have too few epochs for says how to get them."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from _inspect_logs import refund_desk, shared_logs
from _reliability_systems import one_error_line

import oloproof_nb as op
from oloproof_nb._analysis.inspect_files import inspect_log_files
from oloproof_nb.cli import main

#: The name Inspect AI gives a log (``<created>_<task>_<id>``): ``inspect_ai.log.list_eval_logs`` lists a ``.json``
#: file so named as a log.
LOG_NAME = "2026-12-06T05-17-09-00-00_bank-agent_aCyabm5PvDucECpxhKQjuP.json"


@pytest.fixture(scope="module")
def eval_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The refund-desk log of tests/_inspect_task.py (read only: a test copies it)."""
    with shared_logs(tmp_path_factory, "refund-desk", refund_desk) as root:
        (found,) = sorted((root / "logs").glob("*.eval"))
        yield found


def _digests(folder: Path) -> dict[str, str]:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(folder.iterdir())}


@pytest.mark.parametrize("content", [b"", b"\x00" * 64, b"<html>502 Bad Gateway</html>"],
                         ids=["empty", "zeros", "html"])
def test_a_json_named_as_inspect_names_its_logs_that_is_no_log_is_refused_not_skipped(
        eval_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    """An eval killed while it wrote its ``.json`` log leaves the file empty (or a sync copies an error page in): it
    was skipped without a word, as any ``.json`` that is not a log is, and the folder gated on its other logs alone
    (exit 0 or 1). Inspect AI's own listing takes the file for a log by its name; now it is one error line naming it,
    exit 2, nothing written."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(eval_file, folder / eval_file.name)
    (folder / LOG_NAME).write_bytes(content)
    before = _digests(folder)
    with pytest.raises(op.OloproofError) as raised:
        inspect_log_files(folder)
    assert str(raised.value) == (
        f"{folder / LOG_NAME}: not a readable Inspect AI log (named as Inspect AI names its logs, but not an eval "
        "log's JSON); repair or remove it, or read the other logs one by one")
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {match: 0.5}\nallow_approximate_methods: true\nmin_clusters: 2\n", encoding="utf-8")
    assert main(["gate", str(folder), "--release", str(release)]) == 2
    assert one_error_line(capsys.readouterr().err) == f"oloproof: error: {raised.value}"
    assert _digests(folder) == before and sorted(before) == sorted([eval_file.name, LOG_NAME])


def test_a_folder_holding_only_such_a_file_is_a_log_folder_whose_file_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder whose only log is the empty one a killed eval left read as no log folder at all, `not a run
    directory … or Inspect AI logs`, naming no file, where ``op.from_inspect`` named it; the command now names it."""
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / LOG_NAME).write_bytes(b"")
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {match: 0.5}\n", encoding="utf-8")
    assert main(["gate", str(folder), "--release", str(release)]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"oloproof: error: {folder / LOG_NAME}: not a readable Inspect AI log (named as Inspect AI names its logs, but "
        "not an eval log's JSON); repair or remove it, or read the other logs one by one")
    assert [f.name for f in folder.iterdir()] == [LOG_NAME] and (folder / LOG_NAME).read_bytes() == b""


def test_other_json_files_beside_the_logs_are_still_not_logs(eval_file: Path, tmp_path: Path) -> None:
    """A ``.json`` not named as a log (an ``eval_set``'s ``logs.json`` listing, one's own notes, an empty
    ``results.json``) is still not read as one: the folder's logs are its ``.eval`` file alone."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(eval_file, folder / eval_file.name)
    (folder / "logs.json").write_text(json.dumps({eval_file.name: {"version": 2, "eval": {}}}), encoding="utf-8")
    (folder / "notes.json").write_text("not json", encoding="utf-8")
    (folder / "results.json").write_bytes(b"")
    assert inspect_log_files(folder) == [folder / eval_file.name]
    assert len(op.from_inspect(folder).cases) == 8  # 4 samples x 2 epochs


def test_a_reduction_past_the_logs_epochs_says_to_run_the_eval_with_more(
        eval_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The refund-desk log ran 2 epochs: ``pass^3`` is refused naming release.yaml and the key, as for a run, but the
    way out it gave was ``run with --epochs 3``, a flag of ``oloproof run``, which reads no logs; it now names Inspect
    AI's own ``--epochs`` beside it."""
    release = tmp_path / "release.yaml"
    release.write_text("criteria:\n  match: {threshold: 0.5, reduce: pass^3}\nallow_approximate_methods: true\n",
                       encoding="utf-8")
    assert main(["gate", str(eval_file), "--release", str(release)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"oloproof: error: {release}: criteria.match.reduce: pass^3 needs at least 3 epochs; run ")
    assert line.endswith("has epochs=2 (run each case 3 or more times, `--epochs 3` to `oloproof run` or, for "
                         "Inspect AI logs, to `inspect eval`; or reduce with k ≤ 2)")
