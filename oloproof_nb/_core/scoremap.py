"""How an Inspect AI score value becomes a verdict (``pass`` / ``fail`` / ``missing``): pure, no Inspect import.

Inspect scorers return ``CORRECT`` ``"C"``, ``INCORRECT`` ``"I"``, ``PARTIAL`` ``"P"``, ``NOANSWER``
``"N"``, a number, a bool, or a string. The gate needs binary rows, so each value is mapped:

=====================  ============  ===============================================================
score value            verdict       why
=====================  ============  ===============================================================
``"C"`` (CORRECT)      ``pass``
``"I"`` (INCORRECT)    ``fail``
``"P"`` (PARTIAL)      ``fail``      partly right is not right: a release criterion counts full passes
``"N"`` (NOANSWER)     ``fail``      no answer is the system's failure, not a missing measurement
``True`` / ``False``   pass / fail
a number in [0, 1]     pass / fail   pass when ≥ ``pass_threshold`` (default 1: full marks); NaN ``missing``
another number         ``missing``   unless ``pass_threshold`` is given (a rating out of 10 is not a 0–1
                                     score); without it, every number of a criterion holding one is
                                     ``missing``: a 1 on a 1–10 scale is its worst rating, not full marks
±inf                   ``missing``   with a ``pass_threshold`` too: a judge's ``Rating: inf`` read by
                                     ``float()`` is no rating (it passed at 7), nor a scale (a 0–1
                                     scorer's one ``inf`` made its other numbers ``missing``)
``"yes"``/``"true"``   ``pass``      in any case, as Inspect's ``value_to_float`` reads them
``"no"``/``"false"``   ``fail``
anything else          ``missing``   a dict, a list, another string: map it with ``score_map`` (the Inspect
                                     reader judges a dict value key by key, each by this table)
no score               ``missing``   the scorer did not score the sample (or the sample raised)
=====================  ============  ===============================================================

``score_map`` changes the table: a mapping ``{value: verdict}`` is applied first (``{"P": "pass"}``
makes partial credit pass; keys are compared as given, strings also stripped and upper-cased for the
letter codes, a bool only with a bool: ``{1: "fail"}`` is no verdict of ``True``), or a callable
``f(value) -> verdict`` (``"pass"``/``"fail"``/``"missing"``, a bool, or None for missing) replaces the table.

The default table reads strings exactly as Inspect's own metrics do (``inspect_ai.scorer.value_to_float``):
the letter codes only as written (``"c"`` or ``" C"`` is not ``CORRECT``: Inspect's accuracy counts it 0),
the words in any case but without surrounding space. A string Inspect would count 0 is never a pass here.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import quote
from .records import VERDICT_WORDS, Verdict

__all__ = ["DEFAULT_SCORE_MAP", "ScoreMap", "score_verdict", "check_score_map", "on_default_scale", "at_threshold",
           "reason_kind", "A_SCORE"]

#: A user's mapping of score values to verdicts, or a function of the value.
ScoreMap = Mapping[Any, Any] | Callable[[Any], Any]

#: Inspect's letter codes (``inspect_ai.scorer``: CORRECT, INCORRECT, PARTIAL, NOANSWER).
DEFAULT_SCORE_MAP: dict[str, Verdict] = {"C": "pass", "I": "fail", "P": "fail", "N": "fail"}
_WORDS: dict[str, Verdict] = {"yes": "pass", "true": "pass", "no": "fail", "false": "fail"}


def check_score_map(score_map: ScoreMap | None) -> None:
    """Refuse a ``score_map`` whose mapped verdicts are not ``pass``/``fail``/``missing`` (or bool/None).

    Raises
    ------
    ValueError
        Naming the key and what is allowed.
    """
    if score_map is None or callable(score_map):
        return
    if not isinstance(score_map, Mapping):
        raise ValueError(f"score_map={score_map!r}: give a mapping {{score value: verdict}} or a function of the "
                         "score value")
    for key, verdict in score_map.items():
        if _as_verdict(verdict) is None:
            raise ValueError(f"score_map[{key!r}] = {verdict!r}: a verdict is 'pass', 'fail', 'missing', "
                             "True, False or None")


def is_bool(value: Any) -> bool:
    """Whether ``value`` is a boolean: Python's or NumPy's (``np.True_``, no ``bool``: what ``np.isclose(v, 1)``,
    ``(df.x > 0).all()`` or a comparison of a NumPy number returns). NumPy is asked only when it is imported: no
    value can be one of its bools before, and the receipt hook's path does not import it."""
    numpy = sys.modules.get("numpy")
    return isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_))


def _as_verdict(value: Any) -> Verdict | None:
    """A mapped value as a verdict (None when it is not one). A NumPy bool is a bool: what ``np.isclose(value, 1)``
    or a comparison of a NumPy number returns (a ``score_map`` function of them made every verdict ``missing``,
    "score_map returned np.True_", and the gate BLOCKed a criterion whose every score passed)."""
    if value is None:
        return "missing"
    if is_bool(value):
        return "pass" if value else "fail"
    if isinstance(value, str) and value in VERDICT_WORDS:
        return value  # type: ignore[return-value]
    return None


def _lookup(score_map: Mapping[Any, Any], value: Any) -> Verdict | None:
    keys = [value]
    if isinstance(value, str):
        keys.append(value.strip().upper())
    for key in keys:
        try:
            if key in score_map and _same_kind(score_map, key):
                return _as_verdict(score_map[key])
        except TypeError:  # an unhashable value (a dict or a list)
            return None
    return None


def _same_kind(score_map: Mapping[Any, Any], key: Any) -> bool:
    """Whether ``score_map`` holds ``key`` as a bool when it is one, and as a number when it is a number: a dict
    finds ``True`` under ``1`` (``True == 1``), so ``{1: "fail"}`` for a rating's 1 failed every ``True`` score,
    which the table passes."""
    if not (is_bool(key) or isinstance(key, numbers.Number)):
        return True
    wanted = is_bool(key)
    return any(is_bool(held) == wanted for held in score_map
               if (is_bool(held) or isinstance(held, numbers.Number)) and held == key)


#: What :func:`score_verdict` says of a score it gives no verdict, after ``score <value>``.
_OFF_SCALE = " is not in [0, 1]; say which scores pass with pass_threshold= (--pass-threshold)"
_NOT_FINITE = " is not a finite number, so no score"
# no option of the command line maps a score: ``oloproof gate LOG`` was sent to a keyword it cannot give
_NO_VERDICT = (" has no verdict; map it with score_map= in Python, op.from_inspect(path, score_map=…); the command "
               "line has none")
#: What a python check's number is told without a ``pass_threshold``, after ``check returned <value>; ``.
A_SCORE = ("a number is no verdict: give the check pass_threshold: (the lowest score that passes, 1 for full "
           "credit only), or return True, False, None or a (verdict, reason) pair")
#: The reasons that name the score they are given for: their start, and the ends after the score.
_NAMING = (("score ", (_OFF_SCALE, _NOT_FINITE, _NO_VERDICT)), ("check returned ", (f"; {A_SCORE}",)))


def reason_kind(reason: str) -> str:
    """The kind of a ``missing`` verdict's reason: one :func:`score_verdict` gives, or a python check's number
    without a ``pass_threshold`` (``check returned 0.5; a number is no verdict: …``), with the score it names left
    out (``score … is not in [0, 1]; …``), else the reason as it is.

    A 1–10 rating read without a ``pass_threshold`` gives one reason per rating (``score 3 …``, ``score 7 …``), as
    a check's partial-credit reward does per reward (``check returned 0.25; …``, ``check returned 0.5; …``): told
    apart by their values, one cause read as up to ten, each with its own count (``17 of its 72 verdicts are
    missing``), and pushed the other criteria's reasons out of the terminal's lines.

    Examples
    --------
    >>> reason_kind("score 7 is not in [0, 1]; say which scores pass with pass_threshold= (--pass-threshold)")
    'score … is not in [0, 1]; say which scores pass with pass_threshold= (--pass-threshold)'
    >>> reason_kind("check returned 0.5; " + A_SCORE) == "check returned …; " + A_SCORE
    True
    >>> reason_kind("the scorer gave no score")
    'the scorer gave no score'
    """
    for start, tails in _NAMING:
        for tail in tails:
            if reason.startswith(start) and reason.endswith(tail) and len(reason) > len(start) + len(tail):
                return f"{start}…{tail}"
    return reason


def score_verdict(value: Any, score_map: ScoreMap | None = None, pass_threshold: float | None = None
                  ) -> tuple[Verdict, str]:
    """The verdict of one Inspect score value, and a reason (empty for a pass).

    Parameters
    ----------
    value : Any
        ``Score.value`` as stored in the log.
    score_map : mapping or callable, optional
        A mapping applied before the default table, or a function that replaces it (see the module).
    pass_threshold : float, optional
        A numeric value passes when it is at or above this. Not given, a value in [0, 1] passes at 1 (full
        marks) and any other number is ``missing``: on a scale the threshold cannot be guessed (a 1–10
        rating of 2 would pass at 1).

    Returns
    -------
    tuple of (str, str)
        ``(verdict, reason)``.

    Examples
    --------
    >>> score_verdict("C"), score_verdict("P"), score_verdict(0.5)
    (('pass', ''), ('fail', "score 'P'"), ('fail', 'score 0.5'))
    >>> score_verdict(0.5, pass_threshold=0.5)[0], score_verdict("P", {"P": "pass"})[0]
    ('pass', 'pass')
    >>> score_verdict({"a": 1})[0], score_verdict("c")[0], score_verdict("Yes")[0]
    ('missing', 'missing', 'pass')
    >>> score_verdict(7)[0], score_verdict(7, pass_threshold=7)[0]
    ('missing', 'pass')
    """
    shown = quote(value, 80)  # never raises: a scorer may give an int of more than 4300 digits
    if callable(score_map):
        given = score_map(value)  # called once: a user's function may count its calls or be slow
        mapped = _as_verdict(given)
        if mapped is None:
            return "missing", f"score_map returned {quote(given, 80)} for score {shown}"
        return mapped, "" if mapped == "pass" else f"score {shown}"
    verdict: Verdict | None = None
    if score_map:
        verdict = _lookup(score_map, value)
    if verdict is None:
        if _is_infinite(value):  # a judge's "Rating: inf" parsed by float(): no rating (it passed a threshold of 7)
            return "missing", f"score {shown}{_NOT_FINITE}"
        if pass_threshold is None and _off_scale(value):
            return "missing", f"score {shown}{_OFF_SCALE}"
        verdict = _default(value, 1.0 if pass_threshold is None else pass_threshold)
    if verdict is None:
        return "missing", f"score {shown}{_NO_VERDICT}"
    if verdict == "missing":
        return "missing", f"score {shown}"
    return verdict, "" if verdict == "pass" else f"score {shown}"


def on_default_scale(value: Any, score_map: ScoreMap | None = None, pass_threshold: float | None = None,
                     ) -> bool | None:
    """Whether a score is a number the default table judges on the [0, 1] scale (True: in it, False: outside
    it), or None when the scale does not decide its verdict (not a number, a bool, NaN or ±inf, a
    ``pass_threshold`` given, or ``score_map`` decides it).

    A criterion is one scale: when any of its numbers is off [0, 1], its numbers in [0, 1] are on that other
    scale too (a 1 of a 1–10 rating is its worst, not full marks), so the caller makes them ``missing``.

    Examples
    --------
    >>> on_default_scale(0.5), on_default_scale(7), on_default_scale("C"), on_default_scale(1, pass_threshold=5)
    (True, False, None, None)
    """
    if pass_threshold is not None or callable(score_map):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or _is_nan(value) or _is_infinite(value):
        return None  # an infinite score is no score, on no scale: one inf of a 0–1 scorer made its scores missing
    if score_map and _lookup(score_map, value) is not None:
        return None
    return not _off_scale(value)


def _off_scale(value: Any) -> bool:
    """A number (not a bool, not NaN) outside [0, 1]."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and not _is_nan(value)
            and not 0 <= value <= 1)


def _is_nan(value: Any) -> bool:
    """NaN of any float type: Python's, or NumPy's (``np.longdouble`` is no Python float, and its ``.item()`` stays
    one: a python check's NaN score of it failed at its threshold). Compared with itself, not by
    ``math.isnan``, which raises OverflowError for an int too large for a float; an int is never NaN, nor is what
    is no real number (text, a dict)."""
    return isinstance(value, (float, numbers.Real)) and value != value


def _is_infinite(value: Any) -> bool:
    """±inf of any float type (``float("inf")``, ``np.longdouble("-inf")``): on no scale, so no score (an
    ``np.longdouble`` inf passed a python check's threshold). An int of any size is finite (compared
    exactly, never converted)."""
    return isinstance(value, (float, numbers.Real)) and abs(value) == math.inf


def at_threshold(value: float, pass_threshold: float) -> Verdict:
    """A number's verdict at ``pass_threshold``: at or above it passes, below it fails, NaN and ±inf of any float
    type are ``missing`` (no score). The one rule for an Inspect AI score and a python check's returned score.

    Examples
    --------
    >>> at_threshold(0.5, 0.5), at_threshold(0.49, 0.5), at_threshold(float("nan"), 0.5), at_threshold(10**400, 1)
    ('pass', 'fail', 'missing', 'pass')
    """
    # NaN and ±inf of any float type: a NumPy longdouble (which ``.item()`` leaves as it is) NaN failed and its inf
    # passed, as comparisons read them; an int never is either (a huge one is no float at all)
    if _is_nan(value) or _is_infinite(value):
        return "missing"
    return "pass" if value >= pass_threshold else "fail"


def _default(value: Any, pass_threshold: float) -> Verdict | None:
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, (int, float)):
        return at_threshold(value, pass_threshold)
    if isinstance(value, str):  # as value_to_float: the codes as written, the words lower-cased, nothing stripped
        return DEFAULT_SCORE_MAP.get(value) or _WORDS.get(value.lower())
    return None
