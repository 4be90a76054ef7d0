"""Tests for oloproof_nb.receipts: models, the ordered classification, digests."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone, tzinfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from oloproof_nb._core.receipts import (
    FAILURE_STATUSES,
    FUTURE_MTIME_TOLERANCE,
    STATUSES,
    Evidence,
    OutcomeContract,
    Receipt,
    classify_outcome,
    digest_key_from_env,
    hmac_sha256_hex,
    sha256_hex,
)
from oloproof_nb.errors import DigestKeyError

T0 = datetime(2026, 7, 25, 14, 0, tzinfo=timezone.utc)  # run started
T_OLD = T0 - timedelta(hours=1)
T_NEW = T0 + timedelta(minutes=5)
T_OBS = T0 + timedelta(minutes=10)
# SHA-256("abc") and SHA-256("abd"), from FIPS 180-2 / `printf abc | sha256sum`.
SHA_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
SHA_OTHER = "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9"


def contract(**kw: object) -> OutcomeContract:
    base: dict[str, object] = {"artifact_id": "monthly-report"}
    return OutcomeContract(**{**base, **kw})


def evidence(**kw: object) -> Evidence:
    base: dict[str, object] = {
        "artifact_id": "monthly-report",
        "observed_at": T_OBS,
        "modified_at": T_NEW,
        "sha256": SHA_ABC,
        "validator": "report_schema_v3",
        "validator_exit_code": 0,
        "evidence_source": "system_observe",
    }
    return Evidence(**{**base, **kw})


def classify(c: OutcomeContract, e: Evidence | None, **kw: object) -> Receipt:
    return classify_outcome(c, e, run_started_at=T0, **kw)  # type: ignore[arg-type]


FULL = {"expected_sha256": SHA_ABC, "validator": "report_schema_v3"}


# --------------------------------------------------------------------------- pinned names


def test_status_words_and_order_are_pinned() -> None:
    assert STATUSES == (
        "missing",
        "wrong_artifact",
        "stale",
        "hash_mismatch",
        "validator_failed",
        "unverified",
        "verified",
        "waiting",
    )
    assert FAILURE_STATUSES == ("missing", "wrong_artifact", "stale", "hash_mismatch", "validator_failed")


def test_receipt_fields_are_exactly_the_design_list() -> None:
    assert list(Receipt.model_fields) == [
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
    ]


# --------------------------------------------------------------------------- every status


@pytest.mark.parametrize(
    ("c_kw", "e_kw", "status", "reason_part"),
    [
        (FULL, None, "missing", "no artifact observed"),
        (FULL, {"artifact_id": "other-report"}, "wrong_artifact", "'other-report'"),
        (FULL, {"modified_at": T_OLD}, "stale", "before the run started"),
        (FULL, {"sha256": SHA_OTHER}, "hash_mismatch", "sha256 differs"),
        (FULL, {"validator_exit_code": 2}, "validator_failed", "report_schema_v3 exited 2"),
        # a negative exit code (a signal) is not 0: a check of "> 0" instead of "!= 0" called it verified
        (FULL, {"validator_exit_code": -1}, "validator_failed", "report_schema_v3 exited -1"),
        (FULL, {"validator_exit_code": None}, "unverified", "report_schema_v3"),
        (FULL, {}, "verified", "present, fresh, sha256 matches, validator report_schema_v3 exit 0"),
    ],
)
def test_every_status_is_reachable(c_kw: dict, e_kw: dict | None, status: str, reason_part: str) -> None:
    e = None if e_kw is None else evidence(**e_kw)
    r = classify(contract(**c_kw), e)
    assert r.status == status
    assert reason_part in r.reason


def test_waiting_wins_over_everything_and_is_neither_failure_nor_success() -> None:
    for e in (None, evidence(modified_at=T_OLD), evidence()):
        r = classify(contract(**FULL), e, waiting=True)
        assert r.status == "waiting"
        assert "wait" in r.reason
    assert "waiting" not in FAILURE_STATUSES


# --------------------------------------------------------------------------- precedence


def test_stale_beats_hash_mismatch() -> None:
    r = classify(contract(**FULL), evidence(modified_at=T_OLD, sha256=SHA_OTHER))
    assert r.status == "stale"


def test_a_file_untouched_since_the_reset_is_stale_however_recent() -> None:
    """Modified after the run started (the reset wrote it), unchanged by the case: stale, before bytes and
    validators; not when freshness is not required; an observation of another artifact is still that."""
    r = classify(contract(**FULL), evidence(sha256=SHA_OTHER), untouched=True)
    assert (r.status, r.reason) == ("stale", "stale: unchanged since the sandbox was reset: the file the reset "
                                             "left, not one this case wrote")
    assert classify(contract(**FULL), evidence(), untouched=False).status == "verified"
    assert classify(contract(**FULL, require_fresh=False), evidence(), untouched=True).status == "verified"
    assert classify(contract(**FULL), evidence(artifact_id="x"), untouched=True).status == "wrong_artifact"


def test_wrong_artifact_beats_stale() -> None:
    r = classify(contract(**FULL), evidence(artifact_id="someone-else", modified_at=T_OLD))
    assert r.status == "wrong_artifact"


def test_hash_mismatch_beats_validator_failed() -> None:
    r = classify(contract(**FULL), evidence(sha256=SHA_OTHER, validator_exit_code=1))
    assert r.status == "hash_mismatch"


def test_validator_failed_beats_unverified() -> None:
    r = classify(contract(**FULL), evidence(modified_at=None, sha256=None, validator_exit_code=1))
    assert r.status == "validator_failed"


def test_modified_exactly_at_run_start_is_fresh() -> None:
    assert classify(contract(), evidence(modified_at=T0)).status == "verified"


def test_a_modification_time_after_the_observation_shows_no_freshness() -> None:
    # a file left by an earlier run, stamped by a clock since set back (or `touch -d 2099`): its time is after
    # the run start, but also after the moment it was observed, so it proves nothing about this run
    ahead = T_OBS + timedelta(hours=1)
    r = classify(contract(**FULL), evidence(modified_at=ahead))
    assert r.status == "unverified"
    assert r.reason == ("unverified: freshness cannot be shown: modified at 2026-07-25T15:10:00.000000Z, after it "
                        "was observed at 2026-07-25T14:10:00.000000Z (a time set by hand, a clock since set "
                        "back, or a file server whose clock runs ahead of this machine's)")
    # up to the tolerance ahead (a network file system's clock, FAT's two-second times) is still fresh
    assert classify(contract(**FULL), evidence(modified_at=T_OBS + FUTURE_MTIME_TOLERANCE)).status == "verified"
    # the other checks still come first, and without freshness required the time does not matter
    assert classify(contract(**FULL), evidence(modified_at=ahead, sha256=SHA_OTHER)).status == "hash_mismatch"
    assert classify(contract(require_fresh=False), evidence(modified_at=ahead)).status == "verified"


def test_an_observation_taken_before_the_run_started_shows_no_freshness() -> None:
    # an observe() that hands back an observation it cached a second before the run started, its modification
    # time half a second after the start: within the tolerance of the observation, yet nothing observed before
    # the run can show what the run wrote
    before = evidence(observed_at=T0 - timedelta(seconds=1), modified_at=T0 + timedelta(milliseconds=500))
    r = classify(contract(**FULL), before)
    assert r.status == "unverified"
    assert r.reason == ("unverified: freshness cannot be shown: observed at 2026-07-25T13:59:59.000000Z, before the "
                        "run started at 2026-07-25T14:00:00.000000Z (an observation taken before the run cannot "
                        "have seen what it wrote)")
    # observed at the start itself is after it; and without freshness required the observation's time does not matter
    assert classify(contract(**FULL), evidence(observed_at=T0, modified_at=T0)).status == "verified"
    assert classify(contract(require_fresh=False), before).status == "verified"
    # a time before the start is stale first, whenever it was observed
    assert classify(contract(**FULL), evidence(observed_at=T0 - timedelta(seconds=1), modified_at=T_OLD)).status \
        == "stale"


def test_freshness_not_required_accepts_old_artifact() -> None:
    r = classify(contract(require_fresh=False), evidence(modified_at=T_OLD))
    assert r.status == "verified"
    assert "fresh" not in r.reason


# --------------------------------------------------------------------------- unverified


@pytest.mark.parametrize(
    ("c_kw", "e_kw", "reason_part"),
    [
        ({}, {"modified_at": None}, "no modification time"),
        ({"expected_sha256": SHA_ABC}, {"sha256": None}, "no digest"),
        ({"validator": "report_schema_v3"}, {"validator_exit_code": None}, "did not report an exit code"),
        ({"validator": "report_schema_v3"}, {"validator": "other_check"}, "'other_check'"),
        (
            {"validator": "report_schema_v3"},
            {"validator_exit_code": None, "validator_error": "validator report_schema_v3 timed out after 5s"},
            "timed out after 5s",
        ),
    ],
)
def test_unverified_names_the_check_without_evidence(c_kw: dict, e_kw: dict, reason_part: str) -> None:
    r = classify(contract(**c_kw), evidence(**e_kw))
    assert r.status == "unverified"
    assert reason_part in r.reason


def test_evidence_of_another_validator_does_not_count_even_when_it_failed() -> None:
    r = classify(contract(validator="report_schema_v3"), evidence(validator="lint", validator_exit_code=1))
    assert r.status == "unverified"
    assert r.validator == "report_schema_v3"
    assert r.validator_exit_code is None


def test_unverified_lists_every_missing_check() -> None:
    r = classify(contract(**FULL), evidence(modified_at=None, sha256=None, validator_exit_code=None))
    assert r.status == "unverified"
    assert "modification time" in r.reason and "no digest" in r.reason and "exit code" in r.reason


# --------------------------------------------------------------------------- keyed digests


def test_plain_digest_against_keyed_contract_is_unverified_not_mismatch() -> None:
    c = contract(expected_sha256=SHA_ABC, digest_key_env="OLOPROOF_KEY")
    assert c.digest_kind == "hmac-sha256"
    r = classify(c, evidence(sha256=SHA_OTHER, digest_kind="sha256"))
    assert r.status == "unverified"
    assert "digest kind differs" in r.reason


def test_keyed_digest_compared_with_keyed_expectation() -> None:
    key = b"Jefe"
    data = b"what do ya want for nothing?"
    keyed = hmac_sha256_hex(data, key)
    c = contract(expected_sha256=keyed, digest_key_env="OLOPROOF_KEY")
    ok = classify(c, evidence(sha256=keyed, digest_kind="hmac-sha256"))
    assert ok.status == "verified" and "hmac-sha256 matches" in ok.reason
    plain = sha256_hex(data)
    bad = classify(c, evidence(sha256=plain, digest_kind="hmac-sha256"))
    assert bad.status == "hash_mismatch"


def test_digest_helpers_match_published_vectors() -> None:
    assert sha256_hex(b"abc") == SHA_ABC  # FIPS 180-2, appendix B.1
    # RFC 4231, test case 2
    assert (
        hmac_sha256_hex(b"what do ya want for nothing?", b"Jefe")
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
    assert hmac_sha256_hex(b"abc", b"k") != sha256_hex(b"abc")
    with pytest.raises(ValueError, match="non-empty"):
        hmac_sha256_hex(b"abc", b"")


def test_digest_key_from_env_names_the_variable_never_a_value() -> None:
    assert digest_key_from_env("OLOPROOF_KEY", {"OLOPROOF_KEY": "s3cr3t-value"}) == b"s3cr3t-value"
    with pytest.raises(DigestKeyError, match="OLOPROOF_KEY is unset") as info:
        digest_key_from_env("OLOPROOF_KEY", {"OTHER": "s3cr3t-value"})
    assert "s3cr3t-value" not in str(info.value)
    with pytest.raises(ValueError, match="OLOPROOF_KEY is empty"):
        digest_key_from_env("OLOPROOF_KEY", {"OLOPROOF_KEY": ""})
    # a value os.environ decoded from bytes that are not UTF-8 is those bytes (it was an UnicodeEncodeError)
    assert digest_key_from_env("OLOPROOF_KEY", {"OLOPROOF_KEY": "s3cr3t\udcff"}) == b"s3cr3t\xff"
    with pytest.raises(DigestKeyError, match="OLOPROOF_KEY holds text that has no bytes") as info:
        digest_key_from_env("OLOPROOF_KEY", {"OLOPROOF_KEY": "s3cr3t\ud800"})
    assert "s3cr3t" not in str(info.value)


# --------------------------------------------------------------------------- models


def test_receipt_json_uses_utc_z_and_converts_offsets() -> None:
    plus2 = timezone(timedelta(hours=2))
    r = classify_outcome(
        contract(),
        evidence(observed_at=datetime(2026, 7, 25, 16, 30, tzinfo=plus2), modified_at=T_NEW),
        run_started_at=datetime(2026, 7, 25, 16, 0, tzinfo=plus2),
    )
    out = r.to_json_dict()
    assert out["run_started_at"] == "2026-07-25T14:00:00.000000Z"  # the one timestamp format
    assert out["observed_at"] == "2026-07-25T14:30:00.000000Z"
    assert out["modified_at"] == "2026-07-25T14:05:00.000000Z"
    assert json.loads(json.dumps(out)) == out
    assert Receipt.model_validate(out) == r


def test_missing_receipt_has_no_observation_fields() -> None:
    out = classify(contract(**FULL), None).to_json_dict()
    assert out["observed_at"] is None and out["evidence_source"] is None and out["observed_digest"] is None
    assert out["expected_sha256"] == SHA_ABC and out["validator"] == "report_schema_v3"


def test_naive_datetimes_are_rejected() -> None:
    naive = datetime(2026, 7, 25, 14, 0)
    with pytest.raises(ValidationError, match="no timezone"):
        evidence(observed_at=naive)
    with pytest.raises(ValueError, match="no timezone"):
        classify_outcome(contract(), evidence(), run_started_at=naive)


@pytest.mark.parametrize("bad", [SHA_ABC.upper(), SHA_ABC[:-1], "z" * 64])
def test_expected_sha256_must_be_64_lowercase_hex(bad: str) -> None:
    with pytest.raises(ValidationError, match="64 lowercase hexadecimal"):
        contract(expected_sha256=bad)


def test_models_are_strict_and_frozen() -> None:
    with pytest.raises(ValidationError, match="path"):
        contract(path="out/report.json")
    with pytest.raises(ValidationError, match="artifact_id"):
        contract(artifact_id="  ")
    with pytest.raises(ValidationError, match="digest_key_env"):
        contract(digest_key_env="not a name")
    c = contract()
    with pytest.raises(ValidationError):
        c.artifact_id = "x"  # type: ignore[misc]


@pytest.mark.parametrize("code", [False, True, "0", 0.0, "1"])
def test_a_validator_exit_code_is_a_whole_number_only(code: object) -> None:
    """A callable validator's False means "fails" (exit 1); read as an int it was exit 0 and a system's observe()
    reporting its own check that way had the failed artifact verified."""
    with pytest.raises(ValidationError, match="validator_exit_code"):
        evidence(validator_exit_code=code)
    assert evidence(validator_exit_code=0).validator_exit_code == 0
    failed = classify(contract(validator="report_schema_v3"), evidence(validator_exit_code=1))
    assert failed.status == "validator_failed"


def test_a_numpy_integer_is_a_whole_number_exit_code() -> None:
    """A system's observe() that reads its check's result from a frame gives a NumPy integer: a strict
    int refused it, and the artifact its own check passed (or failed) was unverified, whichever it was."""
    np = pytest.importorskip("numpy")
    passed = evidence(validator_exit_code=np.int64(0))
    assert passed.validator_exit_code == 0 and type(passed.validator_exit_code) is int
    failed = classify(contract(validator="report_schema_v3"), evidence(validator_exit_code=np.int32(3)))
    assert (failed.status, failed.validator_exit_code) == ("validator_failed", 3)
    for refused in (np.bool_(False), np.float64(0.0)):  # NumPy's bool and float: no exit code, as Python's
        with pytest.raises(ValidationError, match="validator_exit_code"):
            evidence(validator_exit_code=refused)


def test_evidence_digest_kind_defaults_and_consistency() -> None:
    assert evidence().digest_kind == "sha256"
    assert evidence(sha256=None).digest_kind is None
    with pytest.raises(ValidationError, match="digest_kind is given"):
        evidence(sha256=None, digest_kind="sha256")
    with pytest.raises(ValidationError, match="without the validator's name"):
        evidence(validator=None, validator_exit_code=0)
    with pytest.raises(ValidationError, match="not both"):
        evidence(validator_exit_code=0, validator_error="crashed")


# --------------------------------------------------------------------------- invariants

_opt_time = st.sampled_from([None, T_OLD, T0, T_NEW, T_OBS + timedelta(days=1)])


@given(
    require_fresh=st.booleans(),
    expected=st.sampled_from([None, SHA_ABC]),
    validator=st.sampled_from([None, "report_schema_v3"]),
    observed=st.booleans(),
    same_id=st.booleans(),
    modified_at=_opt_time,
    sha=st.sampled_from([None, SHA_ABC, SHA_OTHER]),
    ev_validator=st.sampled_from([None, "report_schema_v3", "lint"]),
    exit_code=st.sampled_from([None, 0, 1]),
)
def test_classification_invariants(
    require_fresh: bool,
    expected: str | None,
    validator: str | None,
    observed: bool,
    same_id: bool,
    modified_at: datetime | None,
    sha: str | None,
    ev_validator: str | None,
    exit_code: int | None,
) -> None:
    c = contract(require_fresh=require_fresh, expected_sha256=expected, validator=validator)
    e = None
    if observed:
        e = evidence(
            artifact_id="monthly-report" if same_id else "other",
            modified_at=modified_at,
            sha256=sha,
            validator=ev_validator,
            validator_exit_code=exit_code if ev_validator else None,
        )
    r = classify(c, e)
    assert r.status in STATUSES and r.status != "waiting"
    assert r.reason.split(":")[0] == r.status  # the reason starts with the deciding check
    assert (r.status == "missing") == (e is None)
    if e is not None and not same_id:
        assert r.status == "wrong_artifact"
    if r.status == "verified":
        assert e is not None
        assert not require_fresh or (modified_at is not None
                                     and T0 <= modified_at <= T_OBS + FUTURE_MTIME_TOLERANCE)
        assert expected is None or sha == expected
        assert validator is None or (ev_validator == validator and exit_code == 0)


# -- gaps found by mutation testing --------------------------------------------------------------------------


def test_an_artifact_id_differing_only_in_case_is_another_artifact() -> None:
    """Artifact ids are opaque: ``Monthly-Report`` is not ``monthly-report`` (wrong_artifact comes first)."""
    r = classify(contract(**FULL), evidence(artifact_id="Monthly-Report"))
    assert r.status == "wrong_artifact"
    assert r.reason == "wrong_artifact: evidence is for 'Monthly-Report', contract promises 'monthly-report'"




class _NoOffset(tzinfo):
    """A tzinfo whose utcoffset is None: by the datetime docs such a datetime is naive, not aware."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None

    def tzname(self, dt: datetime | None) -> str | None:
        return None

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None


def test_a_datetime_whose_tzinfo_gives_no_offset_is_naive() -> None:
    naive = datetime(2026, 7, 25, 14, 10, tzinfo=_NoOffset())
    with pytest.raises(ValidationError, match="has no timezone"):
        evidence(observed_at=naive)
    with pytest.raises(ValueError, match="has no timezone"):
        classify_outcome(contract(), None, run_started_at=naive)


@pytest.mark.parametrize("bad", [SHA_ABC + "0", SHA_ABC + "\n", SHA_ABC + SHA_OTHER])
def test_a_digest_longer_than_64_hex_characters_is_refused(bad: str) -> None:
    """64 characters exactly: a digest with anything after its 64th character is no SHA-256 hex."""
    with pytest.raises(ValidationError, match="64 lowercase hexadecimal"):
        contract(expected_sha256=bad)
    with pytest.raises(ValidationError, match="64 lowercase hexadecimal"):
        evidence(sha256=bad)


@pytest.mark.parametrize("at", [0, 16, 63])
def test_a_digest_differing_in_any_one_character_is_a_mismatch(at: int) -> None:
    """Every one of the 64 characters counts: change one (first, seventeenth, last) and the bytes differ."""
    flipped = SHA_ABC[:at] + ("0" if SHA_ABC[at] != "0" else "1") + SHA_ABC[at + 1:]
    r = classify(contract(**FULL), evidence(sha256=flipped))
    assert (r.status, r.reason) == ("hash_mismatch", "hash_mismatch: observed sha256 differs from expected_sha256")


# --------------------------------------------------------------------------- edges found by mutation testing


def test_an_artifact_an_earlier_case_was_shown_is_stale_only_when_freshness_is_required() -> None:
    """As ``untouched``: the version an earlier case of the run saw proves nothing about this case, but only a
    contract that asks for freshness cares."""
    r = classify(contract(**FULL), evidence(), earlier=True)
    assert r.status == "stale" and "an earlier case of this run" in r.reason
    assert classify(contract(**FULL, require_fresh=False), evidence(), earlier=True).status == "verified"


def test_a_modification_time_up_to_two_seconds_after_the_observation_is_fresh() -> None:
    """FAT stamps times in two-second steps and a file server's clock may run a little ahead: 1 s and 2 s after
    the observation still show freshness, 2.000001 s does not."""
    assert FUTURE_MTIME_TOLERANCE == timedelta(seconds=2)
    for ahead, status in ((timedelta(seconds=1), "verified"), (timedelta(seconds=2), "verified"),
                          (timedelta(seconds=2, microseconds=1), "unverified")):
        assert classify(contract(**FULL), evidence(modified_at=T_OBS + ahead)).status == status


@pytest.mark.parametrize("bad", ["1REPORT_KEY", "REPORT-KEY", "REPORT KEY", ""])
def test_digest_key_env_must_be_a_name_a_shell_can_set(bad: str) -> None:
    """POSIX names: letters, digits and underscores, not starting with a digit."""
    with pytest.raises(ValidationError, match="name of an environment variable"):
        contract(digest_key_env=bad)
    assert contract(digest_key_env="_REPORT_KEY_2").digest_kind == "hmac-sha256"


def test_a_validator_error_without_the_validators_name_is_refused() -> None:
    """An error of no named validator cannot be matched to the contract's validator: refused, as an exit code is."""
    with pytest.raises(ValidationError, match="without the validator's name"):
        evidence(validator=None, validator_exit_code=None, validator_error="crashed")


@pytest.mark.parametrize("code", [False, True, "0", 0.0])
def test_a_receipts_exit_code_is_a_whole_number_only_as_the_evidences(code: object) -> None:
    """A receipt read back (``receipts_frame`` of mappings) with ``False``, ``"0"`` or ``0.0`` held exit 0 beside
    its ``validator_failed``: the receipt's exit code was lax where the evidence's is strict."""
    failed = classify(contract(validator="report_schema_v3"), evidence(validator_exit_code=1))
    with pytest.raises(ValidationError, match="validator_exit_code"):
        Receipt.model_validate({**failed.model_dump(), "validator_exit_code": code})
    np = pytest.importorskip("numpy")
    assert Receipt.model_validate({**failed.model_dump(), "validator_exit_code": np.int64(1)}).validator_exit_code == 1


@pytest.mark.parametrize("code", [False, True])
def test_a_bool_exit_code_is_refused_in_words_that_say_what_to_give(code: bool) -> None:
    # strict alone said "Input should be a valid integer" of False; the evidence and the receipt say both why
    # (False read as exit 0 would pass a failed check) and what to give
    failed = classify(contract(validator="report_schema_v3"), evidence(validator_exit_code=1))
    words = re.escape(f"must be an exit code (0 passes), got {code}: give 0 for a pass and 1 for a failure")
    with pytest.raises(ValidationError, match=words):
        Receipt.model_validate({**failed.model_dump(), "validator_exit_code": code})
    with pytest.raises(ValidationError, match=words):
        evidence(validator_exit_code=code)
