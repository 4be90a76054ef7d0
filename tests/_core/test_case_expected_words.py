"""A case's ``expected`` that is no object is quoted as the case file writes it (true, not True)."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb._core.case import case_from_mapping


@pytest.mark.parametrize(("expected", "said"), [(True, "true"), (False, "false"), (7, "7"), ([1], "[1]")])
def test_an_expected_that_is_no_object_is_quoted_in_the_files_words(expected: Any, said: str) -> None:
    with pytest.raises(ValueError) as caught:
        case_from_mapping({"id": "c1", "input": {"a": 1}, "expected": expected})
    assert str(caught.value) == f"'expected' must be an object with keys answer and/or state, got {said}"
