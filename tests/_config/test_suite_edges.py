"""Edges the other tests did not pin (found by mutation testing) for the suite's digests
(oloproof_nb._config.suite)."""

from __future__ import annotations

from oloproof_nb._config.suite import changed_digests


def test_a_digest_only_the_new_side_has_is_a_change() -> None:
    # a python check whose code digest appears only now (e.g. a check added) is named, like one that changed
    assert changed_digests({"cases.jsonl": "a"}, {"cases.jsonl": "a", "code:checks:done": "c"}) == [
        "the code of checks:done"]
