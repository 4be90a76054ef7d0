"""``op.gate(run, criteria=..., confidence=..., method=...)`` merge into release.yaml; ``release=`` replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy.stats import beta
from statsmodels.stats.proportion import proportion_confint

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

# 10 unclustered cases; answers right in 8 (c0–c7), so answer_matches is 8 of 10 and the others 10 of 10
CASES = [{"id": f"c{i}", "input": {"answer": "done" if i < 8 else "oops",
                                   "writes": [{"path": ["acct", "n"], "value": i}]},
          "initial_state": {"acct": {"n": -1}, "other": {"k": i}},
          "expected": {"answer": "done", "state": {"acct": {"n": i}}}} for i in range(10)]
EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches"},
              {"type": "state_unchanged", "criterion": "other_kept", "paths": ["other"]}]
RELEASE = {"confidence": 0.95, "criteria": {"answer_matches": 0.5, "state_matches": 0.5, "other_kept": 0.5}}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    import yaml
    from conftest import SCRIPTED_SYSTEM, write_jsonl

    root = tmp_path_factory.mktemp("overrides")
    (root / "sysmod.py").write_text(SCRIPTED_SYSTEM, encoding="utf-8")
    write_jsonl(root / "cases.jsonl", CASES)
    (root / "oloproof.yaml").write_text(yaml.safe_dump({"name": "o", "system": "sysmod:Scripted",
                                                       "cases": "cases.jsonl", "evaluators": EVALUATORS}))
    (root / "release.yaml").write_text(yaml.safe_dump(RELEASE))
    return op.run(root, progress=False)


def _thresholds(g: op.Gate) -> dict[str, float]:
    return {k: (None if v != v else v) for k, v in g.table.set_index("criterion")["threshold"].items()}


def test_criteria_merge_and_release_replaces(run: op.Run) -> None:
    merged = op.gate(run, criteria={"answer_matches": 0.9})
    assert _thresholds(merged) == {"answer_matches": 0.9, "state_matches": 0.5, "other_kept": 0.5}
    replaced = op.gate(run, release={"criteria": {"answer_matches": 0.9}})
    assert _thresholds(replaced) == {"answer_matches": 0.9, "state_matches": None, "other_kept": None}
    both = op.gate(run, release={"criteria": {"answer_matches": 0.9}}, criteria={"other_kept": 0.4})
    assert _thresholds(both) == {"answer_matches": 0.9, "state_matches": None, "other_kept": 0.4}
    assert _thresholds(op.gate(run)) == {"answer_matches": 0.5, "state_matches": 0.5, "other_kept": 0.5}


def test_confidence_and_method_override(run: op.Run) -> None:
    row = op.gate(run, confidence=0.9).table.set_index("criterion").loc["answer_matches"]
    assert row["ci_low"] == pytest.approx(beta.ppf(0.05, 8, 3), abs=1e-12)  # Clopper–Pearson, 90%
    assert row["ci_high"] == pytest.approx(beta.ppf(0.95, 9, 2), abs=1e-12)
    wilson = op.gate(run, method="wilson").table.set_index("criterion").loc["answer_matches"]
    assert wilson["method"] == "wilson"
    low, high = proportion_confint(8, 10, alpha=0.05, method="wilson")
    assert (wilson["ci_low"], wilson["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    # a method for the other kind of run was silently ignored (the gate said wilson's run got cluster_t)
    with pytest.raises(ConfigError, match=r"'cluster_bootstrap' is used by no criterion of this run: every "
                                          r"criterion gets an unclustered interval \(one case per cluster\); use "
                                          r"clopper_pearson or wilson"):
        op.gate(run, method="cluster_bootstrap")


def test_a_method_for_the_other_kind_of_run_is_an_error(example_suite: Path, tmp_path: Path) -> None:
    clustered = op.run(op.load_suite(example_suite), out=tmp_path / "r", progress=False)
    assert op.gate(clustered, method="cluster_bootstrap").release.method == "cluster_bootstrap"
    with pytest.raises(ConfigError, match=r"^gate\(criteria=, confidence=, method=\).*method.*'wilson' is used by "
                                          r"no criterion of this run: every criterion gets a clustered interval"):
        op.gate(clustered, method="wilson")
    assert op.gate(clustered, release={"unclustered_method": "wilson"}).verdict == "BLOCK"  # a file may hold both


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"criteria": {"nope": 0.5}}, "criteria.nope"),
    ({"criteria": {"answer_matches": 1.5}}, "criteria"),
    ({"confidence": 1.5}, "confidence"),
    ({"method": "jackknife"}, "method"),
])
def test_bad_overrides_are_config_errors_naming_the_key(run: op.Run, kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError) as info:
        op.gate(run, **kwargs)  # type: ignore[arg-type]
    assert words in str(info.value) and str(info.value).startswith("gate(")


def test_a_confidence_given_as_text_is_refused_as_a_threshold_given_as_text_is(run: op.Run) -> None:
    """``op.gate(run, confidence="0.95")`` was taken as 0.95 while ``criteria={"a": "0.9"}`` was
    refused; both are refused now, in one line naming the arguments and the key."""
    with pytest.raises(ConfigError) as info:
        op.gate(run, confidence="0.95")  # type: ignore[arg-type]
    assert str(info.value) == ("gate(criteria=, confidence=, method=): confidence: must be a confidence level, e.g. "
                               "0.95, not the text '0.95' (write the number without quotes)")
    with pytest.raises(ConfigError, match=r"threshold of 'answer_matches' must be a number between 0 and 1, got "):
        op.gate(run, criteria={"answer_matches": "0.9"})  # type: ignore[dict-item]


def test_with_epochs_a_method_counts_where_a_criterion_uses_it(tmp_path: Path) -> None:
    """24 one-case clusters, 3 epochs: a pass^3 criterion is unclustered (one value per case, one case per
    cluster) and gets Clopper–Pearson or Wilson, while a mean over the epochs is clustered. The check took the run
    as clustered, refused wilson (the method the pass^3 row used) and let cluster_t through unused."""
    from _epoch_systems import flaky_run

    run = flaky_run(tmp_path)
    only = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}}
    row = op.gate(run, release=only, method="wilson").table.set_index("criterion").loc["answer_matches"]
    assert row["method"] == "wilson"
    with pytest.raises(ConfigError, match=r"'cluster_t' is used by no criterion of this run: every criterion gets "
                                          r"an unclustered interval"):
        op.gate(run, release=only, method="cluster_t")
    mean = {"criteria": {"answer_matches": 0.5}, "allow_approximate_methods": True}  # the rows of the epochs
    assert op.gate(run, release=mean, method="cluster_t").table["method"].tolist() == ["cluster_t"]
    with pytest.raises(ConfigError, match=r"'wilson' is used by no criterion of this run"):
        op.gate(run, release=mean, method="wilson")


@pytest.mark.parametrize("confidence", [0.05, 0.49999, 1e-300])
def test_a_confidence_below_one_half_is_refused_as_alpha(run: op.Run, tmp_path: Path, confidence: float) -> None:
    """``confidence: 0.05`` (alpha written for 0.95) was accepted: the gate printed a 5% interval and passed a
    criterion a 95% interval blocks. Refused below 0.5, at load and as an override; 0.5 itself is a confidence."""
    with pytest.raises(ConfigError, match=r"confidence: .* is below 0\.5: it is the confidence level of the "
                                          r"intervals \(e\.g\. 0\.95\), not alpha \(0\.05\)"):
        op.gate(run, confidence=confidence)
    release = tmp_path / "release.yaml"
    release.write_text(f"confidence: {confidence!r}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=str(release)):
        op.gate(run, release=release)
    assert op.gate(run, confidence=0.5).release.confidence == 0.5  # the boundary is allowed


@pytest.mark.parametrize("confidence", [0, -1, 1, 1.5, float("nan"), float("inf")])
def test_every_confidence_outside_the_range_names_the_range(run: op.Run, confidence: float) -> None:
    """``confidence: 0`` said "greater than 0" and ``1`` "less than 1" (pydantic's bounds), so a
    user who then tried 0.3 met a second, different refusal. Every value outside says what is allowed."""
    with pytest.raises(ConfigError, match=r"confidence: .*; allowed: 0\.5 ≤ confidence < 1$"):
        op.gate(run, confidence=confidence)
    assert op.gate(run, confidence=0.999).release.confidence == 0.999


def test_an_unknown_release_key_offers_only_the_keys_of_release_yaml(tmp_path: Path) -> None:
    """The list of allowed keys offered ``reductions``, the model's own split of ``criteria``, which no document
    names."""
    from oloproof_nb._config.release import parse_release

    with pytest.raises(ConfigError) as info:
        parse_release({"confidance": 0.9}, tmp_path / "release.yaml")
    assert "allowed: confidence, allow_approximate_methods" in str(info.value)
    assert "reductions" not in str(info.value) and "regression" in str(info.value)


def test_a_gate_weaker_than_the_runs_own_names_each_weaker_setting(run: op.Run) -> None:
    """A release given with a lower threshold, a lower confidence and a criterion left out passed a
    run its own release.yaml blocks, and nothing said the gate was weaker. The verdict stays the one the settings
    give (the 50% Clopper–Pearson lower bound of 8/10 is 0.69 ≥ 0.4); Gate.relaxed names what was loosened."""
    from oloproof_nb._display.terminal import exit_line

    assert op.gate(run).verdict == "BLOCK"  # answer_matches 8/10: 0.444 < 0.5 at 95%
    weak = op.gate(run, release={"confidence": 0.5, "criteria": {"answer_matches": 0.4, "state_matches": 0.5}})
    row = weak.table.set_index("criterion").loc["answer_matches"]
    assert row["ci_low"] == pytest.approx(beta.ppf(0.25, 8, 3), abs=1e-12) and row["verdict"] == "PASS"
    assert weak.verdict == "PASS"
    assert weak.relaxed == ("confidence 0.95 → 0.5", "criteria.answer_matches 0.5 → 0.4",
                            "criteria.other_kept 0.5 → not gated")
    assert weak.weaker_than == "the run's own release settings"
    assert exit_line(weak) == ("gate: PASS — exit 0: all 2 gated criteria pass, by 3 settings weaker than the run's "
                               "own release settings; 1 more is reported, not gated")
    assert "  gated with the settings given: 3 settings weaker than the run's own release settings: confidence " \
           "0.95 → 0.5, criteria.answer_matches 0.5 → 0.4, criteria.other_kept 0.5 → not gated" \
           in repr(weak).splitlines()
    assert "3 settings weaker than the run&#39;s own release settings" in weak._repr_html_()
    # the keyword overrides too; a method for the kind of run it is
    assert op.gate(run, method="wilson").relaxed == ('unclustered_method "clopper_pearson" → "wilson"',)
    assert op.gate(run, criteria={"answer_matches": 0.3}).relaxed == ("criteria.answer_matches 0.5 → 0.3",)


def test_settings_tightened_or_deciding_nothing_here_are_not_called_weaker(run: op.Run) -> None:
    """A stricter gate cannot turn a BLOCK into a PASS; min_clusters and allow_approximate_methods decide nothing
    on a run of independent cases (they would be noise under a PASS)."""
    assert op.gate(run).relaxed == () and op.gate(run).weaker_than == ""
    assert op.gate(run, criteria={"answer_matches": 0.9}, confidence=0.99).relaxed == ()
    loose_but_idle = {**RELEASE, "min_clusters": 2, "allow_approximate_methods": True}
    assert op.gate(run, release=loose_but_idle).relaxed == ()


def test_a_run_made_with_a_looser_release_yaml_than_the_suites_now_says_so(tmp_path: Path) -> None:
    """release.yaml loosened, the suite run, the file put back: `op.gate(run)` uses the stored
    settings (the run is the evidence) and PASSes; the drift warning went to stderr, the PASS read as the suite's.
    Gate.relaxed now names the stored settings weaker than the file as it is now."""
    import yaml
    from conftest import SCRIPTED_SYSTEM, write_jsonl

    (tmp_path / "sysmod.py").write_text(SCRIPTED_SYSTEM, encoding="utf-8")
    write_jsonl(tmp_path / "cases.jsonl", CASES)
    (tmp_path / "oloproof.yaml").write_text(yaml.safe_dump({"name": "o", "system": "sysmod:Scripted",
                                                           "cases": "cases.jsonl", "evaluators": EVALUATORS}))
    (tmp_path / "release.yaml").write_text(yaml.safe_dump({**RELEASE, "confidence": 0.5,
                                                           "criteria": {**RELEASE["criteria"], "answer_matches": 0.4}}))
    made = op.run(tmp_path, progress=False)
    assert op.gate(made).relaxed == ()  # the file still says what the run was made with
    (tmp_path / "release.yaml").write_text(yaml.safe_dump(RELEASE))
    with pytest.warns(UserWarning, match="differs from the release settings run"):
        g = op.gate(made)
    assert g.verdict == "PASS"
    assert g.relaxed == ("confidence 0.95 → 0.5", "criteria.answer_matches 0.5 → 0.4")
    # the warning is kept for a report of the gate, the one line it said
    assert g.drift == (f"{tmp_path / 'release.yaml'} differs from the release settings run {made.run_id} was made "
                       "with (confidence 0.5 → 0.95, criteria.answer_matches 0.4 → 0.5); this gate uses the run's; "
                       "to gate with the file as it is now, give it: op.gate(run, release=...) or oloproof gate "
                       "--release",)
    assert g.weaker_than == f"{tmp_path / 'release.yaml'} as it is now"
    with pytest.warns(UserWarning):
        assert f"  gated with the settings stored with the run: 2 settings weaker than {tmp_path / 'release.yaml'} " \
               "as it is now: confidence 0.95 → 0.5, criteria.answer_matches 0.5 → 0.4" in repr(op.gate(made))
    given_file = op.gate(made, release=tmp_path / "release.yaml")
    assert given_file.relaxed == () and given_file.drift == ()  # the file given: stricter than the run's, no drift
    with pytest.warns(UserWarning, match="differs from the release settings run"):
        given = op.gate(made, criteria={"answer_matches": 0.4})  # the run's own threshold, given: none weaker than
    # them, so compared with the file as it is now, as the run's own are
    assert given.relaxed == ("confidence 0.95 → 0.5", "criteria.answer_matches 0.5 → 0.4")
    assert given.weaker_than == f"{tmp_path / 'release.yaml'} as it is now"


def test_settings_given_as_loose_as_a_runs_loosened_own_are_weaker_than_the_file_now(tmp_path: Path) -> None:
    """release.yaml loosened (confidence 0.5, answer_matches 0.4), the suite run, the file put back.
    `oloproof gate RUN` says the run's own settings are weaker than the file as it is now; given the loosened file
    (`--release loose.yaml`, a dict, or the keywords), the gate compared it with the run's own only, found them
    equal, and said `gate: PASS — exit 0: all 3 gated criteria pass` with no word and no drift warning. 8 of 10
    answers pass: the 50% Clopper–Pearson lower bound is 0.69 ≥ 0.4 (PASS); at 95% it is 0.44 < 0.5 (BLOCK)."""
    import warnings

    import yaml

    from oloproof_nb._display.terminal import exit_line

    loose = {**RELEASE, "confidence": 0.5, "criteria": {**RELEASE["criteria"], "answer_matches": 0.4}}
    made = op.run(_suite(tmp_path, loose), progress=False)
    (tmp_path / "release.yaml").write_text(yaml.safe_dump(RELEASE))
    (tmp_path / "loose.yaml").write_text(yaml.safe_dump(loose))
    assert op.gate(made, release=tmp_path / "release.yaml").verdict == "BLOCK"
    now = f"{tmp_path / 'release.yaml'} as it is now"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # given settings: no drift warning, so the note is all the reader gets
        for given in (op.gate(made, release=tmp_path / "loose.yaml"), op.gate(made, release=loose)):
            assert given.verdict == "PASS"
            assert given.table.set_index("criterion").loc["answer_matches", "ci_low"] == pytest.approx(
                beta.ppf(0.25, 8, 3), abs=1e-12)
            assert given.relaxed == ("confidence 0.95 → 0.5", "criteria.answer_matches 0.5 → 0.4")
            assert given.weaker_than == now
            assert exit_line(given) == ("gate: PASS — exit 0: all 3 gated criteria pass, by 2 settings weaker "
                                        f"than {now}")
            assert f"  gated with the settings given: 2 settings weaker than {now}: confidence 0.95 → 0.5, " \
                   "criteria.answer_matches 0.5 → 0.4" in repr(given).splitlines()
            assert "gated with the settings given: 2 settings weaker than" in given._repr_html_()
    # the keywords alone: the run's own settings changed by them are given ones too (the drift
    # warning is said, as the run's own decide what the keywords leave)
    with pytest.warns(UserWarning, match="differs from the release settings run"):
        keywords = op.gate(made, confidence=0.5, criteria=loose["criteria"])
    assert keywords.verdict == "PASS" and keywords.weaker_than == now
    assert f"  gated with the settings given: 2 settings weaker than {now}: confidence 0.95 → 0.5, " \
           "criteria.answer_matches 0.5 → 0.4" in repr(keywords).splitlines()


def test_an_easier_reduction_than_the_runs_own_is_named(tmp_path: Path) -> None:
    """pass@3 for the run's pass^3 (24 cases, 4 wrong in one epoch of 3): 24 of 24 pass, so a threshold raised to
    0.85 PASSes (Clopper–Pearson 0.025^(1/24) = 0.858), where pass^3 (20 of 24) gives no PASS."""
    from _epoch_systems import flaky_run

    run = flaky_run(tmp_path)
    own = op.gate(run, criteria={"answer_matches": 0.85})
    assert own.table.loc[0, "verdict"] == "INSUFFICIENT_EVIDENCE" and own.relaxed == ()
    easier = op.gate(run, release={"criteria": {"answer_matches": {"threshold": 0.85, "reduce": "pass@3"}}})
    assert easier.table.loc[0, "ci_low"] == pytest.approx(0.025 ** (1 / 24), abs=1e-12)
    assert easier.verdict == "PASS"
    assert easier.relaxed == ('reductions.answer_matches "pass^3" → "pass@3"',)


def _suite(root: Path, release: dict[str, object] | None) -> Path:
    """The suite of :data:`CASES` in ``root``, with ``release`` as its release.yaml (None: no file)."""
    import yaml
    from conftest import SCRIPTED_SYSTEM, write_jsonl

    (root / "sysmod.py").write_text(SCRIPTED_SYSTEM, encoding="utf-8")
    write_jsonl(root / "cases.jsonl", CASES)
    (root / "oloproof.yaml").write_text(yaml.safe_dump({"name": "o", "system": "sysmod:Scripted",
                                                       "cases": "cases.jsonl", "evaluators": EVALUATORS}))
    if release is not None:
        (root / "release.yaml").write_text(yaml.safe_dump(release))
    return root


def test_a_run_made_without_release_yaml_is_not_called_weaker_than_a_file_written_since(tmp_path: Path) -> None:
    """A run made with no release.yaml is gated with the defaults (no criterion: BLOCK no_criteria);
    once a file was written, `oloproof gate RUN` printed 'gated with the settings stored with the run: 3 settings
    weaker than …/release.yaml as it is now: criteria.answer_matches 0.5 → not gated, …' under the line saying
    there was none when the run started: the run stored no settings, so nothing is weaker than the file."""
    import yaml

    made = op.run(_suite(tmp_path, None), progress=False)
    assert made.release is None
    (tmp_path / "release.yaml").write_text(yaml.safe_dump(RELEASE))
    with pytest.warns(UserWarning, match="differs from the release settings run"):  # the drift is still told
        g = op.gate(made)
    assert g.verdict == "BLOCK" and g.reason.startswith("no_criteria")
    assert (g.relaxed, g.weaker_than) == ((), "")


def test_a_run_made_without_release_yaml_gated_with_weaker_settings_given_is_told_so(tmp_path: Path) -> None:
    """A run made with release.yaml moved aside, gated after the file was put back with settings given that are
    weaker than it (`oloproof gate RUN --release weak.yaml`), said `gate: PASS — exit 0: all 3 gated criteria pass`
    and nothing more, where a run made with the file emptied (`criteria: {}`) is told its settings are weaker than
    the file as it is now. Settings given are weighed against the file whether or not the run stored any."""
    import yaml

    made = op.run(_suite(tmp_path, None), progress=False)
    assert made.release is None
    strict = {**RELEASE, "criteria": {"answer_matches": 0.9, "state_matches": 0.9, "other_kept": 0.9}}
    (tmp_path / "release.yaml").write_text(yaml.safe_dump(strict))
    weak = {**RELEASE, "criteria": {"answer_matches": 0.3, "state_matches": 0.3, "other_kept": 0.3}}
    g = op.gate(made, release=weak)
    # 8 of 10 answers: the exact 95% lower bound clears 0.3, not 0.9
    assert g.table.set_index("criterion").loc["answer_matches", "ci_low"] == pytest.approx(beta.ppf(0.025, 8, 3))
    assert g.verdict == "PASS"
    assert g.relaxed == ("criteria.answer_matches 0.9 → 0.3", "criteria.other_kept 0.9 → 0.3",
                         "criteria.state_matches 0.9 → 0.3")
    assert g.weaker_than == f"{tmp_path / 'release.yaml'} as it is now"
    # criteria= given alone (merged into the defaults the run was made with) is weighed the same way
    with pytest.warns(UserWarning, match="differs from the release settings run"):  # merged into the run's (none)
        merged = op.gate(made, criteria={"answer_matches": 0.3})
    assert merged.relaxed == ("criteria.answer_matches 0.9 → 0.3", "criteria.other_kept 0.9 → not gated",
                              "criteria.state_matches 0.9 → not gated")


def test_a_criterion_the_run_does_not_judge_is_not_called_left_out(tmp_path: Path) -> None:
    """The suite's release.yaml now gating a criterion the run never judged (an evaluator added since)
    made `op.gate(run)` say the run's settings were weaker ('criteria.new_check 0.9 → not gated'), though no
    verdict of the run can depend on it (the file given with release= is refused: no such criterion in the run).
    A threshold lowered in the same file is still named."""
    import yaml

    made = op.run(_suite(tmp_path, RELEASE), progress=False)
    now = {**RELEASE, "criteria": {**RELEASE["criteria"], "answer_matches": 0.6, "new_check": 0.9}}
    (tmp_path / "release.yaml").write_text(yaml.safe_dump(now))
    with pytest.warns(UserWarning, match="new_check null → 0.9"):
        g = op.gate(made)
    assert g.relaxed == ("criteria.answer_matches 0.6 → 0.5",)
    assert g.weaker_than == f"{tmp_path / 'release.yaml'} as it is now"


def test_a_gate_reads_the_suites_release_yaml_once(run: op.Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """`op.gate(run)` read the suite folder's release.yaml twice (the drift warning, then Gate.relaxed);
    once is enough for both. Given settings, it is read once too (Gate.relaxed compares them with it)."""
    import oloproof_nb._config.release as release_module

    read: list[Path] = []
    real = release_module.read_yaml

    def counted(path: Path) -> object:
        read.append(Path(path))
        return real(path)

    monkeypatch.setattr(release_module, "read_yaml", counted)
    op.gate(run)
    assert [p.name for p in read] == ["release.yaml"]
    read.clear()
    op.gate(run, release=RELEASE)  # given settings are compared with the file too
    assert [p.name for p in read] == ["release.yaml"]


def test_a_clustered_run_is_called_weaker_only_in_the_settings_its_intervals_use(tmp_path: Path) -> None:
    """By hand from the run's own release settings (min_clusters 20, no approximate methods,
    answer_matches pass^3): gated with the mean of the epochs (a clustered interval), min_clusters 2 and approximate
    methods allowed, the three are weaker; unclustered_method wilson decides no row (none is unclustered), and
    method cluster_bootstrap none either (the bootstrap decides at no number of clusters): neither is named."""
    from _epoch_systems import flaky_run

    run = flaky_run(tmp_path)
    given = {"criteria": {"answer_matches": 0.5}, "allow_approximate_methods": True, "min_clusters": 2,
             "unclustered_method": "wilson", "method": "cluster_bootstrap"}
    g = op.gate(run, release=given)
    assert g.table["method"].tolist() == ["cluster_t"]
    assert g.relaxed == ("allow_approximate_methods false → true", "min_clusters 20 → 2",
                         'reductions.answer_matches "pass^3" → "mean"')
