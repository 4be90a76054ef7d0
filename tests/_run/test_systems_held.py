"""``systems.Held`` and ``systems.note_abandoned`` on their own, for an instance that takes no weak reference as for
one that does: one dropped may be given again; one a call still runs on is refused by every ``Held`` until the call
ends (each counted by hand: one add, one drop, one add again)."""

from __future__ import annotations

import threading
import types

import pytest

from oloproof_nb._run.systems import BUSY_INSTANCE, SHARED_INSTANCE, Held, note_abandoned
from oloproof_nb.errors import OloproofError


class Slotted:
    """An instance that takes no weak reference (``__slots__`` without ``__weakref__``)."""

    __slots__ = ("name",)

    def __init__(self) -> None:
        self.name = "slotted"

    def run(self, input: object) -> None:
        return None


class Plain:
    """An instance that takes a weak reference."""

    def run(self, input: object) -> None:
        return None


def _instances() -> list[object]:
    return [Slotted(), types.SimpleNamespace(run=lambda input: None), Plain()]


@pytest.mark.parametrize("instance", _instances(), ids=["slots", "simplenamespace", "plain"])
def test_an_instance_dropped_may_be_given_again_and_is_no_longer_kept(instance: object) -> None:
    """A serial run takes a module-level instance back after a case that raised (it was dropped first): kept after
    the drop, one without weak references was refused as 'still held' and then released twice at the run's end."""
    held = Held()
    assert held.add(instance) is instance
    with pytest.raises(OloproofError) as caught:
        held.add(instance)
    assert str(caught.value) == SHARED_INSTANCE
    held.drop(instance)
    assert held.add(instance) is instance  # given again after the drop
    held.drop(instance)
    assert held.take_kept() == []  # nothing left to release: the run's caller releases it


@pytest.mark.parametrize("kind", [Slotted, Plain], ids=["slots", "plain"])
def test_every_instance_dropped_at_once_may_be_given_again_and_is_no_longer_kept(kind: type) -> None:
    """A case whose replays raised twice replaced two instances, dropped together after it: each may be given again,
    and neither is left to be released a second time at the run's end."""
    held = Held()
    first, second, third = kind(), kind(), kind()
    for instance in (first, second, third):
        held.add(instance)
    held.drop(first, second)
    assert held.add(second) is second and held.add(first) is first  # given again after the drop
    with pytest.raises(OloproofError):
        held.add(third)  # still held: not dropped
    held.drop(first, second, third)
    assert held.take_kept() == []


def test_an_instance_without_weak_references_is_handed_on_once_at_the_end() -> None:
    held, instance = Held(), Slotted()
    held.add(instance)
    assert held.take_kept() == [instance]
    assert held.take_kept() == []
    held.add(instance)  # no longer held here


@pytest.mark.parametrize("instance", _instances(), ids=["slots", "simplenamespace", "plain"])
def test_an_instance_a_call_still_runs_on_is_refused_until_the_call_ends(instance: object) -> None:
    """Noted by a case whose call timed out, it is refused by a new ``Held`` (a resume's) while the thread lives,
    one without weak references too, and taken once the thread ended."""
    ends = threading.Event()
    call = threading.Thread(target=ends.wait, args=(30,), daemon=True)
    call.start()
    try:
        note_abandoned(instance, [call])
        with pytest.raises(OloproofError) as caught:
            Held().add(instance)
        assert str(caught.value) == BUSY_INSTANCE
    finally:
        ends.set()
        call.join(30)
    assert Held().add(instance) is instance
