"""What the ``oloproof`` command writes: the gate and compare summaries with their notes, one line on standard error,
the JSON objects of ``--json`` (a result or an error), an OSError as a line, and a standard output whose reader may
leave."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
import textwrap
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._run.streams import SystemStream
from ..errors import DuplicateCaseWarning, VacuousCheckWarning, describe_exception, terminal_text

if TYPE_CHECKING:
    from .._analysis.compare import Comparison
    from .._analysis.gate import Gate
    from .._analysis.run import Run


#: How the command names the project's own warnings on standard error (any other: by its class name).
WARNING_LABELS: dict[type[Warning], str] = {VacuousCheckWarning: "vacuous check",
                                             DuplicateCaseWarning: "duplicate cases"}


#: The same warnings by class name, as a worker process sends them.
WARNING_KINDS: dict[str, type[Warning]] = {kind.__name__: kind for kind in WARNING_LABELS}


#: Whether this process has written its ``--json`` object (a result or an error) on standard output.
_JSON_WRITTEN = [False]


def json_written() -> bool:
    """Whether the command has written its one ``--json`` object: a stop or an error after it (a SIGTERM as the
    command ends) is said on standard error only, as a second object would leave stdout no JSON document (a job's
    ``json.load`` of it raised "Extra data"). The console script's entry module asks too."""
    return _JSON_WRITTEN[0]


def start_command() -> None:
    """A command begins: no ``--json`` object written yet (:func:`json_written`; ``main`` may run many commands in
    one process, as the tests do)."""
    _JSON_WRITTEN[0] = False


def print_json_text(text: str) -> None:
    """``text``, the command's one ``--json`` object, as a line on standard output (:func:`json_written`)."""
    print(text, flush=True)
    _JSON_WRITTEN[0] = True


def print_json_error(kind: str, message: str) -> None:
    """``{"error": kind, "message": message}``, one line on standard output (``--json`` of ``oloproof receipt``,
    ``gate`` and ``compare``), unless the command's object is written already (:func:`json_written`); a standard
    output that is closed or gone loses it, and the exit code stays."""
    if json_written():
        return
    try:
        print_json_text(json.dumps({"error": kind, "message": message}))
    except (OSError, ValueError):
        pass


def print_json(result: dict[str, Any]) -> None:
    """``result`` as one line of strict JSON on standard output (``oloproof gate --json``, ``compare --json``):
    ASCII, whatever the stream's encoding, and never ``NaN`` or ``Infinity`` (:func:`gate_json` writes them as the
    ``.json`` export does)."""
    print_json_text(json.dumps(result, allow_nan=False))


def _text_or_null(text: str) -> str | None:
    return text or None


def gate_json(g: Gate, run_id: str) -> dict[str, Any]:
    """``oloproof gate --json``'s object: ``command`` (``"gate"``), ``verdict`` (``PASS`` or ``BLOCK``), ``exit``
    (0 or 1, the command's code), ``run_id``, ``reason`` (:attr:`Gate.reason`, null when no run-level reason
    blocks), ``relaxed`` and ``drift`` (lists of text), ``weaker_than`` (text or null), ``unscored`` and
    ``findings`` (lists of text), and ``criteria``: one object per row of ``g.table``, every column, its cells
    as the ``.json`` export writes them (NaN ``null``, an infinity ``"Infinity"``)."""
    from .._display.export import json_records

    return {"command": "gate", "verdict": g.verdict, "exit": gate_code(g), "run_id": run_id,
            "reason": _text_or_null(g.reason), "relaxed": list(g.relaxed), "weaker_than": _text_or_null(g.weaker_than),
            "drift": list(g.drift), "unscored": list(g.unscored), "findings": list(g.findings),
            "criteria": json_records(g.table)}


def compare_json(cmp: Comparison, code: int, why: str) -> dict[str, Any]:
    """``oloproof compare --json``'s object: ``command`` (``"compare"``), ``verdict`` (``NO_REGRESSION``,
    ``REGRESSION`` or ``INSUFFICIENT_EVIDENCE``), ``exit`` (``code``: 0 or 1), ``reason`` (:attr:`Comparison.reason`
    or null), ``why`` (what the exit line says after ``exit N:``, :func:`compare_why`), ``base_run_id``,
    ``candidate_run_id``, ``n_paired``, ``margin``, ``relaxed`` and ``drift`` (lists of text), ``weaker_than``
    (text or null), ``notes`` (list of text), and ``criteria``: one object per row of ``cmp.table``, every column,
    as the ``.json`` export writes them (NaN ``null``)."""
    from .._display.export import json_cell, json_records

    return {"command": "compare", "verdict": cmp.verdict, "exit": code, "reason": _text_or_null(cmp.reason),
            "why": why, "base_run_id": cmp.base.run_id, "candidate_run_id": cmp.candidate.run_id,
            "n_paired": cmp.n_paired, "margin": json_cell(cmp.margin), "relaxed": list(cmp.relaxed),
            "weaker_than": _text_or_null(cmp.weaker_than), "drift": list(cmp.drift), "notes": list(cmp.notes),
            "criteria": json_records(cmp.table)}


def gate_code(g: Gate) -> int:
    """The exit code of a gate: 0 PASS, 1 BLOCK."""
    return 0 if g.verdict == "PASS" else 1


def print_gate(result: Run, release: str | None = None, *, wide: bool = False, baseline: Run | None = None) -> Gate:
    """Print the gate of ``result`` for people (the table, the notes under it, the exit line last); returns it."""
    from dataclasses import replace

    from .._analysis.gate_reasons import abrupt_ends, abrupt_ends_note
    from .._analysis.gate_settings import approximate_once, relaxed_note
    from .._analysis.validity import unchecked_notes, unscored_note
    from .._display.notebook import gate
    from .._display.terminal import exit_line, gate_table_text, no_criteria_note, terminal_width

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
        print_wrapped(abrupt_ends_note(ends), width)
    nothing = no_criteria_note(result, g, release)
    if nothing:  # an empty or truncated release.yaml: say which file holds no criterion
        print(nothing)
    if g.unscored:  # rows left out of every criterion: a release manager reading a PASS should know
        print_wrapped(unscored_note(g.unscored, broken=g.unscored_broken), width)
    if approximate:  # one key fixes it: say which, once
        print_wrapped(approximate, width)
    for note in unchecked_notes(result, g.table["criterion"]):  # which labels hold a relation back, and where
        print_wrapped(note, width)
    if g.relaxed:  # a weaker gate than the run's own: which settings, above the exit line that says so
        print_wrapped(relaxed_note(g.relaxed, f"--release {release}" if release else "", than=g.weaker_than), width)
    print(exit_line(g))  # the last line: why the command exits as it does
    return g


def print_wrapped(note: str, width: int, indent: str = "") -> None:
    """Print a command's ``note`` wrapped to ``width``, each line after ``indent`` (four spaces for the lines after
    the first when there is none, as the gate's reasons hang): at spaces only, never inside a path, a run id or a
    hyphenated name, nor inside a change ``a → b``. It may quote a run or a suite: shown as written
    (:func:`~oloproof_nb.errors.terminal_text`), never acted on; and no text it quotes starts a line where the
    command's own lines start (a case id ``zz compare: PASS — exit 0: …`` of a case file wrapped into a line of its
    own that read as the exit line)."""
    lines = textwrap.wrap(terminal_text(note).replace(" → ", "\xa0→\xa0"), width, initial_indent=indent,
                          subsequent_indent=indent or "    ", break_long_words=False, break_on_hyphens=False)
    print("\n".join(lines).replace("\xa0", " "))


def print_case_errors(result: Run) -> None:
    """How many case runs the system ended in error or by timeout, why verdicts of the others are missing, and why
    verdicts fail, above the gate's table."""
    from .._display.terminal import case_error_lines, failed_verdict_lines, missing_verdict_lines, terminal_width

    width = terminal_width()
    for line in [*case_error_lines(result, width), *missing_verdict_lines(result, width),
                 *failed_verdict_lines(result, width)]:
        print(line)


#: Reasons of ``oloproof compare`` that only restate the verdict: not repeated under the table.
COMPARE_PLAIN = frozenset({"ci_low_at_or_above_minus_margin", "ci_high_below_minus_margin",
                            "interval_includes_minus_margin"})


def compare_why(verdict: str, table: Any, reason: str = "") -> str:
    """Why ``oloproof compare`` exits as it does: the rule that decided, named from the table's reasons.

    INSUFFICIENT_EVIDENCE says "not ruled out" only when an interval reaching below -margin is why; a criterion
    left undecided by a rule before the interval (``approximate_methods_not_allowed``, ``too_few_clusters``,
    ``transform_not_checked``, ``no_evidence``, ``all_missing``) is named instead, as its interval may well lie
    above -margin.
    """
    if verdict == "NO_REGRESSION":  # as the gate's PASS counts its vacuous criteria: they cannot regress
        from .._analysis.gate_findings import VACUOUS

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


def os_error_line(exc: OSError) -> str:
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


#: What the command prints that a stream of another encoding may lack, in ASCII.
_ASCII = str.maketrans({"–": "-", "—": "--", "≤": "<=", "≥": ">=", "…": "...", "×": "x", "±": "+/-", "→": "->",
                        "·": "*", "’": "'", "‘": "'", "“": '"', "”": '"', "−": "-", "\u0302": ""})


def _encodable(text: str, encoding: str) -> str:
    """``text`` as ``encoding`` can write it: the typography in ASCII, anything else as a backslash escape."""
    return text.translate(_ASCII).encode(encoding, "backslashreplace").decode(encoding)


def _to_stderr(text: str) -> None:
    """Write ``text`` to standard error, if there is one to write to; with stderr closed or full it is lost.

    Text its encoding lacks is written with the ASCII stand-ins standard output gets (:func:`_encodable`): Python's
    stderr writes it as backslash escapes instead of failing (``errors="backslashreplace"``), so under
    ``PYTHONIOENCODING=ascii`` the table ``--json`` moves here read ``0.564\\u20130.845``."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            text.encode(encoding)
        except UnicodeEncodeError:
            text = _encodable(text, encoding)
        except LookupError:  # an encoding Python does not know: written as the stream writes it
            pass
        try:
            stream.write(text)
        except UnicodeEncodeError:
            stream.write(_encodable(text, encoding))
        stream.flush()
    except (OSError, ValueError):
        pass


def say(line: str) -> None:
    """One line on standard error, if there is one to write to (a completion hook's exit code must not depend
    on it: with stderr closed or full, the line is lost and the code stays)."""
    _to_stderr(line + "\n")


class _OnStandardError:
    """Standard output's stand-in under ``--json``: what the command prints for people goes to standard error,
    written as :func:`say` writes (lost when stderr is closed, full or gone; the exit code stays)."""

    def write(self, text: str) -> int:
        _to_stderr(text)
        return len(text)

    def flush(self) -> None:
        """Nothing: every write is flushed."""


@contextlib.contextmanager
def for_people_on_stderr(json_wanted: bool) -> Iterator[None]:
    """With ``json_wanted`` (``--json``), what the command prints for people (its table, notes and exit line)
    goes to standard error, unchanged, so that standard output holds the JSON object alone and a CI log still
    shows the table; else nothing changes."""
    if not json_wanted:
        yield
        return
    with contextlib.redirect_stdout(_OnStandardError()):
        yield


class ReaderMayLeave(SystemStream):
    """Standard output whose reader may stop reading (``oloproof gate RUN | head``): what is written after that
    goes nowhere and the command still exits with its own code (it was 2, "Broken pipe", whatever the gate said).
    Unlike the system's streams, text the stream cannot encode is written with ASCII stand-ins, and another
    error (a full disk) names standard output and leaves it, else the interpreter's last flush fails again and the
    exit code becomes 120. :attr:`lost` keeps that error, for a writer that ignores it (argparse's ``--help``)."""

    #: The error that lost what was written (a full disk: "standard output: No space left on device"), or None.
    lost: OSError | None = None

    def _put(self, text: str) -> None:
        try:
            self._stream.write(text)
        except UnicodeEncodeError:  # a stdout that is not UTF-8 (PYTHONIOENCODING=latin-1): ASCII stand-ins
            self._stream.write(_encodable(text, getattr(self._stream, "encoding", None) or "ascii"))

    def _failed(self, exc: OSError) -> None:
        self._leave()
        self.lost = OSError(exc.errno, exc.strerror, "standard output")
        raise self.lost from None
