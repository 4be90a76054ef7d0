"""The first hour on the command line: table width and exit line, --baseline, gate on a suite folder,
run on a file, init twice, errors in each face's words, --quiet and progress=False."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from _booking_desk import booking_desk
from _processes import bound_by_modes

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.errors import RunDirError

CASES = [
    {"id": f"c{i}", "input": {"answer": "done", "writes": [{"path": ["acct", "n"], "value": i + 1}]},
     "initial_state": {"acct": {"n": 0}, "other": {"k": i}},
     "expected": {"answer": "done", "state": {"acct": {"n": i + 1}}}}
    for i in range(8)
] + [
    {"id": f"c{i}", "input": {"answer": "done"}, "initial_state": {"acct": {"n": 0}, "other": {"k": i}},
     "expected": {"answer": "done", "state": {"acct": {"n": 0}}}}
    for i in range(8, 10)
]
EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches"},
              {"type": "state_unchanged", "criterion": "other_kept", "paths": ["other"]}]
# 10 of 10 pass: the Clopper-Pearson lower bound 0.025 ** (1 / 10) = 0.6915 >= 0.5
RELEASE = {"criteria": {"answer_matches": 0.5, "state_matches": 0.5, "other_kept": 0.5}}


def _out(capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    out, err = capsys.readouterr()
    return out.splitlines(), err


def test_run_example_fits_100_columns_and_ends_with_the_exit_line(example_suite: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(example_suite), "--out", str(tmp_path / "run"), "--quiet"])
    lines, _ = _out(capsys)
    assert code == 1
    assert all(len(line) <= 100 for line in lines if str(tmp_path) not in line), max(lines, key=len)
    assert [line for line in lines if str(tmp_path) in line] == [f"  -> {tmp_path / 'run'}"]  # the path alone
    # ord-018~injected, labeled invalid, made one fault replay: a control run and a faulted run
    assert "  (2 of the replay runs replay copies no criterion scores)" in lines
    # README: answer_matches, state_matches, same_state_under_injected and recovers_from_error… FAIL; 5 gated
    assert lines[-1] == "gate: BLOCK — exit 1: 4 criteria FAIL (of 5 gated; PASS needs every one to pass)"
    assert main(["gate", str(tmp_path / "run"), "--wide"]) == 1
    wide, _ = _out(capsys)
    assert any(len(line) > 100 for line in wide) and "recovers_from_error_at_issue_refund " in "\n".join(wide)
    assert wide[-1] == lines[-1]


def test_run_with_baseline_shows_noop_and_idle_and_keeps_the_exit(make_suite, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)
    assert main(["run", str(folder), "--out", str(tmp_path / "run"), "--baseline", "--quiet"]) == 0
    lines, _ = _out(capsys)
    assert lines[-1] == "gate: PASS — exit 0: all 3 gated criteria pass"
    assert all(len(line) <= 100 for line in lines if str(tmp_path) not in line)
    header = next(line for line in lines if line.startswith("| criterion"))
    assert [c.strip() for c in header.strip("|").split("|")][-2:] == ["noop", "idle"]
    rows = {c[0]: c for c in ([x.strip() for x in line.strip("|").split("|")] for line in lines
                              if line.startswith("| ") and not line.startswith("| criterion"))}
    # no-op by hand: answer 0/10; state_matches 2/10 (c8, c9 expect no change); other_kept 10/10
    assert rows["answer_matches"][-2:] == ["0.000", ""]
    assert rows["state_matches"][-2:] == ["0.200", ""]
    assert rows["other_kept"][-2:] == ["1.000", "yes"]
    baselines = list((folder / "baselines").iterdir())
    assert len(baselines) == 1 and op.load_run(baselines[0]).system_version == "oloproof-noop"
    assert not (folder / "runs").exists()  # the run went to --out; the baseline never lands in runs/
    # the stored baseline feeds `gate --baseline` and `report --baseline`
    assert main(["gate", str(tmp_path / "run"), "--baseline", str(baselines[0])]) == 0
    assert _out(capsys)[0][-1] == lines[-1]
    assert main(["report", str(tmp_path / "run"), "--baseline", str(baselines[0]),
                 "--out", str(tmp_path / "r.md")]) == 0
    assert "passes_when_idle" in (tmp_path / "r.md").read_text(encoding="utf-8")
    # the suite folder given as --baseline named its runs (the agent's; following the hint was refused)
    for command in (["gate", str(tmp_path / "run")],
                    ["report", str(tmp_path / "run"), "--out", str(tmp_path / "s.md")]):
        assert main([*command, "--baseline", str(folder)]) == 2
        assert _out(capsys)[1] == (f"oloproof: error: {folder}: not a run directory (no manifest.json); it is a suite "
                                   f"folder: give its baseline, {str(baselines[0])!r}\n")


def test_a_relation_held_back_by_its_labels_says_which_pairs(example_suite: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """With a pair's label line deleted (or too few pairs valid), the gate printed only
    `same_state_under_injected: transform_not_checked`; which label file to fix, and how, was for the user to
    find. One line under the table now says what holds the transform back."""
    labels = example_suite / "labels" / "injected.jsonl"
    lines = labels.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if json.loads(line)["case_id"] not in ("ord-003~injected", "ord-005~injected")]
    assert len(kept) == 22
    labels.write_text("\n".join(kept) + "\n", encoding="utf-8")
    run = op.run(example_suite, progress=False).directory
    assert main(["gate", str(run)]) == 1
    out = " ".join(map(str.strip, _out(capsys)[0]))  # a note's lines after the first are indented
    assert ("transform injected is not checked: 2 of its 24 pairs have no label (ord-003~injected, "
            f"ord-005~injected); its relations are judged once every pair is labeled in {labels.resolve()} and the "
            "valid share reaches minimum_validity (see op.validity(run))") in out  # the file a label goes in
    # every pair labeled, 3 of 24 valid (0.125 < minimum_validity 0.85 of the example's oloproof.yaml)
    labels.write_text("".join(json.dumps({"case_id": f"ord-{i:03d}~injected", "valid": i <= 3}) + "\n"
                              for i in range(1, 25)), encoding="utf-8")
    run = op.run(example_suite, progress=False).directory
    assert main(["gate", str(run)]) == 1
    assert ("transform injected is not checked: 3 of its 24 pairs are labeled valid, a share below its "
            "minimum_validity 0.85;") in " ".join(map(str.strip, _out(capsys)[0]))
    (example_suite / "labels" / "injected.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["gate", str(op.run(example_suite, progress=False).directory)]) == 1
    assert "is not checked" not in " ".join(_out(capsys)[0])  # the shipped labels check the transform


def test_gate_on_a_suite_folder_uses_its_latest_run(make_suite, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)
    assert main(["gate", str(folder)]) == 2
    _, err = _out(capsys)
    assert "no run in" in err and "run it first" in err
    first = op.run(folder, progress=False).directory
    wrong = make_suite([{**c, "input": {**c["input"], "answer": "oops"}} for c in CASES], evaluators=EVALUATORS,
                       release=RELEASE)
    (folder / "cases.jsonl").write_bytes((wrong / "cases.jsonl").read_bytes())  # the next run answers wrong
    second = op.run(folder, progress=False).directory
    assert first != second
    assert main(["gate", str(folder)]) == 1  # the latest (wrong answers) BLOCKs; the first would PASS
    lines, err = _out(capsys)
    assert err.strip() == f"oloproof: gating the latest run of the suite: {second}"
    assert main(["report", str(folder), "--out", str(folder / "r.md")]) == 1  # as gate does (it said "not a run")
    assert _out(capsys)[1].strip() == f"oloproof: reporting on the latest run of the suite: {second}"
    assert second.name in (folder / "r.md").read_text(encoding="utf-8")
    assert lines[-1].startswith("gate: BLOCK — exit 1: 1 criterion FAIL")
    (folder / "old.eval").write_bytes(b"an Inspect AI log kept beside the suite")  # still the suite's latest run
    assert main(["gate", str(folder)]) == 1
    assert _out(capsys)[1].strip() == f"oloproof: gating the latest run of the suite: {second}"


def test_gate_on_a_suite_folder_refuses_when_a_run_cannot_be_read(make_suite,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A run folder whose manifest cannot be read may be the latest run: no falling back to an older one.

    Before, the unreadable (latest, failing) run was skipped and the older run that passes was gated: exit 0,
    where gating the latest run by its directory exits 2.
    """
    folder = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)
    first = op.run(folder, progress=False).directory
    wrong = make_suite([{**c, "input": {**c["input"], "answer": "oops"}} for c in CASES], evaluators=EVALUATORS,
                       release=RELEASE)
    (folder / "cases.jsonl").write_bytes((wrong / "cases.jsonl").read_bytes())  # the next run answers wrong
    second = op.run(folder, progress=False).directory
    assert main(["gate", str(first)]) == 0 and main(["gate", str(second)]) == 1
    manifest = second / "manifest.json"
    manifest.write_text(manifest.read_text(encoding="utf-8")[:100], encoding="utf-8")  # a torn copy
    capsys.readouterr()
    assert main(["gate", str(second)]) == 2
    assert main(["gate", str(folder)]) == 2
    _, err = _out(capsys)
    assert err.count("\n") == 2 and "Traceback" not in err
    assert err.splitlines()[-1].startswith(f"oloproof: error: {folder}: cannot tell which run is the latest, as one "
                                           f"run folder cannot be read ({manifest}: not valid JSON")
    assert err.splitlines()[-1].endswith("; give the run directory instead")


def test_gate_on_a_suite_folder_passes_over_an_unreadable_run_its_id_dates_earlier(
        make_suite, capsys: pytest.CaptureFixture[str]) -> None:
    """One torn manifest of 2020 refused every later `gate SUITE`: a run id names its start, so a folder dated
    before the latest readable run cannot be the latest; one not dated so (another name) still refuses."""
    folder = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)
    latest = op.run(folder, progress=False).directory
    old = folder / "runs" / "20200101T000000Z-0a0b0c"
    old.mkdir()
    (old / "manifest.json").write_text('{"suite": "tin', encoding="utf-8")  # torn
    capsys.readouterr()
    assert main(["gate", str(folder)]) == 0
    assert _out(capsys)[1].strip() == f"oloproof: gating the latest run of the suite: {latest}"
    old.rename(folder / "runs" / "mine")  # a name that says nothing of its start
    assert main(["gate", str(folder)]) == 2
    assert "cannot tell which run is the latest" in _out(capsys)[1]


def test_run_on_a_file_says_it_wants_a_suite_folder(make_suite, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(CASES, evaluators=EVALUATORS)
    assert main(["run", str(folder / "oloproof.yaml")]) == 2
    _, err = _out(capsys)
    assert err == (f"oloproof: error: {folder / 'oloproof.yaml'}: is a file; oloproof run wants a suite folder, "
                   f"the folder holding oloproof.yaml (e.g. oloproof run {folder})\n")


@pytest.mark.parametrize("command", ["gate", "report", "compare"])
def test_gate_report_compare_on_a_suite_file_name_its_folder(make_suite, command: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`oloproof gate demo/oloproof.yaml` said only "not a directory (a run directory holds
    manifest.json and cases.jsonl)", though gate, report and compare take the suite folder holding it (its latest
    run); `oloproof run` on the same file already names the folder. Nothing is run or written."""
    folder = make_suite(CASES, evaluators=EVALUATORS)
    given = folder / "oloproof.yaml"
    argv = {"gate": ["gate", str(given)], "report": ["report", str(given), "--out", str(folder / "r.md")],
            "compare": ["compare", str(given), str(given)]}[command]
    assert main(argv) == 2
    _, err = _out(capsys)
    wanted = "a run directory or a suite folder" if command == "compare" else \
        "a run directory, a suite folder or Inspect AI logs"
    assert err == (f"oloproof: error: {given}: is a file of the suite in {folder}; give {wanted} "
                   f"({folder} gives the suite's latest run)\n")
    assert not (folder / "runs").exists() and not (folder / "r.md").exists()


@pytest.mark.parametrize("command", ["gate", "compare"])
def test_a_file_outside_any_suite_folder_is_not_called_a_file_of_a_suite(tmp_path: Path, command: str,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The line above names the suite folder a file sits in; a file in a folder that holds
    no oloproof.yaml belongs to no suite, and is refused as before: not a directory."""
    notes, other = tmp_path / "notes.txt", tmp_path / "other.txt"
    for path in (notes, other):
        path.write_text("hello\n", encoding="utf-8")
    assert not (tmp_path / "oloproof.yaml").exists()
    assert main([command, str(notes)] + ([str(other)] if command == "compare" else [])) == 2
    _, err = _out(capsys)
    assert err == f"oloproof: error: {notes}: not a directory (a run directory holds manifest.json and cases.jsonl)\n"


def test_init_twice_says_what_to_do_and_force_copies_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "demo"
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 0
    (dest / "runs").mkdir()
    (dest / "runs" / "keep.txt").write_text("mine", encoding="utf-8")
    original = (dest / "cases.jsonl").read_bytes()
    (dest / "cases.jsonl").write_text("broken", encoding="utf-8")
    capsys.readouterr()
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 2
    _, err = _out(capsys)
    assert err.startswith(f"oloproof: error: {dest}: already holds a suite") and "--force" in err
    assert "force=True" not in err
    assert (dest / "cases.jsonl").read_text(encoding="utf-8") == "broken"  # nothing overwritten without --force
    assert main(["init", "--example", "stateful-agent", str(dest), "--force"]) == 0
    assert (dest / "cases.jsonl").read_bytes() == original
    assert (dest / "runs" / "keep.txt").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("obstacle", ["folder for a file", "file for a folder", "named pipe", "link out"])
def test_init_force_over_an_obstacle_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     obstacle: str) -> None:
    """--force over a destination it could not copy over whole overwrote oloproof.yaml, release.yaml
    and checks.py, then stopped (``labels: File exists``, or a raw shutil error for a named pipe); a folder at
    oloproof.yaml got the file inside it, exit 0; a link to a file outside the destination was written through.
    Now the obstacle is named in one line, exit 2, and nothing is written."""
    dest = tmp_path / "demo"
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 0
    (dest / "oloproof.yaml").write_text((dest / "oloproof.yaml").read_text(encoding="utf-8") + "# mine\n",
                                        encoding="utf-8")
    outside = tmp_path / "precious.txt"
    outside.write_text("precious", encoding="utf-8")
    if obstacle == "folder for a file":
        (dest / "cases.jsonl").unlink()
        (dest / "cases.jsonl").mkdir()
        where = dest / "cases.jsonl"
    elif obstacle == "file for a folder":
        shutil.rmtree(dest / "labels")
        (dest / "labels").write_text("mine", encoding="utf-8")
        where = dest / "labels"
    elif obstacle == "named pipe":
        (dest / "cases.jsonl").unlink()
        os.mkfifo(dest / "cases.jsonl")
        where = dest / "cases.jsonl"
    else:
        (dest / "README.md").unlink()
        (dest / "README.md").symlink_to(outside)
        where = dest / "README.md"
    before = {p: p.read_bytes() for p in dest.rglob("*") if p.is_file() and not p.is_symlink()}
    capsys.readouterr()
    assert main(["init", "--example", "stateful-agent", str(dest), "--force"]) == 2
    _, err = _out(capsys)
    assert err.startswith(f"oloproof: error: {where}: ") and err.count("\n") == 1, err
    assert {p: p.read_bytes() for p in dest.rglob("*") if p.is_file() and not p.is_symlink()} == before
    assert outside.read_text(encoding="utf-8") == "precious"


@pytest.mark.parametrize(("where", "cut"), [("new folder", 3), ("new folder", 7), ("empty folder", 2),
                                            ("--force", 4), ("new nested folders", 3),
                                            ("new folder in a new one", 5)])
def test_init_cut_short_by_a_full_disk_leaves_the_destination_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str,
        cut: int) -> None:
    """A full disk while the example was copied left a suite with a truncated
    cases.jsonl (and no labels), and the error was shutil's list of tuples; the next ``oloproof init`` called
    the half copy a suite "set up earlier" to run as it is. Now the example is copied whole beside it first:
    the destination is as it was (absent, empty, or the earlier copy under --force) and the error one line.
    A destination in folders that did not exist left those folders, empty; now the ones
    init made are removed again, and a folder that was there is kept (``tmp_path/kept``)."""
    import errno

    from oloproof_nb.examples import example_dir

    dest = tmp_path / "demo"
    if where == "new nested folders":
        dest = tmp_path / "new" / "deeper" / "demo"
    elif where == "new folder in a new one":
        (tmp_path / "kept").mkdir()
        dest = tmp_path / "kept" / "new" / "deeper" / "demo"
    elif where == "empty folder":
        dest.mkdir()
    elif where == "--force":
        assert main(["init", "--example", "stateful-agent", str(dest)]) == 0
        (dest / "cases.jsonl").write_text('{"id": "mine"}\n', encoding="utf-8")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    entries = sorted(tmp_path.rglob("*"))  # files and folders: no temporary folder left either
    real, copied = shutil.copyfile, []

    def full_disk(src: str, dst: str, **kwargs: object) -> str:
        copied.append(dst)
        if len(copied) == cut:  # this file's first bytes reach the disk, then the disk is full
            Path(dst).write_bytes(Path(src).read_bytes()[:100])
            raise OSError(errno.ENOSPC, "No space left on device", dst)
        return real(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copyfile", full_disk)
    capsys.readouterr()
    assert main(["init", "--example", "stateful-agent", str(dest)] + (["--force"] if where == "--force" else [])) == 2
    _, err = _out(capsys)
    assert err == (f"oloproof: error: {dest}: cannot copy the example there (No space left on device); nothing was "
                   "written\n")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert sorted(tmp_path.rglob("*")) == entries
    monkeypatch.setattr(shutil, "copyfile", real)
    assert main(["init", "--example", "stateful-agent", str(dest), "--force"]) == 0  # once there is space: whole
    assert (dest / "cases.jsonl").read_bytes() == (example_dir("stateful-agent") / "cases.jsonl").read_bytes()
    assert (dest / "labels" / "injected.jsonl").stat().st_size > 0


def test_init_whose_folders_cannot_all_be_made_removes_those_it_made(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A destination ``new/<300 x>/demo`` (a folder name longer than the file system allows)
    made ``new``, then failed at the long name; the folders init made were removed deepest first, and the first,
    never made, stopped the removal: ``new`` was left, empty, beside "nothing was written"."""
    dest = tmp_path / "new" / ("x" * 300) / "demo"
    capsys.readouterr()
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 2
    _, err = _out(capsys)
    assert err.startswith(f"oloproof: error: {dest}: cannot copy the example there (") and err.endswith(
        "); nothing was written\n"), err
    assert list(tmp_path.iterdir()) == []


def test_init_from_a_read_only_installation_gives_a_suite_its_user_can_edit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy took the installation's modes (shutil.copytree, copy2). From a read-only installation
    (folders 0555, files 0444: a Nix store, a read-only image) the temporary copy could not take its labels/, init
    failed and left the temporary folder, which nobody could remove without chmod; a copy that did get through was
    a suite its user could not edit or run (no runs/ in a 0555 folder)."""
    from oloproof_nb import examples

    installed = tmp_path / "site"
    for kind in ("examples", "labels"):
        shutil.copytree(examples._data_root(kind), installed / kind)
    monkeypatch.setattr(examples, "_data_root", lambda kind: installed / kind)
    read_only = [p for p in installed.rglob("*")]
    for path in [*read_only, installed]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        assert main(["init", "--example", "stateful-agent", str(tmp_path / "demo")]) == 0
    finally:
        for path in [installed, *read_only]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    dest = tmp_path / "demo"
    copied = [dest, *dest.rglob("*")]
    assert {p.relative_to(dest).as_posix() for p in copied if p.is_file()} == {
        "README.md", "cases.jsonl", "checks.py", "labels/injected.jsonl", "oloproof.yaml", "refund_desk.py",
        "release.yaml"}
    assert all(p.stat().st_mode & 0o200 for p in copied), [oct(p.stat().st_mode) for p in copied]
    assert not list(tmp_path.glob(".oloproof-init-*"))


@pytest.mark.parametrize("command", ["gate", "report", "compare"])
def test_a_run_folder_that_cannot_be_read_is_named_with_what_to_give(tmp_path: Path, command: str) -> None:
    """``oloproof gate DIR`` with DIR a folder of mode 000 said only
    ``DIR/manifest.json: Permission denied`` (a file the user never named, and nothing about what to give)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    argv = {"gate": ["gate", str(locked)], "report": ["report", str(locked), "--out", str(tmp_path / "r.html")],
            "compare": ["compare", str(locked), str(locked)]}[command]
    done = bound_by_modes([sys.executable, "-m", "oloproof_nb.cli", *argv], locked, 0)
    wanted = "a run directory or a suite folder" if command == "compare" else (
        "a run directory, a suite folder or Inspect AI logs")
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == f"oloproof: error: {locked}: cannot read this folder (Permission denied); give {wanted} " \
                          "you can read\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["locked"]


def test_init_names_a_destination_with_a_line_break_on_one_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof init`` printed the destination as it is, so a name holding a line break
    split "wrote the ... suite to" over two lines (every other line of the command escapes what the user named)."""
    dest = tmp_path / "de\nmo\x1b[2J"
    capsys.readouterr()
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 0
    out, _ = capsys.readouterr()
    assert out == (f"wrote the stateful-agent suite to {tmp_path}/de\\nmo\\x1b[2J/\n"
                   f"next: oloproof run '{tmp_path}/de\\nmo\\x1b[2J'\n")  # quoted: a command to copy
    assert (dest / "oloproof.yaml").is_file()


def test_init_into_a_link_to_nothing_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The temporary copy was renamed onto the link and the error named the temporary folder, gone
    by then (``.oloproof-init-1a2b3c4d -> demo: Not a directory``)."""
    dest = tmp_path / "demo"
    dest.symlink_to(tmp_path / "nowhere")
    capsys.readouterr()
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 2
    _, err = _out(capsys)
    assert err == (f"oloproof: error: {dest}: is a symbolic link to nothing; init writes the example into a folder "
                   "of its own, never through a link (remove it, or choose another destination)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"] and dest.is_symlink()


@pytest.mark.parametrize("above", ["link", "file"])
def test_init_below_a_link_to_nothing_or_a_file_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         above: str) -> None:
    """Below a link to nothing the line was ``demo: cannot copy the example there (File exists)``, for a folder
    that is not there, and below a file ``(Not a directory)``: neither named the path in the way."""
    blocker = tmp_path / "work"
    if above == "link":
        blocker.symlink_to(tmp_path / "nowhere")
        why = f"{blocker} is a symbolic link to '{tmp_path / 'nowhere'}', which is not a folder"
    else:
        blocker.write_text("notes\n", encoding="utf-8")
        why = f"{blocker} is a file, not a folder"
    dest = blocker / "demo"
    capsys.readouterr()
    for force in ([], ["--force"]):
        assert main(["init", "--example", "stateful-agent", str(dest), *force]) == 2
        _, err = _out(capsys)
        assert err == f"oloproof: error: {dest}: nothing can be made there: {why}; choose another destination\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"] and not (tmp_path / "nowhere").exists()
    assert blocker.is_symlink() if above == "link" else blocker.read_text(encoding="utf-8") == "notes\n"


def test_init_whose_destination_is_made_meanwhile_changes_nothing_there(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder made at the destination while the example was copied (another ``oloproof init``, the
    user) was an OSError naming the temporary folder, gone by then (``.oloproof-init-1a2b3c4d -> demo: Directory
    not empty``). Now one line naming the destination, which keeps what was put there."""
    dest = tmp_path / "demo"
    real = shutil.copyfile

    def meanwhile(src: str, dst: str, **kwargs: object) -> str:
        if not dest.exists():
            dest.mkdir()
            (dest / "theirs.txt").write_text("theirs", encoding="utf-8")
        return real(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copyfile", meanwhile)
    capsys.readouterr()
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 2
    _, err = _out(capsys)
    assert err.startswith(f"oloproof: error: {dest}: cannot put the example there (") and err.count("\n") == 1, err
    assert err.endswith("); nothing was written\n")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["demo", "demo/theirs.txt"]


def test_init_force_over_a_folder_it_cannot_write_in_changes_nothing(tmp_path: Path) -> None:
    """--force over a suite whose labels/ (missing its label file) cannot be written in replaced
    README.md, cases.jsonl, ... then stopped at labels/injected.jsonl with an error naming the temporary folder.
    Now every folder a file goes into is checked first: one line naming it, nothing written."""
    dest = tmp_path / "demo"
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 0
    (dest / "labels" / "injected.jsonl").unlink()
    (dest / "cases.jsonl").write_text('{"id": "mine"}\n', encoding="utf-8")
    done = bound_by_modes([sys.executable, "-m", "oloproof_nb.cli", "init", "--example", "stateful-agent", str(dest),
                           "--force"], dest / "labels", 0o555)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"oloproof: error: {dest / 'labels'}: cannot write in this folder, where the example "
                           "puts labels/injected.jsonl; make it writable or choose another destination (nothing "
                           "was written)\n")
    assert (dest / "cases.jsonl").read_text(encoding="utf-8") == '{"id": "mine"}\n'
    assert sorted(p.name for p in dest.iterdir()) == ["README.md", "cases.jsonl", "checks.py", "labels",
                                                      "oloproof.yaml", "refund_desk.py", "release.yaml"]


@pytest.mark.parametrize("force", [False, True])
def test_init_into_a_folder_whose_parent_cannot_be_written_in(tmp_path: Path, force: bool) -> None:
    """The example is staged inside a destination that exists (an empty folder given to the user on a share whose
    parent is not theirs; with --force, their suite), so a parent folder that cannot be written in is no obstacle:
    the example is put there, and no temporary folder is left in it."""
    dest = tmp_path / "share" / "demo"
    dest.mkdir(parents=True)
    if force:
        assert main(["init", "--example", "stateful-agent", str(dest)]) == 0
        (dest / "cases.jsonl").write_text('{"id": "mine"}\n', encoding="utf-8")
    done = bound_by_modes([sys.executable, "-m", "oloproof_nb.cli", "init", "--example", "stateful-agent", str(dest),
                           *(["--force"] if force else [])], dest.parent, 0o555)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["README.md", "cases.jsonl", "checks.py", "labels",
                                                      "oloproof.yaml", "refund_desk.py", "release.yaml"]
    from oloproof_nb.examples import example_dir

    assert (dest / "cases.jsonl").read_bytes() == (example_dir("stateful-agent") / "cases.jsonl").read_bytes()
    assert [p.name for p in dest.parent.iterdir()] == ["demo"]


def test_init_through_a_link_to_a_folder_puts_the_example_in_that_folder(tmp_path: Path) -> None:
    """Only a link to nothing is refused: a destination that is a link to an empty folder (a workspace linked
    into the home folder) gets the example in the folder it points to, and the link stays."""
    there = tmp_path / "workspace"
    there.mkdir()
    dest = tmp_path / "demo"
    dest.symlink_to(there)
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 0
    assert dest.is_symlink() and sorted(p.name for p in there.iterdir()) == [
        "README.md", "cases.jsonl", "checks.py", "labels", "oloproof.yaml", "refund_desk.py", "release.yaml"]


def test_init_leaves_out_what_the_example_folder_holds_besides_the_example(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """An example folder used in place (a source checkout) holds compiled files, runs and notebook checkpoints
    beside the example: none is copied, whether a folder or a file of those names."""
    from oloproof_nb import examples

    source = tmp_path / "src"
    shutil.copytree(examples.example_dir("stateful-agent"), source)
    for junk in ("stray.pyc", "runs", "__pycache__/x.pyc", ".ipynb_checkpoints/a.py", "baselines/b.json"):
        (source / junk).parent.mkdir(parents=True, exist_ok=True)
        (source / junk).write_text("junk\n", encoding="utf-8")
    monkeypatch.setattr(examples, "example_dir", lambda name: source)
    dest = examples.init_example("stateful-agent", tmp_path / "demo")
    assert sorted(p.name for p in dest.iterdir()) == ["README.md", "cases.jsonl", "checks.py", "labels",
                                                      "oloproof.yaml", "refund_desk.py", "release.yaml"]


def test_errors_name_python_parameters_in_python_and_flags_on_the_command_line(
        make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(CASES[:2], evaluators=EVALUATORS)
    used = tmp_path / "used"
    used.mkdir()
    (used / "x.txt").write_text("x", encoding="utf-8")
    with pytest.raises(RunDirError) as info:
        op.run(folder, out=used, progress=False)
    assert "choose another out=, or pass resume=True" in str(info.value) and "--" not in str(info.value)
    with pytest.raises(RunDirError) as info:
        op.run(folder, resume=True, progress=False)
    assert str(info.value) == "resume=True needs out= (the directory of the interrupted run)"  # no run yet
    latest = op.run(folder, progress=False).directory  # name the run to finish
    with pytest.raises(RunDirError) as info:
        op.run(folder, resume=True, progress=False)
    assert str(info.value) == ("resume=True needs out= (the directory of the interrupted run); the suite's latest "
                               f"run is out={str(latest)!r} (finished)")
    assert main(["run", str(folder), "--resume"]) == 2  # the command line names it with its flag
    assert capsys.readouterr().err.strip() == ("oloproof: error: --resume needs --out DIR (the directory of the "
                                               f"interrupted run); the suite's latest run is --out {latest} (finished)")
    from oloproof_nb.examples import init_example

    with pytest.raises(op.OloproofError) as exc:  # before: it also set op.examples_init for the rest of the session
        init_example("nope", tmp_path / "x")
    assert str(exc.value) == ("example 'nope' is not known; allowed: stateful-agent, false-success, "
                              "wrapped-benchmark")  # no flag
    assert main(["run", str(folder), "--out", str(used), "--quiet"]) == 2
    _, err = _out(capsys)
    assert "choose another --out, or pass --resume to finish that run" in err and "resume=True" not in err
    assert main(["init", "--example", "nope"]) == 2
    _, err = _out(capsys)
    assert err.startswith("oloproof: error: --example 'nope' is not known")


def test_quiet_and_progress_false_show_no_bar(make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import oloproof_nb._display.notebook as face

    folder = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)
    monkeypatch.setattr(face, "stderr_is_tty", lambda: True)  # as on a terminal: a bar by default
    assert main(["run", str(folder), "--out", str(tmp_path / "a")]) == 0
    _, err = _out(capsys)
    assert "/10 [" in err and "case" in err  # tqdm's bar: cases done of the total, its unit
    assert main(["run", str(folder), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert _out(capsys)[1] == ""
    op.run(folder, out=tmp_path / "c")
    assert "/10 [" in capsys.readouterr().err
    op.run(folder, out=tmp_path / "d", progress=False)
    assert capsys.readouterr().err == ""


def test_receipt_names_its_status_or_the_contract_error_and_json_is_one_object(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "report.json").write_text("{}", encoding="utf-8")
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({"artifact_id": "r", "locator": "report.json",
                                 "run_started_at": "2999-01-01T00:00:00Z"}), encoding="utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert main(["receipt", str(stale)]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["status"] == "stale" and err.startswith("oloproof: stale: ") and err.count("\n") == 1
    assert main(["receipt", str(stale), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and json.loads(out)["receipt"]["status"] == "stale"
    assert main(["receipt", str(broken)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("oloproof: error: contract error: ") and str(broken) in err
    assert main(["receipt", str(broken), "--json"]) == 2
    out, err = capsys.readouterr()
    body = json.loads(out)
    assert out.count("\n") == 1 and body["error"] == "contract error" and str(broken) in body["message"]
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"artifact_id": "r", "locator": "report.json", "run_started_at": "2000-01-01T00:00:00Z",
                              "validator": {"command": [sys.executable, "-c",
                                                        "import sys, json; json.load(open(sys.argv[-1]))"]}}),
                  encoding="utf-8")
    assert main(["receipt", str(ok), "--json"]) == 0  # the validator got the artifact as its last argument
    out, err = capsys.readouterr()
    assert json.loads(out)["receipt"]["status"] == "verified" and err == ""


def test_receipt_help_says_how_a_validator_gets_the_artifact(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["receipt", "--help"])
    text = capsys.readouterr().err  # a completion hook's help is on stderr (its stdout holds a receipt)
    assert "LAST ARGUMENT" in text and "settings.json" in text and "contract error" in text
    # its streams are /dev/null, as the README says and tests/cli/test_commands_receipt.py checks (stdin reads end of
    # file at once): the help said "closed", which a validator that prints or reads stdin would take literally
    assert "stdin/stdout/stderr on /dev/null" in text and "closed" not in text


@pytest.mark.parametrize("version", ['version = "desk-1"', "pass"])
def test_a_second_run_says_why_nothing_came_from_the_cache(make_suite, tmp_path: Path, version: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A newcomer's desk without ``version`` ran its fault replays live on every run, and the second
    run said ``44 live, 0 from the cache`` with no word of why (README section 3: a system without ``version`` is
    never cached). The run command and the notebook's summary now say so; a desk with a version is cached."""
    cases = [{"id": f"c{n}", "input": {"slot": f"s{n}"}, "initial_state": {"bookings": {}},
              "expected": {"answer": "booked", "state": {"bookings": {f"s{n}": "ann"}}}} for n in range(3)]
    folder = make_suite(cases, system="sysmod:Desk", system_code=booking_desk(version),
                        evaluators=[{"type": "answer_matches"},
                                    {"type": "fault_recovery", "tool": "book", "fault": "error"}])
    note = "none from the cache: the system has no `version`, and is never cached without one"
    for out in ("first", "second"):
        main(["run", str(folder), "--out", str(tmp_path / out), "--quiet"])
        lines, _ = _out(capsys)
    summary = op.load_run(tmp_path / "second").replay_summary()
    if version == "pass":
        assert lines[0].endswith("; replay runs (control + faulted): 6 live, 0 from the cache")
        assert f"  ({note})" in lines
        assert summary == f"6 live, 0 from the cache; {note}"
    else:
        assert lines[0].endswith("; replay runs (control + faulted): 0 live, 6 from the cache")
        assert f"  ({note})" not in lines and summary == "0 live, 6 from the cache"


def test_both_reasons_nothing_came_from_the_cache_are_wrapped_under_the_summary(  # type: ignore[no-untyped-def]
        make_suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A system with neither ``version`` nor a code fingerprint (as a class typed in a notebook
    cell has none) gets the longer note naming both, wrapped as the command's other notes are: each
    line indented under the summary and within 100 columns (``run`` printed it as one line of 136)."""
    import oloproof_nb._run.systems as systems

    monkeypatch.setattr(systems, "code_fingerprint", lambda *args, **kwargs: None)  # a code with no fingerprint
    monkeypatch.setenv("COLUMNS", "80")  # narrower than the least width: 100
    cases = [{"id": f"c{n}", "input": {"slot": f"s{n}"}, "initial_state": {"bookings": {}},
              "expected": {"answer": "booked", "state": {"bookings": {f"s{n}": "ann"}}}} for n in range(3)]
    folder = make_suite(cases, system="sysmod:Desk", system_code=booking_desk("pass"),
                        evaluators=[{"type": "answer_matches"},
                                    {"type": "fault_recovery", "tool": "book", "fault": "error"}])
    for out in ("first", "second"):
        main(["run", str(folder), "--out", str(tmp_path / out), "--quiet"])
        lines, _ = _out(capsys)
    note = ("(none from the cache: the system has no `version` and its code no fingerprint (define fingerprint()), and "
            "is never cached without both)")
    first = next(i for i, line in enumerate(lines) if line.startswith("  (none from the cache"))
    last = next(i for i, line in enumerate(lines) if i >= first and line.endswith("without both)"))
    assert " ".join(line.strip() for line in lines[first:last + 1]) == note and last > first
    assert all(line.startswith("  ") and not line.startswith("   ") and len(line) <= 100
               for line in lines[first:last + 1])


#: Each path the command line takes, given empty: what ``--out "$DIR"`` passes when DIR is unset. Python
#: reads an empty path as the current folder, so before, `gate ""` gated the suite the shell stood in (exit 0 on its
#: latest run), `run SUITE --out ""` and `init --example X ""` wrote into the current folder, and `--baseline ""` was
#: dropped without a word (its columns missing); the others were refused naming `.`, not the argument. (`receipt ""`
#: is a contract error: tests/cli/test_commands_receipt.py.)
EMPTY_PATHS = [
    (["run", "", "--quiet"], "suite"),
    (["run", "{suite}", "--out", "", "--quiet"], "--out"),
    (["gate", ""], "run_dir"),
    (["gate", "{run}", "--baseline", ""], "--baseline"),
    (["gate", "{run}", "--release", ""], "--release"),
    (["report", "{run}", "--out", ""], "--out"),
    (["compare", "", "{run}"], "base_run"),
    (["compare", "{run}", ""], "candidate_run"),
    (["compare", "{run}", "{run}", "--release", ""], "--release"),  # each path option is refused
    (["report", "{run}", "--out", "r.md", "--release", ""], "--release"),
    (["report", "{run}", "--out", "r.md", "--baseline", ""], "--baseline"),
    (["init", "--example", "false-success", ""], "dest"),
]


@pytest.mark.parametrize(("argv", "named"), EMPTY_PATHS, ids=[" ".join(a) for a, _ in EMPTY_PATHS])
def test_an_empty_path_is_refused_naming_its_argument_and_writes_nothing(
        make_suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        argv: list[str], named: str) -> None:
    folder = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)
    run = op.run(folder, out=tmp_path / "run", progress=False).directory
    where = folder if argv[0] in ("run", "gate", "compare") and "{suite}" not in argv else tmp_path / "empty"
    where.mkdir(exist_ok=True)
    before = sorted(p.name for p in where.iterdir())
    monkeypatch.chdir(where)
    capsys.readouterr()
    try:  # a usage error leaves through argparse (SystemExit) before any command starts
        code = main([a.format(suite=folder, run=run) for a in argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [f"oloproof: error: argument {named}: an empty path names no file or folder (an unset "
                                f"shell variable?); give a path (see `oloproof {argv[0]} --help`)"]
    assert sorted(p.name for p in where.iterdir()) == before


#: An option that takes a value, given twice: argparse kept the last without a word, so
#: `oloproof gate RUN --release strict.yaml $EXTRA` with EXTRA holding `--release lax.yaml` gated on the lax file.
TWICE = [
    (["gate", "{run}", "--release", "{strict}", "--release", "{lax}"], "--release", 0),
    (["gate", "{run}", "--release={strict}", "--rel", "{lax}"], "--release", 0),  # other spellings of it too
    (["report", "{run}", "--out", "{tmp}/a.md", "--out", "{tmp}/b.md"], "--out", None),
    (["compare", "{run}", "{run2}", "--release", "{strict}", "--release", "{lax}"], "--release", None),
    (["run", "{suite}", "--quiet", "--out", "{tmp}/o1", "--out", "{tmp}/o2"], "--out", None),
    (["run", "{suite}", "--quiet", "--out", "{tmp}/o3", "--epochs", "2", "--epochs", "1"], "--epochs", None),
    (["init", "--example", "stateful-agent", "--example", "false-success", "{tmp}/i"], "--example", None),
]


@pytest.mark.parametrize(("argv", "named", "last"), TWICE, ids=[" ".join(a[:1] + [n]) + str(i)
                                                                 for i, (a, n, _) in enumerate(TWICE)])
def test_an_option_given_twice_is_refused_not_the_last_one_kept(
        make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], named: str,
        last: int | None) -> None:
    folder = make_suite(CASES, evaluators=EVALUATORS, release=RELEASE)
    run = op.run(folder, out=tmp_path / "run", progress=False).directory
    run2 = op.run(folder, out=tmp_path / "run2", progress=False).directory
    strict, lax = tmp_path / "strict.yaml", tmp_path / "lax.yaml"
    strict.write_text("criteria: {answer_matches: 0.99}\n", encoding="utf-8")  # 10 of 10: lower bound 0.69, FAIL
    lax.write_text("criteria: {answer_matches: 0.5}\n", encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    given = [a.format(suite=folder, run=run, run2=run2, strict=strict, lax=lax, tmp=tmp_path) for a in argv]
    if last is not None:  # the one kept before: PASS on the lax file alone
        assert main([given[0], given[1], "--release", str(lax)]) == last
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(given)
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"oloproof: error: argument {named}: given twice; give it once (see `oloproof {argv[0]} --help`)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before
