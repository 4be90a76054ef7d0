"""Edges the other tests did not pin (found by mutation testing) for oloproof.yaml validation
(oloproof_nb._config.suite_config)."""

from __future__ import annotations

import pytest

from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb.errors import ConfigError

BASE = {"name": "s", "system": "sysmod:System"}
TRANSFORM = {"field": "request", "template": "{value} please", "validity_labels": "labels.jsonl",
             "minimum_validity": 0.5}


def test_a_case_timeout_of_zero_seconds_is_refused() -> None:
    # a case may take "0 s": every case would time out before it starts
    with pytest.raises(ConfigError, match="case_timeout_s"):
        parse_suite_config({**BASE, "case_timeout_s": 0})


def test_the_first_two_transforms_with_one_name_are_refused() -> None:
    raw = {**BASE, "metamorphic": {"transforms": [{"name": "polite", **TRANSFORM}, {"name": "polite", **TRANSFORM}]}}
    with pytest.raises(ConfigError, match=r"metamorphic\.transforms\[1\]\.name.*declared twice"):
        parse_suite_config(raw)



@pytest.mark.parametrize("name", ["two words", "a~b", "a.b", "", "ü"])
def test_a_transform_name_outside_letters_digits_dash_underscore_is_refused(name: str) -> None:
    """A transform's name goes into derived ids (``<source>~<name>``) and label file names: a ``~``, a space or
    a dot in it is refused naming the key."""
    transform = {"name": name, "field": "q", "template": "{value}!", "validity_labels": "l.jsonl",
                 "minimum_validity": 0.9}
    with pytest.raises(ConfigError) as info:
        parse_suite_config({"name": "x", "system": "m:S", "metamorphic": {"transforms": [transform]}})
    assert info.value.key == "metamorphic.transforms[0].name"
    transform["name"] = "inject_2-b"
    parsed = parse_suite_config({"name": "x", "system": "m:S", "metamorphic": {"transforms": [transform]}})
    assert parsed.metamorphic.transforms[0].name == "inject_2-b"


@pytest.mark.parametrize("epochs", [True, "2", 2.0])
def test_epochs_is_a_whole_number_not_a_flag_a_text_or_a_float(epochs: object) -> None:
    with pytest.raises(ConfigError) as info:
        parse_suite_config({"name": "x", "system": "m:S", "epochs": epochs})
    assert info.value.key == "epochs"
    assert parse_suite_config({"name": "x", "system": "m:S", "epochs": 2}).epochs == 2


def test_epochs_of_oloproof_yaml_stop_at_max_epochs() -> None:
    """``epochs: 10001`` in oloproof.yaml was untested (only ``--epochs`` and ``op.run(epochs=)``
    were): without the bound a suite asked for 100,000 epochs the run could not finish. README: at most 10,000."""
    assert parse_suite_config({**BASE, "epochs": 10_000}).epochs == 10_000
    with pytest.raises(ConfigError) as info:
        parse_suite_config({**BASE, "epochs": 10_001})
    assert info.value.key == "epochs"
    assert str(info.value) == "oloproof.yaml: epochs: Input should be less than or equal to 10000 (got 10001)"


@pytest.mark.parametrize(("metamorphic", "key", "allowed"), [
    ({"transforms": [{"name": "polite", **TRANSFORM, "state_pth": "files.*"}]}, "metamorphic.transforms[0].state_pth",
     "name, field, state_path, template, validity_labels, minimum_validity"),
    ({"transform": [{"name": "polite", **TRANSFORM}]}, "metamorphic.transform", "transforms"),
])
def test_a_misspelt_key_of_the_metamorphic_section_is_refused_with_the_keys_allowed(metamorphic: dict[str, object],
                                                                                   key: str, allowed: str) -> None:
    """``extra="forbid"`` was pinned for the suite's top level and the evaluators, not for a
    transform or the ``metamorphic`` mapping. Ignored, ``transform:`` (no s) ran no copy at all and ``state_pth``
    left the transform rewriting ``field`` alone, both without a word."""
    with pytest.raises(ConfigError) as info:
        parse_suite_config({**BASE, "metamorphic": metamorphic})
    assert info.value.key == key
    assert str(info.value) == f"oloproof.yaml: {key}: unknown key; allowed: {allowed}"


@pytest.mark.parametrize(("key", "value"), [("criteria", {"answer_matches": 0.8}), ("allow_approximate_methods", True),
                                            ("min_clusters", 5), ("confidence", 0.9)])
def test_a_gate_setting_in_oloproof_yaml_names_release_yaml(key: str, value: object) -> None:
    """The gate's thresholds live in release.yaml beside oloproof.yaml. Written into oloproof.yaml, a key of
    release.yaml was refused as a misspelling, listing oloproof.yaml's keys, none of which sets a threshold."""
    with pytest.raises(ConfigError) as info:
        parse_suite_config({**BASE, key: value})
    assert info.value.key == key
    assert str(info.value) == (f"oloproof.yaml: {key}: a setting of the release gate, not of the suite: move it to "
                               "release.yaml in the suite folder; allowed here: name, system, cases, evaluators, "
                               "metamorphic, slices, validators, case_timeout_s, tool_errors, isolation, epochs")


def test_an_unknown_key_that_is_no_gate_setting_lists_the_keys_of_oloproof_yaml() -> None:
    with pytest.raises(ConfigError) as info:
        parse_suite_config({**BASE, "evaluator": []})
    assert str(info.value) == ("oloproof.yaml: evaluator: unknown key; allowed: name, system, cases, evaluators, "
                               "metamorphic, slices, validators, case_timeout_s, tool_errors, isolation, epochs")
