"""The release settings a gate is read with: what ``release=`` accepts, the settings weaker than the run's own or
than the suite's release.yaml as it is now (:func:`relaxed_gate_settings`, :func:`relaxed_note`), and the reason
naming the key that allows approximate methods (:func:`approximate_reason`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from .._config.release import ReleaseConfig, relaxed_settings
from .._core.stats import BOOTSTRAP_MIN_CLUSTERS
from .run import Run

__all__ = ["ReleaseLike", "relaxed_gate_settings", "relaxed_note", "weaker_count", "RUN_OWN", "relaxed_or_now",
           "APPROXIMATE_NOT_ALLOWED", "PAIRED_CLUSTERED", "approximate_note", "approximate_where",
           "approximate_reason", "bare_approximate", "approximate_once"]


#: What ``release=`` accepts: a model, a mapping like release.yaml, or a path to one.
ReleaseLike = ReleaseConfig | dict[str, Any] | str | Path


#: What the reason of a gated criterion of a clustered run starts with when its release settings do not allow
#: approximate methods (DESIGN.md, "Gate rule"); :func:`approximate_reason` says after it which key decides it.
APPROXIMATE_NOT_ALLOWED = "approximate_methods_not_allowed"


#: What :func:`approximate_note` says is clustered in a comparison (a cluster holds more than one paired case run).
PAIRED_CLUSTERED = "the paired runs are clustered"


def relaxed_gate_settings(own: ReleaseConfig | None, cfg: ReleaseConfig, rows: list[dict[str, Any]]) -> list[str]:
    """The settings of ``cfg`` weaker than ``own`` (:func:`relaxed_settings`), among those that decide a verdict of
    the gate ``rows``: thresholds and reductions of the criteria the rows judge (a criterion ``own`` gates that the
    run does not judge, one the suite added since, decides none) and ``confidence`` always; ``min_clusters`` and
    ``allow_approximate_methods`` when a row has a clustered interval, ``unclustered_method`` when one has an
    unclustered one (``method`` and ``bootstrap`` only once the bootstrap may decide: never while
    ``BOOTSTRAP_MIN_CLUSTERS`` is infinite). Empty when ``own`` is None or the same settings.

    A weaker gate looked like the suite's: ``oloproof gate RUN --release other.yaml`` with thresholds of 0.5,
    ``confidence: 0.5`` and a criterion left out said ``gate: PASS — exit 0: all 4 gated criteria pass`` of a run
    its own release.yaml blocks (4 criteria FAIL), the criterion left out shown only as ``REPORT_ONLY``.
    """
    if own is None or cfg == own:
        return []
    judged = {row["criterion"] for row in rows}  # a criterion the run does not judge decides none of its verdicts
    own = own.model_copy(update={"criteria": {c: t for c, t in own.criteria.items() if c in judged}})
    used = {bool(row["_clustered"]) for row in rows if row["method"]}
    heads = ["criteria", "reductions", "confidence"]
    if True in used:
        heads += ["min_clusters", "allow_approximate_methods"]
        heads += ["method", "bootstrap"] if math.isfinite(BOOTSTRAP_MIN_CLUSTERS) else []
    if False in used:
        heads.append("unclustered_method")
    return relaxed_settings(own, cfg, heads)


#: :attr:`Gate.weaker_than` of a gate given settings weaker than those stored with the run.
RUN_OWN = "the run's own release settings"


def weaker_settings(run: Run, cfg: ReleaseConfig, rows: list[dict[str, Any]],
             now: tuple[Path, ReleaseConfig | None] | None) -> tuple[list[str], str]:
    """:attr:`Gate.relaxed` and :attr:`Gate.weaker_than`: the settings of ``cfg`` weaker than the run's own; or,
    when none is, those weaker than the suite folder's release.yaml as it is now (``now``, as :func:`release_now`
    read it): the run's own, used when none are given, and settings given alike. Given settings equal to a run's
    own that were loosened while it ran (the file put back since) said nothing, where the run's own, used
    without them, were called weaker than the file. A run that stored no settings, gated with the defaults it
    was made with, is compared with nothing: they gate no criterion (``no_criteria``), not settings of its own that
    a file could be weaker or stronger than. Gated with settings given that gate a criterion, it is compared with
    the file as the rest are: a run made with release.yaml moved aside and gated with ``--release weak.yaml``
    after the file was put back said ``gate: PASS — exit 0`` without a word, where a run made with the file
    emptied (``criteria: {}``) was told its settings were weaker than the file."""
    compared = now if run.release is not None or cfg.criteria else None
    return relaxed_or_now(relaxed_gate_settings(run.release, cfg, rows), RUN_OWN,
                          compared, lambda file: relaxed_gate_settings(file, cfg, rows))


def relaxed_or_now(relaxed: list[str], than: str, now: tuple[Path, ReleaseConfig | None] | None,
                   weigh: Callable[[ReleaseConfig], list[str]]) -> tuple[list[str], str]:
    """``relaxed`` and what it is weaker than (``than``: the settings the run, or the base run, was made with) when
    any; else the settings ``weigh`` finds weaker than the suite folder's release.yaml as it is now (``now``, as
    :func:`release_now` read it; None or no file: nothing to compare with), and ``<path> as it is now``; ``([],
    "")`` for none. One rule for :attr:`Gate.relaxed` and ``Comparison.relaxed`` with their ``weaker_than``: a
    verdict given by settings loosened while the runs were made, read after the file was put back, says so."""
    if relaxed:
        return relaxed, than
    if now is None or now[1] is None:
        return [], ""
    relaxed = weigh(now[1])
    return relaxed, (f"{now[0]} as it is now" if relaxed else "")


def relaxed_note(relaxed: Iterable[str], given: str = "", *, verb: str = "gated", than: str = RUN_OWN) -> str:
    """The line a verdict is read with when it was given by settings weaker than ``than`` (a :attr:`Gate.relaxed`
    and its :attr:`Gate.weaker_than`, or a :attr:`~oloproof_nb._analysis.compare.Comparison.relaxed`); empty for
    none. ``given`` names the settings (default: those given, or the run's stored ones when ``than`` is the
    suite's release.yaml now).

    Examples
    --------
    >>> print(relaxed_note(["criteria.a 0.9 → 0.5", "confidence 0.95 → 0.5"], "--release b.yaml"))
    ... # doctest: +NORMALIZE_WHITESPACE
    gated with --release b.yaml: 2 settings weaker than the run's own release settings:
    criteria.a 0.9 → 0.5, confidence 0.95 → 0.5
    >>> relaxed_note([])
    ''
    """
    changes = list(relaxed)
    if not changes:
        return ""
    given = given or ("the settings given" if than.startswith(RUN_OWN) else "the settings stored with the run")
    return f"{verb} with {given}: {weaker_count(len(changes), than)}: {', '.join(changes)}"


def weaker_count(n: int, than: str = RUN_OWN) -> str:
    """``3 settings weaker than <than>``: how an exit line and :func:`relaxed_note` count the weaker settings.

    >>> weaker_count(1)
    "1 setting weaker than the run's own release settings"
    """
    return f"{n} {'setting' if n == 1 else 'settings'} weaker than {than}"


#: How :func:`approximate_note` ends: :func:`bare_approximate` cuts the reason up to it.
_APPROXIMATE_END = "`allow_approximate_methods: true` decides them (README section 6)"


def approximate_note(where: str, clustered: str = "the run is clustered") -> str:
    """Why a clustered run's gated criteria are :data:`APPROXIMATE_NOT_ALLOWED` and which key decides them, ``where``
    naming the release settings (``release.yaml``, ``the run's release.yaml (stored when …)``); ``clustered`` says
    what is (``the paired runs are clustered`` in a comparison).

    One text, worded once: the gate's and the comparison's reason after its code (:func:`approximate_reason`) and
    the note ``oloproof gate`` and ``oloproof compare`` print once under their tables (where ``where`` says how to
    give settings with ``--release``).
    """
    return (f"{clustered} (a case's epochs, a copy and its source, or cases given one cluster share a "
            f"cluster), and {where} does not allow clustered (approximate) intervals: {_APPROXIMATE_END}")


def approximate_where(release: ReleaseLike | None, stored: bool = True,
                      give: str = "op.gate(run, release=...) to gate this run", run: str = "the run") -> str:
    """The release settings an :func:`approximate_note` names: a path as given; the settings given in code; for
    None the run's own release.yaml, or the defaults when it was made without one (``stored`` False). ``give``
    says how to give other settings (``--release to gate this run`` for the commands) and ``run`` whose release.yaml
    it is (``the candidate run`` in a comparison).

    One wording for the library's reason (:func:`approximate_reason`), ``oloproof gate``, ``oloproof compare`` and
    ``oloproof report``, which say it once under their tables.
    """
    give = f"give one that does with {give}"
    if isinstance(release, (str, os.PathLike)):
        return str(release)
    if release is not None:
        return "the release configuration given"
    if stored:
        return f"{run}'s release.yaml (stored when it started: {give}, or set it for the next run)"
    return f"the default release configuration ({run} has no release.yaml: {give})"


def approximate_reason(release: ReleaseLike | None, stored: bool = True,
                       give: str = "op.gate(run, release=...) to gate this run", run: str = "the run",
                       clustered: str = "the run is clustered") -> str:
    """The reason of a gated criterion of a clustered run whose release settings do not allow approximate methods:
    :data:`APPROXIMATE_NOT_ALLOWED`, then :func:`approximate_note` naming the settings (:func:`approximate_where`);
    ``clustered`` says what is clustered (``op.compare``: the paired runs).

    The code alone told a library user nothing of the key to set, where ``oloproof gate`` named it under its table.
    """
    return f"{APPROXIMATE_NOT_ALLOWED}: {approximate_note(approximate_where(release, stored, give, run), clustered)}"


def bare_approximate(reasons: pd.Series) -> pd.Series:
    """``reasons`` with each :func:`approximate_reason` cut back to its code (what follows a ``;`` kept): for a
    table whose note says the key once, below it (``oloproof gate``, ``oloproof compare``), not once a row.

    The cut ends where the note does, not at the first ``;``: a ``--release`` path holding one (``a;b/release.yaml``)
    left ``approximate_methods_not_allowed;b/release.yaml does not allow …`` in the table.

    Examples
    --------
    >>> bare_approximate(pd.Series([approximate_reason("a;b/release.yaml") + "; 3 epochs", "all_missing"])).tolist()
    ['approximate_methods_not_allowed; 3 epochs', 'all_missing']
    """
    cut = f"(?s)^{re.escape(APPROXIMATE_NOT_ALLOWED)}: .*?{re.escape(_APPROXIMATE_END)}"
    return reasons.str.replace(cut, APPROXIMATE_NOT_ALLOWED, regex=True)


def approximate_once(reasons: pd.Series, release: ReleaseLike | None, stored: bool, give: str,
                     run: str = "the run", clustered: str = "the run is clustered") -> tuple[pd.Series, str | None]:
    """A table's ``reasons`` cut back to their codes (:func:`bare_approximate`), and the note said once under it
    (:func:`approximate_note` naming :func:`approximate_where`'s settings) when a reason is
    :data:`APPROXIMATE_NOT_ALLOWED`, else None: what ``oloproof gate``, ``oloproof compare`` and ``oloproof report``
    show, ``give`` naming how they take other settings (``--release to gate this run``)."""
    if not reasons.str.startswith(APPROXIMATE_NOT_ALLOWED).any():
        return reasons, None
    return bare_approximate(reasons), approximate_note(approximate_where(release, stored, give, run), clustered)
