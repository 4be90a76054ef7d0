"""Edges the other tests do not pin for the JSONL journal reader and the torn-tail cut
of oloproof_nb._run.store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_nb._run.store import read_jsonl, truncate_torn_tail
from oloproof_nb.errors import RunDirError


def test_a_damaged_line_after_the_first_batch_is_named_by_its_own_line_number(tmp_path: Path) -> None:
    # 600 good records, then a damaged one: it is line 601 of the file (counted by hand), past the first batch of 512
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps({"i": i}) + "\n" for i in range(600)) + "{not json\n", encoding="utf-8")
    with pytest.raises(RunDirError, match=r"line 601: a stored record is not valid JSON"):
        list(read_jsonl(path))


def test_one_line_holding_two_objects_is_damage_not_two_records(tmp_path: Path) -> None:
    # line 2 is '{"b":2},{"c":3}': no JSON object, though the batch read as one array would take it for two
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2},{"c":3}\n{"d":4}\n')
    with pytest.raises(RunDirError, match=r"line 2: a stored record is not valid JSON"):
        list(read_jsonl(path))


@pytest.mark.parametrize("line", [b"[1, 2]", b"3", b'"text"', b"null"])
def test_a_line_that_is_json_but_no_object_is_damage(tmp_path: Path, line: bytes) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"a":1}\n' + line + b"\n")
    with pytest.raises(RunDirError, match=r"line 2: a stored record is not a JSON object"):
        list(read_jsonl(path))


def test_a_journal_that_is_only_a_torn_line_is_cut_to_nothing(tmp_path: Path) -> None:
    # the process died while writing the very first record: no newline anywhere, so nothing of it is kept, and a
    # record appended on resume starts a line of its own
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"case": {"id": "c1", "ep')
    truncate_torn_tail(path)
    assert path.read_bytes() == b""
    with path.open("ab") as handle:
        handle.write(b'{"a":1}\n')
    assert list(read_jsonl(path)) == [{"a": 1}]


def test_after_a_torn_append_nothing_more_is_appended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that failed half way leaves a torn line; another worker's append after it would put a whole record
    behind the torn one, a damaged line in the middle of the journal, which resume (cutting the tail) cannot mend."""
    import errno
    import os

    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run import store as store_module
    from oloproof_nb._run.store import RunStore
    from oloproof_nb.errors import StoreWriteError

    manifest = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)
    store = RunStore.create(tmp_path / "r", manifest)
    store.append_case({"case": {"id": "a"}, "n": 1})  # type: ignore[typeddict-item]
    real_write = os.write
    calls = {"n": 0}

    def torn(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            real_write(fd, bytes(data)[:5])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    class FakeOs:
        def __getattr__(self, name: str) -> object:
            return torn if name == "write" else getattr(os, name)

    monkeypatch.setattr(store_module, "os", FakeOs())
    with pytest.raises(StoreWriteError, match="No space left on device"):
        store.append_case({"case": {"id": "b"}, "n": 2})  # type: ignore[typeddict-item]
    with pytest.raises(StoreWriteError, match="an earlier write failed; the run stopped"):
        store.append_case({"case": {"id": "c"}, "n": 3})  # type: ignore[typeddict-item]
    monkeypatch.undo()
    text = (tmp_path / "r" / "cases.jsonl").read_text(encoding="utf-8")
    assert text.count("\n") == 1 and text.endswith('\n{"cas')  # one record, then the torn start: nothing after it
    store.close()


def test_a_failed_manifest_write_stops_the_appends_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run import store as store_module
    from oloproof_nb._run.store import RunStore
    from oloproof_nb.errors import StoreWriteError

    manifest = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)
    store = RunStore.create(tmp_path / "r", manifest)

    def full(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    class FakeOs:
        def __getattr__(self, name: str) -> object:
            return full if name == "replace" else getattr(os, name)

    monkeypatch.setattr(store_module, "os", FakeOs())
    with pytest.raises(StoreWriteError, match="No space left on device"):
        store.write_manifest()
    monkeypatch.undo()
    with pytest.raises(StoreWriteError, match="an earlier write failed"):
        store.append_case({"case": {"id": "a"}, "n": 1})  # type: ignore[typeddict-item]
    store.close()


def test_fsync_per_record_makes_each_new_journal_file_durable_in_its_folder(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """With fsync="record", a journal file created mid-run has its folder entry fsynced too, or a power loss can
    lose the file though its records were fsynced."""
    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run import store as store_module
    from oloproof_nb._run.store import RunStore

    manifest = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)
    folders: list[Path] = []
    real = store_module._fsync_dir
    monkeypatch.setattr(store_module, "_fsync_dir", lambda d: (folders.append(Path(d)), real(d))[1])
    store = RunStore.create(tmp_path / "r", manifest, fsync="record")
    before = len(folders)
    store.append_case({"case": {"id": "a"}, "n": 1})  # type: ignore[typeddict-item]  # creates cases.jsonl
    created = len(folders) - before
    store.append_case({"case": {"id": "b"}, "n": 2})  # type: ignore[typeddict-item]  # the file exists now
    assert created >= 1 and folders[-1] == tmp_path / "r" and len(folders) - before == created
    store.close()


def test_a_run_another_process_created_while_this_one_waited_for_the_lock_is_never_overwritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes create the same out= folder: both find it empty, the other takes the lock first and starts its
    run. The one that gets the lock next must refuse the folder, not write its manifest over the other run's."""
    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run.lock import RunLock
    from oloproof_nb._run.store import RunStore

    def manifest(run_id: str) -> Manifest:
        return Manifest(suite="s", run_id=run_id, started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0",
                        n_cases=0)

    acquire = RunLock.acquire
    raced: list[bool] = []

    def the_other_process_first(directory: Path) -> RunLock:  # between this process's emptiness check and its lock
        if not raced:
            raced.append(True)
            theirs = RunStore.create(directory, manifest("theirs"))
            theirs.append_case({"case": {"id": "a"}, "n": 1})  # type: ignore[typeddict-item]
            theirs.close()
        return acquire(directory)

    monkeypatch.setattr(RunLock, "acquire", the_other_process_first)
    folder = tmp_path / "r"
    with pytest.raises(RunDirError, match=r"r: already exists and is not empty; choose another out="):
        RunStore.create(folder, manifest("ours"))
    assert raced and json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["run_id"] == "theirs"
    assert list(read_jsonl(folder / "cases.jsonl")) == [{"case": {"id": "a"}, "n": 1}]


def _orphans(directory: Path) -> bytes:
    """A run folder whose replays.jsonl holds the replays of case b, which has no case record (a crash cut it)."""
    directory.mkdir()
    (directory / "cases.jsonl").write_text(json.dumps({"case": {"id": "a"}}) + "\n", encoding="utf-8")
    replays = b"".join((json.dumps({"case_id": c, "n": i}) + "\n").encode() for i, c in enumerate("aba"))
    (directory / "replays.jsonl").write_bytes(replays)
    return replays


def test_a_failed_rewrite_of_the_replays_leaves_the_journal_as_it_was_and_no_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk while resume rewrote replays.jsonl left replays.jsonl.tmp behind (only a damaged
    line removed it)."""
    import errno

    from oloproof_nb._run import store as store_module

    before = _orphans(tmp_path / "r")

    def full(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module.os, "replace", full)
    with pytest.raises(OSError, match="No space left"):
        store_module._drop_orphan_replays(tmp_path / "r")
    monkeypatch.undo()
    assert (tmp_path / "r" / "replays.jsonl").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["cases.jsonl", "replays.jsonl"]
    store_module._drop_orphan_replays(tmp_path / "r")  # the next resume does it
    assert [json.loads(line)["n"] for line in (tmp_path / "r" / "replays.jsonl").read_text().splitlines()] == [0, 2]
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["cases.jsonl", "replays.jsonl"]


def test_with_fsync_per_record_the_rewritten_replays_reach_the_disk(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """fsync="record" promises every write to the journal reaches the disk; resume's rewrite of
    replays.jsonl (a temporary file renamed over it) was never fsynced, nor was the rename."""
    import os

    from oloproof_nb._run import store as store_module

    _orphans(tmp_path / "r")
    synced: list[int] = []
    folders: list[Path] = []
    real_fsync, real_dir = os.fsync, store_module._fsync_dir
    monkeypatch.setattr(store_module.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    monkeypatch.setattr(store_module, "_fsync_dir", lambda d: (folders.append(Path(d)), real_dir(d))[1])
    store_module._drop_orphan_replays(tmp_path / "r", durable=True)
    assert len(synced) == 2 and folders == [tmp_path / "r"]  # the new file, then the folder holding the rename
    synced.clear()
    folders.clear()
    store_module._drop_orphan_replays(tmp_path / "r", durable=False)  # nothing to drop now, nothing to force
    assert synced == [] and folders == []


def test_a_short_write_goes_on_until_the_whole_record_is_written(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.write`` may write fewer bytes than it was given (a pipe, a signal, a nearly full disk): the rest is
    written by the next calls, so the line is whole."""
    import os

    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run import store as store_module
    from oloproof_nb._run.store import RunStore

    manifest = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)
    store = RunStore.create(tmp_path / "r", manifest)
    real_write = os.write
    sizes: list[int] = []

    def short(fd: int, data: bytes) -> int:
        sizes.append(real_write(fd, bytes(data)[:7]))  # at most 7 bytes a call
        return sizes[-1]

    class FakeOs:
        def __getattr__(self, name: str) -> object:
            return short if name == "write" else getattr(os, name)

    monkeypatch.setattr(store_module, "os", FakeOs())
    store.append_case({"case": {"id": "a"}, "n": 1})  # type: ignore[typeddict-item]
    store.append_case({"case": {"id": "b"}, "n": 2})  # type: ignore[typeddict-item]
    monkeypatch.undo()
    store.close()
    lines = ['{"case":{"id":"a"},"n":1}\n', '{"case":{"id":"b"},"n":2}\n']
    assert (tmp_path / "r" / "cases.jsonl").read_text(encoding="utf-8") == "".join(lines)
    assert sum(sizes) == sum(len(line) for line in lines) and max(sizes) == 7


def test_a_torn_manifest_tmp_beside_a_whole_manifest_does_not_stop_a_resume(tmp_path: Path) -> None:
    """A kill while the manifest was being rewritten (e.g. as the run finished) leaves ``manifest.json.tmp``
    cut short beside the whole ``manifest.json``: the resume reads the manifest and drops nothing of it."""
    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run.store import RunStore

    manifest = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=1)
    store = RunStore.create(tmp_path / "r", manifest)
    store.close()
    (tmp_path / "r" / "manifest.json.tmp").write_text('{"suite": "s", "run_id": "x", "sta', encoding="utf-8")
    resumed = RunStore.resume(tmp_path / "r")
    try:
        assert resumed.manifest.run_id == "x" and resumed.manifest.n_cases == 1
    finally:
        resumed.close()


def test_a_json_object_without_a_run_id_is_no_run_manifest(tmp_path: Path) -> None:
    # e.g. another tool's manifest.json in the folder: said in those words, not as a list of missing fields
    from oloproof_nb._run.store import read_manifest

    (tmp_path / "manifest.json").write_text('{"name": "my-package", "version": "1.0"}', encoding="utf-8")
    with pytest.raises(RunDirError) as err:
        read_manifest(tmp_path)
    assert str(err.value) == f"{tmp_path / 'manifest.json'}: not a run manifest (no run_id)"


def test_a_manifest_that_is_no_regular_file_is_named_as_such_not_as_missing(tmp_path: Path) -> None:
    from oloproof_nb._run.store import read_manifest

    (tmp_path / "manifest.json").mkdir()
    with pytest.raises(RunDirError) as err:
        read_manifest(tmp_path)
    assert str(err.value) == f"{tmp_path / 'manifest.json'}: is a directory, not a regular file"


def test_a_record_whose_replay_lost_its_state_is_dropped_with_its_replays(tmp_path: Path) -> None:
    """After a power loss a case's replays may name a state states.jsonl lost while its own record's
    states survived (a replay's states are appended before its case's); the case runs again, so its record goes,
    and with it every replay of it. A case whose states all survived is kept byte for byte."""
    from oloproof_nb._run import store as store_module

    kept_ref, lost_ref = "a" * 64, "b" * 64
    folder = tmp_path / "r"
    folder.mkdir()
    cases = [{"index": 0, "case": {"id": "a", "initial_state_ref": kept_ref}},
             {"index": 1, "case": {"id": "b", "initial_state_ref": kept_ref}}]
    replays = [{"case_id": "a", "environment_state": {"state_ref": kept_ref}},
               {"case_id": "b", "environment_state": {"state_ref": kept_ref}},
               {"case_id": "b", "environment_state": {"state_ref": lost_ref}}]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cases), encoding="utf-8")
    (folder / "replays.jsonl").write_text("".join(json.dumps(r) + "\n" for r in replays), encoding="utf-8")
    store_module._drop_orphan_replays(folder, stored={kept_ref})
    assert list(read_jsonl(folder / "cases.jsonl")) == cases[:1]
    assert list(read_jsonl(folder / "replays.jsonl")) == replays[:1]
    before = {p.name: p.stat().st_ino for p in folder.iterdir()}
    store_module._drop_orphan_replays(folder, stored={kept_ref})  # nothing lost now: no file rewritten
    assert {p.name: p.stat().st_ino for p in folder.iterdir()} == before


def test_a_link_where_the_manifest_is_written_is_replaced_not_written_through(tmp_path: Path) -> None:
    """A folder holding only a killed creation's leftovers is reused by a new run, and the manifest is
    written as manifest.json.tmp first: a link there had the manifest written into the file it points to."""
    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run.store import RunStore

    victim = tmp_path / "mine.txt"
    victim.write_bytes(b"my own notes\n")
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "manifest.json.tmp").symlink_to(victim)
    store = RunStore.create(folder, Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z",
                                             oloproof_nb="0", n_cases=0))
    store.close()
    assert victim.read_bytes() == b"my own notes\n"
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["run_id"] == "x"
    assert sorted(p.name for p in folder.iterdir()) == [".lock", "manifest.json"]


def test_a_link_where_the_replays_are_rewritten_is_replaced_not_written_through(tmp_path: Path) -> None:
    """Resume rewrites replays.jsonl through replays.jsonl.tmp; a link left there was written through."""
    from oloproof_nb._run import store as store_module

    victim = tmp_path / "mine.txt"
    victim.write_bytes(b"my own notes\n")
    _orphans(tmp_path / "r")
    (tmp_path / "r" / "replays.jsonl.tmp").symlink_to(victim)
    store_module._drop_orphan_replays(tmp_path / "r")
    assert victim.read_bytes() == b"my own notes\n"
    assert [json.loads(line)["n"] for line in (tmp_path / "r" / "replays.jsonl").read_text().splitlines()] == [0, 2]
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["cases.jsonl", "replays.jsonl"]


@pytest.mark.parametrize(("fsync", "forced"), [("record", True), ("finish", False)])
def test_resume_forces_its_rewrite_of_the_replays_to_disk_only_with_fsync_per_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fsync: str, forced: bool) -> None:
    """``RunStore.resume(fsync=...)`` hands its own setting to the rewrite of replays.jsonl: forced to the disk with
    ``fsync="record"`` (as every append is), not with ``"finish"`` (the setting read the wrong way
    round would pass every other test)."""
    import os

    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run import store as store_module

    replays = _orphans(tmp_path / "r")
    manifest = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)
    (tmp_path / "r" / "manifest.json").write_text(json.dumps(manifest.to_json()), encoding="utf-8")
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(store_module.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    store_module.RunStore.resume(tmp_path / "r", fsync=fsync).close()  # type: ignore[arg-type]
    kept = [line for line in replays.splitlines(keepends=True) if b'"b"' not in line]  # case b has no record
    assert (tmp_path / "r" / "replays.jsonl").read_bytes() == b"".join(kept)
    assert bool(synced) is forced


def test_a_torn_line_longer_than_one_read_step_is_cut_back_to_the_last_newline(tmp_path: Path) -> None:
    """The torn tail is found from the end in 64 KiB steps (``lines.complete_end``): a torn line of 200,000 bytes
    after two records spans four steps; the records stay byte for byte, the torn bytes go, and a journal that ends
    in a newline is left as it is."""
    path = tmp_path / "cases.jsonl"
    whole = b'{"a":1}\n' + b'{"b":"' + b"x" * 70_000 + b'"}\n'
    path.write_bytes(whole + b'{"c":"' + b"y" * 200_000)
    truncate_torn_tail(path)
    assert path.read_bytes() == whole and path.stat().st_size == 8 + 6 + 70_000 + 3  # counted by hand
    truncate_torn_tail(path)
    assert path.read_bytes() == whole
    truncate_torn_tail(tmp_path / "absent.jsonl")  # no journal yet: nothing to cut, nothing made
    assert not (tmp_path / "absent.jsonl").exists()
