"""Registered validators: the names and ``module:function`` specs oloproof.yaml may give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_nb._config.cases import load_cases
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb._config.validators import check_case_validators, check_validator_name
from oloproof_nb._core.case import Case
from oloproof_nb.errors import CaseFileError, ConfigError
from oloproof_nb.evaluators import OutcomeContractEvaluator


@pytest.mark.parametrize("name", ["report_schema_v3", "schema.v2", "json-schema", "_private", "3d", "a"])
def test_a_validator_name_of_letters_digits_and_separators_inside_is_accepted(name: str) -> None:
    assert check_validator_name(name) == name


@pytest.mark.parametrize("name", [".hidden", "-schema", ".", "-", "", "a b", "a/b", "a:b"])
def test_a_validator_name_starting_with_a_dot_or_a_dash_or_holding_another_character_is_refused(name: str) -> None:
    """The documented rule: letters, digits, ``_ . -``, not starting with ``.`` or ``-`` (a name that starts
    like an option, or like a hidden file)."""
    with pytest.raises(ValueError, match="a validator name must use letters, digits"):
        check_validator_name(name)


def test_a_bad_validator_name_in_oloproof_yaml_names_the_key() -> None:
    with pytest.raises(ConfigError) as info:
        parse_suite_config({"name": "x", "system": "m:S", "validators": {"-schema": "checks:schema"}})
    # the key as written: pydantic locates a refused mapping key as ("validators", "-schema", "[key]"), and the
    # error named "validators.-schema.[key]", a key no file holds
    assert info.value.key == "validators.-schema" and "a validator name must use letters" in info.value.message


def _cases(tmp_path: Path, *validators: str | None) -> tuple[Path, list[Case]]:
    path = tmp_path / "cases.jsonl"
    lines = [{"id": f"c{i}", "input": {}, "outcome": {"artifact_id": "report", "validator": v}}
             for i, v in enumerate(validators, start=1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path, load_cases(path)


def test_a_case_naming_an_unregistered_validator_is_refused_at_its_line(tmp_path: Path) -> None:
    """Line 2's contract names ``nosuch``; only ``schema`` is registered: refused naming the file, line 2, the
    name and the registered ones (it was an ``unverified`` receipt after the run)."""
    path, cases = _cases(tmp_path, "schema", "nosuch")
    outcome = OutcomeContractEvaluator(type="outcome_contract")
    with pytest.raises(CaseFileError) as info:
        check_case_validators(cases, [outcome], {"schema": "checks:schema"}, path)
    assert str(info.value) == (f"{path}: line 2: outcome.validator 'nosuch' is not registered in oloproof.yaml "
                               "'validators' (registered: schema)")
    check_case_validators(cases[:1], [outcome], {"schema": "checks:schema"}, path)  # the registered one passes


def test_a_case_validator_outside_an_evaluators_list_is_refused_and_an_empty_list_allows_every_one(
        tmp_path: Path) -> None:
    path, cases = _cases(tmp_path, None, "schema")
    registered = {"schema": "checks:schema", "size": "checks:size"}
    check_case_validators(cases, [OutcomeContractEvaluator(type="outcome_contract")], registered, path)
    only_size = OutcomeContractEvaluator(type="outcome_contract", validators=["size"])
    with pytest.raises(CaseFileError, match=r": line 2: outcome.validator 'schema' is not among evaluators\[0\]"):
        check_case_validators(cases, [only_size], registered, path)
