"""``op.from_inspect``'s ``pass_threshold`` as an int too big for a float (``10**400``) is refused in one line, as
``inf`` is: no float can hold it, so no score could be compared with it (it raised ``OverflowError`` before)."""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof_nb as op


@pytest.mark.parametrize("threshold", [10**400, -(10**400), {"rating": 10**400}], ids=["1e400", "-1e400", "mapping"])
def test_inspect_threshold_beyond_a_float_is_refused(threshold: object, tmp_path: Path) -> None:
    with pytest.raises(op.OloproofError, match=r"pass_threshold.*give a finite number") as info:
        op.from_inspect(tmp_path / "absent.eval", pass_threshold=threshold)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
