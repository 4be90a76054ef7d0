"""The refusal of a factory that gives back an instance the run holds, for instances that take no weak reference.

Such an instance (``__slots__`` without ``__weakref__``, ``@dataclass(slots=True)``, ``types.SimpleNamespace``) was
not tracked, so a module-level one still ran ``workers=4`` on one sandbox (6 of 8 ``state_matches`` failed that
pass on one worker). Such an instance is held by a strong reference now, and released with the rest at the run's
end, on the helper thread as every instance is. And a resume in the same process is refused an instance a call
abandoned after a timeout still runs on (it ran its cases beside that call).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _reliability_systems import make_case, read_log, runs_of, write_suite

import oloproof_nb as op
from oloproof_nb._run.systems import BUSY_INSTANCE, SHARED_INSTANCE
from oloproof_nb._run.timeouts import abandoned_calls
from oloproof_nb.errors import OloproofError

#: A desk whose instances take no weak reference; ``make`` gives the module's one, ``Slotted`` a new one. Each
#: instance finalised appends the name of the thread that dropped its last reference to ``$SLOTTED_LOG``.
SLOTTED = '''
import os
import threading

from relsys import VersionedDesk


class Slotted:
    __slots__ = ("inner",)

    def __init__(self):
        self.inner = VersionedDesk()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __del__(self):
        try:
            with open(os.environ["SLOTTED_LOG"], "a", encoding="utf-8") as fh:
                fh.write(threading.current_thread().name + "\\n")
        except (NameError, TypeError):  # the module's own DESK, at the interpreter's exit
            pass


DESK = Slotted()


def make():
    return DESK
'''


def _suite(root: Path, system: str, cases: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SLOTTED_LOG", str(root.parent / "finalised"))
    suite = write_suite(root, cases, system=system)
    (suite / "slotted.py").write_text(SLOTTED, encoding="utf-8")
    return suite


def test_workers_on_a_factory_returning_one_slotted_instance_are_refused(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: 8 cases ran on one sandbox at once, on 4 threads, and 6 recorded a wrong state without a word."""
    root = _suite(tmp_path / "suite", "slotted:make", [make_case(f"c{i}") for i in range(8)], monkeypatch)
    with pytest.raises(OloproofError) as caught:
        op.run(root, out=tmp_path / "run", workers=4, progress=False, cache=False)
    assert str(caught.value) == f"{root / 'oloproof.yaml'}: system: {SHARED_INSTANCE}"


def test_new_slotted_instances_run_on_workers_and_are_released_on_the_helper_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A class whose instances take no weak reference still builds one per worker, and one after a case that
    raised; each is finalised by the run, on its helper thread (held by a strong reference past the run's release,
    one would go later on the caller's thread, outside case_timeout_s)."""
    cases = [make_case("c0", op="raise"), make_case("c1"), make_case("c2", op="raise"), make_case("c3")]
    root = _suite(tmp_path / "suite", "slotted:Slotted", cases, monkeypatch)
    run = op.run(root, out=tmp_path / "run", workers=2, progress=False, cache=False)
    assert run.cases["status"].tolist() == ["error", "completed", "error", "completed"]
    finalised = (tmp_path / "finalised").read_text(encoding="utf-8").split()
    # 2 workers' instances and one built after each case that raised: 4, the module's DESK not among them
    assert len(finalised) == 4
    assert set(finalised) == {"oloproof-call"}


#: A factory that gives the module's one instance (``test_runner_shared_instance.py``'s case).
SINGLETON = '''
from relsys import VersionedDesk

DESK = VersionedDesk()


def make():
    return DESK
'''


@pytest.mark.parametrize("given", [False, True])
def test_a_resume_in_the_same_process_waits_for_the_call_a_timeout_abandoned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: bool) -> None:
    """The refusal stopped a serial run whose factory gave back the instance a timed-out call still ran on, and
    a run given one instance stops after that case; a resume in the same process (a notebook's) took the instance
    again, a new ``Held`` knowing nothing of the call, and ran c1 and c2 beside it. Now refused while the call runs,
    in one line; once it ended, the resume runs them."""
    release, log = tmp_path / "release", tmp_path / "log"
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    monkeypatch.setenv("RELSYS_LOG", str(log))
    root = write_suite(tmp_path / "suite", [make_case("c0", op="hang"), make_case("c1"), make_case("c2")],
                       system="single:make", case_timeout_s=0.2)
    (root / "single.py").write_text(SINGLETON, encoding="utf-8")
    system = op.load_suite(root).resolve_system()() if given else None
    try:
        with pytest.raises(OloproofError):
            op.run(root, out=tmp_path / "run", system=system, progress=False, cache=False)
        with pytest.raises(OloproofError) as caught:
            op.run(root, out=tmp_path / "run", system=system, resume=True, progress=False, cache=False)
        assert str(caught.value) == (BUSY_INSTANCE if given else f"{root / 'oloproof.yaml'}: system: {BUSY_INSTANCE}")
        assert runs_of(read_log(log)) == ["c0"]  # before: c1 and c2 ran on the instance c0's call still ran on
    finally:
        release.touch()  # the abandoned call ends
    for thread in abandoned_calls():  # this test's thread ran the cases: its abandoned helpers
        thread.join(10)
    run = op.run(root, out=tmp_path / "run", system=system, resume=True, progress=False, cache=False)
    assert run.cases[["case_id", "status"]].values.tolist() == [["c0", "timeout"], ["c1", "completed"],
                                                               ["c2", "completed"]]
