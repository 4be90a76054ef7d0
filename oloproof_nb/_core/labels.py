"""Human validity labels of metamorphic pairs: one judgement, the majority rule, and when a transform is checked.

A label file (``labels/<transform>.jsonl``) holds one judgement per line::

    {"case_id": "ord-001~injected", "valid": true, "labeler": "ana", "note": "override does not change the ask"}

``valid`` says whether the transform kept the request's meaning, so that the
pair is a fair test of the relation. A judgement is matched to its copy by id; one that also gives the copy's
``digest`` (``run.cases.digest``) is bound to the copy as it was read, and the suite refuses it once the copy
changed (the transform's template or the source case edited since). A transform is **checked** when every
derived pair of the suite is labeled and the share labeled valid is at least its
``minimum_validity``. Pure: files are read in ``_config/labels``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Literal

from ..errors import quote_value, value_kind
from .binomial import wilson

__all__ = ["JUDGEMENT_KEYS", "REQUIRED_KEYS", "Label", "parse_judgement", "unknown_copy", "pair_label", "pair_labels",
           "transform_pair_labels", "invalid_copies", "validity_row", "labels_row", "transform_checked"]

#: Keys a judgement line may have; ``case_id`` and ``valid`` are required.
JUDGEMENT_KEYS: tuple[str, ...] = ("case_id", "valid", "labeler", "note", "digest")
REQUIRED_KEYS: tuple[str, ...] = ("case_id", "valid")
#: A pair's label: ``valid``, ``invalid``, or empty when nobody judged it.
Label = Literal["valid", "invalid", ""]
#: A copy's digest as a judgement may give it: the SHA-256 hex of ``run.cases.digest``.
_DIGEST = re.compile(r"[0-9a-f]{64}")


def parse_judgement(obj: Any, known_ids: Collection[str] | None = None,
                    transform: str | None = None) -> dict[str, Any]:
    """Check one decoded label line and return it as ``{case_id, valid, labeler, note}``.

    Parameters
    ----------
    obj : object
        The decoded JSON value of the line.
    known_ids : collection of str, optional
        The derived case ids the suite has for this transform; any other
        ``case_id`` is rejected. None accepts every id.
    transform : str, optional
        The transform's name, used in the error message only.

    Returns
    -------
    dict
        ``case_id`` (str), ``valid`` (bool), ``labeler`` (str, default ``""``),
        ``note`` (str, default ``""``), and ``digest`` (str) when the line gives one: the digest of the copy
        the labeler read (64 hex digits, as ``run.cases.digest`` shows it).

    Raises
    ------
    ValueError
        A one-clause message saying what is wrong and what is allowed.

    Examples
    --------
    >>> parse_judgement({"case_id": "c1~t", "valid": False})
    {'case_id': 'c1~t', 'valid': False, 'labeler': '', 'note': ''}
    """
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object with keys {', '.join(JUDGEMENT_KEYS)}, got {value_kind(obj)}")
    unknown = [k for k in obj if k not in JUDGEMENT_KEYS]
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; allowed: {', '.join(JUDGEMENT_KEYS)}")
    for key in REQUIRED_KEYS:
        if key not in obj:
            raise ValueError(f"missing required key {key!r}")
    case_id, valid = obj["case_id"], obj["valid"]
    if not isinstance(case_id, str) or not case_id:
        raise ValueError(f"'case_id' must be a non-empty string, got {quote_value(case_id)}")
    if not isinstance(valid, bool):
        raise ValueError(f"'valid' must be true or false, got {json.dumps(valid)}")
    for key in ("labeler", "note"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ValueError(f"{key!r} must be a string, got {json.dumps(obj[key])}")
    digest = obj.get("digest")
    if digest is not None and not (isinstance(digest, str) and _DIGEST.fullmatch(digest)):
        raise ValueError("'digest' must be the copy's digest as run.cases shows it (64 hex digits, 0-9 a-f), "
                         f"got {quote_value(digest)}")
    if known_ids is not None and case_id not in known_ids:
        raise ValueError(f"{unknown_copy(case_id, transform)}; {_unknown_copy_hint(case_id, known_ids, transform)}")
    out = {"case_id": case_id, "valid": valid, "labeler": obj.get("labeler") or "", "note": obj.get("note") or ""}
    if digest is not None:
        out["digest"] = digest
    return out


def unknown_copy(case_id: str, transform: str | None) -> str:
    """The refusal of ``case_id``, no derived case of ``transform`` in this suite, without a word on what it names.

    Examples
    --------
    >>> unknown_copy("c9~t", "t")
    "case id 'c9~t' is not a derived case of transform 't' of this suite"
    """
    which = f" of transform {transform!r}" if transform else ""
    return f"case id {case_id!r} is not a derived case{which} of this suite"


def _unknown_copy_hint(case_id: str, known_ids: Collection[str], transform: str | None) -> str:
    """The clause after the refusal of ``case_id``, no derived case of ``transform`` (``known_ids``): what the id
    is when the suite can tell (the source case itself, the same source's copy under another transform, a copy's id
    with a transform's name appended again, a copy of a source the case file no longer holds), else the form of a
    label id. ``'<source id>~<transform>'`` alone told the labeler of a case removed since, whose id has that form,
    nothing about why it was refused.

    Examples
    --------
    >>> known = {"c1~t", "c2~t"}
    >>> _unknown_copy_hint("c1", known, "t")
    "'c1' is the source case: its copy under transform 't' is 'c1~t'"
    >>> _unknown_copy_hint("c9~t", known, "t")
    "the suite has no case 'c9' for it to copy (a case removed or renamed since it was labeled? take its line out)"
    >>> _unknown_copy_hint("c1~t~t", known, "t")
    "'c1~t' is a copy already, and no copy is copied again: judge it as 'c1~t'"
    >>> _unknown_copy_hint("c2~u", known, "t").split(";")[0]
    "it names case 'c2' under transform 'u', not 't': this file judges the copies of 't' ('c2~t')"
    """
    if transform:
        suffix = f"~{transform}"
        if case_id + suffix in known_ids:
            return f"{case_id!r} is the source case: its copy under transform {transform!r} is {case_id + suffix!r}"
        source, tilde, other = case_id.rpartition("~")
        if tilde and source and other != transform and source + suffix in known_ids:
            return (f"it names case {source!r} under transform {other!r}, not {transform!r}: this file judges the "
                    f"copies of {transform!r} ({source + suffix!r}); a copy of another transform is judged in that "
                    "transform's own label file")
        if source in known_ids:  # a copy's id with a transform's name appended again
            return f"{source!r} is a copy already, and no copy is copied again: judge it as {source!r}"
        if source and other == transform:
            return (f"the suite has no case {source!r} for it to copy (a case removed or renamed since it was "
                    "labeled? take its line out)")
    example = next(iter(sorted(known_ids)), None)
    hint = f" (e.g. {example!r})" if example else ""
    return f"label ids are '<source id>~<transform>'{hint}"


def pair_label(judgements: Iterable[Mapping[str, Any]]) -> Label:
    """The label of one pair from its judgements: the majority; a tie is ``invalid``.

    Parameters
    ----------
    judgements : iterable of mapping
        The pair's judgements (each with a boolean ``valid``).

    Returns
    -------
    str
        ``"valid"`` when more judgements say valid than invalid, ``"invalid"``
        when at least as many say invalid (a tie is invalid), ``""`` when there
        are none.

    Examples
    --------
    >>> pair_label([{"valid": True}, {"valid": True}, {"valid": False}])
    'valid'
    >>> pair_label([{"valid": True}, {"valid": False}]), pair_label([])
    ('invalid', '')
    """
    votes = [1 if j["valid"] else -1 for j in judgements]
    return _majority(sum(votes)) if votes else ""


def _majority(votes: int) -> Label:
    """The label of a judged pair from its (valid − invalid) judgements: ``valid`` when positive; a tie is
    ``invalid``."""
    return "valid" if votes > 0 else "invalid"


def pair_labels(judgements: Iterable[Mapping[str, Any]]) -> dict[str, Label]:
    """Every judged pair's label, by derived case id (see :func:`pair_label`); unjudged ids are absent.

    Examples
    --------
    >>> pair_labels([{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": True},
    ...              {"case_id": "b~t", "valid": False}])
    {'a~t': 'valid', 'b~t': 'invalid'}
    """
    votes: dict[str, int] = {}  # (valid − invalid) judgements per pair, counted in one pass
    for j in judgements:
        case_id = j["case_id"]
        votes[case_id] = votes.get(case_id, 0) + (1 if j["valid"] else -1)
    return {case_id: _majority(v) for case_id, v in votes.items()}


def transform_pair_labels(labels: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, dict[str, Label]]:
    """Each transform's pair labels (:func:`pair_labels` of its judgements), by transform name: the one loop a Run's
    stored labels (``op.validity``, the copies its verdicts leave out, the gate's label check) and
    ``op.validity`` of judgements given by hand are read through.

    Examples
    --------
    >>> transform_pair_labels({"t": [{"case_id": "a~t", "valid": True}, {"case_id": "a~t", "valid": False}],
    ...                        "u": []})
    {'t': {'a~t': 'invalid'}, 'u': {}}
    """
    return {name: pair_labels(judgements) for name, judgements in labels.items()}


def invalid_copies(labels: Mapping[str, Mapping[str, Label]], minimum_validity: Mapping[str, float],
                   n_derived: int) -> frozenset[str]:
    """The derived case ids whose pair is labeled ``invalid`` (the majority of its judgements; a tie), of the
    transforms whose labels are **checked** (:func:`transform_checked`: every one of its ``n_derived`` pairs
    labeled, and the valid share at least its ``minimum_validity``).

    Such a copy's request was judged changed by the transform, so the source's ``expected`` it was given is
    not its own: no criterion scores it (its verdict rows are left out of the run's ``verdicts``). The labels
    of a transform that is not checked decide nothing, here as for its relation: its copies are all scored,
    or labeling every failing copy invalid would make a PASS of it. A copy nobody judged is scored too.

    Parameters
    ----------
    labels : mapping of str to mapping of str to Label
        Each transform's pair labels (:func:`pair_labels` of its judgements, whose ids are already checked to be
        derived cases of the suite, as the suite loads them): a Run works them out once.
    minimum_validity : mapping of str to float
        Each declared transform's ``minimum_validity``; labels of another transform are ignored.
    n_derived : int
        Derived cases of each transform in the suite (one per source case), recorded or not.

    Examples
    --------
    >>> js = [{"case_id": "a~t", "valid": False}, {"case_id": "b~t", "valid": True}, {"case_id": "c~t", "valid": True},
    ...       {"case_id": "d~t", "valid": True}, {"case_id": "d~t", "valid": False}]
    >>> pairs = {"t": pair_labels(js)}
    >>> sorted(invalid_copies(pairs, {"t": 0.5}, 4))   # 2 of 4 valid: checked at 0.5
    ['a~t', 'd~t']
    >>> invalid_copies(pairs, {"t": 0.6}, 4), invalid_copies(pairs, {"t": 0.5}, 5)  # 0.5 < 0.6; 4 of 5 labeled
    (frozenset(), frozenset())
    """
    out: set[str] = set()
    for transform, pairs in labels.items():
        if transform in minimum_validity and labels_row(pairs, n_derived, minimum_validity[transform])["checked"]:
            out.update(case_id for case_id, label in pairs.items() if label == "invalid")
    return frozenset(out)


def validity_row(judgements: Iterable[Mapping[str, Any]], n_derived: int, minimum_validity: float,
                 confidence: float = 0.95) -> dict[str, Any]:
    """The validity numbers of one transform (a row of ``op.validity`` without its name): the one rule that
    says whether the transform is checked (:func:`transform_checked`, :func:`invalid_copies`, its relation).

    Parameters
    ----------
    judgements : iterable of mapping
        The transform's judgements (``case_id``, boolean ``valid``), of derived cases of the suite (as the suite
        loads them): each judged id is one of the ``n_derived`` pairs.
    n_derived : int
        The transform's pairs in the suite (one per source case), whether a run recorded them or not: the labels
        judge the suite's pairs, so a run stopped part-way counts them as its finished run would.
    minimum_validity : float
        The share of valid pairs the transform needs.
    confidence : float, default 0.95
        Confidence level of the Wilson interval.

    Returns
    -------
    dict
        ``derived, labeled, valid, coverage, rate, ci_low, ci_high, minimum_validity, checked``
        (see ``op.validity``); ``checked`` is ``coverage == 1 and rate >= minimum_validity``.

    Examples
    --------
    >>> js = [{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": False}]
    >>> row = validity_row(js, 3, 0.5)
    >>> row["derived"], row["labeled"], row["valid"], row["checked"]
    (3, 2, 1, False)
    """
    return labels_row(pair_labels(judgements), n_derived, minimum_validity, confidence)


def labels_row(labels: Mapping[str, Label], n_derived: int, minimum_validity: float,
               confidence: float = 0.95) -> dict[str, Any]:
    """:func:`validity_row` of the transform's pair labels (:func:`pair_labels` of its judgements), for a caller
    that already has them: a Run works its pair labels out once, for ``op.validity``, the copies its verdicts leave out
    and the gate's label check alike.

    Examples
    --------
    >>> labels_row({"a~t": "valid", "b~t": "invalid"}, 3, 0.5) == validity_row(
    ...     [{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": False}], 3, 0.5)
    True
    """
    labeled = len(labels)
    valid = sum(1 for label in labels.values() if label == "valid")
    n = n_derived
    coverage = labeled / n if n else math.nan
    if labeled:
        rate = valid / labeled
        ci_low, ci_high = wilson(valid, labeled, confidence)
    else:
        rate = ci_low = ci_high = math.nan
    checked = bool(n > 0 and labeled == n and rate >= minimum_validity)
    return {"derived": n, "labeled": labeled, "valid": valid, "coverage": coverage, "rate": rate,
            "ci_low": ci_low, "ci_high": ci_high, "minimum_validity": float(minimum_validity), "checked": checked}


def transform_checked(judgements: Iterable[Mapping[str, Any]], n_derived: int, minimum_validity: float) -> bool:
    """True when every one of the transform's ``n_derived`` pairs is labeled and the valid share is at least
    ``minimum_validity`` (:func:`validity_row`'s ``checked``).

    Parameters
    ----------
    judgements : iterable of mapping
        The transform's judgements (``case_id``, boolean ``valid``), of derived cases of the suite; a pair's
        label is the majority of its judgements, a tie is invalid.
    n_derived : int
        The transform's pairs in the suite (one per source case), recorded by the run or not.
    minimum_validity : float
        The transform's ``minimum_validity``.

    Returns
    -------
    bool
        ``coverage == 1 and rate >= minimum_validity``; False when there are no pairs.

    Examples
    --------
    >>> js = [{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": True}]
    >>> transform_checked(js, 2, 0.9), transform_checked(js, 3, 0.5)
    (True, False)
    """
    return bool(validity_row(judgements, n_derived, minimum_validity)["checked"])
