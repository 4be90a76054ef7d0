"""manifest.json's ``schema`` is read, not only written: a run folder of another schema is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_nb._core.records import RUN_SCHEMA
from oloproof_nb._run.store import read_manifest
from oloproof_nb.cli import main
from oloproof_nb.errors import RunDirError


def _manifest(schema: str | None) -> dict[str, object]:
    """A finished run's manifest of no cases, written by hand (the keys the runner writes)."""
    data: dict[str, object] = {"suite": "s", "run_id": "r1", "started_at": "2026-12-05T14:00:00Z",
                               "finished_at": "2026-12-05T14:00:01Z", "oloproof_nb": "0.1.0", "n_cases": 0}
    if schema is not None:
        data["schema"] = schema
    return data


@pytest.mark.parametrize("schema", [RUN_SCHEMA, None])
def test_this_schema_or_none_is_read(tmp_path: Path, schema: str | None) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps(_manifest(schema)), encoding="utf-8")
    assert read_manifest(tmp_path).schema_ == "oloproof_run/v1"  # written out, not the constant read back


@pytest.mark.parametrize("schema", ["oloproof_run/v2", "environment_state/v1", ""])
def test_another_schema_is_refused_in_one_line_naming_file_and_key(tmp_path: Path, schema: str) -> None:
    # before: any text was taken for this version's run folder (a later version's folder read as this one's)
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(_manifest(schema)), encoding="utf-8")
    with pytest.raises(RunDirError) as err:
        read_manifest(tmp_path)
    message = str(err.value)
    # the value is a schema; it was said to be "not a run folder"
    assert message.startswith(f"{path}: schema: '{schema}' is not a schema this version of oloproof_nb reads")
    assert message.endswith("allowed: oloproof_run/v1") and "\n" not in message


def test_the_gate_command_exits_2_on_another_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps(_manifest("oloproof_run/v9")), encoding="utf-8")
    (tmp_path / "cases.jsonl").write_text("", encoding="utf-8")
    assert main(["gate", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "manifest.json: schema: 'oloproof_run/v9' is not a schema this version" in err and "Traceback" not in err
