"""Cases: the model, its digest, building one from a mapping, and metamorphic copies (pure; no files)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import quote, quote_value, validation_problem, value_kind
from .canonical import canonical_json, digest
from .jsonsafe import copy_json
from .paths import ABSENT, find_paths, format_path, get_path, parse_path, parse_pattern
from .receipts import OutcomeContract

__all__ = ["Case", "Expected", "case_digest", "content_digest", "case_and_content", "case_content_and_copies",
           "case_from_mapping", "case_copy", "derive_case", "inject_state", "DIGEST_KEYS", "CASE_KEYS"]

#: Keys of a case line that make up its digest (when the case has them).
DIGEST_KEYS: tuple[str, ...] = ("id", "input", "initial_state", "expected", "outcome")
#: Keys a case line may have (``id`` and ``input`` are required).
CASE_KEYS: tuple[str, ...] = ("id", "input", "initial_state", "expected", "cluster", "outcome", "metadata")


class Expected(BaseModel):
    """What a case expects: a final ``answer`` and/or (part of) the ``state`` after it.

    Attributes
    ----------
    answer : Any
        The expected final answer (``None`` when the case gives none: see ``has_answer``).
    state : dict or None
        The leaves the state after the case must hold (``None``: the case expects no state).
    has_answer : bool
        Whether the case line wrote ``answer`` (an expected answer of ``null`` is one); never stored.

    Examples
    --------
    >>> rec = {"id": "c1", "input": {}, "expected": {"answer": None}}
    >>> exp = Case.from_record({**rec, "digest": case_digest(rec)}).expected
    >>> exp.answer, exp.has_answer, exp.state
    (None, True, None)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer: Any = None
    state: dict[str, Any] | None = None
    has_answer: bool = Field(default=False, exclude=True, repr=False)


class Case(BaseModel):
    """One case: an input, the state to reset the sandbox to, and what to expect.

    ``digest`` is the SHA-256 hex of the canonical JSON of
    ``{id, input, initial_state, expected, outcome}`` (keys the case does not
    have are left out; ``cluster`` and ``metadata`` never count). Derived cases
    (metamorphic copies) carry ``source_id`` and ``transform``.

    Attributes
    ----------
    id : str
        The case's id (non-empty).
    input : dict
        What the system's ``run`` is given.
    initial_state : dict
        The state the sandbox is reset to before the case (default ``{}``).
    expected : Expected
        What the case expects.
    cluster : str
        The case's cluster for the intervals (its id when the line gives none; a derived case: its source's).
    outcome : dict or None
        The outcome contract the case promises, if any.
    metadata : dict
        Free-form data, never judged (default ``{}``).
    digest : str
        The SHA-256 hex described above (:func:`case_digest`).
    source_id : str
        The source case's id (its own id for a source case).
    transform : str or None
        The metamorphic transform that derived it; ``None`` for a source case.
    epoch : int
        Which repetition of the case this is (1-based).

    Examples
    --------
    >>> rec = {"id": "ord-1", "input": {"order_id": "ord-1"}, "expected": {"answer": "refunded"}}
    >>> case = Case.from_record({**rec, "digest": case_digest(rec)})
    >>> case.cluster, case.source_id, case.transform, case.epoch, case.expected.answer
    ('ord-1', 'ord-1', None, 1, 'refunded')
    >>> case.digest == case_digest(rec)
    True
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    input: dict[str, Any]
    initial_state: dict[str, Any] = Field(default_factory=dict)
    expected: Expected = Field(default_factory=Expected)
    cluster: str
    outcome: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    digest: str
    source_id: str
    transform: str | None = None
    #: Which repetition of the case this is (1-based; ``epochs: k`` runs each case k times). Never part
    #: of the digest: every epoch of a case is the same case.
    epoch: int = Field(default=1, ge=1)

    def digest_fields(self) -> dict[str, Any]:
        """The mapping the digest is computed from (as it would appear in a line)."""
        out: dict[str, Any] = {"id": self.id, "input": self.input}
        if "initial_state" in self.model_fields_set:
            out["initial_state"] = self.initial_state
        exp = self.expected_dict()
        if exp is not None:
            out["expected"] = exp
        if self.outcome is not None:
            out["outcome"] = self.outcome
        return out

    def expected_dict(self) -> dict[str, Any] | None:
        """``expected`` as written in the case line, or None when the case has none."""
        raw: dict[str, Any] = {}
        if self.expected.has_answer:
            raw["answer"] = self.expected.answer
        if self.expected.state is not None:
            raw["state"] = self.expected.state
        return raw if (raw or "expected" in self.model_fields_set) else None

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_record` reads back (an outcome's ``locator`` is left out)."""
        rec: dict[str, Any] = {"id": self.id}
        if self.epoch != 1:  # right after the id: the journal's index reads both from a line's first bytes
            rec["epoch"] = self.epoch
        rec.update(self.digest_fields())
        if self.outcome is not None and "locator" in self.outcome:  # a path: never in a stored record
            rec["outcome"] = {k: v for k, v in self.outcome.items() if k != "locator"}
        rec.update(cluster=self.cluster, metadata=self.metadata, digest=self.digest, source_id=self.source_id,
                   transform=self.transform)
        return rec

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> Case:
        """Rebuild a case stored by :meth:`to_record` (the digest is kept as stored)."""
        fields = {k: v for k, v in rec.items() if k != "epoch"}
        case = case_from_mapping(fields, digest_value=rec["digest"], source_id=rec.get("source_id"),
                                 transform=rec.get("transform"))
        epoch = rec.get("epoch", 1)
        return case if epoch == 1 else case.model_copy(update={"epoch": int(epoch)})


def case_digest(obj: dict[str, Any]) -> str:
    """The digest of a case line: SHA-256 of the canonical JSON of its digest keys.

    Parameters
    ----------
    obj : dict
        The case as written in ``cases.jsonl``.

    Returns
    -------
    str
        64 hex characters. Independent of key order and whitespace; changes
        with ``initial_state``; ``cluster`` and ``metadata`` never count.

    Examples
    --------
    >>> a = case_digest({"id": "c1", "input": {"x": 1, "y": 2}})
    >>> a == case_digest({"input": {"y": 2, "x": 1}, "id": "c1", "cluster": "k"})
    True
    """
    return digest({k: obj[k] for k in DIGEST_KEYS if k in obj})


def content_digest(case: Case) -> str:
    """The digest of what a case asks and expects, without its id: two cases with the same one are the same evidence.

    SHA-256 of the canonical JSON of ``{expected, initial_state, input, outcome}``: what the system is
    given, the state it starts from, and what every evaluator judges it by. Left out: ``id`` (the
    point of the comparison), ``cluster`` (how the analysis groups cases, not what a case holds: the same
    case in two clusters is still counted twice) and ``metadata`` (notes and tags, never given to the system
    nor judged). An absent ``initial_state`` or ``expected`` reads as ``{}``, an absent ``outcome`` as null.
    :func:`case_and_content` gives the same digest of a case line along with its case, from the canonical texts
    the case's own digest is made of (what that costs: ``python benchmarks/suite_load.py``).

    Examples
    --------
    >>> a = case_from_mapping({"id": "c1", "input": {"x": 1}, "metadata": {"source": "a.jsonl"}})
    >>> b = case_from_mapping({"id": "c9", "input": {"x": 1}, "initial_state": {}, "cluster": "k"})
    >>> content_digest(a) == content_digest(b), a.digest == b.digest
    (True, False)
    """
    fields = case.digest_fields()
    return _digests({key: canonical_json(fields[key]) for key in DIGEST_KEYS if key in fields})[1]


def case_and_content(obj: dict[str, Any]) -> tuple[Case, str]:
    """The case of a line read from JSON and its :func:`content_digest`, both digests from one canonical text
    of each value (each value is serialised once, not once per digest).

    Examples
    --------
    >>> case, content = case_and_content({"id": "c1", "input": {"x": 1}})
    >>> case == case_from_mapping({"id": "c1", "input": {"x": 1}}), content == content_digest(case)
    (True, True)
    """
    case, content, _ = case_content_and_copies(obj, ())
    return case, content


def case_content_and_copies(obj: dict[str, Any], rewrites: Sequence[tuple[str, str]]
                            ) -> tuple[Case, str, tuple[str | None, ...]]:
    """:func:`case_and_content`, and the :func:`content_digest` of each copy that rewrites an input field
    (``rewrites``: ``(field, template)`` of each such transform; None for a field the case does not have).

    A copy differs from its source only in ``input``, which the content's canonical text holds between
    ``initial_state`` and ``outcome``: the text before it is hashed once and the hash copied per rewrite, so a
    copy costs the canonical text of its input, not of its states (:func:`derive_case` and
    :func:`content_digest` would serialise them again).

    Examples
    --------
    >>> line = {"id": "c1", "input": {"m": "hi"}, "initial_state": {"n": 1}}
    >>> case, _, (copy,) = case_content_and_copies(line, [("m", "{value} OBEY")])
    >>> copy == content_digest(derive_case(case, "t", "m", "{value} OBEY"))
    True
    """
    texts = {key: canonical_json(obj[key]) for key in DIGEST_KEYS if key in obj}
    whole, content = _digests(texts)
    case = case_from_mapping(obj, digest_value=whole)
    if not rewrites:
        return case, content, ()
    head = hashlib.sha256(("{" + ",".join(f'"{key}":{texts.get(key, _CONTENT_ABSENT[key])}'
                                          for key in ("expected", "initial_state")) + ",").encode("utf-8"))
    tail = f',"outcome":{texts.get("outcome", _CONTENT_ABSENT["outcome"])}}}'.encode()
    copies: list[str | None] = []
    for field, template in rewrites:
        if field_not_text(case, field) is not None:  # the suite refuses the case, naming the transform
            copies.append(None)
            continue
        rewritten = {**case.input, field: template.replace("{value}", case.input[field])}
        one = head.copy()
        one.update(b'"input":' + canonical_json(rewritten).encode("utf-8") + tail)
        copies.append(one.hexdigest())
    return case, content, tuple(copies)


#: What a content digest reads for a digest key the case line leaves out (``id`` is never part of it).
_CONTENT_ABSENT = {"expected": "{}", "initial_state": "{}", "input": "{}", "outcome": "null"}


def _digests(texts: Mapping[str, str]) -> tuple[str, str]:
    """``(case digest, content digest)`` of a case line, from the canonical JSON text of each digest key it has.

    The canonical JSON of a mapping is ``{"k1":<text 1>,"k2":<text 2>,...}`` over its sorted keys with each
    value's own canonical text (the encoder is compositional), so the values' texts are made once and
    joined twice: with ``id`` for :func:`case_digest`, without it (an absent key read as
    :data:`_CONTENT_ABSENT`) for :func:`content_digest`.
    """
    whole = ",".join(f'"{key}":{texts[key]}' for key in sorted(texts))  # the keys are plain ASCII names
    content = ",".join(f'"{key}":{texts.get(key, absent)}' for key, absent in _CONTENT_ABSENT.items())
    return (hashlib.sha256(("{" + whole + "}").encode("utf-8")).hexdigest(),
            hashlib.sha256(("{" + content + "}").encode("utf-8")).hexdigest())


def case_from_mapping(obj: dict[str, Any], *, digest_value: str | None = None, source_id: str | None = None,
                      transform: str | None = None) -> Case:
    """Build a :class:`Case` from a case line (a mapping read from JSON), checking its keys and types.

    Parameters
    ----------
    obj : dict
        The case as written in ``cases.jsonl``: keys of :data:`CASE_KEYS` (``id`` and ``input`` required),
        plus ``digest``, ``source_id`` and ``transform`` in a stored record. Not modified.
    digest_value : str, optional
        The digest to keep (a stored record's, or one computed already); None computes :func:`case_digest`.
    source_id : str, optional
        The source case's id for a derived case; None: the case's own id.
    transform : str, optional
        The transform that derived the case; None for a source case.

    Returns
    -------
    Case
        ``cluster`` is the line's (as text) or else its id; an ``op.ABSENT`` in ``expected.state`` is stored as
        its JSON form ``{"$absent": true}``.

    Raises
    ------
    ValueError
        One line naming the key and what is allowed: an unknown or missing key, an empty ``id``, a
        ``cluster`` that is neither text nor an integer, an ``expected`` or ``outcome`` of the wrong shape, an
        ``expected.state`` of ``null`` (write the state expected, or leave the key out).

    Examples
    --------
    >>> case = case_from_mapping({"id": "c1", "input": {"q": "hi"}, "cluster": 7})
    >>> case.cluster, case.source_id, case.digest == case_digest({"id": "c1", "input": {"q": "hi"}})
    ('7', 'c1', True)
    >>> case_from_mapping({"id": "c1", "input": {}, "expect": {}})
    Traceback (most recent call last):
    ...
    ValueError: unknown key 'expect'; allowed: id, input, initial_state, expected, cluster, outcome, metadata
    """
    unknown = [k for k in obj if k not in CASE_KEYS and k not in ("digest", "source_id", "transform")]
    if unknown:
        raise ValueError(f"unknown key {quote(unknown[0])}; allowed: {', '.join(CASE_KEYS)}")
    for key in ("id", "input"):
        if key not in obj:
            raise ValueError(f"missing required key {quote(key)}")
    if isinstance(obj["id"], int) and not isinstance(obj["id"], bool):  # a benchmark's task number
        raise ValueError(f"'id' must be a non-empty string, got the number {obj['id']}: write it as text, "
                         f"\"{obj['id']}\" (str(task_id) where you convert the tasks)")
    if isinstance(obj["id"], float):  # 1e3 or 1.50: the number read keeps no spelling to suggest
        raise ValueError(f"'id' must be a non-empty string, got the number {json.dumps(obj['id'])}: write it as "
                         "text, the id in quotes as you spell it (unquoted, 1e3 is read as the number 1000.0)")
    if not isinstance(obj["id"], str) or not obj["id"]:
        raise ValueError(f"'id' must be a non-empty string, got {quote_value(obj['id'])}")
    cluster = obj.get("cluster")
    if cluster is not None and (not isinstance(cluster, (str, int)) or isinstance(cluster, bool)):
        raise ValueError(f"'cluster' must be a string or an integer, got {json.dumps(cluster)[:80]}")
    expected = obj.get("expected")
    if expected is not None and not isinstance(expected, dict):
        raise ValueError(f"'expected' must be an object with keys answer and/or state, got {quote_value(expected)}")
    if expected is not None and set(expected) - {"answer", "state"}:
        bad = sorted(set(expected) - {"answer", "state"})[0]
        raise ValueError(f"unknown key {quote(bad)} under 'expected'; allowed: answer, state")
    if expected is not None and "state" in expected and expected["state"] is None:
        # read as "no expected state", it left the case out of every state check without a word (an agent that
        # wired money away passed the gate's state_matches, its row simply not counted), as initial_state: null
        # is refused
        raise ValueError("under 'expected': 'state' is null, which would leave this case out of every state check; "
                         "write the state the case expects (an object: {} under mode: changes says nothing may "
                         "change), or leave 'state' out for a case no state check judges")
    if expected is not None and _holds_absent(expected.get("state")):  # op.ABSENT written in Python
        expected = {**expected, "state": _absent_to_marker(expected["state"])}
        obj = {**obj, "expected": expected}
    if obj.get("outcome") is not None:
        _check_outcome(obj["outcome"])
    fields: dict[str, Any] = {
        "id": obj["id"],
        "input": obj["input"],
        "cluster": str(obj.get("cluster") if obj.get("cluster") is not None else obj["id"]),
        "digest": digest_value or case_digest(obj),
        "source_id": source_id or obj["id"],
        "transform": transform,
    }
    if "initial_state" in obj:
        fields["initial_state"] = obj["initial_state"]
    if expected is not None:
        try:
            fields["expected"] = Expected.model_validate({**expected, "has_answer": "answer" in expected})
        except ValidationError as exc:
            raise ValueError(f"under 'expected': {_first_error(exc)}") from None
    for key in ("outcome", "metadata"):
        if obj.get(key) is not None:
            fields[key] = obj[key]
    try:
        return Case.model_validate(fields)
    except ValidationError as exc:
        raise ValueError(_first_error(exc)) from None


def case_copy(case: Case) -> Case:
    """A copy of ``case`` whose every dict and list is its own (:func:`~.jsonsafe.copy_json`), with the same fields
    set: the same :meth:`Case.digest_fields`, so the same digest and the same derived copies.

    ``Case`` is frozen, but the dicts it holds are not: an edit of a case in place (``case.input["message"] =
    ...``, ``case.expected.state.clear()``) changes every holder of those dicts. ``model_copy(update=...)`` would
    copy them but mark every field as set (an ``initial_state`` the line never wrote would join the digest fields).

    Examples
    --------
    >>> case = case_from_mapping({"id": "c1", "input": {"m": "hi"}, "expected": {"state": {"a": 1}}})
    >>> twin = case_copy(case)
    >>> twin.input["m"] = "edited"; twin.expected.state["a"] = 2; twin.initial_state["b"] = 3
    >>> case.input, case.expected.state, case.initial_state
    ({'m': 'hi'}, {'a': 1}, {})
    >>> case_copy(case).digest_fields() == case.digest_fields()  # no initial_state: the line gave none
    True
    """
    exp = case.expected
    expected = Expected.model_construct(set(exp.model_fields_set), answer=copy_json(exp.answer),
                                        state=copy_json(exp.state), has_answer=exp.has_answer)
    values = {name: copy_json(value) for name, value in case if name != "expected"}
    return Case.model_construct(set(case.model_fields_set), **values, expected=expected)


def _check_outcome(outcome: Any) -> None:
    """A case's ``outcome`` must be a valid outcome contract; the error names the key and what is allowed."""
    allowed = ", ".join(OutcomeContract.model_fields)
    if not isinstance(outcome, dict):
        raise ValueError(f"'outcome' must be an object (an outcome contract with keys {allowed}), "
                         f"got {value_kind(outcome)}")
    if isinstance(outcome.get("validator"), dict):  # a contract file's {"command": [...]}, copied into a case
        raise ValueError("'outcome.validator' must be the name of a validator registered in oloproof.yaml "
                         "(validators: {report_schema: checks:report_schema}); a {\"command\": [...]} validator "
                         "is for a contract file of oloproof receipt")
    try:
        OutcomeContract.model_validate(outcome)
    except ValidationError as exc:
        loc, message, err = validation_problem(exc, "outcome")
        if err["type"] == "extra_forbidden":
            raise ValueError(f"unknown key {quote(loc)}; allowed under 'outcome': {allowed}") from None
        if err["type"] == "missing":
            raise ValueError(f"missing required key {quote(loc)} (an outcome contract needs artifact_id)") from None
        raise ValueError(f"{quote(loc)}: {message}") from None


def _first_error(exc: ValidationError) -> str:
    """The first problem of a case's fields, worded by the one formatter (``errors.validation_problem``)."""
    key, message, err = validation_problem(exc)
    if err["type"] == "extra_forbidden":
        return f"unknown key {quote(key)}; allowed under 'expected': answer, state"
    return f"{quote(key)}: {message}" if key else message


def _holds_absent(value: Any) -> bool:
    if value is ABSENT:
        return True
    if isinstance(value, dict):
        return any(_holds_absent(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_absent(v) for v in value)
    return False


def _absent_to_marker(value: Any) -> Any:
    """``op.ABSENT`` anywhere in an expected state, written as its JSON form ``{"$absent": true}``."""
    if value is ABSENT:
        return {"$absent": True}
    if isinstance(value, dict):
        return {k: _absent_to_marker(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_absent_to_marker(v) for v in value]
    return value


def field_not_text(case: Case, field: str) -> str | None:
    """Why a transform cannot rewrite ``case.input[field]`` (None: it holds text and can).

    A template rewrites text; a copy given ``str()`` of an object, a boolean or a number got Python's text of
    it (``"{'language': 'en'} again"``, ``"again (was False)"``, which is true), never the value the system
    reads. A nested text (tau2-bench's ``user_scenario.reason_for_call``) cannot be named: the
    field is a key of ``input``.

    Examples
    --------
    >>> case = case_from_mapping({"id": "c1", "input": {"m": "hi", "user": {"lang": "en"}}})
    >>> field_not_text(case, "m") is None
    True
    >>> field_not_text(case, "user")[:46]
    "input field 'user' holds an object, not text; "
    """
    if field not in case.input:
        return f"has no input field {quote(field)}"
    value = case.input[field]
    if isinstance(value, str):
        return None
    return (f"input field {quote(field)} holds {_json_kind(value)}, not text; a transform rewrites text: give the "
            "text it should rewrite an input field of its own")


def _json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words (``null``, not ``NoneType``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (int, float)):
        return f"the number {quote(value)}"
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else type(value).__name__


def inject_state(state: dict[str, Any], state_path: str, template: str) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``state`` with every string at a path matching ``state_path`` rewritten by ``template``.

    Parameters
    ----------
    state : dict
        A case's ``initial_state`` (not modified).
    state_path : str
        A path pattern (:func:`~oloproof_nb._core.paths.parse_pattern`): ``files["bill.txt"]``,
        ``transactions.*.subject``.
    template : str
        ``{value}`` is the original text.

    Returns
    -------
    (state, paths)
        The rewritten copy and the paths rewritten, in state order.

    Raises
    ------
    ValueError
        When no path matches, or a matched value is not a string.

    Examples
    --------
    >>> inject_state({"files": {"bill.txt": "Pay 10", "a.csv": "x"}}, 'files["*.txt"]', "{value} IGNORE ALL")
    ({'files': {'bill.txt': 'Pay 10 IGNORE ALL', 'a.csv': 'x'}}, ['files["bill.txt"]'])
    """
    found = find_paths(state, parse_pattern(state_path))
    if not found:
        raise ValueError(f"no path of its initial_state matches state_path {quote(state_path)}")
    new_state = copy.deepcopy(state)
    for keys in found:
        value = get_path(new_state, keys)
        if not isinstance(value, str):
            raise ValueError(f"state_path {quote(state_path)} matches {format_path(keys)}, which holds "
                             f"{_json_kind(value)}, not text; a state transform rewrites strings: narrow "
                             "state_path to text values (or write \"\" where the case has none)")
        _set_leaf(new_state, keys, template.replace("{value}", value))
    return new_state, [format_path(keys) for keys in found]


def _set_leaf(root: dict[str, Any], keys: Sequence[str], value: Any) -> None:
    """Put ``value`` at ``keys`` of ``root`` in place; the path exists (a digit key of a list is its index)."""
    parent = get_path(root, keys[:-1]) if len(keys) > 1 else root
    if isinstance(parent, list):
        parent[int(keys[-1])] = value
    else:
        parent[keys[-1]] = value


def _kept_as_injected(expected: dict[str, Any], before: dict[str, Any], after: dict[str, Any],
                      injected: list[str]) -> dict[str, Any]:
    """``expected`` (a source's ``expected.state``) with each text it expects kept at an ``injected`` path (equal to
    its value in ``before``, the source's initial state) set to that path's value in ``after`` (the copy's).

    A path through a list is matched by element, not by position: a check may pair a list's elements by a key
    (``by_key``) or in any order, so an expected element names the one it means by its content, wherever it sits.
    Every expected text at the same path with any index at the list levels that equals the rewritten text is
    rewritten (the same text gets the same rewrite). Before, only the element at the same index was (a
    removal ``{"name": "report0.txt", "$absent": true}`` listed first, where the state held ``keep.txt``, kept its
    name in the copy, whose state no longer held it, and an idle system passed every copy while failing every
    source). Where the copy still holds the source's text at such a path (``state_path`` chose some elements and
    not others that hold the same text), which element is meant cannot be told: the same index is taken, as before.
    """
    rewrites: list[tuple[list[str], Any]] = []
    for path in injected:
        keys = parse_path(path)
        old, new = get_path(before, keys), get_path(after, keys)
        lists = _list_levels(before, keys)
        if lists and not any(get_path(after, alike) == old for alike in _alike_paths(after, keys, lists)):
            rewrites += [(alike, new) for alike in _alike_paths(expected, keys, lists)
                         if get_path(expected, alike) == old]
        elif get_path(expected, keys) is not ABSENT and get_path(expected, keys) == old:
            rewrites.append((list(keys), new))
    if not rewrites:
        return expected
    out = copy.deepcopy(expected)
    for where, value in rewrites:
        _set_leaf(out, where, value)
    return out


def _list_levels(root: Any, keys: Sequence[str]) -> frozenset[int]:
    """The positions in ``keys`` (a path of ``root``) that index a list."""
    levels, node = set(), root
    for i, key in enumerate(keys):
        if isinstance(node, list):
            levels.add(i)
            node = node[int(key)]
        else:
            node = node[key]
    return frozenset(levels)


def _alike_paths(node: Any, keys: Sequence[str], lists: frozenset[int], i: int = 0) -> list[list[str]]:
    """The paths of ``node`` that are ``keys`` with any index at the positions ``lists`` (each a list there)."""
    if i == len(keys):
        return [[]]
    if i in lists:
        if not isinstance(node, list):
            return []
        return [[str(j), *rest] for j, child in enumerate(node) for rest in _alike_paths(child, keys, lists, i + 1)]
    if not isinstance(node, dict) or keys[i] not in node:
        return []
    return [[keys[i], *rest] for rest in _alike_paths(node[keys[i]], keys, lists, i + 1)]


def derive_case(case: Case, transform: str, field: str | None, template: str, *,
                state_path: str | None = None) -> Case:
    """The metamorphic copy of ``case`` under ``transform``.

    Its id is ``<source>~<transform>``, the cluster is the source's, and its
    digest is its own. With ``field``, ``input[field]`` is rewritten by
    ``template`` (``{value}`` is the original value); with ``state_path``,
    every string of ``initial_state`` at a matching path is rewritten instead
    (:func:`inject_state`: an injection arriving through data the agent
    reads), and where the source's ``expected.state`` names such a path with
    the value it starts with (the text must stay as it is), the copy expects
    its own injected text there (through a list, at the element holding that
    text wherever it is listed: :func:`_kept_as_injected`). Everything else (``expected``, ``outcome``)
    is the source's: an expectation that the text changes stays as written.

    Raises
    ------
    ValueError
        ``state_path`` matches nothing in the case, or a non-string value; ``field`` is not a text of
        ``input`` (:func:`field_not_text`).
    """
    raw = case.digest_fields()
    raw["id"] = f"{case.id}~{transform}"
    if state_path is not None:
        raw["initial_state"], injected = inject_state(case.initial_state, state_path, template)
        if isinstance(raw.get("expected"), dict) and isinstance(raw["expected"].get("state"), dict):
            raw["expected"] = {**raw["expected"], "state": _kept_as_injected(
                raw["expected"]["state"], case.initial_state, raw["initial_state"], injected)}
    else:
        if field is None:
            raise ValueError("a transform rewrites an input field or a state_path; give one")
        problem = field_not_text(case, field)
        if problem is not None:
            raise ValueError(problem)
        new_input = dict(case.input)
        new_input[field] = template.replace("{value}", case.input[field])
        raw["input"] = new_input
    raw["cluster"] = case.cluster
    raw["metadata"] = case.metadata
    return case_from_mapping(raw, source_id=case.id, transform=transform)
