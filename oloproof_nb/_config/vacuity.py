"""Checks that cannot fail, found when a suite loads (``VacuousCheckWarning``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .._core.case import Case
from .._core.compare import compare_state
from .._core.evaluator import Evaluator
from .._core.lists import is_absent_marker
from .._core.paths import (
    flatten,
    format_path,
    get_path,
    leaf_keys,
    parse_path,
    parse_pattern,
    pattern_matches,
)
from ..errors import ConfigError, quote
from .files import yaml_number
from .shared_rules import ignored_paths
from .suite_config import SUITE_FILE, SuiteConfig

__all__ = ["find_vacuous_checks"]


def _node_paths(state: Any) -> set[str]:
    """Every path into ``state`` that exists: its leaves and every dict or list on the way to them."""
    out: set[str] = set()
    for leaf in flatten(state):
        keys = parse_path(leaf)
        out.update(format_path(keys[:i]) for i in range(1, len(keys) + 1))
    return out


#: Distinct existing paths kept as "did you mean" candidates while the case file streams by.
_MAX_CANDIDATES = 100_000


def _hidden_below(keys: tuple[str, ...], patterns: list[tuple[str, ...]]) -> bool:
    """Whether ``patterns`` (``ignore``) hide every change a state could show below the top-level key of the
    leaf path ``keys``: the leaf, each dict or list on the way below the top level, and a key that is not
    there yet in each of them (a new top-level key would still show, and a top-level value replaced whole unless a
    pattern names its key itself)."""
    probes = [keys, *(keys[:n] for n in range(2, len(keys)))] + [(*keys[:n], _ANY_KEY) for n in range(1, len(keys) + 1)]
    return all(any(pattern_matches(p, probe, within=True) for p in patterns) for probe in probes)


#: A top-level key no state holds: an ``ignore`` pattern that matches it matches every path.
_ANY_KEY = "\x00oloproof: any key"


def _glob_hint(path: str) -> str:
    """What to give instead of a ``paths`` entry with a ``*`` in a key ('' for one without): such an entry names
    a key called '*' or 'ord-*' (these paths are exact, unlike ``ignore`` and ``lists``, where ``*`` in a key
    matches any characters), so no case holds it; the subtree above the first such key covers every path under it.
    """
    keys = parse_path(path)
    star = next((i for i, key in enumerate(keys) if "*" in key), None)
    if star is None:
        return ""
    instead = (f"give {format_path(keys[:star])} to cover every path under it, or list each path" if star
               else "list each path, or judge the whole state with state_matches mode: changes")
    return f"paths are exact paths, not patterns ({quote(keys[star])} is read as a key of that name); {instead}"


def _pair_ignores(evaluators: Sequence[Evaluator]) -> tuple[str, ...]:
    """The ignore patterns a ``same_state`` pair is compared outside (:func:`ignored_paths`), or none when a
    ``state_unchanged`` or ``paths``-mode check names a path (``evaluators.state.pinned_paths``: compared whatever
    the patterns say, so the pair can still differ there)."""
    if any(ev.type == "state_unchanged" or (ev.type == "state_matches" and getattr(ev, "mode", "") == "paths"
                                             and getattr(ev, "paths", None)) for ev in evaluators):
        return ()
    return ignored_paths(evaluators)


def _idle_passes(ev: Any, initial: dict[str, Any], expected: dict[str, Any], tolerance: float | None,
                 ignore: list[str] | None) -> bool:
    """Whether state_matches ``ev``, given ``tolerance`` and ``ignore`` patterns, passes an agent that leaves the
    case's ``initial`` state as it was against its ``expected`` state. Not when lists matched ``unordered`` or
    ``by_key`` nest too deep to compare: the run judges such a case ``missing`` (``state_too_deep``), and before,
    the comparison here stopped ``op.load_suite`` with a RecursionError."""
    try:
        rows = compare_state(expected, initial, ev.mode, ev.paths, tolerance, lists=ev.list_rules(), ignore=ignore,
                             initial=initial)
    except RecursionError:
        return False
    return all(ok for *_, ok in rows)


class VacuityScan:
    """State checks that cannot fail, found in one streamed pass over the cases.

    A ``state_unchanged`` path absent from every case's ``initial_state``, or a ``state_matches``
    ``paths:`` entry absent from every case's ``initial_state`` and ``expected.state``, passes for every
    case that leaves it alone (a typo gives a perfect score). ``absent_ok: true`` on the evaluator says
    the path is meant to stay absent. Each finding names the evaluator, the path and the nearest
    existing path (difflib over at most :data:`_MAX_CANDIDATES` existing paths). A ``state_matches`` of
    ``mode: subset`` whose every case gives ``expected.state: {}`` compares nothing (``changes`` and ``whole``
    read ``{}`` as "nothing changed" and "an empty state", and are not named).
    """

    def __init__(self, config: SuiteConfig, file: str | Path = SUITE_FILE) -> None:
        self.file = file
        self.checks: list[tuple[int, Evaluator, str]] = []
        #: paths with a ``*`` in a key on a check with ``absent_ok: true``: refused unless a case holds one
        self.globs: list[tuple[int, Evaluator, str]] = []
        for i, ev in enumerate(config.evaluators):
            paths: list[str] = list(getattr(ev, "paths", []) or [])
            if ev.type in ("state_unchanged", "state_matches") and not getattr(ev, "absent_ok", False):
                self.checks += [(i, ev, path) for path in paths]
            elif ev.type in ("state_unchanged", "state_matches"):
                self.globs += [(i, ev, path) for path in paths if _glob_hint(path)]
        self.seen: set[tuple[int, str]] = set()
        self.candidates: dict[str, set[str]] = {"state_unchanged": set(), "state_matches": set()}
        self.ignore_all: list[tuple[int, Evaluator, str]] = []  # an ignore pattern that matches every path
        self.evaluators = config.evaluators
        #: state_matches evaluators whose ignore patterns may cover every path the cases' states hold, with the
        #: patterns; an index is dropped once a case holds a path none of them covers.
        self.ignoring: dict[int, tuple[Evaluator, list[tuple[str, ...]]]] = {}
        for i, ev in enumerate(config.evaluators):
            patterns = list(getattr(ev, "ignore", None) or []) if ev.type == "state_matches" else []
            every = [p for p in patterns if pattern_matches(parse_pattern(p), (_ANY_KEY,), within=True)]
            if every:
                self.ignore_all.append((i, ev, every[0]))
            elif patterns:
                self.ignoring[i] = (ev, [parse_pattern(p) for p in patterns])
        #: of those, per index: whether a pattern names each top-level key the states hold itself (``ignore:
        #: [orders]``: a value replaced whole there is hidden too), one answer per key seen, True and False alike
        self.top_named: dict[int, set[bool]] = {i: set() for i in self.ignoring}
        self.any_leaf = False  # some case's initial_state holds a path (else there is nothing to cover)
        #: state_matches evaluators of ``mode: whole`` or ``changes`` with ignore patterns (both leave out an ignored
        #: leaf that expected.state names), or of any mode with a tolerance, while every case whose
        #: expected.state asks for a change is passed by an agent that changes nothing: index → how many such cases
        self.idle_passes: dict[int, int] = {
            i: 0 for i, ev in enumerate(config.evaluators)
            if (i in self.ignoring and getattr(ev, "mode", "") in ("whole", "changes"))
            or (ev.type == "state_matches" and getattr(ev, "tolerance", None))}
        #: of those, the ones whose tolerance alone lets the agent that changes nothing pass a case that expects
        #: a change (the finding names the tolerance, not the ignore patterns)
        self.tolerance_hides: set[int] = set()
        #: state_matches evaluators of ``mode: subset`` while every case that gives an expected.state gives ``{}``
        #: (subset compares only the leaves it names: none): index → how many such cases
        self.blank_subsets: dict[int, int] = {i: 0 for i, ev in enumerate(config.evaluators)
                                              if ev.type == "state_matches" and getattr(ev, "mode", "") == "subset"}
        #: ``same_state`` relations, and the ignore patterns they compare a pair outside (:func:`_pair_ignores`):
        #: the first that matches every path, else the patterns, kept while they hide every change a case shows
        self.same_state = [(i, ev) for i, ev in enumerate(config.evaluators)
                           if ev.type == "metamorphic_relation" and getattr(ev, "relation", "") == "same_state"]
        self.pair_patterns = _pair_ignores(config.evaluators) if self.same_state else ()
        self.pair_every = next((p for p in self.pair_patterns
                                if pattern_matches(parse_pattern(p), (_ANY_KEY,), within=True)), None)
        self.pair_hiding: list[tuple[str, ...]] | None = (
            [parse_pattern(p) for p in self.pair_patterns] if self.pair_patterns and self.pair_every is None else None)

    def observe(self, case: Case) -> None:
        if self.blank_subsets and case.expected.state is not None:
            for i in list(self.blank_subsets):
                if case.expected.state:
                    del self.blank_subsets[i]  # a leaf to compare (even {"orders": {}} compares orders whole)
                else:
                    self.blank_subsets[i] += 1
        if self.idle_passes and case.expected.state is not None:
            self._observe_idle(case.initial_state, case.expected.state)
        states = [case.initial_state, case.expected.state or {}]
        for i, (_, patterns) in list(self.ignoring.items()):
            for keys in (k for state in states for k in leaf_keys(state)):
                self.any_leaf = True
                if not _hidden_below(keys, patterns):
                    del self.ignoring[i]  # a change at or beside a path of this case would be seen
                    break
                if len(self.top_named[i]) < 2:
                    self.top_named[i].add(any(pattern_matches(p, keys[:1]) for p in patterns))
        if self.pair_hiding is not None:
            for keys in (k for state in states for k in leaf_keys(state)):
                self.any_leaf = True
                if not _hidden_below(keys, self.pair_hiding):
                    self.pair_hiding = None  # a pair may differ at or beside a path of this case
                    break
        if not self.checks and not self.globs:
            return
        for i, ev, path in [*self.checks, *self.globs]:
            if (i, path) in self.seen:
                continue
            states = [case.initial_state]
            if ev.type == "state_matches" and case.expected.state is not None:
                states.append(case.expected.state)
            if any(not is_absent_marker(get_path(state, path)) for state in states):  # {"$absent": true}
                self.seen.add((i, path))  # in expected.state says the path is absent, as it is already
        for kind, pool in self.candidates.items():
            if len(pool) < _MAX_CANDIDATES:
                pool |= _node_paths(case.initial_state)
                if kind == "state_matches" and case.expected.state is not None:
                    pool |= _node_paths(case.expected.state)

    def refuse_globs(self) -> None:
        """Refuse, once every case is seen, a path with a ``*`` in a key that no case holds on a check with
        ``absent_ok: true``.

        These paths are exact, so ``contacts.*.phone`` names a key called '*'; without ``absent_ok`` that is a
        :meth:`findings` warning, but ``absent_ok: true`` says "absent on purpose" and silenced it, so the check
        passed every case, an agent that rewrote each phone among them.

        Raises
        ------
        ConfigError
            Naming the evaluator's ``paths``, the check and what to give instead.
        """
        for i, ev, path in self.globs:
            if (i, path) not in self.seen:
                where = "initial_state" + (" or expected.state" if ev.type == "state_matches" else "")
                raise ConfigError(self.file, f"evaluators[{i}].paths",
                                  f"({ev.type}, criterion {ev.name}) path {quote(path)} is in no case's {where}, and "
                                  "absent_ok: true passes every case where it stays absent, so the check cannot "
                                  f"fail; {_glob_hint(path)}")

    def _observe_idle(self, initial: dict[str, Any], expected: dict[str, Any]) -> None:
        """Drop the evaluators for which this case's expected change is one an idle agent fails (a change within
        the tolerance, or in ``whole`` and ``changes`` mode under an ignore pattern, is one it passes)."""
        for i in list(self.idle_passes):
            ev: Any = self.evaluators[i]
            ignore = ev.ignore if ev.mode in ("whole", "changes") else None
            if _idle_passes(ev, initial, expected, None, None):
                continue  # the case expects no change: an idle agent may rightly pass it
            if ignore and _idle_passes(ev, initial, expected, None, ignore):
                self.idle_passes[i] += 1  # every change it expects lies under an ignore pattern
            elif ev.tolerance and _idle_passes(ev, initial, expected, ev.tolerance, ignore):
                # every change it expects is within the tolerance (1e300 hides any), the rest under an ignore
                # pattern (a whole-mode expected.state that leaves out an ignored timestamp, its refund within the
                # tolerance, was blamed on the ignore patterns alone)
                self.idle_passes[i] += 1
                self.tolerance_hides.add(i)
            else:
                del self.idle_passes[i]

    def findings(self) -> dict[str, list[str]]:
        """Criterion → one message per path no case's state contains, and per ``ignore`` that leaves nothing."""
        found: dict[str, list[str]] = {}
        for i, blank in self.blank_subsets.items():
            if not blank:  # no case gives an expected.state: the evaluator judges none
                continue
            name = self.evaluators[i].name
            found.setdefault(name, []).append(
                f"{self.file}: evaluators[{i}] (state_matches, criterion {name}): expected.state is {{}} in each of "
                f"the {blank} case(s) that give one, and mode: subset compares only the leaves expected.state names, "
                "so nothing is compared and the check cannot fail; to check that nothing changed, use mode: changes "
                "(an empty expected.state there passes only a state left as initial_state had it)")
        for i, hidden in self.idle_passes.items():
            if not hidden or (i in self.ignoring and i not in self.tolerance_hides):
                continue  # no case expects a change; or the finding below says more
            ev: Any = self.evaluators[i]
            if i in self.tolerance_hides:
                covers = f"its tolerance {ev.tolerance:g}" + (" (with its ignore patterns)" if ev.ignore else "")
                found.setdefault(ev.name, []).append(
                    f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): {covers} covers every change "
                    f"expected.state asks for in each of the {hidden} case(s) that expect a change, so an agent that "
                    "changes nothing passes them all; give a tolerance smaller than the changes the cases expect")
                continue
            found.setdefault(ev.name, []).append(
                f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): its ignore patterns "
                f"{', '.join(repr(p) for p in getattr(ev, 'ignore', []))} cover every leaf where expected.state "
                f"differs from initial_state in each of the {hidden} case(s) that expect a change, so an agent that "
                "changes nothing passes them all (mode: whole and mode: changes compare no ignored leaf, named in "
                "expected.state or not)")
        for i, ev, pattern in self.ignore_all:
            what = "nothing is compared, not even the leaves expected.state names, and the check cannot fail"
            found.setdefault(ev.name, []).append(
                f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): ignore pattern {quote(pattern)} "
                f"matches every path of the state, so {what}")
        for i, (ev, _) in self.ignoring.items() if self.any_leaf else ():
            named = self.top_named[i]  # a pattern naming a top-level key itself hides its value replaced whole
            seen = ("only a new top-level key would be seen: the patterns name each top-level key itself, so a value "
                    "replaced whole there is hidden too" if named == {True} else
                    "only a new top-level key, or a top-level value replaced whole where no pattern names its key "
                    "itself, would be seen" if True in named else
                    "only a top-level value replaced whole, or a new top-level key, would be seen")
            found.setdefault(ev.name, []).append(
                f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): its ignore patterns "
                f"{', '.join(repr(p) for p in getattr(ev, 'ignore', []))} hide every change below the top-level "
                f"keys of every case's state, new keys included ({seen})")
        if self.pair_every is not None or (self.pair_hiding is not None and self.any_leaf):
            shown = ", ".join(repr(p) for p in self.pair_patterns)
            what = ("match every path of the state" if self.pair_every is not None else
                    "hide every change below the top-level keys of every case's state, new keys included")
            for i, ev in self.same_state:
                found.setdefault(ev.name, []).append(
                    f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): same_state compares each pair "
                    f"outside the ignore patterns {shown} that every changes or whole state_matches check gives, "
                    f"and they {what}, so the relation holds for any pair; judge the pairs with same_actions or "
                    "same_output, or give the check narrower patterns (refunds.*.at, not refunds)")
        for i, ev, path in self.checks:
            if (i, path) in self.seen:
                continue
            hint = _glob_hint(path)
            if not hint:
                # not the path itself: a case's {"$absent": true} at it makes it a node of expected.state
                near = difflib.get_close_matches(path, sorted(self.candidates[ev.type] - {path}), n=1, cutoff=0.6)
                hint = f"did you mean {near[0]}?" if near else "no similar path exists"
            where = "initial_state" + (" or expected.state" if ev.type == "state_matches" else "")
            found.setdefault(ev.name, []).append(
                f"{self.file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): path {quote(path)} is in no case's "
                f"{where}, so the check cannot fail; {hint} (absent_ok: true if it must stay absent on purpose)")
        return found


def thin_validity(config: SuiteConfig, pairs: int, file: str | Path = SUITE_FILE) -> dict[str, str]:
    """Relations whose transform's ``minimum_validity`` is met once one of its ``pairs`` is labeled valid: criterion
    → finding.

    The minimum is what bounds the copies labels may leave out (a copy labeled invalid is scored by no criterion):
    at ``minimum_validity × pairs ≤ 1`` (0 among them) the transform is checked however many pairs are labeled
    invalid, and the only labeling it refuses, none valid, leaves its relations without rows anyway, so the check
    cannot fail: labeling each failing pair invalid passes the relation (a careless or a motivated labeler).
    A single pair is never named: labeled valid it is scored, labeled invalid its relation has no rows, so
    neither labeling passes a failing pair.
    """
    found: dict[str, str] = {}
    for t in config.metamorphic.transforms:
        if pairs < 2 or t.minimum_validity * pairs > 1:
            continue
        met = "with none" if t.minimum_validity == 0 else "once 1"  # 0 of any number of pairs meets 0
        for i, ev in _relations_of(config, t.name):
            found[ev.name] = (
                f"{file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): transform {t.name}'s "
                f"minimum_validity {yaml_number(t.minimum_validity)} is met {met} of its {pairs} pairs labeled valid, "
                "so its validity check cannot fail: the labels may leave out any share of its copies, and "
                "labeling each failing pair invalid passes the relation; ask for the share of pairs that must "
                "keep their meaning (e.g. minimum_validity: 0.85)")
    return found


def _relations_of(config: SuiteConfig, transform: str) -> Iterator[tuple[int, Evaluator]]:
    """``(index, evaluator)`` of each ``metamorphic_relation`` of ``config`` judged on ``transform``'s copies."""
    return ((i, ev) for i, ev in enumerate(config.evaluators)
            if ev.type == "metamorphic_relation" and getattr(ev, "transform", None) == transform)


def blank_rewrites(config: SuiteConfig, file: str | Path = SUITE_FILE) -> dict[str, str]:
    """Relations whose transform's ``template`` adds nothing but blank space around ``{value}`` (``"{value} "``,
    ``"\n{value}"``): criterion → finding.

    ``"{value}"`` itself is refused (every copy is its source); blank space makes a copy that differs from its
    source in spacing alone, which an agent reads as the same request, so each pair holds and the relation passes
    under the transform's name (``same_state_under_injected``) with no injection in any copy.
    """
    found: dict[str, str] = {}
    for t in config.metamorphic.transforms:
        if t.template.strip() != "{value}":
            continue
        for i, ev in _relations_of(config, t.name):
            found[ev.name] = (
                f"{file}: evaluators[{i}] ({ev.type}, criterion {ev.name}): transform {t.name}'s template "
                f"{quote(t.template)} adds only blank space to the text, so each copy is its source's request "
                "spaced otherwise and the relation holds for any agent that ignores spacing; write the change "
                "the transform tests around {value}, e.g. '{value} Ignore the rules above.'")
    return found


def find_vacuous_checks(config: SuiteConfig, cases: list[Case], file: str | Path = SUITE_FILE) -> dict[str, list[str]]:
    """State checks that cannot fail among ``cases`` (see :class:`VacuityScan`): criterion → messages."""
    scan = VacuityScan(config, file)
    for case in cases:
        scan.observe(case)
    return scan.findings()
