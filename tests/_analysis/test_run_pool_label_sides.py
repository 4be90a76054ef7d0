"""Runs made with different validity labels are not pooled, and the error names which run holds a pair's label when
only one of them judged it: each side is named by its run, in the order the runs were given."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from _metamorphic_systems import all_valid, case, mm_suite, relabel, transform

import oloproof_nb as op


def test_a_pair_labeled_in_one_run_only_is_named_with_the_run_that_holds_it(make_suite: Callable[..., Path]) -> None:
    """Run a is made before c2~t is labeled (no judgement of it), run b after (one ``valid`` judgement). Pooled in
    either order, the error says the pair is not labeled in the run without the judgement and labeled valid in the
    one with it: ``a`` is the one without, whichever place it has."""
    ids = ["c1", "c2", "c3"]
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t")], [{"type": "answer_matches"}],
                    {"t": all_valid(["c1", "c3"], "t")})
    a = op.run(op.load_suite(root), out=root / "runs" / "a", progress=False)
    relabel(root / "labels" / "t.jsonl", {"c2~t": True})
    b = op.run(op.load_suite(root), out=root / "runs" / "b", progress=False)
    without, with_it = re.escape(f"in {a.run_id}"), re.escape(f"in {b.run_id}")
    with pytest.raises(op.OloproofError, match=rf"\(transform t: c2~t is not labeled {without} and labeled valid "
                                               rf"{with_it}\)"):
        op.load_runs([a.directory, b.directory])
    with pytest.raises(op.OloproofError, match=rf"\(transform t: c2~t is labeled valid {with_it} and not labeled "
                                               rf"{without}\)"):
        op.load_runs([b.directory, a.directory])
