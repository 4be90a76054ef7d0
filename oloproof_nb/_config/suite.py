"""oloproof.yaml: the suite model, its loading, and importing the system under test."""

from __future__ import annotations

import difflib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, field_validator, model_validator

from .._core.case import Case, derive_case
from .._core.evaluator import EVALUATORS, Evaluator
from .._core.paths import ABSENT, flatten, format_path, get_path, parse_path, parse_pattern
from .._core.slicespec import parse_slice_spec
from .._core.trajectory import ToolErrorRule
from ..errors import ConfigError, SliceSpecError, VacuousCheckWarning
from .cases import load_cases
from .files import config_error, read_yaml
from .imports import file_digest, import_system, load_check, load_validators
from .labels import load_labels
from .release import ReleaseConfig, load_release, parse_release
from .validators import (
    ValidatorName,
    ValidatorSpec,
    check_case_validators,
    check_evaluator_validators,
)

__all__ = ["SuiteConfig", "Transform", "Metamorphic", "Suite", "load_suite", "parse_suite_config",
           "release_from_manifest", "find_vacuous_checks", "nearest_path", "SUITE_FILE", "RELEASE_FILE"]

SUITE_FILE = "oloproof.yaml"
RELEASE_FILE = "release.yaml"


class Transform(BaseModel):
    """A metamorphic transform: ``input[field]``, or the strings of ``initial_state`` at ``state_path``,
    rewritten by ``template`` (``{value}`` is the original).

    ``state_path`` is a path pattern (``files["bill.txt"]``, ``transactions.*.subject``): an
    injection that arrives through data the agent reads rather than through its request.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    field: str | None = Field(default=None, min_length=1)
    state_path: str | None = Field(default=None, min_length=1)
    template: str
    validity_labels: str
    minimum_validity: float = Field(ge=0, le=1)

    @field_validator("template")
    @classmethod
    def _has_value(cls, value: str) -> str:
        if "{value}" not in value:
            raise ValueError("the template must contain {value} (the original field)")
        return value

    @field_validator("state_path")
    @classmethod
    def _valid_pattern(cls, value: str | None) -> str | None:
        if value is not None:
            parse_pattern(value)
        return value

    @model_validator(mode="after")
    def _one_target(self) -> Transform:
        if (self.field is None) == (self.state_path is None):
            raise ValueError("a transform rewrites an input 'field' or a 'state_path' of initial_state; give one")
        return self


class Metamorphic(BaseModel):
    """The ``metamorphic`` section: a list of transforms."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    transforms: list[Transform] = Field(default_factory=list)


class SuiteConfig(BaseModel):
    """oloproof.yaml: the system, the cases, the evaluators, transforms and slices.

    Attributes
    ----------
    name : str
        The suite's name.
    system : str
        ``module:attr`` importable from the suite folder: a class or a factory
        that returns a system instance.
    cases : str
        The case file, relative to the suite folder (default ``cases.jsonl``).
    evaluators : list of Evaluator
        Each ``{type: ..., ...}``; see the evaluator table in the docs.
    metamorphic : Metamorphic
        Transforms that derive one copy of each source case.
    slices : list of str
        Slice specs reports show, e.g. ``tool_calls:1,2``.
    validators : dict of str to str
        Outcome validators by name, each ``module:function`` importable from the suite folder
        (imported when the suite loads).
    case_timeout_s : float
        Seconds a case (or a replay) may take before it is recorded as ``timeout``.
    tool_errors : ToolErrorRule
        When a tool result counts as a failed step (``steps.is_error``); see
        :class:`~oloproof_nb._core.trajectory.ToolErrorRule` for the default.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    system: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    cases: str = "cases.jsonl"
    evaluators: list[SerializeAsAny[Evaluator]] = Field(default_factory=list)
    metamorphic: Metamorphic = Field(default_factory=Metamorphic)
    slices: list[str] = Field(default_factory=list)
    validators: dict[ValidatorName, ValidatorSpec] = Field(default_factory=dict)
    case_timeout_s: float = Field(default=300.0, gt=0)
    tool_errors: ToolErrorRule = Field(default_factory=ToolErrorRule)

    @property
    def criteria(self) -> list[str]:
        """Criterion names of the evaluators, in order."""
        return [ev.name for ev in self.evaluators]

    def evaluator(self, criterion: str) -> Evaluator:
        """The evaluator behind a criterion name."""
        for ev in self.evaluators:
            if ev.name == criterion:
                return ev
        raise KeyError(criterion)


def _parse_evaluators(raw: Any, file: str | Path) -> list[Evaluator]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigError(file, "evaluators", "must be a list of {type: ...} mappings")
    out: list[Evaluator] = []
    allowed = ", ".join(sorted(EVALUATORS))
    for i, item in enumerate(raw):
        key = f"evaluators[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(file, key, f"must be a mapping with a 'type' (one of {allowed})")
        kind = item.get("type")
        if not isinstance(kind, str) or kind not in EVALUATORS:
            raise ConfigError(file, f"{key}.type", f"unknown evaluator type {kind!r}; allowed: {allowed}")
        cls = EVALUATORS[kind]
        try:
            out.append(cls.model_validate(item))
        except ValidationError as exc:
            raise config_error(file, exc, cls, prefix=key) from None
    seen: dict[str, int] = {}
    for i, ev in enumerate(out):
        if ev.name in seen:
            raise ConfigError(file, f"evaluators[{i}].criterion",
                              f"criterion {ev.name!r} is already used by evaluators[{seen[ev.name]}]; "
                              "give one of them another 'criterion' name")
        seen[ev.name] = i
    return out


def parse_suite_config(raw: dict[str, Any], file: str | Path = SUITE_FILE) -> SuiteConfig:
    """Validate an oloproof.yaml mapping; every error names the file and the key."""
    evaluators = _parse_evaluators(raw.get("evaluators"), file)
    try:
        config = SuiteConfig.model_validate({**raw, "evaluators": evaluators})
    except ValidationError as exc:
        raise config_error(file, exc, SuiteConfig) from None
    names = [t.name for t in config.metamorphic.transforms]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(file, f"metamorphic.transforms[{i}].name", f"transform {name!r} is declared twice")
    for i, ev in enumerate(config.evaluators):
        for key, message in ev.check_suite({t.name: t for t in config.metamorphic.transforms}):
            raise ConfigError(file, f"evaluators[{i}].{key}", message)
    check_evaluator_validators(config.evaluators, config.validators, file)
    for i, spec in enumerate(config.slices):
        try:
            parse_slice_spec(spec)
        except SliceSpecError as exc:
            raise ConfigError(file, f"slices[{i}]", str(exc)) from None
    return config


@dataclass(frozen=True)
class Suite:
    """A loaded suite: its folder, validated configs, cases (sources then derived) and labels."""

    root: Path
    config: SuiteConfig
    release: ReleaseConfig | None
    cases: list[Case]
    labels: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    system_target: Any = None
    #: Registered outcome validators, ``{name: callable}`` (imported with the system).
    validators: dict[str, Any] = field(default_factory=dict)
    #: Checks that cannot fail (``VacuousCheckWarning``): criterion → one message per finding.
    vacuous: dict[str, list[str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def criteria(self) -> list[str]:
        return self.config.criteria

    def resolve_system(self) -> Any:
        """What ``system: module:attr`` names (imported from the suite folder on first use)."""
        if self.system_target is not None:
            return self.system_target
        return import_system(self.root, self.config.system, self.root / SUITE_FILE)

    def resolve_validators(self) -> dict[str, Any]:
        """The registered outcome validators, ``{name: callable}`` (imported on first use)."""
        if self.validators or not self.config.validators:
            return dict(self.validators)
        return load_validators(self.root, self.config.validators, self.root / SUITE_FILE)

    def manifest_config(self) -> dict[str, Any]:
        """What a run directory keeps of the suite, so frames and the gate rebuild without it."""
        return {
            "root": str(self.root),
            "config": self.config.model_dump(mode="json", exclude_none=True),
            "release": None if self.release is None else self.release.model_dump(mode="json"),
            "labels": self.labels,
            "vacuous": self.vacuous,
        }


def load_suite(folder: str | Path, *, release: str | Path | None = None, import_system_now: bool = True) -> Suite:
    """Load and validate a suite folder.

    Parameters
    ----------
    folder : str or Path
        The folder holding ``oloproof.yaml`` (and usually ``release.yaml``,
        the case file, label files and the system's module).
    release : str or Path, optional
        Another release.yaml to use instead of the folder's.
    import_system_now : bool
        Import the system and the registered ``validators`` right away (default), so a wrong
        ``system`` or ``validators.<name>`` fails here.

    Returns
    -------
    Suite
        With every source case followed by its derived copies.

    Raises
    ------
    ConfigError, CaseFileError, LabelFileError
        One line naming the file and the key (or line) and what is allowed. A
        transform's ``validity_labels`` file must exist (an empty file leaves
        every pair unlabeled); its judgements are kept in ``Suite.labels``
        and its digest in ``Suite.digests``.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(root, None, "is not a suite folder (no such directory)")
    suite_file = root / SUITE_FILE
    if not suite_file.exists():  # a directory, FIFO or device: read_yaml refuses it by name
        raise ConfigError(suite_file, None, "file not found; a suite folder holds oloproof.yaml")
    config = parse_suite_config(read_yaml(suite_file), suite_file)
    release_file = Path(release) if release is not None else root / RELEASE_FILE
    release_cfg = load_release(release_file) if (release is not None or release_file.exists()) else None
    cases_file = root / config.cases
    sources = load_cases(cases_file)
    check_case_validators(sources, config.evaluators, config.validators, cases_file)
    cases: list[Case] = []
    source_ids = {case.id for case in sources}
    for case in sources:
        cases.append(case)
        for i, transform in enumerate(config.metamorphic.transforms):
            if transform.field is not None and transform.field not in case.input:
                raise ConfigError(suite_file, f"metamorphic.transforms[{i}].field",
                                  f"case {case.id!r} has no input field {transform.field!r}")
            try:
                derived = derive_case(case, transform.name, transform.field, transform.template,
                                      state_path=transform.state_path)
            except ValueError as exc:
                raise ConfigError(suite_file, f"metamorphic.transforms[{i}].state_path",
                                  f"case {case.id!r}: {exc}") from None
            if derived.id in source_ids:
                raise ConfigError(suite_file, f"metamorphic.transforms[{i}].name",
                                  f"the derived case id {derived.id!r} is already a case id in {config.cases}")
            cases.append(derived)
    digests = {SUITE_FILE: file_digest(suite_file), config.cases: file_digest(cases_file)}
    if release_cfg is not None:
        digests[RELEASE_FILE] = file_digest(release_file)
        _check_release_criteria(release_cfg, config, release_file)
    labels: dict[str, list[dict[str, Any]]] = {}
    for i, transform in enumerate(config.metamorphic.transforms):
        labels_file = root / transform.validity_labels
        if not labels_file.exists():
            raise ConfigError(suite_file, f"metamorphic.transforms[{i}].validity_labels",
                              f"label file {labels_file} not found; write one judgement "
                              f'per line: {{"case_id": "<source id>~{transform.name}", "valid": true|false}}')
        known = {c.id for c in cases if c.transform == transform.name}
        labels[transform.name] = load_labels(labels_file, known, transform.name)
        digests[transform.validity_labels] = file_digest(labels_file)
    vacuous = find_vacuous_checks(config, sources, suite_file)
    for messages in vacuous.values():
        for message in messages:
            warnings.warn(VacuousCheckWarning(message), stacklevel=2)
    target = import_system(root, config.system, suite_file) if import_system_now else None
    validators = load_validators(root, config.validators, suite_file) if import_system_now else {}
    if import_system_now:  # a suite's Python checks: a wrong name fails here, not in the middle of a run
        for i, ev in enumerate(config.evaluators):
            for option, spec in ev.user_code():
                load_check(root, spec, suite_file, f"evaluators[{i}].{option}")
    return Suite(root=root.resolve(), config=config, release=release_cfg, cases=cases, labels=labels,
                 digests=digests, system_target=target, validators=validators, vacuous=vacuous)


def _node_paths(state: Any) -> set[str]:
    """Every path into ``state`` that exists: its leaves and every dict or list on the way to them."""
    out: set[str] = set()
    for leaf in flatten(state):
        keys = parse_path(leaf)
        out.update(format_path(keys[:i]) for i in range(1, len(keys) + 1))
    return out


def nearest_path(path: str, states: list[Any]) -> str | None:
    """The existing path of ``states`` closest to ``path`` (difflib), or None when nothing is close."""
    candidates: set[str] = set()
    for state in states:
        candidates |= _node_paths(state)
    found = difflib.get_close_matches(path, sorted(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def find_vacuous_checks(config: SuiteConfig, cases: list[Case], file: str | Path = SUITE_FILE) -> dict[str, list[str]]:
    """State checks that cannot fail: criterion → one message per path no case's state contains.

    A ``state_unchanged`` path absent from every case's ``initial_state``, or a ``state_matches``
    ``paths:`` entry absent from every case's ``initial_state`` and ``expected.state``, passes for every
    case that leaves it alone (a typo gives a perfect score). ``absent_ok: true`` on the evaluator says
    the path is meant to stay absent. Each message names the evaluator, the path and the nearest
    existing path.
    """
    found: dict[str, list[str]] = {}
    for i, ev in enumerate(config.evaluators):
        paths: list[str] = list(getattr(ev, "paths", []) or [])
        if ev.type not in ("state_unchanged", "state_matches") or not paths or getattr(ev, "absent_ok", False):
            continue
        states: list[Any] = [case.initial_state for case in cases]
        if ev.type == "state_matches":
            states += [case.expected.state for case in cases if case.expected.state is not None]
        for path in paths:
            if any(get_path(state, path) is not ABSENT for state in states):
                continue
            near = nearest_path(path, states)
            hint = f"did you mean {near}?" if near else "no similar path exists"
            where = "initial_state" + (" or expected.state" if ev.type == "state_matches" else "")
            found.setdefault(ev.name, []).append(
                f"{file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): path {path!r} is in no case's {where}, "
                f"so the check cannot fail; {hint} (absent_ok: true if it must stay absent on purpose)")
    return found


def _check_release_criteria(release: ReleaseConfig, config: SuiteConfig, file: Path) -> None:
    known = config.criteria
    for name in release.criteria:
        if name not in known:
            raise ConfigError(file, f"criteria.{name}",
                              f"no such criterion in the suite; its criteria: {', '.join(known) or '(none)'}")


def release_from_manifest(data: dict[str, Any] | None) -> ReleaseConfig | None:
    """The release stored in a run manifest (None when the suite had none)."""
    return None if data is None else parse_release(data, "manifest.json")
