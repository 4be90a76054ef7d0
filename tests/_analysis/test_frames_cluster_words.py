"""A stored case record whose cluster is not text is named in the file's words (a number, a list), not Python's.

The run folder's ``cases.jsonl`` is a JSON file a user can edit or damage: ``oloproof gate`` on a record whose
cluster was 7.5 said ``its case's cluster is a JSON float``, of ``{"a": 1}`` ``a JSON dict``.
"""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb._analysis.frames import _cluster


@pytest.mark.parametrize(("cluster", "said"), [
    (7.5, "a number (7.5)"), (7, "a number (7)"), (True, "true"), (None, "null"), ([1], "a list"),
    ({"a": 1}, "a mapping"),
])
def test_a_cluster_that_is_not_text_is_named_in_the_files_words(cluster: Any, said: str) -> None:
    with pytest.raises(TypeError) as caught:
        _cluster({"case": {"cluster": cluster}})  # type: ignore[typeddict-item]
    assert str(caught.value) == f"its case's cluster is {said}, not text"
