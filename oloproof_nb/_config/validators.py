"""Outcome validators registered in oloproof.yaml: ``validators: {name: "module:function"}``.

A validator is a Python callable importable from the suite folder, called with the
artifact's path; it returns ``True``/``None``/``0`` (accept), ``False`` (reject) or an
exit code (see :func:`oloproof_nb.observe_file`). A case's ``outcome`` names one
by its registered name.

This module checks the ``module:function`` format (while oloproof.yaml is validated)
and cross-checks every name an ``outcome_contract`` evaluator or a case contract
uses against the registry; ``_config/imports`` imports the callables.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from .._core.case import Case
from .._core.evaluator import Evaluator
from ..errors import CaseFileError, ConfigError, quote
from .cases import iter_cases

__all__ = [
    "ValidatorName",
    "ValidatorSpec",
    "check_case_validators",
    "check_evaluator_validators",
    "check_validator_name",
    "check_validator_spec",
]

_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def check_import_spec(value: str, shape: str = "module:function", example: str = "checks:report_schema",
                      what: str = "a function in it") -> str:
    """Accept ``module:attr`` (what the suite imports from its folder); the error says what is allowed.

    Examples
    --------
    >>> check_import_spec("refund_desk:RefundDesk", "module:Class", "refund_desk:RefundDesk")
    'refund_desk:RefundDesk'
    >>> check_import_spec("desk.Desk", "module:Class", "desk:Desk", "its class")
    Traceback (most recent call last):
    ...
    ValueError: must be 'module:Class' (a module importable from the suite folder, a colon, its class), ...
    """
    if not _SPEC.fullmatch(value):
        raise ValueError(f"must be '{shape}' (a module importable from the suite folder, a colon, {what}), "
                         f"e.g. {example}; got {quote(value)}")
    return value


def check_validator_spec(value: str) -> str:
    """Accept ``module:function``; the error says what is allowed.

    Examples
    --------
    >>> check_validator_spec("checks:report_schema")
    'checks:report_schema'
    """
    return check_import_spec(value)


def check_validator_name(value: str) -> str:
    """Accept a validator name: letters, digits, ``_ . -`` (not starting with ``.`` or ``-``).

    Examples
    --------
    >>> check_validator_name("report_schema_v3")
    'report_schema_v3'
    """
    if not _NAME.fullmatch(value):
        raise ValueError(f"a validator name must use letters, digits, '_', '.' or '-', got {quote(value)}")
    return value


#: A ``module:function`` entry of ``validators`` in oloproof.yaml.
ValidatorSpec = Annotated[str, AfterValidator(check_validator_spec)]
#: A registered validator's name.
ValidatorName = Annotated[str, AfterValidator(check_validator_name)]


def _registered(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def check_evaluator_validators(evaluators: list[Evaluator], registered: Mapping[str, str],
                               file: str | Path) -> None:
    """Every validator name an evaluator may run (``outcome_contract``'s ``validators``) must be registered.

    Raises
    ------
    ConfigError
        Naming ``file`` and ``evaluators[i].validators[j]``.
    """
    for i, ev in enumerate(evaluators):
        for j, name in enumerate(ev.validator_names()):
            if name not in registered:
                raise ConfigError(file, f"evaluators[{i}].validators[{j}]",
                                  f"validator {quote(name)} is not registered; registered validators: "
                                  f"{_registered(registered)} (register it under 'validators: "
                                  f"{{{name}: module:function}}')")


def check_case_validators(
    cases: list[Case], evaluators: list[Evaluator], registered: Mapping[str, str], cases_file: str | Path
) -> None:
    """The validator a case's ``outcome`` names must be registered and usable by every ``outcome_contract``.

    An evaluator with a non-empty ``validators`` list may only run those validators, so a
    contract naming another one could never be verified by it: that is an error at load,
    not an ``unverified`` receipt after the run.

    Raises
    ------
    CaseFileError
        Naming ``cases_file``, the case's line and the validator.
    """
    outcome_evaluators = [(i, ev) for i, ev in enumerate(evaluators) if ev.type == "outcome_contract"]
    for case in cases:
        name = (case.outcome or {}).get("validator")
        if name is None:
            continue
        if name not in registered:
            raise CaseFileError(cases_file, _line_of(cases_file, case.id),
                                f"outcome.validator {quote(name)} is not registered in oloproof.yaml 'validators' "
                                f"(registered: {_registered(registered)})")
        for i, ev in outcome_evaluators:
            if ev.validator_names() and name not in ev.validator_names():
                raise CaseFileError(cases_file, _line_of(cases_file, case.id),
                                    f"outcome.validator {quote(name)} is not among evaluators[{i}].validators "
                                    f"({', '.join(ev.validator_names())}) in oloproof.yaml; add it there, or leave "
                                    "that list empty to allow every registered validator")


def _line_of(cases_file: str | Path, case_id: str) -> int | None:
    """The line of a case in its file (only looked up on the error path)."""
    for line, case in iter_cases(cases_file):
        if case.id == case_id:
            return line
    return None
