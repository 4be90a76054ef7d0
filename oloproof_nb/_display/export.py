"""Write a table to a file by its suffix: ``.csv``, ``.md``, ``.tex``, ``.html``, ``.json``.

Numbers are written raw: every float with the shortest text that reads back as
the same float (Python's ``repr``), never rounded. Formatting for the eye
belongs to ``_repr_html_`` and the report, not to an export. Every text cell
(answers, case ids, reasons: whatever the agent or the suite wrote) is escaped
for its format: no raw HTML in ``.md`` or ``.html``, no line break in a ``.md``
row or a ``.tex`` row, no spreadsheet formula in ``.csv``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import os
import re
import stat
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._config.files import not_home
from .._core.paths import Absent
from .._run.disk import make_folders, open_fd
from ..errors import ExportError
from .html import html_table, html_text, numeric_column
from .markdown import markdown_table
from .theme import TABLE_CSS, Screen, cell_text, is_blank, json_text, table_of

__all__ = ["CSV_FORMULA_STARTS", "EXPORT_SUFFIXES", "csv_text", "export_table", "json_cell", "json_records",
           "make_folder", "read_only", "write_file"]

EXPORT_SUFFIXES: tuple[str, ...] = (".csv", ".md", ".tex", ".html", ".json")


def _strict(value: Any) -> Any:
    """A JSON value with every non-finite float written as strict JSON can hold it, at any depth: NaN as
    ``null``, infinities as ``"Infinity"``/``"-Infinity"`` (as a cell holding one is written)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict(v) for v in value]
    return value


def json_cell(value: Any) -> Any:
    """A cell as a strict JSON value, as the ``.json`` export writes it: a missing value ``None`` (``null``), an
    infinity ``"Infinity"``/``"-Infinity"``, a NumPy number a Python one, a time its ISO text, dicts and lists
    nested JSON (:func:`_strict`), ABSENT ``{"$absent": true}``, anything else its text.

    Examples
    --------
    >>> json_cell(float("nan")), json_cell(float("-inf")), json_cell(np.int64(3)), json_cell(0.25)
    (None, '-Infinity', 3, 0.25)
    """
    if isinstance(value, (dict, list, tuple, Absent, np.ndarray)):
        return _strict(json.loads(json_text(value)))
    if is_blank(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else ("Infinity" if f > 0 else "-Infinity")
    if isinstance(value, (pd.Timestamp, dt.datetime, dt.date)):
        return value.isoformat()
    return value if isinstance(value, str) else str(value)


def _with_gate_reason(obj: Any, table: Any) -> Any:
    """``table`` of a :class:`~oloproof_nb.Gate` ``obj`` with a ``reason`` (its verdict not explained by a row:
    ``edited_frames``, ``unfinished``, ``no_criteria``, ``fewer_epochs``) with ``gate_verdict`` and ``gate_reason``
    on every row (an ``edited_frames`` gate exported each row's PASS without the reason), and of a
    :class:`~oloproof_nb.Comparison` with a ``reason`` (``cases_not_in_both_runs``, ``release_changed``, …) with
    ``comparison_verdict`` and ``comparison_reason`` (its rows' ``NO_REGRESSION`` was exported where the comparison
    is ``INSUFFICIENT_EVIDENCE``); else ``table``."""
    if isinstance(obj, pd.DataFrame) or not isinstance(table, pd.DataFrame):
        return table
    from .._analysis.compare import Comparison  # only for a result given (the module's import stays light)
    from .._analysis.gate import Gate

    if not getattr(obj, "reason", ""):
        return table
    if isinstance(obj, Gate):
        return table.assign(gate_verdict=obj.verdict, gate_reason=obj.reason)
    if isinstance(obj, Comparison):
        return table.assign(comparison_verdict=obj.verdict, comparison_reason=obj.reason)
    return table


def _texts(df: pd.DataFrame) -> list[list[str]]:
    return [[cell_text(v) for v in row] for row in df.itertuples(index=False, name=None)]


#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"), and ``'``,
#: the mark itself, so that dropping one leading ``'`` always gives the raw text back.
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def csv_text(value: Any) -> str:
    """A CSV cell: a number as written by :func:`cell_text`; text that could start a formula after a ``'``.

    Examples
    --------
    >>> csv_text(-0.5), csv_text("-0.5"), csv_text("=HYPERLINK(1)"), csv_text("ok")
    ('-0.5', "'-0.5", "'=HYPERLINK(1)", 'ok')
    """
    text = cell_text(value)
    if not _is_number(value) and text.startswith(CSV_FORMULA_STARTS):
        return "'" + text
    return text


def write_file(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all: into a new file beside it, then renamed
    over it. A named pipe or a device at ``path`` is replaced, never opened (``oloproof report --out`` a FIFO
    waited for a reader for ever), and a failed or interrupted write leaves no half-written file (a full disk
    left a truncated report that looked whole). A symbolic link at ``path`` to a regular file is followed (that
    file gets the new content; a link to anything else is replaced), and a file there keeps its permissions; one
    this process may not write (:func:`read_only`) is kept, as ``open(path, "w")`` would refuse it.
    :class:`~oloproof_nb.errors.ExportError` names the file.
    """
    try:
        payload = data.encode("utf-8") if isinstance(data, str) else data
    except UnicodeEncodeError as exc:  # a text cell made by surrogateescape (an undecodable file name, say)
        raise ExportError(f"{not_home(path)}: the text holds {ascii(exc.object[exc.start:exc.end])}, a lone surrogate, "
                          "which is not Unicode text and cannot be written as UTF-8; replace it in the table first "
                          "(.md and .html exports show it as an escape)") from None
    target = path
    if path.is_symlink():  # the link stays: its file gets the new content (not a device or a pipe it points at)
        resolved = Path(os.path.realpath(path))
        try:
            follow = stat.S_ISREG(os.stat(resolved).st_mode)
        except OSError:
            follow = False  # a dangling link, or one into a folder that cannot be read: the link is replaced
        target = resolved if follow else path
    try:
        before = os.stat(target)
        mode = stat.S_IMODE(before.st_mode) if stat.S_ISREG(before.st_mode) else None
    except OSError:
        mode = None
    if mode is not None and read_only(target):  # the rename below would replace it: `chmod a-w` asked it be kept
        raise ExportError(f"{not_home(path)}: is read-only, so it is kept; make it writable first (chmod u+w), or "
                          "choose another path")
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to any new file
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise ExportError(f"{not_home(path)}: cannot write ({exc.strerror or type(exc).__name__})") from None
    except BaseException:  # Ctrl-C while writing: no temporary file left behind
        _remove(tmp)
        raise


def read_only(path: Path) -> bool:
    """Whether ``path`` is a regular file this process may not write, as ``open(path, "w")`` would find it (a file
    made read-only with ``chmod a-w``, or another user's); a folder, a pipe or nothing there is not.

    :func:`write_file` replaces a file by renaming a new one over it, which the folder allows whatever the file's
    own mode: a file marked read-only (a released gate's export, a report kept as written) was replaced without a
    word, where ``DataFrame.to_csv`` refuses it ("Permission denied"). As root, every file is writable, as to
    ``to_csv``.
    """
    try:
        return stat.S_ISREG(os.stat(path).st_mode) and not os.access(path, os.W_OK)
    except (OSError, ValueError):
        return False


def make_folder(folder: Path, role: str, instead: str = "choose another path") -> None:
    """Make ``folder`` (and its parents); a file in the way, or a folder that cannot be made, is one line naming
    it and what it is for (``role``), then what to do (``instead``).
    :class:`~oloproof_nb.errors.ExportError`, never a raw FileExistsError or NotADirectoryError.
    """
    try:
        make_folders(folder)  # under umask 777 a folder its owner cannot use is removed again, never left
    except (FileExistsError, NotADirectoryError):
        blocking = next((p for p in (folder, *folder.parents) if _in_the_way(p)), folder)
        what = "a symbolic link to nothing" if blocking.is_symlink() and not blocking.exists() else "a file"
        raise ExportError(f"{not_home(blocking)}: is {what}, not a folder ({role}); move it or {instead}") from None
    except OSError as exc:  # no permission, a read-only file system, a name too long
        raise ExportError(f"{not_home(folder)}: cannot create this folder ({role}): "
                          f"{exc.strerror or type(exc).__name__}; {instead}") from None


def _is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder, or a symbolic link to one; False when it cannot be told (the write that
    follows says why it fails)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _in_the_way(path: Path) -> bool:
    """Whether ``path`` is something a folder cannot be made in: a file, or a link to nothing."""
    return (path.exists() and not path.is_dir()) or (path.is_symlink() and not path.exists())


def _remove(tmp: Path) -> None:
    """Remove a temporary file if it is there; a folder that refuses even that (a read-only file system answers
    an unlink with EROFS, not "no such file") must not hide why the write failed behind the temporary name."""
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        pass


#: What makes a CSV cell quoted: the comma, the quote and the line breaks (RFC 4180), and the other separators a
#: spreadsheet splits a row on: ``;`` (Excel's list separator where the decimal mark is a comma, as in Germany or
#: France) and a tab. Written bare, a case id ``x;=1+2;`` was read there as three cells, the second the formula
#: ``=1+2`` (and ``y\t=cmd|' /C calc'!A0`` a DDE call), which the leading ``'`` of :func:`csv_text` never saw.
#: A quoted cell is one cell under any of them.
_CSV_QUOTED = re.compile('[,"\r\n;\t]')


def _csv_field(cell: str) -> str:
    """A CSV field: ``cell`` between quotes (each ``"`` doubled) when it holds a separator, a quote or a line break."""
    return '"' + cell.replace('"', '""') + '"' if _CSV_QUOTED.search(cell) else cell


def _csv_line(cells: list[str]) -> str:
    """A CSV line of ``cells`` (a row of one empty cell is ``""``, as the csv module writes it: else a blank line)."""
    return '""' if cells == [""] else ",".join(map(_csv_field, cells))


def _csv(df: pd.DataFrame, path: Path) -> str:
    rows = [[csv_text(v) for v in row] for row in df.itertuples(index=False, name=None)]
    header = [csv_text(str(c)) for c in df.columns]
    # a carriage return inside a cell was written bare under "\n" (pandas' writer quoted a cell for the characters
    # of its line terminator only), and csv readers and spreadsheets end a row there, so the rest of the cell
    # began a row of its own (a case id 'x\r=2+5' gave a row whose first cell is the formula =2+5). Every such cell
    # is quoted now, and a table holding one keeps its "\r\n" line ends (RFC 4180) as before.
    crlf = any("\r" in cell for cell in itertools.chain(header, *rows))
    end = "\r\n" if crlf else "\n"
    return "".join(_csv_line(cells) + end for cells in [header, *rows])


def _md(df: pd.DataFrame, path: Path) -> str:
    return markdown_table(df) + "\n"


_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                # LaTeX's default font encoding (OT1) sets "<", ">" and "|" in text as "¡", "¿" and an em dash
                "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "≥": r"$\geq$", "≤": r"$\leq$",
                "−": "-",
                # after a row's \\, LaTeX reads "[" as the start of a spacing argument and "*" as its star form
                "[": "{[}", "]": "{]}", "*": "{*}"}


#: Every character of a LaTeX cell as :data:`_TEX_ESCAPES` writes it, a control character or a line or paragraph
#: separator (``Cc``, ``Zl``, ``Zp``) a space, and every other character a screen acts on as its escape
#: (:class:`~.theme.Screen`) behind a LaTeX backslash; a lone surrogate is kept for the write to refuse.
_TEX = Screen(str.maketrans({**_TEX_ESCAPES,
                             **dict.fromkeys([*map(chr, range(0x20)), *map(chr, range(0x7F, 0xA0)), "\u2028",
                                              "\u2029"], " ")}),
              keep="".join(map(chr, range(0xD800, 0xE000))), shown=lambda escape: "\\textbackslash{}" + escape[1:])


def _tex(text: str) -> str:
    """A LaTeX cell: special characters escaped, every line break or control character a space, and every other
    character a screen acts on (a bidirectional control, a zero-width space) written as its escape.

    A newline in a cell would end the row's source line (a blank line ends the table with an
    error), a carriage return likewise, and a control character is not valid LaTeX input. A right-to-left override
    (``\\u202e``) left raw reversed the rest of its row in the ``.tex`` file as an editor or ``cat`` shows it (a
    case id ``rtl\\u202eexe.txt`` read ``rtltxt.exe``); it is written ``\\u202e``, as the ``.md`` and ``.html``
    exports show it (:class:`~.theme.Screen`). A lone surrogate is left for the write to refuse.
    """
    return text.translate(_TEX)


def _latex(df: pd.DataFrame, path: Path) -> str:
    spec = "".join("r" if numeric_column(df[c]) else "l" for c in df.columns)
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(_tex(str(c)) for c in df.columns) + " \\\\", "\\midrule"]
    lines += [" & ".join(_tex(cell) for cell in row) + " \\\\" for row in _texts(df)]
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def _html(df: pd.DataFrame, path: Path) -> str:
    title = html_text(path.stem, plain=True)  # a file name is the user's: shown as written
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>\n'
            f"<style>{TABLE_CSS}</style></head><body>\n{html_table(df)}\n</body></html>\n")


def json_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """One object per row of ``df``, its columns as keys and its cells as :func:`json_cell` gives them (the
    ``.json`` export's rows; ``oloproof gate --json``'s criteria); the index is left out."""
    columns = [str(c) for c in df.columns]
    return [dict(zip(columns, (json_cell(v) for v in row), strict=True))
            for row in df.itertuples(index=False, name=None)]


def _json(df: pd.DataFrame, path: Path) -> str:
    return json.dumps(json_records(df), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _index_as_columns(table: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The index of ``table`` as its first columns when any level is named (every level, an unnamed one as
    ``reset_index`` names it, ``level_1``); a level that repeats a column of the same name and values
    (``set_index("criterion", drop=False)``) is left out rather than written twice."""
    names = list(table.index.names)
    if all(name is None for name in names):
        return table
    twice = _named_twice([n for n in names if n is not None])
    if twice:
        raise ExportError(f"{not_home(path)}: the index has more than one level named {', '.join(map(repr, twice))}; "
                          "rename them, or reset the index yourself")
    repeats = [name for name in names if name is not None and name in table.columns]
    for name in repeats:
        level = np.asarray(table.index.get_level_values(name), dtype=object)
        column = np.asarray(table[name], dtype=object)
        if column.ndim != 1 or not all(_same_cell(a, b) for a, b in zip(level, column, strict=True)):
            raise ExportError(f"{not_home(path)}: the index level {name!r} and the column {name!r} hold different "
                              "values; rename one of them, or reset the index yourself")
    if len(repeats) == len(names):
        return table.reset_index(drop=True)
    kept = table.droplevel(repeats) if repeats else table
    try:
        return kept.reset_index()
    except ValueError as exc:  # a level's name (or level_1, an unnamed one's) is a column's already
        raise ExportError(f"{not_home(path)}: an index level and a column have one name ({exc}); rename one of them, "
                          "or reset the index yourself") from None


def _named_twice(names: Iterable[Any]) -> list[str]:
    """The names given more than once, as text, sorted."""
    counts = Counter(str(n) for n in names)
    return sorted(n for n, k in counts.items() if k > 1)


def _same_cell(a: object, b: object) -> bool:
    """Two cells as one value (1 and 1.0, a category and its text; two missing values)."""
    try:
        return bool(a == b) or (a != a and b != b)
    except (TypeError, ValueError):
        return False


_WRITERS: dict[str, Callable[[pd.DataFrame, Path], str]] = {
    ".csv": _csv, ".md": _md, ".tex": _latex, ".html": _html, ".json": _json,
}


def export_table(df: pd.DataFrame | Any, path: str | Path) -> Path:
    """Write a table to ``path`` in the format its suffix names, with raw, unrounded numbers.

    Parameters
    ----------
    df : pandas.DataFrame, Gate or Comparison
        Any frame of the toolkit (a :class:`~oloproof_nb.Gate` writes its ``table``; when the gate has a
        ``reason``, such as ``edited_frames: …`` or ``unfinished: …``, the table is written with two more
        columns, ``gate_verdict`` and ``gate_reason``, on every row: its rows' own ``PASS`` is no release decision
        then, and an export of them alone said nothing of it. ``gate.table`` given itself is written as it is). A
        :class:`~oloproof_nb.Comparison` likewise writes its ``table``, with ``comparison_verdict`` and
        ``comparison_reason`` on every row when it has a ``reason`` (``cases_not_in_both_runs: …``: its rows'
        ``NO_REGRESSION`` is then no verdict of the comparison).
        A named index (e.g. after ``groupby``) is written as leading columns; an
        unnamed one is left out.
    path : str or Path
        Ends in ``.csv``, ``.md`` (GitHub table), ``.tex`` (a booktabs ``tabular``),
        ``.html`` (a standalone page holding one ``<table>``) or ``.json``
        (a list of one object per row). Missing parent folders are created;
        an existing file is overwritten (as ``DataFrame.to_csv`` does: a notebook cell run again writes the same
        path), whole or not at all (:func:`write_file`: a new file beside it, renamed over it; a named pipe or a
        device there is replaced, a symbolic link to a file is followed). A folder there, or a link to one, is
        refused, before anything is written, and so is a file this process may not write (made read-only with
        ``chmod a-w``, or another user's), which ``DataFrame.to_csv`` refuses too: it is kept as it is.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ExportError
        An unknown suffix (the message lists the allowed ones), a ``df`` that is not a table, or a ``path``
        that cannot be written (a folder, a read-only file, or a file where a parent folder belongs: the message
        names it); in ``.csv``,
        ``.tex`` and ``.json``, a text cell holding a lone surrogate (not Unicode text), which it names.

    Notes
    -----
    Every float is written with ``repr``, the shortest text that parses back
    to the identical float, so exports round-trip bit for bit. In the text
    formats (csv, md, tex, html) a missing value (NaN, None, ``pd.NA``) is an
    empty cell, infinities are ``inf``/``-inf``, and dicts, lists and ABSENT are
    JSON text. In ``.json`` numbers are JSON numbers, missing values ``null``,
    infinities the strings ``"Infinity"``/``"-Infinity"`` (strict JSON has no
    infinity; ``float()`` reads them back), dicts and lists nested JSON (a NaN or an
    infinity inside them written the same way), ABSENT
    ``{"$absent": true}``. LaTeX special characters (and ``<``, ``>``, ``|``, ``[``, ``]``, ``*``) are
    escaped, ``≥``/``≤`` become ``$\\geq$``/``$\\leq$``, a line break or control character
    inside a cell becomes a space, and a bidirectional control or an invisible character (``\\u202e``, a
    zero-width space) its escape, as in ``.md`` and ``.html``; the table needs ``\\usepackage{booktabs}``.

    Text cells are escaped for their format. In ``.md`` every cell goes through
    :func:`~oloproof_nb._display.markdown.md_cell` (line breaks become spaces; ``<``, ``>``,
    ``|``, ``[``, ``]``, ``$`` and ``\\`` cannot make markup). In ``.csv``, a text cell that starts
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return — which a spreadsheet would run
    as a formula — is written with a ``'`` in front, and so is one that starts with ``'``
    itself; numbers are never changed, so ``-0.5`` stays a number. A cell holding ``;`` or a tab is quoted, as
    one holding a comma is, so a spreadsheet that splits rows on them finds no formula inside it. A table with a
    carriage return inside a cell is written with ``\r\n`` line ends, so that the cell is quoted and stays one cell
    (with ``\n``, ``x\r=2+5`` was written bare and read as two rows, the second starting with a formula). To read the
    raw text back, drop one leading ``'`` from every text cell that has one (pandas:
    ``df[col].str.replace(r"^'", "", regex=True)``), or use the ``.json`` export, which is
    always raw. ``pd.read_csv`` reads some texts as missing by default (``n/a``, ``NA``, ``null``,
    ``None``, ``nan`` ...): a slice table's ``n/a`` bin, or such a case id, comes back NaN and a
    ``groupby`` drops its rows; read with ``keep_default_na=False, na_values=[""]`` to keep them.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> op.export_table(op.gate(run), "gate.md")   # doctest: +SKIP
    PosixPath('gate.md')
    """
    table = _with_gate_reason(df, table_of(df))
    if not isinstance(table, pd.DataFrame):
        raise ExportError(f"export_table needs a pandas DataFrame (or a Gate), got {type(df).__name__}")
    path = Path(path)
    suffix = path.suffix.lower()
    writer = _WRITERS.get(suffix)
    if writer is None:
        raise ExportError(f"{not_home(path)}: unknown table format {suffix or '(no suffix)'!r}; "
                          f"allowed suffixes: {', '.join(EXPORT_SUFFIXES)}")
    table = _index_as_columns(table, path)
    twice = _named_twice(table.columns)
    if twice:  # a JSON row keeps one of them, a CSV header both: which column a reader gets is a guess
        raise ExportError(f"{not_home(path)}: the table has more than one column named {', '.join(map(repr, twice))}; "
                          "give each column its own name (DataFrame.rename, or loc[:, ~df.columns.duplicated()])")
    if _is_folder(path):  # before: `cannot write (Is a directory)`, after the table was formatted
        what = "a symbolic link to a folder" if path.is_symlink() else "a folder"
        raise ExportError(f"{not_home(path)}: is {what}, not a file; give the export a file path (such as "
                          f"{not_home(path / ('table' + suffix))}); the folder is left as it is")
    make_folder(path.parent, f"the folder of the export {path.name}")
    write_file(path, writer(table, path))
    return path
