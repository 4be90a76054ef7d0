"""Each system instance's replays are keyed by the settings it was built with, not by the run's first instance's.

A factory may build instances with other settings (a setting read at each build): the replays a careful instance
made were stored under the careless first instance's key, and a later run of careless instances took them from the
cache and passed. A folder ``tempfile.mkdtemp`` made for each instance is no setting: keyed by its random name, no
replay of such a system ever came from the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._run.systems import ReplayPrints, replay_fingerprint
from oloproof_nb.examples import init_example

CRITERION = "recovers_from_error_at_issue_refund"
BROKEN = '''        rec.tool("issue_refund", self.sandbox.issue_refund, order_id=order_id)
        # defect 2: the refund's result is never checked
        rec.say(f"Order {order_id} has been refunded.")
        return "refunded"
'''
CAREFUL = '''        result = rec.tool("issue_refund", self.sandbox.issue_refund, order_id=order_id)
        if self.careful and not result.get("ok"):
            rec.tool("escalate_to_human", self.sandbox.escalate_to_human, order_id=order_id,
                     reason="the refund failed")
            rec.say("The refund failed; a colleague will take it from here.")
            return "escalated"
        rec.say(f"Order {order_id} has been refunded.")
        return "refunded"
'''
INIT = "    def __init__(self) -> None:\n"


def _fault_rows(run: op.Run) -> list[tuple[str, bool]]:
    df = run.replays
    return sorted((r.verdict, bool(r.cached)) for r in df[df["criterion"] == CRITERION].itertuples())


def _desk(tmp_path: Path, init: str, factory: str = "") -> Path:
    """The bundled refund desk, its ``__init__`` replaced by ``init``, with ``factory`` appended (its suite's
    system when given)."""
    folder = init_example("stateful-agent", tmp_path / "desk")
    source = folder / "refund_desk.py"
    text = source.read_text(encoding="utf-8").replace(BROKEN, CAREFUL).replace(INIT, init)
    source.write_text(text + factory, encoding="utf-8")
    if factory:
        suite_file = folder / "oloproof.yaml"
        suite_file.write_text(suite_file.read_text(encoding="utf-8").replace("refund_desk:RefundDesk",
                                                                             "refund_desk:make"), encoding="utf-8")
    return folder


def test_a_careful_instance_never_stores_its_replays_under_the_careless_first_ones_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``make()`` builds every second instance careful while ``DESK_ALTERNATE`` is set: with two workers the first
    (careless) instance's key held the careful one's passing replays, and a run of careless instances only took
    them from the cache (17 of 38 passed, cached; 0 of 38 live)."""
    folder = _desk(tmp_path, "    def __init__(self, careful: bool = False) -> None:\n        self.careful = careful\n",
                   "\n\n_BUILT = []\n\n\ndef make():\n    import os\n\n    _BUILT.append(None)\n"
                   "    return RefundDesk(careful='DESK_ALTERNATE' in os.environ and len(_BUILT) % 2 == 0)\n")
    monkeypatch.setenv("DESK_ALTERNATE", "1")
    mixed = op.run(op.load_suite(folder), workers=2, out=tmp_path / "mixed", progress=False)
    assert {cached for _, cached in _fault_rows(mixed)} == {False}
    monkeypatch.delenv("DESK_ALTERNATE")
    careless = op.run(op.load_suite(folder), out=tmp_path / "careless", progress=False)
    assert [verdict for verdict, _ in _fault_rows(careless)] == ["fail"] * 38  # was 17 ("pass", True)
    assert op.gate(careless).table.set_index("criterion").loc[CRITERION, "passed"] == 0


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_database_folder_made_by_mkdtemp_for_each_instance_still_gets_its_replays_from_the_cache(
        tmp_path: Path, isolation: str) -> None:
    """``self.db_path = db_path or tempfile.mkdtemp()``: each of two workers' instances has a folder of its own;
    the second run takes every fault replay from the cache (it replayed all 38 live)."""
    folder = _desk(tmp_path, "    def __init__(self, db_path: str | None = None) -> None:\n"
                             "        import tempfile\n\n        self.careful = True\n"
                             "        self.db_path = db_path or tempfile.mkdtemp(prefix='desk-')\n")
    first = op.run(op.load_suite(folder), workers=2, isolation=isolation, out=tmp_path / "first", progress=False)
    assert _fault_rows(first) == [("pass", False)] * 38
    again = op.run(op.load_suite(folder), workers=2, isolation=isolation, out=tmp_path / "again", progress=False)
    assert _fault_rows(again) == [("pass", True)] * 38  # was [("pass", False)] * 38


JOURNAL = """

_reset = RefundDesk.reset


def _journaled(self, state):
    import os
    import uuid

    with open(os.path.join(self.db_path, "journal.txt"), "a", encoding="utf-8") as journal:
        journal.write(uuid.uuid4().hex + "\\n")  # a session id for each reset, as a real sandbox's log has
    return _reset(self, state)


RefundDesk.reset = _journaled
"""


def test_an_instance_an_executors_worker_keeps_for_its_next_batch_keys_its_replays_as_it_was_built(
        tmp_path: Path) -> None:
    """A worker's instance runs the batches after the one that built it: read again there, its ``mkdtemp`` folder
    held the journal its cases had written, so a second run took only the first batch's replays from the cache
    (4 of 38), where a thread run took all 38."""
    folder = _desk(tmp_path, "    def __init__(self, db_path: str | None = None) -> None:\n"
                             "        import tempfile\n\n        self.careful = True\n"
                             "        self.db_path = db_path or tempfile.mkdtemp(prefix='desk-')\n")
    source = folder / "refund_desk.py"
    source.write_text(source.read_text(encoding="utf-8") + JOURNAL, encoding="utf-8")
    runs = []
    for name in ("first", "again"):
        with ThreadPoolExecutor(1) as executor:
            runs.append(op.run(op.load_suite(folder), executor=executor, chunk_size=4, out=tmp_path / name,
                               progress=False))
    assert _fault_rows(runs[0]) == [("pass", False)] * 38
    assert _fault_rows(runs[1]) == [("pass", True)] * 38  # was 4 cached, 34 live


ON_DISK = """

_reset = RefundDesk.reset


def _on_disk(self, state):
    import json
    import os

    with open(os.path.join(self.db_path, "state.json"), "w", encoding="utf-8") as file:
        json.dump(state, file, sort_keys=True)  # the sandbox's tables, kept in the desk's folder
    return _reset(self, state)


RefundDesk.reset = _on_disk
"""


def test_an_instance_given_to_two_runs_keys_its_fresh_folder_by_what_it_held_as_the_first_began(
        tmp_path: Path) -> None:
    """``op.run(suite, system=desk)`` twice on one desk whose sandbox keeps its tables in its ``mkdtemp`` folder:
    keyed by what the folder held as each run started, the second run took no replay from the cache (0 of 38), a
    resume of the first was refused ("built with other settings") and the two runs pooled were "different
    systems". A new instance on a folder is still keyed by what the folder holds as it is built."""
    folder = _desk(tmp_path, "    def __init__(self, db_path: str | None = None) -> None:\n"
                             "        import tempfile\n\n        self.careful = True\n"
                             "        self.db_path = db_path or tempfile.mkdtemp(prefix='desk-')\n")
    source = folder / "refund_desk.py"
    source.write_text(source.read_text(encoding="utf-8") + ON_DISK, encoding="utf-8")
    suite = op.load_suite(folder)
    desk = suite.resolve_system()()
    first = op.run(suite, system=desk, out=tmp_path / "first", progress=False)
    assert os.listdir(desk.db_path) == ["state.json"]
    again = op.run(suite, system=desk, out=tmp_path / "again", progress=False)
    assert _fault_rows(again) == [("pass", True)] * 38  # was [("pass", False)] * 38
    assert again.manifest.settings_fingerprint == first.manifest.settings_fingerprint
    op.run(suite, system=desk, out=tmp_path / "first", resume=True, progress=False)  # was a RunDirError
    pooled = op.gate(op.load_runs([tmp_path / "first", tmp_path / "again"]))
    assert "mixed_systems" not in pooled.reason
    target = suite.resolve_system()
    assert replay_fingerprint(target(desk.db_path), target, "f" * 64) != \
        replay_fingerprint(desk, desk, "f" * 64) == replay_fingerprint(target(), target, "f" * 64)


class _Desk:
    def __init__(self, path: str | None = None, careful: bool = True) -> None:
        self.path, self.careful = path, careful


def test_a_path_in_a_fresh_temporary_folder_keys_by_the_folders_prefix_and_the_rest_of_the_path(
        tmp_path: Path) -> None:
    """Two ``mkdtemp`` folders share a key; a setting still counts beside them, and a path in a folder that
    ``mkdtemp`` did not make (another mode, no random letters) keys by the whole path."""
    made = [tempfile.mkdtemp(prefix="desk-") for _ in range(2)]
    try:
        keys = [replay_fingerprint(_Desk(os.path.join(m, "db.sqlite")), _Desk, "f" * 64) for m in made]
        assert keys[0] == keys[1]
        assert replay_fingerprint(_Desk(Path(made[0])), _Desk, "f" * 64) == \
            replay_fingerprint(_Desk(Path(made[1])), _Desk, "f" * 64)
        assert replay_fingerprint(_Desk(made[0], careful=False), _Desk, "f" * 64) != \
            replay_fingerprint(_Desk(made[1]), _Desk, "f" * 64)
        assert replay_fingerprint(_Desk(os.path.join(made[0], "a.db")), _Desk, "f" * 64) != keys[0]
        os.chmod(made[1], 0o755)  # not as mkdtemp leaves it: a folder of the user's
        assert replay_fingerprint(_Desk(os.path.join(made[1], "db.sqlite")), _Desk, "f" * 64) != keys[0]
    finally:
        for m in made:
            os.rmdir(m)
    gone = [replay_fingerprint(_Desk(os.path.join(m, "db.sqlite")), _Desk, "f" * 64) for m in made]
    assert gone[0] != gone[1]  # no such folder (any more): the path as it is


def test_a_fresh_temporary_folder_keys_by_what_it_holds() -> None:
    """Two ``mkdtemp`` folders the user filled otherwise before building each instance (a careful policy in one, a
    careless one in the other) key two ways: keyed by the prefix alone, each took the other's replays."""
    made = [tempfile.mkdtemp(prefix="desk-") for _ in range(2)]
    try:
        Path(made[0], "policy.txt").write_text("refund twice: never", encoding="utf-8")
        Path(made[1], "policy.txt").write_text("refund twice: always", encoding="utf-8")
        keys = [replay_fingerprint(_Desk(m), _Desk, "f" * 64) for m in made]
        assert keys[0] != keys[1]
        Path(made[1], "policy.txt").write_text("refund twice: never", encoding="utf-8")  # the same content again
        assert replay_fingerprint(_Desk(made[1]), _Desk, "f" * 64) == keys[0]
        for m in made:  # the same content, more than a key reads: each keyed by its whole path
            Path(m, "policy.txt").write_bytes(b"x" * ((1 << 20) + 1))
        assert replay_fingerprint(_Desk(made[0]), _Desk, "f" * 64) != \
            replay_fingerprint(_Desk(made[1]), _Desk, "f" * 64)
    finally:
        for m in made:
            (Path(m) / "policy.txt").unlink()
            os.rmdir(m)


def test_a_path_setting_read_from_a_name_that_is_not_utf8_keys_the_instance() -> None:
    """``os.listdir`` gives a Latin-1 tool's ``caf\\xe9.txt`` as text holding a lone surrogate: the key's digest
    raised ``UnicodeEncodeError`` for an instance given that path. Two such paths key two ways; a path of UTF-8 text
    keeps the key it had."""
    keys = [replay_fingerprint(_Desk(f"/srv/desk/caf{char}.txt"), _Desk, "f" * 64) for char in "\udce9\udce8\ud800"]
    assert len(set(keys)) == 3
    plain = {"code": "f" * 64, "settings": [["path", "/srv/desk/cafe.txt"], ["careful", True]], "partial": []}
    assert replay_fingerprint(_Desk("/srv/desk/cafe.txt"), _Desk, "f" * 64) == \
        hashlib.sha256(json.dumps(plain, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_a_fresh_temporary_folder_holding_a_name_that_is_not_utf8_keys_by_its_bytes() -> None:
    """A file or link a Latin-1 tool named (the byte 0xE9) in the folder: the key's digest raised
    ``UnicodeEncodeError`` on the name, for every instance built on the folder. Two such names key two ways."""
    made = tempfile.mkdtemp(prefix="desk-")
    folder = os.fsencode(made)
    try:
        Path(made, "policy.txt").write_text("refund twice: never", encoding="utf-8")
        with open(os.path.join(folder, b"caf\xe9.txt"), "wb") as file:
            file.write(b"notes")
        os.symlink(b"caf\xe9.txt", os.path.join(folder, b"link"))
        first = replay_fingerprint(_Desk(made), _Desk, "f" * 64)
        os.rename(os.path.join(folder, b"caf\xe9.txt"), os.path.join(folder, b"caf\xe8.txt"))
        assert replay_fingerprint(_Desk(made), _Desk, "f" * 64) != first
    finally:
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(made)


def test_replay_prints_key_each_instance_by_its_own_settings_as_built() -> None:
    prints = ReplayPrints(_Desk, "f" * 64)
    careful, careless = prints.note(_Desk(careful=True)), prints.note(_Desk(careful=False))
    assert prints.of(careful) == replay_fingerprint(_Desk(careful=True), _Desk, "f" * 64)
    assert prints.of(careless) == replay_fingerprint(_Desk(careful=False), _Desk, "f" * 64) != prints.of(careful)
    careless.careful = True  # changed after it was built: keyed as built
    assert prints.of(careless) == replay_fingerprint(_Desk(careful=False), _Desk, "f" * 64)
    assert prints.of(_Desk(careful=False)) == prints.of(careless)  # one never noted: read when asked


def test_replay_prints_never_give_a_released_instances_print_to_one_built_at_its_address() -> None:
    """An instance released, the next one built often takes its address (its ``id``): one never noted is keyed by its
    own settings, not by the released one's. By hand: the careless instance at the careful one's address keys as a
    careless instance does."""
    prints = ReplayPrints(_Desk, "f" * 64)
    careless = replay_fingerprint(_Desk(careful=False), _Desk, "f" * 64)
    for _ in range(1000):
        careful = prints.note(_Desk(careful=True))
        address = id(careful)
        del careful
        other = _Desk(careful=False)
        if id(other) == address:
            break
    assert id(other) == address  # CPython gives a freed object's memory to the next of its size
    assert prints.of(other) == careless != replay_fingerprint(_Desk(careful=True), _Desk, "f" * 64)


def _key(path: str) -> str:
    return replay_fingerprint(_Desk(path), _Desk, "f" * 64)


def _whole_path_key(path: str) -> str:
    """The key of a ``_Desk`` whose path keys as written (no fresh folder), computed by hand."""
    picture = {"code": "f" * 64, "settings": [["path", path], ["careful", True]], "partial": []}
    return hashlib.sha256(json.dumps(picture, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_the_temporary_folder_itself_is_a_path_as_written() -> None:
    """A setting that names the temporary folder (no folder below it) is no fresh folder: keyed as written."""
    base = tempfile.gettempdir()
    assert _key(base) == _whole_path_key(base)
    assert _key(base + os.sep) == _whole_path_key(base + os.sep)


@pytest.fixture
def two_fresh_folders() -> Iterator[list[Path]]:
    made = [Path(tempfile.mkdtemp(prefix="desk-")) for _ in range(2)]
    yield made
    for m in made:
        shutil.rmtree(m)


def test_a_fresh_folder_holding_more_entries_than_a_key_reads_keys_by_its_whole_path(
        two_fresh_folders: list[Path]) -> None:
    """256 entries are read for the key; a folder of 257 (the same in both) keys by its whole path."""
    for m in two_fresh_folders:
        for i in range(256):
            (m / f"{i:03}").touch()
    assert _key(str(two_fresh_folders[0])) == _key(str(two_fresh_folders[1]))
    for m in two_fresh_folders:
        (m / "256").touch()
    assert [_key(str(m)) for m in two_fresh_folders] == [_whole_path_key(str(m)) for m in two_fresh_folders]


def test_a_fresh_folder_of_exactly_the_bytes_a_key_reads_keys_by_its_content(two_fresh_folders: list[Path]) -> None:
    """1 MiB in all is read for the key, over any number of files: past it, the folder keys by its whole path."""
    for m in two_fresh_folders:
        (m / "a.bin").write_bytes(b"x" * (1 << 19))
        (m / "b.bin").write_bytes(b"y" * (1 << 19))
    assert _key(str(two_fresh_folders[0])) == _key(str(two_fresh_folders[1]))  # 1 MiB exactly
    for m in two_fresh_folders:
        (m / "c.bin").write_bytes(b"z")
    assert [_key(str(m)) for m in two_fresh_folders] == [_whole_path_key(str(m)) for m in two_fresh_folders]


def test_a_fresh_folder_keys_by_the_target_of_each_link_and_the_kind_of_each_entry(
        two_fresh_folders: list[Path]) -> None:
    first, second = two_fresh_folders
    (first / "policy").symlink_to("careful.txt")
    (second / "policy").symlink_to("careless.txt")
    assert _key(str(first)) != _key(str(second))
    (second / "policy").unlink()
    (second / "policy").symlink_to("careful.txt")
    assert _key(str(first)) == _key(str(second))
    (first / "db").mkdir()
    os.mkfifo(second / "db")
    assert _key(str(first)) != _key(str(second))


def test_a_fresh_folder_keys_by_its_prefix() -> None:
    """``mkdtemp(prefix=...)`` names what the folder is for: two prefixes, two keys (the same content)."""
    made = [tempfile.mkdtemp(prefix=prefix) for prefix in ("careful-", "careless-")]
    try:
        assert _key(made[0]) != _key(made[1])
    finally:
        for m in made:
            os.rmdir(m)


def test_a_fresh_folder_of_another_user_keys_by_its_whole_path(two_fresh_folders: list[Path],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder ``mkdtemp`` made for another user (its owner not this process's) is no folder made for the
    instance."""
    assert _key(str(two_fresh_folders[0])) == _key(str(two_fresh_folders[1]))
    uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    assert [_key(str(m)) for m in two_fresh_folders] == [_whole_path_key(str(m)) for m in two_fresh_folders]


class _Slotted:
    __slots__ = ("careful",)

    def __init__(self, careful: bool = True) -> None:
        self.careful = careful


def test_replay_prints_key_an_instance_without_weak_references_as_built() -> None:
    """An instance that takes no weak reference (``__slots__`` without ``__weakref__``) is told by its ``id``: its
    settings changed after it was built, it still keys as built."""
    prints = ReplayPrints(_Slotted, "f" * 64)
    careless = prints.note(_Slotted(careful=False))
    careless.careful = True
    assert prints.of(careless) == replay_fingerprint(_Slotted(careful=False), _Slotted, "f" * 64) != \
        replay_fingerprint(_Slotted(careful=True), _Slotted, "f" * 64)


def test_what_the_folders_of_instances_no_longer_held_held_is_let_go() -> None:
    """Each instance's first reading of its folders is kept while the instance lives, no longer: a notebook that
    builds an instance per run kept every one's reading."""
    from oloproof_nb._run import systems

    class Agent:
        pass

    gone = [Agent() for _ in range(20)]
    for agent in gone:
        systems._folders_read(agent)
    del gone, agent
    held = Agent()
    systems._folders_read(held)
    assert all(ref() is not None for ref, _ in systems._FOLDERS_READ.values())
