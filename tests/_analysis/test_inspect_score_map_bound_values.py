"""How a ``score_map`` function's bound values are read (``_value_text``): each
part of a plain object's text, and how deep a chain of helpers is read, one at a time (the expectation: two maps
differ exactly when the verdicts they give could)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from oloproof_nb._analysis.inspect_settings import _function_text


def _settings_class(module: str) -> type:
    """A ``Settings`` class with no ``__repr__`` of its own, as module ``module`` defines it."""
    def __init__(self: Any, **values: Any) -> None:
        self.__dict__.update(values)
    return type("Settings", (), {"__init__": __init__, "__module__": module})


def reading(cfg: Any) -> Callable[[float], str]:
    def score_map(value: float) -> str:
        return "pass" if value >= getattr(cfg, "cut", 1.0) and not getattr(cfg, "lenient", False) else "fail"
    return score_map


def test_a_plain_objects_class_is_read_with_its_module() -> None:
    """Two classes of one name in two modules are two classes (their code may differ), equal attributes or not."""
    strict, loose = _settings_class("strict_rules"), _settings_class("loose_rules")
    assert _function_text(reading(strict(cut=1.0))) != _function_text(reading(loose(cut=1.0)))
    assert _function_text(reading(strict(cut=1.0))) == _function_text(reading(strict(cut=1.0)))


def test_a_plain_objects_attribute_names_are_read_with_their_values() -> None:
    """``strict=True`` and ``lenient=True`` hold one value under two names: two readings."""
    settings = _settings_class("rules")
    assert _function_text(reading(settings(strict=True))) != _function_text(reading(settings(lenient=True)))


def test_a_plain_object_held_by_a_plain_object_is_read_by_its_attributes_not_its_address() -> None:
    """``cfg.grading.cut``: the inner object changed in place keeps its address; it is another reading all the
    same, and two equal nested settings alive at once are one."""
    settings = _settings_class("rules")
    inner = settings(cut=1.0)
    cfg = settings(grading=inner)

    def score_map(value: float) -> str:
        return "pass" if value >= cfg.grading.cut else "fail"

    strict = _function_text(score_map)
    inner.cut = 0.5
    assert _function_text(score_map) != strict
    inner.cut = 1.0
    assert _function_text(score_map) == strict
    a, b = settings(grading=settings(cut=1.0)), settings(grading=settings(cut=1.0))
    assert _function_text(reading(a)) == _function_text(reading(b))


class Grader:
    """A grader with a ``repr`` of its own, and a lock (whose ``repr`` names its address) it does not show."""

    def __init__(self, cut: float) -> None:
        self.cut = cut
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Grader(cut={self.cut})"


def test_an_object_with_a_repr_of_its_own_is_read_by_it() -> None:
    """The docstring: an object is read by its class and attributes only when its ``repr`` is ``object``'s."""
    assert _function_text(reading(Grader(1.0))) == _function_text(reading(Grader(1.0)))
    assert _function_text(reading(Grader(1.0))) != _function_text(reading(Grader(0.5)))


def _chain(cut: float) -> Callable[[float], str]:
    """``score_map`` -> ``decide`` -> ``compare``, the last closing over ``cut``: the cut is bound two helpers deep."""
    def compare(value: float) -> bool:
        return value >= cut

    def decide(value: float) -> str:
        return "pass" if compare(value) else "fail"

    def score_map(value: float) -> str:
        return decide(value)
    return score_map


def test_a_cut_two_helpers_deep_is_read_by_its_value() -> None:
    """Helpers are read by their code and bindings three levels down (``_BOUND_DEPTH``): a cut two helpers deep is
    a value, so two chains made alike are one reading (each helper made anew has another address) and two cuts
    are two."""
    assert _function_text(_chain(1.0)) == _function_text(_chain(1.0))
    assert _function_text(_chain(1.0)) != _function_text(_chain(0.5))


class SlottedGrader:
    """A grader with ``__slots__``: no ``__dict__`` to read its cut from."""

    __slots__ = ("at",)

    def __init__(self, at: float) -> None:
        self.at = at

    def grade(self, value: float) -> str:
        return "pass" if value >= self.at else "fail"


class SlottedSettings:
    __slots__ = ("__weakref__", "__floor", "cut")

    def __init__(self, cut: float, floor: float = 0.0) -> None:
        self.cut = cut
        self.__floor = floor  # stored as _SlottedSettings__floor


def test_a_slotted_objects_attributes_are_bindings() -> None:
    """A bug, not a mutant: an object with ``__slots__`` was read by nothing (a bound method's
    object) or by its address (a closure's): ``SlottedGrader(1.0).grade`` and ``SlottedGrader(0.5).grade`` were one
    check, and so was a slotted ``cfg`` whose cut was lowered in place between two readings."""
    assert _function_text(SlottedGrader(1.0).grade) != _function_text(SlottedGrader(0.5).grade)
    assert _function_text(SlottedGrader(1.0).grade) == _function_text(SlottedGrader(1.0).grade)
    cfg = SlottedSettings(1.0)
    strict = _function_text(reading(cfg))
    cfg.cut = 0.5
    assert _function_text(reading(cfg)) != strict
    cfg.cut = 1.0
    assert _function_text(reading(cfg)) == strict
    assert _function_text(reading(SlottedSettings(1.0))) == _function_text(reading(SlottedSettings(1.0)))
    assert _function_text(reading(SlottedSettings(1.0, 0.5))) != _function_text(reading(SlottedSettings(1.0, 0.0)))
