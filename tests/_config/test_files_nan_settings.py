"""A number setting given NaN (``.nan`` in YAML, ``float("nan")`` in code) is refused as no number, naming the file,
the key and what goes there: pydantic's bounds said ``regression.margin: Input should be less than 1 (got nan)``, a
bound NaN does not pass for another reason than the one it gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb._config.release import load_release
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb.errors import ConfigError

NOT_A_NUMBER = "not NaN (.nan), which is no number"


@pytest.mark.parametrize(("text", "key", "what", "tail"), [
    ("regression: {margin: .nan}\n", "regression.margin", "a number between 0 and 1", ""),
    ("regression: {margin: .NaN}\n", "regression.margin", "a number between 0 and 1", ""),
    # the confidence's range, as its every other refusal ends (tests/_analysis/test_gate_overrides.py)
    ("confidence: .nan\n", "confidence", "a confidence level, e.g. 0.95", "; allowed: 0.5 ≤ confidence < 1"),
])
def test_a_nan_release_setting_is_named_as_no_number(tmp_path: Path, text: str, key: str, what: str,
                                                     tail: str) -> None:
    path = tmp_path / "release.yaml"
    path.write_text("criteria: {answer_matches: 0.9}\n" + text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_release(path)
    assert str(caught.value) == f"{path}: {key}: must be {what}, {NOT_A_NUMBER}{tail}"


BASE = {"name": "s", "system": "desk:Desk"}
TRANSFORM = {"name": "injected", "field": "message", "template": "{value} x", "validity_labels": "l.jsonl"}


@pytest.mark.parametrize(("raw", "key", "what"), [
    ({**BASE, "case_timeout_s": float("nan")}, "case_timeout_s", "a number of seconds"),
    ({**BASE, "metamorphic": {"transforms": [{**TRANSFORM, "minimum_validity": float("nan")}]}},
     "metamorphic.transforms[0].minimum_validity", "a share between 0 and 1"),
    ({**BASE, "evaluators": [{"type": "state_matches", "tolerance": float("nan")}]}, "evaluators[0].tolerance",
     "an absolute tolerance (a number)"),
])
def test_a_nan_suite_setting_is_named_as_no_number(raw: dict[str, object], key: str, what: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_suite_config(raw)
    assert str(caught.value) == f"oloproof.yaml: {key}: must be {what}, {NOT_A_NUMBER}"


def test_an_infinite_margin_keeps_its_bound() -> None:
    """An infinity is a number past the bound, and the bound says so."""
    from oloproof_nb._config.release import parse_release

    with pytest.raises(ConfigError, match=r"regression.margin: Input should be less than 1 \(got inf\)"):
        parse_release({"regression": {"margin": float("inf")}})
