"""A case's ``cluster`` that reads as nothing (``""``, blank space, invisible characters alone) is
refused, naming the file and the line: every case given it fell silently in one nameless cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_nb._config.cases import load_cases
from oloproof_nb.errors import CaseFileError


@pytest.mark.parametrize("cluster", ["", " ", "\t", "\u200b", " \u00ad "])
def test_a_nameless_cluster_is_refused(cluster: str, tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    lines = [{"id": "c1", "input": {"q": "a"}, "cluster": "k"}, {"id": "c2", "input": {"q": "b"}, "cluster": cluster}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(CaseFileError) as err:
        load_cases(path)
    message = str(err.value)
    assert message.startswith(f"{path}: line 2: 'cluster' is "), message
    assert "a name that reads as nothing" in message and "\n" not in message


def test_named_clusters_and_no_cluster_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    lines = [{"id": "c1", "input": {}, "cluster": "k"}, {"id": "c2", "input": {}, "cluster": 0},
             {"id": "c3", "input": {}, "cluster": None}, {"id": "c4", "input": {}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert [case.cluster for case in load_cases(path)] == ["k", "0", "c3", "c4"]
