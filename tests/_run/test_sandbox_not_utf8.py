"""Text UTF-8 cannot store, in a snapshot or a trajectory: named where it sits.

A sandbox of files snapshots its folder with ``os.listdir``; a file named in Latin-1 (``caf\\xe9.txt``) comes back
as ``'caf\\udce9.txt'``, a lone surrogate that cannot be written as UTF-8. The case's error named only its offset in
the JSON text (``'utf-8' codec can't encode character '\\udce9' in position 40: surrogates not allowed``), where
every other value the store refuses is named by its path (``accounts.a.tags``), and said nothing of a fix.
"""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb._core.case import Case, case_digest
from oloproof_nb._run.sandbox import SystemContractError, failure_reason, run_case


def _case() -> Case:
    raw = {"id": "0", "input": {"q": "x"}, "initial_state": {"files": {}}}
    return Case.model_validate({**raw, "cluster": "0", "digest": case_digest(raw), "source_id": "0"})


class _Folder:
    def __init__(self, state: Any, result: Any = None) -> None:
        self.state, self.result = state, result

    def reset(self, state: Any) -> None:
        pass

    def snapshot(self) -> Any:
        return self.state

    def run(self, input: Any) -> Any:
        steps = [] if self.result is None else [{"kind": "tool_call", "tool": "ls", "args": {}, "result": self.result}]
        return {"steps": steps, "answer": "ok", "status": "completed"}


@pytest.mark.parametrize(("state", "where"), [
    ({"files": {"caf\udce9.txt": {"size": 3}}}, 'at files["caf\\udce9.txt"]'),  # a key
    ({"files": {"a.txt": {"size": 3, "owner": "ren\udce9"}}}, 'at files["a.txt"].owner'),  # a value
    ({"names": ["a", "b\ud800"]}, "at names.1"),
])
def test_a_snapshot_with_text_utf8_cannot_store_names_its_path(state: Any, where: str) -> None:
    with pytest.raises(SystemContractError) as caught:
        run_case(_Folder(state), _case(), run_id="r", system_version=None, timeout_s=None)
    reason = failure_reason(caught.value)
    assert reason.startswith("snapshot() returned a state that is not JSON: the state holds text with a lone "
                             "surrogate")
    assert where in reason and "backslashreplace" in reason
    reason.encode("utf-8")  # the reason itself can be stored


def test_a_trajectory_with_text_utf8_cannot_store_names_its_path() -> None:
    with pytest.raises(SystemContractError) as caught:
        run_case(_Folder({"files": {}}, result={"names": ["a", "caf\udce9.txt"]}), _case(), run_id="r",
                 system_version=None, timeout_s=None)
    reason = failure_reason(caught.value)
    assert reason.startswith("run() returned a trajectory that cannot be stored as JSON: it holds text with a lone "
                             "surrogate '\\udce9' at steps.0.result.names.1,")
    reason.encode("utf-8")
