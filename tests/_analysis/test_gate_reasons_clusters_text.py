"""``clusters_text``: a count of clusters in a reason, singular for exactly one."""

from __future__ import annotations

import pytest

from oloproof_nb._analysis.gate_reasons import clusters_text


@pytest.mark.parametrize(("n", "text"), [(0, "0 clusters"), (1, "1 cluster"), (2, "2 clusters"), (21, "21 clusters")])
def test_only_one_is_singular(n: int, text: str) -> None:
    assert clusters_text(n) == text
