"""oloproof_nb._display.notebook: the progress bar of a run (the notebook face's other names are tested with
the layers they call)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._display.notebook import progress_bar


def test_the_progress_bar_shows_the_suite_name_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """The bar's label is the suite's name, and tqdm wrote it to the terminal as it was, so a name
    holding ``\\x1b[8m`` hid what the terminal showed after it. It is written as its escape, as every other line
    oloproof prints is."""
    update, close = progress_bar("refunds\x1b[8m\u202e")
    update(0, 3)
    update(2, 3)
    close()
    err = capsys.readouterr().err
    assert "refunds\\x1b[8m\\u202e:   0%" in err and "0/3" in err
    assert "\x1b[8m" not in err and "\u202e" not in err


def test_the_notebook_widget_never_shows_the_suite_name_as_html(monkeypatch: pytest.MonkeyPatch) -> None:
    """tqdm's widget bar put the label given to its constructor into an HTML widget unescaped for its first
    frame (the frame ``display`` sends to the notebook), and escaped it only from the next frame on: a suite
    named ``<img src=x onerror=…>`` ran its script once in the notebook. The real tqdm.notebook runs here on
    stand-in widgets that record every value the notebook would be sent."""
    import importlib.util
    import sys
    import types

    from oloproof_nb._display import notebook

    sent: list[str] = []

    class Widget:
        def __init__(self, **kwargs: object) -> None:
            self.layout = types.SimpleNamespace()
            self.style = types.SimpleNamespace()
            self.bar_style = ""
            self.children: list[Widget] = list(kwargs.pop("children", []))  # type: ignore[call-overload]
            self.__dict__.update(kwargs)

        def close(self) -> None:
            pass

    class HTML(Widget):
        def __setattr__(self, name: str, value: object) -> None:
            if name == "value":
                sent.append(str(value))
            super().__setattr__(name, value)

    fake = types.ModuleType("ipywidgets")
    fake.HTML, fake.FloatProgress, fake.HBox = HTML, Widget, Widget  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ipywidgets", fake)
    spec = importlib.util.find_spec("tqdm.notebook")
    assert spec is not None and spec.loader is not None
    widgets = importlib.util.module_from_spec(spec)  # tqdm's own module on the stand-ins, kept out of sys.modules
    spec.loader.exec_module(widgets)
    monkeypatch.setattr(widgets, "display", lambda *_: sent.append("<displayed>"))
    monkeypatch.setattr(notebook, "_bar_class", lambda: widgets.tqdm_notebook)
    update, close = notebook.progress_bar("refunds <img src=x onerror=alert(1)> & co")
    update(0, 3)
    update(2, 3)
    close()
    shown = sent[sent.index("<displayed>"):]  # from the first frame the notebook shows on
    labels = [value.replace("\u2007", " ") for value in shown if "refunds" in value]  # tqdm's figure spaces
    assert labels and all("&lt;img src=x onerror=alert(1)&gt; &amp;" in value for value in labels)
    assert not any("<img" in value for value in sent)


def test_the_run_and_gate_html_count_cases_as_the_report_does(make_suite: Any, tmp_path: Path) -> None:
    """Before, a one-case run's HTML said ``1 cases`` and its gate ``unclustered run, 1 source clusters``; a run
    of 24 cases in 3 epochs said ``72 cases``, where ``oloproof run`` and the report say ``24 cases, 72 case runs
    (3 epochs)``. Both reprs now take the report's words."""
    import oloproof_nb as op

    one = make_suite([{"id": "c1", "input": {"answer": "yes"}, "initial_state": {}, "expected": {"answer": "yes"}}],
                     evaluators=[{"type": "answer_matches"}])
    run = op.run(op.load_suite(one), out=tmp_path / "one", progress=False)
    assert "<p>1 case (completed: 1);" in run._repr_html_()
    assert "<p>unclustered run, 1 independent case, 95% intervals</p>" in op.gate(run)._repr_html_()

    three = make_suite([{"id": f"c{i}", "input": {"answer": "yes", "i": i}, "initial_state": {},
                         "expected": {"answer": "yes"}} for i in range(24)], evaluators=[{"type": "answer_matches"}],
                       epochs=3)
    epochs = op.run(op.load_suite(three), out=tmp_path / "three", progress=False)
    assert len(epochs.cases) == 72  # a hand count: 24 cases × 3 epochs
    assert "<p>24 cases, 72 case runs (3 epochs) (completed: 72);" in epochs._repr_html_()
    assert "<p>clustered run, 24 source clusters, 95% intervals</p>" in op.gate(epochs)._repr_html_()


def test_the_run_text_repr_counts_cases_as_its_html_does(make_suite: Any, tmp_path: Path) -> None:
    """The HTML of a run of 4 cases in 3 epochs said ``4 cases, 12 case runs (3 epochs)`` and the Baseline's repr
    ``cases=4, epochs=3``, while ``repr(run)`` said ``cases=12``; it now counts each case once and the epochs
    apart."""
    import oloproof_nb as op

    root = make_suite([{"id": f"c{i}", "input": {"answer": "yes", "i": i}, "initial_state": {},
                        "expected": {"answer": "yes"}} for i in range(4)], evaluators=[{"type": "answer_matches"}],
                      epochs=3)
    run = op.run(op.load_suite(root), out=tmp_path / "three", progress=False)
    assert len(run.cases) == 12  # a hand count: 4 cases × 3 epochs
    assert ", cases=4, epochs=3, status={'completed': 12}," in repr(run)
    assert "<p>4 cases, 12 case runs (3 epochs) (completed: 12);" in run._repr_html_()


def test_the_run_text_repr_of_a_pool_says_it_is_pooled_as_its_html_does(make_suite: Any, tmp_path: Path) -> None:
    """Before, two 1-epoch runs of 4 cases pooled (``op.load_runs``) read ``cases=4, epochs=2`` in
    ``print(pool)``, as if each case had run twice in one run, while the HTML of the same object says ``4 cases, 8
    case runs (2 runs pooled, 2 epochs in all)``. The text now says the runs were pooled too; a run of its own
    does not."""
    import oloproof_nb as op

    root = make_suite([{"id": f"c{i}", "input": {"answer": "yes", "i": i}, "initial_state": {},
                        "expected": {"answer": "yes"}} for i in range(4)], evaluators=[{"type": "answer_matches"}])
    a, b = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b"))
    pool = op.load_runs([a.directory, b.directory])
    assert len(pool.cases) == 8  # a hand count: 4 cases in each of 2 runs
    assert "<p>4 cases, 8 case runs (2 runs pooled, 2 epochs in all) (completed: 8);" in pool._repr_html_()
    assert ", cases=4, epochs=2 (2 runs pooled), status={'completed': 8}," in repr(pool)
    assert ", cases=4, status={'completed': 4}," in repr(a) and "pooled" not in repr(a)


#: Answers wrong on case c1's second try only (it is given its epoch).
SECOND_TRY = """
class SecondTry:
    version = "second-try-1"

    def run(self, input, epoch):
        wrong = input["id"] == "c1" and epoch == 2
        return {"steps": [], "answer": "no" if wrong else "yes", "status": "completed"}
"""


@pytest.mark.parametrize("failed", [2, 1])
def test_where_to_look_next_names_the_run_and_epoch_of_the_case_that_did_not_pass(make_suite: Any, tmp_path: Path,
                                                                                failed: int) -> None:
    """Before, a pooled run's view said ``e.g. run.panel('c1')``, which raises there (c1 is in both runs: pick
    one), and a run whose c1 failed its second try only pointed at the panel of its first try, which passed. By
    hand: c1 epoch ``failed`` is the one row not passed in each run; the call shown opens that very row. The epoch
    is named only when it is not the first, the panel's default."""
    import oloproof_nb as op

    root = make_suite([{"id": f"c{i}", "input": {"id": f"c{i}"}, "expected": {"answer": "yes"}} for i in range(3)],
                      evaluators=[{"type": "answer_matches"}], system="sysmod:SecondTry",
                      system_code=SECOND_TRY.replace("epoch == 2", f"epoch == {failed}"), epochs=2)
    a, b = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b"))
    pool = op.load_runs([a.directory, b.directory])
    epoch = ", epoch=2" if failed == 2 else ""
    for run, call in ((a, f"run.panel('c1'{epoch})"), (pool, f"run.panel('c1', run_id={a.run_id!r}{epoch})")):
        line = next(item for item in run._next_steps() if item.startswith("answer_matches: "))
        assert line == f"answer_matches: {len(run.runs)} not passed, e.g. {call}"
        panel = eval(call, {"run": run})  # noqa: S307 - the call the view shows, run as a user would
        assert (panel.case_id, panel.epoch) == ("c1", failed)
        assert panel.verdicts["verdict"].tolist() == ["fail"]


def test_the_text_bar_in_jupyter_is_one_display_updated_in_place(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Before, in Jupyter without ipywidgets (seen in a live kernel) the text bar wrote each frame to the kernel's
    stderr as a stream message of its own, and the notebook kept them all: a notebook saved (or run headless)
    showed ``stateful-agent: 0%| | 0/48`` under a run that had finished, then a stderr box of spaces left by the
    bar clearing itself. The frames now update one display output in place, which the cleared bar leaves empty;
    nothing goes to stderr. IPython's ``display`` is stood in for by a recorder of what the kernel would send."""
    import sys

    import IPython.display

    from oloproof_nb._display import notebook

    sent: list[tuple[str, str]] = []

    class Handle:
        def update(self, data: dict[str, str], raw: bool = False) -> None:
            assert raw
            sent.append(("update_display_data", data["text/plain"]))

    def display(data: dict[str, str], raw: bool = False, display_id: bool = False) -> Handle:
        assert raw and display_id
        sent.append(("display_data", data["text/plain"]))
        return Handle()

    monkeypatch.setattr(notebook, "in_notebook", lambda: True)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # not installed: importing it raises ImportError
    monkeypatch.setattr(IPython.display, "display", display)
    update, close = notebook.progress_bar("refunds")
    update(0, 3)
    update(3, 3)
    close()
    assert capsys.readouterr().err == ""
    kinds = [kind for kind, _ in sent]
    assert kinds[0] == "display_data" and set(kinds[1:]) == {"update_display_data"}  # one output, updated
    assert sent[0][1].startswith("refunds:   0%") and "0/3" in sent[0][1]
    assert sent[-1] == ("update_display_data", "")  # the cleared bar: an empty output, no frame left behind
    assert all("\r" not in text for _, text in sent)


@pytest.mark.slow  # starts a kernel, as the notebook tests do
def test_a_run_in_a_live_kernel_leaves_no_progress_frames_in_the_saved_notebook(tmp_path: Path) -> None:
    """The same in a real kernel (nbclient, as ``jupyter execute`` runs a notebook): the cell of ``op.run`` with its
    default progress kept ``\\r<suite>:   0%|          | 0/6`` and the spaces that cleared it as stderr outputs."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import oloproof_nb as op\nfrom oloproof_nb.examples import init_example\n"
                                          "suite = op.load_suite(init_example('false-success', 'suite'))"),
                nbformat.v4.new_code_cell("run = op.run(suite)"),
                nbformat.v4.new_code_cell("print(run.n_cases)")]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[1].outputs
    assert not [o for o in outputs if o.output_type in ("stream", "error")], outputs
    assert [o.data["text/plain"] for o in outputs] == [""]  # the bar's one display, left empty
    assert nb.cells[2].outputs[0].text == "6\n"


def test_the_display_line_shows_what_a_terminal_would_and_sends_only_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_DisplayLine`` as a file: text written in pieces joins up to the next carriage return
    (what a terminal shows is the text after the last ``\\r``), the spaces a bar pads a shorter frame with are not
    sent, the same line twice is sent once, and ``write`` returns the number of characters written (io's
    contract). tqdm draws the full bar in Unicode blocks (U+2588) into it, as in a terminal, not in ``#``."""
    import IPython.display

    from oloproof_nb._display import notebook

    sent: list[str] = []

    class Handle:
        def update(self, data: dict[str, str], raw: bool = False) -> None:
            sent.append(data["text/plain"])

    def display(data: dict[str, str], raw: bool = False, display_id: bool = False) -> Handle:
        sent.append(data["text/plain"])
        return Handle()

    monkeypatch.setattr(IPython.display, "display", display)
    line = notebook._DisplayLine()
    assert line.write("\r1/3") == 4
    assert line.write(" done") == 5
    line.write("\r1/3 done   ")  # the same frame, padded: nothing sent
    line.write("\r2/3 ")
    line.write("\r")
    assert sent == ["1/3", "1/3 done", "2/3", ""]

    from tqdm.std import tqdm

    sent.clear()
    bar = tqdm(total=2, file=notebook._DisplayLine(), ncols=8, bar_format="{bar}", mininterval=0)
    bar.update(2)
    bar.close()
    assert sent[-1] == "\u2588" * 8, sent  # 8 columns of full blocks; an ASCII bar would be ########


#: What a gate of a run killed as it started c4 and then resumed says under its verdict, counted by hand: one end,
#: no parent process to see how, the one case run in flight (c4, epoch 1) run again.
RESUMED = ("resumed after 1 abrupt end of the run's process (not seen by oloproof run); the 1 case run in flight was "
           "run again: case 'c4'; isolation: process judges a crash as the case's error")


@pytest.fixture(scope="module")
def resumed_and_clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """A run SIGKILLed as it started c4 and resumed in Python, and an uninterrupted run of the same suite."""
    from _reliability_systems import EVALUATORS, killed_then_resumed, standard_cases, write_suite

    import oloproof_nb as op

    base = tmp_path_factory.mktemp("resumed")
    # answer_matches 4 of 6 (c3 raises, c5 expects another answer): its interval's low end clears 0.2, a PASS
    root = write_suite(base / "suite", standard_cases(6), evaluators=EVALUATORS,
                       release={"criteria": {"answer_matches": 0.2}})
    return killed_then_resumed(root, base / "resumed", "c4"), op.run(root, out=base / "clean", progress=False)


def _resumed_lines(page: str) -> list[str]:
    """The text of each line a gate or run view shows of the abrupt ends of the run's process."""
    return [html.unescape(p) for p in re.findall(r'<p class="oloproof-resumed">(.*?)</p>', page, re.S)]


def test_a_gate_of_a_run_resumed_after_a_kill_says_its_case_run_in_flight_ran_again(
        resumed_and_clean: tuple[Any, Any]) -> None:
    """Before, ``oloproof gate`` printed the line under its table, but ``op.gate(run)`` in a notebook showed a
    PASS of a run whose case run in flight had a second chance without a word, in its HTML and its text."""
    import oloproof_nb as op

    resumed, clean = resumed_and_clean
    g = op.gate(resumed)
    assert g.verdict == "PASS"
    assert _resumed_lines(g._repr_html_()) == [RESUMED]
    assert f"\n  {RESUMED}\n" in repr(g)
    assert op.gate(resumed.directory)._repr_html_() == g._repr_html_()  # gated by its folder, the same
    plain = op.gate(clean)
    assert plain.verdict == "PASS"
    assert _resumed_lines(plain._repr_html_()) == [] and "abrupt" not in plain._repr_html_()
    assert "abrupt" not in repr(plain) and all(line.strip() for line in repr(plain).splitlines())  # no blank line


def test_the_view_of_a_run_resumed_after_a_kill_says_its_case_run_in_flight_ran_again(
        resumed_and_clean: tuple[Any, Any]) -> None:
    import oloproof_nb as op

    resumed, clean = resumed_and_clean
    assert _resumed_lines(resumed._repr_html_()) == [RESUMED]
    assert _resumed_lines(op.load_run(resumed.directory)._repr_html_()) == [RESUMED]
    for pooled in (op.load_runs([clean.directory, resumed.directory]),  # a pool holds the end of its resumed run,
                   op.load_runs([resumed.directory, clean.directory])):  # whichever place that run has in it
        assert _resumed_lines(pooled._repr_html_()) == [RESUMED]
        assert _resumed_lines(op.gate(pooled)._repr_html_()) == [RESUMED]
    assert "abrupt" not in clean._repr_html_() and _resumed_lines(clean._repr_html_()) == []  # not an empty line


def test_the_text_of_a_run_resumed_after_a_kill_says_its_case_run_in_flight_ran_again(
        resumed_and_clean: tuple[Any, Any]) -> None:
    """Before, the run's HTML, its gate and ``oloproof gate`` said the case run in flight ran again, but
    ``print(run)`` (and a notebook's plain-text output) said nothing of it. Its text now gives the same line under
    the run's own; a run never stopped, and a pool without such a run, show one line as before."""
    import oloproof_nb as op

    resumed, clean = resumed_and_clean
    assert repr(resumed).splitlines()[1:] == [f"  {RESUMED}"]
    assert repr(resumed).splitlines()[0].startswith(f"Run({resumed.run_id!r}, ")
    assert repr(op.load_runs([clean.directory, resumed.directory])).splitlines()[1:] == [f"  {RESUMED}"]
    assert len(repr(clean).splitlines()) == 1 and "abrupt" not in repr(clean)


def test_a_gate_of_a_pooled_run_says_which_runs_it_pooled(resumed_and_clean: tuple[Any, Any]) -> None:
    """Before, ``print(op.gate(pool))`` of two 6-case runs showed ``n=12`` and no word that two runs were
    pooled, so it read as 12 cases of one run. The text and the HTML now name the runs, in the pool's order; a
    gate of one run says nothing of pooling."""
    import oloproof_nb as op

    resumed, clean = resumed_and_clean
    pooled = op.gate(op.load_runs([clean.directory, resumed.directory]))
    note = (f"pooled: 2 runs ({clean.run_id}, {resumed.run_id}); n counts a case once in each run that holds it, "
            "and its rows in all of them are one cluster")
    assert repr(pooled).splitlines()[1] == f"  {note}"  # right under the verdict
    assert set(pooled.table["n"]) == {12} and set(pooled.table["n_clusters"]) == {6}  # 6 cases twice, by hand
    found = re.findall(r'<p class="oloproof-pooled">(.*?)</p>', pooled._repr_html_(), re.S)
    assert [html.unescape(p) for p in found] == [note]
    for one in (op.gate(clean), op.gate(resumed)):
        assert "pooled" not in repr(one) and 'class="oloproof-pooled"' not in one._repr_html_()


def test_a_second_run_of_a_class_typed_in_a_cell_says_why_nothing_came_from_the_cache(make_suite: Any,
                                                                                      tmp_path: Path) -> None:
    """A class defined in no file has no code fingerprint and is never cached (README section 3), so
    each run replays live; the run's summary (its repr and HTML) now says why, as the run command does for a
    system without ``version`` (tests/cli/test_commands_frictions.py)."""
    from _booking_desk import booking_desk

    import oloproof_nb as op

    cases = [{"id": f"c{n}", "input": {"slot": f"s{n}"}, "initial_state": {"bookings": {}},
              "expected": {"answer": "booked", "state": {"bookings": {f"s{n}": "ann"}}}} for n in range(2)]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"},
                                           {"type": "fault_recovery", "tool": "book", "fault": "error"}])
    cell: dict[str, Any] = {"__name__": "cell_module_without_a_file"}  # as tests/_run/test_replay_cache.py types one
    exec(compile(booking_desk(), "<ipython-input-1-0f3a>", "exec"), cell)  # noqa: S102 - a notebook cell, as typed
    suite = op.load_suite(folder)
    runs = [op.run(suite, system=cell["Desk"], out=tmp_path / out, progress=False) for out in ("one", "two")]
    note = "none from the cache: the system's code has no fingerprint; define fingerprint()"
    assert runs[1].replay_summary() == f"4 live, 0 from the cache; {note}"
    assert f"replay runs: 4 live, 0 from the cache; {note})" in repr(runs[1])
    assert note in html.unescape(runs[1]._repr_html_())


def test_the_text_of_a_run_shows_its_abrupt_end_as_written_not_as_terminal_codes(make_suite: Any,
                                                                                 tmp_path: Path) -> None:
    """``print(run)`` gives the abrupt-end line of its manifest; a manifest written
    by hand (or by another tool) may hold a terminal's control codes there, which the line shows as written (as the
    gate's text and ``oloproof gate`` do), never sends to the terminal."""
    import json

    import oloproof_nb as op

    root = make_suite([{"id": "c0", "input": {"answer": "yes"}, "initial_state": {}, "expected": {"answer": "yes"}}],
                      evaluators=[{"type": "answer_matches"}])
    run = op.run(op.load_suite(root), out=tmp_path / "r", progress=False)
    path = Path(run.directory) / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**manifest, "abrupt_ends": [{"how": "killed\x1b[2J", "rerun": [["c0", 1]]}]}),
                    encoding="utf-8")
    assert repr(op.load_run(run.directory)).splitlines()[1:] == [
        "  resumed after 1 abrupt end of the run's process (killed\\x1b[2J); the 1 case run in flight was run again: "
        "case 'c0'; isolation: process judges a crash as the case's error"]


def test_the_gate_and_compare_text_reprs_end_no_row_with_a_space(make_suite: Any, tmp_path: Path) -> None:
    """A REPORT_ONLY row (no reason) ended ``n=4 `` with a space, in the gate's repr and compare's: a trailing space a
    notebook's diff and a text comparison trip over. Rows with a reason still end with it."""
    import oloproof_nb as op

    root = make_suite([{"id": f"c{i}", "input": {"answer": "yes", "i": i}, "initial_state": {},
                        "expected": {"answer": "yes"}} for i in range(4)],
                      evaluators=[{"type": "answer_matches"}, {"type": "answer_matches", "criterion": "kept"}],
                      release={"criteria": {"answer_matches": 0.5}})
    runs = [op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b")]
    for text in (repr(op.gate(runs[0])), repr(op.compare(*runs))):
        rows = [line for line in text.splitlines() if " kept" in line or " answer_matches" in line]
        assert len(rows) == 2, text  # each criterion's row, kept's REPORT_ONLY
        assert [line for line in text.splitlines() if line != line.rstrip()] == []
        gated = next(line for line in rows if "answer_matches" in line)
        assert re.search(r" n=4 (pass->fail=0 fail->pass=0 )?(interval_includes_threshold|too_few_clusters)", gated)
    assert next(line for line in repr(op.gate(runs[0])).splitlines() if " kept" in line).endswith(" n=4")


def test_the_html_of_a_pool_holding_an_unfinished_run_names_that_run(make_suite: Any, tmp_path: Path) -> None:
    """Before, a finished run pooled with one stopped after 2 of its 4 cases showed ``not finished (resume it)``,
    naming none of the two, where its gate names the one to resume; it now names it as the gate does.
    A run of its own keeps its words."""
    import oloproof_nb as op

    root = make_suite([{"id": f"c{i}", "input": {"answer": "yes", "i": i}, "initial_state": {},
                        "expected": {"answer": "yes"}} for i in range(4)], evaluators=[{"type": "answer_matches"}])
    done = op.run(op.load_suite(root), out=tmp_path / "done", progress=False)

    def stop_after_two(finished: int, total: int) -> None:
        if finished == 2:
            raise KeyboardInterrupt  # the user's Ctrl-C: an unfinished run of 2 records
    with pytest.raises(KeyboardInterrupt):
        op.run(op.load_suite(root), out=tmp_path / "stopped", progress=stop_after_two)
    stopped = op.load_run(tmp_path / "stopped")
    pool = op.load_runs([done.directory, stopped.directory])
    who = f"run {html.escape(stopped.run_id)} of the 2 pooled"
    assert f"<b>not finished</b>: {who} did not finish (resume it)." in pool._repr_html_()
    assert op.gate(pool).reason.startswith(f"unfinished: run {stopped.run_id} of the 2 pooled did not finish")
    assert "<b>not finished</b> (resume it)." in stopped._repr_html_()
