"""A batch whose case raises the user's error (an ``OloproofError``) keeps the records of the cases it ran before,
as a serial run does, and the run stops with that error (its own class).

The batch's records went down with the error: a serial run of c0, c1, c2 whose c1 raised kept c0's record, the same
run on an executor kept none, and its resume ran c0 again.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _reliability_systems import FAULT_EVALUATOR, make_case, read_log, runs_of, write_suite

import oloproof_nb as op
from oloproof_nb._run import remote
from oloproof_nb.errors import ConfigError


def test_the_cases_a_batch_ran_before_the_users_error_are_recorded(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    root = write_suite(tmp_path / "suite", [make_case("c0"), make_case("c1"), make_case("c2")],
                       system="relsys:VersionedDesk")
    real = remote.execute_case

    def refusing_c1(case: Any, *args: Any, **kwargs: Any) -> Any:
        if case.id == "c1":
            raise ConfigError("oloproof.yaml", "evaluators[0]", "refused while c1 ran")
        return real(case, *args, **kwargs)

    with ThreadPoolExecutor(1) as executor:
        with monkeypatch.context() as patch:
            patch.setattr(remote, "execute_case", refusing_c1)
            # the message itself, then the run's folder as a note on Python 3.11+ (none on 3.10)
            with pytest.raises(ConfigError, match=r"^oloproof.yaml: evaluators\[0\]: refused while c1 ran(\n|$)"):
                op.run(root, out=tmp_path / "run", executor=executor, chunk_size=3, progress=False, cache=False)
        run = op.run(root, out=tmp_path / "run", executor=executor, chunk_size=3, progress=False, cache=False,
                     resume=True)
    assert run.cases[["case_id", "status"]].values.tolist() == [["c0", "completed"], ["c1", "completed"],
                                                                ["c2", "completed"]]
    assert runs_of(read_log(log)) == ["c0", "c1", "c2"]  # c0 ran once: the resume ran c1 and c2 alone


def test_the_replays_of_the_cases_a_batch_ran_before_the_users_error_are_appended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # c0's fault replay is recorded with its case: kept without it, c0's verdicts came from a replay replays.jsonl
    # never held
    monkeypatch.setenv("RELSYS_LOG", str(tmp_path / "log"))
    root = write_suite(tmp_path / "suite", [make_case("c0"), make_case("c1")], evaluators=[FAULT_EVALUATOR])
    real = remote.execute_case

    def refusing_c1(case: Any, *args: Any, **kwargs: Any) -> Any:
        if case.id == "c1":
            raise ConfigError("oloproof.yaml", "evaluators[0]", "refused while c1 ran")
        return real(case, *args, **kwargs)

    out = tmp_path / "run"
    with ThreadPoolExecutor(1) as executor:
        monkeypatch.setattr(remote, "execute_case", refusing_c1)
        with pytest.raises(ConfigError, match="refused while c1 ran"):
            op.run(root, out=out, executor=executor, chunk_size=2, progress=False, cache=False)
    cases = [json.loads(line)["case"]["id"] for line in (out / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    replays = [json.loads(line) for line in (out / "replays.jsonl").read_text(encoding="utf-8").splitlines()]
    assert cases == ["c0"]
    assert replays and {replay["case_id"] for replay in replays} == {"c0"}
