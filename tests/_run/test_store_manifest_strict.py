"""``manifest.json`` is read strictly (``"n_cases": "5"`` was taken as 5), and every manifest this
version writes still reads: both bundled examples (metamorphic pairs, fault replays, receipts), epochs, a run
stopped part way, one resumed after a case run in flight, a system given the epoch and built with settings."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from _epoch_systems import SEEDED

import oloproof_nb as op
from oloproof_nb._run.store import read_manifest
from oloproof_nb.cli import main
from oloproof_nb.errors import RunDirError
from oloproof_nb.examples import init_example


def _stop_at(n: int):  # noqa: ANN202 - a progress callback that stops the run as a Ctrl-C does
    def progress(done: int, total: int) -> None:
        if done >= n:
            raise KeyboardInterrupt
    return progress


def _keys(directory: Path) -> set[str]:
    return set(json.loads((directory / "manifest.json").read_text(encoding="utf-8")))


def test_every_manifest_this_version_writes_is_read(tmp_path: Path) -> None:
    agent = init_example("stateful-agent", tmp_path / "agent")
    full = op.run(agent, out=tmp_path / "agent-run", progress=False)
    assert len(full.pairs) and len(full.replays)  # metamorphic pairs and fault replays
    assert read_manifest(full.directory).n_cases == 48
    assert op.gate(op.load_run(full.directory)).table.equals(op.gate(full).table)

    outcome = init_example("false-success", tmp_path / "outcome")
    receipts = op.run(outcome, out=tmp_path / "outcome-run", progress=False, epochs=2)
    assert len(receipts.receipts) == 12 and read_manifest(receipts.directory).epochs == 2
    assert len(op.load_run(receipts.directory).verdicts) == len(receipts.verdicts)

    stopped = tmp_path / "stopped"
    with pytest.raises(KeyboardInterrupt):
        op.run(agent, out=stopped, progress=_stop_at(3), epochs=2)
    assert read_manifest(stopped).finished_at is None and "finished_at" not in _keys(stopped)
    with (stopped / "started.jsonl").open("a", encoding="utf-8") as handle:  # as a process killed mid-case left it
        handle.write(json.dumps({"case": "ord-005", "epoch": 2, "at": time.time()}) + "\n")
    with pytest.raises(KeyboardInterrupt):
        op.run(agent, out=stopped, resume=True, progress=_stop_at(0))
    assert "abrupt_ends" in _keys(stopped)
    assert read_manifest(stopped).abrupt_ends[0].rerun == [("ord-005", 2)]  # type: ignore[index]
    op.run(agent, out=stopped, resume=True, progress=False)
    resumed = read_manifest(stopped)
    assert resumed.finished_at is not None and resumed.epochs == 2
    assert len(op.load_run(stopped).cases) == 96

    seeded = tmp_path / "seeded"
    seeded.mkdir()
    (seeded / "seeded.py").write_text(SEEDED, encoding="utf-8")
    (seeded / "cases.jsonl").write_text(json.dumps({"id": "a", "input": {}, "initial_state": {},
                                                    "expected": {"answer": "ok"}}) + "\n", encoding="utf-8")
    (seeded / "oloproof.yaml").write_text("name: seeded\nsystem: seeded:Seeded\nevaluators:\n"
                                          "  - type: answer_matches\n", encoding="utf-8")
    run = op.run(seeded, out=tmp_path / "seeded-run", progress=False)
    assert {"epoch_given", "settings_fingerprint"} <= _keys(run.directory)
    assert read_manifest(run.directory).epoch_given == ["run"]


def _finished(tmp_path: Path) -> Path:
    suite = init_example("false-success", tmp_path / "suite")
    return op.run(suite, out=tmp_path / "run", progress=False).directory


def _edit(directory: Path, change: Any) -> Path:
    path = directory / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "key"), [
    (lambda d: d.update(n_cases="6"), "n_cases"),
    (lambda d: d.update(n_cases=6.0), "n_cases"),
    (lambda d: d.update(epochs=True), "epochs"),
    (lambda d: d.update(suite=7), "suite"),
    (lambda d: d.update(finished_at=1733400000), "finished_at"),
    (lambda d: d.update(abrupt_ends=[{"how": None, "rerun": [["c1", "1"]]}]), "abrupt_ends[0].rerun[0][1]"),
    (lambda d: d["suite_config"]["repeated"].update(count="0"), "suite_config.repeated.count"),
])
def test_a_value_of_another_type_is_refused_naming_file_and_key(tmp_path: Path, change: Any, key: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    directory = _finished(tmp_path)
    path = _edit(directory, change)
    with pytest.raises(RunDirError) as err:
        read_manifest(directory)
    message = str(err.value)
    assert message.startswith(f"{path}: {key}: ") and "\n" not in message, message
    assert main(["gate", str(directory)]) == 2
    out = capsys.readouterr().err
    assert f"{path}: {key}: " in out and "Traceback" not in out


def test_an_unknown_key_is_refused(tmp_path: Path) -> None:
    directory = _finished(tmp_path)
    path = _edit(directory, lambda d: d.update(n_case=6))
    with pytest.raises(RunDirError, match=rf"^{path}: n_case: unknown key$"):
        read_manifest(directory)
