"""Errors raised for a user's mistakes.

Every error here renders as one line naming the file (and line or key) and what
is allowed, so the command line can print it and exit 2 without a traceback.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["OloproofError", "ConfigError", "CaseFileError", "LabelFileError", "RunDirError"]


class OloproofError(ValueError):
    """Base class of every error caused by user input (files, arguments, configs)."""


def _where(file: str | Path | None, line: int | None = None, key: str | None = None) -> str:
    parts: list[str] = []
    if file is not None:
        parts.append(str(file))
    if line is not None:
        parts.append(f"line {line}")
    if key:
        parts.append(key)
    return ": ".join(parts)


class ConfigError(OloproofError):
    """A mistake in ``oloproof.yaml`` or ``release.yaml``: names the file and the key."""

    def __init__(self, file: str | Path | None, key: str | None, message: str) -> None:
        self.file = None if file is None else str(file)
        self.key = key
        self.message = message
        where = _where(file, key=key)
        super().__init__(f"{where}: {message}" if where else message)

    def __reduce__(self) -> tuple[type, tuple[str | None, str | None, str]]:  # pickled back from another process
        return type(self), (self.file, self.key, self.message)


class CaseFileError(OloproofError):
    """A mistake in a JSONL input (cases, labels): names the file and the line."""

    def __init__(self, file: str | Path, line: int | None, message: str) -> None:
        self.file = str(file)
        self.line = line
        self.message = message
        super().__init__(f"{_where(file, line)}: {message}")

    def __reduce__(self) -> tuple[type, tuple[str, int | None, str]]:  # pickled back from another process
        return type(self), (self.file, self.line, self.message)


class LabelFileError(CaseFileError):
    """A mistake in a validity-label file: names the file and the line."""


class RunDirError(OloproofError):
    """A run directory that cannot be created, resumed or read."""
