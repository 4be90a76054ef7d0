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

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._config.imports import class_source, code_digests, user_classes
from .._core.canonical import digest
from ..errors import OloproofError, quote, storable
from .sandbox import failure_reason
from .timeouts import CaseTimeout, call_with_timeout, system_traceback

__all__ = ["as_factory", "build", "release", "version_of", "code_fingerprint", "CODE_SCHEMA", "NO_FINGERPRINT",
           "GIVE_FINGERPRINT"]

CODE_SCHEMA = "oloproof_code/v1"
#: Why a system records no code fingerprint (:func:`code_fingerprint` is None), for the messages that refuse it.
NO_FINGERPRINT = "the system's class is defined in no file (typed into a notebook cell) and has no fingerprint()"
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


def build(factory: Callable[[], Any], timeout_s: float | None) -> Any:
    """A system instance from ``factory``, under the timeout; one-line error when it raises, hangs or has no run()."""
    instance = _call(factory, "building the system", timeout_s)
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


def version_of(instance: Any) -> str | None:
    """The system's ``version`` as a string, or None."""
    try:
        version = getattr(instance, "version", None)
    except Exception as exc:  # noqa: BLE001 - a property of the user's that raises
        raise OloproofError(f"reading the system's version raised {failure_reason(exc)}") from None
    return None if version is None else storable(str(version))


def code_fingerprint(instance: Any, target: Any, *, root: Path | None, spec: str | None,
                     timeout_s: float | None) -> str | None:
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

    Returns
    -------
    str or None
        sha256(canonical_json({"schema", "files": sorted file digests, "fingerprint": str or None})),
        or None when the system has no ``fingerprint()`` and no file was found, or one of its own classes
        (its class and bases outside oloproof_nb) is defined in no file — typed into a notebook cell, a
        class whose edits no file would show; such a system is never cached.

    Notes
    -----
    A system spread over several files or packages defines ``fingerprint()`` to
    cover them (e.g. a digest of its package folder, or a git commit): the
    replay cache keys on it, and ``--resume`` refuses a run whose fingerprint changed.
    """
    try:
        method = getattr(instance, "fingerprint", None)
    except Exception as exc:  # noqa: BLE001 - a property of the user's that raises
        raise OloproofError(f"reading the system's fingerprint raised {failure_reason(exc)}") from None
    extra = None
    if callable(method):
        extra = _call(method, "system.fingerprint()", timeout_s)
        if not isinstance(extra, str):
            raise OloproofError(f"system.fingerprint() returned {type(extra).__name__}; it must return a str")
    classes = user_classes(instance)
    if extra is None and any(class_source(c) is None for c in classes):
        return None  # a class defined in no file (a notebook cell): its code cannot be told apart from an edit
    files = code_digests(root, spec, target, classes)
    if not files and extra is None:
        return None
    # which of the files' classes or factories is the system: two classes of one file are two systems (a
    # subclass that escalates was judged by its parent's cached replays)
    names = sorted({_qualified(target), *(_qualified(c) for c in classes)})
    return digest({"schema": CODE_SCHEMA, "files": files, "fingerprint": extra, "system": names})


def _qualified(obj: Any) -> str:
    """The qualified name of a class or function (of an instance: its class; of a partial: its function). Not its
    module's name: the suite's modules are imported under names that depend on where the suite folder is (a moved
    copy resumes), and the files' digests already say which file."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    if not hasattr(obj, "__qualname__"):
        obj = type(obj)
    return str(getattr(obj, "__qualname__", "?"))
