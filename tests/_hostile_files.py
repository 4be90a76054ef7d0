"""Hostile files for the tests: FIFOs, directories and devices where a file belongs, YAML alias bombs, and a
bounded call that turns a hang into a test failure instead of a stuck test run.

``make_special(path, kind)`` puts a ``fifo`` (a named pipe nobody writes to: opening it for reading blocks
forever), a ``dir``, or a ``device`` (a symlink to ``/dev/zero``, a character device that never ends) at
``path``. ``bounded(fn, seconds, unblock=[...])`` runs ``fn`` on a daemon thread and fails the test when it
has not returned in time; afterwards it opens each FIFO in ``unblock`` for writing, so a reader stuck on it
gets end-of-file and the thread ends. ``render_markdown`` renders Markdown with an outside CommonMark
implementation (markdown-it-py) and ``Page`` parses HTML (the standard library's parser), so tests see the
elements and cell texts a reader would see. ``open_as_on_windows(monkeypatch)`` gives ``os`` Windows' ``O_BINARY``
and takes ``O_NONBLOCK`` away, and records the flags of each ``os.open``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

SPECIAL_KINDS = ("fifo", "dir", "device")


def make_special(path: Path, kind: str) -> Path:
    """A named pipe, a directory or a character device (``/dev/zero``, by symlink) at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "device":
        os.symlink("/dev/zero", path)
    else:
        raise ValueError(kind)
    return path


def release_fifos(paths: Iterable[Path]) -> None:
    """Open every FIFO among ``paths`` for writing and close it: a reader blocked on it sees end-of-file."""
    for path in paths:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # not a FIFO, or no reader waiting (ENXIO): nothing to release
            continue
        os.close(fd)


def bounded(fn: Callable[[], T], seconds: float, unblock: Iterable[Path] = ()) -> T:
    """``fn()`` on a daemon thread; fails (AssertionError) when it takes longer than ``seconds``."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    hung = thread.is_alive()
    if hung:
        for _ in range(50):  # a reader may not be blocked in open() yet: keep releasing until it ends
            release_fifos(list(unblock))
            thread.join(0.1)
            if not thread.is_alive():
                break
    assert not hung, f"hung: still running after {seconds:g}s"
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def alias_bomb(width: int, depth: int, key: str = "answer_matches") -> str:
    """A release.yaml whose threshold for ``key`` is a list of ``width`` lists nested ``depth`` deep by aliases.

    Expanded, the value holds about ``width ** depth`` strings; the text stays a few hundred bytes.
    ``alias_bomb(9, 9)`` is 550 bytes and expands to 435,848,049 strings (README, "Security and reliability").
    """
    items = ", ".join(['"lol"'] * width)
    lines = ["criteria:", f"  {key}:", f"    - &l0 [{items}]"]
    for level in range(1, depth):
        refs = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"    - &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


# -- reading Markdown and HTML as a browser would --------------------------------------------------------------

#: Values an agent, a case file or a suite could carry into a table, a report or a page.
HOSTILE_TEXTS = (
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "a|b\\|c",
    "line1\r\nline2\rline3\nline4",
    "![x](https://evil.example/p.png)",
    "[approve](https://evil.example/)",
    "&lt;b&gt; &amp; <b>bold</b>",
    "`tick` ``two``",
    "*em* _under_ snake_case_name __init__",
    "\\",
    "=HYPERLINK(\"https://evil.example\")",
    "~~struck~~ ~one~",
)


class Page(HTMLParser):
    """The elements of an HTML page (tag and attributes), its text, and the text of its table cells, row by row."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self._text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    @property
    def text(self) -> str:
        """All the text of the page, as shown (entities decoded)."""
        return "".join(self._text)

    def tags(self, *names: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag in names]

    def active(self) -> list[tuple[str, dict[str, str | None]]]:
        """Elements that run code or fetch something: scripts, frames, links, images, any ``on…`` attribute."""
        return [(tag, attrs) for tag, attrs in self.elements
                if tag in ("script", "iframe", "object", "embed", "a", "img", "link", "style")
                or any(name.startswith("on") for name in attrs)]


def render_markdown(text: str) -> Page:
    """Markdown rendered by markdown-it-py (CommonMark with GitHub tables and strikethrough, raw HTML allowed) and
    parsed."""
    from markdown_it import MarkdownIt

    return Page(MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(text))


#: Windows' ``O_BINARY``: without it its C runtime opens a descriptor in text mode ("\\n" written as "\\r\\n").
O_BINARY = 0x8000


def open_as_on_windows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make ``os`` look as on Windows for opening files: ``O_BINARY`` there, ``O_NONBLOCK`` gone; every ``os.open``
    then records its flags in the list returned and opens the file with ``O_BINARY`` taken out (this platform has
    none)."""
    flags_given: list[int] = []
    real_open = os.open

    def opened(file: Any, flags: int, *args: Any) -> int:
        flags_given.append(flags)
        return real_open(file, flags & ~O_BINARY, *args)

    monkeypatch.setattr(os, "O_BINARY", O_BINARY, raising=False)
    monkeypatch.delattr(os, "O_NONBLOCK", raising=False)
    monkeypatch.setattr(os, "open", opened)
    return flags_given
