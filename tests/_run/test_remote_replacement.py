"""An executor's batch replaces the instance a failed case left stale only when another of its cases needs one,
as a serial run does. It built the replacement at once: after a batch's last case failed, a replacement that could
not be built (a factory that fails from then on, a deployment that moved on and is refused) stopped the run and lost
the batch's records, every case of the run having run (the same suite finishes serially with both cases recorded)."""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _reliability_systems import make_case, read_log, runs_of, write_suite

import oloproof_nb as op
from oloproof_nb._run.remote import _BatchStopped


def test_no_replacement_is_built_after_a_batchs_last_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    # the run's process builds instance 0 (to read its identity), the batch instance 1; instance 2 on would fail
    monkeypatch.setenv("RELSYS_INIT", "raise_after:2")
    root = write_suite(tmp_path / "suite", [make_case("c0"), make_case("c1", op="raise")],
                       system="relsys:VersionedDesk")
    with ThreadPoolExecutor(1) as executor:
        run = op.run(root, out=tmp_path / "run", executor=executor, chunk_size=2, progress=False, cache=False)
    assert run.finished
    assert run.cases[["case_id", "status"]].values.tolist() == [["c0", "completed"], ["c1", "error"]]
    assert [event for event, *_ in read_log(log)] == ["init", "init", "run", "run"]  # no third build



def test_the_cases_a_batch_ran_are_recorded_when_no_replacement_can_be_built(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """c0 fails, and the replacement c1 needs cannot be built: c0's record is kept, as a serial run keeps it, and
    the resume runs c1 alone (before, the batch was lost whole and the resume ran c0 again)."""
    log = tmp_path / "log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    monkeypatch.setenv("RELSYS_INIT", "raise_after:2")
    root = write_suite(tmp_path / "suite", [make_case("c0", op="raise"), make_case("c1")],
                       system="relsys:VersionedDesk")
    with ThreadPoolExecutor(1) as executor:
        with pytest.raises(op.OloproofError, match="^building the system raised RuntimeError: the constructor failed"):
            op.run(root, out=tmp_path / "run", executor=executor, chunk_size=2, progress=False, cache=False)
        monkeypatch.delenv("RELSYS_INIT")
        run = op.run(root, out=tmp_path / "run", executor=executor, chunk_size=2, progress=False, cache=False,
                     resume=True)
    assert run.cases[["case_id", "status"]].values.tolist() == [["c0", "error"], ["c1", "completed"]]
    assert runs_of(read_log(log)) == ["c0", "c1"]


def test_a_stopped_batchs_records_go_back_from_a_worker_process() -> None:
    """A process pool's worker sends the error back by pickle: the records go with it."""
    record: dict[str, Any] = {"index": 0, "case": {"id": "c0"}, "status": "error"}
    sent = pickle.loads(pickle.dumps(_BatchStopped("building the system raised", [record], [])))  # noqa: S301
    assert (str(sent), sent.records, sent.replays) == ("building the system raised", [record], [])
