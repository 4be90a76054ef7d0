"""Exports: every format writes raw, unrounded numbers that read back bit for bit.

Each format is read back with an outside reader (pandas / the csv and json
modules / the stdlib HTML parser / splitting the Markdown and LaTeX text).
"""

from __future__ import annotations

import csv
import json
import math
import struct
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _frame_checks import EXACT_CSV
from _hostile_files import HOSTILE_TEXTS, O_BINARY, Page, open_as_on_windows, render_markdown

import oloproof_nb as op
from oloproof_nb._display.export import CSV_FORMULA_STARTS, EXPORT_SUFFIXES
from oloproof_nb.errors import ExportError, terminal_text

FLOATS = [0.1 + 0.2, 1 / 3, 2**0.5, 1e-300, 123456789.12345679, -0.0, 0.5903836027749967]
SPECIAL = [math.nan, math.inf, -math.inf]


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or bits(a) == bits(b)


@pytest.fixture
def frame() -> pd.DataFrame:
    n = len(FLOATS) + len(SPECIAL)
    return pd.DataFrame({
        "name": [f"row_{i}" for i in range(n - 2)] + ["a|b & c", 'say "hi", 50%'],
        "x": FLOATS + SPECIAL,
        "k": list(range(n)),
        "flag": [i % 2 == 0 for i in range(n)],
        "value": [{"a": 1}, [1, 2], op.ABSENT, None, "text", 3, 0.1 + 0.2, {"n": {"m": [True]}}, "", 1.5],
    })


def written_floats(texts: list[str]) -> list[float]:
    return [math.nan if t.strip() == "" else float(t) for t in texts]


def test_suffixes() -> None:
    assert EXPORT_SUFFIXES == (".csv", ".md", ".tex", ".html", ".json")


def test_csv_round_trips(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = op.export_table(frame, tmp_path / "t.csv")
    back = pd.read_csv(path, **EXACT_CSV)
    assert list(back.columns) == list(frame.columns)
    assert all(same(a, b) for a, b in zip(back["x"], frame["x"], strict=True))
    assert list(back["k"]) == list(frame["k"])
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert all(same(a, b) for a, b in zip(written_floats([r["x"] for r in rows]), frame["x"], strict=True))
    assert rows[-2]["name"] == "a|b & c" and rows[-1]["name"] == 'say "hi", 50%'
    assert json.loads(rows[0]["value"]) == {"a": 1} and json.loads(rows[1]["value"]) == [1, 2]
    assert json.loads(rows[2]["value"]) == {"$absent": True} and rows[3]["value"] == ""
    assert rows[0]["flag"] == "True" and rows[1]["flag"] == "False"


def test_json_round_trips(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = op.export_table(frame, tmp_path / "t.json")
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text  # strict JSON
    records = json.loads(text)
    assert [list(r) for r in records][0] == list(frame.columns)
    xs = [math.nan if r["x"] is None else float(r["x"]) for r in records]
    assert all(same(a, b) for a, b in zip(xs, frame["x"], strict=True))
    assert records[len(FLOATS) + 1]["x"] == "Infinity" and records[len(FLOATS) + 2]["x"] == "-Infinity"
    assert [r["k"] for r in records] == list(range(len(frame)))
    assert records[0]["flag"] is True and records[1]["flag"] is False
    assert records[0]["value"] == {"a": 1} and records[2]["value"] == {"$absent": True}
    assert records[3]["value"] is None and records[7]["value"] == {"n": {"m": [True]}}
    back = pd.read_json(path, orient="records", precise_float=True)
    assert all(same(a, b) for a, b in zip(back["x"][: len(FLOATS)], FLOATS, strict=True))


def test_pandas_default_json_reader_misses_the_last_bit_of_most_rates(tmp_path: Path) -> None:
    """README section 7: "pd.read_json's default misses the last bit of most floats", so a .json
    export is read with json.load or precise_float=True. Every rate k/n for n up to 60, written by export_table: the
    default reader gets most of them wrong by a bit, precise_float and json.load none."""
    rates = sorted({k / n for n in range(1, 61) for k in range(n + 1)})
    path = op.export_table(pd.DataFrame({"rate": rates}), tmp_path / "rates.json")
    default = pd.read_json(path, orient="records")["rate"].tolist()
    missed = sum(not same(a, b) for a, b in zip(default, rates, strict=True))
    assert missed > len(rates) / 2, (missed, len(rates))
    precise = pd.read_json(path, orient="records", precise_float=True)["rate"].tolist()
    assert all(same(a, b) for a, b in zip(precise, rates, strict=True))
    with path.open(encoding="utf-8") as fh:
        assert [r["rate"] for r in json.load(fh)] == rates


def test_json_writes_nested_nan_and_infinities_as_strict_json(tmp_path: Path) -> None:
    """A tool result holding NaN (a run stores it; csv exports it) raised ValueError in the .json export."""
    frame = pd.DataFrame({"result": [{"v": math.nan, "w": [math.inf, -math.inf, 1.5]}, [math.nan], {"ok": 1}]})
    records = json.loads(op.export_table(frame, tmp_path / "t.json").read_text(encoding="utf-8"))
    assert [r["result"] for r in records] == [{"v": None, "w": ["Infinity", "-Infinity", 1.5]}, [None], {"ok": 1}]


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_html_round_trips_and_is_standalone(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = op.export_table(frame, tmp_path / "t.html")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in text
    assert "http" not in text and "<script" not in text
    parser = _Cells()
    parser.feed(text)
    header, *rows = parser.rows
    assert header == list(frame.columns)
    assert all(same(a, b) for a, b in zip(written_floats([r[1] for r in rows]), frame["x"], strict=True))
    assert rows[-2][0] == "a|b & c" and rows[-1][0] == 'say "hi", 50%'
    assert json.loads(rows[2][4]) == {"$absent": True}


def _md_rows(path: Path) -> list[list[str]]:
    """The cells of a Markdown table as a CommonMark reader shows them (markdown-it-py)."""
    return render_markdown(path.read_text(encoding="utf-8")).rows


def test_markdown_round_trips(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = op.export_table(frame, tmp_path / "t.md")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[1].startswith("|-") or lines[1].startswith("|:")  # a GitHub table
    header, *rows = _md_rows(path)
    assert header == list(frame.columns)
    assert all(same(a, b) for a, b in zip(written_floats([r[1] for r in rows]), frame["x"], strict=True))
    assert rows[-2][0] == "a|b & c"
    assert json.loads(rows[1][4]) == [1, 2]  # "[" and "]" are escaped in the file, shown as written


def test_latex_round_trips(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = op.export_table(frame, tmp_path / "t.tex")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("\\begin{tabular}{lrrll}") and "\\toprule" in text and text.rstrip().endswith(
        "\\end{tabular}")
    body = text.split("\\midrule\n")[1].split("\\bottomrule")[0].strip().splitlines()
    rows = [line.removesuffix(" \\\\").split(" & ") for line in body]
    assert all(same(a, b) for a, b in zip(written_floats([r[1] for r in rows]), frame["x"], strict=True))
    assert rows[0][0] == "row\\_0" and rows[-2][0] == "a\\textbar{}b \\& c" and rows[-1][0] == 'say "hi", 50\\%'


def test_every_format_round_trips_a_slice_table(make_suite: Any, tmp_path: Path) -> None:
    cases = [{"id": f"c{i}", "input": {"answer": "ok" if i % 3 else "no", "n": i}, "expected": {"answer": "ok"}}
             for i in range(7)]
    run = op.run(op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}])),
                 out=tmp_path / "run", progress=False)
    table = op.slice_table(run, "tool_calls:1")
    rates = list(table["ci_low"])
    assert any(not float(r).is_integer() for r in rates if not math.isnan(r))
    for suffix in EXPORT_SUFFIXES:
        path = op.export_table(table, tmp_path / f"slices{suffix}")
        if suffix == ".csv":
            got = list(pd.read_csv(path, **EXACT_CSV)["ci_low"])
        elif suffix == ".json":
            got = [math.nan if r["ci_low"] is None else r["ci_low"] for r in json.loads(path.read_text())]
        elif suffix == ".html":
            parser = _Cells()
            parser.feed(path.read_text(encoding="utf-8"))
            col = parser.rows[0].index("ci_low")
            got = written_floats([r[col] for r in parser.rows[1:]])
        elif suffix == ".md":
            header, *rows = _md_rows(path)
            got = written_floats([r[header.index("ci_low")] for r in rows])
        else:
            body = path.read_text(encoding="utf-8").split("\\midrule\n")[1].split("\\bottomrule")[0]
            got = written_floats([line.split(" & ")[9] for line in body.strip().splitlines()])
        assert all(same(a, b) for a, b in zip(got, rates, strict=True)), suffix


def test_unknown_suffix_lists_the_allowed_ones(frame: pd.DataFrame, tmp_path: Path) -> None:
    for name in ("t.xlsx", "t"):
        with pytest.raises(ExportError) as info:
            op.export_table(frame, tmp_path / name)
        message = str(info.value)
        assert isinstance(info.value, op.OloproofError) and "\n" not in message
        assert all(s in message for s in EXPORT_SUFFIXES)
        assert not (tmp_path / name).exists()
    with pytest.raises(ExportError, match=r"export_table needs a pandas DataFrame \(or a Gate\), got list"):
        op.export_table([1, 2], tmp_path / "t.csv")


def test_gate_index_and_no_mutation(frame: pd.DataFrame, tmp_path: Path) -> None:
    before = frame.copy()
    op.export_table(frame, tmp_path / "sub" / "dir" / "t.csv")
    pd.testing.assert_frame_equal(frame, before)
    grouped = frame.groupby("flag")["k"].sum()
    back = pd.read_csv(op.export_table(grouped.to_frame(), tmp_path / "g.csv"))
    assert list(back.columns) == ["flag", "k"]  # a named index is written as a column
    filtered = frame[frame["k"] > 5]
    back = pd.read_csv(op.export_table(filtered, tmp_path / "f.csv"))
    assert list(back.columns) == list(frame.columns)  # an unnamed index is left out


# -- hostile text in every format --------------------------------------------------------------------------------

@pytest.fixture
def hostile() -> pd.DataFrame:
    texts = [*HOSTILE_TEXTS, "-1+2", "+1", "@SUM(A1)", "\t=1", "'quoted", "-", "plain", "[1, 2]", "*"]
    return pd.DataFrame({"case_id": texts, "answer": list(reversed(texts)),
                         "rate": [(-1) ** i * (i + 0.5) for i in range(len(texts))],
                         "value": [-3, "-3", {"a": "=1"}, ["-x"], None, *texts[5:]]})


def test_csv_neutralises_formulas_and_keeps_numbers(hostile: pd.DataFrame, tmp_path: Path) -> None:
    """Before: `=HYPERLINK(...)`, `-1+2`, `+1`, `@SUM(A1)` were written as they came: a spreadsheet runs them."""
    path = op.export_table(hostile, tmp_path / "t.csv")
    with path.open(newline="", encoding="utf-8") as fh:
        header, *rows = list(csv.reader(fh))
    assert header == list(hostile.columns)
    for row in rows:
        for cell in (row[0], row[1], row[3]):
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell  # nothing a spreadsheet would run
    # numbers are never touched: a negative rate is still a number, to the csv module and to pandas
    assert [float(r[2]) for r in rows] == list(hostile["rate"])
    assert pd.read_csv(path)["rate"].dtype == float
    assert rows[0][3] == "-3" and rows[1][3] == "'-3"  # the int -3 is a number, the text "-3" is text
    # the documented way back: drop one leading "'" from a text cell
    back = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in ("case_id", "answer"):
        assert list(back[col].str.replace(r"^'", "", regex=True)) == list(hostile[col])
    assert all(t.startswith("'") == hostile["case_id"][i].startswith(CSV_FORMULA_STARTS)
               for i, t in enumerate(back["case_id"]))


def test_latex_rows_stay_rows(hostile: pd.DataFrame, tmp_path: Path) -> None:
    """Before: a newline or carriage return in a cell broke the row over several source lines."""
    text = op.export_table(hostile, tmp_path / "t.tex").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) == len(hostile) + 6  # begin, toprule, header, midrule, one line per row, bottomrule, end
    body = lines[4:-2]
    assert all(line.endswith(" \\\\") and line.count(" & ") == 3 for line in body)
    assert "\r" not in text and "\t" not in text
    for line in body:  # after a row's \\ LaTeX would read a leading "[" or "*" as an argument of \\
        assert not line.startswith(("[", "*"))
    assert "{[}1, 2{]}" in text


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_markup_formats_show_hostile_text_as_text(hostile: pd.DataFrame, tmp_path: Path, suffix: str) -> None:
    path = op.export_table(hostile[["case_id", "answer"]], tmp_path / f"t{suffix}")
    page = render_markdown(path.read_text(encoding="utf-8")) if suffix == ".md" else Page(path.read_text("utf-8"))
    assert [tag for tag, _ in page.active() if tag != "style"] == []
    header, *rows = page.rows
    shown = [[" ".join(str(t).replace("\r\n", "\n").replace("\r", "\n").split("\n")).strip() for t in pair]
             for pair in zip(hostile["case_id"], hostile["answer"], strict=True)]
    if suffix == ".html":  # HTML shows a line break or a tab in a cell as its escape, as the terminal does
        shown = [[terminal_text(t) for t in pair] for pair in zip(hostile["case_id"], hostile["answer"], strict=True)]
    assert rows == shown


def test_an_export_over_an_existing_file_keeps_its_permissions_and_links(tmp_path: Path) -> None:
    """Exports are written beside their path and renamed over it: a file there kept its mode only by chance
    (a 0600 export became 0644), and a symbolic link was replaced by a file (its target kept the old table)."""
    import os
    import stat

    import pandas as pd

    table = pd.DataFrame({"criterion": ["a"], "rate": [0.5]})
    private = tmp_path / "private.csv"
    private.write_text("old\n", encoding="utf-8")
    os.chmod(private, 0o600)
    op.export_table(table, private)
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600 and "criterion" in private.read_text(encoding="utf-8")
    real = tmp_path / "shared" / "gate.md"
    real.parent.mkdir()
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "gate.md"
    link.symlink_to(real)
    op.export_table(table, link)
    assert link.is_symlink() and "criterion" in real.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.rglob(".*")] == []
    pipe = tmp_path / "pipe"  # a link to a pipe or a device: the link is replaced, never what it points at
    os.mkfifo(pipe)
    to_pipe = tmp_path / "piped.md"
    to_pipe.symlink_to(pipe)
    op.export_table(table, to_pipe)
    assert not to_pipe.is_symlink() and to_pipe.is_file() and pipe.is_fifo()


@pytest.mark.parametrize("suffix", EXPORT_SUFFIXES)
def test_two_columns_of_one_name_are_refused(tmp_path: Path, suffix: str) -> None:
    """Before, a JSON row kept the second ``rate`` of two (the CSV header both): which one a reader got was a
    guess. Each format now refuses the table, naming the column; nothing is written."""
    table = pd.DataFrame([[0.25, 0.75, "a"]], columns=["rate", "rate", "criterion"])
    with pytest.raises(ExportError) as info:
        op.export_table(table, tmp_path / f"t{suffix}")
    assert str(info.value).startswith(f"{tmp_path / f't{suffix}'}: the table has more than one column named 'rate'")
    assert not (tmp_path / f"t{suffix}").exists()


@pytest.mark.parametrize("suffix", [".csv", ".tex", ".json"])
def test_a_lone_surrogate_in_a_text_cell_is_one_export_error_and_the_file_is_kept(tmp_path: Path,
                                                                                 suffix: str) -> None:
    """Before, a cell made by surrogateescape (``b"caf\\xe9".decode("utf-8", "surrogateescape")``, an
    undecodable file name) stopped these three exports on a raw UnicodeEncodeError; .md and .html show it as an
    escape. Now one ExportError names the file and the character, and a file already there is left as it was."""
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    table = pd.DataFrame({"file": pd.Series([name], dtype=object), "rate": [0.5]})
    out = tmp_path / f"t{suffix}"
    out.write_text("mine\n", encoding="utf-8")
    with pytest.raises(ExportError) as info:
        op.export_table(table, out)
    assert str(info.value).startswith(f"{out}: the text holds '\\udce9', a lone surrogate")
    assert "\n" not in str(info.value)
    assert out.read_text(encoding="utf-8") == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_an_index_repeating_a_column_is_written_once(tmp_path: Path) -> None:
    """Before, ``set_index("criterion", drop=False)`` failed inside pandas ("cannot insert criterion, already
    exists"). The level that repeats its column is written once; one that differs from it is refused."""
    table = pd.DataFrame({"criterion": ["a", "b"], "rate": [0.5, 1.0], "k": [1, 2]})
    out = op.export_table(table.set_index("criterion", drop=False), tmp_path / "same.csv")
    assert out.read_text(encoding="utf-8") == "criterion,rate,k\na,0.5,1\nb,1.0,2\n"
    both = table.set_index(["criterion", "k"], drop=False).drop(columns=["k"])  # k only in the index
    assert op.export_table(both, tmp_path / "both.csv").read_text(encoding="utf-8") == (
        "k,criterion,rate\n1,a,0.5\n2,b,1.0\n")
    other = table.set_index(pd.Index(["x", "y"], name="criterion"))
    with pytest.raises(ExportError, match="the index level 'criterion' and the column 'criterion' hold different"):
        op.export_table(other, tmp_path / "other.csv")


def test_an_unnamed_level_of_a_named_index_is_written_as_reset_index_names_it(tmp_path: Path) -> None:
    """``groupby(...).agg([...]).stack()`` has index names ['criterion', None]; its statistic level was
    dropped from the file (which value is the mean, which the max, was lost). Every level is written."""
    rates = pd.DataFrame({"criterion": ["a", "a", "b"], "rate": [0.5, 0.6, 0.7]})
    stacked = rates.groupby("criterion")["rate"].agg(["mean", "max"]).stack().rename("value").to_frame()
    assert list(stacked.index.names) == ["criterion", None]
    text = op.export_table(stacked, tmp_path / "s.csv").read_text(encoding="utf-8")
    assert text == "criterion,level_1,value\na,mean,0.55\na,max,0.6\nb,mean,0.7\nb,max,0.7\n"
    both = rates.assign(k=[1, 2, 3]).set_index(["criterion", "k"], drop=False).drop(columns=["k"])
    assert op.export_table(both, tmp_path / "b.csv").read_text(encoding="utf-8") == (
        "k,criterion,rate\n1,a,0.5\n2,a,0.6\n3,b,0.7\n")  # criterion repeats its column: written once


def test_index_levels_beside_a_repeated_one_and_name_clashes(tmp_path: Path) -> None:
    """Before, the unnamed level of a stacked table was still dropped when its named level repeats a column;
    a column named like an index level (``level_1``) or two levels of one name failed inside pandas; a categorical
    index equal to its column was called different."""
    rates = pd.DataFrame({"criterion": ["a", "a", "b"], "rate": [0.5, 0.6, 0.7]})
    stacked = rates.groupby("criterion")["rate"].agg(["mean", "max"]).stack().rename("value").to_frame()
    both = stacked.reset_index(level=0)[["criterion", "value"]].set_index("criterion", append=True, drop=False)
    both = both.reorder_levels(["criterion", None])
    assert op.export_table(both, tmp_path / "both.csv").read_text(encoding="utf-8") == (
        "index,criterion,value\nmean,a,0.55\nmax,a,0.6\nmean,b,0.7\nmax,b,0.7\n")  # the statistic is kept
    with pytest.raises(ExportError, match="an index level and a column have one name"):
        op.export_table(stacked.assign(level_1=1), tmp_path / "clash.csv")
    twice = pd.DataFrame({"v": [1, 2]}, index=pd.MultiIndex.from_tuples([(1, 2), (3, 4)], names=["k", "k"]))
    with pytest.raises(ExportError, match="more than one level named 'k'"):
        op.export_table(twice, tmp_path / "twice.csv")
    cat = pd.DataFrame({"criterion": ["a", "b"], "rate": [1, 2]},
                       index=pd.CategoricalIndex(["a", "b"], name="criterion"))
    assert op.export_table(cat, tmp_path / "cat.csv").read_text(encoding="utf-8") == "criterion,rate\na,1\nb,2\n"


def test_a_vertical_bar_in_a_latex_cell_is_a_bar_not_an_em_dash(tmp_path: Path) -> None:
    """In LaTeX's default font encoding (OT1) the character "|" typed in text is the em dash's slot: a case id
    ``a|b`` or a reason quoting ``cmd|calc`` was typeset ``a—b``, as ``<`` and ``>`` were ``¡`` and ``¿`` before
    they were escaped. ``\\textbar{}`` is the bar in any encoding; in a header too."""
    table = pd.DataFrame({"case|id": ["a|b", "||"], "rate": [0.5, 1.0]})
    text = op.export_table(table, tmp_path / "t.tex").read_text(encoding="utf-8")
    assert "|" not in text.replace("\\textbar{}", "")
    assert "case\\textbar{}id & rate \\\\\n" in text
    assert "a\\textbar{}b & 0.5 \\\\\n\\textbar{}\\textbar{} & 1.0 \\\\\n" in text


def test_a_unicode_line_or_paragraph_separator_in_a_latex_cell_is_a_space(tmp_path: Path) -> None:
    """U+2028 and U+2029 break a line as ``\\n`` does (str.splitlines splits on them): in a ``.tex`` row each is a
    space, so every row stays on its one source line."""
    table = pd.DataFrame({"reason": ["one\u2028two", "three\u2029four"], "n": [1, 2]})
    text = op.export_table(table, tmp_path / "t.tex").read_text(encoding="utf-8")
    assert "\u2028" not in text and "\u2029" not in text
    assert "one two & 1 \\\\" in text.splitlines() and "three four & 2 \\\\" in text.splitlines()


def test_an_index_repeating_a_column_with_a_missing_value_is_still_written_once(tmp_path: Path) -> None:
    """A NaN is not equal to itself, yet a level and its column both missing at a row hold one value."""
    table = pd.DataFrame({"rate": [0.5, math.nan], "k": [1, 2]})
    out = op.export_table(table.set_index("rate", drop=False), tmp_path / "nan.csv")
    assert out.read_text(encoding="utf-8") == "rate,k\n0.5,1\n,2\n"


def test_a_suffix_in_capitals_names_its_format_too(tmp_path: Path) -> None:
    table = pd.DataFrame({"criterion": ["a"], "rate": [0.5]})
    assert op.export_table(table, tmp_path / "T.CSV").read_text(encoding="utf-8") == "criterion,rate\na,0.5\n"


def test_an_index_level_that_differs_from_its_column_in_one_row_is_refused(tmp_path: Path) -> None:
    table = pd.DataFrame({"criterion": ["a", "b"], "rate": [0.5, 1.0]})
    other = table.set_index(pd.Index(["a", "z"], name="criterion"))  # the first row agrees, the second does not
    with pytest.raises(ExportError, match="the index level 'criterion' and the column 'criterion' hold different"):
        op.export_table(other, tmp_path / "other.csv")


@pytest.mark.parametrize("where", ["parent", "grandparent", "link to nothing"])
def test_a_file_where_the_export_needs_a_folder_says_which(tmp_path: Path, where: str) -> None:
    """Before, ``export_table(df, "f/t.csv")`` with ``f`` a file raised a raw FileExistsError
    (``f/sub/t.csv``: NotADirectoryError, ``[Errno 20] Not a directory: 'f/sub'``); now the project's error, one
    line naming the file in the way, and nothing written."""
    blocking = tmp_path / "f"
    if where == "link to nothing":
        blocking.symlink_to(tmp_path / "nowhere")
    else:
        blocking.write_text("mine", encoding="utf-8")
    out = blocking / ("t.csv" if where != "grandparent" else "sub/t.csv")
    with pytest.raises(ExportError) as info:
        op.export_table(pd.DataFrame({"rate": [0.5]}), out)
    what = "a symbolic link to nothing" if where == "link to nothing" else "a file"
    assert str(info.value) == (f"{blocking}: is {what}, not a folder (the folder of the export t.csv); move it or "
                               "choose another path")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
    assert blocking.is_symlink() if where == "link to nothing" else blocking.read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(("points_to", "what"), [("real", "a file"), ("nowhere", "a symbolic link to nothing")])
def test_a_link_above_the_exports_folder_is_named_as_what_it_is(tmp_path: Path, points_to: str, what: str) -> None:
    """A symbolic link where a folder belongs, above the export's own folder (``f/sub/t.csv``),
    is named, not ``f/sub``: a link to a file as what it stands for, a file; a link to nothing as such."""
    (tmp_path / "real").write_text("mine", encoding="utf-8")
    blocking = tmp_path / "f"
    blocking.symlink_to(tmp_path / points_to)
    with pytest.raises(ExportError) as info:
        op.export_table(pd.DataFrame({"rate": [0.5]}), blocking / "sub" / "t.csv")
    assert str(info.value) == (f"{blocking}: is {what}, not a folder (the folder of the export t.csv); move it or "
                               "choose another path")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f", "real"]


def test_a_folder_name_too_long_for_the_export_is_named_in_one_line(tmp_path: Path) -> None:
    """A folder that cannot be made for another reason than a file in the way (here a name longer
    than the file system allows, ENAMETOOLONG, measured on this file system, not simulated) is the project's error
    naming the folder, what it is for and the system's words; nothing is written."""
    import errno
    import os

    folder = tmp_path / ("x" * 300)
    try:
        folder.mkdir()
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
    else:
        pytest.skip("this file system keeps names of 300 characters")
    with pytest.raises(ExportError) as info:
        op.export_table(pd.DataFrame({"rate": [0.5]}), folder / "t.csv")
    assert str(info.value) == (f"{folder}: cannot create this folder (the folder of the export t.csv): "
                               f"{os.strerror(errno.ENAMETOOLONG)}; choose another path")
    assert list(tmp_path.iterdir()) == []


def test_an_export_under_a_umask_that_takes_the_owners_permissions_leaves_no_folder(tmp_path: Path) -> None:
    """Under ``os.umask(0o777)`` (a notebook; the CLI refuses it up front) the folder of an export is made mode 0:
    ``export_table(df, "new/sub/t.csv")`` left ``new`` and ``sub`` of mode 0 behind (for root, the table written
    into them). Now it is one line naming the folder, what it is for and the umask, and nothing is left."""
    import os

    old = os.umask(0o777)
    try:
        with pytest.raises(ExportError) as info:
            op.export_table(pd.DataFrame({"rate": [0.5]}), tmp_path / "new" / "sub" / "t.csv")
    finally:
        os.umask(old)
    assert str(info.value) == (
        f"{tmp_path / 'new' / 'sub'}: cannot create this folder (the folder of the export t.csv): umask 0777: the "
        "folders made here are mode 0000, which their owner cannot read, write and search; set a umask that leaves "
        "the owner all three (umask 022, or 077 to keep them private); choose another path")
    assert list(tmp_path.iterdir()) == []


def test_an_export_is_written_in_binary_mode_where_the_platform_has_one(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' C runtime opens a descriptor in text mode unless given ``O_BINARY``: a CSV or JSON export's "\\n"
    landed as "\\r\\n" (another file than the bytes made)."""
    flags_given = open_as_on_windows(monkeypatch)
    op.export_table(pd.DataFrame({"a": [1]}), tmp_path / "table.csv")
    assert len(flags_given) == 1 and flags_given[0] & O_BINARY
    assert (tmp_path / "table.csv").read_bytes() == b"a\n1\n"
