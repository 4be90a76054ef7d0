"""Columns as data: one :class:`FrameSpec` per frame names every column, its dtype, its meaning and its source.

A spec drives the extraction of a frame from run records (each column's
``get`` reads one item), its dtypes, the Parquet schema of its columnar copy
(:meth:`FrameSpec.arrow_schema`, see ``_analysis/columnar.py``), and the tests
that pin the column lists of shared/DESIGN.md. The documented columns come
first, in DESIGN's order; extra columns follow.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa  # already imported by pandas; pyarrow.parquet is imported only where files are read

from .._core.canonical import dump_json
from .._core.receipts import STATUSES
from .._core.records import VERDICT_WORDS

__all__ = ["Column", "FrameSpec", "TEXT", "TIME", "JSON", "ARROW_TYPES", "FRAMES", "CASES", "STEPS", "SNAPSHOTS",
           "CHANGES", "VERDICTS", "missing_scalar",
           "COMPARISONS", "REPLAYS", "PAIRS", "RECEIPTS", "GATE", "VALIDITY", "SLICES"]

#: The dtype of text columns: pandas' default string dtype (``str``, missing values NaN) on pandas ≥ 3,
#: plain ``object`` before.
TEXT = "str" if int(pd.__version__.split(".")[0]) >= 3 else "object"
#: Timestamps: UTC with microseconds, like Python's datetime.
TIME = "datetime64[us, UTC]"
#: A user's JSON value (an answer, arguments, a state): kept as the Python object (``None`` stays ``None``)
#: in a column of pandas dtype ``object``. A marker of its own (not ``"object"``), so it never collides
#: with :data:`TEXT` (which is ``object`` on pandas < 3).
JSON = "json"

#: The Arrow (Parquet) type of each frame dtype. A JSON value is stored as its JSON text (see
#: ``_analysis/columnar.py`` for why), ABSENT as a null; the nullable pandas dtypes (``Int64``,
#: ``boolean``) and text map to nullable Arrow columns, ``int64``/``bool``/``float64`` to plain ones.
ARROW_TYPES: dict[str, pa.DataType] = {
    TEXT: pa.large_string(),
    "int64": pa.int64(),
    "Int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "boolean": pa.bool_(),
    TIME: pa.timestamp("us", tz="UTC"),
    JSON: pa.large_string(),
}
#: Dtypes whose column never holds a missing value (the Arrow field is not nullable).
_NOT_NULL = ("int64", "bool")
#: The pandas dtype of each frame dtype in the ``pandas`` metadata of a Parquet file (what ``pd.read_parquet`` and
#: ``dask.dataframe.read_parquet`` make of a column): a JSON column is its text.
_PANDAS_TYPES = {TEXT: ("unicode", "object"), "int64": ("int64", "int64"), "Int64": ("int64", "Int64"),
                 "float64": ("float64", "float64"), "bool": ("bool", "bool"), "boolean": ("bool", "boolean"),
                 TIME: ("datetimetz", TIME), JSON: ("unicode", "object")}


@dataclass(frozen=True)
class Column:
    """One column: its name, dtype, what it holds, and how to read it from one item of the frame's source."""

    name: str
    dtype: str
    doc: str
    get: Callable[[Any], Any] | None = None
    #: The only values the column may hold when it is read from a journal (empty: any value of its dtype).
    words: tuple[str, ...] = ()

    @property
    def is_json(self) -> bool:
        """Whether the column holds users' JSON values (stored as JSON text in the columnar copy)."""
        return self.dtype == JSON

    def arrow_field(self) -> pa.Field:
        """The column's Arrow field: its type, nullability, and its pandas dtype in the field metadata."""
        encoding = "json" if self.is_json else "value"
        return pa.field(self.name, ARROW_TYPES[self.dtype], nullable=self.dtype not in _NOT_NULL,
                        metadata={"oloproof.dtype": self.dtype, "oloproof.encoding": encoding})


@dataclass(frozen=True)
class FrameSpec:
    """The columns of one frame, in order; ``documented`` of them are the ones shared/DESIGN.md names.

    ``row`` (optional) reads every column of one item at once: ``row(item)`` is
    ``tuple(c.get(item) for c in columns)`` in one call (``tuple`` itself where each item already is its row,
    every column's ``get`` then ``itemgetter`` of its position). A frame is made column by column from the
    rows turned around (``zip(*rows)``, in C): one call per item, not one per cell.
    """

    name: str
    columns: tuple[Column, ...]
    documented: int
    row: Callable[[Any], Sequence[Any]] | None = None

    @property
    def names(self) -> list[str]:
        """Every column name, in order."""
        return [c.name for c in self.columns]

    def build(self, items: Iterable[Any]) -> pd.DataFrame:
        """The frame of ``items``, column by column, each read with its column's ``get`` (all at once with
        ``row``) and cast to its dtype."""
        items = items if isinstance(items, Sequence) else list(items)
        return self.from_columns(dict(zip(self.names, self.values(items), strict=True)))

    def values(self, items: Sequence[Any]) -> list[Sequence[Any]]:
        """Each column's values over ``items``, in column order (read with ``row`` when the spec has one)."""
        if self.row is not None:
            return list(zip(*map(self.row, items), strict=True)) if items else [() for _ in self.columns]
        getters = []
        for c in self.columns:
            if c.get is None:
                raise ValueError(f"frame {self.name}: column {c.name} has no getter; it cannot be read from items")
            getters.append(c.get)
        return [list(map(get, items)) for get in getters]

    def from_columns(self, data: dict[str, Sequence[Any]]) -> pd.DataFrame:
        """A frame of these columns from ``{name: values}`` (every column present), with the spec's dtypes."""
        out = {}
        for c in self.columns:
            values = data[c.name]
            if c.dtype == JSON:
                arr = np.empty(len(values), dtype=object)
                arr[:] = list(values)  # element by element: a list value stays one cell
                out[c.name] = pd.Series(arr, dtype=object)
            elif c.dtype == TIME:
                out[c.name] = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601"
                                             ).astype(TIME)
            else:
                out[c.name] = pd.Series(values, dtype=object).astype(c.dtype)
        return pd.DataFrame(out, columns=self.names)

    def empty(self) -> pd.DataFrame:
        return self.from_columns({c.name: [] for c in self.columns})

    @property
    def json_columns(self) -> list[str]:
        """The columns holding users' JSON values."""
        return [c.name for c in self.columns if c.is_json]

    def arrow_schema(self) -> pa.Schema:
        """The explicit Arrow schema of the frame's columnar copy (one field per column, in order)."""
        return self._arrow_schema

    @functools.cached_property
    def _arrow_schema(self) -> pa.Schema:  # built once per frame: every chunk of a copy is written with it
        return pa.schema([c.arrow_field() for c in self.columns],
                         metadata={"oloproof.frame": self.name, "pandas": self._pandas_metadata()})

    def _pandas_metadata(self) -> str:
        """The ``pandas`` metadata of the frame's Parquet file: each column's dtype, which Arrow gives a reader that
        converts the file without oloproof_nb (``pd.read_parquet``, Dask). Without it, a nullable count read as
        ``int64`` from one run and ``float64`` from a run where a case errored (``n_tool_calls``), a flag as ``bool``
        or ``object`` (``recovered``), as each file held a missing value or not."""
        columns = [{"name": c.name, "field_name": c.name, "pandas_type": _PANDAS_TYPES[c.dtype][0],
                    "numpy_type": _PANDAS_TYPES[c.dtype][1],
                    "metadata": {"timezone": "UTC", "unit": "us"} if c.dtype == TIME else None} for c in self.columns]
        return dump_json({"index_columns": [], "column_indexes": [], "columns": columns})

    def doc_table(self) -> str:
        """The columns as numpydoc lines (``name : dtype`` then the meaning), for docstrings."""
        return "\n".join(f"{c.name} : {c.dtype}\n    {c.doc}" for c in self.columns)


def missing_scalar(value: Any) -> bool:
    """``value`` is a missing scalar (None, NaN, ``pd.NA``, ``NaT``), as a frame's cell holds one: a null, not the
    text ``nan`` nor a time without a timezone.

    Examples
    --------
    >>> [missing_scalar(v) for v in (None, float("nan"), pd.NA, pd.NaT, "nan", 0, [None])]
    [True, True, True, True, False, False, False]
    """
    # a container is no scalar, so not missing: ``pd.isna([None])`` is an array, which ``bool`` read as True
    return pd.api.types.is_scalar(value) and bool(pd.isna(value))


#: The ``epoch`` column every frame of a run carries (1 in a run without ``epochs``).
EPOCH_DOC = ("The epoch (1-based repetition of the case; 1..k with ``epochs: k``, 1 otherwise). The case id "
             "stays the case's; (case_id, epoch) identifies a row's case run.")


CASES = FrameSpec("cases", (
    Column("case_id", TEXT, "The case id (a derived case: ``<source>~<transform>``)."),
    Column("source_id", TEXT, "The source case (itself for a source case)."),
    Column("transform", TEXT, "The metamorphic transform that derived the case (missing for a source case)."),
    Column("cluster", TEXT, "The cluster: the case's ``cluster`` or id; a derived case is in its source's."),
    Column("digest", TEXT, "SHA-256 of the case's canonical JSON (id, input, initial_state, expected, outcome)."),
    Column("status", TEXT, "``completed``, ``failed``, ``waiting`` (the trajectory's) or ``error``, ``timeout``."),
    Column("answer", JSON, "The final answer (None without a trajectory)."),
    Column("n_tool_calls", "Int64", "Tool calls in the trajectory (missing without one)."),
    Column("trajectory_length", "Int64", "Steps in the trajectory (missing without one)."),
    Column("duration_s", "float64", "Seconds the case took (reset, run, snapshot)."),
    Column("error", TEXT, "Why the case has status ``error`` or ``timeout`` (missing otherwise)."),
    Column("has_state", "bool", "Whether a state (``environment_state/v1``) was recorded."),
    Column("epoch", "int64", EPOCH_DOC),
    Column("started_at", TIME, "When the case started (UTC)."),
    Column("metadata", JSON, "The case's ``metadata`` (a dict, empty when none)."),
), documented=12, row=tuple)  # items: the rows (frames.case_row)

STEPS = FrameSpec("steps", (
    Column("case_id", TEXT, "The case.", itemgetter(0)),
    Column("step", "int64", "Index of the step in the trajectory.", itemgetter(1)),
    Column("kind", TEXT, "``tool_call`` or ``message``.", itemgetter(2)),
    Column("tool", TEXT, "The tool called (a message: the recorded model call's name, if any).", itemgetter(3)),
    Column("args", JSON, "The call's arguments.", itemgetter(4)),
    Column("result", JSON, "What the tool returned (None on message rows).", itemgetter(5)),
    Column("is_error", "bool", "Whether the tool result reports a failure (``result_is_error``).", itemgetter(6)),
    Column("epoch", "int64", EPOCH_DOC, itemgetter(7)),
    Column("role", TEXT, "A message's role (missing on tool rows).", itemgetter(8)),
    Column("content", JSON, "A message's content (None on tool rows).", itemgetter(9)),
), documented=7, row=tuple)  # items: the rows (frames.steps_items)

SNAPSHOTS = FrameSpec("snapshots", (
    Column("case_id", TEXT, "The case.", itemgetter("case_id")),
    Column("schema", TEXT, "``environment_state/v1``.", itemgetter("schema")),
    Column("captured_at", TIME, "When ``snapshot()`` returned (UTC).", itemgetter("captured_at")),
    Column("state_digest", TEXT, "SHA-256 of the state's canonical JSON.", itemgetter("state_digest")),
    Column("state", JSON, "The state the case left.", itemgetter("state")),
    Column("epoch", "int64", EPOCH_DOC, lambda e: e.get("epoch", 1)),
    Column("case_digest", TEXT, "The case's digest.", itemgetter("case_digest")),
    Column("system_version", TEXT, "The system's ``version`` (missing when it has none).",
           lambda e: e.get("system_version")),
    Column("run_id", TEXT, "The run.", itemgetter("run_id")),
), documented=5)

CHANGES = FrameSpec("changes", (
    Column("case_id", TEXT, "The case.", itemgetter(0)),
    Column("path", TEXT, "A leaf path whose value differs from ``initial_state``.", itemgetter(1)),
    Column("before", JSON, "Its value in ``initial_state`` (ABSENT when it appeared).", itemgetter(2)),
    Column("after", JSON, "Its value after the case (ABSENT when it disappeared).", itemgetter(3)),
    Column("epoch", "int64", EPOCH_DOC, itemgetter(4)),
), documented=4, row=tuple)  # items: the rows (frames.changes_items)

VERDICTS = FrameSpec("verdicts", (
    Column("case_id", TEXT, "The case judged (a metamorphic relation: the derived case); a copy labeled invalid "
                            "has no row.", itemgetter(0)),
    Column("cluster", TEXT, "The case's cluster.", itemgetter(1)),
    Column("criterion", TEXT, "The criterion (its name in release.yaml).", itemgetter(2)),
    Column("evaluator", TEXT, "The evaluator type.", itemgetter(3)),
    Column("verdict", TEXT, "``pass``, ``fail`` or ``missing`` (a missing case never passes).",
           itemgetter(4), VERDICT_WORDS),
    Column("reason", TEXT, "Why (empty for a pass).", itemgetter(5)),
    Column("epoch", "int64", EPOCH_DOC, itemgetter(6)),
), documented=6, row=tuple)  # items: the rows (frames.verdicts_items)

COMPARISONS = FrameSpec("comparisons", (
    Column("case_id", TEXT, "The case.", itemgetter(0)),
    Column("criterion", TEXT, "The criterion that compared.", itemgetter(1)),
    Column("path", TEXT, "The compared path (``answer`` for the final answer).", itemgetter(2)),
    Column("expected", JSON, "The expected value (ABSENT: must not exist).", itemgetter(3)),
    Column("actual", JSON, "The value found (ABSENT: does not exist).", itemgetter(4)),
    Column("ok", "bool", "Whether they are equal under the criterion's rule.", itemgetter(5)),
    Column("epoch", "int64", EPOCH_DOC, itemgetter(6)),
), documented=6, row=tuple)  # items: the rows (frames.comparisons_items)

REPLAYS = FrameSpec("replays", (
    Column("case_id", TEXT, "The case replayed.", itemgetter("case_id")),
    Column("criterion", TEXT, "The ``fault_recovery`` criterion.", itemgetter("criterion")),
    Column("tool", TEXT, "The tool whose first call was faulted.", itemgetter("tool")),
    Column("fault", TEXT, "``error``, ``timeout`` or ``malformed``.", itemgetter("fault")),
    Column("checkpoint", "Int64", "Index of the faulted call in the recorded steps.", itemgetter("checkpoint")),
    Column("control_reproduced", "boolean", "Whether the control replay reproduced the recording.",
           itemgetter("control_reproduced")),
    Column("recovered", "boolean", "Whether the case's own answer and state checks pass on the faulted replay "
           "(missing where they did not judge it, or could not show the recovery: recovery_unobserved).",
           itemgetter("recovered")),
    Column("escalated", "boolean", "Whether an escalation tool was called at or after the checkpoint.",
           itemgetter("escalated")),
    Column("constraint_broken", "boolean", "A false success or a changed ``state_unchanged`` path.",
           itemgetter("constraint_broken")),
    Column("verdict", TEXT, "``pass``, ``fail`` or ``missing``.", itemgetter("verdict"), VERDICT_WORDS),
    Column("reason", TEXT, "Why.", itemgetter("reason")),
    Column("cached", "boolean", "Whether both replays came from the replay cache.", itemgetter("cached")),
    Column("epoch", "int64", EPOCH_DOC, lambda r: r.get("epoch", 1)),
), documented=12)

PAIRS = FrameSpec("pairs", (
    Column("source_id", TEXT, "The source case.", itemgetter("source_id")),
    Column("derived_id", TEXT, "The derived case.", itemgetter("derived_id")),
    Column("transform", TEXT, "The transform.", itemgetter("transform")),
    Column("relation", TEXT, "``same_output``, ``same_actions`` or ``same_state``.", itemgetter("relation")),
    Column("criterion", TEXT, "The ``metamorphic_relation`` criterion.", itemgetter("criterion")),
    Column("holds", "boolean", "Whether the relation holds (missing when either side is missing).",
           itemgetter("holds")),
    Column("label", TEXT, "The pair's human label: ``valid``, ``invalid`` or empty.", itemgetter("label")),
    Column("cluster", TEXT, "The source's cluster.", itemgetter("cluster")),
    Column("epoch", "int64", EPOCH_DOC, lambda p: p.get("epoch", 1)),
), documented=8)

RECEIPTS = FrameSpec("receipts", (
    Column("case_id", TEXT, "The case (missing when unknown).", lambda r: r.get("case_id")),
    Column("artifact_id", TEXT, "The contract's artifact id.", itemgetter("artifact_id")),
    Column("run_started_at", TIME, "When the run (case) started.", itemgetter("run_started_at")),
    Column("observed_at", TIME, "When the artifact was observed.", lambda r: r.get("observed_at")),
    Column("modified_at", TIME, "When the artifact was last modified.", lambda r: r.get("modified_at")),
    Column("expected_sha256", TEXT, "The contract's expected digest.", lambda r: r.get("expected_sha256")),
    Column("observed_digest", TEXT, "The observed digest, of kind ``digest_kind``.",
           lambda r: r.get("observed_digest")),
    Column("digest_kind", TEXT, "``sha256`` or ``hmac-sha256``.", lambda r: r.get("digest_kind")),
    Column("validator", TEXT, "The validator the contract names (missing when none).",
           lambda r: r.get("validator")),
    Column("validator_exit_code", "Int64", "Its exit code.", lambda r: r.get("validator_exit_code")),
    Column("evidence_source", TEXT, "Who observed.", lambda r: r.get("evidence_source")),
    Column("status", TEXT, "``missing`` … ``verified``, or ``waiting``.", itemgetter("status"), STATUSES),
    Column("reason", TEXT, "The check that decided.", itemgetter("reason")),
    Column("epoch", "int64", EPOCH_DOC, lambda r: r.get("epoch", 1)),
), documented=13)

GATE = FrameSpec("gate", (
    Column("criterion", TEXT, "The criterion."),
    Column("evaluator", TEXT, "Its evaluator type."),
    Column("n", "int64", "Rows (cases judged)."),
    Column("n_clusters", "int64", "Clusters among those rows."),
    Column("passed", "int64", "Rows that passed."),
    Column("missing", "int64", "Rows without a usable result (they count as not passed)."),
    Column("rate", "float64", "passed / n."),
    Column("ci_low", "float64", "Lower end of the interval."),
    Column("ci_high", "float64", "Upper end of the interval."),
    Column("method", TEXT, "The method that produced the interval."),
    Column("threshold", "float64", "The release threshold (NaN: not listed)."),
    Column("verdict", TEXT, "``PASS``, ``FAIL``, ``INSUFFICIENT_EVIDENCE`` or ``REPORT_ONLY``."),
    Column("reason", TEXT, "Why, and any fallback of the interval."),
    Column("failing_clusters", "int64", "Clusters holding at least one row that did not pass (fail or missing)."),
    Column("vacuous", "bool", "The check cannot fail as configured (see ``op.VacuousCheckWarning``)."),
    Column("reduce", TEXT, "How the criterion's epochs are reduced: ``mean`` (every epoch a row), ``pass^k`` or "
           "``pass@k`` (each case one row, its value C(c,k)/C(n,k) or 1 − C(n−c,k)/C(n,k); ``n`` then counts "
           "cases and ``passed`` the cases whose value is 1)."),
), documented=15)

VALIDITY = FrameSpec("validity", (
    Column("transform", TEXT, "The transform's name."),
    Column("derived", "int64", "Derived pairs of the transform."),
    Column("labeled", "int64", "Of those, pairs with at least one judgement."),
    Column("valid", "int64", "Of those, pairs whose label (the majority; a tie is invalid) is valid."),
    Column("coverage", "float64", "labeled / derived (NaN without pairs)."),
    Column("rate", "float64", "valid / labeled (NaN when nothing is labeled)."),
    Column("ci_low", "float64", "Wilson interval of ``rate``, lower end."),
    Column("ci_high", "float64", "Wilson interval of ``rate``, upper end."),
    Column("minimum_validity", "float64", "The transform's required validity rate."),
    Column("checked", "bool", "coverage == 1 and rate >= minimum_validity."),
), documented=10)

SLICES = FrameSpec("slices", (
    Column("slice", TEXT, "The canonical spec, e.g. ``tool_calls:1,2``."),
    Column("bin", TEXT, "``<e1``, ``[e1, e2)``, …, ``≥ek``, or ``n/a``."),
    Column("lower", "float64", "The bin is lower ≤ x < upper (−inf at the open end, NaN for n/a)."),
    Column("upper", "float64", "See ``lower`` (inf at the open end)."),
    Column("criterion", TEXT, "The criterion."),
    Column("support", "int64", "The criterion's verdict rows in the bin."),
    Column("clusters", "int64", "Distinct clusters among those rows."),
    Column("passed", "int64", "Rows that passed."),
    Column("rate", "float64", "passed / support (NaN when empty)."),
    Column("ci_low", "float64", "The gate's interval on the bin's rows, lower end."),
    Column("ci_high", "float64", "Upper end."),
    Column("few_clusters", "bool", "clusters < min_clusters: read the interval with care."),
    Column("method", TEXT, "The method that produced the interval (empty when the bin is empty)."),
    Column("reduce", TEXT, "The criterion's reduction over epochs (release.yaml): ``mean`` (every epoch a row), or "
           "``pass^k`` / ``pass@k`` (each case's epochs in the bin reduced: support counts cases)."),
), documented=11)

#: The frames of a Run, by attribute name.
FRAMES: dict[str, FrameSpec] = {s.name: s for s in (CASES, STEPS, SNAPSHOTS, CHANGES, VERDICTS, COMPARISONS,
                                                    REPLAYS, PAIRS, RECEIPTS)}
