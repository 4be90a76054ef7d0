"""``oloproof receipt`` (a completion hook: a hook runner blocks on exit 2 only) stops on every signal that
ends a process by default, not only on SIGINT, SIGTERM and SIGHUP.

SIGQUIT (a Ctrl-\\), SIGUSR1, SIGALRM, ... ended the hook 128 + N, which a hook runner reads as "not blocking", and
the validator it had started (a session of its own) ran on. The signals the hook still leaves to their default are
counted by hand from signal(7): those whose default is no end (SIGCHLD, SIGURG, SIGWINCH, SIGCONT, the stops), those
that cannot be caught (SIGKILL, SIGSTOP), and the faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL: a handler for a real one
returns to the faulting instruction, and the hook would hang). ``tests/cli/test_commands_receipt.py`` sends each to
a hook whose validator runs, ``tests/cli/test_entry_startup_signals.py`` to the console script before the package
is imported; here, the rule's edges.
"""

from __future__ import annotations

import signal

import pytest

from oloproof_nb.cli.process import StopOnSignals, Stopped, hook_stops

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")

#: signal(7)'s signals whose default action is Term or Core, but SIGKILL and the four faults (Linux numbering).
_BY_HAND = {"SIGHUP", "SIGINT", "SIGQUIT", "SIGTRAP", "SIGABRT", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM",
            "SIGTERM", "SIGSTKFLT", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGIO", "SIGPWR", "SIGSYS"}


@pytest.mark.skipif(not hasattr(signal, "SIGSTKFLT"), reason="Linux's signal numbers")
def test_the_hook_stops_on_each_signal_whose_default_ends_it() -> None:
    named = {signal.Signals(sig).name for sig in hook_stops() if sig < signal.SIGRTMIN}
    assert named == _BY_HAND
    assert set(range(signal.SIGRTMIN, signal.SIGRTMAX + 1)) <= hook_stops()  # the real-time signals end it too


def test_a_handler_of_the_callers_own_is_kept() -> None:
    """``cli.main(["receipt", …])`` called in a process that set its own SIGALRM (a test's time limit) keeps it; a
    signal at its default is taken while inside, and put back after."""

    def own(signum: int, frame: object) -> None:
        raise TimeoutError

    before = signal.signal(signal.SIGALRM, own)
    try:
        with StopOnSignals(interrupt=True, every=True):
            assert signal.getsignal(signal.SIGALRM) is own
            assert signal.getsignal(signal.SIGUSR2) is not signal.SIG_DFL  # else the signal below ends pytest
            with pytest.raises(Stopped, match="SIGUSR2"):
                signal.raise_signal(signal.SIGUSR2)
        assert signal.getsignal(signal.SIGUSR2) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGALRM, before)
