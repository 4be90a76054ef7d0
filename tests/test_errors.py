"""Error messages quote at most ~200 characters of a user's value, at a bounded cost, and never raise."""

from __future__ import annotations

import json
import sys
import time

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from oloproof_nb.errors import (
    MESSAGE_LIMIT,
    QUOTE_LIMIT,
    ConfigError,
    OloproofError,
    format_loc,
    lone_cr_hint,
    parse_problem,
    quote,
    validation_problem,
)


@pytest.mark.parametrize("value", ["x" * 10**6, ["y" * 1000] * 10**5, {"k" * 500: [[[[1]]]]}, 10**5000, b"z" * 10**6,
                                   float("nan"), None], ids=["str", "list", "dict", "int", "bytes", "nan", "none"])
def test_quote_is_short_and_never_raises(value: object) -> None:
    text = quote(value)
    assert 0 < len(text) <= QUOTE_LIMIT


def test_quote_of_an_aliased_million_item_list_is_cheap() -> None:
    inner = ["lol"] * 9
    for _ in range(8):  # 9**9 strings if expanded, shared like YAML aliases share them
        inner = [inner] * 9
    started = time.perf_counter()
    assert len(quote(inner)) <= QUOTE_LIMIT
    # a hang guard, not a timing: quoting the 387,420,489 strings expanded takes minutes; 0.1 s here was a bound a
    # loaded 2-core machine could miss
    assert time.perf_counter() - started < 5
    assert quote(10**5000) == "<int of 16610 bits>"


def test_every_message_is_capped() -> None:
    assert len(str(OloproofError("m" * 10**6))) == MESSAGE_LIMIT
    assert len(str(ConfigError("f.yaml", "key", "m" * 10**6))) == MESSAGE_LIMIT
    assert str(OloproofError("short")) == "short"


@pytest.mark.parametrize(("loc", "key"), [
    (("",), "''"),
    (("criteria", ""), "criteria.''"),
    (("criteria", "state_matches "), "criteria.'state_matches '"),
    (("evaluators", 0, " mode"), "evaluators[0].' mode'"),
    (("evaluators", 0, "mode"), "evaluators[0].mode"),
])
def test_a_key_that_is_empty_or_padded_is_quoted(loc: tuple[object, ...], key: str) -> None:
    """An empty key left the line without one (``oloproof.yaml: unknown key; allowed: …``), a padded one looked
    like a name the message then listed as known (found by a mutation fuzz of the bundled examples)."""
    assert format_loc(loc) == key


def test_a_message_cut_to_the_limit_keeps_its_file_and_what_is_allowed() -> None:
    """The net cut a message at its end: a path of the user's making in the middle (``cases: <5,000 x>``, found
    by a mutation fuzz of the bundled examples) left the line without what was wrong or what to do."""
    message = str(ConfigError("suite/oloproof.yaml", "cases",
                              f"file suite/{'x' * 5000} not found (the case file: one JSON case a line)"))
    assert len(message) == MESSAGE_LIMIT
    assert message.startswith("suite/oloproof.yaml: cases: file suite/xxx")
    assert message.endswith("xxx not found (the case file: one JSON case a line)")
    assert message.count("…") == 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: int = 0
    label: str = ""

    @field_validator("label")
    @classmethod
    def _check(cls, value: str) -> str:
        raise ValueError(f"label {value!r} is not allowed")  # a validator that quotes the whole value


def test_validation_problem_quotes_at_most_the_limit() -> None:
    for data, key in (({"name": "n" * 10**6}, "name"), ({"label": "l" * 10**6}, "label")):
        with pytest.raises(ValidationError) as info:
            _Model.model_validate(data)
        got, message, _ = validation_problem(info.value)
        assert got == key
        assert len(message) <= 2 * QUOTE_LIMIT, len(message)
    assert message.startswith("label 'lll") and message.endswith("' is not allowed")  # the value cut, not the words


def test_a_mapping_refused_by_a_plain_field_is_still_the_first_problem() -> None:
    """Only a union's text branch gives way to its mapping branch: a mapping where a plain text field stands
    is reported at that field, not at a deeper problem elsewhere."""
    from pydantic import BaseModel, ConfigDict, ValidationError

    from oloproof_nb.errors import validation_problem

    class Sub(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: int

    class Top(BaseModel):
        model_config = ConfigDict(extra="forbid")
        id: str
        sub: Sub

    with pytest.raises(ValidationError) as caught:
        Top.model_validate({"id": {"a": 1}, "sub": {"x": "no"}})
    assert validation_problem(caught.value)[:2] == ("id", "Input should be a valid string")


def test_a_value_that_should_be_a_mapping_of_keys_names_no_class() -> None:
    """A new user's first hour: a nested model given a number or a list was worded by pydantic, "Input
    should be a valid dictionary or instance of Sub": the name of a class the user never wrote. It says "a
    mapping" (the value quoted as for every other problem; a list is not quoted); a plain dict field keeps its words."""
    from pydantic import BaseModel, ConfigDict, ValidationError

    from oloproof_nb.errors import validation_problem

    class Sub(BaseModel):
        model_config = ConfigDict(extra="forbid")
        x: int = 0

    class Top(BaseModel):
        model_config = ConfigDict(extra="forbid")
        sub: Sub = Sub()
        plain: dict[str, int] = {}

    for value, message in ((5, "Input should be a mapping (got 5)"), ([1, 2], "Input should be a mapping"),
                           (None, "Input should be a mapping (got null)")):
        with pytest.raises(ValidationError) as caught:
            Top.model_validate({"sub": value})
        assert validation_problem(caught.value)[:2] == ("sub", message)
    with pytest.raises(ValidationError) as caught:
        Top.model_validate({"plain": 5})
    assert validation_problem(caught.value)[:2] == ("plain", "Input should be a valid dictionary (got 5)")


def test_a_value_no_branch_of_a_union_takes_is_named_at_its_own_key() -> None:
    """A text or a mapping, a word or a mapping: a value that is neither was reported at pydantic's name of the
    first branch (``rule.literal['ordered','unordered']``, ``answers[0].str``), a key the user never wrote, and
    without the mapping form. A key that is merely called ``str`` keeps its name."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, ValidationError

    from oloproof_nb.errors import validation_problem

    class ByKey(BaseModel):
        model_config = ConfigDict(extra="forbid")
        by_key: str

    class Rules(BaseModel):
        model_config = ConfigDict(extra="forbid")
        rule: Literal["ordered", "unordered"] | ByKey = "ordered"
        answers: list[str | ByKey] = []
        names: dict[str, int] = {}

    def problem(data: dict) -> tuple[str, str]:
        with pytest.raises(ValidationError) as caught:
            Rules.model_validate(data)
        key, message, _ = validation_problem(caught.value)
        return key, message

    assert problem({"rule": "sorted"}) == ("rule", "Input should be 'ordered' or 'unordered', or a mapping "
                                                   "(got 'sorted')")
    assert problem({"answers": ["ok", 7]}) == ("answers[1]", "Input should be a valid string, or a mapping (got 7)")
    assert problem({"rule": {"by_kee": "id"}}) == ("rule.by_kee", "unknown key")  # a mapping: its own problem
    assert problem({"names": {"str": "x"}})[0] == "names.str"  # no union there: the key as written
    # other keys refused beside it are no union's branches either (the key was dropped before, "names")
    assert problem({"names": {"str": "x", "b": "y"}})[0] == "names.str"
    assert problem({"names": {"str": "x", "b": [1]}})[0] == "names.str"
    assert problem({"names": {"str": "x", "b": "x"}})[0] == "names.str"


def _longest_run(text: str, ch: str) -> int:
    import re

    return max((len(m) for m in re.findall(f"{re.escape(ch)}+", text)), default=0)


def test_a_huge_name_in_a_config_or_a_contract_is_quoted_short(make_suite, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An evaluator type of 50,000 characters was quoted whole ({kind!r}; 1,938 of them in the message, cut only by
    the 2,000-character cap), and a contract's validator name of 100,000 the same."""
    import json

    from oloproof_nb import load_suite
    from oloproof_nb._run.observe import verify_contract_file
    from oloproof_nb.errors import ContractFileError

    folder = make_suite([{"id": "c1", "input": {}}], evaluators=[{"type": "y" * 50_000}])
    with pytest.raises(ConfigError) as info:
        load_suite(folder)
    assert "unknown evaluator type" in str(info.value) and _longest_run(str(info.value), "y") <= QUOTE_LIMIT
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "a", "locator": "out.json", "run_started_at": "2026-01-01T00:00:00Z",
                                    "validator": "v" * 100_000}), encoding="utf-8")
    with pytest.raises(ContractFileError) as c_info:
        verify_contract_file(contract)
    assert "validator" in str(c_info.value) and _longest_run(str(c_info.value), "v") <= QUOTE_LIMIT


@pytest.mark.parametrize(("flag", "where"), [("-c", "<string>"), ("-", "<stdin>")])
def test_a_warning_from_a_script_given_on_the_command_line_or_stdin_is_a_warning(flag: str, where: str) -> None:
    """``warn_at_caller`` gave ``warnings.warn_explicit`` the caller's module globals, and the loader of
    a ``python -c`` or ``python -`` script's ``__main__`` raises ImportError when asked for its source: ``op.gate``
    of a run with a vacuous check or an edited release.yaml raised ImportError in such a script (a CI step), even
    with warnings ignored. It now warns there as ``warnings.warn`` does, at the script's line."""
    import subprocess
    import sys

    code = "from oloproof_nb.errors import warn_at_caller\nwarn_at_caller('checked')\nprint('after')\n"
    done = subprocess.run([sys.executable, flag, *([code] if flag == "-c" else [])],
                          input=code if flag == "-" else None, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "after\n"
    assert done.stderr.startswith(f"{where}:2: UserWarning: checked")


def test_a_refused_parse_is_worded_the_same_on_every_python() -> None:
    """Messages copied the ValueError of Python's limit on int conversion, which 3.10 words "Exceeds the limit (4300)
    for integer string conversion" and 3.11 "Exceeds the limit (4300 digits) …": the tests of the contract file
    passed on one Python only. The words are now oloproof's own, with the limit Python applies."""
    import json

    import yaml

    from oloproof_nb.errors import parse_problem

    with pytest.raises(ValueError) as caught:
        json.loads("9" * 5000)
    assert parse_problem(caught.value) == "a number of more than 4,300 digits"
    with pytest.raises(ValueError) as caught:
        yaml.safe_load("n: " + "9" * 5000)
    assert parse_problem(caught.value) == "a number of more than 4,300 digits"
    as_on_310 = ValueError("Exceeds the limit (4300) for integer string conversion: value has 5000 digits; use "
                           "sys.set_int_max_str_digits() to increase the limit")
    assert parse_problem(as_on_310) == "a number of more than 4,300 digits"
    before = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(10_000)  # the limit Python applies, not a number written down
        assert parse_problem(as_on_310) == "a number of more than 10,000 digits"
    finally:
        sys.set_int_max_str_digits(before)
    with pytest.raises(json.JSONDecodeError) as decode:
        json.loads('{"a": }')
    assert parse_problem(decode.value) == "Expecting value"
    assert parse_problem(RecursionError("maximum recursion depth exceeded")) == "nested too deeply"
    assert parse_problem(ValueError("something else: details")) == "something else"


@pytest.mark.parametrize(("text", "close", "comma", "where"), [
    ('{"a": 1,}', "}", 7, "column 8"), ('[1, 2 ,  ]', "]", 6, "column 7"), ('{"a": [1,],}', "]", 8, "column 9"),
    ('{"b": 2,\n}', "}", 7, "line 1, column 8"), ('{\n  "a": 1,\n  "b": 2,\n}\n', "}", 20, "line 3, column 9")])
def test_a_trailing_comma_is_named_so_on_every_python(text: str, close: str, comma: int, where: str) -> None:
    """Python before 3.13 says "Expecting property name enclosed in double quotes" (or "Expecting value") at the
    closing bracket, sending a user to look for a quote; 3.13 says "Illegal trailing comma" at the comma. Both read
    as the comma it is, at its place (counted by hand: ``comma`` is its 0-based index), its line named in a text of
    several lines, where the bracket is on another line."""
    with pytest.raises(json.JSONDecodeError) as decode:
        json.loads(text)
    said = f"a comma after the last item at {where}, before {close!r}"
    assert parse_problem(decode.value) == said
    kind = "object" if close == "}" else "array"
    as_on_313 = json.JSONDecodeError(f"Illegal trailing comma before end of {kind}", text, comma)
    assert parse_problem(as_on_313) == said


@pytest.mark.parametrize("text", ['{"a": 1,, }', '{,}', '{"a": }', '[1, ,]'])
def test_a_comma_before_no_closing_bracket_keeps_the_decoder_s_words(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as decode:
        json.loads(text)
    assert parse_problem(decode.value) == decode.value.msg


@pytest.mark.parametrize("line", ['{"a": 1}\r \n', ' \r{"a": }\n', '\t\r{"a": }\n'])
def test_a_cr_among_the_blanks_at_either_end_of_a_line_ends_no_line(line: str) -> None:
    """A CR with spaces or tabs beside it at an end of the line is JSON whitespace there, as a leading one is: the
    line's own JSON error is all there is to say."""
    assert lone_cr_hint(line) == ""
