"""The system under test as the run builds it (``_run/systems.py``): factory or shared instance, the check that
what a factory built can run, its version (edges no other test pins)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._run.systems import (
    as_factory,
    build,
    code_fingerprint,
    identity_of,
    replay_fingerprint,
    version_of,
)
from oloproof_nb.errors import OloproofError


class CallableSystem:
    """A system instance that is also callable (a model wrapper, say): shared, never called to build one."""

    def __call__(self) -> str:
        return "not a system"

    def run(self, input: Any) -> str:
        return "done"


def test_an_instance_with_run_is_shared_even_when_callable() -> None:
    system = CallableSystem()
    factory, fresh = as_factory(system)
    assert fresh is False and factory() is system and factory() is system


def test_a_class_and_a_factory_build_fresh_instances() -> None:
    factory, fresh = as_factory(CallableSystem)
    assert fresh is True and isinstance(factory(), CallableSystem) and factory() is not factory()


@pytest.mark.parametrize(("made", "name"), [(42, "int"), (None, "NoneType"), ("desk", "str")])
def test_a_factory_that_returns_no_system_is_one_line_naming_what_it_returned(made: object, name: str) -> None:
    with pytest.raises(OloproofError) as info:
        build(lambda: made, None)
    assert str(info.value) == f"the system factory returned {name}, which has no run(input)"


@pytest.mark.parametrize(("version", "shown"), [(None, None), (3, "3"), ("v2-\udce9", "v2-\\udce9")])
def test_the_version_is_text_utf8_can_hold_or_none(version: object, shown: str | None) -> None:
    """No ``version`` is None (not the text "None"); a number is its text; a lone surrogate (a version read from a
    file name's bytes) is written as its escape, so the run's records can be stored."""
    class System:
        def run(self, input: Any) -> None:
            return None

    system = System()
    system.version = version  # type: ignore[attr-defined]
    assert version_of(system) == shown
    assert version_of(object()) is None


class _Raising:
    """A system whose ``version`` and ``fingerprint`` are properties raising what they are given."""

    def __init__(self, raised: BaseException) -> None:
        self.raised = raised

    def run(self, input: Any) -> None:
        return None

    @property
    def version(self) -> str:
        raise self.raised

    @property
    def fingerprint(self) -> Any:
        raise self.raised


@pytest.mark.parametrize(("raised", "shown"), [
    (KeyboardInterrupt(), "KeyboardInterrupt"),
    (SystemExit(3), "SystemExit: 3"),
    (RuntimeError("no deployment"), "RuntimeError: no deployment"),
])
def test_a_version_or_fingerprint_property_that_raises_is_one_line(raised: BaseException, shown: str) -> None:
    """Reading them runs the system's code: what it raises, ``KeyboardInterrupt`` and ``SystemExit`` included, is
    the system's, in one line (a ``KeyboardInterrupt`` propagated, and the command blamed a SIGINT it never got)."""
    system = _Raising(raised)
    with pytest.raises(OloproofError) as info:
        version_of(system)
    assert str(info.value) == f"reading the system's version raised {shown}"
    with pytest.raises(OloproofError) as info:
        code_fingerprint(system, _Raising, root=None, spec=None, timeout_s=None)
    assert str(info.value) == f"reading the system's fingerprint raised {shown}"


def test_a_version_that_never_returns_is_a_timeout_not_a_hang() -> None:
    """A ``version`` property (or its ``__str__``) that waits on a server is timed as the constructor is: the run
    read it outside any timeout and hung with it."""
    release = threading.Event()

    class Text:
        def __str__(self) -> str:
            release.wait(10)  # released at once below; without the timeout, read after 10 s
            return "v1"

    class Hanging:
        version = Text()

        def run(self, input: Any) -> None:
            return None

    try:
        with pytest.raises(OloproofError) as info:
            identity_of(Hanging(), Hanging, root=None, spec=None, timeout_s=0.1)
    finally:
        release.set()
    assert str(info.value) == "reading the system's version took longer than case_timeout_s=0.1"


def test_a_fingerprint_property_that_never_returns_is_a_timeout_not_a_hang() -> None:
    """A ``fingerprint`` attribute read through a property is timed as the version is."""
    release = threading.Event()

    class Hanging:
        version = "v1"

        @property
        def fingerprint(self) -> None:
            release.wait(10)  # released at once below; without the timeout, read after 10 s
            return None

        def run(self, input: Any) -> None:
            return None

    try:
        with pytest.raises(OloproofError) as info:
            identity_of(Hanging(), Hanging, root=None, spec=None, timeout_s=0.1)
    finally:
        release.set()
    assert str(info.value) == "reading the system's fingerprint took longer than case_timeout_s=0.1"


class Versioned:
    """A system whose ``fingerprint()`` says which code it runs."""

    def __init__(self, mark: Any = "v1") -> None:
        self.mark = mark

    def run(self, input: Any) -> None:
        return None

    def fingerprint(self) -> Any:
        return self.mark


def _make_one() -> Versioned:
    return Versioned()


def _make_other() -> Versioned:
    return Versioned()


def test_the_fingerprint_covers_what_fingerprint_returns_and_which_factory_builds() -> None:
    """Two ``fingerprint()`` values are two codes; two factories of one file are two systems (each may set its
    system up otherwise), though they build the same class."""
    def fp(system: Any, target: Any) -> str | None:
        return code_fingerprint(system, target, root=None, spec=None, timeout_s=None)

    assert fp(Versioned("v1"), Versioned) == fp(Versioned("v1"), Versioned) is not None
    assert fp(Versioned("v1"), Versioned) != fp(Versioned("v2"), Versioned)
    assert fp(Versioned(), _make_one) != fp(Versioned(), _make_other)


def test_a_fingerprint_that_is_no_text_is_one_line() -> None:
    with pytest.raises(OloproofError) as info:
        code_fingerprint(Versioned(3), Versioned, root=None, spec=None, timeout_s=None)
    assert str(info.value) == "system.fingerprint() returned int; it must return a str"


def test_a_class_typed_into_a_notebook_is_fingerprinted_only_by_its_fingerprint() -> None:
    """A class no file defines (exec'd as a notebook cell is): no file can show its edits, so it is never
    fingerprinted (None) unless its own ``fingerprint()`` says which code it is."""
    cell: dict[str, Any] = {"__name__": "__m10_notebook_cell__"}
    exec("class Cell:\n    def run(self, input):\n        return None\n", cell)  # noqa: S102 - a cell's class
    exec("class Pinned(Cell):\n    def fingerprint(self):\n        return 'git:abc123'\n", cell)  # noqa: S102
    plain, pinned = cell["Cell"](), cell["Pinned"]()
    assert code_fingerprint(plain, cell["Cell"], root=None, spec=None, timeout_s=None) is None
    found = code_fingerprint(pinned, cell["Pinned"], root=None, spec=None, timeout_s=None)
    assert isinstance(found, str) and len(found) == 64


class Configured:
    """A system whose behaviour is set by its constructor's arguments, and with no ``fingerprint()``."""

    def __init__(self, careful: Any = True) -> None:
        self.careful = careful

    def run(self, input: Any) -> None:
        return None


class Tabled:
    """A large table and a setting among its constructor's parameters, and an id stamped on each instance."""

    _built = 0

    def __init__(self, table: list[int], careful: bool = True) -> None:
        Tabled._built += 1
        self.table, self._careful, self.instance = table, careful, f"desk-{Tabled._built}"

    def run(self, input: Any) -> None:
        return None


def test_the_replay_key_covers_the_settings_the_instance_was_built_with() -> None:
    """The code fingerprint covers files, not the values a system is built with: ``Configured(careful=False)``
    and ``Configured()`` share it, so keying the replay cache on it alone handed the careful desk's replays to
    the careless one. The key now adds the attributes named as the constructor's parameters (through plain
    objects they hold) and a partial's arguments, not an id stamped on each instance; a ``fingerprint()`` is the
    user's word and keys it alone."""
    code = "f" * 64

    def key(instance: Any, target: Any = Configured) -> str | None:
        return replay_fingerprint(instance, target, code)

    careful = key(Configured())
    assert careful is not None and careful != code and careful == key(Configured(careful=True))
    assert len({careful, key(Configured(careful=False)), key(Configured(careful=0.5)), key(Configured("x"))}) == 4
    assert key(Configured(careful=Configured(True))) != key(Configured(careful=Configured(False)))  # held deeper
    assert key(Configured(careful={"retries": 0})) != key(Configured(careful={"retries": 3}))
    assert key(Configured(careful={"refund", "escalate"})) != key(Configured(careful={"refund"}))  # a set's members
    assert key(Configured(careful=frozenset(["b", "a"]))) == key(Configured(careful=frozenset(["a", "b"])))
    # a partial's arguments count (a non-JSON one by its type), whatever the instance holds
    made = Configured()
    assert key(made, functools.partial(Configured, True)) != key(made, functools.partial(Configured, False))
    assert key(made, functools.partial(Configured, careful=object())) == key(made, functools.partial(
        Configured, careful=object()))
    # ``self._careful`` for ``careful``, read before a table too large to read whole; the stamped id left out
    table = list(range(20_000))
    assert key(Tabled(table), Tabled) == key(Tabled(table), Tabled) != key(Tabled(table, careful=False), Tabled)
    # past the read limits (10,000 values, 6 levels) a setting is keyed whole, not cut to one mark
    assert key(Tabled(table), Tabled) != key(Tabled([*table[:-1], -1]), Tabled)
    assert key(Tabled(table), Tabled) == key(Tabled(list(range(20_000))), Tabled)
    deep: dict[str, object] = {"refund": "strict"}
    lax: dict[str, object] = {"refund": "lax"}
    for _ in range(8):
        deep, lax = {"policy": deep}, {"policy": lax}
    assert key(Configured(careful=deep)) != key(Configured(careful=lax))
    assert key(Configured(careful=[0.5] * 20_000)) != key(Configured(careful=[0.5] * 19_999 + [0.25]))
    assert key(Versioned("v1"), Versioned) == code  # its fingerprint() is the user's word for it
    assert key(CallableSystem(), CallableSystem) == code  # no settings: the key it had, existing entries stay valid
    assert replay_fingerprint(Configured(), Configured, None) is None  # no code fingerprint: never cached


def _strict(amount: float) -> bool:
    return amount < 100


def _lax(amount: float) -> bool:
    return True


class _Limit:
    """A policy object the desk calls (``__call__``), set by its own constructor."""

    def __init__(self, limit: float) -> None:
        self.limit = limit

    def __call__(self, amount: float) -> bool:
        return amount < self.limit


class _SlottedDesk:
    """A system keeping its settings in ``__slots__`` (a ``@dataclass(slots=True)``): no ``__dict__``."""

    __slots__ = ("careful",)

    def __init__(self, careful: bool = True) -> None:
        self.careful = careful

    def run(self, input: Any) -> None:
        return None


def _limit(at: float) -> Any:
    return lambda amount: amount < at


def test_a_setting_held_as_a_function_an_array_a_frame_a_path_or_in_slots_keys_the_replays() -> None:
    """The key pictured a value with no ``__dict__`` (and any callable) by its type alone, so
    ``Configured(careful=strict)`` and ``Configured(careful=lax)`` — or two different NumPy arrays, pandas frames,
    Decimals, paths, dates, bytes, policy objects with ``__call__``, policy classes — shared one key, and the
    careless desk took the careful one's cached fault replays; a system keeping its settings in ``__slots__``
    had no settings seen at all. Equal settings still share a key (the cache hits), and a class of the suite's
    module is named by its file, not by the folder the suite was imported from (a moved copy keeps its keys)."""
    import datetime
    import decimal
    import pathlib

    import numpy as np
    import pandas as pd

    code = "f" * 64

    def key(setting: Any) -> str | None:
        return replay_fingerprint(Configured(setting), Configured, code)

    pairs = [(_strict, _lax), (_limit(100), _limit(5000)), (_Limit(100), _Limit(5000)), (_Limit, CallableSystem),
             (np.array([1.0, 2.0]), np.array([1.0, 9.0])), (np.int64(100), np.int64(5000)),
             (pd.DataFrame({"limit": [100]}), pd.DataFrame({"limit": [5000]})), (pd.Series([1]), pd.Series([2])),
             (decimal.Decimal("100"), decimal.Decimal("5000")), (pathlib.Path("strict.yaml"), pathlib.Path("lax.yaml")),
             (datetime.date(2026, 1, 1), datetime.date(2026, 6, 1)), (b"strict", b"lax"),
             (functools.partial(_Limit, 100), functools.partial(_Limit, 5000)), (_Limit(100).__call__,
                                                                                 _Limit(5000).__call__)]
    for careful, careless in pairs:
        assert key(careful) != key(careless), careful  # was equal: the type alone
    for value in (_strict, _limit(100), _Limit(100), np.array([1.0, 2.0]), pd.DataFrame({"limit": [100]}),
                  decimal.Decimal("100"), pathlib.Path("strict.yaml"), b"strict"):
        assert key(value) == key(value.copy() if hasattr(value, "copy") else value)  # an equal setting: one key
    assert key(pd.DataFrame({"limit": [100]})) == key(pd.DataFrame({"limit": [100]}))
    slotted = replay_fingerprint(_SlottedDesk(), _SlottedDesk, code)
    assert slotted != code and slotted != replay_fingerprint(_SlottedDesk(careful=False), _SlottedDesk, code)
    here, moved = (type("Policy", (), {"__module__": f"_oloproof_suite_{h * 12}_refund_desk", "strict": True})
                   for h in "ab")
    assert key(here()) == key(moved())  # one suite module imported from two folders


def _built(careful: bool) -> CallableSystem:
    return CallableSystem()


def _nested(levels: int, value: Any) -> Any:
    for _ in range(levels):
        value = [value]
    return value


def test_the_replay_key_reads_a_partials_keywords_six_levels_and_ten_thousand_values() -> None:
    """By hand counts. A partial's keyword counts whatever the instance keeps (here the same
    instance for both), also for a system with no constructor settings of its own. A value inside six lists is
    read (the attribute's value is level 0; ``_SETTINGS_DEPTH`` levels below it are read). ``_SETTINGS_NODES``
    values are read: a list of 9,999 items is 10,000 values with itself, so its last item still counts. A dict's
    plain values are read before a table it holds, and a bool is not the integer it equals (``str(True)`` is not
    ``str(1)``: a prompt built from it differs)."""
    from oloproof_nb._run.systems import _SETTINGS_DEPTH, _SETTINGS_NODES

    code = "f" * 64

    def key(instance: Any, target: Any = Configured) -> str | None:
        return replay_fingerprint(instance, target, code)

    made = Configured()
    assert key(made, functools.partial(Configured, careful=True)) != key(made, functools.partial(Configured,
                                                                                                 careful=False))
    plain = CallableSystem()  # no constructor settings of its own: the partial's alone make its key
    assert key(plain, functools.partial(_built, True)) != key(plain, functools.partial(_built, False))
    assert (_SETTINGS_DEPTH, _SETTINGS_NODES) == (6, 10_000)
    assert key(Configured(_nested(6, 1))) != key(Configured(_nested(6, 2)))
    assert key(Configured([0] * 9_998 + [1])) != key(Configured([0] * 9_998 + [2]))
    table = list(range(20_000))
    assert key(Configured({"table": table, "retries": 0})) != key(Configured({"table": table, "retries": 3}))
    assert key(Configured(True)) != key(Configured(1)) and key(Configured(False)) != key(Configured(0))


def test_the_replay_key_of_a_set_is_the_same_in_every_process() -> None:
    """A set's order changes with ``PYTHONHASHSEED`` from one process to the next: its members are sorted, so four
    processes with four seeds give one key (unsorted, a set setting would make every replay live)."""
    script = ("from oloproof_nb._run.systems import replay_fingerprint\n"
              "class Desk:\n"
              "    def __init__(self, tools):\n"
              "        self.tools = tools\n"
              "tools = {'refund', 'escalate', 'lookup', 'cancel', 'notify', 'audit', 'hold', 'ship'}\n"
              "print(replay_fingerprint(Desk(tools), Desk, 'f' * 64))\n")
    keys = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).resolve().parents[2], env={**os.environ, "PYTHONHASHSEED": seed}
                           ).stdout.strip() for seed in ("0", "1", "2", "3")}
    assert len(keys) == 1 and len(next(iter(keys))) == 64


def test_a_float_or_a_large_integer_setting_is_not_the_text_that_spells_it() -> None:
    """A float was keyed by its ``repr`` and an integer from 2**53 by ``str``, as text, so
    ``Desk(threshold=0.5)`` and ``Desk(threshold="0.5")`` (a factory reading it from the environment) shared
    their replays, though ``0.7 > "0.5"`` raises where ``0.7 > 0.5`` does not."""
    code = "f" * 64

    def key(value: Any) -> str | None:
        return replay_fingerprint(Configured(value), Configured, code)

    assert key(0.5) != key("0.5") and key(2**60) != key(str(2**60)) and key(1.0) != key(1)
    assert key(float("nan")) == key(float("nan")) != key("nan")
