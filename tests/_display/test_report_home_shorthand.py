"""A report or an export written to a folder named ``~`` of the current folder (``--out ./~/report.html``) is named
``./~/…`` in what refuses it: a Path prints ``~/…``, the home folder's file to anyone who reads it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._display.report import report_path
from oloproof_nb.errors import ExportError


def test_a_report_out_in_a_folder_named_tilde_is_named_as_given(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(op.OloproofError) as refused:
        report_path("./~/rep")
    assert str(refused.value) == "./~/rep: a report is .html or .md, not '(no suffix)'"
    (tmp_path / "~" / "report.html").mkdir(parents=True)
    with pytest.raises(op.OloproofError) as refused:
        report_path(Path("./~/report.html"))
    assert str(refused.value).startswith("./~/report.html: is a folder, not a report's file; choose another out=, "
                                         "e.g. ./~/report.html/report.html")


def test_an_export_to_a_folder_named_tilde_is_named_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ExportError) as refused:
        op.export_table(pd.DataFrame({"a": [1]}), "./~/table.xyz")
    assert str(refused.value).startswith("./~/table.xyz: unknown table format '.xyz'")
    (tmp_path / "~").write_text("a file where the folder would be\n", encoding="utf-8")
    with pytest.raises(ExportError) as refused:
        op.export_table(pd.DataFrame({"a": [1]}), "./~/table.csv")
    assert str(refused.value).startswith("./~: is a file, not a folder")
