"""``oloproof gate RUN --json`` (and every exit 2 of ``gate`` and ``compare`` with ``--json``): one strict JSON object
on stdout, what the command prints for people on stderr, unchanged, and the exit code it has without ``--json``.

A CI job reading only the exit code could not tell which criterion blocked; the objects here are checked against
``op.gate(op.load_run(run))`` and by hand (``compare --json``'s verdicts: ``tests/cli/test_commands_compare.py``).
"""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import scipy.stats
from _json_output import assert_help_names, cell, one_object

import oloproof_nb as op
from oloproof_nb.cli import commands as cli_commands
from oloproof_nb.cli import main
from oloproof_nb.cli.parser import build_parser
from oloproof_nb.cli.process import Stopped

#: 24 cases the scripted system answers as expected: every row passes, one case a cluster.
PERFECT = [{"id": f"c{i:02d}", "input": {"answer": f"done {i}"}, "initial_state": {},
            "expected": {"answer": f"done {i}"}} for i in range(24)]


@pytest.fixture
def gated(make_suite: Callable[..., Path], tmp_path: Path) -> Callable[[float | None], Path]:
    """A finished run of :data:`PERFECT` whose release.yaml gates answer_matches at ``threshold`` (None: no
    criterion); state_matches is reported only."""
    def make(threshold: float | None) -> Path:
        criteria = {} if threshold is None else {"answer_matches": threshold}
        root = make_suite(PERFECT, release={"criteria": criteria})
        return op.run(op.load_suite(root), out=tmp_path / f"run-{threshold}", progress=False).directory

    return make


def _gate(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, one_object(out), err


@pytest.mark.parametrize(("threshold", "code", "verdict"), [(0.5, 0, "PASS"), (0.99, 1, "BLOCK")])
def test_the_gate_as_json_is_the_gate_computed_in_python(gated: Callable[[float | None], Path], threshold: float,
                                                         code: int, verdict: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run = gated(threshold)
    assert main(["gate", str(run)]) == code
    table_for_people = capsys.readouterr().out
    got, body, err = _gate(["gate", str(run), "--json"], capsys)
    assert got == code == body["exit"]
    assert err == table_for_people  # the table, its notes and the exit line, unchanged, on stderr
    loaded = op.load_run(run)
    g = op.gate(loaded)
    assert body["command"] == "gate" and body["verdict"] == verdict == g.verdict
    assert body["run_id"] == loaded.run_id and body["reason"] is None
    # one object per criterion, every column, each cell as the table holds it (NaN null)
    assert [row["criterion"] for row in body["criteria"]] == ["answer_matches", "state_matches"]
    assert [list(row) for row in body["criteria"]] == [list(g.table.columns)] * 2
    for row, (_, expected) in zip(body["criteria"], g.table.iterrows(), strict=True):
        assert row == {column: cell(value) for column, value in expected.items()}
    listed, reported = body["criteria"]
    assert reported["verdict"] == "REPORT_ONLY" and reported["threshold"] is None  # NaN -> null
    # by hand: 24 of 24 unclustered rows pass, so the 95% Clopper-Pearson lower bound is 0.025 ** (1 / 24)
    assert (listed["n"], listed["passed"], listed["threshold"]) == (24, 24, threshold)
    assert listed["ci_low"] == pytest.approx(0.025 ** (1 / 24), abs=1e-9)
    if verdict == "PASS":
        assert listed["verdict"] == "PASS" and listed["ci_low"] >= listed["threshold"]
    else:  # 0.857 < 0.99 <= 1: the interval holds the threshold
        assert listed["verdict"] == "INSUFFICIENT_EVIDENCE" and listed["reason"].startswith(
            "interval_includes_threshold;")


def test_a_block_without_a_criterion_says_its_reason(gated: Callable[[float | None], Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = gated(None)
    code, body, err = _gate(["gate", str(run), "--js"], capsys)  # argparse's abbreviation
    assert code == body["exit"] == 1 and body["verdict"] == "BLOCK"
    assert body["reason"] == "no_criteria: nothing was gated"
    assert all(row["verdict"] == "REPORT_ONLY" for row in body["criteria"])
    assert err.splitlines()[-1] == "gate: BLOCK — exit 1: no_criteria: nothing was gated"


def _json_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # an argument error: argparse exits
        code = exc.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert code == 2
    body = one_object(out)
    assert set(body) == {"error", "message"}
    return body, err


def test_every_exit_2_is_one_json_error_object(gated: Callable[[float | None], Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    body, err = _json_error(["gate", str(tmp_path / "nowhere"), "--json"], capsys)
    assert body["error"] == "error" and err == f"oloproof: error: {body['message']}\n"
    assert "nowhere: no such file or folder" in body["message"]
    run = str(gated(0.5))
    body, err = _json_error(["compare", run, run, "--json"], capsys)
    assert body["error"] == "error" and "the base and the candidate are the same run" in body["message"]
    # argument errors, the value of an option, an unknown option, a missing argument
    for argv, said in ((["gate", run, "--json", "--pass-threshold", "x"], "argument --pass-threshold"),
                       (["compare", run, run, "--json", "--bogus"], "unrecognized arguments: --bogus"),
                       (["compare", run, "--json"], "the following arguments are required: candidate_run")):
        body, err = _json_error(argv, capsys)
        assert body["error"] == "usage error" and said in body["message"], body
        assert err == f"oloproof: error: {body['message']}\n"
    # after `--` it is an argument, not the option: no JSON asked for, none printed
    with pytest.raises(SystemExit):
        main(["gate", run, "--", "--json"])
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(("raised", "kind"), [(KeyboardInterrupt(), "interrupted"),
                                              (RuntimeError("a bug"), "internal error")])
def test_a_stop_or_a_bug_is_a_json_error_too(gated: Callable[[float | None], Path], raised: BaseException, kind: str,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = gated(0.5)

    def stopped(*_: object, **__: object) -> None:
        raise raised

    monkeypatch.setattr(cli_commands, "print_case_errors", stopped)  # inside the gate's printing for people
    body, err = _json_error(["gate", str(run), "--json"], capsys)
    assert body["error"] == kind and err.strip().endswith(body["message"])


def test_a_stop_after_the_object_is_written_adds_no_second_one(gated: Callable[[float | None], Path],
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A SIGTERM as the command ends (a CI's timeout) is exit 2, as every stop; the gate's object is on stdout
    already. Before, ``{"error": "interrupted", …}`` followed it: two objects, and a job's ``json.load`` of stdout
    (README section 8) raised "Extra data"."""
    run = gated(0.99)
    written = cli_commands.print_json

    def then_stopped(result: dict[str, Any]) -> None:
        written(result)
        raise Stopped("SIGTERM")

    monkeypatch.setattr(cli_commands, "print_json", then_stopped)
    assert main(["gate", str(run), "--json"]) == 2
    out, err = capsys.readouterr()
    body = one_object(out)  # the gate's, alone
    assert body["command"] == "gate" and body["verdict"] == "BLOCK"
    assert err.splitlines()[-1] == "oloproof: interrupted by SIGTERM"
    # the next command in this process writes its own object: an error of its own is JSON again
    monkeypatch.undo()
    body, _ = _json_error(["gate", str(run / "nowhere"), "--json"], capsys)
    assert body["error"] == "error"


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), Stopped("SIGTERM")])
def test_a_receipt_stopped_while_verifying_counts_its_json_error_as_written(
        stop: KeyboardInterrupt, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof receipt --json`` stopped while it verifies prints its ``interrupted`` object,
    and that object is the command's one (:func:`json_written`): a SIGTERM as the command then ends (the console
    script's entry asks) adds no second object. Printed without the mark, stdout held two objects."""
    from oloproof_nb._run import observe
    from oloproof_nb.cli import output as cli_output

    def stopped(path: Path) -> None:
        raise stop

    monkeypatch.setattr(observe, "verify_contract_file", stopped)
    assert main(["receipt", "c.json", "--json"]) == 2
    name = "SIGTERM" if isinstance(stop, Stopped) else "SIGINT"
    assert one_object(capsys.readouterr().out) == {"error": "interrupted", "message": f"stopped by {name}"}
    assert cli_output.json_written()


def test_a_receipts_json_object_counts_as_written(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The receipt's own ``--json`` object is the command's one too (:func:`json_written`), so a
    SIGTERM as ``oloproof receipt --json`` ends adds no ``interrupted`` object after it."""
    from types import SimpleNamespace

    from oloproof_nb._run import observe
    from oloproof_nb.cli import output as cli_output

    receipt = SimpleNamespace(to_json_dict=lambda: {"status": "missing"}, status="missing", reason="no file there")
    monkeypatch.setattr(observe, "verify_contract_file", lambda path: receipt)
    assert main(["receipt", "c.json", "--json"]) == 2
    assert one_object(capsys.readouterr().out) == {"receipt": {"status": "missing"}}
    assert cli_output.json_written()


def test_an_argument_the_top_level_parser_refuses_is_json_too(capsys: pytest.CaptureFixture[str]) -> None:
    """``--=x`` is refused by the top-level parser (ambiguous: ``--help``, ``--version``) before
    the command's parser sees it; under ``gate --json`` that exit 2 is one JSON error object too, as receipt's is."""
    with pytest.raises(SystemExit) as stopped:
        main(["gate", "run", "--json", "--=x"])
    assert stopped.value.code == 2
    body = one_object(capsys.readouterr().out)
    assert body["error"] == "usage error" and body["message"].startswith("ambiguous option: --=x"), body


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_the_table_on_a_stderr_that_is_not_utf8_keeps_its_ascii_stand_ins(
        gated: Callable[[float | None], Path], encoding: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``PYTHONIOENCODING=ascii``: without ``--json`` the table on stdout reads ``0.857-1.000`` and ``BLOCK --
    exit 1`` (``tests/cli/test_process.py``); moved to stderr by ``--json`` it read ``0.857\\u20131.000`` and ``BLOCK
    \\u2014 exit 1``, as Python's stderr writes what its encoding lacks as backslash escapes."""
    run = gated(0.99)
    raw = io.BytesIO()
    # as Python opens stderr under PYTHONIOENCODING=ascii: errors="backslashreplace", never an error
    stderr = io.TextIOWrapper(raw, encoding=encoding, errors="backslashreplace", write_through=True)
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main(["gate", str(run), "--json"]) == 1
    err = raw.getvalue().decode(encoding)
    assert one_object(capsys.readouterr().out)["exit"] == 1
    assert "\\u" not in err and "| 0.857-1.000 |" in err
    assert err.splitlines()[-1].startswith("gate: BLOCK -- exit 1: ")


def test_without_json_stdout_holds_no_json(gated: Callable[[float | None], Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", str(gated(0.5))]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1].startswith("gate: PASS — exit 0") and err == ""


@pytest.mark.slow  # a process of its own: 2-3 s of imports
def test_a_reader_that_leaves_keeps_the_exit_code(gated: Callable[[float | None], Path]) -> None:
    """``oloproof gate RUN --json | head -c 10`` under ``pipefail``: the reader gone before the object is written."""
    run = gated(0.99)
    proc = subprocess.Popen([sys.executable, "-m", "oloproof_nb.cli", "gate", str(run), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1, err
    assert "Broken pipe" not in err and "Exception ignored" not in err
    assert err.splitlines()[-1].startswith("gate: BLOCK — exit 1")


def test_the_help_names_every_key_of_the_object(gated: Callable[[float | None], Path],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The keys are documented where the option is: each key printed is named in ``--help`` (compare's:
    ``tests/cli/test_commands_compare.py``)."""
    main(["gate", str(gated(0.5)), "--json"])
    assert_help_names(set(one_object(capsys.readouterr().out)), "gate", capsys)


def test_the_lines_under_the_table_are_in_the_object_too(make_suite: Callable[..., Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``findings``, ``relaxed``, ``weaker_than`` and ``drift`` hold what the notes under the table say
    (each could be dropped, emptied or taken from another list, and every test above still passed: there they are
    all empty)."""
    root = make_suite(PERFECT, release={"criteria": {"answer_matches": 0.99, "state_matches": 0.0}})
    run = str(op.run(op.load_suite(root), out=tmp_path / "run", progress=False).directory)
    loose = tmp_path / "loose.yaml"
    loose.write_text("criteria: {answer_matches: 0.5, state_matches: 0.0}\n", encoding="utf-8")
    code, body, err = _gate(["gate", run, "--release", str(loose), "--json"], capsys)
    assert code == body["exit"] == 1 and body["verdict"] == "BLOCK"  # state_matches: 0 rows, no_evidence
    # by hand: the one threshold lowered, against the run's own release.yaml (also the note above the exit line)
    assert body["relaxed"] == ["criteria.answer_matches 0.99 → 0.5"]
    assert body["weaker_than"] == "the run's own release settings"
    assert "1 setting weaker than the run's own release settings: criteria.answer_matches 0.99 → 0.5" in " ".join(
        err.split())
    # the one vacuous check (threshold 0), warned on stderr as it is listed
    (finding,) = body["findings"]
    assert finding.startswith("criterion state_matches: threshold 0 passes whatever the rows say")
    assert f"oloproof: warning: vacuous check: {finding}\n" in err
    assert body["unscored"] == [] and body["drift"] == []
    # the suite's release.yaml edited since the run: gated by the run's own copy, the change named once
    (root / "release.yaml").write_text("criteria: {answer_matches: 0.9, state_matches: 0.0}\n", encoding="utf-8")
    code, body, err = _gate(["gate", run, "--json"], capsys)
    assert code == body["exit"] == 1 and body["relaxed"] == [] and body["weaker_than"] is None
    (drift,) = body["drift"]
    assert "release.yaml" in drift and "answer_matches 0.99 → 0.9" in drift
    assert len(body["findings"]) == 1


def test_the_case_error_lines_go_to_stderr_with_the_table(make_suite: Callable[..., Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The lines above the table saying a case run ended in error are for people too: on stderr, and stdout holds
    the object alone (printed outside the redirection, they went to stdout before the object)."""
    broken = {"id": "c24", "input": {"deletes": [["no_such_table", "row"]]}, "initial_state": {},
              "expected": {"answer": "never"}}  # run() raises KeyError: the case run ends in error
    root = make_suite([*PERFECT, broken], release={"criteria": {"answer_matches": 0.5}})
    run = str(op.run(op.load_suite(root), out=tmp_path / "run", progress=False).directory)
    assert main(["gate", run]) == 0
    for_people = capsys.readouterr().out
    code, body, err = _gate(["gate", run, "--json"], capsys)
    assert code == body["exit"] == 0 and err == for_people
    assert err.startswith("1 of 25 case runs ended in error: their verdicts are missing\n")
    # by hand: 24 of 25 cases passed, the 25th's verdict missing (a failure); Clopper-Pearson's lower bound by scipy
    listed = body["criteria"][0]
    assert (listed["criterion"], listed["n"], listed["passed"], listed["missing"]) == ("answer_matches", 25, 24, 1)
    assert listed["ci_low"] == pytest.approx(scipy.stats.beta.ppf(0.025, 24, 2), abs=1e-9)


@pytest.mark.parametrize(("command", "line"), [
    ("gate", '  {"command": "gate", "verdict": "PASS"|"BLOCK", "exit": 0|1, "run_id": "...",'),
    ("compare", '  {"command": "compare", "verdict": "NO_REGRESSION"|"REGRESSION"|"INSUFFICIENT_EVIDENCE",')])
def test_the_help_shows_the_object_one_group_of_keys_a_line(command: str, line: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The epilog is written in lines (the object's keys, a group a line): ``--help`` keeps them, where argparse
    would run them into one paragraph (with the lines' rule inverted, every key was still named)."""
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    lines = capsys.readouterr().out.splitlines()
    assert line in lines
    assert '   "criteria": [one object per row of the ' + command + ' table, every column; NaN is null]}' in lines
