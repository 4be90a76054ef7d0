"""What makes a check and an agent of Inspect AI logs (see :mod:`.inspect_log`).

A check: the criterion each score is read as (:func:`criterion_names`, :func:`scorer_names`), a scorer's options
(the logs of one task run it with one setting), and how its scores were read (``pass_threshold``, ``score_map``:
:func:`score_reading`). An agent: the settings the logs of a folder must share (:func:`agent_settings`,
:func:`task_settings`), those of how calls reach the model left out.
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
import re
from collections.abc import Iterable
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from .._core.canonical import canonical_json
from .._core.paths import flatten
from .._core.scoremap import ScoreMap
from ..errors import OloproofError, clip

__all__ = ["criterion_names", "scorer_names", "split_hint", "added_hint", "agent_settings", "task_settings",
           "epoch_settings", "check_retuned"]


def plain_json(value: Any) -> Any:
    """A pydantic model (a chat message) as JSON, without ids that change from run to run."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True, exclude={"id"})
    if isinstance(value, list):
        return [plain_json(v) for v in value]
    return value


def criterion_names(scorers: list[str], keys: dict[str, list[str]], plain: Iterable[str] = ()
                    ) -> dict[tuple[str, str | None], str]:
    """The criterion each score is read as: ``(scorer, None)`` for a scorer's score, ``(scorer, key)`` for each key of
    a dict-valued scorer (one in ``keys``), in the order of ``scorers``. A dict-valued scorer in ``plain`` (another
    task's scorer of that name gives plain scores) has its ``(scorer, None)`` too, named by the scorer, and a key
    of it named as the scorer is ``scorer/key``.

    A scorer is named as its scores are (:func:`scorer_names`). A key is named as Inspect's results name the
    metrics of that key (``results.scores[i].name`` is the key): the key alone, unless another scorer is named so
    or another dict-valued scorer has that key too; then ``scorer/key``, for each of them (Inspect's own table
    shows two rows named alike). A name so depends only on the scorers read, never on the order of the samples.

    Examples
    --------
    >>> names = criterion_names(["checks", "audit", "graded"], {"checks": ["correct", "safe"],
    ...                                                        "audit": ["correct", "graded"]})
    >>> list(names.values())
    ['checks/correct', 'safe', 'audit/correct', 'audit/graded', 'graded']
    >>> list(criterion_names(["judge"], {"judge": ["correct", "judge"]}, plain={"judge"}).values())
    ['judge', 'correct', 'judge/judge']
    """
    names: dict[tuple[str, str | None], str] = {}
    also = set(plain)
    for scorer in scorers:
        if scorer not in keys or scorer in also:
            names[(scorer, None)] = scorer
        if scorer not in keys:
            continue
        for key in keys[scorer]:
            shared = any(key == other or key in keys.get(other, []) for other in scorers if other != scorer)
            names[(scorer, key)] = f"{scorer}/{key}" if shared or (scorer in also and key == scorer) else key
    return names


def scorer_names(declared: list[str]) -> list[str]:
    """The names a task's scorers score under, from the names its log's header declares, in order.

    The header names each scorer after its function (``graded``, ``graded``), but the samples' ``scores`` and the
    results key a second scorer of one name as Inspect's ``unique_scorer_name`` makes it: ``graded1`` (then
    ``graded2`` …), so two settings of one scorer function (a strict and a lenient grader) are two checks.

    Examples
    --------
    >>> scorer_names(["graded", "match", "graded", "graded"])
    ['graded', 'match', 'graded1', 'graded2']
    """
    names: list[str] = []
    for base in declared:
        name, count = base, 1
        while name in names:
            name, count = f"{base}{count}", count + 1
        names.append(name)
    return names


def options_text(scorer: Any) -> str:
    """A declared scorer's ``options`` as canonical JSON ("" for none)."""
    opts = getattr(scorer, "options", None)
    return json.dumps(opts, sort_keys=True, ensure_ascii=False, default=str) if opts else ""


def same_options(seen: dict[tuple[str, str], tuple[str, Path]], name: str, text: str, file: Path,
                  task: str) -> None:
    """Refuse logs of one task that run one scorer with different arguments (they would be pooled into one
    criterion: a lenient half and a strict half read as one check). Two tasks may run it with different arguments
    (``match()`` in one, ``match(location="any")`` in the other): a scorer several tasks share is a criterion per
    task (:meth:`Reader._split_by_task`), each of one setting."""
    first = seen.setdefault((task, name), (text, file))
    if first[0] == text:
        return
    raise OloproofError(f"{file}: scorer {name!r} runs with options {text or '{}'}, but {first[1]} ran it with "
                        f"{first[0] or '{}'}; read the logs of one scorer setting at a time and compare the "
                        "runs with op.compare")


#: Generation settings that shards and retries of one agent legitimately differ in: how the calls reach the model
#: (connections, timeouts, retries, batching, caching, tracing headers), not what the model is asked or how it
#: samples. Every other generation setting (``temperature``, ``top_p``, ``top_k``, ``max_tokens``, ``seed``,
#: ``system_message``, the reasoning settings, ``stop_seqs`` ...) is part of the agent: :func:`agent_settings`.
OPERATIONAL_SETTINGS = frozenset({"max_connections", "adaptive_connections", "max_retries", "timeout",
                                  "attempt_timeout", "stream_idle_timeout", "batch", "cache", "cache_prompt",
                                  "extra_headers"})

#: The fields of an eval's own config (``eval.config``, where a task's own limits are recorded too) that are part of
#: the agent: the limits a sample runs under, the approval policy of its tool calls, the review policy of their
#: results (a reviewer may end the sample) and its sentinel monitors and protocols decide what the agent can do (a
#: shard at ``message_limit=2`` stopped before it acted). The rest of it is how the eval ran, which shards and
#: retries differ in: sample selection, ``max_samples``, ``fail_on_error``, log settings (:func:`agent_settings`).
AGENT_LIMITS = ("message_limit", "token_limit", "token_limit_type", "turn_limit", "time_limit", "working_limit",
                "cost_limit", "approval", "review", "sentinel")

#: Model arguments (``-M``: ``eval.model_args``, a role's model's ``args``) that say where the model runs or how calls
#: reach it, as Inspect AI's providers read them: the port of a local vLLM or SGLang server (its ``base_url`` is
#: ``model_base_url``, left out too), the client's timeout and retry delay, streaming, the HTTP client and its default
#: headers. ``device`` is kept by its kind only (:func:`_model_args`): ``cuda:0`` and ``cuda:1`` are one setting,
#: ``cuda`` and ``cpu`` two. Every other argument may change what the model computes (``model_path``, ``torch_dtype``,
#: ``chat_template``, ``batch_size``: the padding of a batch changes the numbers, ``responses_api``, ``extra_body``
#: ...), so it is part of the agent; Inspect AI leaves ``api_key`` and ``aws_*`` out of the log itself.
OPERATIONAL_MODEL_ARGS = frozenset({"port", "client_timeout", "retry_delay", "streaming", "http_client",
                                    "default_headers"})


def _leaves(value: Any, path: str) -> dict[str, str]:
    """The leaves of ``value`` (:func:`~oloproof_nb._core.paths.flatten`) under ``path``, each as canonical JSON;
    None and empty mappings and lists add nothing (``model_args`` of None and of ``{}`` are one setting)."""
    return {path + key[1:]: json.dumps(leaf, sort_keys=True, ensure_ascii=False, default=str)
            for key, leaf in flatten({"v": value}).items() if leaf is not None and leaf != {} and leaf != []}


def _model_args(value: Any) -> dict[str, Any]:
    """Model arguments less :data:`OPERATIONAL_MODEL_ARGS`, a ``device`` as its kind (``cuda:1``: ``cuda``).

    Examples
    --------
    >>> _model_args({"device": "cuda:1", "port": 8000, "model_path": "m/v2"})
    {'device': 'cuda', 'model_path': 'm/v2'}
    """
    given = dict(plain_json(value) or {})
    if isinstance(given.get("device"), str):
        given["device"] = given["device"].split(":", 1)[0]
    return {k: v for k, v in given.items() if k not in OPERATIONAL_MODEL_ARGS}


def task_settings(header: Any) -> dict[str, str]:
    """What makes a log's task besides its name (the map :func:`agent_settings` gives): ``eval.task_version`` (a
    task's author raises it when the task changes) and the task's sandbox, ``eval.sandbox`` (its ``type``: a
    ``docker`` and a ``local`` sandbox are other worlds for the agent's tools; its ``config``, a file by its name:
    Inspect writes the path relative to the working folder, which shards run elsewhere differ in, and keeps no
    content of the file).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> task_settings(NS(eval=NS(task_version=2, sandbox=NS(type="docker", config="tasks/compose.yaml"))))
    {'eval.task_version': '2', 'eval.sandbox.type': '"docker"', 'eval.sandbox.config': '"compose.yaml"'}
    """
    spec = header.eval
    sandbox = getattr(spec, "sandbox", None)
    config = getattr(sandbox, "config", None)
    return {**_leaves(getattr(spec, "task_version", None), "eval.task_version"),
            **_leaves(getattr(sandbox, "type", None), "eval.sandbox.type"),
            **_leaves(re.split(r"[\\/]", config)[-1] if isinstance(config, str) else plain_json(config),
                      "eval.sandbox.config")}


def epoch_settings(header: Any) -> dict[str, str]:
    """How many epochs a log's eval ran each sample for (``eval.config.epochs``; none given: 1), the same in every log
    of one task: a sample's epochs are its rows, so its weight in the rate. Shards of one task run with
    ``--limit 0,30 --epochs 10`` and ``--limit 30,60 --epochs 2`` weighed each of the first 30 samples five times as
    much as each of the others: 30 samples that always pass beside 30 that pass half their epochs gated as 330 of 360
    (0.917, ci_low 0.838, PASS at 0.8, exit 0), where the 60 samples at one number of epochs rate 0.75.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> epoch_settings(NS(eval=NS(config=NS(epochs=None)))), epoch_settings(NS(eval=NS(config=NS(epochs=3))))
    ({'eval.config.epochs': '1'}, {'eval.config.epochs': '3'})
    """
    epochs = getattr(getattr(header.eval, "config", None), "epochs", None)
    return {"eval.config.epochs": json.dumps(epochs or 1, default=str)}


def check_retuned(header: Any, file: Path) -> None:
    """Refuse a log whose agent settings were changed while its eval ran: ``inspect ctl config`` retunes a running
    eval's sample limits (``--message-limit``, ``--token-limit``, ``--time-limit``, lifting one with none), recorded in
    the log's ``config_updates``, while its header keeps the values the eval was launched with. The samples before the
    change and after it ran under two settings of the agent, which :func:`agent_settings` tells apart between logs
    (shards at ``message_limit=50`` and at ``2`` are refused) but the header alone does not show within one: such a log
    was gated as one agent at its launch limits. Changes of how the eval ran (``max_samples``,
    ``max_connections``, log settings, the retry knobs in :data:`OPERATIONAL_SETTINGS`) decide no verdict, nor does a
    change to the value in force: ``inspect ctl config --message-limit 50`` on an eval launched at 50 is recorded all
    the same (Inspect records a change of no live override), and such a log was refused though every sample ran at 50.
    A change is to the launch value when it sets it or is ``cleared`` (which restores it, as Inspect's
    ``effective_eval_config`` folds them); until one sets another value, every change before it was to that value."""
    launch = {"eval": getattr(header.eval, "config", None), "generate": getattr(header.eval, "model_generate_config",
                                                                                None)}
    for update in getattr(header, "config_updates", None) or []:
        for change in getattr(update, "changes", None) or []:
            kind, name = getattr(change, "config", None), str(getattr(change, "name", ""))
            if (kind == "eval" and name in AGENT_LIMITS) or (kind == "generate" and name not in OPERATIONAL_SETTINGS):
                if getattr(change, "cleared", False) or plain_json(getattr(change, "value", None)) == plain_json(
                        getattr(launch[kind], name, None)):  # the value the samples ran under: one setting still
                    continue
                to = clip(json.dumps(plain_json(getattr(change, "value", None)), default=str))
                raise OloproofError(f"{file}: its eval's {name} was changed to {to} while it ran (config_updates: "
                                    f"inspect ctl config), so its samples ran under two settings of the agent and the "
                                    f"header's eval.config.{name} is not every sample's; run the eval again under one "
                                    "setting to judge it")


def agent_settings(header: Any) -> tuple[dict[str, str], dict[str, str]]:
    """What makes a log's agent besides its model: the settings of its model, and those of its task's solver.

    Returns ``(model, plan)``, each a map from a header field's path (``plan.config.temperature``) to its value as
    canonical JSON. ``model``: ``eval.model_generate_config``, ``eval.model_args`` and ``eval.model_roles`` (the
    same in every log of one agent, whatever the task; the model arguments as :func:`_model_args` keeps them).
    ``plan``: the solver's steps with their parameters (``plan.steps``, ``plan.finish``; ``eval.solver`` and
    ``eval.solver_args`` when a solver was given on the command line), the generation config the eval and the task
    gave (``plan.config``: ``eval(..., temperature=0)`` is recorded there) and the limits, approval and review
    policies and sentinels its samples ran under (the :data:`AGENT_LIMITS` of ``eval.config``), the same in every
    log of one task (another task may use another solver). Generation settings in :data:`OPERATIONAL_SETTINGS` are
    left out (of a role's model's ``config`` too), as are the fields shards and retries of one run differ in (the
    rest of ``eval.config``: sample selection, ``max_samples``, log settings; ``eval.dataset``; the model's
    ``model_base_url`` and a role's model's ``base_url``) and ``eval.task_args``, which may pick the dataset (a task
    argument that changes the solver shows in its steps).
    """
    spec, plan = header.eval, getattr(header, "plan", None)

    def config(value: Any) -> dict[str, Any]:
        given = plain_json(value) if value is not None else {}
        return {k: v for k, v in dict(given).items() if k not in OPERATIONAL_SETTINGS}

    def role(value: Any) -> Any:  # a role's model as the eval's own: its config less how calls reach it, no base_url
        if isinstance(value, list):
            return [role(item) for item in value]
        given = {k: v for k, v in dict(plain_json(value)).items() if k != "base_url"}
        return {**given, "config": config(given.get("config")), "args": _model_args(given.get("args"))}

    model = {**_leaves(config(getattr(spec, "model_generate_config", None)), "eval.model_generate_config"),
             **_leaves(_model_args(getattr(spec, "model_args", None)), "eval.model_args"),
             **_leaves({k: role(v) for k, v in (getattr(spec, "model_roles", None) or {}).items()}, "eval.model_roles")}
    ran = getattr(spec, "config", None)
    solver = {**_leaves(plain_json(getattr(spec, "solver", None)), "eval.solver"),
              **_leaves(plain_json(getattr(spec, "solver_args", None)), "eval.solver_args"),
              **_leaves({name: plain_json(getattr(ran, name, None)) for name in AGENT_LIMITS}, "eval.config")}
    if plan is not None:
        steps = [{"solver": plain_json(step.solver), "params": plain_json(step.params)} for step in plan.steps or []]
        finish = plan.finish and {"solver": plain_json(plan.finish.solver), "params": plain_json(plan.finish.params)}
        solver.update({**_leaves(steps, "plan.steps"), **_leaves(finish, "plan.finish"),
                       **_leaves(config(plan.config), "plan.config")})
    return model, solver


def same_agent(seen: dict[tuple[str, ...], tuple[dict[str, str], Path]], scope: tuple[str, ...],
                settings: dict[str, str], file: Path, two: str = "two agents") -> None:
    """Refuse logs that run one agent with different settings (:func:`agent_settings`): read as one run, the
    rates of two agents (temperature 0 on half the samples, 1 with a system message on the other) were pooled.
    ``two`` says what such logs are (``two versions of the task`` for :func:`task_settings`)."""
    first, other = seen.setdefault(scope, (settings, file))
    for key in sorted(set(first) | set(settings)):
        if first.get(key) != settings.get(key):
            raise OloproofError(f"{file}: {key} is {clip(settings.get(key, 'not set'))}, but {other} has "
                                f"{clip(first.get(key, 'not set'))}: logs of one task run with different settings "
                                f"are {two}; read one setting's logs at a time (one folder per setting) and "
                                "compare the runs with op.compare")


def split_hint(name: str) -> str:
    """Why ``name``, a criterion name the samples of several tasks share, is no criterion: each task has its own.

    Examples
    --------
    >>> split_hint("match")
    "the samples of several tasks are scored under 'match': a criterion per task, named <task>/match"
    """
    return f"the samples of several tasks are scored under {name!r}: a criterion per task, named <task>/{name}"


def added_hint(name: str) -> str:
    """Why ``name``, under which a person added scores after the eval, is no criterion: no scorer gave them.

    Examples
    --------
    >>> added_hint("review")
    "no scorer of the eval gave a score under 'review': a verdict made by hand is no criterion"
    """
    return f"no scorer of the eval gave a score under {name!r}: a verdict made by hand is no criterion"


def score_reading(score_map: ScoreMap | None, pass_threshold: float | None) -> str:
    """How a criterion's scores become verdicts, when not by the defaults: canonical JSON of its ``pass_threshold``
    (the one number given, or its own in a mapping: a criterion the mapping leaves out is read by the default rule,
    as with no threshold) and the ``score_map`` (a mapping as its sorted ``repr`` pairs, so ``1``, ``"1"`` and
    ``True`` stay apart; a function as its qualified name and a digest of its code); ``""`` for the defaults.

    Examples
    --------
    >>> score_reading(None, None)
    ''
    >>> print(score_reading({"P": "pass"}, 0.5))
    {"pass_threshold":0.5,"score_map":[["'P'","'pass'"]]}
    """
    out: dict[str, Any] = {}
    if pass_threshold is not None:
        out["pass_threshold"] = float(pass_threshold)
    if callable(score_map):
        out["score_map"] = _function_text(score_map)
    elif score_map is not None:
        out["score_map"] = sorted([repr(k), repr(v)] for k, v in score_map.items())
    return canonical_json(out) if out else ""


#: How deep :func:`_function_text` follows functions bound to a ``score_map`` function (a closure over a helper).
_BOUND_DEPTH = 3


def _function_text(fn: Any, depth: int = 0) -> str:
    """A ``score_map`` function as what decides its verdicts: its qualified name and a digest of its code, with the
    values it is bound to — a closure's cells, its defaults, the module-level values its code reads (a ``CUTS`` dict),
    a ``functools.partial``'s arguments, a function's own attributes, a callable object's or a bound method's object's
    attributes — as a digest of their text (:func:`_value_text`: a function among them by this text, ``depth`` levels
    deep, a plain object by its class and attributes; a value whose own ``repr`` names its address reads as another
    value in another process, which can only say ``check_changed``).

    ``cut_at(1.0)`` and ``cut_at(0.5)`` (one ``lambda`` closing over the cut) have one code, and a ``partial`` has no
    code of its own: a candidate's log read with the lower cut was the base's check, no flip, NO_REGRESSION;
    they are two readings now.

    Examples
    --------
    >>> import functools
    >>> def cut(value, at): return "pass" if value >= at else "fail"
    >>> _function_text(functools.partial(cut, at=1.0)) == _function_text(functools.partial(cut, at=0.5))
    False
    """
    def value(v: Any) -> str:
        return _value_text(v, depth)

    bound: list[str]
    if isinstance(fn, functools.partial):  # no code of its own: the function and the arguments it is given
        text = f"functools.partial({value(fn.func)})"
        bound = [value(a) for a in fn.args] + [f"{k}={value(v)}" for k, v in sorted(fn.keywords.items())]
    else:
        text, bound = _code_text(fn), []
        code = _code_of(fn)
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                bound.append(value(cell.cell_contents))
            except ValueError:  # an empty cell
                bound.append("<empty>")
        bound += [value(v) for v in getattr(fn, "__defaults__", None) or ()]
        bound += [f"{k}={value(v)}" for k, v in sorted((getattr(fn, "__kwdefaults__", None) or {}).items())]
        names = getattr(fn, "__globals__", None) or {}
        bound += [f"{name}={value(names[name])}" for name in (code.co_names if code is not None else ())
                  if name in names and not isinstance(names[name], ModuleType)]
        # a bound method's object; a function's own attributes (``grade.at = 0.5``, which its code reads)
        held = getattr(fn, "__self__", fn) if hasattr(fn, "__code__") else fn
        attributes = _attributes(held)
        if attributes is not None and not isinstance(held, ModuleType):
            bound += [f"{k}={value(v)}" for k, v in sorted(attributes.items(), key=lambda kv: str(kv[0]))]
    if not bound:
        return text
    return f"{text} bound {hashlib.sha256(', '.join(bound).encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def _value_text(v: Any, depth: int) -> str:
    """A value a ``score_map`` function is bound to, as text (:func:`_function_text`, ``depth`` levels deep): a
    function by :func:`_function_text`; an object whose ``repr`` is ``object``'s (its address alone) by its class
    and attributes; else its ``repr``.

    A closure over a plain settings object (``cfg.cut``) was its address: ``cut 1.0`` and ``cut 0.5`` made one after
    the other, the first freed, got one address and read as one check (a log read with the lower cut was the base's
    check, NO_REGRESSION), and two equal settings alive at once read as two.

    Examples
    --------
    >>> class Cfg:
    ...     def __init__(self, cut): self.cut = cut
    >>> _value_text(Cfg(1.0), 0) == _value_text(Cfg(1.0), 0) != _value_text(Cfg(0.5), 0)
    True
    """
    if depth < _BOUND_DEPTH:
        if callable(v):
            return _function_text(v, depth + 1)
        attributes = _attributes(v) if getattr(type(v), "__repr__", None) is object.__repr__ else None
        if attributes is not None:
            kind = type(v)
            held = ", ".join(f"{k}={_value_text(a, depth + 1)}"
                             for k, a in sorted(attributes.items(), key=lambda kv: str(kv[0])))
            return f"{kind.__module__}.{kind.__qualname__}({held})"
    try:
        return repr(v)
    except Exception:  # noqa: BLE001  (a repr that raises: its type, and the comparison says changed at worst)
        return f"<{type(v).__qualname__}>"


def _attributes(obj: Any) -> dict[str, Any] | None:
    """``obj``'s attributes: its ``__dict__`` with the ``__slots__`` its classes declare that are set (None: it has
    neither, as a number or a string).

    A settings object or a grader with ``__slots__`` has no ``__dict__``: its cut was not read, so
    ``Grader(1.0).grade`` and ``Grader(0.5).grade``, or ``cfg.cut = 0.5`` between two readings, were one check.

    Examples
    --------
    >>> class Cfg:
    ...     __slots__ = ("cut", "floor")
    ...     def __init__(self, cut): self.cut = cut
    >>> _attributes(Cfg(0.5)), _attributes(1.5)
    ({'cut': 0.5}, None)
    """
    own = getattr(obj, "__dict__", None)
    found: dict[str, Any] | None = dict(own) if isinstance(own, dict) else None
    for kind in type(obj).__mro__:
        slots = vars(kind).get("__slots__")
        if slots is None:
            continue
        found = {} if found is None else found
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            stored = f"_{kind.__name__.lstrip('_')}{name}" if name.startswith("__") and not name.endswith("__") \
                else name  # a private slot is stored under its mangled name
            try:
                value = getattr(obj, stored)
            except Exception:  # noqa: BLE001  (a slot never set; a getter that raises: left out)
                continue
            found.setdefault(stored, value)  # a name a subclass declares again: read once
    return found


def _code_text(fn: Any) -> str:
    """A callable's qualified name and a digest of its code (a callable object's: its class's ``__call__``)."""
    named = fn if hasattr(fn, "__qualname__") else type(fn)
    code = _code_of(fn)
    text = f"{getattr(named, '__module__', None) or ''}.{named.__qualname__}"
    return text + (f" {hashlib.sha256(marshal.dumps(code)).hexdigest()[:16]}" if code is not None else "")


def _code_of(fn: Any) -> CodeType | None:
    """A callable's code: a function's (a bound method's), a callable object's class's ``__call__``, else None."""
    code = getattr(fn, "__code__", None)
    if code is None:
        code = getattr(type(fn).__call__, "__code__", None)
    return code if isinstance(code, CodeType) else None
