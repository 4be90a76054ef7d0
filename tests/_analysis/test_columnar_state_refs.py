"""``snapshots`` rows whose states are stored by address beside a row stored inline (``state_ref`` null), checked
against states written by hand and pyarrow's own read of the table."""

from __future__ import annotations

from collections.abc import Iterable

from oloproof_nb._analysis import columnar
from oloproof_nb._analysis.columns import SNAPSHOTS
from oloproof_nb._analysis.frames import snapshot_item


def _env(case_id: str, state: object) -> dict[str, object]:
    return {"schema": "environment_state/v1", "run_id": "r1", "case_id": case_id, "case_digest": "d" * 64,
            "system_version": None, "captured_at": "2026-12-06T23:58:52.858304Z", "state_digest": "e" * 64,
            "state": state}


def test_a_row_without_an_address_keeps_its_own_state_beside_rows_with_one() -> None:
    """Rows by address and one stored inline (no address: ``state_ref`` null) in one table: the inline row's state
    is its own, never the state of the first address read."""
    stored = {"orders": {"o1": "refunded"}}
    inline = {"orders": {"o2": "open"}}
    envs = [_env("a", stored), _env("b", inline), _env("c", stored)]
    refs = ["f" * 64, None, "f" * 64]
    items = [snapshot_item(env, ref, columnar.json_text) for env, ref in zip(envs, refs, strict=True)]
    table = columnar.to_arrow(SNAPSHOTS, items, refs)
    assert table.column("state_ref").to_pylist() == refs  # pyarrow's own read of the table
    assert table.column("state").to_pylist() == [None, '{"orders":{"o2":"open"}}', None]
    asked: list[list[str]] = []

    def states(wanted: Iterable[str]) -> list[object]:
        asked.append(list(wanted))
        return [stored for _ in asked[-1]]

    frame = columnar.from_arrow(SNAPSHOTS, table, states)
    assert list(frame["case_id"]) == ["a", "b", "c"]
    assert list(frame["state"]) == [stored, inline, stored]
    assert asked == [["f" * 64]]  # each distinct address read once
