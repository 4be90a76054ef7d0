"""Frames of outcome receipts: one row per receipt, and the verified-outcome summary."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from pydantic import ValidationError

from .._core.receipts import FAILURE_STATUSES, STATUSES, Receipt
from ..errors import OloproofError, validation_problem
from .columns import RECEIPTS, TEXT, missing_scalar

__all__ = ["RECEIPT_COLUMNS", "SUMMARY_COLUMNS", "outcome_summary", "receipts_frame"]

#: Columns of :func:`receipts_frame`, in order.
RECEIPT_COLUMNS: tuple[str, ...] = tuple(RECEIPTS.names)
#: Columns of :func:`outcome_summary` (after the ``by`` column, when grouped).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "expected",
    "verified",
    "waiting",
    "failed",
    "unverified",
    "verified_share",
    "check_coverage",
)


def receipts_frame(
    receipts: Iterable[Receipt | Mapping[str, object]],
    case_ids: Iterable[str | None] | None = None,
) -> pd.DataFrame:
    """One row per receipt.

    Parameters
    ----------
    receipts : iterable of Receipt or mapping
        Receipts, or mappings of receipt fields (e.g. read back from JSON, or the rows of a receipts frame,
        ``frame.to_dict("records")``) that may also carry a ``case_id``, an ``epoch`` and a ``run_id`` (the rows
        of a pooled run's frame, :func:`~oloproof_nb.load_runs`); mappings are validated as
        :class:`~oloproof_nb.Receipt`, a missing value (None, NaN, ``NaT``, ``pd.NA``) read as none.
    case_ids : iterable of str, optional
        The case each receipt belongs to, in the same order and of the same length. A mapping's
        own ``case_id`` is used when this is not given; giving both, different, is an error.

    Returns
    -------
    pandas.DataFrame
        Columns (:data:`RECEIPT_COLUMNS`):

        - ``case_id`` : the case, missing when unknown
        - ``artifact_id`` : the contract's artifact id
        - ``run_started_at``, ``observed_at``, ``modified_at`` : ``datetime64[us, UTC]``
        - ``expected_sha256`` : the contract's expected digest
        - ``observed_digest`` : the observed digest, of kind ``digest_kind``
        - ``digest_kind`` : ``sha256`` or ``hmac-sha256``
        - ``validator`` : the validator the contract names (missing when none)
        - ``validator_exit_code`` : nullable integer (``Int64``)
        - ``evidence_source`` : who observed
        - ``status`` : one of ``STATUSES``
        - ``reason`` : the check that decided
        - ``epoch`` : the case's epoch in a run with ``epochs`` (1 otherwise, and for receipts given here
          unless a mapping carries its own)

        and ``run_id`` first when a mapping carries one, as a pooled run's frame has it (missing for the
        receipts that carry none).

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> r = Receipt(artifact_id="a", run_started_at=datetime(2026, 7, 25, tzinfo=timezone.utc),
    ...             status="missing", reason="missing: no artifact observed")
    >>> receipts_frame([r], case_ids=["ord-001"])[["case_id", "status"]].to_dict("records")
    [{'case_id': 'ord-001', 'status': 'missing'}]
    """
    items = list(receipts)
    ids = [None] * len(items) if case_ids is None else list(case_ids)
    if len(ids) != len(items):
        raise ValueError(f"case_ids has {len(ids)} entries for {len(items)} receipts; give one per receipt")
    rows = [_row(index, item, case_id) for index, (item, case_id) in enumerate(zip(items, ids, strict=True))]
    runs = [row.pop("run_id") for row in rows]
    frame = RECEIPTS.build(rows)
    if any(run_id is not None for run_id in runs):  # the rows of a pooled run's frame: its runs stay apart
        frame.insert(0, "run_id", pd.Series(runs, index=frame.index, dtype=TEXT))
    return frame


def _row(index: int, item: Receipt | Mapping[str, object], case_id: str | None) -> dict[str, object]:
    if isinstance(item, Receipt):
        receipt, own_id, epoch, run_id = item, None, 1, None
    elif isinstance(item, Mapping):
        # a row of a receipts frame reads back as its receipt: a missing cell (NaN, NaT, pd.NA) is no value, as
        # None is (a NaT read as a time without a timezone), and its epoch and run_id are kept, as its case_id is
        data = {key: None if missing_scalar(value) else value for key, value in item.items()}
        own_id = data.pop("case_id", None)
        epoch = _epoch(index, data.pop("epoch", None))
        run_id = data.pop("run_id", None)
        if run_id is not None and not isinstance(run_id, str):
            raise ValueError(f"receipts[{index}]: key 'run_id': must be the run's id (text), got {run_id!r}")
        try:
            receipt = Receipt.model_validate(data)
        except ValidationError as exc:
            key, message, _ = validation_problem(exc)
            raise ValueError(f"receipts[{index}]: key {key or '?'!r}: {message}") from None
    else:
        raise TypeError(f"receipts[{index}] must be a Receipt or a mapping, got {type(item).__name__}")
    if case_id is not None and own_id is not None and case_id != own_id:
        raise ValueError(f"receipts[{index}] has case_id {own_id!r} but case_ids gives {case_id!r}")
    return {"case_id": case_id if case_id is not None else own_id, **receipt.model_dump(), "epoch": epoch,
            "run_id": run_id}


def _epoch(index: int, value: object) -> int:
    """A mapping's ``epoch`` (a row of a receipts frame carries one): a whole number from 1; 1 when it has none."""
    if value is None:
        return 1
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and int(value) >= 1:
        return int(value)
    raise ValueError(f"receipts[{index}]: key 'epoch': must be a whole number from 1 (the case's epoch; 1 without "
                     f"epochs), got {value!r}")


def _checks_content(frame: pd.DataFrame) -> np.ndarray:
    """Per row: the contract names a validator or pins the exact bytes (a hash check is the strictest there is:
    a suite whose every contract pins a digest read as 0% covered)."""
    named: np.ndarray = frame["validator"].notna().to_numpy()
    if "expected_sha256" in frame.columns:
        named = named | frame["expected_sha256"].notna().to_numpy()
    return named


def outcome_summary(frame: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Verified outcomes over runs expected to deliver one, beside check coverage.

    Parameters
    ----------
    frame : pandas.DataFrame
        A :func:`receipts_frame` (needs ``status`` and ``validator``). Not modified.
    by : str, optional
        A column of ``frame`` to group by (e.g. a criterion); one row per group, sorted.

    Returns
    -------
    pandas.DataFrame
        One row (per group, with the ``by`` column first), columns :data:`SUMMARY_COLUMNS`:

        - ``expected`` : rows expected to deliver an outcome (every status but ``waiting``)
        - ``verified`` : rows with status ``verified``
        - ``waiting`` : rows with status ``waiting`` (neither failures nor expected)
        - ``failed`` : rows with a failure status (missing, wrong_artifact, stale, hash_mismatch,
          validator_failed)
        - ``unverified`` : rows with status ``unverified``
        - ``verified_share`` : ``verified / expected``; NaN when ``expected`` is 0
        - ``check_coverage`` : share of the expected rows whose contract checks the artifact's content
          deterministically: it names a validator, or pins the exact bytes (``expected_sha256``, when the
          frame has that column); NaN when ``expected`` is 0. The rest were checked for existence,
          identity and freshness only.

    Notes
    -----
    ``expected = verified + failed + unverified``. Stored numbers are not rounded.

    Examples
    --------
    >>> f = pd.DataFrame({"status": ["verified", "stale", "waiting"], "validator": ["v", None, "v"]})
    >>> outcome_summary(f)[["expected", "verified", "waiting", "failed", "verified_share"]].to_dict("records")
    [{'expected': 2, 'verified': 1, 'waiting': 1, 'failed': 1, 'verified_share': 0.5}]
    >>> f["expected_sha256"] = [None, "9f86d0…", None]  # the stale one pinned its bytes
    >>> float(outcome_summary(f)["check_coverage"].iloc[0])
    1.0
    """
    if not isinstance(frame, pd.DataFrame):
        raise OloproofError(f"outcome_summary: frame must be the receipts frame (run.receipts), got "
                            f"{type(frame).__name__}")
    needed = ["status", "validator"] + ([by] if by is not None else [])
    absent = [column for column in needed if column not in frame.columns]
    if absent:
        raise ValueError(f"outcome_summary: frame lacks column(s) {', '.join(absent)}; pass a receipts_frame")
    status = frame["status"]
    unknown = sorted(set(status.dropna()) - set(STATUSES))
    if unknown or status.isna().any():
        shown = ", ".join(map(repr, unknown)) or "missing values"
        raise ValueError(f"outcome_summary: unknown status {shown}; allowed: {', '.join(STATUSES)}")
    waiting = status.eq("waiting").to_numpy()
    counts = pd.DataFrame(
        {
            "expected": ~waiting,
            "verified": status.eq("verified").to_numpy(),
            "waiting": waiting,
            "failed": status.isin(FAILURE_STATUSES).to_numpy(),
            "unverified": status.eq("unverified").to_numpy(),
            "covered": ~waiting & _checks_content(frame),
        },
        index=frame.index,
    ).astype("int64")
    if by is None:
        out = pd.DataFrame([counts.sum().to_dict()]).astype("int64")
        columns = list(SUMMARY_COLUMNS)
    else:
        counts[by] = frame[by]
        out = counts.groupby(by, sort=True, dropna=False).sum().reset_index()
        columns = [by, *SUMMARY_COLUMNS]
    denominator = out["expected"].where(out["expected"] > 0, np.nan)
    out["verified_share"] = out["verified"] / denominator
    out["check_coverage"] = out["covered"] / denominator
    return out[columns]
