"""The gate on a terminal: a table that fits the width (``--wide``: every column, nothing cut) and the exit line.

The narrow table keeps what a release decision needs (``n``, ``pass``ed,
``miss``ing, rate, interval, ``thr``eshold, verdict, and the baseline's ``noop_rate`` and ``passes_when_idle`` as
``noop``/``idle`` when given); reasons follow it, wrapped; long criterion names
are cut with ``…`` so that no line exceeds the width (:data:`WIDTH` characters, or the terminal's when wider),
and each cut name is given whole under the table. The last line printed says why the command exits as it does.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._analysis.frames import ended_case_runs
from .._analysis.gate import NO_CRITERIA, Gate
from .._analysis.gate_findings import VACUOUS
from .._analysis.gate_settings import ReleaseLike, weaker_count
from .._analysis.run import Run
from .._config.files import named_alike
from .._config.suite import RELEASE_FILE
from .._core.records import step_raised, step_timed_out
from .._core.scoremap import reason_kind
from .._run.locate import shell_word
from ..errors import quote
from .markdown import table_cell, terminal_text, text_table
from .theme import fmt_bound, fmt_cell, fmt_level, fmt_number, fmt_text, fmt_threshold

__all__ = ["PLAIN_TERMINAL", "WIDTH", "case_error_lines", "compare_table_text", "cut_names", "gate_table_text",
           "exit_line", "failed_verdict_lines", "fit", "gate_size", "missing_verdict_lines", "no_criteria_note",
           "plain_terminal", "pool_note", "reason_lines", "run_size", "terminal_width", "uncached_note"]

#: Characters per line of the narrow table.
WIDTH = 100
#: Narrowest a cut column becomes before the next one is cut.
_MIN_CRITERION = 16
_MIN_VERDICT = 12


#: What puts a terminal back to plain text: SGR 0, every attribute off (colours, and ``ESC[8m``'s concealed text
#: among them; ECMA-48 §8.3.117), ``ESC ( B``, the ASCII set in G0 (ECMA-35: ``ESC ( 0`` turns letters into line
#: drawing), and SI, G0 shifted in (a system's SO shifts to G1).
PLAIN_TERMINAL = "\x1b[0m\x1b(B\x0f"


def plain_terminal() -> None:
    """Write :data:`PLAIN_TERMINAL` to stdout and stderr, each that is a terminal, after the system under test wrote
    to it: what it printed (its own text or an agent's, as it was) can leave text concealed, coloured or drawn in
    another character set, and the command's own lines, the exit line last, follow it on the same screen.

    Nothing is written where the stream is no terminal (a CI log or a file stays the system's bytes and the
    command's lines, nothing else), nor on a terminal that says it acts on no escape (``TERM=dumb``: an editor's
    shell buffer showed them as ``^[[0m^[(B^O`` before the exit line). A system can still write after the run,
    from a process it left running, or to ``/dev/tty``: it is code you run (README, "Security and reliability").
    """
    if os.environ.get("TERM") == "dumb":
        return
    for stream in (sys.stderr, sys.stdout):  # stderr first: the system's prints go there
        isatty = getattr(stream, "isatty", None)
        if callable(isatty) and isatty():
            stream.write(PLAIN_TERMINAL)
            stream.flush()


def fit(text: str, width: int, shown: Callable[[str], str] | None = None) -> str:
    """``text`` cut to ``width`` characters, its last one ``…`` when cut; with ``shown`` (:func:`table_cell`), to
    ``width`` characters as ``shown`` writes it: an escape (``\\|``) counts as written and is never split."""
    if shown is None:
        return text if len(text) <= width else text[: max(width - 1, 0)] + "…"
    if len(shown(text)) <= width:
        return text
    kept = text[: max(width - 1, 0)]
    while kept and len(shown(kept)) > width - 1:  # each escape takes a character more than it stands for
        kept = kept[:-1]
    return kept + "…"


def terminal_width() -> int:
    """The width a command's tables fit: ``COLUMNS`` when set, else the terminal's columns, never fewer than
    :data:`WIDTH`; :data:`WIDTH` when stdout is no terminal and ``COLUMNS`` is unset (a CI log, as a rule)."""
    return max(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns)


def cut_names(rows: list[list[str]], room: int, width: int, shown: Callable[[str], str] | None = None) -> list[str]:
    """Cut the first cell of each of ``rows`` (a criterion name) to ``room`` characters with ``…`` (as ``shown``
    writes it in the table, :func:`fit`), in place, and return the lines that give each cut name whole
    (``cut… = whole``, wrapped to ``width``): two long names that share their start would otherwise read the same,
    and one with no reason line would appear nowhere."""
    lines: list[str] = []
    for row in rows:
        if len(shown(row[0]) if shown else row[0]) > room:
            whole, row[0] = row[0], fit(row[0], room, shown)
            lines += textwrap.wrap(f"{row[0]} = {whole}", width, subsequent_indent="    ", break_long_words=True,
                                   break_on_hyphens=False)
    return lines


def _interval(low: Any, high: Any, threshold: Any = None) -> str:
    if isinstance(low, float) and math.isnan(low):
        return ""
    # outward: the shown interval holds the computed, each end on the threshold's side the computed end is on
    return f"{fmt_bound(low, 'low', threshold=threshold)}–{fmt_bound(high, 'high', threshold=threshold)}"


def _narrow(table: pd.DataFrame, confidence: float) -> tuple[list[str], list[list[str]]]:
    headers = ["criterion", "n", "pass", "miss", "rate", f"{fmt_level(confidence)} CI", "thr", "verdict"]
    rows = [[terminal_text(r.criterion), fmt_number(r.n), fmt_number(r.passed), fmt_number(r.missing),
             fmt_cell("rate", r.rate, threshold=r.threshold), _interval(r.ci_low, r.ci_high, r.threshold),
             fmt_threshold(r.threshold), r.verdict]
            for r in table.itertuples()]
    if "noop_rate" in table.columns:
        headers += ["noop", "idle"]
        for row, r in zip(rows, table.itertuples(), strict=True):
            row += [fmt_cell("noop_rate", r.noop_rate, threshold=r.threshold), "yes" if r.passes_when_idle else ""]
    if "reduce" in table.columns and (table["reduce"] != "mean").any():  # a criterion reduced over epochs
        headers.insert(1, "reduce")
        for row, r in zip(rows, table.itertuples(), strict=True):
            row.insert(1, str(r.reduce))
    return headers, rows


#: Reasons that only restate the verdict: not repeated under the narrow table.
_PLAIN = frozenset({"ci_low_at_or_above_threshold", "ci_low_above_threshold", "ci_high_below_threshold"})


def reason_lines(table: pd.DataFrame, width: int, plain: frozenset[str] = _PLAIN) -> list[str]:
    """``criterion: reason`` under a gate (or compare) table, wrapped to ``width``, for every reason that says more
    than the verdict (``plain``: the reasons that only restate it).

    A criterion marked ``vacuous`` (a check that cannot fail) always gets a line, starting with :data:`VACUOUS`,
    as the report marks it ``(vacuous)``: its PASS says nothing about the agent.
    """
    lines: list[str] = []
    for r in table.itertuples():
        reason = str(r.reason)
        if bool(getattr(r, "vacuous", False)):
            reason = "; ".join(part for part in (VACUOUS, reason) if part)
        if reason and reason not in plain:  # cut as a reason in a table or panel is (a megabyte's exception text)
            lines += textwrap.wrap(terminal_text(f"{r.criterion}: {fmt_text(reason)}"), width, subsequent_indent="    ",
                                   break_long_words=True, break_on_hyphens=False)
    return lines


def gate_table_text(g: Gate, *, wide: bool = False, width: int = WIDTH) -> str:
    """The gate table as text: at most ``width`` characters a line, or every column uncut when ``wide``.

    The narrow table leaves out ``method`` and ``reason``: each reason that says more than the verdict
    follows the table as ``criterion: reason``, wrapped. Criterion names (then verdicts) that still do
    not fit are cut with ``…``.
    """
    if wide:
        shown = [c for c in g.table.columns if c != "evaluator"]
        rows = [[fmt_cell(c, v, threshold=thr) for c, v in zip(shown, row, strict=True)]
                for row, thr in zip(g.table[shown].itertuples(index=False, name=None), g.table["threshold"],
                                    strict=True)]
        return text_table(rows, shown)
    headers, rows = _narrow(g.table, g.release.confidence)
    whole: list[str] = []
    for name, least in (("criterion", _MIN_CRITERION), ("verdict", _MIN_VERDICT)):
        excess = _widest(text_table(rows, headers)) - width
        if excess <= 0:
            break
        i = headers.index(name)
        # as the table writes a cell: a name's `|` is `\|`, a character more (`a|b` once shifted the columns)
        room = max(max((len(table_cell(row[i])) for row in rows), default=0) - excess, least)
        if name == "criterion":  # the first column
            whole = cut_names(rows, room, width, table_cell)
        else:
            for row in rows:
                row[i] = fit(row[i], room, table_cell)
    return "\n".join([text_table(rows, headers), *whole, *reason_lines(g.table, width)])


#: Headers of the compare table's columns (``cmp.table`` names → short heads).
_COMPARE_HEADS = {"criterion": "criterion", "base_rate": "base", "candidate_rate": "cand", "difference": "diff",
                  "ci_low": "ci_low", "ci_high": "ci_high", "n": "n", "pass_to_fail": "p->f",
                  "fail_to_pass": "f->p", "missing": "miss", "verdict": "verdict"}
#: Columns of the compare table dropped, in this order, until it fits the width.
_OPTIONAL = ("missing", "base_rate", "candidate_rate", "n")


def compare_table_text(table: pd.DataFrame, width: int = WIDTH) -> str:
    """``oloproof compare``'s table of ``cmp.table`` within ``width`` characters a line: optional columns are
    dropped (miss, base, cand, n) until it fits, then criterion names are cut (:func:`cut_names`). The
    difference and its interval carry their sign, as ``Comparison``'s repr shows them."""
    columns = list(_COMPARE_HEADS)
    margins = table["margin"] if "margin" in table.columns else [math.nan] * len(table)
    for drop in (None, *_OPTIONAL):
        if drop is not None:
            columns.remove(drop)
        # escaped before a name is cut, as the gate's: a cut name is also given whole under the table
        # each interval end on the side of −margin the computed end is on, as the gate's beside its threshold
        rows = [[terminal_text(fmt_cell(c, v, sign=True, threshold=-margin)) for c, v in zip(columns, row, strict=True)]
                for row, margin in zip(table[columns].itertuples(index=False, name=None), margins, strict=True)]
        text = text_table(rows, [_COMPARE_HEADS[c] for c in columns], tablefmt="narrow")
        excess = _widest(text) - width
        if excess <= 0:
            return text
    room = max(max((len(row[0]) for row in rows), default=0) - excess, _MIN_CRITERION)
    whole = cut_names(rows, room, width)  # still too wide: names cut, each given whole under the table
    return "\n".join([text_table(rows, [_COMPARE_HEADS[c] for c in columns], tablefmt="narrow"), *whole])


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def exit_line(g: Gate) -> str:
    """``gate: PASS — exit 0: …`` or ``gate: BLOCK — exit 1: …``: the verdict and why the command exits so."""
    if g.verdict == "PASS":
        gated = g.table[g.table["verdict"] != "REPORT_ONLY"]
        vacuous = int(gated["vacuous"].astype(bool).sum()) if "vacuous" in gated.columns else 0
        weaker = len(g.relaxed)  # a PASS by settings weaker than the run's own: said where the PASS is read
        passing = "the 1 gated criterion passes" if len(gated) == 1 else f"all {len(gated)} gated criteria pass"
        # a criterion release.yaml leaves out decides nothing, whatever its rate: said where the PASS is read (a
        # fault criterion at 4 of 18, reported only, beside "all 2 gated criteria pass")
        reported = len(g.table) - len(gated)
        # the suite folder changed since the run (a suite loosened for the run and put back): warned on stderr, and
        # said where the PASS is read, as compare's last line says it
        drift = len(g.drift)
        return (f"gate: PASS — exit 0: {passing}"
                + (f" ({vacuous} of them vacuous: cannot fail as configured)" if vacuous else "")
                + (f", by {weaker_count(weaker, g.weaker_than)}" if weaker else "")
                + (f"; {reported} more {'is' if reported == 1 else 'are'} reported, not gated" if reported else "")
                + (f"; the suite folder has changed since the run ({drift} file(s): see the warning"
                   f"{'s' if drift > 1 else ''} above)" if drift else ""))
    if g.reason:
        return f"gate: BLOCK — exit 1: {terminal_text(g.reason)}"  # it may quote a run id or an Inspect log
    counts = g.blocking["verdict"].value_counts()
    parts = [f"{counts[v]} {'criterion' if counts[v] == 1 else 'criteria'} {v}"
             for v in ("FAIL", "INSUFFICIENT_EVIDENCE") if v in counts]
    gated = int((g.table["verdict"] != "REPORT_ONLY").sum())
    return f"gate: BLOCK — exit 1: {', '.join(parts)} (of {gated} gated; PASS needs every one to pass)"


def no_criteria_note(run: Run, g: Gate, release: ReleaseLike | None = None, *, python: bool = False) -> str | None:
    """Which release settings name no criterion, and where the thresholds go, when ``g`` gated nothing
    (``no_criteria``); None otherwise. ``oloproof gate`` prints it above its exit line, a report says it under its
    verdict, and a gate in a notebook under its verdict (``python``: the settings given as ``op.gate(run,
    release=...)``, not ``--release``): an Inspect AI log, which has no release.yaml of its own, takes the thresholds
    from ``--release``; a suite that had no release.yaml when the run started is named by the path of the file it
    lacked (and told to give it with ``--release`` when it has been written since, or the file of a name much like it
    that the folder holds); an empty or cut-short release file is named."""
    if g.reason != NO_CRITERIA:
        return None

    def give(file: Path | None) -> str:  # how to gate this run with ``file`` (a path to write when None)
        if python:
            return f"op.gate(run, release={quote(str(file)) if file is not None else '...'})"
        return f"--release {shell_word(file) if file is not None else 'RELEASE_YAML'}"

    root = run.suite_root  # None: an Inspect AI log, which has no release.yaml of its own
    if release is None and root is None:
        return f"no criterion to gate: give the thresholds with {give(None)}"
    path = Path(root or ".") / RELEASE_FILE
    if release is None and run.release is None:  # no file to blame: the suite had none when the run began
        # written since (the warning of `oloproof gate` names its keys): "write one" told the user to do what they
        # had done
        alike = None if path.is_file() else named_alike(path)
        fix = (f"it is there now: give it with {give(path)} to gate this run with it"
               if path.is_file() else
               (f"the folder holds {quote(alike)}: rename it {RELEASE_FILE} for the next run, or gate this one with "
                f"{give(path.parent / alike)}")
               if alike else
               "write one listing `criteria: {<criterion>: <threshold>}`, or give it with "
               + ("op.gate(run, release=...)" if python else "--release"))
        return terminal_text(f"{path}: there was none when the run started, so no criterion is gated; {fix}")
    source = (str(release) if isinstance(release, (str, Path)) else "the release given" if release is not None
              else str(path))
    return terminal_text(f"{source} names no criterion to gate; list each as `criteria: {{<criterion>: <threshold>}}`")


def run_size(run: Run) -> str:
    """``48 cases`` (``1 case``), or with epochs ``30 cases, 120 case runs (4 epochs)`` (pooled runs: how many)."""
    epochs, members = run.epochs, run.runs
    pooled = f"{len(members)} runs pooled, {epochs} epochs in all" if len(members) > 1 else f"{epochs} epochs"
    if epochs == 1:
        return f"{run.n_cases} {'case' if run.n_cases == 1 else 'cases'}"
    sources = run.cases["case_id"].nunique()
    return f"{sources} {'case' if sources == 1 else 'cases'}, {run.n_cases} case runs ({pooled})"


def pooled_note(run_ids: Sequence[str], epochs: bool = False, reduced: bool = False) -> str:
    """``pooled: 2 runs (a, b); …``: what a pooled run's ``n`` counts, said under its gate's verdict.

    Without it ``n=36`` of a 9-case suite pooled from four runs read as 36 cases of one run; a case's rows in
    every run are one cluster (the interval rests on the suite's cases, not on the runs' rows).

    ``epochs``: a run of the pool ran its cases more than once, so a criterion's ``n`` counts a case once an epoch
    in each run. ``reduced``: a criterion of the table is reduced over epochs (pass^k, pass@k), whose ``n`` counts a
    case once, its epochs in all the runs together. Said as "once in each run", two 2-epoch runs of 6 cases showed
    ``n=24`` under a mean and ``n=6`` under pass^2 beside a note that made either 12.
    """
    return (f"pooled: {len(run_ids)} runs ({', '.join(run_ids)}); n counts a case once {'an epoch ' if epochs else ''}"
            f"in each run that holds it, and its rows in all of them are one cluster"
            + ("; a criterion reduced over epochs (pass^k, pass@k) counts a case once, its epochs in all the runs "
               "together" if reduced else ""))


def pool_note(run: Run, table: pd.DataFrame) -> str:
    """:func:`pooled_note` of a pooled ``run`` gated in ``table`` (its runs, whether one ran epochs, whether a
    criterion is reduced over them); ``""`` for one run."""
    if len(run.runs) < 2:
        return ""
    return pooled_note([member.run_id for member in run.runs],
                       epochs=any(member.manifest.epochs > 1 for member in run.runs),
                       reduced=bool((table["reduce"] != "mean").any()))


def uncached_note(run: Run, live: int, cached: int) -> str:
    """Why a run whose ``live`` replay runs came with none ``cached`` could take nothing from the replay cache, when
    its manifest says: the system has no ``version``, or its code no fingerprint, or both, each said (README
    section 3: such a system is never cached); ``""`` otherwise (no replays, some cached, or a run of the pool
    that could use the cache: a first run, ``--no-cache``, an edited system)."""
    if not live or cached:
        return ""
    lacks = [(not member.manifest.system_version, not member.manifest.code_fingerprint) for member in run.runs]
    if not all(version or fingerprint for version, fingerprint in lacks):
        return ""  # a run that could have taken from the cache
    version, fingerprint = (any(lack[i] for lack in lacks) for i in (0, 1))
    if version and fingerprint:  # given a version alone it would still be never cached: both are said
        return ("none from the cache: the system has no `version` and its code no fingerprint (define "
                "fingerprint()), and is never cached without both")
    if version:
        return "none from the cache: the system has no `version`, and is never cached without one"
    return "none from the cache: the system's code has no fingerprint; define fingerprint()"


def gate_size(g: Gate) -> str:
    """What a gate's intervals rest on: ``24 source clusters`` for a clustered run, ``6 independent cases``
    otherwise (``1 source cluster``, ``1 independent case``)."""
    n = g.n_source_clusters
    if g.clustered:
        return f"{n} source {'cluster' if n == 1 else 'clusters'}"
    return f"{n} independent {'case' if n == 1 else 'cases'}"


#: Most distinct error messages :func:`case_error_lines` lists.
_ERROR_KINDS = 3


def case_error_lines(run: Run, width: int = WIDTH) -> list[str]:
    """Lines saying how many case runs ended in ``error`` or ``timeout`` and why (the commonest messages, each
    with a case that shows it); none when every case completed.

    Such a case's verdicts are ``missing``: the table shows ``miss`` and ``all_missing``, and without these
    lines nothing on a terminal said that the system raised (a wrong ``act`` signature, a state holding a set).
    A message names the system's method that raised (``reset() raised ConnectionRefusedError: …``) or overran
    (``timeout: reset() exceeded case_timeout_s=5``); when every case run listed failed in ``reset()`` (a service
    the sandbox needs is down), a line says no agent ran in them and what to check.
    """
    cases = run.cases
    ended = ended_case_runs(cases)
    if ended.empty:
        return []
    timeouts = int((ended["status"] == "timeout").sum())
    head = (f"{len(ended)} of {len(cases)} case runs ended in error"
            + (f" ({timeouts} by timeout)" if timeouts else "") + ": their verdicts are missing")
    lines = textwrap.wrap(head, width)
    room = width - len(" (99,999 case runs, e.g. )") - min(int(ended["case_id"].str.len().max()), 40)
    # messages that read the same once cut to the line are one kind (a set at loans.b00.tags, at loans.b01.tags …)
    why = ended["message"].map(lambda m: fit(terminal_text("  " + m), max(room, 40)))
    counts = why.value_counts(sort=True)
    for message, n in counts.head(_ERROR_KINDS).items():
        example = fit(terminal_text(str(ended.loc[why == message, "case_id"].iloc[0])), 40)  # an id is the user's
        lines.append(f"{message} ({n:,} case run{'s' if n != 1 else ''}, e.g. {example})")
    more = len(counts) - _ERROR_KINDS
    if more > 0:
        lines.append(f"  and {more:,} other message{'s' if more != 1 else ''}")
    in_reset = ended["message"].str.startswith((step_raised("reset()"), step_timed_out("reset()")))
    if in_reset.all():  # no agent ran in them: the sandbox could not be set up (a service it needs is down?)
        lines.extend(textwrap.wrap(
            f"  {'every case run' if len(ended) == len(cases) else 'each of these case runs'} failed in the "
            "system's reset(), "
            "before the agent ran: the verdicts say nothing of the agent; check that what the sandbox needs (its "
            "database, a server, a file) is there and reachable, then run again", width,
            subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))
    lines.append(fit("  in Python: run.cases[\"error\"] has each; run.panel(case_id) shows a case", width))
    return lines


def missing_verdict_lines(run: Run, width: int = WIDTH) -> list[str]:
    """Lines saying why verdicts of case runs that completed are ``missing``, by criterion and reason code (the
    reason up to its first ``:``; a score's reason without the score it names,
    :func:`~oloproof_nb._core.scoremap.reason_kind`), the commonest first, each with a case and its reason; none when
    there are none.

    The table's ``miss`` counts them and a criterion's reason may say ``all_missing``; without these lines a
    terminal did not say why: a fault replay whose control replay diverged from the recording
    (``control_replay_diverged``), a check that returned ``None``, an outcome no artifact was observed for.
    Verdicts of case runs that ended in error are left to :func:`case_error_lines` (a pooled run's case runs are
    told apart by ``run_id`` too).
    """
    verdicts = run.verdicts
    missing = verdicts[verdicts["verdict"] == "missing"]
    ended = ended_case_runs(run.cases)
    if not ended.empty and not missing.empty:  # said by case_error_lines, with the system's message
        # a case run is its (case_id, epoch) in its own run: in a pooled Run, the case that ended in error in one run
        # left its missing verdicts in another run unsaid
        keys = [k for k in ("run_id", "case_id", "epoch") if k in ended.columns and k in missing.columns]
        gone = pd.MultiIndex.from_frame(ended[keys])
        missing = missing[~pd.MultiIndex.from_frame(missing[keys]).isin(gone)]
    return _reason_lines(verdicts, missing, "missing", "are missing", width)


def failed_verdict_lines(run: Run, width: int = WIDTH) -> list[str]:
    """Lines saying why verdicts ``fail``, as :func:`missing_verdict_lines` says why they are missing: by criterion
    and reason code, the commonest first, each with a case and its reason; none when none fails."""
    verdicts = run.verdicts
    return _reason_lines(verdicts, verdicts[verdicts["verdict"] == "fail"], "fail", "fail", width)


#: The causes the evaluators' reasons name, as each words them: a reason that starts as a pattern says (matched
#: after :func:`~oloproof_nb._core.scoremap.reason_kind`) is of its cause; any other is of its code, the reason up
#: to its first ``:``. Told apart by the answer, the count or the paths they name, each wrong answer was a kind of
#: its own, ``1 unexpected change`` and ``2 unexpected changes`` two kinds, and the commonest causes were left out
#: as "21 other reasons".
_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern, re.DOTALL), cause) for pattern, cause in (
    (r"answer .* != expected ", "answer differs"),  # answer_matches
    (r"\d+ unexpected changes?: .*; \d+ of \d+ expected paths differ: ",  # state_matches, changes mode
     "unexpected changes; expected paths differ"),
    (r"\d+ unexpected changes?: ", "unexpected changes"),
    (r"\d+ of \d+ expected paths differ: ", "expected paths differ"),
    (r"\d+ of \d+ paths differ: ", "paths differ"),  # state_matches, state_unchanged
    (r"score .* is below pass_threshold ", "score below pass_threshold"),  # python_check, Inspect AI
    (r"check returned .*, not a finite score", "check returned no finite score"),
    (r"check returned .*: the second item of a \(verdict, reason\) pair ", "check returned a reason that is not text"),
    (r"check returned .*; return True, False, None or a \(verdict, reason\) pair$", "check returned no verdict"),
    # metamorphic. (?=(…))\1 takes the first " differs from " and never another: `answer .* differs from .*'s `
    # looked for "'s " after each one in turn, a megabyte's reason holding many and no "'s " after them took 34 s
    (r"answer (?=(.*? differs from ))\1.*'s ", "answer differs from the source case's"),
    (r"(tool call \d+ is |\d+ tool calls \()", "tool calls differ from the source case's"),
    (r"state differs from .*'s at \d+ path", "state differs from the source case's"),
))
#: The evaluators that word each cause of :data:`_CAUSES`: a reason of another built-in evaluator is never of it (a
#: Python check's own text ``3 tool calls (lookup, refund, refund): at most 2`` was said as "tool calls differ from
#: the source case's", a pair it has none of); one of an evaluator not named here (a log's scorer, or no
#: ``evaluator`` column) is matched against them all.
_STATE_CHECKS = frozenset({"state_matches", "state_unchanged"})
_WORDED_BY: dict[str, frozenset[str]] = {
    **dict.fromkeys(["answer differs"], frozenset({"answer_matches"})),
    **dict.fromkeys(["unexpected changes; expected paths differ", "unexpected changes", "expected paths differ",
                     "paths differ"], _STATE_CHECKS),
    **dict.fromkeys(["score below pass_threshold", "check returned no finite score",
                     "check returned a reason that is not text", "check returned no verdict"], frozenset({"python"})),
    **dict.fromkeys(["answer differs from the source case's", "tool calls differ from the source case's",
                     "state differs from the source case's"], frozenset({"metamorphic_relation"})),
}
#: The built-in evaluators, whose reasons are of the causes :data:`_WORDED_BY` gives them alone.
_BUILT_IN = frozenset({"fault_recovery", "outcome_contract"}).union(*_WORDED_BY.values())
#: How a fault replay's reason with ``calls: every`` names each deciding call: ``step 4: …; step 6: …``.
_CALL = re.compile(r"step \d+: ")
#: The notes a state check's reason ends with, said after its cause: a cause of its own (the case file's values
#: written in another JSON type or Unicode form than the state gives them).
_NOTES = (("differ in type only (", "in type only"), ("differ in Unicode form only (", "in Unicode form only"))


def _cause(reason: str, evaluator: str | None = None) -> str:
    """The kind of cause of a verdict's ``reason``, for :func:`_reason_lines`: ``answer differs``, ``unexpected
    changes``, ``paths differ`` (:data:`_CAUSES`, those ``evaluator`` words: :data:`_WORDED_BY`), else its code, the
    reason up to its first ``:``, with a score's value left out (:func:`~oloproof_nb._core.scoremap.reason_kind`); a
    fault replay's reason that names its call (``step 4: …``, ``calls: every``) is of the first call's; ``(no
    reason)`` for none.

    Examples
    --------
    >>> _cause("answer 'Booked: s2' != expected 'booked'"), _cause("2 unexpected changes: a, b")
    ('answer differs', 'unexpected changes')
    >>> _cause("1 of 3 paths differ: a; 1 of them differ in type only (a: '1' in the case file, 1 in the state): …")
    'paths differ, some in type only'
    >>> _cause("step 4: control_replay_diverged: step 1 differs: …; step 6: false_success"), _cause("")
    ('control_replay_diverged', '(no reason)')
    >>> _cause("3 tool calls (lookup, refund, refund): at most 2", "python")
    '3 tool calls (lookup, refund, refund)'
    """
    kind = reason_kind(re.split(r"; step \d+: ", reason[len(call.group()):])[0] if (call := _CALL.match(reason))
                       else reason)
    for pattern, cause in _CAUSES:
        if (evaluator not in _BUILT_IN or evaluator in _WORDED_BY[cause]) and pattern.match(kind):
            notes = [note for marker, note in _NOTES if marker in kind]
            return cause + (f", some {' and '.join(notes)}" if notes else "")
    return kind.split(":")[0].strip() or "(no reason)"


def _reason_lines(verdicts: pd.DataFrame, chosen: pd.DataFrame, verdict: str, said: str, width: int) -> list[str]:
    """The lines of :func:`missing_verdict_lines` and :func:`failed_verdict_lines`: the reasons of ``chosen`` (rows
    of ``verdicts`` whose verdict is ``verdict``; ``said``: ``are missing``, ``fail``), by criterion and kind."""
    if chosen.empty:
        return []
    rows = verdicts.groupby("criterion", sort=False).size()
    reason = chosen["reason"].fillna("").astype(str)
    # of its cause, not of the answer, count, paths or score it names: "score 3 …" and "score 7 …" are one reason
    evaluator = chosen["evaluator"] if "evaluator" in chosen.columns else [None] * len(chosen)
    pairs = [(why, by if isinstance(by, str) else None) for why, by in zip(reason, evaluator, strict=True)]
    causes = {pair: _cause(*pair) for pair in dict.fromkeys(pairs)}  # each text once: a run repeats them
    code = pd.Series([causes[pair] for pair in pairs], index=chosen.index, dtype=object)
    kinds = chosen.assign(code=code, why=reason)
    counts = kinds.groupby(["criterion", "code"], sort=False).size().sort_values(ascending=False, kind="stable")
    lines: list[str] = []
    for (criterion, code), n in counts.head(_ERROR_KINDS).items():
        first = kinds[(kinds["criterion"] == criterion) & (kinds["code"] == code)].iloc[0]
        head = (f"{terminal_text(str(criterion))}: {n:,} of its {int(rows[criterion]):,} verdicts {said}: "
                f"{terminal_text(str(code))}")
        lines.extend(textwrap.wrap(head, width, break_long_words=False, break_on_hyphens=False))
        example = fit(terminal_text(str(first["case_id"])), 40)  # an id is the user's
        lines.append(fit(terminal_text(f"  e.g. {example}: {first['why']}"), width))
    more = len(counts) - _ERROR_KINDS
    if more > 0:
        lines.append(f"  and {more:,} other reason{'s' if more != 1 else ''}")
    lines.append(fit(f"  in Python: run.verdicts[run.verdicts.verdict == \"{verdict}\"] has each reason", width))
    return lines
