"""The ``oloproof`` command line's parser: its commands and options (each option given once), and argument errors
in one line."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TypeVar

from .._config.files import home_shorthand
from .._version import __version__
from ..errors import cut_middle, terminal_text
from .output import print_json_error


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


_N = TypeVar("_N", int, float)

#: The namespace attribute in which :class:`_Once` notes the options given (removed before the command sees it).
_GIVEN = "_oloproof_given"


#: How each kind of number is written on the command line (:func:`_number`).
_WRITTEN = {int: "digits only, e.g. 4", float: "digits, with a '.' or an exponent as needed, e.g. 0.5, 7 or 1e-3"}


def _number(text: str, kind: type[_N]) -> _N:
    """``kind(text)``, ``kind`` being ``int`` or ``float``: the one reading of a numeric option's value. A value
    holding a '_' is refused (ArgumentTypeError naming it and what is allowed): Python's int() and float() skip a
    '_' between digits, so ``--pass-threshold 1_0`` gated at 10 and ``--workers 1_6`` ran 16 workers, a slip of the
    finger read as a number. So is a value that is not ASCII: Python reads any Unicode digit (``--epochs=１``, a
    fullwidth one, ran 1 epoch; Arabic-Indic digits too) and skips Unicode spaces, where every number of a file is
    ASCII (YAML reads ``１`` as text, which a setting refuses). Any other value that is no number raises ``kind``'s
    ValueError."""
    if "_" in text:
        raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r} (a '_' is refused, as Python would "
                                         f"skip it: give {_WRITTEN[kind]})")
    if not text.isascii():
        raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r} (a character other than ASCII is "
                                         f"refused, as Python would read any Unicode digit: give {_WRITTEN[kind]})")
    return kind(text)


def _count(text: str) -> int:
    """An ``int`` option's value (``--workers``, ``--epochs``): :func:`_number`, with argparse's words for a value
    that is no number."""
    try:
        return _number(text, int)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None


def _threshold_arg(text: str) -> float | tuple[str, float]:
    """A ``--pass-threshold`` value: ``X`` (every criterion's), or ``NAME=X`` (criterion NAME's; split at the last
    ``=``, as X holds none); X is read by :func:`_number`."""
    name, is_named, number = text.rpartition("=")
    try:
        value = _number(number, float)
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
    #: Whether an argument error is also one JSON object on stdout (``oloproof receipt|gate|compare ... --json``,
    #: :func:`wants_json`).
    json_errors = False

    #: The arguments this parser was given (:meth:`parse_known_args`), for :meth:`error`.
    _given: Sequence[str] = ()

    #: Whether the command is the completion hook ``oloproof receipt``, whose exit 0 means "verified": its
    #: ``--help`` (and the top-level ``--help`` or ``--version`` given before it) goes to stderr and exits 2, so a
    #: hook written with ``-h`` blocks instead of reading as a verified outcome.
    hook = False

    #: What ``--help`` or ``--version`` printed (:meth:`_print_message`), for the ``--json`` error of :meth:`exit`.
    _printed = ""

    def _print_message(self, message: str, file: Any = None) -> None:
        if self.hook and file is sys.stdout:  # stdout holds a receipt, or nothing
            file = sys.stderr
            self._printed = message
        super()._print_message(message, file)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if self.hook and status == 0:  # --help or --version: nothing was verified
            if self.json_errors:  # the version, not "the help was printed", when the version was
                print_json_error("usage error", HOOK_VERSION if self._printed.strip() == VERSION else HOOK_HELP)
            status = 2
        super().exit(status, message)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        """As argparse's; an option that stores one value (``--out DIR``) may be given once (:class:`_Once`)."""
        if args and str(args[0]).startswith("-") and kwargs.get("action", "store") == "store":
            kwargs["action"] = _Once
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # one line on stderr, exit 2, no usage dump
        wanted = re.fullmatch(r"argument (--[\w-]+).*: expected one argument", message)
        if wanted:  # `--pass-threshold -inf`: argparse takes a value that starts with '-' (and no number) for an option
            message += f"; a value that starts with '-' is given as {wanted.group(1)}=VALUE"
        taken = next((arg for arg in self._given if self._read_as_option(arg)), None)
        if taken is not None and message.startswith("the following arguments are required: "):
            # `oloproof gate -r1`: the path was set aside as an unknown option, and the line named only run_dir
            message += f"; {taken} was read as an option: a path that starts with '-' is given as ./{taken} or after --"
        # one line, as every error: argparse quotes an unrecognized argument as given (a line break, an escape
        # sequence, 5,000 characters); cut once escaped, as an escape is up to 10 characters long
        message = cut_middle(terminal_text(message))
        if self.json_errors:  # a hook reading stdout as JSON gets its error there too, not nothing
            print_json_error("usage error", f"{message} (see `{self.prog} --help`)")
        self.exit(2, f"oloproof: error: {message} (see `{self.prog} --help`)\n")

    def _read_as_option(self, arg: str) -> bool:
        """Whether argparse takes ``arg``, which starts with one '-', for an option that this parser does not have
        (``-r1``); a negative number or a word with a space in it it takes for a value, as it does ``-``. A command's
        parser only: the top-level one's positional is the command's name."""
        if (self._subparsers is not None or not arg.startswith("-") or arg.startswith("--") or arg == "-"
                or " " in arg or self._negative_number_matcher.match(arg)):
            return False
        name = arg.split("=", 1)[0]
        return not any(option.startswith(name) for option in self._option_string_actions)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        """As argparse's; the arguments are kept for :meth:`error` (a command's parser gets those after its name)."""
        self._given = list(args) if args is not None else []
        return super().parse_known_args(args, namespace)

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


#: The ``--json`` error of ``oloproof receipt --help`` (:attr:`_Parser.hook`).
HOOK_HELP = "the help was printed on stderr and nothing was verified: exit 2, as for every outcome not verified"
#: What ``oloproof --version`` prints.
VERSION = f"oloproof_nb {__version__}"
#: The ``--json`` error of ``oloproof --version receipt …`` (:attr:`_Parser.hook`), naming the version as
#: ``oloproof --version`` prints it.
HOOK_VERSION = (f"{VERSION} (the version, printed on stderr); nothing was verified: exit 2, as for every outcome not "
                "verified")


#: Why an empty path argument is refused (:func:`_path`; ``oloproof receipt`` says it as a contract error).
EMPTY_PATH = "an empty path names no file or folder (an unset shell variable?); give a path"


def _path(text: str) -> str:
    """A path argument as given; an empty one is refused. It is what ``--out "$DIR"`` passes when the variable is
    unset, and Python reads it as the current folder: `gate ""` gated the suite the shell stood in, `run SUITE --out
    ""` wrote the run into the current folder, and `--baseline ""` was dropped without a word. So is one whose first
    part is a ``~`` the shell left as it is (:func:`~oloproof_nb._config.files.home_shorthand`): ``--out=~/runs/r1``
    (bash expands no ``~`` after ``--out=``) made a folder named ``~`` in the current folder."""
    if not text:
        raise argparse.ArgumentTypeError(EMPTY_PATH)
    problem = home_shorthand(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


class _LinesKept(argparse.HelpFormatter):
    """argparse's help, except that a description or epilog written in lines keeps them (the ``--json`` object's
    keys, one group a line); one written as a paragraph is wrapped as before."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


#: The commands that take ``--json``: their result, and every exit 2, one JSON object on stdout.
JSON_COMMANDS = frozenset({"receipt", "gate", "compare"})


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` (the arguments, without the program) names, as argparse reads it: the first argument that
    is no option (the top-level options take no value); None when there is none.

    Examples
    --------
    >>> command_of(["--help", "receipt", "c.json"]), command_of(["--version"])
    ('receipt', None)
    """
    return next((arg for arg in argv if not arg.startswith("-")), None)


def wants_json(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (the command's arguments, without the program) is a command of :data:`JSON_COMMANDS`
    asking for ``--json``, as argparse would read it: ``--json``, an abbreviation of it (``--js``), or
    ``--json=VALUE`` (refused, but asked for), anywhere after the command and before a ``--``. The command is the
    first argument that is no option (the top-level options take no value).

    Examples
    --------
    >>> wants_json(["receipt", "--js"]), wants_json(["receipt", "--", "--json"])
    (True, False)
    >>> wants_json(["gate", "run", "--json"]), wants_json(["compare", "a", "b", "--js"]), wants_json(["run", "--json"])
    (True, True, False)
    """
    command = next((i for i, arg in enumerate(argv) if not arg.startswith("-")), None)
    if command is None or argv[command] not in JSON_COMMANDS:
        return False
    for arg in argv[command + 1:]:
        if arg == "--":
            return False
        name = arg.split("=", 1)[0]
        if len(name) >= 3 and "--json".startswith(name):
            return True
    return False


def build_parser(json_errors: bool = False, hook: bool = False) -> argparse.ArgumentParser:
    """The command line's parser; ``json_errors``: the argument errors of ``oloproof receipt``, ``gate`` and
    ``compare`` are JSON on stdout too (:func:`wants_json`); ``hook``: the arguments name ``receipt`` as the
    command (:func:`command_of`), so the top-level ``--help`` and ``--version`` exit 2 as its own ``--help`` does
    (:attr:`_Parser.hook`)."""
    p = _Parser(prog="oloproof", description="Judge stateful agents by the world they leave behind.")
    p.hook = hook
    p.add_argument("--version", action="version", version=VERSION)
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
    run.add_argument("--workers", type=_count, default=1, help="system instances run concurrently (default: 1)")
    run.add_argument("--resume", action="store_true", help="finish the interrupted run in --out")
    run.add_argument("--no-cache", action="store_true", help="run every fault replay live (no replay cache)")
    run.add_argument("--isolation", choices=["thread", "process"],
                     help="thread (default) or process: workers are processes, killed and replaced on a timeout")
    run.add_argument("--fsync", choices=["finish", "record"], default="finish",
                     help="force the run's files to the disk when it finishes (default) or after every record")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--epochs", type=_count, default=None, metavar="K",
                     help="run each case K times, each from a fresh reset (default: the suite's epochs, or 1)")
    run.add_argument("--baseline", action="store_true",
                     help="also run every case with a do-nothing agent (into baselines/<run_id>/ of the suite) "
                          "and show each criterion's noop_rate and whether it passes when idle")
    run.add_argument("--wide", action="store_true", help="every gate column, reasons uncut (lines may exceed 100)")

    gate = sub.add_parser("gate", help="the gate of a stored run or Inspect AI log; exit 0 PASS, 1 BLOCK",
                          formatter_class=_LinesKept,
                          description="Print the release gate of a stored run (or of Inspect AI logs). Exit 0 "
                                      "PASS; 1 BLOCK; 2 on an error.", epilog=_GATE_EPILOG)
    gate.add_argument("run_dir", type=_path, help="a run directory (runs/<run_id>/), a suite folder (its latest run), "
                      "or an Inspect AI log or folder of logs")
    gate.add_argument("--release", type=_path, help="another release.yaml to apply (an Inspect log: the thresholds)")
    gate.add_argument("--baseline", type=_path, metavar="BASELINE_DIR",
                      help="a do-nothing baseline run (from `oloproof run --baseline`, in baselines/ of the "
                           "suite): adds the columns noop (noop_rate) and idle (passes_when_idle)")
    gate.add_argument("--wide", action="store_true", help="every gate column, reasons uncut (lines may exceed 100)")
    _json_option(gate, json_errors)
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
        formatter_class=_LinesKept, epilog=_COMPARE_EPILOG,
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
    _json_option(compare, json_errors)

    receipt = sub.add_parser(
        "receipt", help="verify one outcome now; exit 0 verified, 2 otherwise",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Verify one promised outcome now (a completion hook: exit 0 verified, 2 blocks).",
        epilog=_RECEIPT_EPILOG)
    if isinstance(receipt, _Parser):
        receipt.hook = True
    receipt.add_argument("contract", help="CONTRACT.json (its locator is relative to this file)")  # "": _cmd_receipt
    _json_option(receipt, json_errors, "print the receipt, or the error, as one JSON object on one line of stdout")
    # the top-level parser reads every argument first: it refuses `receipt c.json --json --=x` (ambiguous: --help,
    # --version) before the command's parser sees it, and that exit 2 too is JSON when the command asked for --json
    p.json_errors = json_errors
    return p


def _json_option(cmd: argparse.ArgumentParser, json_errors: bool,
                 text: str = "print the result, or the error, as one JSON object on one line of stdout; the "
                             "table and its lines go to stderr (see below)") -> None:
    """``--json`` for ``cmd``, whose argument errors are then JSON on stdout too when ``json_errors``."""
    cmd.add_argument("--json", action="store_true", help=text)
    if isinstance(cmd, _Parser):
        cmd.json_errors = json_errors


#: The first lines of the gate's and compare's epilogs: where --json puts what.
_JSON_HEAD = """with --json, stdout holds one line of JSON and the table, its notes and the exit line go to
stderr; the exit code is the same:
"""

_JSON_ERRORS = """every exit 2 (an argument error: "usage error"; stopped: "interrupted"; a bug in oloproof_nb:
"internal error"; any other: "error") prints {"error": "...", "message": "..."} instead; a stop after the
object was written is exit 2 with that object alone (stdout never holds two)."""

_GATE_EPILOG = _JSON_HEAD + f"""\
  {{"command": "gate", "verdict": "PASS"|"BLOCK", "exit": 0|1, "run_id": "...",
   "reason": run-level reason or null, "relaxed": [...], "weaker_than": text or null,
   "drift": [...], "unscored": [...], "findings": [...],
   "criteria": [one object per row of the gate table, every column; NaN is null]}}
{_JSON_ERRORS}
"""

_COMPARE_EPILOG = _JSON_HEAD + f"""\
  {{"command": "compare", "verdict": "NO_REGRESSION"|"REGRESSION"|"INSUFFICIENT_EVIDENCE",
   "exit": 0|1, "reason": run-level reason or null, "why": what the exit line says after
   "exit N:", "base_run_id": "...", "candidate_run_id": "...", "n_paired": N, "margin": X,
   "relaxed": [...], "weaker_than": text or null, "drift": [...], "notes": [...],
   "criteria": [one object per row of the compare table, every column; NaN is null]}}
{_JSON_ERRORS}
"""


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

as a completion hook (Claude Code .claude/settings.json), the contract named by an absolute
path (a hook starts in the agent's current folder) and a timeout beyond the artifact's read
(60 s) and the validator's 60 s after it:
  {"hooks": {"Stop": [{"hooks": [{"type": "command", "timeout": 150,
      "command": "oloproof receipt \\"$CLAUDE_PROJECT_DIR\\"/.oloproof/CONTRACT.json"}]}]}}
"""


def _inspect_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--cluster", help="an Inspect log: the sample metadata key whose value is the cluster")
    cmd.add_argument("--state-key", help="an Inspect log: the sample store key holding the world (snapshots, changes)")
    cmd.add_argument("--pass-threshold", type=_threshold_arg, action=_Thresholds, metavar="X|NAME=X",
                     help="an Inspect log: a numeric score passes at or above X (default: 1, and a score outside "
                          "[0, 1] is missing); NAME=X, repeated, gives each criterion named its own X (the others "
                          "keep the default)")
