"""Where a command finds a run: a suite folder or a run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._run import locate
from oloproof_nb.errors import RunDirError


def test_a_folder_that_cannot_be_read_is_no_suite_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run folder without read permission raised PermissionError from the suite-folder probe, and
    ``oloproof gate`` blamed ``<run>/oloproof.yaml``, a file that is not there. The probe says "not a suite
    folder", and loading the folder as a run names what cannot be read."""
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "oloproof.yaml").write_text("name: x\n", encoding="utf-8")
    assert locate.is_suite_folder(tmp_path / "suite")
    assert not locate.is_suite_folder(tmp_path)
    real = Path.is_file

    def denied(self: Path) -> bool:
        if self.parent.name == "locked":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_file", denied)
    assert not locate.is_suite_folder(tmp_path / "locked")


def test_the_latest_run_is_named_with_whether_it_finished_and_quoted_for_a_shell(
        make_suite: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint of an error that wants the run to resume: the suite's latest run, stopped after its first case here
    (unfinished), as out='…' for Python and as a shell word for the command line (the folder's name has a space);
    nothing when there is no run, or when the runs cannot be listed (the error is given without it, no traceback)."""
    import oloproof_nb as op

    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]
    folder = make_suite(cases, folder="my suite")
    assert locate.latest_hint(folder) == ""

    def stop_after_one(done: int, total: int) -> None:
        if done >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(op.load_suite(folder), progress=stop_after_one)
    [latest] = (folder / "runs").iterdir()
    assert locate.latest_hint(folder) == f"; the suite's latest run is out={str(latest)!r} (unfinished)"
    assert locate.latest_hint(folder, flag=True) == f"; the suite's latest run is --out '{latest}' (unfinished)"
    real = Path.iterdir

    def denied(self: Path) -> Any:
        if self.name == "runs":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", denied)
    assert locate.latest_hint(folder) == ""


def _run_folder(runs: Path, name: str, started_at: str | None = None) -> Path:
    """A run folder whose manifest says it started at ``started_at``; None: a torn manifest (cannot be read)."""
    folder = runs / name
    folder.mkdir(parents=True)
    fields = {"suite": "s", "run_id": name, "started_at": started_at, "oloproof_nb": "0", "n_cases": 1}
    manifest = json.dumps(fields) if started_at is not None else '{"suite": "s", "run_id'
    (folder / "manifest.json").write_text(manifest, encoding="utf-8")
    return folder


def test_a_run_directory_holding_a_copy_of_oloproof_yaml_is_a_run_directory(tmp_path: Path) -> None:
    """A run directory someone keeps the suite's oloproof.yaml in is still the run (its manifest.json says so):
    `oloproof gate DIR` gates that run, not the latest run of a suite folder that DIR would be."""
    run = _run_folder(tmp_path, "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    (run / "oloproof.yaml").write_text("name: x\n", encoding="utf-8")
    assert not locate.is_suite_folder(run)
    (run / "manifest.json").unlink()  # the manifest alone makes it a run: without it, the folder is a suite's
    assert locate.is_suite_folder(run)


def test_what_else_runs_holds_is_passed_over(tmp_path: Path) -> None:
    """A folder without manifest.json (notes, an export) and a file in runs/ are no runs: neither refuses."""
    runs = tmp_path / "runs"
    latest = _run_folder(runs, "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    (runs / "notes").mkdir()
    (runs / "notes" / "todo.txt").write_text("compare with last week\n", encoding="utf-8")
    (runs / ".DS_Store").write_bytes(b"\0")
    assert locate.latest_run_dir(tmp_path) == latest


def test_an_unreadable_run_its_id_dates_before_the_latest_is_passed_over_not_before_the_first(tmp_path: Path) -> None:
    """Runs of 10:00 and 12:00 (readable) and a torn one of 11:00: the 12:00 run is the latest, whatever the 11:00
    one says, so the 12:00 run is returned; a torn one of 12:00 (the same second) may be later and refuses."""
    runs = tmp_path / "runs"
    _run_folder(runs, "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    latest = _run_folder(runs, "20261201T120000Z-cccccc", "2026-12-01T12:00:00.500000Z")
    _run_folder(runs, "20261201T110000Z-bbbbbb")
    assert locate.latest_run_dir(tmp_path) == latest
    _run_folder(runs, "20261201T120000Z-dddddd")  # started in the same second as the latest readable run
    with pytest.raises(RunDirError, match="cannot tell which run is the latest"):
        locate.latest_run_dir(tmp_path)


def test_a_suite_whose_only_run_cannot_be_read_gets_one_clear_error(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    torn = _run_folder(runs, "20261201T110000Z-bbbbbb")
    with pytest.raises(RunDirError, match=rf"^{tmp_path}: cannot tell which run is the latest, as one run folder "
                                          rf"cannot be read \({torn / 'manifest.json'}: not valid JSON"):
        locate.latest_run_dir(tmp_path)


@pytest.mark.parametrize("kind", ["folder", "fifo", "dangling link", "/dev/null"])
def test_a_manifest_that_is_no_regular_file_is_a_run_that_cannot_be_read_not_no_run(tmp_path: Path,
                                                                                    kind: str) -> None:
    """A run folder whose manifest.json is a folder, a named pipe, a link to nothing or to a device (a copy, an
    unpacked artifact) may hold the latest run, as a torn manifest does: `oloproof gate SUITE` refuses, naming it.
    Before, ``is_file()`` passed it over as "no run", and the run before it was gated (a PASS of an older run where
    the latest may BLOCK). Dated by its run id before the latest readable run, it is passed over."""
    import os

    runs = tmp_path / "runs"
    older = _run_folder(runs, "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    for name in ("20261201T120000Z-cccccc", "20261201T090000Z-bbbbbb"):  # after the readable run, and before it
        manifest = runs / name / "manifest.json"
        manifest.parent.mkdir()
        if kind == "folder":
            manifest.mkdir()
        elif kind == "fifo":
            os.mkfifo(manifest)
        else:
            manifest.symlink_to(tmp_path / "gone.json" if kind == "dangling link" else Path(kind))
        if name.startswith("20261201T12"):
            with pytest.raises(RunDirError, match=rf"^{tmp_path}: cannot tell which run is the latest, as one run "
                                                  rf"folder cannot be read \({runs / name}"):
                locate.latest_run_dir(tmp_path)
            manifest.rmdir() if kind == "folder" else manifest.unlink()
            manifest.parent.rmdir()
        else:
            assert locate.latest_run_dir(tmp_path) == older


@pytest.mark.parametrize("started_at", ["not a time", "2026-12-01T12:00:00"])  # no zone: no instant to compare
def test_a_start_time_that_is_no_utc_instant_says_nothing_of_which_run_is_later(tmp_path: Path,
                                                                                 started_at: str) -> None:
    """A manifest edited by hand (or written by another tool) whose started_at is no time, or has no time zone:
    alone it is the latest run; beside a run that cannot be read nothing dates that one before it, so it refuses
    in one line, never a ValueError or TypeError."""
    runs = tmp_path / "runs"
    only = _run_folder(runs, "20261201T120000Z-cccccc", started_at)
    assert locate.latest_run_dir(tmp_path) == only
    _run_folder(runs, "20200101T000000Z-aaaaaa")  # dated long before: passed over only when the latest is known
    with pytest.raises(RunDirError, match="cannot tell which run is the latest"):
        locate.latest_run_dir(tmp_path)


def test_a_suite_folder_or_its_runs_given_as_a_run_names_the_run_to_give(tmp_path: Path) -> None:
    """Round 3 (a new user's first hour): ``op.load_run("demo")`` after ``oloproof run demo`` said only "not a run
    directory (no manifest.json)". The hint names the folder's runs and the latest (by start time, not by name:
    the 09:00 run is named ``zz…`` so that the name order would pick it), never picks one; a folder that is
    neither a suite folder nor holds runs gets no hint."""
    suite = tmp_path / "demo"
    suite.mkdir()
    (suite / "oloproof.yaml").write_text("name: x\n", encoding="utf-8")
    runs = suite / "runs"
    assert locate.runs_hint(suite) == f"; it is a suite folder with no run in {runs} yet: run it first"
    assert locate.runs_hint(runs) == ""  # not there yet: nothing to name
    first = _run_folder(runs, "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    assert locate.runs_hint(suite) == f"; it is a suite folder: give its run, {str(first)!r}"
    assert locate.runs_hint(runs) == f"; it holds one run: give its run, {str(first)!r}"
    latest = _run_folder(runs, "20261201T110000Z-bbbbbb", "2026-12-01T11:00:00.000000Z")
    _run_folder(runs, "zz-copied-by-hand", "2026-12-01T09:00:00.000000Z")
    (runs / "notes").mkdir()  # no manifest.json: not counted
    assert locate.runs_hint(suite) == (f"; it is a suite folder: give one of its 3 runs in {runs}, "
                                       f"the latest is {str(latest)!r}")
    assert locate.runs_hint(runs) == f"; it holds 3 runs: give one of them, the latest is {str(latest)!r}"
    assert locate.runs_hint(runs / "notes") == locate.runs_hint(tmp_path / "missing") == ""
    _run_folder(runs, "20261201T120000Z-cccccc")  # torn, and may be the latest: none is named
    assert locate.runs_hint(suite) == f"; it holds 4 run directories in {runs}: give one of them"


def test_a_suite_folder_given_as_a_baseline_names_its_baselines_not_its_runs(tmp_path: Path) -> None:
    """`oloproof gate RUN --baseline demo` said "it is a suite folder: give its run, 'demo/runs/…'", the
    agent's run, which the baseline check then refuses ("not a do-nothing baseline"). Where a baseline is wanted
    the hint names the suite's baselines/ (the latest by start time), or how to make one."""
    suite = tmp_path / "demo"
    suite.mkdir()
    (suite / "oloproof.yaml").write_text("name: x\n", encoding="utf-8")
    _run_folder(suite / "runs", "20261201T120000Z-rrrrrr", "2026-12-01T12:00:00.000000Z")
    baselines = suite / "baselines"
    assert locate.runs_hint(suite, "baselines") == (f"; it is a suite folder with no baseline in {baselines} yet: "
                                                    f"make one (oloproof run --baseline {suite})")
    first = _run_folder(baselines, "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    assert locate.runs_hint(suite, "baselines") == f"; it is a suite folder: give its baseline, {str(first)!r}"
    latest = _run_folder(baselines, "20261201T110000Z-bbbbbb", "2026-12-01T11:00:00.000000Z")
    assert locate.runs_hint(suite, "baselines") == (f"; it is a suite folder: give one of its 2 baselines in "
                                                    f"{baselines}, the latest is {str(latest)!r}")
    assert locate.runs_hint(baselines, "baselines") == locate.runs_hint(baselines)  # a folder of runs: as before
    assert "runs" in locate.runs_hint(suite)  # a run wanted: the suite's runs, as before


def test_a_run_folder_that_cannot_be_read_at_all_is_told_by_its_run_id_as_a_torn_one(tmp_path: Path) -> None:
    """A run folder without read permission (mode 000) beside the latest run: its manifest could not even be
    probed (``Path.is_file`` raises PermissionError on Python 3.10 to 3.13), and ``oloproof gate SUITE`` ended in
    "runs/<it>/manifest.json: Permission denied", whatever its date. Now it is a run that cannot be read: passed
    over when its run id dates it before the latest readable run, else the latest cannot be told."""
    import sys

    from _processes import bound_by_modes

    runs = tmp_path / "runs"
    latest = _run_folder(runs, "20261201T120000Z-cccccc", "2026-12-01T12:00:00.500000Z")
    script = ("from oloproof_nb._run import locate\nfrom oloproof_nb.errors import RunDirError\n"
              f"try:\n    print(locate.latest_run_dir({str(tmp_path)!r}))\n"
              "except RunDirError as exc:\n    print('RunDirError: ' + str(exc))\n")
    for name, said in [("20261201T110000Z-bbbbbb", f"{latest}\n"),
                       ("20261201T130000Z-dddddd", f"RunDirError: {tmp_path}: cannot tell which run is the latest, as "
                                                   f"one run folder cannot be read ({runs / '20261201T130000Z-dddddd'}"
                                                   ": cannot read this folder (Permission denied)); give the run "
                                                   "directory instead\n")]:
        locked = _run_folder(runs, name, "2026-12-01T00:00:00.000000Z")
        done = bound_by_modes([sys.executable, "-c", script], locked, 0)
        assert done.stdout == said, done.stderr
        for child in locked.iterdir():
            child.unlink()
        locked.rmdir()


def test_a_run_made_after_the_clock_was_set_back_is_the_latest_not_the_run_before(
        make_suite: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run at 12:00 that passed, then the clock set back an hour (an NTP correction), then a run at
    11:00 that blocked: ``oloproof gate SUITE`` picked the 12:00 run by its start time and said PASS, exit 0, about
    the older run. The run made second records that it follows the first and is the latest; one made later still
    with the clock behind follows it in turn; once the clock passes the first run's start, start times decide
    again."""
    from datetime import datetime, timedelta, timezone

    import oloproof_nb as op
    from oloproof_nb._run import runner
    from oloproof_nb._run.store import read_manifest

    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(2)]
    suite = op.load_suite(make_suite(cases))
    noon = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
    made = []
    for clock in (noon, noon - timedelta(hours=1), noon - timedelta(minutes=30), noon + timedelta(minutes=1)):
        monkeypatch.setattr(runner, "utc_now", lambda clock=clock: clock)
        made.append(Path(op.run(suite, progress=False).directory))
        assert locate.latest_run_dir(suite.root) == made[-1]
    assert [read_manifest(run).follows for run in made] == [None, made[0].name, made[1].name, None]


def test_a_run_given_out_in_runs_through_a_symbolic_link_records_what_it_follows(
        make_suite: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``out=`` naming the suite's ``runs/`` through a symbolic link (macOS's ``/tmp``, a linked work
    folder) recorded no ``follows`` (the folder was compared unresolved with the suite's resolved root), so the run
    made after the clock was set back lost to the run before in ``oloproof gate SUITE``."""
    from datetime import datetime, timedelta, timezone

    import oloproof_nb as op
    from oloproof_nb._run import runner
    from oloproof_nb._run.store import read_manifest

    cases = [{"id": "c0", "input": {"answer": "ok", "n": 0}, "expected": {"answer": "ok"}}]
    suite = op.load_suite(make_suite(cases))
    link = tmp_path / "linked-suite"
    link.symlink_to(suite.root, target_is_directory=True)
    noon = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
    monkeypatch.setattr(runner, "utc_now", lambda: noon)
    first = Path(op.run(suite, progress=False).directory)
    monkeypatch.setattr(runner, "utc_now", lambda: noon - timedelta(hours=1))
    second = Path(op.run(suite, out=link / "runs" / "behind", progress=False).directory)
    assert read_manifest(second).follows == first.name
    assert locate.latest_run_dir(suite.root).name == "behind"


def test_a_run_that_follows_another_is_later_and_dates_the_unreadable_ones_from_its_own_start(tmp_path: Path) -> None:
    """The rule by itself: the 11:00 run follows the 12:00 run, so it is the latest, and a torn run dated 11:30 (made
    after it, the clock still behind) may be later than it: the latest cannot be told. A run that follows a run
    not in the folder, or follows itself, changes nothing."""
    runs = tmp_path / "runs"
    _run_folder(runs, "20261201T120000Z-aaaaaa", "2026-12-01T12:00:00.000000Z")
    behind = _run_folder(runs, "20261201T110000Z-bbbbbb", "2026-12-01T11:00:00.000000Z")
    manifest = json.loads((behind / "manifest.json").read_text(encoding="utf-8"))
    (behind / "manifest.json").write_text(json.dumps({**manifest, "follows": "20261201T120000Z-aaaaaa"}),
                                          encoding="utf-8")
    assert locate.latest_run_dir(tmp_path) == behind
    _run_folder(runs, "20261201T113000Z-cccccc")  # torn
    with pytest.raises(RunDirError, match="cannot tell which run is the latest"):
        locate.latest_run_dir(tmp_path)
    other = tmp_path / "other" / "runs"
    latest = _run_folder(other, "20261201T120000Z-aaaaaa", "2026-12-01T12:00:00.000000Z")
    for name, follows in [("20261201T100000Z-dddddd", "gone"), ("20261201T110000Z-eeeeee", "20261201T110000Z-eeeeee")]:
        folder = _run_folder(other, name, f"2026-12-01T{name[9:11]}:00:00.000000Z")
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        manifest["follows"] = follows
        (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert locate.latest_run_dir(tmp_path / "other") == latest


def test_a_run_made_at_the_same_instant_as_the_latest_follows_it_one_a_microsecond_later_does_not(
        tmp_path: Path) -> None:
    """The boundary: two runs started within one tick of a coarse clock have equal start times, and their names
    (a random suffix) ordered them by chance; the one made second follows the first. A microsecond later, start
    times decide alone. A folder that is not there follows nothing."""
    from datetime import datetime, timedelta, timezone

    runs = tmp_path / "runs"
    _run_folder(runs, "20261201T120000Z-ffffff", "2026-12-01T12:00:00.000000Z")
    noon = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
    assert locate.follows(runs, noon) == "20261201T120000Z-ffffff"
    assert locate.follows(runs, noon + timedelta(microseconds=1)) is None
    assert locate.follows(tmp_path / "missing", noon) is None


# -- the follows chain at its edges ---------------------------------------------------------------------------


def _following(runs: Path, name: str, started_at: str, follows: str) -> Path:
    folder = _run_folder(runs, name, started_at)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    (folder / "manifest.json").write_text(json.dumps({**manifest, "follows": follows}), encoding="utf-8")
    return folder


def test_of_two_runs_that_follow_one_run_the_later_started_is_the_latest(tmp_path: Path) -> None:
    """Two runs made while the clock was behind the 12:00 run, each recording that it follows it (made at once, by
    two processes): the one that started later of the two (11:30, then 11:00 by hand) is the latest, whichever
    folder name sorts first."""
    runs = tmp_path / "runs"
    _run_folder(runs, "20261201T120000Z-aaaaaa", "2026-12-01T12:00:00.000000Z")
    later = _following(runs, "20261201T113000Z-bbbbbb", "2026-12-01T11:30:00.000000Z", "20261201T120000Z-aaaaaa")
    _following(runs, "20261201T110000Z-cccccc", "2026-12-01T11:00:00.000000Z", "20261201T120000Z-aaaaaa")
    _following(runs, "20261201T100000Z-dddddd", "2026-12-01T10:00:00.000000Z", "20261201T120000Z-aaaaaa")
    assert locate.latest_run_dir(tmp_path) == later


def test_two_runs_that_follow_each_other_end_the_walk_at_the_run_reached_second(tmp_path: Path) -> None:
    """Manifests that follow each other (edited, or copied between two folders) cannot both be later: the walk
    starts at the later start time (12:00), takes the run that follows it (11:00) and stops there, as every run
    is visited once; it never loops back to the 12:00 run."""
    runs = tmp_path / "runs"
    _following(runs, "20261201T120000Z-aaaaaa", "2026-12-01T12:00:00.000000Z", "20261201T110000Z-bbbbbb")
    second = _following(runs, "20261201T110000Z-bbbbbb", "2026-12-01T11:00:00.000000Z", "20261201T120000Z-aaaaaa")
    assert locate.latest_run_dir(tmp_path) == second


def test_a_folder_of_runs_that_cannot_be_listed_is_followed_by_nothing(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``follows`` is asked while a run is created: a runs folder whose listing is refused (permission, I/O) does
    not stop the run; the run records that it follows nothing."""
    from datetime import datetime, timezone

    runs = tmp_path / "runs"
    _run_folder(runs, "20261201T120000Z-aaaaaa", "2026-12-01T12:00:00.000000Z")
    noon = datetime(2026, 12, 1, 11, tzinfo=timezone.utc)
    assert locate.follows(runs, noon) == "20261201T120000Z-aaaaaa"
    real = Path.iterdir

    def refused(self: Path) -> Any:
        if self == runs:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", refused)
    assert locate.follows(runs, noon) is None


def test_a_run_written_outside_the_suite_folder_follows_nothing(make_suite: Any, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a folder of the suite's own runs (runs/, baselines/) is ordered by start time for ``oloproof gate
    SUITE``; a run given ``out`` elsewhere, beside a run that started later, records that it follows nothing. In
    runs/, the run it follows is named by its run id (from its manifest), whatever its folder is called."""
    from datetime import datetime, timezone

    import oloproof_nb as op
    from oloproof_nb._run import runner
    from oloproof_nb._run.store import read_manifest

    suite = op.load_suite(make_suite([{"id": "c0", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]))
    elsewhere = tmp_path / "elsewhere"
    _run_folder(elsewhere, "20261201T120000Z-aaaaaa", "2026-12-01T12:00:00.000000Z")
    monkeypatch.setattr(runner, "utc_now", lambda: datetime(2026, 12, 1, 11, tzinfo=timezone.utc))
    run = op.run(suite, out=elsewhere / "mine", progress=False)
    assert read_manifest(Path(run.directory)).follows is None
    inside = op.run(suite, out=suite.root / "runs" / "mine", progress=False)  # the same clock, in runs/
    assert read_manifest(Path(inside.directory)).follows is None  # runs/ holds no later run
    copied = _run_folder(suite.root / "runs", "copied", "2026-12-01T12:00:00.000000Z")  # a folder renamed
    manifest = json.loads((copied / "manifest.json").read_text(encoding="utf-8"))
    (copied / "manifest.json").write_text(json.dumps({**manifest, "run_id": "20261201T120000Z-aaaaaa"}),
                                          encoding="utf-8")
    again = op.run(suite, out=suite.root / "runs" / "again", progress=False)
    assert read_manifest(Path(again.directory)).follows == "20261201T120000Z-aaaaaa"  # a run id, not a folder name
    assert locate.latest_run_dir(suite.root) == Path(again.directory)


def test_a_latest_run_of_another_suite_is_refused_naming_both_suites(tmp_path: Path) -> None:
    """A link (or a copy) in a suite's runs/ to a run of another suite that started later was taken as
    the suite's latest run: ``oloproof gate SUITE`` gated the other suite's run, its drift warnings compared it with
    this suite's files, and no line said whose run it was. It is refused in one line naming both suites (as
    ``--resume`` refuses a run of another suite); an older one is passed over as any run that is not the latest."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "oloproof.yaml").write_text("name: s\nsystem: desk:Desk\n", encoding="utf-8")
    own = _run_folder(suite / "runs", "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    other = _run_folder(tmp_path / "other" / "runs", "20261201T120000Z-bbbbbb", "2026-12-01T12:00:00.000000Z")
    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    (other / "manifest.json").write_text(json.dumps({**manifest, "suite": "other"}), encoding="utf-8")
    older = _run_folder(tmp_path / "older" / "runs", "20261201T090000Z-cccccc", "2026-12-01T09:00:00.000000Z")
    (older / "manifest.json").write_text(json.dumps({**manifest, "run_id": older.name, "suite": "other",
                                                     "started_at": "2026-12-01T09:00:00.000000Z"}), encoding="utf-8")
    (suite / "runs" / older.name).symlink_to(older)
    assert locate.latest_run_dir(suite) == own  # an older run of another suite is not the latest: nothing said
    (suite / "runs" / "latest").symlink_to(other)
    with pytest.raises(RunDirError) as caught:
        locate.latest_run_dir(suite)
    assert str(caught.value) == (f"{suite / 'runs' / 'latest'}: the latest run in {suite / 'runs'} is a run of suite "
                                 f"'other', not of this suite 's' ({suite / 'oloproof.yaml'}); give the run directory "
                                 f"you mean, or take that one out of {suite / 'runs'}")
    renamed = {**manifest, "suite": "old-name", "suite_config": {"root": str(suite)}}  # made here, renamed since
    (other / "manifest.json").write_text(json.dumps(renamed), encoding="utf-8")
    assert locate.latest_run_dir(suite) == suite / "runs" / "latest"
    # made in a folder that holds another suite: refused; in one that holds none (this suite, moved and renamed
    # since, as the gate's suite_folder reads it): the latest run
    elsewhere = tmp_path / "other"
    made = {**manifest, "suite": "old-name", "suite_config": {"root": str(elsewhere)}}
    (other / "manifest.json").write_text(json.dumps(made), encoding="utf-8")
    assert locate.latest_run_dir(suite) == suite / "runs" / "latest"
    (elsewhere / "oloproof.yaml").write_text("name: old-name\nsystem: desk:Desk\n", encoding="utf-8")
    with pytest.raises(RunDirError, match="is a run of suite 'old-name', not of this suite 's'"):
        locate.latest_run_dir(suite)


def test_a_latest_run_is_not_refused_as_another_suite_s_while_the_suite_file_names_no_suite(tmp_path: Path) -> None:
    """The refusal of another suite's latest run (the test above) compares the names the manifest and
    oloproof.yaml give; an oloproof.yaml that gives none (being edited: no ``name`` yet, or not a text) has nothing
    to compare, and the latest run is returned as before."""
    suite = tmp_path / "suite"
    suite.mkdir()
    latest = _run_folder(suite / "runs", "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    for text in ("system: desk:Desk\n", "name: [1, 2]\nsystem: desk:Desk\n"):
        (suite / "oloproof.yaml").write_text(text, encoding="utf-8")
        assert locate.latest_run_dir(suite) == latest
    (suite / "oloproof.yaml").write_text("name: t\nsystem: desk:Desk\n", encoding="utf-8")  # a name: compared
    with pytest.raises(RunDirError, match="is a run of suite 's', not of this suite 't'"):
        locate.latest_run_dir(suite)


def test_the_commands_a_hint_gives_are_shell_words(make_suite: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command a hint tells the user to run takes the folder as one shell word: quoted (a space), and a
    relative name that starts with '-' as ``./-s`` (given as ``-s``, ``oloproof run -s`` and ``--out -s/runs/…``
    read it as an option). Before, ``oloproof run my suite`` ran two words and ``--out -s/runs/…`` was refused."""
    import oloproof_nb as op

    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]
    dashed = make_suite(cases, folder="-s")
    make_suite(cases, folder="my suite")
    monkeypatch.chdir(dashed.parent)
    for given, word in ((Path("-s"), "./-s"), (Path("my suite"), "'my suite'")):
        with pytest.raises(RunDirError, match=f"run it first \\(oloproof run {word}\\) or give a run directory"):
            locate.latest_run_dir(given)
        assert locate.runs_hint(given, "baselines").endswith(f"make one (oloproof run --baseline {word})")

    def stop_after_one(done: int, total: int) -> None:
        if done >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(op.load_suite(dashed), progress=stop_after_one)
    [latest] = (dashed / "runs").iterdir()
    hint = locate.latest_hint(Path("-s"), flag=True)
    assert hint == f"; the suite's latest run is --out ./-s/runs/{latest.name} (unfinished)"


def test_the_hint_writes_a_folder_named_tilde_so_that_it_cannot_read_as_the_home_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite in a folder named ``~`` of the current folder, given as ``~/demo`` or ``./~/demo``: every path the
    hint names is written ``./~/…``; ``~/demo/runs`` named the home folder's, and a command quoting it was refused."""
    monkeypatch.chdir(tmp_path)
    suite = Path("~") / "demo"
    suite.mkdir(parents=True)
    (suite / "oloproof.yaml").write_text("name: x\n", encoding="utf-8")
    runs = "./~/demo/runs"
    assert locate.runs_hint(suite) == f"; it is a suite folder with no run in {runs} yet: run it first"
    assert locate.runs_hint(suite, within="baselines") == (
        "; it is a suite folder with no baseline in ./~/demo/baselines yet: make one (oloproof run --baseline "
        "'./~/demo')")
    _run_folder(suite / "runs", "20261201T100000Z-aaaaaa", "2026-12-01T10:00:00.000000Z")
    assert locate.runs_hint(suite) == f"; it is a suite folder: give its run, '{runs}/20261201T100000Z-aaaaaa'"
    _run_folder(suite / "runs", "20261201T110000Z-bbbbbb", "2026-12-01T11:00:00.000000Z")
    assert locate.runs_hint(suite) == (f"; it is a suite folder: give one of its 2 runs in {runs}, the latest is "
                                       f"'{runs}/20261201T110000Z-bbbbbb'")
    _run_folder(suite / "runs", "20261201T120000Z-cccccc")  # torn, and may be the latest: none is named
    assert locate.runs_hint(suite) == f"; it holds 3 run directories in {runs}: give one of them"
