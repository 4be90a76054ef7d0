"""release.yaml edges a mutant showed untested: the bounds of ``min_clusters`` and ``bootstrap.resamples``, and a
``criteria`` rule without its threshold (one line naming the key, never a traceback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._config.release import criterion_hint, load_release, parse_release
from oloproof_nb.errors import ConfigError


def test_min_clusters_needs_two_clusters() -> None:
    """One cluster leaves a clustered t interval with no degrees of freedom (G − 1 = 0): ``min_clusters: 1`` is
    refused, naming the key and the bound; 2 is the least accepted."""
    with pytest.raises(ConfigError, match=r"release\.yaml: min_clusters: .*greater than or equal to 2 \(got 1\)"):
        parse_release({"min_clusters": 1})
    assert parse_release({"min_clusters": 2}).min_clusters == 2


def test_bootstrap_resamples_are_at_least_100() -> None:
    """Fewer than 100 resamples leave a 2.5% tail of under three draws: 99 is refused, naming
    ``bootstrap.resamples``; 100 is accepted."""
    with pytest.raises(ConfigError, match=r"bootstrap\.resamples: .*greater than or equal to 100 \(got 99\)"):
        parse_release({"bootstrap": {"resamples": 99}})
    assert parse_release({"bootstrap": {"resamples": 100}}).bootstrap.resamples == 100


def test_a_criterion_rule_without_a_threshold_names_the_key() -> None:
    """``name: {reduce: pass^2}`` has no threshold: a ConfigError naming ``criteria.a.threshold`` (read without
    the check, the missing key was a KeyError, a traceback)."""
    with pytest.raises(ConfigError, match=r"^release\.yaml: criteria\.a\.threshold: is required"):
        parse_release({"criteria": {"a": {"reduce": "pass^2"}}})


def test_a_regression_margin_of_one_is_refused() -> None:
    """A paired difference of two rates lies in [−1, 1], so with margin 1 its lower end is always at or above
    −margin: no compare could ever show REGRESSION. ``margin`` is below 1; 0.99 is accepted."""
    with pytest.raises(ConfigError, match=r"regression\.margin: .*less than 1 \(got 1\)"):
        parse_release({"regression": {"margin": 1}})
    assert parse_release({"regression": {"margin": 0.99}}).regression.margin == 0.99


def test_an_empty_list_of_regression_criteria_is_refused() -> None:
    """``regression.criteria: []`` would check no criterion, a compare that always passes; leave the key out for
    every criterion both runs judge."""
    with pytest.raises(ConfigError, match=r"regression\.criteria: "):
        parse_release({"regression": {"criteria": []}})
    assert parse_release({"regression": {"criteria": ["a"]}}).regression.criteria == ["a"]


def test_a_negative_bootstrap_seed_is_refused_by_name() -> None:
    """NumPy seeds are non-negative (``default_rng(-1)`` raises): ``seed: -1`` is refused in release.yaml's
    words, not later by NumPy."""
    with pytest.raises(ConfigError, match=r"bootstrap\.seed: .*greater than or equal to 0 \(got -1\)"):
        parse_release({"bootstrap": {"seed": -1}})


def test_a_rule_added_to_a_release_keeps_the_reductions_it_had() -> None:
    """The gate merges its ``criteria=`` into the release's own settings (``model_dump``, then validated again,
    as ``gate._merged`` does): a ``{threshold, reduce}`` rule added there keeps the release's ``pass^3`` of
    ``a`` beside its own ``pass^2`` of ``b``; dropping it would judge ``a`` by its mean, another verdict."""
    data = parse_release({"criteria": {"a": {"threshold": 0.9, "reduce": "pass^3"}}}).model_dump()
    data["criteria"] = {**data["criteria"], "b": {"threshold": 0.8, "reduce": "pass^2"}}
    cfg = parse_release(data)
    assert cfg.criteria == {"a": 0.9, "b": 0.8}
    assert cfg.reductions == {"a": "pass^3", "b": "pass^2"}


def test_an_unknown_key_lists_the_keys_release_yaml_allows_there() -> None:
    """The message names the key and lists what may be written at that place, in the model's order, without the
    internal ``reductions`` (a file writes ``name: {threshold, reduce}`` instead); nested keys too."""
    with pytest.raises(ConfigError) as err:
        parse_release({"colour": 1})
    assert str(err.value) == ("release.yaml: colour: unknown key; allowed: confidence, allow_approximate_methods, "
                              "min_clusters, method, unclustered_method, bootstrap, criteria, regression")
    with pytest.raises(ConfigError) as err:
        parse_release({"bootstrap": {"resample": 1}})
    assert str(err.value) == "release.yaml: bootstrap.resample: unknown key; allowed: resamples, seed"


def test_reductions_written_by_hand_are_an_unknown_key_of_release_yaml(tmp_path: Path) -> None:
    """``reductions`` is where the model keeps what ``criteria.<name>: {threshold, reduce}`` says. Written at the
    top of release.yaml it was obeyed (a gate of pass@3) while no message offered it, and its errors named
    ``criteria.answer_matches.reduce``, a key nobody wrote: the file refuses it as any unknown key, and is left as
    it was. A mapping given in Python holds what the model dumps (notebook 02 gates with
    ``release={**g.release.model_dump(), …}``), ``reductions`` included, and reads back the same."""
    file = tmp_path / "release.yaml"
    file.write_text("criteria: {answer_matches: 0.9}\nreductions: {answer_matches: pass@3}\n", encoding="utf-8")
    before = file.read_bytes()
    with pytest.raises(ConfigError) as err:
        load_release(file)
    assert str(err.value) == (f"{file}: reductions: unknown key; allowed: confidence, allow_approximate_methods, "
                              "min_clusters, method, unclustered_method, bootstrap, criteria, regression")
    assert (err.value.file, err.value.key) == (str(file), "reductions")
    assert file.read_bytes() == before
    file.write_text("criteria: {answer_matches: {threshold: 0.9, reduce: pass@3}}\n", encoding="utf-8")
    written = load_release(file)
    assert written.reductions == {"answer_matches": "pass@3"}
    assert parse_release(written.model_dump()) == written


@pytest.mark.parametrize(("raw", "message"), [
    ({"bootstrap": 5}, "bootstrap: Input should be a mapping (got 5); allowed keys: resamples, seed"),
    ({"bootstrap": [10000, 0]}, "bootstrap: Input should be a mapping; allowed keys: resamples, seed"),
    ({"regression": "0.02"}, "regression: Input should be a mapping (got '0.02'); allowed keys: margin, criteria"),
])
def test_a_section_given_a_value_that_is_no_mapping_lists_its_keys(raw: dict[str, object], message: str) -> None:
    """A new user's first hour: ``bootstrap: 5`` was refused in pydantic's words, "Input should be a
    valid dictionary or instance of BootstrapConfig", a class the user never wrote and no word of what to write."""
    with pytest.raises(ConfigError) as caught:
        parse_release(raw)
    assert str(caught.value) == f"release.yaml: {message}"


@pytest.mark.parametrize(("confidence", "ok"), [(0.5, True), (0.4999, False), (0.999, True), (1.0, False)])
def test_confidence_bounds_are_one_half_inclusive_and_one_exclusive(confidence: float, ok: bool) -> None:
    """The documented range ``0.5 ≤ confidence < 1``, at release.yaml's own parser: its ends (NaN, which no
    comparison puts inside it, is refused as no number: tests/_config/test_files_nan_settings.py)."""
    if ok:
        assert parse_release({"confidence": confidence}).confidence == confidence
    else:
        with pytest.raises(ConfigError, match=r"^release\.yaml: confidence: .*; allowed: 0\.5 ≤ confidence < 1$"):
            parse_release({"confidence": confidence})


@pytest.mark.parametrize(("confidence", "shown"), [(0.4999999, "0.4999999"), (0.05, "0.05"), (0, "0"),
                                                   (0.49999995, "0.49999995")])
def test_a_confidence_refused_below_one_half_is_named_with_every_digit(confidence: float, shown: str) -> None:
    """``confidence: 0.4999999`` was refused as "0.5 is below 0.5" (six significant digits), a message
    that contradicts itself and names no value the file holds; the value is shown as written."""
    with pytest.raises(ConfigError) as caught:
        parse_release({"confidence": confidence})
    assert str(caught.value).startswith(f"release.yaml: confidence: {shown} is below 0.5: it is the confidence level")


def test_a_reduction_needs_at_least_k_epochs_and_k_itself_is_enough() -> None:
    """``pass^3`` over 3 epochs is the smallest run it fits; over 2 it is refused naming ``criteria.a.reduce``."""
    from oloproof_nb._config.release import check_reductions

    cfg = parse_release({"criteria": {"a": {"threshold": 0.8, "reduce": "pass^3"}}})
    check_reductions(cfg, 3, "release.yaml")  # k == epochs: allowed
    with pytest.raises(ConfigError) as info:
        check_reductions(cfg, 2, "release.yaml")
    assert info.value.key == "criteria.a.reduce" and "pass^3 needs at least 3 epochs" in info.value.message


def test_flat_settings_flattens_every_mapping_unless_told_which() -> None:
    """One key per entry of each mapping (the defaults written out by hand from the model), and only the mappings
    named in ``nested`` when it is given."""
    from oloproof_nb._config.release import ReleaseConfig, flat_settings

    flat = flat_settings(ReleaseConfig(criteria={"a": 0.8}))
    assert flat["criteria.a"] == 0.8 and "criteria" not in flat
    assert (flat["regression.margin"], flat["regression.criteria"]) == (0.02, None)
    assert (flat["bootstrap.resamples"], flat["bootstrap.seed"], flat["confidence"]) == (10_000, 0, 0.95)
    only = flat_settings(None, nested=("regression",))
    assert only["criteria"] == {} and only["regression.margin"] == 0.02 and "bootstrap.seed" not in only


@pytest.mark.parametrize(("raw", "message"), [
    ({"method": "wilson"}, r"^release\.yaml: method: wilson is a method for unclustered runs: write it as "
                           r"unclustered_method: wilson; allowed here: cluster_t, cluster_bootstrap$"),
    ({"method": "clopper_pearson"}, r"^release\.yaml: method: clopper_pearson is a method for unclustered runs"),
    ({"unclustered_method": "cluster_t"}, r"^release\.yaml: unclustered_method: cluster_t is a method for "
                                          r"clustered runs: write it as method: cluster_t; allowed here: "
                                          r"clopper_pearson, wilson$"),
])
def test_a_method_under_the_other_key_names_the_key_it_belongs_to(raw: dict[str, str], message: str) -> None:
    """``method: wilson`` said only which two values ``method`` takes; the user wanted ``unclustered_method``.
    Each key still takes its own methods, and an unknown method keeps pydantic's list."""
    with pytest.raises(ConfigError, match=message):
        parse_release(raw)
    assert parse_release({"method": "cluster_bootstrap", "unclustered_method": "wilson"}).unclustered_method == "wilson"
    with pytest.raises(ConfigError, match=r"method: Input should be 'cluster_t' or 'cluster_bootstrap' \(got 'bca'\)"):
        parse_release({"method": "bca"})


def test_relaxed_settings_lists_only_what_is_weaker_in_the_order_of_the_settings() -> None:
    """Each setting that can turn a BLOCK into a PASS (or a regression into none), loosened, is
    named; one tightened is not. Expected lines written by hand."""
    from oloproof_nb._config.release import ReleaseConfig, relaxed_settings

    own = ReleaseConfig.model_validate({
        "confidence": 0.95, "min_clusters": 20, "criteria": {
            "a": {"threshold": 0.9, "reduce": "pass^3"}, "b": {"threshold": 0.8, "reduce": "mean"}, "c": 0.7,
            "d": {"threshold": 0.6, "reduce": "pass@2"}},
        "regression": {"margin": 0.02, "criteria": ["a", "b", "c"]}})
    given = ReleaseConfig.model_validate({
        "confidence": 0.99, "allow_approximate_methods": True, "min_clusters": 2, "unclustered_method": "wilson",
        "criteria": {"a": {"threshold": 0.95, "reduce": "mean"}, "b": {"threshold": 0.5, "reduce": "pass@2"},
                     "d": {"threshold": 0.6, "reduce": "pass^2"}},
        "regression": {"margin": 0.5, "criteria": ["a"]}})
    every = ("confidence", "allow_approximate_methods", "min_clusters", "unclustered_method", "criteria",
             "regression", "reductions")
    assert relaxed_settings(own, given, every) == [
        'allow_approximate_methods false → true', 'min_clusters 20 → 2',
        'unclustered_method "clopper_pearson" → "wilson"', 'criteria.b 0.8 → 0.5', 'criteria.c 0.7 → not gated',
        'regression.margin 0.02 → 0.5', 'regression.criteria leaves out b, c',
        'reductions.a "pass^3" → "mean"', 'reductions.b "mean" → "pass@2"']
    assert relaxed_settings(own, given, ("confidence", "criteria")) == ['criteria.b 0.8 → 0.5',
                                                                        'criteria.c 0.7 → not gated']
    assert relaxed_settings(given, own, every) == [  # the other way round: what own loosens of given
        'confidence 0.99 → 0.95', 'criteria.a 0.95 → 0.9', 'reductions.d "pass^2" → "pass@2"']
    assert relaxed_settings(own, own, every) == []


def test_relaxed_settings_at_the_edges_of_each_rule() -> None:
    """Expected lines by hand: a reduction the run's settings leave at its default (the mean) and
    the settings given make pass@2 is easier; a criterion left out is named once, as not gated, whatever its
    reduction was; pass^1 and pass@1 are the mean (no easier, no harder); regression.criteria given as None (every
    criterion) leaves none out; a criterion whose name holds a dot is a criterion still."""
    from oloproof_nb._config.release import ReleaseConfig, relaxed_settings

    def weaker(own: dict[str, Any], given: dict[str, Any]) -> list[str]:
        every = ("criteria", "reductions", "regression", "confidence")
        return relaxed_settings(ReleaseConfig.model_validate(own), ReleaseConfig.model_validate(given), every)

    assert weaker({"criteria": {"a": 0.9}}, {"criteria": {"a": {"threshold": 0.9, "reduce": "pass@2"}}}) == [
        'reductions.a "mean" → "pass@2"']
    assert weaker({"criteria": {"a": {"threshold": 0.9, "reduce": "pass^3"}, "b": 0.8}}, {"criteria": {"b": 0.8}}) == [
        "criteria.a 0.9 → not gated"]
    for one in ("pass^1", "pass@1"):
        assert weaker({"criteria": {"a": {"threshold": 0.9, "reduce": one}}}, {"criteria": {"a": 0.9}}) == []
        assert weaker({"criteria": {"a": 0.9}}, {"criteria": {"a": {"threshold": 0.9, "reduce": one}}}) == []
    assert weaker({"criteria": {"a": 0.9}, "regression": {"criteria": ["a"]}}, {"criteria": {"a": 0.9}}) == []
    assert weaker({"criteria": {"x.y": 0.9}}, {"criteria": {"x.y": 0.5}}) == ["criteria.x.y 0.9 → 0.5"]


def test_a_reduction_the_settings_given_leave_out_is_weaker_in_a_comparison() -> None:
    """Compare judges no threshold, so its heads leave ``criteria`` out, and a release file given to
    ``oloproof compare --release`` with only ``regression:`` in it reduces a criterion the run's release.yaml gates
    with ``pass^3`` by the mean: the candidate whose pass^3 fell from 0.5 to 0 read NO_REGRESSION, exit 0, with no
    note. Named now, as the gate names that criterion ``not gated``; in a comparison a reduction made harder is named
    too, in a gate it is not."""
    from oloproof_nb._config.release import ReleaseConfig, relaxed_settings

    own = ReleaseConfig.model_validate({"criteria": {"a": {"threshold": 0.4, "reduce": "pass^3"}, "b": 0.5},
                                        "regression": {"margin": 0.15}})
    given = ReleaseConfig.model_validate({"regression": {"margin": 0.15}})
    compared = ("regression", "confidence", "min_clusters", "allow_approximate_methods", "reductions")
    assert relaxed_settings(own, given, compared) == ['reductions.a "pass^3" → "mean"']
    assert relaxed_settings(own, given, (*compared, "criteria")) == [  # the gate: named once, as not gated
        "criteria.a 0.4 → not gated", "criteria.b 0.5 → not gated"]
    easier = ReleaseConfig.model_validate({"criteria": {"b": {"threshold": 0.5, "reduce": "pass@2"}}})
    assert relaxed_settings(ReleaseConfig.model_validate({"criteria": {"b": 0.5}}), easier, compared) == [
        'reductions.b "mean" → "pass@2"']
    # pass@2 → mean is harder to pass, but a comparison judges a difference, and any other reduction measures
    # something else (mean → pass^3 hid a candidate's lost epochs): named too; the same measure is not
    assert relaxed_settings(easier, ReleaseConfig(), compared) == ['reductions.b "pass@2" → "mean"']
    assert relaxed_settings(ReleaseConfig(), easier.model_copy(update={"reductions": {"b": "pass^1"}}), compared) == []


def test_the_reduction_of_a_criterion_only_the_settings_given_gate_is_not_weaker_in_a_gate() -> None:
    """A gate's settings that add a criterion the run's own do not gate (with pass@2, easier than the mean) only add
    a way to BLOCK: nothing is weaker. In a comparison (no ``criteria`` among the heads) the reduction decides by
    itself, and mean → pass@2 is named."""
    from oloproof_nb._config.release import ReleaseConfig, relaxed_settings

    own = ReleaseConfig.model_validate({"criteria": {"b": 0.5}})
    given = ReleaseConfig.model_validate({"criteria": {"a": {"threshold": 0.4, "reduce": "pass@2"}, "b": 0.5}})
    assert relaxed_settings(own, given, ("criteria", "reductions")) == []
    assert relaxed_settings(own, given, ("reductions",)) == ['reductions.a "mean" → "pass@2"']


@pytest.mark.parametrize(("raw", "key"), [
    ({"regression": {"margin": False}}, "regression.margin"),
    ({"bootstrap": {"seed": True}}, "bootstrap.seed"),
])
def test_a_yaml_boolean_is_no_number_of_release_yaml(raw: dict[str, object], key: str) -> None:
    """``margin: no`` (YAML 1.1 reads no, off as false) was a margin of 0, ``seed: yes`` seed 1;
    each number of release.yaml now refuses a boolean by name."""
    with pytest.raises(ConfigError, match=rf"release.yaml: {key}: must be .*, not (true|false) \(YAML reads yes"):
        parse_release(raw)


@pytest.mark.parametrize("text", ["9e-1", "0.9e0", "1e0"])
def test_a_threshold_yaml_1_1_reads_as_text_says_why(tmp_path: Path, text: str) -> None:
    """PyYAML reads ``9e-1`` (no dot) and ``0.9e0`` (no sign) as strings: the threshold's message said "must be a
    number ..., got '9e-1'" to a user who wrote a number; it now says why and what to write."""
    path = tmp_path / "release.yaml"
    path.write_text(f"criteria: {{a: {text}}}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"YAML 1.1 reads a number with an exponent as text unless it has a dot "
                                          rf"and a signed exponent; write {float(text):g}\)"):
        load_release(path)


@pytest.mark.parametrize(("raw", "key"), [
    ({"confidence": True}, "confidence"),
    ({"min_clusters": False}, "min_clusters"),
    ({"bootstrap": {"resamples": True}}, "bootstrap.resamples"),
])
def test_a_yaml_boolean_is_no_confidence_cluster_count_or_resample_count(raw: dict[str, object], key: str) -> None:
    """``confidence: yes`` was read as 1 (then refused as "must be < 1"), ``min_clusters: no`` as
    0 clusters and ``resamples: on`` as 1 resample, each refused for its size instead of for being a flag."""
    with pytest.raises(ConfigError, match=rf"release.yaml: {key}: must be .*, not (true|false) \(YAML reads yes"):
        parse_release(raw)


@pytest.mark.parametrize(("text", "write"), [("9E-1", "0.9"), ("1e-5", "0.00001"), ("9999995e-7", "0.9999995")])
def test_a_threshold_read_as_text_is_told_a_number_yaml_reads_as_the_same(tmp_path: Path, text: str,
                                                                          write: str) -> None:
    """An upper-case ``E`` is text to YAML 1.1 too, and the number to write was printed with
    ``:g``: ``1e-5`` was told to write ``1e-05`` (text to YAML 1.1 again: no dot) and ``9999995e-7`` to write ``1``
    (a threshold of 100%). The reference: PyYAML reads ``text`` as a string and ``write`` as the number."""
    import yaml

    assert yaml.safe_load(f"a: {text}") == {"a": text} and yaml.safe_load(f"a: {write}") == {"a": float(text)}
    path = tmp_path / "release.yaml"
    path.write_text(f"criteria: {{a: {text}}}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value).endswith(f"got '{text}' (YAML 1.1 reads a number with an exponent as text unless it has a "
                                   f"dot and a signed exponent; write {write})")


@pytest.mark.parametrize(("value", "shown"), [("fine", "'fine'"), ("1e999", "'1e999'"), ("none", "'none'"),
                                            (["1e0"], "['1e0']")])
def test_a_threshold_of_text_that_is_no_finite_number_gets_no_advice(value: object, shown: str) -> None:
    """Text holding an ``e`` that ``float`` refuses, or reads as infinity, has no number to suggest, nor has a list
    holding such text: the message ends at the value."""
    with pytest.raises(ConfigError) as err:
        parse_release({"criteria": {"a": value}})
    assert str(err.value).endswith(f"threshold of 'a' must be a number between 0 and 1, got {shown}")


@pytest.mark.parametrize(("confidence", "shown"), [(1.0000001, "1.0000001"), (1.0, "1"),
                                                   (1e20, "100000000000000000000"), (float("inf"), "inf")])
def test_a_confidence_refused_at_or_above_one_is_named_with_every_digit(confidence: float, shown: str) -> None:
    """The other refusal names the value as written too: ``confidence: 1.0000001`` is not "1 is no confidence
    level" (six significant digits), and 1e20 not ``1e+20`` (text to YAML 1.1); infinity (``.inf``), which has
    no digits, as Python writes it (by hand). NaN is no number at all: tests/_config/test_files_nan_settings.py."""
    with pytest.raises(ConfigError) as caught:
        parse_release({"confidence": confidence})
    assert str(caught.value).startswith(f"release.yaml: confidence: {shown} is no confidence level an interval can")


@pytest.mark.parametrize(("confidence", "shown"), [(0.000012345678, "0.000012345678"), (1e-07, "0.0000001")])
def test_a_tiny_confidence_is_named_without_an_exponent(confidence: float, shown: str) -> None:
    """``1e-07`` (``:g``) or ``1.2345678e-05`` (repr) is text to YAML 1.1, which needs a dot before an exponent,
    and no spelling a release.yaml holding the number has: the value is written out in digits (by hand)."""
    with pytest.raises(ConfigError) as caught:
        parse_release({"confidence": confidence})
    assert str(caught.value).startswith(f"release.yaml: confidence: {shown} is below 0.5: it is the confidence level")


@pytest.mark.parametrize(("yaml_text", "key", "what", "text"), [
    ('confidence: "0.95"', "confidence", "a confidence level, e.g. 0.95", "0.95"),
    ("min_clusters: '20'", "min_clusters", "a whole number of clusters", "20"),
    ('regression: {margin: "0.02"}', "regression.margin", "a number between 0 and 1", "0.02"),
    ('bootstrap: {resamples: "1000"}', "bootstrap.resamples", "a whole number of resamples", "1000"),
    ('bootstrap: {seed: "3"}', "bootstrap.seed", "a whole number", "3"),
])
def test_a_quoted_number_of_release_yaml_is_refused_as_a_quoted_threshold_is(tmp_path: Path, yaml_text: str,
                                                                             key: str, what: str, text: str) -> None:
    """``confidence: "0.95"`` (and every other number but a threshold) was taken as the number while a
    quoted threshold was refused; every number of release.yaml is now strict: one line naming the file and the
    key, and what goes there."""
    path = tmp_path / "release.yaml"
    path.write_text(yaml_text + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == f"{path}: {key}: must be {what}, not the text '{text}' (write the number without quotes)"
    assert "\n" not in str(err.value)


def test_a_number_yaml_1_1_reads_as_text_says_why_wherever_it_goes(tmp_path: Path) -> None:
    """``confidence: 95e-2`` is text to YAML 1.1 (no dot): refused as a threshold written so is, with the number to
    write. The reference: PyYAML reads it as a string and 0.95 as the number."""
    import yaml

    assert yaml.safe_load("a: 95e-2") == {"a": "95e-2"}
    path = tmp_path / "release.yaml"
    path.write_text("confidence: 95e-2\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value).endswith("confidence: must be a confidence level, e.g. 0.95, not the text '95e-2' (YAML 1.1 "
                                   "reads a number with an exponent as text unless it has a dot and a signed "
                                   "exponent; write 0.95)")


def test_whole_numbers_stay_numbers_and_booleans_stay_refused(tmp_path: Path) -> None:
    """Strict about text, not about YAML's ints: ``min_clusters: 20`` and ``threshold: 1`` are taken, ``confidence:
    1`` is refused for its value (no interval has confidence 1), not for being written without a dot; a boolean is
    no number."""
    path = tmp_path / "release.yaml"
    path.write_text("min_clusters: 20\ncriteria: {a: 1, b: {threshold: 1}}\n", encoding="utf-8")
    cfg = load_release(path)
    assert (cfg.min_clusters, cfg.criteria) == (20, {"a": 1.0, "b": 1.0})
    path.write_text("confidence: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"confidence: 1 is no confidence level an interval can have; allowed: "):
        load_release(path)
    path.write_text("confidence: yes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"confidence: must be a confidence level, e\.g\. 0\.95, not true \(YAML"):
        load_release(path)


@pytest.mark.parametrize("written", ["a: -0.0", "a: {threshold: -0.0, reduce: mean}", "a: -0"])
def test_a_threshold_of_minus_zero_is_zero(tmp_path: Path, written: str) -> None:
    """``threshold: -0.0`` was kept as -0.0, and every table showed ``-0.000``; it is 0.0 (the sign
    read with ``math.copysign``, as ``-0.0 == 0.0``)."""
    import math

    path = tmp_path / "release.yaml"
    path.write_text(f"criteria: {{{written}}}\n", encoding="utf-8")
    threshold = load_release(path).criteria["a"]
    assert threshold == 0 and math.copysign(1, threshold) == 1
    assert math.copysign(1, parse_release({"criteria": {"a": -0.0}}).criteria["a"]) == 1



def test_a_number_that_reaches_release_yaml_as_bytes_is_refused_as_text(tmp_path: Path) -> None:
    """``a_number`` refuses bytes as it refuses text. ``!!binary`` gives bytes (PyYAML, the
    reference: base64 of ``0.95``), which pydantic alone reads as the number 0.95."""
    import base64

    import yaml
    from pydantic import TypeAdapter

    written = "confidence: !!binary " + base64.b64encode(b"0.95").decode()
    assert yaml.safe_load(written) == {"confidence": b"0.95"}
    assert TypeAdapter(float).validate_python(b"0.95") == 0.95  # what a_number stands in front of
    path = tmp_path / "release.yaml"
    path.write_text(written + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == (f"{path}: confidence: must be a confidence level, e.g. 0.95, not the text b'0.95' "
                              "(write the number without quotes)")


def test_a_margin_of_minus_zero_is_zero(tmp_path: Path) -> None:
    """``regression: {margin: -0.0}`` was kept as -0.0 (within ``ge=0``), and ``oloproof compare``
    headed its table ``margin -0`` (``f"{-0.0:g}"``) as a threshold of -0.0 was shown ``-0.000``: every
    number of a file goes through ``a_number``, which makes -0.0 0. The sign is read with ``math.copysign``, as
    ``-0.0 == 0.0``."""
    import math

    path = tmp_path / "release.yaml"
    path.write_text("regression: {margin: -0.0}\n", encoding="utf-8")
    margin = load_release(path).regression.margin
    assert margin == 0 and math.copysign(1, margin) == 1 and f"{margin:g}" == "0"
    assert math.copysign(1, parse_release({"regression": {"margin": -0.0}}).regression.margin) == 1


@pytest.mark.parametrize("word", ["yes", "true", "on", "no"])
def test_a_yaml_boolean_is_no_threshold(tmp_path: Path, word: str) -> None:
    """A criterion's threshold written ``yes`` (YAML 1.1 reads yes, on and true as true) was
    refused by no test; pydantic reads true as 1.0 where a float goes, a threshold no rate below 100% meets (and
    ``no`` one of 0, which every rate meets). The release file names the criterion and the value it got."""
    path = tmp_path / "release.yaml"
    path.write_text(f"criteria:\n  answer_matches: {word}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    shown = "false" if word == "no" else "true"
    assert str(err.value) == (f"{path}: criteria: threshold of 'answer_matches' must be a number between 0 and 1, "
                              f"got {shown}")


@pytest.mark.parametrize(("written", "shown"), [("", "null"), ("yes", "true"), ("[pass^2]", "['pass^2']")])
def test_a_reduce_that_is_no_text_is_named_in_the_file_s_words(tmp_path: Path, written: str, shown: str) -> None:
    """``reduce:`` left empty reads as null and ``reduce: yes`` as true: the message quoted them as Python's None and
    True, words the file does not hold; it now gives them as every other value of release.yaml is given."""
    path = tmp_path / "release.yaml"
    path.write_text(f"criteria:\n  a: {{threshold: 0.8, reduce: {written}}}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value).startswith(f"{path}: criteria.a.reduce: {shown} is not a reduction; allowed: mean, ")


def test_a_threshold_given_as_a_series_is_refused_in_one_line() -> None:
    """A threshold picked from a frame (``t.loc[t.name == "a", "min"]``) is a pandas Series, refused as no number; its
    repr runs over two lines (``0    0.8`` then ``dtype: float64``), and the message did too."""
    import pandas as pd

    with pytest.raises(ConfigError) as err:
        parse_release({"criteria": {"a": pd.Series([0.8])}})
    message = str(err.value)
    assert "\n" not in message
    assert message == ("release.yaml: criteria: threshold of 'a' must be a number between 0 and 1, "
                       "got 0    0.8 dtype: float64")


def test_a_criterion_name_is_offered_down_to_a_likeness_of_six_tenths() -> None:
    """``criterion_hint`` offers the closest criterion whose likeness (``difflib``'s ratio, 2·matched / letters of
    both) is at least 0.6, as every other "did you mean" of the package. By hand: ``answer`` and ``answer_matches``
    match 6 letters of 6 + 14, 12/20 = 0.6; ``answ`` 4 of 4 + 14, 8/18 < 0.6."""
    assert criterion_hint("answer", ["answer_matches", "state_matches"]) == " (did you mean answer_matches?)"
    assert criterion_hint("answ", ["answer_matches", "state_matches"]) == ""
