"""The ``oloproof`` command exits 0, 1 or 2 when a signal stops it while it starts.

The console script imported the package first (pydantic and the evaluators: 0.4-1.3 s) and installed its SIGTERM
and SIGHUP handlers only when the command began its work, so ``oloproof gate RUN &`` and a ``kill -TERM`` 0.3 s
later exited 143 with no line, and a completion hook stopped by its runner's timeout then was not
exit 2. The console script's module, ``_oloproof_nb_entry``, installs handlers before it imports the package.

Each test here starts the real console script and makes the signal come at a fixed point, not after a delay: a
``sitecustomize`` module (on ``PYTHONPATH``) sends it while ``oloproof_nb`` is being imported, or as the process
exits.
"""

from __future__ import annotations

import doctest
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import _oloproof_nb_entry as entry
from oloproof_nb import cli
from oloproof_nb.cli.output import start_command
from oloproof_nb.cli.parser import JSON_COMMANDS, wants_json
from oloproof_nb.cli.process import NOT_HOOK_STOPS, hook_stops

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")

#: The installed console script (``pip install .`` / ``-e .`` make it next to the interpreter).
SCRIPT = Path(sys.executable).with_name("oloproof")

#: Sends ``H3_SIGNAL`` to its own process when ``oloproof_nb`` is first looked up (``H3_WHEN=import``), from
#: an exit function, after the command has returned and put its own handlers back (``H3_WHEN=exit``), or as the
#: modules are torn down (``H3_WHEN=teardown``); with ``H3_EXIT_WORK`` (a folder), leaves work for the exit.
SITECUSTOMIZE = textwrap.dedent('''
    import os
    import signal
    import sys

    _NAME, _WHEN = os.environ.get("H3_SIGNAL"), os.environ.get("H3_WHEN")


    class _SignalOnImport:
        def find_spec(self, fullname, path=None, target=None):
            if fullname == "oloproof_nb":
                sys.meta_path.remove(self)
                os.kill(os.getpid(), getattr(signal, _NAME))
            return None


    class _SignalOnTeardown:
        def __del__(self):
            os.kill(os.getpid(), getattr(signal, _NAME))


    if _NAME and _WHEN == "import":
        sys.meta_path.insert(0, _SignalOnImport())
    elif _NAME and _WHEN == "exit":
        import atexit

        atexit.register(lambda: os.kill(os.getpid(), getattr(signal, _NAME)))
    elif _NAME and _WHEN == "teardown":  # as the modules are torn down, after Python put the default back
        _LATE = _SignalOnTeardown()

    _WORK = os.environ.get("H3_EXIT_WORK")
    if _WORK:  # what Python does at exit: a temporary folder removed, a thread joined, an exit function run
        import atexit
        import tempfile
        import threading
        import time

        _FOLDER = tempfile.TemporaryDirectory(prefix="exit-work-")
        open(os.path.join(_WORK, "folder"), "w").write(_FOLDER.name)

        def _slow():
            time.sleep(0.2)
            open(os.path.join(_WORK, "thread"), "w").write("joined")

        threading.Thread(target=_slow).start()
        atexit.register(lambda: open(os.path.join(_WORK, "atexit"), "w").write("ran"))
''')


@pytest.fixture
def oloproof(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the console script with a signal sent at a fixed point; each signal named in ``default`` starts at the
    system's default, each in ``ignored`` ignored (as ``nohup`` starts a process)."""
    assert SCRIPT.exists(), f"the console script is not installed next to {sys.executable}: pip install -e ."
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")

    def run(*args: str, send: str | None = None, when: str = "import", default: tuple[str, ...] = (),
            ignored: tuple[str, ...] = (), exit_work: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hooks), *filter(None, [os.environ.get(
            "PYTHONPATH")])]), "PYTHONWARNINGS": "ignore", "H3_SIGNAL": send or "", "H3_WHEN": when,
            "H3_EXIT_WORK": str(exit_work or "")}

        def dispositions() -> None:
            for name in default:
                signal.signal(getattr(signal, name), signal.SIG_DFL)
            for name in ignored:
                signal.signal(getattr(signal, name), signal.SIG_IGN)

        return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120,
                              preexec_fn=dispositions)

    return run


def write_contract(folder: Path, content: bytes = b'{"total": 3}\n') -> Path:
    """A verified outcome: an artifact written now and a contract whose run started in 2020."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_bytes(content)
    contract = folder / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report", "locator": "report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z",
                                    "expected_sha256": hashlib.sha256(content).hexdigest()}), encoding="utf-8")
    return contract


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_while_the_package_is_imported_is_exit_2_with_one_line(oloproof: Callable[..., Any],
                                                                      tmp_path: Path, name: str) -> None:
    """Before, the signal's default ended the process: -15 (a shell's 143) or -1 (129), nothing on stderr."""
    done = oloproof("gate", str(tmp_path / "run"), send=name, default=(name,))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"oloproof: interrupted by {name}\n")


def test_a_hook_stopped_while_it_starts_says_so_in_json_too(oloproof: Callable[..., Any], tmp_path: Path) -> None:
    """``oloproof receipt --json`` gives one JSON object on every exit 2, this one included."""
    contract = write_contract(tmp_path / "task")
    done = oloproof("receipt", str(contract), "--json", send="SIGTERM", default=("SIGTERM",))
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout) == {"error": "interrupted", "message": "interrupted by SIGTERM"}
    assert done.stdout.count("\n") == 1 and done.stderr == "oloproof: interrupted by SIGTERM\n"


def test_a_ctrl_c_while_the_package_is_imported_is_exit_2_not_a_traceback(oloproof: Callable[..., Any],
                                                                           tmp_path: Path) -> None:
    """Before: ``KeyboardInterrupt`` and its traceback, exit -2 (a shell's 130)."""
    done = oloproof("gate", str(tmp_path / "run"), send="SIGINT", default=("SIGINT",))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", "oloproof: interrupted\n")


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_the_process_was_started_ignoring_stays_ignored(oloproof: Callable[..., Any], tmp_path: Path,
                                                                 name: str) -> None:
    """``nohup oloproof …`` / ``trap '' HUP``: the signal at start-up does not stop the hook, which verifies."""
    contract = write_contract(tmp_path / "task")
    done = oloproof("receipt", str(contract), send=name, ignored=(name,))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "verified" and done.stderr == ""


def test_a_signal_as_the_command_exits_is_exit_2_with_one_line(oloproof: Callable[..., Any],
                                                               tmp_path: Path) -> None:
    """The command puts its own handlers back when it is done; before, a SIGTERM then was death by the signal."""
    done = oloproof("init", "--example", "false-success", str(tmp_path / "suite"), send="SIGTERM", when="exit",
                    default=("SIGTERM",))
    assert (done.returncode, done.stderr) == (2, "oloproof: interrupted by SIGTERM\n")


@pytest.mark.parametrize(("command", "code"), [("gate", 2), ("receipt", 0), ("--version", 0), ("--no-such", 2)])
def test_the_command_ends_before_the_teardown_that_left_a_signal_to_its_default(oloproof: Callable[..., Any],
                                                                              tmp_path: Path, command: str,
                                                                              code: int) -> None:
    """Python put every handler back to the default before it tore the modules down (0.2-1.8 s after the answer,
    ``benchmarks/signal_windows.py``): a SIGTERM then ended the command by the signal, -15 (a shell's 143), after
    a verified receipt, a gate's answer or the parser's own exit. The console script ends the process before that
    teardown."""
    args = {"gate": ["gate", str(tmp_path / "run")], "receipt": ["receipt", str(write_contract(tmp_path))]}
    done = oloproof(*args.get(command, [command]), send="SIGTERM", when="teardown", default=("SIGTERM",))
    assert done.returncode == code, done.stderr
    assert "interrupted" not in done.stderr


def test_the_work_python_does_at_exit_is_done(oloproof: Callable[..., Any], tmp_path: Path) -> None:
    """Ending the process before the teardown still joins a thread that is no daemon, runs the exit functions and
    removes a ``TemporaryDirectory`` left open (its ``weakref.finalize``), before the command's exit code."""
    work = tmp_path / "work"
    work.mkdir()
    done = oloproof("receipt", str(write_contract(tmp_path / "task")), exit_work=work)
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "verified", done.stderr
    assert (work / "thread").read_text() == "joined" and (work / "atexit").read_text() == "ran"
    folder = Path((work / "folder").read_text())
    assert folder.name.startswith("exit-work-") and not folder.exists()


def test_a_signal_as_a_json_command_exits_adds_no_second_object(oloproof: Callable[..., Any],
                                                                tmp_path: Path) -> None:
    """``receipt --json`` verified, then a SIGTERM as the process exits: exit 2, and stdout keeps the one object it
    holds (before, ``{"error": "interrupted", …}`` followed it, and stdout was no JSON document)."""
    done = oloproof("receipt", str(write_contract(tmp_path / "task")), "--json", send="SIGTERM", when="exit",
                    default=("SIGTERM",))
    assert (done.returncode, done.stderr) == (2, "oloproof: interrupted by SIGTERM\n")
    assert done.stdout.count("\n") == 1 and json.loads(done.stdout)["receipt"]["status"] == "verified"


def test_a_ctrl_c_after_the_json_object_is_written_adds_no_second_one(monkeypatch: pytest.MonkeyPatch,
                                                                     capfd: pytest.CaptureFixture[str]) -> None:
    """A Ctrl-C that reaches the entry after the command wrote its ``--json`` object (as it
    ends) is exit 2 and one line on stderr, with no ``{"error": "interrupted"}`` after the object (stdout would
    hold two, and a job's ``json.load`` of it fail)."""
    from oloproof_nb.cli.output import print_json_text

    def command() -> int:
        start_command()
        print_json_text('{"command": "gate"}')
        raise KeyboardInterrupt

    monkeypatch.setattr(entry, "_stop_while_outside_the_command", lambda argv: None)  # no process-wide handlers
    monkeypatch.setattr(cli, "main", command)
    assert entry._run(["gate", "run", "--json"]) == 2
    out, err = capfd.readouterr()
    assert out.splitlines() == ['{"command": "gate"}'] and err == "oloproof: interrupted\n"


def test_the_commands_own_handlers_take_over_while_it_works(oloproof: Callable[..., Any], tmp_path: Path) -> None:
    """The entry module's handlers only wait for the command's: a SIGTERM while the hook's validator runs stops
    the validator too, with the hook's own line (as ``tests/cli/test_commands_receipt.py`` checks through ``-m``)."""
    folder = tmp_path / "task"
    contract = write_contract(folder)
    pid_file = folder / "validator.pid"
    (folder / "slow.py").write_text("import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\n"
                                    "time.sleep(60)\n", encoding="utf-8")
    body = json.loads(contract.read_text(encoding="utf-8"))
    contract.write_text(json.dumps({**body, "validator": {"command": [sys.executable, "slow.py", str(pid_file)]}}),
                        encoding="utf-8")
    hook = subprocess.Popen([str(SCRIPT), "receipt", str(contract)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    validator = int(pid_file.read_text())
    hook.send_signal(signal.SIGTERM)
    _, err = hook.communicate(timeout=60)
    try:
        assert hook.returncode == 2, err
        assert err == "oloproof: not verified: stopped by SIGTERM (the validator it ran was stopped too)\n"
    finally:
        try:
            os.kill(validator, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_gate_and_receipt_through_the_console_script(oloproof: Callable[..., Any], tmp_path: Path) -> None:
    """The console script's module runs the command with its exit codes: a BLOCK is 1, a verified receipt 0."""
    from oloproof_nb.examples import init_example

    folder = init_example("false-success", tmp_path / "suite")
    assert cli.main(["run", str(folder), "--out", str(tmp_path / "run"), "--quiet"]) == 1
    gate = oloproof("gate", str(tmp_path / "run"))
    assert gate.returncode == 1, gate.stderr
    assert gate.stdout.splitlines()[-1].startswith("gate: BLOCK — exit 1")
    receipt = oloproof("receipt", str(write_contract(tmp_path / "task")))
    assert receipt.returncode == 0 and json.loads(receipt.stdout)["status"] == "verified", receipt.stderr


def test_the_console_script_is_the_entry_module() -> None:
    """The installed metadata (pyproject's ``[project.scripts]``): not ``oloproof_nb.cli:main``, which imports the
    package before any handler exists (``python -m oloproof_nb.cli`` still runs the command, that way)."""
    (script,) = [point for point in metadata.entry_points(group="console_scripts") if point.name == "oloproof"]
    assert script.value == "_oloproof_nb_entry:main"
    assert SCRIPT.read_text(encoding="utf-8").count("from _oloproof_nb_entry import main") == 1


def test_importing_the_entry_module_or_the_package_installs_no_handler() -> None:
    """Only ``main`` installs handlers: library code changes nothing process-wide."""
    code = ("import signal\nnames = ('SIGTERM', 'SIGHUP', 'SIGINT')\n"
            "before = [signal.getsignal(getattr(signal, n)) for n in names]\n"
            "import _oloproof_nb_entry, oloproof_nb, oloproof_nb.cli\n"
            "print([signal.getsignal(getattr(signal, n)) for n in names] == before)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout == "True\n", done.stderr


@pytest.mark.parametrize(("argv", "wanted"), [
    ([], False), (["receipt"], False), (["receipt", "c.json", "--json"], True), (["receipt", "--js", "c.json"], True),
    (["receipt", "c.json", "--j"], True), (["receipt", "c.json", "--json=yes"], True),
    (["receipt", "--", "--json"], False), (["--quiet", "receipt", "--json"], True), (["gate", "run", "--json"], True),
    (["--json", "receipt"], False), (["receipt", "--jsonx"], False), (["receipt", "-json"], False),
    (["compare", "a", "b", "--js"], True), (["gate", "--", "--json"], False), (["run", "suite", "--json"], False),
    (["report", "r", "--json"], False), (["--json", "gate", "r"], False),
])
def test_the_entry_module_reads_json_as_the_command_does(argv: list[str], wanted: bool) -> None:
    """Two copies of one rule: the entry module cannot import the package before its handlers are in place, and
    the package imports nothing outside itself. Both give argparse's reading of each list (an unambiguous prefix of
    --json counts; an argument after ``--``, or before the command, does not)."""
    assert entry._wants_json(argv) is wants_json(argv) is wanted
    assert entry._JSON_COMMANDS == JSON_COMMANDS


def test_the_entry_modules_examples_run() -> None:
    results = doctest.testmod(entry)
    assert results.attempted > 0 and results.failed == 0


def test_a_ctrl_c_the_entry_module_catches_is_a_json_error_with_json(monkeypatch: pytest.MonkeyPatch,
                                                                     capfd: pytest.CaptureFixture[str]) -> None:
    """The entry module's own Ctrl-C (the package still importing) prints the JSON error object for ``gate --json``
    as for a signal (with the object left out, every test above still passed). In this process: the
    command replaced by a Ctrl-C, no handler installed."""
    monkeypatch.setattr(entry, "_stop_while_outside_the_command", lambda argv: None)

    def ctrl_c() -> int:
        start_command()  # as the command begins: no object of its own written yet (an earlier test's may be)
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", ctrl_c)
    for argv, objects in ((["gate", "run", "--json"], [{"error": "interrupted", "message": "interrupted"}]),
                          (["gate", "run"], [])):
        assert entry._run(argv) == 2
        out, err = capfd.readouterr()
        assert [json.loads(line) for line in out.splitlines()] == objects and err == "oloproof: interrupted\n"


# --- `oloproof receipt` stops on every signal that ends a process by default (SIGQUIT, SIGUSR1, SIGALRM,
# ...), as on SIGTERM; see tests/cli/test_process_stop_hook_signals.py

def test_the_console_script_stops_the_hook_on_the_same_signals() -> None:
    """``_oloproof_nb_entry`` cannot import the package before it installs its handlers: it keeps its own list."""
    assert entry._NOT_STOPPING == NOT_HOOK_STOPS
    assert set(entry._stops(["receipt", "c.json"])) == hook_stops() - {signal.SIGINT}  # a Ctrl-C is Python's own
    assert set(entry._stops(["gate", "run"])) == {signal.SIGTERM, signal.SIGHUP}  # other commands: as before


@pytest.mark.parametrize("name", ["SIGUSR1", "SIGQUIT"])
def test_a_signal_to_the_hook_while_the_package_is_imported_is_exit_2(oloproof: Callable[..., Any], tmp_path: Path,
                                                                      name: str) -> None:
    """Before: death by the signal, -10 (a shell's 138) or -3 (131), nothing on stderr."""
    done = oloproof("receipt", str(write_contract(tmp_path / "task")), "--json", send=name, default=(name,))
    assert (done.returncode, done.stderr) == (2, f"oloproof: interrupted by {name}\n")
    assert done.stdout == f'{{"error": "interrupted", "message": "interrupted by {name}"}}\n'


def test_a_signal_as_the_hook_exits_is_exit_2(oloproof: Callable[..., Any], tmp_path: Path) -> None:
    """The receipt printed, then SIGALRM as the process winds down: exit 2, as SIGTERM then is."""
    done = oloproof("receipt", str(write_contract(tmp_path / "task")), send="SIGALRM", when="exit",
                    default=("SIGALRM",))
    assert (done.returncode, done.stderr) == (2, "oloproof: interrupted by SIGALRM\n")


def test_other_commands_leave_those_signals_to_their_default(oloproof: Callable[..., Any], tmp_path: Path) -> None:
    """``oloproof gate`` exits 0 PASS only: death by SIGUSR1 (138) blocks a CI step as 2 does (the receipt's
    signal handling leaves it)."""
    done = oloproof("gate", str(tmp_path / "run"), send="SIGUSR1", default=("SIGUSR1",))
    assert done.returncode == -signal.SIGUSR1
