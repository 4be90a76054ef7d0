"""Write a table to a file by its suffix: ``.csv``, ``.md``, ``.tex``, ``.html``, ``.json``.

Numbers are written raw: every float with the shortest text that reads back as
the same float (Python's ``repr``), never rounded. Formatting for the eye
belongs to ``_repr_html_`` and the report, not to an export.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tabulate import tabulate

from .errors import OloproofError
from .paths import Absent

__all__ = ["EXPORT_SUFFIXES", "ExportError", "export_table", "cell_text", "html_table"]

EXPORT_SUFFIXES: tuple[str, ...] = (".csv", ".md", ".tex", ".html", ".json")


class ExportError(OloproofError):
    """An export that cannot be written (unknown suffix, not a table)."""


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, Absent):
        return {"$absent": True}
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (pd.Timestamp, dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def _json_text(value: Any) -> str:
    if isinstance(value, Absent):
        return json.dumps({"$absent": True})
    return json.dumps(value, ensure_ascii=False, default=_json_default)


def cell_text(value: Any) -> str:
    """One cell as raw text, the way every text export writes it.

    Floats use ``repr`` (shortest exact round-trip: ``0.1 + 0.2`` is
    ``0.30000000000000004``), infinities ``inf``/``-inf``; NaN, None and
    ``pd.NA`` are empty; booleans ``True``/``False``; dicts, lists and
    :data:`~oloproof_nb.paths.ABSENT` JSON text (ABSENT is ``{"$absent": true}``,
    as in the run's files); timestamps ISO 8601.
    """
    if isinstance(value, (dict, list, tuple, Absent, np.ndarray)):
        return _json_text(value)
    if _is_missing(value):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (pd.Timestamp, dt.datetime, dt.date)):
        return value.isoformat()
    return str(value)


def _json_cell(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple, Absent, np.ndarray)):
        return json.loads(_json_text(value))
    if _is_missing(value):
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


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _texts(df: pd.DataFrame) -> list[list[str]]:
    return [[cell_text(v) for v in row] for row in df.itertuples(index=False, name=None)]


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    text = pd.DataFrame(_texts(df), columns=[str(c) for c in df.columns], dtype=object)
    text.to_csv(path, index=False, lineterminator="\n")


def _write_md(df: pd.DataFrame, path: Path) -> None:
    rows = [[cell.replace("|", "\\|").replace("\n", " ") for cell in row] for row in _texts(df)]
    align = ["right" if _numeric(df[c]) else "left" for c in df.columns]
    body = tabulate(rows, headers=[str(c) for c in df.columns], tablefmt="github", disable_numparse=True,
                    colalign=align if len(df.columns) else None)
    path.write_text(body + "\n", encoding="utf-8")


_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                "<": r"\textless{}", ">": r"\textgreater{}", "≥": r"$\geq$", "≤": r"$\leq$", "−": "-"}


def _tex(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)


def _write_tex(df: pd.DataFrame, path: Path) -> None:
    spec = "".join("r" if _numeric(df[c]) else "l" for c in df.columns)
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(_tex(str(c)) for c in df.columns) + " \\\\", "\\midrule"]
    lines += [" & ".join(_tex(cell) for cell in row) + " \\\\" for row in _texts(df)]
    lines += ["\\bottomrule", "\\end{tabular}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def html_table(df: pd.DataFrame, text: Callable[[Any], str] = cell_text) -> str:
    """A ``<table>`` fragment of ``df``: cells from ``text`` (raw by default), HTML-escaped, numbers right-aligned."""
    esc = html.escape
    numeric = [_numeric(df[c]) for c in df.columns]
    head = "".join(f"<th>{esc(str(c))}</th>" for c in df.columns)
    body = []
    for row in df.itertuples(index=False, name=None):
        cells = "".join(f'<td class="num">{esc(text(v))}</td>' if num else f"<td>{esc(text(v))}</td>"
                        for v, num in zip(row, numeric, strict=True))
        body.append(f"<tr>{cells}</tr>")
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>"


TABLE_CSS = ("table{border-collapse:collapse;font:13px/1.4 system-ui,sans-serif}"
             "th,td{border:1px solid #d0d7de;padding:3px 8px}th{background:#f6f8fa;text-align:left}"
             "td.num{text-align:right;font-variant-numeric:tabular-nums}")


def _write_html(df: pd.DataFrame, path: Path) -> None:
    path.write_text(
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>' + html.escape(path.stem) + "</title>\n"
        f"<style>{TABLE_CSS}</style></head><body>\n{html_table(df)}\n</body></html>\n", encoding="utf-8")


def _write_json(df: pd.DataFrame, path: Path) -> None:
    columns = [str(c) for c in df.columns]
    records = [dict(zip(columns, (_json_cell(v) for v in row), strict=True))
               for row in df.itertuples(index=False, name=None)]
    path.write_text(json.dumps(records, ensure_ascii=False, indent=2, allow_nan=False) + "\n", encoding="utf-8")


_WRITERS: dict[str, Callable[[pd.DataFrame, Path], None]] = {
    ".csv": _write_csv, ".md": _write_md, ".tex": _write_tex, ".html": _write_html, ".json": _write_json,
}


def export_table(df: pd.DataFrame | Any, path: str | Path) -> Path:
    """Write a table to ``path`` in the format its suffix names, with raw, unrounded numbers.

    Parameters
    ----------
    df : pandas.DataFrame or Gate
        Any frame of the toolkit (a :class:`~oloproof_nb.Gate` writes its ``table``).
        A named index (e.g. after ``groupby``) is written as leading columns; an
        unnamed one is left out.
    path : str or Path
        Ends in ``.csv``, ``.md`` (GitHub table), ``.tex`` (a booktabs ``tabular``),
        ``.html`` (a standalone page holding one ``<table>``) or ``.json``
        (a list of one object per row). Missing parent folders are created;
        an existing file is overwritten.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ExportError
        An unknown suffix (the message lists the allowed ones) or a ``df`` that is not a table.

    Notes
    -----
    Every float is written with ``repr``, the shortest text that parses back
    to the identical float, so exports round-trip bit for bit. In the text
    formats (csv, md, tex, html) a missing value (NaN, None, ``pd.NA``) is an
    empty cell, infinities are ``inf``/``-inf``, and dicts, lists and ABSENT are
    JSON text. In ``.json`` numbers are JSON numbers, missing values ``null``,
    infinities the strings ``"Infinity"``/``"-Infinity"`` (strict JSON has no
    infinity; ``float()`` reads them back), dicts and lists nested JSON, ABSENT
    ``{"$absent": true}``. LaTeX special characters (and ``<``, ``>``) are escaped and ``≥``/``≤``
    become ``$\\geq$``/``$\\leq$``; the table needs ``\\usepackage{booktabs}``.

    Examples
    --------
    >>> op.export_table(op.gate(run).table, "gate.md")   # doctest: +SKIP
    PosixPath('gate.md')
    """
    table = getattr(df, "table", df)
    if not isinstance(table, pd.DataFrame):
        raise ExportError(f"export_table needs a pandas DataFrame (or a Gate), got {type(df).__name__}")
    path = Path(path)
    suffix = path.suffix.lower()
    writer = _WRITERS.get(suffix)
    if writer is None:
        raise ExportError(f"{path}: unknown table format {suffix or '(no suffix)'!r}; "
                          f"allowed suffixes: {', '.join(EXPORT_SUFFIXES)}")
    if any(name is not None for name in table.index.names):
        table = table.reset_index()
    path.parent.mkdir(parents=True, exist_ok=True)
    writer(table, path)
    return path
