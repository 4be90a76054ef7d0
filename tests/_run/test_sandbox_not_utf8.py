"""Text UTF-8 cannot store, in a snapshot or a trajectory: named where it sits.

A sandbox of files snapshots its folder with ``os.listdir``; a file named in Latin-1 (``caf\\xe9.txt``) comes back
as ``'caf\\udce9.txt'``, a lone surrogate that cannot be written as UTF-8. The case's error named only its offset in
the JSON text (``'utf-8' codec can't encode character '\\udce9' in position 40: surrogates not allowed``), where
every other value the store refuses is named by its path (``accounts.a.tags``), and said nothing of a fix.
"""

from __future__ import annotations

from typing import Any

import pytest

import oloproof_nb as op
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


def test_a_long_path_is_cut_as_the_path_of_any_refused_value_is() -> None:
    """A key of 100,000 characters is not quoted whole in the reason (a path naming a set is cut at 120 too)."""
    name = "x" * 100_000 + "\udce9"
    with pytest.raises(SystemContractError) as caught:
        run_case(_Folder({"files": {name: 1}}), _case(), run_id="r", system_version=None, timeout_s=None)
    reason = failure_reason(caught.value)
    assert "at files.xxx" in reason and "'\\udce9'" in reason and len(reason) < 600


def test_a_trajectory_with_text_utf8_cannot_store_names_its_path() -> None:
    with pytest.raises(SystemContractError) as caught:
        run_case(_Folder({"files": {}}, result={"names": ["a", "caf\udce9.txt"]}), _case(), run_id="r",
                 system_version=None, timeout_s=None)
    reason = failure_reason(caught.value)
    assert reason.startswith("run() returned a trajectory that cannot be stored as JSON: it holds text with a lone "
                             "surrogate '\\udce9' at steps.0.result.names.1,")
    reason.encode("utf-8")


@pytest.mark.parametrize(("folder", "lead", "where"), [
    (_Folder({"files": {"caf\udce9.txt": {1, 2}}}), "snapshot() returned a state that is not JSON: the state holds a "
     "set value", 'at files["caf\\udce9.txt"]'),
    (_Folder({"files": {}}, result={"caf\udce9.txt": b"x"}), "run() returned a trajectory that cannot be stored as "
     "JSON: step 0's result holds a bytes value", 'at ["caf\\udce9.txt"]'),
])
def test_a_value_with_no_json_form_under_a_key_utf8_cannot_store_is_named_by_its_escape(
        folder: _Folder, lead: str, where: str) -> None:
    """The path of a refused value quotes its keys: one UTF-8 cannot store is written as its escape, so the
    case's record can hold the reason (it could not be written, and the run stopped with an internal error)."""
    with pytest.raises(SystemContractError) as caught:
        run_case(folder, _case(), run_id="r", system_version=None, timeout_s=None)
    reason = failure_reason(caught.value)
    assert reason.startswith(lead) and where in reason
    reason.encode("utf-8")


SET_UNDER_A_LATIN1_NAME = """
class Folder:
    def reset(self, state):
        pass

    def snapshot(self):
        return {"files": {"caf\\udce9.txt": {"tags": {"a", "b"}}}}

    def run(self, input):
        return {"steps": [], "answer": "ok"}
"""


def test_a_run_whose_snapshot_holds_a_set_under_a_key_utf8_cannot_store_goes_on(make_suite: Any) -> None:
    """Each case is an ``error`` naming the key by its escape; the run goes on and its records are written."""
    folder = make_suite([{"id": "a", "input": {"q": 1}}, {"id": "b", "input": {"q": 2}}],
                        evaluators=[{"type": "state_matches"}], system="sysmod:Folder",
                        system_code=SET_UNDER_A_LATIN1_NAME)
    run = op.run(op.load_suite(folder), progress=False)
    assert list(run.cases["status"]) == ["error", "error"]
    assert all('the state holds a set value at files["caf\\udce9.txt"].tags' in e for e in run.cases["error"])
