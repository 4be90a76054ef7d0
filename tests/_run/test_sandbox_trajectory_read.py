"""The step a case run's error names: what ``run()`` returned is the agent's.

The sandbox routine names ``snapshot()`` while the state is taken and converted, and no method while the
trajectory ``run()`` returned is read between the two; no test read a trajectory that raised there, so a routine
that kept ``snapshot()`` named for it (the line that clears the step dropped) went unseen.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from oloproof_nb._core.case import Case, case_digest
from oloproof_nb._run.sandbox import failure_reason, run_case


def _case(case_id: str) -> Case:
    raw = {"id": case_id, "input": {"q": case_id}, "initial_state": {"rows": {}}}
    return Case.model_validate({**raw, "cluster": case_id, "digest": case_digest(raw), "source_id": case_id})


class _Answer(Mapping[str, Any]):
    """An answer fetched when read (a remote agent's report): its store is gone."""

    def __getitem__(self, key: str) -> Any:
        return {"answer": "ok"}[key]

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[str]:
        raise ConnectionError("the report store went away")


class _Remote:
    def reset(self, state: dict[str, Any]) -> None:
        self.state = state

    def run(self, given: dict[str, Any]) -> dict[str, Any]:
        return {"steps": [], "answer": _Answer(), "status": "completed"}

    def snapshot(self) -> dict[str, Any]:
        return self.state


def test_what_run_returned_raising_when_read_is_not_named_as_snapshot_s() -> None:
    """Read between ``snapshot()`` and the conversion of the state: the answer is what ``run()`` returned, so its
    reason names no method (the agent's, as what ``run()`` raised)."""
    with pytest.raises(ConnectionError) as err:
        run_case(_Remote(), _case("c0"), run_id="r", system_version=None, timeout_s=None)
    assert failure_reason(err.value) == "ConnectionError: the report store went away"
