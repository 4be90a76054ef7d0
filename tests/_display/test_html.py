"""One rule for user text in HTML: every page and notebook view shows what :func:`terminal_text` escapes as its escape.

Before: the HTML report, the exports and every ``_repr_html_`` escaped ``<>&"'`` only. A case id or a criterion
name holding U+202E (RIGHT-TO-LEFT OVERRIDE) reversed the rest of its line in a browser (``FAIL`` read as
``LIAF``, the digits of a rate reordered), and an ESC, a zero-width space or a no-break space made two different
ids look the same. Each page here is parsed with the standard library's HTML parser, as a browser reads it: no
text and no attribute may hold a character ``terminal_text`` writes as an escape (a line break is HTML's white
space, and a ``<pre>``'s line), and each value the user wrote reads as ``terminal_text`` shows it.
"""

from __future__ import annotations

import copy
import html
import inspect
import json
import re
from pathlib import Path
from typing import Any

import matplotlib
import pytest
import yaml
from _hostile_files import Page

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.errors import terminal_text

matplotlib.use("Agg")

#: ESC and an ANSI erase, a right-to-left override (``FAIL`` typed backwards), an isolate pair, a zero-width
#: space, a line separator, a no-break space, a line break, and markup.
USER = "u\x1b[2K\u202eLIAF\u2066r\u2069\u200bs\u2028t\xa0v\n<script>alert(1)</script>"
#: The same characters, less those a file name cannot hold.
USER_FILE = "u\x1b[2K\u202eLIAF\u2066r\u2069\u200bs\u2028t\xa0v"
SHOWN = terminal_text(USER)  # what every page shows of it: ``u\x1b[2K\u202eLIAF…``
MARK = "<span class=oloproof-escape"

CHECK = f"def check(case, initial_state, final_state, trajectory):\n    return (False, {USER!r})\n"


class Hostile:
    """Every value it returns is :data:`USER`; ``broken`` answers wrong (a candidate that regressed)."""

    version = "v" + USER

    def __init__(self, broken: bool = False) -> None:
        self.broken, self.state = broken, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        if input.get("boom"):
            raise ValueError(USER)
        self.state["note"] = USER
        steps = [{"kind": "tool_call", "tool": USER, "args": {"x": USER}, "result": {"ok": USER}},
                 {"kind": "message", "role": "assistant", "content": USER}]
        return {"steps": steps, "answer": "wrong" if self.broken else input["answer"], "status": "completed"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[op.Run, op.Run, Path]:
    """A base run and a candidate that regressed, of a suite whose every name is :data:`USER`; and its folder."""
    root = tmp_path_factory.mktemp("html") / "suite"
    root.mkdir()
    (root / "sysmod.py").write_text(f"import copy\nfrom typing import Any\n\nUSER = {USER!r}\n\n\n"
                                    + inspect.getsource(Hostile), encoding="utf-8")
    (root / "checks.py").write_text(CHECK, encoding="utf-8")
    cases = [{"id": f"c{i}{USER}", "input": {"answer": USER, "n": i, "boom": i == 2}, "initial_state": {"note": ""},
              "expected": {"answer": USER}} for i in range(3)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = {"name": "s" + USER, "system": "sysmod:Hostile", "cases": "cases.jsonl",
              "evaluators": [{"type": "answer_matches", "criterion": "a" + USER},
                             {"type": "python", "check": "checks:check", "name": "p" + USER}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    suite = op.load_suite(root)
    base = op.run(suite, out=root.parent / "base", progress=False)
    candidate = op.run(suite, system=lambda: Hostile(broken=True), out=root.parent / "candidate", progress=False)
    return base, candidate, root


class _Nodes(Page):
    """A page's text nodes and attribute values, each with where it is (a ``<pre>``'s text keeps its lines)."""

    def __init__(self, text: str) -> None:
        self.nodes: list[tuple[str, str]] = []
        self._open: list[str] = []
        super().__init__(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        super().handle_starttag(tag, attrs)
        if tag not in ("wbr", "br", "img", "meta"):  # elements that hold nothing are never closed
            self._open.append(tag)
        self.nodes += [(f"<{tag} {name}=>", value or "") for name, value in attrs]

    def handle_endtag(self, tag: str) -> None:
        super().handle_endtag(tag)
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag):]

    def handle_data(self, data: str) -> None:
        super().handle_data(data)
        self.nodes.append((self._open[-1] if self._open else "", data))


def _shown_as_written(text: str) -> _Nodes:
    """The page parsed; fails naming the first text or attribute that holds a character a screen acts on."""
    page = _Nodes(text)
    for where, node in page.nodes:
        bad = [ch for ch in node if terminal_text(ch) != ch and ch != "\n"]  # "\n": HTML's white space
        assert not bad, f"{where}: {node!r} holds {bad!r}"
    assert [tag for tag, _ in page.active() if tag not in ("style", "img")] == []
    return page


def _marks_are_escapes(text: str) -> None:
    """Escapes are marked, and every mark holds one escape, as ``terminal_text`` writes one character."""
    marks = re.findall(f"{MARK}[^>]*>(.*?)</span>", text)
    assert marks, "no escape was marked"
    assert all(re.fullmatch(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[tnr])", m) for m in marks), marks


def test_the_html_report_shows_every_value_as_written(runs: tuple[op.Run, op.Run, Path], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    base, _, _ = runs
    out = tmp_path / "report.html"
    assert main(["report", str(base.directory), "--out", str(out)]) in (0, 1)  # written; the exit is its gate's
    text = out.read_text(encoding="utf-8")
    page = _shown_as_written(text)
    assert terminal_text("a" + USER) in page.text and terminal_text("p" + USER) in page.text  # criteria
    assert terminal_text("v" + USER) in page.text and terminal_text(f"c2{USER}") in page.text  # version, an id
    _marks_are_escapes(text)
    title = text.split("<title>", 1)[1].split("</title>", 1)[0]  # no element in a title: the escape unmarked
    assert html.unescape(title) == terminal_text(f"oloproof report — s{USER}") and MARK not in title


def test_the_reprs_show_every_value_as_written(runs: tuple[op.Run, op.Run, Path]) -> None:
    base, _, _ = runs
    shown = {"run": base._repr_html_(), "gate": op.gate(base)._repr_html_()}
    for what, text in shown.items():
        page = _shown_as_written(text)
        assert terminal_text("a" + USER) in page.text, what
        _marks_are_escapes(text)
    assert terminal_text("v" + USER) in Page(shown["run"]).text and terminal_text("s" + USER) in Page(shown["run"]).text


def test_the_case_panel_shows_every_value_as_written(runs: tuple[op.Run, op.Run, Path]) -> None:
    base, _, _ = runs
    for case_id in base.cases["case_id"]:
        text = base.panel(case_id)._repr_html_()
        page = _shown_as_written(text)
        assert terminal_text(case_id) in page.text
        _marks_are_escapes(text)
        if base.panel(case_id).status == "completed":
            assert SHOWN in page.text  # the tool's name and the check's reason
            assert terminal_text(json.dumps(USER, ensure_ascii=False)) in page.text  # the answer, as JSON
        else:  # the traceback keeps its lines (a <pre>); the message in it is shown as written
            assert "Traceback (most recent call last):\n" in page.text and "ValueError: " in page.text
            assert terminal_text(USER.split("\n")[0]) in page.text


def test_the_comparison_and_the_paired_panel_show_every_value_as_written(runs: tuple[op.Run, op.Run, Path]) -> None:
    base, candidate, _ = runs
    cmp = op.compare(base, candidate)
    assert len(cmp.flips)  # the flipped cases' table is drawn
    for text in (cmp._repr_html_(), cmp.panel(f"c0{USER}")._repr_html_()):
        page = _shown_as_written(text)
        assert terminal_text(f"c0{USER}") in page.text and terminal_text("a" + USER) in page.text
        _marks_are_escapes(text)


def test_a_gate_with_the_do_nothing_baseline_shows_every_value_as_written(runs: tuple[op.Run, op.Run, Path],
                                                                         tmp_path: Path) -> None:
    base, _, root = runs
    idle = op.baseline(root, out=tmp_path / "idle", progress=False)
    text = op.gate(base, baseline=idle)._repr_html_()
    page = _shown_as_written(text)
    assert terminal_text("p" + USER) in page.text and "noop_rate" in page.text


def test_the_html_export_shows_every_value_as_written(runs: tuple[op.Run, op.Run, Path], tmp_path: Path) -> None:
    base, _, _ = runs
    out = op.export_table(base.verdicts, tmp_path / f"{USER_FILE}.html")
    text = out.read_text(encoding="utf-8")
    page = _shown_as_written(text)
    assert terminal_text(f"c1{USER}") in page.text and SHOWN in page.text  # an id, a reason
    title = text.split("<title>", 1)[1].split("</title>", 1)[0]
    assert html.unescape(title) == terminal_text(USER_FILE) and MARK not in title


def test_every_value_a_template_writes_follows_the_rule() -> None:
    """The one place: the environment's finalize writes every ``{{ … }}``, and the filters that build markup
    (``inline``: the report's prose, ``wbr``: a styled table's cells and headers) follow the same rule."""
    from oloproof_nb._display.html import _environment

    template = _environment().from_string("<p>{{ x }}</p><p>{{ x | inline }}</p><p>{{ x | wbr }}</p><p>{{ n }}</p>")
    value = "a_`b\u202e<i>`**c\u200b**\x1b"
    text = template.render(x=value, n=0.5)
    page = _shown_as_written(text)
    plain, prose = "a_`b\\u202e<i>`**c\\u200b**\\x1b", "a_b\\u202e<i>c\\u200b\\x1b"  # prose: code and bold
    assert page.text == plain + prose + plain + "0.5"
    assert text.count(MARK) == 9 and "<code>b" in text and "<b>c" in text and "a_<wbr>" in text


def test_html_text_shows_what_terminal_text_escapes_and_nothing_else() -> None:
    """Every character of the Basic Multilingual Plane and a few beyond it: the text a browser shows is
    ``terminal_text``'s; ``<>&"'`` are escaped; a line break is kept only in a ``<pre>``'s lines."""
    from oloproof_nb._display.html import html_text
    from oloproof_nb._display.theme import ESCAPE

    text = "".join(map(chr, range(0x10000))) + "\U0001f600\U000e0001\U000f0000\U0010ffff"
    for chunk in (text[i:i + 4096] for i in range(0, len(text), 4096)):
        marked = str(html_text(chunk))
        assert Page(marked).text == terminal_text(chunk)  # the escape is the terminal's, each one marked
        assert marked.count(MARK) == sum(terminal_text(ch) != ch for ch in chunk)
        plain = str(html_text(chunk, plain=True))
        assert html.unescape(plain) == terminal_text(chunk) and not set("<>\"'") & set(plain)
    assert str(html_text("a\r\nb\rc\td\u2028", lines=True)) == "a\nb" + "".join(
        f"{MARK} style=color:{ESCAPE}>{e}</span>" + c for e, c in (("\\r", "c"), ("\\t", "d"), ("\\u2028", "")))
    assert str(html_text(0.125)) == "0.125" and str(html_text("−∞ → …")) == "−∞ → …"  # numbers, our own signs


def test_a_checked_column_says_checked_or_no_in_the_colours_of_its_words() -> None:
    import pandas as pd

    from oloproof_nb._display.html import html_table

    table = str(html_table(pd.DataFrame({"checked": [True, False]}), styled=True))
    # the theme's colours (oloproof_nb/_display/theme.py COLOURS): checked #1a7f37, not checked #9a6700
    assert '<b style="color:#1a7f37">checked</b>' in table and '<b style="color:#9a6700">no</b>' in table


def test_a_styled_tables_interval_columns_are_rounded_outward() -> None:
    import pandas as pd

    from oloproof_nb._display.html import html_table

    table = str(html_table(pd.DataFrame({"ci_low": [0.12345], "ci_high": [0.98712]}), styled=True))
    # to three decimals, away from the estimate: 0.12345 down to 0.123, 0.98712 up to 0.988 (hand count)
    assert '<td class="num">0.123</td>' in table and '<td class="num">0.988</td>' in table
