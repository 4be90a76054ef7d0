"""``_run/context.py``: "before" is strictly before, every version of an artifact is handed on, and a version is
remembered longer than any ``clock_slack_s``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from oloproof_nb._core.receipts import Evidence
from oloproof_nb._run.context import ShownArtifacts
from oloproof_nb.evaluators.outcome import OutcomeContractEvaluator

T0 = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)
MODIFIED = datetime(2026, 7, 25, 13, 59, tzinfo=timezone.utc)


def _key(artifact_id: str, sha: str = "ab" * 32) -> tuple[str, datetime, str, str]:
    return (artifact_id, MODIFIED, sha, "sha256")


def test_a_version_first_noted_at_the_very_instant_a_case_started_was_not_shown_before_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``shown_before``: observed *before* ``started``. Noted at 14:00:00 exactly, a case that started at
    14:00:00 was not shown it before; one that started a microsecond later was."""
    monkeypatch.setattr("oloproof_nb._run.context.utc_now", lambda: T0 + timedelta(seconds=1))
    evidence = Evidence(artifact_id="report", observed_at=T0, modified_at=MODIFIED, sha256="ab" * 32,
                        digest_kind="sha256", evidence_source="system_observe")
    shown = ShownArtifacts()
    shown.seed([(_key("report"), T0)])
    assert shown.shown_before(evidence, T0) is False
    assert shown.shown_before(evidence, T0 + timedelta(microseconds=1)) is True


def test_every_version_of_an_artifact_is_handed_to_the_next_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three versions of ``report`` (three digests) and one of ``log`` noted: ``entries(["report"])`` is those
    three, each with its time (a hand count), none of ``log``'s."""
    monkeypatch.setattr("oloproof_nb._run.context.utc_now", lambda: T0)
    shown = ShownArtifacts()
    noted = [(_key("report", c * 64), T0 - timedelta(seconds=i)) for i, c in enumerate("abc")]
    shown.seed(noted + [(_key("log"), T0)])
    assert sorted(shown.entries(["report"])) == sorted(noted)
    assert len(shown.entries(["report", "log"])) == 4


def test_a_version_is_remembered_for_120_seconds_longer_than_any_clock_slack(monkeypatch: pytest.MonkeyPatch) -> None:
    """``KEEP``: "more than clock_slack_s can be (60 s)", 120 s. Over the limit of held versions, one noted 119 s
    ago is kept and one noted 121 s ago is dropped; and ``clock_slack_s`` is capped below it."""
    clock = [T0]
    monkeypatch.setattr("oloproof_nb._run.context.utc_now", lambda: clock[0])
    shown = ShownArtifacts()
    shown.LIMIT = 1
    shown.seed([(_key("a1"), T0)])
    clock[0] = T0 + timedelta(seconds=119)
    shown.seed([(_key("a2"), clock[0])])
    assert {k[0] for k, _ in shown.entries(["a1", "a2", "a3"])} == {"a1", "a2"}
    clock[0] = T0 + timedelta(seconds=121)
    shown.seed([(_key("a3"), clock[0])])
    assert {k[0] for k, _ in shown.entries(["a1", "a2", "a3"])} == {"a2", "a3"}
    field = OutcomeContractEvaluator.model_fields["clock_slack_s"]
    cap = next(m.le for m in field.metadata if getattr(m, "le", None) is not None)
    assert cap == 60 and timedelta(seconds=cap) < ShownArtifacts.KEEP
