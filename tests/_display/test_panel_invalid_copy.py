"""The panel of a copy no criterion scores says so before the checks it shows.

A copy labeled invalid (its transform checked) has no verdict rows, yet its panel still lists what its checks
found: ``BAD state_matches: side_effect …`` and an unexpected change, with no word that the gate counted none of
it (``state_matches`` 4 of 4 PASS beside a panel showing a ``BAD`` line of the very criterion).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

from _metamorphic_systems import case, mm_suite, transform

import oloproof_nb as op
from oloproof_nb._display.panel import UNSCORED_NOTE


def _run(make_suite: Callable[..., Path], labels: list[dict[str, object]]) -> op.Run:
    cases = [case(f"c{i}", expected={"answer": "done", "state": {"items": {f"c{i}": "marked"}}}) for i in range(3)]
    root = mm_suite(make_suite, cases, [transform("t", "!state", minimum_validity=0.6)],
                    [{"type": "state_matches", "mode": "changes"},
                     {"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}], {"t": labels})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)
        return op.run(op.load_suite(root), progress=False)


def test_a_copy_labeled_invalid_says_no_criterion_scores_it(make_suite: Callable[..., Path]) -> None:
    # 2 of 3 pairs valid, 0.667 >= 0.6: checked, so c1~t (invalid) is scored by no criterion
    run = _run(make_suite, [{"case_id": "c0~t", "valid": True}, {"case_id": "c1~t", "valid": False},
                            {"case_id": "c2~t", "valid": True}])
    assert run.unscored_ids == {"c1~t"}
    state = run.verdicts[run.verdicts.criterion == "state_matches"]
    assert sorted(state.case_id) == ["c0", "c0~t", "c1", "c2", "c2~t"]  # counted by hand: 3 sources + 2 valid copies
    text = repr(run.panel("c1~t")).splitlines()
    assert text[2] == f"  {UNSCORED_NOTE}"
    assert any(line.strip().startswith("BAD state_matches: side_effect") for line in text)  # what it qualifies
    page = run.panel("c1~t")._repr_html_()
    assert f"<p><b>{UNSCORED_NOTE}</b></p>" in page
    for scored in ("c0~t", "c1"):  # a scored copy, and the source of the unscored one
        assert UNSCORED_NOTE not in repr(run.panel(scored)) and UNSCORED_NOTE not in run.panel(scored)._repr_html_()


def test_labels_that_decide_nothing_leave_the_panel_as_it_was(make_suite: Callable[..., Path]) -> None:
    # 1 of 3 valid, 0.333 < 0.6: not checked, so every copy is scored, c1~t too, and its panel says nothing more
    run = _run(make_suite, [{"case_id": "c0~t", "valid": True}, {"case_id": "c1~t", "valid": False},
                            {"case_id": "c2~t", "valid": False}])
    assert not run.unscored_ids
    panel = run.panel("c1~t")
    assert not panel.unscored and UNSCORED_NOTE not in repr(panel)
    assert set(panel.verdicts.criterion) == {"state_matches", "same_state_under_t"}
