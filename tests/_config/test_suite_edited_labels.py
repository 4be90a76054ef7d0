"""Validity labels edited in code after ``load_suite`` are refused by a run, as the label files would be.

A label file is checked line by line when the suite loads it (each id a derived case of the suite, one judgement per
labeler and pair); ``Suite.labels`` is a plain dict, and a judgement appended to it in a notebook was stored by the
run unchecked. Counted by hand: 20 source cases, the copies of c05, c11 and c17 fail ``same_output``; 19 copies
labeled valid (all but c17~t) and one judgement of ``ghost~t``, a copy the suite does not derive, appended in code.
The run counted 20 labeled pairs of 20 (coverage 1, 20 valid ≥ 0.85): the transform was checked, and c17~t,
unlabeled and failing, got no ``same_output`` row (19 rows, 17 passing, where ``transform_not_checked`` was due).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _metamorphic_systems import case, mm_suite

import oloproof_nb as op
from oloproof_nb.errors import OloproofError

SOURCES = [f"c{i:02d}" for i in range(20)]
FAILING = ("c05", "c11", "c17")


def _suite(make_suite: Callable[..., Path]) -> op.Suite:
    cases = [case(s, "please mark it !answ" if s in FAILING else "please mark it") for s in SOURCES]
    t = {"name": "t", "field": "message", "template": "{value}er now", "validity_labels": "labels/t.jsonl",
         "minimum_validity": 0.85}
    labels = [{"case_id": f"{s}~t", "valid": True, "labeler": "ana"} for s in SOURCES if s != "c17"]
    relation = {"type": "metamorphic_relation", "relation": "same_output", "transform": "t"}
    release = {"allow_approximate_methods": True, "min_clusters": 5, "criteria": {"same_output_under_t": 0.8}}
    root = mm_suite(make_suite, cases, [t], [relation], {"t": labels}, release=release)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op.load_suite(root)


def _refused(suite: op.Suite, out: Path) -> str:
    with pytest.raises(OloproofError) as caught:
        op.run(suite, out=out, progress=False)
    assert not out.exists()  # refused before the run folder is made
    return str(caught.value)


def test_a_judgement_of_no_derived_case_appended_in_code_is_refused(make_suite: Callable[..., Path],
                                                                     tmp_path: Path) -> None:
    """Refused naming the judgement; the edit undone (compared by value), the run judges as the files say: 19 of 20
    pairs labeled, so the transform is not checked and every pair keeps its row (20, 17 passing: hand count)."""
    suite = _suite(make_suite)
    suite.labels["t"].append({"case_id": "ghost~t", "valid": True, "labeler": "ana", "note": ""})
    message = _refused(suite, tmp_path / "run")
    assert message.startswith("suite.labels['t'][19] is {'case_id': 'ghost~t'")
    assert "(added): the labels were edited after load_suite read them from " in message
    assert str(suite.root / "labels" / "t.jsonl") in message and "\n" not in message
    suite.labels["t"].pop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = op.run(suite, out=tmp_path / "run", progress=False)
        row = op.gate(run).table.set_index("criterion").loc["same_output_under_t"]
    v = op.validity(run).iloc[0]
    assert (int(v.labeled), int(v.derived), bool(v.checked)) == (19, 20, False)
    assert (int(row.n), int(row.passed), row.verdict, row.reason) == (20, 17, "INSUFFICIENT_EVIDENCE",
                                                                      "transform_not_checked")


@pytest.mark.parametrize("edit, said", [
    (lambda s: s.labels["t"][3].update(valid=False), "suite.labels['t'][3] is {'case_id': 'c03~t'"),
    (lambda s: s.labels["t"].pop(), "suite.labels['t'][18] was removed"),
    (lambda s: s.labels.pop("t"), "suite.labels['t'] was removed"),
    (lambda s: s.labels.update(u=[]), "suite.labels['u'] was added"),
])
def test_labels_edited_in_place_are_refused_naming_the_first_difference(make_suite: Callable[..., Path],
                                                                        tmp_path: Path, edit: Callable[[Any], Any],
                                                                        said: str) -> None:
    suite = _suite(make_suite)
    edit(suite)
    assert _refused(suite, tmp_path / "run").startswith(said)


def test_other_labels_given_by_replace_are_refused(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = _suite(make_suite)
    given = dataclasses.replace(suite, labels={"t": [{"case_id": f"{s}~t", "valid": True} for s in SOURCES]})
    assert _refused(given, tmp_path / "run").startswith("suite.labels['t'][0] is {'case_id': 'c00~t', 'valid': True} "
                                                        "(read as {'case_id': 'c00~t', 'labeler': 'ana'")


# Edges the tests above let pass.


def test_a_suite_not_made_by_load_suite_has_no_labels_read_to_compare(make_suite: Callable[..., Path]) -> None:
    """A Suite built by hand (no ``_labels_read``) is not refused for its labels: there is nothing to compare with."""
    loaded = _suite(make_suite)
    by_hand = op.Suite(root=loaded.root, config=loaded.config, release=loaded.release, cases_file=loaded.cases_file,
                       n_cases=loaded.n_cases, labels={"t": [{"case_id": "c00~t", "valid": False, "labeler": "bo"}]})
    assert by_hand.refuse_edited_labels() is None


@pytest.mark.parametrize(("labels", "said"), [
    ([], "suite.labels is a list, not the labels load_suite read (a dict of transform name to judgements); load the "
         "suite again (op.load_suite)"),
    ({"t": "c00~t"}, "suite.labels['t'] is a str, not a list of judgements: the labels were edited after load_suite "
                     "read them from "),
])
def test_labels_of_another_shape_are_refused_in_one_line(make_suite: Callable[..., Path], labels: Any,
                                                          said: str) -> None:
    given = dataclasses.replace(_suite(make_suite), labels=labels)
    with pytest.raises(OloproofError) as caught:
        given.refuse_edited_labels()
    assert str(caught.value).startswith(said) and "\n" not in str(caught.value)


def test_a_resume_is_not_refused_for_labels_edited_since(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A resumed run keeps the labels its manifest stores: an edit of ``suite.labels`` since is no reason to refuse
    it, and the run's labels stay the 19 judgements of the file (hand count: 19 labeled of 20 pairs)."""
    suite = _suite(make_suite)

    def stop(done: int, total: int) -> None:
        if done >= 5:
            raise KeyboardInterrupt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(KeyboardInterrupt):
            op.run(suite, out=tmp_path / "run", progress=stop)
        suite.labels["t"].append({"case_id": "c17~t", "valid": True, "labeler": "ana"})
        run = op.run(suite, out=tmp_path / "run", resume=True, progress=False)
    v = op.validity(run).iloc[0]
    assert run.finished and (int(v.labeled), int(v.derived)) == (19, 20)


# Labels are compared as a state check compares values. By Python's ==, ``valid: 1`` (or 1.0) put in place of
# ``true`` was no edit (1 == True): the run was let through and stopped on the manifest it could not store (a
# pydantic ValidationError saying "the run directory is damaged"), where the one line naming the judgement was due.
@pytest.mark.parametrize("value", [1, 1.0])
def test_a_number_put_in_place_of_a_boolean_is_an_edit(make_suite: Callable[..., Path], tmp_path: Path,
                                                       value: Any) -> None:
    suite = _suite(make_suite)
    suite.labels["t"][3]["valid"] = value
    message = _refused(suite, tmp_path / "run")
    assert message.startswith(f"suite.labels['t'][3] is {{'case_id': 'c03~t', 'labeler': 'ana', 'note': '', "
                              f"'valid': {value}}} (read as {{")
    assert "'valid': True}): the labels were edited after load_suite" in message
