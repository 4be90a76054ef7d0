"""How two runs' checks differ: the checks judging a criterion, its code, the validity labels and what they leave out.

What ``op.compare`` notes (a criterion ``check_changed``), what ``op.load_runs``
refuses to pool, and what a baseline judged by other checks is refused for:
:func:`changed_checks` (a criterion's settings, the rest of the suite it is judged
with, the suite's own code it calls), :func:`check_one_code` (the code of every
pooled run's checks), :func:`label_difference` (the validity labels),
:func:`unscored_difference` and :func:`validity_check_difference` (the copies
their verdicts leave out, and why).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._config.files import yaml_number
from .._config.imports import CODE_KEY
from .._config.shared_rules import ignored_paths, shared_list_rules
from .._core.evaluator import Evaluator
from .._core.labels import Label
from ..errors import OloproofError, terminal_text
from ..evaluators.fault import replay_judges
from ..evaluators.metamorphic import MetamorphicRelation
from ..evaluators.state import pinned_paths
from .run import Run

__all__ = ["changed_checks", "check_one_code", "label_difference", "unscored_difference", "validity_check_difference"]


def unscored_difference(a: Run, b: Run) -> str:
    """The copies one run's verdicts leave out and the other's score (:attr:`Run.unscored_ids`), in words
    (``1 scored in one of the two only, first 'ord-018~injected'``), or "" when both leave out the same."""
    moved = sorted(a.unscored_ids ^ b.unscored_ids)
    return f"{len(moved)} scored in one of the two only, first {moved[0]!r}" if moved else ""


def validity_check_difference(a: Run, b: Run) -> str:
    """How ``b``'s suite checks the validity labels otherwise than ``a``'s, for runs whose labels are the same but
    whose verdicts leave out other copies (:attr:`Run.unscored_ids`): the first transform both declare whose
    ``minimum_validity`` differs (``transform injected: minimum_validity 0.99, not 0.85``), else ``other
    transforms or another case file``. ``op.load_runs`` refuses to pool such runs, and a baseline made so is refused."""
    mine = {t.name: t.minimum_validity for t in a.config.metamorphic.transforms}
    for t in b.config.metamorphic.transforms:
        if t.name in mine and t.minimum_validity != mine[t.name]:
            return (f"transform {t.name}: minimum_validity {yaml_number(t.minimum_validity)}, not "
                    f"{yaml_number(mine[t.name])}")  # every digit: 0.8500001 and 0.85 read "0.85, not 0.85"
    return "other transforms or another case file"


def label_difference(a: Mapping[str, Mapping[str, Label]], b: Mapping[str, Mapping[str, Label]],
                     sides: tuple[str, str] = ("in one", "in the other")) -> str:
    """How two runs' validity labels differ (``transform injected: ord-024~injected is labeled otherwise``), or
    empty when every pair has the same label (the majority of its judgements) in both: a reworded note, or one
    more judgement that changes no majority, is no difference. ``op.load_runs`` refuses to pool such runs,
    ``op.compare`` notes them, and a baseline whose labels leave out other copies than the run's is refused.
    ``a``, ``b``: each transform's pair labels (:func:`~.run.stored_pair_labels` of a Run, worked out once).

    A pair judged on one side only is no pair labeled otherwise: it is said so, with ``sides`` naming ``a`` and
    ``b`` (``ord-024~injected is not labeled in the run and labeled valid in the file now``): a judgement added
    since, or one taken out, read as a label changed, and the user looked for a valid turned invalid."""
    for transform in sorted(set(a) | set(b)):
        left, right = a.get(transform, {}), b.get(transform, {})
        if left != right:
            case_id = min(c for c in set(left) | set(right) if left.get(c) != right.get(c))
            mine, theirs = left.get(case_id), right.get(case_id)
            if mine and theirs:
                return f"transform {transform}: {case_id} is labeled otherwise"
            said = (f"is labeled {mine} {sides[0]} and not labeled {sides[1]}" if mine else
                    f"is not labeled {sides[0]} and labeled {theirs} {sides[1]}")
            return f"transform {transform}: {case_id} {said}"
    return ""


def _code_of(run: Run, ev: Evaluator) -> dict[str, tuple[str, str | None]]:
    """What of the suite's own code ``ev`` calls in ``run``: ``{option or "validators.<name>": (module:function,
    digest)}`` (its python check, each validator it may run, by the name a case's contract gives); the digest is
    None when the run did not record it (written before runs did)."""
    registered = run.config.validators
    calls = [(option, spec) for option, spec in ev.user_code()]
    calls += [(f"validators.{name}", registered[name]) for name in ev.validators_run(list(registered))]
    return {what: (spec, run.manifest.digests.get(CODE_KEY + spec)) for what, spec in calls}


def check_one_code(runs: Sequence[Run]) -> None:
    """Every run that recorded the code of a check the first run's criteria call recorded the same: a run that
    recorded none (written before runs did) passes the comparison with the first run, so the code of the others
    is compared among them too (one pass over the runs, whatever their number)."""
    first = runs[0]
    criterion_of: dict[str, str] = {}
    for ev in first.config.evaluators:
        for spec, _ in _code_of(first, ev).values():
            criterion_of.setdefault(spec, ev.name)
    seen: dict[str, tuple[str, str]] = {}  # spec -> (digest, run id) of the first run that recorded it
    for run in runs:
        for spec, criterion in criterion_of.items():
            digest = run.manifest.digests.get(CODE_KEY + spec)
            if digest is None:
                continue
            earlier = seen.setdefault(spec, (digest, run.run_id))
            if earlier[0] != digest:
                raise OloproofError(f"{terminal_text(str(run.directory))}: runs {earlier[1]} and {run.run_id} judge "
                                    f"{criterion} with different checks (the code of {spec} differs); pool runs of "
                                    "the same suite configuration and code")


def _rule_of(run: Run) -> tuple[list[str], ...]:
    """The suite's tool_errors rule as what it decides: each list a set, status values without case."""
    rule = run.config.tool_errors
    return (sorted(set(rule.ok_keys)), sorted(set(rule.error_keys)), sorted(set(rule.status_keys)),
            sorted({v.casefold() for v in rule.status_values}))


def _replay_checks(run: Run) -> tuple[Any, ...]:
    """What a fault replay is judged with (``evaluators/fault.py`` ``judge_replay``), as it uses it: the
    ``normalize`` flags of the answer checks, the settings of the state checks (the defaults when the suite
    declares none) and the paths every ``state_unchanged`` check keeps, each a set; and whether an
    ``outcome_contract`` check judges the cases (a recovery only the answer shows is then ``missing``: a suite that
    gained one compared its fault criterion as unchanged)."""
    answers, states, unchanged = replay_judges(run.config.evaluators)
    kept = {path for ev in unchanged for path in ev.paths}
    outcomes = any(ev.type == "outcome_contract" for ev in run.config.evaluators)
    return (sorted({ev.normalize for ev in answers}),
            sorted({json.dumps(ev.settings(), sort_keys=True, default=str) for ev in states}), sorted(kept), outcomes)


def _pair_paths(run: Run) -> tuple[list[str], list[str], list[tuple[str, str, str | None]]]:
    """What a ``same_state`` pair is compared outside and inside of (``_core/pairs.py`` ``compare_pair``), each a
    set: the ``ignore:`` patterns every ``changes`` or ``whole`` ``state_matches`` check gives, and the paths a
    ``state_unchanged`` or ``paths``-mode check keeps; and the list rules every ``state_matches`` check gives, by
    which its lists are aligned, in order (the first match wins)."""
    evaluators = run.config.evaluators
    lists: list[tuple[str, str, str | None]] = [(pattern, rule.how, rule.key)
                                                for pattern, rule in shared_list_rules(evaluators).items()]
    return sorted(set(ignored_paths(evaluators))), sorted(set(pinned_paths(evaluators))), lists


def changed_checks(a: Run, b: Run) -> dict[str, str]:
    """The criteria both runs judge whose checks differ, each with how (in ``a``'s order of criteria).

    A check differs when its evaluator's settings do (:meth:`~oloproof_nb._core.evaluator.Evaluator.settings`),
    when the rest of the suite does for an evaluator judged with it (``fault_recovery``: the ``tool_errors`` rule,
    compared as what it decides, and the answer and state checks its replays are judged with; a ``same_state``
    relation: the ``ignore:`` patterns its pairs are compared outside and the paths kept under them, see
    :func:`~oloproof_nb._config.shared_rules.ignored_paths`),
    or when the suite's own code it calls does: a ``python`` check's function, the registered validators an
    ``outcome_contract`` may run (another set of names, another ``module:function`` under a name, or another
    digest of its code, which each run records in its manifest: any edit of the function's module file counts).
    A digest only one run recorded (the other was written before runs recorded code) cannot tell, and does not
    count. ``op.compare`` calls such a criterion ``check_changed``; ``op.load_runs`` refuses to pool its runs, and
    a baseline judged by other checks is refused.
    """
    theirs = {ev.name: ev for ev in b.config.evaluators}
    out = {}
    for ev in a.config.evaluators:
        other = theirs.get(ev.name)
        if other is None:
            continue
        if ev.settings() != other.settings():
            out[ev.name] = "configured differently"
            continue
        if ev.judged_with_the_suite and _rule_of(a) != _rule_of(b):
            out[ev.name] = "the suite's tool_errors rule differs"
            continue
        if ev.judged_with_the_suite and _replay_checks(a) != _replay_checks(b):
            out[ev.name] = "the answer, state and outcome checks its replays are judged with differ"
            continue
        if isinstance(ev, MetamorphicRelation) and ev.relation == "same_state" and _pair_paths(a) != _pair_paths(b):
            # a pair is compared outside the state checks' ignore patterns: a candidate's suite that ignored what
            # its injected copies changed held every pair, NO_REGRESSION
            out[ev.name] = ("the state checks' ignore patterns or kept paths (or list rules) its pairs are compared "
                            "by differ")
            continue
        mine, yours = _code_of(a, ev), _code_of(b, other)
        if mine.keys() != yours.keys():
            out[ev.name] = "it may run other validators"
            continue
        for what, (spec, digest) in mine.items():
            their_spec, their_digest = yours[what]
            if spec != their_spec:
                out[ev.name] = f"{what} is {their_spec}, not {spec}"
            elif digest is not None and their_digest is not None and digest != their_digest:
                out[ev.name] = f"the code of {spec} differs"
            else:
                continue
            break
    return out
