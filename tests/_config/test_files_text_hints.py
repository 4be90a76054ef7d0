"""What a refusal says of a value YAML 1.1 read otherwise than it was written: a word it read as a boolean where text
goes (``criterion: no``), text that was never quoted (``0o17``, ``85%``), and a key it read as binary data."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from oloproof_nb._config.files import read_yaml
from oloproof_nb._config.release import load_release
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb.errors import ConfigError

BOOL_HINT = "; YAML 1.1 reads yes, no, on and off as true or false: quote the word for text"
SUITE = "name: x\nsystem: desk:Desk\n"


@pytest.mark.parametrize(("text", "said"), [
    ("evaluators:\n  - {type: state_unchanged, criterion: no, paths: [a]}\n",
     "evaluators[0].criterion: Input should be a valid string (got false)"),
    ("evaluators:\n  - {type: fault_recovery, tool: refund, fault: on}\n",
     "evaluators[0].fault: Input should be 'error', 'timeout' or 'malformed' (got true)"),
    ("evaluators:\n  - {type: state_unchanged, paths: [orders, off]}\n",
     "evaluators[0].paths[1]: Input should be a valid string (got false)"),
])
def test_a_word_yaml_reads_as_a_boolean_where_text_goes_says_so(tmp_path: Path, text: str, said: str) -> None:
    """``criterion: no`` was refused as ``(got false)``, a value the file does not hold, and not why: PyYAML's
    SafeLoader (the outside reference) reads the bare word as a boolean."""
    assert any(isinstance(leaf, bool) for leaf in _leaves(yaml.safe_load(text)))
    path = tmp_path / "oloproof.yaml"
    path.write_text(SUITE + text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        parse_suite_config(read_yaml(path), path)
    assert str(err.value) == f"{path}: {said}{BOOL_HINT}"
    path.write_text(SUITE + text.replace(": no,", ": 'no',").replace(": on}", ": 'on'}").replace(" off]", " 'off']"),
                    encoding="utf-8")
    try:
        parse_suite_config(read_yaml(path), path)
    except ConfigError as exc:  # quoted, the word is text: refused (fault 'on') for what it is, not as a boolean
        assert "got true" not in str(exc) and "got false" not in str(exc)


def test_a_release_criterion_list_holding_a_boolean_says_so(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text("regression: {criteria: [answer_matches, no]}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == f"{path}: regression.criteria[1]: Input should be a valid string (got false){BOOL_HINT}"


@pytest.mark.parametrize(("text", "key", "what", "tail"), [
    ("min_clusters: 0o17\n", "min_clusters", "a whole number of clusters",
     " (YAML 1.1 reads 0o17 as text, not as the octal number 15; write 15)"),
    ("bootstrap: {seed: -0o10}\n", "bootstrap.seed", "a whole number",
     " (YAML 1.1 reads -0o10 as text, not as the octal number -8; write -8)"),
    ("confidence: 95%\n", "confidence", "a confidence level, e.g. 0.95", ""),
    ("regression: {margin: 2%}\n", "regression.margin", "a number between 0 and 1", ""),
    ("confidence: inf\n", "confidence", "a confidence level, e.g. 0.95", ""),
])
def test_text_written_without_quotes_is_not_told_to_drop_them(tmp_path: Path, text: str, key: str, what: str,
                                                             tail: str) -> None:
    """``min_clusters: 0o17`` (YAML 1.2's octal 15, by hand 1·8 + 7) and ``confidence: 95%`` are text to YAML 1.1
    (PyYAML reads them so), written with no quotes: the refusal said ``(write the number without quotes)``."""
    assert all(isinstance(v, str) for v in _leaves(yaml.safe_load(text)))
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    written = text.split(": ")[-1].rstrip("}\n")
    assert str(err.value).startswith(f"{path}: {key}: must be {what}, not the text '{written}'{tail}")
    assert "quotes" not in str(err.value)


def test_a_quoted_number_is_still_told_to_drop_the_quotes(tmp_path: Path) -> None:
    path = tmp_path / "oloproof.yaml"
    path.write_text(SUITE + "case_timeout_s: '30'\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        parse_suite_config(read_yaml(path), path)
    assert str(err.value) == (f"{path}: case_timeout_s: must be a number of seconds, not the text '30' (write the "
                              "number without quotes)")


def test_a_key_yaml_reads_as_binary_data_is_named_so(tmp_path: Path) -> None:
    """A ``!!binary`` key was said to be "a time to YAML"."""
    assert yaml.safe_load("!!binary YWJj: 0.5") == {b"abc": 0.5}
    path = tmp_path / "release.yaml"
    path.write_text("criteria:\n  !!binary YWJj: 0.5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == (f"{path}: line 2: the key YWJj is binary data (!!binary) to YAML, and a key here is a "
                              "name; write it quoted: 'YWJj'")


def _leaves(value: object) -> list[object]:
    """The scalars of a value YAML read, in mappings and lists at any depth."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]
