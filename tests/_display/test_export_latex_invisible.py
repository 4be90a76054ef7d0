"""``.tex`` exports: a bidirectional control or an invisible character in a cell is written as its escape, as the
``.md`` and ``.html`` exports show it, never raw."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import oloproof_nb as op
from oloproof_nb.errors import terminal_text

#: A right-to-left override, a zero-width space, a left-to-right isolate and its pop, a no-break space.
INVISIBLE = ("\u202e", "\u200b", "\u2066", "\u2069", "\xa0")


def test_a_bidirectional_control_in_a_latex_cell_is_written_as_its_escape(tmp_path: Path) -> None:
    """Left raw, ``rtl\\u202eexe.txt`` read ``rtltxt.exe`` in the ``.tex`` file as an editor or a terminal shows it
    (the rest of the row reversed), and a zero-width space made two case ids look the same; in a header too."""
    table = pd.DataFrame({"case\u200bid": ["rtl\u202eexe.txt", "a\u2066b\u2069c", "x\xa0y"], "rate": [0.5, 1.0, 0.25]})
    text = op.export_table(table, tmp_path / "t.tex").read_text(encoding="utf-8")
    assert not any(ch in text for ch in INVISIBLE)
    lines = text.splitlines()
    assert lines[2] == "case\\textbackslash{}u200bid & rate \\\\"
    assert lines[4:7] == ["rtl\\textbackslash{}u202eexe.txt & 0.5 \\\\",
                          "a\\textbackslash{}u2066b\\textbackslash{}u2069c & 1.0 \\\\",
                          "x\\textbackslash{}xa0y & 0.25 \\\\"]
    # the escape the .md and .html exports show, and the terminal, for each character
    assert [terminal_text(ch) for ch in INVISIBLE] == ["\\u202e", "\\u200b", "\\u2066", "\\u2069", "\\xa0"]


def test_a_latex_cell_keeps_printable_text_and_makes_a_control_character_a_space(tmp_path: Path) -> None:
    """Printable text other than LaTeX's specials is written as it is (accents, ``≥`` as ``$\\geq$``); a control
    character or a line break is still a space, as before."""
    table = pd.DataFrame({"reason": ["café ≥ 0.8", "a\x1bb\nc"]})
    text = op.export_table(table, tmp_path / "t.tex").read_text(encoding="utf-8")
    assert text.splitlines()[4:6] == ["café $\\geq$ 0.8 \\\\", "a b c \\\\"]
