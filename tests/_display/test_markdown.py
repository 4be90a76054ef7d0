"""The one Markdown writer: whatever a cell holds, a CommonMark reader shows it as text, never as markup.

Checked with an outside reader: markdown-it-py (CommonMark with GitHub tables and raw HTML
allowed, as GitHub and most previewers render) and the standard library's HTML parser.
"""

from __future__ import annotations

import re
import unicodedata

import pandas as pd
import pytest
from _hostile_files import HOSTILE_TEXTS, Page, render_markdown

from oloproof_nb._display.markdown import markdown_table, md_cell, md_code, md_link, terminal_text, text_table


def _shown(text: str) -> str:
    """What a reader should see of ``text`` in one line: line breaks as spaces."""
    return " ".join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_a_table_cell_renders_as_its_text_and_nothing_else(text: str) -> None:
    """Before: ``![x](https://…)`` rendered a remote image and ``[approve](…)`` a link."""
    page = render_markdown(markdown_table(pd.DataFrame({"case_id": [text], "n": [1]})))
    assert page.active() == []
    assert page.rows == [["case_id", "n"], [_shown(text).strip(), "1"]]


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_prose_renders_as_its_text(text: str) -> None:
    page = render_markdown(f"Run of suite {md_cell(text)}.")
    assert page.active() == [] and [tag for tag, _ in page.elements] == ["p"]
    assert page.text.strip() == f"Run of suite {_shown(text)}."


@pytest.mark.parametrize("text", ["refund_$50_to_$100", "answer 'refund $50' != expected '$100'", "$$x$$", "\\$a$"])
def test_dollars_are_never_a_formula(text: str) -> None:
    """GitHub renders the text between two ``$`` as a formula (a criterion ``refund_$50_to_$100``
    showed as ``refund_`` + math + ``100``); md_cell escapes every ``$``. Read as GitHub does, with the dollar-math
    extension: the cell and the line are their text, no math element."""
    from markdown_it import MarkdownIt

    dollarmath = pytest.importorskip("mdit_py_plugins.dollarmath")
    reader = MarkdownIt("commonmark", {"html": True}).use(dollarmath.dollarmath_plugin).enable(["table"])
    line = reader.render(f"Run of suite {md_cell(text)}.")
    table = reader.render(markdown_table(pd.DataFrame({"criterion": [text]})))
    assert "math" not in line and "math" not in table, (line, table)
    assert Page(line).text.strip() == f"Run of suite {text}."
    assert Page(table).rows == [["criterion"], [text]]


def test_only_a_styled_table_writes_checked_and_minimum_validity_as_the_report_shows_them() -> None:
    """``checked`` as ``checked``/``no`` and ``minimum_validity`` with every digit are the report's
    (``styled=True``); an unstyled table, as ``.md`` exports write it, keeps the raw values as CSV has them: the
    booleans ``False``/``True`` and 0.9584 (with ``checked`` rewritten in every table, an export said ``no``)."""
    from oloproof_nb._display.theme import fmt_number

    table = pd.DataFrame({"transform": ["injected", "reworded"], "minimum_validity": [0.9584, 0.85],
                          "checked": [False, True]})

    def cells(text: str) -> list[list[str]]:
        return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()[2:]]

    assert cells(markdown_table(table)) == [["injected", "0.9584", "False"], ["reworded", "0.85", "True"]]
    assert cells(markdown_table(table, fmt_number, styled=True)) == [["injected", "0.9584", "no"],
                                                                     ["reworded", "0.850", "checked"]]


@pytest.mark.parametrize("text", ["v1", "a`b", "``", "`x", "x`", "v1\r\n2", "<script>alert(1)</script>", "a ` `` b",
                                  " padded ", "  "])
def test_a_code_span_holds_any_backticks(text: str) -> None:
    page = render_markdown(f"version {md_code(text)} ok")
    assert [tag for tag, _ in page.elements] == ["p", "code"]  # one span; no backtick ended it early
    assert page.text.strip() == f"version {_shown(text)} ok"


def test_a_link_to_a_file_keeps_its_target() -> None:
    page = render_markdown(md_link("r [1] files/gate.csv", "r [1] files/gate (2).csv"))
    assert page.tags("a") == [{"href": "r%20%5B1%5D%20files/gate%20%282%29.csv"}]
    page = render_markdown(md_link("gate plot", "r_files/gate.png", image=True))
    assert page.tags("img") == [{"src": "r_files/gate.png", "alt": "gate plot"}]


@pytest.mark.parametrize("text", ["gate: PASS\r", "\x1b[2J\x1b[32mPASS", "abc\u202edef", "a\nb", "tab\there", "\x00"])
def test_terminal_text_has_no_character_a_terminal_acts_on(text: str) -> None:
    shown = terminal_text(text)
    assert all(ch.isprintable() for ch in shown)
    assert shown.encode("ascii", "ignore").decode("unicode_escape") == text  # the escapes read back
    table = text_table([[text, "1"]], ["criterion", "n"])
    assert not any(unicodedata.category(ch) in ("Cc", "Cf") for ch in table.replace("\n", ""))
    assert len(table.splitlines()) == 3


def test_a_bidirectional_control_is_shown_as_its_escape() -> None:
    """``rtl\u202eexe.txt`` was written as it is: a reader saw ``rtltxt.exe``."""
    page = render_markdown(markdown_table(pd.DataFrame({"case_id": ["rtl\u202eexe.txt", "a\u2066b\u2069"]})))
    assert page.rows == [["case_id"], ["rtl\\u202eexe.txt"], ["a\\u2066b\\u2069"]]


@pytest.mark.parametrize("text", ["x\x1b[2Kgate: PASS\x1b[8m", "bell\x07", "csi\x9b2J", "rtl\u202eexe.txt", "nul\x00"])
def test_a_control_character_is_shown_as_its_escape_in_cells_and_code(text: str) -> None:
    """Before, ``md_cell`` wrote an ESC as it was (``cat report.md`` erased a line, ESC[8m hid the rest), and
    ``md_code`` — the run id, suite name and system version in the report's header — also a bidirectional
    control (U+202E reversed the header line). Both now write each as its escape, as the terminal does."""
    assert md_cell(text).isprintable() and md_code(text).isprintable()
    page = render_markdown(f"run {md_code(text)} of {md_cell(text)}")
    assert [tag for tag, _ in page.elements] == ["p", "code"]
    assert page.text.strip() == f"run {terminal_text(text)} of {terminal_text(text)}"


@pytest.mark.parametrize("ch", ["\u200b", "\u2028", "\u2029", "\xa0", "\ufeff", "\U000e0001", "\x85", "\u202e", "\x7f"])
def test_a_report_shows_as_an_escape_every_character_the_terminal_does(ch: str) -> None:
    """One rule of what is shown as an escape: before, the Markdown table listed bidi and C0/C1 controls only,
    so a zero-width space, a line separator or a no-break space in a case id was an escape on the terminal and
    an invisible character (or a line break) in report.md."""
    text = f"id{ch}x"
    assert not ch.isprintable()
    for written in (md_cell(text), md_code(text)):
        assert ch not in written and terminal_text(ch) in written


@pytest.mark.parametrize("text", ["&#60;b&#62;x&#60;/b&#62;", "&#x3C;i&#x3E;", "&copy; &amp; &#169;"])
def test_a_numeric_or_named_character_reference_is_shown_as_written(text: str) -> None:
    """A reader decodes ``&#60;`` to ``<``: the cell would show another text than the one written."""
    page = render_markdown(markdown_table(pd.DataFrame({"case_id": [text], "n": [1]})))
    assert page.active() == [] and page.rows == [["case_id", "n"], [text, "1"]]
    assert render_markdown(f"Run of suite {md_cell(text)}.").text.strip() == f"Run of suite {text}."


def test_one_long_cell_does_not_widen_every_line_of_its_column() -> None:
    """Before, each column was padded to its widest cell, so one long answer widened every line: 5,000 rows
    beside one answer of 20,000 characters exported to ``.md`` made a 100 MB file (its CSV: 64 KB). A cell wider
    than MD_PAD_LIMIT is now written unpadded, and the other lines stay as narrow as their cells."""
    long = "y" * 5000
    df = pd.DataFrame({"case_id": [f"c{i:02d}" for i in range(50)], "answer": ["ok"] * 24 + [long] + ["ok"] * 25})
    text = markdown_table(df)
    lines = text.splitlines()
    assert len(lines) == 52 and long in lines[26]
    assert max(len(line) for i, line in enumerate(lines) if i != 26) < 30  # "| c00       | ok       |"
    page = render_markdown(text)
    assert page.rows == [["case_id", "answer"], *([f"c{i:02d}", long if i == 24 else "ok"] for i in range(50))]


def test_a_cell_at_the_pad_limit_is_padded_and_a_long_one_keeps_its_text() -> None:
    """The cells around the limit, and long cells whose text looks like the placeholder a long cell is held by
    while the table is laid out (a NUL is written as its escape, so no cell can be taken for one)."""
    from oloproof_nb._display.markdown import MD_PAD_LIMIT

    at, over = "a" * MD_PAD_LIMIT, "b" * (MD_PAD_LIMIT + 1)
    lines = markdown_table(pd.DataFrame({"x": [at, "s"]})).splitlines()
    assert len(lines[2]) == len(lines[3]) == MD_PAD_LIMIT + 4  # "| " + cell + " |": padded to the widest
    tricky = ["\x000\x00", " " + over + " ", "\x001\x00" + over, "n"]
    page = render_markdown(markdown_table(pd.DataFrame({"x": tricky, "n": [1, 2, 3, 4]})))
    assert page.rows == [["x", "n"], [terminal_text("\x000\x00"), "1"], [over, "2"],
                         [terminal_text("\x001\x00") + over, "3"], ["n", "4"]]
    lines = markdown_table(pd.DataFrame({"x": ["s", over]})).splitlines()
    assert len(lines[2]) < 10 and over in lines[3]


def test_a_long_cell_is_written_as_a_short_one_without_its_spaces_and_a_long_header_widens_no_line() -> None:
    """Tabulate writes a short cell without the spaces around it (``"  s  "`` as ``| s   |``);
    a long cell, held out of the padding, is written without them too. A header over MD_PAD_LIMIT is held out too:
    the lines below it stay as narrow as their cells."""
    from oloproof_nb._display.markdown import MD_PAD_LIMIT

    over = "b" * (MD_PAD_LIMIT + 1)
    assert markdown_table(pd.DataFrame({"x": ["  s  "]})).splitlines()[2] == "| s   |"
    line = markdown_table(pd.DataFrame({"x": ["  " + over + "  "]})).splitlines()[2]
    assert re.fullmatch(r"\| " + over + r" +\|", line)  # no space before it; after it, the column's padding
    head = "h" * (MD_PAD_LIMIT + 1)
    lines = markdown_table(pd.DataFrame({head: ["s", "t"]})).splitlines()
    assert re.fullmatch(r"\| " + head + r" +\|", lines[0]) and [len(line) for line in lines[1:]] == [7, 7, 7]


def test_a_table_without_rows_is_its_header() -> None:
    """.ci/oldest: tabulate 0.9 (the oldest declared) raised IndexError on column alignments given for a table
    without rows, so `oloproof report` of a suite with no criterion stopped on an internal error there. By hand: the
    header and its rule, whatever the columns' kinds."""
    empty = pd.DataFrame({"criterion": pd.Series([], dtype=object), "rate": pd.Series([], dtype=float)})
    assert markdown_table(empty) == "| criterion   | rate   |\n|-------------|--------|"
    assert markdown_table(empty, styled=True) == "| criterion   | rate   |\n|-------------|--------|"


def test_a_bar_is_escaped_in_a_github_table_only() -> None:
    """A ``|`` ends a cell of a ``github`` table, so it is written ``\\|`` there; a ``narrow`` table (``oloproof
    compare``'s) has no ``|`` between its columns, where ``\\|`` would show a backslash that is not in the name
    (a mutant escaping it in a narrow table passed every other test)."""
    assert text_table([["a|b", "1"]], ["criterion", "n"], tablefmt="narrow").splitlines() == [
        "criterion  n", "---------  -", "a|b        1"]
    assert text_table([["a|b", "1"]], ["criterion", "n"]).splitlines()[2] == "| a\\|b      | 1 |"
