"""`oloproof report`: a standalone HTML file (tables + embedded PNGs), or Markdown with files beside it."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import oloproof_nb as op  # noqa: E402
from oloproof_nb.cli import main  # noqa: E402
from oloproof_nb.examples import init_example  # noqa: E402
from oloproof_nb._display.report import write_report  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    root = init_example("stateful-agent", tmp_path_factory.mktemp("report") / "suite")
    return op.run(op.load_suite(root), out=root.parent / "run", progress=False)


def test_html_report_is_standalone_with_tables_and_images(example_run: op.Run, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(example_run.directory), "--out", str(out)]) == 0  # exit 0 even though BLOCK
    assert op.gate(example_run).verdict == "BLOCK"
    assert capsys.readouterr().out.strip() == f"wrote {out}"
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

    raw = pd.read_csv(out.parent / "report_files" / "gate.csv")
    assert raw["ci_low"].tolist() == op.gate(example_run).table["ci_low"].tolist()


def test_report_without_transforms_replays_or_slices(make_suite: Any, tmp_path: Path) -> None:
    cases = [{"id": f"c{i}", "input": {"answer": "ok"}, "expected": {"answer": "ok"}} for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    text = write_report(run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert ">Release gate</h2>" in text and ">Transform validity</h2>" not in text
    assert ">Fault replays</h2>" not in text and "No slices declared" in text
    assert text.count("data:image/png;base64,") == 1


def test_report_errors_are_one_line_exit_2(example_run: op.Run, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(example_run.directory), "--out", str(tmp_path / "r.pdf")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".html or .md" in err
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.pdf").exists()


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
