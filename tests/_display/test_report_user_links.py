"""A Markdown report written over an earlier one removes the earlier report's own files only.

The report once read every ``![label](<stem>_files/name)`` and ``Raw numbers: [label](<stem>_files/name)`` line
of the earlier report as a file it wrote. A line the user added to the report (an image of theirs beside the gate
plot) named a file of theirs, which the next report removed. Only the lines the report writes itself now count: a plot's
``![<name> plot](…)``, a table's ``Raw numbers: [<folder>/<name>](…)`` with the target as its label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import oloproof_nb as op  # noqa: E402
from oloproof_nb._display.report import write_report  # noqa: E402

ANSWER = [{"type": "answer_matches"}]


def _run(make_suite: Any, tmp_path: Path, name: str, answers: list[str]) -> op.Run:
    cases = [{"id": f"c{i}", "input": {"answer": a, "n": i}, "expected": {"answer": "ok"}}
             for i, a in enumerate(answers)]
    root = make_suite(cases, evaluators=ANSWER, release={"criteria": {"answer_matches": 0.3}}, folder=name)
    return op.run(op.load_suite(root), out=tmp_path / f"{name}-run", progress=False)


def test_a_file_the_user_linked_in_the_earlier_report_is_kept(make_suite: Any, tmp_path: Path) -> None:
    """Mutant caught: reading any link line of the earlier report as its own (the user's photo.png and notes.csv
    were removed). The earlier report's failing_1.csv, of the other run, still goes."""
    first = _run(make_suite, tmp_path, "first", ["ok", "no", "ok", "ok"])
    second = _run(make_suite, tmp_path, "second", ["ok", "ok", "ok", "ok"])
    out, files = tmp_path / "r.md", tmp_path / "r_files"
    write_report(first, out)
    assert (files / "failing_1.csv").is_file()
    (files / "photo.png").write_bytes(b"mine")
    (files / "notes.csv").write_text("mine\n", encoding="utf-8")
    with out.open("a", encoding="utf-8") as handle:  # the user annotates the report
        handle.write("\n![my photo](r_files/photo.png)\n\nRaw numbers: [my notes](r_files/notes.csv)\n")
    write_report(second, out)
    assert (files / "photo.png").read_bytes() == b"mine"
    assert (files / "notes.csv").read_text(encoding="utf-8") == "mine\n"
    assert not (files / "failing_1.csv").exists()
    assert {p.name for p in files.iterdir()} == {"gate.csv", "gate.png", "photo.png", "notes.csv"}
