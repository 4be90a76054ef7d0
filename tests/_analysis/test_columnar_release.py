"""A columnar copy records the release of oloproof_nb that made it (``oloproof_nb`` in ``frames/_source.json``).

A release may change how a frame is derived from the journal without changing ``FORMAT`` (the files' layout); a copy
that recorded only the format was then read as fresh by the new release, its frames derived by the old one. Now a
copy another release made (or one that names none: made before copies recorded it) is rebuilt once from the
journal, one this release made is kept, and a Run loaded before another release rebuilt the copy refuses to read
a frame from the new one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._analysis import columnar
from oloproof_nb.errors import CopyChangedError


def _run(make_suite: Any, tmp_path: Path) -> Path:
    root = make_suite([{"id": f"c{i}", "input": {"answer": i}, "expected": {"answer": i}} for i in range(3)])
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    return out


def _source(out: Path) -> dict[str, Any]:
    return json.loads((out / "frames" / columnar.SOURCE_FILE).read_text(encoding="utf-8"))


def _frame_files(out: Path) -> dict[str, tuple[int, int]]:
    """``{file: (inode, mtime_ns)}`` of the copy's frame files: a rebuilt copy puts new files in place."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "frames").glob("*.parquet")}


@pytest.mark.parametrize("release", ["0.0.1", None])
def test_a_copy_another_release_made_is_rebuilt_once(make_suite: Any, tmp_path: Path, release: str | None) -> None:
    """``release`` None: a copy of this format made before copies recorded their release (its ``_source.json``
    has no ``oloproof_nb``)."""
    out = _run(make_suite, tmp_path)
    source = _source(out)
    assert source["oloproof_nb"] == op.__version__  # the run's own copy names this release
    if release is None:
        del source["oloproof_nb"]
    else:
        source["oloproof_nb"] = release
    (out / "frames" / columnar.SOURCE_FILE).write_text(json.dumps(source) + "\n", encoding="utf-8")
    old = _frame_files(out)
    assert not columnar.is_fresh(out)  # same format, same journal, same frame files: the release alone differs
    assert list(op.load_run(out).cases["case_id"]) == ["c0", "c1", "c2"]
    assert columnar.is_fresh(out) and _source(out)["oloproof_nb"] == op.__version__
    rebuilt = _frame_files(out)
    assert all(rebuilt[name] != old[name] for name in old)  # every file put in place anew
    op.load_run(out).verdicts  # noqa: B018 - read a frame: the copy is now this release's, kept as it is
    assert _frame_files(out) == rebuilt


def test_a_copy_this_release_made_is_kept(make_suite: Any, tmp_path: Path) -> None:
    out = _run(make_suite, tmp_path)
    before, text = _frame_files(out), (out / "frames" / columnar.SOURCE_FILE).read_text(encoding="utf-8")
    assert json.loads(text)["oloproof_nb"] == op.__version__ and columnar.is_fresh(out)
    assert list(op.load_run(out).verdicts["case_id"].unique()) == ["c0", "c1", "c2"]
    assert _frame_files(out) == before
    assert (out / "frames" / columnar.SOURCE_FILE).read_text(encoding="utf-8") == text


def test_a_run_loaded_before_another_release_rebuilt_its_copy_reads_no_frame_of_it(
        make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two releases reading one folder: the frames a Run reads are all of the copy it was loaded with, never some
    derived by another release (a copy of the same format and journal, but not of the same release)."""
    out = _run(make_suite, tmp_path)
    first = op.load_run(out)
    assert list(first.cases["case_id"]) == ["c0", "c1", "c2"]
    with monkeypatch.context() as patch:
        patch.setattr(columnar, "__version__", "9.9.9")  # another release opens the folder and rebuilds the copy
        op.load_run(out).cases  # noqa: B018
        assert _source(out)["oloproof_nb"] == "9.9.9"
    with pytest.raises(CopyChangedError, match=r"another release of oloproof_nb rebuilt its columnar copy"):
        first.verdicts  # noqa: B018 - not read yet: it would come from the other release's copy
