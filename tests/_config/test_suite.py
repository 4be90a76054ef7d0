"""Suite config: strict models, the evaluator registry, one-line errors naming file and key, importing the system."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from _hostile_files import SPECIAL_KINDS, bounded, make_special

import oloproof_nb as op
from oloproof_nb._config.release import ReleaseConfig
from oloproof_nb._config.suite import load_suite
from oloproof_nb._config.suite_config import SuiteConfig, parse_suite_config
from oloproof_nb.cli import main
from oloproof_nb.errors import CaseFileError, ConfigError
from oloproof_nb.evaluators import EVALUATORS, AnswerMatches, PythonCheck, StateMatches, StateUnchanged

CASES = [{"id": "c1", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]


def _edit_yaml(path: Path, **changes: object) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _error(folder: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_suite(folder)
    assert "\n" not in str(info.value)
    return info.value


def test_example_suite_loads(example_suite: Path) -> None:
    suite = load_suite(example_suite)
    assert suite.name == "stateful-agent"
    sources = [c for c in suite.cases if c.transform is None]
    assert [c.id for c in sources] == [f"ord-{i:03d}" for i in range(1, 25)]  # 24 source cases, in file order
    # every source case is followed by its derived copies (if the suite declares transforms)
    for case in suite.cases:
        if case.transform is not None:
            assert case.source_id in {c.id for c in sources} and case.cluster == case.source_id
    assert suite.criteria[:3] == ["answer_matches", "state_matches", "other_order_untouched"]
    assert isinstance(suite.config.evaluators[0], AnswerMatches)
    state = suite.config.evaluators[1]
    assert isinstance(state, StateMatches) and state.mode == "changes" and state.ignore == ["escalations.*.reason"]
    unchanged = suite.config.evaluators[2]
    assert isinstance(unchanged, StateUnchanged) and unchanged.paths == ["orders.ord-999"]
    check = suite.config.evaluators[3]
    assert isinstance(check, PythonCheck) and check.name == "refunds_follow_policy"
    assert suite.config.case_timeout_s == 60
    assert isinstance(suite.release, ReleaseConfig) and suite.release.criteria["answer_matches"] == 0.90
    assert set(suite.digests) >= {"oloproof.yaml", "cases.jsonl", "release.yaml"}
    assert suite.root == example_suite.resolve()


def test_registry_has_the_foundation_types() -> None:
    assert EVALUATORS["answer_matches"] is AnswerMatches
    assert EVALUATORS["state_matches"] is StateMatches
    assert EVALUATORS["state_unchanged"] is StateUnchanged
    assert EVALUATORS["python"] is PythonCheck


def test_default_criterion_names_and_overrides() -> None:
    config = parse_suite_config({
        "name": "x", "system": "m:S",
        "evaluators": [{"type": "answer_matches"}, {"type": "state_matches"},
                       {"type": "state_unchanged", "paths": ["a"]},
                       {"type": "state_unchanged", "criterion": "b_untouched", "paths": ["b"]}],
    })
    assert config.criteria == ["answer_matches", "state_matches", "state_unchanged", "b_untouched"]
    assert config.evaluator("b_untouched").paths == ["b"]  # type: ignore[attr-defined]
    assert config.cases == "cases.jsonl" and config.case_timeout_s == 300


def test_models_are_strict() -> None:
    with pytest.raises(ValueError, match=r"(?s)colour.*Extra inputs are not permitted"):
        SuiteConfig.model_validate({"name": "x", "system": "m:S", "colour": 1})
    with pytest.raises(ValueError, match=r"(?s)tolerance.*greater than or equal to 0"):
        StateMatches.model_validate({"type": "state_matches", "tolerance": -1})
    with pytest.raises(ValueError, match="mode 'paths' needs a non-empty 'paths' list"):
        StateMatches.model_validate({"type": "state_matches", "mode": "paths"})  # paths needed
    with pytest.raises(ValueError, match=r"'paths' is only used with mode 'paths' \(mode is 'subset'\)"):
        StateMatches.model_validate({"type": "state_matches", "paths": ["a"]})  # paths only with mode paths
    with pytest.raises(ValueError, match=r"path 'a\.\.b' has an empty key at position 2"):
        StateUnchanged.model_validate({"type": "state_unchanged", "paths": ["a..b"]})  # bad path syntax
    with pytest.raises(ValueError, match=r"threshold of 'a' must be between 0 and 1, got 1\.01"):
        ReleaseConfig.model_validate({"criteria": {"a": 1.01}})
    assert ReleaseConfig.model_validate({"criteria": {"a": 0, "b": 1}}).criteria == {"a": 0.0, "b": 1.0}


# -- oloproof.yaml mistakes: one line naming the file, the key, what is allowed ----------------------


def test_unknown_top_level_key_lists_allowed(make_suite) -> None:
    folder = make_suite(CASES)
    _edit_yaml(folder / "oloproof.yaml", colour="red")
    err = _error(folder)
    assert err.file == str(folder / "oloproof.yaml") and err.key == "colour"
    for allowed in ("name", "system", "cases", "evaluators", "metamorphic", "slices", "case_timeout_s"):
        assert allowed in str(err)


def test_unknown_evaluator_type_lists_types(make_suite) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches"}, {"type": "vibes_check"}])
    err = _error(folder)
    assert err.key == "evaluators[1].type"
    assert "vibes_check" in str(err)
    for allowed in ("answer_matches", "state_matches", "state_unchanged"):
        assert allowed in str(err)


def test_unknown_evaluator_option_lists_its_options(make_suite) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "state_matches", "tolerence": 0.1}])
    err = _error(folder)
    assert err.key == "evaluators[0].tolerence"
    for allowed in ("mode", "paths", "tolerance", "criterion"):
        assert allowed in str(err)


@pytest.mark.parametrize(("evaluator", "key", "message"), [
    ({"type": "fault_recovery", "tool": "t", "fault": "error", "honest_answers": [{"regex": "("}]},
     "evaluators[0].honest_answers[0].regex", "not a regular expression: missing )"),
    ({"type": "fault_recovery", "tool": "t", "fault": "error", "honest_answers": [{"re": "x"}]},
     "evaluators[0].honest_answers[0].re", "unknown key; allowed: regex"),
    ({"type": "state_matches", "mode": "changes", "lists": {"tx": {"by_key": "id", "extra": 1}}},
     "evaluators[0].lists.tx.extra", "unknown key; allowed: by_key"),
    ({"type": "fault_recovery", "tool": "t", "fault": "error", "honest_answers": [7]},
     "evaluators[0].honest_answers[0]", "Input should be a valid string, or a mapping (got 7)"),
    ({"type": "state_matches", "mode": "changes", "lists": {"tx": "sorted"}},
     "evaluators[0].lists.tx", "Input should be 'ordered' or 'unordered', or a mapping (got 'sorted')"),
])
def test_a_mapping_where_text_or_a_mapping_is_allowed_names_its_own_problem(make_suite, evaluator: dict,
                                                                           key: str, message: str) -> None:
    """Keys that take a text or a mapping: a bad mapping was reported as the text branch's "Input should be a
    valid string" at ``honest_answers[0].str``. Its own problem is named now; a value that is neither is
    reported at the key the user wrote, with both forms (it was at ``honest_answers[0].str``, and a bad list
    rule at ``lists.tx.literal['ordered','unordered']``, without the ``{by_key: FIELD}`` form). An unknown key in
    such a mapping lists the keys allowed there: none were listed, and on Python 3.10, which takes
    ``list[str | HonestPattern]`` for a class, looking for them raised TypeError (a traceback for a typo)."""
    err = _error(make_suite(CASES, evaluators=[evaluator]))
    assert err.key == key and message in err.message, (err.key, err.message)


@pytest.mark.parametrize(("answers", "key", "message"), [
    ([{"regex": "(?i)could not|"}], "evaluators[0].honest_answers[0].regex", "matches the empty text"),
    ([{"regex": "(could not)?"}], "evaluators[0].honest_answers[0].regex", "matches the empty text"),
    ([{"regex": ".*"}], "evaluators[0].honest_answers[0].regex", "matches the empty text"),
    (["sorry", "  "], "evaluators[0].honest_answers", "a blank honest answer"),
])
def test_an_honest_answer_every_answer_gives_is_refused(make_suite, answers: list, key: str, message: str) -> None:
    """A stray "|" made the pattern match the empty text, so every text answer "admitted the
    task failed" and a case that neither recovered nor escalated passed, unwarned. Such a pattern, and a blank
    literal (a blank answer as an admission), are config errors; a pattern that needs a character is not."""
    evaluator = {"type": "fault_recovery", "tool": "t", "fault": "error", "honest_answers": answers}
    err = _error(make_suite(CASES, evaluators=[evaluator]))
    assert err.key == key and message in err.message, (err.key, err.message)
    fine = {**evaluator, "honest_answers": ["sorry", {"regex": "(?i)could not|cannot"}, {"regex": "^x?y"}]}
    op.load_suite(make_suite(CASES, evaluators=[fine]))


def test_an_honest_answer_regex_that_backtracks_is_refused_before_the_run(make_suite) -> None:
    r"""``^(\w+\s?)*(failed|declined)`` searched in an ordinary 92-character answer it does not match
    hung the run (the search holds the GIL; no timeout stops it). ``load_suite`` refuses it in one line that names
    the key, the pattern and the rewrites; the rewrite it suggests loads."""
    evaluator = {"type": "fault_recovery", "tool": "t", "fault": "error",
                 "honest_answers": ["sorry", {"regex": r"^(\w+\s?)*(failed|declined)"}]}
    err = _error(make_suite(CASES, evaluators=[evaluator]))
    assert err.key == "evaluators[0].honest_answers[1].regex", err.key
    assert err.message.startswith(r"'^(\\w+\\s?)*(failed|declined)' repeats a repeat"), err.message
    assert r"end the repeated part in a required character ('(\w+\s)*')" in err.message, err.message
    assert err.message.endswith("or list the answer as text"), err.message
    fine = {**evaluator, "honest_answers": ["sorry", {"regex": r"^(\w+\s)*(failed|declined)"}]}
    op.load_suite(make_suite(CASES, evaluators=[fine]))


@pytest.mark.parametrize("depth", [450, 5000])
def test_an_honest_answer_regex_nested_too_deeply_is_refused_in_one_line(make_suite, depth: int) -> None:
    """Groups nested some hundreds deep exhaust the recursion limit in the pattern's shape check (450), or in
    ``re.compile`` itself (5000): the ``RecursionError`` passed through the validator, and ``oloproof run`` said
    ``the run stopped: RecursionError: maximum recursion depth exceeded``, naming neither the file nor the key."""
    pattern = "(" * depth + "failed" + ")" * depth
    evaluator = {"type": "fault_recovery", "tool": "t", "fault": "error", "honest_answers": [{"regex": pattern}]}
    err = _error(make_suite(CASES, evaluators=[evaluator]))
    assert err.key == "evaluators[0].honest_answers[0].regex", err.key
    assert err.message.endswith("nests its groups too deeply to be read; write what an honest answer must contain "
                                "with fewer nested groups"), err.message


@pytest.mark.parametrize(("calls", "got"), [("each", " (got 'each')"), ("Every", " (got 'Every')"), (2, " (got 2)"),
                                           (["every"], "")])
def test_a_fault_criterions_calls_is_first_or_every(make_suite, calls: object, got: str) -> None:
    """``calls: every`` faults each call of the tool; anything else is refused in one line."""
    evaluator = {"type": "fault_recovery", "tool": "t", "fault": "error", "calls": calls}
    err = _error(make_suite(CASES, evaluators=[evaluator]))
    assert (err.key, err.message) == ("evaluators[0].calls", f"Input should be 'first' or 'every'{got}")
    suite = op.load_suite(make_suite(CASES, evaluators=[{**evaluator, "calls": "every"}]))
    assert [getattr(ev, "calls", None) for ev in suite.config.evaluators] == ["every"]


def test_bad_mode_lists_modes(make_suite) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "state_matches", "mode": "partial"}])
    err = _error(folder)
    assert err.key == "evaluators[0].mode"
    assert "'whole'" in str(err) and "'paths'" in str(err) and "'subset'" in str(err) and "partial" in str(err)


def test_state_unchanged_needs_paths(make_suite) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "state_unchanged"}])
    err = _error(folder)
    assert err.key == "evaluators[0].paths" and "required" in str(err)


def test_bad_path_in_config_names_it(make_suite) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "state_unchanged", "paths": ["orders..x"]}])
    err = _error(folder)
    assert err.key is not None and err.key.startswith("evaluators[0].paths")
    assert "orders..x" in str(err)


def test_duplicate_criterion(make_suite) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches"}, {"type": "answer_matches"}])
    err = _error(folder)
    assert err.key == "evaluators[1].criterion" and "already used" in str(err)


@pytest.mark.parametrize("spec", ["sysmod", "sysmod:", ":Scripted", "sys mod:Scripted", "sysmod:Scripted:x",
                                  "sysmod.Scripted"])
def test_bad_system_spec(make_suite, spec: str) -> None:
    """The message says what is allowed in words (it quoted the regular expression the value must match)."""
    folder = make_suite(CASES, system=spec)
    err = _error(folder)
    assert err.key == "system"
    assert err.message == (f"must be 'module:Class' (a module importable from the suite folder, a colon, the class "
                           f"(or factory) that builds the system), e.g. refund_desk:RefundDesk; got {spec!r}")


def test_a_python_check_spec_with_a_dot_says_what_is_allowed(make_suite) -> None:
    err = _error(make_suite(CASES, evaluators=[{"type": "python", "check": "checks.done"}]))
    assert err.key == "evaluators[0].check" and err.message.startswith("must be 'module:function'")
    assert "e.g. checks:task_done; got 'checks.done'" in err.message


def test_the_suite_file_given_for_its_folder_is_named_as_a_file(make_suite) -> None:
    """load_suite("demo/oloproof.yaml") said "no such directory" of a path that exists."""
    folder = make_suite(CASES)
    err = _error(folder / "oloproof.yaml")
    assert err.message == f"is a file, not a suite folder; give the folder holding oloproof.yaml (e.g. {str(folder)!r})"


def test_a_folder_of_a_suite_given_for_the_suite_names_the_suite_folder(make_suite) -> None:
    """load_suite("demo/runs") (``oloproof run demo/runs``) said only that a suite folder holds oloproof.yaml,
    which the user's suite folder does: a run directory, the folder of runs and another folder of the suite each
    say what they are and name the suite folder; a folder of no suite keeps the plain message."""
    folder = make_suite(CASES)
    run_dir = folder / "runs" / "20260101T000000Z-0a0b0c"
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text("{}", encoding="utf-8")
    (folder / "notes").mkdir()
    assert _error(folder / "runs").message == (f"is the suite's folder of runs, not a suite folder; give the suite "
                                               f"folder {str(folder)!r}, which holds oloproof.yaml")
    assert _error(run_dir).message == (f"is a run directory (it holds manifest.json), not a suite folder; give the "
                                       f"suite folder it was made from, {str(folder)!r} (a run is read by "
                                       "op.load_run, oloproof gate or oloproof report)")
    assert _error(folder / "notes").message == (f"is a folder of the suite in {str(folder)!r}, not a suite folder; "
                                                f"give the suite folder {str(folder)!r}, which holds oloproof.yaml")
    assert _error(folder / "notes").file == str(folder / "notes")
    (folder / "notes" / "inner").mkdir()
    assert _error(folder / "notes" / "inner").message == "file not found; a suite folder holds oloproof.yaml"


def test_a_folder_of_runs_is_named_so_by_its_runs_or_by_its_name(make_suite) -> None:
    """Runs written with ``out=`` into a folder of the suite the user named (``demo/trials``) make it a folder of
    runs, as ``demo/runs`` is; and ``demo/runs`` before any run is there is the folder of runs by its name."""
    folder = make_suite(CASES)
    run_dir = folder / "trials" / "20260101T000000Z-0a0b0c"
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text("{}", encoding="utf-8")
    (folder / "runs").mkdir()
    for runs in (folder / "trials", folder / "runs"):
        assert _error(runs).message == (f"is the suite's folder of runs, not a suite folder; give the suite folder "
                                        f"{str(folder)!r}, which holds oloproof.yaml")


def test_system_module_and_attr_missing(make_suite) -> None:
    folder = make_suite(CASES, system="no_such_module_xyz:Scripted")
    err = _error(folder)
    assert err.key == "system" and "no_such_module_xyz" in str(err)
    folder = make_suite(CASES, system="sysmod:NoSuchClass")
    err = _error(folder)
    assert err.key == "system" and "NoSuchClass" in str(err)


def test_system_module_that_raises(make_suite) -> None:
    folder = make_suite(CASES, system_code="raise RuntimeError('boom at import')\n")
    err = _error(folder)
    assert err.key == "system" and "RuntimeError" in str(err) and "boom at import" in str(err)


def test_yaml_not_yaml_or_not_mapping(make_suite) -> None:
    folder = make_suite(CASES)
    (folder / "oloproof.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    err = _error(folder)
    assert str(folder / "oloproof.yaml") in str(err) and "YAML" in str(err)
    (folder / "oloproof.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    err = _error(folder)
    assert "mapping" in str(err)


def test_missing_folder_and_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such directory"):
        load_suite(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="oloproof.yaml"):
        load_suite(tmp_path / "empty")


def test_case_file_errors_surface(make_suite) -> None:
    folder = make_suite(CASES + [{"id": "c1", "input": {}}])
    with pytest.raises(CaseFileError, match=r"cases.jsonl: line 2: duplicate case id 'c1'"):
        load_suite(folder)


# -- release.yaml ----------------------------------------------------------------------------------


def test_release_unknown_criterion_lists_suite_criteria(make_suite) -> None:
    folder = make_suite(CASES, release={"criteria": {"answer_matches": 0.9, "state_matchez": 0.9}})
    err = _error(folder)
    assert err.file == str(folder / "release.yaml") and err.key == "criteria.state_matchez"
    assert "answer_matches" in str(err) and "state_matches" in str(err)


def test_release_unknown_regression_criterion_is_refused_at_load(make_suite) -> None:
    """``regression: {criteria: [nope]}`` was accepted by run and gate and refused only when two runs
    were compared; it is refused at load like an unknown name under ``criteria``."""
    folder = make_suite(CASES, release={"criteria": {"answer_matches": 0.9},
                                        "regression": {"criteria": ["answer_matches", "state_matchez"]}})
    err = _error(folder)
    assert err.file == str(folder / "release.yaml") and err.key == "regression.criteria"
    assert "'state_matchez' is no criterion of the suite" in str(err) and "state_matches" in str(err)
    ok = make_suite(CASES, release={"criteria": {"answer_matches": 0.9}, "regression": {"criteria": ["state_matches"]}})
    assert load_suite(ok).release.regression.criteria == ["state_matches"]


@pytest.mark.parametrize("threshold", [1.5, -0.1, 90])
def test_release_threshold_outside_unit_interval(make_suite, threshold: float) -> None:
    folder = make_suite(CASES, release={"criteria": {"answer_matches": threshold}})
    err = _error(folder)
    assert err.file == str(folder / "release.yaml") and "criteria" in str(err)
    assert "between 0 and 1" in str(err) and repr(threshold) in str(err)


def test_release_unknown_key_and_bad_method(make_suite) -> None:
    folder = make_suite(CASES, release={"confidense": 0.9})
    err = _error(folder)
    assert err.key == "confidense" and "confidence" in str(err)
    folder = make_suite(CASES, release={"method": "percentile"})
    err = _error(folder)
    assert err.key == "method" and "cluster_t" in str(err)


@pytest.mark.parametrize(("release", "key", "words"), [
    ({"criteria": {"answer_matches": None}}, "criteria", "got null"),
    ({"criteria": {"answer_matches": True}}, "criteria", "got true"),
    ({"confidence": None}, "confidence", "(got null)"),
    ({"method": None}, "method", "(got null)"),
    ({"allow_approximate_methods": "no"}, "allow_approximate_methods", "(got 'no')"),
])
def test_release_values_are_shown_in_the_files_words(make_suite, release: dict, key: str, words: str) -> None:
    # release.yaml says null/true/false; a message saying None/True/False names values the user never wrote
    err = _error(make_suite(CASES, release=release))
    assert err.key == key and words in str(err), str(err)
    assert "None" not in str(err) and "True" not in str(err)


# -- importing the system ----------------------------------------------------------------------------


def test_two_suites_with_the_same_module_name_do_not_collide(make_suite) -> None:
    a = make_suite(CASES, system_code="class Scripted:\n    tag = 'A'\n    def run(self, input): return {}\n")
    b = make_suite(CASES, system_code="class Scripted:\n    tag = 'B'\n    def run(self, input): return {}\n")
    assert load_suite(a).resolve_system().tag == "A"
    assert load_suite(b).resolve_system().tag == "B"


def test_import_system_later(make_suite) -> None:
    folder = make_suite(CASES, system="sysmod:Missing")
    suite = load_suite(folder, import_system_now=False)  # the wrong name only fails when used
    with pytest.raises(ConfigError, match="Missing"):
        suite.resolve_system()


def test_manifest_config_rebuilds_the_config(example_suite: Path) -> None:
    suite = load_suite(example_suite)
    stored = suite.manifest_config()
    assert parse_suite_config(stored["config"]) == suite.config
    assert ReleaseConfig.model_validate(stored["release"]) == suite.release


def test_public_names() -> None:
    assert op.load_suite is load_suite and op.Suite is not None


def test_a_release_criterion_in_another_unicode_form_is_named_by_its_code_points(make_suite) -> None:
    """"café" decomposed in oloproof.yaml and composed in release.yaml: the error named one name twice, the same on
    screen ("criteria.café: no such criterion in the suite; its criteria: café")."""
    decomposed, composed = "cafe\u0301_ok", "caf\u00e9_ok"
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches", "criterion": decomposed}],
                        release={"criteria": {composed: 0.9}})
    err = _error(folder)
    assert err.file == str(folder / "release.yaml")
    assert (f"no such criterion in the suite (the criterion 'cafe\\u0301_ok' is the same letters as 'caf\\xe9_ok' "
            "in another Unicode form; criteria are compared as written: write the name as oloproof.yaml does); its "
            f"criteria: {decomposed}") in str(err), str(err)
    (folder / "release.yaml").write_text("criteria: {cafe_ok: 0.9}\n", encoding="utf-8")  # the accent left out
    assert f"no such criterion in the suite (did you mean {decomposed}?)" in str(_error(folder))


def test_a_key_written_twice_is_an_error(make_suite) -> None:
    folder = make_suite(CASES, release={"criteria": {"answer_matches": 0.9}})
    (folder / "release.yaml").write_text("criteria:\n  answer_matches: 0.9\n  answer_matches: 0.5\n", encoding="utf-8")
    err = _error(folder)
    assert err.file == str(folder / "release.yaml") and "line 3" in str(err) and "'answer_matches'" in str(err)
    (folder / "release.yaml").unlink()
    path = folder / "oloproof.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "name: again\n", encoding="utf-8")
    err = _error(folder)
    assert err.file == str(path) and "'name'" in str(err) and "twice" in str(err)


def test_yaml_anchors_and_merges_still_load(make_suite) -> None:
    folder = make_suite(CASES)
    (folder / "oloproof.yaml").write_text(
        "name: t\nsystem: sysmod:Scripted\nevaluators:\n  - &b {type: state_matches, mode: subset}\n"
        "  - {<<: *b, criterion: whole_state, mode: whole}\n", encoding="utf-8")
    suite = load_suite(folder)
    assert suite.criteria == ["state_matches", "whole_state"]
    assert suite.config.evaluators[1].mode == "whole"  # type: ignore[attr-defined]


def test_an_edited_system_module_is_imported_again(make_suite) -> None:
    folder = make_suite(CASES, system_code="class Scripted:\n    tag = 'old'\n    def run(self, input): return {}\n")
    assert load_suite(folder).resolve_system().tag == "old"
    assert load_suite(folder).resolve_system() is load_suite(folder).resolve_system()  # unchanged: cached
    (folder / "sysmod.py").write_text("class Scripted:\n    tag = 'new'\n    def run(self, input): return {}\n",
                                      encoding="utf-8")
    assert load_suite(folder).resolve_system().tag == "new"


# -- hostile files: a FIFO, a directory or a device where a file belongs --------------------------------------

SPECIAL_WORDS = {"fifo": "is a named pipe (FIFO), not a regular file", "dir": "is a directory, not a regular file",
                 "device": "is a character device, not a regular file"}


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
@pytest.mark.parametrize("which", ["oloproof.yaml", "release.yaml", "cases.jsonl", "labels/t.jsonl"])
def test_a_special_file_is_refused_by_name_never_read(make_suite, which: str, kind: str) -> None:
    """Before: a FIFO cases.jsonl hung load_suite; a FIFO or directory release.yaml was silently ignored."""
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}},
                      metamorphic={"transforms": [{"name": "t", "field": "answer", "template": "{value}!",
                                                   "validity_labels": "labels/t.jsonl", "minimum_validity": 0.5}]})
    target = make_special(root / which, kind)
    with pytest.raises(op.OloproofError) as info:
        bounded(lambda: load_suite(root), 5, unblock=[target])
    message = str(info.value)
    assert str(target) in message and SPECIAL_WORDS[kind] in message, message
    assert "\n" not in message


# -- the failed-step rule, per suite -----------------------------------------------------------------------

RESULTS_SYSTEM = '''
class Tools:
    def run(self, input):
        results = [{"ok": True, "error": None}, {"state": "failed"}, {"error": "boom"}, {"ok": False}]
        return {"steps": [{"tool": "t", "args": {}, "result": r} for r in results], "answer": "ok"}
'''


def test_steps_is_error_follows_the_default_rule_and_the_suites_override(make_suite, tmp_path: Path) -> None:
    default = make_suite(CASES, system="sysmod:Tools", system_code=RESULTS_SYSTEM, evaluators=[])
    run = op.run(default, out=tmp_path / "r1", progress=False)
    assert list(run.steps["is_error"]) == [False, False, True, True]
    custom = make_suite(CASES, system="sysmod:Tools", system_code=RESULTS_SYSTEM, evaluators=[],
                        tool_errors={"error_keys": [], "status_keys": ["state"], "status_values": ["failed"]})
    run = op.run(custom, out=tmp_path / "r2", progress=False)
    assert list(run.steps["is_error"]) == [False, True, False, True]
    assert list(op.load_run(tmp_path / "r2").steps["is_error"]) == [False, True, False, True]  # kept in the run


def test_a_bad_tool_errors_key_names_it(make_suite) -> None:
    folder = make_suite(CASES, tool_errors={"error_key": ["x"]})
    err = _error(folder)
    assert err.key is not None and err.key.startswith("tool_errors") and "error_key" in str(err)


# -- python checks and state-path transforms: config errors ------------------------------------------------

CHECKS = ("def ok(case, initial_state, final_state, trajectory):\n    return True\nNOT_CALLABLE = 3\n"
          "def two(case, final_state):\n    return True\n"
          "def five(case, initial_state, final_state, trajectory, strict):\n    return True\n"
          "def keyword_only(*, case):\n    return True\n"
          "def loose(case, *rest, strict=False):\n    return True\n"
          "async def awaited(case, initial_state, final_state, trajectory):\n    return True\n"
          "async def streamed(case, initial_state, final_state, trajectory):\n    yield True\n"
          "def generated(case, initial_state, final_state, trajectory):\n    yield True\n"
          "class Awaiting:\n    async def __call__(self, case, initial_state, final_state, trajectory):\n"
          "        return True\nawaiting = Awaiting()\n"
          "class Yielding:\n    def __call__(self, case, initial_state, final_state, trajectory):\n"
          "        yield True\nyielding = Yielding()\n"
          "import functools\npartly = functools.partial(awaited)\n")


@pytest.mark.parametrize(("check", "message"), [
    ("nochecks:ok", "cannot import 'nochecks'"),
    ("checks:missing", "has no attribute 'missing'"),
    ("checks:okk", "has no attribute 'okk'; did you mean 'ok'?"),  # a typo named its fix
    ("checks:NOT_CALLABLE", "not a function"),
    ("checks:two", "cannot be called with (case, initial_state, final_state, trajectory): too many positional "
                   "arguments; its signature is two(case, final_state)"),
    ("checks:five", "missing a required argument: 'strict'"),
    ("checks:keyword_only", "too many positional arguments"),
    # called as a plain function, it gave a coroutine or a generator on every case: each missing, no word at load
    ("checks:awaited", "'checks:awaited' is an async def function: a check is called as a plain function and never "
                       "awaited or iterated"),
    ("checks:streamed", "is an async def function"),
    ("checks:generated", "'checks:generated' is a generator function"),
    # an object whose __call__ is one is called the same way, and so is a partial of one
    ("checks:awaiting", "'checks:awaiting' is an async def function"),
    ("checks:yielding", "'checks:yielding' is a generator function"),
    ("checks:partly", "'checks:partly' is an async def function"),
])
def test_a_python_check_that_cannot_be_imported_fails_when_the_suite_loads(make_suite, check: str,
                                                                          message: str) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches"}, {"type": "python", "check": check}])
    (folder / "checks.py").write_text(CHECKS, encoding="utf-8")
    err = _error(folder)
    assert err.key == "evaluators[1].check" and message in err.message


@pytest.mark.parametrize(("check", "message"), [
    ("checks:nope", "has no attribute 'nope'"),        # before: "; did you mean 'np'?", the numpy module
    ("checks:annotation", "has no attribute 'annotation'"),  # before: "; did you mean 'annotations'?"
    ("checks:utilty", "has no attribute 'utilty'; did you mean 'utility'?"),
])
def test_a_misspelt_check_is_only_offered_what_could_be_called(make_suite, check: str, message: str) -> None:
    """A benchmark's checks.py imports numpy as ``np`` and ``annotations``; a typo named either as
    the fix, which load_suite then refused as no function. A system, check or validator is callable, so only
    callables are offered."""
    folder = make_suite(CASES, evaluators=[{"type": "python", "check": check}])
    (folder / "checks.py").write_text("from __future__ import annotations\nimport numpy as np\n\n"
                                      "def utility(case, initial_state, final_state, trajectory):\n"
                                      "    return bool(np.True_)\n", encoding="utf-8")
    err = _error(folder)
    assert err.key == "evaluators[0].check" and err.message.endswith(message), err.message


def test_a_python_check_with_any_signature_that_takes_the_four_arguments_loads(make_suite) -> None:
    """Found at load, not as a `missing` row per case: a check whose signature cannot take the four
    arguments. One that can (``*rest``, a defaulted keyword) loads."""
    folder = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:loose"}])
    (folder / "checks.py").write_text(CHECKS, encoding="utf-8")
    assert load_suite(folder).criteria == ["loose"]


def test_a_python_check_takes_name_or_criterion_not_two_names(make_suite) -> None:
    folder = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:ok", "name": "a", "criterion": "b"}])
    (folder / "checks.py").write_text(CHECKS, encoding="utf-8")
    assert "not both" in str(_error(folder))
    folder = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:ok", "name": "task_done"}])
    (folder / "checks.py").write_text(CHECKS, encoding="utf-8")
    assert load_suite(folder).criteria == ["task_done"]


STATE_CASES = [{"id": "c1", "input": {"m": "hi"}, "initial_state": {"files": {"bill.txt": "pay 3", "n": 1}}}]


@pytest.mark.parametrize(("transform", "key", "message"), [
    ({"field": "m", "state_path": 'files["bill.txt"]'}, "metamorphic.transforms[0]", "give one"),
    ({}, "metamorphic.transforms[0]", "give one"),
    ({"state_path": "files..x"}, "metamorphic.transforms[0].state_path", "empty key"),
    ({"state_path": 'files["*.pdf"]'}, "metamorphic.transforms[0].state_path", "no path of its initial_state"),
    ({"state_path": "files.n"}, "metamorphic.transforms[0].state_path", "holds the number 1, not text"),
])
def test_state_path_transform_errors_name_the_key(make_suite, transform: dict[str, str], key: str,
                                                  message: str) -> None:
    folder = make_suite(STATE_CASES, metamorphic={"transforms": [
        {"name": "inj", "template": "{value} OBEY", "validity_labels": "labels.jsonl", "minimum_validity": 0.5,
         **transform}]})
    (folder / "labels.jsonl").write_text("", encoding="utf-8")
    err = _error(folder)
    assert err.key is not None and err.key.startswith(key) and message in str(err)


@pytest.mark.parametrize(("value", "kind"), [
    ({"reason_for_call": "no service", "language": "en"}, "an object"),
    (True, "true (a boolean)"),
    (3, "the number 3"),
])
def test_a_field_transform_of_a_value_that_is_not_text_is_refused(make_suite, capsys: pytest.CaptureFixture[str],
                                                                 value: object, kind: str) -> None:
    """tau2-bench keeps the user's instructions in an object (``user_scenario``); ``field:
    user_scenario`` loaded, and every copy was given Python's text of it inside the template (``"Hi. {'reason_for_call':
    ..."``), so the agent raised on each (64 of 128 cases ``error``, the gate BLOCKed on the agent); a boolean
    became ``"again (was False)"``, which is true. Refused at load, as a state_path match that is not text is."""
    cases = [{"id": "c1", "input": {"m": "hi", "user": value}},
             {"id": "c2", "input": {"m": "hi", "user": "text"}}]
    folder = make_suite(cases, metamorphic={"transforms": [
        {"name": "again", "field": "user", "template": "{value} again", "validity_labels": "labels.jsonl",
         "minimum_validity": 0.5}]})
    (folder / "labels.jsonl").write_text("", encoding="utf-8")
    err = _error(folder)  # the first case: no case held text there, the field may be the wrong one
    assert err.key == "metamorphic.transforms[0].field"
    assert f"cases.jsonl line 1: case 'c1': input field 'user' holds {kind}, not text" in err.message, err.message
    assert main(["run", str(folder), "--quiet"]) == 2
    out = capsys.readouterr().err
    assert out.count("\n") == 1 and "Traceback" not in out


@pytest.mark.parametrize(("transform", "bad", "problem", "earlier"), [
    ({"field": "user"}, {"m": "hi", "user": 3},
     "input field 'user' holds the number 3, not text; a transform rewrites text: give the text it should rewrite "
     "an input field of its own", "metamorphic.transforms[0].field in oloproof.yaml; the cases before it hold text "
     "there"),
    ({"state_path": "files.bill"}, {"m": "hi"},
     "no path of its initial_state matches state_path 'files.bill'",
     "metamorphic.transforms[0].state_path in oloproof.yaml; the cases before it match it with text"),
])
def test_a_case_a_transform_cannot_rewrite_after_others_could_is_named_by_its_line(
        make_suite, capsys: pytest.CaptureFixture[str], transform: dict[str, str], bad: dict[str, Any],
        problem: str, earlier: str) -> None:
    """Two of a transform's three case errors named oloproof.yaml's key alone: a field that is not
    text, a state_path matching nothing. Where the cases before it suited the transform, the case is the mistake:
    its cases.jsonl line is named, as a case lacking the field is (exit 2, one line, the file unchanged)."""
    state = {"files": {"bill": "pay 3"}}
    cases = [{"id": "c1", "input": {"m": "hi", "user": "text"}, "initial_state": state},
             {"id": "c2", "input": {"m": "hi", "user": "more"}, "initial_state": state},
             {"id": "c3", "input": bad, "initial_state": {"files": {}}}]
    folder = make_suite(cases, metamorphic={"transforms": [
        {"name": "again", "template": "{value} again", "validity_labels": "labels.jsonl", "minimum_validity": 0.5,
         **transform}]})
    (folder / "labels.jsonl").write_text("", encoding="utf-8")
    before = (folder / "cases.jsonl").read_bytes()
    with pytest.raises(CaseFileError) as info:
        load_suite(folder)
    assert type(info.value) is CaseFileError
    assert (info.value.file, info.value.line) == (str(folder / "cases.jsonl"), 3)
    assert str(info.value) == (f"{folder / 'cases.jsonl'}: line 3: case 'c3': {problem} (metamorphic transform "
                               f"'again', {earlier})")
    assert main(["run", str(folder), "--quiet"]) == 2
    out = capsys.readouterr().err
    assert out.count("\n") == 1 and "Traceback" not in out and "line 3: case 'c3'" in out
    assert (folder / "cases.jsonl").read_bytes() == before


# -- a small case file is parsed once; a large one is streamed ---------------------------------------------------

def _counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from oloproof_nb._config import suite as suite_module

    passes: list[int] = []

    def counting(real):  # type: ignore[no-untyped-def]
        def counted(path: Path, *args):  # type: ignore[no-untyped-def]
            passes.append(1)
            yield from real(path, *args)
        return counted

    for name in ("iter_cases", "iter_cases_with_copies"):  # a run's pass, and the validation pass of load_suite
        monkeypatch.setattr(suite_module, name, counting(getattr(suite_module, name)))
    return passes


@pytest.mark.parametrize(("limit", "parses_per_pass"), [(None, 0), (0, 1)])
def test_a_small_case_file_is_parsed_once_and_a_large_one_streamed(make_suite, monkeypatch: pytest.MonkeyPatch,
                                                                  limit: int | None, parses_per_pass: int) -> None:
    from oloproof_nb._config import suite as suite_module

    cases = [{"id": f"c{i}", "input": {"answer": "a", "n": i}, "expected": {"answer": "a"}} for i in range(3)]
    folder = make_suite(cases)
    if limit is not None:  # 0 bytes: every case file is "large"
        monkeypatch.setattr(suite_module, "KEEP_CASES_BYTES", limit)
    passes = _counting_parses(monkeypatch)
    suite = load_suite(folder)
    assert passes == [1]  # the validation pass
    assert (suite.kept_cases is not None) == (limit is None)
    for _ in range(2):
        assert [c.id for c in suite.iter_cases()] == ["c0", "c1", "c2"]
    assert len(passes) == 1 + 2 * parses_per_pass


def test_a_case_file_of_exactly_keep_cases_bytes_is_kept_and_one_byte_less_streams_it(
        make_suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound is inclusive (README: "A case file over 4 MiB is streamed"); the tests before
    set it to 0 or left it at 4 MiB, so ``<`` for ``<=`` survived. Set here to the file's own size."""
    from oloproof_nb._config import suite as suite_module

    folder = make_suite(CASES)
    size = (folder / "cases.jsonl").stat().st_size
    monkeypatch.setattr(suite_module, "KEEP_CASES_BYTES", size)
    assert load_suite(folder).kept_cases is not None
    monkeypatch.setattr(suite_module, "KEEP_CASES_BYTES", size - 1)
    assert load_suite(folder).kept_cases is None


def test_a_case_file_the_system_changes_while_the_suite_loads_is_refused_at_load(make_suite) -> None:
    """A case file changed between its validation and the end of ``load_suite``: a
    system whose module appends a case when it is imported (after the cases were validated) is refused by
    ``load_suite`` itself, naming the case file, not later by a run."""
    appends = ("\nimport pathlib\nwith open(pathlib.Path(__file__).with_name('cases.jsonl'), 'a') as f:\n"
               "    f.write('{\"id\": \"late\", \"input\": {}}\\n')\n")
    folder = make_suite(CASES, system="sysmod:Appends", system_code="class Appends:\n    pass\n" + appends)
    with pytest.raises(CaseFileError) as info:
        load_suite(folder)
    assert str(info.value) == f"{folder / 'cases.jsonl'}: changed while it was being read; load the suite again"


def test_kept_cases_still_refuse_a_case_file_changed_since_loading(make_suite) -> None:
    folder = make_suite([{"id": "c0", "input": {"answer": "a"}}])
    suite = load_suite(folder)
    assert suite.kept_cases is not None
    with (folder / "cases.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "c1", "input": {"answer": "b"}}\n')
    with pytest.raises(CaseFileError, match="changed since the suite was loaded"):
        list(suite.iter_cases())



def test_the_digests_of_a_suite_cover_the_code_of_its_checks_and_validators(make_suite) -> None:
    """``code:<module:function>`` per python check and registered validator: the file of the module named
    and the file that defines the function (checks.py imports it from helpers.py here), both counted by
    hand as sha256 of the sorted file digests."""
    import hashlib

    folder = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:ok"}], validators={"v": "vals:fine"})
    (folder / "helpers.py").write_text("def ok(case, initial_state, final_state, trajectory):\n    return True\n",
                                       encoding="utf-8")
    (folder / "checks.py").write_text("from helpers import ok\n", encoding="utf-8")
    (folder / "vals.py").write_text("def fine(path):\n    return True\n", encoding="utf-8")

    def by_hand(*names: str) -> str:
        files = sorted(hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names)
        return hashlib.sha256("\n".join(files).encode()).hexdigest()

    suite = op.load_suite(folder)
    code = {k: v for k, v in suite.digests.items() if k.startswith("code:")}
    assert code == {"code:checks:ok": by_hand("checks.py", "helpers.py"), "code:vals:fine": by_hand("vals.py")}
    (folder / "vals.py").write_text("def fine(path):\n    return False\n", encoding="utf-8")  # imported again
    edited = op.load_suite(folder)
    assert edited.digests["code:vals:fine"] == by_hand("vals.py") != code["code:vals:fine"]
    assert edited.validators["v"](folder) is False and edited.digests["code:checks:ok"] == code["code:checks:ok"]


def test_a_check_whose_files_changed_after_python_imported_it_is_refused(make_suite) -> None:
    """checks.py imports its function from another file, which is edited and the suite loaded again in the same
    process: Python keeps the first helpers, so the run judged with the old function while the digest (read from
    the files) said new code, and compare matched it with a run that really ran the new one. Refused by name;
    a fresh process loads the new code and its digest."""
    import subprocess
    import sys

    folder = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:ok"}])
    helper = folder / "stale_helpers.py"
    helper.write_text("def ok(case, initial_state, final_state, trajectory):\n    return True\n", encoding="utf-8")
    (folder / "checks.py").write_text("from stale_helpers import ok\n", encoding="utf-8")
    # (a module name of its own: Python keeps one `helpers` per process, whichever suite folder imported it)
    first = op.load_suite(folder).checks["checks:ok"]
    assert op.load_suite(folder).checks["checks:ok"] is first  # nothing changed: the same import, accepted
    helper.write_text("def ok(case, initial_state, final_state, trajectory):\n    return False\n", encoding="utf-8")
    err = _error(folder)
    assert err.key == "evaluators[0].check" and err.message.startswith(
        f"{helper} changed since this process imported checks:ok from it") and "restart the process" in err.message
    fresh = subprocess.run([sys.executable, "-c", "import sys, oloproof_nb as op; s = op.load_suite(sys.argv[1]); "
                            "print(s.checks['checks:ok'](None, None, None, None))", str(folder)],
                           capture_output=True, text=True, timeout=60, check=False)
    assert fresh.stdout.strip() == "False", fresh.stderr
    # an unrelated edit of checks.py itself (imported again, its function still the unchanged helper's) is fine,
    # as is the same function reached through a second module of the suite: neither is stale
    other = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:ok"},
                                          {"type": "python", "check": "more:ok", "name": "again"}])
    (other / "shared_fn.py").write_text("def ok(case, initial_state, final_state, trajectory):\n    return True\n",
                                        encoding="utf-8")
    (other / "checks.py").write_text("from shared_fn import ok\n", encoding="utf-8")
    (other / "more.py").write_text("from shared_fn import ok  # the same function, another module\n",
                                   encoding="utf-8")
    assert set(op.load_suite(other).checks) == {"checks:ok", "more:ok"}
    (other / "checks.py").write_text("from shared_fn import ok\n\ndef unrelated():\n    pass\n", encoding="utf-8")
    assert op.load_suite(other).checks["checks:ok"] is op.load_suite(other).checks["more:ok"]


def test_a_suites_repr_is_one_short_line(example_suite: Path) -> None:
    """A notebook cell ending in `suite` printed the dataclass: every case and the whole config, 22 KB."""
    text = repr(load_suite(example_suite))
    assert text == ("Suite('stateful-agent', 48 cases (24 sources + 24 derived), system='refund_desk:RefundDesk', "
                    "criteria=[answer_matches, state_matches, other_order_untouched, refunds_follow_policy, "
                    "same_state_under_injected, recovers_from_error_at_issue_refund], "
                    f"root='{example_suite.resolve()}')")


def test_a_second_copy_of_a_suite_whose_check_is_a_package_is_refused(make_suite, tmp_path: Path) -> None:
    """Python imports a package name once per process: the second copy of a suite whose check lives in a package
    ran the first copy's code and recorded the first copy's digest. Refused, naming where the module came from."""
    import shutil

    first = make_suite(CASES, evaluators=[{"type": "python", "check": "pkgcheck_copy.rules:done"}])
    (first / "pkgcheck_copy").mkdir()
    (first / "pkgcheck_copy" / "__init__.py").write_text("", encoding="utf-8")
    (first / "pkgcheck_copy" / "rules.py").write_text(
        "def done(case, initial_state, final_state, trajectory):\n    return True\n", encoding="utf-8")
    assert set(op.load_suite(first).checks) == {"pkgcheck_copy.rules:done"}
    second = tmp_path / "second-copy"
    shutil.copytree(first, second)
    (second / "pkgcheck_copy" / "rules.py").write_text(
        "def done(case, initial_state, final_state, trajectory):\n    return False\n", encoding="utf-8")
    err = _error(second)
    assert err.key == "evaluators[0].check" and err.message.startswith("module 'pkgcheck_copy.rules' is already "
                                                                       "imported from ")
    assert str(first.resolve()) in err.message and "restart the process" in err.message
    assert set(op.load_suite(first).checks) == {"pkgcheck_copy.rules:done"}  # the first copy still loads


def test_what_a_check_runs_is_found_through_partials_classes_and_symlinks(make_suite, tmp_path: Path) -> None:
    """Stale and foreign code: a functools.partial's digest left out the wrapped function's
    file; a validator that is a class, edited in place, was never stale; a check package symlinked into the suite
    folder was refused as another folder's copy; a copy of a suite whose checks.py imports from its own helpers
    ran the first copy's helpers."""
    import functools
    import hashlib
    import os
    import shutil

    def digest(*files: Path) -> str:
        return hashlib.sha256("\n".join(sorted(hashlib.sha256(f.read_bytes()).hexdigest() for f in files)).encode()
                              ).hexdigest()

    # a partial: the module named and the file defining the wrapped function
    folder = make_suite(CASES, evaluators=[{"type": "python", "check": "pchecks:done"}])
    (folder / "pimpl_fn.py").write_text("def impl(flag, case, initial_state, final_state, trajectory):\n"
                                        "    return flag\n", encoding="utf-8")
    (folder / "pchecks.py").write_text("import functools\nfrom pimpl_fn import impl\n"
                                       "done = functools.partial(impl, True)\n", encoding="utf-8")
    assert isinstance(op.load_suite(folder).checks["pchecks:done"], functools.partial)
    assert op.load_suite(folder).digests["code:pchecks:done"] == digest(folder / "pchecks.py", folder / "pimpl_fn.py")

    # a class validator edited in place (imported from another file: the same class object)
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches"}], validators={"v": "cvals:Check"})
    (folder / "cls_val_impl.py").write_text("class Check:\n    def __init__(self, path):\n        pass\n",
                                            encoding="utf-8")
    (folder / "cvals.py").write_text("from cls_val_impl import Check\n", encoding="utf-8")
    op.load_suite(folder)
    (folder / "cls_val_impl.py").write_text("class Check:\n    def __init__(self, path):\n        raise ValueError\n",
                                            encoding="utf-8")
    assert _error(folder).key == "validators.v"

    # a check package symlinked into the suite folder is the suite's own
    shared = tmp_path / "shared" / "symlinked_pkg"
    shared.mkdir(parents=True)
    (shared / "__init__.py").write_text("", encoding="utf-8")
    (shared / "core.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return True\n",
                                    encoding="utf-8")
    folder = make_suite(CASES, evaluators=[{"type": "python", "check": "symlinked_pkg.core:done"}])
    os.symlink(shared, folder / "symlinked_pkg")
    assert set(op.load_suite(folder).checks) == {"symlinked_pkg.core:done"}

    # a copy whose checks.py (imported per folder) takes its function from its own helpers module
    first = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:done"}])
    (first / "copyhelp.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return True\n",
                                       encoding="utf-8")
    (first / "checks.py").write_text("from copyhelp import done\n", encoding="utf-8")
    op.load_suite(first)
    second = tmp_path / "second"
    shutil.copytree(first, second)
    assert set(op.load_suite(second).checks) == {"checks:done"}  # a byte-identical copy runs the same code
    (second / "copyhelp.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return False\n",
                                        encoding="utf-8")
    err = _error(second)
    assert err.key == "evaluators[0].check" and err.message.startswith("module 'copyhelp' is already imported from")


def test_decorators_helpers_and_library_named_folders(make_suite, tmp_path: Path) -> None:
    """A decorator's wrapper runs too (its file was left out of the digest and of the stale check
    once the check was followed to its innermost function); a check whose body calls another module's function
    ran a first copy's module unrefused; a data folder named like a library (yaml/) or a suite module shadowing
    one (json.py) was refused as another copy of the suite."""
    import functools
    import hashlib
    import shutil

    folder = make_suite(CASES, evaluators=[{"type": "python", "check": "deco_checks:done"}])
    wrapper = ("import functools\ndef flip(fn):\n    @functools.wraps(fn)\n    def w(*a):\n        return {}\n"
               "    return w\n")
    (folder / "deco_layer.py").write_text(wrapper.format("fn(*a)"), encoding="utf-8")
    (folder / "deco_checks.py").write_text("from deco_layer import flip\n@flip\n"
                                           "def done(case, initial_state, final_state, trajectory):\n"
                                           "    return True\n", encoding="utf-8")
    files = sorted(hashlib.sha256((folder / f).read_bytes()).hexdigest() for f in ("deco_checks.py", "deco_layer.py"))
    assert op.load_suite(folder).digests["code:deco_checks:done"] == hashlib.sha256(
        "\n".join(files).encode()).hexdigest()
    (folder / "deco_layer.py").write_text(wrapper.format("not fn(*a)"), encoding="utf-8")
    assert _error(folder).message.startswith(f"{folder / 'deco_layer.py'} changed since this process imported")

    first = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:done"}])
    (first / "body_helpers.py").write_text("def score():\n    return True\n", encoding="utf-8")
    (first / "checks.py").write_text("from body_helpers import score\n"
                                     "def done(case, initial_state, final_state, trajectory):\n"
                                     "    return score()\n", encoding="utf-8")
    op.load_suite(first)
    second = tmp_path / "second"
    shutil.copytree(first, second)
    (second / "body_helpers.py").write_text("def score():\n    return False\n", encoding="utf-8")
    assert _error(second).message.startswith("module 'body_helpers' is already imported from")

    # a helper of the suite decorated by a library's functools.wraps decorator: the wrapper's __module__ is the
    # helper's, its code the library's; that is no copy of the suite's helpers (it was refused)
    lib = tmp_path / "teamlib"
    lib.mkdir()
    (lib / "team_deco.py").write_text("import functools\ndef logged(fn):\n    @functools.wraps(fn)\n"
                                      "    def w(*a):\n        return fn(*a)\n    return w\n", encoding="utf-8")
    decorated = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:done"}])
    (decorated / "deco_helpers.py").write_text("from team_deco import logged\n@logged\ndef score():\n"
                                               "    return True\n", encoding="utf-8")
    (decorated / "checks.py").write_text("from deco_helpers import score\n"
                                         "def done(case, initial_state, final_state, trajectory):\n"
                                         "    return score()\n", encoding="utf-8")
    import sys

    sys.path.insert(0, str(lib))
    try:
        assert set(op.load_suite(decorated).checks) == {"checks:done"}
    finally:
        sys.path.remove(str(lib))

    data = make_suite(CASES, evaluators=[{"type": "answer_matches"}], validators={"y": "yvals:load",
                                                                                  "j": "jvals:load"})
    (data / "yaml").mkdir()
    (data / "yaml" / "fixture.yaml").write_text("a: 1\n", encoding="utf-8")
    (data / "json.py").write_text("# the suite's own json helpers, shadowing the standard library's\n",
                                  encoding="utf-8")
    (data / "yvals.py").write_text("import functools, yaml\nload = functools.partial(yaml.safe_load)\n",
                                   encoding="utf-8")
    (data / "jvals.py").write_text("import json\nload = json.loads\n", encoding="utf-8")
    assert set(op.load_suite(data).validators) == {"y", "j"}
    assert isinstance(op.load_suite(data).validators["y"], functools.partial)


def test_a_template_that_is_only_value_is_refused(make_suite) -> None:
    """``template: "{value}"`` made every copy equal its source: same_state held for any deterministic agent,
    unflagged (a relation that cannot fail). Any change around it is a transform ({value}{value} too)."""
    transform = {"name": "t", "field": "answer", "template": "{value}", "validity_labels": "labels/t.jsonl",
                 "minimum_validity": 0.5}
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}], metamorphic={"transforms": [transform]})
    with pytest.raises(op.ConfigError, match=r"metamorphic\.transforms\[0\]\.template: '\{value\}' leaves the "
                                             r"text as it is"):
        load_suite(root)
    for template in ("{value}{value}", " {value}"):
        parse_suite_config({"name": "x", "system": "m:S", "metamorphic": {"transforms": [{**transform,
                                                                                        "template": template}]}})


@pytest.mark.parametrize("kind", ["dangling", "loop"])
@pytest.mark.parametrize("which", ["oloproof.yaml", "release.yaml", "labels/t.jsonl", "cases.jsonl"])
def test_a_link_to_no_file_is_refused_by_name(make_suite, which: str, kind: str) -> None:
    """A release.yaml linked to a file that is gone (or to itself) was read as no release.yaml: the run gated
    nothing and exited 1 ("nothing was gated"); oloproof.yaml or a label file so linked was "not found", the case
    file "cannot read the case file: No such file or directory". A dangling link says where it points."""
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}},
                      metamorphic={"transforms": [{"name": "t", "field": "answer", "template": "{value}!",
                                                   "validity_labels": "labels/t.jsonl", "minimum_validity": 0.5}]})
    (root / "labels").mkdir(exist_ok=True)
    target = root / which
    if target.exists():
        target.unlink()
    target.symlink_to(target.name if kind == "loop" else root / "gone" / target.name)
    with pytest.raises(op.ConfigError) as info:
        load_suite(root)
    # a dangling link names where it points, in the words every file read gives it (files.dangling_link)
    words = ("is a symbolic link that leads to no file (Too many levels of symbolic links)" if kind == "loop"
             else f"is a dangling symbolic link (it points to '{root / 'gone' / target.name}', which does not exist)")
    assert str(info.value) == f"{target}: {words}; point it at the file, or remove it"


def test_a_missing_label_file_says_an_empty_one_lets_the_suite_run_to_read_the_copies(make_suite) -> None:
    """The refusal told to write one judgement per copy, but a copy is read in a run (run.panel), and no
    run loads without the file: a new user had no way in. It now says an empty file runs the suite, every pair
    unlabeled, which holds."""
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}],
                      metamorphic={"transforms": [{"name": "t", "field": "answer", "template": "{value}!",
                                                   "validity_labels": "labels/t.jsonl", "minimum_validity": 0.5}]})
    err = _error(root)
    assert err.key == "metamorphic.transforms[0].validity_labels" and "\n" not in str(err)
    assert str(err).endswith('"valid": true|false}, or create it empty to run the suite first and read the copies '
                             "(run.panel(case_id)): an empty file leaves every pair unlabeled")
    (root / "labels").mkdir()
    (root / "labels" / "t.jsonl").write_bytes(b"")
    run = op.run(load_suite(root), progress=False)
    assert op.validity(run).loc[0, "labeled"] == 0 and run.panel("c1~t") is not None


def test_a_typo_in_cases_names_the_suite_file_and_the_key(make_suite) -> None:
    """``cases: case.jsonl`` gave "case.jsonl: cannot read the case file: No such file or
    directory", naming neither oloproof.yaml nor the key to fix."""
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}])
    text = (root / "oloproof.yaml").read_text()
    (root / "oloproof.yaml").write_text(text.replace("cases: cases.jsonl", "cases: case.jsonl"))
    err = _error(root)
    assert err.key == "cases" and str(err).startswith(str(root / "oloproof.yaml"))
    assert f"file {root / 'case.jsonl'} not found" in str(err) and "\n" not in str(err)


def test_a_flag_is_no_number_of_seconds_and_a_word_is_no_flag() -> None:
    """``case_timeout_s: true`` was a timeout of 1 s, and ``allow_approximate_methods: "yes"`` (or 1) turned
    approximate intervals on without a boolean."""
    from oloproof_nb._config.release import ReleaseConfig

    with pytest.raises(op.ConfigError, match="case_timeout_s: must be a number of seconds, not true"):
        parse_suite_config({"name": "x", "system": "m:S", "case_timeout_s": True})
    assert parse_suite_config({"name": "x", "system": "m:S", "case_timeout_s": 5}).case_timeout_s == 5.0
    for word in ("yes", 1, "true"):
        with pytest.raises(ValueError, match="allow_approximate_methods"):
            ReleaseConfig.model_validate({"allow_approximate_methods": word})
    assert ReleaseConfig.model_validate({"allow_approximate_methods": True}).allow_approximate_methods


@pytest.mark.parametrize("source_id", ["c1~t", "c1~t\u200b", "c1~t "])
def test_a_source_id_that_reads_as_a_derived_one_is_refused(make_suite, source_id: str) -> None:
    """A case written as the copy's id (or as it, with a zero-width space or a trailing space) stood beside the
    derived copy."""
    cases = [*CASES, {"id": source_id, "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}],
                      metamorphic={"transforms": [{"name": "t", "field": "answer", "template": "{value}!",
                                                   "validity_labels": "labels/t.jsonl", "minimum_validity": 0.5}]})
    err = _error(root)
    assert err.key == "metamorphic.transforms[0].name" and "the derived case id 'c1~t'" in str(err)
    assert ("(as " in str(err)) == (source_id != "c1~t")


@pytest.mark.parametrize("copied", [" c1", "c1\u200b"])
def test_a_derived_id_that_reads_as_a_source_id_is_refused(make_suite, copied: str) -> None:
    """The other way round: the copy of a case whose id has a leading space (or a zero-width space) reads as a
    case of the file, " c1~t" as "c1~t"; both were kept, two rows shown as one id in every table."""
    cases = [{"id": copied, "input": {"answer": "ok"}, "expected": {"answer": "ok"}},
             {"id": "c1~t", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}],
                      metamorphic={"transforms": [{"name": "t", "field": "answer", "template": "{value}!",
                                                   "validity_labels": "labels/t.jsonl", "minimum_validity": 0.5}]})
    err = _error(root)
    assert err.key == "metamorphic.transforms[0].name"
    assert f"the derived case id {copied + '~t'!r} (as 'c1~t') is already a case id in cases.jsonl" in str(err)


@pytest.mark.parametrize(("metamorphic", "key", "message"), [
    ("none", "metamorphic", "Input should be a mapping (got 'none'); allowed keys: transforms"),
    ({"transforms": ["injected"]}, "metamorphic.transforms[0]",
     "Input should be a mapping (got 'injected'); allowed keys: name, field, state_path, template, validity_labels, "
     "minimum_validity"),
])
def test_a_section_given_a_value_that_is_no_mapping_lists_its_keys(make_suite, metamorphic: object, key: str,
                                                                   message: str) -> None:
    """A new user's first hour: ``metamorphic: none`` and a transform written as its name were refused in
    pydantic's words ("Input should be a valid dictionary or instance of Metamorphic", "... of Transform"),
    naming classes the user never wrote and not the keys to write."""
    folder = make_suite(CASES)
    _edit_yaml(folder / "oloproof.yaml", metamorphic=metamorphic)
    err = _error(folder)
    assert (err.file, err.key) == (str(folder / "oloproof.yaml"), key)
    assert str(err) == f"{folder / 'oloproof.yaml'}: {key}: {message}"


def test_a_release_file_given_that_does_not_exist_is_an_error_not_no_release(make_suite, tmp_path: Path) -> None:
    """``load_suite(folder, release=path)`` with nothing at ``path``: an error naming it (read as no release.yaml,
    the run would gate nothing)."""
    folder = make_suite(CASES)
    missing = tmp_path / "elsewhere" / "release.yaml"
    with pytest.raises(ConfigError) as info:
        load_suite(folder, release=missing)
    assert str(info.value).startswith(f"{missing}: ") and "file not found" in str(info.value)
    assert load_suite(folder).release is None  # the folder's own, absent: no release (the documented default)


def test_a_label_for_a_source_the_case_file_does_not_hold_is_refused_at_its_line(make_suite) -> None:
    """A label file's ids are ``<source>~<transform>`` of the suite's own sources: ``ghost~inj`` (no source
    ``ghost``) is refused naming the label file and its line."""
    from oloproof_nb.errors import LabelFileError

    transform = {"name": "inj", "field": "q", "template": "{value} now", "validity_labels": "inj.jsonl",
                 "minimum_validity": 0.5}
    folder = make_suite([{"id": "c1", "input": {"q": "a"}}, {"id": "c2", "input": {"q": "b"}}],
                        evaluators=[{"type": "answer_matches"}], metamorphic={"transforms": [transform]})
    (folder / "inj.jsonl").write_text('{"case_id": "c1~inj", "valid": true}\n'
                                      '{"case_id": "ghost~inj", "valid": true}\n', encoding="utf-8")
    with pytest.raises(LabelFileError) as info:
        load_suite(folder)
    assert str(info.value).startswith(f"{folder / 'inj.jsonl'}: line 2: case id 'ghost~inj' is not a derived case")
    (folder / "inj.jsonl").write_text('{"case_id": "c2~inj", "valid": false}\n', encoding="utf-8")
    assert load_suite(folder).labels["inj"][0]["case_id"] == "c2~inj"


def test_a_label_of_a_case_removed_since_names_the_case_and_a_label_of_another_transform_its_file(make_suite) -> None:
    """Both transforms' pairs labeled, then case c2 taken out of the case file: the label files still judge
    ``c2~inj``, refused naming the case the suite no longer has (its id has the form of a label id); a judgement of
    the other transform's copy written into this file names that transform."""
    from oloproof_nb.errors import LabelFileError

    transforms = [{"name": name, "field": "q", "template": "{value} " + name, "validity_labels": f"{name}.jsonl",
                   "minimum_validity": 0.5} for name in ("inj", "polite")]
    folder = make_suite([{"id": "c1", "input": {"q": "a"}}], evaluators=[{"type": "answer_matches"}],
                        metamorphic={"transforms": transforms})
    (folder / "polite.jsonl").write_text("", encoding="utf-8")
    (folder / "inj.jsonl").write_text('{"case_id": "c1~inj", "valid": true}\n'
                                      '{"case_id": "c2~inj", "valid": true}\n', encoding="utf-8")
    with pytest.raises(LabelFileError) as info:
        load_suite(folder)
    assert str(info.value) == (f"{folder / 'inj.jsonl'}: line 2: case id 'c2~inj' is not a derived case of transform "
                               "'inj' of this suite; the suite has no case 'c2' for it to copy (a case removed or "
                               "renamed since it was labeled? take its line out)")
    (folder / "inj.jsonl").write_text('{"case_id": "c1~polite", "valid": true}\n', encoding="utf-8")
    with pytest.raises(LabelFileError) as info:
        load_suite(folder)
    assert "it names case 'c1' under transform 'polite', not 'inj': this file judges the copies of 'inj' " \
           "('c1~inj')" in str(info.value)


@pytest.mark.parametrize("alike", ["kept ", "kept\u200b", "ke\u00adpt", "kept\u202e"])
def test_a_criterion_name_that_reads_as_another_is_refused(make_suite, alike: str) -> None:
    """``kept`` beside ``kept `` (or ``kept`` + U+200B) made two rows of the gate that read
    as one name, one of them free to pass. Refused at the second, naming the first; names that read apart stay."""
    evaluators = [{"type": "answer_matches", "criterion": "kept"}, {"type": "answer_matches", "criterion": alike}]
    err = _error(make_suite(CASES, evaluators=evaluators))
    assert err.key == "evaluators[1].criterion", err.key
    assert err.message.startswith(f"criterion {alike!r} reads as the criterion 'kept' at evaluators[0]: they differ "
                                  "only in invisible characters"), err.message
    apart = [{"type": "answer_matches", "criterion": "kept"}, {"type": "answer_matches", "criterion": "Kept"}]
    assert [ev.name for ev in load_suite(make_suite(CASES, evaluators=apart)).config.evaluators] == ["kept", "Kept"]


@pytest.mark.parametrize(("settings", "key"), [
    ({"evaluators": [{"type": "state_matches", "tolerance": True}]}, "evaluators[0].tolerance"),
    ({"metamorphic": {"transforms": [{"name": "t", "field": "m", "template": "{value}!", "validity_labels": "l.jsonl",
                                      "minimum_validity": False}]}}, "metamorphic.transforms[0].minimum_validity"),
])
def test_a_yaml_boolean_is_no_tolerance_and_no_minimum_validity(settings: dict[str, Any], key: str) -> None:
    """``tolerance: yes`` (YAML 1.1 reads yes and on as true) was an absolute tolerance of 1.0,
    so a refund off by 0.99 passed ``state_matches``; ``minimum_validity: no`` was a floor of 0."""
    with pytest.raises(op.ConfigError, match=rf"{re.escape(key)}: must be .*, not (true|false) \(YAML reads yes"):
        parse_suite_config({"name": "x", "system": "m:S", **settings})


@pytest.mark.parametrize(("settings", "key", "what", "text"), [
    ({"case_timeout_s": "30"}, "case_timeout_s", "a number of seconds", "30"),
    ({"epochs": "2"}, "epochs", "a whole number of epochs", "2"),  # refused before, as "a valid integer"
    ({"evaluators": [{"type": "state_matches", "tolerance": "0.5"}]}, "evaluators[0].tolerance",
     "an absolute tolerance (a number)", "0.5"),
    ({"metamorphic": {"transforms": [{"name": "t", "field": "m", "template": "{value}!", "validity_labels": "l.jsonl",
                                      "minimum_validity": "0.9"}]}}, "metamorphic.transforms[0].minimum_validity",
     "a share between 0 and 1", "0.9"),
])
def test_a_quoted_number_of_oloproof_yaml_is_refused(settings: dict[str, Any], key: str, what: str,
                                                     text: str) -> None:
    """A quoted number (``case_timeout_s: "30"``, ``tolerance: "0.5"``) was taken as the number, while
    ``epochs: "2"`` and a quoted threshold of release.yaml were refused: every number of oloproof.yaml is strict,
    refused in one line naming the file and the key, and what goes there."""
    with pytest.raises(op.ConfigError) as err:
        parse_suite_config({"name": "x", "system": "m:S", **settings})
    assert str(err.value) == (f"oloproof.yaml: {key}: must be {what}, not the text '{text}' (write the number "
                              "without quotes)")
    assert parse_suite_config({"name": "x", "system": "m:S", "case_timeout_s": 30}).case_timeout_s == 30.0



def test_a_folder_given_as_dot_or_dot_dot_is_placed_by_where_it_is(make_suite, monkeypatch) -> None:
    """``oloproof run ..`` in a suite folder was called "a folder of the suite in '.'" (the parent of ``..`` read
    as ``.``, which holds oloproof.yaml), and ``oloproof run .`` in its runs folder was given the plain message."""
    folder = make_suite(CASES)
    (folder / "runs").mkdir()
    monkeypatch.chdir(folder)
    assert _error(Path("..")).message == "file not found; a suite folder holds oloproof.yaml"
    monkeypatch.chdir(folder / "runs")
    assert _error(Path(".")).message == (f"is the suite's folder of runs, not a suite folder; give the suite folder "
                                         f"{str(folder)!r}, which holds oloproof.yaml")
