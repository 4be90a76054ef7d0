"""Which ``.json`` files of a log folder are taken for Inspect AI logs by their name alone.

Inspect AI names a log ``<created>_<task>_<id>.json``, the creation time first (``2026-07-25T14-00-00-00-00``): a
file of another kind beside the logs whose name merely holds a time further on is not one (it is skipped, as any
``.json`` that is not a log), and an empty one whose name starts with the time, written with colons or dashes, is
refused naming it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from _inspect_logs import refund_desk, shared_logs

from oloproof_nb._analysis.inspect_files import inspect_log_files
from oloproof_nb.errors import OloproofError


@pytest.fixture(scope="module")
def eval_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The refund-desk log of tests/_inspect_task.py (read only: a test copies it)."""
    with shared_logs(tmp_path_factory, "refund-desk", refund_desk) as root:
        (found,) = sorted((root / "logs").glob("*.eval"))
        yield found


def _folder(eval_file: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(eval_file, folder / eval_file.name)
    return folder


def test_a_time_further_on_in_a_name_is_no_log_name(eval_file: Path, tmp_path: Path) -> None:
    folder = _folder(eval_file, tmp_path)
    (folder / "summary_2026-07-25T14-00-00.json").write_text(json.dumps({"passed": 3}), encoding="utf-8")
    assert inspect_log_files(folder) == [folder / eval_file.name]


@pytest.mark.parametrize("name", ["2026-07-25T14:00:00+00:00_task_abc.json", "2026-07-25T14-00-00_task_abc.json"],
                         ids=["colons", "dashes"])
def test_an_empty_file_named_from_its_creation_time_is_refused(eval_file: Path, tmp_path: Path, name: str) -> None:
    folder = _folder(eval_file, tmp_path)
    (folder / name).write_bytes(b"")
    with pytest.raises(OloproofError) as raised:
        inspect_log_files(folder)
    assert str(raised.value) == (f"{folder / name}: not a readable Inspect AI log (named as Inspect AI names its logs, "
                                 "but not an eval log's JSON); repair or remove it, or read the other logs one by one")
