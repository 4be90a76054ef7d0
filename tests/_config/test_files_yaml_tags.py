"""A value tagged with a YAML type it does not hold, and a whole number too long to write in decimal, are refused in
one line naming the file and the line: PyYAML's SafeLoader raised a KeyError, an AttributeError or an IndexError
for some (a traceback from ``oloproof run``), and a ``0x`` number of 4,000 digits stopped a run that had started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from oloproof_nb._config.files import read_yaml
from oloproof_nb._config.release import load_release
from oloproof_nb.errors import ConfigError

DIGIT_LIMIT = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


@pytest.mark.parametrize(("text", "pyyaml_raises", "said"), [
    ("allow_approximate_methods: !!bool maybe\n", KeyError,
     "'maybe' is tagged !!bool but is none of true, false, yes, no, on, off"),
    ("confidence: !!timestamp soon\n", AttributeError, "'soon' is tagged !!timestamp but is no date (2026-06-01) or "
     "time"),
    ("min_clusters: !!int ''\n", IndexError, "'' is tagged !!int but holds no digits"),
    ("confidence: !!float ''\n", IndexError, "'' is tagged !!float but holds no digits"),
])
def test_a_value_tagged_with_a_type_it_does_not_hold_is_one_line(tmp_path: Path, text: str,
                                                                 pyyaml_raises: type[Exception], said: str) -> None:
    with pytest.raises(pyyaml_raises):  # PyYAML's own SafeLoader: no YAMLError, so no line of the file
        yaml.safe_load(text)
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == f"{path}: not valid YAML at line 1: {said}"


@pytest.mark.parametrize("text", ["criteria: !!map [answer_matches]\n", "criteria: !!set [answer_matches]\n"])
def test_a_list_tagged_as_a_mapping_is_refused_as_pyyaml_refuses_it(tmp_path: Path, text: str) -> None:
    """The check of keys written twice read the list's items as pairs (``TypeError: cannot unpack``); PyYAML's own
    SafeLoader says what is wrong."""
    with pytest.raises(yaml.constructor.ConstructorError) as pyyaml:
        yaml.safe_load(text)
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == f"{path}: not valid YAML at line 1: {pyyaml.value.problem}"
    assert pyyaml.value.problem == "expected a mapping node, but found sequence"


@pytest.mark.skipif(not DIGIT_LIMIT, reason="a Python without a limit on the digits of an int writes any int")
@pytest.mark.parametrize(("text", "written"), [
    ("min_clusters: 0x" + "f" * 4000 + "\n", "0x" + "f" * 37 + "…"),
    ("bootstrap: {seed: 0b" + "1" * 15000 + "}\n", "0b" + "1" * 37 + "…"),
])
def test_a_whole_number_too_long_to_write_is_refused_by_line(tmp_path: Path, text: str, written: str) -> None:
    """``0x`` followed by 4,000 digits is a number of some 4,800 decimal digits, which Python does not write (the
    same number in decimal is refused so): accepted, it stopped ``oloproof run`` with ``ValueError: Exceeds the
    limit (4300 digits) for integer string conversion``, after the run had begun."""
    value = yaml.safe_load(text)
    number = value["min_clusters"] if "min_clusters" in value else value["bootstrap"]["seed"]
    with pytest.raises(ValueError, match="Exceeds the limit"):
        str(number)
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == (f"{path}: line 1: {written} is a number of more than {DIGIT_LIMIT:,} digits; write a "
                              "smaller number")


def test_a_long_hexadecimal_number_python_writes_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text("bootstrap: {seed: 0x" + "f" * 100 + "}\n", encoding="utf-8")
    assert read_yaml(path) == {"bootstrap": {"seed": 16 ** 100 - 1}}


def test_a_base_60_number_too_large_for_a_float_is_refused_by_line(tmp_path: Path) -> None:
    """PyYAML multiplies each base-60 place by 60 more than the last: 3,000 places overflow a float
    (``OverflowError: int too large to convert to float``, a traceback)."""
    text = "confidence: 1" + ":59" * 3000 + ".5\n"
    with pytest.raises(OverflowError):
        yaml.safe_load(text)
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_release(path)
    assert str(err.value) == (f"{path}: line 1: 1{':59' * 12}:5… is a base-60 number too large for a float to YAML "
                              "1.1 (and text to YAML 1.2); write the number itself, or quote it for text")
