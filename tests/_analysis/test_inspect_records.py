"""A sample as a case record (:mod:`oloproof_nb._analysis.inspect_records`): its digest, its cluster; reading whole
logs is tested in test_inspect_log.py."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import oloproof_nb as op


def test_a_sample_whose_sandbox_start_changed_is_another_case() -> None:
    """The digest held {id, input, target, metadata}: a sample whose setup script or files changed (its
    sandbox's initial state) was paired with the old one. A sample without them keeps the old digest (by hand)."""
    from inspect_ai.dataset import Sample

    from oloproof_nb._analysis.inspect_records import sample_digest
    from oloproof_nb._core.canonical import canonical_json

    plain = Sample(input="refund o1", target="refunded", id="s1")
    by_hand = hashlib.sha256(canonical_json({"id": "s1", "input": "refund o1", "target": "refunded",
                                             "metadata": {}}).encode("utf-8")).hexdigest()
    assert sample_digest(plain) == by_hand
    a = Sample(input="refund o1", target="refunded", id="s1", setup="echo world=A > /w", files={"db.json": "{}"})
    for other in (Sample(input="refund o1", target="refunded", id="s1", setup="rm -rf /w", files={"db.json": "{}"}),
                  Sample(input="refund o1", target="refunded", id="s1", setup="echo world=A > /w",
                         files={"db2.json": "{}"}),
                  plain):
        assert sample_digest(a) != sample_digest(other)


def test_a_sample_whose_sandbox_changed_is_another_case() -> None:
    """The sandbox a sample starts in is part of its initial state, as setup and files are: another sandbox
    configuration is another case (the existing test changes setup and files only)."""
    from inspect_ai.dataset import Sample

    from oloproof_nb._analysis.inspect_records import sample_digest

    a = Sample(input="refund o1", target="refunded", id="s1", sandbox=("docker", "compose-a.yaml"))
    b = Sample(input="refund o1", target="refunded", id="s1", sandbox=("docker", "compose-b.yaml"))
    plain = Sample(input="refund o1", target="refunded", id="s1")
    assert sample_digest(a) != sample_digest(b)
    assert sample_digest(a) != sample_digest(plain)


@pytest.mark.parametrize("alike", ["billing\u200b", "billing ", "bil\u00adling"])
def test_cluster_values_that_read_alike_are_refused(alike: str, tmp_path: Path) -> None:
    """Case-file clusters that read as another are refused (a zero-width space, a trailing space); the
    values of an Inspect AI log's ``--cluster`` key are the same kind of name: ``billing`` and ``billing`` + U+200B
    counted as two independent clusters while every table showed one. Values that read apart are kept."""
    from types import SimpleNamespace

    from oloproof_nb._analysis.inspect_records import Reader

    reader = Reader("topic", None, None, None)
    log = tmp_path / "a.eval"

    def sample(topic: str) -> SimpleNamespace:
        return SimpleNamespace(events=[], metadata={"topic": topic})

    for epoch in (1, 2):  # a sample's epochs share its value: no clash with itself
        assert reader._cluster(log, "s1", epoch, sample("billing"), {}) == "billing"
    assert reader._cluster(log, "s2", 1, sample("Billing"), {}) == "Billing"  # reads apart: kept
    with pytest.raises(op.OloproofError) as info:
        reader._cluster(log, "s3", 1, sample(alike), {})
    message = str(info.value)
    assert message.startswith(f"{log}: cluster='topic': sample 's3' has topic {alike!r}, which reads as the cluster "
                              "'billing' at sample 's1': they differ only in invisible characters"), message


def test_the_names_a_sample_was_scored_under_are_its_final_score_events_once_scored() -> None:
    """:func:`_eval_scores`: of a sample the eval scored (its ``scorers`` span),
    the names are its final ``score`` events' alone: not the header's other scorers (one that gave this sample no
    score), nor a solver's intermediate ``score()`` call, nor a span of another type or name. Without that span the
    header's scorers count too; a score event naming no scorer, or no events, cannot say (None)."""
    from types import SimpleNamespace as Event

    from oloproof_nb._analysis.inspect_records import _eval_scores

    def sample(*events: Event) -> Event:
        return Event(events=list(events))

    span = Event(event="span_begin", name="scorers", type="scorers")
    final = Event(event="score", scorer="graded", intermediate=False)
    midway = Event(event="score", scorer="draft", intermediate=True)
    declared = {"graded", "strict"}
    assert _eval_scores(sample(midway, span, final), declared) == {"graded"}
    assert _eval_scores(sample(final), declared) == {"graded", "strict"}  # no scorers span: the header's too
    for other in (Event(event="span_begin", name="scorers", type="solvers"),
                  Event(event="span_begin", name="solvers", type="scorers")):
        assert _eval_scores(sample(other, final), declared) == {"graded", "strict"}
    assert _eval_scores(sample(span, final, Event(event="score", scorer=None)), declared) is None
    assert _eval_scores(sample(), declared) is None


@pytest.mark.parametrize("depth", [201, 5000, 100_000])
def test_a_tool_result_of_text_nested_too_deep_stays_its_text(depth: int) -> None:
    """A tool's text of deeply nested brackets (what it read from a page, say) made ``json.loads`` raise
    RecursionError, an internal error for the whole log (at 990 levels and above); one it parsed could nest deeper
    than a run's trajectory may (``MAX_DEPTH``, 200). It stays the text; a result of 200 levels is still its value,
    and a Python literal (a dict's ``str()``) too deep stays its text as well."""
    from types import SimpleNamespace as Message

    from oloproof_nb._analysis.inspect_records import _steps
    from oloproof_nb._core.paths import MAX_DEPTH

    def result_of(content: str) -> object:
        call = Message(id="c1", function="fetch", arguments={"url": "u"})
        messages = [Message(role="assistant", text="", model="m", tool_calls=[call]),
                    Message(role="tool", tool_call_id="c1", error=None, content=content, text=content)]
        steps = _steps(messages)
        assert [step["kind"] for step in steps] == ["message", "tool_call"]
        return steps[1]["result"]

    deep = "[" * depth + "]" * depth
    assert result_of(deep) == deep
    literal = "{'a': " * depth + "1" + "}" * depth
    assert result_of(literal) == literal
    whole: list[object] = []
    for _ in range(MAX_DEPTH - 1):
        whole = [whole]
    assert result_of(str(whole).replace(" ", "")) == whole
