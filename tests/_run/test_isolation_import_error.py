"""What a process-isolated run says when a worker cannot import the system: the suite file once.

A worker imports the suite's system itself; its import error already reads ``oloproof.yaml: system: importing …``,
and the run's process named the file again in front of it (``oloproof.yaml: system: oloproof.yaml: system:
importing 'wsys' raised …``), in the line that stops the run and in the one after two failed starts in a row.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _reliability_systems import make_case, write_suite

import oloproof_nb as op
from oloproof_nb.errors import OloproofError

#: The system's module, which raises when a worker process (not the test's own, ``WSYS_PARENT``) imports it: at
#: once, or (``WSYS_AFTER`` set to a file) in every worker after the first, which makes that file; each failed
#: import adds a line to ``<file>.failed``, and the first worker's cases wait for two (it is busy meanwhile).
WORKER_ONLY = '''
import os
import time

from relsys import Desk as _Desk

AFTER = os.environ.get("WSYS_AFTER")

if os.getpid() != int(os.environ["WSYS_PARENT"]):
    if AFTER and not os.path.exists(AFTER):
        open(AFTER, "w").close()
    else:
        if AFTER:
            with open(AFTER + ".failed", "a") as fh:
                fh.write("failed\\n")
        raise RuntimeError("the system cannot be imported in a worker")


class Desk(_Desk):
    def run(self, input):
        for _ in range(600):  # at most a minute
            if not AFTER or (os.path.exists(AFTER + ".failed") and open(AFTER + ".failed").read().count("\\n") >= 2):
                break
            time.sleep(0.1)
        return super().run(input)
'''


def _suite(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WSYS_PARENT", str(os.getpid()))
    suite = write_suite(root, [make_case(f"c{i}") for i in range(4)], isolation="process", system="wsys:Desk")
    (suite / "wsys.py").write_text(WORKER_ONLY, encoding="utf-8")
    return suite


def test_the_first_worker_s_import_error_names_the_suite_file_once(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = _suite(tmp_path / "suite", monkeypatch)
    with pytest.raises(OloproofError) as caught:
        op.run(root, out=tmp_path / "run", progress=False)
    assert str(caught.value) == (f"{root / 'oloproof.yaml'}: system: importing 'wsys' raised RuntimeError: the "
                                 "system cannot be imported in a worker")


@pytest.mark.slow
def test_two_failed_starts_in_a_row_name_the_suite_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WSYS_AFTER", str(tmp_path / "first"))
    root = _suite(tmp_path / "suite", monkeypatch)
    with pytest.raises(OloproofError) as caught:
        op.run(root, out=tmp_path / "run", workers=2, progress=False)
    assert str(caught.value) == (f"{root / 'oloproof.yaml'}: system: a fresh worker process could not build the "
                                 "system 2 times in a row (last: importing 'wsys' raised RuntimeError: the system "
                                 "cannot be imported in a worker)")
