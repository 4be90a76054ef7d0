"""An executor's batches on a factory that returns an instance already held in the worker (review R67): a
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
