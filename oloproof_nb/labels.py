"""Human validity labels of metamorphic pairs: the label file format, its loading, and the majority rule.

A label file (``labels/<transform>.jsonl``) holds one judgement per line::

    {"case_id": "ord-001~injected", "valid": true, "labeler": "ana", "note": "override does not change the ask"}

``valid`` says whether the transform kept the request's meaning, so that the
pair is a fair test of the relation. Pure apart from :func:`load_labels`, which
reads one file.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from .errors import LabelFileError

__all__ = ["JUDGEMENT_KEYS", "REQUIRED_KEYS", "LABELS", "Label", "parse_judgement", "load_labels", "pair_label",
           "pair_labels"]

#: Keys a judgement line may have; ``case_id`` and ``valid`` are required.
JUDGEMENT_KEYS: tuple[str, ...] = ("case_id", "valid", "labeler", "note")
REQUIRED_KEYS: tuple[str, ...] = ("case_id", "valid")
#: A pair's label: ``valid``, ``invalid``, or empty when nobody judged it.
LABELS: tuple[str, ...] = ("valid", "invalid", "")

Label = Literal["valid", "invalid", ""]


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
        ``note`` (str, default ``""``).

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
        raise ValueError(f"expected a JSON object with keys {', '.join(JUDGEMENT_KEYS)}, got {type(obj).__name__}")
    unknown = [k for k in obj if k not in JUDGEMENT_KEYS]
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; allowed: {', '.join(JUDGEMENT_KEYS)}")
    for key in REQUIRED_KEYS:
        if key not in obj:
            raise ValueError(f"missing required key {key!r}")
    case_id, valid = obj["case_id"], obj["valid"]
    if not isinstance(case_id, str) or not case_id:
        raise ValueError(f"'case_id' must be a non-empty string, got {case_id!r}")
    if not isinstance(valid, bool):
        raise ValueError(f"'valid' must be true or false, got {json.dumps(valid)}")
    for key in ("labeler", "note"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ValueError(f"{key!r} must be a string, got {json.dumps(obj[key])}")
    if known_ids is not None and case_id not in known_ids:
        which = f" of transform {transform!r}" if transform else ""
        example = next(iter(sorted(known_ids)), None)
        hint = f" (e.g. {example!r})" if example else ""
        raise ValueError(f"case id {case_id!r} is not a derived case{which} of this suite; "
                         f"label ids are '<source id>~<transform>'{hint}")
    return {"case_id": case_id, "valid": valid, "labeler": obj.get("labeler") or "", "note": obj.get("note") or ""}


def load_labels(path: str | Path, known_ids: Collection[str] | None = None,
                transform: str | None = None) -> list[dict[str, Any]]:
    """Read a label file: one judgement per line, empty lines skipped.

    Parameters
    ----------
    path : str or Path
        The JSONL label file.
    known_ids : collection of str, optional
        The derived case ids of the transform (see :func:`parse_judgement`).
    transform : str, optional
        The transform's name, for messages.

    Returns
    -------
    list of dict
        The judgements in file order, each ``{case_id, valid, labeler, note}``.
        An empty file gives an empty list (every pair unlabeled).

    Raises
    ------
    LabelFileError
        Naming the file and the line: a line that is not JSON, not an object,
        has an unknown key, lacks ``case_id``/``valid``, has a non-boolean
        ``valid``, names a case id the suite does not derive, or repeats a
        (``case_id``, ``labeler``) judgement of a named labeler.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabelFileError(path, None, "label file not found") from None
    except UnicodeDecodeError as exc:
        raise LabelFileError(path, None, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise LabelFileError(path, None, f"cannot read the label file: {exc.strerror or exc}") from None
    out: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(text.split("\n"), start=1):  # JSONL lines end at \n only (U+2028 is text)
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            json.dumps(obj, ensure_ascii=False).encode("utf-8")  # an escaped lone surrogate is not text
        except (ValueError, RecursionError) as exc:  # also a number too long to convert
            msg = (exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
                   if isinstance(exc, RecursionError) else str(exc).split(":")[0])
            raise LabelFileError(path, lineno, f"not valid JSON ({msg}); each line must be one JSON object "
                                 '{"case_id": ..., "valid": true|false, "labeler": ..., "note": ...}') from None
        try:
            judgement = parse_judgement(obj, known_ids, transform)
        except ValueError as exc:
            raise LabelFileError(path, lineno, str(exc)) from None
        key = (judgement["case_id"], judgement["labeler"])
        if judgement["labeler"] and key in seen:
            raise LabelFileError(path, lineno, f"labeler {key[1]!r} already judged {key[0]!r} at line {seen[key]}; "
                                 "one judgement per labeler and pair")
        seen[key] = lineno
        out.append(judgement)
    return out


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
    yes = no = 0
    for j in judgements:
        if j["valid"]:
            yes += 1
        else:
            no += 1
    if yes + no == 0:
        return ""
    return "valid" if yes > no else "invalid"


def pair_labels(judgements: Iterable[Mapping[str, Any]]) -> dict[str, Label]:
    """Every judged pair's label, by derived case id (see :func:`pair_label`); unjudged ids are absent.

    Examples
    --------
    >>> pair_labels([{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": True},
    ...              {"case_id": "b~t", "valid": False}])
    {'a~t': 'valid', 'b~t': 'invalid'}
    """
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for j in judgements:
        grouped.setdefault(j["case_id"], []).append(j)
    return {case_id: pair_label(js) for case_id, js in grouped.items()}
