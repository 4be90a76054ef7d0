"""A file's path in oloproof.yaml written from the home folder (``cases: ~/data/cases.jsonl``) is refused naming the
key and the path in full: no shell expands ``~`` in a file, and the case file was looked for in a folder named ``~``
of the suite folder ("file ~/data/cases.jsonl not found", beside a file that is there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb.errors import ConfigError

BASE = {"name": "s", "system": "desk:Desk"}
TRANSFORM = {"name": "injected", "field": "message", "template": "{value} x", "minimum_validity": 0.8}


def _said(given: str, full: Path) -> str:
    return (f"{given!r} starts with '~', which only a shell expands to the home folder (here it names a folder '~'); "
            f"write the path in full: {str(full)!r}, or from the suite folder")


def test_a_case_file_from_the_home_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        parse_suite_config({**BASE, "cases": "~/data/cases.jsonl"})
    assert str(caught.value) == f"oloproof.yaml: cases: {_said('~/data/cases.jsonl', tmp_path / 'data/cases.jsonl')}"


def test_a_label_file_from_the_home_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    transform = {**TRANSFORM, "validity_labels": "~/labels.jsonl"}
    with pytest.raises(ConfigError) as caught:
        parse_suite_config({**BASE, "metamorphic": {"transforms": [transform]}})
    assert str(caught.value) == (f"oloproof.yaml: metamorphic.transforms[0].validity_labels: "
                                 f"{_said('~/labels.jsonl', tmp_path / 'labels.jsonl')}")


@pytest.mark.parametrize("cases", ["cases~.jsonl", "~cases.jsonl", "data/~/cases.jsonl", "./~/cases.jsonl"])
def test_a_tilde_elsewhere_is_part_of_the_name(cases: str) -> None:
    assert parse_suite_config({**BASE, "cases": cases}).cases == cases
