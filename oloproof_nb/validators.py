"""Outcome validators registered in oloproof.yaml: ``validators: {name: "module:function"}``.

A validator is a Python callable importable from the suite folder, called with the
artifact's path; it returns ``True``/``None``/``0`` (accept), ``False`` (reject) or an
exit code (see :func:`oloproof_nb.observe.observe_file`). A case's ``outcome`` names one
by its registered name.

This module checks the ``module:function`` format (while oloproof.yaml is validated),
imports the callables from the suite folder, and cross-checks every name an
``outcome_contract`` evaluator or a case contract uses against the registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from .cases import Case, iter_cases
from .errors import CaseFileError, ConfigError
from .evaluators.outcome import OutcomeContractEvaluator

__all__ = [
    "ValidatorName",
    "ValidatorSpec",
    "check_case_validators",
    "check_evaluator_validators",
    "check_validator_name",
    "check_validator_spec",
    "load_validators",
]

_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def check_validator_spec(value: str) -> str:
    """Accept ``module:function``; the error says what is allowed.

    Examples
    --------
    >>> check_validator_spec("checks:report_schema")
    'checks:report_schema'
    """
    if not _SPEC.fullmatch(value):
        raise ValueError(
            f"must be 'module:function' (a module importable from the suite folder and a function in it, "
            f"e.g. checks:report_schema), got {value!r}"
        )
    return value


def check_validator_name(value: str) -> str:
    """Accept a validator name: letters, digits, ``_ . -`` (not starting with ``.`` or ``-``).

    Examples
    --------
    >>> check_validator_name("report_schema_v3")
    'report_schema_v3'
    """
    if not _NAME.fullmatch(value):
        raise ValueError(f"a validator name must use letters, digits, '_', '.' or '-', got {value!r}")
    return value


#: A ``module:function`` entry of ``validators`` in oloproof.yaml.
ValidatorSpec = Annotated[str, AfterValidator(check_validator_spec)]
#: A registered validator's name.
ValidatorName = Annotated[str, AfterValidator(check_validator_name)]


def load_validators(
    root: Path, specs: Mapping[str, str], file: str | Path
) -> dict[str, Callable[[Path], Any]]:
    """Import every registered validator from the suite folder.

    Parameters
    ----------
    root : Path
        The suite folder; a top-level module file there is imported under a name unique to the
        folder (as the system is, see :func:`oloproof_nb.suite.import_system`).
    specs : Mapping[str, str]
        ``{name: "module:function"}`` from oloproof.yaml.
    file : str or Path
        The oloproof.yaml the specs come from (named in errors).

    Returns
    -------
    dict
        ``{name: callable}``, in the order of ``specs``.

    Raises
    ------
    ConfigError
        Naming ``file`` and ``validators.<name>``: the module cannot be imported, has no such
        attribute, or the attribute is not callable.
    """
    from .suite import import_system  # late: suite imports this module

    out: dict[str, Callable[[Path], Any]] = {}
    for name, spec in specs.items():
        key = f"validators.{name}"
        try:
            target = import_system(root, spec, file)
        except ConfigError as exc:
            raise ConfigError(file, key, exc.message) from None
        if not callable(target):
            raise ConfigError(file, key, f"{spec!r} is a {type(target).__name__}, not a function; "
                                         "a validator is a callable taking the artifact's path")
        out[name] = target
    return out


def _registered(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def check_evaluator_validators(evaluators: list[Any], registered: Mapping[str, str], file: str | Path) -> None:
    """Every name in an ``outcome_contract`` evaluator's ``validators`` must be registered.

    Raises
    ------
    ConfigError
        Naming ``file`` and ``evaluators[i].validators[j]``.
    """
    for i, ev in enumerate(evaluators):
        if not isinstance(ev, OutcomeContractEvaluator):
            continue
        for j, name in enumerate(ev.validators):
            if name not in registered:
                raise ConfigError(file, f"evaluators[{i}].validators[{j}]",
                                  f"validator {name!r} is not registered; registered validators: "
                                  f"{_registered(registered)} (register it under 'validators: "
                                  f"{{{name}: module:function}}')")


def check_case_validators(
    cases: list[Case], evaluators: list[Any], registered: Mapping[str, str], cases_file: str | Path
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
    outcome_evaluators = [(i, ev) for i, ev in enumerate(evaluators) if isinstance(ev, OutcomeContractEvaluator)]
    for case in cases:
        name = (case.outcome or {}).get("validator")
        if name is None:
            continue
        if name not in registered:
            raise CaseFileError(cases_file, _line_of(cases_file, case.id),
                                f"outcome.validator {name!r} is not registered in oloproof.yaml 'validators' "
                                f"(registered: {_registered(registered)})")
        for i, ev in outcome_evaluators:
            if ev.validators and name not in ev.validators:
                raise CaseFileError(cases_file, _line_of(cases_file, case.id),
                                    f"outcome.validator {name!r} is not among evaluators[{i}].validators "
                                    f"({', '.join(ev.validators)}) in oloproof.yaml; add it there, or leave "
                                    "that list empty to allow every registered validator")


def _line_of(cases_file: str | Path, case_id: str) -> int | None:
    """The line of a case in its file (only looked up on the error path)."""
    for line, case in iter_cases(cases_file):
        if case.id == case_id:
            return line
    return None
