"""oloproof_nb._display.panel: how a case panel names each step (its values' escaping is tested in test_html.py
and test_report.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from _epoch_systems import SCRIPTED

import oloproof_nb as op

NAMED = '''
class Desk:
    version = "named-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        return {"steps": [{"kind": "message", "role": "assistant", "name": "parse_request", "content": {"id": 7}},
                          {"kind": "tool_call", "tool": "lookup", "args": {"id": 7}, "result": {"ok": True}},
                          {"kind": "message", "role": "assistant", "content": "done"}],
                "answer": "done", "status": "completed"}
'''


def test_a_recorded_model_call_is_named_as_its_fault_replay_names_it(make_suite: Callable[..., Path],
                                                                     tmp_path: Path) -> None:
    """Before, the panel listed the example's recorded ``parse_request`` call as ``assistant:`` while the
    fault-replay view beside it (and the steps frame's ``tool`` column) named it ``parse_request``. A message
    without a recorded call keeps its role."""
    folder = make_suite([{"id": "c1", "input": {"plan": [True, False], "calls": [0, 0]}, "initial_state": {},
                          "expected": {"answer": "yes"}}],
                        evaluators=[{"type": "answer_matches"}], system="sysmod:Desk", system_code=NAMED)
    panel = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1")
    lines = [line.strip() for line in repr(panel).splitlines() if line.strip().startswith("[")]
    assert lines == ['[0] parse_request: {"id": 7}', '[1] lookup({"id": 7}) -> {"ok": true}', '[2] assistant: "done"']
    assert re.findall(r"<td><i>(.*?)</i></td>", panel._repr_html_()) == ["parse_request", "assistant"]


RAISES = '''
class Raises:
    version = "raises-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        raise RuntimeError("no connection")
'''


def test_a_case_with_no_steps_says_so_instead_of_drawing_empty_tables(make_suite: Callable[..., Path],
                                                                       tmp_path: Path) -> None:
    """Before, the panel of a case whose system raised drew a steps table and a compared-paths table with a
    header row and no rows, under no heading (the text ``repr`` leaves both out). The HTML names each section;
    no steps is said in words, and no compared path leaves the section out."""
    folder = make_suite([{"id": "c1", "input": {"plan": [True, False], "calls": [0, 0]}, "initial_state": {},
                          "expected": {"answer": "yes"}}],
                        evaluators=[{"type": "answer_matches"}], system="sysmod:Raises", system_code=RAISES)
    page = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1")._repr_html_()
    tables = re.findall(r"<table>.*?</table>", page, flags=re.S)
    assert tables and all(table.count("<tr") >= 2 for table in tables)  # every table has a row under its header
    assert "<h5>Steps</h5>\n<p><i>No steps recorded.</i></p>" in page
    assert "<h5>Verdicts</h5>" in page and "no connection" in page
    assert "Compared paths" not in page


def test_a_copy_no_criterion_scores_says_so_in_its_panel(example_suite: Path, tmp_path: Path) -> None:
    """The example's ``ord-018~injected`` (labeled invalid) has no verdict rows; its panel drew an
    empty verdicts table. It now says no criterion scores the case."""
    run = op.run(op.load_suite(example_suite), out=tmp_path / "out", progress=False)
    assert run.panel("ord-018~injected").verdicts.empty
    page = run.panel("ord-018~injected")._repr_html_()
    assert "<h5>Verdicts</h5>\n<p><i>No verdicts: no criterion scores this case.</i></p>" in page
    replay = run.panel("ord-011~injected")._repr_html_()
    (row,) = [r for r in re.findall(r"<tr[^>]*>.*?</tr>", replay, flags=re.S) if "issue_refund failed" in r]
    # the faulted step is named in words (a colour-blind reader, a page printed in grey), as `repr` says `<- fault`
    assert re.match(r'<tr style="background:[^"]*"><td>2 <b>&larr;&nbsp;fault</b></td>', row)
    # its highlight lets the theme's text colour through: JupyterLab's dark theme writes light text, which an
    # opaque light-yellow row (#fff8c5) made unreadable
    alpha = re.match(r'<tr style="background:rgba\(\d+, \d+, \d+, ([\d.]+)\)">', row)
    assert alpha is not None and float(alpha.group(1)) <= 0.3


def test_criteria_named_like_the_epoch_tables_columns_keep_their_verdicts(make_suite: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    """Before, the epochs table joined the verdicts on ``epoch`` by name, so a criterion named ``answer``
    (Inspect AI's built-in scorer ``answer()``), ``status`` or ``epoch`` broke the panel of any case with epochs:
    KeyError 'answer' from its text, ValueError "cannot insert epoch, already exists" from both views. By hand:
    the system answers "yes" in epoch 1 and "no" in epoch 2, so every criterion passes then fails."""
    folder = make_suite([{"id": "c1", "input": {"plan": [True, False], "calls": [0, 0]}, "initial_state": {},
                          "expected": {"answer": "yes"}}],
                        evaluators=[{"type": "answer_matches", "criterion": name}
                                    for name in ("answer", "status", "epoch")],
                        system="sysmod:Scripted", system_code=SCRIPTED, epochs=2)
    panel = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1")
    assert list(panel.epochs.columns) == ["epoch", "status", "answer", "n_tool_calls", "answer", "status", "epoch"]
    assert panel.epochs.iloc[:, 4:].to_numpy().tolist() == [["pass"] * 3, ["fail"] * 3]
    lines = [line.strip() for line in repr(panel).splitlines() if line.strip()[:3] in ("[1]", "[2]")]
    assert lines == ['[1] completed, answer "yes": answer pass, status pass, epoch pass',
                     '[2] completed, answer "no": answer fail, status fail, epoch fail']
    cells = re.findall(r"<td(?: style=\"[^\"]*\")?>(?:<b>|<code>)?(.*?)(?:</b>|</code>)?</td>", panel._repr_html_())
    assert cells[:14] == ["1", "completed", "&#34;yes&#34;", "0", "pass", "pass", "pass",
                          "2", "completed", "&#34;no&#34;", "0", "fail", "fail", "fail"]


def test_the_epochs_table_is_in_epoch_order_and_colours_only_the_verdicts(make_suite: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    """The epochs side by side are listed by epoch whatever order the run's rows come in (a
    resumed run records an epoch run again after later ones), each with its own verdicts; in the HTML only the
    verdict cells are coloured, not the tool-call count before them. By hand: the scripted system answers "yes" in
    epoch 1 (passes) and "no" in epochs 2 and 3 (fails), with no tool call."""
    folder = make_suite([{"id": "c1", "input": {"plan": [True, False, False], "calls": [0, 0, 0]},
                          "initial_state": {}, "expected": {"answer": "yes"}}],
                        evaluators=[{"type": "answer_matches"}], system="sysmod:Scripted", system_code=SCRIPTED,
                        epochs=3)
    run = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False)
    run.cases = run.cases.iloc[::-1].reset_index(drop=True)  # epochs 3, 2, 1
    run.verdicts = run.verdicts.iloc[::-1].reset_index(drop=True)
    panel = run.panel("c1")
    rows = panel.epochs.to_numpy().tolist()
    assert rows == [[1, "completed", "yes", 0, "pass"], [2, "completed", "no", 0, "fail"],
                    [3, "completed", "no", 0, "fail"]]
    cells = re.findall(r"<td( style=\"[^\"]*\")?>(?:<b>|<code>)?(.*?)(?:</b>|</code>)?</td>", panel._repr_html_())
    assert [(bool(style), text) for style, text in cells[:5]] == [
        (False, "1"), (False, "completed"), (False, "&#34;yes&#34;"), (False, "0"), (True, "pass")]


def test_a_verdict_line_without_a_reason_ends_at_its_criterion(make_suite: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    """Before, a passing criterion with no reason was printed ``PASS    answer_matches `` (a trailing space, which
    a copied line or a diff of two panels carries along). A line with a reason keeps it after one space."""
    folder = make_suite([{"id": "c1", "input": {"plan": [True, False], "calls": [0, 0]}, "initial_state": {},
                          "expected": {"answer": "done"}},
                         {"id": "c2", "input": {"plan": [True, False], "calls": [0, 0]}, "initial_state": {},
                          "expected": {"answer": "other"}}],
                        evaluators=[{"type": "answer_matches"}], system="sysmod:Desk", system_code=NAMED)
    run = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False)
    passed = [line for line in repr(run.panel("c1")).splitlines() if line.startswith("  PASS")]
    assert passed == ["  PASS    answer_matches"]
    failed = [line for line in repr(run.panel("c2")).splitlines() if line.startswith("  FAIL")]
    assert len(failed) == 1 and failed[0].startswith("  FAIL    answer_matches ") and failed[0] == failed[0].rstrip()
    assert "'done'" in failed[0] and "'other'" in failed[0]


NOTE = "Refund issued for order ord-1 under the 30-day return policy, clause 4.2("

NOTED = '''
class Desk:
    version = "noted-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return {"note": "Refund issued for order ord-1 under the 30-day return policy, clause 4.2(c)"}

    def run(self, input):
        return {"steps": [], "answer": "done", "status": "completed"}
'''


def test_a_bad_row_shows_its_two_values_where_they_differ(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Before, a note expected to end ``4.2(b)`` and left ending ``4.2(c)`` was shown as the same first 59
    characters on both sides of its BAD row: ``expected "Refund issued … return poli… actual "Refund issued …
    return poli…``."""
    folder = make_suite([{"id": "c1", "input": {"plan": [], "calls": []}, "initial_state": {},
                          "expected": {"state": {"note": NOTE + "b)"}}}],
                        evaluators=[{"type": "state_matches"}], system="sysmod:Desk", system_code=NOTED)
    panel = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1")
    bad = [line.strip() for line in repr(panel).splitlines() if line.strip().startswith("BAD")]
    assert len(bad) == 1
    expected, actual = bad[0].removeprefix("BAD state_matches: note expected ").split(" actual ")
    assert expected.endswith('4.2(b)"') and actual.endswith('4.2(c)"') and len(expected) == len(actual) == 60
