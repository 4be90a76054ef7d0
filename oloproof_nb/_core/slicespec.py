"""Slice specs: ``<dimension>:<edges>``, parsed and turned into half-open bins (pure).

A slice spec is ``<dimension>:<edges>``, e.g. ``tool_calls:1,2`` or
``trajectory_length:4,5``. The edges are ascending non-negative integers and
give half-open bins (−∞, e1), [e1, e2), …, [ek, ∞).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import SliceSpecError, quote

__all__ = ["DIMENSIONS", "MAX_EDGES", "MAX_EDGE_DIGITS", "NA_BIN", "SliceSpec", "parse_slice_spec"]

#: Most digits an edge may have: every edge is below 10**15, so it is exact as a float (bins are compared so).
MAX_EDGE_DIGITS = 15
#: Most edges a slice a suite declares may have (51 bins; checked when a suite folder is loaded): 1,000 edges made a
#: report of 16 s and a plot 143,480 pixels wide, a table and a picture no one can read.
MAX_EDGES = 50
#: Slice dimension → the ``run.cases`` column it bins.
DIMENSIONS: dict[str, str] = {"tool_calls": "n_tool_calls", "trajectory_length": "trajectory_length"}
#: The bin of rows whose case recorded no trajectory (status ``error`` or ``timeout``).
NA_BIN = "n/a"


@dataclass(frozen=True)
class SliceSpec:
    """A parsed slice spec.

    Attributes
    ----------
    dimension : {"tool_calls", "trajectory_length"}
        What is binned: the number of tool calls or of trajectory steps of a case.
    edges : tuple of int
        Strictly ascending bin edges.
    """

    dimension: str
    edges: tuple[int, ...]

    @property
    def column(self) -> str:
        """The ``run.cases`` column binned."""
        return DIMENSIONS[self.dimension]

    @property
    def text(self) -> str:
        """The canonical spec, e.g. ``tool_calls:1,2``."""
        return f"{self.dimension}:{','.join(str(e) for e in self.edges)}"

    def bins(self) -> list[tuple[str, float, float]]:
        """``(label, lower, upper)`` of every numeric bin, in order (``lower`` inclusive, ``upper`` exclusive)."""
        e = self.edges
        out = [(f"<{e[0]}", -math.inf, float(e[0]))]
        out += [(f"[{a}, {b})", float(a), float(b)) for a, b in zip(e[:-1], e[1:], strict=True)]
        out.append((f"≥{e[-1]}", float(e[-1]), math.inf))
        return out


def parse_slice_spec(spec: str | SliceSpec) -> SliceSpec:
    """Parse ``<dimension>:<edges>``.

    Parameters
    ----------
    spec : str or SliceSpec
        ``tool_calls:<edges>`` or ``trajectory_length:<edges>``; edges are
        strictly ascending non-negative integers separated by commas (spaces
        are ignored).

    Returns
    -------
    SliceSpec

    Raises
    ------
    SliceSpecError
        One line naming the spec and what is allowed: an unknown dimension,
        no edges, an edge that is not a non-negative integer (or has more than
        :data:`MAX_EDGE_DIGITS` digits), edges not strictly ascending.

    Examples
    --------
    >>> parse_slice_spec("tool_calls:1,2")
    SliceSpec(dimension='tool_calls', edges=(1, 2))
    >>> [label for label, _, _ in parse_slice_spec("trajectory_length:4").bins()]
    ['<4', '≥4']
    """
    if isinstance(spec, SliceSpec):
        return parse_slice_spec(spec.text)
    if not isinstance(spec, str):
        raise SliceSpecError(spec, f"must be a string, got {type(spec).__name__}")
    dimension, sep, rest = spec.strip().partition(":")
    dimension = dimension.strip()
    if not sep:
        raise SliceSpecError(spec, "no ':' between the dimension and the edges")
    if dimension not in DIMENSIONS:
        raise SliceSpecError(spec, f"unknown dimension {dimension!r}")
    parts = [p.strip() for p in rest.split(",")]
    if parts == [""]:
        raise SliceSpecError(spec, "no edges")
    edges: list[int] = []
    for part in parts:
        if not part.isdigit() or not part.isascii():
            raise SliceSpecError(spec, f"edge {quote(part)} is not a non-negative integer")
        if len(part.lstrip("0")) > MAX_EDGE_DIGITS:  # a count never is; and bins are compared as floats
            raise SliceSpecError(spec, f"edge {quote(part)} has more than {MAX_EDGE_DIGITS} digits")
        edges.append(int(part))
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b <= a:
            raise SliceSpecError(spec, f"edges must be strictly ascending, but {b} follows {a}")
    return SliceSpec(dimension, tuple(edges))
