"""Which files are Inspect AI logs, and the guard before inspect-ai reads one
(:mod:`oloproof_nb._analysis.inspect_files`); reading whole logs is tested in test_inspect_log.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oloproof_nb as op
from oloproof_nb._analysis.inspect_files import is_inspect_log


def _depth(value: Any) -> int:
    """Nesting by hand: 0 for a scalar, one more than the deepest child for a list or dict."""
    children = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else None
    return 0 if children is None else 1 + max((_depth(c) for c in children), default=0)


_tricky = st.text(alphabet='[]{}"\\ab', max_size=8)  # brackets, quotes and backslashes inside strings
_json = st.recursive(st.none() | st.integers() | _tricky,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_tricky, inner, max_size=3),
                     max_leaves=30)


@given(_json)
@settings(max_examples=300, deadline=None)
def test_json_depth_counts_brackets_outside_strings_as_a_hand_count(value: Any) -> None:
    from oloproof_nb._analysis.inspect_files import json_depth

    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        assert json_depth(text.encode("utf-8")) == _depth(value)


@given(st.dictionaries(_tricky, _json, max_size=4))
@settings(max_examples=300, deadline=None)
def test_top_keys_are_the_keys_json_reads_at_the_top_of_the_object(value: dict[str, Any]) -> None:
    """The keys ``_top_keys`` finds in a whole JSON object are those ``json.loads`` reads at its
    top, as written (quoted, escapes kept), with lists and objects of any nesting before and after them."""
    from oloproof_nb._analysis.inspect_files import _top_keys

    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        assert _top_keys(text.encode("utf-8")) == {json.dumps(k).encode("utf-8") for k in json.loads(text)}


@pytest.mark.parametrize("sign", ["", "-"])
def test_the_digits_a_log_may_hold_are_the_ones_python_converts(tmp_path: Path, sign: str) -> None:
    """The docstring's and the error line's 4,300: an integer of as many digits as ``int()`` converts (Python's own
    limit, 4,300 by default) is read; one digit more, which ``int()`` refuses and ijson's C parser crashed on
    (SIGSEGV), is refused; so is its negative."""
    from oloproof_nb._analysis.inspect_files import check_log_nesting

    limit = sys.get_int_max_str_digits()
    assert int("9" * limit) > 0
    with pytest.raises(ValueError):
        int("9" * (limit + 1))
    fine, huge = tmp_path / "fine.json", tmp_path / "huge.json"
    fine.write_text('{"a": ' + sign + "9" * limit + "}", encoding="utf-8")
    huge.write_text('{"a": ' + sign + "9" * (limit + 1) + "}", encoding="utf-8")
    check_log_nesting(fine)
    with pytest.raises(op.OloproofError, match=rf"holds a number whose integer part runs past {limit:,} digits"):
        check_log_nesting(huge)


#: Numbers at the digit cap (sys.get_int_max_str_digits(), 4,300 ones in place of ``{ones}``), and whether each is an
#: integer Python refuses to read. By hand with ijson 3.6 (yajl2_c): 4,300 digits read as an int, 4,301 (or
#: -4,301) ended the process with SIGSEGV, a 4,301-digit exponent or fraction raised decimal.InvalidOperation or
#: read as a Decimal (no crash).
DIGIT_CAP = [("{ones}", False), ("1{ones}", True), ("-1{ones}", True), ("[7, 1{ones}]", True),
             ("1e1{ones}", False), ("1E-1{ones}", False), ("2e+1{ones}", False), ("0.1{ones}", False)]


@pytest.mark.parametrize(("number", "refused"), DIGIT_CAP, ids=[n.replace("{ones}", "…") for n, _ in DIGIT_CAP])
def test_a_number_is_refused_from_one_digit_past_what_python_reads_as_an_integer(tmp_path: Path, number: str,
                                                                                 refused: bool) -> None:
    """The cap's boundary (a run of 4,301 digits is refused, one of 4,300 is not) and a long
    exponent, which is no integer, are not tested elsewhere (the other long-number test has 5,001 digits and a
    fraction). The outside reference is Python's ``int()``: what it refuses is what crashed ijson's C parser."""
    from oloproof_nb._analysis.inspect_files import check_log_nesting

    limit = sys.get_int_max_str_digits()
    text = number.format(ones="1" * limit)  # "1{ones}": one digit more than the cap
    integer = text.strip("[]").split(", ")[-1]
    if re.fullmatch(r"-?\d+", integer):  # the reference: an integer Python reads, or refuses (ValueError)
        try:
            int(integer)
            assert not refused
        except ValueError:
            assert refused
    else:
        assert not refused
        float(integer)  # an exponent or a fraction: Python reads a float, however long
    log = tmp_path / "log.json"
    log.write_text('{"version": 2, "eval": {"n": ' + text + "}}", encoding="utf-8")
    if refused:
        with pytest.raises(op.OloproofError) as info:
            check_log_nesting(log)
        assert str(info.value) == (f"{log}: holds a number whose integer part runs past {limit:,} digits (Python's "
                                   "limit for reading text as an integer); not an Inspect AI log oloproof reads")
    else:
        check_log_nesting(log)  # handed to inspect-ai, which says what it makes of it


def test_an_integer_at_the_cap_beside_a_longer_run_of_fraction_digits_is_read(tmp_path: Path) -> None:
    """A log is refused for a run of digits longer than the cap only when that run is an
    integer's. Here the longest run (4,301 digits) is a fraction's, and the only integer has 4,300 digits, which
    ``int()`` reads: nothing to refuse (a refusal keyed to 4,300 digits once a longer run was found anywhere refused
    it). The reference is Python's own ``int()`` and ``float()``."""
    from oloproof_nb._analysis.inspect_files import check_log_nesting

    limit = sys.get_int_max_str_digits()
    integer, fraction = "9" * limit, "0." + "1" * (limit + 1)
    assert int(integer) > 0 and 0 < float(fraction) < 1  # both read by Python: no integer past the cap
    log = tmp_path / "log.json"
    log.write_text('{"version": 2, "eval": {"n": ' + integer + ', "f": ' + fraction + "}}", encoding="utf-8")
    check_log_nesting(log)  # handed to inspect-ai


_HEADER = json.dumps({"eval": {"run_id": "r1", "task": "refunds"}, "plan": {}}, sort_keys=True)


@pytest.mark.parametrize(("text", "is_log"), [
    (_HEADER, True),
    (_HEADER.replace('"run_id"', '"run"'), False),  # no "run_id": a JSON file of another tool
    (_HEADER.replace('"task"', '"tasks"'), False),  # no "task"
    ("// settings\n" + _HEADER, False),  # not a JSON object from its first byte (JSON with a comment)
    (json.dumps({"runs": {"eval": {"run_id": "r1", "task": "refunds"}}}, sort_keys=True), False),  # one level down
], ids=["log", "no-run_id", "no-task", "comment-first", "nested"])
def test_a_json_file_with_sorted_keys_is_a_log_only_with_eval_at_its_top_naming_run_id_and_task(
        tmp_path: Path, text: str, is_log: bool) -> None:
    """The rule ``is_inspect_log``'s docstring gives for a log whose keys are in another order,
    each part of it on its own."""
    path = tmp_path / "log.json"
    path.write_text(text, encoding="utf-8")
    assert is_inspect_log(path) is is_log


def test_a_log_that_cannot_be_read_is_named_not_left_out_nor_called_no_log(tmp_path: Path) -> None:
    """A log file without read permission (mode 000): given alone it was "not an Inspect AI log", and in a folder
    it was left out without a word, the folder judged on its other logs (a folder of two shards gated on one). Now each
    is one error naming the file and why; a folder holding only such a .json is taken for logs."""
    from _processes import without_root_powers

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    header = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "run_id": "r"}})
    both, alone = tmp_path / "both", tmp_path / "alone"
    for folder in (both, alone):
        folder.mkdir()
        (folder / "locked.json").write_text(header, encoding="utf-8")
        (folder / "locked.json").chmod(0)
    (both / "readable.json").write_text(header, encoding="utf-8")
    evals = tmp_path / "evals"  # an .eval is a log by its name: one that cannot be read is named so, not "damaged"
    evals.mkdir()
    (evals / "readable.json").write_text(header, encoding="utf-8")
    (evals / "locked.eval").write_bytes(b"PK")
    (evals / "locked.eval").chmod(0)
    script = ("import sys\nfrom pathlib import Path\nfrom oloproof_nb._analysis import inspect_files\n"
              "for path in sys.argv[1:]:\n"
              "    try:\n        print([f.name for f in inspect_files.inspect_log_files(path)])\n"
              "    except Exception as exc:\n        print(f'{type(exc).__name__}: {exc}')\n"
              "print(inspect_files.is_inspect_source(Path(sys.argv[-1])))\n")
    paths = [str(both / "locked.json"), str(both), str(evals), str(alone)]
    done = subprocess.run([*prefix, sys.executable, "-c", script, *paths], capture_output=True, text=True, timeout=120)
    refused = ("cannot read: Permission denied; a log of this folder that cannot be read would leave its samples "
               "out: make it readable, or move it out of the folder")
    assert done.stdout.splitlines() == [
        f"OloproofError: {both / 'locked.json'}: cannot read: Permission denied; give an Inspect AI log you can read",
        f"OloproofError: {both / 'locked.json'}: {refused}",
        f"OloproofError: {evals / 'locked.eval'}: {refused}",
        f"OloproofError: {alone / 'locked.json'}: {refused}",
        "True"], done.stderr


_LOG_HEAD = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "run_id": "r"}})


def test_a_json_inspect_log_cut_short_before_its_eval_key_is_named_not_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A .json log copied under a name of one's own and cut short 20 bytes in (``{"version": 2,`` and no more) was not
    taken for a log, so a folder holding it beside a whole log was judged on the whole one alone, exit 0 or 1 without a
    word, and a folder holding only it was "not a run directory". Now it is one line naming it, exit 2; a
    whole JSON file whose first key is ``version`` (no log) is still another file, left out."""
    from oloproof_nb._analysis.inspect_files import inspect_log_files, is_inspect_source
    from oloproof_nb.cli import main

    folder, alone = tmp_path / "logs", tmp_path / "alone"
    folder.mkdir()
    alone.mkdir()
    (folder / "whole.json").write_text(_LOG_HEAD, encoding="utf-8")
    (folder / "package.json").write_text('{"version": "1.0.0", "name": "tool"}', encoding="utf-8")  # no log
    cut = '{\n  "version": 2,\n  '  # the first 20 bytes of a log Inspect writes
    (folder / "copied.json").write_text(cut, encoding="utf-8")
    (alone / "copied.json").write_text(cut, encoding="utf-8")
    said = "copied.json: not a readable Inspect AI log (it starts as an Inspect AI .json log does"
    with pytest.raises(op.OloproofError, match=re.escape(said)):
        inspect_log_files(folder)
    assert is_inspect_source(alone)
    for where in (folder, alone, alone / "copied.json"):
        assert main(["gate", str(where)]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    (folder / "copied.json").unlink()
    assert [f.name for f in inspect_log_files(folder)] == ["whole.json"]  # a whole non-log JSON stays left out


def test_an_eval_log_cut_short_given_alone_is_called_unreadable_not_no_inspect_log(tmp_path: Path) -> None:
    """An .eval log cut short (no zip central directory) given alone was "not an Inspect AI log (an .eval or .json eval
    log)", told it was not the very thing it is named; in a folder it was already "not a readable Inspect AI log"."""
    cut = tmp_path / "run.eval"
    cut.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    with pytest.raises(op.OloproofError, match=re.escape(f"{cut}: not a readable Inspect AI log (an .eval log is a "
                                                         "zip archive holding header.json")):
        op.from_inspect(cut)


def test_a_sorted_json_inspect_log_cut_short_before_its_task_is_named_not_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A .json log written again with its keys sorted (``jq -S``, read as a log since its first bytes
    name ``"eval"``, ``"run_id"`` and ``"task"``) and cut short before the eval's ``task`` was not taken for a log nor
    for one cut short, so a folder holding it beside a whole log was judged on the whole one alone (exit 0 or 1
    without a word), and given alone it was "not an Inspect AI log". A whole JSON file whose first key is ``eval`` (no
    log) is still another file, left out."""
    from oloproof_nb._analysis.inspect_files import inspect_log_files
    from oloproof_nb.cli import main

    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "whole.json").write_text(_LOG_HEAD, encoding="utf-8")
    (folder / "config.json").write_text('{"eval": {"name": "another tool"}}', encoding="utf-8")  # no log
    whole = json.dumps({"eval": {"created": "2026-12-06T10:00:00", "run_id": "r", "task": "t"}, "version": 2},
                       sort_keys=True)
    cut = folder / "sorted.json"
    cut.write_text(whole[:whole.index('"run_id"') + 12], encoding="utf-8")  # the eval's run_id, and no task
    said = (f'{cut}: not a readable Inspect AI log (its keys in another order, it starts with an Inspect AI log\'s '
            '"eval" key, but its JSON ends before the eval names its "run_id" and "task": cut short); ')
    with pytest.raises(op.OloproofError, match=re.escape(said)):
        inspect_log_files(folder)
    for where in (folder, cut):
        assert main(["gate", str(where)]) == 2
        err = capsys.readouterr().err
        assert said.split(": ", 1)[1] in err and len(err.strip().splitlines()) == 1, err
    cut.unlink()
    assert [f.name for f in inspect_log_files(folder)] == ["whole.json"]  # a whole non-log JSON stays left out


def test_an_inspect_log_given_as_a_dangling_link_names_it(tmp_path: Path) -> None:
    """``op.from_inspect`` of a symbolic link to a log that is gone said "no such file or folder" where ``oloproof
    gate`` of the same path named the link and where it points (``files.dangling_link``)."""
    from oloproof_nb._analysis.inspect_files import inspect_log_files

    (tmp_path / "latest.eval").symlink_to("2026-01-01T00-00-00_task.eval")
    with pytest.raises(op.OloproofError) as caught:
        inspect_log_files(tmp_path / "latest.eval")
    assert str(caught.value) == (f"{tmp_path / 'latest.eval'}: is a dangling symbolic link (it points to "
                                 "'2026-01-01T00-00-00_task.eval', which does not exist); point it at an Inspect AI "
                                 "log or a folder of logs, or remove it")
    with pytest.raises(op.OloproofError, match=r"nowhere\.eval: no such file or folder$"):
        inspect_log_files(tmp_path / "nowhere.eval")


def test_a_json_log_saved_again_with_a_byte_order_mark_is_named_not_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A .json log saved again by a tool that puts a UTF-8 byte order mark first (PowerShell's ``Set-Content -Encoding
    UTF8``, Notepad), which Inspect AI cannot read, was no log: a folder of two evals of one task (30 samples that
    pass, and 30 of which 10 fail, saved again so) was gated on the first alone, 30 of 30, PASS at 0.8, exit 0, where
    the 60 samples read 50 of 60, BLOCK. Now it is one line naming it and the 3 bytes to remove, exit 2, in a folder
    and given alone; its keys sorted too. A JSON file of another tool with one is still left out."""
    from oloproof_nb._analysis.inspect_files import inspect_log_files, is_inspect_source
    from oloproof_nb.cli import main

    folder, alone = tmp_path / "logs", tmp_path / "alone"
    folder.mkdir()
    alone.mkdir()
    (folder / "easy.json").write_text(_LOG_HEAD, encoding="utf-8")
    (folder / "settings.json").write_bytes(b"\xef\xbb\xbf" + b'{"theme": "dark"}')  # no log
    sorted_head = json.dumps(json.loads(_LOG_HEAD), sort_keys=True)
    for where, text in ((folder / "hard.json", _LOG_HEAD), (alone / "hard.json", sorted_head)):
        where.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    said = "hard.json: not a readable Inspect AI log (it starts with a UTF-8 byte order mark"
    with pytest.raises(op.OloproofError, match=re.escape(said)):
        inspect_log_files(folder)
    assert is_inspect_source(alone)
    for where in (folder, alone, alone / "hard.json"):
        assert main(["gate", str(where)]) == 2
        err = capsys.readouterr().err
        assert said in err and "remove its first 3 bytes" in err and len(err.strip().splitlines()) == 1, err
    (folder / "hard.json").unlink()
    assert [f.name for f in inspect_log_files(folder)] == ["easy.json"]


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no named pipes here")
def test_a_fifo_named_json_in_a_log_folder_is_left_out_never_opened(tmp_path: Path) -> None:
    """A named pipe ``a.json`` (or ``z.json``) in a folder of logs was opened to see whether it was a log cut short,
    and opening a FIFO waits for a writer: ``oloproof gate`` of the folder hung (killed by ``timeout 20``, exit 124).
    Now it is left out, as is any file that is no regular one, and the folder's log is read (in a child process, so
    that a hang fails the test rather than stopping the run)."""
    import os

    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "whole.json").write_text(_LOG_HEAD, encoding="utf-8")
    os.mkfifo(folder / "a.json")
    os.mkfifo(folder / "z.json")
    script = ("import sys\nfrom pathlib import Path\nfrom oloproof_nb._analysis import inspect_files\n"
              "print(inspect_files.is_inspect_source(Path(sys.argv[1])))\n"
              "print([f.name for f in inspect_files.inspect_log_files(sys.argv[1])])\n")
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["True", "['whole.json']"], done.stderr


@pytest.mark.parametrize("method", ["ZIP_DEFLATED", "ZIP_LZMA"])
def test_an_eval_log_whose_member_bytes_are_damaged_is_one_line_not_an_internal_error(tmp_path: Path,
                                                                                      method: str) -> None:
    """An .eval log with a few damaged bytes inside a sample's compressed member (its zip directory whole, so it is a
    log by its members' names) made its decompressor raise its own kind of error, zlib.error or lzma.LZMAError (and
    zstandard's ZstdError for the zstd members Inspect AI writes), which ``oloproof gate`` reported as an internal
    error, "a bug in oloproof_nb", with a traceback file. Now it is one line naming the file."""
    import zipfile

    from oloproof_nb._analysis.inspect_files import check_log_nesting

    log = tmp_path / "run.eval"
    sample = json.dumps({"id": "s1", "epoch": 1, "messages": [{"content": f"turn {i}"} for i in range(400)]})
    with zipfile.ZipFile(log, "w", getattr(zipfile, method)) as archive:
        archive.writestr("header.json", _LOG_HEAD)
        archive.writestr("samples/s1_epoch_1.json", sample)
    with zipfile.ZipFile(log) as archive:
        info = archive.getinfo("samples/s1_epoch_1.json")
    data = bytearray(log.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 20
    data[start:start + 40] = bytes(b ^ 0x5A for b in data[start:start + 40])
    log.write_bytes(bytes(data))
    assert is_inspect_log(log)
    with pytest.raises(op.OloproofError, match=re.escape(f"{log}: cannot read this Inspect AI log (")):
        check_log_nesting(log)


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges there")
def test_a_json_link_whose_log_is_gone_is_named_not_left_out(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A folder of symbolic links to logs, one of whose .json logs was moved away (a dangling link), was judged on the
    others without a word: 30 of 30 passing, PASS at 0.8, exit 0, where the two evals read 50 of 60, BLOCK (an .eval
    link so was already refused, as a damaged log). Now the link is named, as a log that cannot be read is, in a folder
    and in a folder holding nothing else; a .json link that is a loop too."""
    from oloproof_nb._analysis.inspect_files import inspect_log_files, is_inspect_source
    from oloproof_nb.cli import main

    folder, alone = tmp_path / "logs", tmp_path / "alone"
    folder.mkdir()
    alone.mkdir()
    (folder / "easy.json").write_text(_LOG_HEAD, encoding="utf-8")
    for where in (folder, alone):
        (where / "hard.json").symlink_to(tmp_path / "moved" / "hard.json")
    said = f"{folder / 'hard.json'}: is a dangling symbolic link"
    with pytest.raises(op.OloproofError, match=re.escape(said)):
        inspect_log_files(folder)
    assert is_inspect_source(alone)
    for where in (folder, alone):
        assert main(["gate", str(where)]) == 2
        err = capsys.readouterr().err
        assert "hard.json: is a dangling symbolic link" in err and "would leave its samples out" in err, err
    (folder / "hard.json").unlink()
    (folder / "loop.json").symlink_to(folder / "loop.json")
    with pytest.raises(op.OloproofError, match=re.escape(f"{folder / 'loop.json'}: cannot read")):
        inspect_log_files(folder)


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_a_bug_in_checking_an_inspect_log_stays_an_internal_error(tmp_path: Path, suffix: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Only reading a log is under the catch-all that makes a damaged archive one line: an error raised by the check
    of what was read (a bug of ours) reached the user as "cannot read this Inspect AI log (IndexError: ...)", exit 2,
    their readable log called damaged."""
    import zipfile

    from oloproof_nb._analysis import inspect_files

    log = tmp_path / f"run{suffix}"
    if suffix == ".eval":
        with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("header.json", _LOG_HEAD)
    else:
        log.write_text(_LOG_HEAD, encoding="utf-8")
    inspect_files.check_log_nesting(log)  # readable: nothing to refuse

    def broken(data: bytes) -> int:
        raise IndexError("a bug of ours")

    monkeypatch.setattr(inspect_files, "_bracket_depth", broken)
    with pytest.raises(IndexError, match="a bug of ours"):
        inspect_files.check_log_nesting(log)
