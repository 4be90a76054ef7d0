"""The signals of ``oloproof receipt`` through the console script, and SIGIO where its default ends no process.

- Through the console script, the entry module's handlers (``os._exit(2)`` at once) hold every signal of
  :func:`~oloproof_nb.cli.process.hook_stops` before the command starts; the command's own handlers must take them
  over, or a SIGUSR1 while the validator runs is exit 2 with the validator's process group left running (the hook's
  ``Stopped`` kills it on the way out). The other signal tests send SIGTERM alone through the console script (taken
  by name), and the other signals through ``python -m`` (no entry handlers): a mutant that took over only signals
  at their default passed them.
- SIGIO's default is no end of the process on macOS and the BSDs ("discard", sigaction(2)), as SIGURG's: the hook
  must leave it alone there, as it leaves SIGURG; on Linux (signal(7): "Term") it stops the hook.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

import _oloproof_nb_entry as entry
from oloproof_nb.cli.process import NOT_HOOK_STOPS, StopOnSignals, Stopped, hook_stops, signal_name

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")


def test_the_hook_takes_over_the_console_scripts_handlers() -> None:
    saved = {sig: signal.getsignal(sig) for sig in hook_stops()}
    try:
        entry._stop_while_outside_the_command(["receipt", "c.json"])
        at_entry = signal.getsignal(signal.SIGUSR1)
        assert getattr(at_entry, "__module__", None) == "_oloproof_nb_entry"
        with StopOnSignals(interrupt=True, every=True):
            assert signal.getsignal(signal.SIGUSR1) is not at_entry  # else the signal below ends pytest (exit 2)
            with pytest.raises(Stopped, match="^SIGUSR1$"):
                signal.raise_signal(signal.SIGUSR1)
        assert signal.getsignal(signal.SIGUSR1) is at_entry  # put back: the console script's again
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


@pytest.mark.parametrize(("platform", "stops"), [("linux", True), ("darwin", False), ("freebsd14", False)])
def test_sigio_stops_the_hook_where_its_default_ends_a_process(platform: str, stops: bool) -> None:
    """Both lists are made at import: each module is imported again, in a process of its own, once
    ``sys.platform`` says ``platform`` (what else they import first, as it would not import elsewhere)."""
    code = ("import importlib, sys\nimport oloproof_nb.cli.process\ndel sys.modules['oloproof_nb.cli.process']\n"
            f"sys.platform = {platform!r}\n"
            "process = importlib.import_module('oloproof_nb.cli.process')\nimport _oloproof_nb_entry as entry\n"
            "print('SIGIO' in process.NOT_HOOK_STOPS, 'SIGIO' in entry._NOT_STOPPING)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == [str(not stops)] * 2, done.stderr
    if sys.platform.startswith("linux") and hasattr(signal, "SIGIO"):
        assert "SIGIO" not in NOT_HOOK_STOPS and signal.SIGIO in hook_stops()


@pytest.mark.skipif(not hasattr(signal, "SIGRTMIN"), reason="real-time signals")
def test_a_real_time_signal_is_named_by_its_place_after_sigrtmin() -> None:
    """``interrupted by SIGRTMIN+3``: the third after SIGRTMIN (by hand, 34 + 3 = 37 on Linux), in both modules."""
    for name in (signal_name, entry._signal_name):
        assert (name(signal.SIGRTMIN + 3), name(signal.SIGRTMIN), name(signal.SIGUSR1)) == (
            "SIGRTMIN+3", "SIGRTMIN", "SIGUSR1")


@pytest.mark.parametrize(("command", "taken"), [("gate", False), ("receipt", True)])
def test_only_the_hook_takes_the_other_signals_while_it_works(command: str, taken: bool,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``oloproof gate`` (exit 0 PASS only: death by SIGUSR1 blocks a CI step as 2 does) leaves SIGUSR1 to its default
    while the command runs, not only while the package is imported; ``oloproof receipt`` takes it."""
    from oloproof_nb.cli import main
    from oloproof_nb.cli.commands import COMMANDS

    seen: list[object] = []

    def record(args: object) -> int:
        seen.append(signal.getsignal(signal.SIGUSR1))
        return 0

    monkeypatch.setitem(COMMANDS, command, record)
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL
    assert main([command, "somewhere"]) == 0
    assert len(seen) == 1 and (seen[0] is not signal.SIG_DFL) is taken
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL
