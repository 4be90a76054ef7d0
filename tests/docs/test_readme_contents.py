"""The README's contents list follows its headings (2,366 lines, no way in but scrolling).

Every ``##`` and ``###`` heading outside code fences has one line in the list, in order and at its level, linked by
the anchor GitHub gives the heading; a heading added, renamed or removed without the list following fails here. The
headings are read by markdown-it-py (CommonMark, which GitHub's Markdown extends), so a ``# comment`` inside a fenced
block is not a heading; the anchors are checked against github-slugger's own fixtures, the rule GitHub applies.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

README = Path(__file__).resolve().parent.parent.parent / "README.md"
CONTENTS = "Contents"
_ENTRY = re.compile(r"^(?P<indent> *)- \[(?P<text>[^\]]+)\]\(#(?P<anchor>[^)\s]+)\) — (?P<what>\S.*)$")


def github_anchors(titles: list[str]) -> list[str]:
    """The anchors GitHub gives headings with these texts, in document order.

    Lowercase; every character but a letter, a digit, ``_``, ``-`` and the space dropped; each space a ``-``; a
    slug already taken gets ``-1``, ``-2``... (counted per slug, as github-slugger counts).
    """
    taken: dict[str, int] = {}
    anchors = []
    for title in titles:
        slug = original = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        while slug in taken:
            taken[original] += 1
            slug = f"{original}-{taken[original]}"
        taken[slug] = 0
        anchors.append(slug)
    return anchors


def headings(text: str) -> list[tuple[int, str, int]]:
    """Every heading of ``text`` outside code: its level, its text as rendered (no backticks), its line (0-based)."""
    tokens = MarkdownIt("commonmark").parse(text)
    out = []
    for opening, inline in pairwise(tokens):
        if opening.type == "heading_open" and opening.map is not None:
            rendered = "".join(child.content for child in inline.children or []
                               if child.type in ("text", "code_inline"))
            out.append((int(opening.tag[1]), rendered, opening.map[0]))
    return out


def contents_mismatches(text: str) -> list[str]:
    """What the contents list says otherwise than the headings do; empty when it follows them."""
    found = headings(text)
    anchors = github_anchors([title for _, title, _ in found])
    sections = [(level, title, anchor) for (level, title, _), anchor in zip(found, anchors, strict=True)
                if level in (2, 3) and title != CONTENTS]
    own = [line for level, title, line in found if level == 2 and title == CONTENTS]
    if len(own) != 1:
        return [f"the README has {len(own)} '## {CONTENTS}' headings, not one"]
    lines = text.splitlines()
    following = [line for _, _, line in found if line > own[0]]
    block = lines[own[0] + 1:following[0] if following else len(lines)]
    entries = [m for m in map(_ENTRY.match, block) if m]
    listed = [(2 + len(m["indent"]) // 2, m["text"], m["anchor"]) for m in entries]
    problems = [f"listed, no such heading: {entry}" for entry in listed if entry not in sections]
    problems += [f"heading not listed: {section}" for section in sections if section not in listed]
    if not problems and listed != sections:
        problems.append("the list is not in the headings' order")
    return problems


# github-slugger's test/fixtures.json (github.com/Flet/github-slugger), each input in order through one slugger
SLUGGER_FIXTURES = [
    ("alpha", "alpha"), ("alpha", "alpha-1"), ("bravoCharlieDelta", "bravocharliedelta"),
    ("echo", "echo"), ("echo", "echo-1"), ("echo 1", "echo-1-1"), ("echo-1", "echo-1-2"), ("echo", "echo-2"),
    ("foxtrot-1", "foxtrot-1"), ("foxtrot", "foxtrot"), ("foxtrot", "foxtrot-2"),
    ("heading with a - dash", "heading-with-a---dash"),
    ("heading with an _ underscore", "heading-with-an-_-underscore"),
    ("heading with a period.txt", "heading-with-a-periodtxt"),
    ("exchange.bind_headers(exchange, routing [, bindCallback])", "exchangebind_headersexchange-routing--bindcallback"),
    ("apostrophe’s should be trimmed", "apostrophes-should-be-trimmed"),
    ("I ♥ unicode", "i--unicode"), ("en–dash", "endash"), ("Привет non-latin 你好", "привет-non-latin-你好"),
]


def test_anchors_are_githubs() -> None:
    assert github_anchors([title for title, _ in SLUGGER_FIXTURES]) == [slug for _, slug in SLUGGER_FIXTURES]
    # the README's own kinds of heading, by hand: a number's dot, a colon, quotes, ^ and @ all dropped
    assert github_anchors(['5. Outcome receipts: "completed" is not "delivered"', "6b. Epochs: pass^k and pass@k"]) \
        == ["5-outcome-receipts-completed-is-not-delivered", "6b-epochs-passk-and-passk"]


def test_the_contents_list_follows_the_headings() -> None:
    text = README.read_text(encoding="utf-8")
    assert contents_mismatches(text) == []


def test_every_link_within_the_readme_reaches_a_heading() -> None:
    text = README.read_text(encoding="utf-8")
    anchors = set(github_anchors([title for _, title, _ in headings(text)]))
    tokens = MarkdownIt("commonmark").parse(text)
    links = [child.attrs["href"] for token in tokens for child in token.children or []
             if child.type == "link_open" and str(child.attrs["href"]).startswith("#")]
    assert links, "the contents list links its sections"
    assert [link for link in links if str(link)[1:] not in anchors] == []


@pytest.mark.parametrize("change", ["added", "renamed", "removed", "moved"])
def test_a_heading_changed_without_the_list_is_caught(change: str) -> None:
    text = README.read_text(encoding="utf-8")
    edited = {
        "added": text.replace("\n## Notebooks\n", "\n## Notebooks\n\n### Opening one\n", 1),
        "renamed": text.replace("\n### 7. Slices, plots, exports and reports\n", "\n### 7. Slices and plots\n", 1),
        "removed": text.replace("\n## Layout\n", "\n", 1),
        "moved": text.replace("\n## Architecture\n", "\n## Layout-tmp\n", 1).replace(
            "\n## Layout\n", "\n## Architecture\n", 1).replace("\n## Layout-tmp\n", "\n## Layout\n", 1),
    }[change]
    assert edited != text
    assert contents_mismatches(edited) != []


def test_a_heading_inside_a_code_fence_is_no_section() -> None:
    text = README.read_text(encoding="utf-8")
    fenced = text.replace("\n## Layout\n", "\n## Layout\n\n```bash\n## not a heading: a shell comment\n```\n", 1)
    assert fenced != text and contents_mismatches(fenced) == []
    # the README's own set-up block holds "# 1. install the project ..." lines: none is a heading
    assert not any(title.startswith("1. install") for _, title, _ in headings(text))
