"""Observing promised artifacts: the system's ``observe``, the local-file observer, and validators.

Evidence built here never holds the artifact's content, its path or an HMAC
key: a crashing validator is reported by its exception's type only (a message
could quote the content or the path), a command by its program's base name.
``oloproof receipt`` verifies a contract file with :func:`verify_contract_file`.

Only regular files are observed. A locator naming a directory, a named pipe, a
device or a socket is refused before it is opened (and it is opened with
``O_NONBLOCK``, so nothing swapped in meanwhile can block); a file bigger than
``max_artifact_bytes`` is not read; reading and digesting runs under
``observe_timeout_s`` (on the one timeout mechanism, :func:`call_with_timeout`),
and a timed-out read stops at its next chunk. Each of these makes the receipt
``unverified`` with a reason saying which, never a hang.

A receipt describes one version of the file: a file whose size or modification
time moves while it is read, or that is replaced or changed while its validator
runs (the validator gets the path, not the bytes digested), is ``unverified``
too, never a digest of one file beside a validator's result for another. A
version is the file's device, inode, size, modification time and status change
time (taken from the clock on any write, rename or time set: no call on the file
sets it back), and the validator gets the real path of the file read (symbolic
links resolved before it was opened), not the locator.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from .._config.contracts import (
    COMMAND_VALIDATOR,
    DEFAULT_MAX_ARTIFACT_BYTES,
    DEFAULT_OBSERVE_TIMEOUT_S,
    load_contract_file,
)
from .._config.files import UnreadableFile, open_regular
from .._core.canonical import iso, utc_now
from .._core.case import Case
from .._core.receipts import (
    EXIT_CODE_RANGE,
    FUTURE_MTIME_TOLERANCE,
    Evidence,
    OutcomeContract,
    Receipt,
    classify_outcome,
    digest_key_from_env,
)
from .._core.scoremap import is_bool
from ..errors import ContractFileError, DigestKeyError, quote, validation_problem
from ..evaluators.outcome import unobserved_receipt
from .timeouts import CaseTimeout, call_with_timeout, system_traceback

__all__ = [
    "defer_stop",
    "EVIDENCE_SOURCE",
    "SYSTEM_OBSERVE",
    "UnobservableArtifact",
    "Validator",
    "collect_evidence",
    "locator_path",
    "observe_file",
    "shared_files",
    "promised_artifacts",
    "HeldBack",
    "MAX_WAITING",
    "OBSERVES",
    "UNOBSERVED",
    "verify_contract_file",
]

T = TypeVar("T")

#: A validator: a Python callable ``f(path) -> bool | int | None``, or a command (argv list) that gets
#: the artifact's absolute path appended as its last argument.
Validator = Callable[[Path], bool | int | None] | Sequence[str]

#: ``evidence_source`` of evidence made by :func:`observe_file`.
EVIDENCE_SOURCE = "local_file_stat"
#: ``evidence_source`` of evidence that came from the system's ``observe(artifact_id)``.
SYSTEM_OBSERVE = "system_observe"
_CHUNK = 1 << 20
#: Seconds a validator may run: :func:`observe_file`'s default, and during a run that sets no case timeout.
DEFAULT_VALIDATOR_TIMEOUT_S = 60.0


class UnobservableArtifact(ValueError):
    """Something is at the artifact's path but cannot be observed as evidence.

    ``reason`` says why without naming the path (receipts never hold a locator): not a
    regular file, bigger than ``max_artifact_bytes``, not read within ``observe_timeout_s``,
    unreadable.
    """

    def __init__(self, artifact_id: str, reason: str) -> None:
        self.artifact_id = artifact_id
        self.reason = reason
        super().__init__(f"artifact {quote(artifact_id)} {reason}")

    def of_the_artifact(self) -> str:
        """The reason as a receipt gives it: ``the artifact is a directory, not a regular file``, ``the artifact
        cannot be read: File name too long`` (a reason of the file readers starts ``cannot read:``)."""
        unreadable = "cannot read: "
        if self.reason.startswith(unreadable):
            return f"the artifact cannot be read: {self.reason[len(unreadable):]}"
        return f"the artifact {self.reason}"


# --------------------------------------------------------------------------- observing


def _version(info: os.stat_result) -> tuple[int, int, int, int, int]:
    """What identifies one version of a file: ``(device, inode, size, modification time in ns, status change
    time in ns)``. The status change time (``st_ctime``) is taken from the clock on every write, rename, link
    or time set, and no call on the file sets it back (only the clock set back could; where a kernel keeps coarse
    timestamps, two changes within one tick share it, a tick a validator's start outlasts): a file rewritten
    with its modification time put back (``os.utime``), or renamed away and back, is another version, which
    the inode, size and modification time alone would take for the same one."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _read_and_digest(path: Path, key: bytes | None, max_bytes: int, stop: threading.Event,
                     now: Callable[[], datetime]) -> tuple[Path, os.stat_result, datetime, str] | None:
    """``(the file's real path, stat, observed_at, hex digest)`` of a regular file, or None when nothing is there.

    Runs on the timeout helper thread; ``stop`` set by the caller ends the read at its next chunk. A file
    whose version (:func:`_version`) moved while it was read (still being written) is refused: the digest
    would be of no version of it. The path is resolved (symbolic links followed) once, before the file is
    opened: the file read is the one a validator is given, whatever a link on the way points to later. When
    nothing was there to resolve and a file was there to open (made meanwhile), it is resolved after it was
    read, and must name the file read: else it was replaced while it was opened.
    """
    try:
        real = Path(os.path.realpath(path, strict=True))
        # and the kernel's lookup of the path names it: realpath takes a file for a folder before "..", so
        # "report.json/../draft.json" (nothing there: not a directory) was the draft, verified on its digest
        here, there = os.stat(path), os.stat(real)
        resolved = (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
    except (OSError, ValueError, RuntimeError):  # nothing there, a loop, a NUL byte, a pipe's /proc link: the
        resolved = False  # path is opened as it is, and what opening it says is the receipt's
    if not resolved:
        real = path
    try:
        handle, info = open_regular(real)
    except UnreadableFile as exc:
        if exc.missing or exc.dangling:  # a link to nothing too: no artifact observed (``missing``)
            return None
        raise
    with handle:
        if info.st_size > max_bytes:
            raise UnreadableFile(f"is {info.st_size} bytes, more than max_artifact_bytes={max_bytes}")
        observed_at = now()
        hasher = hmac.new(key, digestmod=hashlib.sha256) if key is not None else hashlib.sha256()
        total = 0
        while chunk := handle.read(_CHUNK):
            if stop.is_set():
                raise UnreadableFile("reading was abandoned")
            total += len(chunk)
            if total > max_bytes:  # grew while read, or a kernel file that reports no size
                raise UnreadableFile(f"holds more than max_artifact_bytes={max_bytes} bytes")
            hasher.update(chunk)
        try:
            after = os.fstat(handle.fileno())
        except OSError as exc:
            raise UnreadableFile(f"cannot read: {exc.strerror or exc}") from None
    # as many bytes read as the file held when opened: a file cut and put back within one tick of the coarse
    # clock its times come from keeps its version, and a read that met the cut ended early, a digest of bytes
    # the file never held as a whole ("hash_mismatch", or "sha256 matches" for the first part of a file with
    # more appended); a kernel file reports no size
    if _version(after) != _version(info) or (info.st_size and total != info.st_size):
        raise UnreadableFile("changed while it was read (it is still being written?)")
    if not resolved:  # nothing was there to resolve, and a file was there to open: made meanwhile, maybe as a
        # link, which a validator given the locator would follow to another file: the real path now, and it
        # must name the file read
        try:
            real = Path(os.path.realpath(path, strict=True))
            named: os.stat_result | None = os.stat(real)
        except (OSError, ValueError, RuntimeError):
            named = None
        if named is None or (named.st_dev, named.st_ino) != (info.st_dev, info.st_ino):
            raise UnreadableFile("was replaced while it was opened (it is still being written?)")
    return real, info, observed_at, hasher.hexdigest()


def observe_file(
    contract: OutcomeContract,
    path: Path | str,
    *,
    validators: Mapping[str, Validator] | None = None,
    validator_timeout_s: float = DEFAULT_VALIDATOR_TIMEOUT_S,
    validator_cwd: Path | str | None = None,
    environ: Mapping[str, str] | None = None,
    now: Callable[[], datetime] | None = None,
    observe_timeout_s: float = DEFAULT_OBSERVE_TIMEOUT_S,
    max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES,
) -> Evidence | None:
    """Observe a local file as evidence for ``contract``.

    Parameters
    ----------
    contract : OutcomeContract
        The promise; its ``digest_key_env`` selects keyed digests, its ``validator`` names
        the entry of ``validators`` to run.
    path : Path or str
        The artifact's file.
    validators : Mapping[str, Validator], optional
        Registered validators by name: a callable ``f(path) -> bool | int | None`` (``True``,
        ``0`` or ``None`` pass as exit 0, ``False`` is exit 1, an int is that exit code (one beyond 64 bits
        is none: ``unverified``); NumPy's bools and integers count as bools and ints), or a
        command (list of argv strings) run with the artifact's absolute path appended. Either is
        given the real path of the file read (symbolic links resolved before it was opened).
    validator_timeout_s : float
        Seconds a validator may run. A timed-out callable keeps running in a daemon thread
        (Python cannot stop it); a timed-out command is killed with its whole process group
        (it runs in a session of its own, so the children it forked go too).
    validator_cwd : Path or str, optional
        Working directory of command validators (default: the current one).
    environ : Mapping[str, str], optional
        The environment (default ``None``: ``os.environ`` when called; a default of ``os.environ`` itself would
        show every variable, the key's too, in ``help()`` and a notebook's ``?``). ``digest_key_env`` is looked
        up in it, and a command validator gets it *without* the ``digest_key_env`` variable: the key digests, it
        is never handed on. A variable it holds is the validator's to read: where other contracts name other key
        variables, pass it without them (the validator gets ``environ``, never this process's environment).
    now : callable, optional
        Returns the (timezone-aware) observation time; default ``datetime.now(timezone.utc)``.
    observe_timeout_s : float
        Seconds opening, reading and digesting the file may take (default 60). The read runs on
        the timeout helper thread and stops at its next 1 MiB chunk once the time is up.
    max_artifact_bytes : int
        Largest file read and digested (default 1 GiB); a bigger one is not read at all.

    Returns
    -------
    Evidence or None
        ``None`` when the file does not exist. Otherwise ``modified_at`` from the file's
        mtime (UTC), ``sha256`` the plain or keyed digest of its bytes, and the validator's
        exit code, or ``validator_error`` saying why there is none (not registered, crashed,
        timed out), and ``evidence_source="local_file_stat"``.

    Raises
    ------
    DigestKeyError
        ``digest_key_env`` is set and the variable is unset or empty (checked first, so a
        misconfigured key is reported even when the file is missing).
    UnobservableArtifact
        (a ``ValueError``) ``path`` is there but is not a regular file (a directory, a named
        pipe, a device, a socket), is bigger than ``max_artifact_bytes``, was not read within
        ``observe_timeout_s``, cannot be read, changed while it was read (its device, inode, size,
        modification time or status change time moved), has a modification time outside the years
        1–9999, or was replaced or changed while its validator ran (the validator is given a path, so
        ``path`` must still name the file digested: same device, inode, size, modification time and
        status change time); its ``reason`` never names the path.
    ValueError
        A non-positive timeout or size.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import hashlib, tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> report = Path(tmp.name, "report.csv")
    >>> _ = report.write_bytes(b"month,revenue")
    >>> digest = hashlib.sha256(b"month,revenue").hexdigest()
    >>> contract = op.OutcomeContract(artifact_id="report", expected_sha256=digest)
    >>> ev = op.observe_file(contract, report)
    >>> ev.sha256 == contract.expected_sha256, ev.evidence_source
    (True, 'local_file_stat')
    >>> op.observe_file(contract, Path(tmp.name, "absent.csv")) is None
    True
    >>> tmp.cleanup()
    """
    for name, value in (("validator_timeout_s", validator_timeout_s), ("observe_timeout_s", observe_timeout_s)):
        if not value > 0:
            raise ValueError(f"{name} must be a positive number of seconds, got {quote(value)}")
    if isinstance(max_artifact_bytes, bool) or not isinstance(max_artifact_bytes, int) or max_artifact_bytes < 1:
        raise ValueError(f"max_artifact_bytes must be a positive whole number, got {quote(max_artifact_bytes)}")
    environ = os.environ if environ is None else environ
    key = digest_key_from_env(contract.digest_key_env, environ) if contract.digest_key_env else None
    path = Path(path)
    stop = threading.Event()
    try:
        read = call_with_timeout(lambda: _read_and_digest(path, key, max_artifact_bytes, stop, now or utc_now),
                                 observe_timeout_s, on_system=False)
    except CaseTimeout:
        stop.set()
        raise UnobservableArtifact(contract.artifact_id,
                                   f"was not read within observe_timeout_s={observe_timeout_s:g}s") from None
    except UnreadableFile as exc:
        raise UnobservableArtifact(contract.artifact_id, str(exc)) from None
    if read is None:
        return None
    real, info, observed_at, digest = read
    try:
        modified_at = _from_ns(info.st_mtime_ns)
    except (ValueError, OverflowError, OSError):  # datetime holds the years 1-9999; a file system may hold more
        raise UnobservableArtifact(contract.artifact_id,
                                   "has a modification time outside the years 1–9999") from None
    exit_code, error = None, None
    if contract.validator is not None:
        # the file read, by its real path: given the locator, a symbolic link on its way pointed elsewhere while
        # the validator ran (and back after) would make a receipt of one file with another's check
        exit_code, error = _run_named_validator(
            contract, real, validators or {}, validator_timeout_s, validator_cwd, environ
        )
        # the validator was given a path, not the file read: the locator must still name that file, unchanged
        try:
            still = _version(os.stat(path)) == _version(info)
        except (OSError, ValueError):
            still = False
        if not still:
            raise UnobservableArtifact(contract.artifact_id, "was replaced or changed while its validator ran: "
                                       "the digest and the validator's result are not of one file")
    return Evidence(
        artifact_id=contract.artifact_id,
        observed_at=observed_at,
        modified_at=modified_at,
        sha256=digest,
        digest_kind=contract.digest_kind,
        validator=contract.validator,
        validator_exit_code=exit_code,
        validator_error=error,
        evidence_source=EVIDENCE_SOURCE,
    )


def _from_ns(ns: int) -> datetime:
    seconds, rest = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, timezone.utc) + timedelta(microseconds=rest // 1000)


def _run_named_validator(
    contract: OutcomeContract,
    path: Path,
    validators: Mapping[str, Validator],
    timeout_s: float,
    cwd: Path | str | None,
    environ: Mapping[str, str],
) -> tuple[int | None, str | None]:
    """Run the validator ``contract.validator`` names on ``path``: ``(exit code, None)``, or ``(None, why)`` when
    it is not registered or gave no exit code. A command gets ``environ`` without the digest key's variable."""
    name = str(contract.validator)
    spec = validators.get(name)
    if spec is None:
        known = ", ".join(sorted(validators)) or "none"
        return None, f"validator {name} is not registered (registered: {known})"
    if callable(spec):
        code, error = _run_callable(spec, path, name, timeout_s)
    elif (
        isinstance(spec, Sequence)
        and not isinstance(spec, str)
        and spec
        and all(isinstance(arg, str) and arg for arg in spec)
    ):
        # the environment the key was read from, not this process's: a key the caller left out of it (another
        # contract's) is never handed on
        env = {k: v for k, v in environ.items() if k != contract.digest_key_env}
        code, error = _run_command(list(spec), path, name, timeout_s, cwd, env)
    else:
        raise TypeError(
            f"validator {quote(name)} must be a callable or a non-empty list of argv strings, got {quote(spec)}"
        )
    return code, error


def _run_callable(
    fn: Callable[[Path], Any], path: Path, name: str, timeout_s: float
) -> tuple[int | None, str | None]:
    """Call a Python validator under ``timeout_s``: ``(exit code, None)`` from what it returned (True or None 0,
    False 1, an integer itself) or the code of a ``SystemExit`` it raised; else ``(None, why)``, naming only the
    type of what it raised or returned (a message could quote the artifact), or an integer outside
    :data:`~oloproof_nb._core.receipts.EXIT_CODE_RANGE`."""
    try:
        result = call_with_timeout(lambda: fn(path), timeout_s, on_system=False)
    except CaseTimeout:
        return None, f"validator {name} timed out after {timeout_s:g}s"
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            return None, f"validator {name} raised SystemExit"
        result = int(exc.code or 0)  # sys.exit(False) is exit 0, as the interpreter exits; checked below as a return
    except BaseException as exc:  # noqa: B036 - report any crash as evidence
        if isinstance(exc, KeyboardInterrupt) and system_traceback(exc) is None:
            raise  # the user's Ctrl-C while the run waited for it (not the validator's own): the run stops
        # the type only: its message could quote the artifact's content
        return None, f"validator {name} raised {type(exc).__name__}"
    if result is None or is_bool(result):
        return (0 if result is None or bool(result) else 1), None  # NumPy's bool: what ``(df.x > 0).all()`` returns
    np = sys.modules.get("numpy")  # a NumPy value comes from a process that imported NumPy: the hook's path does not
    if isinstance(result, int) or (np is not None and isinstance(result, np.integer)):
        low, high = EXIT_CODE_RANGE
        if not low <= int(result) <= high:  # no receipt holds it (its frame's column is Int64): no exit code either
            return None, f"validator {name} returned an integer outside the 64-bit range of exit codes"
        return int(result), None
    return None, f"validator {name} returned {type(result).__name__}; expected bool, int or None"


def _exited(proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Wait until ``proc`` has exited, left unreaped (so its pid, its group's id, is not reused).

    Raises :class:`subprocess.TimeoutExpired` after ``timeout_s``, ``proc`` still unreaped, and
    :class:`ChildProcessError` when the kernel reaped it already (the host program ignores SIGCHLD: its exit
    status is lost). Where ``os.waitid`` does not exist (Windows; macOS before Python 3.13) it waits and
    reaps.
    """
    if not hasattr(os, "waitid"):
        proc.wait(timeout=timeout_s)
        return
    deadline = time.monotonic() + timeout_s
    pause = 0.001
    while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.01)


def _end_group(proc: subprocess.Popen[bytes]) -> int:
    """Kill what is left of ``proc``'s process group, then reap ``proc``: its return code.

    Unreaped, ``proc``'s pid — the group's id — cannot have been given to another process; reaped, the id
    stays the group's while any member is alive (POSIX does not reuse a process group's id), and an empty
    group is not there to kill. Children it forked into its group (still running after it exited) go with
    it. Without process groups (Windows) it kills ``proc`` alone.
    """
    if hasattr(os, "killpg"):
        # a second stop (Ctrl-C twice; SIGTERM after it) raised before the kill left the group running: it waits
        _STARTING.active, _STARTING.pending = True, None
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        finally:
            stop = _take_stop()
        if stop is not None:
            proc.wait()  # killed: reaped at once
            raise stop
    else:
        proc.kill()  # nothing once it is reaped (Popen knows its return code)
    return proc.wait()


class _Starting(threading.local):
    """Whether this thread is starting a command validator, and the stop a signal handler deferred meanwhile."""

    active = False
    pending: BaseException | None = None


_STARTING = _Starting()


def defer_stop(stop: BaseException) -> bool:
    """For a signal handler that stops the process by raising ``stop``: hold it (True) while this thread is starting a
    command validator, to be raised once the command's process group is known and can be killed with it (and while
    it kills that group: :func:`_end_group`).

    Raised inside ``subprocess.Popen`` after the child was made (a signal that arrives while the parent reads the
    child's exec status: a loaded machine leaves that window open for as long as the child takes to start), it left
    the validator running after ``oloproof receipt`` exited 2 (a hook test failed so under load)."""
    if not _STARTING.active:
        return False
    _STARTING.pending = stop
    return True


def _take_stop() -> BaseException | None:
    """End this thread's start of a command: the stop deferred meanwhile, if any (a signal from now on raises)."""
    _STARTING.active = False
    stop, _STARTING.pending = _STARTING.pending, None
    return stop


def _run_command(
    argv: list[str], path: Path, name: str, timeout_s: float, cwd: Path | str | None, env: dict[str, str]
) -> tuple[int | None, str | None]:
    """Run a command validator in a session of its own; on timeout kill its whole process group."""
    program = os.path.basename(argv[0])
    if hasattr(signal, "SIGCHLD") and signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        # the kernel reaps a child at once then, and Popen reports its status as 0: a failing validator would pass
        return None, (f"validator {name} ({program}) not run: this process ignores SIGCHLD, so a command's exit "
                      "status cannot be read")
    _STARTING.active, _STARTING.pending = True, None  # a stop that arrives now waits for the group (defer_stop)
    try:
        proc = subprocess.Popen(
            [*argv, os.path.abspath(path)],  # the real path of the file read: no link is followed again
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        stop = _take_stop()
        if stop is not None:
            raise stop from None
        if isinstance(exc, FileNotFoundError):
            return None, f"validator {name}: command {quote(program)} not found"
        if isinstance(exc, PermissionError):
            return None, f"validator {name}: command {quote(program)} is not executable"
        return None, f"validator {name}: command {quote(program)} could not start: {exc.strerror}"
    except BaseException:
        _take_stop()
        raise
    try:
        stop = _take_stop()  # within the try: a stop deferred, or one arriving from now on, kills the group below
        if stop is not None:
            raise stop
        _exited(proc, timeout_s)
    except ChildProcessError:  # SIGCHLD set to be ignored while it ran: its status is gone
        proc.wait()
        return None, f"validator {name} ({program}): its exit status was lost (SIGCHLD is ignored)"
    except BaseException as exc:  # the timeout, or Ctrl-C while waiting: the group goes either way
        _end_group(proc)
        if isinstance(exc, subprocess.TimeoutExpired):
            return None, f"validator {name} ({program}) timed out after {timeout_s:g}s"
        raise
    # what it forked and left running could still change the artifact: its group goes (see _end_group)
    returncode = _end_group(proc)
    if returncode < 0:
        return None, f"validator {name} ({program}) was killed by signal {-returncode}"
    return returncode, None


def verify_contract_file(
    path: Path | str,
    *,
    validators: Mapping[str, Validator] | None = None,
    validator_timeout_s: float = DEFAULT_VALIDATOR_TIMEOUT_S,
    environ: Mapping[str, str] | None = None,
    now: Callable[[], datetime] | None = None,
) -> Receipt:
    """Verify the outcome a contract file promises, now: load, observe, classify.

    Parameters
    ----------
    path : Path or str
        The contract file (see :func:`load_contract_file`); its ``observe_timeout_s`` and
        ``max_artifact_bytes`` bound reading the artifact.
    validators : Mapping[str, Validator], optional
        Registered validators, for a contract whose ``validator`` is a name.
    validator_timeout_s, environ, now
        As in :func:`observe_file`.

    Returns
    -------
    Receipt
        Classified with the file's ``run_started_at``; never waiting. ``unverified`` (the
        reason says which) when the locator names something that cannot be observed: not a
        regular file, too big, not read in time, unreadable.

    Raises
    ------
    ContractFileError
        The contract file is unusable (a ``validator`` named that ``validators`` does not hold included).
    DigestKeyError
        ``digest_key_env`` names an unset or empty variable.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> contract = Path(tmp.name, "contract.json")
    >>> _ = contract.write_text(json.dumps({"artifact_id": "report", "locator": "report.csv",
    ...                                     "run_started_at": "2026-07-25T14:00:00+00:00"}))
    >>> op.verify_contract_file(contract).status
    'missing'
    >>> tmp.cleanup()
    """
    spec = load_contract_file(path)
    registry: dict[str, Validator] = dict(validators or {})
    if spec.command is not None:
        registry[COMMAND_VALIDATOR] = spec.command
    name = spec.contract.validator
    if name is not None and name not in registry:  # it could never verify: the file is wrong, not the artifact
        known = ", ".join(sorted(validators or {})) or "none"
        raise ContractFileError(f"{path}: key 'validator': {quote(name)} is not a registered validator (registered: "
                                f'{known}); give the check as {{"command": ["program", "arg", ...]}}')
    try:
        evidence = observe_file(
            spec.contract,
            spec.artifact,
            validators=registry,
            validator_timeout_s=validator_timeout_s,
            validator_cwd=Path(path).parent,
            environ=environ,
            now=now,
            observe_timeout_s=spec.observe_timeout_s,
            max_artifact_bytes=spec.max_artifact_bytes,
        )
    except UnobservableArtifact as exc:
        return unobserved_receipt(spec.contract, spec.run_started_at, exc.of_the_artifact())
    return classify_outcome(spec.contract, evidence, run_started_at=spec.run_started_at)


# --------------------------------------------------------------------------- during a run


def locator_path(contract: OutcomeContract, suite_root: Path | None) -> Path | None:
    """Where a contract's ``locator`` points: relative to the suite folder (the working directory without
    one); None without a locator."""
    if contract.locator is None:
        return None
    return (suite_root if suite_root is not None else Path.cwd()) / contract.locator


#: Cases held back at most while the cases they share an artifact with run (the later cases go ahead meanwhile:
#: a cap of the workers' number would be filled by one case's epochs, and the run would go nearly serial).
MAX_WAITING = 1024


#: The key of a case that observes a promised artifact (:func:`shared_files`): it never runs beside a case holding
#: :data:`UNOBSERVED`, which may write that file unseen.
OBSERVES = "\x00oloproof: observes an artifact"
#: The key of a case that promises no artifact in a run that observes some (:func:`shared_files`): it may write a
#: file another case observes (a draft of the report, its own export to the same path), so it never runs beside a
#: case holding :data:`OBSERVES`. Two cases of one of these keys go side by side (:class:`HeldBack`).
UNOBSERVED = "\x00oloproof: writes what nothing observes"
#: Keys that keep apart the cases holding the other one, not those holding the same one.
_APART = {OBSERVES: UNOBSERVED, UNOBSERVED: OBSERVES}


def shared_files(case: Case, evaluators: Sequence[Any], suite_root: Path | None) -> frozenset[str]:
    """What a case observes that other cases may observe too, when an ``outcome_contract`` check observes it:
    its contract's ``locator`` (resolved), or without one its promised artifact (``artifact:<id>``: the epochs
    of a case, a source and its metamorphic copies, whose system places the artifact itself). Cases that share
    one must not run at the same time (each would see the other's file as its own): the runners never start
    one while another is running. Cases of one artifact id at different locators go side by side.

    Such a case also holds :data:`OBSERVES`, and a case of the run that promises no artifact :data:`UNOBSERVED`:
    the two never run at the same time either (:class:`HeldBack`). Its agent may write the very file the other
    case observes (a draft of the report at the report's path), and that case, whose agent wrote nothing, was
    ``verified`` on it (run on 2 workers it once said ``verified: present, fresh``, run alone ``stale``)."""
    if not any(getattr(ev, "type", None) == "outcome_contract" for ev in evaluators):
        return frozenset()
    if case.outcome is None:
        return frozenset([UNOBSERVED])
    contract = OutcomeContract.model_validate(case.outcome)
    path = locator_path(contract, suite_root)
    if path is None:
        return frozenset([f"artifact:{contract.artifact_id}", OBSERVES])
    try:
        return frozenset([os.path.realpath(path), OBSERVES])
    except (OSError, ValueError):  # a NUL byte in it, say: observing it fails as well, the path is the key
        return frozenset([str(path), OBSERVES])


def _kept_apart_from(keys: frozenset[str]) -> frozenset[str]:
    """The keys a running item must not hold for an item of ``keys`` to start: its own (a file two cases
    observe), with :data:`OBSERVES` and :data:`UNOBSERVED` each standing for the other."""
    return frozenset(_APART.get(key, key) for key in keys)


class HeldBack(Generic[T]):
    """Items in order, each with the keys it holds while it runs (:func:`shared_files`): :meth:`next_free` gives
    the next one no running item shares a key with. One that does waits, in order, with the items after it that
    share its keys; the others go ahead meanwhile (at most :data:`MAX_WAITING` wait). :data:`OBSERVES` and
    :data:`UNOBSERVED` are the exception: an item holding one waits while an item holding the other runs (not
    one holding the same), and holds back no item after it. The thread, executor and process runners all
    schedule with it."""

    def __init__(self, items: Iterable[T], keys: Callable[[T], frozenset[str]]) -> None:
        self._items = iter(items)
        self._keys = keys
        self._waiting: list[tuple[T, frozenset[str]]] = []
        self.exhausted = False  # every item was taken from ``items``

    @property
    def done(self) -> bool:
        """Every item was given out."""
        return self.exhausted and not self._waiting

    def next_free(self, running: Callable[[str], bool]) -> tuple[T, frozenset[str]] | None:
        """The next item (and its keys) none of whose keys is ``running``: one that waited first, else a new
        one; None when none can start now."""
        # the keys of the items still waiting before this one: they go first (files only: the order of a case
        # that observes an artifact and one that promises none does not matter, only that they do not overlap)
        ahead: set[str] = set()
        for i, (item, keys) in enumerate(self._waiting):
            if keys & ahead or any(running(k) for k in _kept_apart_from(keys)):
                ahead |= keys - _APART.keys()
                continue
            del self._waiting[i]
            return item, keys
        while not self.exhausted and len(self._waiting) < MAX_WAITING:
            try:
                item = next(self._items)
            except StopIteration:
                self.exhausted = True
                return None
            keys = self._keys(item)
            if not keys & ahead and not any(running(k) for k in _kept_apart_from(keys)):
                return item, keys
            self._waiting.append((item, keys))
            ahead |= keys - _APART.keys()
        return None


def promised_artifacts(cases: Iterable[Case]) -> list[str]:
    """The artifact ids the cases' outcome contracts promise."""
    ids = (case.outcome.get("artifact_id") for case in cases if case.outcome)
    return [aid for aid in ids if isinstance(aid, str)]


def collect_evidence(contract: OutcomeContract, system: Any, *, call: Callable[[Callable[[], Any]], Any],
                     validators: Mapping[str, Validator], timeout_s: float | None, suite_root: Path | None,
                     observe_timeout_s: float = DEFAULT_OBSERVE_TIMEOUT_S,
                     max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES) -> tuple[Evidence | None, str | None]:
    """Observe a promised artifact right after a case: ``(evidence, None)``, or ``(None, why)``.

    A local file is observed by :func:`observe_file` within ``observe_timeout_s`` and
    ``max_artifact_bytes``; its validator runs under ``timeout_s`` (the case timeout).

    ``(None, None)`` means the observer looked and found no artifact. In order:

    1. a system with ``observe(artifact_id)`` is asked (through ``call``, under the
       case timeout; a :class:`CaseTimeout` propagates): it may return ``None``, an
       :class:`~oloproof_nb.Evidence` or a dict of its fields (``evidence_source``
       defaults to ``system_observe``, which also replaces a ``local_file_stat`` it names: the toolkit's own
       observer's), or a :class:`os.PathLike` to observe as a local file (a relative one from the working
       directory, as the system's own relative paths are); evidence whose
       ``observed_at`` lies more than ``FUTURE_MTIME_TOLERANCE`` after this machine's clock is refused (a clock
       ahead of this one's shows no freshness);
    2. otherwise a contract with a ``locator`` is observed at ``locator`` relative
       to the suite folder;
    3. otherwise nothing can observe it.
    """
    observe = getattr(system, "observe", None)
    if callable(observe):
        try:
            result = call(lambda: observe(contract.artifact_id))
        except CaseTimeout:
            raise  # the system is stuck: the case records a missing verdict and replaces it
        except Exception as exc:  # noqa: BLE001 - a broken observer leaves the outcome unverified
            # the type only: a message could quote a path or the content
            return None, f"observe() raised {type(exc).__name__}"
        if result is None:
            return None, None
        if isinstance(result, Evidence):
            return _system_evidence(result)
        if isinstance(result, os.PathLike):
            return _observe_path(contract, Path(os.fspath(result)), SYSTEM_OBSERVE, validators, timeout_s,
                                 suite_root, observe_timeout_s, max_artifact_bytes)
        if isinstance(result, Mapping):
            try:
                evidence = Evidence.model_validate({"evidence_source": SYSTEM_OBSERVE, **result})
            except ValidationError as exc:
                key, message, _ = validation_problem(exc)
                return None, f"observe() returned invalid evidence: {key or 'evidence'}: {message}"
            return _system_evidence(evidence)
        return None, (f"observe() returned {type(result).__name__}; expected Evidence, a dict of its fields, "
                      "a pathlib.Path (a str is not read as a path) or None")
    located = locator_path(contract, suite_root)
    if located is not None:
        return _observe_path(contract, located, EVIDENCE_SOURCE, validators, timeout_s, suite_root,
                             observe_timeout_s, max_artifact_bytes)
    return None, (f"nothing can observe artifact {quote(contract.artifact_id)}: the system has no "
                  "observe(artifact_id) and the contract no locator")


def _system_evidence(evidence: Evidence) -> tuple[Evidence | None, str | None]:
    """A system's own evidence, unless it was observed by a clock ahead of this machine's: its ``observed_at`` more
    than :data:`FUTURE_MTIME_TOLERANCE` after now. Such a clock (a database server's) stamps the row an earlier run
    wrote after this run's start, and the observation it reports after that row: freshness is not shown, as for a
    file whose time lies ahead of this machine's clock (taken as it is, such a row would be ``verified``).

    Evidence the system names :data:`EVIDENCE_SOURCE` reads :data:`SYSTEM_OBSERVE`: that name says the toolkit
    stat'ed, digested and validated a file itself, which it did not (any other name the system gives is kept)."""
    now = utc_now()
    if evidence.observed_at > now + FUTURE_MTIME_TOLERANCE:
        return None, (f"observe() reported an observation at {iso(evidence.observed_at)}, after this machine's clock "
                      f"({iso(now)}): a clock ahead of this one's shows no freshness")
    if evidence.evidence_source == EVIDENCE_SOURCE:
        return evidence.model_copy(update={"evidence_source": SYSTEM_OBSERVE}), None
    return evidence, None


def _observe_path(contract: OutcomeContract, path: Path, source: str, validators: Mapping[str, Validator],
                  timeout_s: float | None, suite_root: Path | None, observe_timeout_s: float,
                  max_artifact_bytes: int) -> tuple[Evidence | None, str | None]:
    try:
        evidence = observe_file(contract, path, validators=validators,
                                validator_timeout_s=timeout_s or DEFAULT_VALIDATOR_TIMEOUT_S,
                                validator_cwd=suite_root, observe_timeout_s=observe_timeout_s,
                                max_artifact_bytes=max_artifact_bytes)
    except DigestKeyError as exc:  # names the variable, never its value
        return None, str(exc)
    except UnobservableArtifact as exc:  # its reason never names the path
        return None, exc.of_the_artifact()
    if evidence is None or evidence.evidence_source == source:
        return evidence, None
    return evidence.model_copy(update={"evidence_source": source}), None
