"""How a ``score_map`` function is told apart (``_function_text``): each binding
a verdict depends on, one at a time, with two maps made alike but for it (the expectation: they differ exactly
when the verdicts they give could)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from oloproof_nb._analysis.inspect_settings import _function_text


def _defined(source: str, name: str) -> Any:
    """``name`` as ``source`` defines it, in a namespace of its own (a notebook cell run again, edited)."""
    space: dict[str, Any] = {"__name__": "notebook"}
    exec(source, space)  # noqa: S102
    return space[name]


def _with_default(at: float) -> Callable[[float], str]:
    def grade(value: float, at: float = at) -> str:
        return "pass" if value >= at else "fail"
    return grade


def _with_keyword_default(at: float) -> Callable[[float], str]:
    def grade(value: float, *, at: float = at) -> str:
        return "pass" if value >= at else "fail"
    return grade


def cut_first(at: float, value: float) -> str:
    return "pass" if value >= at else "fail"


class Grader:
    def __init__(self, at: float) -> None:
        self.at = at

    def grade(self, value: float) -> str:
        return "pass" if value >= self.at else "fail"


def test_a_default_and_a_keyword_default_are_bindings() -> None:
    assert _function_text(_with_default(0.5)) != _function_text(_with_default(1.0))
    assert _function_text(_with_default(0.5)) == _function_text(_with_default(0.5))
    assert _function_text(_with_keyword_default(0.5)) != _function_text(_with_keyword_default(1.0))
    assert _function_text(_with_keyword_default(0.5)) == _function_text(_with_keyword_default(0.5))


def test_a_partials_positional_arguments_are_bindings() -> None:
    assert _function_text(functools.partial(cut_first, 0.5)) != _function_text(functools.partial(cut_first, 1.0))
    assert _function_text(functools.partial(cut_first, 0.5)) == _function_text(functools.partial(cut_first, 0.5))


def test_a_bound_methods_object_is_a_binding() -> None:
    assert _function_text(Grader(0.5).grade) != _function_text(Grader(1.0).grade)
    assert _function_text(Grader(0.5).grade) == _function_text(Grader(0.5).grade)


def test_a_function_redefined_with_other_code_under_its_name_differs() -> None:
    strict = _defined("def grade(v):\n    return 'pass' if v >= 1.0 else 'fail'\n", "grade")
    loose = _defined("def grade(v):\n    return 'pass' if v >= 0.0 else 'fail'\n", "grade")
    assert strict.__qualname__ == loose.__qualname__ and strict.__module__ == loose.__module__
    assert _function_text(strict) != _function_text(loose)


def test_a_callable_class_redefined_with_another_call_differs() -> None:
    body = "class Grade:\n    def __call__(self, v):\n        return 'pass' if v >= {} else 'fail'\n"
    strict, loose = _defined(body.format(1.0), "Grade")(), _defined(body.format(0.0), "Grade")()
    assert vars(strict) == vars(loose) == {}
    assert _function_text(strict) != _function_text(loose)


def test_a_helper_bound_by_a_closure_is_read_by_its_code_not_its_address() -> None:
    """The same helper made twice (a cell run again) is one reading; its ``repr`` names an address each time."""
    source = "def helper(v):\n    return 'pass' if v >= 1.0 else 'fail'\n"
    first, second = _defined(source, "helper"), _defined(source, "helper")
    assert repr(first) != repr(second)

    def over(helper: Callable[[float], str]) -> Callable[[float], str]:
        return lambda value: helper(value)

    assert _function_text(over(first)) == _function_text(over(second))
    other = _defined(source.replace("1.0", "0.5"), "helper")
    assert _function_text(over(first)) != _function_text(over(other))


def test_a_partial_reads_the_function_it_is_given_by_its_code() -> None:
    source = "def grade(v, at):\n    return 'pass' if v >= at else 'fail'\n"
    strict, loose = _defined(source, "grade"), _defined(source.replace(">=", ">"), "grade")
    assert _function_text(functools.partial(strict, at=1.0)) != _function_text(functools.partial(loose, at=1.0))
    again = _defined(source, "grade")
    assert _function_text(functools.partial(strict, at=1.0)) == _function_text(functools.partial(again, at=1.0))


def test_a_functions_own_attribute_it_reads_is_a_binding() -> None:
    """``grade.at`` set on the function and read by its code: 1.0 and 0.5 are two readings (they once were
    one: the attributes of a bound method's object and a callable object were read, a function's own were not)."""
    def grade(value: float) -> str:
        return "pass" if value >= grade.at else "fail"  # type: ignore[attr-defined]

    grade.at = 1.0  # type: ignore[attr-defined]
    strict = _function_text(grade)
    grade.at = 0.5  # type: ignore[attr-defined]
    assert _function_text(grade) != strict
    grade.at = 1.0  # type: ignore[attr-defined]
    assert _function_text(grade) == strict
