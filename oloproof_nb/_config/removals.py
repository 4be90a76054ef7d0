"""Removals a case asks for of something its initial state never held, beside something it holds that reads alike.

``{"$absent": true}`` in ``expected.state`` asks that a key (or, in a ``by_key`` list, an element) be gone after
the case. When ``initial_state`` never held it, an agent that does nothing passes that removal: right for a case
that means "the agent must not create this", wrong for a typo of something the state does hold (``"ord-8"`` for
``"ord-7"``, ``"B "`` for ``"B"``). :class:`RemovalScan` tells the two apart by the look of the key: a removal of
what the state does not hold is named only where the state holds, at that place and unnamed by the case, a key that
reads like it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._core.case import Case
from .._core.compare import shortened_lists, stray_absent, unheld_removals
from .._core.lists import ListMatch
from .._core.paths import format_path, get_path, parse_path
from ..errors import CaseFileError, clip, quote
from .cases import LOOK_ALIKE_HELP, key_look

__all__ = ["RemovalScan", "look_alike"]

#: The shortest key (as it reads, letter case folded) compared by one edit: every key of one or two characters is
#: one edit from every other (``"B"`` and ``"C"``), which says nothing of a typo.
MIN_EDIT_LENGTH = 3
#: Findings a warning names (the rest are counted), and the longest quote of a case id, key or path there.
_SHOWN, _QUOTE = 5, 60
#: ``how`` of a key that reads as one the state holds (:func:`look_alike`): refused, not warned of.
_READS = "reads as"


def _text(value: Any) -> str:
    """A key, or a ``by_key`` value, as text: a string as it reads (:func:`~oloproof_nb._config.cases.key_look`),
    anything else as JSON."""
    if isinstance(value, str):
        return key_look(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _one_edit(a: str, b: str) -> str:
    """How ``a`` and ``b`` differ when they are one edit apart: one character inserted, deleted or replaced, or
    two neighbours swapped; "" otherwise (equal, or further apart). Slices are compared, not characters one by one:
    a key beside a thousand of its length costs a few comparisons each."""
    if a == b or abs(len(a) - len(b)) > 1:
        return ""
    lo, hi = 0, min(len(a), len(b))  # the longest common prefix, by halving
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    if len(a) == len(b):
        if a[lo + 1:] == b[lo + 1:]:
            return "is one character apart from"
        if lo + 1 < len(a) and a[lo] == b[lo + 1] and a[lo + 1] == b[lo] and a[lo + 2:] == b[lo + 2:]:
            return "swaps two neighbouring characters of"
        return ""
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return "is one character apart from" if short[lo:] == long[lo + 1:] else ""


def look_alike(missing: Any, others: list[Any]) -> tuple[Any, str] | None:
    """The key (or ``by_key`` value) of ``others`` that ``missing`` reads like, and how: ``(held, how)``, or None.

    From the closest to the loosest: the same once invisible characters are dropped, accents composed and
    surrounding spaces stripped (``how`` is :data:`_READS`: the caller refuses it); the same text, one a string and
    the other a number (``"7"`` and ``7``); the same but for letter case; one edit apart (a character inserted,
    deleted or replaced, or two neighbours swapped) once letter case is folded, both at least
    :data:`MIN_EDIT_LENGTH` characters long. Keys two edits apart are not alike: ``"ord-7"`` and ``"ord-79"`` are
    one edit apart, ``"ord-8"`` and ``"ord-79"`` two.

    Examples
    --------
    >>> look_alike("ord-8", ["x", "ord-7"]), look_alike("ord-17", ["ord-71"]), look_alike("ord-8", ["ord-79"])
    (('ord-7', 'is one character apart from'), ('ord-71', 'swaps two neighbouring characters of'), None)
    >>> look_alike("B ", ["B"]), look_alike("C", ["B"]), look_alike("7", [7]), look_alike("ORD-7", ["ord-7"])[1]
    (('B', 'reads as'), None, (7, 'is the text of the number'), 'differs only in letter case from')
    """
    mine = _text(missing)
    best: tuple[int, Any, str] | None = None
    for other in others:
        theirs = _text(other)
        if abs(len(theirs) - len(mine)) > 1 and mine.isascii() and theirs.isascii():
            continue  # neither the same nor one edit apart: most keys, at one look (folding keeps an ASCII length)
        if isinstance(missing, str) == isinstance(other, str):
            if mine == theirs:
                return other, _READS
            folded, folded_other = mine.casefold(), theirs.casefold()
            if folded == folded_other:
                found: tuple[int, Any, str] | None = (1, other, "differs only in letter case from")
            elif min(len(folded), len(folded_other)) >= MIN_EDIT_LENGTH and (how := _one_edit(folded, folded_other)):
                found = (2, other, how)
            else:
                found = None
        elif mine == theirs:
            found = (0, other, "is the text of the number" if isinstance(missing, str)
                     else "is the number of the text")
        else:
            found = None
        if found is not None and (best is None or found[0] < best[0]):
            best = found
    return None if best is None else (best[1], best[2])


def _what(field: str | None) -> str:
    """What a removal names: a dict ``key``, or the key field's value of a ``by_key`` element (``sku``)."""
    return "key" if field is None else f"{quote(field, _QUOTE)} value"


def _stray_message(case: Case, keys: tuple[str, ...], rule: ListMatch | None, criteria: list[str]) -> str:
    """Why a ``"$absent"`` key at ``keys`` of ``case``'s ``expected.state`` asks for no removal, and the fix."""
    node = get_path(case.expected.state, keys)
    others = [str(k) for k in node if k != "$absent"]
    where = f"expected.state at {clip(format_path(keys), _QUOTE) or '(top)'} holds \"$absent\""
    names = clip(", ".join(criteria), 2 * _QUOTE)
    judged = f"{names} would compare it as a key named \"$absent\", which no state holds"
    if rule is None:  # beside other keys, or as "$absent": false
        return (f"{where} beside other keys ({clip(', '.join(others), _QUOTE)}): {judged}; to ask that a key be gone, "
                f"write {{\"$absent\": true}} alone as its value" if others else
                f"{where} as {json.dumps(node['$absent'])[:_QUOTE]}: {judged}; a removal is {{\"$absent\": true}}, "
                "and a key that must stay is named with its value")
    pattern = format_path(tuple("*" if k.isdigit() else k for k in keys[:-1]))
    field = others[0] if len(others) == 1 else "FIELD"
    if not others:  # {"$absent": true} alone as an element: it names no element to remove
        field = rule.key if rule.how == "by_key" and rule.key else field
        fix = "" if rule.how == "by_key" else f" in a list matched by_key (`lists: {{{pattern}: {{by_key: FIELD}}}}`)"
        return (f"{where} alone in an element of a list that {names} matches {rule.how}: it names no element to "
                f"remove and matches none, so the case fails whatever the agent does; a removal there is "
                f"{{{json.dumps(field)}: VALUE, \"$absent\": true}}{fix}")
    if rule.how != "by_key":
        return (f"{where} in an element of a list that {names} matches {rule.how}: "
                "an element is removed only in a list matched by_key, so the check would compare a key named "
                f"\"$absent\"; give the check `lists: {{{pattern}: {{by_key: {field}}}}}`")
    return (f"{where} in an element of a list matched by_key {rule.key}: a removal there is "
            f"{{{json.dumps(str(rule.key))}: VALUE, \"$absent\": true}} and nothing else (this one holds "
            f"{clip(', '.join(others), _QUOTE) or 'no other key'}), else {judged}")


class RemovalScan:
    """Removals of what ``initial_state`` does not hold beside a key that reads like it, found case by case.

    Judged as each ``state_matches`` check reads ``{"$absent": true}``: in ``subset`` and ``changes`` mode every
    removal (by the check's ``lists`` rules, outside ``changes`` mode's ``ignore`` patterns), in ``paths`` mode one
    at or above a declared path. ``whole`` mode, and a ``paths`` entry above the removal, compare the look-alike
    key itself, so an agent that leaves it fails anyway. A key that reads as the state's key (:func:`look_alike`'s
    :data:`_READS`: invisible characters, accent encoding, surrounding spaces) is refused, as
    :func:`~oloproof_nb._config.cases.respelt_key` refuses one of a dict; the others are kept for one warning.

    The removals a case means but does not ask for are kept for another: a list a ``changes`` check reads as asking
    for no change where ``initial_state`` holds a longer one
    (:func:`~oloproof_nb._core.compare.shortened_lists`; :meth:`shortened_warning`).
    """

    def __init__(self, evaluators: list[Any], cases_file: str | Path) -> None:
        self.cases_file = cases_file
        #: (lists, ignore, declared paths or None) -> criteria, one entry per way of reading expected.state
        self.readings: dict[str, tuple[dict[str, Any], list[str], list[tuple[str, ...]] | None, list[str]]] = {}
        #: (lists, ignore) -> criteria of the ``changes``-mode checks, one entry per way of reading expected.state
        self.changes: dict[str, tuple[dict[str, Any], list[str], list[str]]] = {}
        for ev in evaluators:
            mode = getattr(ev, "mode", "")
            if ev.type != "state_matches" or mode not in ("subset", "changes", "paths"):
                continue
            lists = ev.list_rules()
            ignore = list(ev.ignore) if mode == "changes" else []
            paths = [parse_path(p) for p in ev.paths] if mode == "paths" else None
            if paths == []:
                continue
            key = repr((sorted(lists.items()), ignore, paths))
            self.readings.setdefault(key, (lists, ignore, paths, []))[3].append(ev.name)
            if mode == "changes":
                self.changes.setdefault(repr((sorted(lists.items()), ignore)), (lists, ignore, []))[2].append(ev.name)
        self.count = 0
        self.shown: list[str] = []
        self.criteria: dict[str, None] = {}
        #: lists of expected.state that ask for no change where initial_state holds more (:func:`shortened_lists`)
        self.short_count = 0
        self.short_shown: list[str] = []
        self.short_criteria: dict[str, None] = {}

    def observe(self, line: int, case: Case) -> None:
        """Look at the removals of ``case``, read at ``line``.

        Raises
        ------
        CaseFileError
            For a removal whose key reads as one ``initial_state`` holds there (see the class), and for a
            ``"$absent"`` key the check would read as no removal (:func:`~oloproof_nb._core.compare.stray_absent`).
        """
        if not self.readings or not case.expected.state:
            return
        seen: set[tuple[str, ...]] = set()  # where this case's findings sit (two checks may read one removal alike)
        for lists, ignore, paths, criteria in self.readings.values():
            for keys, field, missing, others in unheld_removals(case.initial_state, case.expected.state, lists=lists,
                                                         ignore=ignore):
                if paths is not None and not any(p[:len(keys)] == keys for p in paths):
                    continue
                alike = look_alike(missing, others) if others else None
                if alike is None:
                    continue
                held, how = alike
                if how == _READS:
                    raise CaseFileError(self.cases_file, line, (
                        f"expected.state asks for the removal of {format_path(keys)} ({{\"$absent\": true}}), "
                        f"whose {_what(field)} {quote(missing)} reads as {quote(held)}, which initial_state holds "
                        f"there: they differ only in {LOOK_ALIKE_HELP}, so the removal asks for what the state never "
                        "holds and an agent that does nothing passes it; write it as initial_state does"))
                self.criteria.update(dict.fromkeys(criteria))
                if keys in seen:
                    continue
                self.count += 1
                seen.add(keys)
                if len(self.shown) < _SHOWN:
                    self.shown.append(f"line {line}, case {quote(case.id, _QUOTE)}: {clip(format_path(keys), _QUOTE)} "
                                      f"(its {_what(field)} {quote(missing, _QUOTE)} {how} {quote(held, _QUOTE)}, "
                                      "which initial_state holds there)")
        for lists, _ignore, paths, criteria in self.readings.values():  # after the look-alikes: theirs say more
            if paths is None and (stray := stray_absent(case.expected.state, lists=lists,
                                                        initial=case.initial_state)) is not None:
                raise CaseFileError(self.cases_file, line, _stray_message(case, *stray, criteria))
        self._observe_shortened(line, case)

    def _observe_shortened(self, line: int, case: Case) -> None:
        """Note the lists of ``case``'s expected.state that a ``changes`` check reads as asking for no change where
        initial_state holds a longer list (:func:`~oloproof_nb._core.compare.shortened_lists`)."""
        seen: set[tuple[str, ...]] = set()
        for lists, ignore, criteria in self.changes.values():
            for keys, named, held in shortened_lists(case.initial_state, case.expected.state or {}, lists=lists,
                                                     ignore=ignore):
                self.short_criteria.update(dict.fromkeys(criteria))
                if keys in seen:
                    continue
                seen.add(keys)
                self.short_count += 1
                if len(self.short_shown) < _SHOWN:
                    self.short_shown.append(f"line {line}, case {quote(case.id, _QUOTE)}: "
                                            f"{clip(format_path(keys), _QUOTE)} ({named} of the {held} elements "
                                            "initial_state holds)")

    def warning(self) -> str | None:
        """The ``VacuousCheckWarning`` text of what was found, or None."""
        if not self.count:
            return None
        more = f"; and {self.count - len(self.shown)} more" if self.count > len(self.shown) else ""
        criteria = clip(", ".join(self.criteria), 2 * _QUOTE)
        return (f"{self.cases_file}: {self.count} removal(s) that expected.state asks for with {{\"$absent\": true}} "
                "name a key or element initial_state does not hold, where it holds one that reads like it (a "
                f"typo?): {'; '.join(self.shown)}{more}. An agent that does nothing passes such a removal in "
                f"{criteria}, and in mode: changes one that removes what the case meant fails; "
                "write it as initial_state holds it, or, where the case means that the agent must not create "
                "it, name the look-alike in expected.state too (in mode: changes such a removal adds nothing: "
                "creating the key is an unexpected change already)")

    def shortened_warning(self) -> str | None:
        """The ``VacuousCheckWarning`` text of the lists :meth:`_observe_shortened` found, or None."""
        if not self.short_count:
            return None
        more = f"; and {self.short_count - len(self.short_shown)} more" if self.short_count > len(self.short_shown) \
            else ""
        criteria = clip(", ".join(self.short_criteria), 2 * _QUOTE)
        return (f"{self.cases_file}: {self.short_count} list(s) of expected.state name fewer elements than "
                f"initial_state holds there, each as it holds it: {'; '.join(self.short_shown)}{more}. In mode: "
                "changes a list names positions, not the whole list, so such a list asks for no change: an agent "
                f"that does nothing passes it in {criteria}, and one that leaves the list as the line writes it "
                "fails (the elements past it are unexpected changes); to expect their removal, name each position "
                "gone ({\"cart\": {\"1\": {\"$absent\": true}}} for [\"A\", \"B\"] that becomes [\"A\"]), or "
                "match the list by_key and remove elements by key")
