"""The release.yaml model: thresholds and statistical settings of the gate."""

from __future__ import annotations

import difflib
import json
import math
import os
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from .._core.epochs import REDUCE_HELP, parse_reduce
from .._core.stats import MIN_CONFIDENCE  # the lowest confidence a release file may ask for (one number, as the API's)
from ..errors import ConfigError, format_loc, quote, quote_value
from .files import (
    a_number,
    config_error,
    named_alike,
    plain_number,
    read_yaml,
    refuse_internal_keys,
    text_number,
    yaml_number,
)

__all__ = ["ReleaseConfig", "BootstrapConfig", "RegressionConfig", "load_release", "parse_release", "revalidated",
           "check_reductions", "flat_settings", "setting_change", "relaxed_settings", "criterion_hint"]

#: What a confidence may be, said after each refusal of one (NaN included).
CONFIDENCE_ALLOWED = f"allowed: {MIN_CONFIDENCE:g} ≤ confidence < 1"


class BootstrapConfig(BaseModel):
    """Cluster bootstrap settings: ``resamples`` (default 10,000) and ``seed`` (default 0)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # bounded: the draws are held in memory; strict, as every whole number of the files: 10000.0 is refused
    resamples: Annotated[int, a_number("a whole number of resamples")] = Field(default=10_000, ge=100, le=1_000_000,
                                                                                strict=True)
    seed: Annotated[int, a_number("a whole number")] = Field(default=0, ge=0, strict=True)  # numpy seeds are ≥ 0


class RegressionConfig(BaseModel):
    """The regression rule of ``op.compare``: ``margin`` (default 0.02) and ``criteria`` (default: every
    criterion both runs judge). A criterion shows ``NO_REGRESSION`` when the lower end of the paired difference
    (candidate − base) is at or above −margin, ``REGRESSION`` when its upper end is below −margin."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    margin: Annotated[float, a_number("a number between 0 and 1")] = Field(default=0.02, ge=0, lt=1)
    criteria: list[str] | None = Field(default=None, min_length=1)




class ReleaseConfig(BaseModel):
    """release.yaml: the gate's thresholds and statistics.

    Attributes
    ----------
    confidence : float
        Two-sided confidence level of every interval (default 0.95), at least 0.5 (0.05 is alpha, refused).
    allow_approximate_methods : bool
        Must be true for a clustered run to get a PASS or FAIL (default false).
    min_clusters : int
        Source cases (clusters) needed for approximate methods (default 20).
    method : {"cluster_t", "cluster_bootstrap"}
        Interval for clustered runs (default ``cluster_t``).
    unclustered_method : {"clopper_pearson", "wilson"}
        Interval for unclustered runs (default ``clopper_pearson``).
    bootstrap : BootstrapConfig
        ``resamples`` and ``seed`` of the cluster bootstrap.
    criteria : dict of str to float
        Criterion name → minimum rate; every criterion named here blocks. In release.yaml a criterion
        may also be written ``name: {threshold: 0.8, reduce: pass^3}``: its threshold goes here and its
        reduction to ``reductions``.
    regression : RegressionConfig
        ``margin`` and ``criteria`` of the regression rule of ``op.compare``.
    reductions : dict of str to str
        Criterion name → how its epochs are reduced: ``mean`` (pass@1, the default for a criterion not
        named), ``pass^k`` or ``pass@k`` (see :func:`oloproof_nb.reduce_epochs`). Filled from ``criteria``;
        not a key of release.yaml's own (an error message does not offer it).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    # MIN_CONFIDENCE ≤ confidence < 1 (one message for every value outside)
    confidence: Annotated[float, a_number("a confidence level, e.g. 0.95", CONFIDENCE_ALLOWED)] = 0.95
    allow_approximate_methods: bool = Field(default=False, strict=True)  # "yes", 1: a mistake, not a yes
    # strict, as epochs: 20.0 is refused (it was taken as 20 while epochs: 2.0 was refused)
    min_clusters: Annotated[int, a_number("a whole number of clusters")] = Field(default=20, ge=2, strict=True)
    method: Literal["cluster_t", "cluster_bootstrap"] = "cluster_t"
    unclustered_method: Literal["clopper_pearson", "wilson"] = "clopper_pearson"
    bootstrap: BootstrapConfig = Field(default_factory=BootstrapConfig)
    criteria: dict[str, float] = Field(default_factory=dict)
    regression: RegressionConfig = Field(default_factory=RegressionConfig)
    reductions: dict[str, str] = Field(default_factory=dict, json_schema_extra={"internal": True})

    @model_validator(mode="before")
    @classmethod
    def _rules(cls, data: Any) -> Any:
        """``name: {threshold, reduce}`` entries of ``criteria`` split into a threshold and a reduction."""
        if not isinstance(data, dict) or not isinstance(data.get("criteria"), dict):
            return data
        if not any(isinstance(v, dict) for v in data["criteria"].values()):
            return data
        criteria: dict[str, Any] = {}
        reductions: dict[str, Any] = dict(data.get("reductions") or {})
        for name, rule in data["criteria"].items():
            if not isinstance(rule, dict):
                criteria[name] = rule
                continue
            unknown = sorted(set(rule) - {"threshold", "reduce"})
            if unknown:
                raise ValueError(f"{format_loc(('criteria', name, unknown[0]))}: unknown key; allowed: threshold, "
                                 "reduce")
            if "threshold" not in rule:
                raise ValueError(f"{format_loc(('criteria', name, 'threshold'))}: is required (a number between 0 "
                                 "and 1)")
            criteria[name] = rule["threshold"]
            if "reduce" in rule:  # checked here, so the message names the key the user wrote
                try:
                    reductions[name] = parse_reduce(rule["reduce"]).text
                except ValueError:
                    # in the file's words: ``reduce:`` left empty is null, ``reduce: yes`` true (not None, True)
                    raise ValueError(f"{format_loc(('criteria', name, 'reduce'))}: {quote_value(rule['reduce'])} is "
                                     f"not a reduction; allowed: {REDUCE_HELP}") from None
        return {**data, "criteria": criteria, "reductions": reductions}

    @field_validator("method", "unclustered_method", mode="before")
    @classmethod
    def _method_of_the_other_kind(cls, value: Any, info: ValidationInfo) -> Any:
        """A method written under the other key names the key it belongs to (``method: wilson``)."""
        methods = {"method": ("cluster_t", "cluster_bootstrap"), "unclustered_method": ("clopper_pearson", "wilson")}
        here = str(info.field_name)
        there = "unclustered_method" if here == "method" else "method"
        if value in methods[there]:
            kind = "unclustered" if there == "unclustered_method" else "clustered"
            raise ValueError(f"{value} is a method for {kind} runs: write it as {there}: {value}; "
                             f"allowed here: {', '.join(methods[here])}")
        return value

    @field_validator("confidence")
    @classmethod
    def _a_confidence_not_an_alpha(cls, value: float) -> float:
        allowed = CONFIDENCE_ALLOWED
        # ``:g`` keeps six digits (0.4999999 was refused as "0.5 is below 0.5") and writes exponents YAML 1.1 reads
        # as text (1e-07): every digit, as release.yaml holds the number; NaN and infinity have no digits, and a
        # number of more than 24 of them (1e-300, given in Python) keeps its exponent: the message is one line
        digits = yaml_number(value) if math.isfinite(value) else ""
        shown = digits if 0 < len(digits) <= 24 else f"{value:g}"
        if value < MIN_CONFIDENCE:  # 0.05 written for 0.95 made a 5% interval, and a BLOCK a PASS
            raise ValueError(f"{shown} is below {MIN_CONFIDENCE:g}: it is the confidence level of the intervals "
                             f"(e.g. 0.95), not alpha (0.05); {allowed}")
        if not value < 1:  # also NaN
            raise ValueError(f"{shown} is no confidence level an interval can have; {allowed}")
        return value

    @field_validator("reductions")
    @classmethod
    def _reductions(cls, value: dict[str, str]) -> dict[str, str]:
        out = {}
        for name, text in value.items():
            try:
                out[name] = parse_reduce(text).text
            except ValueError:
                raise ValueError(f"{format_loc(('criteria', name, 'reduce'))}: {quote(text)} is not a reduction; "
                                 f"allowed: {REDUCE_HELP}") from None
        return out

    def reduce_of(self, criterion: str) -> str:
        """How ``criterion``'s epochs are reduced (``mean`` unless release.yaml says otherwise)."""
        return self.reductions.get(criterion, "mean")

    @field_validator("criteria", mode="before")
    @classmethod
    def _numbers_only(cls, value: Any) -> Any:
        if isinstance(value, dict):  # a NumPy float is the decimal it shows, as confidence's (a_number)
            value = {name: plain_number(threshold) for name, threshold in value.items()}
            for name, threshold in value.items():
                if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
                    raise ValueError(f"threshold of {quote(name)} must be a number between 0 and 1, "
                                     f"got {quote_value(threshold)}{text_number(threshold)}")
        return value

    @field_validator("criteria")
    @classmethod
    def _thresholds(cls, value: dict[str, float]) -> dict[str, float]:
        for name, threshold in value.items():
            if not 0.0 <= threshold <= 1.0:
                raise ValueError(f"threshold of {quote(name)} must be between 0 and 1, got {threshold!r}")
        # + 0.0 turns -0.0 (within the bounds) into 0.0: every table and export showed the threshold as -0.0
        return {name: threshold + 0.0 for name, threshold in value.items()}


def criterion_hint(name: str, known: Iterable[str]) -> str:
    """What a criterion ``name`` of release.yaml that is none of ``known`` was meant to be, in words for its error
    (`` (did you mean answer_matches?)``), or ``""``.

    The same letters in another Unicode form (``café`` composed in release.yaml, decomposed in oloproof.yaml) are
    named with their code points: "no such criterion in the suite; its criteria: café" named no difference.

    Examples
    --------
    >>> import unicodedata
    >>> criterion_hint("Answer_matches", ["answer_matches"]), criterion_hint("x", ["answer_matches"])
    (' (did you mean answer_matches?)', '')
    >>> "another Unicode form" in criterion_hint(unicodedata.normalize("NFD", "café"), ["café"])
    True
    """
    known = list(known)
    twins = [k for k in known if unicodedata.normalize("NFC", k) == unicodedata.normalize("NFC", name)]
    if twins:
        return (f" (the criterion {ascii(twins[0])} is the same letters as {ascii(name)} in another Unicode form; "
                "criteria are compared as written: write the name as oloproof.yaml does)")
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (did you mean {near[0]}?)" if near else ""


def parse_release(raw: dict[str, Any], file: str | Path = "release.yaml") -> ReleaseConfig:
    """Validate a release mapping; errors name the file and the key."""
    try:
        return ReleaseConfig.model_validate(raw)
    except ValidationError as exc:
        raise config_error(file, exc, ReleaseConfig) from None


def revalidated(cfg: ReleaseConfig, file: str | Path = "release") -> ReleaseConfig:
    """A :class:`ReleaseConfig` given in code, validated as release.yaml is; errors name ``file`` and the key.

    pydantic runs no validator in ``model_copy(update=...)`` or ``model_construct``, so a notebook's
    ``op.gate(run, release=g.release.model_copy(update={"confidence": 0.05}))`` gated 34 of 40 at a 5% interval
    ([0.831, 0.863]) and turned a BLOCK at 0.8 into a PASS, where ``confidence=0.05`` and the same dict are refused;
    a threshold of -1 passed anything, and a threshold given as text raised a TypeError in the gate.
    """
    return parse_release(cfg.model_dump(warnings=False), file)


def load_release(path: str | Path) -> ReleaseConfig:
    """Read and validate a release.yaml file.

    The file writes a criterion's reduction under ``criteria`` (``name: {threshold: 0.9, reduce: pass^3}``) and
    may not give the model's ``reductions`` itself: obeyed while no message offered it, a hand-written
    ``reductions: {answer_matches: pass@3}`` made a gate of pass@3 whose errors named a key nobody wrote. A
    mapping given in Python (``op.gate(run, release={**g.release.model_dump(), …})``, a run's manifest) holds
    what the model dumps, ``reductions`` included.
    """
    path = Path(path)
    alike = None if os.path.lexists(path) or "\0" in str(path) else named_alike(path)
    if alike is not None:  # a mistyped --release: "file not found" alone, beside the file the user meant
        raise ConfigError(path, None, f"file not found; the folder holds {quote(alike)}: give that file")
    raw = read_yaml(path)
    refuse_internal_keys(raw, ReleaseConfig, path)
    return parse_release(raw, path)


def flat_settings(cfg: ReleaseConfig | None, nested: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The settings of ``cfg`` (the defaults for None) one value a key, to tell two release.yaml files apart:
    each mapping among ``nested`` (every mapping when None) as one key per entry (``regression.margin``,
    ``criteria.answer_matches``), in the model's order.

    Examples
    --------
    >>> flat = flat_settings(ReleaseConfig(criteria={"a": 0.8}))
    >>> flat["criteria.a"], flat["regression.margin"], "criteria" in flat_settings(None, nested=("regression",))
    (0.8, 0.02, True)
    """
    out: dict[str, Any] = {}
    for key, value in (cfg if cfg is not None else ReleaseConfig()).model_dump().items():
        if isinstance(value, dict) and (nested is None or key in nested):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def setting_change(key: str, was: Any, now: Any) -> str:
    """One setting as two release files give it: ``criteria.answer_matches 0.9 → 0.5`` (``null``: not given).

    Examples
    --------
    >>> setting_change("confidence", 0.95, 0.5), setting_change("criteria.a", 0.8, None)
    ('confidence 0.95 → 0.5', 'criteria.a 0.8 → null')
    """
    return f"{key} {json.dumps(was)} → {json.dumps(now)}"


def _strictness(reduce: str) -> int:
    """How hard a reduction of a case's epochs is to pass: pass^k ≤ mean ≤ pass@k on the same rows (pass^1 and
    pass@1 are the mean), so pass^k counts k − 1, the mean 0, pass@k 1 − k."""
    r = parse_reduce(reduce)
    return 0 if r.kind == "mean" else (r.k - 1 if r.kind == "pass^" else 1 - r.k)


def relaxed_settings(own: ReleaseConfig, given: ReleaseConfig, heads: Iterable[str]) -> list[str]:
    """The settings among ``heads`` (top-level keys of release.yaml) in which ``given`` is weaker than ``own``,
    one :func:`setting_change` each, in the order of ``own``'s settings (:func:`flat_settings`).

    Weaker: a threshold lower, or a criterion ``own`` gates left out (``criteria.X 0.9 → not gated``: it is
    only reported); a reduction easier to pass (``pass^3 → mean``, ``mean → pass@2``) of a criterion both gate;
    without ``criteria`` among ``heads`` (a comparison), any other reduction of any criterion (settings that leave
    out release.yaml's ``pass^3`` reduce by the mean; and a comparison judges a difference, which a harder
    reduction hides too: ``mean → pass^3`` counts a case that already failed an epoch as 0 in both runs, whatever
    the candidate lost of its other epochs); a lower ``confidence`` (a narrower interval) or
    ``min_clusters``; ``allow_approximate_methods`` turned on;
    ``wilson`` for ``clopper_pearson`` (not conservative); a larger ``regression.margin``; criteria
    ``regression.criteria`` leaves out (``regression.criteria leaves out a, b``; a None there stands for every
    criterion, so give both models the same list). Any other head listed (``method``, ``bootstrap``) counts
    when it differs at all. A setting tightened is not listed: it cannot turn a BLOCK into a PASS.

    Examples
    --------
    >>> own = ReleaseConfig(criteria={"a": 0.9, "b": 0.8})
    >>> relaxed_settings(own, ReleaseConfig(criteria={"a": 0.5}, confidence=0.99), ("criteria", "confidence"))
    ['criteria.a 0.9 → 0.5', 'criteria.b 0.8 → not gated']
    """
    wanted = set(heads)
    was, now = flat_settings(own), flat_settings(given)
    out = []
    for key in [*was, *(k for k in now if k not in was)]:
        head, _, name = key.partition(".")
        if head not in wanted or was.get(key) == now.get(key):
            continue
        before, after = was.get(key), now.get(key)
        if head == "criteria":
            if before is not None and (after is None or after < before):
                out.append(f"{key} {json.dumps(before)} → not gated" if after is None
                           else setting_change(key, before, after))
        elif head == "reductions":
            before, after = before or "mean", after or "mean"
            # with ``criteria`` among the heads (the gate) a criterion gated in one only is named there; without it
            # (a comparison, which a threshold does not decide) a reduction decides by itself: release.yaml's
            # ``pass^3`` left out of the settings given is the mean
            both = "criteria" not in wanted or (name in given.criteria and name in own.criteria)
            # a comparison judges a difference, not a threshold: any other reduction measures something else, and a
            # harder one hides losses too (mean → pass^3: a case that already failed an epoch is 0 in both runs, so a
            # candidate losing its other epochs read NO_REGRESSION where the mean said REGRESSION)
            other = "criteria" not in wanted and _strictness(after) != _strictness(before)
            if both and (_strictness(after) < _strictness(before) or other):
                out.append(setting_change(key, before, after))
        elif key == "regression.criteria":
            left = [c for c in (before or []) if c not in (after or [])] if after is not None else []
            if left:
                out.append(f"regression.criteria leaves out {', '.join(left)}")
        elif key in ("confidence", "min_clusters"):
            if now[key] < was[key]:
                out.append(setting_change(key, before, after))
        elif key == "regression.margin":
            if now[key] > was[key]:
                out.append(setting_change(key, before, after))
        elif key == "allow_approximate_methods":
            if after:
                out.append(setting_change(key, before, after))
        elif key == "unclustered_method":
            if after == "wilson":
                out.append(setting_change(key, before, after))
        else:
            out.append(setting_change(key, before, after))
    return out


def check_reductions(cfg: ReleaseConfig, epochs: int, file: str | Path, run_id: str | None = None) -> None:
    """A :class:`ConfigError` naming ``file`` and ``criteria.<name>.reduce`` when a reduction's k exceeds ``epochs``."""
    for name, text in cfg.reductions.items():
        k = parse_reduce(text).k
        if k > epochs:
            what = f"run {run_id} has" if run_id else "the run has"
            raise ConfigError(file, format_loc(("criteria", name, "reduce")),
                              f"{text} needs at least {k} epochs; {what} epochs={epochs} "
                              f"(run each case {k} or more times, `--epochs {k}` to `oloproof run` or, for Inspect "
                              f"AI logs, to `inspect eval`; or reduce with k ≤ {epochs})")
