"""A Markdown report written over an earlier one keeps none of the earlier report's files of another run, and a
report says what ``missing`` counts for a criterion reduced over epochs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import oloproof_nb as op  # noqa: E402
from oloproof_nb._display import report as report_module  # noqa: E402
from oloproof_nb._display.report import write_report  # noqa: E402
from oloproof_nb.cli import main  # noqa: E402
from oloproof_nb.errors import ExportError  # noqa: E402

ANSWER = [{"type": "answer_matches"}]


def _run(make_suite: Any, tmp_path: Path, name: str, answers: list[str], **config: Any) -> op.Run:
    cases = [{"id": f"c{i}", "input": {"answer": a, "n": i}, "expected": {"answer": "ok"}}
             for i, a in enumerate(answers)]
    root = make_suite(cases, evaluators=ANSWER, release={"criteria": {"answer_matches": 0.3}}, folder=name,
                      **config)
    return op.run(op.load_suite(root), out=tmp_path / f"{name}-run", progress=False)


def _linked(report: Path) -> set[str]:
    """The files of ``<stem>_files/`` the Markdown report links, read from its text."""
    return {m.group(1) for m in re.finditer(rf"\]\({re.escape(report.stem)}_files/([^)]+)\)",
                                            report.read_text(encoding="utf-8"))}


def test_a_markdown_report_over_an_earlier_one_leaves_none_of_its_files_of_another_run(make_suite: Any,
                                                                                       tmp_path: Path) -> None:
    """The first run has a failing case (c1: by hand, 1 of 4) and a slice: its report writes failing_1.csv and the
    slice's table and plot. The second run passes every case and declares no slice: its report, written to the same
    r.md, has no section of cases that did not pass. Before, r_files/ kept failing_1.csv (c1 failing, of the first
    run) and the slice's files beside a report that names neither; now it holds the new report's files, and a file
    of the user's there is kept."""
    first = _run(make_suite, tmp_path, "first", ["ok", "no", "ok", "ok"], slices=["tool_calls:1"])
    second = _run(make_suite, tmp_path, "second", ["ok", "ok", "ok", "ok"])
    assert (first.verdicts["verdict"] == "fail").sum() == 1 and (second.verdicts["verdict"] == "pass").all()
    out, files = tmp_path / "r.md", tmp_path / "r_files"
    assert main(["report", str(first.directory), "--out", str(out)]) == 1  # 3 of 4: the lower end 0.194 < 0.3
    assert {"failing_1.csv", "slice_tool_calls_1.csv", "slice_tool_calls_1.png"} <= _linked(out)
    assert {p.name for p in files.iterdir()} == _linked(out)
    (files / "mine.txt").write_text("kept\n", encoding="utf-8")  # not a file any report linked
    assert main(["report", str(second.directory), "--out", str(out)]) == 0  # 4 of 4: 0.025^(1/4) = 0.398 ≥ 0.3
    assert "Cases that did not pass" not in out.read_text(encoding="utf-8")
    assert _linked(out) == {"gate.csv", "gate.png"}
    assert {p.name for p in files.iterdir()} == {"gate.csv", "gate.png", "mine.txt"}
    assert (files / "mine.txt").read_text(encoding="utf-8") == "kept\n"
    assert "c1" not in (files / "gate.csv").read_text(encoding="utf-8")


def test_a_stale_file_that_cannot_be_removed_is_one_line_naming_it(make_suite: Any, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    plots_not_encoded: None) -> None:
    """A file the earlier report wrote that cannot be removed is named, never left silently beside the report."""
    first = _run(make_suite, tmp_path, "first", ["ok", "no", "ok", "ok"])
    second = _run(make_suite, tmp_path, "second", ["ok", "ok", "ok", "ok"])
    out = tmp_path / "r.md"
    write_report(first, out)
    stale = tmp_path / "r_files" / "failing_1.csv"
    unlink = Path.unlink

    def refuse(self: Path, missing_ok: bool = False) -> None:
        if self == stale:
            raise PermissionError(13, "Permission denied", str(self))
        unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(report_module.Path, "unlink", refuse)
    with pytest.raises(ExportError, match=rf"^{re.escape(str(stale))}: written by the earlier report at "
                                          rf"{re.escape(str(out))}, not by this one, and cannot be removed "
                                          r"\(Permission denied\)"):
        write_report(second, out)
    assert stale.is_file()


def test_only_files_an_earlier_report_linked_in_its_own_folder_are_removed(make_suite: Any, tmp_path: Path,
                                                                           plots_not_encoded: None) -> None:
    """The earlier report is read for its links only: a link out of ``<stem>_files/`` (``../x``, another folder) is
    no file of its folder, and a folder in ``<stem>_files/`` named as a linked file is left alone."""
    run = _run(make_suite, tmp_path, "only", ["ok", "ok", "ok", "ok"])
    out, files = tmp_path / "r.md", tmp_path / "r_files"
    write_report(run, out)
    (tmp_path / "x.csv").write_text("mine\n", encoding="utf-8")
    (tmp_path / "other_files").mkdir()
    (tmp_path / "other_files" / "y.csv").write_text("mine\n", encoding="utf-8")
    (files / "z.csv").mkdir()
    text = out.read_text(encoding="utf-8")
    out.write_text(text + "Raw numbers: [x](r_files/../x.csv)\n\nRaw numbers: [y](other_files/y.csv)\n\n"
                   "![z](r_files/z.csv)\n", encoding="utf-8")
    write_report(run, out)
    assert (tmp_path / "x.csv").is_file() and (tmp_path / "other_files" / "y.csv").is_file()
    assert (files / "z.csv").is_dir()


def test_a_reduced_criterion_s_missing_is_said_and_counts_the_cases_whose_every_epoch_is_missing(
        make_suite: Any, tmp_path: Path, plots_not_encoded: None) -> None:
    """With pass^2, the gate's ``missing`` counts cases whose every epoch is missing, not missing rows: a case
    with one missing epoch of two counts 0. By hand: c0 raises in both epochs, c1 in its first only, so 3 rows
    are missing and 1 case; the report's sentence on reduced criteria says what ``missing`` counts, as the terminal
    showed ``miss 1`` beside 3 case runs that ended in error with no word on it."""
    code = '''
class Flaky:
    version = "flaky-1"
    seen = {}
    def reset(self, state):
        pass
    def snapshot(self):
        return {}
    def run(self, input):
        n = Flaky.seen[input["n"]] = Flaky.seen.get(input["n"], 0) + 1
        if input["n"] == 0 or (input["n"] == 1 and n == 1):
            raise RuntimeError("boom")
        return {"steps": [], "answer": "ok", "status": "completed"}
'''
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(4)]
    root = make_suite(cases, evaluators=ANSWER, system="sysmod:Flaky", system_code=code, epochs=2,
                      release={"criteria": {"answer_matches": {"threshold": 0.3, "reduce": "pass^2"}},
                               "allow_approximate_methods": True})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    v = run.verdicts
    assert (v["verdict"] == "missing").sum() == 3
    every_epoch_missing = v.groupby("case_id")["verdict"].apply(lambda s: (s == "missing").all())
    assert every_epoch_missing.sum() == 1
    row = op.gate(run).table.iloc[0]
    assert (row["reduce"], row["n"], row["missing"]) == ("pass^2", 4, 1)
    sentence = ("its n counts cases, passed the cases whose value is 1, missing the cases whose every epoch is "
                "missing, and rate is the mean of the cases' values")
    for suffix in (".md", ".html"):
        text = write_report(run, tmp_path / f"r{suffix}").read_text(encoding="utf-8")
        assert sentence.replace("'", "&#39;" if suffix == ".html" else "'") in text
