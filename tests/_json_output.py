"""Checks of the ``--json`` output of ``oloproof gate`` and ``oloproof compare``
(``tests/cli/test_output_json.py``, ``tests/cli/test_commands_compare.py``): one strict JSON object on stdout, a table
cell as it should be written, and the keys named in ``--help``."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from oloproof_nb.cli.parser import build_parser


def _refuse_constant(name: str) -> Any:
    raise AssertionError(f"{name} is not strict JSON")


def one_object(out: str) -> dict[str, Any]:
    """Standard output as ``--json`` must leave it: one JSON object, newline-terminated, nothing else, no NaN or
    Infinity."""
    assert out.endswith("\n") and out.count("\n") == 1, out
    body = json.loads(out, parse_constant=_refuse_constant)
    assert isinstance(body, dict)
    return body


def cell(value: Any) -> Any:
    """A table cell as strict JSON holds it, written out here (not by the export's conversion): NaN null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def assert_help_names(keys: set[str], command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof COMMAND --help`` names each of ``keys`` (quoted, as in the object) and the error object."""
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    text = capsys.readouterr().out
    assert keys and all(f'"{key}"' in text for key in keys), (keys, text)
    assert '{"error": "...", "message": "..."}' in text
