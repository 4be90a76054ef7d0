"""The set-up's first command prints a gate table before its last line; the set-up says where that table is read
(its columns in section 8, its reasons in section 6), and what it quotes is what the bundled example prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oloproof_nb.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _between(text: str, heading: str, following: str) -> str:
    """The README's text from ``heading`` to the ``following`` heading, its whitespace made single spaces (a code
    fence's ``# comment`` lines are no headings, so the two are named)."""
    start = text.index(f"\n{heading}\n")
    return " ".join(text[start:text.index(f"\n{following}\n", start)].split())


def test_the_set_up_names_where_its_table_is_read_and_quotes_what_the_example_prints(
        example_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    set_up = _between(text, "## Set-up: two commands", "## Contents")
    assert "[section 8](#8-the-command-line)" in set_up and "[section 6](#6-the-release-gate)" in set_up
    quoted = re.findall(r"`(degenerate: [^`]+)`", set_up)
    assert len(quoted) == 1
    # by hand: other_order_untouched passes all 47 rows, 23 clusters of two rows and ord-018's of one, so
    # n_min = (Σm)²/Σm² = 47²/(23·2² + 1²) = 2209/93 = 23.75
    assert quoted[0] == f"degenerate: all 47 rows pass; clopper_pearson on n_min={2209 / 93:.2f}"

    assert main(["run", str(example_suite), "--out", str(tmp_path / "run"), "--quiet"]) == 1
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("| criterion"))
    assert [cell.strip() for cell in header.strip("|").split("|")][1:4] == ["n", "pass", "miss"]
    assert "| thr " in header and "| REPORT_ONLY |" in printed
    assert quoted[0] in " ".join(printed.split())  # the reason, unwrapped

    # where the set-up sends the reader: the columns, and n_min with the word degenerate
    command_line = _between(text, "### 8. The command line",
                            "### 9. Scale: parallel sandboxes, big runs, several runs, more than one machine")
    assert "`pass`(ed), `miss`(ing)" in command_line and "`thr`(eshold)" in command_line
    gate = _between(text, "### 6. The release gate", "### 6a. Comparing two versions: did the new one get worse?")
    assert "n_min = (Σm)²/Σm² and say `degenerate` in the reason" in gate
