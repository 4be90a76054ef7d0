"""``oloproof receipt --json`` names a contract file whose name is not UTF-8 as ``gate --json`` and ``compare --json``
name such a file: by its escape as text (``c\\udce9.json``), as stderr shows it. Before, the message held the lone
surrogate itself, which ``json.dumps`` wrote as the escape ``\\udce9``: JSON that a strict parser (one that
refuses a lone surrogate, as RFC 8259 leaves it to) rejects, and whose text Python cannot encode as UTF-8."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from oloproof_nb.cli import main


def test_a_contract_file_name_that_is_not_utf8_is_said_by_its_escape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"c\xe9.json")  # '\udce9' in the name: the byte 0xE9 alone is no UTF-8
    assert main(["receipt", name, "--json"]) == 2
    out, err = capsys.readouterr()
    body = json.loads(out)
    body["message"].encode("utf-8")  # text a strict parser takes: no lone surrogate
    assert body == {"error": "contract error", "message": "c\\udce9.json: cannot read contract file: file not found"}
    assert err.strip() == f"oloproof: error: contract error: {body['message']}"
