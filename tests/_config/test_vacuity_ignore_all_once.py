"""``_config/vacuity.py``: a check whose ignore pattern matches every path is named once, by the finding that says
so, even where a case expects a change."""

from __future__ import annotations

import json
from pathlib import Path

from oloproof_nb._config.cases import load_cases
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb._config.vacuity import find_vacuous_checks


def test_an_ignore_that_matches_every_path_is_one_finding_where_a_case_expects_a_change(tmp_path: Path) -> None:
    """mode: whole with ignore ['*']: '*' matches every top-level key, so nothing is compared (one finding, read off
    the case by hand). The case expects the order's status to change, which an idle agent passes only because the
    pattern hides it: that is what the first finding says already. Mutant: ``i in self.ignoring or mode in
    (whole, changes)`` took every whole/changes check into the idle scan, and added a second finding blaming
    "its ignore patterns" for covering the expected change."""
    file = tmp_path / "cases.jsonl"
    case = {"id": "c0", "input": {}, "initial_state": {"orders": {"ord-1": {"s": "open"}}},
            "expected": {"state": {"orders": {"ord-1": {"s": "refunded"}}}}}
    file.write_text(json.dumps(case) + "\n", encoding="utf-8")
    ev = {"type": "state_matches", "mode": "whole", "ignore": ["*"]}
    config = parse_suite_config({"name": "m70", "system": "m:S", "evaluators": [ev]})
    assert find_vacuous_checks(config, load_cases(file)) == {"state_matches": [
        "oloproof.yaml: evaluators[0] (state_matches, criterion state_matches): ignore pattern '*' matches every "
        "path of the state, so nothing is compared, not even the leaves expected.state names, and the check "
        "cannot fail"]}
