"""A missing ``replays.jsonl`` on a pooled run: the run whose file is gone is named, and only it; two runs that
lost theirs are each named. The tests of ``test_run_missing_replays.py`` hold one run alone, where a mutant that
looked at the first pooled run only (or joined the notes otherwise) passed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import oloproof_nb as op


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from oloproof_nb.examples import init_example

    tmp = tmp_path_factory.mktemp("f64")
    suite = init_example("stateful-agent", tmp / "suite")
    return [op.run(suite, out=tmp / name, progress=False, cache=False).directory for name in ("a", "b", "c")]


def _made(directory: Path) -> int:
    """The fault replays that ran (each wrote records), counted from the frame of the intact run."""
    return int(op.load_run(directory).replays["control_reproduced"].notna().sum())


def test_a_pool_names_the_run_whose_replays_file_is_gone(three_runs: list[Path], tmp_path: Path) -> None:
    intact, lost_b, lost_c = (tmp_path / name for name in ("a", "b", "c"))
    for source, copy in zip(three_runs, (intact, lost_b, lost_c), strict=True):
        shutil.copytree(source, copy)
    made_b, made_c = _made(lost_b), _made(lost_c)
    assert made_b > 1 and made_c > 1  # the example's fault replays ran in both
    (lost_b / "replays.jsonl").unlink()
    pool = op.load_runs([intact, lost_b])  # the intact run first: the missing file is in the second
    note = f"{lost_b / 'replays.jsonl'}: missing, though cases.jsonl records {made_b} fault replays"
    assert pool.replay_summary() == f"replay records missing ({note})"
    with pytest.raises(op.RunDirError, match="^" + note.replace("+", r"\+").replace(".", r"\.") + "; "):
        pool.replay_records  # noqa: B018
    (lost_c / "replays.jsonl").unlink()
    both = op.load_runs([intact, lost_b, lost_c])
    note_c = f"{lost_c / 'replays.jsonl'}: missing, though cases.jsonl records {made_c} fault replays"
    assert both.replay_summary() == f"replay records missing ({note}; {note_c})"
