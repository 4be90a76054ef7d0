"""Slice specs turned into half-open bins (oloproof_nb._core.slicespec), checked against ``numpy.digitize``.

The labels, the parse errors and the digit and edge limits are pinned in tests/_analysis/test_slices.py; here
the bins themselves: every count falls in exactly one, the one NumPy's half-open binning gives.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof_nb._core.slicespec import DIMENSIONS, SliceSpec, parse_slice_spec
from oloproof_nb.errors import SliceSpecError


@pytest.mark.parametrize("spec", ["tool_calls:1", "tool_calls:0,1,2", "trajectory_length:2,4", "tool_calls:3,7,8,20"])
def test_every_count_falls_in_the_one_bin_numpy_gives_it(spec: str) -> None:
    """``np.digitize(x, edges)`` (right=False) is the index i with edges[i-1] ≤ x < edges[i]: the bins' own rule,
    lower inclusive and upper exclusive. Mutants caught: an upper end inclusive, a bin left out or doubled, an
    edge shifted by one."""
    parsed = parse_slice_spec(spec)
    bins = parsed.bins()
    assert len(bins) == len(parsed.edges) + 1
    for count in range(0, 25):
        holding = [i for i, (_, lower, upper) in enumerate(bins) if lower <= count < upper]
        assert holding == [int(np.digitize(count, parsed.edges))], (spec, count)
    assert bins[0][1] == -math.inf and bins[-1][2] == math.inf  # nothing falls outside every bin


def test_the_canonical_text_and_the_column_binned() -> None:
    """The spaces and leading zeros a user writes are not in the canonical text; each dimension bins the
    ``run.cases`` column DESIGN.md lists for it (``n_tool_calls``, ``trajectory_length``)."""
    spec = parse_slice_spec("  tool_calls : 01 ,  2,10 ")
    assert spec == SliceSpec("tool_calls", (1, 2, 10)) and spec.text == "tool_calls:1,2,10"
    assert spec.column == "n_tool_calls"
    assert parse_slice_spec("trajectory_length:3").column == "trajectory_length"
    assert DIMENSIONS == {"tool_calls": "n_tool_calls", "trajectory_length": "trajectory_length"}


@pytest.mark.parametrize("edge", ["\u00b2", "\uff13"])  # ², a full-width ３: str.isdigit is True, int() refuses ²
def test_a_digit_that_is_not_ascii_is_a_one_line_error(edge: str) -> None:
    """Mutant caught: the ``isascii`` test dropped (``int('²')`` raised ValueError past the one-line error)."""
    with pytest.raises(SliceSpecError, match="is not a non-negative integer") as info:
        parse_slice_spec(f"tool_calls:1,{edge}")
    assert "\n" not in str(info.value)
