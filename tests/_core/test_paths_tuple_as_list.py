"""The path functions read a tuple as the list a stored state holds (``to_json`` writes a tuple as a
JSON array). Before, ``values_equal`` compared tuples with Python's ``==`` (``(True,)`` equalled ``(1,)``, though
``True`` is not ``1`` in every state check; two NaN objects in tuples differed), and ``op.leaf_diff``, ``op.flatten``
and ``op.get_path`` read a tuple as one leaf: ``leaf_diff({"a": (1, 2)}, {"a": [1, 2]})`` found three changed rows
where the stored states are equal. The reference for each answer is the same call on the JSON form of the values,
``json.loads(json.dumps(x))``, which is what the run stores and judges."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from oloproof_nb._core.paths import ABSENT, flatten, get_path, leaf_diff, values_equal


def _stored(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize(("a", "b", "want"), [
    ((True,), (1,), False),          # a boolean is no number, in a tuple too
    ((1,), (1.0,), True),
    ((1, 2), [1, 2], True),          # a tuple and the list it is stored as
    ((1, 2), [1, 2, 3], False),
    ({"t": (True, 1)}, {"t": [True, 1]}, True),
    ((), [], True),
])
def test_values_equal_reads_a_tuple_as_a_list(a: Any, b: Any, want: bool) -> None:
    assert values_equal(a, b) is want
    assert values_equal(_stored(a), _stored(b)) is want  # the reference: the values as a run stores them


def test_nan_in_tuples_equals_nan_as_in_lists() -> None:
    assert values_equal((math.nan,), (float("nan"),))
    assert values_equal([math.nan], [float("nan")])


@pytest.mark.parametrize(("before", "after"), [
    ({"a": (1, 2)}, {"a": [1, 2]}),
    ({"a": (1, 2)}, {"a": [1, 3]}),
    ({"a": (1, 2)}, {"a": (1,)}),
    ({"a": ({"x": True},)}, {"a": [{"x": 1}]}),
    ({"a": ()}, {"a": (5,)}),
])
def test_leaf_diff_of_tuples_is_that_of_the_stored_lists(before: Any, after: Any) -> None:
    rows, reference = leaf_diff(before, after), leaf_diff(_stored(before), _stored(after))
    assert [path for path, *_ in rows] == [path for path, *_ in reference]
    # the values are the caller's own (an empty tuple stays one), each equal to the stored one
    pairs = zip(rows, reference, strict=True)
    assert all(values_equal(b, rb) and values_equal(a, ra) for (_, b, a), (_, rb, ra) in pairs)


def test_flatten_and_get_path_index_a_tuple() -> None:
    state = {"items": ({"qty": 2}, {"qty": 3})}
    assert flatten(state) == flatten(_stored(state)) == {"items.0.qty": 2, "items.1.qty": 3}
    assert get_path(state, "items.1.qty") == 3
    assert get_path(state, "items.2") is ABSENT
