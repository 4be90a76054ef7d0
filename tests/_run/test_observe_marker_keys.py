"""The OBSERVES / UNOBSERVED markers: which keys a case holds and which keys hold back later items.

Which keys a case holds (:func:`shared_files`) and which keys of a waiting item hold back the items after it
(:meth:`HeldBack.next_free`), pinned where the tests of ``test_observe_unobserved_cases.py`` let a changed rule
pass: the marker of an observing case without a locator, or whose locator cannot be resolved; a waiting epoch of
one file holding back the observers of other files; a waiting item holding back the items of its marker. Each
expected value is worked out by hand from the rule (a marker keeps apart the items of the other marker only, and
holds back no later item).
"""

from __future__ import annotations

from pathlib import Path

from oloproof_nb._core.case import Case, case_from_mapping
from oloproof_nb._run.observe import OBSERVES, UNOBSERVED, HeldBack, shared_files
from oloproof_nb.evaluators.outcome import OutcomeContractEvaluator

CHECK = [OutcomeContractEvaluator(type="outcome_contract")]


def _case(cid: str, outcome: dict[str, str] | None) -> Case:
    return case_from_mapping({"id": cid, "input": {}, **({"outcome": outcome} if outcome else {})})


def test_every_kind_of_observing_case_holds_the_observes_marker(tmp_path: Path) -> None:
    # without a locator: the artifact id, and the marker (a system that places the report itself observes it too)
    assert shared_files(_case("a", {"artifact_id": "report"}), CHECK, tmp_path) == {"artifact:report", OBSERVES}
    # a locator the file system cannot resolve (a NUL byte): the path as written is the key, and the marker
    bad = _case("b", {"artifact_id": "report", "locator": "out/a\x00b.txt"})
    assert shared_files(bad, CHECK, tmp_path) == {str(tmp_path / "out/a\x00b.txt"), OBSERVES}
    assert shared_files(_case("c", None), CHECK, tmp_path) == {UNOBSERVED}
    assert shared_files(_case("d", None), [], tmp_path) == frozenset()  # no outcome check: no markers


def test_a_waiting_epoch_does_not_hold_back_the_observers_of_other_files() -> None:
    # a1 and a2 observe /a (two epochs of a case), b /b: while a1 runs, a2 waits, and b goes past it
    keys = {"a1": frozenset(["/a", OBSERVES]), "a2": frozenset(["/a", OBSERVES]), "b": frozenset(["/b", OBSERVES])}
    held = HeldBack(["a1", "a2", "b"], keys.__getitem__)
    busy: set[str] = set()
    assert held.next_free(busy.__contains__) == ("a1", keys["a1"])
    busy |= keys["a1"]
    assert held.next_free(busy.__contains__) == ("b", keys["b"])  # it waited for a2 when a2's marker held it back
    busy |= keys["b"]
    assert held.next_free(busy.__contains__) is None  # a2 waits for a1
    busy -= keys["a1"]
    busy |= {OBSERVES}  # b still runs
    assert held.next_free(busy.__contains__) == ("a2", keys["a2"]) and held.done


def test_a_waiting_item_holds_back_no_later_item_of_its_marker() -> None:
    # an item of a file and both markers (an executor's batch of an observer and a case that promises nothing, as
    # an executor's batches once were) waits while a case that promises nothing runs; a later such case goes past it
    keys = {"mixed": frozenset(["/a", OBSERVES, UNOBSERVED]), "u": frozenset([UNOBSERVED])}
    held = HeldBack(["mixed", "u"], keys.__getitem__)
    running = {UNOBSERVED}  # mixed waits for it (its OBSERVES is kept apart from UNOBSERVED)
    assert held.next_free(running.__contains__) == ("u", keys["u"])  # u goes beside it: mixed holds it not back
    running |= keys["u"]
    assert held.next_free(running.__contains__) is None
    assert held.next_free(set().__contains__) == ("mixed", keys["mixed"]) and held.done
