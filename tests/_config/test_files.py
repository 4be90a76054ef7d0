"""Reading user files: regular files only (never blocking), size caps, and YAML that cannot expand without bound."""

from __future__ import annotations

import numbers
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from _hostile_files import O_BINARY, SPECIAL_KINDS, alias_bomb, bounded, make_special, open_as_on_windows

from oloproof_nb._config import files
from oloproof_nb._config.files import MAX_YAML_VALUES, UnreadableFile, read_regular, read_yaml
from oloproof_nb._config.release import load_release, parse_release
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb.errors import ConfigError, quote

KIND_WORDS = {"fifo": "is a named pipe (FIFO), not a regular file", "dir": "is a directory, not a regular file",
              "device": "is a character device, not a regular file"}


# -- regular files only --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_read_yaml_refuses_what_is_not_a_regular_file_without_blocking(tmp_path: Path, kind: str) -> None:
    path = make_special(tmp_path / "release.yaml", kind)
    with pytest.raises(ConfigError) as info:
        bounded(lambda: read_yaml(path), 5, unblock=[path])
    assert str(info.value) == f"{path}: {KIND_WORDS[kind]}"


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_read_regular_refuses_special_files(tmp_path: Path, kind: str) -> None:
    path = make_special(tmp_path / "x", kind)
    with pytest.raises(UnreadableFile, match="not a regular file"):
        bounded(lambda: read_regular(path, 100), 5, unblock=[path])


def test_a_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text("confidence: 0.9\n", encoding="utf-8")
    (tmp_path / "release.yaml").symlink_to(tmp_path / "real.yaml")
    assert read_yaml(tmp_path / "release.yaml") == {"confidence": 0.9}


def test_missing_file_is_reported_as_missing(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile) as info:
        read_regular(tmp_path / "nope", 10)
    assert info.value.missing and str(info.value) == "file not found"
    (tmp_path / "f").write_text("x")
    with pytest.raises(UnreadableFile) as info:
        read_regular(tmp_path / "f" / "below", 10)  # a parent that is a file: nothing is there either
    assert info.value.missing


def test_a_dangling_link_is_named_with_where_it_points_not_as_missing(tmp_path: Path) -> None:
    """A link to nothing was "file not found" (``missing``): a run folder's manifest.json so linked was "no
    manifest.json", a ``--release`` so linked "file not found", and the user looked for a file that is there, as a
    link. It now says so and where it points, and is not ``missing`` (nothing reads it as absent); a loop of links
    keeps the OS's words."""
    link = tmp_path / "release.yaml"
    link.symlink_to("../gone/release.yaml")
    with pytest.raises(UnreadableFile) as info:
        read_regular(link, 10)
    assert str(info.value) == ("is a dangling symbolic link (it points to '../gone/release.yaml', which does not "
                               "exist); point it at the file, or remove it")
    assert not info.value.missing
    with pytest.raises(ConfigError) as refused:
        load_release(link)
    assert str(refused.value) == f"{link}: {info.value}"
    loop = tmp_path / "loop.yaml"
    loop.symlink_to("loop.yaml")
    with pytest.raises(UnreadableFile) as info:
        read_regular(loop, 10)
    assert str(info.value) == "cannot read: Too many levels of symbolic links" and not info.value.missing
    assert files.dangling_link(loop) is None and files.dangling_link(tmp_path) is None


def test_a_file_longer_than_its_stat_is_read_whole_up_to_the_cap(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole file in one read when its size is known; what a growing file adds is still read, and capped."""
    path = tmp_path / "f"
    path.write_bytes(bytes(range(256)) * 400)  # 102,400 bytes, more than one 64 KiB piece
    real = files.open_regular

    def stale_size(p: Path) -> tuple[Any, Any]:
        handle, info = real(p)
        return handle, SimpleNamespace(st_size=10, st_mode=info.st_mode)  # as stat'ed before it grew

    monkeypatch.setattr(files, "open_regular", stale_size)
    assert read_regular(path, 102_400) == path.read_bytes()
    with pytest.raises(UnreadableFile, match="holds more than 102399 bytes"):
        read_regular(path, 102_399)


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux /proc")
def test_a_file_that_reports_no_size_is_read_whole() -> None:
    text = read_regular("/proc/self/status", 1 << 20).decode()  # st_size 0, yet it has lines
    assert "VmRSS:" in text and text.endswith("\n")


def test_a_regular_handle_seeks(tmp_path: Path) -> None:
    """The journal reads lines at their offsets through this handle."""
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(b"line %06d\n" % i for i in range(20_000)))
    handle, _ = files.open_regular(path)
    with handle:
        assert handle.seekable()
        handle.seek(12 * 15_000)
        assert handle.tell() == 12 * 15_000 and handle.read(12) == b"line 015000\n"
        handle.seek(12 * 7)
        assert handle.readline() == b"line 000007\n" and handle.tell() == 12 * 8


def test_size_cap_is_inclusive(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10) == b"x" * 10
    with pytest.raises(UnreadableFile, match="is 10 bytes; a file of this kind may hold at most 9"):
        read_regular(path, 9)


def test_an_oversized_yaml_file_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "oloproof.yaml"
    path.write_bytes(b"name: x\n" + b"#" * 200)
    monkeypatch.setattr(files, "MAX_YAML_BYTES", 100)
    with pytest.raises(ConfigError, match=r"is 208 bytes; a file of this kind may hold at most 100"):
        read_yaml(path)


# -- aliases -------------------------------------------------------------------------------------------------

def _peak(fn):  # type: ignore[no-untyped-def]
    tracemalloc.start()
    try:
        try:
            fn()
        except ConfigError as exc:
            return tracemalloc.get_traced_memory()[1], exc
        return tracemalloc.get_traced_memory()[1], None
    finally:
        tracemalloc.stop()


def test_an_alias_bomb_threshold_is_one_short_line(tmp_path: Path) -> None:
    """9**6 = 531,441 strings from 300 bytes: the old code quoted them all (a 3.7 MB error line)."""
    path = tmp_path / "release.yaml"
    path.write_text(alias_bomb(9, 6), encoding="utf-8")
    assert len(path.read_bytes()) < 400
    peak, exc = _peak(lambda: load_release(path))
    assert exc is not None
    message = str(exc)
    assert message.startswith(f"{path}: YAML aliases expand it past 100,000 values (at line ")
    assert len(message) < 300 + len(str(path)), len(message)
    assert peak < 5 << 20, peak


def test_the_464_byte_bomb_of_the_issue_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(alias_bomb(9, 9), encoding="utf-8")
    peak, exc = _peak(lambda: load_release(path))
    assert peak < 5 << 20  # refused before it expands (435,848,049 strings would take gigabytes); no timing asserted
    assert exc is not None and "YAML aliases expand it past" in str(exc)


def _flat(n: int) -> str:
    """A document of exactly ``n`` values: the root mapping, its key, the list and ``n - 3`` items."""
    return "x:\n" + "".join("- 0\n" for _ in range(n - 3))


def test_the_value_limit_is_inclusive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert MAX_YAML_VALUES == 100_000
    monkeypatch.setattr(files, "MAX_YAML_VALUES", 1000)  # the same rule at a size that parses quickly
    path = tmp_path / "oloproof.yaml"
    path.write_text(_flat(1000), encoding="utf-8")
    assert len(read_yaml(path)["x"]) == 997
    path.write_text(_flat(1001), encoding="utf-8")
    with pytest.raises(ConfigError, match="past 1,000 values"):
        read_yaml(path)


def test_aliases_count_each_time_they_are_used(tmp_path: Path) -> None:
    """A 1,000-item list used 100 times holds 100,100 values expanded: refused; 99 times: loaded, shared."""
    body = "a: &a [" + ", ".join(["0"] * 999) + "]\n"  # root, key a, the list and its 999 items: 1,002
    for uses, ok in ((97, True), (100, False)):
        path = tmp_path / f"u{uses}.yaml"
        path.write_text(body + "b: [" + ", ".join(["*a"] * uses) + "]\n", encoding="utf-8")
        # 1,002 + key b + list b + uses * 1,000 (each alias expands to the whole list)
        expanded = 1002 + 2 + uses * 1000
        assert (expanded <= MAX_YAML_VALUES) is ok
        if ok:
            data = read_yaml(path)
            assert len(data["b"]) == uses and data["b"][0] is data["a"]
        else:
            with pytest.raises(ConfigError, match="past 100,000 values"):
                read_yaml(path)


def test_ordinary_aliases_and_merge_keys_still_load(tmp_path: Path) -> None:
    path = tmp_path / "oloproof.yaml"
    path.write_text("base: &b {type: state_unchanged, paths: [orders.x]}\n"
                    "evaluators: [*b, {<<: *b, criterion: other}]\n", encoding="utf-8")
    data = read_yaml(path)
    assert data["evaluators"][1] == {"type": "state_unchanged", "paths": ["orders.x"], "criterion": "other"}


def test_a_merge_key_overridden_by_the_mapping_s_own_key_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text("criteria:\n  <<: [{answer_matches: 0.9}, {state_matches: 0.8}]\n  answer_matches: 0.95\n",
                    encoding="utf-8")
    assert load_release(path).criteria == {"answer_matches": 0.95, "state_matches": 0.8}


@pytest.mark.parametrize(("text", "criteria"), [
    # two mappings that merge one anchor give its keys from the same node: YAML and PyYAML take the same value
    ("base: &base {answer_matches: 0.8}\nx: &x {<<: *base, state_matches: 0.9}\ny: &y {<<: *base, a: 0.7}\n"
     "criteria: {<<: [*x, *y]}\n", {"answer_matches": 0.8, "state_matches": 0.9, "a": 0.7}),
    ("base: &base {answer_matches: 0.8}\ncriteria: {<<: [*base, *base]}\n", {"answer_matches": 0.8}),
    ("criteria:\n  <<: [{answer_matches: 0.9}, {answer_matches: 0.9}]\n", {"answer_matches": 0.9}),
    # a value no scalar (a list) reached through one anchor by both merges is one node
    ("base: &base {paths: [a, b]}\nx: &x {<<: *base, c: 0.9}\ny: &y {<<: *base, d: 0.8}\ncriteria: {<<: [*x, *y]}\n",
     {"paths": ["a", "b"], "c": 0.9, "d": 0.8}),
])
def test_a_key_merged_twice_with_one_value_still_loads(tmp_path: Path, text: str, criteria: dict[str, float]) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    assert read_yaml(path)["criteria"] == criteria
    assert yaml.safe_load(text)["criteria"] == criteria  # what PyYAML itself gives, and YAML


@pytest.mark.parametrize(("text", "line", "said"), [
    # YAML gives the earlier mapping's 0.9; PyYAML 6.0.4 gave 0.1, and the gate passed a rate of 0.625 on it
    ("criteria:\n  <<: [{answer_matches: 0.9}, {answer_matches: 0.1}]\n", 2,
     "key 'answer_matches' is given by two of the mappings merged with <<; keep one"),
    # written alike, yet a number and a text: YAML gives the number, PyYAML 6.0.4 the text
    ("criteria:\n  <<: [{answer_matches: 1}, {answer_matches: '1'}]\n", 2,
     "key 'answer_matches' is given by two of the mappings merged with <<; keep one"),
    ("criteria:\n  <<: {answer_matches: 0.9}\n  <<: {answer_matches: 0.1}\n", 3,
     "key '<<' is written twice; merge several mappings with one: <<: [*a, *b]"),
    ("criteria:\n  <<: {answer_matches: 0.9, answer_matches: 0.1}\n", 2,
     "key 'answer_matches' is written twice; keep one"),
    # merged elsewhere, a mapping that overrides its own merged key lost that key where it is one letter
    ("confidence: 0.95\ncriteria:\n  <<: {<<: {a: 0.1}, a: 0.9}\n", 3,
     "key 'a' of a mapping merged with << overrides a key that mapping merges itself"),
])
def test_a_merge_pyyaml_reads_otherwise_than_yaml_is_refused(tmp_path: Path, text: str, line: int,
                                                              said: str) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_release(path)
    assert str(info.value).startswith(f"{path}: not valid YAML at line {line}: {said}")


@pytest.mark.parametrize("text", ["a: &a [*a]\n", "a: &a {k: *a}\n", "a: &a [1, [2, [3, *a]]]\n"])
def test_a_recursive_alias_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="refers to a value that contains it; recursive values are not allowed"):
        read_yaml(path)
    assert yaml.safe_load(text) is not None  # PyYAML itself builds the recursive value


def test_a_huge_yaml_error_is_clipped(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text("criteria: {answer_matches: '" + "x" * 100_000 + "'}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_release(path)
    assert len(str(info.value)) < 500


def test_a_file_that_grew_to_one_byte_past_the_cap_is_refused_not_cut(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Stat'ed at 9 bytes, the file holds 11 when read with a cap of 10: the first read takes 10 (the size + 1),
    exactly the cap, and one more read finds the 11th byte. The file is refused; never its first 10 bytes
    returned as if they were all of it."""
    path = tmp_path / "f"
    path.write_bytes(b"0123456789X")
    real = files.open_regular

    def stale_size(p: Path) -> tuple[Any, Any]:
        handle, info = real(p)
        return handle, SimpleNamespace(st_size=9, st_mode=info.st_mode)

    monkeypatch.setattr(files, "open_regular", stale_size)
    with pytest.raises(UnreadableFile, match="holds more than 10 bytes"):
        read_regular(path, 10)
    assert read_regular(path, 11) == b"0123456789X"


def test_an_empty_or_comment_only_release_yaml_is_the_defaults(tmp_path: Path) -> None:
    """A YAML file with no document (empty, or only a comment) holds no setting: it reads as ``{}``, so a
    release.yaml kept for its comments gives the default release, not an error."""
    empty, comments = tmp_path / "empty.yaml", tmp_path / "release.yaml"
    empty.write_text("")
    comments.write_text("# thresholds come later\n")
    assert read_yaml(empty) == {} and read_yaml(comments) == {}
    assert load_release(comments).criteria == {} and load_release(comments).confidence == 0.95


def test_a_fifo_swapped_in_after_the_stat_is_refused_by_the_check_of_the_open_descriptor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The path's stat said a regular file (the file was swapped for a FIFO between the stat and the open): the
    descriptor's own stat refuses it, instead of reading the pipe as an empty file."""
    regular = tmp_path / "was-a-file"
    regular.write_text("x: 1\n")
    fifo = make_special(tmp_path / "release.yaml", "fifo")
    real_stat = files.os.stat

    def stat_before_the_swap(path: Any, *args: Any, **kwargs: Any) -> Any:
        return real_stat(regular if Path(path) == fifo else path, *args, **kwargs)

    monkeypatch.setattr(files.os, "stat", stat_before_the_swap)
    with pytest.raises(UnreadableFile) as info:
        bounded(lambda: read_regular(fifo, 100), 5, unblock=[fifo])
    assert str(info.value) == KIND_WORDS["fifo"]


def test_a_file_is_opened_without_o_nonblock_where_there_is_none_and_in_binary_mode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' os module has no O_NONBLOCK (reading any file raised AttributeError there: no suite, release or run
    could be loaded), and its C runtime opens a descriptor in text mode unless given O_BINARY ("\\r\\n" read as
    "\\n", a 0x1A byte as the end of the file: an artifact's digest of other bytes than it holds)."""
    path = tmp_path / "report.json"
    path.write_bytes(b'{"a": 1}\r\n\x1a{"b": 2}\n')
    flags_given = open_as_on_windows(monkeypatch)
    assert read_regular(path, 100) == b'{"a": 1}\r\n\x1a{"b": 2}\n'
    assert len(flags_given) == 1 and flags_given[0] & O_BINARY


_UNREADABLE_CALLS = {  # the call, the error class, and what the message says to give instead
    "load_suite": ("op.load_suite(P)", "ConfigError", "give a suite folder you can read"),
    "load_run": ("op.load_run(P)", "RunDirError", "give a run directory you can read"),
    "load_runs": ("op.load_runs([P])", "RunDirError", "give a run directory you can read"),
    "from_inspect": ("op.from_inspect(P)", "OloproofError",
                     "give an Inspect AI log or a folder of logs you can read"),
    "init_example": ("init_example('stateful-agent', P)", "OloproofError", "choose another destination"),
}


@pytest.mark.parametrize("where", ["the folder", "a folder above it"])
@pytest.mark.parametrize("call", sorted(_UNREADABLE_CALLS))
def test_a_folder_that_cannot_be_read_is_named_in_one_line(tmp_path: Path, call: str, where: str) -> None:
    """A folder without read permission (mode 000), or one below it, made
    ``Path.exists()``/``is_dir()`` raise, and ``op.load_suite``, ``op.load_run``, ``op.load_runs``,
    ``op.from_inspect`` and ``init_example`` ended in a raw PermissionError (``[Errno 13] Permission denied:
    'locked/oloproof.yaml'``). Now the project's error names the folder; the folder is left as it was."""
    import sys

    from _processes import bound_by_modes

    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "oloproof.yaml").write_text("name: x\n", encoding="utf-8")
    path = locked if where == "the folder" else locked / "inner"
    expr, error, hint = _UNREADABLE_CALLS[call]
    script = ("import sys\nimport oloproof_nb as op\nfrom oloproof_nb.examples import init_example\n"
              f"P = {str(path)!r}\ntry:\n    {expr}\nexcept op.OloproofError as exc:\n"
              "    print(type(exc).__name__ + ': ' + str(exc))\nexcept BaseException as exc:\n"
              "    print('raw ' + type(exc).__name__ + ': ' + str(exc))\n")
    done = bound_by_modes([sys.executable, "-c", script], locked, 0)
    assert done.stdout == f"{error}: {path}: cannot read this folder (Permission denied); {hint}\n", done.stderr
    assert sorted(p.name for p in locked.iterdir()) == ["oloproof.yaml"]


@pytest.mark.parametrize("mode", [0o300, 0o600, 0o700], ids=["wx", "rw", "rwx"])
def test_a_folder_that_can_be_searched_but_not_listed_or_the_other_way_is_a_problem(tmp_path: Path,
                                                                                      mode: int) -> None:
    """``folder_problem`` checks both permissions a folder is read by: listing its entries (read,
    ``r``: mode 0o300 has search and write only) and opening them (search, ``x``: 0o600 has read and write only).
    Each alone is a problem named in words; a folder with both (0o700) is none."""
    import sys

    from _processes import bound_by_modes

    folder = tmp_path / "half"
    folder.mkdir()
    (folder / "oloproof.yaml").write_text("name: x\n", encoding="utf-8")
    script = f"from oloproof_nb._config.files import folder_problem\nprint(folder_problem({str(folder)!r}))\n"
    done = bound_by_modes([sys.executable, "-c", script], folder, mode)
    wanted = "None" if mode == 0o700 else "cannot read this folder (Permission denied)"
    assert done.stdout == wanted + "\n", done.stderr


# -- numbers YAML 1.1 reads otherwise than they are written --------------------------------------------------


@pytest.mark.parametrize(("line", "shown"), [
    ("min_clusters: 012", "012 is the octal number 10 to YAML 1.1 (a leading 0 means octal), not 12"),
    ("min_clusters: 020", "020 is the octal number 16 to YAML 1.1 (a leading 0 means octal), not 20"),
    ("bootstrap: {seed: -010}", "-010 is the octal number -8 to YAML 1.1 (a leading 0 means octal), not -10"),
    ("min_clusters: 1:30", "1:30 is the base-60 number 90 to YAML 1.1 (and text to YAML 1.2)"),
    ("confidence: 0:57.5", "0:57.5 is the base-60 number 57.5 to YAML 1.1 (and text to YAML 1.2)"),
])
def test_a_number_yaml_1_1_reads_otherwise_than_written_is_refused_by_line(tmp_path: Path, line: str,
                                                                          shown: str) -> None:
    """``min_clusters: 012`` was 10 clusters (PyYAML reads a leading 0 as octal; YAML 1.2, JSON and a reader read
    12), and ``1:30`` was 90: the gate ran on a setting nobody wrote, without a word. Counted by hand:
    0o12 = 10, 0o20 = 16, 1·60 + 30 = 90, 0·60 + 57.5 = 57.5."""
    path = tmp_path / "release.yaml"
    path.write_text(f"allow_approximate_methods: true\n{line}\ncriteria: {{a: 0.9}}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value).startswith(f"{path}: line 2: {shown}")
    assert "\n" not in str(err.value)
    # a leading zero that changes nothing (007 is 7 either way), hexadecimal, binary and digit groups read as written
    for kept, value in [("007", 7), ("0x14", 20), ("0b10100", 20), ("2_0", 20), ("20", 20)]:
        path.write_text(f"min_clusters: {kept}\n", encoding="utf-8")
        assert load_release(path).min_clusters == value


# -- the YAML 1.1 number rule at its edges -------------------------------------------------------------------


@pytest.mark.parametrize(("text", "read", "written"), [("+012", 10, 12), ("0_12", 10, 12), ("-0_10", -8, -10)])
def test_an_octal_number_with_a_plus_or_digit_groups_is_refused_too(tmp_path: Path, text: str, read: int,
                                                                     written: int) -> None:
    """PyYAML's int pattern takes a sign and ``_`` digit groups before reading a leading 0 as octal: ``+012`` and
    ``0_12`` are 10 to it (0o12), ``-0_10`` is -8, each refused like ``012``. Values by hand: 1·8 + 2 = 10,
    -(1·8 + 0) = -8; PyYAML's own SafeLoader (no refusal) is the outside reference for what YAML 1.1 reads."""
    assert yaml.safe_load(f"x: {text}") == {"x": read}
    path = tmp_path / "settings.yaml"
    path.write_text(f"a: 1\nx: {text}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_yaml(path)
    assert str(err.value) == (f"{path}: line 2: {text} is the octal number {read} to YAML 1.1 (a leading 0 means "
                              f"octal), not {written}; write {read} or {written} without the leading zero (or quote "
                              "it for text)")


@pytest.mark.parametrize(("text", "value"), [("-007", -7), ("+007", 7), ("-0", 0), ("00", 0), ("0.5", 0.5),
                                             ("012.5", 12.5)])
def test_a_leading_zero_or_sign_that_changes_nothing_reads_as_written(tmp_path: Path, text: str,
                                                                      value: float) -> None:
    """``-007`` is -7 to YAML 1.1 and 1.2 alike (0o7 = 7), ``012.5`` a float both read as 12.5: kept, not refused."""
    path = tmp_path / "settings.yaml"
    path.write_text(f"x: {text}\n", encoding="utf-8")
    assert read_yaml(path) == {"x": value} == yaml.safe_load(f"x: {text}")


@pytest.mark.parametrize(("text", "shown"), [("1:30.0", "90"), ("1:02:03:04.5", "223384.5"), ("-0:00:00.25", "-0.25")])
def test_a_base_60_float_is_shown_with_every_digit_yaml_read(tmp_path: Path, text: str, shown: str) -> None:
    """The base-60 message said what YAML 1.1 read with six significant digits: ``1:02:03:04.5`` was "the base-60
    number 223384", which YAML read as 223384.5 (by hand: 1·60³ + 2·60² + 3·60 + 4.5 = 223384.5), and a
    whole float showed as ``90`` only by luck of ``:g``."""
    assert yaml.safe_load(f"x: {text}") == {"x": float(shown)}
    path = tmp_path / "settings.yaml"
    path.write_text(f"x: {text}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{path}: line 1: {text} is the base-60 number {shown} to YAML 1\.1 "):
        read_yaml(path)


@pytest.mark.parametrize("value", [0.9999995, 1e-05, 0.123456789, 90.0, 223384.5, 1e-12, 0.1])
def test_yaml_number_reads_back_as_the_same_number_in_yaml_1_1(value: float) -> None:
    """What a message tells the user to write must be the number: PyYAML's SafeLoader (the outside reference) reads
    the text back as ``value`` exactly, and as a number, not as text."""
    text = files.yaml_number(value)
    read = yaml.safe_load(f"x: {text}")["x"]
    assert isinstance(read, (int, float)) and read == value, text


def test_a_socket_is_refused_by_name_before_it_is_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SPECIAL_KINDS has no socket, and a FIFO, a directory or /dev/zero is refused by the check
    of the open descriptor too, so no test saw the stat before the open. A socket cannot be opened: without the
    first stat it was ``cannot read: No such device or address``, not what the README says (``a socket is
    refused before it is opened``)."""
    import socket

    monkeypatch.chdir(tmp_path)  # a relative name: an AF_UNIX path is limited to 108 bytes
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("release.yaml")
        path = tmp_path / "release.yaml"
        with pytest.raises(UnreadableFile) as info:
            read_regular(path, 100)
        assert str(info.value) == "is a socket, not a regular file"
        with pytest.raises(ConfigError) as error:
            read_yaml(path)
        assert str(error.value) == f"{path}: is a socket, not a regular file"


def test_a_yaml_syntax_error_names_its_line(tmp_path: Path) -> None:
    """The line of a YAML syntax error (``mark.line`` is 0-based: line 3 was shown
    as line 2). The bad ``c: d: e`` is on line 3, counted by hand."""
    path = tmp_path / "release.yaml"
    path.write_text("confidence: 0.9\nmethod: cluster_t\nc: d: e\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_yaml(path)
    assert str(info.value) == f"{path}: not valid YAML at line 3: mapping values are not allowed here"


@pytest.mark.parametrize(("text", "line"), [
    ("name: s\nevaluators:\n\t- {type: answer_matches}\n", 3),  # a tab that indents
    ("name: s\t\nsystem: m:S\n", 1),                              # a tab after a value (an editor's, unseen)
    ("name:\ts\n", 1),                                              # a tab after the colon
])
def test_a_tab_yaml_takes_nowhere_says_to_use_spaces(tmp_path: Path, text: str, line: int) -> None:
    """PyYAML's words for a tab said what it found (``found character '\\t' that cannot start any token``), never
    what goes there: the line now says to indent and separate with spaces. The line of each tab counted by hand."""
    path = tmp_path / "oloproof.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_yaml(path)
    assert str(info.value) == (f"{path}: not valid YAML at line {line}: found character '\\t' that cannot start any "
                               "token; YAML takes no tab there: indent and separate with spaces")
    path.write_text(text.replace("\t", "  "), encoding="utf-8")
    assert read_yaml(path)["name"] == "s"
    path.write_text('name: "a\tb"\ntemplate: "{value}\t!"\n', encoding="utf-8")  # a tab inside quotes is text
    assert read_yaml(path) == {"name": "a\tb", "template": "{value}\t!"}


def test_a_link_that_leads_to_a_file_is_no_dangling_link(tmp_path: Path) -> None:
    # a run folder under a linked parent (/tmp on macOS), a release.yaml that is a link to the real one: nothing to
    # name
    (tmp_path / "real.yaml").write_text("x: 1\n", encoding="utf-8")
    (tmp_path / "release.yaml").symlink_to("real.yaml")
    assert files.dangling_link(tmp_path / "release.yaml") is None
    assert read_regular(tmp_path / "release.yaml", 10) == b"x: 1\n"


def test_a_link_to_a_dangling_link_names_where_the_chain_ends(tmp_path: Path) -> None:
    """``latest`` -> ``run-7`` -> a folder that is gone: ``run-7`` is there, as a link, and was said not to exist."""
    gone = tmp_path / "gone" / "run-7"
    (tmp_path / "run-7").symlink_to(gone)
    (tmp_path / "latest").symlink_to("run-7")
    end = os.path.realpath(gone)  # /private/var/... of /var/... on macOS
    assert files.dangling_link(tmp_path / "latest") == (
        f"is a dangling symbolic link (it points to 'run-7', a link that leads to {quote(end)}, which does not exist)")
    assert files.dangling_link(tmp_path / "run-7") == (
        f"is a dangling symbolic link (it points to {quote(str(gone))}, which does not exist)")


def test_a_file_replaced_by_a_dangling_link_before_it_is_opened_is_named_as_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # stat saw the file; by the open it was a link to nothing (a writer's rename): named as when stat sees the link
    path = tmp_path / "release.yaml"
    path.write_text("x: 1\n", encoding="utf-8")
    real_open = os.open

    def replaced(name: Any, *args: Any, **kwargs: Any) -> int:
        if Path(name) == path:
            path.unlink()
            path.symlink_to("gone.yaml")
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", replaced)
    with pytest.raises(UnreadableFile) as info:
        read_regular(path, 10)
    assert str(info.value) == ("is a dangling symbolic link (it points to 'gone.yaml', which does not exist); "
                               "point it at the file, or remove it")
    assert not info.value.missing


def test_a_real_number_whose_text_is_no_float_is_the_float_python_makes_of_it() -> None:
    # plain_number reads a NumPy float's shortest text; a real number of another kind, whose text is words, is
    # widened as float() widens it, never kept as the object it was
    class Half:
        def __float__(self) -> float:
            return 0.5

        def __str__(self) -> str:
            return "one half"

    numbers.Real.register(Half)
    value = files.plain_number(Half())
    assert type(value) is float and value == 0.5


def test_a_bool_is_no_number_plain_number_turns_into_one() -> None:
    # True is an int: made 1, a release threshold of True passed its "a number, not a bool" check as 1
    assert files.plain_number(True) is True and files.plain_number(False) is False
    with pytest.raises(ConfigError, match="threshold of 'a' must be a number between 0 and 1"):
        parse_release({"criteria": {"a": True}}, "release")


# -- keys YAML reads as no text ------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "key", "read"), [
    ("  on: 0.5", "on", "true to YAML 1.1 (it reads yes, no, on and off as true or false)"),
    ("  no: 0.5", "no", "false to YAML 1.1 (it reads yes, no, on and off as true or false)"),
    ("  1: 0.5", "1", "a number to YAML"),
    ("  2026-06-01: 0.5", "2026-06-01", "a date to YAML"),
    ("  ~: 0.5", "~", "null to YAML"),
])
def test_a_key_yaml_reads_as_no_text_is_refused_by_line(tmp_path: Path, line: str, key: str, read: str) -> None:
    """A criterion named ``on`` (or ``no``, ``1``, a date) is no name to YAML 1.1: it was refused at a place no line
    of the file is, ``criteria[1]: Input should be a valid string (got true)``, and ``on:`` at the top of
    oloproof.yaml as ``[1]: Keys should be strings``. PyYAML's own SafeLoader is the outside reference for what
    YAML reads the key as; quoted, the key is the text written."""
    assert not isinstance(next(iter(yaml.safe_load(line.strip()))), str)
    path = tmp_path / "release.yaml"
    path.write_text(f"criteria:\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == (f"{path}: line 2: the key {key} is {read}, and a key here is a name; write it quoted: "
                              f"{quote(key)}")
    top = tmp_path / "oloproof.yaml"
    top.write_text(f"name: x\n{line.strip()}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{top}: line 2: the key {key} is "):
        read_yaml(top)
    path.write_text(f"criteria:\n  {quote(key)}: 0.5\n", encoding="utf-8")
    assert read_yaml(path) == {"criteria": {key: 0.5}}


@pytest.mark.parametrize(("text", "line"), [("criteria:\n  ?\n  : 0.5\n", 2), ("criteria: {? : 0.5}\n", 1)])
def test_a_key_written_as_nothing_is_refused_as_empty(tmp_path: Path, text: str, line: int) -> None:
    """A key with no text is null to YAML (PyYAML's SafeLoader reads it so): the line names it ``(empty)``, not a
    key of no letters between two words."""
    assert yaml.safe_load(text) == {"criteria": {None: 0.5}}
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == (f"{path}: line {line}: the key (empty) is null to YAML, and a key here is a name; write "
                              "it quoted: ''")


@pytest.mark.parametrize(("written", "kind"), [("2026-06-01", "date"), ("2026-06-01 14:30:00", "time")])
def test_a_date_yaml_read_where_text_goes_is_shown_as_written(tmp_path: Path, written: str, kind: str) -> None:
    """``name: 2026-06-01`` is a date to YAML (PyYAML's SafeLoader, the outside reference, reads it so): refused as
    no text, the line showed Python's ``datetime.date(2026, 6, 1)``, words the file does not hold, and not why a
    name written plainly was no text."""
    assert type(yaml.safe_load(f"name: {written}")["name"]).__name__ == ("datetime" if kind == "time" else kind)
    path = tmp_path / "oloproof.yaml"
    path.write_text(f"name: {written}\nsystem: desk:Desk\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        parse_suite_config(read_yaml(path), path)
    assert str(err.value) == (f"{path}: name: Input should be a valid string (got {written}, which YAML reads as a "
                              f"{kind}: quote it for text)")


def test_named_alike_suggests_a_file_spelled_much_like_the_missing_one(tmp_path: Path) -> None:
    """difflib's ratio of ``labels.jsonl`` to ``cases.jsonl`` is 2*9/23 = 0.78, below the 0.8 cutoff: another of the
    suite's files is no misspelling; ``case.json`` (2*9/20 = 0.9) is one."""
    (tmp_path / "labels.jsonl").write_text("", encoding="utf-8")
    assert files.named_alike(tmp_path / "cases.jsonl") is None
    (tmp_path / "case.json").write_text("", encoding="utf-8")
    assert files.named_alike(tmp_path / "cases.jsonl") == "case.json"


def test_named_alike_names_no_folder(tmp_path: Path) -> None:
    (tmp_path / "oloproof.yml").mkdir()
    assert files.named_alike(tmp_path / "oloproof.yaml") is None


def test_named_alike_names_a_file_that_differs_only_in_case(tmp_path: Path) -> None:
    """``CASES.JSONL`` shares only the dot with ``cases.jsonl`` by difflib's ratio (2/22), yet is the file meant."""
    (tmp_path / "CASES.JSONL").write_text("", encoding="utf-8")
    assert files.named_alike(tmp_path / "cases.jsonl") == "CASES.JSONL"


def test_named_alike_of_a_path_holding_a_nul_is_none() -> None:
    assert files.named_alike("suite\0/oloproof.yaml") is None  # os.scandir raises ValueError


def test_named_alike_takes_a_name_at_or_above_the_cutoff(tmp_path: Path) -> None:
    """The cutoff is 0.8 of difflib's ratio: ``cases_v2.jsonl`` (2*11/25 = 0.88) is named for ``cases.jsonl``, and so
    is ``cases.json.bak`` (2*10/25 = 0.8, the cutoff itself); ``cases.csv`` (2*7/20 = 0.7) is not."""
    (tmp_path / "cases.csv").write_text("", encoding="utf-8")
    assert files.named_alike(tmp_path / "cases.jsonl") is None
    (tmp_path / "cases.json.bak").write_text("", encoding="utf-8")
    assert files.named_alike(tmp_path / "cases.jsonl") == "cases.json.bak"
    (tmp_path / "cases.json.bak").unlink()
    (tmp_path / "cases_v2.jsonl").write_text("", encoding="utf-8")
    assert files.named_alike(tmp_path / "cases.jsonl") == "cases_v2.jsonl"


def test_named_alike_reads_at_most_a_thousand_entries_of_the_folder(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder is read in name order here (``os.scandir``'s own order is the file system's), the file meant last:
    found among 1,000 entries, not after 1,000 others."""
    real_scandir = os.scandir

    class InNameOrder:
        def __init__(self, path: Path) -> None:
            self._entries = real_scandir(path)

        def __enter__(self) -> Iterator[os.DirEntry[str]]:
            return iter(sorted(self._entries, key=lambda entry: entry.name))

        def __exit__(self, *exc: object) -> None:
            self._entries.close()

    monkeypatch.setattr(files.os, "scandir", InNameOrder)
    for i in range(999):
        (tmp_path / f"note_{i:04}.txt").write_bytes(b"")
    (tmp_path / "oloproof.yml").write_bytes(b"")
    assert files.named_alike(tmp_path / "oloproof.yaml") == "oloproof.yml"
    (tmp_path / "note_0999.txt").write_bytes(b"")
    assert files.named_alike(tmp_path / "oloproof.yaml") is None
