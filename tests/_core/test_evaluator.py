"""The evaluator base class, its rows and the registry (oloproof_nb._core.evaluator), on a probe evaluator.

Every expected row is written by hand from DESIGN.md's ``run.verdicts`` columns (criterion, evaluator, verdict,
reason).
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic
import pytest

from oloproof_nb._core import evaluator as module
from oloproof_nb._core.evaluator import Evaluation, Evaluator, register


class Probe(Evaluator):
    type: Literal["probe"] = "probe"
    paths: list[str] = []
    weights: list[Any] = []


def test_the_criterion_is_the_name_given_else_the_type() -> None:
    assert Probe().name == "probe" and Probe(criterion="refund_done").name == "refund_done"


def test_the_settings_leave_out_the_name_and_sort_only_lists_of_text() -> None:
    """Mutants caught: the criterion kept (two runs naming one check differently would differ), the paths left in
    the order written, every list sorted (the weights [2, 1] are an order, not a set)."""
    probe = Probe(criterion="mine", paths=["orders.b", "orders.a"], weights=[2, 1])
    assert probe.settings() == {"type": "probe", "paths": ["orders.a", "orders.b"], "weights": [2, 1]}
    assert Probe(paths=["orders.a", "orders.b"], weights=[2, 1]).settings() == probe.settings()


def test_a_verdict_row_a_missing_verdict_and_an_interrupted_case() -> None:
    probe = Probe(criterion="mine")
    assert probe.verdict("fail", "no refund") == {"criterion": "mine", "evaluator": "probe", "verdict": "fail",
                                                   "reason": "no refund"}
    missing = {"criterion": "mine", "evaluator": "probe", "verdict": "missing", "reason": "timeout: 5 s"}
    assert probe.missing("timeout: 5 s") == Evaluation(verdicts=[missing])
    assert probe.interrupted(None, "timeout: 5 s", timed_out=True) == Evaluation(verdicts=[missing])  # type: ignore[arg-type]
    assert probe.evaluate_run([], {}, {}, 0) == ([], [])  # a case-scope check judges nothing across the run
    with pytest.raises(NotImplementedError):
        probe.evaluate(None)  # type: ignore[arg-type]


def test_extend_appends_every_list_in_order() -> None:
    """Mutant caught: a list left out (the receipts), or the other's rows put first."""
    first = Evaluation(verdicts=[Probe().verdict("pass")], receipts=[{"n": 1}])  # type: ignore[list-item]
    second = Evaluation(verdicts=[Probe().verdict("fail")], comparisons=[{"n": 2}],  # type: ignore[list-item]
                        replays=[{"n": 3}], receipts=[{"n": 4}])  # type: ignore[list-item]
    first.extend(second)
    assert [v["verdict"] for v in first.verdicts] == ["pass", "fail"]
    assert (first.comparisons, first.replays, first.receipts) == ([{"n": 2}], [{"n": 3}], [{"n": 1}, {"n": 4}])


def test_options_are_strict_and_frozen() -> None:
    with pytest.raises(pydantic.ValidationError, match="extra"):
        Probe(pathz=["orders"])  # type: ignore[call-arg]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        Probe().criterion = "other"  # type: ignore[misc]


def test_register_files_a_type_under_its_literal_name_and_refuses_a_plain_str(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutants caught: the class name (``Probe``) used as the key, a type without a Literal taken silently."""
    monkeypatch.setattr(module, "EVALUATORS", {})
    assert register(Probe) is Probe and module.EVALUATORS == {"probe": Probe}

    class Loose(Evaluator):
        type: str = "loose"

    with pytest.raises(TypeError, match="Loose.type must be a Literal"):
        register(Loose)
    assert module.EVALUATORS == {"probe": Probe}
