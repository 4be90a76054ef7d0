"""The ``oloproof`` command's entry: :func:`main` parses, runs the command and turns every error into one line and
exit 2 (a bug's traceback kept in a file)."""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import tempfile
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

from .._run.streams import open_standard_descriptors, to_devnull
from ..errors import InternalError, OloproofError, cut_middle, describe_exception, storable, terminal_text
from .commands import COMMANDS
from .output import WARNING_LABELS, ReaderMayLeave, os_error_line, print_json_error, say, start_command
from .parser import build_parser, command_of, wants_json
from .process import StopOnSignals, Stopped

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


def _save_internal_traceback(text: str) -> str:
    try:
        fd, path = tempfile.mkstemp(prefix="oloproof-internal-error-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(storable(text))  # a message quoting a name that is not UTF-8 (a lone surrogate)
        return path
    except OSError:
        return "(it could not be saved)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``oloproof`` console script; returns the exit code."""
    open_standard_descriptors()  # before any file or pipe is opened: none may take the number of a closed stream
    given = list(sys.argv[1:] if argv is None else argv)
    start_command()
    shown: set[str] = set()

    def _warn(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        line = terminal_text(_cli_phrases(str(message)))  # `--pass-threshold 7`, as the command was given
        if line not in shown:  # a finding warned at load_suite and again by the gate prints once
            shown.add(line)
            label = next((text for kind, text in WARNING_LABELS.items() if issubclass(category, kind)),
                         category.__name__)
            say(f"oloproof: warning: {terminal_text(label)}: {line}")  # a system's own warning class names it

    stdout, stderr = sys.stdout, sys.stderr
    out = ReaderMayLeave(stdout)  # `oloproof gate RUN | head` keeps its code
    sys.stdout = out
    if stderr is None:  # standard error closed: what the command says on it goes nowhere, its code stays
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        try:
            args = build_parser(json_errors=wants_json(given), hook=command_of(given) == "receipt").parse_args(given)
        except SystemExit as stop:  # --help or --version (their text on stdout), or a usage error
            if not stop.code:
                _parser_output_delivered(out)
            raise
        except OSError:  # Python 3.10's argparse lets its write's error through (3.11 ignores it)
            if out.lost is None:
                raise
            _parser_output_delivered(out)
            raise
        code = _dispatch(args, _warn)
        try:
            sys.stdout.flush()  # a reader that left is found here at the latest
        except OSError as exc:  # output lost (a full disk): not the result the code would say
            say(f"oloproof: error: {cut_middle(terminal_text(os_error_line(exc)))}")
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


def _parser_output_delivered(out: ReaderMayLeave) -> None:
    """Flush what ``--help`` or ``--version`` wrote on standard output; when it is lost (a full disk), say so in
    one line and raise ``SystemExit(2)``. argparse ignores an error of its write, so ``oloproof --version >
    /dev/full`` exited 0 having written nothing: unbuffered, the write failed inside argparse; buffered, the flush
    as the process ended, whose error is ignored too. A reader that left (``| head``) or a closed standard output
    keeps the code, as every command's output does (:class:`~oloproof_nb.cli.output.ReaderMayLeave`)."""
    try:
        out.flush()
    except OSError:
        pass  # kept in out.lost
    if out.lost is not None:
        say(f"oloproof: error: {cut_middle(terminal_text(os_error_line(out.lost)))}")
        raise SystemExit(2) from None


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
    """The command's exit code; every error one line on standard error (and, with ``--json`` of ``oloproof
    receipt``, ``gate`` or ``compare``, one JSON object on standard output: :func:`_error`)."""
    try:
        # a completion hook stops on every signal that would end it (exit 2, the one code a hook runner blocks on)
        with warnings.catch_warnings(), StopOnSignals(every=args.command == "receipt"):
            for kind in WARNING_LABELS:  # each line is printed once by ``warn``, not by the filters
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
        return _error(args, "error", terminal_text(os_error_line(exc)))
    except KeyboardInterrupt as exc:  # 2, not 130 (nor 143 for SIGTERM): an exit code is 0, 1 or 2, nothing else
        return _error(args, "interrupted", "interrupted" + (f" by {exc.args[0]}" if isinstance(exc, Stopped) else ""),
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
    """Say ``prefix + message`` on standard error; with ``--json`` (``oloproof receipt``, ``gate``, ``compare``)
    also ``{"error": kind, "message": message}`` on standard output, so a hook or a CI job reading stdout as JSON
    gets one object on every exit 2.
    ``message``, already escaped (:func:`~oloproof_nb.errors.terminal_text`), is cut to
    :data:`~oloproof_nb.errors.MESSAGE_LIMIT` characters here: escaping makes a control character up to 10, so a
    message cut before it could still fill a line of thousands. Returns 2."""
    message = cut_middle(message)
    if getattr(args, "json", False):
        print_json_error(kind, message)
    say(prefix + message)
    return 2


#: What the dynamic loader says when the memory limit refuses to map a compiled module (numpy, scipy, pyarrow);
#: followed by "Operation not permitted" it is a file system mounted noexec instead, not memory
_MEMORY_REFUSED = "failed to map segment from shared object"


def _internal_error(exc: BaseException, args: argparse.Namespace) -> int:
    """A bug in oloproof: one line naming the exception and the file that keeps its traceback; exit code 2."""
    path = _save_internal_traceback(traceback.format_exc())
    message = f"{terminal_text(describe_exception(exc))} (a bug in oloproof_nb; the traceback is in {path})"
    return _error(args, "internal error", message, "oloproof: internal error: ")
