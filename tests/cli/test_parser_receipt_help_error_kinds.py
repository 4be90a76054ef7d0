"""``oloproof receipt --help`` names every ``"error"`` kind that ``--json`` prints. It said "any other
error: "error"", while a bug in oloproof_nb prints ``{"error": "internal error", ...}`` (README: ``"error"`` or
``"internal error"``; ``tests/cli/test_parser_receipt_json_errors.py`` runs it)."""

from __future__ import annotations

import pytest

from oloproof_nb.cli import main


def test_the_help_names_the_internal_error_kind(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["receipt", "--help"])
    assert done.value.code == 2  # a completion hook's help verifies nothing
    text = " ".join(capsys.readouterr().err.split())  # the epilog's lines joined
    for kind in ('"usage error"', '"interrupted"', '"internal error"', '"contract error"'):
        assert kind in text, kind
    assert 'a bug in oloproof_nb: "internal error"' in text
