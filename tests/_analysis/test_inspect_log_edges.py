"""Edges the other tests did not pin (found by mutation testing) for op.from_inspect on the real mockllm log of
tests/_inspect_task.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import oloproof_nb as op

TASK = Path(__file__).resolve().parents[1] / "_inspect_task.py"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The log (.eval in its folder, and the same as .json), made once per module in a child process."""
    root = tmp_path_factory.mktemp("inspect")
    env = {**os.environ, "INSPECT_DISPLAY": "none", "XDG_DATA_HOME": str(root / "xdg"),
           "INSPECT_LOG_DIR": str(root / "logs"), "NO_PROXY": "*"}
    done = subprocess.run([sys.executable, str(TASK), str(root / "logs"), str(root / "json")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (eval_file,) = sorted((root / "logs").glob("*.eval"))
    return {"dir": root / "logs", "eval": eval_file, "json": root / "json" / "refund_desk.json", "root": root}


def test_one_log_twice_in_a_folder_is_refused_not_doubled(logs: dict[str, Path], tmp_path: Path) -> None:
    """The same log copied twice into a folder (a CI artifact downloaded twice) would count each sample twice."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(logs["eval"], folder / "a.eval")
    shutil.copy2(logs["eval"], folder / "b.eval")
    with pytest.raises(op.OloproofError, match=r"sample '.+' epoch 1 is also in .*a\.eval"):
        op.from_inspect(folder)


def test_logs_of_two_models_are_refused(logs: dict[str, Path], tmp_path: Path) -> None:
    """A folder holding one model's log and another model's (other sample ids) is two systems, not one run."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(logs["json"], folder / "one.json")
    data = json.loads(logs["json"].read_text(encoding="utf-8"))
    data["eval"]["model"] = "mockllm/other"
    for sample in data.get("samples") or []:
        sample["id"] = f"other-{sample['id']}"
    dataset = data["eval"].get("dataset") or {}
    if dataset.get("sample_ids"):
        dataset["sample_ids"] = [f"other-{sid}" for sid in dataset["sample_ids"]]
    (folder / "two.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(op.OloproofError, match=r"logs of different models"):
        op.from_inspect(folder)


def test_a_folder_with_one_unfinished_log_is_an_unfinished_run(logs: dict[str, Path], tmp_path: Path) -> None:
    """One finished log and one still running (status "started", other samples): the run did not finish, so its
    manifest has no finished_at (the gate then gives no release decision)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(logs["json"], folder / "done.json")
    data = json.loads(logs["json"].read_text(encoding="utf-8"))
    data["status"] = "started"
    for sample in data.get("samples") or []:
        sample["id"] = f"more-{sample['id']}"
    dataset = data["eval"].get("dataset") or {}
    if dataset.get("sample_ids"):
        dataset["sample_ids"] = [f"more-{sid}" for sid in dataset["sample_ids"]]
    (folder / "running.json").write_text(json.dumps(data), encoding="utf-8")
    run = op.from_inspect(folder)
    assert run.manifest.finished_at is None
    assert op.from_inspect(folder / "done.json").manifest.finished_at is not None


def test_a_sample_whose_sandbox_changed_is_another_case() -> None:
    """The sandbox a sample starts in is part of its initial state, as setup and files are: another sandbox
    configuration is another case (the existing test changes setup and files only)."""
    from inspect_ai.dataset import Sample

    from oloproof_nb._analysis.inspect_log import sample_digest

    a = Sample(input="refund o1", target="refunded", id="s1", sandbox=("docker", "compose-a.yaml"))
    b = Sample(input="refund o1", target="refunded", id="s1", sandbox=("docker", "compose-b.yaml"))
    plain = Sample(input="refund o1", target="refunded", id="s1")
    assert sample_digest(a) != sample_digest(b)
    assert sample_digest(a) != sample_digest(plain)
