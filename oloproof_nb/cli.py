"""The ``oloproof`` command: parse, call the library, print; exit 2 with one line on any user error.

Exit codes: 0 PASS, 1 BLOCK, 2 error (``oloproof receipt``: 0 verified, 2
anything else, a Ctrl-C, SIGTERM or SIGHUP included; ``oloproof compare``: 0
NO_REGRESSION, 1 REGRESSION or INSUFFICIENT_EVIDENCE); a Ctrl-C is exit 2 too. **Exit 0 means the run finished,
the gate was computed on it and said PASS — nothing else.** To make that true
whatever the system under test does, ``oloproof run`` never imports the
system: a child process loads the suite and runs it into the run directory,
and this process (which decides the exit code) loads the finished run from
disk and computes the gate. What the system does can end or hang only the
child: ``sys.exit`` or ``KeyboardInterrupt`` at import or in its constructor is
exit 2 naming ``oloproof.yaml: system``; any ``BaseException`` inside a case makes
that case ``error`` and the gate decides; ``os._exit``, a segfault or a kill
during the run is exit 2 with the exact resume command, and that resume records
the case runs in flight ``error`` when the system ended the process (an exit, a
fatal signal) rather than giving them another try; threads it leaves
behind keep nothing waiting (the child ends with ``os._exit``).
"""

from __future__ import annotations

import argparse
import ast
import errno
import json
import multiprocessing
import multiprocessing.connection
import os
import re
import shlex
import signal
import sys
import tempfile
import textwrap
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ._run.streams import SystemStream, open_standard_descriptors, shield_standard_streams, to_devnull
from ._version import __version__
from .errors import (
    DuplicateCaseWarning,
    InternalError,
    OloproofError,
    RunDirError,
    StoreWriteError,
    VacuousCheckWarning,
    cut_middle,
    describe_exception,
    terminal_text,
)

if TYPE_CHECKING:
    from ._analysis.run import Run

#: How the command names the project's own warnings on standard error (any other: by its class name).
_WARNING_LABELS: dict[type[Warning], str] = {VacuousCheckWarning: "vacuous check",
                                             DuplicateCaseWarning: "duplicate cases"}
#: The same warnings by class name, as a worker process sends them.
_WARNING_KINDS: dict[str, type[Warning]] = {kind.__name__: kind for kind in _WARNING_LABELS}

__all__ = ["main"]


class _Once(argparse.Action):
    """An option's value, refused when the option comes again (``--release strict.yaml --release lax.yaml``:
    argparse kept the last without a word, so an option appended to a command quietly replaced one in it)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given: set[str] = namespace.__dict__.setdefault(_GIVEN, set())
        if self.dest in given:
            raise argparse.ArgumentError(self, "given twice; give it once")
        given.add(self.dest)
        setattr(namespace, self.dest, values)


#: The namespace attribute in which :class:`_Once` notes the options given (removed before the command sees it).
_GIVEN = "_oloproof_given"


def _threshold_arg(text: str) -> float | tuple[str, float]:
    """A ``--pass-threshold`` value: ``X`` (every criterion's), or ``NAME=X`` (criterion NAME's; split at the last
    ``=``, as X holds none)."""
    name, is_named, number = text.rpartition("=")
    try:
        value = float(number)
    except ValueError:
        if not is_named:
            raise argparse.ArgumentTypeError(f"invalid float value: {text!r} (give X, or NAME=X for one "
                                             "criterion)") from None
        raise argparse.ArgumentTypeError(f"{text!r}: {number!r} is not a number (give NAME=X)") from None
    if not is_named:
        return value
    if not name:
        raise argparse.ArgumentTypeError(f"{text!r}: no criterion name before '=' (give NAME=X)")
    return name, value


class _Thresholds(argparse.Action):
    """``--pass-threshold``: one ``X`` for every criterion (given once), or ``NAME=X`` once per criterion, gathered
    into a mapping; the two forms mixed are refused (which would win?)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given = getattr(namespace, self.dest, None)
        if isinstance(values, tuple):
            name, value = values
            if isinstance(given, float):
                raise argparse.ArgumentError(self, f"{name}={value:g} after a plain X: give one X for every "
                                                   "criterion, or NAME=X for each criterion, not both")
            if given is not None and name in given:
                raise argparse.ArgumentError(self, f"criterion {name} given twice; give it once")
            setattr(namespace, self.dest, {**(given or {}), name: value})
            return
        if isinstance(given, dict):
            raise argparse.ArgumentError(self, f"{values:g} after NAME=X: give one X for every criterion, or NAME=X "
                                               "for each criterion, not both")
        if given is not None:
            raise argparse.ArgumentError(self, "given twice; give it once")
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    #: Whether an argument error is also one JSON object on stdout (``oloproof receipt ... --json``, :func:`main`).
    json_errors = False

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        """As argparse's; an option that stores one value (``--out DIR``) may be given once (:class:`_Once`)."""
        if args and str(args[0]).startswith("-") and kwargs.get("action", "store") == "store":
            kwargs["action"] = _Once
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # one line on stderr, exit 2, no usage dump
        wanted = re.fullmatch(r"argument (--[\w-]+).*: expected one argument", message)
        if wanted:  # `--pass-threshold -inf`: argparse takes a value that starts with '-' (and no number) for an option
            message += f"; a value that starts with '-' is given as {wanted.group(1)}=VALUE"
        # one line, as every error: argparse quotes an unrecognized argument as given (a line break, an escape
        # sequence, 5,000 characters); cut once escaped, as an escape is up to 10 characters long (review C14)
        message = cut_middle(terminal_text(message))
        if self.json_errors:  # a hook reading stdout as JSON gets its error there too, not nothing
            _print_json_error("usage error", f"{message} (see `{self.prog} --help`)")
        self.exit(2, f"oloproof: error: {message} (see `{self.prog} --help`)\n")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """As argparse's, except that arguments no command knows are refused by the command given, whose
        ``--help`` lists what it takes (argparse's top-level parser named ``oloproof --help``)."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            commands = next((a.choices for a in self._actions if isinstance(a, argparse._SubParsersAction)), {})
            command = commands.get(str(getattr(parsed, "command", "")), self)
            command.error(f"unrecognized arguments: {' '.join(extra)}")
        parsed.__dict__.pop(_GIVEN, None)
        return parsed


#: Why an empty path argument is refused (:func:`_path`; ``oloproof receipt`` says it as a contract error).
_EMPTY_PATH = "an empty path names no file or folder (an unset shell variable?); give a path"


def _path(text: str) -> str:
    """A path argument as given; an empty one is refused. It is what ``--out "$DIR"`` passes when the variable is
    unset, and Python reads it as the current folder: `gate ""` gated the suite the shell stood in, `run SUITE --out
    ""` wrote the run into the current folder, and `--baseline ""` was dropped without a word."""
    if not text:
        raise argparse.ArgumentTypeError(_EMPTY_PATH)
    return text


def _print_json_error(kind: str, message: str) -> None:
    """``{"error": kind, "message": message}``, one line on standard output (``oloproof receipt --json``); a
    standard output that is closed or gone loses it, and the exit code stays."""
    try:
        print(json.dumps({"error": kind, "message": message}), flush=True)
    except (OSError, ValueError):
        pass


def _receipt_wants_json(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (the command's arguments, without the program) is ``oloproof receipt`` asking for
    ``--json``, as argparse would read it: ``--json``, an abbreviation of it (``--js``), or ``--json=VALUE``
    (refused, but asked for), anywhere after ``receipt`` and before a ``--``. The command is the first argument
    that is no option (the top-level options take no value).

    Examples
    --------
    >>> _receipt_wants_json(["receipt", "--js"]), _receipt_wants_json(["receipt", "--", "--json"])
    (True, False)
    >>> _receipt_wants_json(["gate", "run", "--json"])
    False
    """
    command = next((i for i, arg in enumerate(argv) if not arg.startswith("-")), None)
    if command is None or argv[command] != "receipt":
        return False
    for arg in argv[command + 1:]:
        if arg == "--":
            return False
        name = arg.split("=", 1)[0]
        if len(name) >= 3 and "--json".startswith(name):
            return True
    return False


def _parser(receipt_json: bool = False) -> argparse.ArgumentParser:
    """The command line's parser; ``receipt_json``: ``oloproof receipt``'s argument errors are JSON on stdout too."""
    p = _Parser(prog="oloproof", description="Judge stateful agents by the world they leave behind.")
    p.add_argument("--version", action="version", version=f"oloproof_nb {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    init = sub.add_parser("init", help="copy a bundled example suite",
                          description="Copy a bundled example suite into a folder. Exit 0 when copied; 2 on an "
                                      "error (a folder that is not empty is left untouched: see --force).")
    init.add_argument("--example", required=True,  # examples.EXAMPLES (a test holds the two alike)
                      help="stateful-agent, false-success or wrapped-benchmark")
    init.add_argument("dest", nargs="?", type=_path, help="destination folder (default: ./<example>)")
    init.add_argument("--force", action="store_true",
                      help="copy over an existing destination (its runs/ and other files are kept)")

    run = sub.add_parser("run", help="run a suite; print the gate; exit 0 PASS, 1 BLOCK",
                         description="Run every case of a suite (reset, run, snapshot) into a new run directory "
                                     "and print its release gate. Exit 0 PASS; 1 BLOCK; 2 on an error.")
    run.add_argument("suite", type=_path, help="the suite folder (holds oloproof.yaml)")
    run.add_argument("--out", type=_path, help="run directory (default: runs/<run_id>/ in the suite folder)")
    run.add_argument("--workers", type=int, default=1, help="system instances run concurrently (default: 1)")
    run.add_argument("--resume", action="store_true", help="finish the interrupted run in --out")
    run.add_argument("--no-cache", action="store_true", help="run every fault replay live (no replay cache)")
    run.add_argument("--isolation", choices=["thread", "process"],
                     help="thread (default) or process: workers are processes, killed and replaced on a timeout")
    run.add_argument("--fsync", choices=["finish", "record"], default="finish",
                     help="force the run's files to the disk when it finishes (default) or after every record")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--epochs", type=int, default=None, metavar="K",
                     help="run each case K times, each from a fresh reset (default: the suite's epochs, or 1)")
    run.add_argument("--baseline", action="store_true",
                     help="also run every case with a do-nothing agent (into baselines/<run_id>/ of the suite) "
                          "and show each criterion's noop_rate and whether it passes when idle")
    run.add_argument("--wide", action="store_true", help="every gate column, reasons uncut (lines may exceed 100)")

    gate = sub.add_parser("gate", help="the gate of a stored run or Inspect AI log; exit 0 PASS, 1 BLOCK",
                          description="Print the release gate of a stored run (or of Inspect AI logs). Exit 0 "
                                      "PASS; 1 BLOCK; 2 on an error.")
    gate.add_argument("run_dir", type=_path, help="a run directory (runs/<run_id>/), a suite folder (its latest run), "
                      "or an Inspect AI log or folder of logs")
    gate.add_argument("--release", type=_path, help="another release.yaml to apply (an Inspect log: the thresholds)")
    gate.add_argument("--baseline", type=_path, metavar="BASELINE_DIR",
                      help="a do-nothing baseline run (from `oloproof run --baseline`, in baselines/ of the "
                           "suite): adds the columns noop (noop_rate) and idle (passes_when_idle)")
    gate.add_argument("--wide", action="store_true", help="every gate column, reasons uncut (lines may exceed 100)")
    _inspect_options(gate)

    report = sub.add_parser("report", help="write the gate, validity, replay and slice tables with plots; exit 0 "
                                           "PASS, 1 BLOCK",
                            description="Write the gate, validity, replay and slice tables with plots to one "
                                        "file, then exit on its gate: 0 PASS; 1 BLOCK, an unfinished run's "
                                        "included (the report is written all the same); 2 on an error.")
    report.add_argument("run_dir", help="a run directory (runs/<run_id>/), a suite folder (its latest run), "
                        "or an Inspect AI log or folder of logs", type=_path)
    report.add_argument("--out", required=True, type=_path,
                        help="report.html (standalone, plots embedded) or report.md (plots in <stem>_files/)")
    report.add_argument("--release", type=_path, help="another release.yaml to apply")
    report.add_argument("--baseline", type=_path, metavar="BASELINE_DIR",
                        help="a do-nothing baseline run: the gate table shows noop_rate and passes_when_idle")
    _inspect_options(report)

    compare = sub.add_parser(
        "compare", help="compare two runs case by case; exit 0 NO_REGRESSION, 1 otherwise",
        description="Pair the cases of two runs (same id and digest), and per criterion give the difference of "
                    "pass rates (candidate - base) with a paired, clustered interval and the regression verdict "
                    "of release.yaml's `regression: {margin, criteria}`. Exit 0 only when the overall verdict is "
                    "NO_REGRESSION; 1 on REGRESSION or INSUFFICIENT_EVIDENCE (no regression was ruled out, as "
                    "the gate passes only what is proven); 2 on an error.")
    compare.add_argument("base_run", help="the base run directory (e.g. the version in production), or a suite "
                                          "folder (its latest run)", type=_path)
    compare.add_argument("candidate_run", help="the candidate run directory (the new version), or a suite folder "
                                               "(its latest run)", type=_path)
    compare.add_argument("--release", help="a release.yaml to apply (default: the candidate run's; if it differs from "
                                              "the base run's in the regression rule, no NO_REGRESSION)", type=_path)

    receipt = sub.add_parser(
        "receipt", help="verify one outcome now; exit 0 verified, 2 otherwise",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Verify one promised outcome now (a completion hook: exit 0 verified, 2 blocks).",
        epilog=_RECEIPT_EPILOG)
    receipt.add_argument("contract", help="CONTRACT.json (its locator is relative to this file)")  # "": _cmd_receipt
    receipt.add_argument("--json", action="store_true",
                         help="print the receipt, or the error, as one JSON object on one line of stdout")
    if isinstance(receipt, _Parser):
        receipt.json_errors = receipt_json
    # the top-level parser reads every argument first: it refuses `receipt c.json --json --=x` (ambiguous: --help,
    # --version) before the command's parser sees it, and that exit 2 too is JSON when receipt asked for --json
    p.json_errors = receipt_json
    return p


_RECEIPT_EPILOG = """\
exit codes: 0 the outcome is verified; 2 anything else. stderr says which:
  `oloproof: <status>: <reason>` for a receipt that is not verified (missing, stale,
  hash_mismatch, validator_failed, unverified), or `oloproof: error: contract error: <problem>`
  when the contract file itself is unusable. stdout holds the receipt as JSON; with --json,
  one line: {"receipt": {...}} or {"error": "contract error", "message": "..."} (an argument
  error: "usage error"; stopped: "interrupted"; a bug in oloproof_nb: "internal error"; any
  other error: "error"). A verified receipt of a contract that checks no content (no
  expected_sha256, no validator) exits 0 with `oloproof: warning: outcome_content_unchecked: ...`
  on stderr.

a validator command ({"validator": {"command": ["prog", "arg"]}} in the contract) is run
with the artifact's absolute path appended as its LAST ARGUMENT, its working directory
the contract file's folder, stdin/stdout/stderr on /dev/null, this process's environment
without the digest_key_env variable; exit 0 accepts.

as a completion hook (Claude Code .claude/settings.json):
  {"hooks": {"Stop": [{"hooks": [{"type": "command",
      "command": "oloproof receipt CONTRACT.json"}]}]}}
"""


def _inspect_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--cluster", help="an Inspect log: the sample metadata key whose value is the cluster")
    cmd.add_argument("--state-key", help="an Inspect log: the sample store key holding the world (snapshots, changes)")
    cmd.add_argument("--pass-threshold", type=_threshold_arg, action=_Thresholds, metavar="X|NAME=X",
                     help="an Inspect log: a numeric score passes at or above X (default: 1, and a score outside "
                          "[0, 1] is missing); NAME=X, repeated, gives each criterion named its own X (the others "
                          "keep the default)")


def _run_dir(given: str, doing: str, logs: bool = False) -> str:
    """``given``, or the latest run of the suite folder ``given`` (stderr says so: ``oloproof: {doing} the latest
    run of the suite: …``). A folder that is none of what the command reads (a run directory, a suite folder, and
    with ``logs`` Inspect AI logs) is refused in one line naming each, and so is a path that does not exist; Inspect AI
    logs given without ``logs`` (``oloproof compare``) are refused saying how Python compares them."""
    from ._analysis.inspect_files import is_inspect_log, is_inspect_source
    from ._config.files import folder_problem
    from ._run.locate import is_suite_folder, latest_run_dir, runs_hint
    from ._run.store import MANIFEST

    if not is_suite_folder(given):
        path = Path(given)
        wanted = "a run directory, a suite folder or Inspect AI logs" if logs else "a run directory or a suite folder"
        problem = folder_problem(path)
        if problem is not None:
            raise RunDirError(f"{path}: {problem}; give {wanted} you can read")
        if not path.exists():  # a typo: say what may be given here, not only what a run directory holds
            raise RunDirError(f"{path}: no such file or folder; give {wanted}")
        if path.is_file() and not is_inspect_source(path) and is_suite_folder(path.parent):  # demo/oloproof.yaml
            raise RunDirError(f"{path}: is a file of the suite in {path.parent}; give {wanted} ({path.parent} gives "
                              "the suite's latest run)")
        # oloproof compare: logs are compared in Python. A .json file is named a log only when it reads as one: a
        # run's manifest.json (given for its folder) or any other .json is what a run directory is not, as before
        if not logs and is_inspect_source(path) and (path.is_dir() or path.suffix == ".eval" or is_inspect_log(path)):
            raise RunDirError(f"{path}: Inspect AI logs, which oloproof compare does not read; compare them in "
                              "Python, op.compare(op.from_inspect(BASE), op.from_inspect(CANDIDATE)), or give a run "
                              "directory or a suite folder")
        if path.is_dir() and not (path / MANIFEST).exists() and not (logs and is_inspect_source(path)):
            kinds = (f"a run directory (no {MANIFEST}), a suite folder (no oloproof.yaml) or Inspect AI logs" if logs
                     else f"a run directory (no {MANIFEST}) or a suite folder (no oloproof.yaml)")
            raise RunDirError(f"{path}: not {kinds}{runs_hint(path)}")
        return given
    latest = str(latest_run_dir(given))
    _say(terminal_text(f"oloproof: {doing} the latest run of the suite: {latest}"))  # a reader gone keeps the code
    return latest


def _load(args: argparse.Namespace, doing: str) -> Run:
    """The run at ``args.run_dir``: a run directory, Inspect AI logs (--cluster, --state-key, --pass-threshold), or a
    suite folder's latest run (``args.run_dir`` becomes it; stderr says so: ``oloproof: {doing} the latest …``)."""
    from ._analysis.inspect_files import is_inspect_source
    from ._display.notebook import from_inspect, load_run

    if is_inspect_source(Path(args.run_dir)):
        return from_inspect(Path(args.run_dir), cluster=args.cluster, state_key=args.state_key,
                            pass_threshold=args.pass_threshold)
    if (args.cluster, args.state_key, args.pass_threshold) != (None, None, None):
        raise OloproofError(f"{args.run_dir}: --cluster, --state-key and --pass-threshold apply to Inspect AI logs "
                            "only; this is not one")
    args.run_dir = _run_dir(args.run_dir, doing, logs=True)
    path = Path(args.run_dir)
    if args.release is not None or getattr(args, "baseline", None):
        # checked before load_run, which may build a columnar copy: an error writes nothing
        from ._analysis.baseline import check_baseline_config
        from ._analysis.gate import resolve_release
        from ._analysis.run import Run
        from ._run.baseline import BASELINE_DIR

        unopened = Run.unopened(path)
        if args.release is not None:
            resolve_release(unopened, args.release)
        if getattr(args, "baseline", None):
            check_baseline_config(unopened, Run.unopened(args.baseline, BASELINE_DIR))
    return load_run(path)


def _cmd_init(args: argparse.Namespace) -> int:
    from .examples import init_example

    target = init_example(args.example, args.dest, force=args.force)
    print(terminal_text(f"wrote the {args.example} suite to {target}/"))  # a line break in the name: one line
    print(terminal_text(f"next: oloproof run {target}"))
    return 0


# -- oloproof run: the suite runs in a child process; this one decides the exit code ------------------------

#: Seconds the child gets to stop cleanly after a Ctrl-C before it is killed.
_STOP_GRACE_S = 5.0


def _child_run(conn: Any, params: dict[str, Any]) -> None:  # pragma: no cover - runs in the child process
    """The child: load the suite, run it into the run directory, report through ``conn``, exit at once.

    Messages: ``("directory", path)``, ``("progress", done, total)``, ``("warning", category name, text)`` (a
    warning is printed by the parent, which prints each line once: ``load_suite``'s vacuous-check warning and
    the gate's finding of the same check are one line), then one of
    ``("done", path, baseline path or None)``, ``("error", message, resumable)``,
    ``("internal", message, resumable)``, ``("interrupted",)``.
    The child ends with ``os._exit`` so threads the system left behind cannot keep it alive.
    """
    started = False
    sending = threading.Lock()  # warnings come from any thread (workers, the system's own): one message at a time

    def send(*message: Any) -> None:
        with sending:
            try:
                conn.send(message)
            except (OSError, ValueError):
                pass

    def progress(done: int, total: int) -> None:
        nonlocal started
        started = True  # the run directory is open: an error from now on leaves a resumable run
        if params["progress"]:
            send("progress", done, total)

    def forward(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        send("warning", category.__name__, str(message))

    warnings.showwarning = forward
    try:  # what the system prints goes to stderr: the command's stdout is the gate's table and its last line
        sys.stdout.flush()
        os.dup2(2, 1)  # the descriptor too: worker processes inherit it, and a closed stdout (| head) breaks none
    except (OSError, ValueError, AttributeError):
        pass
    shield_standard_streams()  # a reader of stderr that left (`2>&1 | head`) fails no print of the system
    parent = multiprocessing.parent_process()
    if parent is not None:  # the run dies with the process that decides the exit code (it was killed)
        threading.Thread(target=_die_with, args=(parent, signal.SIGKILL), daemon=True, name="oloproof-orphan").start()
    try:
        from ._analysis.live_copy import LiveCopy
        from ._config.suite import load_suite
        from ._run.runner import run_suite
        from ._run.store import new_run_id

        suite = load_suite(params["suite"])
        run_id = None if params["out"] is not None else new_run_id()
        out = Path(params["out"]) if params["out"] is not None else suite.root / "runs" / str(run_id)
        send("directory", str(out))
        copy = None if params["resume"] else LiveCopy()  # the columnar copy, built as the records are appended
        try:
            directory = run_suite(suite, workers=params["workers"], out=out, resume=params["resume"],
                                  progress=progress, cache=params["cache"], isolation=params["isolation"],
                                  fsync=params["fsync"], run_id=run_id, epochs=params["epochs"], sink=copy)
        except BaseException:
            if copy is not None:
                copy.abort()
            raise
        if copy is not None:
            copy.commit()
        idle = None
        if params.get("baseline"):
            from ._run.baseline import run_baseline

            try:
                idle = str(run_baseline(suite, workers=params["workers"], epochs=params["epochs"]))
            except OloproofError as exc:  # the run itself finished: nothing to resume
                send("error", f"the run finished in {directory}, but the do-nothing baseline stopped: {exc}", False)
                return
        send("done", str(directory), idle)
    except KeyboardInterrupt as exc:
        from ._run.timeouts import system_traceback

        if system_traceback(exc) is None:  # the user's Ctrl-C (the system's own is marked as the system's)
            send("interrupted")
        else:
            send("error", f"the system raised {describe_exception(exc)} outside a case", started)
    except InternalError as exc:
        send("internal", str(exc), True)
    except StoreWriteError as exc:
        send("error", str(exc), True)
    except RunDirError as exc:
        send("error", str(exc), False)
    except OloproofError as exc:
        send("error", str(exc), started)
    except OSError as exc:
        send("error", _os_error_line(exc), started)
    except BaseException as exc:  # noqa: BLE001 - SystemExit or any other exception escaping: never a PASS
        send("error", f"the run stopped: {describe_exception(exc)}", started)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.close()
        finally:
            os._exit(0)


def _die_with(parent: Any, how: int) -> None:  # pragma: no cover - runs in the child process
    """Wait for ``parent`` to end, then end this process with signal ``how`` (as if killed with it)."""
    parent.join()
    os.kill(os.getpid(), how)


def _start_method() -> str:
    """``fork`` on Linux when this process runs one Python thread (the child starts at once, with what is loaded
    here); ``spawn`` otherwise. A fork copies only the thread that calls it, so a lock another Python thread held
    (a logging handler's, an import's, a queue's) stays held in the child forever: ``main`` called in a process
    with threads of its own (a notebook, a test run, a service) spawns. Native thread pools, such as the one
    OpenBLAS starts when numpy is imported, are not counted: they register their own fork handlers."""
    return "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"


def _resume_hint(args: argparse.Namespace, directory: Path | None) -> str:
    if directory is None or not (directory / "manifest.json").is_file():
        return ""
    command = f"oloproof run {shlex.quote(args.suite)} --out {shlex.quote(str(directory))} --resume"
    return f"; the run is in {directory} — finish it with: {command}"


def _how_it_ended(exitcode: int | None) -> str:
    """``exited with code 3``, ``was killed by signal SIGSEGV`` (:func:`~oloproof_nb._run.in_flight.how_it_ended`)."""
    from ._run.in_flight import how_it_ended

    if exitcode is None:
        return "did not stop"
    return f"exited with code {exitcode}" if exitcode >= 0 else f"was {how_it_ended(exitcode)}"


def _in_flight(directory: Path | None, exitcode: int, how: str | None = None) -> str:
    """Note in the run folder how its process ended (``started.jsonl``: the child is dead, its lock released), and
    say what a resume does with the case runs that were in flight: ``error`` when the system ended the process
    (an exit, a fatal signal), run again otherwise (a kill from outside; ``how``: an end the exit code does not
    tell, :func:`~oloproof_nb._run.in_flight.note_end`); nothing when none was."""
    from ._analysis.gate_reasons import case_runs
    from ._run.in_flight import note_end

    ended = None if directory is None else note_end(directory, exitcode, how)
    if ended is None or not ended.started:
        return ""
    keys = list(ended.started)
    runs = case_runs(keys)
    if ended.by_system:
        return (f" while running {runs}, which --resume records as error (all verdicts missing), as isolation: "
                "process records a case whose process died")
    return (f" while running {runs}, which --resume runs again: an end by this signal may come from outside, so "
            "it is not blamed on the system (the gate notes it)")


#: How the run's process ended when it stopped as on a Ctrl-C that this command neither got nor sent: a SIGINT,
#: SIGTERM or SIGHUP (each stops it: :class:`_StopOnSignals`) sent to that process alone (by the system: a shell
#: tool's ``kill $PPID``; or from outside).
_STOPPED_ALONE = "stopped by a SIGINT, SIGTERM or SIGHUP sent to it alone"


def _run_in_child(args: argparse.Namespace, params: dict[str, Any],
                  on_progress: Callable[[int, int], None] | None) -> tuple[tuple[Any, ...] | None, Path | None, int]:
    """Run the suite in a child process; ``(final message or None, run directory, child's exit code)``."""
    ctx: Any = multiprocessing.get_context(_start_method())
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_run, args=(send, params), name="oloproof-run")
    with warnings.catch_warnings():
        # Python 3.12+ warns of any fork of a process with more than one OS thread, numpy's native pool included;
        # this one forks only a process of one Python thread (_start_method)
        warnings.filterwarnings("ignore", message=r"This process \(pid=\d+\) is multi-threaded, use of fork\(\)",
                                category=DeprecationWarning)
        proc.start()
    send.close()
    directory: Path | None = None
    final: tuple[Any, ...] | None = None
    interrupted_at: float | None = None
    forwarded = False
    while final is None:
        try:
            if interrupted_at is not None:
                waited = time.monotonic() - interrupted_at
                if waited > 1.0 and not forwarded and proc.is_alive():
                    os.kill(proc.pid, signal.SIGINT)  # the Ctrl-C may have reached only this process
                    forwarded = True
                if waited > _STOP_GRACE_S and proc.is_alive():
                    proc.kill()
            multiprocessing.connection.wait([receive, proc.sentinel], timeout=0.2)
            if receive.poll():
                try:
                    message = receive.recv()
                except (EOFError, OSError):
                    break
                except Exception:  # noqa: BLE001 - a garbled message: stop the child, never leave it running
                    proc.kill()
                    proc.join()
                    raise
                if message[0] == "directory":
                    directory = Path(message[1])
                elif message[0] == "progress":
                    if on_progress is not None:
                        on_progress(message[1], message[2])
                elif message[0] == "warning":  # printed here, where each line is printed once
                    category = _WARNING_KINDS.get(str(message[1])) or type(str(message[1]), (UserWarning,), {})
                    warnings.showwarning(str(message[2]), category, "", 0)
                else:
                    final = message
            elif not proc.is_alive():
                break
        except KeyboardInterrupt:
            if interrupted_at is not None:  # a second Ctrl-C: stop the child now
                proc.kill()
            interrupted_at = interrupted_at or time.monotonic()
    deadline = time.monotonic() + _STOP_GRACE_S
    while proc.exitcode is None and time.monotonic() < deadline:  # its own exit (waitpid), not the end of its
        time.sleep(0.01)  # sentinel pipe, which a process the system forked and left running holds open (5 s more)
    if proc.exitcode is None:  # it reported, but something of the system's keeps it from exiting
        proc.kill()
        proc.join()
    receive.close()
    if final is None and interrupted_at is not None:
        final = ("interrupted",)
        if directory is not None:  # ended before it noted the stop (a second Ctrl-C killed it): the user's stop
            from ._run.in_flight import note_stop

            note_stop(directory)
    elif final == ("interrupted",) and interrupted_at is None:  # the child stopped on a signal this process never got
        final = ("interrupted", _STOPPED_ALONE)
    return final, directory, proc.exitcode if proc.exitcode is not None else -9


def _cmd_run(args: argparse.Namespace) -> int:
    from ._display.notebook import _stderr_is_tty, load_run, progress_bar
    from ._display.terminal import plain_terminal, run_size, terminal_width, uncached_note

    if Path(args.suite).is_file():
        folder = Path(args.suite).parent
        raise OloproofError(f"{args.suite}: is a file; oloproof run wants a suite folder, the folder holding "
                            f"oloproof.yaml (e.g. oloproof run {shlex.quote(str(folder))})")
    if args.resume and not args.out:
        from ._run.locate import latest_hint

        raise OloproofError("--resume needs --out DIR (the directory of the interrupted run)"
                            + latest_hint(args.suite, flag=True))
    if args.workers < 1:
        raise OloproofError(f"--workers {args.workers}: must be at least 1")
    from ._config.suite_config import MAX_EPOCHS

    if args.epochs is not None and not 1 <= args.epochs <= MAX_EPOCHS:
        raise OloproofError(f"--epochs {args.epochs}: must be 1 to {MAX_EPOCHS:,} (as epochs: in oloproof.yaml)")
    already = _finished_journal(Path(args.out)) if args.resume else None  # its size, when it had finished
    update, close = progress_bar(Path(args.suite).name) if not args.quiet and _stderr_is_tty() else (None, None)
    params = {"suite": args.suite, "out": args.out, "workers": args.workers, "resume": args.resume,
              "cache": not args.no_cache, "isolation": args.isolation, "fsync": args.fsync,
              "progress": update is not None, "baseline": args.baseline,
              "epochs": args.epochs}
    try:
        final, directory, exitcode = _run_in_child(args, params, update)
    finally:
        if close is not None:
            close()
        plain_terminal()  # whatever the system printed, the lines below are shown as written
    if final is None:
        raise OloproofError(f"the run stopped before it finished: the process running the system "
                            f"{_how_it_ended(exitcode)}" + _in_flight(directory, exitcode)
                            + _resume_hint(args, directory))
    if final[0] == "interrupted" and len(final) > 1:  # not the user's Ctrl-C (review F21: a silent second try)
        raise OloproofError(f"the run stopped before it finished: the process running the system was {final[1]} "
                            "(this command got none)" + _in_flight(directory, exitcode, final[1])
                            + _resume_hint(args, directory))
    if final[0] == "interrupted":
        _say("oloproof: interrupted" + _resume_hint(args, directory))
        return 2
    if final[0] in ("error", "internal"):
        message = str(final[1]) + (_resume_hint(args, directory) if final[2] else "")
        raise InternalError(message) if final[0] == "internal" else OloproofError(message)
    result = load_run(Path(final[1]))
    if not result.finished:
        raise OloproofError(f"{result.directory}: the run did not finish" + _resume_hint(args, result.directory))
    live, cached, unscored = result.replay_tally()
    if already is not None and already == _finished_journal(Path(args.out)):  # left as it was: say so
        print(terminal_text(f"{args.out}: the run had already finished; nothing to resume (its gate follows)"))
    print(terminal_text(f"run {result.run_id}: {run_size(result)}")  # a run id --resume read from a manifest
          + (f"; replay runs (control + faulted): {live} live, {cached} from the cache" if live or cached else ""))
    if unscored:  # a line of its own: the run line fits 100 columns
        print(f"  ({unscored} of the replay runs replay copies no criterion scores)")
    uncached = uncached_note(result, live, cached)
    if uncached:  # a second run all live says why, where it can tell (no `version`: never cached)
        _print_wrapped(f"({uncached})", terminal_width(), indent="  ")
    print(terminal_text(f"  -> {result.directory}"))  # its own line: the table above the exit line fits 100 columns
    _print_case_errors(result)
    idle = None
    if len(final) > 2 and final[2] is not None:  # ("done", directory, baseline directory)
        idle = load_run(Path(final[2]))
        print(f"baseline {idle.run_id}: {run_size(idle)} with a do-nothing agent")
        print(f"  -> {idle.directory}")
    return _print_gate(result, wide=args.wide, baseline=idle)


def _print_gate(result: Run, release: str | None = None, *, wide: bool = False, baseline: Run | None = None) -> int:
    from dataclasses import replace

    from ._analysis.gate import NO_CRITERIA
    from ._analysis.gate_reasons import abrupt_ends, abrupt_ends_note
    from ._analysis.gate_settings import approximate_once, relaxed_note
    from ._analysis.validity import unchecked_reasons, unscored_note
    from ._config.suite import RELEASE_FILE
    from ._display.notebook import gate
    from ._display.terminal import exit_line, gate_table_text, terminal_width

    g = gate(result, release=release, baseline=baseline)
    width = terminal_width()
    # the key to set is said once, below, naming --release: each criterion's line keeps the code
    reasons, approximate = approximate_once(g.table["reason"], release, result.release is not None,
                                            "--release to gate this run")
    shown = replace(g, table=g.table.assign(reason=reasons))
    print(gate_table_text(shown, wide=wide, width=width))
    for finding in g.findings:  # read from the run: `oloproof gate RUN_DIR` knows them without the suite
        warnings.warn(VacuousCheckWarning(finding), stacklevel=1)
    ends = abrupt_ends(result)
    if ends:  # case runs a crash cut short that ran again: a run resumed so is not an uninterrupted one
        _print_wrapped(abrupt_ends_note(ends), width)
    if g.reason == NO_CRITERIA:  # an empty or truncated release.yaml: say which file holds no criterion
        root = result.manifest.suite_config.root  # None: an Inspect AI log, which has no release.yaml of its own
        if release is None and root is None:
            print("no criterion to gate: give the thresholds with --release RELEASE_YAML")
        elif release is None and result.release is None:  # no file to blame: the suite had none when the run began
            path = Path(root or ".") / RELEASE_FILE
            # written since (the warning above names its keys): "write one" told the user to do what they had done
            fix = (f"it is there now: give it with --release {shlex.quote(str(path))} to gate this run with it"
                   if path.is_file() else
                   "write one listing `criteria: {<criterion>: <threshold>}`, or give it with --release")
            print(terminal_text(f"{path}: there was none when the run started, so no criterion is gated; {fix}"))
        else:
            source = release or str(Path(root or ".") / RELEASE_FILE)
            print(terminal_text(f"{source} names no criterion to gate; list each as "
                                "`criteria: {<criterion>: <threshold>}`"))
    if g.unscored:  # rows left out of every criterion: a release manager reading a PASS should know
        _print_wrapped(unscored_note(g.unscored, broken=g.unscored_broken), width)
    if approximate:  # one key fixes it: say which, once
        _print_wrapped(approximate, width)
    if g.table["reason"].str.startswith("transform_not_checked").any():  # which labels hold the relation back
        # where a label goes: the suite folder's file (None: an Inspect AI log, with no folder of its own)
        root = result.manifest.suite_config.root
        files = {t.name: Path(root) / t.validity_labels if root else Path(t.validity_labels)
                 for t in result.config.metamorphic.transforms}
        for transform, why in unchecked_reasons(result).items():
            where = f" in {files[transform]}" if transform in files else ""
            _print_wrapped(f"transform {transform} is not checked: {why}; its relations are judged once every pair "
                           f"is labeled{where} and the valid share reaches minimum_validity (see op.validity(run))",
                           width)
    if g.relaxed:  # a weaker gate than the run's own: which settings, above the exit line that says so
        _print_wrapped(relaxed_note(g.relaxed, f"--release {release}" if release else "", than=g.weaker_than), width)
    print(exit_line(g))  # the last line: why the command exits as it does
    return 0 if g.verdict == "PASS" else 1


def _print_wrapped(note: str, width: int, indent: str = "") -> None:
    """Print a command's ``note`` wrapped to ``width``, each line after ``indent``: at spaces only, never inside a
    path, a run id or a hyphenated name, nor inside a change ``a → b``. It may quote a run or a suite: shown as
    written (:func:`~oloproof_nb.errors.terminal_text`), never acted on."""
    lines = textwrap.wrap(terminal_text(note).replace(" → ", "\xa0→\xa0"), width, initial_indent=indent,
                          subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    print("\n".join(lines).replace("\xa0", " "))


def _finished_journal(directory: Path) -> int | None:
    """The size of the case journal of a run in ``directory`` that had finished (its manifest says so); None for
    anything else. Unchanged after ``--resume``, nothing was resumed (a finished run that lost records is)."""
    from ._run.store import CASES, read_manifest

    try:
        return (directory / CASES).stat().st_size if read_manifest(directory).finished_at is not None else None
    except (OloproofError, OSError, ValueError):
        return None


def _print_case_errors(result: Run) -> None:
    """How many case runs the system ended in error or by timeout, and why, above the gate's table."""
    from ._display.terminal import case_error_lines, terminal_width

    for line in case_error_lines(result, terminal_width()):
        print(line)


def _cmd_gate(args: argparse.Namespace) -> int:
    """The gate of a stored run; an unfinished run is never a release decision (exit 2)."""
    from ._display.notebook import load_run

    result = _whole(_load(args, "gating"), args.run_dir)
    _print_case_errors(result)
    idle = load_run(args.baseline) if args.baseline else None
    return _print_gate(result, args.release, wide=args.wide, baseline=idle)


def _whole(run: Run, given: str) -> Run:
    """``run``, unless it has no release decision (it did not finish, or it lost case runs): exit 2 then."""
    from ._analysis.gate import no_decision
    from ._analysis.inspect_log import is_inspect_run

    why = no_decision(run)
    if not why:
        return run
    from ._run.lock import RunLock

    text = f"{given}: {why.split(': ', 1)[1]}"
    if not run.finished and not is_inspect_run(run):
        holder = RunLock.holder(run.directory)
        if holder is not None:  # it is running now: --resume would be refused
            text += f"; it is still running ({holder}): wait until it has finished"
        elif _finished_journal(run.directory) is not None:  # it finished after it was read: a resume runs nothing
            text += "; it finished while it was being read: run the command again"
        else:
            root = run.manifest.suite_config.root or "SUITE"
            text += f"; finish it with: oloproof run {shlex.quote(root)} --out {shlex.quote(given)} --resume"
    raise OloproofError(text)


def _cmd_compare(args: argparse.Namespace) -> int:
    """Two stored runs compared; exit 0 only on NO_REGRESSION (an unfinished run is an error, exit 2)."""
    from ._analysis.compare import compare_release
    from ._analysis.gate_settings import PAIRED_CLUSTERED, approximate_once, weaker_count
    from ._analysis.run import Run
    from ._display.compare import compare
    from ._display.notebook import load_run
    from ._display.terminal import compare_table_text, reason_lines, terminal_width
    from ._display.theme import fmt_level

    # a suite folder stands for its latest run, as for gate and report
    args.base_run, args.candidate_run = _run_dir(args.base_run, "base:"), _run_dir(args.candidate_run, "candidate:")
    if Path(args.base_run).resolve() == Path(args.candidate_run).resolve():
        raise OloproofError(f"{args.base_run}: the base and the candidate are the same run; compare two runs")
    # before load_run, which may build a run's columnar copy: a --release error writes nothing
    compare_release(Run.unopened(args.base_run), Run.unopened(args.candidate_run), args.release)
    base = _whole(load_run(args.base_run), args.base_run)
    candidate = _whole(load_run(args.candidate_run), args.candidate_run)
    cmp = compare(base, candidate, release=args.release)
    print(terminal_text(f"base {base.run_id} -> candidate {candidate.run_id}"))  # run ids read from manifests
    epochs = max(cmp.base.epochs, cmp.candidate.epochs)  # a row is a case run: 40 cases of 3 epochs pair 120
    paired = f"{cmp.n_paired} paired case runs ({epochs} epochs a case)" if epochs > 1 else \
        f"{cmp.n_paired} paired cases"
    print(f"{paired}; diff = candidate - base with its {fmt_level(cmp.release.confidence)} "
          f"interval; margin {cmp.margin:g}")
    width = terminal_width()
    reasons, approximate = approximate_once(cmp.table["reason"], args.release, candidate.release is not None,
                                            "--release to compare these runs", "the candidate run", PAIRED_CLUSTERED)
    table = cmp.table.assign(reason=reasons)  # the key to set: said once, below
    print(compare_table_text(table, width))
    for line in reason_lines(table, width, plain=_COMPARE_PLAIN):  # as the gate prints its reasons
        print(line)
    if approximate:  # one key fixes it: say which, once
        _print_wrapped(approximate, width)
    for note in cmp.notes:  # notes name criteria and copies
        _print_wrapped(f"note: {note}", width)
    if len(cmp.flips):
        print(f"flipped (p->f, f->p): {len(cmp.flips)} rows in {cmp.flips['case_id'].nunique()} cases; "
              "in Python: op.compare(base, cand).flips, .panel(case_id)")
    code = 0 if cmp.verdict == "NO_REGRESSION" else 1
    weaker = len(cmp.relaxed) if code == 0 else 0  # named in the first note above
    print(f"compare: {cmp.verdict}" + (f" ({cmp.reason})" if cmp.reason else "") + f" — exit {code}: "
          + _compare_why(cmp.verdict, table, cmp.reason)
          + (f", by {weaker_count(weaker, cmp.weaker_than)}" if weaker else ""))
    return code


#: Reasons of ``oloproof compare`` that only restate the verdict: not repeated under the table.
_COMPARE_PLAIN = frozenset({"ci_low_at_or_above_minus_margin", "ci_high_below_minus_margin",
                            "interval_includes_minus_margin"})


def _compare_why(verdict: str, table: Any, reason: str = "") -> str:
    """Why ``oloproof compare`` exits as it does: the rule that decided, named from the table's reasons.

    INSUFFICIENT_EVIDENCE says "not ruled out" only when an interval reaching below -margin is why; a criterion
    left undecided by a rule before the interval (``approximate_methods_not_allowed``, ``too_few_clusters``,
    ``transform_not_checked``, ``no_evidence``, ``all_missing``) is named instead, as its interval may well lie
    above -margin.
    """
    if verdict == "NO_REGRESSION":  # as the gate's PASS counts its vacuous criteria: they cannot regress
        from ._analysis.gate_findings import VACUOUS

        listed = table[table["verdict"] != "REPORT_ONLY"]
        vacuous = int(listed["reason"].str.contains(VACUOUS, regex=False).sum())
        return ("every listed criterion's interval lies above -margin"
                + (f" ({vacuous} of them vacuous: cannot fail as configured)" if vacuous else ""))
    if verdict == "REGRESSION":
        return "a listed criterion's interval lies below -margin"
    undecided = table.loc[table["verdict"] == "INSUFFICIENT_EVIDENCE", "reason"]
    firsts = (str(why).split(";")[0] for why in undecided)  # too_few_clusters' numbers stay under the table
    rules = sorted({first.split(":")[0] if first.startswith("too_few_clusters:") else first for first in firsts})
    if not rules and reason:  # every criterion cleared the margin on the paired cases; the run as a whole did not
        return f"not decided: {reason.split(':')[0]}"
    if rules in ([], ["interval_includes_minus_margin"]):
        return "a regression larger than the margin is not ruled out"
    return f"not decided: {', '.join(rules)}"


def _cmd_receipt(args: argparse.Namespace) -> int:
    """Exit 0 verified, 2 otherwise; stderr names the receipt's status, or says ``contract error``."""
    from ._run.observe import verify_contract_file
    from .errors import ContractFileError, DigestKeyError

    try:
        if not args.contract:  # an unset `$CONTRACT`: a contract error, as a hook reading --json expects one
            raise ContractFileError(f"argument contract: {_EMPTY_PATH}")
        with _StopOnSignals(interrupt=True):
            receipt = verify_contract_file(Path(args.contract))
    except KeyboardInterrupt as exc:  # a hook blocks on 2 only: never 130 or death by a signal (_Stopped too)
        name = exc.args[0] if isinstance(exc, _Stopped) else "SIGINT"
        if args.json:
            print(json.dumps({"error": "interrupted", "message": f"stopped by {name}"}))
        _say(f"oloproof: not verified: stopped by {name} (the validator it ran was stopped too)")
        return 2
    except (ContractFileError, DigestKeyError) as exc:
        # a contract file error names the file already; a missing key names the variable, so name the file too
        message = str(exc) if isinstance(exc, ContractFileError) else f"{args.contract}: {exc}"
        if args.json:
            print(json.dumps({"error": "contract error", "message": message}))
        _say(f"oloproof: error: contract error: {cut_middle(terminal_text(message))}")  # cut after its escapes
        return 2
    body = receipt.to_json_dict()
    print(json.dumps({"receipt": body}) if args.json else json.dumps(body, indent=2))
    if receipt.status != "verified":
        reason = terminal_text(str(receipt.reason or "not verified"))
        _say(f"oloproof: {reason if reason.startswith(receipt.status + ':') else receipt.status + ': ' + reason}")
        return 2
    if receipt.expected_sha256 is None and receipt.validator is None:  # as the gate's outcome_content_unchecked
        _say("oloproof: warning: outcome_content_unchecked: the contract has no expected_sha256 and no validator, "
             "so any file at its locator was verified, an empty one included")
    return 0


class _Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP reached the command (``args[0]``: the signal's name): stopped as a Ctrl-C stops it,
    exit 2, never death by the signal (143, 129); a run says how to resume."""


class _StopOnSignals:
    """While inside, SIGTERM and SIGHUP raise :class:`_Stopped` (so a running validator's process group is
    killed on the way out, as on Ctrl-C); the handlers before are put back after. Only in the main thread. A
    signal the process was started ignoring (``nohup``, ``trap '' HUP``) stays ignored: that was asked for.
    ``interrupt``: Ctrl-C too (``_Stopped("SIGINT")``, where Python's own handler is set). While a command
    validator is being started, the stop waits until its process group can be killed with it
    (:func:`~oloproof_nb._run.observe.defer_stop`)."""

    def __init__(self, interrupt: bool = False) -> None:
        self._names = ("SIGTERM", "SIGHUP", "SIGINT") if interrupt else ("SIGTERM", "SIGHUP")

    def __enter__(self) -> None:
        from ._run.observe import defer_stop

        self._before: dict[signal.Signals, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return

        def stop(signum: int, frame: Any) -> None:
            stopped = _Stopped(signal.Signals(signum).name)
            if not defer_stop(stopped):
                raise stopped

        for name in self._names:
            sig = getattr(signal, name, None)
            before = None if sig is None else signal.getsignal(sig)
            if sig is not None and before is not signal.SIG_IGN and (
                    name != "SIGINT" or before is signal.default_int_handler):
                self._before[sig] = signal.signal(sig, stop)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._before.items():
            signal.signal(sig, handler)


def _cmd_report(args: argparse.Namespace) -> int:
    """Write the report, then exit on its gate as every command does: 0 PASS, 1 BLOCK (the report of a regressed or
    unfinished run is written all the same), 2 an error. A CI step that only writes the report cannot pass a
    release the report says BLOCK."""
    from ._display.notebook import load_run
    from ._display.report import report_and_gate, report_path
    from ._display.terminal import exit_line

    report_path(args.out)  # before any run folder is opened (opening one may build its columnar copy)
    result = _load(args, "reporting on")  # checks --release and --baseline before it opens either run
    idle = load_run(args.baseline) if args.baseline else None
    path, g = report_and_gate(result, args.out, release=args.release, baseline=idle)
    print(terminal_text(f"wrote {path}"))
    print(exit_line(g))  # the last line: why the command exits as it does
    return 0 if g.verdict == "PASS" else 1


COMMANDS = {"init": _cmd_init, "run": _cmd_run, "gate": _cmd_gate, "receipt": _cmd_receipt, "report": _cmd_report,
            "compare": _cmd_compare}


#: The library's errors name Python parameters; the command says its own flags instead (whole phrases only,
#: so a path that happens to hold ``out=`` is never rewritten).
_CLI_WORDS = (("resume=True needs out= (", "--resume needs --out DIR ("),
              ("choose another out=", "choose another --out"), ("give out= a folder", "give --out a folder"),
              ("pass resume=True", "pass --resume"),
              ("without resume=True", "without --resume"), ("with force=True", "with --force"),
              ("pass_threshold={criterion: X}", "--pass-threshold CRITERION=X"),
              ("pass_threshold=", "--pass-threshold "), ("state_key=", "--state-key "))

#: A criterion's own threshold as the library names it, ``pass_threshold['rating']=`` (the name as Python writes
#: it, in either quotes), for :func:`_cli_phrases`.
_OWN_THRESHOLD = re.compile(r"""pass_threshold\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]=""")


def _cli_phrases(text: str) -> str:
    """A library message's phrases in the command's words: ``out=`` → ``--out``, ``resume=True`` → ``--resume``,
    ``pass_threshold=7`` → ``--pass-threshold 7``, ``pass_threshold['rating']=7`` → ``--pass-threshold rating=7``
    (a warning's too: the reading of an Inspect AI log warns of its ``pass_threshold``)."""
    text = _OWN_THRESHOLD.sub(lambda found: f"--pass-threshold {ast.literal_eval(found.group(1))}=", text)
    for python, flag in _CLI_WORDS:
        text = text.replace(python, flag)
    return text


def _cli_words(text: str) -> str:
    """A library error in the command's words (:func:`_cli_phrases`; ``example 'x'`` → ``--example 'x'``)."""
    text = _cli_phrases(text)
    return "--" + text if text.startswith("example '") else text


def _os_error_line(exc: OSError) -> str:
    """An OSError as ``file: what happened`` (the file first, as every other error names its file)."""
    what = exc.strerror or describe_exception(exc)
    where = exc.filename if exc.filename is not None else None
    if where is None and exc.errno == errno.ENOENT:  # of a relative path made absolute, when the cwd is gone
        try:
            os.getcwd()
        except OSError:  # the line named no file ("No such file or directory")
            return (f"the current folder no longer exists (deleted after the shell entered it: {what}); cd to a "
                    "folder that exists and run the command again, or give absolute paths")
    if where is None:  # an error of no file (a full disk, a socket): said as it is, wherever the cwd is
        return what
    other = f" -> {exc.filename2}" if exc.filename2 is not None else ""
    return f"{os.fsdecode(where)}{other}: {what}"


def _save_internal_traceback(text: str) -> str:
    try:
        fd, path = tempfile.mkstemp(prefix="oloproof-internal-error-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path
    except OSError:
        return "(it could not be saved)"


#: What the command prints that a stream of another encoding may lack, in ASCII.
_ASCII = str.maketrans({"–": "-", "—": "--", "≤": "<=", "≥": ">=", "…": "...", "×": "x", "±": "+/-", "→": "->",
                        "·": "*", "’": "'", "‘": "'", "“": '"', "”": '"'})


def _encodable(text: str, encoding: str) -> str:
    """``text`` as ``encoding`` can write it: the typography in ASCII, anything else as a backslash escape."""
    return text.translate(_ASCII).encode(encoding, "backslashreplace").decode(encoding)


def _say(line: str) -> None:
    """One line on standard error, if there is one to write to (a completion hook's exit code must not depend
    on it: with stderr closed or full, the line is lost and the code stays)."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        try:
            stream.write(line + "\n")
        except UnicodeEncodeError:
            stream.write(_encodable(line, getattr(stream, "encoding", None) or "ascii") + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


class _ReaderMayLeave(SystemStream):
    """Standard output whose reader may stop reading (``oloproof gate RUN | head``): what is written after that
    goes nowhere and the command still exits with its own code (it was 2, "Broken pipe", whatever the gate said).
    Unlike the system's streams, text the stream cannot encode is written with ASCII stand-ins, and another
    error (a full disk) names standard output and leaves it, else the interpreter's last flush fails again and the
    exit code becomes 120."""

    def _put(self, text: str) -> None:
        try:
            self._stream.write(text)
        except UnicodeEncodeError:  # a stdout that is not UTF-8 (PYTHONIOENCODING=latin-1): ASCII stand-ins
            self._stream.write(_encodable(text, getattr(self._stream, "encoding", None) or "ascii"))

    def _failed(self, exc: OSError) -> None:
        self._leave()
        raise OSError(exc.errno, exc.strerror, "standard output") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``oloproof`` console script; returns the exit code."""
    open_standard_descriptors()  # before any file or pipe is opened: none may take the number of a closed stream
    given = list(sys.argv[1:] if argv is None else argv)
    args = _parser(receipt_json=_receipt_wants_json(given)).parse_args(given)
    shown: set[str] = set()

    def _warn(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        line = terminal_text(_cli_phrases(str(message)))  # `--pass-threshold 7`, as the command was given
        if line not in shown:  # a finding warned at load_suite and again by the gate prints once
            shown.add(line)
            label = next((text for kind, text in _WARNING_LABELS.items() if issubclass(category, kind)),
                         category.__name__)
            _say(f"oloproof: warning: {terminal_text(label)}: {line}")  # a system's own warning class names it

    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = _ReaderMayLeave(stdout)  # `oloproof gate RUN | head` keeps its code
    if stderr is None:  # standard error closed: what the command says on it goes nowhere, its code stays
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        code = _dispatch(args, _warn)
        try:
            sys.stdout.flush()  # a reader that left is found here at the latest
        except OSError as exc:  # output lost (a full disk): not the result the code would say
            _say(f"oloproof: error: {cut_middle(terminal_text(_os_error_line(exc)))}")
            code = 2
        return code
    finally:
        sys.stdout = stdout
        if stderr is None:
            sys.stderr.close()
            sys.stderr = stderr
        else:  # a line that could not be written (stderr full) must not fail again at exit
            try:
                stderr.flush()
            except (OSError, ValueError):
                to_devnull(stderr)


#: The commands that make files and folders to be read back: a suite, a run folder, a report, and (opening a run
#: folder) its columnar copy, ``frames/``. ``receipt`` makes none.
_WRITERS = frozenset({"init", "run", "gate", "report", "compare"})


def _umask() -> int:
    """The process's umask: read where Linux shows it (``/proc/self/status``), else set and put back."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _refuse_a_blinding_umask() -> None:
    """Refuse, before anything is made, a umask that takes any of its owner's permissions from what the command
    makes (``umask 777``: folders the run could not enter again, files it could not reopen; before, one line
    ``…/.lock: Permission denied`` and an empty folder left of mode 0)."""
    mask = _umask()
    if mask & 0o700:
        raise OloproofError(f"umask {mask:04o}: the files and folders this command makes would be mode "
                            f"{0o666 & ~mask:04o} and {0o777 & ~mask:04o}, which their owner cannot read back; set a "
                            "umask that leaves the owner read, write and search (umask 022, or 077 to keep them "
                            "private), then run the command again")


def _dispatch(args: argparse.Namespace, warn: Any) -> int:
    """The command's exit code; every error one line on standard error (and, for ``oloproof receipt --json``,
    one JSON object on standard output: :func:`_error`)."""
    try:
        with warnings.catch_warnings(), _StopOnSignals():
            for kind in _WARNING_LABELS:  # each line is printed once by ``warn``, not by the filters
                warnings.simplefilter("always", kind)
            warnings.showwarning = warn
            if args.command in _WRITERS:
                _refuse_a_blinding_umask()
            return COMMANDS[args.command](args)
    except OloproofError as exc:
        return _error(args, "error", terminal_text(_cli_words(str(exc))))
    except InternalError as exc:
        return _error(args, "internal error", terminal_text(str(exc)), "oloproof: ")
    except OSError as exc:  # a path of 5,000 characters is "File name too long": cut as every message is
        return _error(args, "error", terminal_text(_os_error_line(exc)))
    except KeyboardInterrupt as exc:  # 2, not 130 (nor 143 for SIGTERM): an exit code is 0, 1 or 2, nothing else
        return _error(args, "interrupted", "interrupted" + (f" by {exc.args[0]}" if isinstance(exc, _Stopped) else ""),
                      "oloproof: ")
    except (MemoryError, ImportError) as exc:
        if isinstance(exc, MemoryError) or (_MEMORY_REFUSED in str(exc) and "not permitted" not in str(exc)):
            # the machine's memory (or the process's limit, ulimit -v) refused an allocation, or the mapping of a
            # compiled module imported on first use: no bug of oloproof_nb, and nothing to look for in a traceback
            return _error(args, "error", "out of memory (" + terminal_text(describe_exception(exc)) + "); free "
                          "memory or raise the process's limit on memory (ulimit -v), then run the command again")
        return _internal_error(exc, args)
    except Exception as exc:  # noqa: BLE001 - a bug in oloproof: one line, the traceback kept in a file
        return _internal_error(exc, args)


def _error(args: argparse.Namespace, kind: str, message: str, prefix: str = "oloproof: error: ") -> int:
    """Say ``prefix + message`` on standard error; for ``oloproof receipt --json`` also ``{"error": kind,
    "message": message}`` on standard output, so a hook reading stdout as JSON gets one object on every exit 2.
    ``message``, already escaped (:func:`~oloproof_nb.errors.terminal_text`), is cut to
    :data:`~oloproof_nb.errors.MESSAGE_LIMIT` characters here: escaping makes a control character up to 10, so a
    message cut before it could still fill a line of thousands (review C14). Returns 2."""
    message = cut_middle(message)
    if args.command == "receipt" and getattr(args, "json", False):
        _print_json_error(kind, message)
    _say(prefix + message)
    return 2


#: What the dynamic loader says when the memory limit refuses to map a compiled module (numpy, scipy, pyarrow);
#: followed by "Operation not permitted" it is a file system mounted noexec instead, not memory
_MEMORY_REFUSED = "failed to map segment from shared object"


def _internal_error(exc: BaseException, args: argparse.Namespace) -> int:
    """A bug in oloproof: one line naming the exception and the file that keeps its traceback; exit code 2."""
    path = _save_internal_traceback(traceback.format_exc())
    message = f"{terminal_text(describe_exception(exc))} (a bug in oloproof_nb; the traceback is in {path})"
    return _error(args, "internal error", message, "oloproof: internal error: ")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
