"""A state check that fails on texts or keys written in another Unicode form says so, and what to write.

``"José"`` composed (NFC, ``Jos\\xe9``) and decomposed (NFD, ``Jose\\u0301``, as a macOS file name comes back) print
alike and are two values: text is compared code point by code point (README section 2). Before, a ``changes``
check of an expected ``files["José.txt"]`` against a sandbox that lists the file in the other form failed with
``1 unexpected change: files["José.txt"].size; 1 of 1 expected paths differ: files["José.txt"].size``: one path,
as the reader sees it, both missing and unexpected, and nothing said why.
"""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb.evaluators import StateMatches

COMPOSED, DECOMPOSED = "Jos\u00e9", "Jose\u0301"
HINT = ("the same letters composed and decomposed): text is compared code point by code point; write expected.state "
        "as snapshot() gives it")


def _reason(mode: str, expected: dict[str, Any], state: dict[str, Any], initial: dict[str, Any] | None = None) -> str:
    ev = StateMatches(type="state_matches", mode=mode)  # type: ignore[arg-type]
    verdict = ev.judge(expected, state, "0", initial=initial or {}).verdicts[0]
    assert verdict["verdict"] == "fail"
    return str(verdict["reason"])


def test_a_text_in_another_unicode_form_is_named() -> None:
    assert _reason("subset", {"o": {"name": COMPOSED}}, {"o": {"name": DECOMPOSED}}) == (
        "1 of 1 paths differ: o.name; 1 of them differ in Unicode form only (o.name: the text 'Jos\\xe9' in the "
        "case file, 'Jose\\u0301' in the state, " + HINT)


def test_changes_mode_names_a_key_in_another_unicode_form_on_both_of_its_rows() -> None:
    """Two differing rows, by hand: the unexpected new size under the decomposed key and the expected size under
    the composed one; both meet the key pair."""
    reason = _reason("changes", {"files": {COMPOSED + ".txt": {"size": 3}}},
                     {"files": {DECOMPOSED + ".txt": {"size": 3}}}, {"files": {}})
    assert reason == (
        f'1 unexpected change: files["{DECOMPOSED}.txt"].size; 1 of 1 expected paths differ: '
        f'files["{COMPOSED}.txt"].size; 2 of them differ in Unicode form only (files["{DECOMPOSED}.txt"].size: the '
        "key 'Jos\\xe9.txt' in the case file, 'Jose\\u0301.txt' in the state, " + HINT)


@pytest.mark.parametrize("mode", ["subset", "whole"])
def test_a_key_in_another_unicode_form_is_named_in_every_mode(mode: str) -> None:
    reason = _reason(mode, {"files": {DECOMPOSED: 1}}, {"files": {COMPOSED: 1}})
    assert reason.endswith(f"(files.{DECOMPOSED}: the key 'Jose\\u0301' in the case file, 'Jos\\xe9' in the state, "
                           + HINT)


@pytest.mark.parametrize(("expected", "state"), [
    ({"o": {"name": "Jos\u00e9"}}, {"o": {"name": "Jose"}}),  # another letter, not another form
    ({"files": {"Jos\u00e9": 1}}, {"files": {"Jose": 1}}),
    ({"files": {"Jos\u00e9": 1}}, {"files": {"Jos\u00e9": 2}}),  # the key is there: its value differs
    ({"files": {"a": 1}}, {"files": {"b": 1}}),
])
def test_a_real_difference_gets_no_note(expected: dict[str, Any], state: dict[str, Any]) -> None:
    assert "Unicode" not in _reason("whole", expected, state)
