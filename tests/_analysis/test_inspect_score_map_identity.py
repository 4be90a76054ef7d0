"""A ``score_map`` function is its code and the values it is bound to.

How a log's scores become verdicts is part of the check, but a ``score_map`` function was told by its
name and code alone: ``functools.partial(cut, at=0.5)`` and ``partial(cut, at=1.0)``, or one closure ``cut_at(t)``
made with two cuts, read as one check. A candidate whose ``world_refunded`` scores fell from 1.0 to 0.5 (3 of its 8
rows), read at the cut 0.5 against the base read at 1.0, had the base's rates, no flip, and NO_REGRESSION.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _inspect_logs import refund_desk, shared_logs

import oloproof_nb as op
from oloproof_nb._analysis.inspect_settings import _function_text

RULE = {"min_clusters": 2, "allow_approximate_methods": True, "regression": {"margin": 0.9}}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The refund desk's log as JSON (made once per session; read only)."""
    with shared_logs(tmp_path_factory, "refund-desk", refund_desk) as root:
        yield root / "json" / "refund_desk.json"


def cut(value: Any, at: float) -> str:
    """``C`` passes; a number passes at ``at`` or above."""
    if isinstance(value, str):
        return "pass" if value == "C" else "fail"
    return "pass" if value >= at else "fail"


def cut_at(at: float) -> Callable[[Any], str]:
    return lambda value: cut(value, at)


class Cut:
    def __init__(self, at: float) -> None:
        self.at = at

    def __call__(self, value: Any) -> str:
        return cut(value, self.at)


@pytest.fixture
def worse(logs: Path, tmp_path: Path) -> Path:
    """The candidate: the log with every world_refunded 1.0 made 0.5 (3 of the 8 rows; the 2 of s4 errored)."""
    doc = json.loads(logs.read_text(encoding="utf-8"))
    doc["eval"]["run_id"], doc["eval"]["eval_id"] = "candidate-run", "candidate-eval"
    for sample in doc["samples"]:
        scores = sample.get("scores") or {}
        if scores.get("world_refunded", {}).get("value") == 1.0:
            scores["world_refunded"]["value"] = 0.5
    out = tmp_path / "worse" / "refund_desk.json"
    out.parent.mkdir()
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


#: Three ways of binding the cut to one function.
MAKERS: dict[str, Callable[[float], Callable[[Any], str]]] = {
    "partial": lambda at: functools.partial(cut, at=at), "closure": cut_at, "callable_object": Cut}


@pytest.mark.parametrize("how", list(MAKERS))
def test_a_score_map_bound_to_a_lower_cut_is_another_check(logs: Path, worse: Path, how: str) -> None:
    make = MAKERS[how]
    base = op.from_inspect(logs, score_map=make(1.0))
    honest = op.compare(base, op.from_inspect(worse, score_map=make(1.0)), release=RULE).table.set_index("criterion")
    assert (honest.loc["world_refunded", "pass_to_fail"], honest.loc["world_refunded", "candidate_rate"]) == (3, 0.0)
    cmp = op.compare(base, op.from_inspect(worse, score_map=make(0.5)), release=RULE)
    row = cmp.table.set_index("criterion").loc["world_refunded"]
    assert (row["pass_to_fail"], row["base_rate"], row["candidate_rate"]) == (0, 3 / 8, 3 / 8)  # no flip seen
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE" and row["reason"].startswith("check_changed")
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"


@pytest.mark.parametrize("how", list(MAKERS))
def test_one_binding_made_twice_is_one_check(logs: Path, worse: Path, how: str) -> None:
    """Two maps made alike read as one check: no check_changed, and the 3 lost rows are seen at the cut 1.0."""
    make = MAKERS[how]
    assert _function_text(make(0.5)) == _function_text(make(0.5)) != _function_text(make(1.0))
    cmp = op.compare(op.from_inspect(logs, score_map=make(1.0)), op.from_inspect(worse, score_map=make(1.0)),
                     release=RULE)
    assert not any("check_changed" in reason for reason in cmp.table["reason"])
    assert cmp.table.set_index("criterion").loc["world_refunded", "pass_to_fail"] == 3


#: A module-level setting a map reads (a notebook's ``CUTS = {...}``, edited between two readings).
CUTS = {"world_refunded": 1.0}


def by_setting(value: Any) -> str:
    return cut(value, CUTS["world_refunded"])


def test_a_module_level_setting_the_map_reads_is_part_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The function and its code are the same; the cut it reads from the module is not."""
    strict = _function_text(by_setting)
    monkeypatch.setitem(CUTS, "world_refunded", 0.5)
    assert _function_text(by_setting) != strict
    monkeypatch.setitem(CUTS, "world_refunded", 1.0)
    assert _function_text(by_setting) == strict


# -- a closure over a plain settings object is read by the object's attributes, not its address. A bound value was
# once read by its ``repr``; a plain object's is ``<Cfg object at 0x...>``. Made one after the other, the first
# freed, ``Cfg(1.0)`` and ``Cfg(0.5)`` took one address (100 of 100 tries in CPython) and the lowered cut read as the
# base's check, the same hole again; two equal settings alive at once read as two checks.


class Cfg:
    """A notebook's settings object: no ``__repr__`` of its own."""

    def __init__(self, cut: float) -> None:
        self.cut = cut


def reading(cfg: Cfg) -> Callable[[Any], str]:
    def score_map(value: Any) -> str:
        if isinstance(value, str):
            return "pass" if value == "C" else "fail"
        return "pass" if value >= cfg.cut else "fail"
    return score_map


def test_a_settings_object_whose_cut_was_lowered_is_another_check() -> None:
    """One object, one address: a notebook's ``cfg.cut = 0.5`` between the base's reading and the candidate's."""
    cfg = Cfg(1.0)
    strict = _function_text(reading(cfg))
    cfg.cut = 0.5
    assert _function_text(reading(cfg)) != strict
    cfg.cut = 1.0
    assert _function_text(reading(cfg)) == strict


def test_a_lowered_cut_in_a_settings_object_made_after_the_first_is_another_check() -> None:
    """Each map made and read with its settings object freed after it, as a notebook's one-off ``Cfg(…)``."""
    assert _function_text(reading(Cfg(1.0))) != _function_text(reading(Cfg(0.5)))


def test_two_equal_settings_objects_alive_at_once_are_one_check(logs: Path, worse: Path) -> None:
    base_cfg, cand_cfg = Cfg(1.0), Cfg(1.0)  # both alive: two addresses
    assert _function_text(reading(base_cfg)) == _function_text(reading(cand_cfg))
    cmp = op.compare(op.from_inspect(logs, score_map=reading(base_cfg)),
                     op.from_inspect(worse, score_map=reading(cand_cfg)), release=RULE)
    assert not any("check_changed" in reason for reason in cmp.table["reason"])
    assert cmp.table.set_index("criterion").loc["world_refunded", "pass_to_fail"] == 3


def test_a_lowered_cut_read_through_compare_is_check_changed(logs: Path, worse: Path) -> None:
    base = op.from_inspect(logs, score_map=reading(Cfg(1.0)))
    cmp = op.compare(base, op.from_inspect(worse, score_map=reading(Cfg(0.5))), release=RULE)
    row = cmp.table.set_index("criterion").loc["world_refunded"]
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE" and row["reason"].startswith("check_changed")
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
