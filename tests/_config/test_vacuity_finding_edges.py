"""``_config/vacuity.py``: findings whose wording or presence the other vacuity tests do not pin.

Each test names the mutant it kills; the expected messages are read off the cases by hand (which paths each
case's states hold, which pattern matches every key).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._config.cases import load_cases
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb._config.vacuity import find_vacuous_checks, thin_validity

TYPO = {"type": "state_unchanged", "criterion": "kept", "paths": ["orders.ord-99"]}


def _found(tmp_path: Path, evaluators: list[dict[str, Any]], *cases: dict[str, Any]) -> dict[str, list[str]]:
    """The findings of a suite of ``evaluators`` over ``cases`` (each given an id and an empty input)."""
    file = tmp_path / "cases.jsonl"
    file.write_text("".join(json.dumps({"id": f"c{i}", "input": {}, **c}) + "\n" for i, c in enumerate(cases)),
                    encoding="utf-8")
    config = parse_suite_config({"name": "m57", "system": "m:S", "evaluators": evaluators})
    return find_vacuous_checks(config, load_cases(file))


def test_the_nearest_path_is_looked_for_in_every_case_not_the_first_alone(tmp_path: Path) -> None:
    """The typo orders.ord-99 is one letter from orders.ord-999, which only the second case holds; the first holds
    orders.ord-1 (further off). Mutant: candidates gathered while the pool is empty only (the first case's paths)
    offered ord-1."""
    found = _found(tmp_path, [TYPO], {"initial_state": {"orders": {"ord-1": {"s": 1}}}},
                   {"initial_state": {"orders": {"ord-999": {"s": 1}}}})
    assert len(found["kept"]) == 1 and "did you mean orders.ord-999?" in found["kept"][0]


def test_a_state_unchanged_typo_is_offered_a_path_of_initial_state_only(tmp_path: Path) -> None:
    """state_unchanged reads initial_state only, so its "did you mean" comes from there: the case's initial_state
    holds orders.ord-1, its expected.state orders.ord-999 (nearer the typo). Mutant: expected.state's paths pooled
    for state_unchanged too offered ord-999, a path the check never compares."""
    found = _found(tmp_path, [TYPO], {"initial_state": {"orders": {"ord-1": {"s": 1}}},
                                      "expected": {"state": {"orders": {"ord-999": {"s": 1}}}}})
    assert len(found["kept"]) == 1 and "did you mean orders.ord-1?" in found["kept"][0]


def test_a_pattern_that_matches_every_path_is_named_wherever_it_stands_in_the_list(tmp_path: Path) -> None:
    """ignore ['orders.*.at', '*']: the second pattern matches every path, so nothing is compared. Mutant: only the
    first pattern asked whether it matches every path named the pair as patterns that hide changes below the top
    level, a weaker finding that does not quote '*'."""
    ev = {"type": "state_matches", "mode": "whole", "ignore": ["orders.*.at", "*"]}
    found = _found(tmp_path, [ev], {"initial_state": {"orders": {"ord-1": {"s": 1}}}})
    assert found == {"state_matches": [
        "oloproof.yaml: evaluators[0] (state_matches, criterion state_matches): ignore pattern '*' matches every "
        "path of the state, so nothing is compared, not even the leaves expected.state names, and the check "
        "cannot fail"]}


def test_ignore_patterns_are_not_named_while_no_case_holds_a_leaf(tmp_path: Path) -> None:
    """With every state empty there is no change below a top-level key to hide, so ignore ['orders'] is not named;
    a case holding orders.ord-1.s makes it named. Mutant: the finding given without a leaf seen named it for the
    empty states too."""
    ev = {"type": "state_matches", "mode": "whole", "ignore": ["orders"]}
    empty: dict[str, Any] = {"initial_state": {}, "expected": {"state": {}}}
    assert _found(tmp_path, [ev], empty, empty) == {}
    found = _found(tmp_path, [ev], {"initial_state": {"orders": {"ord-1": {"s": 1}}}})
    [message] = found["state_matches"]
    assert "its ignore patterns 'orders' hide every change below the top-level keys" in message


def test_a_top_level_key_is_offered_for_a_misspelt_top_level_path(tmp_path: Path) -> None:
    """paths: [ordres] beside a state whose one top-level key is orders: difflib's ratio of 'ordres' to 'orders' is
    5/6 (above the 0.6 cutoff), to 'orders.ord-1' 2·5/18 ≈ 0.56 (below it), so the top-level key is offered.
    Mutant: candidates from the second level down only offered no path at all."""
    import difflib

    assert difflib.SequenceMatcher(None, "ordres", "orders").ratio() > 0.6
    assert difflib.SequenceMatcher(None, "ordres", "orders.ord-1").ratio() < 0.6
    ev = {"type": "state_unchanged", "criterion": "kept", "paths": ["ordres"]}
    found = _found(tmp_path, [ev], {"initial_state": {"orders": {"ord-1": 1}}})
    assert len(found["kept"]) == 1 and "did you mean orders?" in found["kept"][0]


@pytest.mark.parametrize(("pairs", "named"), [(2, True), (3, False)])
def test_a_minimum_validity_one_of_two_pairs_meets_is_named(pairs: int, named: bool) -> None:
    """minimum_validity 0.5: with 2 pairs, 0.5 × 2 = 1, so one valid pair meets it and the failing one may be
    labeled invalid (named); with 3 pairs 1.5 valid are needed, 2 in whole pairs (not named). Mutant: two pairs
    taken for too few to name, as one pair rightly is, left the first unnamed."""
    transform = {"name": "t", "field": "message", "template": "{value}e", "validity_labels": "labels/t.jsonl",
                 "minimum_validity": 0.5}
    config = parse_suite_config({"name": "m57", "system": "m:S", "metamorphic": {"transforms": [transform]},
                                 "evaluators": [{"type": "metamorphic_relation", "relation": "same_state",
                                                 "transform": "t"}]})
    found = thin_validity(config, pairs)
    assert list(found) == (["same_state_under_t"] if named else [])
    if named:
        assert "minimum_validity 0.5 is met once 1 of its 2 pairs labeled valid" in found["same_state_under_t"]


def test_a_leaf_expected_state_alone_holds_keeps_ignore_patterns_unnamed(tmp_path: Path) -> None:
    """ignore ['orders'] hides every change below orders, the one key initial_state holds; but expected.state asks
    for refunds.r1.amount, which no pattern hides, so an agent that writes no refund fails: not named. Mutant: the
    leaves of initial_state alone looked at named the patterns as hiding every change."""
    ev = {"type": "state_matches", "mode": "whole", "ignore": ["orders"]}
    case = {"initial_state": {"orders": {"ord-1": {"s": 1}}},
            "expected": {"state": {"orders": {"ord-1": {"s": 1}}, "refunds": {"r1": {"amount": 5}}}}}
    assert _found(tmp_path, [ev], case) == {}


@pytest.mark.parametrize(("ignore", "seen"), [
    (["orders"], "only a new top-level key would be seen: the patterns name each top-level key itself, so a value "
                 "replaced whole there is hidden too"),
    (["orders.*"], "only a top-level value replaced whole, or a new top-level key, would be seen"),
    (["orders", "users.*"], "only a new top-level key, or a top-level value replaced whole where no pattern names "
                            "its key itself, would be seen"),
])
def test_what_the_ignore_finding_says_would_be_seen_is_what_the_check_compares(tmp_path: Path, ignore: list[str],
                                                                              seen: str) -> None:
    """``ignore: [orders]`` names the top-level key itself: mode whole compares nothing of ``orders``, so ``orders``
    replaced whole by a string passes (checked below on the comparison itself); only a key beside it is seen. The
    finding said a top-level value replaced whole "would be seen" for that pattern too."""
    from oloproof_nb._core.compare import compare_state

    def differs(actual: dict[str, Any]) -> bool:  # a row of the comparison that does not match
        return any(not row[-1] for row in compare_state(state, actual, mode="whole", ignore=ignore))

    state = {"orders": {"ord-1": {"s": 1}}, "users": {"u-1": {"n": 1}}}
    assert differs({**state, "orders": "gone"}) == ("orders" not in ignore)
    assert differs({**state, "extra": 1})
    ev = {"type": "state_matches", "mode": "whole", "ignore": ignore}
    initial = state if "users.*" in ignore else {"orders": state["orders"]}
    [message] = _found(tmp_path, [ev], {"initial_state": initial})["state_matches"]
    assert message.endswith(f"hide every change below the top-level keys of every case's state, new keys included "
                            f"({seen})")
