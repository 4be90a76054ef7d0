"""The ``oloproof`` console script's entry point: a module of its own, imported before the package.

The command exits 0 PASS, 1 BLOCK, 2 error and nothing else. It turns SIGTERM and SIGHUP (``oloproof receipt``:
every signal that would end it but SIGKILL and the faults', SIGSEGV, SIGBUS, SIGFPE, SIGILL) into exit 2 while it
works (``oloproof_nb.cli.process.StopOnSignals``), but importing ``oloproof_nb`` comes first (pydantic and the
evaluators: 0.4-1.3 s), and a signal then ended the command as the system's default does: 143 or 129, no line
(a hook runner that times out and sends SIGTERM may read 143 as "not blocking"). :func:`main`
first installs handlers that say ``oloproof: interrupted by SIGTERM`` (``--json`` of ``oloproof receipt``,
``gate`` or ``compare`` also prints its JSON error object) and exit 2, then imports the command and runs it; the
command's own handlers take over while it works and give these back when it is done, so a signal as it ends is
exit 2 too (and, the command's JSON object written, no second one). A Ctrl-C while the package is imported is exit
2 and ``oloproof: interrupted``, as during the command, and so is an exception that stops the import (a broken
install, a memory limit that refuses a compiled module): one line, ``oloproof: error: the oloproof_nb package could
not be imported: …``, where Python printed its traceback and exited 1 (a BLOCK to ``gate``, "not blocking" to a
hook runner); a module that calls ``sys.exit(1)`` (or ``sys.exit(0)``) meanwhile is that line too, naming the
module, where its number was the exit code. An exception the imported command raises past its own handling is a bug
of it: ``oloproof: internal error: …`` naming the file that keeps its traceback, as the command says of the bugs it
handles.
A signal the process was started ignoring (``nohup``, ``trap '' HUP``) stays ignored. Once the command has
returned, :func:`main` does the work Python does at exit with these handlers still installed and ends the process
(:func:`_end`): Python's own wind-down put every handler back to the default before it tore the modules down
(0.2-1.8 s), and a signal then ended the command by the signal. Only the interpreter's own start-up, before this
module's first line runs, is left to the system's default.

Importing this module changes nothing (only :func:`main` installs handlers), and importing ``oloproof_nb``
installs none: library code has no process-wide side effects. ``python -m oloproof_nb.cli`` imports the package
first, so it keeps the window this closes.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

TYPE_CHECKING = False  # not `typing`'s: importing typing (15-40 ms) would come before the handlers
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["main"]

#: The signals that stop the command (as ``oloproof_nb.cli.process.StopOnSignals`` names them).
_STOPPING = ("SIGTERM", "SIGHUP")

#: ``oloproof receipt`` (a completion hook: a hook runner blocks on exit 2 only) stops on every signal that ends a
#: process by default and can be handled, all but these (``oloproof_nb.cli.process.NOT_HOOK_STOPS``; a test holds
#: the two equal): SIGQUIT, SIGUSR1, SIGALRM, ... ended it 128 + N.
_NOT_STOPPING = frozenset({"SIGKILL", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGCONT", "SIGCHLD", "SIGURG",
                           "SIGWINCH", "SIGINFO", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"}
                          | ({"SIGIO"} if sys.platform.startswith(("darwin", "freebsd", "openbsd", "netbsd"))
                             else set()))


#: The commands that take ``--json`` (``oloproof_nb.cli.parser.JSON_COMMANDS``).
_JSON_COMMANDS = frozenset({"receipt", "gate", "compare"})


def _wants_json(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (without the program) is ``oloproof receipt``, ``gate`` or ``compare`` asking for ``--json``:
    the same rule as ``oloproof_nb.cli.parser.wants_json`` (which this module cannot import before the package; a
    test holds the two to the same answers).

    Examples
    --------
    >>> _wants_json(["receipt", "c.json", "--js"]), _wants_json(["receipt", "--", "--json"])
    (True, False)
    >>> _wants_json(["gate", "run", "--json"]), _wants_json(["run", "suite", "--json"])
    (True, False)
    """
    command = _command(argv)
    if command is None or argv[command] not in _JSON_COMMANDS:
        return False
    for arg in argv[command + 1:]:
        if arg == "--":
            return False
        name = arg.split("=", 1)[0]
        if len(name) >= 3 and "--json".startswith(name):
            return True
    return False


def _command(argv: Sequence[str]) -> int | None:
    """The index of the command's name in ``argv`` (the first word that is no option), or None."""
    return next((i for i, arg in enumerate(argv) if not arg.startswith("-")), None)


def _signal_name(signum: int) -> str:
    """``SIGUSR1``; a real-time signal without a name of its own ``SIGRTMIN+3``
    (``oloproof_nb.cli.process.signal_name``)."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        low = getattr(signal, "SIGRTMIN", None)
        return f"SIGRTMIN+{signum - int(low)}" if low is not None and signum > low else f"signal {signum}"


def _stops(argv: Sequence[str]) -> list[int]:
    """The signals that stop the command ``argv`` names: SIGTERM and SIGHUP; for ``oloproof receipt`` every signal
    but :data:`_NOT_STOPPING` and SIGINT (a Ctrl-C is Python's ``KeyboardInterrupt``, caught in :func:`main`)."""
    command = _command(argv)
    if command is not None and argv[command] == "receipt":
        return sorted(int(sig) for sig in signal.valid_signals()
                      if _signal_name(sig) not in _NOT_STOPPING | {"SIGINT"})
    return [int(sig) for sig in (getattr(signal, name, None) for name in _STOPPING) if sig is not None]


def _interrupted(message: str, as_json: bool, kind: str = "interrupted", prefix: str = "") -> None:
    """Say ``oloproof: <prefix><message>`` on standard error (and, with ``--json``, the JSON error object of
    ``kind`` on standard output), written straight to the descriptors: nothing of the command's is set up yet, or it
    is done. ``message`` is plain ASCII with no control character (:func:`_ascii_line`). A stream that is closed or
    gone loses its line; the exit code stays."""
    lines = []
    if as_json:  # json.dumps of the same object, without importing json here: only a backslash and a quote to escape
        quoted = message.replace("\\", "\\\\").replace('"', '\\"')
        lines.append((1, f'{{"error": "{kind}", "message": "{quoted}"}}\n'))
    lines.append((2, f"oloproof: {prefix}{message}\n"))
    for fd, line in lines:
        try:
            os.write(fd, line.encode("ascii"))
        except OSError:
            pass


def _json_written() -> bool:
    """Whether the command has written its one ``--json`` object already (``oloproof_nb.cli.output.json_written``):
    a signal as it ends then adds no second object, which would leave stdout no JSON document."""
    output = sys.modules.get("oloproof_nb.cli.output")
    written = getattr(output, "json_written", None)
    return bool(written()) if callable(written) else False


def _stop_while_outside_the_command(argv: Sequence[str]) -> None:
    """Make SIGTERM and SIGHUP (for ``oloproof receipt`` every signal of :func:`_stops`) exit 2 with one line,
    unless the process was started ignoring them."""
    as_json = _wants_json(argv)

    def stop(signum: int, frame: FrameType | None) -> None:
        _interrupted(f"interrupted by {_signal_name(signum)}", as_json and not _json_written())
        os._exit(2)  # at once: what is half imported or half torn down must not run on, or decide the code

    for sig in _stops(argv):
        try:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                signal.signal(sig, stop)
        except (OSError, ValueError):  # one the platform keeps for itself
            pass


def main() -> NoReturn:
    """Run the ``oloproof`` command (``oloproof_nb.cli.main``) with the exit-2 handlers installed first, and end
    the process with its exit code (:func:`_end`)."""
    argv = sys.argv[1:]
    try:
        code = _run(argv)
    except SystemExit as stop:  # the parser's: --help, --version, a usage error (its line already written)
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:  # sys.exit("why") from a module the package imports: Python printed it and exited 1
            _interrupted(_ascii_line(str(stop.code)), _wants_json(argv) and not _json_written(), kind="error",
                         prefix="error: ")
            code = 2
    _end(code, argv)


def _run(argv: Sequence[str]) -> int:
    """The command ``argv`` (without the program), its handlers installed first; returns the exit code."""
    _stop_while_outside_the_command(argv)
    try:
        try:
            from oloproof_nb.cli import main as command
        except SystemExit as stop:  # sys.exit(1) in a module the package imports: its code read as BLOCK (0, PASS)
            if stop.code is not None and not isinstance(stop.code, int):
                raise  # sys.exit("why"): its text is the line (main)
            code = "" if stop.code is None else f": {stop.code}"
            _interrupted("the oloproof_nb package could not be imported: " + _ascii_line(
                f"SystemExit{code}{_raised_in(stop)}"), _wants_json(argv) and not _json_written(), kind="error",
                prefix="error: ")
            return 2
        return command()
    except KeyboardInterrupt:  # a Ctrl-C before the command's own handling: 2, not 130 and a traceback
        _interrupted("interrupted", _wants_json(argv) and not _json_written())
        return 2
    except Exception as exc:  # noqa: BLE001 - the package cannot be imported: 2, not Python's traceback and exit 1
        # a broken install (a dependency missing or of a version without a name it needs), a memory limit that
        # refuses a compiled module: exit 1 is a BLOCK to `gate`, and "not blocking" to a hook runner, which let
        # the agent stop with no receipt verified. The command's own errors are its lines and exit 2 already
        what = type(exc).__name__ + (f": {exc}" if str(exc).strip() else "")  # MemoryError has no message
        if "oloproof_nb.cli" in sys.modules:  # imported: a bug of the command's, outside its own handling
            _interrupted(_ascii_line(f"{what} (a bug in oloproof_nb; the traceback is in {_saved_traceback()})"),
                         _wants_json(argv) and not _json_written(), kind="internal error", prefix="internal error: ")
        else:
            _interrupted("the oloproof_nb package could not be imported: " + _ascii_line(what),
                         _wants_json(argv) and not _json_written(), kind="error", prefix="error: ")
        return 2


def _raised_in(exc: BaseException) -> str:
    """``, raised in module 'name' (file)``: the module whose code raised ``exc`` (the last frame of its traceback,
    the caller of ``sys.exit``), or nothing when its traceback has no frame."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_globals.get("__name__")
    return f", raised in module {name!r} ({tb.tb_frame.f_code.co_filename})"


def _saved_traceback() -> str:
    """The file that keeps the traceback being handled, as the command keeps the traceback of its own bugs (a bug
    past the command's handling was one line naming the exception, its traceback lost)."""
    try:
        import traceback

        from oloproof_nb.cli.dispatch import _save_internal_traceback

        return _save_internal_traceback(traceback.format_exc())
    except Exception:  # noqa: BLE001 - the line is said without it
        return "(it could not be saved)"


#: The most characters of an exception's text :func:`_ascii_line` keeps (``oloproof_nb.errors.MESSAGE_LIMIT``).
_LINE_LIMIT = 2000


def _ascii_line(text: str) -> str:
    """``text`` as one line of plain ASCII: its runs of white space (line breaks too) one space, any other character
    outside printable ASCII escaped as ``ascii()`` escapes it (ESC ``\\x1b``, ``é`` ``\\xe9``), cut in the middle
    to :data:`_LINE_LIMIT` characters.

    Examples
    --------
    >>> _ascii_line("\\n\\nImporting the numpy C-extensions failed.\\n  Caf\\xe9 \\x1b[2J")
    'Importing the numpy C-extensions failed. Caf\\\\xe9 \\\\x1b[2J'
    >>> len(_ascii_line("x" * 5000))
    2000
    """
    line = "".join(char if " " <= char <= "~" else ascii(char)[1:-1] for char in " ".join(text.split()))
    if len(line) > _LINE_LIMIT:
        half = (_LINE_LIMIT - 3) // 2
        line = f"{line[:half]}...{line[-(_LINE_LIMIT - 3 - half):]}"
    return line


def _end(code: int, argv: Sequence[str]) -> NoReturn:
    """End the process with ``code`` once the work Python does at exit is done, and skip the teardown of its
    modules that follows.

    Python joins the threads that are not daemons (and ``concurrent.futures``' workers), runs the exit functions
    (temporary folders a ``weakref.finalize`` removes, ``multiprocessing``'s children, ``logging``'s files),
    flushes the standard streams, and only then puts every signal handler back to the default and tears the
    modules down: 0.2-1.8 s after the answer was written (``benchmarks/signal_windows.py``), in which a SIGTERM
    ended the command by the signal (143), not exit 2, and which every call waited for. This does the same work, in
    the same order, while the handlers of :func:`_stop_while_outside_the_command` are still installed, and ends the
    process. What the teardown did besides (a last collection of reference cycles, 50-220 ms here) has nothing of
    the command's to finish: its files are closed when it returns, and the code it runs from a suite runs in a child
    process (``oloproof run``). A Ctrl-C meanwhile is exit 2 and ``oloproof: interrupted``, as elsewhere; a stream
    that cannot be flushed (its reader left) keeps the code."""
    try:
        threading = sys.modules.get("threading")
        if threading is not None:
            threading._shutdown()  # what Py_FinalizeEx calls first
        atexit._run_exitfuncs()
    except KeyboardInterrupt:
        _interrupted("interrupted", _wants_json(argv) and not _json_written())
        code = 2
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
