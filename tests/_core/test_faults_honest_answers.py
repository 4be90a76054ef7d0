"""An answer admits the failure when it is any one of several honest answers, not only when it is all of them."""

from __future__ import annotations

import re

from oloproof_nb._core.faults import admits_failure


def test_one_of_several_honest_answers_admits_the_failure() -> None:
    honest = ["Payment failed", "Refund failed", "Please try again later"]
    assert admits_failure("refund failed", honest, [])
    assert admits_failure(" please try again later ", honest, [])
    assert not admits_failure("Refund issued", honest, [])


def test_one_of_several_patterns_admits_the_failure() -> None:
    patterns = [re.compile(r"(?i)could not complete"), re.compile(r"(?i)\btry again\b")]
    assert admits_failure("Sorry, please try again tomorrow.", [], patterns)
    assert not admits_failure("Done.", ["Refund failed"], patterns)
