"""The notebook face of ``op.compare``: the Comparison's repr and HTML, and a case panel of both runs side by side."""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path

from markupsafe import Markup

from .._analysis import compare as _compare
from .._analysis.gate_settings import ReleaseLike
from .._analysis.run import Run as _Run
from .._config.files import yaml_number
from ..errors import terminal_text
from .html import html_table, render
from .notebook import Run
from .panel import CasePanel
from .theme import fmt_interval, fmt_level, fmt_number, fmt_signed

__all__ = ["Comparison", "PairedPanel", "compare"]

#: Flipped rows and unpaired cases shown in the HTML view (the frames hold them all).
SHOWN = 30


def _panel(run: _Run, case_id: str) -> CasePanel:
    return run.panel(case_id) if isinstance(run, Run) else CasePanel(run, case_id)


class PairedPanel:
    """One case in both runs: its verdict changes, then each run's case panel side by side.

    Attributes
    ----------
    case_id : str
    base, candidate : CasePanel
        The case panel of each run (``run.panel(case_id)``).
    rows : pandas.DataFrame
        The case's rows of ``cmp.verdicts`` (``criterion, base, candidate, base_reason, candidate_reason``).
    """

    def __init__(self, cmp: _compare.Comparison, case_id: str) -> None:
        self.case_id = case_id
        self.base_id, self.candidate_id = cmp.base.run_id, cmp.candidate.run_id
        self.base = _panel(cmp.base, case_id)
        self.candidate = _panel(cmp.candidate, case_id)
        v = cmp.verdicts
        self.rows = v[v["case_id"] == case_id].reset_index(drop=True)

    def __repr__(self) -> str:
        lines = [f"Case {self.case_id}: base {self.base_id} | candidate {self.candidate_id}"]
        for r in self.rows.itertuples():
            mark = "" if (r.base == "pass") == (r.candidate == "pass") else "  <- flipped"
            lines.append(f"  {r.criterion}: {r.base} -> {r.candidate}{mark}")
        lines = [terminal_text(line) for line in lines]
        lines += ["", "base:", repr(self.base), "", "candidate:", repr(self.candidate)]  # each escaped already
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return render("paired_panel.html", case_id=self.case_id, base_id=self.base_id,
                      candidate_id=self.candidate_id, rows=self.rows.to_dict("records"),
                      base=Markup(self.base._repr_html_()),  # noqa: S704 - rendered by the autoescaping templates
                      candidate=Markup(self.candidate._repr_html_()))  # noqa: S704


class Comparison(_compare.Comparison):
    __doc__ = f"""{_compare.Comparison.__doc__}
    Notes
    -----
    As a notebook shows it: its text is the verdict, then one line per criterion (difference, interval,
    flips); :meth:`panel` shows a case in both runs side by side. :func:`compare` gives it.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from oloproof_nb.examples import init_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> suite = op.load_suite(init_example("false-success", tmp.name + "/suite"))
    >>> cmp = op.compare(op.run(suite, progress=False), op.run(suite, progress=False))
    >>> cmp.n_paired, len(cmp.flips), cmp.margin
    (6, 0, 0.02)
    >>> tmp.cleanup()
    """

    @classmethod
    def of(cls, c: _compare.Comparison) -> Comparison:
        return cls(**{f.name: getattr(c, f.name) for f in fields(c)})

    def panel(self, case_id: str) -> PairedPanel:
        """The case in both runs: its verdict changes, then ``base.panel(case_id)`` beside
        ``candidate.panel(case_id)`` (HTML in Jupyter)."""
        return PairedPanel(self, case_id)

    def __repr__(self) -> str:
        # the margin with every digit it has: ``:g`` kept six (0.16843347098308525 read 0.168433, beside a ci_low
        # of -0.16843347098308525 and NO_REGRESSION: a low end below −margin to the eye)
        lines = [f"Comparison: {self.verdict}" + (f" ({self.reason})" if self.reason else "")
                 + f" — {self.base.run_id} -> {self.candidate.run_id}, margin {yaml_number(self.margin)}"]
        lines += [f"  note: {note}" for note in self.notes]
        for r in self.table.itertuples():
            if math.isnan(r.difference):
                diff = "n/a"
            else:
                # each end on the side of −margin the computed end is on (the verdict's rule)
                diff = f"{fmt_signed(r.difference)} {fmt_interval(r.ci_low, r.ci_high, sign=True, threshold=-r.margin)}"
            lines.append(f"  {r.verdict:22} {r.criterion}: {diff} n={r.n} "
                         f"pass->fail={r.pass_to_fail} fail->pass={r.fail_to_pass}"
                         + (f" {r.reason}" if r.reason else ""))  # no trailing space on a row without one
        if len(self.flips):
            cases = list(dict.fromkeys(self.flips["case_id"]))
            lines.append(f"  flipped: {len(self.flips)} rows in {len(cases)} cases, e.g. cmp.panel({cases[0]!r})")
        return "\n".join(map(terminal_text, lines))  # a name or reason is shown as written, never acted on

    def _repr_html_(self) -> str:
        shown = self.table.drop(columns=["one_sided"]).rename(columns={"n_clusters": "clusters"})
        flips = self.flips.head(SHOWN).assign(open=[f"cmp.panel({c!r})" for c in self.flips["case_id"].head(SHOWN)])
        flips = flips.drop(columns=["cluster"])
        unpaired = self.unpaired.head(SHOWN)
        return render("compare.html", verdict=self.verdict, reason=self.reason, base_id=self.base.run_id,
                      candidate_id=self.candidate.run_id, base_version=str(self.base.system_version),
                      candidate_version=str(self.candidate.system_version),
                      n_paired=self.n_paired, clustered=self.clustered,
                      confidence=fmt_level(self.release.confidence), margin=yaml_number(self.margin),
                      notes=self.notes,
                      table=html_table(shown, fmt_number, styled=True, signed=True),
                      flips=html_table(flips, fmt_number, styled=True) if len(flips) else "",
                      n_flipped=len(self.flips), more_flips=max(0, len(self.flips) - SHOWN),
                      unpaired=html_table(unpaired, fmt_number) if len(unpaired) else "",
                      more_unpaired=max(0, len(self.unpaired) - SHOWN))


def _load(run: _compare.RunLike) -> _compare.RunLike:
    return Run.load(run) if isinstance(run, (str, Path)) else run


def compare(base: _compare.RunLike, candidate: _compare.RunLike, release: ReleaseLike | None = None) -> Comparison:
    """Compare two runs case by case (see :func:`oloproof_nb._analysis.compare.compare`)."""
    return Comparison.of(_compare.compare(_load(base), _load(candidate), release))


compare.__doc__ = _compare.compare.__doc__
