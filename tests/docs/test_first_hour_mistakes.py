"""A new user's first hour, from the README alone: three first-hour mistakes whose one-line errors
did not say what was wrong or what to do.

- the system's module imports a package missing from the environment: the line said ``cannot import
  'calendar_agent' from .: No module named 'requestsx'``, as if the suite's own module were not there;
- the system's class takes a constructor argument: the line gave Python's ``TypeError`` alone, not that the runner
  builds the system with no arguments;
- ``--out notes.txt/r1`` under a file: ``cannot create the run directory (Not a directory)``, naming no file;
- a suite file saved under a name close to the one read (``oloproof.yml``, ``cases.json``, ``release.yml``): told
  only that the file was not there (or, for release.yml, gated on nothing) while the folder showed it; and
  ``system: library_desk.py:LoanDesk``, the module named by its file: ``No module named 'library_desk.py';
  'library_desk' is not a package``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.errors import ConfigError, OloproofError, RunDirError

AGENT = '''
import oloproof_nb as op

class CalendarAgent(op.RecordedAgent):
    version = "calendar-1"
    def reset(self, state): self.state = state
    def snapshot(self): return self.state
    def act(self, input, rec):
        return "ok"
'''


def _suite(folder: Path, agent: str = AGENT) -> Path:
    folder.mkdir()
    (folder / "calendar_agent.py").write_text(agent, encoding="utf-8")
    (folder / "oloproof.yaml").write_text("name: calendar\nsystem: calendar_agent:CalendarAgent\n"
                                          "evaluators:\n  - {type: answer_matches}\n", encoding="utf-8")
    (folder / "cases.jsonl").write_text(json.dumps({"id": "c0", "input": {"q": "x"}, "initial_state": {},
                                                    "expected": {"answer": "ok"}}) + "\n", encoding="utf-8")
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_dependency_missing_from_the_environment_is_named_as_such(tmp_path: Path) -> None:
    folder = _suite(tmp_path / "cal", "import requestsx_u21_not_installed\n" + AGENT)
    with pytest.raises(ConfigError) as caught:
        op.load_suite(folder)
    message = str(caught.value)
    # before: "cannot import 'calendar_agent' from …: No module named 'requestsx_u21_not_installed'"
    assert "cannot import 'calendar_agent'" not in message
    assert caught.value.key == "system"
    assert ("importing 'calendar_agent' raised ModuleNotFoundError: No module named 'requestsx_u21_not_installed': "
            "install the package that provides 'requestsx_u21_not_installed' in the Python that runs oloproof ("
            f"{sys.executable}), or fix the import") in message


def test_a_module_that_is_not_there_is_still_cannot_import(tmp_path: Path) -> None:
    folder = _suite(tmp_path / "cal")
    (folder / "oloproof.yaml").write_text("name: calendar\nsystem: calendar_agnt:CalendarAgent\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"system: cannot import 'calendar_agnt' from .*No module named "
                                          r"'calendar_agnt'$"):
        op.load_suite(folder)


def test_the_command_line_says_it_in_one_line_exit_2_files_unchanged(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = _suite(tmp_path / "cal", "import requestsx_u21_not_installed\n" + AGENT)
    before = _files(folder)
    assert main(["run", str(folder), "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("oloproof: error: ") and "oloproof.yaml: system: importing 'calendar_agent' raised" in err
    assert "install the package that provides 'requestsx_u21_not_installed'" in err
    assert _files(folder) == before and not (folder / "runs").exists()


def test_a_constructor_that_needs_an_argument_is_told_it_gets_none(tmp_path: Path) -> None:
    agent = AGENT.replace("    def reset", "    def __init__(self, path): self.path = path\n    def reset", 1)
    suite = op.load_suite(_suite(tmp_path / "cal", agent))
    with pytest.raises(OloproofError) as caught:
        op.run(suite, out=tmp_path / "run", progress=False)
    message = str(caught.value)
    assert "oloproof.yaml: system: building the system raised TypeError:" in message
    assert "missing 1 required positional argument: 'path'" in message
    assert message.endswith("; the runner builds the system with no arguments: give each parameter a default, or "
                            "name a factory function that builds it (module:make_system)")


def test_a_constructor_that_raises_typeerror_itself_gets_no_such_hint(tmp_path: Path) -> None:
    agent = AGENT.replace("    def reset", "    def __init__(self, path=None): raise TypeError('boom')\n    def reset",
                          1)
    suite = op.load_suite(_suite(tmp_path / "cal", agent))
    with pytest.raises(OloproofError) as caught:
        op.run(suite, out=tmp_path / "run", progress=False)
    assert str(caught.value).endswith("building the system raised TypeError: boom")


def test_out_below_a_file_names_the_file(tmp_path: Path) -> None:
    suite = op.load_suite(_suite(tmp_path / "cal"))
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    out = tmp_path / "notes.txt" / "r1" / "deeper"
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, progress=False)
    # before: "…/notes.txt/r1/deeper: cannot create the run directory (Not a directory)"
    assert str(caught.value) == (f"{out}: cannot create the run directory: {tmp_path / 'notes.txt'} is a file, not a "
                                 "folder; choose another out=")
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_twenty_cases_of_five_users_never_pass(tmp_path: Path) -> None:
    """README section 1: 20 cases given 5 `cluster` values are 5 clusters, below min_clusters 20, never a PASS (the
    table called the clusters "source cases", which are 20 here)."""
    folder = _suite(tmp_path / "cal")
    cases = [{"id": f"u{u}-{k}", "cluster": f"user{u}", "input": {"q": f"{u}-{k}"}, "initial_state": {},
              "expected": {"answer": "ok"}} for u in range(5) for k in range(4)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (folder / "release.yaml").write_text("criteria: {answer_matches: 0.8}\nallow_approximate_methods: true\n",
                                         encoding="utf-8")
    run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    gate = op.gate(run)
    row = gate.table.set_index("criterion").loc["answer_matches"]
    assert (int(row["n"]), int(row["passed"]), int(row["n_clusters"])) == (20, 20, 5)  # hand count: 4 cases a user
    assert gate.verdict == "BLOCK" and row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert row["reason"].startswith("too_few_clusters: its rows fall in 5 clusters, min_clusters is 20")


def test_oloproof_yml_is_named_with_the_name_to_give_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _suite(tmp_path / "cal")
    (folder / "oloproof.yaml").rename(folder / "oloproof.yml")
    before = _files(folder)
    assert main(["run", str(folder), "--quiet"]) == 2
    out, err = capsys.readouterr()
    # before: "…/oloproof.yaml: file not found; a suite folder holds oloproof.yaml", the file the user wrote unnamed
    assert (out, err) == ("", f"oloproof: error: {folder / 'oloproof.yaml'}: file not found; a suite folder holds "
                              "oloproof.yaml (the folder holds 'oloproof.yml': rename it oloproof.yaml)\n")
    assert _files(folder) == before


def test_a_case_file_saved_as_json_is_named(tmp_path: Path) -> None:
    folder = _suite(tmp_path / "cal")
    (folder / "cases.jsonl").rename(folder / "cases.json")
    with pytest.raises(ConfigError) as caught:
        op.load_suite(folder)
    assert caught.value.key == "cases"
    assert caught.value.message == (f"file {folder / 'cases.jsonl'} not found (the case file: one JSON case a line); "
                                    "the folder holds 'cases.json': name it in cases, or rename it")


def test_a_missing_file_with_nothing_like_it_keeps_its_message(tmp_path: Path) -> None:
    folder = _suite(tmp_path / "cal")
    (folder / "cases.jsonl").rename(folder / "tickets.csv")
    with pytest.raises(ConfigError) as caught:
        op.load_suite(folder)
    assert caught.value.message == f"file {folder / 'cases.jsonl'} not found (the case file: one JSON case a line)"


def test_release_yml_is_named_under_the_gate_that_gated_nothing(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = _suite(tmp_path / "cal")
    (folder / "release.yml").write_text("criteria: {answer_matches: 0.5}\n", encoding="utf-8")
    assert main(["run", str(folder), "--quiet"]) == 1
    out = capsys.readouterr().out.splitlines()
    # before: "… there was none when the run started, …; write one listing `criteria: …`", while one was there
    assert out[-2] == (f"{folder / 'release.yaml'}: there was none when the run started, so no criterion is gated; "
                       "the folder holds 'release.yml': rename it release.yaml for the next run, or gate this one "
                       f"with --release {folder / 'release.yml'}")
    assert out[-1] == "gate: BLOCK — exit 1: no_criteria: nothing was gated"
    main(["gate", str(folder), "--release", str(folder / "release.yml")])  # the line's own fix gates the run
    assert capsys.readouterr().out.splitlines()[-1] == ("gate: BLOCK — exit 1: 1 criterion INSUFFICIENT_EVIDENCE (of 1 "
                                                        "gated; PASS needs every one to pass)")


@pytest.mark.parametrize(("key", "spec", "fixed"), [("system", "calendar_agent.py:CalendarAgent",
                                                     "calendar_agent:CalendarAgent"),
                                                    ("evaluators[0].check", "calendar_agent.py:always",
                                                     "calendar_agent:always")])
def test_a_module_named_by_its_file_is_told_to_drop_py(tmp_path: Path, key: str, spec: str, fixed: str) -> None:
    folder = _suite(tmp_path / "cal", AGENT + "\ndef always(case, before, after, trajectory):\n    return True\n")
    system, evaluator = ((spec, "{type: answer_matches}") if key == "system" else
                         ("calendar_agent:CalendarAgent", f"{{type: python, name: always, check: {spec!r}}}"))
    (folder / "oloproof.yaml").write_text(f"name: calendar\nsystem: {system}\nevaluators:\n  - {evaluator}\n",
                                          encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        op.load_suite(folder)
    # before: "cannot import 'calendar_agent.py' from …: No module named 'calendar_agent.py'; 'calendar_agent' is
    # not a package"
    assert (caught.value.key, caught.value.message) == (key, f"'{spec}' names the module by its file; write it "
                                                             f"without .py: '{fixed}'")
