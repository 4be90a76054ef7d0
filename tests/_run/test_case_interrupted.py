"""A call the user's Ctrl-C interrupted goes on in the background, as one abandoned after a timeout does: the
instance it runs on is refused by every run of the process until it ends. Before, only a timed-out call was noted
(``systems.note_abandoned``), so a notebook's resume after Ctrl-C took a module-level instance back from its
factory and ran the interrupted case again on it, beside the call still running (the side-channel log showed
``run c0`` twice on one instance, the first never ended)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest
from _reliability_systems import interrupt_once_running, make_case, read_log, runs_of, write_suite

import oloproof_nb as op
from oloproof_nb._run.systems import BUSY_INSTANCE
from oloproof_nb._run.timeouts import abandoned_calls
from oloproof_nb.errors import OloproofError

#: A factory that gives the module's one instance.
SINGLETON = '''
from relsys import VersionedDesk

DESK = VersionedDesk()


def make():
    return DESK
'''


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="a signal is the main thread's")
def test_a_resume_after_ctrl_c_waits_for_the_interrupted_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release, log = tmp_path / "release", tmp_path / "log"
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    monkeypatch.setenv("RELSYS_LOG", str(log))
    root = write_suite(tmp_path / "suite", [make_case("c0", op="hang"), make_case("c1"), make_case("c2")],
                       system="single:make", case_timeout_s=5)
    (root / "single.py").write_text(SINGLETON, encoding="utf-8")
    op.load_suite(root)  # the system imported before the run: the Ctrl-C lands in the case's call, not the import
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, whatever a runner set
    try:
        watcher = interrupt_once_running(log, 0.5)
        with pytest.raises(KeyboardInterrupt):
            op.run(root, out=tmp_path / "run", progress=False, cache=False)
        watcher.join(10)
        with pytest.raises(OloproofError) as caught:
            op.run(root, out=tmp_path / "run", resume=True, progress=False, cache=False)
        assert str(caught.value) == f"{root / 'oloproof.yaml'}: system: {BUSY_INSTANCE}"
        assert runs_of(read_log(log)) == ["c0"]  # before: c0 ran again on the instance its first call still ran on
    finally:
        signal.signal(signal.SIGINT, before)
        release.touch()  # the interrupted call ends
    for thread in abandoned_calls():  # this test's thread ran the case: its abandoned helper
        thread.join(10)
    run = op.run(root, out=tmp_path / "run", resume=True, progress=False, cache=False)
    assert run.cases[["case_id", "status"]].values.tolist() == [["c0", "completed"], ["c1", "completed"],
                                                               ["c2", "completed"]]
