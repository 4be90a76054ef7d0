"""Nothing the user wrote is modified: suite files, labels and the bundled examples are read-only inputs.

A run may create ``runs/`` (its run directory) and ``.oloproof/`` (the replay
cache) in the suite folder and nothing else: every other file keeps its bytes
and its mode, and no other file or folder appears — not even ``__pycache__``
from importing the suite's system, which these tests allow Python to write
(the test environment sets PYTHONDONTWRITEBYTECODE, so it is lifted here).
An input error changes nothing at all. Tests run as root, so read-only modes
cannot stop a write: file hashes are compared instead.
"""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path

import pytest
from _reliability_systems import (
    cli_env,
    main_in_process,
    make_case,
    one_error_line,
    run_cli,
    tree_snapshot,
    write_suite,
)

import oloproof_nb as op
from oloproof_nb import cli
from oloproof_nb.examples import init_example

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def bytecode_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let imports write __pycache__ as they would on a user's machine."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")
            if p.relative_to(root).parts[0] not in ("runs", ".oloproof")}


def _make_read_only(root: Path) -> None:
    for p in root.rglob("*"):
        if p.is_file():
            p.chmod(0o444)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(args)
    return code, capsys.readouterr().err


def _new_top_level(root: Path, before: dict[str, str]) -> set[str]:
    return {p.name for p in root.iterdir()} - {Path(k).parts[0] for k in before}


@pytest.mark.parametrize(("example", "own_files"), [("stateful-agent", ["labels/injected.jsonl", "refund_desk.py"]),
                                                    ("false-success", ["report_writer.py", "checks.py"]),
                                                    ("wrapped-benchmark", ["labels/polite.jsonl", "bench/agent.py"])])
def test_running_an_example_writes_only_runs_and_the_replay_cache(tmp_path: Path, example: str, own_files: list[str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    shipped = {"examples": tree_snapshot(REPO / "examples", skip=()), "labels": tree_snapshot(REPO / "labels", skip=())}
    suite = tmp_path / "demo"
    assert _cli(["init", "--example", example, str(suite)], capsys)[0] == 0
    _make_read_only(suite)
    before, modes = tree_snapshot(suite), _modes(suite)
    assert all(name in before for name in own_files)

    for _ in range(2):  # the second run reads the replay cache the first one wrote
        code, err = _cli(["run", str(suite), "--quiet"], capsys)
        assert code in (0, 1), err
        assert tree_snapshot(suite) == before
        assert _modes(suite) == modes
        assert _new_top_level(suite, before) <= {"runs", ".oloproof"}
    assert len(list((suite / "runs").iterdir())) == 2
    # the bundled example the copy came from is untouched as well
    assert tree_snapshot(REPO / "examples", skip=()) == shipped["examples"]
    assert tree_snapshot(REPO / "labels", skip=()) == shipped["labels"]


def test_the_console_script_leaves_no_pycache_in_the_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "demo"
    assert main_in_process(capsys, "init", "--example", "stateful-agent", str(suite)).returncode == 0
    _make_read_only(suite)
    before = tree_snapshot(suite)
    env = {k: v for k, v in cli_env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = run_cli("run", str(suite), "--quiet", "--workers", "2", env=env)
    assert proc.returncode in (0, 1), proc.stderr
    assert tree_snapshot(suite) == before
    assert _new_top_level(suite, before) <= {"runs", ".oloproof"}
    assert not list(suite.rglob("__pycache__"))


def test_a_run_elsewhere_writes_only_its_out_dir_and_the_cache(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path / "suite", [make_case(f"c{i}") for i in range(3)])
    _make_read_only(suite)
    before = tree_snapshot(suite, skip=())
    code, err = _cli(["run", str(suite), "--out", str(tmp_path / "elsewhere"), "--quiet"], capsys)
    assert code in (0, 1), err
    assert tree_snapshot(suite, skip=(".oloproof",)) == before
    assert (tmp_path / "elsewhere" / "cases.jsonl").is_file()


# -- error paths change nothing at all -------------------------------------------------------------------

def _break(suite: Path, how: str) -> None:
    if how == "unknown key in oloproof.yaml":
        (suite / "oloproof.yaml").write_text((suite / "oloproof.yaml").read_text() + "colour: blue\n")
    elif how == "bad case line":
        (suite / "cases.jsonl").write_text((suite / "cases.jsonl").read_text() + "{not json\n")
    elif how == "bad label line":
        (suite / "labels" / "injected.jsonl").write_text('{"case_id": "ord-001~injected"}\n')
    elif how == "bad release.yaml":
        (suite / "release.yaml").write_text("criteria: {no_such_criterion: 0.9}\n")
    elif how == "system fails to import":
        (suite / "refund_desk.py").write_text("raise ImportError('the agent needs a key')\n")
    elif how == "system constructor raises":
        path = suite / "refund_desk.py"
        path.write_text(path.read_text().replace("        self.sandbox = Sandbox()",
                                                 "        raise RuntimeError('no sandbox today')"))


@pytest.mark.parametrize("how", ["unknown key in oloproof.yaml", "bad case line", "bad label line",
                                 "bad release.yaml", "system fails to import", "system constructor raises"])
def test_an_input_error_changes_nothing(tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]) -> None:
    suite = init_example("stateful-agent", tmp_path / "demo")
    _break(suite, how)
    _make_read_only(suite)
    before = tree_snapshot(suite, skip=())
    code, err = _cli(["run", str(suite), "--quiet"], capsys)
    assert code == 2
    assert str(suite) in one_error_line(err)
    assert tree_snapshot(suite, skip=()) == before  # not even runs/ or .oloproof/
    assert not (suite / "runs").exists()


def test_init_into_a_non_empty_folder_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "notes.md").write_text("my notes", encoding="utf-8")
    before = tree_snapshot(tmp_path, skip=())
    code, err = _cli(["init", "--example", "stateful-agent", str(dest)], capsys)
    assert code == 2
    assert str(dest) in one_error_line(err)
    assert tree_snapshot(tmp_path, skip=()) == before


def test_a_hanging_and_raising_system_changes_no_suite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    release = tmp_path / "release-hangs"
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    cases = [make_case("c0", op="hang"), make_case("c1", op="raise"), make_case("c2")]
    suite = write_suite(tmp_path / "suite", cases, case_timeout_s=0.3)
    _make_read_only(suite)
    before = tree_snapshot(suite)
    try:
        code, err = _cli(["run", str(suite), "--quiet"], capsys)
    finally:
        release.write_text("done", encoding="utf-8")
    assert code in (0, 1), err
    assert tree_snapshot(suite) == before
    assert _new_top_level(suite, before) <= {"runs", ".oloproof"}


# -- the values the user wrote are not mutated in memory either -------------------------------------------

MUTATOR = '''
class Mutator:
    """Scribbles over the state it is reset to and the input it is given (a careless sandbox)."""

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state
        state["accounts"]["bystander"] = -1
        state.setdefault("scribbled", []).append(1)

    def run(self, input):
        input["cid"] = "scribbled"
        input.clear()
        return {"steps": [], "answer": "done"}

    def snapshot(self):
        return self.state
'''


def test_a_system_that_mutates_its_arguments_changes_no_case(tmp_path: Path) -> None:
    cases = [make_case(f"c{i}") for i in range(3)]
    suite_dir = write_suite(tmp_path / "suite", cases, system="mutator:Mutator")
    (suite_dir / "mutator.py").write_text(MUTATOR, encoding="utf-8")
    original = [json.loads(line) for line in (suite_dir / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    suite = op.load_suite(suite_dir)
    run = op.run(suite, out=tmp_path / "run", progress=False)

    for case, raw in zip(suite.cases, original, strict=True):
        assert case.input == raw["input"]
        assert case.initial_state == raw["initial_state"]
    stored = [rec["case"] for rec in run.records]
    assert [c["input"] for c in stored] == [raw["input"] for raw in original]
    assert [c["initial_state"] for c in stored] == [raw["initial_state"] for raw in original]
    # the check compares against the case as written, so the scribble on the bystander is seen
    untouched = run.verdicts[run.verdicts["criterion"] == "bystander_untouched"]
    assert list(untouched["verdict"]) == ["fail"] * 3
    changes = run.changes[run.changes["path"] == "accounts.bystander"]
    assert list(changes["before"]) == [5] * 3 and list(changes["after"]) == [-1] * 3


# -- secrets ------------------------------------------------------------------------------------------------

def test_an_hmac_key_never_reaches_the_run_directory_or_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Outcome digests keyed from the environment: the key is used, and written nowhere."""
    key = "k3y-5ecret-value-9f2e"
    monkeypatch.setenv("OLOPROOF_TEST_DIGEST_KEY", key)
    suite = init_example("false-success", tmp_path / "fs")
    rows = [json.loads(line) for line in (suite / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["outcome"]["digest_key_env"] = "OLOPROOF_TEST_DIGEST_KEY"
    (suite / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = cli.main(["run", str(suite), "--out", str(tmp_path / "run")])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    run = op.load_run(tmp_path / "run")
    assert set(run.receipts["digest_kind"].dropna()) == {"hmac-sha256"}  # the key was used
    assert "locator" not in run.receipts.columns
    for text in (out, err):
        assert key not in text
    for path in [*(tmp_path / "run").rglob("*"), *suite.rglob("*")]:
        if path.is_file():
            data = path.read_bytes()
            assert key.encode() not in data, path
            assert key.encode().hex().encode() not in data, path


@pytest.mark.parametrize(("command", "release"), [
    ("gate", "criteria: {no_such_criterion: 0.9}\n"), ("gate", "criteria: {answer_matches: 1.5}\n"),
    ("report", "criteria: {no_such_criterion: 0.9}\n"), ("report", "criteria: {answer_matches: 1.5}\n"),
    ("compare", "regression: {criteria: [no_such_criterion]}\n"), ("compare", "criteria: {answer_matches: 1.5}\n"),
])
def test_a_bad_release_changes_no_run_folder(tmp_path: Path, command: str, release: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A run folder without its columnar copy (a run copied without frames/, or written by an older version):
    opening the run builds the copy, and `gate --release bad.yaml` wrote frames/ before it said the release was
    wrong. The release is checked against the runs' manifests first."""
    runs = []
    for name in ("a", "b"):
        run = op.run(init_example("false-success", tmp_path / f"suite-{name}"), out=tmp_path / name, progress=False)
        shutil.rmtree(run.directory / "frames")
        runs.append(run.directory)
    bad = tmp_path / "bad.yaml"
    bad.write_text(release, encoding="utf-8")
    before = tree_snapshot(tmp_path, skip=())
    args = {"gate": ["gate", str(runs[0])], "report": ["report", str(runs[0]), "--out", str(tmp_path / "r.md")],
            "compare": ["compare", *map(str, runs)]}[command]
    code, err = _cli([*args, "--release", str(bad)], capsys)
    assert code == 2
    assert str(bad) in one_error_line(err)
    assert tree_snapshot(tmp_path, skip=()) == before  # no frames/, no report


def test_a_refused_baseline_changes_no_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`report --baseline B --release bad.yaml` opened the baseline (building its frames/) before it checked the
    release, and a baseline judged by another check was refused only after both runs were opened. Both are
    decided from the manifests now."""
    suite = init_example("false-success", tmp_path / "suite")
    run = op.run(suite, out=tmp_path / "run", progress=False).directory
    idle = op.baseline(suite, progress=False).run.directory
    (suite / "checks.py").write_text((suite / "checks.py").read_text(encoding="utf-8") + "\n# edited\n",
                                     encoding="utf-8")
    other = op.run(suite, out=tmp_path / "other", progress=False).directory  # judged by the edited validators
    for folder in (run, idle, other):
        shutil.rmtree(folder / "frames")
    bad = tmp_path / "bad.yaml"
    bad.write_text("criteria: {no_such_criterion: 0.9}\n", encoding="utf-8")
    before = tree_snapshot(tmp_path, skip=())
    code, err = _cli(["report", str(run), "--out", str(tmp_path / "r.md"), "--baseline", str(idle),
                      "--release", str(bad)], capsys)
    assert code == 2 and str(bad) in one_error_line(err)
    code, err = _cli(["gate", str(other), "--baseline", str(idle)], capsys)
    assert code == 2 and "a baseline that judges outcome_verified with another check" in one_error_line(err)
    assert tree_snapshot(tmp_path, skip=()) == before
