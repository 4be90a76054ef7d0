"""Tests for oloproof_nb.outcomes: receipts_frame and outcome_summary."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from oloproof_nb._analysis.receipts import RECEIPT_COLUMNS, SUMMARY_COLUMNS, outcome_summary, receipts_frame
from oloproof_nb._core.receipts import Evidence, OutcomeContract, Receipt, classify_outcome

T0 = datetime(2026, 7, 25, 14, 0, tzinfo=timezone.utc)


def receipt(status: str, validator: str | None = None, artifact_id: str = "monthly-report") -> Receipt:
    return Receipt(
        artifact_id=artifact_id,
        run_started_at=T0,
        validator=validator,
        status=status,  # type: ignore[arg-type]
        reason=f"{status}: test",
    )


def test_receipt_columns_are_pinned() -> None:
    assert list(RECEIPT_COLUMNS) == [
        "case_id",
        "artifact_id",
        "run_started_at",
        "observed_at",
        "modified_at",
        "expected_sha256",
        "observed_digest",
        "digest_kind",
        "validator",
        "validator_exit_code",
        "evidence_source",
        "status",
        "reason",
        "epoch",
    ]
    assert list(SUMMARY_COLUMNS) == [
        "expected",
        "verified",
        "waiting",
        "failed",
        "unverified",
        "verified_share",
        "check_coverage",
    ]


def test_receipts_frame_one_row_per_receipt() -> None:
    ev = Evidence(
        artifact_id="monthly-report",
        observed_at=T0 + timedelta(minutes=10),
        modified_at=T0 + timedelta(minutes=5),
        sha256="a" * 64,
        validator="v",
        validator_exit_code=0,
        evidence_source="local_file_stat",
    )
    verified = classify_outcome(OutcomeContract(artifact_id="monthly-report", validator="v"), ev, run_started_at=T0)
    missing = classify_outcome(OutcomeContract(artifact_id="invoice"), None, run_started_at=T0)
    frame = receipts_frame([verified, missing], case_ids=["ord-001", "ord-002"])
    assert list(frame.columns) == list(RECEIPT_COLUMNS)
    assert frame["case_id"].tolist() == ["ord-001", "ord-002"]
    assert frame["status"].tolist() == ["verified", "missing"]
    for column in ("run_started_at", "observed_at", "modified_at"):
        assert str(frame[column].dtype) == "datetime64[us, UTC]"  # same unit even when all missing
    assert frame.loc[0, "observed_at"] == pd.Timestamp("2026-07-25T14:10:00Z")
    assert pd.isna(frame.loc[1, "observed_at"])
    assert str(frame["validator_exit_code"].dtype) == "Int64"
    assert frame.loc[0, "validator_exit_code"] == 0 and pd.isna(frame.loc[1, "validator_exit_code"])


def test_receipts_frame_without_case_ids_and_from_mappings() -> None:
    r = receipt("stale")
    assert pd.isna(receipts_frame([r]).loc[0, "case_id"])
    rows = [{"case_id": "ord-009", **r.to_json_dict()}]
    frame = receipts_frame(rows)
    assert frame.loc[0, "case_id"] == "ord-009"
    assert frame.loc[0, "run_started_at"] == pd.Timestamp(T0)
    assert rows[0]["case_id"] == "ord-009"  # input not modified


def test_receipts_frame_empty() -> None:
    frame = receipts_frame([])
    assert list(frame.columns) == list(RECEIPT_COLUMNS)
    assert len(frame) == 0
    assert str(frame["run_started_at"].dtype) == "datetime64[us, UTC]"
    assert str(frame["validator_exit_code"].dtype) == "Int64"


def test_receipts_frame_errors() -> None:
    with pytest.raises(ValueError, match="case_ids has 1 entries for 2 receipts"):
        receipts_frame([receipt("stale"), receipt("stale")], case_ids=["a"])
    with pytest.raises(ValueError, match="has case_id 'x' but case_ids gives 'y'"):
        receipts_frame([{"case_id": "x", **receipt("stale").to_json_dict()}], case_ids=["y"])
    with pytest.raises(ValueError, match=r"receipts\[0\]: key 'status'"):
        receipts_frame([{**receipt("stale").to_json_dict(), "status": "done"}])
    with pytest.raises(TypeError, match="must be a Receipt or a mapping"):
        receipts_frame(["verified"])  # type: ignore[list-item]


def hand_frame() -> pd.DataFrame:
    # status, validator named?  Hand count below.
    rows = [
        ("verified", "v"),
        ("verified", "v"),
        ("verified", "v"),
        ("verified", None),
        ("waiting", "v"),
        ("waiting", "v"),
        ("stale", "v"),
        ("missing", None),
        ("hash_mismatch", None),
        ("unverified", "v"),
    ]
    return receipts_frame([receipt(s, v) for s, v in rows], case_ids=[f"c{i}" for i in range(len(rows))])


def test_outcome_summary_hand_counted() -> None:
    frame = hand_frame()
    before = frame.copy()
    summary = outcome_summary(frame)
    pd.testing.assert_frame_equal(frame, before)  # not modified
    assert list(summary.columns) == list(SUMMARY_COLUMNS)
    row = summary.iloc[0].to_dict()
    # 10 rows, 2 waiting -> 8 expected; failures: stale, missing, hash_mismatch
    assert {k: row[k] for k in ("expected", "verified", "waiting", "failed", "unverified")} == {
        "expected": 8,
        "verified": 4,
        "waiting": 2,
        "failed": 3,
        "unverified": 1,
    }
    assert row["verified_share"] == 4 / 8
    # validators on 3 verified + stale + unverified = 5 of the 8 expected (waiting rows excluded)
    assert row["check_coverage"] == 5 / 8


def test_outcome_summary_all_waiting_or_empty_gives_nan_shares() -> None:
    for frame in (receipts_frame([receipt("waiting", "v")]), receipts_frame([])):
        row = outcome_summary(frame).iloc[0]
        assert row["expected"] == 0 and row["failed"] == 0
        assert math.isnan(row["verified_share"]) and math.isnan(row["check_coverage"])


def test_outcome_summary_by_group() -> None:
    frame = hand_frame()
    frame["criterion"] = ["a"] * 5 + ["b"] * 5
    summary = outcome_summary(frame, by="criterion")
    assert list(summary.columns) == ["criterion", *SUMMARY_COLUMNS]
    a, b = summary.iloc[0].to_dict(), summary.iloc[1].to_dict()
    # a: verified x4 (3 with validator), waiting x1
    assert (a["criterion"], a["expected"], a["verified"], a["waiting"], a["failed"]) == ("a", 4, 4, 1, 0)
    assert a["verified_share"] == 1.0 and a["check_coverage"] == 3 / 4
    # b: waiting, stale(v), missing, hash_mismatch, unverified(v)
    assert (b["expected"], b["verified"], b["waiting"], b["failed"], b["unverified"]) == (4, 0, 1, 3, 1)
    assert b["verified_share"] == 0.0 and b["check_coverage"] == 2 / 4


def test_outcome_summary_rejects_bad_frames() -> None:
    with pytest.raises(ValueError, match="lacks column"):
        outcome_summary(pd.DataFrame({"status": ["verified"]}))
    with pytest.raises(ValueError, match="unknown status 'done'"):
        outcome_summary(pd.DataFrame({"status": ["done"], "validator": [None]}))
    with pytest.raises(ValueError, match="lacks column"):
        outcome_summary(hand_frame(), by="criterion")


def test_outcome_summary_keeps_a_group_whose_key_is_missing() -> None:
    # 3 receipts, one with no case: grouping by case_id gives 2 rows (a, and the missing key), 3 expected in all;
    # dropping the missing group would lose a failed receipt from the table without a word
    frame = receipts_frame([receipt("verified", "v"), receipt("missing"), receipt("stale", "v")],
                           case_ids=["a", None, "a"])
    out = outcome_summary(frame, by="case_id")
    assert len(out) == 2 and int(out["expected"].sum()) == 3 and int(out["failed"].sum()) == 2
    lost = out[out["case_id"].isna()]
    assert lost[["expected", "verified", "failed"]].to_dict("records") == [{"expected": 1, "verified": 0, "failed": 1}]


def test_receipts_frame_refuses_more_case_ids_than_receipts_in_its_own_words() -> None:
    with pytest.raises(ValueError, match="case_ids has 3 entries for 2 receipts; give one per receipt"):
        receipts_frame([receipt("stale"), receipt("stale")], case_ids=["a", "b", "c"])


def test_outcome_summary_refuses_a_missing_status() -> None:
    # a row with no status would count as expected but as none of verified, failed or unverified, breaking the
    # documented expected = verified + failed + unverified (here 2 = 1 + 0 + 0)
    frame = pd.DataFrame({"status": ["verified", None], "validator": ["v", "v"]})
    with pytest.raises(ValueError, match="unknown status missing values; allowed: "):
        outcome_summary(frame)


def test_outcome_summary_groups_come_sorted_whatever_the_row_order() -> None:
    # the docstring says one row per group, sorted: criteria met in the order z, a give rows a, z (a hand count:
    # z holds a verified and a stale receipt, a one missing)
    frame = receipts_frame([receipt("verified", "v"), receipt("missing"), receipt("stale", "v")],
                           case_ids=["c1", "c2", "c3"])
    frame["criterion"] = ["z", "a", "z"]
    out = outcome_summary(frame, by="criterion")
    assert out[["criterion", "expected", "verified", "failed"]].to_dict("records") == [
        {"criterion": "a", "expected": 1, "verified": 0, "failed": 1},
        {"criterion": "z", "expected": 2, "verified": 1, "failed": 1},
    ]


def test_the_rows_of_a_receipts_frame_read_back_as_the_same_receipts() -> None:
    """A frame's row holds NaN for no text, NaT for no time and pd.NA for no exit code, and an ``epoch``: given back
    to receipts_frame, the first failed ("key 'expected_sha256': Input should be a valid string (got nan)"), a
    missing receipt's NaT read as a time without a timezone ("datetime NaT has no timezone") and the epoch as a key
    no receipt has. Each reads as no value now, and the epoch as the row's: the same frame, the same receipts."""
    ev = Evidence(artifact_id="monthly-report", observed_at=T0 + timedelta(minutes=10),
                  modified_at=T0 + timedelta(minutes=5), sha256="a" * 64, validator="v", validator_exit_code=0,
                  evidence_source="local_file_stat")
    verified = classify_outcome(OutcomeContract(artifact_id="monthly-report", validator="v"), ev, run_started_at=T0)
    missing = classify_outcome(OutcomeContract(artifact_id="invoice"), None, run_started_at=T0)
    frame = receipts_frame([verified, missing], case_ids=["ord-001", "ord-002"])
    frame.loc[1, "epoch"] = 2  # the second epoch of a run with epochs: 2
    rows = frame.to_dict("records")
    assert pd.isna(rows[1]["observed_at"]) and pd.isna(rows[1]["validator_exit_code"])  # the premise: NaT, pd.NA
    assert pd.isna(rows[0]["expected_sha256"])  # and NaN
    again = receipts_frame(rows)
    pd.testing.assert_frame_equal(again, frame)
    for row, receipt_ in zip(again.to_dict("records"), (verified, missing), strict=True):  # the receipts by hand
        assert Receipt.model_validate({k: None if pd.isna(v) else v for k, v in row.items()
                                       if k not in ("case_id", "epoch")}) == receipt_
    assert again["epoch"].tolist() == [1, 2]
    assert receipts_frame([{**rows[0], "epoch": None}])["epoch"].tolist() == [1]  # none: 1, as without epochs


@pytest.mark.parametrize("epoch", [0, True, "2", 1.5])
def test_a_mappings_epoch_is_a_whole_number_from_one(epoch: object) -> None:
    row = {**receipt("stale").to_json_dict(), "epoch": epoch}
    with pytest.raises(ValueError, match=r"^receipts\[0\]: key 'epoch': must be a whole number from 1 .*, got "):
        receipts_frame([row])


def test_a_list_holding_a_missing_value_is_not_a_missing_value() -> None:
    """Only a missing scalar reads as no value: ``pd.isna([None])`` is an array whose truth was True, so a validator
    given as ``[None]`` read as none named, a contract that checks nothing."""
    with pytest.raises(ValueError, match=r"^receipts\[0\]: key 'validator': "):
        receipts_frame([{**receipt("stale").to_json_dict(), "validator": [None]}])
