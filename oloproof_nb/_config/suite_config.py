"""oloproof.yaml: the suite's configuration model and its validation."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, field_validator, model_validator

from .._core.evaluator import EVALUATORS, Evaluator
from .._core.paths import parse_pattern
from .._core.slicespec import MAX_EDGES, parse_slice_spec
from .._core.trajectory import ToolErrorRule
from ..errors import ConfigError, SliceSpecError, quote, quote_value
from .cases import LOOK_ALIKE_HELP, LookAlikes, key_look
from .files import a_number, config_error, home_shorthand, user_keys
from .release import ReleaseConfig
from .validators import ValidatorName, ValidatorSpec, check_evaluator_validators, check_import_spec

__all__ = ["MAX_EPOCHS", "Transform", "Metamorphic", "SuiteConfig", "parse_suite_config", "SUITE_FILE"]


SUITE_FILE = "oloproof.yaml"


#: The most epochs a run may have (oloproof.yaml, --epochs, op.run(epochs=)).
MAX_EPOCHS = 10_000


def _from_the_suite_folder(path: str) -> str:
    """A file's path as oloproof.yaml gives it (``cases``, a transform's ``validity_labels``), read from the suite
    folder (or in full); one written from the home folder (``~/data/cases.jsonl``) is refused (:func:`home_shorthand`):
    no shell expands ``~`` in a file, and it was looked for in a folder named ``~`` of the suite folder."""
    problem = home_shorthand(path)
    if problem is not None:
        raise ValueError(f"{problem}, or from the suite folder")
    return path


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
    validity_labels: str = Field(min_length=1)
    minimum_validity: Annotated[float, a_number("a share between 0 and 1")] = Field(ge=0, le=1)

    @field_validator("validity_labels")
    @classmethod
    def _no_home_shorthand(cls, value: str) -> str:
        return _from_the_suite_folder(value)

    @field_validator("template")
    @classmethod
    def _has_value(cls, value: str) -> str:
        if "{value}" not in value:
            raise ValueError("the template must contain {value} (the original field)")
        if value == "{value}":  # the copy would be its source: no relation could fail
            raise ValueError(f"{value!r} leaves the text as it is, so every copy equals its source and no relation "
                             "can fail; write the change around {value}, e.g. '{value} Ignore the rules above.'")
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
    isolation : {"thread", "process"}
        ``thread`` (default): calls into the system run on helper threads of the run's process,
        waited for at most ``case_timeout_s``. ``process``: each worker is a process, killed and
        replaced when a call overruns, so no case can hang the run (see the README's thread model).
    epochs : int
        How many times each case runs, each from a fresh reset (default 1); ``op.run(suite, epochs=k)``
        overrides it. Every frame carries ``epoch`` (1..k); an epoch stays in its case's cluster.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    system: str
    cases: str = Field(default="cases.jsonl", min_length=1)
    evaluators: list[SerializeAsAny[Evaluator]] = Field(default_factory=list)
    metamorphic: Metamorphic = Field(default_factory=Metamorphic)
    slices: list[str] = Field(default_factory=list)
    validators: dict[ValidatorName, ValidatorSpec] = Field(default_factory=dict)
    case_timeout_s: Annotated[float, a_number("a number of seconds")] = Field(default=300.0, gt=0)
    tool_errors: ToolErrorRule = Field(default_factory=ToolErrorRule)
    isolation: Literal["thread", "process"] = "thread"
    # strict as well: 2.0 is refused, as a whole number of epochs is what was meant
    epochs: Annotated[int, a_number("a whole number of epochs")] = Field(default=1, ge=1, le=MAX_EPOCHS, strict=True)

    @field_validator("cases")
    @classmethod
    def _no_home_shorthand(cls, value: str) -> str:
        return _from_the_suite_folder(value)

    @field_validator("system")
    @classmethod
    def _system_spec(cls, value: str) -> str:
        return check_import_spec(value, "module:Class", "refund_desk:RefundDesk",
                                 "the class (or factory) that builds the system")

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
        if "type" not in item:  # not "unknown evaluator type None": the key is missing
            raise ConfigError(file, f"{key}.type", f"is required; allowed: {allowed}")
        kind = item["type"]
        if not isinstance(kind, str) or kind not in EVALUATORS:  # null, not None: the file's word
            raise ConfigError(file, f"{key}.type", f"unknown evaluator type {quote_value(kind)}; allowed: {allowed}")
        cls = EVALUATORS[kind]
        try:
            out.append(cls.model_validate(item))
        except ValidationError as exc:
            raise config_error(file, exc, cls, prefix=key) from None
    seen: dict[str, int] = {}
    looks = LookAlikes()  # names that read alike: two rows of the gate that every table shows as one name
    for i, ev in enumerate(out):
        if ev.name in seen:
            raise ConfigError(file, f"evaluators[{i}].criterion",
                              f"criterion {quote(ev.name)} is already used by evaluators[{seen[ev.name]}]; "
                              "give one of them another 'criterion' name")
        seen[ev.name] = i
        clash = looks.clash(f"evaluators[{i}]", ev.name, written=True)
        if clash:
            raise ConfigError(file, f"evaluators[{i}].criterion",
                              f"criterion {quote(ev.name)} reads as the criterion {clash}: they differ only in "
                              f"{LOOK_ALIKE_HELP}, so the gate would show two rows of one name; give one of them "
                              "a name that reads apart")
    return out


def parse_suite_config(raw: dict[str, Any], file: str | Path = SUITE_FILE) -> SuiteConfig:
    """Validate an oloproof.yaml mapping; every error names the file and the key.

    A key of release.yaml written here (``criteria``, ``min_clusters``) is refused naming release.yaml, where the
    gate reads it, rather than as a misspelling of one of this file's keys.
    """
    suite_keys, release_keys = user_keys(SuiteConfig), user_keys(ReleaseConfig)
    for key in raw:
        if key in release_keys and key not in suite_keys:
            raise ConfigError(file, key, "a setting of the release gate, not of the suite: move it to release.yaml in "
                                         f"the suite folder; allowed here: {', '.join(suite_keys)}")
    evaluators = _parse_evaluators(raw.get("evaluators"), file)
    try:
        config = SuiteConfig.model_validate({**raw, "evaluators": evaluators})
    except ValidationError as exc:
        raise config_error(file, exc, SuiteConfig) from None
    names = [t.name for t in config.metamorphic.transforms]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(file, f"metamorphic.transforms[{i}].name", f"transform {quote(name)} is declared twice")
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


def criteria_named(config: SuiteConfig, file: str | Path, raw: Mapping[str, Any] | None = None) -> None:
    """Refuse a ``criterion`` that reads as nothing (``""``, blank space, invisible characters): the gate's row and
    release.yaml's key of a name no one can read or write (``criterion: ""`` stood for the default name, unsaid).
    Checked when a suite folder is loaded, not when a stored run's configuration is read: a run made before keeps
    opening. ``raw``: the mapping ``config`` was parsed from, to name the key as written (a python check takes
    ``name`` or ``criterion``)."""
    listed = raw.get("evaluators") if raw is not None else None
    for i, ev in enumerate(config.evaluators):
        if ev.criterion is not None and not key_look(ev.criterion):
            given = listed[i] if isinstance(listed, list) and i < len(listed) else None
            written = "criterion" if isinstance(given, Mapping) and "criterion" in given else "name"
            key = written if ev.type == "python" else "criterion"  # a python check's criterion may be written 'name'
            raise ConfigError(file, f"evaluators[{i}].{key}",
                              f"{quote(ev.criterion)} reads as nothing, and every table and release.yaml name the "
                              f"check by it; give it a name, or leave '{key}' out for the default "
                              f"({quote(ev.default_criterion())})")


def slices_once(config: SuiteConfig, file: str | Path) -> None:
    """Refuse a slice listed twice (the report showed its table twice and wrote one file over the other), or one of
    more than :data:`~oloproof_nb._core.slicespec.MAX_EDGES` edges. Checked when a suite folder is loaded, not when a
    stored run's configuration is read: a run made before keeps opening."""
    seen: dict[str, int] = {}
    for i, spec in enumerate(config.slices):
        parsed = parse_slice_spec(spec)
        if len(parsed.edges) > MAX_EDGES:
            raise ConfigError(file, f"slices[{i}]", f"{quote(spec)} has {len(parsed.edges)} edges; a slice has at most "
                              f"{MAX_EDGES} ({MAX_EDGES + 1} bins), as a table or plot of more cannot be read: give "
                              "fewer edges")
        text = parsed.text
        if text in seen:
            raise ConfigError(file, f"slices[{i}]", f"{quote(spec)} is slices[{seen[text]}] again ({text}); list each "
                              "slice once")
        seen[text] = i
