"""The sentences README, benchmarks/README.md and the docstrings gained on 5 Dec 2026 (after ``e1abdd1``)
that no test reproduced, and one that was false.

Each test names the sentence it pins; the figures are counted by hand or hashed here, never read back from the code
that made them. The claims other tests already reproduce (the tests README names) are not repeated here.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._config.imports import MAX_IMPORT_SCAN_BYTES, import_system, suite_imports
from oloproof_nb.cli import main

ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "oloproof_nb.cli"]
PREFIX = "oloproof: error: "
LIMIT = 2000  # README "Security and reliability": "no message exceeds 2,000"; not read from errors.MESSAGE_LIMIT

# --- README "Security and reliability": "No error quotes more than 200 characters of a value (`errors.quote`), and
# no message exceeds 2,000 (a longer one is cut in the middle …)". False, until fixed, for characters a
# terminal acts on: the message was cut to 2,000 characters, then each control character escaped to 4 to 10
# (``\x1b``, ``\U0010ffff``), so `oloproof gate x --bogus <5,000 ESC>` printed a line of 7,947 characters.


@pytest.mark.parametrize("char", ["\x1b", "\n", "\u202e"])
def test_an_unrecognized_argument_of_control_characters_is_cut_after_it_is_escaped(tmp_path: Path,
                                                                                   char: str) -> None:
    done = subprocess.run([*COMMAND, "gate", "x", "--bogus", char * 5000], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, check=False)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    help_text = " (see `oloproof gate --help`)"
    assert line.startswith(PREFIX + "unrecognized arguments: --bogus ") and line.endswith(help_text)
    message = line[len(PREFIX):-len(help_text)]
    assert len(message) == LIMIT  # for ESC was 7,901: 32 + 1 + 1,967 ESC of 4 characters, cut before escaping
    assert all(ch.isprintable() for ch in line) and "…" in message


def test_a_path_of_control_characters_too_long_for_the_system_is_one_line_of_2000(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``File name too long`` names the path: 3,000 control characters, 12,000 once escaped, cut to 2,000."""
    monkeypatch.chdir(tmp_path)
    assert main(["gate", "\x01" * 3000]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    message = err.rstrip("\n")[len(PREFIX):]
    assert err.startswith(PREFIX + "\\x01\\x01") and message.endswith(": File name too long")
    assert len(message) == LIMIT


# --- README "`oloproof receipt` as a completion hook": with --json "every exit 2 prints one such object, an argument
# error … as "usage error", a stop as "interrupted", any other as "error" or "internal error"". The command's own
# --help said "any other error: "error"" and left out "internal error" (since fixed).


def test_the_receipt_help_names_every_kind_of_json_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["receipt", "--help"])
    assert exited.value.code == 2  # a completion hook's help verifies nothing
    text = " ".join(capsys.readouterr().err.split())
    for kind in ('"contract error"', '"usage error"', '"interrupted"', '"internal error"', '"error"'):
        assert kind in text, kind


# --- README section 3: "The import statements of a module file over 1 MiB … are not read …: the file itself counts
# by its bytes, the modules it names among its values are followed, but a helper it takes only a value from is not,
# and a `UserWarning` names the file and the cap". tests/_config/test_imports_size_cap.py pins the helper taken by
# value; the module held as a value, and the warning's once-per-content (imports.py: "once per file content, as this is
# cached"), were not.

DESK = ("import tools_c14_mod\nfrom rules_c14_val import LIMIT\n\n\nclass S:\n    def run(self, x):\n"
        "        return x <= LIMIT and tools_c14_mod.ok()\n")


def test_a_module_over_the_cap_still_follows_the_modules_it_holds(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "tools_c14_mod.py").write_text("def ok():\n    return True\n", encoding="utf-8")
    (suite / "rules_c14_val.py").write_text("LIMIT = 3\n", encoding="utf-8")
    desk = suite / "desk_c14.py"
    pad = MAX_IMPORT_SCAN_BYTES + 1 - len(DESK.encode("utf-8")) - 2
    desk.write_bytes((DESK + "#" + "x" * pad + "\n").encode("utf-8"))
    assert desk.stat().st_size == 1_048_577  # 1 MiB and one byte, counted by hand
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cls = import_system(suite, "desk_c14:S")
            assert cls().run(3) is True
            first = suite_imports(suite, [cls])
            again = suite_imports(suite, [cls])
    finally:
        for name in ("desk_c14", "tools_c14_mod", "rules_c14_val"):
            sys.modules.pop(name, None)
    # the module object `tools_c14_mod` is a value of the desk's module: followed; `rules_c14_val` gave a number only
    assert sorted(p.name for p in first) == ["desk_c14.py", "tools_c14_mod.py"]
    assert first[desk] == hashlib.sha256(desk.read_bytes()).hexdigest()
    assert again == first
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(said) == 1 and said[0].startswith(f"{desk}: 1,048,577 bytes, over the 1,048,576 (1 MiB)")


# --- README section 7 (op.export_table): "a named pipe there is replaced, a symbolic link to a file is followed,
# and a folder there, or a link to one, is refused". The pipe and the folder are pinned in
# tests/_display/test_export_existing_path.py; the link to a file was not.


def test_export_table_follows_a_link_to_a_file_and_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.csv"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert op.export_table(pd.DataFrame({"a": [1.5, 2.0]}), link) == link
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == "a\n1.5\n2.0\n"  # the CSV written by hand
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real.csv"]  # no temporary file left


# --- README "The command line": "`--out runs/v2` is a run folder as before" (beside the refusal of `--out runs`).


def test_out_runs_v2_is_a_run_folder_the_gate_finds(make_suite: Callable[..., Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    cases = [{"id": "w00", "input": {"answer": "done", "writes": []}, "initial_state": {"acct": {"a": 0}},
              "expected": {"answer": "done"}}]
    root = make_suite(cases)
    assert main(["run", str(root), "--out", str(root / "runs"), "--quiet"]) == 2
    capsys.readouterr()
    code = main(["run", str(root), "--out", str(root / "runs" / "v2"), "--quiet"])
    assert code in (0, 1)
    assert (root / "runs" / "v2" / "manifest.json").is_file()
    assert sorted(os.listdir(root / "runs")) == ["v2"]
    capsys.readouterr()
    assert main(["gate", str(root)]) == code  # the suite's latest run is the one in runs/v2
    assert "no run yet" not in capsys.readouterr().err


# --- README "The command line": "So is an `--out` that is the suite's `runs/` or `baselines/` folder itself, however
# it is spelt or linked". A `runs` that is itself a symbolic link (to a larger disk) was not covered: `--out
# SUITE/runs` made a run folder of the folder it links to, and `oloproof gate SUITE` said there was no run yet (since
# fixed).


@pytest.mark.parametrize("name", ["runs", "baselines"])
def test_out_naming_a_runs_folder_that_is_a_link_is_refused(make_suite: Callable[..., Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str], name: str) -> None:
    cases = [{"id": "w00", "input": {"answer": "done", "writes": []}, "initial_state": {"acct": {"a": 0}},
              "expected": {"answer": "done"}}]
    root = make_suite(cases)
    disk = tmp_path / "big-disk"
    disk.mkdir()
    (root / name).symlink_to(disk)
    for out in (root / name, disk):  # through the link, or the folder it links to
        assert main(["run", str(root), "--out", str(out), "--quiet"]) == 2
        [line] = capsys.readouterr().err.splitlines()
        assert line.startswith(f"oloproof: error: {out}: is the suite's {name}/ folder, which holds one folder per run")
    assert os.listdir(disk) == []  # was: manifest.json, cases.jsonl … of a run made in it
    assert main(["run", str(root), "--out", str(root / name / "v2"), "--quiet"]) in (0, 1)
    assert os.listdir(disk) == ["v2"]


# --- benchmarks/README.md §4, 5 Dec 14:30: "`frames.py --work-child /tmp/frames-keep/run-100000 --repeat 2` … 0.786
# and 0.784 s cold, 0.390 and 0.393 s warm, 587 and 589 MiB". The timings are not checked (a shared machine); the
# command is: it exists and prints one JSON object with a cold and a warm pass and a peak resident set.


def test_the_work_child_command_of_the_benchmark_prints_cold_warm_and_peak(make_suite: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    cases = [{"id": f"w{i:02d}", "input": {"answer": "done", "writes": []}, "initial_state": {"acct": {"a": i}},
              "expected": {"answer": "done"}} for i in range(3)]
    run = op.run(op.load_suite(make_suite(cases)), out=tmp_path / "run-3", progress=False)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "frames.py"), "--work-child",
                           str(run.directory), "--repeat", "2"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    body = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"cold", "warm", "peak", "base"} <= set(body)
    assert body["cold"]["rows_cases"] == 3 and body["warm"]["rows_cases"] == 3
    for part in ("load_run", "gate", "validity", "total"):
        assert body["cold"][part] > 0 and body["warm"][part] > 0
    assert body["cold"]["import"] > 0 and body["peak"] >= body["base"] > 0
