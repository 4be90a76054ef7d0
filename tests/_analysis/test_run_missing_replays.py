"""A run whose ``replays.jsonl`` is gone though ``cases.jsonl`` records fault replays.

Measured before the fix: the replays frame and every verdict come from ``cases.jsonl`` and stay whole, but
``run.case_replay_records`` (so the case panel) gave no record and ``run.replay_summary()`` was ``''``, as for a
run that made no replay. Now the records raise one line naming the file, and the repr and summary, which must
never raise, say the records are missing. A run that made no replay never makes the file: nothing changes there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import oloproof_nb as op


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from oloproof_nb.examples import init_example

    tmp = tmp_path_factory.mktemp("l7")
    return op.run(init_example("stateful-agent", tmp / "suite"), out=tmp / "run", progress=False,
                  cache=False).directory


def test_replay_records_gone_are_said_not_silently_none(example_run: Path, tmp_path: Path) -> None:
    intact = op.load_run(example_run)
    made = intact.replays[intact.replays["control_reproduced"].notna()]  # the replays that ran: each wrote records
    case_id = str(made["case_id"].iloc[0])
    assert intact.case_replay_records(case_id) and intact.replay_summary()
    # by hand from the frame: each fault replay that ran made a control run (one record), and a faulted run (one
    # more) when the control reproduced the recording
    reproduced = int(made["control_reproduced"].astype(bool).sum())
    assert len(intact.replay_records) == len(made) + reproduced
    gone = tmp_path / "gone"
    shutil.copytree(example_run, gone)
    (gone / "replays.jsonl").unlink()
    run = op.load_run(gone)
    said = (f"{gone / 'replays.jsonl'}: missing, though cases.jsonl records {len(made)} fault replays; its replay "
            "records (trajectories, states, tracebacks) are lost")
    for call in (lambda: run.case_replay_records(case_id), lambda: run.panel(case_id), lambda: run.replay_records):
        with pytest.raises(op.RunDirError) as info:
            call()
        assert str(info.value).startswith(said) and "\n" not in str(info.value)
    note = (f"replay records missing ({gone / 'replays.jsonl'}: missing, though cases.jsonl records {len(made)} "
            "fault replays)")
    assert run.replay_summary() == note
    assert f"replay runs: {note})" in repr(run) and "replay records missing" in run._repr_html_()
    assert op.gate(run).verdict == op.gate(intact).verdict  # the verdicts come from cases.jsonl: unchanged


def test_a_run_without_fault_replays_needs_no_replays_file(tmp_path: Path) -> None:
    from oloproof_nb.examples import init_example

    run = op.run(init_example("false-success", tmp_path / "suite"), out=tmp_path / "run", progress=False)
    assert not (run.directory / "replays.jsonl").exists() and run.replays.empty
    assert run.replay_summary() == "" and run.case_replay_records(str(run.cases["case_id"].iloc[0])) == []
