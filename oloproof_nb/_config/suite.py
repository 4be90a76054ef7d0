"""A suite folder, loaded: :class:`Suite`, :func:`load_suite` and its one pass over the case file, and importing the
system and the suite's own checks and validators (the oloproof.yaml model is ``suite_config``)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._core.case import Case, case_copy, content_digest, derive_case, field_not_text
from .._core.paths import values_equal
from .._core.records import RepeatedCases
from ..errors import (
    CaseFileError,
    ConfigError,
    DuplicateCaseWarning,
    OloproofError,
    VacuousCheckWarning,
    format_loc,
    quote,
    terminal_text,
    warn_at_caller,
)
from .cases import (
    RepeatScan,
    iter_cases,
    iter_cases_with_copies,
    key_look,
    repeats_warning,
)
from .files import LINK_HINT, dangling_link, folder_problem, home_shorthand, named_alike, read_yaml
from .imports import (
    CODE_KEY,
    changed_file,
    code_layers,
    defined_elsewhere,
    file_digest,
    function_digest,
    import_system,
    load_check,
    load_validators,
    module_file,
    stale_function,
    stale_import,
    suite_imports,
)
from .labels import read_labels
from .release import ReleaseConfig, criterion_hint, load_release, parse_release
from .removals import RemovalScan
from .suite_config import SUITE_FILE, SuiteConfig, Transform, criteria_named, parse_suite_config, slices_once
from .vacuity import VacuityScan, blank_rewrites, thin_validity
from .validators import check_case_validators

__all__ = ["Suite", "load_suite", "release_from_manifest", "load_user_code", "UserCode", "changed_digests",
           "RELEASE_FILE", "KeptImportError"]


RELEASE_FILE = "release.yaml"


class KeptImportError(ConfigError):
    """A system refused because a file of its code that Python keeps as imported (a helper module, a package, a
    module outside the suite folder) changed since: only a new process loads it. :attr:`stale` names the file (None
    once pickled to another process). An executor's worker says to restart the workers
    (:func:`~oloproof_nb._run.remote._remote_suite`), where the user's process says to restart it."""

    #: The file that changed since Python imported it.
    stale: Path | None = None


def _kept_import(file: Path, stale: Path) -> KeptImportError:
    """The refusal of a system whose file ``stale``, kept by Python as imported, changed since (``file``: the
    oloproof.yaml that names the system)."""
    error = KeptImportError(file, "system", _old_system(stale, restart=True))
    error.stale = stale
    return error


def _stale_system(root: Path, target: Any) -> Path | None:
    """The file of the system ``target`` (imported from the suite folder ``root``) that changed since Python
    imported it: the file that defines it (:func:`~.imports.stale_function`), else a module its code imports
    (:func:`~.imports.stale_import`); None when none did."""
    return stale_function(target) or stale_import(root, target)


def _refuse_kept(root: Path, target: Any, file: Path) -> None:
    """Raise :class:`KeptImportError` when the system ``target``, just imported, is still Python's object of before
    an edit of its code (a package, a helper module, another file: only a new process loads it)."""
    stale = _stale_system(root, target)
    if stale is not None:
        raise _kept_import(file, stale)


#: A case file up to this size is parsed once, when the suite is loaded, and its cases kept for the run;
#: a larger one is streamed (read again, one case at a time, by every pass over it).
KEEP_CASES_BYTES = 4 << 20


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
        line (``case_id``, ``valid``, ``labeler``). A run refuses them once edited in code
        (:meth:`refuse_edited_labels`): relabel the file and load the suite again.
    digests : dict of str to str
        SHA-256 of what the suite was loaded from: ``oloproof.yaml``, the case file, ``release.yaml`` and each
        label file by their names in the folder, and each python check's or validator's code under
        ``code:<module:function>`` (a run stores them; ``--resume`` refuses a run whose files changed).
    validators, checks : dict of str to callable
        The registered outcome validators (by name) and the suite's python checks (``module:function``),
        imported with the system; a run calls these, not whatever the files hold by then.
    code_files : dict of str to dict of Path to str
        The suite folder's files the code of each of them came from (``module:function`` → file → digest), taken
        when it was imported: a run refuses the suite when one of those files holds other bytes now.
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
    #: The suite folder's files the code of each of ``validators`` and ``checks`` came from, taken when it was
    #: imported: ``{"module:function": {file: digest of the code run from it}}`` (:func:`load_user_code`). A run
    #: refuses the suite when one holds other bytes now (:meth:`_refuse_edited_code`).
    code_files: dict[str, dict[Path, str]] = field(default_factory=dict)
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
    #: :attr:`labels` as ``load_suite`` read them from the label files (each judgement copied), by which a run
    #: refuses labels edited in code since (:meth:`refuse_edited_labels`); None for a Suite not made by ``load_suite``.
    _labels_read: dict[str, list[dict[str, Any]]] | None = field(default=None, repr=False, compare=False)

    def iter_cases(self, copies: bool = True) -> Iterator[Case]:
        """Every case, each source followed by its derived copies, streamed from the case file.

        A kept case is given out as a copy of its own (:func:`~oloproof_nb._core.case.case_copy`), as a streamed one
        is read anew: a case edited in place (``suite.cases[0].initial_state[...] = ...``) is never what a run of
        the suite runs, under the digest of the case file's line (edit the file and load the suite again).
        ``copies=False`` gives the kept cases themselves, for a reader that edits none of them: the runner, which
        copies what it hands the system (``input``, ``initial_state``), and so no case twice (about 35 µs a case).

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
            elif copies:  # a copy: an edit of a case given out (suite.cases[0].input[...] = ...) never reaches a run
                case = case_copy(case)
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

        The status change time moves on a write that puts the modification time back, but also on a
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
            the old code under the new file's fingerprint (its replays cached for the new code). A system imported
            here (``import_system_now=False``) is refused as ``load_suite`` refuses it: a file of its code that
            Python keeps as imported (a helper module, a package) changed since.
        """
        if self.system_target is not None:
            edited = self.system_edited()
            if edited is not None:
                raise (_kept_import(self.root / SUITE_FILE, edited[0]) if edited[1] else
                       ConfigError(self.root / SUITE_FILE, "system", _old_system(*edited)))
            return self.system_target
        target = import_system(self.root, self.config.system, self.root / SUITE_FILE)
        # imported now (load_suite(import_system_now=False)): refused as load_suite refuses it, or a helper Python
        # kept as imported before its edit ran unseen (3 of 3 pass where the helper now fails them)
        _refuse_kept(self.root, target, self.root / SUITE_FILE)
        return target

    def system_edited(self) -> tuple[Path, bool] | None:
        """The file of the imported system that changed since it was imported, with whether only a restart
        reloads it: any file but the suite's own top-level module, which a new load imports again (a package's
        module, a file the class is imported from, a module the system's code imports: Python keeps these); None
        when none did (or the system is not imported yet)."""
        if self.system_target is None:
            return None
        stale = _stale_system(self.root, self.system_target)
        if stale is None:
            return None
        # the suite's own top-level module, edited since, or imported again under its name by a later load of the
        # folder (its edit maybe undone since; the line once said to restart the kernel): a new load takes it.
        # The suite stays refused: its code fingerprint would be read off the later load's module
        own = module_file(self.root, self.config.system.split(":", 1)[0])
        return stale, not (own is not None and os.path.realpath(own) == os.path.realpath(stale))

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
                       digests={**self.digests, **code.digests}, code_files=code.files, code_loaded=True)

    def refuse_edited_labels(self) -> None:
        """Raise :class:`OloproofError` (one line naming the first judgement that differs) when :attr:`labels` is no
        longer what ``load_suite`` read from the label files: a judgement appended, removed or changed in place
        (``suite.labels["t"].append(...)``), or other labels given (``dataclasses.replace(suite, labels=...)``).

        The label files were checked line by line as they were read (each id a derived case of the suite, one
        judgement per labeler and pair); labels edited in code were not, and a run stores them as its own. A
        judgement of a copy the suite does not derive counted as a labeled pair: 19 of 20 pairs labeled and one
        such judgement made the transform checked (coverage 1), and the unlabeled pair, failing, was left out of its
        relation without a word."""
        read, labels = self._labels_read, self.labels
        # compared as a state check compares values: by Python's ==, ``valid: 1`` (or 1.0) put in place
        # of ``true`` was no edit, and the run it was let into stopped on a manifest it could not store
        if read is None or values_equal(labels, read):
            return
        if not isinstance(labels, dict):
            raise OloproofError(f"suite.labels is a {type(labels).__name__}, not the labels load_suite read (a dict "
                                "of transform name to judgements); load the suite again (op.load_suite)")
        for name in [*read, *(n for n in labels if n not in read)]:
            now, was = labels.get(name), read.get(name)
            if values_equal(now, was):
                continue
            file = next((str(self.root / t.validity_labels) for t in self.config.metamorphic.transforms
                         if t.name == name), "the suite's label files")
            where = f"suite.labels[{quote(name)}]"
            if now is None or was is None:
                what = f"{where} was {'removed' if now is None else 'added'}"
            elif not isinstance(now, list):
                what = f"{where} is a {type(now).__name__}, not a list of judgements"
            else:
                i = next((i for i, (a, b) in enumerate(zip(now, was, strict=False)) if not values_equal(a, b)),
                         min(len(now), len(was)))
                what = (f"{where}[{i}] was removed" if i >= len(now) else
                        f"{where}[{i}] is {quote(now[i])} ({'added' if i >= len(was) else f'read as {quote(was[i])}'})")
            raise OloproofError(f"{what}: the labels were edited after load_suite read them from {file}; a run takes "
                                "a suite's labels from its label files, checked line by line as they are read: write "
                                "the judgement in the file and load the suite again (op.load_suite)")

    def _refuse_edited_code(self) -> None:
        """Raise :class:`ConfigError` when a file of a check's or a validator's code (its own, or a module of the
        suite folder it imports) changed since this suite loaded it: a run would judge with the code imported then,
        under digests that name it, while the folder holds other code (as :meth:`resolve_system` refuses the
        system's). Loading the suite again takes the new code when the edited file is the top-level module of the
        suite folder that ``spec`` names (imported again when it changes); any other file (a helper it imports, a
        package's module) Python keeps imported, and the message says to restart the process first, as a new load
        would (:func:`load_user_code`).

        The files compared are those :attr:`code_files` took at the load, not the ones a module of the same name
        imports now: a later load of the suite imports its top-level module again under that name, and this
        suite's code, imported before, is compared with the bytes it was imported from (after an edit,
        a second load and the edit undone, the first suite was refused though its file held its code again)."""
        keys = _code_keys(self.config)
        for spec, fn in _own_functions(self.config, self.validators, self.checks):
            taken = self.code_files.get(spec)
            changed = stale_function(fn) or (stale_import(self.root, fn) if taken is None else changed_file(taken))
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
    #: ``{"module:function": {file: digest}}``: the suite folder's files the code of each imports, with the digest
    #: of the code run from each (:func:`~oloproof_nb._config.imports.suite_imports`).
    files: dict[str, dict[Path, str]] = field(default_factory=dict)


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


def _own_functions(config: SuiteConfig, validators: Mapping[str, Callable[..., Any]],
                   checks: Mapping[str, Callable[..., Any]]) -> list[tuple[str, Callable[..., Any]]]:
    """Each ``(module:function, function)`` of a suite's own code: its registered validators (by the spec
    ``validators.<name>`` gives), then its python checks."""
    return [*((config.validators[name], fn) for name, fn in validators.items()), *checks.items()]


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
    digests, files = {}, {}
    for spec, fn in _own_functions(config, validators, checks):
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
        files[spec] = suite_imports(root, code_layers(fn))
        kept = changed_file(files[spec])
        if kept is not None:  # a module of the suite folder its code imports: only a restart reloads it
            raise ConfigError(suite_file, keys[spec],
                              f"{kept} changed since this process imported it, and Python keeps that import (a "
                              f"module of the suite folder that {spec}'s code imports, a value or a function it "
                              "takes from there): a run would judge with the old code; restart the process (in a "
                              "notebook: the kernel) and load the suite again")
        found = function_digest(root, spec, fn)
        if found is not None:
            digests[CODE_KEY + spec] = found
    return UserCode(validators, checks, digests, files)


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
        home = home_shorthand(str(folder))  # "~/suite": Python expands no "~", nor does this
        raise ConfigError(root, None, "is not a suite folder (no such directory)" + (f": {home}" if home else ""))
    suite_file = root / SUITE_FILE
    if not suite_file.exists():  # a directory, FIFO or device: read_yaml refuses it by name
        _refuse_a_broken_link(suite_file)
        within = _within_a_suite(root)
        if within:
            raise ConfigError(root, None, within)
        alike = named_alike(suite_file)
        raise ConfigError(suite_file, None, "file not found; a suite folder holds oloproof.yaml"
                          + (f" (the folder holds {quote(alike)}: rename it oloproof.yaml)" if alike else ""))
    raw = read_yaml(suite_file)
    config = parse_suite_config(raw, suite_file)
    criteria_named(config, suite_file, raw)
    slices_once(config, suite_file)
    release_file = Path(release) if release is not None else root / RELEASE_FILE
    _refuse_a_broken_link(release_file)  # it was read as no release.yaml: a run gated nothing, exit 1
    release_cfg = load_release(release_file) if (release is not None or release_file.exists()) else None
    cases_file = root / config.cases
    if not os.path.lexists(cases_file) and "\0" not in str(cases_file):  # a typo in cases: names the key
        alike = named_alike(cases_file)
        raise ConfigError(suite_file, "cases", f"file {cases_file} not found (the case file: one JSON case a line)"
                          + (f"; the folder holds {quote(alike)}: name it in cases, or rename it" if alike else ""))
    _refuse_a_broken_link(cases_file)  # it was "cannot read the case file: No such file or directory"
    stat_before = _stat_case_file(cases_file)
    scan, repeats = VacuityScan(config, suite_file), RepeatScan()
    removals = RemovalScan(config.evaluators, cases_file)
    source_ids, n_sources, kept = _validate_cases(cases_file, config, suite_file, scan, repeats, removals,
                                                  keep=stat_before[0] <= KEEP_CASES_BYTES)
    scan.refuse_globs()
    derived_ids = {t.name: _DerivedIds(source_ids, t.name) for t in config.metamorphic.transforms}
    looks = {look: sid for sid in source_ids if (look := key_look(sid)) != sid} if derived_ids else {}
    for i, transform in enumerate(config.metamorphic.transforms):
        # as the case file holds ids apart (key_look): " a~t", the copy of " a", beside the case "a~t" is one too
        clash = sorted(did for did in derived_ids[transform.name]
                       if (look := key_look(did)) in source_ids or look in looks)
        if clash:
            look = key_look(clash[0])
            held = look if look in source_ids else looks[look]
            shown = quote(clash[0]) if held == clash[0] else f"{quote(clash[0])} (as {quote(held)})"
            raise ConfigError(suite_file, f"metamorphic.transforms[{i}].name",
                              f"the derived case id {shown} is already a case id in {config.cases}")
    digests = {SUITE_FILE: file_digest(suite_file), config.cases: file_digest(cases_file)}
    if release_cfg is not None:
        digests[RELEASE_FILE] = file_digest(release_file)
        _check_release_criteria(release_cfg, config, release_file)
    labels: dict[str, list[dict[str, Any]]] = {}
    copies = {t.name: _CopyDigests(t, cases_file, kept) for t in config.metamorphic.transforms}
    _refuse_shared_labels(root, config.metamorphic.transforms, suite_file)
    for i, transform in enumerate(config.metamorphic.transforms):
        labels_file = root / transform.validity_labels
        _refuse_a_broken_link(labels_file)
        if not labels_file.exists():
            alike = named_alike(labels_file)
            named = {os.path.normpath(path) for path in (cases_file, *(root / t.validity_labels
                                                                       for t in config.metamorphic.transforms))}
            if alike is not None and os.path.normpath(labels_file.parent / alike) not in named:  # a typo (another
                # transform's label file is not: "labels/b.jsonl" beside "labels/a.jsonl" not written yet)
                raise ConfigError(suite_file, f"metamorphic.transforms[{i}].validity_labels",
                                  f"label file {labels_file} not found; the folder holds {quote(alike)}: name it in "
                                  "validity_labels, or rename it")
            raise ConfigError(suite_file, f"metamorphic.transforms[{i}].validity_labels",
                              f"label file {labels_file} not found; write one judgement "
                              f'per line: {{"case_id": "<source id>~{transform.name}", "valid": true|false}}, '
                              "or create it empty to run the suite first and read the copies (run.panel(case_id)): "
                              "an empty file leaves every pair unlabeled")
        # read once: the digest is of the bytes the judgements were read from
        labels[transform.name], digests[transform.validity_labels] = read_labels(
            labels_file, derived_ids[transform.name], transform.name, copies[transform.name],
            functools.partial(_row_of, copies, transform.name))
    vacuous = scan.findings()
    for criterion, message in [*thin_validity(config, n_sources, suite_file).items(),
                               *blank_rewrites(config, suite_file).items()]:
        vacuous.setdefault(criterion, []).append(message)
    for messages in vacuous.values():
        for message in messages:
            warn_at_caller(VacuousCheckWarning(message))
    unheld = removals.warning()  # a case's own finding, not its check's: not kept as one that cannot fail
    if unheld is not None:
        warn_at_caller(VacuousCheckWarning(unheld))
    shortened = removals.shortened_warning()  # a case's own finding too
    if shortened is not None:
        warn_at_caller(VacuousCheckWarning(shortened))
    repeated = repeats.found()
    if repeated.count:
        warn_at_caller(DuplicateCaseWarning(repeats_warning(cases_file, repeated)))
    target = import_system(root, config.system, suite_file) if import_system_now else None
    if target is not None:  # notes the files its code came from (a run refuses it once they change)
        _refuse_kept(root, target, suite_file)  # imported again, Python still gave the old object (a package, …)
        elsewhere = defined_elsewhere(root, target)
        if elsewhere is not None:  # a package of the suite's, imported from another suite's folder first
            raise ConfigError(suite_file, "system", elsewhere)
    code = load_user_code(root, config, suite_file) if import_system_now else UserCode()
    digests.update(code.digests)
    if _stat_case_file(cases_file) != stat_before:
        raise CaseFileError(cases_file, None, "changed while it was being read; load the suite again")
    return Suite(root=root.resolve(), config=config, release=release_cfg, cases_file=cases_file.resolve(),
                 n_cases=n_sources * (1 + len(config.metamorphic.transforms)), labels=labels, digests=digests,
                 system_target=target, validators=code.validators, checks=code.checks, code_files=code.files,
                 code_loaded=import_system_now, cases_stat=stat_before,
                 vacuous=vacuous, repeated=repeated, kept_cases=kept,
                 _labels_read={name: [dict(j) for j in judgements] for name, judgements in labels.items()})


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


def _within_a_suite(root: Path) -> str:
    """What the folder ``root``, which holds no oloproof.yaml, is of a suite, and which folder to give instead: a
    run directory (it holds manifest.json; ``demo/runs/<run_id>``), the suite's folder of runs (``demo/runs``) or
    another folder of a suite (``demo/labels``); empty for any other folder. ``demo/runs`` was told only that a suite
    folder holds oloproof.yaml, which the user's suite folder does."""
    if root.name in ("", ".."):  # "." and "..": the folder above is not their parent part ("." again, or the suite)
        root = Path(os.path.abspath(root))
    try:
        if (root / "manifest.json").is_file():
            suite = root.parent.parent
            named = f", {str(suite)!r}" if (suite / SUITE_FILE).is_file() else ""
            return (f"is a run directory (it holds manifest.json), not a suite folder; give the suite folder it was "
                    f"made from{named} (a run is read by op.load_run, oloproof gate or oloproof report)")
        if not (root.parent / SUITE_FILE).is_file():
            return ""
        runs = root.name == "runs" or any((child / "manifest.json").is_file() for child in root.iterdir())
    except OSError:  # a folder that cannot be listed: the plain message names it
        return ""
    kind = "the suite's folder of runs" if runs else f"a folder of the suite in {str(root.parent)!r}"
    return f"is {kind}, not a suite folder; give the suite folder {str(root.parent)!r}, which holds oloproof.yaml"


def _refuse_shared_labels(root: Path, transforms: Iterable[Transform], suite_file: Path) -> None:
    """Refuse two transforms whose ``validity_labels`` name one file (as the file system resolves it): each line of a
    label file must judge a copy of its transform, so a shared file took no judgement at all (empty, it ran both
    transforms unchecked; a line written for one was refused by the other, whose error offered its own ids)."""
    read_by: dict[str, tuple[int, str]] = {}  # by os.path.realpath: Path.resolve raises on a symlink loop (< 3.13)
    for i, transform in enumerate(transforms):
        first, other = read_by.setdefault(os.path.realpath(root / transform.validity_labels), (i, transform.name))
        if first != i:
            raise ConfigError(suite_file, f"metamorphic.transforms[{i}].validity_labels",
                              f"{quote(transform.validity_labels)} is the label file of transform {quote(other)} "
                              f"(metamorphic.transforms[{first}]) too; a label file judges the copies of one "
                              f"transform: give {quote(transform.name)} a file of its own, e.g. "
                              f"labels/{transform.name}.jsonl")


def _refuse_a_broken_link(path: Path) -> None:
    """A symbolic link at ``path`` that leads to nothing (a dangling link, in :func:`~.files.dangling_link`'s
    words, or a loop) is an error naming it: the file is there, and reading it as absent would change what the
    suite decides."""
    if os.path.lexists(path) and not path.exists():
        link = dangling_link(path)
        if link is None:  # a loop of links: the OS's words
            try:
                path.stat()
                why = "cannot be followed"
            except OSError as exc:
                why = exc.strerror or type(exc).__name__
            link = f"is a symbolic link that leads to no file ({why})"
        raise ConfigError(path, None, f"{link}; {LINK_HINT}")


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
        self._sources: dict[str, str] | None = None

    def _source_cases(self) -> Iterable[Case]:
        return self._kept if self._kept is not None else (c for _, c in iter_cases(self._cases_file))

    def _copies(self) -> dict[str, str]:
        if self._digests is None:
            t = self._transform
            self._digests = {f"{c.id}~{t.name}": derive_case(c, t.name, t.field, t.template,
                                                             state_path=t.state_path).digest
                             for c in self._source_cases()}
        return self._digests

    def __call__(self, copy_id: str) -> str:
        return self._copies()[copy_id]

    def case_of(self, digest: str) -> str | None:
        """The id of the source case or copy of the transform whose digest is ``digest`` now, or None: asked only of
        a judgement whose digest is not its own copy's (a row of run.cases above or below it copied)."""
        if self._sources is None:
            self._sources = {c.digest: c.id for c in self._source_cases()}
        return self._sources.get(digest) or self.copy_of(digest)

    def copy_of(self, digest: str) -> str | None:
        """The id of the copy of the transform whose digest is ``digest`` now, or None."""
        return next((copy_id for copy_id, its in self._copies().items() if its == digest), None)


def _row_of(copies: Mapping[str, _CopyDigests], transform: str, digest: str) -> str | None:
    """The id of the row of run.cases whose digest is ``digest`` now: a source case or a copy of ``transform``
    (:meth:`_CopyDigests.case_of`), else a copy of another transform, or None. run.cases lists each source case
    beside its copies of every transform: the digest of the row of another transform's copy, given in this
    transform's label file, was refused as a copy changed since it was judged (the template or the source case
    edited), which nobody had done."""
    return copies[transform].case_of(digest) or next(
        (owner for name, its in copies.items() if name != transform and (owner := its.copy_of(digest)) is not None),
        None)


def _stat_of(path: Path) -> tuple[int, int, int, int, int]:
    """``(size, mtime_ns, inode, device, ctime_ns)``: what tells the case file as it was loaded from another version.

    The status change time is taken from the clock on every write and no call sets it back: a system that
    rewrote a later case of a streamed file in place, the same size, and put its modification time back
    (``os.utime``) changed that case's ``outcome`` unseen (before, size, modification time and
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


def _misfit(case: Case, line: int, key: str, transform: Transform, problem: str, earlier: str, cases_file: Path,
            suite_file: Path, seen: bool) -> OloproofError:
    """The error for ``case`` (at ``line``), which the transform of oloproof.yaml's ``key`` (its ``field`` or
    ``state_path``) cannot rewrite, for ``problem``; ``earlier``: what the cases before it do (``"hold text
    there"``).

    As for :func:`_lacks_field`: where an earlier case suited the transform (``seen``), this case is the one to
    fix, named by its line (the transform's key in parentheses); where none did (the first case), the key may be
    the wrong one: oloproof.yaml's key is named, with the case's line."""
    said = f"case {quote(case.id)}: {problem}"
    if seen:
        return CaseFileError(cases_file, line, f"{said} (metamorphic transform {quote(transform.name)}, {key} in "
                                               f"{suite_file.name}; the cases before it {earlier})")
    return ConfigError(suite_file, key, f"{cases_file.name} line {line}: {said}")


def _validate_cases(cases_file: Path, config: SuiteConfig, suite_file: Path, scan: VacuityScan,
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
                raise _misfit(case, line, f"metamorphic.transforms[{i}].field", transform, problem,
                              "hold text there", cases_file, suite_file, seen=bool(source_ids))
            if transform.state_path is not None:
                try:  # the rewrite must apply to this case: derive it once to check (and for its content)
                    copy = derive_case(case, transform.name, transform.field, transform.template,
                                       state_path=transform.state_path)
                except ValueError as exc:
                    raise _misfit(case, line, f"metamorphic.transforms[{i}].state_path", transform, str(exc),
                                  "match it with text", cases_file, suite_file, seen=bool(source_ids)) from None
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
                              f"no such criterion in the suite{criterion_hint(name, known)}; its criteria: "
                              f"{', '.join(known) or '(none)'}")


def release_from_manifest(data: dict[str, Any] | None) -> ReleaseConfig | None:
    """The release stored in a run manifest (None when the suite had none)."""
    return None if data is None else parse_release(data, "manifest.json")
