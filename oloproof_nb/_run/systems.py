"""The system under test as the run builds it: factory, constructor, ``version`` and code fingerprint.

The constructor and ``fingerprint()`` are calls into the user's code and go
through the one timeout mechanism: a constructor that raises (``SystemExit``
included), or takes longer than ``case_timeout_s``, is an
:class:`~oloproof_nb.errors.OloproofError` in one line — never a hang, never
an exit of the run's process. So is dropping an instance (:func:`release`): its
``__del__``, a finaliser or a connection closed with it runs on the helper
thread, under the same timeout.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
import functools
import hashlib
import inspect
import os
import pathlib
import re
import stat
import sys
import tempfile
import threading
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .._config.imports import class_source, code_digests, code_layers, methods_elsewhere, portable_name, user_classes
from .._core.canonical import canonical_json, digest
from ..errors import OloproofError, quote, storable
from .sandbox import failure_reason
from .timeouts import CaseTimeout, call_with_timeout, system_traceback

__all__ = ["as_factory", "build", "release", "version_of", "code_fingerprint", "identity_of", "build_checked",
           "OtherSystem", "read_or_release", "other_identity", "KnownCode", "replay_fingerprint", "ReplayPrints",
           "CODE_SCHEMA",
           "NO_FINGERPRINT", "NO_SETTINGS_FINGERPRINT", "GIVE_FINGERPRINT", "Held", "SHARED_INSTANCE", "BUSY_INSTANCE",
           "note_abandoned"]

T = TypeVar("T")

CODE_SCHEMA = "oloproof_code/v1"
#: Why a system records no code fingerprint (:func:`code_fingerprint` is None), for the messages that refuse it.
NO_FINGERPRINT = ("the system's class is defined in no file (typed into a notebook cell), or a method assigned to it "
                  "is, and has no fingerprint()")
#: Why a run's manifest holds no ``settings_fingerprint`` where another run's, or its system now, has one: made
#: before manifests recorded it, or by a system built without settings; nothing tells which.
NO_SETTINGS_FINGERPRINT = ("records no settings fingerprint (made before runs recorded the settings a system is "
                           "built with, or by a system built without any)")
#: What to do about it: the user's word that two runs ran the same code.
GIVE_FINGERPRINT = "give the system a fingerprint() that changes with its code"


def as_factory(target: Any) -> tuple[Callable[[], Any], bool]:
    """``(factory, fresh)``: a class or factory builds fresh instances; an instance is shared (``fresh`` False)."""
    if isinstance(target, type) or (callable(target) and not hasattr(target, "run")):
        return target, True
    if not hasattr(target, "run"):
        raise OloproofError(f"system {quote(target)} has no run(input) method; give a system, a class or a factory")
    return (lambda: target), False


def _call(fn: Callable[[], Any], what: str, timeout_s: float | None) -> Any:
    try:
        return call_with_timeout(fn, timeout_s)
    except CaseTimeout as exc:
        raise OloproofError(f"{what} took longer than case_timeout_s={exc.seconds:g}") from None
    except BaseException as exc:
        if system_traceback(exc) is None:  # the user's Ctrl-C, or oloproof's own error
            raise
        raise OloproofError(f"{what} raised {failure_reason(exc)}") from None


#: What to do when the system's class or factory takes arguments the runner never gives (it calls it with none).
NO_ARGUMENTS = ("the runner builds the system with no arguments: give each parameter a default, or name a factory "
                "function that builds it (module:make_system)")


def _needs_arguments(factory: Callable[[], Any]) -> bool:
    """Whether ``factory`` cannot be called with no arguments by its signature (False when it has none to read)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a callable without a signature to read
        return False
    try:
        signature.bind()
    except TypeError:
        return True
    return False


def build(factory: Callable[[], Any], timeout_s: float | None) -> Any:
    """A system instance from ``factory``, under the timeout; one-line error when it raises, hangs or has no run()
    (a class or factory whose parameters need arguments is told it is called with none)."""
    try:
        instance = _call(factory, "building the system", timeout_s)
    except OloproofError as exc:
        if not _needs_arguments(factory):
            raise
        raise OloproofError(f"{exc}; {NO_ARGUMENTS}") from None
    if not hasattr(instance, "run"):
        raise OloproofError(f"the system factory returned {type(instance).__name__}, which has no run(input)")
    return instance


def release(instances: list[Any], timeout_s: float | None) -> None:
    """Drop the instances in ``instances`` on the helper thread, under the timeout; one-line error when that hangs.

    The caller hands over its only references (it keeps none of its own), so the
    last one goes on the helper thread: a ``__del__`` (a weakref finaliser, a
    connection closed with the instance) that blocks stops the run after
    ``case_timeout_s``, as a constructor that blocks does, instead of hanging it
    outside any timeout. Python ignores what a ``__del__`` raises (it prints it to
    stderr); an instance someone else still holds (the caller's own, a call
    abandoned on its helper thread) is left to them.
    """
    _call(instances.clear, "releasing a system instance (its __del__ or a finaliser)", timeout_s)


#: Why a run refuses an instance its factory built: one the run still holds (a module-level instance
#: ran cases of several workers at once on one sandbox).
SHARED_INSTANCE = ("the system's factory returned an instance the run still holds (the same object: a module-level "
                   "or cached instance), so two cases would run on one sandbox at once (another worker's case, or a "
                   "call that exceeded case_timeout_s and may still be running on it); make the factory build a new "
                   "instance on each call (give the class, or a function that returns a new one)")


#: Why a run refuses an instance a call abandoned after a timeout still runs on, in any run of this process.
BUSY_INSTANCE = ("the system instance a case would run on has a call still running on it that exceeded "
                 "case_timeout_s or was interrupted (Ctrl-C) (an earlier case's, of this run or another in this "
                 "process), so the case would run beside it; "
                 "make the factory build a new instance on each call (give the class, or a function that returns a "
                 "new one), or wait for that call to end")

#: The instances abandoned calls still run on, with the helper threads that run them (:func:`note_abandoned`):
#: every run of the process refuses them while one of those threads lives.
_BUSY: list[tuple[Callable[[], Any], list[threading.Thread]]] = []
_BUSY_LOCK = threading.Lock()


def note_abandoned(instance: Any, threads: list[threading.Thread]) -> None:
    """Note that the calls on ``threads`` (abandoned after a timeout, or interrupted by Ctrl-C) may still run on
    ``instance``: until they end, :meth:`Held.add` refuses it in every run of this process (a resume in the same
    process, a notebook's, took a module-level instance back from the factory and ran its cases beside a timed-out
    call still running on it, where the run that call timed out in is stopped; after Ctrl-C, beside the interrupted
    call).
    An instance that takes no weak reference is held until the threads end (they hold it meanwhile)."""
    if not threads:
        return
    try:
        ref: Callable[[], Any] = weakref.ref(instance)
    except TypeError:  # no weak references to it: held while its calls run (as their threads hold it)
        ref = (lambda kept: lambda: kept)(instance)
    with _BUSY_LOCK:
        _BUSY.append((ref, list(threads)))


def _busy(instance: Any) -> bool:
    """Whether a call abandoned on ``instance`` still runs (:func:`note_abandoned`); entries that ended are let go."""
    with _BUSY_LOCK:
        _BUSY[:] = [(ref, threads) for ref, threads in _BUSY
                    if ref() is not None and any(thread.is_alive() for thread in threads)]
        return any(ref() is instance for ref, _ in _BUSY)


class Held:
    """The system instances a run holds (each worker's, and one a call abandoned after a timeout may still run on),
    by weak reference: a factory that gives one of them again is refused (:data:`SHARED_INSTANCE`).

    A factory returning a module-level instance counted as one that builds: ``workers=4`` ran four cases on one
    sandbox at once (18 of 24 ``state_matches`` failed that pass on one worker), and a serial run went on beside a
    timed-out call still writing into it, where an instance given to the run stops it. An instance
    that takes no weak reference (``__slots__`` without ``__weakref__``, ``@dataclass(slots=True)``,
    ``types.SimpleNamespace``) is held by a strong one until it is dropped or :meth:`take_kept` hands it on to be
    released (untracked, a module-level one ran 4 workers on one sandbox, 6 of 8 ``state_matches``
    failing that pass on one worker).
    """

    def __init__(self) -> None:
        self._refs: list[weakref.ref[Any]] = []
        #: the instances that take no weak reference, held until dropped (an id alone could be a later object's)
        self._kept: list[Any] = []
        self._lock = threading.Lock()

    def add(self, instance: Any) -> Any:
        """Note ``instance`` as held and return it; :class:`OloproofError` when the run holds it already, or a call
        abandoned on it in this process still runs (:data:`BUSY_INSTANCE`)."""
        with self._lock:
            self._refs = [ref for ref in self._refs if ref() is not None]
            if any(ref() is instance for ref in self._refs) or any(kept is instance for kept in self._kept):
                raise OloproofError(SHARED_INSTANCE)
            if _busy(instance):
                raise OloproofError(BUSY_INSTANCE)
            try:
                self._refs.append(weakref.ref(instance))
            except TypeError:  # no weak references to it: held by a strong one until dropped
                self._kept.append(instance)
        return instance

    def drop(self, *instances: Any) -> None:
        """``instances`` are no longer held (released with no call left running on them)."""
        with self._lock:
            self._refs = [ref for ref in self._refs if ref() is not None and all(ref() is not i for i in instances)]
            self._kept = [kept for kept in self._kept if all(kept is not i for i in instances)]

    def take_kept(self) -> list[Any]:
        """The instances held by a strong reference, no longer held here: for the run to release with the rest at
        its end (:func:`release`; held here, the last reference would go outside the timeout, later)."""
        with self._lock:
            kept, self._kept = self._kept, []
        return kept


def version_of(instance: Any, timeout_s: float | None = None) -> str | None:
    """The system's ``version`` as a string, or None.

    Reading it (a property of the user's) and turning it into text (its ``__str__``) are calls into the system,
    made under the timeout: one that raises (``SystemExit`` and ``KeyboardInterrupt`` included) or takes longer
    than ``timeout_s`` is an :class:`~oloproof_nb.errors.OloproofError` in one line, never a hang of the run.
    """
    def text() -> str | None:
        version = getattr(instance, "version", None)
        return None if version is None else str(version)

    version = _call(text, "reading the system's version", timeout_s)
    return None if version is None else storable(version)


#: The file digests a run took of the code its instances run, by the classes that code is (:func:`code_fingerprint`'s
#: ``known``): keyed by the ids of the target and the classes, each entry keeping those objects alive.
KnownCode = dict[tuple[int, ...], tuple[tuple[Any, ...], list[str]]]


def code_fingerprint(instance: Any, target: Any, *, root: Path | None, spec: str | None,
                     timeout_s: float | None, known: KnownCode | None = None) -> str | None:
    """The fingerprint of the system's code: the files that define it, and its optional ``fingerprint()``.

    Parameters
    ----------
    instance : object
        A built system; its ``fingerprint()`` (optional, any string) is called under the timeout.
    target : object
        The class, factory or instance the run builds systems from (the file defining it is digested).
    root, spec : Path and str, or None
        The suite folder and ``system: module:attr`` (the module's file is digested).
    timeout_s : float or None
        The run's ``case_timeout_s``.
    known : dict, optional
        The file digests taken for earlier instances of one run in this process, by their classes (filled here): an
        instance of the very class objects an earlier one had runs the code those digests were taken of, whatever
        the files say now, so they are not taken again (a thread run's replacement instance, while the system's
        file outside the suite folder is saved in an editor, runs on).

    Returns
    -------
    str or None
        sha256(canonical_json({"schema", "files": sorted file digests, "fingerprint": str or None, "system":
        sorted qualified names of ``target`` and the instance's own classes})), or None when the system has no
        ``fingerprint()`` and no file was found, or one of its own classes (its class and bases outside
        oloproof_nb), or a method assigned to one of them or a function to its module
        (:func:`~oloproof_nb._config.imports.methods_elsewhere`), is defined in no file — typed into a notebook
        cell, code whose edits no file would show; such a system is never cached. A method assigned from another
        file counts by that file.

    Notes
    -----
    A system spread over several files or packages defines ``fingerprint()`` to
    cover them (e.g. a digest of its package folder, or a git commit): the
    replay cache keys on it, and ``--resume`` refuses a run whose fingerprint changed.
    """
    method = _call(lambda: getattr(instance, "fingerprint", None), "reading the system's fingerprint", timeout_s)
    extra = None
    if callable(method):
        extra = _call(method, "system.fingerprint()", timeout_s)
        if not isinstance(extra, str):
            raise OloproofError(f"system.fingerprint() returned {type(extra).__name__}; it must return a str")
    classes = user_classes(instance)
    # a method assigned from another module runs in the class's place: a notebook cell's (RefundDesk.act = act) kept
    # the class file's fingerprint, and the patched desk took the cached replays of the desk it replaced
    elsewhere = methods_elsewhere(classes)
    if extra is None and (elsewhere is None or any(class_source(c) is None for c in classes)):
        return None  # a class or method defined in no file (a notebook cell): its code cannot be told from an edit
    methods = elsewhere or []
    key = (id(target), *map(id, classes), *map(id, methods))
    if known is not None and key in known:
        files = known[key][1]
    else:
        files = code_digests(root, spec, target, classes, methods)
        if known is not None:
            known[key] = ((target, *classes, *methods), files)
    if not files and extra is None:
        return None
    # which of the files' classes or factories is the system: two classes of one file are two systems (a
    # subclass that escalates was judged by its parent's cached replays)
    names = sorted({_qualified(target), *(_qualified(c) for c in classes)})
    return digest({"schema": CODE_SCHEMA, "files": files, "fingerprint": extra, "system": names})


def identity_of(instance: Any, target: Any, *, root: Path | None, spec: str | None,
                timeout_s: float | None, known: KnownCode | None = None) -> tuple[str | None, str | None]:
    """``(version, code fingerprint)`` of a built system (:func:`version_of`, :func:`code_fingerprint`, given
    ``known``): what a run records of its system, and what every instance a worker builds for the run must match.
    Its sandbox's methods are read first (:func:`_read_sandbox`)."""
    version = version_of(instance, timeout_s)
    _read_sandbox(instance, timeout_s)
    return version, code_fingerprint(instance, target, root=root, spec=spec, timeout_s=timeout_s, known=known)


#: The methods of the system the sandbox routine and the outcome checks look up by name, each of them optional.
_SANDBOX_METHODS = ("reset", "snapshot", "observe")


def _read_sandbox(instance: Any, timeout_s: float | None) -> None:
    """Read the instance's ``reset``, ``snapshot`` and ``observe`` once, as it is built, each under the timeout: a
    property of the user's that raises (or a ``__getattr__`` that raises for one of them) is the system's error in one
    line naming it, as its ``version`` is (``reading the system's snapshot raised RuntimeError: …``); read first by a
    case, it was an internal error of oloproof_nb (exit 2, a traceback file). One that is missing
    (``AttributeError``) is a sandbox without it."""
    for name in _SANDBOX_METHODS:
        _call(functools.partial(getattr, instance, name, None), f"reading the system's {name}", timeout_s)


class OtherSystem(OloproofError):
    """An instance built for a run gives another version or code fingerprint than the run's (:func:`build_checked`);
    its text says which and both values (``has another version than the run's ('v2' vs 'v1')``)."""


def build_checked(factory: Callable[[], Any], target: Any, wanted: tuple[str | None, str | None], *,
                  root: Path | None, spec: str | None, timeout_s: float | None, known: KnownCode | None = None) -> Any:
    """A new instance from ``factory`` whose :func:`identity_of` is ``wanted``, the run's ``(version, code
    fingerprint)``; else it is released (:func:`release`) and :class:`OtherSystem` raised.

    Every instance a run builds after its first is checked so (a worker's, one replacing an instance a case left
    stale, one a worker process or an executor's worker builds): the run records one version and one code
    fingerprint, and none of its cases runs on an instance that gives others (a version read from a deployment
    that changed during the run, code edited before a worker process imported it). ``known``: the file digests the
    run took in this process (:func:`code_fingerprint`), for an instance of the classes the first one had.
    """
    built = [build(factory, timeout_s)]  # the only reference: released here when the instance is refused
    theirs = read_or_release(built, timeout_s,
                             lambda instance: identity_of(instance, target, root=root, spec=spec, timeout_s=timeout_s,
                                                          known=known))
    if theirs != wanted:
        release(built, timeout_s)
        raise OtherSystem(other_identity(theirs, wanted))
    return built.pop()


def read_or_release(built: list[Any], timeout_s: float | None, read: Callable[[Any], T]) -> T:
    """``read(built[0])`` (what identifies a new instance: its version, its fingerprints); when that raises
    :class:`OloproofError`, the instance is released (:func:`release`) before the error goes on.

    The error's traceback (``read``'s frames) and its context (the user's error from the instance's own ``version``
    property or ``fingerprint()``) hold the instance: they are cut first, or the release drops no last reference
    (2 instances built, 1 released while a notebook kept the error).
    """
    try:
        return read(built[0])
    except OloproofError as exc:
        exc.__traceback__ = exc.__context__ = exc.__cause__ = None
        release(built, timeout_s)
        raise exc from None


def other_identity(theirs: tuple[str | None, str | None], wanted: tuple[str | None, str | None]) -> str:
    """How an instance's ``(version, code fingerprint)`` differs from the run's, quoting the two values of the one
    that differs: ``has another version than the run's ('v2' vs 'v1')`` (:class:`OtherSystem`, and a worker
    process's instance refused in the run's process); a value not given is ``none`` (a quoted ``'None'`` is a
    version of that text).

    Examples
    --------
    >>> other_identity((None, "f"), ("v1", "f")), other_identity(("v1", "a"), ("v1", None))
    ("has another version than the run's (none vs 'v1')", "has another code fingerprint than the run's ('a' vs none)")
    """
    differs = 0 if theirs[0] != wanted[0] else 1
    said = [quote(value) if value is not None else "none" for value in (theirs[differs], wanted[differs])]
    return f"has another {('version', 'code fingerprint')[differs]} than the run's ({said[0]} vs {said[1]})"


def replay_fingerprint(instance: Any, target: Any, fingerprint: str | None) -> str | None:
    """What keys the replay cache: the system's code fingerprint and the settings it was built with, or None
    (never cached) when the system has no code fingerprint.

    The code fingerprint covers files, not the values a system is built with: ``system=Desk(careful=False)``
    after ``system=Desk(careful=True)`` (or the suite's factory ``Desk(careful=os.environ[...])``) took the
    careful desk's cached fault replays — both PASS, the careless one FAILs live. So the key adds the built
    instance's attributes named as its constructor's parameters (``self.careful`` or ``self._careful`` for
    ``careful``; what they hold, :func:`_settings`) and the arguments of a ``functools.partial`` it was built by.
    Other attributes are left out: an id or a clock a system stamps on each instance would make every replay
    live. A system that defines ``fingerprint()`` is keyed by that alone: the user's word that it changes with
    the code and its settings.

    Parameters
    ----------
    instance : object
        A system just built from ``target`` (its ``__dict__`` is read; no method or property of it is called).
    target : object
        What the run builds systems from: a class, a factory or an instance.
    fingerprint : str or None
        The system's :func:`code_fingerprint`.

    Returns
    -------
    str or None
        ``fingerprint`` itself when the system defines ``fingerprint()`` or has neither such an attribute nor a
        partial (the key it had before, so existing entries stay valid); else sha256(canonical_json({"code":
        fingerprint, "settings": [[name, value] of each such attribute], "partial": [each partial's function,
        args and keywords]})).

    Notes
    -----
    A setting kept under another name (``self.policy = Policy(strict)``, ``self.options = kwargs``), or read
    from an environment variable or a file into another attribute, is not seen: define ``fingerprint()``.

    Examples
    --------
    >>> class Desk:
    ...     def __init__(self, careful=True):
    ...         self.careful, self.session = careful, object()
    >>> replay_fingerprint(Desk(), Desk, "f" * 64) == replay_fingerprint(Desk(), Desk, "f" * 64)   # session left out
    True
    >>> replay_fingerprint(Desk(), Desk, "f" * 64) == replay_fingerprint(Desk(careful=False), Desk, "f" * 64)
    False
    """
    if fingerprint is None:
        return None
    try:
        vouched = callable(getattr(instance, "fingerprint", None))
    except Exception:  # noqa: BLE001 - a property of the user's that raises: not vouched for
        vouched = False
    if vouched:
        return fingerprint
    budget = _Reading(_folders_read(instance))
    partials = [_settings(layer, budget) for layer in code_layers(target) if isinstance(layer, functools.partial)]
    attributes = sorted(_constructor_attributes(instance), key=lambda kv: not isinstance(kv[1], _PLAIN))  # plain first
    settings = [[name, _settings(value, budget)] for name, value in attributes]
    if not settings and not partials:  # built with no settings: the key it had, so existing entries stay valid
        return fingerprint
    return _settings_digest({"code": fingerprint, "settings": settings, "partial": partials})


def _settings_digest(picture: Any) -> str:
    """:func:`~.._core.canonical.digest` of a replay key's ``picture``, a lone surrogate in its text taken as its own
    code point (``surrogatepass``; text that is UTF-8 gives the digest it had). A path Python read from a name that is
    not UTF-8 (``os.listdir`` of a Latin-1 tool's ``caf\\xe9.txt``) holds one, as a setting or in a fresh folder:
    the digest raised ``UnicodeEncodeError``, for every instance built with it."""
    return hashlib.sha256(canonical_json(picture).encode("utf-8", "surrogatepass")).hexdigest()


class ReplayPrints:
    """What keys the replays of each instance a run builds: its own :func:`replay_fingerprint`, read as it is built
    and checked (:meth:`note`), never the first instance's.

    A factory may build instances with other settings (``RefundDesk(careful=...)`` from a setting read at each
    build): keyed by the first one's, the replays a careful instance made were stored under the careless first
    one's key, and a later run of careless instances only took them from the cache (17 of 38 fault replays
    passed, cached; 0 of 38 live). Instances are told apart by identity: by a weak reference, or by ``id`` for
    one that takes none (every instance of the run is noted as it is built, so an ``id`` a released one had is
    noted again before it is used). Thread-safe.

    Parameters
    ----------
    target : object
        What the run builds systems from.
    fingerprint : str or None
        The run's :func:`code_fingerprint` (every instance is checked against it).
    """

    def __init__(self, target: Any, fingerprint: str | None) -> None:
        self._target, self._fingerprint = target, fingerprint
        self._noted: dict[int, tuple[Callable[[], Any] | None, str | None]] = {}
        self._lock = threading.Lock()

    def note(self, instance: Any) -> Any:
        """Read what keys ``instance``'s replays (its settings as built) and return the instance."""
        keyed = replay_fingerprint(instance, self._target, self._fingerprint)
        try:
            ref: Callable[[], Any] | None = weakref.ref(instance)
        except TypeError:  # no weak references to it: told by its id, noted again whenever one is built
            ref = None
        with self._lock:
            self._noted = {key: (r, p) for key, (r, p) in self._noted.items() if r is None or r() is not None}
            self._noted[id(instance)] = (ref, keyed)
        return instance

    def of(self, instance: Any) -> str | None:
        """What keys ``instance``'s replays: as noted when it was built, else read now."""
        with self._lock:
            ref, keyed = self._noted.get(id(instance), (None, None))
            noted = id(instance) in self._noted and (ref is None or ref() is instance)
        return keyed if noted else replay_fingerprint(instance, self._target, self._fingerprint)


def _constructor_attributes(instance: Any) -> list[tuple[str, Any]]:
    """The instance's attributes named as a parameter of its class's ``__init__`` (``name`` or ``_name``)."""
    attributes = _attributes(instance)
    if not attributes:
        return []
    try:
        parameters = inspect.signature(type(instance).__init__).parameters
    except (TypeError, ValueError):  # a constructor written in C, or one inspect cannot read
        return []
    found = []
    for name, parameter in parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD) or name == "self":
            continue
        found += [(attr, attributes[attr]) for attr in (name, f"_{name}") if attr in attributes]
    return found


#: How many values :func:`_settings` reads at most (a system holding a large table is not read whole).
_SETTINGS_NODES = 10_000
_SETTINGS_DEPTH = 6
_PLAIN = (str, int, float, type(None))
#: Values without attributes of their own that their ``repr`` gives whole (a number, a path, a date, an id).
_BY_REPR = (complex, decimal.Decimal, fractions.Fraction, pathlib.PurePath, datetime.date, datetime.time,
            datetime.timedelta, uuid.UUID, range)


class _Reading:
    """What :func:`_settings` may still read (``left`` values), and what each fresh temporary folder of the instance
    held when this process first read it (``folders``, :func:`_folders_read`; None: read each time)."""

    def __init__(self, folders: dict[str, str | None] | None = None) -> None:
        self.left, self.folders = _SETTINGS_NODES, folders


#: What each fresh temporary folder an instance holds a path in held when this process first read it for the
#: instance (:func:`_in_fresh_folder`), by the instance's ``id`` with a weak reference to it.
_FOLDERS_READ: dict[int, tuple[Callable[[], Any], dict[str, str | None]]] = {}
_FOLDERS_READ_LOCK = threading.Lock()


def _folders_read(instance: Any) -> dict[str, str | None] | None:
    """What ``instance``'s fresh temporary folders held when this process first read them (filled in as they are
    read), or None for an instance that takes no weak reference (its folders are read each time).

    A folder is read as the instance is built, or, for an instance given to the run, as its first run starts; what the
    system writes there later (its database, a journal) is its sandbox, not a setting: read again, an instance given
    to two runs was "built with other settings" in the second (its resume refused, its two runs pooled two systems,
    no replay from the cache)."""
    try:
        ref = weakref.ref(instance)
    except TypeError:
        return None
    with _FOLDERS_READ_LOCK:
        kept = _FOLDERS_READ.get(id(instance))
        if kept is not None and kept[0]() is instance:
            return kept[1]
        for key in [key for key, (r, _) in _FOLDERS_READ.items() if r() is None]:
            del _FOLDERS_READ[key]
        folders: dict[str, str | None] = {}
        _FOLDERS_READ[id(instance)] = (ref, folders)
        return folders


def _settings(value: Any, budget: _Reading, depth: int = 0) -> Any:
    """A JSON picture of ``value`` for the replay key: text, numbers, booleans and None as they are (JSON writes a
    float by its ``repr``; as text, ``0.5`` and ``"0.5"`` shared their replays), lists, tuples and dicts item by item
    (a dict's plain values first), a set sorted, bytes and a NumPy array or pandas object by the digest of their
    content, a class or function by its name (a function with its line, defaults and closure), a bound method or
    partial by what it binds, a number, path, date or UUID by its ``repr``, an object by its class and attributes
    (``__dict__`` or ``__slots__``), anything else by its type; read item by item to :data:`_SETTINGS_DEPTH` levels
    and :data:`_SETTINGS_NODES` values, what lies beyond by the digest of its text (:func:`_beyond`). A class is
    named by :func:`~.._config.imports.portable_name` (a suite's module by its file), so a moved suite keeps its
    keys."""
    budget.left -= 1
    if budget.left < 0 or depth > _SETTINGS_DEPTH:
        return _beyond(value)
    if isinstance(value, (list, tuple, set, frozenset, dict)) and len(value) > budget.left:
        return _beyond(value)
    if isinstance(value, (str, pathlib.PurePath)):
        fresh = _in_fresh_folder(value, budget.folders)
        if fresh is not None:
            return {"class": portable_name(type(value)), "fresh_folder": fresh}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value  # never as text: 0.5 (JSON writes its repr) and "0.5" from the environment are two settings
    if isinstance(value, (list, tuple)):
        return [_settings(v, budget, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):  # in an order of their own: a set's is not the same from run to run
        return sorted((_settings(v, budget, depth + 1) for v in value), key=repr)
    if isinstance(value, dict):  # plain values first: a setting after a large table is read before the table
        items = sorted(value.items(), key=lambda kv: not isinstance(kv[1], _PLAIN))
        return [[_settings(k, budget, depth + 1), _settings(v, budget, depth + 1)] for k, v in items]
    kind = portable_name(type(value))
    if isinstance(value, (bytes, bytearray)):
        return {"class": kind, "sha256": hashlib.sha256(value).hexdigest()}
    if isinstance(value, type):  # a class given as a setting (a policy class): which one
        return {"class": kind, "name": portable_name(value)}
    if isinstance(value, _BY_REPR):
        return {"class": kind, "repr": repr(value)}
    table = _table_content(value)
    if table is not None:
        return {"class": kind, **table}
    if callable(value):
        called = _callable_settings(value, budget, depth)
        if called is not None:
            return {"class": kind, **called}
    attributes = _attributes(value)
    if attributes or hasattr(value, "__dict__"):
        return {"class": kind, "attributes": _settings(attributes, budget, depth + 1)}
    return {"class": kind}


#: The letters ``tempfile.mkdtemp`` ends a folder's name with: 8 of them (before any suffix).
_FRESH_NAME = re.compile(r"(.*)[a-z0-9_]{8}", re.DOTALL)


def _in_fresh_folder(value: str | pathlib.PurePath, read: dict[str, str | None] | None = None) -> list[str] | None:
    """A path in a folder ``tempfile.mkdtemp`` made for the instance in the temporary folder, as the folder's prefix
    and the parts below it (its random letters left out); None for any other value.

    ``self.db_path = db_path or tempfile.mkdtemp()`` gives every instance a folder of its own, empty when made: its
    random name decides nothing a replay does, and keyed by it, no replay of such a system ever came from the cache
    (38 of 38 fault replays live on a second run). The folder must be one ``mkdtemp`` makes: right in
    :func:`tempfile.gettempdir`, its name ending in 8 of ``mkdtemp``'s letters, a folder (not a link) of mode 0o700
    owned by this process's user. What it holds keys in place of its name (:func:`_folder_content`): a folder the
    user filled before building the instance (a careful policy in one, a careless one in the other), or one the user
    named and filled (``/tmp/desk_run_001`` and ``/tmp/desk_run_002`` under umask 077), gave each instance the
    other's replays; a folder holding more than a key reads is keyed by its whole path. ``read``: what each folder
    held when first read for the instance (:func:`_folders_read`), the content taken from it, a folder not in it read
    and added."""
    text = os.fspath(value)
    base = tempfile.gettempdir()
    if not text.startswith(base) or "\0" in text:
        return None
    path, root = pathlib.Path(text), pathlib.Path(base)
    if path.parts[:len(root.parts)] != root.parts or len(path.parts) <= len(root.parts):
        return None
    name = path.parts[len(root.parts)]
    found = _FRESH_NAME.fullmatch(name)
    if found is None or name in (".", ".."):
        return None
    getuid = getattr(os, "getuid", None)  # none on Windows: no owner to compare, so no folder is taken as fresh
    try:
        st = os.lstat(root / name)
    except (OSError, ValueError):
        return None
    if getuid is None or not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o700 or st.st_uid != getuid():
        return None
    folder = os.fspath(root / name)
    if read is None:
        content = _folder_content(root / name)
    elif folder in read:
        content = read[folder]
    else:  # the first read kept, should two threads read the folder at once
        content = read.setdefault(folder, _folder_content(root / name))
    return None if content is None else [found.group(1), content, *path.parts[len(root.parts) + 1:]]


#: The most a fresh folder's content is read for its key (:func:`_folder_content`): entries, and bytes of its files.
_FRESH_ENTRIES = 256
_FRESH_BYTES = 1 << 20


def _folder_content(folder: pathlib.Path) -> str | None:
    """SHA-256 of what ``folder`` holds (each entry's path below it, its kind, a file's bytes, a link's target), links
    not followed; None when it holds more than :data:`_FRESH_ENTRIES` entries or :data:`_FRESH_BYTES` bytes, or
    cannot be read."""
    found: list[list[str]] = []
    size = 0
    try:
        for top, folders, files in os.walk(folder, onerror=_raise):
            for entry in sorted(folders) + sorted(files):
                path = pathlib.Path(top, entry)
                st = os.lstat(path)
                if len(found) >= _FRESH_ENTRIES or size + st.st_size > _FRESH_BYTES:
                    return None
                relative = path.relative_to(folder).as_posix()
                if stat.S_ISREG(st.st_mode):
                    size += st.st_size
                    with open(path, "rb") as file:  # no more than was measured, should it grow
                        found.append([relative, "file", hashlib.sha256(file.read(st.st_size)).hexdigest()])
                elif stat.S_ISLNK(st.st_mode):
                    found.append([relative, "link", os.readlink(path)])
                else:
                    found.append([relative, "folder" if stat.S_ISDIR(st.st_mode) else "other"])
    except (OSError, ValueError):
        return None
    return _settings_digest(sorted(found))


def _raise(exc: OSError) -> None:
    raise exc


def _beyond(value: Any) -> dict[str, Any]:
    """A value past the read limits, whole: a table by its content (:func:`_table_content`), anything else by the
    SHA-256 of its ``repr``. Two settings that differ only past the limits key two ways (cut to one mark, a table
    of 20,000 values differing in its last, or a setting seven levels deep, gave the careful desk's replays to the
    careless one); an object whose ``repr`` holds its address keys anew each run (its replays run live)."""
    table = _table_content(value)
    if table is not None:
        return {"class": portable_name(type(value)), **table}
    return {"class": portable_name(type(value)), "repr_sha256": hashlib.sha256(repr(value).encode()).hexdigest()}


def _attributes(value: Any) -> dict[str, Any]:
    """An object's attributes: its ``__dict__``, else those its classes' ``__slots__`` name (a slotted dataclass)."""
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        return attributes
    names = [n for c in type(value).__mro__ for n in getattr(c, "__slots__", ()) if isinstance(n, str)]
    return {n: getattr(value, n) for n in dict.fromkeys(names) if n not in ("__weakref__", "__dict__")
            and hasattr(value, n)}


def _callable_settings(value: Any, budget: _Reading, depth: int) -> dict[str, Any] | None:
    """What a function, bound method or partial given as a setting is (``lambda a: a < 100`` against ``lambda a:
    True``, ``strict`` against ``lax``): its name, line, defaults and closure, what a method or partial binds.
    None for another callable (an object with ``__call__``: pictured by its attributes)."""
    if isinstance(value, functools.partial):
        return {"func": _settings(value.func, budget, depth + 1), "args": _settings(list(value.args), budget,
                depth + 1), "keywords": _settings(dict(value.keywords), budget, depth + 1)}
    if inspect.ismethod(value):
        return {"func": _settings(value.__func__, budget, depth + 1),
                "self": _settings(value.__self__, budget, depth + 1)}
    if inspect.isfunction(value):
        cells = []
        for cell in value.__closure__ or ():
            try:
                cells.append(_settings(cell.cell_contents, budget, depth + 1))
            except ValueError:  # a cell not yet filled
                cells.append("…")
        code = value.__code__  # two lambdas on one line differ by their code
        body = hashlib.sha256(code.co_code + repr((code.co_names, [c for c in code.co_consts
                                                                   if isinstance(c, _PLAIN)])).encode()).hexdigest()
        return {"name": portable_name(value), "line": code.co_firstlineno, "code": body,
                "defaults": _settings(list(value.__defaults__ or ()), budget, depth + 1),
                "kwdefaults": _settings(dict(value.__kwdefaults__ or {}), budget, depth + 1), "closure": cells}
    if inspect.isroutine(value):  # a builtin (``len``) or a method of a builtin object (``{}.get``)
        bound = getattr(value, "__self__", None)
        return {"name": portable_name(value),
                "self": None if inspect.ismodule(bound) else _settings(bound, budget, depth + 1)}
    return None


def _table_content(value: Any) -> dict[str, Any] | None:
    """A NumPy array or scalar, or a pandas frame, series or index, by its shape, types and the digest of its
    content (its items, for an array of objects); None for anything else. Neither library is imported here."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, (pandas.DataFrame, pandas.Series, pandas.Index)):
        columns = list(value.columns) if isinstance(value, pandas.DataFrame) else [value.name]
        dtypes = value.dtypes if isinstance(value, pandas.DataFrame) else [value.dtype]
        shown = {"shape": list(value.shape), "columns": [repr(c) for c in columns], "dtypes": [str(d) for d in dtypes]}
        try:
            rows = pandas.util.hash_pandas_object(value, index=not isinstance(value, pandas.Index)).to_numpy()
        except TypeError:  # a cell pandas cannot hash (a list): the items themselves
            return {**shown, "items": repr(value.to_numpy().tolist())}
        return {**shown, "sha256": hashlib.sha256(rows.tobytes()).hexdigest()}
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
        if value.dtype.hasobject:  # pointers: the items themselves
            return {"dtype": str(value.dtype), "shape": list(value.shape), "items": repr(value.tolist())}
        return {"dtype": str(value.dtype), "shape": list(value.shape),
                "sha256": hashlib.sha256(numpy.ascontiguousarray(value).tobytes()).hexdigest()}
    return None


def _qualified(obj: Any) -> str:
    """The qualified name of a class or function (of an instance: its class; of a partial: its function). Not its
    module's name: the suite's modules are imported under names that depend on where the suite folder is (a moved
    copy resumes), and the files' digests already say which file."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    if not hasattr(obj, "__qualname__"):
        obj = type(obj)
    return str(getattr(obj, "__qualname__", "?"))
