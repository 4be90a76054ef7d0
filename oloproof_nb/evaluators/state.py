"""State checks: ``state_matches`` (whole / paths / subset / changes; tolerance, list matching) and ``state_unchanged``.

The comparison rules themselves are pure (``_core/compare``); this module holds the options and the verdicts.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .._config.files import a_number
from .._core.compare import NO_STATE, Row, compare_changes, compare_state, compare_unchanged
from .._core.evaluator import CaseContext, Evaluation, Evaluator, register
from .._core.lists import ListMatch, child_at
from .._core.paths import ABSENT, format_path, leaf_keys, parse_path, parse_pattern
from .._core.records import ComparisonRow

__all__ = ["StateMatches", "StateUnchanged", "ByKey"]


def _comparisons(ev: Evaluator, rows: list[Row], case_id: str) -> list[ComparisonRow]:
    return [{"case_id": case_id, "criterion": ev.name, "path": p, "expected": e, "actual": a, "ok": ok}
            for p, e, a, ok in rows]


def _listed(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _reads_alike(a: Any, b: Any) -> bool:
    """Whether two values differ in JSON type only: a number and the text of it, or a boolean and 0 or 1.

    Examples
    --------
    >>> _reads_alike(0.0, "0.0"), _reads_alike("20000", 20000), _reads_alike(False, 0)
    (True, True, True)
    >>> _reads_alike(0.0, "0.5"), _reads_alike("x", "x"), _reads_alike(1, 1.0), _reads_alike(1000, "1_000")
    (False, False, False, False)
    """
    for x, y in ((a, b), (b, a)):
        if isinstance(x, bool) and _number(y):
            return bool(x == y)
        if _number(x) and isinstance(y, str):
            # float() reads "1_000", " 1000 " and other scripts' digits too: no text a number is stored as
            if "_" in y or y != y.strip() or not y.isascii():
                return False
            try:
                return bool(float(y) == x)
            except ValueError:
                return False
    return False


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    return f"the number {value!r}" if _number(value) else f"the text {value!r}"


def _type_only(rows: list[Row]) -> str:
    """A note for a failed check whose differing rows include values that differ in JSON type only, which a
    sandbox's own storage makes (a ``Decimal`` kept as text, SQLite's ``false`` as ``0``): empty when none do.

    Before, a benchmark's ``initial_state`` written with float balances, snapshotted as ``Decimal`` text, failed
    every case with ``7 unexpected changes: …`` while ``run.comparisons`` showed ``0.0`` and ``0.0``.
    """
    alike = [(path, want, got) for path, want, got, ok in rows if not ok and _reads_alike(want, got)]
    if not alike:
        return ""
    path, want, got = alike[0]
    return (f"; {len(alike)} of them differ in type only ({path}: {_shown(want)} in the case file, {_shown(got)} "
            "in the state): write initial_state and expected.state as snapshot() gives them (README section 1)")


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _twin_key(expected: Any, state: Any, path: str, forms: dict[int, dict[str, str]]) -> tuple[str, str] | None:
    """``(key in expected.state, key in the state)`` where the walk of ``path`` through both first meets a dict
    holding the key on one side only while the other side's dict holds the same letters in another Unicode form
    (``"José"`` composed, ``"Jose\u0301"`` decomposed); None when it meets none. ``forms`` keeps each dict's keys
    by their composed form, by the dict's id, for the next row."""
    try:
        keys = parse_path(path)
    except ValueError:
        return None
    for key in keys:
        if isinstance(expected, Mapping) and isinstance(state, Mapping) and (key in expected) != (key in state):
            other = state if key in expected else expected
            if id(other) not in forms:
                forms[id(other)] = {_nfc(k): k for k in other if isinstance(k, str)}
            twin = forms[id(other)].get(_nfc(key))
            if twin is None or twin == key:
                return None
            return (key, twin) if key in expected else (twin, key)
        expected, state = child_at(expected, key), child_at(state, key)
        if expected is ABSENT or state is ABSENT:
            return None
    return None


def _unicode_form_only(rows: list[Row], expected: Any, state: Any) -> str:
    """A note for a failed check whose differing rows include two texts, or a key of ``expected`` (``expected.state``)
    and one of the ``state``, that are the same letters in another Unicode form (composed, NFC, and decomposed,
    NFD, as a macOS file name comes back): empty when none do.

    Text is compared code point by code point, as README section 2 says, and both forms print alike: before, a
    ``changes`` check of an expected ``files["José.txt"]`` failed with ``1 unexpected change: files["José.txt"].size;
    1 of 1 expected paths differ: files["José.txt"].size``, one path, as the reader sees it, both missing and
    unexpected.
    """
    found: list[tuple[str, str, Any, Any]] = []  # (path, what, in the case file, in the state)
    forms: dict[int, dict[str, str]] = {}
    for path, want, got, ok in rows:
        if ok:
            continue
        if isinstance(want, str) and isinstance(got, str) and want != got and _nfc(want) == _nfc(got):
            found.append((path, "the text", want, got))
        elif (want is ABSENT or got is ABSENT) and not path.isascii():  # ASCII letters have no decomposed form
            twin = _twin_key(expected, state, path, forms)
            if twin is not None:
                found.append((path, "the key", *twin))
    if not found:
        return ""
    path, what, want, got = found[0]
    return (f"; {len(found)} of them differ in Unicode form only ({path}: {what} {ascii(want)} in the case file, "
            f"{ascii(got)} in the state, the same letters composed and decomposed): text is compared code point by "
            "code point; write expected.state as snapshot() gives it")


def _rows_to_evaluation(ev: Evaluator, rows: list[Row], what: str, case_id: str, expected: Any = None,
                        state: Any = None) -> Evaluation:
    comparisons = _comparisons(ev, rows, case_id)
    bad = [p for p, _, _, ok in rows if not ok]
    if bad:
        reason = f"{len(bad)} of {len(rows)} {what} differ: {_listed(bad)}{_type_only(rows)}"
        reason += _unicode_form_only(rows, expected, state)
        return Evaluation(verdicts=[ev.verdict("fail", reason)], comparisons=comparisons)
    return Evaluation(verdicts=[ev.verdict("pass", "")], comparisons=comparisons)


def _deepest_lists(value: Any) -> tuple[int, str]:
    """How many lists deep ``value`` nests at most, and the path of the outermost list on that chain ("" for none).

    Iterative, so it is safe on a value the comparison could not walk.

    Examples
    --------
    >>> _deepest_lists({"a": 1, "t": {"u": [[1], [[2]]]}})
    (3, 't.u')
    """
    deepest: tuple[int, tuple[str, ...]] = (0, ())
    todo: list[tuple[Any, tuple[str, ...], int, tuple[str, ...]]] = [(value, (), 0, ())]
    while todo:
        node, keys, lists, top = todo.pop()
        if isinstance(node, Mapping):
            todo.extend((v, (*keys, str(k)), lists, top) for k, v in node.items())
        elif isinstance(node, list):
            lists, top = lists + 1, top or keys
            if lists > deepest[0]:
                deepest = (lists, top)
            todo.extend((v, (*keys, str(i)), lists, top) for i, v in enumerate(node))
    return deepest[0], format_path(deepest[1])


def _too_deep(expected: Any) -> str:
    """The reason of a check whose comparison ran out of Python's stack: each level of lists matched
    ``unordered`` or ``by_key`` takes several frames (an element is matched by comparing it, and the lists inside
    it the same way), so lists nested some 100 deep under such a rule cannot be matched, though a state may nest
    :data:`~oloproof_nb._core.paths.MAX_DEPTH` levels."""
    depth, top = _deepest_lists(expected)
    where = f" at {top}" if top else ""
    return (f"state_too_deep: expected.state nests lists {depth} deep{where}, too deep to match by an unordered or "
            "by_key rule of lists: (about 100 levels can be); match the deeper lists ordered (a lists: rule "
            "before the one that matches them), or nest them less")


def _check_paths(paths: list[str]) -> list[str]:
    for path in paths:
        parse_path(path)
    return paths


class ByKey(BaseModel):
    """List matching ``{by_key: FIELD}``: an expected element meets the actual element whose ``FIELD`` agrees."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    by_key: str = Field(min_length=1)


@register
class StateMatches(Evaluator):
    """Passes when the recorded state matches ``expected.state``.

    Applies to cases whose ``expected`` has a ``state``; a case without a
    recorded state is ``missing``.

    Parameters
    ----------
    mode : {"subset", "whole", "paths", "changes"}
        ``subset`` (the default): every leaf of ``expected.state`` is present
        and equal (keys of an expected dict are read as path keys, so ``"5"``
        may index a list). ``whole``: equal entirely. ``paths``: equal on the
        declared ``paths``. ``changes``: **this and nothing else changed** —
        every expected leaf holds (as in ``subset``, but for one under an
        ``ignore`` pattern, which is left out as in ``whole``) and every leaf
        that differs from the case's ``initial_state`` is one that
        ``expected.state`` compares (or lies under an ``ignore`` pattern).
        ``subset`` with an empty ``expected.state`` checks nothing (on every case: a
        ``VacuousCheckWarning`` at ``load_suite``); ``changes``
        with an empty one checks that nothing changed (a case with no
        ``expected.state`` at all is not judged: write ``"state": {}``).
    paths : list of str
        The paths of ``paths`` mode.
    tolerance : float, optional
        Absolute tolerance on numeric leaves.
    lists : dict of str to ``ordered`` | ``unordered`` | ``{by_key: FIELD}``
        How the list at each path pattern is matched (first matching pattern
        wins; lists no pattern matches are ``ordered``): ``ordered`` position
        by position; ``unordered`` as a multiset (each expected element meets
        a distinct actual element); ``by_key`` the elements whose ``FIELD``
        agrees. In ``changes`` mode the diff from ``initial_state`` aligns
        lists by the same rule, so an element appended elsewhere is one new
        element.
    ignore : list of str
        Path patterns (``*`` within a key, ``**`` for any number of keys)
        whose changes nobody pins — free-text subjects, timestamps (``changes``
        and ``whole`` modes). A leaf under one is not compared, even where
        ``expected.state`` names it. A pattern every ``changes`` or ``whole``
        check gives is also left out of a control replay's state
        (``fault_recovery``) and of ``same_state`` pairs (:func:`~oloproof_nb._config.shared_rules.ignored_paths`),
        except at the paths another check judges (:func:`pinned_paths`).
    absent_ok : bool
        A ``paths:`` entry that no case's initial or expected state contains is
        meant (no ``VacuousCheckWarning`` at ``load_suite``); one with a ``*`` in a key is then refused
        (these paths are exact, see :meth:`~oloproof_nb._config.vacuity.VacuityScan.refuse_globs`).

    Notes
    -----
    ``{"$absent": true}`` in ``expected.state`` (``op.ABSENT`` in Python) says
    the key must not exist: ``{"orders": {"ord-9": {"$absent": true}}}`` passes
    only when ``ord-9`` is gone. It is checked against the state left, not
    against ``initial_state``: a key the case never held (a typo such as
    ``ord-09``, a look-alike spelling) is gone already, so an agent that does
    nothing passes it. A list and a dict keyed by index are different
    values in every mode, except that in ``subset`` and ``changes`` modes the
    keys of an expected dict are path keys: ``{"0": 1}`` expects the first
    element of a list to be 1 as well. In ``changes`` mode the comparison rows start with
    one row per unexpected change (``expected`` holds the value it should have
    kept), then one per expected leaf.

    Examples
    --------
    >>> ev = StateMatches(type="state_matches", mode="changes", lists={"tx": {"by_key": "id"}}, ignore=["tx.*.at"])
    >>> initial = {"tx": [{"id": 1, "amt": 5, "at": "t0"}], "bal": 10}
    >>> after = {"tx": [{"id": 2, "amt": 3, "at": "t1"}, {"id": 1, "amt": 5, "at": "t0"}], "bal": 7}
    >>> ev.judge({"tx": [{"id": 2, "amt": 3}], "bal": 7}, after, initial=initial).verdicts[0]["verdict"]
    'pass'
    >>> ev.judge({"tx": [{"id": 2, "amt": 3}]}, after, initial=initial).verdicts[0]["reason"]
    '1 unexpected change: bal'
    """

    type: Literal["state_matches"]
    mode: Literal["whole", "paths", "subset", "changes"] = "subset"
    paths: list[str] = Field(default_factory=list)
    tolerance: Annotated[float | None, a_number("an absolute tolerance (a number)")] = Field(default=None, ge=0,
                                                                                          allow_inf_nan=False)
    lists: dict[str, Literal["ordered", "unordered"] | ByKey] = Field(default_factory=dict)
    ignore: list[str] = Field(default_factory=list)
    #: A ``paths:`` entry absent from every case's initial and expected state is on purpose (no warning).
    absent_ok: bool = Field(default=False, strict=True)  # "yes" or 1: a mistake, not a yes

    @field_validator("paths")
    @classmethod
    def _valid_paths(cls, value: list[str]) -> list[str]:
        return _check_paths(value)

    @field_validator("ignore")
    @classmethod
    def _valid_patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            parse_pattern(pattern)
        return value

    @field_validator("lists")
    @classmethod
    def _valid_list_patterns(cls, value: dict[str, Any]) -> dict[str, Any]:
        for pattern in value:
            parse_pattern(pattern)
        return value

    @model_validator(mode="after")
    def _paths_for_mode(self) -> StateMatches:
        if self.mode == "paths" and not self.paths:
            raise ValueError("mode 'paths' needs a non-empty 'paths' list")
        if self.mode != "paths" and self.paths:
            raise ValueError(f"'paths' is only used with mode 'paths' (mode is {self.mode!r})")
        if self.ignore and self.mode not in ("changes", "whole"):
            raise ValueError(f"'ignore' is used with mode 'changes' or 'whole' (mode is {self.mode!r})")
        return self

    def default_criterion(self) -> str:
        return "state_matches"

    def list_rules(self) -> dict[str, ListMatch]:
        """``lists`` as the comparison rules of :mod:`~oloproof_nb._core.compare`."""
        return {pattern: ListMatch("by_key", rule.by_key) if isinstance(rule, ByKey) else ListMatch(rule)
                for pattern, rule in self.lists.items()}

    def changes(self, initial: dict[str, Any], expected: dict[str, Any],
                state: dict[str, Any]) -> tuple[list[Row], list[Row]]:
        """``(unexpected, expected_rows)`` of ``changes`` mode (:func:`~oloproof_nb._core.compare.compare_changes`)."""
        return compare_changes(initial, expected, state, lists=self.list_rules(), ignore=self.ignore,
                               tolerance=self.tolerance)

    def judge(self, expected: dict[str, Any], state: dict[str, Any] | None, case_id: str = "", *,
              initial: dict[str, Any] | None = None) -> Evaluation:
        """The verdict and comparisons for one recorded ``state`` (None: no state recorded).

        ``initial`` is the case's ``initial_state`` (needed by ``changes`` mode).
        """
        if state is None:
            return self.missing(NO_STATE)
        try:
            return self._judged(expected, state, case_id, initial)
        except RecursionError:  # lists matched by a rule that reorders them, nested beyond what the stack holds
            return self.missing(_too_deep(expected))

    def _judged(self, expected: dict[str, Any], state: dict[str, Any], case_id: str,
                initial: dict[str, Any] | None) -> Evaluation:
        if self.mode == "changes":
            unexpected, rows = self.changes(initial or {}, expected, state)
            bad = [p for p, _, _, ok in rows if not ok]
            problems = []
            if unexpected:
                word = "change" if len(unexpected) == 1 else "changes"
                problems.append(f"{len(unexpected)} unexpected {word}: {_listed([p for p, *_ in unexpected])}")
            if bad:
                problems.append(f"{len(bad)} of {len(rows)} expected paths differ: {_listed(bad)}")
            comparisons = _comparisons(self, unexpected + rows, case_id)
            notes = _type_only(unexpected + rows) + _unicode_form_only(unexpected + rows, expected, state)
            verdict = self.verdict("fail", "; ".join(problems) + notes) if problems else self.verdict("pass", "")
            return Evaluation(verdicts=[verdict], comparisons=comparisons)
        rows = compare_state(expected, state, self.mode, self.paths, self.tolerance, lists=self.list_rules(),
                             ignore=self.ignore)
        return _rows_to_evaluation(self, rows, "paths", case_id, expected, state)

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        expected = ctx.case.expected.state
        if expected is None:
            return Evaluation()
        if ctx.failure is not None:
            return self.missing(ctx.failure)
        return self.judge(expected, ctx.state, ctx.case.id, initial=ctx.case.initial_state)


def pinned_paths(evaluators: Sequence[Evaluator], expected: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The paths other checks judge a replay's or a pair's state at, which
    :func:`~oloproof_nb._config.shared_rules.ignored_paths` does not excuse: every ``state_unchanged`` path and
    ``paths``-mode path, and, given the case's ``expected`` state, each leaf it names when a ``subset``-mode check
    compares it (a control replay's state; a pair is given none).

    Before, an ``ignore:`` pattern that reached one of them was dropped whole: a ``state_unchanged`` check on one
    earlier row made the stamp of every new row a divergence, and every fault replay ``missing``.

    Examples
    --------
    >>> stamp = StateMatches(type="state_matches", mode="changes", ignore=["refunds.*.at"])
    >>> pinned_paths([stamp, StateUnchanged(type="state_unchanged", paths=["refunds.r0"])])
    ('refunds.r0',)
    >>> pinned_paths([StateMatches(type="state_matches", mode="subset")], {"refunds": {"r1": {"at": 3}}})
    ('refunds.r1.at',)
    """
    pinned = [path for ev in evaluators
              if isinstance(ev, StateUnchanged) or (isinstance(ev, StateMatches) and ev.mode == "paths")
              for path in getattr(ev, "paths", ())]
    if expected and any(isinstance(ev, StateMatches) and ev.mode == "subset" for ev in evaluators):
        pinned += [format_path(keys) for keys in leaf_keys(expected)]
    return tuple(dict.fromkeys(pinned))


@register
class StateUnchanged(Evaluator):
    """Passes when every declared path keeps the value it had in ``initial_state``.

    An absent path must stay absent. Applies to every case; a case without a
    recorded state is ``missing``. A path that no case's ``initial_state``
    contains gives a ``VacuousCheckWarning`` at ``load_suite`` (a typo passes
    every case) unless ``absent_ok: true`` says it must stay absent on purpose (refused, then, for a path
    with a ``*`` in a key: these paths are exact, so it would name a key called '*' and pass every case).
    """

    type: Literal["state_unchanged"]
    paths: list[str] = Field(min_length=1)
    #: A path absent from every case's ``initial_state`` must stay absent on purpose (no VacuousCheckWarning).
    absent_ok: bool = Field(default=False, strict=True)  # "yes" or 1: a mistake, not a yes

    @field_validator("paths")
    @classmethod
    def _valid_paths(cls, value: list[str]) -> list[str]:
        return _check_paths(value)

    def default_criterion(self) -> str:
        return "state_unchanged"

    def judge(self, initial: dict[str, Any], state: dict[str, Any] | None, case_id: str = "") -> Evaluation:
        """The verdict and comparisons for one recorded ``state`` (None: no state recorded)."""
        if state is None:
            return self.missing(NO_STATE)
        return _rows_to_evaluation(self, compare_unchanged(initial, state, self.paths), "paths", case_id)

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if ctx.failure is not None:
            return self.missing(ctx.failure)
        return self.judge(ctx.case.initial_state, ctx.state, ctx.case.id)
