"""``op.baseline(suite)``: the do-nothing baseline, run with the face's progress bar and returned as data."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._analysis.baseline import Baseline
from .._config.suite import Suite, load_suite
from .._run.baseline import run_baseline
from .._run.runner import Progress
from ..errors import OloproofError
from .notebook import Run, callers_progress, in_notebook, progress_bar, stderr_is_tty

__all__ = ["baseline"]


def baseline(suite: Suite | str | Path, out: str | Path | None = None, workers: int = 1,
             progress: bool | Progress | None = None) -> Baseline:
    """Run every case with a system that does nothing, and return each criterion's pass rate.

    The no-op system is the suite's own sandbox: reset to ``initial_state``, no
    step, no answer, snapshot. Every criterion judges it exactly as it judges
    the real system. Give the result to ``op.gate(run, baseline=...)``: the gate
    table gains ``noop_rate`` and ``passes_when_idle`` (the idle agent already
    meets the threshold) and no verdict changes.

    Parameters
    ----------
    suite : Suite or path
        A loaded suite, or its folder.
    out : path, optional
        The baseline's run directory (default ``baselines/<run_id>/`` in the suite folder).
    workers : int
        Sandboxes used concurrently (threads).
    progress : bool or callable, optional
        As for :func:`oloproof_nb.run`.

    Returns
    -------
    Baseline
        ``.run`` (a Run: every frame, ``.panel(case_id)``) and ``.rates``
        (``criterion, n, passed, missing, rate``, one row per criterion).

    Notes
    -----
    ``passes_when_idle`` is informative for collateral-damage checks (``state_unchanged``,
    a policy check: an idle agent should pass them) and a red flag for task checks: a
    ``state_matches`` that the no-op passes on a case means the case expects nothing to change,
    so it cannot tell a working agent from an idle one there.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> idle = op.baseline(suite)                      # doctest: +SKIP
    >>> idle.rates                                     # doctest: +SKIP
    >>> op.gate(run, baseline=idle).table[["criterion", "rate", "noop_rate", "passes_when_idle"]]  # doctest: +SKIP
    """
    if not isinstance(suite, Suite):
        if not isinstance(suite, (str, os.PathLike)):
            raise OloproofError(f"baseline: suite must be a Suite (op.load_suite) or a suite folder, got "
                                f"{type(suite).__name__}")
        suite = load_suite(suite)
    close: Callable[[], None] = lambda: None  # noqa: E731
    callback: Any
    if callable(progress):
        callback = callers_progress(progress)
    elif progress or (progress is None and (in_notebook() or stderr_is_tty())):
        callback, close = progress_bar(f"{suite.name} (no-op)")
    else:
        callback = None
    try:
        directory = run_baseline(suite, out=out, workers=workers, progress=callback)
    finally:
        close()
    return Baseline(Run.load(directory))
