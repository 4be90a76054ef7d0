"""A streamed case file rewritten during the run, the same size and its modification time put back."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from _shared import times_put_back

import oloproof_nb as op
from oloproof_nb._config import suite as suite_module
from oloproof_nb.errors import CaseFileError, OloproofError

#: The digest a later case's contract pins (no file ever holds bytes with this digest)...
PINNED = "a" * 64
#: ...and the bytes the system writes instead, with their digest (hashlib, not the toolkit).
JUNK = b"junk\n"
JUNK_SHA = hashlib.sha256(JUNK).hexdigest()

# The system's first case rewrites the case file in place, the same size: the later case's pinned digest becomes
# the digest of what it writes. Then it puts the modification time back, and waits until the status change
# time moved off the one the suite was loaded with (a coarse clock can give both the same tick: only that
# window is out of reach of a check by stat).
EDITING_SYSTEM = f'''
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent


class Editor:
    version = "editor-1"

    def reset(self, state):
        pass

    def snapshot(self):
        return {{}}

    def run(self, input):
        if input.get("edit"):
            path = ROOT / "cases.jsonl"
            loaded = int((ROOT / "loaded_ctime").read_text())
            before = os.stat(path)
            with open(path, "r+b") as handle:
                data = handle.read()
                handle.seek(0)
                handle.write(data.replace({PINNED!r}.encode(), {JUNK_SHA!r}.encode()))
            for _ in range(1000):
                os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
                if os.stat(path).st_ctime_ns != loaded:
                    break
                time.sleep(0.005)
        if input.get("write"):
            (ROOT / "art.txt").write_bytes({JUNK!r})
        return {{"steps": [], "answer": "done", "status": "completed"}}
'''


def _suite(make_suite, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(suite_module, "KEEP_CASES_BYTES", 0)  # every case file is streamed, as one over 4 MiB
    pad = "x" * (2 << 20)  # c1 lies beyond what a reader has buffered when c0 runs
    cases = [{"id": "c0", "input": {"edit": True, "pad": pad}}, {"id": "p1", "input": {"pad": pad}},
             {"id": "c1", "input": {"write": True},
              "outcome": {"artifact_id": "report", "locator": "art.txt", "expected_sha256": PINNED}}]
    return make_suite(cases, system="sysmod:Editor", system_code=EDITING_SYSTEM,
                      evaluators=[{"type": "outcome_contract"}])


def test_a_streamed_case_file_rewritten_with_its_time_put_back_stops_the_run(make_suite, monkeypatch,
                                                                             tmp_path: Path) -> None:
    """Before, the run went on with the rewritten case: c1's contract now pinned the digest of the junk the
    system wrote, and its receipt was ``verified`` (a contract the agent edited, taken as the suite's)."""
    root = _suite(make_suite, monkeypatch)
    suite = op.load_suite(root)
    assert suite.kept_cases is None
    (root / "loaded_ctime").write_text(str(os.stat(root / "cases.jsonl").st_ctime_ns))
    with pytest.raises(OloproofError, match=r"cases\.jsonl: changed since the suite was loaded"):
        op.run(suite, out=tmp_path / "out", progress=False)
    assert JUNK_SHA in (root / "cases.jsonl").read_text()  # the system did rewrite it
    records = [json.loads(line) for line in (tmp_path / "out" / "cases.jsonl").open(encoding="utf-8")]
    assert [r["case"]["id"] for r in records if r["receipts"]] == []  # stopped before c1 was judged


def test_iter_cases_refuses_a_file_rewritten_in_place_with_the_same_size_and_time(make_suite, monkeypatch) -> None:
    root = _suite(make_suite, monkeypatch)
    suite = op.load_suite(root)
    path = root / "cases.jsonl"
    loaded = os.stat(path)
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(data.replace(PINNED.encode(), JUNK_SHA.encode()))
    now = times_put_back(path, loaded)
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (loaded.st_size, loaded.st_mtime_ns, loaded.st_ino)
    with pytest.raises(CaseFileError, match="changed since the suite was loaded"):
        list(suite.iter_cases())
