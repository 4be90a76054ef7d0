"""A factory that returns an instance the run already holds.

``system: single:make`` whose ``make()`` returns one module-level instance counted as a factory that builds: with
``workers=4`` the four worker slots held one object and ran four cases on its sandbox at once (24 cases that pass
``state_matches`` on one worker: 18 failed on four, nothing said why), and a serial run gave the next case the
instance a timed-out call was still writing into (an instance given to the run stops the run there instead). Now an
instance the factory gives while the run holds it is refused in one line naming the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _reliability_systems import make_case, read_log, runs_of, write_suite

import oloproof_nb as op
from oloproof_nb._run.systems import SHARED_INSTANCE
from oloproof_nb.errors import OloproofError

SINGLETON = '''
from relsys import VersionedDesk

DESK = VersionedDesk()


def make():
    return DESK
'''


def _suite(root: Path, cases: list[dict[str, object]], **config: object) -> Path:
    suite = write_suite(root, cases, system="single:make", **config)
    (suite / "single.py").write_text(SINGLETON, encoding="utf-8")
    return suite


def test_workers_on_a_factory_returning_one_instance_are_refused(tmp_path: Path) -> None:
    """Before: four cases on one sandbox at once, wrong states recorded without a word."""
    root = _suite(tmp_path / "suite", [make_case(f"c{i}") for i in range(4)])
    with pytest.raises(OloproofError) as caught:
        op.run(root, out=tmp_path / "run", workers=2, progress=False, cache=False)
    assert str(caught.value) == f"{root / 'oloproof.yaml'}: system: {SHARED_INSTANCE}"


def test_a_serial_run_stops_when_the_factory_gives_back_the_instance_a_timed_out_call_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: c1 and c2 ran on the instance c0's abandoned call was still running on (as ``system=Desk()`` does
    not: that run stops after c0)."""
    release, log = tmp_path / "release", tmp_path / "log"
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    monkeypatch.setenv("RELSYS_LOG", str(log))
    root = _suite(tmp_path / "suite", [make_case("c0", op="hang"), make_case("c1"), make_case("c2")],
                  case_timeout_s=0.2)
    try:
        with pytest.raises(OloproofError, match="the system's factory returned an instance the run still holds"):
            op.run(root, out=tmp_path / "run", progress=False, cache=False)
    finally:
        release.touch()  # the abandoned call ends
    assert runs_of(read_log(log)) == ["c0"]
    run = op.load_run(tmp_path / "run")
    assert run.cases[["case_id", "status"]].values.tolist() == [["c0", "timeout"]]


def test_a_serial_run_takes_the_same_instance_back_after_a_case_that_raised(tmp_path: Path) -> None:
    """No call runs on it any more: the factory may give it back (as a run given one instance uses it throughout)."""
    root = _suite(tmp_path / "suite", [make_case("c0", op="raise"), make_case("c1"), make_case("c2", op="raise"),
                                       make_case("c3")])
    run = op.run(root, out=tmp_path / "run", progress=False, cache=False)
    assert run.cases["status"].tolist() == ["error", "completed", "error", "completed"]
