"""Names of oloproof.yaml that read as nothing are refused naming the key.

``criterion: "  "`` loaded as a criterion of that name (``criteria=[  ]``): a gate row and a release.yaml key no
one can read or write, and ``criterion: ""`` stood for the default name without a word. ``validity_labels: ""``
was refused as the suite folder itself: ``<suite>: cannot read the label file: is a directory``, naming neither
the key nor oloproof.yaml.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb.cli import main
from oloproof_nb.errors import ConfigError

CASES = [{"id": "c1", "input": {"answer": "a"}, "expected": {"answer": "a"}}]


@pytest.mark.parametrize("criterion", ["", "  ", "\u200b", " \u00ad\t"])
def test_a_criterion_that_reads_as_nothing_is_refused(make_suite: Callable[..., Path], criterion: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "state_matches"},
                                           {"type": "answer_matches", "criterion": criterion}])
    with pytest.raises(ConfigError) as info:
        op.load_suite(folder)
    assert info.value.key == "evaluators[1].criterion"
    assert str(info.value).endswith(f"{criterion!r} reads as nothing, and every table and release.yaml name the "
                                    "check by it; give it a name, or leave 'criterion' out for the default "
                                    "('answer_matches')")
    assert main(["run", str(folder), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "evaluators[1].criterion" in err and "Traceback" not in err


def test_a_python_check_s_blank_name_is_named_as_written(make_suite: Callable[..., Path]) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "python", "name": " ", "check": "checks:done"}])
    (folder / "checks.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return True\n",
                                      encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        op.load_suite(folder)
    assert info.value.key == "evaluators[0].name" and "leave 'name' out for the default ('done')" in str(info.value)


def test_a_python_check_s_blank_criterion_is_named_as_written(make_suite: Callable[..., Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A python check takes ``criterion`` as well as ``name``: the key written is the one named (the message said
    ``evaluators[0].name`` and to leave 'name' out, in a file with no 'name')."""
    folder = make_suite(CASES, evaluators=[{"type": "python", "criterion": "", "check": "checks:done"}])
    (folder / "checks.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return True\n",
                                      encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        op.load_suite(folder)
    assert info.value.key == "evaluators[0].criterion"
    assert "leave 'criterion' out for the default ('done')" in str(info.value)
    assert main(["run", str(folder), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "evaluators[0].criterion" in err and "'name'" not in err


def test_a_named_criterion_and_a_stored_run_s_configuration_still_load(make_suite: Callable[..., Path]) -> None:
    """A criterion with a name loads; a stored run's configuration is not checked again (a run made before keeps
    opening), as for a slice listed twice."""
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches", "criterion": " said a "}])
    assert op.load_suite(folder).criteria == [" said a "]
    stored = {"name": "s", "system": "m:S", "evaluators": [{"type": "answer_matches", "criterion": " "}]}
    assert parse_suite_config(stored).criteria == [" "]


def test_an_empty_validity_labels_is_refused_naming_the_key() -> None:
    transform = {"name": "t", "field": "q", "template": "{value}!", "validity_labels": "", "minimum_validity": 0.9}
    with pytest.raises(ConfigError) as info:
        parse_suite_config({"name": "x", "system": "m:S", "metamorphic": {"transforms": [transform]}})
    assert info.value.key == "metamorphic.transforms[0].validity_labels"
    assert str(info.value) == ("oloproof.yaml: metamorphic.transforms[0].validity_labels: String should have at least "
                               "1 character (got '')")
