"""The strict ``absent_ok`` of the state evaluators: its default stays false."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml

import oloproof_nb as op
from oloproof_nb.errors import VacuousCheckWarning


@pytest.mark.parametrize("evaluator", [{"type": "state_matches", "mode": "paths", "paths": ["acct.zz"]},
                                       {"type": "state_unchanged", "paths": ["acct.zz"]}])
def test_a_path_in_no_case_is_named_unless_absent_ok_is_given(tmp_path: Path, evaluator: dict[str, object]) -> None:
    """``acct.zz`` is in no case's state (a typo of ``acct.a``): without ``absent_ok`` load_suite warns, naming it;
    with ``absent_ok: true`` it does not. (A default of true hid every such typo.)"""
    (tmp_path / "desk.py").write_text("class Desk:\n    pass\n", encoding="utf-8")
    case = {"id": "c1", "input": {}, "initial_state": {"acct": {"a": 1}}, "expected": {"state": {"acct": {"a": 1}}}}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    for given, warned in (({}, True), ({"absent_ok": True}, False)):
        (tmp_path / "oloproof.yaml").write_text(yaml.safe_dump({"name": "t", "system": "desk:Desk",
                                                                "evaluators": [{**evaluator, **given}]}))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            suite = op.load_suite(tmp_path)
        vacuous = [str(w.message) for w in caught if issubclass(w.category, VacuousCheckWarning)]
        assert suite.config.evaluators[0].absent_ok is not warned
        assert len(vacuous) == int(warned)
        if warned:
            assert "path 'acct.zz' is in no case's" in vacuous[0] and "did you mean acct.a?" in vacuous[0]
