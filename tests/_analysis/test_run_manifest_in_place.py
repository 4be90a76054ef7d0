"""An edit in place of ``run.manifest`` never reaches a release decision.

``run.config``, ``run.release`` and ``run.labels`` refuse to be set and give copies (``test_gate_release_model.py``,
``test_run_settings_in_place.py``), and a
frame set in the session (``run.verdicts = frame``) makes the gate ``edited_frames``. ``run.manifest`` was still the
Run's own writable model (12 MB at 100,000 cases: a copy each read costs about half a second), and the gate, a
comparison and a baseline check read it: each edit below turned the gate's BLOCK into a PASS of a run its folder does
not hold, where ``oloproof gate`` of the same folder BLOCKs. Every run here holds 40 cases that all pass
``answer_matches`` (threshold 0.8): the exact 95% lower bound of 40 of 40 is 0.025^(1/40) = 0.912 by hand, so a
whole run PASSes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _metamorphic_systems import all_valid, case, mm_suite, transform
from conftest import SCRIPTED_SYSTEM

import oloproof_nb as op

CASES = [{"id": f"c{i:02d}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(40)]
#: pooled, each case is in two runs: its cluster holds two rows, so the interval is an approximate one
RELEASE = {"allow_approximate_methods": True, "criteria": {"answer_matches": 0.8}}
EDITED = "edited_frames: run.manifest.{} edited in this session, so the table is of a run that is not the one its"


def _suite(make_suite: Callable[..., Path], **config: object) -> Path:
    return make_suite(CASES, evaluators=[{"type": "answer_matches"}], release=RELEASE, **config)


def _on_disk(directory: Path, keep: int | None = None, **manifest: object) -> None:
    """The run folder changed as a stopped or damaged run leaves it: its journal cut to ``keep`` lines, keys of
    its manifest.json set (None: removed)."""
    if keep is not None:
        journal = directory / "cases.jsonl"
        journal.write_text("".join(journal.read_text(encoding="utf-8").splitlines(keepends=True)[:keep]),
                           encoding="utf-8")
    stored = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    for key, value in manifest.items():
        if value is None:
            stored.pop(key)
        else:
            stored[key] = value
    (directory / "manifest.json").write_text(json.dumps(stored), encoding="utf-8")


def test_an_unfinished_run_given_a_finished_at_in_place_is_no_release_decision(make_suite: Callable[..., Path],
                                                                              tmp_path: Path) -> None:
    """A run stopped before it wrote that it finished (all 40 records there): ``unfinished``, BLOCK, and a
    comparison no better than INSUFFICIENT_EVIDENCE. ``run.manifest.finished_at = …`` PASSed, and compared
    NO_REGRESSION; now ``edited_frames``, naming the field. Put back, the edit is gone."""
    root = _suite(make_suite)
    base = op.run(op.load_suite(root), out=tmp_path / "base", progress=False)
    stopped = op.run(op.load_suite(root), out=tmp_path / "stopped", progress=False).directory
    _on_disk(stopped, finished_at=None)
    run = op.load_run(stopped)
    g = op.gate(run)
    assert (g.table.loc[0, "passed"], g.table.loc[0, "verdict"]) == (40, "PASS")
    assert g.verdict == "BLOCK" and g.reason.startswith("unfinished: the run did not finish (40 of 40 cases")
    run.manifest.finished_at = base.manifest.finished_at
    g = op.gate(run)
    assert (g.table.loc[0, "verdict"], g.verdict) == ("PASS", "BLOCK")
    assert g.reason.startswith(EDITED.format("finished_at")), g.reason
    assert run.finished and run.manifest_edits == ("manifest.finished_at",)
    cmp = op.compare(base, run)
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE" and "edited_frames: run.manifest.finished_at" in cmp.reason
    run.manifest.finished_at = None  # the value as read: no edit
    assert run.manifest_edits == () and op.gate(run).reason.startswith("unfinished")
    assert op.gate(base).verdict == "PASS" and base.manifest_edits == ()


def test_a_run_that_lost_records_given_its_count_in_place_is_no_release_decision(make_suite: Callable[..., Path],
                                                                                tmp_path: Path) -> None:
    """A finished run whose journal lost 10 of its 40 records: ``incomplete``, BLOCK (30 of 30 alone would PASS:
    0.025^(1/30) = 0.884 by hand). ``run.manifest.n_cases = 30`` PASSed, and so did an ``inspect_logs`` key put in
    its stored configuration (an Inspect AI log is counted when read, so the gate skipped the count)."""
    lost = op.run(op.load_suite(_suite(make_suite)), out=tmp_path / "lost", progress=False).directory
    _on_disk(lost, keep=30)
    run = op.load_run(lost)
    assert op.gate(run).reason.startswith("incomplete: the run finished with 40 case runs, but its cases.jsonl "
                                          "holds 30")
    run.manifest.n_cases = 30
    g = op.gate(run)
    assert (g.table.loc[0, "n"], g.table.loc[0, "verdict"], g.verdict) == (30, "PASS", "BLOCK")
    assert g.reason.startswith(EDITED.format("n_cases")), g.reason
    again = op.load_run(lost)
    again.manifest.suite_config.config["inspect_logs"] = ["x.eval"]
    assert again.manifest_edits == ("manifest.suite_config.config",)
    assert op.gate(again).reason.startswith(EDITED.format("suite_config.config"))


def test_a_run_of_fewer_epochs_given_the_suites_in_place_is_no_release_decision(make_suite: Callable[..., Path],
                                                                               tmp_path: Path) -> None:
    """A suite of ``epochs: 2`` run with ``epochs=1``: ``fewer_epochs``, BLOCK. ``run.manifest.epochs = 2`` with
    ``n_cases`` halved (2 × 20 = the 40 records) PASSed."""
    run = op.run(op.load_suite(_suite(make_suite, epochs=2)), out=tmp_path / "once", epochs=1, progress=False)
    assert op.gate(run).reason.startswith("fewer_epochs: the run tried each case once")
    run.manifest.epochs, run.manifest.n_cases = 2, 20
    g = op.gate(run)
    assert g.verdict == "BLOCK" and run.manifest_edits == ("manifest.n_cases", "manifest.epochs")
    assert g.reason.startswith("edited_frames: run.manifest.n_cases, run.manifest.epochs edited"), g.reason


def test_a_pooled_run_whose_runs_system_was_made_one_in_place_is_no_release_decision(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Runs of two versions of the system pooled: ``mixed_systems``, BLOCK. The second run's ``system_version`` and
    ``code_fingerprint`` set to the first's, through ``pooled.runs[1].manifest``, PASSed 80 of 80."""
    first = op.run(op.load_suite(_suite(make_suite)), out=tmp_path / "v1", progress=False).directory
    other = _suite(make_suite, system_code=SCRIPTED_SYSTEM.replace('"scripted-1"', '"scripted-2"'))
    second = op.run(op.load_suite(other), out=tmp_path / "v2", progress=False).directory
    pooled = op.load_runs([first, second])
    assert op.gate(pooled).reason.startswith("mixed_systems: ")
    one, two = (member.manifest for member in pooled.runs)
    two.system_version, two.code_fingerprint = one.system_version, one.code_fingerprint
    g = op.gate(pooled)
    assert (g.table.loc[0, "passed"], g.verdict) == (80, "BLOCK")
    assert pooled.manifest_edits == ("runs[1].manifest.system_version", "runs[1].manifest.code_fingerprint")
    assert g.reason.startswith("edited_frames: run.runs[1].manifest.system_version, "
                               "run.runs[1].manifest.code_fingerprint edited in this session"), g.reason


def test_the_manifest_cannot_be_set_and_any_edit_of_it_is_named(make_suite: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    """``run.manifest = …`` is refused; an edit of a stored list or dict (the findings of ``load_suite``, the digests
    the drift and check comparisons read, the labels) is named as one of a field; the folder read again (``op.load_run``
    or ``write_columnar``, which takes its manifest again) is the run's own, PASS."""
    run = op.run(op.load_suite(_suite(make_suite)), out=tmp_path / "run", progress=False)
    assert op.gate(run).verdict == "PASS"
    with pytest.raises(op.OloproofError, match=r"^run\.manifest is the manifest\.json the run was made with"):
        run.manifest = run.manifest.model_copy(update={"n_cases": 40})
    run.manifest.suite_config.vacuous["answer_matches"] = ["cannot fail"]
    run.manifest.digests.clear()
    run.manifest.suite_config.labels["t"] = []
    assert run.manifest_edits == ("manifest.digests", "manifest.suite_config.labels",
                                  "manifest.suite_config.vacuous")
    assert op.gate(run).verdict == "BLOCK"
    assert op.load_run(run.directory).manifest_edits == () and op.gate(op.load_run(run.directory)).verdict == "PASS"
    run.write_columnar()
    assert run.manifest_edits == () and run.manifest.suite_config.vacuous == {}
    assert op.gate(run).verdict == "PASS"


def test_a_baseline_whose_manifest_was_edited_in_place_is_refused(make_suite: Callable[..., Path],
                                                                 tmp_path: Path) -> None:
    """A run of the agent given as the baseline is refused (it is no do-nothing run); its
    ``manifest.system_version`` set to ``oloproof-noop`` made the gate take it, and every criterion "passed when
    idle" (noop_rate 1.0: the agent's own 40 of 40). Refused now, naming the edit."""
    root = _suite(make_suite)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    idle = op.load_run(op.run(op.load_suite(root), out=tmp_path / "agent", progress=False).directory)
    with pytest.raises(op.OloproofError, match=r"agent: not a do-nothing baseline \(its system is scripted-1"):
        op.gate(run, baseline=idle)
    idle.manifest.system_version = op.baseline(root, out=tmp_path / "idle", progress=False).run.system_version
    with pytest.raises(op.OloproofError, match=r"agent: the baseline's run\.manifest\.system_version was edited in "
                                               r"this session, so it is not the do-nothing run its folder holds"):
        op.gate(run, baseline=idle)


def test_a_labeled_run_as_read_has_no_manifest_edit_and_its_suite_config_replaced_is_named(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The labels, left out of the copy as read (the Run keeps its own), are compared with the Run's own,
    so a run whose manifest holds labels (3 judgements, by its manifest.json) is not edited when read, and its gate
    is a release decision; ``run.manifest.suite_config`` set to something else is named as that field."""
    ids = ["c1", "c2", "c3"]
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t")],
                    [{"type": "metamorphic_relation", "relation": "same_output", "transform": "t"}],
                    {"t": all_valid(ids, "t")})
    directory = op.run(op.load_suite(root), out=tmp_path / "run", progress=False).directory
    stored = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))["suite_config"]["labels"]
    assert [len(judgements) for judgements in stored.values()] == [3]
    run = op.load_run(directory)
    assert run.manifest_edits == ()
    assert not op.gate(run).reason.startswith("edited_frames"), op.gate(run).reason
    run.manifest.suite_config = None  # type: ignore[assignment]  # pydantic checks no assignment
    assert run.manifest_edits == ("manifest.suite_config",)
