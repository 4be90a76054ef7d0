"""The code fingerprint (``_run/systems.code_fingerprint``): a system no file can show an
edit of is never fingerprinted, so it is never cached and never resumed.

The expectation is the rule the docstring states (None when a class of the system's own, or the whole system, is
defined in no file), checked on code exec'd as a notebook cell runs it; never a value read from the code.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._run.systems import code_fingerprint, replay_fingerprint


class Desk:
    """A system's base class, defined in this file, built with a policy."""

    def __init__(self, policy: Any = None) -> None:
        self.policy = policy

    def run(self, input: Any) -> None:
        return None


class OtherDesk(Desk):
    """Another system of this file (a replacement instance of another class, in a run that keeps ``known``)."""


#: Two policies on one line, picked by a setting (``POLICIES[os.environ["MODE"]]``): one name, one line.
POLICIES: dict[str, Callable[[float], bool]] = {"strict": lambda amount: amount < 100, "lax": lambda amount: True}


def _fingerprint(instance: Any, target: Any) -> str | None:
    return code_fingerprint(instance, target, root=None, spec=None, timeout_s=None)


def _fingerprint_known(instance: Any, target: Any, known: dict[Any, Any]) -> str | None:
    return code_fingerprint(instance, target, root=None, spec=None, timeout_s=None, known=known)


def test_a_notebook_class_over_a_base_in_a_file_is_never_fingerprinted() -> None:
    """A subclass typed into a cell over ``Desk`` from this file: the file shows no edit of the cell (if
    only a system whose classes are *all* in no file were refused, two versions of the cell would get one
    fingerprint, the file's, and the careless cell would take the careful one's cached replays)."""
    fingerprints = []
    for body in ("return 'refund'", "return 'escalate'"):  # the cell, then the cell edited
        cell: dict[str, Any] = {"__name__": "__m59_notebook_cell__", "Desk": Desk}
        exec(f"class Careful(Desk):\n    def run(self, input):\n        {body}\n", cell)  # noqa: S102 - a cell
        fingerprints.append(_fingerprint(cell["Careful"](), cell["Careful"]))
    assert fingerprints == [None, None]


def test_a_notebook_factory_of_a_system_no_file_defines_is_never_fingerprinted() -> None:
    """A factory typed into a cell that builds a system of a built-in type (no class of the user's at all): no
    file, no ``fingerprint()`` (fingerprinted by the factory's name alone, an edit of the cell would keep
    its fingerprint and its cached replays)."""
    fingerprints = []
    for answer in ("'refund'", "'escalate'"):
        cell: dict[str, Any] = {"__name__": "__m59_notebook_cell__", "types": types}
        exec(f"def make():\n    return types.SimpleNamespace(run=lambda input: {answer}, version='v1')\n",  # noqa: S102
             cell)
        fingerprints.append(_fingerprint(cell["make"](), cell["make"]))
    assert fingerprints == [None, None]


def test_two_policies_written_on_one_line_key_the_replays_apart() -> None:
    """``Desk(policy=POLICIES["strict"])`` and ``Desk(policy=POLICIES["lax"])`` hold two lambdas of one name, one
    line, no defaults and no closure; they decide a payment of 500 otherwise (checked by calling them). Only their
    code tells them apart (with the code left out of a function's picture, the lax desk would take the
    strict one's cached fault replays)."""
    strict, lax = POLICIES["strict"], POLICIES["lax"]
    assert (strict(500), lax(500)) == (False, True)
    assert strict.__code__.co_firstlineno == lax.__code__.co_firstlineno and strict.__name__ == lax.__name__
    code = "f" * 64
    assert replay_fingerprint(Desk(strict), Desk, code) != replay_fingerprint(Desk(lax), Desk, code)
    assert replay_fingerprint(Desk(strict), Desk, code) == replay_fingerprint(Desk(POLICIES["strict"]), Desk, code)


def test_the_digests_a_run_took_of_one_class_are_not_taken_for_another() -> None:
    """``known`` keeps the file digests taken for the classes an earlier instance had; an instance of another
    class gets its own (taking any ``known`` entry for any class gives a KeyError here), the fingerprint it
    has without ``known``; the first class's entry is used again as it was."""
    known: dict[Any, Any] = {}
    first = _fingerprint_known(Desk(), Desk, known)
    other = _fingerprint_known(OtherDesk(), OtherDesk, known)
    assert other == _fingerprint(OtherDesk(), OtherDesk) != first
    assert _fingerprint_known(Desk(), Desk, known) == first == _fingerprint(Desk(), Desk) and len(known) == 2


def _module_in(folder: Path, name: str, text: str) -> types.ModuleType:
    """A module imported from a file ``folder/<name>.py`` holding ``text`` (registered, as an import leaves it)."""
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


DESK_FILE = """
import dataclasses


def parse(message):
    return {"refund": "refund" in message}


@dataclasses.dataclass
class Desk:
    careful: bool = True

    def act(self, input):
        return "refunded" if parse(input["message"])["refund"] else "refused"

    def run(self, input):
        return self.act(input)
"""


def test_a_method_or_function_typed_into_a_cell_and_assigned_leaves_the_system_unfingerprinted(
        tmp_path: Path) -> None:
    """``Desk.act = act`` with ``act`` typed into a cell runs the cell's code in the desk's place: the desk's file
    shows no edit of the cell, so its fingerprint was the unpatched desk's, and the patched desk took that desk's
    cached replays (and a resume went on with it). Such a system now has none, as a class typed into a cell; so
    has one whose module's function is replaced by a cell's (``desk_module.parse = parse``)."""
    name = f"desk_{tmp_path.name}"
    module = _module_in(tmp_path, name, DESK_FILE)
    try:
        desk = module.Desk
        plain = _fingerprint(desk(), desk)
        assert plain is not None and plain == _fingerprint(desk(), desk)  # a dataclass's own methods are its file's
        for attribute, cell_code, owner in (
                ("act", "def act(self, input):\n    return 'escalated'\n", desk),
                ("parse", "def parse(message):\n    return {'refund': False}\n", module)):
            cell: dict[str, Any] = {"__name__": "__notebook_cell_without_a_file__"}
            exec(compile(cell_code, "<ipython-input-3-5e1c>", "exec"), cell)  # noqa: S102 - a notebook cell
            kept = getattr(owner, attribute)
            setattr(owner, attribute, cell[attribute])
            try:
                assert desk().run({"message": "refund please"}) != "refunded"  # the cell's code runs
                assert _fingerprint(desk(), desk) is None
            finally:
                setattr(owner, attribute, kept)
        assert _fingerprint(desk(), desk) == plain
    finally:
        del sys.modules[name]


@pytest.mark.parametrize("prefix", ["fixes", "namedtuple_fixes"])
def test_a_method_assigned_from_another_file_counts_by_that_file(tmp_path: Path, prefix: str) -> None:
    """``Desk.act = fixes.act`` (a file outside the suite folder, imported in a notebook), or a static method of
    it: the fingerprint is not the unpatched desk's, and changes when ``fixes.py`` is edited. A file whose name
    starts as the namespace ``collections`` gives a named tuple's ``__new__`` (``namedtuple_``) is a file all the
    same."""
    name = f"desk_{tmp_path.name}"
    module = _module_in(tmp_path, name, DESK_FILE)
    fixes_name = f"{prefix}_{tmp_path.name}"
    try:
        desk = module.Desk
        plain = _fingerprint(desk(), desk)
        original = desk.act
        prints = []
        for answer in ("escalated", "refunded"):
            (tmp_path / "other").mkdir(exist_ok=True)
            fixes = _module_in(tmp_path / "other", fixes_name,
                               f"def act(self, input):\n    return {answer!r}\n\n\n"
                               f"def check(input):\n    return {answer!r}\n")
            desk.act = fixes.act
            prints.append(_fingerprint(desk(), desk))
            desk.act = staticmethod(fixes.check)
            prints.append(_fingerprint(desk(), desk))
        # one file holds both functions: the file's edit, not which of its functions, changes the fingerprint
        assert None not in prints and plain not in prints and prints[0] == prints[1] != prints[2] == prints[3]
        desk.act = original
        assert _fingerprint(desk(), desk) == plain
    finally:
        sys.modules.pop(fixes_name, None)
        del sys.modules[name]


TUPLE_DESK_FILE = """
import collections
from typing import NamedTuple


class Settings(NamedTuple):
    model: str = "small"
    retries: int = 2


class Desk(Settings):
    def run(self, input):
        return "refunded"


class OldDesk(collections.namedtuple("Limits", "model retries", defaults=("small", 2))):
    def run(self, input):
        return "refunded"
"""


def test_a_system_built_on_a_named_tuple_in_a_file_is_fingerprinted(tmp_path: Path) -> None:
    """A desk whose settings are a ``typing.NamedTuple`` (or a ``collections.namedtuple``) of its file: the tuple's
    ``__new__`` is evaluated by ``collections`` in a namespace no file holds, but holds only the field names the
    file does. Taken for a method typed into a cell, it left the desk unfingerprinted: never cached, and every run
    of it refused on resume as a class defined in no file. A method typed into a cell and assigned to the tuple
    class is still one."""
    name = f"tuple_desk_{tmp_path.name}"
    module = _module_in(tmp_path, name, TUPLE_DESK_FILE)
    try:
        for desk in (module.Desk, module.OldDesk):
            assert desk().run({}) == "refunded" and desk()._fields == ("model", "retries")
            assert _fingerprint(desk(), desk) is not None
        cell: dict[str, Any] = {"__name__": "__notebook_cell_without_a_file__"}
        exec(compile("def run(self, input):\n    return 'escalated'\n", "<ipython-input-4-9a2f>", "exec"),  # noqa: S102
             cell)
        module.Settings.run = cell["run"]
        assert _fingerprint(module.Settings(), module.Settings) is None
    finally:
        del sys.modules[name]
