"""The gate on a terminal: no line over 100 characters (``wide``: nothing cut), and the exit line."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from oloproof_nb._analysis.columns import GATE
from oloproof_nb._analysis.gate import Gate
from oloproof_nb._config.release import ReleaseConfig
from oloproof_nb._display.terminal import (
    case_error_lines,
    cut_names,
    exit_line,
    gate_size,
    gate_table_text,
    missing_verdict_lines,
    terminal_width,
)
from oloproof_nb._display.theme import fmt_cell

LONG_REASON = ("interval_includes_threshold; cluster_t instead of cluster_bootstrap: the simulation "
               "(benchmarks/coverage.md) shows the bootstrap's lower bound above the true rate more than 3% of "
               "the time at 12 clusters")
LONG_NAME = "recovers_from_error_at_issue_refund_when_the_payment_provider_times_out"


def _gate(rows: list[dict[str, object]], verdict: str, reason: str = "") -> Gate:
    base = {"evaluator": "state_matches", "n": 48, "n_clusters": 48, "passed": 40, "missing": 1, "rate": 40 / 48,
            "ci_low": 0.7, "ci_high": 0.92, "method": "clopper_pearson", "threshold": 0.9, "verdict": "PASS",
            "reason": "ci_low_at_or_above_threshold", "failing_clusters": 8, "vacuous": False,
            "reduce": "mean"}
    full = [{**base, **row} for row in rows]
    table = GATE.from_columns({c: [row[c] for row in full] for c in GATE.names})
    return Gate(table=table, verdict=verdict, release=ReleaseConfig(), clustered=False, n_source_clusters=48,
                reason=reason)


ROWS = [
    {"criterion": "answer_matches", "verdict": "FAIL", "reason": "ci_high_below_threshold"},
    {"criterion": LONG_NAME, "verdict": "INSUFFICIENT_EVIDENCE", "reason": LONG_REASON},
    {"criterion": "state_matches", "verdict": "FAIL", "reason": "ci_high_below_threshold"},
    {"criterion": "other_kept", "verdict": "PASS"},
    {"criterion": "policy", "verdict": "REPORT_ONLY", "reason": "", "threshold": math.nan},
    {"criterion": "same_state", "verdict": "INSUFFICIENT_EVIDENCE", "reason": "too_few_clusters"},
]


def test_every_line_fits_100_columns_and_every_long_reason_is_kept_wrapped() -> None:
    text = gate_table_text(_gate(ROWS, "BLOCK"))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert len(max(lines, key=len)) > 60  # a table, not an empty string
    assert "INSUFFICIENT_EVIDENCE" in text  # verdicts are never cut at this width
    joined = " ".join(line.strip() for line in lines if not line.startswith("|"))
    assert LONG_REASON in joined and f"{LONG_NAME}: " in joined  # wrapped, every word kept
    assert "same_state: too_few_clusters" in joined
    assert "ci_high_below_threshold" not in joined  # it only restates FAIL


def test_long_names_cut_alike_are_each_given_whole_under_the_table() -> None:
    """Two names that share their first 60 characters read the same once cut; neither says more than PASS, so no
    reason line named them: each is now given whole under the table, the table still within 100 columns."""
    names = [LONG_NAME + "_on_the_first_try", LONG_NAME + "_after_a_retry"]
    lines = gate_table_text(_gate([{"criterion": n} for n in names], "PASS")).splitlines()
    assert max(len(line) for line in lines) <= 100
    cells = [line.strip("|").split("|")[0].strip() for line in lines if line.startswith("|")][2:]
    assert len(cells) == 2 and cells[0] == cells[1] and cells[0].endswith("…")  # the table alone cannot tell
    under = " ".join(line.strip() for line in lines if not line.startswith("|"))  # wrapped to 100 columns
    assert under == " ".join(f"{cells[0]} = {n}" for n in names)


def test_a_short_name_is_never_given_twice() -> None:
    lines = gate_table_text(_gate([{"criterion": "answer_matches"}], "PASS")).splitlines()
    assert not any(" = " in line for line in lines)
    # the table alone, header, rule and one row, the name whole in its cell (an empty text passed the line above)
    assert len(lines) == 3 and all(line.startswith("|") for line in lines)
    assert lines[2].split("|")[1].strip() == "answer_matches"


def test_only_a_name_longer_than_the_room_is_cut_and_its_whole_line_fits_the_width() -> None:
    rows = [["abcde", "x"], ["abcdefgh", "y"]]
    assert cut_names(rows, 5, 100) == ["abcd… = abcdefgh"]  # abcde fits its 5 characters: kept, not repeated
    assert rows == [["abcde", "x"], ["abcd…", "y"]]
    # a name of 150 characters without a space, at width 60: broken to fill each line, continued 4 spaces in
    rows = [["n" * 150]]
    assert cut_names(rows, 20, 60) == ["n" * 19 + "… = " + "n" * 37, "    " + "n" * 56, "    " + "n" * 56, "    n"]
    assert rows == [["n" * 19 + "…"]]


@pytest.mark.parametrize("at", range(28, 40))
def test_a_bar_in_a_criterion_name_is_escaped_and_the_cut_counts_the_escape(at: int) -> None:
    """``a|b`` ended its cell: the row had one column more than its header. Now ``|`` is ``\\|`` as in a Markdown
    table; a long name with bars is cut to the room its escapes take (its line stayed one character a bar too wide),
    never between ``\\`` and ``|`` (``at`` moves a bar across the cut), and given whole, as written, below."""
    long = ("x" * at + "|" + LONG_NAME)[:90] + "|a|b"  # cut near ``at``; bars after the cut are not in the cell
    g = _gate([{"criterion": "a|b"}, {"criterion": long, "verdict": "FAIL"}], "BLOCK")
    for wide in (False, True):
        lines = gate_table_text(g, wide=wide).splitlines()
        table = [line for line in lines if line.startswith("|")]
        assert len(table) == 4 and {len(re.split(r"(?<!\\)\|", line)) for line in table} == {10 if not wide else 17}
        cells = [re.split(r"(?<!\\)\|", line)[1].strip() for line in table]
        assert cells[2] == "a\\|b"
        assert not any(re.search(r"\\(?!\|)", cell) for cell in cells)  # no escape split by the cut
        if wide:
            assert cells[3] == long.replace("|", "\\|")
            continue
        assert max(len(line) for line in lines) <= 100
        assert cells[3].endswith("…") and long.startswith(cells[3][:-1].replace("\\|", "|"))
        assert len(cells[3]) == len(table[1].split("|")[1]) - 2  # fills its column: the cut counted each escape
        under = " ".join(line.strip() for line in lines if not line.startswith("|"))
        assert under == f"{cells[3].replace(chr(92) + '|', '|')} = {long}"  # the whole name as written


def test_the_room_of_a_cut_name_is_measured_as_written_with_its_escapes() -> None:
    """A name of bars beside a longer one without: the room was taken from the longest name as given, so the
    barred one, cut to it, was as many characters too wide as it kept bars (here 110 columns of 100)."""
    barred = "|a" * 10 + LONG_NAME  # 92 characters, 102 as written
    lines = gate_table_text(_gate([{"criterion": "y" * 102}, {"criterion": barred}], "PASS")).splitlines()
    assert max(len(line) for line in lines) <= 100
    cell = re.split(r"(?<!\\)\|", lines[3])[1].strip()
    assert cell.startswith("\\|a\\|a") and cell.endswith("…")


def test_a_barred_name_as_the_longest_is_cut_to_the_room_its_escapes_leave_and_no_shorter() -> None:
    """Before, the room of the criterion column measured on the names as given (92 characters here,
    102 as written with its ten ``\\|``) cut the name ten characters more than it had to (a table of 90 columns),
    and no test saw it. By hand: the other columns take 63 of the 100 (``| `` and `` | 48 | 40   | 1    | 0.833 |
    0.700–0.920 | 0.900 | PASS    |``), so the name keeps 37 as written: ten ``\\|a``, ``recove`` and ``…``."""
    barred = "|a" * 10 + LONG_NAME
    lines = gate_table_text(_gate([{"criterion": barred}, {"criterion": "b"}], "PASS")).splitlines()
    table = lines[:4]  # the line giving the cut name whole starts with its `|` too
    assert {len(line) for line in table} == {100}
    assert re.split(r"(?<!\\)\|", table[2])[1].strip() == "\\|a" * 10 + "recove…"


def _ended(rows: list[tuple[str, str, str | None]]) -> Any:
    """A run whose ``cases`` frame holds ``rows`` of (case id, status, error): all ``case_error_lines`` reads."""
    from types import SimpleNamespace

    import pandas as pd

    return SimpleNamespace(cases=pd.DataFrame(rows, columns=["case_id", "status", "error"]))


def test_the_three_commonest_messages_are_listed_by_count_with_their_first_case() -> None:
    """By hand: 11 of 12 case runs ended, 3 by timeout; messages a ×4, b ×3, c ×2, d and e once, first seen in the
    order e, d, c, b, a. The three commonest are listed, most first, each with the first case showing it."""
    timeout = "case_timeout_s 5 reached"
    rows = [("e0", "error", "OSError: e"), ("d0", "error", "ValueError: d"), ("c0", "error", "TypeError: c"),
            ("b0", "timeout", timeout), ("a0", "error", "KeyError: 'a'"), ("c1", "error", "TypeError: c"),
            ("b1", "timeout", timeout), ("a1", "error", "KeyError: 'a'"), ("b2", "timeout", timeout),
            ("a2", "error", "KeyError: 'a'"), ("a3", "error", "KeyError: 'a'"), ("ok", "completed", None)]
    python = '  in Python: run.cases["error"] has each; run.panel(case_id) shows a case'
    assert case_error_lines(_ended(rows)) == [
        "11 of 12 case runs ended in error (3 by timeout): their verdicts are missing",
        "  KeyError: 'a' (4 case runs, e.g. a0)", f"  {timeout} (3 case runs, e.g. b0)",
        "  TypeError: c (2 case runs, e.g. c0)", "  and 2 other messages", python]
    three = [row for row in rows if row[0][0] in "abc"]  # three messages: all listed, no others
    assert case_error_lines(_ended(three))[-2:] == ["  TypeError: c (2 case runs, e.g. c0)", python]


def test_a_long_message_and_case_id_are_escaped_and_cut_to_fit() -> None:
    """The id is 68 characters, so 40 are kept for it (an ESC shown as \\x1b) and the message gets 100 − 26 − 40
    = 34, raised to its floor of 40: both cut with … (the CR shown as \\r)."""
    case_id = "case\x1b[2J" + "x" * 60
    lines = case_error_lines(_ended([(case_id, "error", "Boom\r" + "m" * 80)]))
    assert lines[1] == "  Boom\\r" + "m" * 31 + "… (1 case run, e.g. case\\x1b[2J" + "x" * 28 + "…)"
    assert lines[0] == "1 of 1 case runs ended in error: their verdicts are missing"


def _missing(cases: list[tuple[str, int, str, str | None]], verdicts: list[tuple[str, int, str, str, str]]) -> Any:
    """A run of ``cases`` (case id, epoch, status, error) and ``verdicts`` (case id, epoch, criterion, verdict,
    reason): all ``missing_verdict_lines`` reads."""
    from types import SimpleNamespace

    import pandas as pd

    return SimpleNamespace(cases=pd.DataFrame(cases, columns=["case_id", "epoch", "status", "error"]),
                           verdicts=pd.DataFrame(verdicts, columns=["case_id", "epoch", "criterion", "verdict",
                                                                    "reason"]))


def test_missing_verdicts_of_completed_case_runs_are_said_by_criterion_and_reason_code() -> None:
    """By hand: fault has 6 verdicts, 3 missing as control_replay_diverged (first c1), 1 as replay_raised;
    policy has 4, 2 missing with a check's None (first c2 epoch 2); c4's epoch 1 ended in error, so its missing
    policy verdict is case_error_lines' to say (c4's epoch 2 completed: its missing verdict counts). answer has
    none missing. Three kinds listed, the commonest first, ties in the order met."""
    cases = [(f"c{n}", e, "completed", None) for n in range(1, 4) for e in (1, 2)]
    cases += [("c4", 1, "error", "KeyError: 'x'"), ("c4", 2, "completed", None)]
    diverged = "control_replay_diverged: step 1 differs: recorded give_up -> 0.25; replayed -> 0.5"
    verdicts = [("c1", 1, "fault", "missing", diverged), ("c1", 2, "fault", "missing", diverged + "!"),
                ("c2", 1, "fault", "missing", "replay_raised: ValueError: boom"),
                ("c2", 2, "fault", "missing", diverged), ("c3", 1, "fault", "pass", "recovered"),
                ("c3", 2, "fault", "fail", "not_recovered"),
                ("c2", 2, "policy", "missing", "check returned None"), ("c4", 1, "policy", "missing", "case_error"),
                ("c4", 2, "policy", "missing", "check returned None"), ("c1", 1, "policy", "pass", ""),
                ("c1", 1, "answer", "pass", "")]
    python = '  in Python: run.verdicts[run.verdicts.verdict == "missing"] has each reason'
    assert missing_verdict_lines(_missing(cases, verdicts)) == [
        "fault: 3 of its 6 verdicts are missing: control_replay_diverged",
        f"  e.g. c1: {diverged}",
        "policy: 2 of its 4 verdicts are missing: check returned None",
        "  e.g. c2: check returned None",
        "fault: 1 of its 6 verdicts are missing: replay_raised",
        "  e.g. c2: replay_raised: ValueError: boom",
        python]
    more = [*verdicts, ("c3", 1, "answer", "missing", "")]  # a fourth kind, with no reason given
    lines = missing_verdict_lines(_missing(cases, more))
    assert lines[-2:] == ["  and 1 other reason", python]
    assert missing_verdict_lines(_missing(cases, [v for v in verdicts if v[3] != "missing" or v[0] == "c4"
                                                   and v[1] == 1])) == []  # only the ended case run's: none
    only = missing_verdict_lines(_missing(cases, [("c3", 1, "answer", "missing", "")]))
    assert only[:2] == ["answer: 1 of its 1 verdicts are missing: (no reason)", "  e.g. c3: "]


def test_a_pooled_runs_case_that_ended_in_one_run_keeps_its_missing_verdicts_of_another() -> None:
    """Pooled (``op.load_runs``), case c1 ended in error in run A (its verdicts are case_error_lines') and
    completed in run B, whose check returned None. Matched by (case_id, epoch) alone, run B's missing verdict was
    taken for run A's ended case run and no line said it: by hand, 1 of chk's 4 verdicts is missing in a case run
    that completed."""
    from types import SimpleNamespace

    import pandas as pd

    cases = pd.DataFrame([("A", "c1", 1, "error", "RuntimeError: boom"), ("A", "c2", 1, "completed", None),
                          ("B", "c1", 1, "completed", None), ("B", "c2", 1, "completed", None)],
                         columns=["run_id", "case_id", "epoch", "status", "error"])
    verdicts = pd.DataFrame([("A", "c1", 1, "chk", "missing", "RuntimeError: boom"),
                             ("A", "c2", 1, "chk", "pass", ""),
                             ("B", "c1", 1, "chk", "missing", "check returned None"),
                             ("B", "c2", 1, "chk", "pass", "")],
                            columns=["run_id", "case_id", "epoch", "criterion", "verdict", "reason"])
    lines = missing_verdict_lines(SimpleNamespace(cases=cases, verdicts=verdicts))
    assert lines[:2] == ["chk: 1 of its 4 verdicts are missing: check returned None", "  e.g. c1: check returned None"]


@pytest.mark.parametrize(("columns", "width"), [("250", 250), ("60", 100), (None, 100)])
def test_the_width_follows_a_wider_terminal_only(monkeypatch: pytest.MonkeyPatch, columns: str | None,
                                                 width: int) -> None:
    """``COLUMNS`` widens the table; a terminal narrower than 100 columns, or none (a CI log), gets 100."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_width() == width


def test_wide_shows_every_column_uncut() -> None:
    text = gate_table_text(_gate(ROWS, "BLOCK"), wide=True)
    assert LONG_REASON in text and LONG_NAME in text and "clopper_pearson" in text
    assert max(len(line) for line in text.splitlines()) > 100


def test_the_baseline_columns_fit_too() -> None:
    g = _gate(ROWS, "BLOCK")
    table = g.table.assign(noop_rate=[0.0, 1.0, 0.25, 1.0, 1.0, 0.5],
                           passes_when_idle=[False, True, False, True, False, False])
    text = gate_table_text(Gate(table=table, verdict="BLOCK", release=g.release, clustered=False,
                                n_source_clusters=48))
    assert max(len(line) for line in text.splitlines()) <= 100
    header = [c.strip() for c in text.splitlines()[0].strip("|").split("|")]
    assert header[-2:] == ["noop", "idle"]


def test_exit_lines() -> None:
    # hand count of ROWS: 2 FAIL, 2 INSUFFICIENT_EVIDENCE, 1 PASS, 1 REPORT_ONLY → 5 gated
    assert exit_line(_gate(ROWS, "BLOCK")) == ("gate: BLOCK — exit 1: 2 criteria FAIL, 2 criteria "
                                               "INSUFFICIENT_EVIDENCE (of 5 gated; PASS needs every one to pass)")
    one = [ROWS[0], ROWS[3]]
    assert exit_line(_gate(one, "BLOCK")) == ("gate: BLOCK — exit 1: 1 criterion FAIL (of 2 gated; PASS needs "
                                              "every one to pass)")
    assert exit_line(_gate([ROWS[3], ROWS[3]], "PASS")) == "gate: PASS — exit 0: all 2 gated criteria pass"
    assert exit_line(_gate([ROWS[4]], "BLOCK", reason="no_criteria: nothing was gated")) == (
        "gate: BLOCK — exit 1: no_criteria: nothing was gated")


def test_a_vacuous_criterion_is_named_under_the_table_and_in_the_exit_line() -> None:
    """A PASS that rests on a check that cannot fail: the report writes ``(vacuous)`` beside it, the
    terminal's stdout said nothing (only a warning on stderr, which a CI log may drop)."""
    rows = [{"criterion": "other_order_untouched", "vacuous": True}, {"criterion": "answer_matches"}]
    g = _gate(rows, "PASS")
    lines = gate_table_text(g).splitlines()
    assert "other_order_untouched: vacuous: it cannot fail as configured; ci_low_at_or_above_threshold" in lines
    assert not any(line.startswith("answer_matches:") for line in lines)  # its reason only restates PASS
    assert exit_line(g) == ("gate: PASS — exit 0: all 2 gated criteria pass (1 of them vacuous: cannot fail as "
                            "configured)")
    assert exit_line(_gate([rows[1]], "PASS")) == "gate: PASS — exit 0: the 1 gated criterion passes"


def test_the_gate_repr_names_a_reduction_and_a_vacuous_check() -> None:
    """The repr's n counts cases for a pass^k criterion: it says so, as the plot, the report and the CLI do."""
    from oloproof_nb._display.notebook import Gate as NotebookGate

    rows = [{"criterion": "answer_matches", "reduce": "pass^3", "n": 24},
            {"criterion": "other_order_untouched", "vacuous": True}]
    lines = repr(NotebookGate.of(_gate(rows, "PASS"))).splitlines()
    assert lines[1].split(":")[0].split(maxsplit=1)[1] == "answer_matches (pass^3) ≥ 0.9"
    assert " n=24 " in lines[1]
    assert lines[2].split(":")[0].split(maxsplit=1)[1] == "other_order_untouched (vacuous) ≥ 0.9"


HOSTILE_SYSTEM = '''
class S:
    version = "v\\u202e1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return self.state

    def run(self, input):
        step = {"kind": "tool_call", "tool": "pay\\rPASS", "args": {"x": "\\x1b[2J"}, "result": {"ok": True}}
        return {"steps": [step],
                "answer": "done\\u202eenod", "status": "completed"}
'''
HOSTILE_CHECK = 'def check(case, initial_state, final_state, trajectory):\n    return (False, "see\\nPASS\\x1b[2J")\n'


def test_text_reprs_show_names_and_reasons_as_written(make_suite, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The CLI escaped what a terminal acts on; the reprs a REPL prints did not: a check named ``ok\\rPASS``
    printed PASS over its own line, an ANSI sequence cleared the screen, a right-to-left override reordered a
    case id. Every line of every text repr now holds printable characters only (the line breaks are the repr's)."""
    import oloproof_nb as op

    root = make_suite([{"id": "rtl\u202eexe.txt", "input": {}, "expected": {"answer": "x"}}],
                      evaluators=[{"type": "answer_matches"},
                                  {"type": "python", "check": "checks:check", "name": "ok\rPASS\x1b[2J"}],
                      system="sysmod:S", system_code=HOSTILE_SYSTEM)
    (root / "checks.py").write_text(HOSTILE_CHECK, encoding="utf-8")
    suite = op.load_suite(root)
    one = op.run(suite, out=tmp_path / "one", progress=False)
    two = op.run(suite, out=tmp_path / "two", progress=False)
    cmp = op.compare(one, two)
    texts = {"suite": repr(suite), "gate": repr(op.gate(one)), "panel": repr(one.panel("rtl\u202eexe.txt")),
             "compare": repr(cmp), "paired": repr(cmp.panel("rtl\u202eexe.txt"))}
    for what, text in texts.items():
        bad = [line for line in text.split("\n") if not line.isprintable()]
        assert not bad, (what, bad)
    assert "ok\\rPASS\\x1b[2J" in texts["gate"] and "see\\nPASS\\x1b[2J" in texts["panel"]
    assert "rtl\\u202eexe.txt" in texts["panel"]


def test_an_interval_is_shown_rounded_outward_everywhere() -> None:
    """A low end of 0.55455 beside a threshold of 0.555 showed as 0.555 (rounded to nearest) next to the verdict
    INSUFFICIENT_EVIDENCE, in the repr, the terminal table, the HTML table and the report. Every interval shown
    now holds the computed one: the low end rounded down, the high end up."""
    from oloproof_nb._display.html import html_table
    from oloproof_nb._display.notebook import Gate as ShownGate
    from oloproof_nb._display.theme import fmt_number

    g = _gate([{"criterion": "answer_matches", "ci_low": 0.5545544788901288, "ci_high": 0.8260001, "threshold": 0.555,
                "verdict": "INSUFFICIENT_EVIDENCE", "reason": "interval_includes_threshold"}], "BLOCK")
    assert "[0.554, 0.827]" in repr(ShownGate.of(g))
    assert "0.554–0.827" in gate_table_text(g)
    cells = str(html_table(g.table[["ci_low", "ci_high", "threshold"]], fmt_number, styled=True))
    assert ">0.554<" in cells and ">0.827<" in cells and ">0.555<" in cells
    exact = _gate([{"criterion": "a", "ci_low": 0.555, "ci_high": 0.9}], "PASS")  # a whole thousandth stays
    assert "[0.555, 0.900]" in repr(ShownGate.of(exact))
    # ``--wide`` and the ``oloproof compare`` table rounded to nearest (0.555 beside 0.555)
    wide = gate_table_text(g, wide=True)
    assert "| 0.554 " in wide and "| 0.827 " in wide and "0.555 " in wide


def test_the_compare_table_rounds_its_interval_outward() -> None:
    """``oloproof compare`` printed ±0.142 for the interval the Comparison repr shows as [-0.143, +0.143]."""
    import pandas as pd

    from oloproof_nb._display.terminal import compare_table_text

    table = pd.DataFrame([{"criterion": "state_matches", "base_rate": 0.7, "candidate_rate": 0.7, "difference": 0.0,
                           "ci_low": -0.1424744, "ci_high": 0.1424744, "n": 48, "pass_to_fail": 0,
                           "fail_to_pass": 0, "missing": 0, "verdict": "INSUFFICIENT_EVIDENCE"}])
    text = compare_table_text(table)
    assert "-0.143" in text and " +0.143" in text and "0.142" not in text


def test_a_confidence_level_is_shown_with_its_digits(make_suite: Any) -> None:
    """Before, levels were shown to whole percents, so ``confidence: 0.995`` read "100% intervals" in the HTML,
    the plot and the terminal table, and 0.975 read "98%"."""
    import oloproof_nb as op
    from oloproof_nb._display.theme import fmt_level

    assert [fmt_level(c) for c in (0.5, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999)] == [
        "50%", "90%", "95%", "97.5%", "99%", "99.5%", "99.9%"]
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(5)]
    run = op.run(op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}])), progress=False)
    g = op.gate(run, criteria={"answer_matches": 0.5}, confidence=0.995)
    assert "99.5% intervals" in g._repr_html_() and "100%" not in g._repr_html_()
    assert op.plots.gate(g).get_xlabel() == "pass rate and 99.5% interval"
    assert "99.5% CI" in gate_table_text(g)


# -- cells under their own heads, and the edges of the lines around the table ------------------------------------


def _cells(text: str) -> list[dict[str, str]]:
    """The narrow table's body rows as ``{head: cell}``."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|")]
    return [dict(zip(rows[0], row, strict=True)) for row in rows[2:]]


def test_a_text_of_exactly_the_width_is_not_cut() -> None:
    from oloproof_nb._display.terminal import fit

    assert fit("abcde", 5) == "abcde" and fit("abcdef", 5) == "abcd…" and len(fit("abcdef", 5)) == 5


def test_passed_and_missing_counts_stand_under_their_own_heads() -> None:
    cells = _cells(gate_table_text(_gate([{"criterion": "a", "n": 48, "passed": 40, "missing": 1}], "PASS")))
    assert (cells[0]["n"], cells[0]["pass"], cells[0]["miss"]) == ("48", "40", "1")


def test_idle_says_yes_where_the_baseline_passes_when_idle_not_where_it_has_a_noop_rate() -> None:
    g = _gate([{"criterion": "a"}, {"criterion": "b"}], "PASS")
    table = g.table.assign(noop_rate=[0.5, 0.0], passes_when_idle=[False, True])
    cells = _cells(gate_table_text(Gate(table=table, verdict="PASS", release=g.release, clustered=False,
                                        n_source_clusters=48)))
    assert [(c["criterion"], c["idle"]) for c in cells] == [("a", ""), ("b", "yes")]


def test_the_reduce_column_appears_when_any_criterion_is_reduced_over_epochs() -> None:
    text = gate_table_text(_gate([{"criterion": "a"}, {"criterion": "b", "reduce": "pass^3"}], "PASS"))
    assert [(c["criterion"], c["reduce"]) for c in _cells(text)] == [("a", "mean"), ("b", "pass^3")]
    assert "reduce" not in _cells(gate_table_text(_gate([{"criterion": "a"}], "PASS")))[0]


def test_a_pass_exit_line_counts_only_the_gated_criteria() -> None:
    # one gated criterion that passes and one REPORT_ONLY: 1 gated criterion, not 2
    rows: list[dict[str, object]] = [
        {"criterion": "other_kept", "verdict": "PASS"},
        {"criterion": "policy", "verdict": "REPORT_ONLY", "reason": "", "threshold": math.nan},
    ]
    # ... and says the other is reported, not gated (a fault criterion at 4 of 18 went unsaid)
    assert exit_line(_gate(rows, "PASS")) == ("gate: PASS — exit 0: the 1 gated criterion passes; 1 more is "
                                              "reported, not gated")
    rows.append({"criterion": "style", "verdict": "REPORT_ONLY", "reason": "", "threshold": math.nan})
    assert exit_line(_gate(rows, "PASS")).endswith("passes; 2 more are reported, not gated")


def test_a_pass_exit_line_counts_the_vacuous_gated_criteria_and_says_weaker_settings() -> None:
    """A vacuous REPORT_ONLY criterion is no gated one, so the exit line leaves it out of its
    vacuous count (by hand: 1 gated vacuous, not 2); a PASS by settings weaker than the run's own says so at its end
    (two settings: "2 settings weaker than ...")."""
    import dataclasses

    rows: list[dict[str, object]] = [
        {"criterion": "other_order_untouched", "vacuous": True},
        {"criterion": "answer_matches"},
        {"criterion": "policy", "verdict": "REPORT_ONLY", "reason": "", "threshold": math.nan, "vacuous": True},
    ]
    g = _gate(rows, "PASS")
    assert exit_line(g) == ("gate: PASS — exit 0: all 2 gated criteria pass (1 of them vacuous: cannot fail as "
                            "configured); 1 more is reported, not gated")
    weaker = dataclasses.replace(g, relaxed=("criteria.answer_matches 0.9 → 0.5", "min_clusters 10 → 2"),
                                 weaker_than="the run's own release.yaml")
    assert exit_line(weaker) == ("gate: PASS — exit 0: all 2 gated criteria pass (1 of them vacuous: cannot fail as "
                                 "configured), by 2 settings weaker than the run's own release.yaml; 1 more is "
                                 "reported, not gated")


def test_a_fourth_message_kind_is_counted_as_one_other() -> None:
    rows: list[tuple[str, str, str | None]] = [
        ("a0", "error", "KeyError: 'a'"), ("a1", "error", "KeyError: 'a'"), ("b0", "error", "OSError: b"),
        ("c0", "error", "TypeError: c"), ("d0", "error", "ValueError: d")]
    assert case_error_lines(_ended(rows))[-2] == "  and 1 other message"


def test_a_run_of_two_epochs_counts_cases_and_case_runs() -> None:
    from types import SimpleNamespace

    import pandas as pd

    from oloproof_nb._display.terminal import run_size

    run = SimpleNamespace(epochs=2, runs=[object()], n_cases=6,
                          cases=pd.DataFrame({"case_id": ["a", "b", "c", "a", "b", "c"]}))
    assert run_size(run) == "3 cases, 6 case runs (2 epochs)"  # type: ignore[arg-type]


def test_a_run_of_one_case_says_case() -> None:
    """The README's smallest suite starts with one case, and ``oloproof run`` once said ``1 cases``."""
    from types import SimpleNamespace

    import pandas as pd

    from oloproof_nb._display.terminal import run_size

    one = SimpleNamespace(epochs=1, runs=[object()], n_cases=1, cases=pd.DataFrame({"case_id": ["b00"]}))
    tries = SimpleNamespace(epochs=3, runs=[object()], n_cases=3, cases=pd.DataFrame({"case_id": ["b00"] * 3}))
    assert run_size(one) == "1 case"  # type: ignore[arg-type]
    assert run_size(tries) == "1 case, 3 case runs (3 epochs)"  # type: ignore[arg-type]


#: A name or reason from the run that would rewrite the screen: a carriage return and ESC[2K erase the line, a
#: forged verdict follows, ESC[8m hides everything printed after it (the real exit line), U+202E reverses text.
FORGING = "x\r\x1b[2Kgate: PASS — exit 0\x1b[8m\u202e"


def test_the_compare_table_shows_a_cut_criterion_name_as_written() -> None:
    """Before, ``oloproof compare`` cut a long criterion name and gave it whole under the table as it was: its
    ESC[2K erased that line and ESC[8m hid the rest of the output, the closing ``compare: REGRESSION`` line too.
    The gate's table escaped the name before cutting it; the compare table now does the same."""
    import pandas as pd

    from oloproof_nb._display.terminal import compare_table_text

    name = FORGING + "y" * 90
    table = pd.DataFrame({"criterion": [name], "base_rate": 1.0, "candidate_rate": 0.5, "difference": -0.5,
                          "ci_low": -0.7, "ci_high": -0.3, "n": 24, "pass_to_fail": 12, "fail_to_pass": 0,
                          "missing": 0, "verdict": "REGRESSION"})
    text = compare_table_text(table)
    lines = text.split("\n")
    assert all(line.isprintable() for line in lines), [line for line in lines if not line.isprintable()]
    assert "x\\r\\x1b[2Kgate: PASS — exit 0\\x1b[8m\\u202e" in text  # shown as written
    assert max(len(line) for line in lines) <= 100  # cut by its escaped length


def test_the_exit_line_shows_a_reason_from_the_run_as_written() -> None:
    """A BLOCK reason quotes the run (the id of a do-nothing baseline run, an Inspect AI log's name and
    its early-stopping manager): printed as it was, a carriage return and ESC[2K put ``gate: PASS — exit 0`` in
    place of the BLOCK line."""
    line = exit_line(_gate(ROWS, "BLOCK", reason=f"noop_baseline: run {FORGING} is the do-nothing baseline"))
    assert line.isprintable()
    assert line == ("gate: BLOCK — exit 1: noop_baseline: run x\\r\\x1b[2Kgate: PASS — exit 0\\x1b[8m\\u202e is the "
                    "do-nothing baseline")


# -- gaps a mutant showed ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("clustered", "n", "words"), [
    (True, 1, "1 source cluster"), (True, 0, "0 source clusters"), (True, 24, "24 source clusters"),
    (False, 1, "1 independent case"), (False, 0, "0 independent cases"), (False, 6, "6 independent cases"),
])
def test_gate_size_counts_in_english(clustered: bool, n: int, words: str) -> None:
    """One of a thing is singular, none or several plural (written by hand)."""
    from types import SimpleNamespace

    assert gate_size(SimpleNamespace(clustered=clustered, n_source_clusters=n)) == words  # type: ignore[arg-type]


@pytest.mark.parametrize(("column", "value", "sign", "text"), [
    ("difference", -0.5, True, "-0.500"), ("difference", 0.0, True, "+0.000"),
    ("difference", 0.5, False, "0.500"),       # no sign asked: as any number
    ("difference", float("nan"), True, ""),   # no difference (a criterion one run lacks): blank, as any NaN
    # an infinite difference carries its sign as a finite one does (it was "∞" beside "-0.500")
    ("difference", float("inf"), True, "+∞"), ("difference", float("-inf"), True, "−∞"),
    ("base_rate", 0.5, True, "0.500"),        # a rate beside the difference keeps no sign
    ("ci_high", 0.1441, True, "+0.145"), ("ci_low", -0.1441, True, "-0.145"),
])
def test_fmt_cell_signs_only_a_difference_and_its_interval(column: str, value: float, sign: bool, text: str) -> None:
    assert fmt_cell(column, value, sign=sign) == text


def test_a_threshold_is_shown_with_every_digit_it_has_everywhere() -> None:
    """A threshold of 0.9999999 was shown as ``1.000`` beside a low end of ``0.999`` and a FAIL (read as "it needs
    1"), and 0.8995 as ``0.900`` beside a low end of ``0.899`` and a PASS (a PASS below its threshold, to the eye):
    three decimals rounded the user's own number. It is shown with every digit it has in the repr, the terminal
    table (narrow and ``--wide``), the HTML table and the plot's note; a whole thousandth keeps three decimals."""
    from oloproof_nb._display.html import html_table
    from oloproof_nb._display.notebook import Gate as ShownGate
    from oloproof_nb._display.plots import _near_note
    from oloproof_nb._display.theme import fmt_number

    g = _gate([{"criterion": "a", "ci_low": 0.99904, "ci_high": 1.0, "threshold": 0.9999999, "verdict": "FAIL",
                "reason": "interval_includes_threshold"},
               {"criterion": "b", "ci_low": 0.8996, "ci_high": 0.95, "threshold": 0.8995}], "BLOCK")
    for text in (repr(ShownGate.of(g)), gate_table_text(g), gate_table_text(g, wide=True)):
        assert "0.9999999" in text and "0.8995" in text, text
    cells = str(html_table(g.table[["ci_low", "ci_high", "threshold"]], fmt_number, styled=True))
    assert ">0.9999999<" in cells and ">0.8995<" in cells and ">0.999<" in cells
    assert _near_note(0.99904, 1.0, 0.9999999) == "  ci_low 0.999 < 0.9999999"
    whole = _gate([{"criterion": "a", "threshold": 0.9}], "PASS")
    assert "| 0.900 " in gate_table_text(whole) and "0.9000" not in gate_table_text(whole)


def test_a_small_threshold_is_shown_as_written_not_in_an_exponent() -> None:
    """A threshold of 0.00005 (a criterion gated on a rare event's rate) is shown as the file writes it, in every
    place the threshold appears: Python's repr writes ``5e-05``, a text the reader has to decode and YAML 1.1
    reads as a string."""
    from oloproof_nb._display.html import html_table
    from oloproof_nb._display.notebook import Gate as ShownGate
    from oloproof_nb._display.theme import fmt_number

    g = _gate([{"criterion": "a", "ci_low": 0.0, "ci_high": 0.0004, "threshold": 0.00005}], "BLOCK")
    for text in (repr(ShownGate.of(g)), gate_table_text(g), gate_table_text(g, wide=True)):
        assert "0.00005" in text and "e-05" not in text, text
    assert ">0.00005<" in str(html_table(g.table[["ci_low", "ci_high", "threshold"]], fmt_number, styled=True))


@pytest.mark.parametrize(("members", "live", "cached", "said"), [
    ([(None, "f1")], 6, 0, "version"),
    ([("v1", None)], 6, 0, "fingerprint"),
    ([(None, "f1"), ("v1", "f1")], 12, 0, ""),  # the second run could use the cache (a first run, --no-cache)
    ([("v1", None), ("v1", "f1")], 12, 0, ""),
    ([(None, "f1"), (None, "f2")], 12, 0, "version"),
    ([("v1", None), ("v2", None)], 12, 0, "fingerprint"),
    ([(None, "f1")], 0, 0, ""),  # no replays: nothing to explain
    ([(None, None)], 0, 0, ""),
    ([("v1", "f1")], 6, 0, ""),
    ([("v1", "f1")], 3, 3, ""),
    ([(None, None)], 6, 0, "both"),  # it once named the version alone, and adding one still cached nothing
    ([(None, "f1"), ("v1", None)], 12, 0, "both"),  # neither run could use the cache, each for its own reason
], ids=["no-version", "no-fingerprint", "one-of-two-has-a-version", "one-of-two-has-a-fingerprint",
        "neither-has-a-version", "neither-has-a-fingerprint", "no-replays", "no-replays-bare", "cacheable", "cached",
        "no-version-and-no-fingerprint", "one-lacks-a-version-the-other-a-fingerprint"])
def test_the_uncached_note_is_said_only_when_no_run_of_the_pool_could_use_the_cache(
        members: list[tuple[str | None, str | None]], live: int, cached: int, said: str) -> None:
    """The note says why none of a run's replays came from the cache only where that is so of
    every run it holds (a pool with one run of a versioned, fingerprinted system could have used the cache), and
    never for a run that made no replays (``oloproof run`` prints it whatever the replays). The runs here are
    stand-ins holding only what the note reads: each manifest's version and code fingerprint."""
    from types import SimpleNamespace

    from oloproof_nb._display.terminal import uncached_note

    run = SimpleNamespace(runs=[SimpleNamespace(manifest=SimpleNamespace(system_version=v, code_fingerprint=f))
                                for v, f in members])
    expected = {"": "", "version": "none from the cache: the system has no `version`, and is never cached without one",
                "fingerprint": "none from the cache: the system's code has no fingerprint; define fingerprint()",
                "both": "none from the cache: the system has no `version` and its code no fingerprint (define "
                        "fingerprint()), and is never cached without both"}
    assert uncached_note(run, live, cached) == expected[said]
