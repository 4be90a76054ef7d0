"""oloproof.yaml: the suite model, its loading, and importing the system under test."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, field_validator, model_validator

from .._core.case import Case, content_digest, derive_case, field_not_text
from .._core.compare import compare_state, ordered_through
from .._core.evaluator import EVALUATORS, Evaluator
from .._core.lists import ORDERED, ListMatch, is_absent_marker
from .._core.paths import (
    flatten,
    format_path,
    get_path,
    leaf_keys,
    parse_path,
    parse_pattern,
    pattern_matches,
)
from .._core.records import RepeatedCases
from .._core.slicespec import MAX_EDGES, parse_slice_spec
from .._core.trajectory import ToolErrorRule
from ..errors import (
    CaseFileError,
    ConfigError,
    DuplicateCaseWarning,
    OloproofError,
    SliceSpecError,
    VacuousCheckWarning,
    format_loc,
    quote,
    terminal_text,
    warn_at_caller,
)
from .cases import (
    LOOK_ALIKE_HELP,
    LookAlikes,
    RepeatScan,
    id_look,
    iter_cases,
    iter_cases_with_copies,
    repeats_warning,
)
from .files import a_number, config_error, folder_problem, read_yaml, yaml_number
from .imports import (
    CODE_KEY,
    defined_elsewhere,
    file_digest,
    function_digest,
    import_system,
    load_check,
    load_validators,
    module_file,
    stale_function,
    stale_import,
)
from .labels import load_labels
from .release import ReleaseConfig, load_release, parse_release
from .removals import RemovalScan
from .validators import (
    ValidatorName,
    ValidatorSpec,
    check_case_validators,
    check_evaluator_validators,
    check_import_spec,
)

__all__ = ["SuiteConfig", "Transform", "Metamorphic", "Suite", "load_suite", "parse_suite_config",
           "release_from_manifest", "find_vacuous_checks", "load_user_code", "UserCode", "changed_digests",
           "SUITE_FILE", "RELEASE_FILE", "MAX_EPOCHS"]

SUITE_FILE = "oloproof.yaml"
RELEASE_FILE = "release.yaml"
#: The most epochs a run may have (oloproof.yaml, --epochs, op.run(epochs=)).
MAX_EPOCHS = 10_000
#: A case file up to this size is parsed once, when the suite is loaded, and its cases kept for the run;
#: a larger one is streamed (read again, one case at a time, by every pass over it).
KEEP_CASES_BYTES = 4 << 20


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
    minimum_validity: Annotated[float, a_number("a share between 0 and 1")] = Field(ge=0, le=1)

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
        kind = item.get("type")
        if not isinstance(kind, str) or kind not in EVALUATORS:
            raise ConfigError(file, f"{key}.type", f"unknown evaluator type {quote(kind)}; allowed: {allowed}")
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
    """Validate an oloproof.yaml mapping; every error names the file and the key."""
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


def _slices_once(config: SuiteConfig, file: str | Path) -> None:
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


@dataclass(frozen=True)
class Suite:
    """A loaded suite: its folder, validated configs, the case file (streamed) and labels.

    A case file of up to :data:`KEEP_CASES_BYTES` is parsed once, when the
    suite is loaded, and its cases kept; a larger one is not held in memory:
    :meth:`iter_cases` reads it one case at a time (each source followed by its
    derived copies), so a run's memory does not grow with the file.
    :attr:`cases` builds the whole list (for notebooks and small suites).
    :func:`load_suite` gives it.

    Attributes
    ----------
    root : Path
        The suite folder.
    config : SuiteConfig
        ``oloproof.yaml``, validated.
    release : ReleaseConfig or None
        ``release.yaml``, validated; ``None`` when the folder has none.
    cases_file : Path
        The case file.
    n_cases : int
        Source and derived cases.
    name : str
        The suite's name (``config.name``).
    criteria : list of str
        The criteria, one per evaluator.
    cases : list of Case
        Every case (sources each followed by their derived copies); :meth:`iter_cases` streams them.
    vacuous : dict of str to list of str
        Checks that cannot fail (``VacuousCheckWarning``): criterion → one message per finding.
    labels : dict of str to list of dict
        Each transform's validity labels, as its label file gives them: transform name → one judgement per
        line (``case_id``, ``valid``, ``labeler``).
    digests : dict of str to str
        SHA-256 of what the suite was loaded from: ``oloproof.yaml``, the case file, ``release.yaml`` and each
        label file by their names in the folder, and each python check's or validator's code under
        ``code:<module:function>`` (a run stores them; ``--resume`` refuses a run whose files changed).
    validators, checks : dict of str to callable
        The registered outcome validators (by name) and the suite's python checks (``module:function``),
        imported with the system; a run calls these, not whatever the files hold by then.
    kept_cases : tuple of Case or None
        The source cases parsed at load; None for a case file too large to keep (streamed).

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from oloproof_nb.examples import init_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> suite = op.load_suite(init_example("false-success", tmp.name + "/suite"))
    >>> suite.name, suite.n_cases, suite.criteria, suite.release is not None
    ('false-success', 6, ['answer_matches', 'outcome_verified'], True)
    >>> sorted(suite.digests), list(suite.validators), suite.labels
    (['cases.jsonl', 'code:checks:report_schema', 'oloproof.yaml', 'release.yaml'], ['report_schema'], {})
    >>> tmp.cleanup()
    """

    root: Path
    config: SuiteConfig
    release: ReleaseConfig | None
    cases_file: Path
    #: Source and derived cases.
    n_cases: int
    labels: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    system_target: Any = None
    #: Registered outcome validators, ``{name: callable}`` (imported with the system).
    validators: dict[str, Any] = field(default_factory=dict)
    #: The suite's python checks, ``{"module:function": callable}`` (imported with the system): a run calls
    #: these, the code whose digest ``digests`` holds, not whatever the file holds by then.
    checks: dict[str, Any] = field(default_factory=dict)
    #: Whether ``validators``, ``checks`` and their ``code:`` digests are loaded (``import_system_now=False``:
    #: not yet; :meth:`with_user_code` loads them).
    code_loaded: bool = False
    #: Checks that cannot fail (``VacuousCheckWarning``): criterion → one message per finding.
    vacuous: dict[str, list[str]] = field(default_factory=dict)
    #: Cases that repeat an earlier case's content under another id (``DuplicateCaseWarning``).
    repeated: RepeatedCases = field(default_factory=RepeatedCases)
    #: ``(size, mtime_ns, inode, device, ctime_ns)`` of the case file when it was validated (:func:`_stat_of`).
    cases_stat: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    #: The source cases, parsed when the suite was loaded (None: a case file too large to keep; streamed).
    kept_cases: tuple[Case, ...] | None = None
    #: Later stats of the case file whose bytes were found to be the loaded ones (only the status change time had
    #: moved: a ``chmod``, a hard link, a backup tool's extended attribute), so each is hashed once.
    _same_bytes: set[tuple[int, int, int, int, int]] = field(default_factory=set, repr=False, compare=False)

    def iter_cases(self) -> Iterator[Case]:
        """Every case, each source followed by its derived copies, streamed from the case file.

        Raises
        ------
        CaseFileError
            When the case file changed since the suite was loaded (load it again). A streamed file is checked
            after each case is read, before it is given out: a case rewritten while the run goes (by the system
            under test, say) is never run (before, only at the start and the end). A file whose status change
            time alone moved (a ``chmod``) is the one loaded when its bytes are, except after cases were read
            from it: a write undone meanwhile would look the same.
        """
        self._check_unchanged()
        transforms = self.config.metamorphic.transforms
        streamed = self.kept_cases is None
        sources = self.kept_cases if self.kept_cases is not None else (c for _, c in iter_cases(self.cases_file))
        for case in sources:
            if streamed:  # read since the last check: the same file as loaded, or the case is not given out
                self._check_unchanged(read=True)
            yield case
            for transform in transforms:
                yield derive_case(case, transform.name, transform.field, transform.template,
                                  state_path=transform.state_path)
        self._check_unchanged(read=streamed)

    def _check_unchanged(self, read: bool = False) -> None:
        """Refuse a case file that is not the one loaded (its stat, :func:`_stat_of`; when only its status change
        time moved, its bytes). ``read``: cases were read from it since the last check, so a status change time
        that moved is refused whatever the bytes are now (a write undone meanwhile looks the same)."""
        try:
            now = _stat_of(self.cases_file)
        except OSError as exc:
            raise CaseFileError(self.cases_file, None, f"cannot read the case file: {exc.strerror}") from None
        if now == self.cases_stat or now in self._same_bytes:
            return
        if now[:4] == self.cases_stat[:4] and self._bytes_as_loaded():  # only the status change time moved
            if not read:
                self._same_bytes.add(now)
                return
            raise CaseFileError(self.cases_file, None, "its status change time moved while cases were read from it "
                                "(a chmod, a hard link or a backup tool's attribute; or a write undone since, which "
                                "its bytes, as loaded now, cannot tell); load the suite again")
        raise CaseFileError(self.cases_file, None, "changed since the suite was loaded; load the suite again")

    def _bytes_as_loaded(self) -> bool:
        """Whether the case file's bytes have the digest they had when the suite was loaded.

        The status change time moves on a write that puts the modification time back (review R49), but also on a
        ``chmod``, a hard link or an extended attribute a backup or sync tool adds: a file whose size, modification
        time, inode and device are the loaded ones and whose bytes are too is the file loaded.
        """
        try:
            return file_digest(self.cases_file) == self.digests.get(self.config.cases)
        except OSError:
            return False

    @property
    def cases(self) -> list[Case]:
        """Every case as a list (sources each followed by their derived copies); :meth:`iter_cases` streams them."""
        return list(self.iter_cases())

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def criteria(self) -> list[str]:
        return self.config.criteria

    def __repr__(self) -> str:
        """One line: the name, the cases, the system, the criteria and the folder (never the cases themselves)."""
        derived = len(self.config.metamorphic.transforms)
        sources = self.n_cases // (1 + derived)
        cases = f"{self.n_cases} cases"
        if derived:
            cases += f" ({sources} sources + {self.n_cases - sources} derived)"
        criteria = ", ".join(self.criteria) or "none"
        return terminal_text(f"Suite({self.name!r}, {cases}, system={self.config.system!r}, criteria=[{criteria}], "
                             f"root='{self.root}')")

    def resolve_system(self) -> Any:
        """What ``system: module:attr`` names (imported from the suite folder on first use).

        Raises
        ------
        ConfigError
            When the file that defines the system imported at ``load_suite`` changed since: Python would run
            the old code under the new file's fingerprint (its replays cached for the new code).
        """
        if self.system_target is not None:
            stale = stale_function(self.system_target)
            if stale is not None:
                raise ConfigError(self.root / SUITE_FILE, "system", _old_system(stale, restart=False))
            kept = stale_import(self.root, self.system_target)  # a module it imports: only a restart reloads it
            if kept is not None:
                raise ConfigError(self.root / SUITE_FILE, "system", _old_system(kept, restart=True))
            return self.system_target
        return import_system(self.root, self.config.system, self.root / SUITE_FILE)

    def with_user_code(self) -> Suite:
        """This suite with its validators and python checks imported and their code digested: itself when
        ``load_suite`` imported them, else a copy that has them (a run records the digests of the code it
        calls, whichever way its suite was loaded)."""
        needed = {spec for ev in self.config.evaluators for _, spec in ev.user_code()}
        if self.code_loaded and needed <= set(self.checks) and set(self.validators) == set(self.config.validators):
            self._refuse_edited_code()
            return self
        code = load_user_code(self.root, self.config, self.root / SUITE_FILE)
        return replace(self, validators=code.validators, checks=code.checks,
                       digests={**self.digests, **code.digests}, code_loaded=True)

    def _refuse_edited_code(self) -> None:
        """Raise :class:`ConfigError` when a file of a check's or a validator's code (its own, or a module of the
        suite folder it imports) changed since this suite loaded it: a run would judge with the code imported then,
        under digests that name it, while the folder holds other code (as :meth:`resolve_system` refuses the
        system's). Loading the suite again takes the new code when the edited file is the top-level module of the
        suite folder that ``spec`` names (imported again when it changes); any other file (a helper it imports, a
        package's module) Python keeps imported, and the message says to restart the process first, as a new load
        would (:func:`load_user_code`)."""
        keys = _code_keys(self.config)
        named = {self.config.validators[name]: fn for name, fn in self.validators.items()}
        for spec, fn in [*named.items(), *self.checks.items()]:
            changed = stale_function(fn) or stale_import(self.root, fn)
            if changed is None:
                continue
            own = module_file(self.root, spec.split(":", 1)[0])
            reloads = own is not None and os.path.realpath(own) == os.path.realpath(changed)
            todo = ("load the suite again (op.load_suite) and run that one" if reloads else
                    "restart the process (in a notebook: the kernel), load the suite again and run that one (Python "
                    "keeps that import: a new load in this process would still hold the old code)")
            raise ConfigError(self.root / SUITE_FILE, keys.get(spec, spec),
                              f"{changed} changed since this suite was loaded, and the suite holds {spec} as it was "
                              f"imported then: a run would judge with the old code; {todo}")

    def manifest_config(self) -> dict[str, Any]:
        """What a run directory keeps of the suite, so frames and the gate rebuild without it."""
        return {
            "root": str(self.root),
            "config": self.config.model_dump(mode="json", exclude_none=True),
            "release": None if self.release is None else self.release.model_dump(mode="json"),
            "labels": self.labels,
            "vacuous": self.vacuous,
            "repeated": self.repeated.model_dump(),
        }


@dataclass(frozen=True)
class UserCode:
    """A suite's own functions besides its system, imported from its folder, and the digests of their code."""

    #: Registered outcome validators, ``{name: callable}``.
    validators: dict[str, Callable[..., Any]] = field(default_factory=dict)
    #: Python checks, ``{"module:function": callable}``.
    checks: dict[str, Callable[..., Any]] = field(default_factory=dict)
    #: ``{"code:<module:function>": digest}`` of each (see :func:`~oloproof_nb._config.imports.function_digest`;
    #: a function no file defines has none).
    digests: dict[str, str] = field(default_factory=dict)


def changed_digests(expected: Mapping[str, str], found: Mapping[str, str]) -> list[str]:
    """What differs between two sets of suite digests (``Suite.digests``, ``Manifest.digests``), named for a
    message, sorted: a file's name (``cases.jsonl``), or ``the code of module:function`` for a check's or a
    validator's code.

    Examples
    --------
    >>> changed_digests({"cases.jsonl": "a", "code:checks:done": "b"}, {"cases.jsonl": "a", "code:checks:done": "c"})
    ['the code of checks:done']
    """
    names = sorted(k for k in set(expected) | set(found) if expected.get(k) != found.get(k))
    return [f"the code of {n.removeprefix(CODE_KEY)}" if n.startswith(CODE_KEY) else n for n in names]


def _code_keys(config: SuiteConfig) -> dict[str, str]:
    """The key of oloproof.yaml that names each ``module:function`` of the suite's own code: ``validators.<name>``
    or ``evaluators[i].<option>`` (the last that names it)."""
    keys = {spec: f"validators.{name}" for name, spec in config.validators.items()}
    for i, ev in enumerate(config.evaluators):
        for option, spec in ev.user_code():
            keys[spec] = f"evaluators[{i}].{option}"
    return keys


def load_user_code(root: Path, config: SuiteConfig, suite_file: Path) -> UserCode:
    """Import a suite's registered validators and python checks (a wrong name fails here, not in the middle
    of a run) and digest their code, which a run records with the suite's other digests: ``--resume`` refuses
    a run whose checks' code changed, and ``op.compare`` reports ``check_changed``.

    Raises
    ------
    ConfigError
        Naming ``suite_file`` and ``validators.<name>`` or ``evaluators[i].<option>``.
    """
    validators = load_validators(root, config.validators, suite_file)
    keys = _code_keys(config)
    checks = {spec: load_check(root, spec, suite_file, keys[spec])
              for ev in config.evaluators for _, spec in ev.user_code()}
    digests = {}
    for spec, fn in [*((config.validators[name], fn) for name, fn in validators.items()), *checks.items()]:
        elsewhere = defined_elsewhere(root, fn)
        if elsewhere is not None:
            raise ConfigError(suite_file, keys[spec], elsewhere)
        stale = stale_function(fn)
        if stale is not None:  # its file changed, the function object did not: Python runs the old code
            raise ConfigError(suite_file, keys[spec],
                              f"{stale} changed since this process imported {spec} from it, and Python keeps that "
                              "import (a package, a dotted module, or a file the suite's module imports the "
                              "function from): a run would judge with the old code; restart the process (in a "
                              "notebook: the kernel) and load the suite again")
        kept = stale_import(root, fn)
        if kept is not None:  # a module of the suite folder its code imports: only a restart reloads it (review R52)
            raise ConfigError(suite_file, keys[spec],
                              f"{kept} changed since this process imported it, and Python keeps that import (a "
                              f"module of the suite folder that {spec}'s code imports, a value or a function it "
                              "takes from there): a run would judge with the old code; restart the process (in a "
                              "notebook: the kernel) and load the suite again")
        found = function_digest(root, spec, fn)
        if found is not None:
            digests[CODE_KEY + spec] = found
    return UserCode(validators, checks, digests)


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

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from oloproof_nb.examples import init_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> suite = op.load_suite(init_example("false-success", tmp.name + "/suite"))
    >>> [case.id for case in suite.cases][:3]
    ['fs-01', 'fs-02', 'fs-03']
    >>> suite.cases[0].input["request"]
    'Write the June 2026 revenue report.'
    >>> tmp.cleanup()
    """
    root = Path(folder)
    problem = folder_problem(root)
    if problem is not None:
        raise ConfigError(root, None, f"{problem}; give a suite folder you can read")
    if not root.is_dir():
        if root.exists():
            raise ConfigError(root, None, f"is a file, not a suite folder; give the folder holding oloproof.yaml "
                                          f"(e.g. {str(root.parent)!r})")
        raise ConfigError(root, None, "is not a suite folder (no such directory)")
    suite_file = root / SUITE_FILE
    if not suite_file.exists():  # a directory, FIFO or device: read_yaml refuses it by name
        _refuse_a_broken_link(suite_file)
        raise ConfigError(suite_file, None, "file not found; a suite folder holds oloproof.yaml")
    config = parse_suite_config(read_yaml(suite_file), suite_file)
    _slices_once(config, suite_file)
    release_file = Path(release) if release is not None else root / RELEASE_FILE
    _refuse_a_broken_link(release_file)  # it was read as no release.yaml: a run gated nothing, exit 1
    release_cfg = load_release(release_file) if (release is not None or release_file.exists()) else None
    cases_file = root / config.cases
    if not os.path.lexists(cases_file) and "\0" not in str(cases_file):  # a typo in cases: names the key
        raise ConfigError(suite_file, "cases", f"file {cases_file} not found (the case file: one JSON case a line)")
    stat_before = _stat_case_file(cases_file)
    scan, repeats = _VacuityScan(config, suite_file), RepeatScan()
    removals = RemovalScan(config.evaluators, cases_file)
    source_ids, n_sources, kept = _validate_cases(cases_file, config, suite_file, scan, repeats, removals,
                                                  keep=stat_before[0] <= KEEP_CASES_BYTES)
    scan.refuse_globs()
    derived_ids = {t.name: _DerivedIds(source_ids, t.name) for t in config.metamorphic.transforms}
    looks = {look: sid for sid in source_ids if (look := id_look(sid)) != sid} if derived_ids else {}
    for i, transform in enumerate(config.metamorphic.transforms):
        clash = sorted(did for did in derived_ids[transform.name] if did in source_ids or did in looks)
        if clash:
            shown = quote(clash[0]) if clash[0] in source_ids else f"{quote(clash[0])} (as {quote(looks[clash[0]])})"
            raise ConfigError(suite_file, f"metamorphic.transforms[{i}].name",
                              f"the derived case id {shown} is already a case id in {config.cases}")
    digests = {SUITE_FILE: file_digest(suite_file), config.cases: file_digest(cases_file)}
    if release_cfg is not None:
        digests[RELEASE_FILE] = file_digest(release_file)
        _check_release_criteria(release_cfg, config, release_file)
    labels: dict[str, list[dict[str, Any]]] = {}
    for i, transform in enumerate(config.metamorphic.transforms):
        labels_file = root / transform.validity_labels
        _refuse_a_broken_link(labels_file)
        if not labels_file.exists():
            raise ConfigError(suite_file, f"metamorphic.transforms[{i}].validity_labels",
                              f"label file {labels_file} not found; write one judgement "
                              f'per line: {{"case_id": "<source id>~{transform.name}", "valid": true|false}}')
        labels[transform.name] = load_labels(labels_file, derived_ids[transform.name], transform.name,
                                             _CopyDigests(transform, cases_file, kept))
        digests[transform.validity_labels] = file_digest(labels_file)
    vacuous = scan.findings()
    for criterion, message in [*_thin_validity(config, n_sources, suite_file).items(),
                               *_blank_rewrites(config, suite_file).items()]:
        vacuous.setdefault(criterion, []).append(message)
    for messages in vacuous.values():
        for message in messages:
            warn_at_caller(VacuousCheckWarning(message))
    unheld = removals.warning()  # a case's own finding, not its check's: not kept as one that cannot fail
    if unheld is not None:
        warn_at_caller(VacuousCheckWarning(unheld))
    repeated = repeats.found()
    if repeated.count:
        warn_at_caller(DuplicateCaseWarning(repeats_warning(cases_file, repeated)))
    target = import_system(root, config.system, suite_file) if import_system_now else None
    if target is not None:  # notes the files its code came from (a run refuses it once they change)
        stale = stale_function(target) or stale_import(root, target)
        if stale is not None:  # imported again, Python still gave the old object (a package, another file)
            raise ConfigError(suite_file, "system", _old_system(stale, restart=True))
        elsewhere = defined_elsewhere(root, target)
        if elsewhere is not None:  # a package of the suite's, imported from another suite's folder first
            raise ConfigError(suite_file, "system", elsewhere)
    code = load_user_code(root, config, suite_file) if import_system_now else UserCode()
    digests.update(code.digests)
    if _stat_case_file(cases_file) != stat_before:
        raise CaseFileError(cases_file, None, "changed while it was being read; load the suite again")
    return Suite(root=root.resolve(), config=config, release=release_cfg, cases_file=cases_file.resolve(),
                 n_cases=n_sources * (1 + len(config.metamorphic.transforms)), labels=labels, digests=digests,
                 system_target=target, validators=code.validators, checks=code.checks,
                 code_loaded=import_system_now, cases_stat=stat_before,
                 vacuous=vacuous, repeated=repeated, kept_cases=kept)


def _node_paths(state: Any) -> set[str]:
    """Every path into ``state`` that exists: its leaves and every dict or list on the way to them."""
    out: set[str] = set()
    for leaf in flatten(state):
        keys = parse_path(leaf)
        out.update(format_path(keys[:i]) for i in range(1, len(keys) + 1))
    return out


#: Distinct existing paths kept as "did you mean" candidates while the case file streams by.
_MAX_CANDIDATES = 100_000


def _hidden_below(keys: tuple[str, ...], patterns: list[tuple[str, ...]]) -> bool:
    """Whether ``patterns`` (``ignore``) hide every change a state could show below the top-level key of the
    leaf path ``keys``: the leaf, each dict or list on the way below the top level, and a key that is not
    there yet in each of them (a top-level value replaced whole, or a new top-level key, would still show)."""
    probes = [keys, *(keys[:n] for n in range(2, len(keys)))] + [(*keys[:n], _ANY_KEY) for n in range(1, len(keys) + 1)]
    return all(any(pattern_matches(p, probe, within=True) for p in patterns) for probe in probes)


#: A top-level key no state holds: an ``ignore`` pattern that matches it matches every path.
_ANY_KEY = "\x00oloproof: any key"


def _old_system(stale: Path, restart: bool) -> str:
    """Why a system whose file changed since it was imported is refused, and what to do."""
    why = (f"{stale} changed since the system was imported from it, and Python keeps that import (a package, a "
           "dotted module, or a file the system's module imports it from): a run would run the old code and cache "
           "its replays as the new code's; restart the process (in a notebook: the kernel) and load the suite again")
    if restart:
        return why
    return (f"{stale} changed since this suite was loaded, and the suite holds the system it imported then: a run "
            "would run the old code and cache its replays as the new code's; load the suite again (op.load_suite; "
            "if its system: is in a package or imports the class from another file, restart the process first)")


def _refuse_a_broken_link(path: Path) -> None:
    """A symbolic link at ``path`` that leads to nothing (a dangling link or a loop) is an error naming it: the
    file is there, and reading it as absent would change what the suite decides."""
    if os.path.lexists(path) and not path.exists():
        try:
            path.stat()
            why = "cannot be followed"
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
        raise ConfigError(path, None, f"is a symbolic link that leads to no file ({why}); point it at the file, "
                                      "or remove it")


def _glob_hint(path: str) -> str:
    """What to give instead of a ``paths`` entry with a ``*`` in a key ('' for one without): such an entry names
    a key called '*' or 'ord-*' (these paths are exact, unlike ``ignore`` and ``lists``, where ``*`` in a key
    matches any characters), so no case holds it; the subtree above the first such key covers every path under it.
    """
    keys = parse_path(path)
    star = next((i for i, key in enumerate(keys) if "*" in key), None)
    if star is None:
        return ""
    instead = (f"give {format_path(keys[:star])} to cover every path under it, or list each path" if star
               else "list each path, or judge the whole state with state_matches mode: changes")
    return f"paths are exact paths, not patterns ({quote(keys[star])} is read as a key of that name); {instead}"


def ignored_paths(evaluators: Sequence[Evaluator]) -> tuple[str, ...]:
    """The ``ignore:`` patterns every ``state_matches`` check in ``changes`` or ``whole`` mode (the modes that judge
    paths ``expected.state`` does not list) gives, in the first one's order: where a control replay's state
    (``fault_recovery``) and a ``same_state`` pair may differ too — outside the paths another check judges
    (``evaluators.state.pinned_paths``), which are compared under these patterns as everywhere else. Read by type
    and attribute, so this layer, which finds the checks that cannot fail at load, does not import the evaluators.

    A pattern only some of those checks give is compared (a path one check ignores and another judges must
    reproduce), and the patterns are matched as written, not as the paths they cover: ``refunds.*.at`` in one
    check and ``**.at`` in another leave nothing out. Wrong either way, that is stricter, never looser.

    Examples
    --------
    >>> from types import SimpleNamespace as Check
    >>> stamp = Check(type="state_matches", mode="changes", ignore=["refunds.*.at", "log"])
    >>> ignored_paths([stamp, Check(type="state_matches", mode="subset", ignore=[])])
    ('refunds.*.at', 'log')
    >>> ignored_paths([stamp, Check(type="state_matches", mode="whole", ignore=["log"])])
    ('log',)
    """
    lists = [list(getattr(ev, "ignore", None) or []) for ev in evaluators
             if ev.type == "state_matches" and getattr(ev, "mode", "") in ("changes", "whole")]
    if not lists:
        return ()
    common = set(lists[0]).intersection(*lists[1:])
    return tuple(p for p in dict.fromkeys(lists[0]) if p in common)


def shared_list_rules(evaluators: Sequence[Evaluator]) -> dict[str, ListMatch]:
    """The ``lists:`` rules every ``state_matches`` check gives: how a control replay's state (``fault_recovery``)
    and a ``same_state`` pair are aligned (:func:`~oloproof_nb._core.compare.list_diff`), so a list whose order
    no check judges (``unordered``, ``by_key``) may come back in another order. Read by type and attribute, as
    :func:`ignored_paths` is.

    A rule is shared when every check gives the pattern, as written, the same rule, and gives before it only
    patterns that are shared too (first match wins: a pattern one check gives first may decide what a later one
    matches); the ``ordered`` ones are kept, for what they shadow. A pattern that may meet a ``state_unchanged``
    path (a list it matches at, inside or above the path) is made ``ordered``: that check compares its value
    exactly; so is one that may match a list a ``paths``-mode path reaches into (``tags.0``: that check reads the
    element at that position, whatever the rule). Empty when no rule but ``ordered`` is shared, or no
    ``state_matches`` check is given: every list is then compared position by position. Wrong either way, that is
    stricter, never looser.

    Examples
    --------
    >>> from types import SimpleNamespace as Check
    >>> def check(**lists): return Check(type="state_matches", list_rules=lambda: lists)
    >>> shared_list_rules([check(tags=ListMatch("unordered")), check(tags=ListMatch("unordered"), log=ORDERED)])
    {'tags': ListMatch(how='unordered', key=None)}
    >>> shared_list_rules([check(tags=ListMatch("unordered")), check(tags=ListMatch("by_key", "id"))])
    {}
    >>> shared_list_rules([check(tags=ListMatch("unordered")), Check(type="state_unchanged", paths=["tags"])])
    {}
    >>> first = check(tags=ListMatch("unordered"))
    >>> first.mode, first.paths = "paths", ["tags.0"]
    >>> shared_list_rules([check(tags=ListMatch("unordered")), first])
    {}
    """
    checks: list[Any] = [ev for ev in evaluators if ev.type == "state_matches"]
    rules = [dict(ev.list_rules()) for ev in checks]
    shared: dict[str, ListMatch] = {}
    for pattern, rule in (rules[0] if rules else {}).items():
        if not all(other.get(pattern) == rule and all(p in shared for p in list(other)[:list(other).index(pattern)])
                   for other in rules):
            break  # a later pattern of this check is preceded by this one, which is not shared
        shared[pattern] = rule
    exact = [parse_path(path) for ev in evaluators if ev.type == "state_unchanged" for path in getattr(ev, "paths", ())]
    shared = {p: ORDERED if any(_may_meet(parse_pattern(p), keys) for keys in exact) else r for p, r in shared.items()}
    # a paths-mode path is compared by its check's rules (shared here), but one that reaches into a list reads the
    # element at a position: a list it passes through is judged in order
    shared = ordered_through(shared, [path for ev in checks if getattr(ev, "mode", None) == "paths"
                                      for path in getattr(ev, "paths", None) or ()])
    return shared if any(rule != ORDERED for rule in shared.values()) else {}


def _may_meet(pattern: tuple[str, ...], keys: tuple[str, ...]) -> bool:
    """Whether a list ``pattern`` matches may lie at, inside or above the exact path ``keys`` (a ``**`` in the
    pattern: it may)."""
    if "**" in pattern:
        return True
    if any(pattern_matches(pattern, keys[:i]) for i in range(1, len(keys) + 1)):
        return True
    return len(pattern) > len(keys) and pattern_matches(pattern[:len(keys)], keys)


def _pair_ignores(evaluators: Sequence[Evaluator]) -> tuple[str, ...]:
    """The ignore patterns a ``same_state`` pair is compared outside (:func:`ignored_paths`), or none when a
    ``state_unchanged`` or ``paths``-mode check names a path (``evaluators.state.pinned_paths``: compared whatever
    the patterns say, so the pair can still differ there)."""
    if any(ev.type == "state_unchanged" or (ev.type == "state_matches" and getattr(ev, "mode", "") == "paths"
                                             and getattr(ev, "paths", None)) for ev in evaluators):
        return ()
    return ignored_paths(evaluators)


def _idle_passes(ev: Any, initial: dict[str, Any], expected: dict[str, Any], tolerance: float | None,
                 ignore: list[str] | None) -> bool:
    """Whether state_matches ``ev``, given ``tolerance`` and ``ignore`` patterns, passes an agent that leaves the
    case's ``initial`` state as it was against its ``expected`` state."""
    return all(ok for *_, ok in compare_state(expected, initial, ev.mode, ev.paths, tolerance, lists=ev.list_rules(),
                                              ignore=ignore, initial=initial))


class _VacuityScan:
    """State checks that cannot fail, found in one streamed pass over the cases.

    A ``state_unchanged`` path absent from every case's ``initial_state``, or a ``state_matches``
    ``paths:`` entry absent from every case's ``initial_state`` and ``expected.state``, passes for every
    case that leaves it alone (a typo gives a perfect score). ``absent_ok: true`` on the evaluator says
    the path is meant to stay absent. Each finding names the evaluator, the path and the nearest
    existing path (difflib over at most :data:`_MAX_CANDIDATES` existing paths). A ``state_matches`` of
    ``mode: subset`` whose every case gives ``expected.state: {}`` compares nothing (``changes`` and ``whole``
    read ``{}`` as "nothing changed" and "an empty state", and are not named).
    """

    def __init__(self, config: SuiteConfig, file: str | Path = SUITE_FILE) -> None:
        self.file = file
        self.checks: list[tuple[int, Evaluator, str]] = []
        #: paths with a ``*`` in a key on a check with ``absent_ok: true``: refused unless a case holds one (M45)
        self.globs: list[tuple[int, Evaluator, str]] = []
        for i, ev in enumerate(config.evaluators):
            paths: list[str] = list(getattr(ev, "paths", []) or [])
            if ev.type in ("state_unchanged", "state_matches") and not getattr(ev, "absent_ok", False):
                self.checks += [(i, ev, path) for path in paths]
            elif ev.type in ("state_unchanged", "state_matches"):
                self.globs += [(i, ev, path) for path in paths if _glob_hint(path)]
        self.seen: set[tuple[int, str]] = set()
        self.candidates: dict[str, set[str]] = {"state_unchanged": set(), "state_matches": set()}
        self.ignore_all: list[tuple[int, Evaluator, str]] = []  # an ignore pattern that matches every path
        self.evaluators = config.evaluators
        #: state_matches evaluators whose ignore patterns may cover every path the cases' states hold, with the
        #: patterns; an index is dropped once a case holds a path none of them covers.
        self.ignoring: dict[int, tuple[Evaluator, list[tuple[str, ...]]]] = {}
        for i, ev in enumerate(config.evaluators):
            patterns = list(getattr(ev, "ignore", None) or []) if ev.type == "state_matches" else []
            every = [p for p in patterns if pattern_matches(parse_pattern(p), (_ANY_KEY,), within=True)]
            if every:
                self.ignore_all.append((i, ev, every[0]))
            elif patterns:
                self.ignoring[i] = (ev, [parse_pattern(p) for p in patterns])
        self.any_leaf = False  # some case's initial_state holds a path (else there is nothing to cover)
        #: state_matches evaluators of ``mode: whole`` or ``changes`` with ignore patterns (both leave out an ignored
        #: leaf that expected.state names), or of any mode with a tolerance, while every case whose
        #: expected.state asks for a change is passed by an agent that changes nothing: index → how many such cases
        self.idle_passes: dict[int, int] = {
            i: 0 for i, ev in enumerate(config.evaluators)
            if (i in self.ignoring and getattr(ev, "mode", "") in ("whole", "changes"))
            or (ev.type == "state_matches" and getattr(ev, "tolerance", None))}
        #: of those, the ones whose tolerance alone lets the agent that changes nothing pass a case that expects
        #: a change (the finding names the tolerance, not the ignore patterns)
        self.tolerance_hides: set[int] = set()
        #: state_matches evaluators of ``mode: subset`` while every case that gives an expected.state gives ``{}``
        #: (subset compares only the leaves it names: none): index → how many such cases
        self.blank_subsets: dict[int, int] = {i: 0 for i, ev in enumerate(config.evaluators)
                                              if ev.type == "state_matches" and getattr(ev, "mode", "") == "subset"}
        #: ``same_state`` relations, and the ignore patterns they compare a pair outside (:func:`_pair_ignores`):
        #: the first that matches every path, else the patterns, kept while they hide every change a case shows
        self.same_state = [(i, ev) for i, ev in enumerate(config.evaluators)
                           if ev.type == "metamorphic_relation" and getattr(ev, "relation", "") == "same_state"]
        self.pair_patterns = _pair_ignores(config.evaluators) if self.same_state else ()
        self.pair_every = next((p for p in self.pair_patterns
                                if pattern_matches(parse_pattern(p), (_ANY_KEY,), within=True)), None)
        self.pair_hiding: list[tuple[str, ...]] | None = (
            [parse_pattern(p) for p in self.pair_patterns] if self.pair_patterns and self.pair_every is None else None)

    def observe(self, case: Case) -> None:
        if self.blank_subsets and case.expected.state is not None:
            for i in list(self.blank_subsets):
                if case.expected.state:
                    del self.blank_subsets[i]  # a leaf to compare (even {"orders": {}} compares orders whole)
                else:
                    self.blank_subsets[i] += 1
        if self.idle_passes and case.expected.state is not None:
            self._observe_idle(case.initial_state, case.expected.state)
        states = [case.initial_state, case.expected.state or {}]
        for i, (_, patterns) in list(self.ignoring.items()):
            for keys in (k for state in states for k in leaf_keys(state)):
                self.any_leaf = True
                if not _hidden_below(keys, patterns):
                    del self.ignoring[i]  # a change at or beside a path of this case would be seen
                    break
        if self.pair_hiding is not None:
            for keys in (k for state in states for k in leaf_keys(state)):
                self.any_leaf = True
                if not _hidden_below(keys, self.pair_hiding):
                    self.pair_hiding = None  # a pair may differ at or beside a path of this case
                    break
        if not self.checks and not self.globs:
            return
        for i, ev, path in [*self.checks, *self.globs]:
            if (i, path) in self.seen:
                continue
            states = [case.initial_state]
            if ev.type == "state_matches" and case.expected.state is not None:
                states.append(case.expected.state)
            if any(not is_absent_marker(get_path(state, path)) for state in states):  # {"$absent": true}
                self.seen.add((i, path))  # in expected.state says the path is absent, as it is already
        for kind, pool in self.candidates.items():
            if len(pool) < _MAX_CANDIDATES:
                pool |= _node_paths(case.initial_state)
                if kind == "state_matches" and case.expected.state is not None:
                    pool |= _node_paths(case.expected.state)

    def refuse_globs(self) -> None:
        """Refuse, once every case is seen, a path with a ``*`` in a key that no case holds on a check with
        ``absent_ok: true``.

        These paths are exact, so ``contacts.*.phone`` names a key called '*'; without ``absent_ok`` that is a
        :meth:`findings` warning, but ``absent_ok: true`` says "absent on purpose" and silenced it, so the check
        passed every case, an agent that rewrote each phone among them (mutation round M45).

        Raises
        ------
        ConfigError
            Naming the evaluator's ``paths``, the check and what to give instead.
        """
        for i, ev, path in self.globs:
            if (i, path) not in self.seen:
                where = "initial_state" + (" or expected.state" if ev.type == "state_matches" else "")
                raise ConfigError(self.file, f"evaluators[{i}].paths",
                                  f"({ev.type}, criterion {ev.name}) path {quote(path)} is in no case's {where}, and "
                                  "absent_ok: true passes every case where it stays absent, so the check cannot "
                                  f"fail; {_glob_hint(path)}")

    def _observe_idle(self, initial: dict[str, Any], expected: dict[str, Any]) -> None:
        """Drop the evaluators for which this case's expected change is one an idle agent fails (a change within
        the tolerance, or in ``whole`` and ``changes`` mode under an ignore pattern, is one it passes)."""
        for i in list(self.idle_passes):
            ev: Any = self.evaluators[i]
            ignore = ev.ignore if ev.mode in ("whole", "changes") else None
            if _idle_passes(ev, initial, expected, None, None):
                continue  # the case expects no change: an idle agent may rightly pass it
            if ignore and _idle_passes(ev, initial, expected, None, ignore):
                self.idle_passes[i] += 1  # every change it expects lies under an ignore pattern
            elif ev.tolerance and _idle_passes(ev, initial, expected, ev.tolerance, ignore):
                # every change it expects is within the tolerance (1e300 hides any), the rest under an ignore
                # pattern (a whole-mode expected.state that leaves out an ignored timestamp, its refund within the
                # tolerance, was blamed on the ignore patterns alone)
                self.idle_passes[i] += 1
                self.tolerance_hides.add(i)
            else:
                del self.idle_passes[i]

    def findings(self) -> dict[str, list[str]]:
        """Criterion → one message per path no case's state contains, and per ``ignore`` that leaves nothing."""
        found: dict[str, list[str]] = {}
        for i, blank in self.blank_subsets.items():
            if not blank:  # no case gives an expected.state: the evaluator judges none
                continue
            name = self.evaluators[i].name
            found.setdefault(name, []).append(
                f"{self.file}: evaluators[{i}] (state_matches, criterion {name}): expected.state is {{}} in each of "
                f"the {blank} case(s) that give one, and mode: subset compares only the leaves expected.state names, "
                "so nothing is compared and the check cannot fail; to check that nothing changed, use mode: changes "
                "(an empty expected.state there passes only a state left as initial_state had it)")
        for i, hidden in self.idle_passes.items():
            if not hidden or (i in self.ignoring and i not in self.tolerance_hides):
                continue  # no case expects a change; or the finding below says more
            ev: Any = self.evaluators[i]
            if i in self.tolerance_hides:
                covers = f"its tolerance {ev.tolerance:g}" + (" (with its ignore patterns)" if ev.ignore else "")
                found.setdefault(ev.name, []).append(
                    f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): {covers} covers every change "
                    f"expected.state asks for in each of the {hidden} case(s) that expect a change, so an agent that "
                    "changes nothing passes them all; give a tolerance smaller than the changes the cases expect")
                continue
            found.setdefault(ev.name, []).append(
                f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): its ignore patterns "
                f"{', '.join(repr(p) for p in getattr(ev, 'ignore', []))} cover every leaf where expected.state "
                f"differs from initial_state in each of the {hidden} case(s) that expect a change, so an agent that "
                "changes nothing passes them all (mode: whole and mode: changes compare no ignored leaf, named in "
                "expected.state or not)")
        for i, ev, pattern in self.ignore_all:
            what = "nothing is compared, not even the leaves expected.state names, and the check cannot fail"
            found.setdefault(ev.name, []).append(
                f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): ignore pattern {quote(pattern)} "
                f"matches every path of the state, so {what}")
        for i, (ev, _) in self.ignoring.items() if self.any_leaf else ():
            found.setdefault(ev.name, []).append(
                f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): its ignore patterns "
                f"{', '.join(repr(p) for p in getattr(ev, 'ignore', []))} hide every change below the top-level "
                "keys of every case's state, new keys included (only a top-level value replaced whole, or a new "
                "top-level key, would be seen)")
        if self.pair_every is not None or (self.pair_hiding is not None and self.any_leaf):
            shown = ", ".join(repr(p) for p in self.pair_patterns)
            what = ("match every path of the state" if self.pair_every is not None else
                    "hide every change below the top-level keys of every case's state, new keys included")
            for i, ev in self.same_state:
                found.setdefault(ev.name, []).append(
                    f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): same_state compares each pair "
                    f"outside the ignore patterns {shown} that every changes or whole state_matches check gives, "
                    f"and they {what}, so the relation holds for any pair; judge the pairs with same_actions or "
                    "same_output, or give the check narrower patterns (refunds.*.at, not refunds)")
        for i, ev, path in self.checks:
            if (i, path) in self.seen:
                continue
            hint = _glob_hint(path)
            if not hint:
                # not the path itself: a case's {"$absent": true} at it makes it a node of expected.state
                near = difflib.get_close_matches(path, sorted(self.candidates[ev.type] - {path}), n=1, cutoff=0.6)
                hint = f"did you mean {near[0]}?" if near else "no similar path exists"
            where = "initial_state" + (" or expected.state" if ev.type == "state_matches" else "")
            found.setdefault(ev.name, []).append(
                f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): path {quote(path)} is in no case's "
                f"{where}, so the check cannot fail; {hint} (absent_ok: true if it must stay absent on purpose)")
        return found


def _thin_validity(config: SuiteConfig, pairs: int, file: str | Path = SUITE_FILE) -> dict[str, str]:
    """Relations whose transform's ``minimum_validity`` is met once one of its ``pairs`` is labeled valid: criterion
    → finding.

    The minimum is what bounds the copies labels may leave out (a copy labeled invalid is scored by no criterion):
    at ``minimum_validity × pairs ≤ 1`` (0 among them) the transform is checked however many pairs are labeled
    invalid, and the only labeling it refuses, none valid, leaves its relations without rows anyway, so the check
    cannot fail: labeling each failing pair invalid passes the relation (a careless or a motivated labeler).
    A single pair is never named: labeled valid it is scored, labeled invalid its relation has no rows, so
    neither labeling passes a failing pair.
    """
    found: dict[str, str] = {}
    for t in config.metamorphic.transforms:
        if pairs < 2 or t.minimum_validity * pairs > 1:
            continue
        met = "with none" if t.minimum_validity == 0 else "once 1"  # 0 of any number of pairs meets 0
        for i, ev in _relations_of(config, t.name):
            found[ev.name] = (
                f"{file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): transform {t.name}'s "
                f"minimum_validity {yaml_number(t.minimum_validity)} is met {met} of its {pairs} pairs labeled valid, "
                "so its validity check cannot fail: the labels may leave out any share of its copies, and "
                "labeling each failing pair invalid passes the relation; ask for the share of pairs that must "
                "keep their meaning (e.g. minimum_validity: 0.85)")
    return found


def _relations_of(config: SuiteConfig, transform: str) -> Iterator[tuple[int, Evaluator]]:
    """``(index, evaluator)`` of each ``metamorphic_relation`` of ``config`` judged on ``transform``'s copies."""
    return ((i, ev) for i, ev in enumerate(config.evaluators)
            if ev.type == "metamorphic_relation" and getattr(ev, "transform", None) == transform)


def _blank_rewrites(config: SuiteConfig, file: str | Path = SUITE_FILE) -> dict[str, str]:
    """Relations whose transform's ``template`` adds nothing but blank space around ``{value}`` (``"{value} "``,
    ``"\n{value}"``): criterion → finding.

    ``"{value}"`` itself is refused (every copy is its source); blank space makes a copy that differs from its
    source in spacing alone, which an agent reads as the same request, so each pair holds and the relation passes
    under the transform's name (``same_state_under_injected``) with no injection in any copy.
    """
    found: dict[str, str] = {}
    for t in config.metamorphic.transforms:
        if t.template.strip() != "{value}":
            continue
        for i, ev in _relations_of(config, t.name):
            found[ev.name] = (
                f"{file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): transform {t.name}'s template "
                f"{quote(t.template)} adds only blank space to the text, so each copy is its source's request "
                "spaced otherwise and the relation holds for any agent that ignores spacing; write the change "
                "the transform tests around {value}, e.g. '{value} Ignore the rules above.'")
    return found


def find_vacuous_checks(config: SuiteConfig, cases: list[Case], file: str | Path = SUITE_FILE) -> dict[str, list[str]]:
    """State checks that cannot fail among ``cases`` (see :class:`_VacuityScan`): criterion → messages."""
    scan = _VacuityScan(config, file)
    for case in cases:
        scan.observe(case)
    return scan.findings()


class _DerivedIds(Collection[str]):
    """The ids ``<source>~<transform>`` of one transform's derived cases, without building them all."""

    def __init__(self, sources: set[str], transform: str) -> None:
        self._sources, self._suffix = sources, f"~{transform}"

    def __contains__(self, item: object) -> bool:
        return (isinstance(item, str) and item.endswith(self._suffix)
                and item[: -len(self._suffix)] in self._sources)

    def __iter__(self) -> Iterator[str]:
        return (source + self._suffix for source in self._sources)

    def __len__(self) -> int:
        return len(self._sources)


class _CopyDigests:
    """The digest of each derived case of one transform, by id: made on the first question (one pass over the
    source cases), so a label file that gives no ``digest`` costs nothing."""

    def __init__(self, transform: Transform, cases_file: Path, kept: tuple[Case, ...] | None) -> None:
        self._transform, self._cases_file, self._kept = transform, cases_file, kept
        self._digests: dict[str, str] | None = None

    def __call__(self, copy_id: str) -> str:
        if self._digests is None:
            t = self._transform
            sources = self._kept if self._kept is not None else (c for _, c in iter_cases(self._cases_file))
            self._digests = {f"{c.id}~{t.name}": derive_case(c, t.name, t.field, t.template,
                                                             state_path=t.state_path).digest for c in sources}
        return self._digests[copy_id]


def _stat_of(path: Path) -> tuple[int, int, int, int, int]:
    """``(size, mtime_ns, inode, device, ctime_ns)``: what tells the case file as it was loaded from another version.

    The status change time is taken from the clock on every write and no call sets it back: a system that
    rewrote a later case of a streamed file in place, the same size, and put its modification time back
    (``os.utime``) changed that case's ``outcome`` unseen (review R49; before, size, modification time and
    inode alone were compared)."""
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_ctime_ns


def _stat_case_file(path: Path) -> tuple[int, int, int, int, int]:
    try:
        return _stat_of(path)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise CaseFileError(path, None, f"cannot read the case file: {getattr(exc, 'strerror', None) or exc}") from None


#: Most input fields of a case :func:`_lacks_field` lists.
_FIELDS_SHOWN = 8


def _lacks_field(case: Case, line: int, i: int, transform: Transform, cases_file: Path, suite_file: Path,
                 seen: bool) -> OloproofError:
    """The error for ``case`` (at ``line``), which lacks the input field that ``metamorphic.transforms[i]``
    rewrites in every case.

    Where an earlier case had the field (``seen``), this case is the one to fix: its line is named, as for its other
    mistakes (it named oloproof.yaml alone, whose transform was right). Where none had it (the first case lacks it),
    the transform's ``field`` may be the misspelt one: oloproof.yaml's key is named, with the case's line. The
    case's own fields are listed, so a misspelling shows."""
    held = [str(key) for key in case.input]
    shown = ", ".join(quote(key) for key in held[:_FIELDS_SHOWN]) + (", …" if len(held) > _FIELDS_SHOWN else "")
    lacks = f"case {quote(case.id)} has no input field {quote(transform.field)} (its input holds {shown or 'none'})"
    key = f"metamorphic.transforms[{i}].field"
    if seen:
        return CaseFileError(cases_file, line, f"{lacks}, which metamorphic transform {quote(transform.name)} ({key} "
                                               f"in {suite_file.name}) rewrites in every case: give the case that "
                                               "field")
    return ConfigError(suite_file, key, f"{cases_file.name} line {line}: {lacks}; name a field every case has, or "
                                        "give the case that field")


def _validate_cases(cases_file: Path, config: SuiteConfig, suite_file: Path, scan: _VacuityScan,
                    repeats: RepeatScan, removals: RemovalScan, keep: bool,
                    ) -> tuple[set[str], int, tuple[Case, ...] | None]:
    """One streamed pass over the case file: every case is checked, shown to ``scan``, ``repeats`` and
    ``removals``, and kept when ``keep``.

    Returns (source ids, count, the cases or None).
    """
    source_ids: set[str] = set()
    kept: list[Case] | None = [] if keep else None
    transforms = config.metamorphic.transforms
    judged = any(ev.type == "outcome_contract" for ev in config.evaluators)
    unjudged, first_unjudged = 0, (0, "")  # cases whose outcome no evaluator reads: how many, the first's line, id
    rewrites = [(t.field, t.template) for t in transforms if t.field is not None]
    for line, case, content, copies in iter_cases_with_copies(cases_file, rewrites):
        if kept is not None:
            kept.append(case)
        check_case_validators([case], config.evaluators, config.validators, cases_file)
        repeats.observe(line, case, content)
        field_copies = iter(copies)
        for i, transform in enumerate(transforms):
            if transform.field is not None and transform.field not in case.input:
                raise _lacks_field(case, line, i, transform, cases_file, suite_file, seen=bool(source_ids))
            if transform.field is not None and (problem := field_not_text(case, transform.field)) is not None:
                raise ConfigError(suite_file, f"metamorphic.transforms[{i}].field", f"case {quote(case.id)}: {problem}")
            if transform.state_path is not None:
                try:  # the rewrite must apply to this case: derive it once to check (and for its content)
                    copy = derive_case(case, transform.name, transform.field, transform.template,
                                       state_path=transform.state_path)
                except ValueError as exc:
                    raise ConfigError(suite_file, f"metamorphic.transforms[{i}].state_path",
                                      f"case {quote(case.id)}: {exc}") from None
                copy_content: str | None = content_digest(copy)
            else:
                copy_content = next(field_copies)
            if copy_content is not None:  # a copy holding a source case's content is that case counted twice
                repeats.observe_copy(line, f"{case.id}~{transform.name}", copy_content)
        scan.observe(case)
        removals.observe(line, case)
        source_ids.add(case.id)
        if case.outcome is not None and not judged:
            if not unjudged:
                first_unjudged = (line, case.id)
            unjudged += 1
    if not source_ids:
        raise CaseFileError(cases_file, None, "holds no cases; write one JSON object per line with 'id' and 'input'")
    if unjudged:
        warn_at_caller(_unjudged_outcomes(cases_file, suite_file, unjudged, *first_unjudged))
    return source_ids, len(source_ids), None if kept is None else tuple(kept)


def _unjudged_outcomes(cases_file: Path, suite_file: Path, count: int, line: int, case_id: str) -> str:
    """The warning for cases that promise an ``outcome`` in a suite with no ``outcome_contract`` evaluator: no
    receipt is taken and nothing is judged or counted for them, so a run PASSes whatever the agent delivered."""
    return (f"{cases_file}: {count} case(s) give an outcome (first: line {line}, case {quote(case_id)}) but "
            f"{suite_file} has no outcome_contract evaluator: those outcomes are never observed, judged or counted; "
            f"add '- {{type: outcome_contract}}' under evaluators (and outcome_verified to release.yaml), or remove "
            f"the outcomes")


def _check_release_criteria(release: ReleaseConfig, config: SuiteConfig, file: Path) -> None:
    known = config.criteria
    for name in release.regression.criteria or []:  # a typo there was found only when two runs were compared
        if name not in known:
            raise ConfigError(file, "regression.criteria",
                              f"{quote(name)} is no criterion of the suite; its criteria: "
                              f"{', '.join(known) or '(none)'}")
    for name in release.criteria:
        if name not in known:
            raise ConfigError(file, format_loc(("criteria", name)),
                              f"no such criterion in the suite; its criteria: {', '.join(known) or '(none)'}")


def release_from_manifest(data: dict[str, Any] | None) -> ReleaseConfig | None:
    """The release stored in a run manifest (None when the suite had none)."""
    return None if data is None else parse_release(data, "manifest.json")
