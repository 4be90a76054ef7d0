"""The ``oloproof`` command: init, run, exit codes 0 / 1 / 2, and one-line errors for every bad input."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from _booking_desk import booking_desk
from _frame_checks import rename_run
from conftest import SCRIPTED_SYSTEM

from oloproof_nb.cli import main

PERFECT_CASES = [
    {"id": f"p{i:02d}", "input": {"answer": "done", "writes": [{"path": ["acct", "n"], "value": i}]},
     "initial_state": {"acct": {"n": 0}, "other": {"k": i}},
     "expected": {"answer": "done", "state": {"acct": {"n": i}}}}
    for i in range(10)
]
EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches"},
              {"type": "state_unchanged", "criterion": "other_kept", "paths": ["other"]}]
# 10 of 10 pass: the exact (Clopper-Pearson) lower bound is 0.025 ** (1 / 10) = 0.6915 >= 0.5 for each criterion
RELEASE = {"confidence": 0.95, "criteria": {"answer_matches": 0.5, "state_matches": 0.5, "other_kept": 0.5}}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def _table_rows(text: str) -> dict[str, list[str]]:
    """Rows of the printed table by their first cell (criterion)."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("oloproof: error: ")
    return lines[0]


# -- init --------------------------------------------------------------------------------------------------


def test_init_copies_a_runnable_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "demo"
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 0
    assert str(dest) in capsys.readouterr().out
    names = {p.name for p in dest.iterdir()}
    assert {"oloproof.yaml", "release.yaml", "cases.jsonl", "refund_desk.py"} <= names
    assert not any(p.name in ("runs", ".oloproof", "__pycache__") for p in dest.rglob("*"))
    config = yaml.safe_load((dest / "oloproof.yaml").read_text(encoding="utf-8"))
    for transform in (config.get("metamorphic") or {}).get("transforms", []):
        assert (dest / transform["validity_labels"]).is_file()  # label files come along
    # runnable: `oloproof run` on it gives an exit code of the gate (the example has two defects: 1)
    assert main(["run", str(dest), "--out", str(tmp_path / "out"), "--quiet"]) == 1


def test_init_default_destination(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--example", "stateful-agent"]) == 0
    assert (tmp_path / "stateful-agent" / "oloproof.yaml").is_file()
    # every file of the committed example, byte for byte, in ./stateful-agent (a partial or stale copy passed)
    committed = Path(__file__).resolve().parents[2] / "examples" / "stateful-agent"
    for name in ("README.md", "cases.jsonl", "checks.py", "oloproof.yaml", "refund_desk.py", "release.yaml"):
        assert (tmp_path / "stateful-agent" / name).read_bytes() == (committed / name).read_bytes(), name


def test_init_into_a_non_empty_destination_changes_nothing(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine\n", encoding="utf-8")
    (dest / "oloproof.yaml").write_text("name: mine\n", encoding="utf-8")
    before = _files(dest)
    assert main(["init", "--example", "stateful-agent", str(dest)]) == 2
    assert str(dest) in _error_line(capsys)
    assert _files(dest) == before


def test_init_unknown_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--example", "nope", str(tmp_path / "x")]) == 2
    assert "stateful-agent" in _error_line(capsys)
    assert not (tmp_path / "x").exists()


# -- run ---------------------------------------------------------------------------------------------------


def test_run_exits_0_when_every_criterion_passes(make_suite, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(PERFECT_CASES, evaluators=EVALUATORS, release=RELEASE)
    out = tmp_path / "out"
    assert main(["run", str(folder), "--out", str(out)]) == 0
    rows = _table_rows(capsys.readouterr().out)
    for criterion in ("answer_matches", "state_matches", "other_kept"):
        assert criterion in rows and "10" in rows[criterion]  # 10 rows, 10 passed
    assert (out / "manifest.json").is_file()


@pytest.mark.parametrize("columns", [None, "250"])
def test_a_long_criterion_name_fits_a_wide_terminal_and_is_given_whole_on_a_narrow_one(
        make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        columns: str | None) -> None:
    """The table was cut to 100 columns even in a 250-column terminal, and a cut name whose reason only restates
    PASS appeared nowhere whole: now the table takes the terminal's width (``COLUMNS``), and on 100 columns each
    cut name is given whole under it."""
    name = "other_order_untouched_after_a_refund_that_the_payment_provider_times_out"  # 72 characters
    evaluators = [*EVALUATORS[:2], {**EVALUATORS[2], "criterion": name}]
    release = {"confidence": 0.95, "criteria": {"answer_matches": 0.5, "state_matches": 0.5, name: 0.5}}
    folder = make_suite(PERFECT_CASES, evaluators=evaluators, release=release)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)  # pytest's stdout is no terminal: 100 columns
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert main(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = _table_rows("\n".join(lines))
    if columns is None:
        assert max(len(line) for line in lines) <= 100
        cut = next(c for c in rows if c.endswith("…"))
        assert name.startswith(cut[:-1]) and f"{cut} = {name}" in " ".join(map(str.strip, lines))  # given whole
    else:
        assert name in rows and "10" in rows[name]  # the row holds the whole name
        assert not any(" = " + name in line for line in lines)
        assert 100 < max(len(line) for line in lines) <= 250


FAILING_SYSTEM = """
class Fails:
    version = "fails-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def run(self, input):
        if input["how"] == "key":
            raise KeyError("member")
        if input["how"] == "type":
            raise TypeError("act() takes 2 positional arguments but 3 were given")
        if input["how"] == "slow":
            import time

            time.sleep(3)
        return {"steps": [], "answer": "ok", "status": "completed"}
"""


def test_case_runs_that_ended_in_error_are_counted_and_explained_above_the_table(
        make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A system that raised in its cases got `miss 25` and `all_missing` on the terminal and nothing else: the
    messages were kept in run.cases.error, which only Python showed. A fault check of a tool no
    case called blamed the tool's name when the system had failed before any call."""
    hows = ["key"] * 3 + ["type"] + ["ok"] * 6  # by hand: 4 of 10 end in error, 3 of them by the KeyError
    cases = [{"id": f"c{i}", "input": {"how": how, "n": i}, "expected": {"answer": "ok"}}
             for i, how in enumerate(hows)]
    evaluators = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "lend", "fault": "error",
                                               "criterion": "recovers"}]
    folder = make_suite(cases, evaluators=evaluators, system="sysmod:Fails", system_code=FAILING_SYSTEM,
                        release={"criteria": {"answer_matches": 0.5}})
    assert main(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    start = lines.index("4 of 10 case runs ended in error: their verdicts are missing")
    assert lines[start + 1:start + 4] == ["  KeyError: 'member' (3 case runs, e.g. c0)",
                                          "  TypeError: act() takes 2 positional arguments but 3 were given (1 case "
                                          "run, e.g. c3)",
                                          '  in Python: run.cases["error"] has each; run.panel(case_id) shows a case']
    assert start < next(i for i, line in enumerate(lines) if line.startswith("| criterion"))  # above the table
    assert "no case called any tool (4 of 10 case runs ended in error or by timeout)" in err
    assert main(["gate", str(tmp_path / "out")]) == 1  # the stored run says so too
    assert "4 of 10 case runs ended in error: their verdicts are missing" in capsys.readouterr().out
    clean = make_suite([{**c, "input": {"how": "ok", "n": i}} for i, c in enumerate(cases)], evaluators=evaluators[:1],
                       system="sysmod:Fails", system_code=FAILING_SYSTEM, release={"criteria": {"answer_matches": 0.5}})
    assert main(["run", str(clean), "--out", str(tmp_path / "clean"), "--quiet"]) == 0
    assert "ended in error" not in capsys.readouterr().out


def test_missing_verdicts_of_case_runs_that_completed_are_explained_above_the_table(
        make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fault check whose control replays diverged showed `miss 3` and nothing else on a terminal:
    `control_replay_diverged` was in run.replays only. By hand: c1–c3 draw after the tool (unseeded), so 3 of the 4
    fault verdicts are missing; c0's replay is judged (it answers "no room" to the failed booking: an honest answer)."""
    cases = [{"id": f"c{n}", "input": {"slot": f"s{n}"}, "initial_state": {"bookings": {}},
              "expected": {"answer": "booked", "state": {"bookings": {f"s{n}": "ann"}}}} for n in range(4)]
    evaluators = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "book", "fault": "error",
                                               "honest_answers": ["no room"]}]
    draws = 'rec.model("give_up", __import__("random").random) if input["slot"] != "s0" else None'  # unseeded
    folder = make_suite(cases, evaluators=evaluators, system="sysmod:Desk", system_code=booking_desk(after_book=draws),
                        release={"criteria": {"answer_matches": 0.5}})
    assert main(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 1  # 4 cases: too few to pass
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("recovers_from_error_at_book: 3 of its 4 verdicts are missing: control_replay_diverged")
    assert lines[start + 1].startswith("  e.g. c1: control_replay_diverged: step 1 differs: recorded model call "
                                       "give_up -> ")
    assert lines[start + 2] == '  in Python: run.verdicts[run.verdicts.verdict == "missing"] has each reason'
    assert start < next(i for i, line in enumerate(lines) if line.startswith("| criterion"))  # above the table
    assert main(["gate", str(tmp_path / "out")]) == 1  # the stored run says so too
    assert lines[start] in capsys.readouterr().out.splitlines()


def test_failed_verdicts_are_explained_above_the_table_as_missing_ones_are(
        make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A BLOCK said why verdicts were missing but not why they failed: the reasons were in run.verdicts only. By
    hand: p00–p09 all answer "oops" (10 of 10 answer_matches fail, each reason of its own answer), and p00–p02 also
    write 0 where 0, 1, 2 are expected: p00 passes state_matches, p01 and p02 fail it at acct.n."""
    cases = [{**c, "input": {**c["input"], "answer": "oops"}} for c in PERFECT_CASES]
    for case in cases[:3]:
        case["input"] = {**case["input"], "writes": [{"path": ["acct", "n"], "value": 0}]}
    folder = make_suite(cases, evaluators=EVALUATORS, release=RELEASE)
    assert main(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("answer_matches: 10 of its 10 verdicts fail: answer differs")
    assert lines[start + 1:start + 5] == ["  e.g. p00: answer 'oops' != expected 'done'",
                                          "state_matches: 2 of its 10 verdicts fail: paths differ",
                                          "  e.g. p01: 1 of 1 paths differ: acct.n",
                                          '  in Python: run.verdicts[run.verdicts.verdict == "fail"] has each reason']
    assert start < next(i for i, line in enumerate(lines) if line.startswith("| criterion"))  # above the table
    assert main(["gate", str(tmp_path / "out")]) == 1  # the stored run says so too
    assert lines[start] in capsys.readouterr().out.splitlines()


def test_a_case_run_that_overran_its_time_counts_as_ended(make_suite, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """By hand: c0 raises, c1 overruns case_timeout_s 0.5. Both ended, one by timeout, and the fault check's
    finding counts both: a timeout is no tool call either."""
    cases = [{"id": f"c{i}", "input": {"how": how}, "expected": {"answer": "ok"}}
             for i, how in enumerate(["key", "slow"])]
    evaluators = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "lend", "fault": "error",
                                               "criterion": "recovers"}]
    folder = make_suite(cases, evaluators=evaluators, system="sysmod:Fails", system_code=FAILING_SYSTEM,
                        release={"criteria": {"answer_matches": 0.5}}, case_timeout_s=0.5)
    assert main(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert "2 of 2 case runs ended in error (1 by timeout): their verdicts are missing" in out.splitlines()
    assert "no case called any tool (2 of 2 case runs ended in error or by timeout)" in err


def test_a_clustered_run_not_allowed_approximate_intervals_is_told_which_key_to_set(
        make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --epochs 3 every case passed, yet every criterion was INSUFFICIENT_EVIDENCE with the reason
    approximate_methods_not_allowed beside the method clopper_pearson, and nothing named the key to set."""
    folder = make_suite(PERFECT_CASES, evaluators=EVALUATORS, release=RELEASE)
    assert main(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet", "--epochs", "3"]) == 1
    text = " ".join(capsys.readouterr().out.split())  # wrapped to the width
    assert ("the run is clustered (a case's epochs, a copy and its source, or cases given one cluster share a "
            "cluster), and the run's release.yaml (stored when it started: give one that does with --release to "
            "gate this run, or set it for the next run) does not allow clustered (approximate) intervals: "
            "`allow_approximate_methods: true` decides them") in text
    # said once, naming --release: each criterion's line keeps the code, not the library's op.gate(run, release=)
    assert text.count("does not allow clustered") == 1 and "op.gate(run" not in text
    assert "answer_matches: approximate_methods_not_allowed" in text
    allowed = tmp_path / "allowed.yaml"
    allowed.write_text(yaml.safe_dump({**RELEASE, "allow_approximate_methods": True, "min_clusters": 10}),
                       encoding="utf-8")
    assert main(["gate", str(tmp_path / "out"), "--release", str(allowed)]) == 0  # 30 rows in 10 clusters pass
    out = " ".join(capsys.readouterr().out.split())
    assert "does not allow clustered (approximate) intervals" not in out
    assert (f"gated with --release {allowed}: 2 settings weaker than the run's own release settings: "
            "allow_approximate_methods false → true, min_clusters 20 → 10") in out
    assert main(["run", str(folder), "--out", str(tmp_path / "once"), "--quiet"]) == 0  # unclustered: no word
    assert "the run is clustered" not in capsys.readouterr().out
    strict = tmp_path / "a;b" / "release.yaml"  # a --release path holding `;`: the table keeps the bare code
    strict.parent.mkdir()
    strict.write_text(yaml.safe_dump(RELEASE), encoding="utf-8")
    assert main(["gate", str(tmp_path / "out"), "--release", str(strict)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "answer_matches: approximate_methods_not_allowed (" not in out  # the whole reason is in the note only
    assert "approximate_methods_not_allowed;b" not in out and out.count("does not allow clustered") == 1
    assert f"and {strict} does not allow clustered (approximate) intervals" in out
    # the report says it once too, naming --release (its rows gave the library's op.gate(run, release=...) each)
    assert main(["report", str(tmp_path / "out"), "--out", str(tmp_path / "report.md")]) == 1
    report = " ".join((tmp_path / "report.md").read_text(encoding="utf-8").split())
    assert report.count("does not allow clustered") == 1 and "op.gate(run" not in report
    assert ("the run's release.yaml (stored when it started: give one that does with --release to report on this "
            "run, or set it for the next run)") in report
    assert "| approximate_methods_not_allowed; degenerate: all 30 rows pass" in report


def test_run_exits_1_when_a_criterion_fails(make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [{**c, "input": {**c["input"], "answer": "oops"}} for c in PERFECT_CASES]  # every answer wrong
    folder = make_suite(cases, evaluators=EVALUATORS, release=RELEASE)
    assert main(["run", str(folder), "--out", str(tmp_path / "out")]) == 1
    rows = _table_rows(capsys.readouterr().out)
    assert "0" in rows["answer_matches"] and "10" in rows["answer_matches"]  # 10 rows, 0 passed
    assert "10" in rows["state_matches"]


def test_run_example_prints_the_table(example_suite: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(example_suite), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    out = capsys.readouterr().out
    rows = _table_rows(out)
    config = yaml.safe_load((example_suite / "oloproof.yaml").read_text(encoding="utf-8"))
    criteria = {ev.get("criterion") for ev in config["evaluators"]} | {"answer_matches", "state_matches"}
    assert {"answer_matches", "state_matches", "other_order_untouched"} <= set(rows)
    assert {c for c in criteria if c} <= set(rows)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_standard_output_that_is_not_utf8_gets_the_table_in_ascii(example_suite: Path, tmp_path: Path,
                                                                     encoding: str) -> None:
    """With PYTHONIOENCODING=latin-1 (a latin-1 terminal), the interval's en dash made every gate an
    "internal error", exit 2 (a PASS too). The table is written with ASCII stand-ins and the gate's code kept."""
    assert main(["run", str(example_suite), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    done = subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "gate", str(tmp_path / "out")], env=env,
                          capture_output=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert b"internal error" not in done.stderr and b"Traceback" not in done.stderr
    table = _table_rows(done.stdout.decode(encoding))
    assert table["answer_matches"][5] == "0.564-0.845"  # the en dash of 0.564–0.845, in ASCII
    assert table["answer_matches"][-1] == "FAIL"
    # the ASCII write was outside the broken-pipe handling (`| head` gave 2, "Broken pipe")
    gone = subprocess.Popen([sys.executable, "-m", "oloproof_nb.cli", "gate", str(tmp_path / "out")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert gone.stdout is not None and gone.stderr is not None
    gone.stdout.close()  # the reader left before the table was written
    assert gone.wait(timeout=300) == 1
    assert b"Broken pipe" not in gone.stderr.read()


def test_run_into_an_existing_out_needs_resume(make_suite, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(PERFECT_CASES[:2], evaluators=EVALUATORS)
    out = tmp_path / "out"
    out.mkdir()
    (out / "something.txt").write_text("keep", encoding="utf-8")
    assert main(["run", str(folder), "--out", str(out)]) == 2
    assert str(out) in _error_line(capsys)
    assert [p.name for p in out.iterdir()] == ["something.txt"]


def test_resuming_a_finished_run_says_there_was_nothing_to_resume(make_suite, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`--resume` of a finished run printed its gate again as if it had run."""
    folder = make_suite(PERFECT_CASES[:3], evaluators=EVALUATORS, release=RELEASE)
    out = tmp_path / "out"
    assert main(["run", str(folder), "--out", str(out), "--quiet"]) == 1  # 3 of 3: ci_low 0.29 < 0.5
    first = capsys.readouterr().out
    assert "nothing to resume" not in first
    journal = (out / "cases.jsonl").read_bytes()
    assert main(["run", str(folder), "--out", str(out), "--resume", "--quiet"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{out}: the run had already finished; nothing to resume (its gate follows)"
    assert lines[1:] == first.splitlines() and (out / "cases.jsonl").read_bytes() == journal  # left as it was
    # a finished run that lost a record is resumed, and must not say it was not
    (out / "cases.jsonl").write_bytes(b"".join(journal.splitlines(keepends=True)[:2]))
    assert main(["run", str(folder), "--out", str(out), "--resume", "--quiet"]) == 1
    assert "nothing to resume" not in capsys.readouterr().out
    assert len((out / "cases.jsonl").read_bytes().splitlines()) == 3


@pytest.mark.parametrize("argv", [[], ["run"], ["frobnicate"], ["run", "x", "--workers", "many"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "line"), [
    (["gate", "x", "--confidence", "0.9"], "unrecognized arguments: --confidence 0.9 (see `oloproof gate --help`)"),
    (["run", "x", "--nope"], "unrecognized arguments: --nope (see `oloproof run --help`)"),
    (["run", "a", "--json"], "unrecognized arguments: --json (see `oloproof run --help`)"),  # gate's, not run's
    (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
    # a value that starts with '-' and reads as no number is taken for an option: the line says how to give it
    (["gate", "x", "--pass-threshold", "-inf"], "argument --pass-threshold: expected one argument; a value that "
                                                "starts with '-' is given as --pass-threshold=VALUE "
                                                "(see `oloproof gate --help`)"),
    (["run", "x", "--out", "-runs"], "argument --out: expected one argument; a value that starts with '-' is given "
                                     "as --out=VALUE (see `oloproof run --help`)"),
])
def test_an_unknown_option_names_the_help_of_the_command_given(argv: list[str], line: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An option no command takes was refused by the top-level parser, which pointed at ``oloproof --help``
    (a list of commands, not of the options the command given takes). Nothing is read before it is refused:
    the run folders named here do not exist."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and len(err.splitlines()) == 1 and err.startswith("oloproof: error: ")
    assert line in err


def test_resume_without_out_and_bad_workers(make_suite, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(PERFECT_CASES[:1], evaluators=EVALUATORS)
    assert main(["run", str(folder), "--resume"]) == 2
    assert "--out" in _error_line(capsys)
    assert main(["run", str(folder), "--workers", "0", "--out", str(folder / "o")]) == 2
    assert "workers" in _error_line(capsys)


def test_run_missing_suite_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nowhere")]) == 2
    assert str(tmp_path / "nowhere") in _error_line(capsys)


@pytest.mark.parametrize(("command", "wanted"), [
    (["gate", "NOWHERE"], "a run directory, a suite folder or Inspect AI logs"),
    (["report", "NOWHERE", "--out", "report.html"], "a run directory, a suite folder or Inspect AI logs"),
    (["compare", "NOWHERE", "SUITE"], "a run directory or a suite folder"),
])
def test_a_path_that_does_not_exist_says_what_the_command_reads(
        example_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str],
        wanted: str) -> None:
    """A typo (`oloproof gate logs/` for `log/`) was "no such run directory (a run directory holds manifest.json
    and cases.jsonl)": the suite folder and the Inspect AI logs that gate and report also read went unsaid."""
    nowhere = tmp_path / "nowhere"
    given = {"NOWHERE": str(nowhere), "SUITE": str(example_suite), "report.html": str(tmp_path / "report.html")}
    assert main([given.get(word, word) for word in command]) == 2
    assert _error_line(capsys) == f"oloproof: error: {nowhere}: no such file or folder; give {wanted}"
    assert not nowhere.exists() and not (tmp_path / "report.html").exists()


# -- every bad input: exit 2, one line naming the file (and line), nothing changed --------------------------

Mutation = Callable[[Path], None]


def _append_case_line(text: str) -> Mutation:
    def apply(folder: Path) -> None:
        with (folder / "cases.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return apply


def _yaml(change: Callable[[dict], None], file: str = "oloproof.yaml") -> Mutation:
    def apply(folder: Path) -> None:
        path = folder / file
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
        change(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return apply


def _raw(file: str, text: str) -> Mutation:
    def apply(folder: Path) -> None:
        (folder / file).write_text(text, encoding="utf-8")
    return apply


def _add_evaluator(ev: dict) -> Mutation:
    return _yaml(lambda d: d["evaluators"].append(ev))


# (id, mutation, file named, line named or None, words the message must hold)
BAD_INPUTS: list[tuple[str, Mutation, str, int | None, list[str]]] = [
    ("case-not-json", _append_case_line("{oops"), "cases.jsonl", 3, ["not valid JSON"]),
    ("case-not-object", _append_case_line('["id", "input"]'), "cases.jsonl", 3, ["JSON object", "list"]),
    ("case-missing-id", _append_case_line('{"input": {}}'), "cases.jsonl", 3, ["'id'"]),
    ("case-missing-input", _append_case_line('{"id": "z"}'), "cases.jsonl", 3, ["'input'"]),
    ("case-duplicate-id", _append_case_line('{"id": "p00", "input": {}}'), "cases.jsonl", 3, ["duplicate", "p00"]),
    ("case-unknown-key", _append_case_line('{"id": "z", "input": {}, "expect": {}}'), "cases.jsonl", 3,
     ["expect", "allowed", "expected", "metadata"]),
    ("yaml-not-yaml", _raw("oloproof.yaml", "name: [tiny\nsystem: x\n"), "oloproof.yaml", None, ["YAML"]),
    ("yaml-not-mapping", _raw("oloproof.yaml", "- name\n- system\n"), "oloproof.yaml", None, ["mapping"]),
    ("yaml-unknown-key", _yaml(lambda d: d.update(evaluater=[])), "oloproof.yaml", None,
     ["evaluater", "allowed", "name", "system", "cases", "evaluators"]),
    ("yaml-unknown-type", _add_evaluator({"type": "answer_is_nice"}), "oloproof.yaml", None,
     ["evaluators[3].type", "answer_is_nice", "answer_matches", "state_matches", "state_unchanged"]),
    ("yaml-bad-mode", _add_evaluator({"type": "state_matches", "criterion": "s2", "mode": "most"}), "oloproof.yaml",
     None, ["evaluators[3].mode", "most", "whole", "paths", "subset"]),
    ("yaml-fault-bad-calls", _add_evaluator({"type": "fault_recovery", "tool": "t", "fault": "error", "calls": "all"}),
     "oloproof.yaml", None, ["evaluators[3].calls: Input should be 'first' or 'every' (got 'all')"]),
    ("yaml-unchanged-no-paths", _add_evaluator({"type": "state_unchanged", "criterion": "u2"}), "oloproof.yaml",
     None, ["evaluators[3].paths", "required"]),
    ("yaml-system-module-missing", _yaml(lambda d: d.update(system="not_a_module_abc:Scripted")), "oloproof.yaml",
     None, ["system", "not_a_module_abc"]),
    ("yaml-system-attr-missing", _yaml(lambda d: d.update(system="sysmod:NotThere")), "oloproof.yaml", None,
     ["system", "NotThere"]),
    ("release-unknown-criterion", _yaml(lambda d: d.update(criteria={"answer_matchez": 0.9}), "release.yaml"),
     "release.yaml", None, ["answer_matchez", "answer_matches", "state_matches", "other_kept"]),
    ("release-threshold-above-1", _yaml(lambda d: d.update(criteria={"answer_matches": 1.2}), "release.yaml"),
     "release.yaml", None, ["criteria", "1.2", "between 0 and 1"]),
    ("release-key-twice", _raw("release.yaml", "criteria:\n  answer_matches: 0.9\n  answer_matches: 0.2\n"),
     "release.yaml", None, ["line 3", "answer_matches", "twice"]),
    ("release-threshold-below-0", _yaml(lambda d: d.update(criteria={"state_matches": -0.5}), "release.yaml"),
     "release.yaml", None, ["criteria", "-0.5", "between 0 and 1"]),
    ("release-confidence-quoted", _yaml(lambda d: d.update(confidence="0.95"), "release.yaml"),
     "release.yaml", None, ["confidence: must be a confidence level, e.g. 0.95, not the text '0.95'"]),
    ("yaml-timeout-quoted", _yaml(lambda d: d.update(case_timeout_s="30")), "oloproof.yaml", None,
     ["case_timeout_s: must be a number of seconds, not the text '30'"]),
]


@pytest.mark.parametrize(("mutate", "file", "line", "words"), [b[1:] for b in BAD_INPUTS],
                         ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_exits_2_with_one_line(make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         mutate: Mutation, file: str, line: int | None, words: list[str]) -> None:
    cases = PERFECT_CASES[:1] + [{"id": "p01", "input": {"answer": "done"}}]
    folder = make_suite(cases, evaluators=EVALUATORS, release={"criteria": {"answer_matches": 0.5}})
    mutate(folder)
    before = _files(folder)
    out = tmp_path / "never"
    assert main(["run", str(folder), "--out", str(out)]) == 2
    message = _error_line(capsys)
    where = f"{folder / file}: line {line}: " if line is not None else f"{folder / file}: "
    assert where in message
    for word in words:
        assert word in message
    assert _files(folder) == before  # every input byte-for-byte unchanged
    assert not out.exists() and not (folder / "runs").exists()


CHATTY_SYSTEM = """
import sys


class Chatty:
    version = "chatty-1"

    def __init__(self):
        print("hello from the constructor")

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def run(self, input):
        print("DEBUG acting on", input)
        sys.stdout.flush()
        return {"steps": [], "answer": input.get("answer"), "status": "completed"}
"""


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_what_the_system_prints_goes_to_stderr_and_a_closed_stdout_changes_no_exit_code(
        make_suite, tmp_path: Path, isolation: str) -> None:
    """A system's prints were mixed into stdout above the gate table (a CI parser of
    `oloproof run > gate.txt` got them), and with --isolation process and `| head` the system's own print raised
    BrokenPipeError in the worker: exit 2, "could not build the system". Now they go to stderr."""
    folder = make_suite(PERFECT_CASES, evaluators=[{"type": "answer_matches"}],
                        release={"criteria": {"answer_matches": 0.5}}, system="sysmod:Chatty",
                        system_code=CHATTY_SYSTEM)
    command = [sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet", "--isolation", isolation]
    done = subprocess.run([*command, "--out", str(tmp_path / "a")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "DEBUG" not in done.stdout and "hello" not in done.stdout
    assert done.stdout.splitlines()[-1].startswith("gate: PASS — exit 0")
    assert "DEBUG acting on" in done.stderr and "hello from the constructor" in done.stderr
    closed = subprocess.Popen([*command, "--out", str(tmp_path / "b")], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert closed.stdout is not None
    closed.stdout.close()  # the reader left at once, as `| head -0` does
    assert closed.wait(timeout=120) == 0


def test_console_script_in_a_subprocess(make_suite, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("oloproof")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "oloproof_nb.cli"]
    folder = make_suite(PERFECT_CASES, evaluators=EVALUATORS, release=RELEASE)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    good = subprocess.run([*command, "run", str(folder), "--out", str(tmp_path / "ok")], capture_output=True,
                          text=True, env=env, timeout=120)
    assert good.returncode == 0, good.stderr
    assert "answer_matches" in good.stdout
    with (folder / "cases.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "p03", "input": {}}\n')
    before = (folder / "cases.jsonl").read_bytes()
    bad = subprocess.run([*command, "run", str(folder), "--out", str(tmp_path / "bad")], capture_output=True,
                         text=True, env=env, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.strip() == (f"oloproof: error: {folder / 'cases.jsonl'}: line 11: "
                                  "duplicate case id 'p03' (also line 4)")  # p00 is line 1
    assert "Traceback" not in bad.stderr and bad.stdout == ""
    assert (folder / "cases.jsonl").read_bytes() == before


def test_json_in_the_error_is_never_a_traceback_for_odd_files(make_suite, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(PERFECT_CASES[:1], evaluators=EVALUATORS)
    (folder / "cases.jsonl").write_bytes(json.dumps(PERFECT_CASES[1]).encode() + b"\n\xff\n")
    assert main(["run", str(folder), "--out", str(tmp_path / "o")]) == 2
    assert f"{folder / 'cases.jsonl'}: line 2: " in _error_line(capsys)
    (folder / "cases.jsonl").write_text("", encoding="utf-8")
    assert main(["run", str(folder), "--out", str(tmp_path / "o")]) == 2
    assert str(folder / "cases.jsonl") in _error_line(capsys)
    (folder / "oloproof.yaml").write_text("", encoding="utf-8")
    assert main(["run", str(folder), "--out", str(tmp_path / "o")]) == 2
    assert str(folder / "oloproof.yaml") in _error_line(capsys)


# -- exit 0 means PASS and nothing else (issue 13 §4) ----------------------------------------------------------
# The scripted system (tests/_reliability_systems.py) misbehaves on request; `oloproof run` decides its exit code
# in a process that never imports it. Routes that end the process (os._exit, a segfault) run in a subprocess.

from _reliability_systems import (  # noqa: E402
    cli_command,
    cli_env,
    main_in_process,
    make_case,
    one_error_line,
    read_log,
    run_cli,
    runs_of,
    write_suite,
)

import oloproof_nb as op  # noqa: E402
from oloproof_nb.evaluators import fault as fault_module  # noqa: E402

# 4 of 4 pass: Clopper-Pearson lower bound 0.025 ** (1 / 4) = 0.398 >= 0.3 (PASS); 3 of 4: 0.194 < 0.3 (BLOCK)
PASSABLE = {"confidence": 0.95, "criteria": {"answer_matches": 0.3}}


def _desk(tmp_path: Path, ops: list[str] | None = None, **config: object) -> Path:
    cases = [make_case(f"c{i}", op=op_) for i, op_ in enumerate(ops or ["ok"] * 4)]
    return write_suite(tmp_path / "suite", cases, release=PASSABLE, **config)


def _run(root: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["run", str(root), "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_well_behaved_desk_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The baseline the routes below start from: the same suite exits 0."""
    code, out, _ = _run(_desk(tmp_path), tmp_path / "run", capsys)
    assert code == 0 and "gate: PASS" in out


@pytest.mark.parametrize(("variable", "value", "words"), [
    ("RELSYS_IMPORT", "sysexit", "importing 'relsys' raised SystemExit: 0"),
    ("RELSYS_IMPORT", "keyboard", "importing 'relsys' raised KeyboardInterrupt: raised by the system's module"),
    ("RELSYS_INIT", "sysexit", "building the system raised SystemExit: 0"),
    ("RELSYS_INIT", "keyboard", "building the system raised KeyboardInterrupt: raised by the constructor"),
])
def test_sys_exit_or_keyboard_interrupt_at_import_or_in_the_constructor_is_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        variable: str, value: str, words: str) -> None:
    root = _desk(tmp_path)
    monkeypatch.setenv(variable, value)
    code, out, err = _run(root, tmp_path / "run", capsys)
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert f"{root / 'oloproof.yaml'}: system: " in line and words in line


@pytest.mark.parametrize(("raised", "words"), [
    ("KeyboardInterrupt()", "reading the system's version raised KeyboardInterrupt"),
    ("SystemExit(0)", "reading the system's version raised SystemExit: 0"),
])
def test_a_version_property_raising_keyboard_interrupt_or_sys_exit_is_one_line_naming_the_system(
        tmp_path: Path, make_suite: Callable[..., Path], capsys: pytest.CaptureFixture[str],
        raised: str, words: str) -> None:
    """Not a SIGINT the command never got, nor a bare ``SystemExit: 0``: the system's own doing, named as such."""
    code = SCRIPTED_SYSTEM + f"""

class Unversioned(Scripted):
    @property
    def version(self):
        raise {raised}
"""
    root = make_suite(PERFECT_CASES, evaluators=EVALUATORS, release=RELEASE, system="sysmod:Unversioned",
                      system_code=code)
    assert main(["run", str(root), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    line = _error_line(capsys)
    assert line.endswith(f"{root / 'oloproof.yaml'}: system: {words}")


@pytest.mark.parametrize(("how", "words"), [
    ({"RELSYS_IMPORT": "os_exit"}, "the process running the system exited with code 0"),
    ({"RELSYS_KILL": "run:c2"}, "the process running the system was killed by signal SIGKILL"),
])
def test_the_process_ending_at_import_or_mid_run_is_exit_2_never_0(tmp_path: Path, how: dict[str, str],
                                                                   words: str) -> None:
    root = _desk(tmp_path)
    out = tmp_path / "run"
    proc = run_cli("run", str(root), "--out", str(out), "--quiet", env=cli_env(**how))
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc.stderr)
    assert words in line and "gate:" not in proc.stdout
    if "RELSYS_KILL" in how:  # it died mid-run: the line says how to finish it, and that works
        assert line.endswith(f"finish it with: oloproof run {root} --out {out} --resume")
        done = run_cli("run", str(root), "--out", str(out), "--resume", "--quiet")
        assert done.returncode == 0 and "gate: PASS" in done.stdout, done.stderr


@pytest.mark.parametrize(("op_", "words", "how"), [
    ("os_exit", "exited with code 0", "exit code 0"),
    ("segfault", "was killed by signal SIGSEGV", "killed by signal SIGSEGV"),
])
def test_os_exit_or_a_segfault_during_a_case_is_exit_2(tmp_path: Path, op_: str, words: str, how: str) -> None:
    """The README's row of this table quotes the reason the resume records, as these runs give it (it
    quoted ``(exit code 3)`` beside ``os._exit(0)``, whose reason says ``exit code 0``)."""
    root = _desk(tmp_path, ["ok", op_, "ok", "ok"])
    out = tmp_path / "run"
    proc = run_cli("run", str(root), "--out", str(out), "--quiet")
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    line = one_error_line(proc.stderr)
    assert f"the process running the system {words}" in line and "--resume" in line
    assert proc.stdout == ""
    assert not op.load_run(out).finished
    done = run_cli("run", str(root), "--out", str(out), "--quiet", "--resume")
    assert done.returncode == 1, done.stderr  # 3 of 4: BLOCK; the crashed case is not run again
    reason = f"the process running the system died while running the case ({how})"
    assert _statuses(out)["c1"] == ("error", reason)
    readme = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text(encoding="utf-8")
    row = next(row for row in readme.splitlines() if row.startswith("| calls `os._exit(0)` or segfaults"))
    assert (f"`{reason}`" if op_ == "os_exit" else f"`({how})`") in row


def _run_until_finished(root: Path, out: Path, env: dict[str, str], *extra: str,
                        tries: int = 4) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``oloproof run``, then ``--resume`` while it exits 2 (as a script looping on the printed command would); the
    last command's result and the error line of each run that stopped."""
    stops: list[str] = []
    proc = run_cli("run", str(root), "--out", str(out), "--quiet", *extra, env=env)
    for _ in range(tries):
        if proc.returncode != 2:
            break
        stops.append(one_error_line(proc.stderr))
        proc = run_cli("run", str(root), "--out", str(out), "--quiet", "--resume", *extra, env=env)
    return proc, stops


def _statuses(out: Path) -> dict[str, tuple[str, str | None]]:
    cases = op.load_run(out).cases.set_index("case_id")
    return {cid: (row["status"], row["error"] if isinstance(row["error"], str) else None)
            for cid, row in cases.iterrows()}


EXIT_3 = "the process running the system died while running the case (exit code 3)"
SEGV = "the process running the system died while running the case (killed by signal SIGSEGV)"


def test_a_case_that_ends_the_process_is_that_cases_error_after_resume_not_another_try(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A system that ends the process on its hard cases (os._exit, a segfault) got them run again by
    --resume until they passed (6 of 6, PASS, exit 0), while one that failed them gracefully was judged on its first
    try. Now the case run in flight is recorded as error, as isolation: process records it: 4 of 6, BLOCK, exit 1.
    The second crash happens during the first resume, so the resume after it settles an end of a resumed run."""
    (tmp_path / "once").mkdir()
    root = _desk(tmp_path, ["ok", "exit_once", "ok", "ok", "segfault_once", "ok"])
    out = tmp_path / "run"
    log = tmp_path / "log"
    proc, stops = _run_until_finished(root, out, cli_env(RELSYS_ONCE=str(tmp_path / "once"), RELSYS_LOG=str(log)))
    assert len(stops) == 2, stops
    assert "exited with code 3 while running case 'c1', which --resume records as error" in stops[0]
    assert "was killed by signal SIGSEGV while running case 'c4', which --resume records as error" in stops[1]
    assert proc.returncode == 1, (proc.stdout, proc.stderr)  # 4 of 6: lower bound 0.222 < 0.3
    assert "gate: BLOCK" in proc.stdout and "2 of 6 case runs ended in error" in proc.stdout
    assert "resumed after" not in proc.stdout  # both ends were the system's: no case ran again
    assert _statuses(out) == {"c0": ("completed", None), "c1": ("error", EXIT_3), "c2": ("completed", None),
                              "c3": ("completed", None), "c4": ("error", SEGV), "c5": ("completed", None)}
    assert runs_of(read_log(log)) == ["c0", "c1", "c2", "c3", "c4", "c5"]  # neither crashed case ran twice
    assert not (out / "started.jsonl").exists()
    assert "abrupt_ends" not in json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert main_in_process(capsys, "gate", str(out)).returncode == 1


def test_a_crash_on_the_last_case_is_recorded_by_a_resume_that_runs_nothing(tmp_path: Path) -> None:
    (tmp_path / "once").mkdir()
    root = _desk(tmp_path, ["ok", "ok", "ok", "ok", "ok", "exit_once"])
    out, log = tmp_path / "run", tmp_path / "log"
    proc, stops = _run_until_finished(root, out, cli_env(RELSYS_ONCE=str(tmp_path / "once"), RELSYS_LOG=str(log)))
    assert len(stops) == 1 and "while running case 'c5'" in stops[0]
    assert proc.returncode == 0, proc.stderr  # 5 of 6: lower bound 0.359 >= 0.3; the crash counted as a failure
    assert _statuses(out)["c5"] == ("error", EXIT_3)
    assert runs_of(read_log(log)) == ["c0", "c1", "c2", "c3", "c4", "c5"]
    assert op.load_run(out).finished


def test_a_crash_with_two_workers_makes_every_case_run_in_flight_error(tmp_path: Path) -> None:
    """Which of the case runs in flight in the process ended it is not known: each is error (the conservative
    choice: never another try for the one that crashed), and none ran twice; a case run another worker had
    finished, its record not yet appended, ran again (the manifest says so) rather than be blamed."""
    (tmp_path / "once").mkdir()
    root = _desk(tmp_path, ["ok", "ok", "exit_once", "ok", "ok", "ok"])
    out, log = tmp_path / "run", tmp_path / "log"
    env = cli_env(RELSYS_ONCE=str(tmp_path / "once"), RELSYS_SLEEP="0.2", RELSYS_LOG=str(log))
    proc, stops = _run_until_finished(root, out, env, "--workers", "2")
    assert len(stops) == 1 and "which --resume records as error" in stops[0]
    statuses = _statuses(out)
    errors = {cid for cid, (status, _) in statuses.items() if status == "error"}
    assert proc.returncode == (1 if len(errors) > 1 else 0), (proc.stdout, proc.stderr)  # 5 of 6 PASS, 4 of 6 not
    assert "c2" in errors and all(status == "completed" for cid, (status, _) in statuses.items() if cid not in errors)
    reason = EXIT_3[:-1] + f"; {len(errors)} case runs were in flight in it)" if len(errors) > 1 else EXIT_3
    assert {statuses[cid][1] for cid in errors} == {reason}
    ran = runs_of(read_log(log))
    # an error case run never ran again; one noted as it started may not have reached the system's run() when
    # c2 ended the process (its reset underway on a loaded machine): it is error all the same, never run
    assert ran.count("c2") == 1 and all(ran.count(cid) <= 1 for cid in errors), ran
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8")).get("abrupt_ends") or []
    again = {cid for end in ends for cid, _ in end["rerun"]}
    assert {cid for cid in set(ran) if ran.count(cid) > 1} == again and not again & errors


def test_a_timed_out_case_whose_replacement_system_ends_the_process_is_not_run_again(tmp_path: Path) -> None:
    """With workers > 1 a case that timed out marked itself finished before its worker released the
    instance and built a new one; a constructor that ended the process there (exit code 3) lost the case's record,
    and the resume ran it again (noted as an abrupt end) where a serial run had recorded it first. It is in flight
    until its slot holds a system again: the resume records it error, as the crash it was part of."""
    root = _desk(tmp_path, ["ok", "hang", "ok", "ok"], case_timeout_s=1)
    out, log, release = tmp_path / "run", tmp_path / "log", tmp_path / "release"
    try:  # instances 0 and 1 start the two workers; instance 2, the replacement after 'c1' timed out, exits
        first = run_cli("run", str(root), "--out", str(out), "--quiet", "--workers", "2",
                        env=cli_env(RELSYS_INIT="exit_after:2", RELSYS_SLEEP="0.5", RELSYS_LOG=str(log),
                                    RELSYS_RELEASE=str(release)))
    finally:
        release.touch()  # ends the abandoned call's wait, if anything still waits
    assert first.returncode == 2 and "exited with code 3" in one_error_line(first.stderr)
    done = run_cli("run", str(root), "--out", str(out), "--quiet", "--resume",
                   env=cli_env(RELSYS_LOG=str(log), RELSYS_RELEASE=str(release)))
    assert done.returncode in (0, 1), done.stderr
    assert runs_of(read_log(log)).count("c1") == 1  # the timed-out case never ran again
    assert _statuses(out)["c1"][0] == "error"
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8")).get("abrupt_ends") or []
    assert all(cid != "c1" for end in ends for cid, _ in end["rerun"]), ends


@pytest.mark.parametrize("op_", ["sigint_once", "sigterm_once", "sighup_once"])
def test_a_stop_by_a_signal_the_command_never_got_is_an_abrupt_end_not_a_silent_second_try(
        tmp_path: Path, op_: str) -> None:
    """A system that sends SIGINT or SIGTERM to its own process during a case (a shell tool running
    ``kill $PPID``) stopped the run as a Ctrl-C does: 'oloproof: interrupted', started.jsonl forgotten, and the
    resume ran the case again with no note anywhere (PASS, exit 0, as if nothing happened). The command got no
    stop, so it says the run stopped, which case run was in flight and that --resume runs it again, and the
    manifest's abrupt_ends keeps it, as for a kill from outside. A SIGHUP stops the run's process as
    SIGTERM does, and the line named only SIGINT or SIGTERM; it names each signal that stops it."""
    (tmp_path / "once").mkdir()
    root = _desk(tmp_path, ["ok", op_, "ok", "ok"])
    out, log = tmp_path / "run", tmp_path / "log"
    proc, stops = _run_until_finished(root, out, cli_env(RELSYS_ONCE=str(tmp_path / "once"), RELSYS_LOG=str(log)))
    how = "stopped by a SIGINT, SIGTERM or SIGHUP sent to it alone"
    assert len(stops) == 1, stops
    assert f"the process running the system was {how} (this command got none) while running case 'c1', which " \
           "--resume runs again" in stops[0]
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert runs_of(read_log(log)).count("c1") == 2
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8")).get("abrupt_ends")
    assert ends == [{"how": how, "rerun": [["c1", 1]]}]
    assert f"resumed after 1 abrupt end of the run's process ({how}); the 1 case run in flight was run again: " \
           "case 'c1'" in " ".join(proc.stdout.split())


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups (POSIX)")
def test_a_ctrl_c_a_system_sends_its_process_group_is_kept_as_a_stop(tmp_path: Path) -> None:
    """A terminal's Ctrl-C is a SIGINT to the foreground process group, and a system can send the same
    with ``os.killpg(os.getpgrp(), signal.SIGINT)``: the run stopped as on the user's Ctrl-C, and --resume (the
    command the stop prints) ran the case again with no note, a fresh try of a stochastic agent each time, PASS,
    exit 0. The stop is now kept in abrupt_ends, and the gate prints it under its table."""
    import signal

    from oloproof_nb._run.runner import STOPPED

    (tmp_path / "once").mkdir()
    root = _desk(tmp_path, ["ok", "group_sigint_once", "ok", "ok"])
    out, log = tmp_path / "run", tmp_path / "log"
    env = cli_env(RELSYS_ONCE=str(tmp_path / "once"), RELSYS_LOG=str(log))
    stopped = subprocess.run(cli_command("run", str(root), "--out", str(out), "--quiet"), env=env,
                             capture_output=True, text=True, timeout=120, start_new_session=True,  # its own group
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), check=False)
    assert stopped.returncode == 2 and "oloproof: interrupted" in stopped.stderr, stopped.stderr
    resumed = run_cli("run", str(root), "--out", str(out), "--quiet", "--resume", env=env)
    assert resumed.returncode == 0, (resumed.stdout, resumed.stderr)
    assert runs_of(read_log(log)).count("c1") == 2
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8")).get("abrupt_ends")
    assert ends == [{"how": STOPPED, "rerun": [["c1", 1]]}]
    assert f"resumed after 1 abrupt end of the run's process ({STOPPED}); the 1 case run in flight was run again: " \
           "case 'c1'" in " ".join(resumed.stdout.split())


def _with_abrupt_ends(out: Path, ends: list[dict[str, object]]) -> None:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    (out / "manifest.json").write_text(json.dumps({**manifest, "abrupt_ends": ends}), encoding="utf-8")


def test_the_gate_counts_every_case_run_a_kill_cut_short_and_names_five(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Each end's case runs in flight in the order they ran again (one cut short twice is two), five named, the
    ways the process ended once each, in order; a second epoch says so."""
    out = tmp_path / "run"
    op.run(_desk(tmp_path), out=out, progress=False)
    capsys.readouterr()
    _with_abrupt_ends(out, [{"how": "killed by signal SIGTERM", "rerun": [["c2", 1], ["c1", 2], ["c2", 1]]},
                            {"how": "killed by signal SIGKILL", "rerun": [["c0", 1], ["c3", 3], ["c1", 1]]},
                            {"how": "killed by signal SIGKILL", "rerun": []}])
    assert main(["gate", str(out)]) == 0
    assert ("resumed after 3 abrupt ends of the run's process (killed by signal SIGKILL; killed by signal SIGTERM); "
            "the 6 case runs in flight were run again: cases 'c2', 'c1' (epoch 2), 'c2', 'c0', 'c3' (epoch 3) and 1 "
            "more; isolation: process judges a crash as the case's error") in " ".join(capsys.readouterr().out.split())
    _with_abrupt_ends(out, [{"how": None, "rerun": [["c0", 1], ["c1", 1], ["c2", 1], ["c3", 1], ["c0", 2]]}])
    assert main(["gate", str(out)]) == 0
    assert ("resumed after 1 abrupt end of the run's process (not seen by oloproof run); the 5 case runs in flight "
            "were run again: cases 'c0', 'c1', 'c2', 'c3', 'c0' (epoch 2); isolation") \
        in " ".join(capsys.readouterr().out.split())


def test_an_end_with_only_a_finished_case_run_unrecorded_names_no_case_run_in_flight(tmp_path: Path) -> None:
    """workers > 1: the process ended after a case run had finished and before its record was appended (a system's
    constructor, replacing an instance, called os._exit): nothing was in flight, so the stop line names none."""
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb.cli import process

    out = tmp_path / "run"
    out.mkdir()
    (out / "started.jsonl").write_text('{"case": "c0", "epoch": 1, "at": 1.0}\n'
                                       '{"case": "c0", "epoch": 1, "at": 2.0, "finished": true}\n', encoding="utf-8")
    assert process.in_flight(out, 3) == ""
    seen = read_in_flight(out)  # noted all the same: the resume runs c0 again and the manifest keeps the end
    assert seen is not None and (seen.how, seen.by_system, seen.lost) == ("exit code 3", True, [("c0", 1)])


@pytest.mark.parametrize("presses", [1, 2])
def test_a_ctrl_c_pressed_once_or_twice_is_the_users_stop_not_an_end_nobody_saw(
        tmp_path: Path, presses: int, capsys: pytest.CaptureFixture[str]) -> None:
    """A second Ctrl-C makes oloproof run kill the run's process
    (SIGKILL) before that process notes its stop; started.jsonl named the case run in flight with no stop after it,
    and the resume said 'resumed after 1 abrupt end of the run's process (not seen by oloproof run)' and kept it in
    abrupt_ends, though the user stopped the run. The command notes the stop it made: the resume runs that case
    again and keeps it as a stop, as after one Ctrl-C (which the command passes on: 'oloproof: interrupted', no
    error line saying it got none; no longer with no note, since a system can send the same signal)."""
    import signal
    import time

    from _reliability_systems import cli_command

    root = _desk(tmp_path, ["ok"] * 6)
    out = tmp_path / "run"
    # SIGINT as a terminal leaves it (a test run started in the background of a shell inherits it ignored)
    proc = subprocess.Popen(cli_command("run", str(root), "--out", str(out), "--quiet"), env=cli_env(RELSYS_SLEEP="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not ((out / "cases.jsonl").is_file() and (out / "cases.jsonl").read_bytes().count(b"\n") >= 1
               and (out / "started.jsonl").read_bytes().count(b'"case"') >= 2):  # c1 in flight: it sleeps 1 s
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGINT)  # to the command alone: it passes a Ctrl-C on to the run after 1 s
    if presses == 2:
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGINT)  # the second Ctrl-C: the run's process is killed at once
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2 and stderr.startswith("oloproof: interrupted"), stderr
    notes = [json.loads(line) for line in (out / "started.jsonl").read_text(encoding="utf-8").splitlines()]
    assert notes[-1].get("stopped") is True and not any("ended" in note for note in notes), notes
    done = main_in_process(capsys, "run", str(root), "--out", str(out), "--quiet", "--resume")
    assert done.returncode == 0, done.stderr
    from oloproof_nb._run.runner import STOPPED

    assert "not seen by oloproof run" not in done.stdout and f"({STOPPED})" in " ".join(done.stdout.split())
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["abrupt_ends"]
    assert [end["how"] for end in ends] == [STOPPED] and len(ends[0]["rerun"]) == 1  # c1, or c2 if c1 had ended
    assert len(op.load_run(out).records) == 6


@pytest.mark.parametrize(("op_", "reason"), [
    ("sysexit0", "SystemExit: 0"),
    ("keyboard", "KeyboardInterrupt: raised by the system, not by the user"),
    ("cancelled", "CancelledError"),
    ("base", "Meltdown: the reactor melted"),
    ("generator_exit", "GeneratorExit"),
    ("bad_str", "Unprintable: <str() of the exception raised>"),
])
def test_a_base_exception_from_the_system_fails_its_case_and_the_gate_decides(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], op_: str, reason: str) -> None:
    code, out, err = _run(_desk(tmp_path, ["ok", op_, "ok", "ok"]), tmp_path / "run", capsys)
    assert code == 1, err  # 3 of 4 cannot clear 0.3: BLOCK, never the 0 the system asked for
    assert "gate: BLOCK" in out and err == ""
    run = op.load_run(tmp_path / "run")
    assert run.finished and list(run.cases["status"]) == ["completed", "error", "completed", "completed"]
    assert run.cases.set_index("case_id").loc["c1", "error"] == reason


def test_the_process_deciding_the_exit_code_never_imports_the_system(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    mark = tmp_path / "imported-by.txt"
    monkeypatch.setenv("RELSYS_MARK", str(mark))
    before = {name for name in sys.modules if "relsys" in name}
    code, out, _ = _run(_desk(tmp_path), tmp_path / "run", capsys)
    assert code == 0 and "gate: PASS" in out
    pids = {int(line) for line in mark.read_text(encoding="utf-8").split()}
    assert pids and os.getpid() not in pids
    assert {name for name in sys.modules if "relsys" in name} == before


def test_gate_of_an_unfinished_run_is_never_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _desk(tmp_path, ["ok", "ok", "ok", "ok", "raise", "raise"])
    out = tmp_path / "run"
    assert _run(root, out, capsys)[0] == 1  # 4 of 6: BLOCK
    # the run as a crash after its first four cases would leave it: those four alone would PASS
    lines = (out / "cases.jsonl").read_bytes().split(b"\n")[:4]
    (out / "cases.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    partial = op.load_run(out)
    g = op.gate(partial)  # the four records alone PASS; the run has no release decision, in Python too
    assert not partial.finished and set(g.table["verdict"]) == {"PASS", "REPORT_ONLY"}
    assert g.verdict == "BLOCK"
    assert g.reason == "unfinished: the run did not finish (4 of 6 cases recorded), so it has no release decision"
    assert main(["gate", str(out)]) == 2
    line = _error_line(capsys)
    assert f"{out}: the run did not finish (4 of 6 cases recorded)" in line
    assert f"--out {out} --resume" in line
    assert main(["report", str(out), "--out", str(tmp_path / "r.md")]) == 1  # a report is written, never a PASS
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "Verdict **BLOCK**" in text and "PASS**" not in text and "the run did not finish (4 of 6" in text


def test_gate_of_a_finished_run_that_lost_records_is_never_pass(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The same four records left, the manifest still saying the run finished (a truncated copy of the folder,
    an edited artifact): the gate judged the four and said PASS, exit 0. Now exit 2 (op.gate: BLOCK with the
    reason); compare refuses it too.
    Every record there (the run as written), the gate is the run's own."""
    root = _desk(tmp_path, ["ok", "ok", "ok", "ok", "raise", "raise"])
    out = tmp_path / "run"
    assert _run(root, out, capsys)[0] == 1
    whole = tmp_path / "whole"
    shutil.copytree(out, whole)
    lines = (out / "cases.jsonl").read_bytes().split(b"\n")[:4]
    (out / "cases.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    lost = op.gate(op.load_run(out))
    assert op.load_run(out).finished and set(lost.table["verdict"]) == {"PASS", "REPORT_ONLY"}  # the records
    assert lost.verdict == "BLOCK" and lost.reason.startswith("incomplete: the run finished with 6 case runs, but")
    assert main(["gate", str(out)]) == 2
    line = _error_line(capsys)
    assert f"{out}: the run finished with 6 case runs, but its cases.jsonl holds 4: records are missing" in line
    assert main(["compare", str(whole), str(out)]) == 2
    assert "holds 4: records are missing" in _error_line(capsys)
    assert main(["gate", str(whole)]) == 1
    manifest = json.loads((whole / "manifest.json").read_text(encoding="utf-8"))
    (whole / "manifest.json").write_text(json.dumps({**manifest, "n_cases": 5}), encoding="utf-8")
    assert main(["gate", str(whole)]) == 2  # said "records are missing" when the journal holds more than it says
    assert "holds 6: it holds more records than the manifest says" in _error_line(capsys)


def test_an_internal_error_is_exit_2_with_the_traceback_saved_in_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in oloproof's own fault evaluator is not the system's failure: the run stops, one line, exit 2."""
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}", escalate=True) for i in range(3)],
                       evaluators=[{"type": "answer_matches"},
                                   {"type": "fault_recovery", "tool": "pay", "fault": "error",
                                    "escalate_tools": ["escalate"]}], release=PASSABLE)

    def judge(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug in the fault evaluator")

    monkeypatch.setattr(fault_module, "judge_replay", judge)
    out = tmp_path / "run"
    code, stdout, err = _run(root, out, capsys)
    assert code == 2 and stdout == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("oloproof: internal error: ZeroDivisionError: a bug in the fault evaluator")
    saved = out / "internal-error.txt"
    assert str(saved) in lines[0] and f"--out {out} --resume" in lines[0]
    assert "ZeroDivisionError" in saved.read_text(encoding="utf-8") and "judge" in saved.read_text(encoding="utf-8")
    assert op.load_run(out).records == []  # nothing recorded as "missing: system_raised"


def test_the_cli_exits_promptly_when_the_system_leaves_a_thread_behind(tmp_path: Path) -> None:
    """A non-daemon thread sleeping an hour: the gate is printed and the command exits (it used to wait)."""
    root = _desk(tmp_path, ["ok", "leak_thread", "ok", "ok"])
    proc = run_cli("run", str(root), "--out", str(tmp_path / "run"), "--quiet", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "gate: PASS" in proc.stdout


@pytest.mark.parametrize("argv", [
    ["run", "{suite}", "--out", "/proc/nope/run"],
    ["report", "{run}", "--out", "/proc/nope/report.html"],
])
def test_an_os_error_reaching_the_cli_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         argv: list[str]) -> None:
    root = _desk(tmp_path)
    assert _run(root, tmp_path / "run", capsys)[0] == 0
    args = [a.format(suite=root, run=tmp_path / "run") for a in argv]
    assert main(args) == 2
    assert "/proc/nope" in _error_line(capsys)


def test_receipt_never_exits_0_on_an_internal_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from oloproof_nb._run import observe

    def broken(path: Path) -> None:
        raise KeyError("a bug while verifying")

    monkeypatch.setattr(observe, "verify_contract_file", broken)
    assert main(["receipt", str(tmp_path / "contract.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("oloproof: internal error: KeyError") and len(err.strip().splitlines()) == 1


def test_a_folder_of_projects_with_a_stray_eval_file_is_not_read_as_inspect_logs(
        example_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`oloproof gate proj` on a work folder (suites, and an old `.eval` three levels down) blamed that file as a
    damaged Inspect AI log ("repair or remove it"); the folder is simply not a run directory. A flat folder of logs
    is still read as Inspect AI logs (tests/_analysis/test_inspect_log.py)."""
    proj = example_suite.parent
    stray = proj / "sub" / "deeper" / "old.eval"
    stray.parent.mkdir(parents=True)
    stray.write_text("hi", encoding="utf-8")
    assert main(["gate", str(proj)]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"oloproof: error: {proj}: not a run directory (no manifest.json), a suite folder (no oloproof.yaml) or "
        "Inspect AI logs")
    assert main(["compare", str(proj), str(proj / "sub")]) == 2  # compare reads no logs, and says so
    assert one_error_line(capsys.readouterr().err) == (
        f"oloproof: error: {proj}: not a run directory (no manifest.json) or a suite folder (no oloproof.yaml)")
    shutil.rmtree(example_suite)  # no suite among its folders: a log two levels down is looked at, and damaged
    (proj / "sub" / "bad.eval").write_text("hi", encoding="utf-8")
    assert main(["gate", str(proj)]) == 2
    assert "bad.eval: not a readable Inspect AI log" in one_error_line(capsys.readouterr().err)


WARNING_SYSTEM = '''
import copy, warnings


class Warns:
    """Warns on every case with a long message (from the worker threads of --workers 4)."""

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        warnings.warn(input["tag"] + " " + "x" * 20000)
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def test_warnings_from_many_threads_reach_the_terminal_whole_and_once(make_suite, tmp_path: Path) -> None:
    """`oloproof run` hands the child's warnings to the parent through one pipe: sent from four worker threads at
    once, long messages interleaved and the parent died with UnpicklingError, leaving the child running (the
    command never exited)."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}"}, "expected": {"answer": "ok"}} for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="warns:Warns",
                      release={"criteria": {"answer_matches": 0.5}})
    (root / "warns.py").write_text(WARNING_SYSTEM, encoding="utf-8")
    proc = run_cli("run", str(root), "--workers", "4", "--quiet", timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert sorted(line[: len("oloproof: warning: UserWarning: c00")] for line in lines) == [
        f"oloproof: warning: UserWarning: c{i:02d}" for i in range(24)]
    assert all(line.endswith("x" * 20000) for line in lines)


def test_run_counts_cases_and_case_runs_with_epochs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof run`` said "120 cases" for 30 cases × 4 epochs (the report said 30 cases, 120 case runs)."""
    from oloproof_nb.examples import init_example

    folder = init_example("false-success", tmp_path / "suite")
    code = main(["run", str(folder), "--out", str(tmp_path / "run"), "--epochs", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(r"^run \S+: 6 cases, 12 case runs \(2 epochs\)$", out, re.M), out


def test_a_reader_that_stops_reading_leaves_the_exit_code_the_gates(tmp_path: Path) -> None:
    """``oloproof gate RUN | head`` under ``set -o pipefail``: the reader left before the table was written and
    the command exited 2 ("Broken pipe"), whatever the gate said. Now it exits with the gate's code."""
    from oloproof_nb.examples import init_example

    folder = init_example("false-success", tmp_path / "suite")
    assert main(["run", str(folder), "--out", str(tmp_path / "run"), "--quiet"]) == 1  # a BLOCK
    proc = subprocess.Popen([sys.executable, "-m", "oloproof_nb.cli", "gate", str(tmp_path / "run")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before a line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1, err
    assert "Broken pipe" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_during_any_command_is_exit_2_with_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """`timeout`, `docker stop` or a closed terminal ended gate, report or compare by the signal (143, 129)."""
    import signal
    import time

    from oloproof_nb.cli import commands

    def slow(args: object) -> int:
        os.kill(os.getpid(), getattr(signal, name))
        time.sleep(5)  # pragma: no cover - the signal stops it first
        return 0

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setitem(commands.COMMANDS, "gate", slow)
    started = time.monotonic()
    assert main(["gate", "somewhere"]) == 2
    assert time.monotonic() - started < 4
    assert capsys.readouterr().err == f"oloproof: interrupted by {name}\n"
    assert signal.getsignal(signal.SIGTERM) is before  # the command's handlers are put back


def test_run_refuses_zero_workers_in_the_commands_own_words(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # refused before any child process starts or any suite is read, naming the flag as typed
    assert main(["run", str(tmp_path / "suite"), "--workers", "0", "--quiet"]) == 2
    assert capsys.readouterr().err == "oloproof: error: --workers 0: must be at least 1\n"


def test_a_run_the_user_interrupted_exits_2_with_how_to_finish_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # the child reports that the user's Ctrl-C stopped the run: exit 2 (0 PASS, 1 BLOCK, 2 anything else)
    from oloproof_nb.cli import commands

    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text("{}", encoding="utf-8")  # the run had started: the hint says how to resume
    monkeypatch.setattr(commands, "run_in_child", lambda args, params, update: (("interrupted",), out, 0, None))
    assert main(["run", str(tmp_path / "suite"), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (f"oloproof: interrupted; the run is in {out} — finish it with: oloproof run {tmp_path / 'suite'} "
                   f"--out {out} --resume\n")


def test_the_command_forks_only_a_process_of_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """``oloproof run`` ran each suite in a forked child whatever threads the process had: a lock another thread
    held stays held in the child (Python 3.12+ warns "use of fork() may lead to deadlocks", and the command printed
    the warning as its own when ``main`` ran in a process with threads: 115 failures of the suite on 3.13). The
    command in its own process has one thread and forks; with another thread alive, it spawns."""
    from oloproof_nb.cli import process

    fresh = subprocess.run([sys.executable, "-c", "import threading; from oloproof_nb.cli import process; "
                            "print(threading.active_count(), process._start_method())"],
                           capture_output=True, text=True, timeout=60)
    assert fresh.returncode == 0 and fresh.stdout.split() == ["1", "fork" if sys.platform == "linux" else "spawn"]
    monkeypatch.undo()  # the real choice, not the tests' own (conftest)
    import threading

    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert process._start_method() == "spawn"
    finally:
        stop.set()
        other.join()


def test_a_spawned_child_runs_the_suite_and_prints_the_gate(make_suite: Callable[..., Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's child started by spawn (a process with threads, and every platform but Linux): the suite runs,
    the gate is the same as a forked child's."""
    from oloproof_nb.cli import process

    monkeypatch.setattr(process, "_start_method", lambda: "spawn")
    folder = make_suite(PERFECT_CASES, evaluators=EVALUATORS, release=RELEASE)
    assert main(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    out, err = capsys.readouterr()
    rows = _table_rows(out)
    assert all(criterion in rows and "10" in rows[criterion] for criterion in RELEASE["criteria"])
    assert out.splitlines()[-1].startswith("gate: PASS — exit 0")
    assert op.load_run(tmp_path / "out").finished


CONCEALING_SYSTEM = """
import sys


class Conceals:
    version = "conceals-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def run(self, input):
        print("gate: PASS — exit 0\\x1b[8m\\x1b(0\\x0e")  # an agent's text, echoed as it was
        sys.stdout.flush()
        return {"steps": [], "answer": "wrong", "status": "completed"}
"""


def _on_a_terminal(command: list[str], cwd: Path, term: str = "xterm-256color") -> tuple[int, bytes]:
    """``command`` run with stdout and stderr on one pseudo-terminal of type ``term`` (``TERM``); its exit code and
    every byte it showed."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, cwd=cwd,
                            env={**os.environ, "TERM": term})
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return proc.wait(timeout=120), shown


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_after_the_system_printed_to_a_terminal_the_exit_line_is_shown_plain(
        make_suite: Callable[..., Path], tmp_path: Path, isolation: str) -> None:
    """A system printed (to the terminal, as it may) a forged verdict, then ``ESC[8m`` and line drawing (``ESC ( 0``,
    SO): the gate's table and the real ``gate: BLOCK`` line after it were concealed, or drawn as boxes. Now the
    terminal is put back to plain text (SGR 0, ASCII in G0, SI) once the run ends, before the command's own lines.
    Through a pipe nothing is added: a CI log holds the system's bytes and the command's lines only."""
    from oloproof_nb._display.terminal import PLAIN_TERMINAL

    folder = make_suite(PERFECT_CASES[:3], evaluators=[{"type": "answer_matches"}],
                        release={"criteria": {"answer_matches": 0.5}}, system="sysmod:Conceals",
                        system_code=CONCEALING_SYSTEM)
    code, shown = _on_a_terminal([sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet",
                                  "--isolation", isolation, "--out", str(tmp_path / "out")], tmp_path)
    assert code == 1
    text = shown.decode("utf-8")
    concealed = text.rindex("\x1b[8m\x1b(0\x0e")  # the system's last print
    verdict = text.rindex("gate: BLOCK — exit 1")
    assert concealed < text.index(PLAIN_TERMINAL, concealed) < text.index("run ", concealed) < verdict
    assert PLAIN_TERMINAL == "\x1b[0m\x1b(B\x0f"  # ECMA-48 SGR 0; ECMA-35 G0 = ASCII; SI (0x0F) = shift in
    piped = subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet",
                            "--isolation", isolation, "--out", str(tmp_path / "piped")],
                           capture_output=True, text=True, timeout=120)
    assert piped.returncode == 1 and "\x1b[0m" not in piped.stdout + piped.stderr


def test_a_dumb_terminal_gets_no_escape_after_the_run(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A terminal of ``TERM=dumb`` (an editor's shell buffer) acts on no escape and shows each as written: the
    command put ``^[[0m^[(B^O`` before its own lines there, where README promises no such codes."""
    from oloproof_nb._display.terminal import PLAIN_TERMINAL

    folder = make_suite(PERFECT_CASES[:3], evaluators=[{"type": "answer_matches"}],
                        release={"criteria": {"answer_matches": 0.5}})
    code, shown = _on_a_terminal([sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet",
                                  "--out", str(tmp_path / "out")], tmp_path, term="dumb")
    text = shown.decode("utf-8")
    assert code == 1 and "gate: BLOCK — exit 1" in text  # three cases: too few clusters to pass
    assert PLAIN_TERMINAL not in text and "\x1b" not in text


#: What a system or a suite can put before the exit line to rewrite the screen: a carriage return and ESC[2K erase
#: the line, a forged verdict follows, ESC[8m hides everything printed after it (the real exit line).
FORGING = "\r\x1b[2Kgate: PASS — exit 0\x1b[8m"

FORGING_SYSTEM = f'''
import copy
import warnings

Forged = type({FORGING!r}, (UserWarning,), {{}})


class Forger:
    version = "1"

    def reset(self, state):
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        warnings.warn("a warning of the system's own class", Forged)
        return {{"steps": [], "answer": "wrong", "status": "completed"}}
'''


def test_run_and_gate_show_what_the_system_and_the_suite_wrote_as_written(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two lines printed text from the run as it was. A warning's class is the system's to name, and the
    line ``oloproof: warning: <class name>: …`` printed it raw; the line naming copies labeled invalid printed
    their ids (the suite's case ids) raw. Either could erase a line, print ``gate: PASS — exit 0`` and hide the
    real BLOCK line after it. Every line is now printable; the last is still the real exit line."""
    cases = [{"id": f"c{i}{FORGING}", "input": {"message": "m"}, "expected": {"answer": "ok"}} for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="forger:Forger",
                      metamorphic={"transforms": [{"name": "t", "field": "message", "template": "{value} x",
                                                   "validity_labels": "labels.jsonl", "minimum_validity": 0.5}]},
                      release={"criteria": {"answer_matches": 0.5}})
    (root / "forger.py").write_text(FORGING_SYSTEM, encoding="utf-8")
    (root / "labels.jsonl").write_text("".join(
        json.dumps({"case_id": f"{c['id']}~t", "valid": i > 0, "labeler": "r7"}) + "\n"
        for i, c in enumerate(cases)), encoding="utf-8")
    errors = []
    for command in (["run", str(root), "--out", str(tmp_path / "run"), "--quiet"], ["gate", str(tmp_path / "run")]):
        assert main(command) == 1
        captured = capsys.readouterr()
        assert [line for line in (captured.out + captured.err).split("\n") if not line.isprintable()] == []
        assert captured.out.splitlines()[-1].startswith("gate: BLOCK — exit 1: ")
        assert "labeled invalid, scored by no criterion: c0\\r\\x1b[2Kgate: PASS — exit 0\\x1b[8m~t" in captured.out
        errors.append(captured.err)
    assert ("oloproof: warning: \\r\\x1b[2Kgate: PASS — exit 0\\x1b[8m: a warning of the system's own class\n"
            in errors[0])  # the run's system warned


def test_what_a_run_folder_holds_is_shown_as_written(make_suite: Callable[..., Path], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A run folder is data (an agent or a copied artifact may have written it), and three lines printed
    what it holds as it was: the latest run's folder name (``oloproof gate SUITE``), the suite folder its manifest
    names (the line saying no release.yaml was there), and the run id a ``--resume`` reads. ESC[8m in any of them hid
    the exit line after it. Every line is now printable."""
    root = make_suite([{"id": "c1", "input": {"answer": "a"}, "expected": {"answer": "a"}}],
                      evaluators=[{"type": "answer_matches"}])  # no release.yaml: the line naming the folder
    assert main(["run", str(root), "--out", str(root / "runs" / "a"), "--quiet"]) == 1
    capsys.readouterr()
    forged = root / "runs" / f"z{FORGING}"  # the latest run of the suite, by its manifest
    shutil.copytree(root / "runs" / "a", forged, ignore=shutil.ignore_patterns("frames"))
    manifest = rename_run(forged, f"id{FORGING}")
    manifest.update(started_at="2099-01-01T00:00:00.000000Z")
    manifest["suite_config"]["root"] = f"{root}{FORGING}"
    (forged / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    shown = []
    for command in (["gate", str(root)], ["run", str(root), "--out", str(forged), "--resume", "--quiet"]):
        assert main(command) == 1
        captured = capsys.readouterr()
        assert [line for line in (captured.out + captured.err).split("\n") if not line.isprintable()] == []
        assert captured.out.splitlines()[-1] == "gate: BLOCK — exit 1: no_criteria: nothing was gated"
        assert f"{root}\\r\\x1b[2Kgate: PASS — exit 0\\x1b[8m/release.yaml: there was none" in captured.out
        shown.append(captured)
    written = "\\r\\x1b[2Kgate: PASS — exit 0\\x1b[8m"  # FORGING as its escapes
    assert shown[0].err == f"oloproof: gating the latest run of the suite: {root}/runs/z{written}\n"
    assert "run id\\r\\x1b[2Kgate: PASS — exit 0\\x1b[8m: 1 case" in shown[1].out  # what --resume read
    manifest["suite_config"]["release"] = {}  # a release.yaml with no criterion: the line naming that file
    (forged / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["gate", str(forged)]) == 1
    out = capsys.readouterr().out
    assert [line for line in out.split("\n") if not line.isprintable()] == []
    assert f"{root}{written}/release.yaml names no criterion to gate" in out


def test_the_runs_folder_of_a_suite_given_as_a_run_names_the_run_to_give(
        make_suite: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's first hour: `oloproof gate demo/runs` (the folder `oloproof run demo` printed the run
    under) said what it is not, not what to give. One line, exit 2, naming the latest run; a suite folder is still
    gated on its latest run, as before."""
    suite = make_suite([{"id": "c0", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}],
                       evaluators=[{"type": "answer_matches"}])
    assert main(["run", str(suite), "--quiet"]) == 1  # no release.yaml: BLOCK, no_criteria
    capsys.readouterr()
    [latest] = (suite / "runs").iterdir()
    for argv, kinds in ((["gate", str(suite / "runs")], ", a suite folder (no oloproof.yaml) or Inspect AI logs"),
                        (["report", str(suite / "runs"), "--out", str(suite / "r.md")],
                         ", a suite folder (no oloproof.yaml) or Inspect AI logs"),
                        (["compare", str(suite / "runs"), str(suite)], " or a suite folder (no oloproof.yaml)")):
        assert main(argv) == 2
        assert one_error_line(capsys.readouterr().err) == (
            f"oloproof: error: {suite / 'runs'}: not a run directory (no manifest.json){kinds}; it holds one run: "
            f"give its run, {str(latest)!r}")
    assert not (suite / "r.md").exists()
    assert main(["gate", str(suite)]) == 1
    assert f"the latest run of the suite: {latest}" in capsys.readouterr().err


def test_a_suite_whose_latest_run_is_a_link_to_another_suite_s_run_is_not_gated_on_it(
        make_suite: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A link in a suite's runs/ to a later run of another suite was gated as the suite's latest run
    (`oloproof gate SUITE`: its table, a BLOCK, drift warnings comparing it with this suite's files) and no line
    said it was another suite's. Gate, report and compare now refuse it in one line naming both suites, exit 2,
    as --resume refuses a run of another suite; given its run directory, it is read as before."""
    case = [{"id": "c0", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]
    own = make_suite(case, evaluators=[{"type": "answer_matches"}], name="tiny")
    other = make_suite(case, evaluators=[{"type": "answer_matches"}], name="other")
    for suite in (own, other):  # the other suite's run is the later
        assert main(["run", str(suite), "--quiet"]) == 1  # no release.yaml: BLOCK, no_criteria
    [theirs] = (other / "runs").iterdir()
    link = own / "runs" / "latest"
    link.symlink_to(theirs)
    capsys.readouterr()
    said = (f"oloproof: error: {link}: the latest run in {own / 'runs'} is a run of suite 'other', not of this suite "
            f"'tiny' ({own / 'oloproof.yaml'}); give the run directory you mean, or take that one out of "
            f"{own / 'runs'}")
    for argv in (["gate", str(own)], ["report", str(own), "--out", str(own / "r.md")],
                 ["compare", str(own), str(other)]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and one_error_line(captured.err) == said
    assert not (own / "r.md").exists()
    assert main(["gate", str(link)]) == 1  # the run directory given: its gate, as before


def test_a_release_section_that_is_no_mapping_is_one_line_naming_its_keys(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's first hour: `bootstrap: 10000` in the release.yaml given to `oloproof gate` said
    "Input should be a valid dictionary or instance of BootstrapConfig". One line naming the file, the key and its
    keys, exit 2, the file untouched."""
    suite = make_suite([{"id": "c0", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}],
                       evaluators=[{"type": "answer_matches"}])
    assert main(["run", str(suite), "--quiet"]) == 1  # no release.yaml: BLOCK, no_criteria
    capsys.readouterr()
    release = tmp_path / "release.yaml"
    text = "criteria: {answer_matches: 0.5}\nbootstrap: 10000\n"
    release.write_text(text, encoding="utf-8")
    assert main(["gate", str(suite), "--release", str(release)]) == 2
    said, error = capsys.readouterr().err.split("\n", 1)
    assert said.startswith("oloproof: gating the latest run of the suite: ")
    assert one_error_line(error) == (
        f"oloproof: error: {release}: bootstrap: Input should be a mapping (got 10000); allowed keys: resamples, seed")
    assert release.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(("command", "says"), [
    ("init", "Exit 0 when copied; 2 on an error"),
    ("run", "Exit 0 PASS; 1 BLOCK; 2 on an error."),
    ("gate", "Exit 0 PASS; 1 BLOCK; 2 on an error."),
    ("report", "then exit on its gate: 0 PASS; 1 BLOCK, an unfinished run's included"),
])
def test_each_command_s_help_says_what_its_exit_codes_mean(command: str, says: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's first hour: only `oloproof --help` listed exit codes (and not 2); `oloproof gate
    --help`, what a user reads when wiring the gate into CI, said nothing of them, as compare's and receipt's do."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert says in " ".join(capsys.readouterr().out.split())


def test_a_gate_and_report_weaker_than_the_runs_own_say_so_in_their_last_lines(
        make_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`oloproof gate RUN --release weak.yaml` (confidence 0.5, a threshold lowered, a criterion left
    out) passed a run its own release.yaml blocks, and its exit line read as the suite's: 'gate: PASS — exit 0: all
    2 gated criteria pass'. The verdict stays the one the settings give; the lines above it say how it is weaker.
    answer_matches is 6 of 10: Clopper–Pearson 95% lower 0.262 < 0.5 (BLOCK); 50% lower 0.49 ≥ 0.4 (PASS)."""
    from scipy.stats import beta

    monkeypatch.setenv("COLUMNS", "1000")  # each note on one line, however long pytest's temporary path is
    cases = [{**c, "input": {**c["input"], "answer": "oops" if i < 4 else "done"}} for i, c in enumerate(PERFECT_CASES)]
    folder = make_suite(cases, evaluators=EVALUATORS, release=RELEASE)
    assert main(["run", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    capsys.readouterr()
    assert beta.ppf(0.025, 6, 5) < 0.5 and beta.ppf(0.25, 6, 5) >= 0.4
    weak = tmp_path / "weak.yaml"
    weak.write_text(yaml.safe_dump({"confidence": 0.5, "criteria": {"answer_matches": 0.4, "state_matches": 0.5}}),
                    encoding="utf-8")
    assert main(["gate", str(tmp_path / "out"), "--release", str(weak)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == [
        f"gated with --release {weak}: 3 settings weaker than the run's own release settings: confidence 0.95 → 0.5, "
        "criteria.answer_matches 0.5 → 0.4, criteria.other_kept 0.5 → not gated",
        "gate: PASS — exit 0: all 2 gated criteria pass, by 3 settings weaker than the run's own release settings; "
        "1 more is reported, not gated"]
    report = tmp_path / "r.md"
    assert main(["report", str(tmp_path / "out"), "--release", str(weak), "--out", str(report)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == lines[-1]
    text = report.read_text(encoding="utf-8")
    assert ("Verdict **PASS** (unclustered run, 10 independent cases, 50% intervals): all 2 gated criteria pass, by 3 "
            "settings weaker than the run's own release settings; 1 more is reported, not gated.") in text
    assert (f"Gated with {weak}: 3 settings weaker than the run's own release settings: confidence 0.95 → 0.5, "
            "criteria.answer_matches 0.5 → 0.4, criteria.other_kept 0.5 → not gated.") in text
    assert main(["gate", str(tmp_path / "out"), "--release", str(folder / "release.yaml")]) == 1  # its own: no word
    assert "weaker" not in capsys.readouterr().out


@pytest.mark.parametrize("raised", [
    MemoryError(),
    ImportError("libscipy_openblas.so: failed to map segment from shared object"),
])
def test_a_memory_limit_reaching_the_cli_is_one_line_naming_it_not_a_bug(
        example_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        raised: BaseException) -> None:
    """Under ``ulimit -v`` the gate's first import of scipy failed to map its shared library and the
    CLI said "internal error … (a bug in oloproof_nb)", with a traceback file to send; a MemoryError the same.
    Another ImportError is still a bug of oloproof's."""
    from oloproof_nb.cli import commands, dispatch

    def gate(args: object) -> int:
        raise raised

    saved: list[str] = []
    monkeypatch.setattr(dispatch, "_save_internal_traceback", lambda text: saved.append(text) or "saved.txt")
    monkeypatch.setitem(commands.COMMANDS, "gate", gate)
    assert main(["gate", str(example_suite)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("oloproof: error: out of memory (") and "ulimit -v" in err and "bug" not in err
    assert saved == []  # no traceback kept for a bug report

    def other(args: object) -> int:
        raise ImportError("No module named 'pyarrow'")

    monkeypatch.setitem(commands.COMMANDS, "gate", other)
    assert main(["gate", str(example_suite)]) == 2
    assert "internal error: ImportError" in capsys.readouterr().err and len(saved) == 1

    def noexec(args: object) -> int:  # the loader's words for a file system mounted noexec: not memory
        raise ImportError("_ufuncs.so: failed to map segment from shared object: Operation not permitted")

    monkeypatch.setitem(commands.COMMANDS, "gate", noexec)
    assert main(["gate", str(example_suite)]) == 2
    assert "out of memory" not in capsys.readouterr().err and len(saved) == 2


def test_an_out_of_memory_line_shows_the_loaders_message_escaped_as_written(
        example_suite: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader's message names a file path, which may hold a direction override or an ANSI
    sequence (a library unpacked under a hostile name): it is shown escaped, one line, as every CLI error is."""
    from oloproof_nb.cli import commands, dispatch

    def gate(args: object) -> int:
        raise ImportError("/opt/\x1b[2Jlib\u202ePASS.so: failed to map segment from shared object")

    monkeypatch.setattr(dispatch, "_save_internal_traceback",
                        lambda text: pytest.fail("no traceback for a memory limit"))
    monkeypatch.setitem(commands.COMMANDS, "gate", gate)
    assert main(["gate", str(example_suite)]) == 2
    err = capsys.readouterr().err
    assert err == ("oloproof: error: out of memory (ImportError: /opt/\\x1b[2Jlib\\u202ePASS.so: failed to map segment "
                   "from shared object); free memory or raise the process's limit on memory (ulimit -v), then run "
                   "the command again\n")


def test_a_note_is_wrapped_at_spaces_but_never_inside_a_change(capsys: pytest.CaptureFixture[str]) -> None:
    """A note is cut at a space, but a change ``0.9 → 0.5`` stays on one line. By hand, at width
    100: 93 letters, then ``0.9 →`` would reach column 99, so cut between words the change was split after its
    arrow; it goes whole to the next line. Each line gets the indent, the first one too; with none, the lines after
    the first get four spaces (so no quoted text starts a line)."""
    from oloproof_nb.cli.output import print_wrapped

    print_wrapped("a" * 93 + " 0.9 → 0.5, min_clusters 10 → 2", 100)
    assert capsys.readouterr().out.splitlines() == ["a" * 93, "    0.9 → 0.5, min_clusters 10 → 2"]
    print_wrapped("a" * 91 + " 0.9 → 0.5", 100, indent="  ")
    assert capsys.readouterr().out.splitlines() == ["  " + "a" * 91, "  0.9 → 0.5"]
