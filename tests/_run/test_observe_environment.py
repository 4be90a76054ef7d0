"""The environment a receipt is observed in: read when called, never shown by ``help()``.

A default written as ``environ=os.environ`` is the process's environment object itself, and ``inspect.signature``
(what ``help(op.observe_file)`` and a notebook's ``op.observe_file?`` print) shows its repr: every variable and its
value, the HMAC key a contract names included, in a notebook's saved output. The default is ``None`` instead, and
``os.environ`` is read when the function is called."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import os
import pydoc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._core.receipts import digest_key_from_env
from oloproof_nb.errors import DigestKeyError

MARKER = "s3cr3t-marker-7f1c"


def _public_callables() -> list[tuple[str, Callable[..., Any]]]:
    out = [(name, getattr(op, name)) for name in op.__all__ if callable(getattr(op, name))]
    return [*out, ("digest_key_from_env", digest_key_from_env)]


def test_no_public_default_is_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLOPROOF_TEST_KEY", MARKER)
    checked = 0
    for name, function in _public_callables():
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):  # a class without a Python signature
            continue
        checked += 1
        for parameter in signature.parameters.values():
            assert parameter.default is not os.environ, f"{name}({parameter.name}=os.environ)"
        assert MARKER not in str(signature), name
    assert checked > 30


@pytest.mark.parametrize("function", [op.observe_file, op.verify_contract_file, digest_key_from_env])
def test_help_does_not_print_the_key(function: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLOPROOF_TEST_KEY", MARKER)
    text = pydoc.render_doc(function, renderer=pydoc.plaintext)
    assert "environ" in text and MARKER not in text


def test_the_default_reads_the_environment_when_called(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    artifact = tmp_path / "report.csv"
    artifact.write_bytes(b"id,total\n1,40\n")
    contract = op.OutcomeContract(artifact_id="report", digest_key_env="OLOPROOF_TEST_KEY")
    monkeypatch.delenv("OLOPROOF_TEST_KEY", raising=False)
    with pytest.raises(DigestKeyError, match="OLOPROOF_TEST_KEY is unset"):
        op.observe_file(contract, artifact)
    monkeypatch.setenv("OLOPROOF_TEST_KEY", MARKER)  # set after the function was defined and first called
    evidence = op.observe_file(contract, artifact)
    assert evidence is not None
    assert evidence.sha256 == hmac.new(MARKER.encode(), artifact.read_bytes(), hashlib.sha256).hexdigest()
    assert digest_key_from_env("OLOPROOF_TEST_KEY") == MARKER.encode()
    # a mapping given is the only place looked in
    with pytest.raises(DigestKeyError, match="OLOPROOF_TEST_KEY is unset"):
        op.observe_file(contract, artifact, environ={})
