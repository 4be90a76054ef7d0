"""Reading user YAML, and turning validation problems into one-line config errors naming file and key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, validation_problem

__all__ = ["config_error", "read_yaml"]


def _allowed_keys(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model that an extra key was found in."""
    current: Any = model
    for part in loc[:-1]:
        if current is None or isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        candidates = [ann, *getattr(ann, "__args__", ())]
        current = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
    if current is None:
        return []
    return [name for name, f in current.model_fields.items() if not f.exclude]


def config_error(file: str | Path, exc: ValidationError, model: type[BaseModel] | None = None,
                 prefix: str = "") -> ConfigError:
    """The first problem of a validation error as a :class:`ConfigError` naming the file and the key.

    An unknown key lists the keys ``model`` allows at that place.
    """
    key, message, err = validation_problem(exc, prefix)
    if err["type"] == "extra_forbidden":
        allowed = _allowed_keys(model, tuple(err["loc"]))
        message += f"; allowed: {', '.join(allowed)}" if allowed else ""
    return ConfigError(file, key or None, message)


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping (PyYAML keeps the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor` merges are resolved (and may be overridden) by SafeLoader
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) or key is None:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} is written twice; keep one", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path) -> dict[str, Any]:
    """``yaml.safe_load`` a file that must hold a mapping; errors name the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(path, None, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, None, f"cannot read: {exc}") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(path, None, f"not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise ConfigError(path, None, "not valid YAML: nested too deeply") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, None, f"must be a mapping of keys to values, got {type(data).__name__}")
    bad = _lone_surrogate(data)
    if bad is not None:
        raise ConfigError(path, None, f"the string {bad!r} holds a lone surrogate escape, which is not Unicode text")
    return data


def _lone_surrogate(data: Any) -> str | None:
    """The first string in ``data`` that cannot be UTF-8 (a ``"\\ud800"`` escape), walked without recursion."""
    seen: set[int] = set()
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return node
        elif isinstance(node, (dict, list)) and id(node) not in seen:  # aliases may make cycles
            seen.add(id(node))
            stack.extend([*node.keys(), *node.values()] if isinstance(node, dict) else node)
    return None
