"""`oloproof report`: a standalone HTML file (tables + embedded PNGs), or Markdown with files beside it."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402
from _frame_checks import EXACT_CSV, rename_run  # noqa: E402
from _hostile_files import Page, render_markdown  # noqa: E402

import oloproof_nb as op  # noqa: E402
from oloproof_nb._display.report import _an_earlier_report, write_report  # noqa: E402
from oloproof_nb._display.terminal import exit_line  # noqa: E402
from oloproof_nb.cli import main  # noqa: E402
from oloproof_nb.errors import terminal_text  # noqa: E402
from oloproof_nb.examples import init_example  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    root = init_example("stateful-agent", tmp_path_factory.mktemp("report") / "suite")
    return op.run(op.load_suite(root), out=root.parent / "run", progress=False)


def test_a_report_draws_on_the_oldest_matplotlib_the_dependency_allows(example_run: op.Run, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # matplotlib 3.7–3.9 (3.8.4–3.9 inside today's matplotlib>=3.8.4) has no get_figure(root=...): every report was
    # an internal error
    import sys

    from matplotlib.artist import Artist

    current = Artist.get_figure

    def before_3_10(self: Artist, **keywords: Any) -> Any:  # as 3.9 answers oloproof; matplotlib's own calls pass
        if keywords and sys._getframe(1).f_globals.get("__name__", "").startswith("oloproof_nb"):
            raise TypeError(f"Artist.get_figure() got an unexpected keyword argument {next(iter(keywords))!r}")
        return current(self, **keywords)

    monkeypatch.setattr(Artist, "get_figure", before_3_10)
    text = write_report(example_run, tmp_path / "r.html").read_text(encoding="utf-8")
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert len(images) == 2 + len(example_run.config.slices)
    assert all(base64.b64decode(data).startswith(PNG) for data in images)


def test_html_report_is_standalone_with_tables_and_images(example_run: op.Run, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    # the report is written, and the command exits on its gate as every command does: the example BLOCKs (it exited
    # 0 here, so a CI step that wrote the report passed a release the report said BLOCK)
    assert main(["report", str(example_run.directory), "--out", str(out)]) == 1
    assert op.gate(example_run).verdict == "BLOCK"
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"wrote {out}" and lines[-1] == exit_line(op.gate(example_run)) and len(lines) == 2
    assert lines[-1].startswith("gate: BLOCK — exit 1: ")
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in text
    # standalone: every src is a data: URI; no links, scripts or stylesheets from elsewhere
    assert re.findall(r'src="([^"]*)"', text) and all(s.startswith("data:image/png;base64,")
                                                      for s in re.findall(r'src="([^"]*)"', text))
    assert "href=" not in text and "<link" not in text and "<script" not in text and "url(" not in text
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    spec = example_run.config.slices
    assert len(images) == 2 + len(spec)  # gate, validity, one per declared slice
    assert all(base64.b64decode(data).startswith(PNG) for data in images)
    # the tables: every criterion in the gate table, the verdict, validity, replays, each slice
    for criterion in example_run.criteria:
        assert f"<td>{criterion}</td>" in text
    assert "Gate: <span" in text and ">BLOCK<" in text
    for heading in ("Release gate", "Transform validity", "Fault replays", "Slices"):
        assert f">{heading}</h2>" in text
    for s in spec:
        assert f"<h3><code>{s}</code></h3>" in text
    assert "no trend is fitted" in text


def test_markdown_report_writes_plots_and_raw_tables_beside_it(example_run: op.Run, tmp_path: Path) -> None:
    out = write_report(example_run, tmp_path / "out" / "report.md")
    text = out.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)]+)\)", text)
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(images) == 2 + len(example_run.config.slices)
    for link in links:
        assert not link.startswith(("http", "/")) and (out.parent / link).is_file(), link
    assert all((out.parent / i).read_bytes().startswith(PNG) for i in images)
    assert (out.parent / "report_files" / "gate.csv").is_file()
    assert "| criterion" in text and "## Release gate" in text
    # the raw CSV beside it keeps unrounded numbers; the Markdown table shows three decimals
    import pandas as pd

    raw = pd.read_csv(out.parent / "report_files" / "gate.csv", **EXACT_CSV)
    assert raw["ci_low"].tolist() == op.gate(example_run).table["ci_low"].tolist()


def test_both_reports_say_intervals_are_rounded_outward(example_run: op.Run, tmp_path: Path,
                                                       plots_not_encoded: None) -> None:
    # a reader checking a report against the notebook's raw table saw 0.470 for a lower end of 0.4708 (nearest:
    # 0.471) under a footer that said only "rounded to three decimals": the footer says which way the ends go
    import math

    table = op.slice_table(example_run, "tool_calls:1,2").dropna(subset=["ci_low", "ci_high"])
    ends = [(math.floor(r.ci_low * 1000) / 1000, math.ceil(r.ci_high * 1000) / 1000) for r in table.itertuples()]
    differ = [i for i, (r, e) in enumerate(zip(table.itertuples(), ends, strict=True))  # by hand: outward ≠ nearest
              if (round(r.ci_low, 3), round(r.ci_high, 3)) != e]
    assert differ, "no cell of the example's slice table rounds differently to the nearest"
    cell, (low, high) = table.iloc[differ[0]], ends[differ[0]]
    shown = f"[{low:.3f}, {high:.3f}] n={cell['support']}"
    md = write_report(example_run, tmp_path / "r.md").read_text(encoding="utf-8")
    html = write_report(example_run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert shown.replace("[", "\\[").replace("]", "\\]") in md and shown in html
    assert "an interval's ends outward (the low end down, the high end up" in md
    assert "an interval&#39;s ends outward (the low end down, the high end up" in html


def test_report_without_transforms_replays_or_slices(make_suite: Any, tmp_path: Path) -> None:
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    text = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert ">Release gate</h2>" in text and ">Transform validity</h2>" not in text
    assert ">Fault replays</h2>" not in text and "No slices declared" in text
    assert text.count("data:image/png;base64,") == 1
    assert "ended in error" not in text  # every case completed: no such section
    assert "is reduced over each case" not in text  # no pass^k criterion: no note on one
    assert "(unclustered run, 4 independent cases, 95% intervals)" in text  # 4 cases, one each


@pytest.mark.parametrize("name", ["triage #", "triage ##  ", "pass # 2 #", "#", "triage\t#"])
def test_a_suite_name_ending_in_hashes_keeps_them_in_the_markdown_title(make_suite: Any, tmp_path: Path, name: str,
                                                                         plots_not_encoded: None) -> None:
    """A Markdown heading's line that ends in ``#`` after a space ends in its closing sequence, which CommonMark
    drops (spec 4.2): the report of a suite named ``triage #`` was titled ``oloproof report — triage``. Read here
    by rendering the report with markdown-it (CommonMark)."""
    from markdown_it import MarkdownIt

    cases = [{"id": "c0", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], name=name)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    md = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").parse(md)
    title = next(tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h1")
    assert MarkdownIt("commonmark").renderInline(title) == "oloproof report — " + name.rstrip(" ")
    assert _an_earlier_report(tmp_path / "r.md")  # still read as a report this module wrote


def test_a_suite_with_slices_and_no_criterion_gets_its_report(make_suite: Any, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              plots_not_encoded: None) -> None:
    """Before, a suite with `evaluators: []` and `slices` declared stopped `oloproof report` on `oloproof:
    internal error: ValueError: list.remove(x)` (exit 2, no report): its slice tables have no row, so no `n/a` bin
    to drop. The report is written, says why the slices show nothing, and exits on its gate (no_criteria: 1)."""
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(2)]
    root = make_suite(cases, evaluators=[], slices=["tool_calls:1", "trajectory_length:2,3"])
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    sentence = ("The suite has no criterion, so the slices it declares (tool_calls:1, trajectory_length:2,3) have "
                "no pass rate to show.")
    for name in ("r.html", "r.md"):
        assert main(["report", str(run.directory), "--out", str(tmp_path / name)]) == 1
        out, err = capsys.readouterr()
        assert out.splitlines()[-1] == "gate: BLOCK — exit 1: no_criteria: nothing was gated" and err == ""
        assert sentence in (tmp_path / name).read_text(encoding="utf-8")


def test_a_slice_written_with_spaces_is_named_as_its_table_and_plot_name_it(make_suite: Any, tmp_path: Path) -> None:
    """Before, `slices: ["tool_calls: 1, 2"]` was headed as written, while its table and plot say
    `tool_calls:1,2`, and its Markdown report files were named `slice_tool_calls_ 1- 2.csv` (spaces in a link)."""
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(2)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], slices=["tool_calls: 1, 2"])
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    md = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "### `tool_calls:1,2`" in md and "tool_calls: 1, 2" not in md
    assert sorted(p.name for p in (tmp_path / "r_files").iterdir() if p.name.startswith("slice")) == [
        "slice_tool_calls_1-2.csv", "slice_tool_calls_1-2.png"]
    assert "](r_files/slice_tool_calls_1-2.png)" in md
    html = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "tool_calls:1,2" in html and "tool_calls: 1, 2" not in html


RAISING = """
class Raising:
    version = "raising-1"

    def run(self, input):
        if input["answer"] == "boom":
            raise KeyError("member")
        if input["answer"].startswith("bang"):
            raise ValueError(input["answer"])
        return {"steps": [], "answer": input["answer"], "status": "completed"}
"""


def test_a_report_lists_the_case_runs_that_ended_in_error_by_message(make_suite: Any, tmp_path: Path,
                                                                     plots_not_encoded: None) -> None:
    """Before, a report of a run whose system raised said `25 cases (error: 25)` and named neither an
    error nor a case; the gate table showed only missing counts."""
    answers = ["boom", "ok", "boom", "ok", "boom"]  # by hand: 3 of 5 raise the same KeyError, c0 first
    cases = [{"id": f"c{i}", "input": {"answer": a, "n": i}, "expected": {"answer": "ok"}}
             for i, a in enumerate(answers)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Raising", system_code=RAISING)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    md = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "## Case runs that ended in error" in md
    assert "3 of 5 case runs ended in error or by timeout" in md
    row = next(line for line in md.splitlines() if line.startswith("| KeyError"))
    assert [c.strip() for c in row.strip("|").split("|")] == ["KeyError: 'member'", "error", "3", "c0"]
    raw = (tmp_path / "r_files" / "errors.csv").read_text(encoding="utf-8")
    assert raw.splitlines()[1:] == [f"c{i},1,error,KeyError: 'member'" for i in (0, 2, 4)]  # each case run

    # the commonest message first: 2 case runs raise ValueError after 1 KeyError
    cases = [{"id": f"c{i}", "input": {"answer": a, "n": i}, "expected": {"answer": "ok"}}
             for i, a in enumerate(["boom", "bang", "bang"])]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Raising", system_code=RAISING)
    md = write_report(op.run(op.load_suite(root), out=tmp_path / "run2", progress=False), tmp_path / "r2.md")
    rows = [line.split("|")[1].strip() for line in md.read_text(encoding="utf-8").splitlines()
            if line.startswith(("| KeyError", "| ValueError"))]
    assert rows == ["ValueError: bang", "KeyError: 'member'"]
    # 20 messages are all shown: the table is cut after the 20 commonest
    cases = [{"id": f"c{i}", "input": {"answer": f"bang{i:02d}", "n": i}, "expected": {"answer": "ok"}}
             for i in range(20)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Raising", system_code=RAISING)
    md = write_report(op.run(op.load_suite(root), out=tmp_path / "run3", progress=False), tmp_path / "r3.md")
    text = md.read_text(encoding="utf-8")
    assert "20 of 20 case runs ended in error" in text and "commonest" not in text
    assert sum(line.startswith("| ValueError: bang") for line in text.splitlines()) == 20


def test_report_errors_are_one_line_exit_2(example_run: op.Run, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str], plots_not_encoded: None) -> None:
    assert main(["report", str(example_run.directory), "--out", str(tmp_path / "r.pdf")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".html or .md" in err
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.pdf").exists()


@pytest.mark.parametrize("where", ["folder", "files folder"])
def test_a_file_where_the_report_needs_a_folder_says_which(example_run: op.Run, tmp_path: Path, where: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Before, ``--out f/r.html`` with f a file, or ``--out r.md`` with r_files a file, said only
    ``f: File exists``."""
    if where == "folder":
        (tmp_path / "f").write_text("mine", encoding="utf-8")
        out, blocking, role = tmp_path / "f" / "r.html", tmp_path / "f", "the folder of the report r.html"
    else:
        (tmp_path / "r_files").write_text("mine", encoding="utf-8")
        out, blocking, role = tmp_path / "r.md", tmp_path / "r_files", "where the report r.md keeps its plots"
    assert main(["report", str(example_run.directory), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"oloproof: error: {blocking}: is a file, not a folder ({role}")
    assert err.endswith("; move it or choose another --out\n") and err.count("\n") == 1
    assert blocking.read_text(encoding="utf-8") == "mine" and not out.exists()


def test_a_markdown_report_named_in_bytes_that_are_not_utf8_links_its_files(example_run: op.Run,
                                                                            tmp_path: Path) -> None:
    """Before, ``--out r\\xff.md`` (a Latin-1 name, read as ``r\\udcff.md``) was an internal
    error (UnicodeEncodeError in the link's percent-encoding) after its tables and plots were written. The links
    now name the files by their bytes (``r%FF_files/gate.csv``): each finds its file, and the page is UTF-8."""
    import os
    from urllib.parse import unquote_to_bytes

    out = tmp_path / os.fsdecode(b"r\xff.md")
    try:
        out.write_bytes(b"")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system keeps only UTF-8 names")
    out.unlink()
    assert main(["report", str(example_run.directory), "--out", str(out)]) == 1
    text = out.read_bytes().decode("utf-8")  # strict: valid UTF-8
    targets = [m.group(1) for m in re.finditer(r"\]\(([^)\s]+)\)", text)]
    assert targets and all(t.startswith("r%FF_files/") for t in targets), targets
    for target in targets:
        assert (tmp_path / os.fsdecode(unquote_to_bytes(target))).is_file(), target


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(CHROMIUM is None, reason="no headless chromium to render the report")
def test_html_report_renders_in_a_browser(example_run: op.Run, tmp_path: Path) -> None:
    from PIL import Image

    out = write_report(example_run, tmp_path / "report.html")
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1200,3000", out.as_uri()],
                   capture_output=True, timeout=120, check=False)
    assert shot.is_file()
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 3000)
    # something was drawn: many colours (text, tables, plots), including the gate's red
    colours = image.getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 200
    assert any(abs(r - 0xCF) < 24 and abs(g - 0x22) < 24 and abs(b - 0x2E) < 24 for _, (r, g, b) in colours)


# -- a hostile run: values from the agent and the suite that try to become markup ---------------------------------

HOSTILE_SYSTEM = '''
import copy

SCRIPT = "<script>alert('tool')</script>"


class Hostile:
    version = "v`1``<script>alert('version')</script>\\r\\n| x"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        self.state["note"] = input["answer"]
        steps = [{"kind": "tool_call", "tool": '<img src=x onerror="alert(1)">', "args": {"a": SCRIPT},
                  "result": {"ok": SCRIPT}},
                 {"kind": "message", "role": "assistant", "content": input["answer"]}]
        return {"steps": steps, "answer": input["answer"], "status": "completed"}
'''
HOSTILE_CRITERION = "<script>alert('criterion')</script>|`x`\r\n*y*"
HOSTILE_ANSWERS = ["<script>alert('answer')</script>", '<img src=x onerror="alert(2)">',
                   "![x](https://evil.example/p.png)", "[approve](https://evil.example/)", "ok\r\n| forged | row |"]


pytestmark_glyph = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")  # a CR drawn in a plot label


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    import yaml

    root = tmp_path_factory.mktemp("hostile") / "suite"
    root.mkdir()
    (root / "sysmod.py").write_text(HOSTILE_SYSTEM, encoding="utf-8")
    cases = [{"id": f'<img src=x onerror="alert({i})">|{i}\r', "input": {"answer": answer},
              "initial_state": {"note": ""}, "expected": {"answer": "ok", "state": {"note": "ok"}}}
             for i, answer in enumerate(HOSTILE_ANSWERS)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = {"name": "suite <script>alert('name')</script>", "system": "sysmod:Hostile",
              "evaluators": [{"type": "answer_matches", "criterion": HOSTILE_CRITERION},
                             {"type": "state_matches", "mode": "subset"}],
              "slices": ["tool_calls:1"]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump({"criteria": {HOSTILE_CRITERION: 0.5}}), encoding="utf-8")
    return op.run(op.load_suite(root), out=root.parent / "run", progress=False)


def _no_active_markup(page: Page, allowed_images: int = 0) -> None:
    """No script, frame, link or handler; images only the report's own plots (relative or data: URIs)."""
    active = page.active()
    images = [attrs for tag, attrs in active if tag == "img"]
    assert len(images) == allowed_images, images
    assert all(not str(a["src"]).startswith(("http", "//")) and not any(k.startswith("on") for k in a)
               for a in images)
    links = [attrs for tag, attrs in active if tag == "a"]
    assert all(not str(a["href"]).startswith(("http", "//", "javascript:")) for a in links), links
    assert [tag for tag, _ in active if tag not in ("img", "a", "style")] == []


@pytestmark_glyph
def test_markdown_report_shows_hostile_values_as_text(hostile_run: op.Run, tmp_path: Path) -> None:
    """Before: an answer or case id like ![x](https://…) or [approve](…) became an image or a link in report.md."""
    out = write_report(hostile_run, tmp_path / "report.md")
    text = out.read_text(encoding="utf-8")
    page = render_markdown(text)
    _no_active_markup(page, allowed_images=2)  # the gate plot and the one slice plot
    assert [a["href"] for a in page.tags("a")] == ["report_files/gate.csv", "report_files/failing_1.csv",
                                                   "report_files/failing_2.csv", "report_files/slice_tool_calls_1.csv"]
    shown = page.text
    assert "suite <script>alert('name')</script>" in shown
    # the version's backticks did not end its code span: the code element holds the whole version
    assert "system version v`1``<script>alert('version')</script> | x." in shown
    gate_rows = page.rows[: 1 + len(hostile_run.criteria)]
    assert gate_rows[1][0] == HOSTILE_CRITERION.replace("\r\n", " ")  # one row, the whole name, as written
    assert all(len(row) == len(gate_rows[0]) for row in page.rows[: len(gate_rows)])


@pytestmark_glyph
def test_markdown_report_lines_do_not_break_on_a_carriage_return(hostile_run: op.Run, tmp_path: Path,
                                                                 plots_not_encoded: None) -> None:
    text = write_report(hostile_run, tmp_path / "report.md").read_text(encoding="utf-8")
    assert "\r" not in text
    table = [line for line in text.split("\n") if line.startswith("| ")]
    assert all(line.endswith("|") for line in table)


@pytestmark_glyph
def test_html_report_shows_hostile_values_as_text(hostile_run: op.Run, tmp_path: Path) -> None:
    text = write_report(hostile_run, tmp_path / "report.html").read_text(encoding="utf-8")
    page = Page(text)
    _no_active_markup(page, allowed_images=2)
    assert all(str(a["src"]).startswith("data:image/png;base64,") for a in page.tags("img"))
    assert "suite <script>alert('name')</script>" in page.text
    assert "<script>alert('criterion')</script>|`x`\\r\\n*y*" in page.text  # the line break shown as its escape
    assert "system version v`1``<script>alert('version')</script>\\r\\n| x." in page.text  # one code element
    assert [c for c in re.findall(r"<code>(.*?)</code>", text, re.S) if "version" in c] == [
        "v`1``&lt;script&gt;alert(&#39;version&#39;)&lt;/script&gt;"
        + "".join(f"<span class=oloproof-escape style=color:#8250df>{e}</span>" for e in ("\\r", "\\n")) + "| x"]


def test_reprs_and_the_case_panel_escape_hostile_values(hostile_run: op.Run) -> None:
    gate = op.gate(hostile_run)
    for html in (hostile_run._repr_html_(), gate._repr_html_()):
        page = Page(html)
        assert page.active() == []
        assert "<script>alert('name')</script>" in page.text or HOSTILE_CRITERION.split("|")[0] in page.text
    for case_id, answer in zip(hostile_run.cases["case_id"], HOSTILE_ANSWERS, strict=True):
        page = Page(hostile_run.panel(case_id)._repr_html_())
        assert page.active() == []
        assert terminal_text(case_id) in page.text  # the carriage return shown as its escape
        assert '<img src=x onerror="alert(1)">' in page.text  # the tool name, as text
        assert json.dumps(answer) in page.text  # the panel shows values as JSON


def test_the_terminal_gate_table_escapes_control_characters(hostile_run: op.Run,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a carriage return in a criterion name reached the terminal (it can overwrite the printed line)."""
    code = main(["gate", str(hostile_run.directory)])
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert "\r" not in out and "\x1b" not in out
    assert "\\r\\n*y*" in out  # written as escapes, on the criterion's own row
    assert out.splitlines()[-1].startswith(("gate: PASS — exit 0", "gate: BLOCK — exit 1"))


FINDING_SYSTEM = '''
import copy
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "1"

    def __init__(self):
        super().__init__()
        self.state = {}

    def reset(self, state):
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return copy.deepcopy(self.state)

    def act(self, input, rec):
        rec.tool('<img src=x onerror="alert(1)">', lambda **k: {"ok": True}, x=1)
        rec.tool("[approve](https://evil.example/)", lambda **k: {"ok": True}, x=1)
        return "ok"
'''


@pytestmark_glyph
def test_markdown_report_shows_findings_as_text(tmp_path: Path) -> None:
    """A finding quotes what the agent did (the tools it called) and the config (a criterion's name). The
    prose lines of report.md were written raw: an <img onerror>, a link to evil.example and a <script> ran
    in a renderer. Now they are text, as in the tables and the HTML report."""
    import yaml

    root = tmp_path / "suite"
    root.mkdir()
    (root / "sysmod.py").write_text(FINDING_SYSTEM, encoding="utf-8")
    cases = [{"id": f"c{i}", "input": {"m": "x", "n": i}, "initial_state": {"a": 1}, "expected": {"answer": "ok"}}
             for i in range(3)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    crit = "<script>alert('crit')</script>"
    config = {"name": "inj", "system": "sysmod:Desk",
              "evaluators": [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "issue_refund",
                                                          "fault": "error"},
                             {"type": "state_unchanged", "paths": ["nope"], "criterion": crit}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.1}}), encoding="utf-8")
    with pytest.warns(op.VacuousCheckWarning):
        run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
        out = write_report(run, tmp_path / "report.md")
    page = render_markdown(out.read_text(encoding="utf-8"))
    _no_active_markup(page, allowed_images=1)  # the gate plot
    assert 'tools called: <img src=x onerror="alert(1)">, [approve](https://evil.example/)' in page.text
    assert f"criterion {crit})" in page.text


def test_a_report_names_the_reduction_and_the_cases_a_slice_left_out(tmp_path: Path, plots_not_encoded: None) -> None:
    """A pass^3 criterion was shown as plain ``answer_matches`` (n = cases, rate = mean pass^3) in the gate and
    slice tables, the header counted 72 "cases" for 24 cases × 3 epochs, and a slice that could place 4 of the
    24 cases in no bin showed 1.000 on 20 with no word about the 4."""
    from _epoch_systems import flaky_run

    run = flaky_run(tmp_path)
    text = write_report(run, tmp_path / "report.md").read_text(encoding="utf-8")
    assert "24 cases, 72 case runs (3 epochs)" in text
    assert re.search(r"^\| answer_matches \(pass\^3\) +\| +24 \|", text, re.M)  # the gate table
    assert re.search(r"^\| answer_matches \(pass\^3\) +\| 1\.000 ", text, re.M)  # the slice table
    assert "4 case(s) of answer_matches are in no pass^3 bin" in text


def test_the_raw_errors_of_a_pooled_run_say_which_run_each_is_of(make_suite: Any, tmp_path: Path) -> None:
    """Two runs of a suite whose c0 raises, pooled: errors.csv once held the row ``c0,1,error,…`` twice, the
    same words for two case runs, and named no run (the failing-cases tables of the same report do)."""
    cases = [{"id": f"c{i}", "input": {"answer": a, "n": i}, "expected": {"answer": "ok"}}
             for i, a in enumerate(["boom", "ok"])]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Raising", system_code=RAISING)
    runs = [op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b")]
    write_report(op.load_runs([r.directory for r in runs]), tmp_path / "r.md")
    raw = (tmp_path / "r_files" / "errors.csv").read_text(encoding="utf-8").splitlines()
    assert raw == ["run_id,case_id,epoch,status,error", *(f"{r.run_id},c0,1,error,KeyError: 'member'" for r in runs)]


def test_the_header_of_a_pooled_run_says_it_is_pooled(make_suite: Any, tmp_path: Path, plots_not_encoded: None) -> None:
    """Two 1-epoch runs pooled read "(2 epochs)" and gave the first run's times only."""
    root = make_suite([{"id": f"c{i}", "input": {"tag": str(i)}, "expected": {"answer": "ok"}} for i in range(3)],
                      evaluators=[{"type": "answer_matches"}])
    a, b = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b"))
    text = write_report(op.load_runs([a.directory, b.directory]), tmp_path / "report.md").read_text(encoding="utf-8")
    assert "3 cases, 6 case runs (2 runs pooled, 2 epochs in all)" in text
    assert f"started {a.manifest.started_at}, finished {b.manifest.finished_at}." in text


def test_the_gate_section_of_a_pooled_run_says_what_its_n_counts(make_suite: Any, tmp_path: Path,
                                                                 plots_not_encoded: None) -> None:
    """Before, the report of two runs of a 3-case suite pooled showed ``n`` 6 in its gate table and no word,
    under the verdict, of what n counts, where ``print(op.gate(pool))`` and its HTML say it: a
    reader of the report took 6 for six cases. Both reports now say it in the gate section, before the table; the
    report of one run says nothing of pooling."""
    root = make_suite([{"id": f"c{i}", "input": {"tag": str(i)}, "expected": {"answer": "ok"}} for i in range(3)],
                      evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}})
    a, b = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b"))
    pool = op.load_runs([a.directory, b.directory])
    note = (f"Pooled: 2 runs ({a.run_id}, {b.run_id}); n counts a case once in each run that holds it, and its rows "
            "in all of them are one cluster.")
    md = write_report(pool, tmp_path / "r.md").read_text(encoding="utf-8")
    gate_md = md.split("## Release gate", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^\| answer_matches +\| +6 \| +3 \|", gate_md, re.M)  # n 6, 3 clusters: 3 cases twice
    assert gate_md.index(note) < gate_md.index("| criterion")
    page = write_report(pool, tmp_path / "r.html").read_text(encoding="utf-8")
    gate_html = page.split("Release gate</h2>", 1)[1].split("<h2", 1)[0]
    assert f"<p>{note}</p>" in gate_html and gate_html.index(note) < gate_html.index("<table")
    for one in ("md", "html"):
        assert "pooled" not in write_report(a, tmp_path / f"one.{one}").read_text(encoding="utf-8").lower()


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_a_report_over_a_named_pipe_replaces_it_and_a_failed_write_leaves_nothing(
        example_run: op.Run, tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch,
        plots_not_encoded: None) -> None:
    """``oloproof report --out X`` waited for ever when X was a named pipe (the page was written into it), and
    a write that failed half way (a full disk, a file size limit) left a truncated report that looked whole and
    an error that named no file. The report is now written beside its path and renamed over it."""
    import os

    from _hostile_files import bounded

    target = tmp_path / f"r{suffix}"
    os.mkfifo(target)
    bounded(lambda: write_report(example_run, target), 30, unblock=[target])
    assert target.is_file() and "answer_matches" in target.read_text(encoding="utf-8")
    before = target.read_bytes()

    real = os.fdopen

    def full_disk(fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = real(fd, *args, **kwargs)

        def write(data: bytes) -> int:
            handle.raw.write(data[: len(data) // 2])  # half of it reaches the disk, then the disk is full
            raise OSError(28, "No space left on device")

        handle.write = write  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(os, "fdopen", full_disk)
    written = rf"{re.escape(str(tmp_path))}/r(\{suffix}|_files/\S+)"  # the page, or a file beside it (.md)
    with pytest.raises(op.OloproofError, match=rf"^{written}: cannot write \(No space left on device\)$"):
        write_report(example_run, target)
    assert target.read_bytes() == before  # the earlier report, whole
    assert [p.name for p in tmp_path.rglob(".*")] == []  # no temporary file left


def test_a_line_quoting_the_run_is_text_in_the_html_report(make_suite: Any, tmp_path: Path) -> None:
    """The HTML report ran every line through its prose markup: a criterion named with backticks or ** in a
    vacuous-check line (quoted from the run) became code and bold. Such a line is now text as written."""
    import warnings

    name = "keeps `x` **safe**"
    cases = [{"id": "c1", "input": {}, "initial_state": {"orders": {"o1": 1}}}]
    root = make_suite(cases, evaluators=[{"type": "state_unchanged", "criterion": name, "paths": ["orders.o9"]}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the vacuous check is the point
        run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
        text = write_report(run, tmp_path / "report.html").read_text(encoding="utf-8")
    page = Page(text)
    assert "Vacuous check (it cannot fail as configured): " in page.text and name in page.text
    assert "<code>x</code>" not in text and "<b>safe</b>" not in text


def test_a_report_a_read_only_folder_refuses_names_the_path_given(example_run: op.Run, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  plots_not_encoded: None) -> None:
    """Before, on a read-only file system the error named ``.r.html.e099a964.tmp``, a file the user
    never typed: removing the temporary file that was never made failed too (an unlink there answers EROFS, not
    "no such file"), and that error replaced the first. Simulated here: a mount cannot be made read-only in a test.
    Only what writes is refused, as on such a mount (a mutant refusing every open, the run's frames too, let the
    test passed only after another test had read them, and alone failed with "the run changed after it was
    loaded")."""
    import errno
    import os

    real_open = os.open

    def read_only(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EROFS, "Read-only file system", str(args[0]))

    def open_to_read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND):
            read_only(path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_to_read_only)
    monkeypatch.setattr(Path, "unlink", read_only)
    target = tmp_path / "r.html"
    with pytest.raises(op.OloproofError) as info:
        write_report(example_run, target)
    assert str(info.value) == f"{target}: cannot write (Read-only file system)"


def test_a_bad_report_suffix_is_refused_before_the_run_folder_is_opened(example_run: op.Run, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Opening a run folder without its columnar copy builds it: a wrong --out wrote frames/ into the folder
    and then exited 2, a user's mistake that changed the input."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(example_run.directory, copy)
    shutil.rmtree(copy / "frames")
    before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    assert main(["report", str(copy), "--out", str(tmp_path / "r.txt")]) == 2
    assert ".html or .md, not '.txt'" in capsys.readouterr().err
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == before
    # a folder at --out was once refused only after the report was made, a Markdown one's plots and tables
    # left in <stem>_files/ beside it and the run's frames/ built; now refused first, in one line, nothing made
    for name in ("folder.md", "folder.html"):
        (tmp_path / name).mkdir()
        assert main(["report", str(copy), "--out", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err == (f"oloproof: error: {tmp_path / name}: is a folder, not a report's file; choose another --out, "
                       f"e.g. {tmp_path / name / ('report' + Path(name).suffix)}\n")
        assert not (tmp_path / "folder_files").exists() and not any((tmp_path / name).iterdir())
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == before


def test_the_report_says_why_and_by_which_settings(example_run: op.Run, tmp_path: Path,
                                                   plots_not_encoded: None) -> None:
    """Before, the verdict had no reason beside it and no word on which release file made it; a report
    made with another --release looked like the suite's own (a one-criterion release read 'Verdict PASS')."""
    text = write_report(example_run, tmp_path / "own.md").read_text(encoding="utf-8")
    assert text.splitlines()[2] == "**Gate: BLOCK**"  # first, as the HTML has it
    assert "4 criteria FAIL (of 5 gated; PASS needs every one to pass)" in text
    assert "Release settings: the run's own release.yaml" in text and "min_clusters 20" in text
    other = tmp_path / "one.yaml"
    other.write_text("allow_approximate_methods: true\ncriteria: {other_order_untouched: 0.8}\n", encoding="utf-8")
    text = write_report(example_run, tmp_path / "one.md", release=other).read_text(encoding="utf-8")
    assert f"Release settings: {other} (given for this report)" in text
    assert "**PASS** (clustered run, 24 source clusters, 95% intervals): the 1 gated criterion passes" in text


def test_a_threshold_is_shown_with_every_digit_it_has_in_both_reports(example_run: op.Run, tmp_path: Path,
                                                                     plots_not_encoded: None) -> None:
    """The Markdown report's gate table wrote every number with three decimals: a threshold of 0.9999999 showed as
    ``1.000`` beside an interval ending at 1.000 (read as "it needs 1"), where the HTML report, the terminal
    table and the repr show 0.9999999; a whole thousandth keeps its three decimals in both."""
    for threshold, shown in (("0.9999999", "0.9999999"), ("0.8995", "0.8995"), ("0.9", "0.900")):
        release = tmp_path / f"{threshold}.yaml"
        release.write_text(f"allow_approximate_methods: true\ncriteria: {{other_order_untouched: {threshold}}}\n",
                           encoding="utf-8")
        md = write_report(example_run, tmp_path / f"{threshold}.md", release=release).read_text(encoding="utf-8")
        html = write_report(example_run, tmp_path / f"{threshold}.html", release=release).read_text(encoding="utf-8")
        header = next(line for line in md.splitlines() if line.startswith("| criterion ") and "threshold" in line)
        cells = [c.strip() for c in header.split("|")]
        row = next(line for line in md.splitlines() if line.startswith("| other_order_untouched ") and "|" in line)
        assert [c.strip() for c in row.split("|")][cells.index("threshold")] == shown, row
        assert f">{shown}<" in html


def test_a_minimum_validity_is_shown_with_every_digit_it_has_in_both_reports() -> None:
    """Before, `minimum_validity: 0.9584` was shown as 0.958 in the report's validity table, beside 23 of 24
    labels valid (0.958) and `checked` empty: the share looked equal to its minimum and the transform unchecked
    for no reason shown. It is the user's number, shown as a threshold is (0.85 keeps its three decimals). And
    `checked` reads `checked` or `no` in both reports (the Markdown one left an unchecked transform's cell empty)."""
    from oloproof_nb._display.html import html_table
    from oloproof_nb._display.markdown import markdown_table
    from oloproof_nb._display.theme import fmt_number

    table = pd.DataFrame({"transform": ["injected", "reworded"], "valid": [23, 23], "labeled": [24, 24],
                          "rate": [23 / 24, 23 / 24], "minimum_validity": [0.9584, 0.85], "checked": [False, True]})
    md = markdown_table(table, fmt_number, styled=True).splitlines()
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in md[2:]]
    assert [row[3:] for row in cells] == [["0.958", "0.9584", "no"], ["0.958", "0.850", "checked"]]
    html = str(html_table(table, fmt_number, styled=True))
    assert ">0.9584<" in html and ">0.850<" in html and ">0.958<" not in html.split("0.9584")[1].split("</tr>")[0]
    assert [re.sub(r"<[^>]+>", "", row.split("</td>")[-2]).strip() for row in html.split("<tr>")[2:]] == [
        "no", "checked"]


def test_a_threshold_of_minus_zero_is_shown_and_exported_as_zero(example_run: op.Run, tmp_path: Path,
                                                                 plots_not_encoded: None) -> None:
    """Before, ``threshold: -0.0`` in release.yaml was shown as ``-0.000`` in the gate table and both reports and
    written as ``-0.0`` to CSV and JSON; the release file's threshold is 0, so each shows 0."""
    import math
    import warnings

    from oloproof_nb._display.terminal import gate_table_text

    release = tmp_path / "release.yaml"
    release.write_text("allow_approximate_methods: true\ncriteria: {other_order_untouched: -0.0}\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)  # a threshold of 0 cannot fail: said, not tested here
        g = op.gate(example_run, release=release)
        md = write_report(example_run, tmp_path / "r.md", release=release).read_text(encoding="utf-8")
        html = write_report(example_run, tmp_path / "r.html", release=release).read_text(encoding="utf-8")
    csv = op.export_table(g, tmp_path / "g.csv").read_text(encoding="utf-8")
    exported = op.export_table(g, tmp_path / "g.json").read_text(encoding="utf-8")
    for text in (gate_table_text(g), gate_table_text(g, wide=True), repr(g), md, html, csv, exported):
        assert "-0.0" not in text and "-0," not in text, text
    thresholds = [row["threshold"] for row in json.loads(exported) if row["criterion"] == "other_order_untouched"]
    assert thresholds == [0] and math.copysign(1, thresholds[0]) == 1  # -0.0 == 0: the sign read apart
    assert ",0.0," in next(line for line in csv.splitlines() if line.startswith("other_order_untouched,"))


def test_the_validity_interval_is_rounded_outward_in_both_formats(example_run: op.Run, tmp_path: Path,
                                                                  plots_not_encoded: None) -> None:
    import math

    raw = op.validity(example_run).iloc[0]
    low, high = math.floor(raw["ci_low"] * 1000) / 1000, math.ceil(raw["ci_high"] * 1000) / 1000
    assert (low, high) == (0.797, 0.993)  # 0.7976 showed as 0.798 in Markdown: inside the computed interval
    md = write_report(example_run, tmp_path / "r.md").read_text(encoding="utf-8")
    html = write_report(example_run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "\\[0.797, 0.993\\]" in md and "[0.797, 0.993]" in html


def test_a_run_with_receipts_lists_each_one_not_verified(example_run: op.Run, tmp_path: Path,
                                                         plots_not_encoded: None) -> None:
    """Before, the false-success report showed only 'outcome_verified 2/6 FAIL'; which artifact was
    missing, stale, wrong or rejected was nowhere."""
    root = init_example("false-success", tmp_path / "suite")
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    text = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    section = text.split("## Outcome receipts", 1)[1].split("\n## ", 1)[0]
    expected = run.receipts[run.receipts["status"] != "verified"]
    assert len(expected) == 4
    for case_id, status in zip(expected["case_id"], expected["status"], strict=True):
        assert re.search(rf"\| {re.escape(case_id)} +\| [^|]+\| {status} ", section), (case_id, status)
    assert "the 4 receipt(s) not verified" in section and "| fs-01 " not in section
    # a receipt still waiting is not verified either: it is listed with the 4
    receipts = run.receipts
    receipts.loc[receipts["case_id"] == "fs-01", "status"] = "waiting"
    run.receipts = receipts
    waiting = write_report(run, tmp_path / "w.md").read_text(encoding="utf-8")
    assert "the 5 receipt(s) not verified" in waiting and re.search(r"\| fs-01 +\| [^|]+\| waiting ", waiting)
    # 50 receipts not verified (the 5 above, 11 × 4 copies of the failed ones and 1 more) are all listed: the cut
    # is after 50
    failed = receipts[~receipts["status"].isin(["verified", "waiting"])]
    run.receipts = pd.concat([receipts, *[failed] * 11, failed.iloc[:1]], ignore_index=True)
    fifty = write_report(run, tmp_path / "f.md").read_text(encoding="utf-8")
    assert "the 50 receipt(s) not verified; `run.receipts` has every one." in fifty
    assert "Outcome receipts" not in write_report(example_run, tmp_path / "x.md").read_text(encoding="utf-8")


def test_the_replay_table_counts_the_failed_replays_by_reason(example_run: op.Run, tmp_path: Path,
                                                              plots_not_encoded: None) -> None:
    """Before, 'constraint_broken 24' of 37 failed replays read as an undercount; the other 13 failed for
    another reason the report did not name (the 38th replay, of ord-018~injected, is of a copy no criterion
    scores: not counted, see the test below)."""
    failed = example_run.replays[example_run.replays["verdict"] != "pass"]
    counts = failed["reason"].value_counts()
    assert dict(counts) == {"false_success": 24, "not_recovered_not_escalated": 14}  # the example's hand count
    assert failed.set_index("case_id").loc["ord-018~injected", "reason"] == "not_recovered_not_escalated"
    text = write_report(example_run, tmp_path / "r.md").read_text(encoding="utf-8")
    section = text.split("## Fault replays", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith("| recovers_from_error_at_issue_refund"))
    assert row.rstrip(" |").endswith("false_success 24; not_recovered_not_escalated 13")


def test_the_replays_of_copies_no_criterion_scores_are_not_counted(example_run: op.Run, tmp_path: Path,
                                                                   plots_not_encoded: None) -> None:
    """Gap left open: the replay table and the run's replay line counted the replays of ord-018~injected, a copy
    labeled invalid (labels/injected.jsonl) whose rows no criterion scores: 38 replays beside a gate row of n 37.
    Hand count on the example: 38 case runs called issue_refund (14 sources and all 24 copies, each replayed once), one
    of them ord-018~injected; so 37 replays in the table, all failed, as the gate's row says, and 2 of the 76
    replay runs (a control and a faulted run each) named as of that copy."""
    label_lines = (example_run.suite_root / "labels" / "injected.jsonl").read_text(encoding="utf-8").splitlines()
    invalid = sorted(j["case_id"] for j in map(json.loads, label_lines) if not j["valid"])
    assert invalid == ["ord-018~injected"]
    steps = example_run.steps
    called = set(steps.loc[steps["tool"] == "issue_refund", "case_id"])
    assert len(called) == 38 and len({c for c in called if "~" in c}) == 24 and "ord-018~injected" in called
    gate_row = op.gate(example_run).table.set_index("criterion").loc["recovers_from_error_at_issue_refund"]
    assert (gate_row["n"], gate_row["passed"]) == (37, 0)
    text = write_report(example_run, tmp_path / "r.md").read_text(encoding="utf-8")
    section = text.split("## Fault replays", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith("| recovers_from_error_at_issue_refund"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:7] == ["37", "0", "37", "0"]  # replays, passed, failed, missing
    assert "Not counted: 1 replay(s) of copies labeled invalid, scored by no criterion (ord-018\\~injected)" in section
    line = "76 live, 0 from the cache (2 of them replay copies no criterion scores)"
    assert line in repr(example_run) and line in example_run._repr_html_()
    assert example_run.replay_counts() == (76, 0)
    again = op.run(op.load_suite(example_run.suite_root), out=tmp_path / "again", progress=False)  # from the cache
    assert op.load_runs([example_run.directory, again.directory]).replay_tally() == (76, 76, 4)  # 2 of each run


def test_a_reason_that_blocks_whatever_the_table_says_is_said_once(example_run: op.Run, tmp_path: Path,
                                                                   plots_not_encoded: None) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    text = write_report(example_run, tmp_path / "r.md", release=empty).read_text(encoding="utf-8")
    assert text.count("no_criteria: nothing was gated") == 1
    assert "): no_criteria: nothing was gated, whatever the table says. A criterion" in text


@pytest.mark.parametrize("name", ["README.md", "index.html"])
def test_a_file_the_user_wrote_is_never_replaced_by_a_report_but_an_earlier_report_is(
        example_run: op.Run, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
        plots_not_encoded: None) -> None:
    """Before, `oloproof report RUN --out suite/README.md` replaced the suite's own README, exit 0."""
    mine = tmp_path / name
    mine.write_text("# My suite\n\nNotes I wrote.\n", encoding="utf-8")
    assert main(["report", str(example_run.directory), "--out", str(mine)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"oloproof: error: {mine}: exists and is no oloproof report, so it is kept; choose another --out, "
                   "or remove the file first to put the report there")  # from Python: out=
    assert mine.read_text(encoding="utf-8") == "# My suite\n\nNotes I wrote.\n"
    assert not (tmp_path / f"{mine.stem}_files").exists()  # nothing made beside it either
    again = tmp_path / f"report{mine.suffix}"
    assert main(["report", str(example_run.directory), "--out", str(again)]) == 1  # written; the example BLOCKs
    first = again.read_bytes()
    assert main(["report", str(example_run.directory), "--out", str(again)]) == 1  # a report of it again: replaced
    assert again.read_bytes().startswith(first[:40]) and "oloproof report — " in again.read_text(encoding="utf-8")
    empty = tmp_path / f"empty{mine.suffix}"
    empty.write_bytes(b"")  # nothing to lose
    assert main(["report", str(example_run.directory), "--out", str(empty)]) == 1 and empty.stat().st_size > 0



def test_an_earlier_report_made_read_only_is_kept_and_nothing_is_written_beside_it(
        example_run: op.Run, tmp_path: Path, plots_not_encoded: None) -> None:
    """``chmod a-w report.md`` keeps the report a release was decided on: before, the report was replaced all the
    same (renamed over, which the folder allows whatever the file's mode) and its tables in ``report_files/`` with
    it. Refused in one line, exit 2, before anything is written. Run bound by file modes, as a user is."""
    import os
    import sys

    from _processes import without_root_powers

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    out = tmp_path / "report.md"
    write_report(example_run, out)
    files = tmp_path / "report_files"
    before = {p.name: p.read_bytes() for p in [out, *files.iterdir()]}
    out.chmod(0o444)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run([*prefix, sys.executable, "-m", "oloproof_nb.cli", "report", str(example_run.directory),
                           "--out", str(out)], capture_output=True, text=True, timeout=120, env=env)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (f"oloproof: error: {out}: is read-only, so it is kept; choose another --out, or make it "
                           "writable first (chmod u+w)\n")
    assert {p.name: p.read_bytes() for p in [out, *files.iterdir()]} == before


def test_a_read_only_table_of_an_earlier_markdown_report_keeps_the_whole_report(
        example_run: op.Run, tmp_path: Path, plots_not_encoded: None) -> None:
    """One file of ``report_files/`` made read-only (``chmod a-w report_files/failing_2.csv``): the report is refused
    before any of its files is replaced, so the earlier report and every table and plot it links stay together
    (refused only when its turn came, the gate table and plot beside it were already the new run's). Run bound by
    file modes, as a user is."""
    import os
    import sys

    from _processes import without_root_powers

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    out = tmp_path / "report.md"
    write_report(example_run, out)
    files = tmp_path / "report_files"
    kept = files / "failing_2.csv"
    assert (files / "gate.csv").is_file() and kept.is_file()  # written before it, in the gate table's order
    kept.chmod(0o444)
    before = {p.name: p.read_bytes() for p in [out, *files.iterdir()]}
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run([*prefix, sys.executable, "-m", "oloproof_nb.cli", "report", str(example_run.directory),
                           "--out", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (f"oloproof: error: {kept}: is read-only, so it is kept, and the report at {out} with it; "
                           "make it writable first (chmod u+w), or choose another --out\n")
    assert {p.name: p.read_bytes() for p in [out, *files.iterdir()]} == before


def test_a_link_in_the_report_s_folder_to_a_read_only_file_is_replaced_not_refused(
        example_run: op.Run, tmp_path: Path, plots_not_encoded: None) -> None:
    """A link in ``report_files/`` named as one of the report's tables is replaced, never written through; that the
    file it points to is read-only (``chmod a-w``) is no reason to refuse the report. Run bound by file modes, as a
    user is."""
    import os
    import sys

    from _processes import without_root_powers

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    out = tmp_path / "report.md"
    write_report(example_run, out)
    files = tmp_path / "report_files"
    mine = tmp_path / "mine.csv"
    mine.write_text("mine\n", encoding="utf-8")
    mine.chmod(0o444)
    (files / "failing_2.csv").unlink()
    (files / "failing_2.csv").symlink_to(mine)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run([*prefix, sys.executable, "-m", "oloproof_nb.cli", "report", str(example_run.directory),
                           "--out", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode in (0, 1) and done.stderr == ""  # the run's gate: PASS or BLOCK
    assert not (files / "failing_2.csv").is_symlink() and (files / "failing_2.csv").read_text().startswith("cluster,")
    assert mine.read_text(encoding="utf-8") == "mine\n"

def test_a_file_at_out_that_cannot_be_read_is_kept(example_run: op.Run, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch, plots_not_encoded: None) -> None:
    """Before, a file the report could not read (mode 000 for another user) was taken for no file of
    the user's and replaced. One that cannot be read cannot be told from the user's: it is kept."""
    import builtins

    from oloproof_nb._display import report as report_module

    mine = tmp_path / "notes.md"
    mine.write_text("mine\n", encoding="utf-8")

    def unreadable(path: object, *args: object, **kwargs: object) -> object:
        if Path(str(path)) == mine:
            raise PermissionError(13, "Permission denied", str(path))
        return builtins.open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(report_module, "open", unreadable, raising=False)
    with pytest.raises(op.OloproofError, match="exists and is no oloproof report, so it is kept"):
        write_report(example_run, mine)
    assert mine.read_text(encoding="utf-8") == "mine\n"


@pytest.mark.parametrize(("name", "text"), [
    ("notes.md", "Notes on the oloproof report\n"),
    ("notes.md", "x" * 5000 + "\n# oloproof report — pasted\n"),
    # a mutant: the title anywhere in the first 4 KiB made a file a report, so this README was replaced
    ("README.md", "# My suite\n\nHow to read the oloproof report — start with the gate table.\n"),
    ("notes.md", "## oloproof report — a second-level heading of mine\n"),
    ("index.html", "<!DOCTYPE html>\n<html><head><title>My notes</title></head>\n"
                   "<body><p>oloproof report — what it says</p></body></html>\n"),
])
def test_only_a_file_that_starts_as_a_report_is_replaced(example_run: op.Run, tmp_path: Path, name: str,
                                                        text: str, plots_not_encoded: None) -> None:
    """A report is told by where its title, "oloproof report — <suite>", stands: the Markdown file's first line
    (``# oloproof report — ``), the HTML page's ``<title>`` after the doctype. A user's file naming "the oloproof
    report", or quoting a report's title anywhere else, is the user's and kept."""
    mine = tmp_path / name
    mine.write_text(text, encoding="utf-8")
    with pytest.raises(op.OloproofError, match="exists and is no oloproof report, so it is kept"):
        write_report(example_run, mine)
    assert mine.read_text(encoding="utf-8") == text


def test_a_gate_reason_quoting_the_run_is_text_in_both_reports(example_run: op.Run, tmp_path: Path,
                                                               plots_not_encoded: None) -> None:
    """The gate's sentence is the report's own prose (markup: **BLOCK**), and it quoted the gate's reason
    as it was. A reason quotes the run — a do-nothing run's id, an Inspect AI log's early-stopping manager — so a
    run id ``<img src=x onerror=…>`` was an image with a script in report.md, ``[details](https://…)`` a link,
    backticks code in the HTML report, and an ESC a command to a terminal showing report.md. The reason is now
    written as text after the bold verdict, in both formats."""
    from oloproof_nb._run.baseline import NOOP_VERSION

    folder = tmp_path / "idle"
    shutil.copytree(example_run.directory, folder, ignore=shutil.ignore_patterns("frames"))
    hostile = "r1 <img src=x onerror=alert(1)> [details](https://evil.example/) `code` \x1b[2K"
    manifest = rename_run(folder, hostile)
    manifest.update(system_version=NOOP_VERSION)  # a do-nothing run: its id is in the reason
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    run = op.load_run(folder)
    assert op.gate(run).reason.startswith(f"noop_baseline: run {hostile} is the do-nothing baseline")
    md = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    html = Page(write_report(run, tmp_path / "r.html").read_text(encoding="utf-8"))
    page = render_markdown(md)
    for shown in (page, html):
        assert not [attrs for _, attrs in shown.elements if "onerror" in attrs or "evil" in str(attrs.get("href"))]
    assert "Verdict **BLOCK** (" in md and "\x1b" not in md
    written = hostile.replace("\x1b", "\\x1b")  # shown as its escape, as the terminal shows it
    assert f"noop_baseline: run {written} is the do-nothing" in page.text
    assert f"noop_baseline: run {written} is the do-nothing" in html.text
    assert "Verdict BLOCK (" in html.text and html.tags("b")[0] == {}  # the verdict still in bold


def test_twenty_copies_left_out_are_listed_whole(make_suite: Any, tmp_path: Path, plots_not_encoded: None) -> None:
    """20 copies labeled invalid (a transform checked at minimum_validity 0: every pair labeled): the report
    lists all 20, with no "…" (it cuts the list after 20)."""
    from _metamorphic_systems import case, mm_suite, transform

    ids = [f"c{i:02d}" for i in range(20)]
    labels = {"t": [{"case_id": f"{i}~t", "valid": False} for i in ids]}
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t", minimum_validity=0.0)],
                    [{"type": "answer_matches"}], labels)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    text = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("Copies labeled invalid"))
    listed = ", ".join(rf"{i}\~t" for i in ids)  # Markdown escapes the tilde
    assert line == f"Copies labeled invalid, scored by no criterion (20): {listed}."


def test_the_slice_table_keeps_the_n_a_bin_when_it_holds_cases() -> None:
    """Cases the slice cannot place (bin n/a) are a column of the report's slice table when there are any, and
    left out when there are none; an empty bin reads "—", a bin of one case its rate."""
    from oloproof_nb._display.report import _slice_display

    def table(na_support: int) -> pd.DataFrame:
        return pd.DataFrame({"bin": ["<2", "n/a"], "criterion": ["a", "a"], "support": [0, na_support],
                             "rate": [float("nan"), 0.5], "ci_low": [float("nan"), 0.1],
                             "ci_high": [float("nan"), 0.9], "few_clusters": [False, True],
                             "reduce": ["mean", "mean"]})

    shown = _slice_display(table(1))  # one case is a bin with support, not an empty one
    assert list(shown.columns) == ["criterion", "<2", "n/a"]
    assert shown.iloc[0].tolist() == ["a", "—", "0.500 [0.100, 0.900] n=1 †"]
    assert list(_slice_display(table(0)).columns) == ["criterion", "<2"]


def test_a_row_without_an_interval_shows_an_empty_interval_cell() -> None:
    """A gate row with no interval (no_evidence: no rows) shows an empty cell, never an interval of NaN."""
    from oloproof_nb._display.report import _intervals

    nan = float("nan")
    assert _intervals(pd.DataFrame({"ci_low": [0.1, nan], "ci_high": [0.9, nan]})) == ["[0.100, 0.900]", ""]


def test_a_folder_of_the_user_beside_a_markdown_report_is_kept(example_run: op.Run, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                plots_not_encoded: None) -> None:
    """Before, `--out notes.md` beside the user's own notes_files/ (a folder of notes and their tables) replaced
    its gate.csv, exit 1. A <stem>_files/ that holds anything is the report's only when an earlier report stands
    at --out; else refused in one line, exit 2, nothing written. An empty one, or one an earlier report owns, is
    written into."""
    notes = tmp_path / "notes_files"
    notes.mkdir()
    (notes / "gate.csv").write_text("my data\n", encoding="utf-8")
    for given in (None, b"", b"# My notes\n"):  # no file at --out, an empty one, the user's own (refused anyway)
        if given is not None:
            (tmp_path / "notes.md").write_bytes(given)
        assert main(["report", str(example_run.directory), "--out", str(tmp_path / "notes.md")]) == 2
        err = capsys.readouterr().err
        if given == b"# My notes\n":
            assert "exists and is no oloproof report, so it is kept" in err
        else:
            assert err == (f"oloproof: error: {notes}: holds files and no earlier oloproof report stands at "
                           f"{tmp_path / 'notes.md'} to own them, so they are kept; choose another --out, or empty "
                           "or remove notes_files/ first\n")
        assert [p.name for p in notes.iterdir()] == ["gate.csv"]
        assert (notes / "gate.csv").read_text(encoding="utf-8") == "my data\n"
    (tmp_path / "notes.md").unlink()
    (notes / "gate.csv").unlink()  # emptied: the report may use it
    assert main(["report", str(example_run.directory), "--out", str(tmp_path / "notes.md")]) == 1
    assert (notes / "gate.csv").read_text(encoding="utf-8").startswith("criterion,")
    (notes / "mine.txt").write_text("kept\n", encoding="utf-8")  # beside an earlier report: its folder, written again
    assert main(["report", str(example_run.directory), "--out", str(tmp_path / "notes.md")]) == 1
    assert (notes / "mine.txt").read_text(encoding="utf-8") == "kept\n"
    capsys.readouterr()


def test_an_html_report_beside_a_folder_of_its_stem_is_written_and_leaves_the_folder_alone(
        example_run: op.Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only a Markdown report writes into ``<stem>_files/``; an HTML one embeds its plots. So
    ``--out notes.html`` beside the user's ``notes_files/`` (no earlier report there) is written, exit 1 on the
    example's BLOCK, and the folder keeps just its file: checked for HTML too, it was refused (exit 2)."""
    notes = tmp_path / "notes_files"
    notes.mkdir()
    (notes / "gate.csv").write_text("my data\n", encoding="utf-8")
    assert main(["report", str(example_run.directory), "--out", str(tmp_path / "notes.html")]) == 1
    assert capsys.readouterr().err == ""
    assert (tmp_path / "notes.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in notes.iterdir()] == ["gate.csv"]
    assert (notes / "gate.csv").read_text(encoding="utf-8") == "my data\n"


def test_a_named_pipe_at_out_owns_no_folder_of_files_and_is_never_opened_to_ask(tmp_path: Path) -> None:
    """Whether an earlier report stands at ``--out`` is read from the file only when it is a
    regular file. A named pipe at ``r.md`` beside an ``r_files/`` holding the user's file is no earlier report:
    refused in one line, the pipe never opened (opened to read, it waits for a writer for ever)."""
    import os

    from _hostile_files import bounded

    from oloproof_nb._display.report import report_path

    target = tmp_path / "r.md"
    os.mkfifo(target)
    (tmp_path / "r_files").mkdir()
    (tmp_path / "r_files" / "mine.txt").write_text("kept\n", encoding="utf-8")
    with pytest.raises(op.OloproofError, match=r"r_files: holds files and no earlier oloproof report stands at "):
        bounded(lambda: report_path(target), 30, unblock=[target])
    assert (tmp_path / "r_files" / "mine.txt").read_text(encoding="utf-8") == "kept\n"


def test_a_markdown_report_never_writes_through_a_link_beside_it(example_run: op.Run, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 plots_not_encoded: None) -> None:
    """Before, a link in ``r_files/`` named as one of the report's files (``gate.csv``, a folder
    copied or unpacked with its links) had the report's table written into the file it pointed to, outside the
    folder; an ``r_files`` that is a link had every plot and table written into the folder it pointed to. A link
    in ``r_files/`` is replaced by the report's file; an ``r_files`` link is refused, nothing written."""
    precious = tmp_path / "precious.txt"
    precious.write_text("mine\n", encoding="utf-8")
    files = tmp_path / "r_files"
    write_report(example_run, tmp_path / "r.md")  # an earlier report owns r_files/ (else it is refused: below)
    for name in ("gate.csv", "gate.png"):
        (files / name).unlink()
    (files / "gate.csv").symlink_to(precious)
    (files / "gate.png").symlink_to(tmp_path / "dangling.png")
    write_report(example_run, tmp_path / "r.md")
    assert precious.read_text(encoding="utf-8") == "mine\n" and not (tmp_path / "dangling.png").exists()
    assert not (files / "gate.csv").is_symlink() and (files / "gate.csv").read_text().startswith("criterion,")
    assert not (files / "gate.png").is_symlink() and (files / "gate.png").read_bytes().startswith(PNG)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "gate.csv").write_text("mine\n", encoding="utf-8")
    (tmp_path / "s_files").symlink_to(elsewhere)
    assert main(["report", str(example_run.directory), "--out", str(tmp_path / "s.md")]) == 2
    err = capsys.readouterr().err
    assert err == (f"oloproof: error: {tmp_path / 's_files'}: is a symbolic link; the report s.md writes its plots "
                   "and tables into a folder of its own there, never through a link (remove it, or choose another "
                   "--out)\n")
    assert [p.name for p in elsewhere.iterdir()] == ["gate.csv"] and not (tmp_path / "s.md").exists()
    assert (elsewhere / "gate.csv").read_text(encoding="utf-8") == "mine\n"


def test_a_plot_s_link_to_a_file_of_the_user_is_replaced_not_written_through(example_run: op.Run,
                                                                             tmp_path: Path,
                                                                               plots_not_encoded: None) -> None:
    """A link in ``r_files/`` named as one of the report's plots (``gate.png``) that points to a file of the user:
    the plot is written in the link's place, and the file it pointed to keeps its bytes."""
    precious = tmp_path / "photo.png"
    precious.write_bytes(PNG + b"mine")
    files = tmp_path / "r_files"
    write_report(example_run, tmp_path / "r.md")  # an earlier report owns r_files/
    (files / "gate.png").unlink()
    (files / "gate.png").symlink_to(precious)
    write_report(example_run, tmp_path / "r.md")
    assert precious.read_bytes() == PNG + b"mine"
    assert not (files / "gate.png").is_symlink() and (files / "gate.png").read_bytes().startswith(PNG)


class _Blocks(HTMLParser):
    """A page's headings, paragraphs and table rows (each a list of its cells), in order, as text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, Any]] = []
        self._open: str | None = None
        self._text: list[str] = []
        self._row: list[str] = []
        self._cell: list[str] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "h3", "p"):
            self._open, self._text = tag, []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == self._open:
            self.blocks.append((tag, "".join(self._text)))
            self._open = None
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            self.blocks.append(("tr", self._row))

    def handle_data(self, data: str) -> None:
        if self._open:
            self._text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _failing_listed(html: str) -> dict[str, tuple[str, list[dict[str, str]]]]:
    """The report's section of cases that did not pass, read off the page: per heading (a criterion), in order, the
    note under it and its table's rows (column → cell). A Markdown report is read once rendered (CommonMark)."""
    out: dict[str, tuple[str, list[dict[str, str]]]] = {}
    inside, current, header = False, "", None
    for tag, value in _Blocks(html).blocks:
        if tag == "h2":
            inside, current = value == "Cases that did not pass", ""
        elif not inside or tag == "h2":
            continue
        elif tag == "h3":
            current, header = value, None
            out[current] = ("", [])
        elif current and tag == "p" and not out[current][0]:
            out[current] = (value, out[current][1])
        elif current and tag == "tr":
            if header is None:
                header = value
            else:
                out[current][1].append(dict(zip(header, value, strict=True)))
    return out


def _both_reports(run: op.Run, tmp_path: Path, **keywords: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The section of cases that did not pass, read off the Markdown report (rendered) and off the HTML report."""
    from markdown_it import MarkdownIt

    md = write_report(run, tmp_path / "r.md", **keywords).read_text(encoding="utf-8")
    html = write_report(run, tmp_path / "r.html", **keywords).read_text(encoding="utf-8")
    return _failing_listed(MarkdownIt("commonmark").enable("table").render(md)), _failing_listed(html)


def _grouped_by_cluster(clusters: list[str]) -> bool:
    """Whether each cluster's rows are together (no cluster comes back after another)."""
    runs = [c for i, c in enumerate(clusters) if i == 0 or clusters[i - 1] != c]
    return len(runs) == len(set(runs))


def test_the_report_names_the_cases_that_did_not_pass_by_criterion(example_run: op.Run, tmp_path: Path,
                                                                   plots_not_encoded: None) -> None:
    """A release manager reading the report of a BLOCK learned how many cases failed each criterion, not which: the
    README sent them to a notebook. Each criterion that did not pass, and any other with rows that did not pass,
    now lists its cases, counted here from run.verdicts by a pandas filter."""
    v = example_run.verdicts
    bad = v[v["verdict"] != "pass"]
    # the example's planted defects (README section 6: answer_matches and state_matches 34 of 47,
    # refunds_follow_policy 38 of 47; every fault replay a false success)
    assert bad.groupby("criterion").size().to_dict() == {
        "answer_matches": 13, "state_matches": 13, "refunds_follow_policy": 9, "same_state_under_injected": 9,
        "recovers_from_error_at_issue_refund": 37}
    table = op.gate(example_run).table
    wanted = [c for c, verdict in zip(table["criterion"], table["verdict"], strict=True)
              if verdict not in ("PASS", "REPORT_ONLY") or c in set(bad["criterion"])]
    assert "other_order_untouched" not in wanted and "refunds_follow_policy" in wanted  # REPORT_ONLY, 9 fail
    md, html = _both_reports(example_run, tmp_path)
    assert md == html  # the two reports list the same cases, with the same notes
    assert list(md) == wanted  # in the gate table's order
    for criterion, (note, rows) in md.items():
        mine = bad[bad["criterion"] == criterion]
        listed = [r["case_id"] for r in rows]
        assert _grouped_by_cluster([r["cluster"] for r in rows])
        assert all(r["verdict"] == "fail" for r in rows) and list(rows[0]) == ["cluster", "case_id", "verdict",
                                                                               "reason"]
        if len(mine) <= 20:
            assert sorted(listed) == sorted(mine["case_id"]) and "more" not in note
            assert {r["case_id"]: r["reason"] for r in rows} == dict(zip(mine["case_id"], mine["reason"], strict=True))
        else:  # the first 20 in the clusters' order, and how many more
            assert len(listed) == 20 and set(listed) <= set(mine["case_id"])
            assert f"the first 20 below, and {len(mine) - 20} more" in note
        verdict = table.loc[table["criterion"] == criterion, "verdict"].item()
        judged = int((v["criterion"] == criterion).sum())
        assert note.startswith(f"{verdict}: {len(mine)} of {judged} cases did not pass, in "
                               f"{mine['cluster'].nunique()} cluster(s)")
    recovery = md["recovers_from_error_at_issue_refund"][1]
    # 37 rows in 23 clusters (ord-001 … ord-024 but ord-018~injected, labeled invalid): the first 20 are
    # ord-001 … ord-010 and their copies
    assert [r["case_id"] for r in recovery] == [f"ord-{i:03d}{s}" for i in range(1, 11) for s in ("", "~injected")]
    assert md["refunds_follow_policy"][0].startswith("REPORT_ONLY: 9 of 47 cases did not pass")
    # the Markdown report's raw table beside it holds every row, the 17 not shown too
    raw = pd.read_csv(tmp_path / "r_files" / "failing_6.csv", dtype=str)
    mine = bad[bad["criterion"] == "recovers_from_error_at_issue_refund"]
    assert sorted(raw["case_id"]) == sorted(mine["case_id"]) and len(raw) == 37


def test_a_hostile_case_id_in_the_list_of_failing_cases_is_text(make_suite: Any, tmp_path: Path,
                                                                plots_not_encoded: None) -> None:
    """A case id, a cluster and a reason are the user's text: escaped in both reports (HTML; in Markdown `|` and a
    line break too), never markup, and a row keeps its cells."""
    ids = ["<script>alert(1)</script>", "a|b", "line\nbreak"]
    cases = [{"id": i, "input": {"answer": "<b>no</b>|x", "n": n}, "expected": {"answer": "ok"}}
             for n, i in enumerate(ids)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    md_text = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    html_text = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    _no_active_markup(render_markdown(md_text), allowed_images=1)  # the gate plot
    _no_active_markup(Page(html_text), allowed_images=1)
    assert "<script>alert(1)" not in html_text and "&lt;script&gt;alert(1)&lt;/script&gt;" in html_text
    md, html = _both_reports(run, tmp_path)
    # Markdown writes a line break as a space, HTML shows it as its escape
    assert [r["case_id"] for r in md["answer_matches"][1]] == ["<script>alert(1)</script>", "a|b", "line break"]
    assert [r["case_id"] for r in html["answer_matches"][1]] == ["<script>alert(1)</script>", "a|b", "line\\nbreak"]
    for rows in (md["answer_matches"][1], html["answer_matches"][1]):
        assert [r["cluster"] for r in rows] == [r["case_id"] for r in rows]
        assert all(r["verdict"] == "fail" and "<b>no</b>|x" in r["reason"] for r in rows)


def test_a_criterion_lists_twenty_cases_and_counts_the_rest(make_suite: Any, tmp_path: Path,
                                                            plots_not_encoded: None) -> None:
    """23 cases fail (by hand: c00 … c22, each its own cluster; c23 and c24 pass): the first 20 listed, "and 3
    more", and the Markdown report's raw table holds all 23."""
    cases = [{"id": f"c{i:02d}", "input": {"answer": "no" if i < 23 else "ok", "n": i}, "expected": {"answer": "ok"}}
             for i in range(25)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.9}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    md, html = _both_reports(run, tmp_path)
    assert md == html
    note, rows = md["answer_matches"]
    assert [r["case_id"] for r in rows] == [f"c{i:02d}" for i in range(20)]
    assert note == ("FAIL: 23 of 25 cases did not pass, in 23 cluster(s); the first 20 below, and 3 more "
                    "(run.verdicts holds them).")
    raw = pd.read_csv(tmp_path / "r_files" / "failing_1.csv", dtype=str)
    assert list(raw["case_id"]) == [f"c{i:02d}" for i in range(23)]


def test_a_run_whose_every_row_passed_has_no_list_but_an_undecided_criterion_says_why(make_suite: Any,
                                                                                    tmp_path: Path,
                                                                               plots_not_encoded: None) -> None:
    """4 cases that all pass: gated at 0.3 the criterion passes (the exact lower bound is 0.025^(1/4) = 0.398), and
    the report has no section of cases that did not pass; gated at 0.9 it is INSUFFICIENT_EVIDENCE with no case
    to name, and the section says so under its name."""
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.3}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    assert op.gate(run).verdict == "PASS"
    for suffix in (".md", ".html"):
        assert "Cases that did not pass" not in write_report(run, tmp_path / f"p{suffix}").read_text(encoding="utf-8")
    strict = {"criteria": {"answer_matches": 0.9}}
    reason = op.gate(run, release=strict).table["reason"].item()
    md, html = _both_reports(run, tmp_path, release=strict)
    assert md == html == {"answer_matches": (f"INSUFFICIENT_EVIDENCE, with no cases that did not pass: {reason}.",
                                             [])}


def test_a_criterion_reduced_over_epochs_lists_each_case_once(tmp_path: Path,
                                                              plots_not_encoded: None) -> None:
    """pass^3: a case counts once, as the gate counts it (flaky0 … flaky3 wrong in epoch 2, by hand); a criterion of
    the mean over epochs lists each epoch that did not pass, with its epoch."""
    from _epoch_systems import flaky_run, scripted_run

    (tmp_path / "flaky").mkdir()
    (tmp_path / "mean").mkdir()
    run = flaky_run(tmp_path / "flaky")
    v = run.verdicts
    bad = v[v["verdict"] != "pass"]
    md, html = _both_reports(run, tmp_path / "flaky")
    assert md == html and list(md) == ["answer_matches (pass^3)"]
    note, rows = md["answer_matches (pass^3)"]
    assert sorted(r["case_id"] for r in rows) == sorted(set(bad["case_id"])) == [f"flaky{i}" for i in range(4)]
    assert {r["pass^3"] for r in rows} == {"0.000"} and {r["epochs not passed"] for r in rows} == {"2 of 3"}
    assert note.startswith("PASS: 4 of 24 cases did not pass")  # 20 steady cases, 4 flaky
    run = scripted_run(tmp_path / "mean", "mix", 3, 2, [1, 1, 1], release={"criteria": {"answer_matches": 0.5}})
    bad = run.verdicts[run.verdicts["verdict"] != "pass"]
    md, html = _both_reports(run, tmp_path / "mean")
    assert md == html
    rows = md["answer_matches"][1]
    assert [(r["case_id"], r["epoch"]) for r in rows] == [(c, str(e)) for c, e in zip(bad["case_id"], bad["epoch"],
                                                                                      strict=True)]
    assert [(r["case_id"], r["epoch"]) for r in rows] == [("mix0", "2"), ("mix1", "2")]  # by hand: epoch 2 is wrong
    assert md["answer_matches"][0].startswith("INSUFFICIENT_EVIDENCE: 2 of 15 rows did not pass")


def test_a_pooled_run_lists_a_case_once_per_run(make_suite: Any, tmp_path: Path,
                                                plots_not_encoded: None) -> None:
    """Two runs of one suite pooled (op.load_runs): c0 and c3 fail in each (by hand: every third case answers no);
    a row names its run, and no epoch column says 1 twice for two different tries."""
    cases = [{"id": f"c{i}", "input": {"answer": "ok" if i % 3 else "no", "n": i}, "expected": {"answer": "ok"}}
             for i in range(6)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.9}})
    suite = op.load_suite(root)
    a, b = (op.run(suite, out=tmp_path / name, progress=False) for name in ("a", "b"))
    md, html = _both_reports(op.load_runs([a.directory, b.directory]), tmp_path)
    assert md == html
    note, rows = md["answer_matches"]
    assert note.startswith("INSUFFICIENT_EVIDENCE: 4 of 12 rows did not pass, in 2 cluster(s)")
    assert [(r["case_id"], r["run_id"]) for r in rows] == [("c0", a.run_id), ("c0", b.run_id), ("c3", a.run_id),
                                                           ("c3", b.run_id)]
    assert "epoch" not in rows[0]


#: Epoch e of a case answers ``input["plan"][e - 1]`` ("boom": the case run raises, so its rows are ``missing``).
PLANNED = '''
class Planned:
    version = "planned-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input, epoch=1):
        said = input["plan"][epoch - 1]
        if said == "boom":
            raise RuntimeError("boom in epoch %d" % epoch)
        return {"steps": [], "answer": said, "status": "completed"}
'''

#: Two clusters out of alphabetical order (K before B), K's cases too (zeta before alpha), B's case between them;
#: by hand, over 3 epochs: zeta fails epoch 1 and is missing in 2, alpha fails 1 and 2 (two reasons), mid fails
#: 3, good passes all.
PLANNED_CASES = [
    {"id": "zeta", "cluster": "K", "input": {"plan": ["no", "boom", "yes"]}, "expected": {"answer": "yes"}},
    {"id": "mid", "cluster": "B", "input": {"plan": ["yes", "yes", "no"]}, "expected": {"answer": "yes"}},
    {"id": "alpha", "cluster": "K", "input": {"plan": ["no", "maybe", "yes"]}, "expected": {"answer": "yes"}},
    {"id": "good", "input": {"plan": ["yes", "yes", "yes"]}, "expected": {"answer": "yes"}}]
NO, MAYBE = "answer 'no' != expected 'yes'", "answer 'maybe' != expected 'yes'"
BOOM = "RuntimeError: boom in epoch 2"


def _planned_root(make_suite: Any, epochs: int = 3) -> Path:
    return make_suite(PLANNED_CASES, system="sysmod:Planned", system_code=PLANNED, epochs=epochs,
                      evaluators=[{"type": "answer_matches"}, {"type": "answer_matches", "criterion": "again"}])


def _failing_prose(md_path: Path) -> str:
    """The Markdown report's prose above the first criterion of its section of cases that did not pass."""
    return md_path.read_text(encoding="utf-8").split("## Cases that did not pass")[1].split("\n### ")[0]


def test_cases_are_listed_in_the_case_file_s_order_and_a_reduced_case_with_its_epochs(make_suite: Any,
                                                                                        tmp_path: Path,
                                                                                        plots_not_encoded: None,
                                                                                        ) -> None:
    """Clusters and cases in the order they first appear, not sorted (K before B, zeta before
    alpha), each cluster's cases and each case's rows together (alpha after zeta, though mid comes between);
    pass^2 of a case (by hand: 0 for zeta and alpha, 1 pass of 3 epochs, and 1/3 for mid, C(2,2)/C(3,2)) names
    its epochs, its verdicts (fail, then missing) and each reason once; the prose says what the epoch column is,
    and explains pass^k only when a criterion is reduced so."""
    run = op.run(op.load_suite(_planned_root(make_suite)), out=tmp_path / "run", progress=False)
    loose = {"allow_approximate_methods": True, "min_clusters": 2}
    mean = {**loose, "criteria": {"answer_matches": 0.5}}
    md, html = _both_reports(run, tmp_path, release=mean)
    assert md == html and list(md) == ["answer_matches", "again"]
    note, rows = md["answer_matches"]
    assert note == "INSUFFICIENT_EVIDENCE: 5 of 12 rows did not pass, in 2 cluster(s)."
    assert [list(r.values()) for r in rows] == [
        ["K", "zeta", "1", "fail", NO], ["K", "zeta", "2", "missing", BOOM], ["K", "alpha", "1", "fail", NO],
        ["K", "alpha", "2", "fail", MAYBE], ["B", "mid", "3", "fail", NO]]
    assert list(rows[0]) == ["cluster", "case_id", "epoch", "verdict", "reason"]
    prose = _failing_prose(tmp_path / "r.md")
    assert "`epoch`: which run of the case." in prose and "`run_id`" not in prose and "pass^k" not in prose
    # right under the gate, before the case runs that ended in error (zeta's epoch 2)
    titles = re.findall(r"^## (.*)$", (tmp_path / "r.md").read_text(encoding="utf-8"), re.M)
    assert titles[1:3] == ["Cases that did not pass", "Case runs that ended in error"]
    mixed = {**loose, "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}, "again": 0.5}}
    md, html = _both_reports(run, tmp_path, release=mixed)
    assert md == html and list(md) == ["answer_matches (pass^2)", "again"]
    note, rows = md["answer_matches (pass^2)"]
    assert note == "INSUFFICIENT_EVIDENCE: 3 of 4 cases did not pass, in 2 cluster(s)."
    assert [list(r.values()) for r in rows] == [
        ["K", "zeta", "0.000", "1, 2 of 3", "fail, missing", f"{NO}; {BOOM}"],
        ["K", "alpha", "0.000", "1, 2 of 3", "fail", f"{NO}; {MAYBE}"],
        ["B", "mid", "0.333", "3 of 3", "fail", NO]]
    assert len(md["again"][1]) == 5
    assert "lists each case whose value is below 1 once" in _failing_prose(tmp_path / "r.md")
    # pass@2, 1 - C(3-p,2)/C(3,2): 2/3 for zeta and alpha (1 pass of 3); 1 for mid (2 passes), so not listed
    md, _ = _both_reports(run, tmp_path, release={**loose, "criteria": {
        "answer_matches": {"threshold": 0.5, "reduce": "pass@2"}}})
    assert [(r["case_id"], r["pass@2"]) for r in md["answer_matches (pass@2)"][1]] == [("zeta", "0.667"),
                                                                                      ("alpha", "0.667")]


def test_a_pool_of_runs_with_epochs_lists_each_case_s_rows_by_run_then_epoch(make_suite: Any,
                                                                               tmp_path: Path,
                                                                                    plots_not_encoded: None) -> None:
    """Two runs of 3 epochs pooled: a case's rows by run, then epoch, with both columns (run_id
    before epoch) and both explained; a run of 1 epoch pooled with one of 3 still shows the epoch column."""
    root = _planned_root(make_suite)
    suite = op.load_suite(root)
    a, b = (op.run(suite, out=tmp_path / name, progress=False) for name in ("a", "b"))
    release = {"allow_approximate_methods": True, "min_clusters": 2, "criteria": {"answer_matches": 0.5}}
    md, html = _both_reports(op.load_runs([a.directory, b.directory]), tmp_path, release=release)
    assert md == html
    note, rows = md["answer_matches"]
    assert note == "INSUFFICIENT_EVIDENCE: 10 of 24 rows did not pass, in 2 cluster(s)."
    assert list(rows[0]) == ["cluster", "case_id", "run_id", "epoch", "verdict", "reason"]
    assert [(r["case_id"], r["run_id"], r["epoch"]) for r in rows] == [
        ("zeta", a.run_id, "1"), ("zeta", a.run_id, "2"), ("zeta", b.run_id, "1"), ("zeta", b.run_id, "2"),
        ("alpha", a.run_id, "1"), ("alpha", a.run_id, "2"), ("alpha", b.run_id, "1"), ("alpha", b.run_id, "2"),
        ("mid", a.run_id, "3"), ("mid", b.run_id, "3")]
    prose = _failing_prose(tmp_path / "r.md")
    assert "`run_id`: which of the pooled runs." in prose and "`epoch`: which run of the case." in prose
    once = yaml.safe_load((root / "oloproof.yaml").read_text(encoding="utf-8"))
    (root / "oloproof.yaml").write_text(yaml.safe_dump({**once, "epochs": 1}), encoding="utf-8")
    c = op.run(op.load_suite(root), out=tmp_path / "c", progress=False)
    (tmp_path / "mixed").mkdir()
    md, _ = _both_reports(op.load_runs([c.directory, a.directory]), tmp_path / "mixed", release=release)
    assert [(r["case_id"], r["run_id"], r["epoch"]) for r in md["answer_matches"][1]] == [
        ("zeta", c.run_id, "1"), ("zeta", a.run_id, "1"), ("zeta", a.run_id, "2"), ("alpha", c.run_id, "1"),
        ("alpha", a.run_id, "1"), ("alpha", a.run_id, "2"), ("mid", a.run_id, "3")]


@pytest.mark.parametrize("failing", [20, 21])
def test_twenty_failing_cases_are_all_listed_and_twenty_one_say_one_more(make_suite: Any, tmp_path: Path,
                                                                           failing: int,
                                                                           plots_not_encoded: None) -> None:
    """The cap of 20: 20 failing cases (of 22, by hand) are all listed with no "more"; 21 list
    the first 20 "and 1 more"."""
    cases = [{"id": f"c{i:02d}", "input": {"answer": "no" if i < failing else "ok", "n": i},
              "expected": {"answer": "ok"}} for i in range(22)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.9}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    md, html = _both_reports(run, tmp_path)
    assert md == html
    note, rows = md["answer_matches"]
    assert [r["case_id"] for r in rows] == [f"c{i:02d}" for i in range(20)]
    more = "" if failing == 20 else "; the first 20 below, and 1 more (run.verdicts holds them)"
    assert note == f"FAIL: {failing} of 22 cases did not pass, in {failing} cluster(s){more}."
    prose = _failing_prose(tmp_path / "r.md")  # one run of one epoch: neither column, nor pass^k, is explained
    assert "at most 20 per criterion" in prose and "`epoch`" not in prose and "`run_id`" not in prose
    assert "pass^k" not in prose


def test_a_replay_the_cache_repeated_is_not_an_epoch_of_its_own(tmp_path: Path,
                                                                    plots_not_encoded: None) -> None:
    """A bug a mutant showed: two runs of 2 epochs pooled, the second taking every fault replay from the
    replay cache. The gate counts each repeated replay once (pass^2 of 2 tries a case); the report listed its
    epochs twice, ``2, 2 of 2``. By hand (the desk recovers in epoch e of case n when (n + e) % 3 != 0): b1, b4
    and b7 fail epoch 2, b2 and b5 epoch 1. pass^4 reduces no case (2 tries each), and lists none."""
    from _epoch_systems import recovering_desk_suite

    suite = op.load_suite(recovering_desk_suite(tmp_path / "suite"))
    first, cached = (op.run(suite, out=tmp_path / name, progress=False) for name in ("first", "cached"))
    assert cached.replays["cached"].all()
    criterion = "recovers_from_error_at_pay"
    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {criterion: {"threshold": 0.05, "reduce": "pass^2"}}}
    md, html = _both_reports(op.load_runs([first.directory, cached.directory]), tmp_path, release=release)
    assert md == html
    note, rows = md[f"{criterion} (pass^2)"]
    assert note.startswith("PASS: 5 of 8 cases did not pass, in 5 cluster(s)")
    one, two = f"1 in {first.run_id}", f"2 in {first.run_id}"  # pooled: each epoch with its run
    assert [(r["case_id"], r["pass^2"], r["epochs not passed"]) for r in rows] == [
        ("b1", "0.000", f"{two} of 2"), ("b2", "0.000", f"{one} of 2"), ("b4", "0.000", f"{two} of 2"),
        ("b5", "0.000", f"{one} of 2"), ("b7", "0.000", f"{two} of 2")]
    # pass^4 of the pool: each case has 2 tries of its own, fewer than 4, so none is reduced or listed
    release["criteria"][criterion]["reduce"] = "pass^4"
    md, _ = _both_reports(op.load_runs([first.directory, cached.directory]), tmp_path, release=release)
    note, rows = md[f"{criterion} (pass^4)"]
    assert rows == [] and note.startswith("INSUFFICIENT_EVIDENCE, with no cases that did not pass: too_few_epochs")


def test_the_note_of_a_criterion_with_no_case_to_name_quotes_the_run_as_text(make_suite: Any,
                                                                                tmp_path: Path) -> None:
    """A gated criterion with no row (a fault_recovery whose tool no case called) gets a note
    and no table; its reason quotes the tool's name, the user's text (`**`, `<i>`, `|`, backticks), shown as it is
    in both reports, never as markup, and no empty table or raw file stands under it. A criterion passed (gated,
    or REPORT_ONLY) with no row that did not pass is not listed."""
    tool = "**pay**_<i>x</i>|`y`"
    criterion = f"recovers_from_error_at_{tool}"
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"},
                                         {"type": "fault_recovery", "tool": tool, "fault": "error"},
                                         {"type": "answer_matches", "criterion": "not_gated"}],
                      release={"criteria": {"answer_matches": 0.1, criterion: 0.5}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    with pytest.warns(UserWarning, match="no case called tool"):
        md, html = _both_reports(run, tmp_path)
    assert md == html
    said = (f"INSUFFICIENT_EVIDENCE, with no cases that did not pass: no_evidence; fault_recovery (criterion "
            f"{criterion}): no case called tool '{tool}', so no fault was replayed; no case called any tool.")
    assert md == {criterion: (said, [])}
    with pytest.warns(UserWarning, match="no case called tool"):
        page = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    _no_active_markup(Page(page), allowed_images=1)  # the gate plot
    section = page.split("Cases that did not pass</h2>")[1].split("<h2")[0]
    assert "<table" not in section and 'class="tables"' not in section and "<i>" not in section
    assert not (tmp_path / "r_files" / "failing_2.csv").exists()


def test_a_report_of_a_run_resumed_after_a_kill_says_its_case_run_in_flight_ran_again(tmp_path: Path,
                                                                                      plots_not_encoded: None) -> None:
    """Before, only ``oloproof gate`` said a run's case run in flight ran again after a kill; a report of its
    PASS said nothing. Both formats now say it in the gate's section, and a report of a run never stopped does
    not."""
    from _reliability_systems import EVALUATORS, killed_then_resumed, standard_cases, write_suite

    root = write_suite(tmp_path / "suite", standard_cases(6), evaluators=EVALUATORS,
                       release={"criteria": {"answer_matches": 0.2}})
    resumed = killed_then_resumed(root, tmp_path / "resumed", "c4")
    # counted by hand: one end, no parent process to see it, c4 (epoch 1) run again
    line = ("Resumed after 1 abrupt end of the run's process (not seen by oloproof run); the 1 case run in flight "
            "was run again: case 'c4'; isolation: process judges a crash as the case's error.")
    html = write_report(resumed, tmp_path / "r.html").read_text(encoding="utf-8")
    md = write_report(resumed, tmp_path / "r.md").read_text(encoding="utf-8")
    assert f"<p>{line.replace(chr(39), '&#39;')}</p>" in html
    gate_section = md[md.index("## Release gate"):]
    assert line in render_markdown(gate_section[:gate_section.index("\n## ")]).text  # as shown, in its section
    clean = op.run(op.load_suite(root), out=tmp_path / "clean", progress=False)
    for name in ("c.html", "c.md"):  # no line, nor an empty sentence ('.') where it would be
        text = write_report(clean, tmp_path / name).read_text(encoding="utf-8")
        assert "abrupt" not in text and "<p>.</p>" not in text and "\n.\n" not in text
    pooled = op.load_runs([clean.directory, resumed.directory])  # a pool: the end of each of its runs
    assert f"<p>{line.replace(chr(39), '&#39;')}</p>" in write_report(pooled, tmp_path / "p.html").read_text(
        encoding="utf-8")


def test_a_report_given_settings_weaker_than_release_yaml_now_says_they_were_given(make_suite: Any,
                                                                                  tmp_path: Path,
                                                                               plots_not_encoded: None) -> None:
    """A run made while release.yaml was loosened (answer_matches 0.1), the file put back (0.9): a
    report given the loosened settings in code said nothing of them (they equal the run's own); now it says they
    were given, and weaker than the file as it is now, not that they were the run's stored ones."""
    cases = [{"id": f"c{i}", "input": {"answer": "done" if i < 8 else "oops", "n": i}, "expected": {"answer": "done"}}
             for i in range(10)]
    loose = {"criteria": {"answer_matches": 0.1}}
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release=loose)
    run = op.run(root, progress=False)
    (root / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.9}}), encoding="utf-8")
    text = write_report(run, tmp_path / "r.md", release=loose).read_text(encoding="utf-8")
    assert "the 1 gated criterion passes, by 1 setting weaker than" in text
    assert (f"Gated with the settings given: 1 setting weaker than {root / 'release.yaml'} as it is now: "
            "criteria.answer_matches 0.9 → 0.1.") in text


def test_a_report_says_what_changed_in_the_suite_since_the_run(tmp_path: Path, plots_not_encoded: None) -> None:
    """``oloproof gate`` warns on stderr, and ``op.gate`` in a notebook, when a label file (or release.yaml, the case
    file) of the suite changed since the run; the report file said nothing of it: a copy the labels
    now call valid, whose failing rows the run leaves out, read as an ordinary 'Copies labeled invalid' line."""
    root = init_example("stateful-agent", tmp_path / "suite")
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    labels = root / "labels" / "injected.jsonl"
    lines = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    for label in lines:
        label["valid"] = label["valid"] or label["case_id"] == "ord-018~injected"
    labels.write_text("".join(json.dumps(label) + "\n" for label in lines), encoding="utf-8")
    for suffix in ("md", "html"):
        with pytest.warns(UserWarning, match="differs from the validity labels"):
            text = write_report(run, tmp_path / f"report.{suffix}").read_text(encoding="utf-8")
        said = [line for line in text.splitlines() if "Changed since the run: " in line]
        assert len(said) == 1 and str(labels) in said[0], suffix
        assert re.search(r"transform injected: ord-018\\?~injected is labeled otherwise", said[0]), suffix


def test_a_report_says_each_change_in_the_suite_since_the_run(make_suite: Any, tmp_path: Path,
                                                              plots_not_encoded: None) -> None:
    """The test above changes one file; a gate may hold several changes (``Gate.drift``), and the
    report writes each on a line of its own. release.yaml (a threshold) and the case file (a case added) both
    changed after the run: two lines, one naming each file."""
    cases = [{"id": f"c{i}", "input": {"answer": "done", "n": i}, "expected": {"answer": "done"}} for i in range(6)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.1}})
    run = op.run(root, progress=False)
    (root / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.2}}), encoding="utf-8")
    case_file = root / "cases.jsonl"
    extra = {"id": "c6", "input": {"answer": "done", "n": 6}, "expected": {"answer": "done"}}
    case_file.write_text(case_file.read_text(encoding="utf-8") + json.dumps(extra) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning) as warned:  # the same changes, warned of as the report is written
        text = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    assert sum("differs from" in str(w.message) for w in warned) == 2
    said = [line for line in text.splitlines() if "Changed since the run: " in line]
    assert len(said) == 2
    assert sum(str(root / "release.yaml") in line for line in said) == 1
    assert sum(str(case_file) in line for line in said) == 1


def test_a_report_of_more_criteria_than_a_plot_shows_says_so_instead_of_the_gate_plot(
        make_suite: Any, tmp_path: Path) -> None:
    """``op.plots.gate`` refuses a table of more than 100 rows (a figure of 101 is over 50 inches tall): the report
    of a suite of 101 criteria says why it has no gate plot, and its table keeps every criterion."""
    cases = [{"id": "c0", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]
    root = make_suite(cases, evaluators=[{"type": "answer_matches", "criterion": f"answer_{i:03d}"}
                                         for i in range(101)])
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    text = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "No gate plot: 101 criteria, and a plot shows at most 100; the table holds them all." in text
    assert "answer_000" in text and "answer_100" in text
    assert text.count("data:image/png;base64,") == 0


def test_a_report_of_more_transforms_than_a_plot_shows_says_so_instead_of_the_validity_plot(
        make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``op.plots.validity`` refuses a table of more rows than ``PLOT_ROWS`` as the gate plot does: the report says
    why it has no validity plot (here with the limit set to 1 and a suite of 2 transforms), and its table keeps
    every transform; with the limit at 2 the plot is drawn."""
    from oloproof_nb._display import plots

    cases = [{"id": "c0", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]
    transforms = [{"name": name, "field": "answer", "template": "{value}!", "validity_labels": f"labels/{name}.jsonl",
                   "minimum_validity": 0.5} for name in ("shout", "shout_again")]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], metamorphic={"transforms": transforms})
    (root / "labels").mkdir()
    for transform in transforms:
        (root / transform["validity_labels"]).write_text("", encoding="utf-8")
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    monkeypatch.setattr(plots, "PLOT_ROWS", 1)
    text = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "No validity plot: 2 transforms, and a plot shows at most 1; the table holds them all." in text
    assert "shout_again" in text and "validity.png" not in text
    monkeypatch.setattr(plots, "PLOT_ROWS", 2)
    text = write_report(run, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "No validity plot" not in text and "validity.png" in text


def test_a_report_of_as_many_criteria_as_a_plot_shows_has_its_gate_plot(make_suite: Any, tmp_path: Path) -> None:
    cases = [{"id": "c0", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]
    root = make_suite(cases, evaluators=[{"type": "answer_matches", "criterion": f"answer_{i:03d}"}
                                         for i in range(100)])
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    text = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "No gate plot" not in text
    assert text.count("data:image/png;base64,") == 1  # the gate plot, the run's only figure
