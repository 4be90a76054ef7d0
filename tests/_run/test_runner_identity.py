"""Every instance a thread run builds after its first is checked against the run's version and code fingerprint,
as a worker process's (``isolation``) and an executor's worker's (``_remote_batch``) were: a desk whose version is
read when it is built (from a deployment that changed during the run) ran later cases as v2 under a manifest
saying v1, in the default isolation, without a word."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _shared import outside_desk

import oloproof_nb as op

DEPLOYED = '''
import copy
import pathlib

HERE = pathlib.Path(__file__).parent


class Desk:
    """Reads the version deployed now (deployed.txt) when it is built; raises on the cases its input says."""

    def __init__(self):
        self.version = (HERE / "deployed.txt").read_text().strip()
        self.state = {}

    def reset(self, state):
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        if input.get("deploy"):  # the deployment moves on while the run goes
            (HERE / "deployed.txt").write_text(input["deploy"])
        if input.get("raise"):
            raise RuntimeError("the desk fell over")
        return {"steps": [], "answer": self.version}
'''

FINGERPRINTED = DEPLOYED.replace('''    def reset(self, state):''', '''    def fingerprint(self):
        return (HERE / "deployed.txt").read_text().strip()

    def reset(self, state):''').replace('''        self.version = (HERE / "deployed.txt").read_text().strip()''',
                                        '''        self.version = "desk-1"''')


def _suite(make_suite: Callable[..., Path], code: str, cases: list[dict]) -> Path:
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="desk:Desk")
    (root / "desk.py").write_text(code, encoding="utf-8")
    (root / "deployed.txt").write_text("v1", encoding="utf-8")
    return root


def _cases(n: int, **inputs: dict) -> list[dict]:
    return [{"id": f"c{i:02d}", "input": {"n": i, **inputs.get(f"c{i:02d}", {})}, "expected": {"answer": "v1"}}
            for i in range(n)]


def _answers(out: Path) -> list[str]:
    return [json.loads(line)["trajectory"]["answer"] for line in (out / "cases.jsonl").read_text().splitlines()
            if json.loads(line)["status"] == "completed"]


def test_a_replacement_with_another_version_stops_a_serial_run(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """c01 deploys v2 and raises: its instance is replaced before c02, and the new one says v2. Before, c02..c05
    answered v2 under a manifest saying v1 (4 of 6 records)."""
    root = _suite(make_suite, DEPLOYED, _cases(6, c01={"deploy": "v2", "raise": True}))
    out = tmp_path / "run"
    with pytest.raises(op.OloproofError) as info:
        op.run(root, out=out, progress=False)
    assert str(info.value) == (f"{root / 'oloproof.yaml'}: system: an instance built during the run has another "
                               "version than the run's ('v2' vs 'v1'): every instance must give the run's (one whose "
                               "version or fingerprint() differs per instance is refused too); do not change the "
                               "system's version or code during a run")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["system_version"] == "v1" and _answers(out) == ["v1"]  # c00; c01 raised; nothing ran on v2


def test_a_second_worker_with_another_version_stops_the_run(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """workers=2 builds a second instance before any case: the deployment moved after the first was built."""
    root = _suite(make_suite, DEPLOYED, _cases(4))
    suite = op.load_suite(root)
    first = []

    def factory() -> object:  # the suite's class, the deployment moved on after the first instance
        desk = suite.resolve_system()()
        if not first:
            first.append(desk)
            (root / "deployed.txt").write_text("v2", encoding="utf-8")
        return desk

    with pytest.raises(op.OloproofError, match=r"^an instance built during the run has another version than the "
                                               r"run's \('v2' vs 'v1'\)"):
        op.run(suite, system=factory, workers=2, out=tmp_path / "run", progress=False)


def test_another_fingerprint_is_named_as_such(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = _suite(make_suite, FINGERPRINTED, _cases(4, c00={"deploy": "v2", "raise": True}))
    with pytest.raises(op.OloproofError, match=r"has another code fingerprint than the run's \('[0-9a-f]{64}' vs "
                                               r"'[0-9a-f]{64}'\)"):
        op.run(root, out=tmp_path / "run", progress=False)


@pytest.mark.parametrize("workers", [1, 3])
def test_replacements_that_give_the_run_s_version_run_on(make_suite: Callable[..., Path], tmp_path: Path,
                                                         workers: int) -> None:
    """The check refuses only what differs: three cases that raise are replaced and the run goes on (a hand count:
    6 of 9 complete, each answering v1)."""
    raising = {f"c0{i}": {"raise": True} for i in (1, 4, 7)}
    root = _suite(make_suite, DEPLOYED, _cases(9, **raising))
    run = op.run(root, out=tmp_path / "run", workers=workers, progress=False)
    assert run.finished and _answers(tmp_path / "run") == ["v1"] * 6


def test_an_executor_s_replacement_is_checked_too(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """An executor's worker checked the instance a batch began with, not the one it built after a case that raised:
    c01 deploys v2 and raises, and c02..c05 ran as v2 in a run recorded as v1 (the v2 instance then pooled, as
    checked, for the next batches)."""
    from concurrent.futures import ThreadPoolExecutor

    root = _suite(make_suite, DEPLOYED, _cases(6, c01={"deploy": "v2", "raise": True}))
    with ThreadPoolExecutor(1) as executor, pytest.raises(op.OloproofError) as info:
        op.run(root, executor=executor, chunk_size=10, out=tmp_path / "run", progress=False)
    assert "has another version than the run's ('v2' vs 'v1'); restart the workers" in str(info.value)
    journal = tmp_path / "run" / "cases.jsonl"  # the batch's records are not kept: it ran on a refused instance
    assert not journal.exists() or "v2" not in _answers(tmp_path / "run")


def test_a_worker_process_s_replacement_sends_its_own_fingerprint(make_suite: Callable[..., Path],
                                                                 tmp_path: Path) -> None:
    """A worker process reported the first instance's code fingerprint again for the one it built after a case that
    raised, so a ``fingerprint()`` that moved on was never compared: c00 deploys v2 and raises, and the later cases
    ran on it in a run recorded with the first fingerprint."""
    root = _suite(make_suite, FINGERPRINTED, _cases(4, c00={"deploy": "v2", "raise": True}))
    with pytest.raises(op.OloproofError, match=r"a worker process built a system that has another code fingerprint "
                                               r"than the run's \('[0-9a-f]{64}' vs '[0-9a-f]{64}'\): every instance "
                                               r"must give the run's"):
        op.run(root, isolation="process", out=tmp_path / "run", progress=False)


OUTSIDE = outside_desk("v1")


def test_a_replacement_of_the_same_class_runs_on_when_its_file_outside_the_suite_was_saved(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A system module outside the suite folder (installed elsewhere), saved during a thread run: the
    replacement is an instance of the class the first one is, so it runs the code the run's fingerprint was taken
    of, and the run goes on (a hand count: 3 of 4 complete; c01 raised). Before, its files were digested again,
    and the run stopped ("has another code fingerprint than the run's"). A class imported again from the edited
    file is other code, and still refused."""
    import importlib
    import uuid

    name = f"f50_outside_{uuid.uuid4().hex[:8]}"
    outside = tmp_path / "installed"
    outside.mkdir()
    (outside / f"{name}.py").write_text(OUTSIDE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(outside))
    cases = _cases(4, c00={"save": True}, c01={"raise": True})
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system=f"{name}:Desk")
    run = op.run(root, out=tmp_path / "run", progress=False)
    assert run.finished and _answers(tmp_path / "run") == ["v1"] * 3
    assert (outside / f"{name}.py").read_text(encoding="utf-8").endswith("# saved\n")

    other = f"{name}_b"  # a class imported again from its edited file: other code, still refused
    (outside / f"{other}.py").write_text(OUTSIDE, encoding="utf-8")
    module = importlib.import_module(other)
    built: list[object] = []

    def factory() -> object:  # the first instance of the class imported; the next of the class imported again
        if built:
            (outside / f"{other}.py").write_text(OUTSIDE.replace('"v1"', '"v2"'), encoding="utf-8")
        built.append(importlib.reload(module).Desk() if built else module.Desk())
        return built[-1]

    with pytest.raises(op.OloproofError, match=r"has another code fingerprint than the run's"):
        op.run(_cases_suite(make_suite, other), system=factory, out=tmp_path / "reloaded", progress=False)
    assert _answers(tmp_path / "reloaded") == ["v1"]  # c00; c01 raised; nothing ran on the v2 code


def _cases_suite(make_suite: Callable[..., Path], module: str) -> Path:
    return make_suite(_cases(4, c01={"raise": True}), evaluators=[{"type": "answer_matches"}], system=f"{module}:Desk")
