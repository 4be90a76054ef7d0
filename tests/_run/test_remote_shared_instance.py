"""An executor's batches on a factory that returns an instance already held in the worker: a
``ThreadPoolExecutor`` ran its concurrent batches on one module-level instance (19 of 24 ``state_matches`` failed
that pass on one worker); the batch that would share it is refused in one line."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _reliability_systems import make_case, write_suite

import oloproof_nb as op
from oloproof_nb._run.systems import SHARED_INSTANCE
from oloproof_nb.errors import OloproofError

SINGLETON = '''
from relsys import VersionedDesk

DESK = VersionedDesk()


def make():
    return DESK
'''


def test_concurrent_batches_on_a_factory_returning_one_instance_are_refused(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Two batches sent at once, each of two cases of 0.2 s: the second builds while the first runs."""
    monkeypatch.setenv("RELSYS_SLEEP", "0.2")
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}") for i in range(4)], system="single:make")
    (root / "single.py").write_text(SINGLETON, encoding="utf-8")
    with ThreadPoolExecutor(2) as executor, pytest.raises(OloproofError) as caught:
        op.run(root, out=tmp_path / "run", executor=executor, chunk_size=2, progress=False, cache=False)
    assert str(caught.value).endswith(f", {SHARED_INSTANCE}")


def test_a_worker_takes_the_instance_back_once_the_call_a_timeout_abandoned_ended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An executor's worker refuses the instance a timed-out call still runs on (the batch's next case
    would run beside it), and a worker process, which keeps its suite and pool for the next run, kept refusing it in
    every later run, the call long ended, until the workers restarted. Two batches of a worker process, called here
    in this one: refused while the call runs; once it ended, the next batch runs on the instance."""
    from oloproof_nb._run.remote import _release_here, _remote_batch
    from oloproof_nb._run.systems import identity_of
    from oloproof_nb._run.timeouts import abandoned_calls

    release = tmp_path / "release"
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    root = write_suite(tmp_path / "suite", [make_case("c0", op="hang"), make_case("c1")], system="single:make",
                       case_timeout_s=0.2)
    (root / "single.py").write_text(SINGLETON, encoding="utf-8")
    suite = op.load_suite(root)
    version, fingerprint = identity_of(suite.resolve_system()(), suite.system_target, root=suite.root,
                                       spec=suite.config.system, timeout_s=None)
    cases = list(enumerate(suite.iter_cases()))
    try:
        try:
            with pytest.raises(OloproofError, match="exceeded case_timeout_s"):  # c1 would run beside c0's call
                _remote_batch(str(root), dict(suite.digests), cases, "run-1", version, fingerprint, False)
        finally:
            release.touch()  # the abandoned call ends
        for thread in abandoned_calls():
            thread.join(10)
        records, _ = _remote_batch(str(root), dict(suite.digests), cases[1:], "run-2", version, fingerprint, False)
        assert [(r["case"]["id"], r["status"]) for r in records] == [("c1", "completed")]
    finally:
        _release_here(str(root), None)
