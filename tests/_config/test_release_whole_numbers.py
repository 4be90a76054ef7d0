"""Every whole-number setting of release.yaml is strict, as ``epochs`` of oloproof.yaml is.

``min_clusters: 20.0`` (and ``bootstrap.resamples: 10000.0``, ``bootstrap.seed: 3.0``) were read as the whole
number while ``epochs: 2.0`` was refused: each is now refused in one line naming the file, the key and
"a whole number"; a boolean is refused as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._config.release import load_release
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb.cli import main
from oloproof_nb.errors import ConfigError

WHOLE = [("min_clusters: 20.0\n", "min_clusters", "20.0"),
         ("bootstrap: {resamples: 10000.0}\n", "bootstrap.resamples", "10000.0"),
         ("bootstrap: {seed: 3.0}\n", "bootstrap.seed", "3.0")]


@pytest.mark.parametrize(("text", "key", "shown"), WHOLE)
def test_a_whole_number_written_with_a_decimal_point_is_refused(text: str, key: str, shown: str,
                                                                tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == (f"{path}: {key}: must be a whole number written without a decimal point "
                              f"(got {shown})")


@pytest.mark.parametrize("text", ["min_clusters: 20.5\n", "bootstrap: {resamples: 10000.5}\n"])
def test_a_fraction_is_no_whole_number(text: str, tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r": must be a whole number \(got (20|10000)\.5\)$"):
        load_release(path)


@pytest.mark.parametrize("text", ["min_clusters: true\n", "bootstrap: {resamples: yes}\n",
                                  "bootstrap: {seed: false}\n"])
def test_a_boolean_is_no_whole_number(text: str, tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r": must be a whole number.*, not (true|false) \(YAML reads yes"):
        load_release(path)


def test_whole_numbers_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text("min_clusters: 20\nbootstrap: {resamples: 10000, seed: 3}\n", encoding="utf-8")
    release = load_release(path)
    assert (release.min_clusters, release.bootstrap.resamples, release.bootstrap.seed) == (20, 10000, 3)


def test_epochs_says_whole_number_too() -> None:
    """The one mechanism (a strict whole number) and the one wording: ``epochs: 2.0`` said ``Input should be a
    valid integer (got 2.0)``."""
    with pytest.raises(ConfigError) as err:
        parse_suite_config({"name": "x", "system": "m:S", "epochs": 2.0})
    assert str(err.value) == "oloproof.yaml: epochs: must be a whole number written without a decimal point (got 2.0)"
    with pytest.raises(ConfigError) as err:  # the suite's other whole number, strict already: the same words
        parse_suite_config({"name": "x", "system": "m:S",
                            "evaluators": [{"type": "outcome_contract", "max_artifact_bytes": 1024.0}]})
    assert str(err.value) == ("oloproof.yaml: evaluators[0].max_artifact_bytes: must be a whole number written "
                              "without a decimal point (got 1024.0)")


def test_the_command_exits_2_naming_the_file(example_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    release = example_suite / "release.yaml"
    release.write_text(release.read_text(encoding="utf-8").replace("min_clusters: 20 ", "min_clusters: 20.0 "),
                       encoding="utf-8")
    assert "min_clusters: 20.0" in release.read_text(encoding="utf-8")
    assert main(["run", str(example_suite)]) == 2
    err = capsys.readouterr().err
    assert f"{release}: min_clusters: must be a whole number written without a decimal point (got 20.0)" in err
    assert "Traceback" not in err
    with pytest.raises(op.ConfigError):
        op.load_suite(example_suite)
