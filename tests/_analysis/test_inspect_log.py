"""op.from_inspect on a real Inspect AI log made with the mockllm model (see tests/_inspect_task.py).

Every expected number is counted by hand from the task's table in tests/_inspect_task.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _inspect_logs import of_mode, refund_desk, shared_logs, write_logs

import oloproof_nb as op
from oloproof_nb._analysis.inspect_files import is_inspect_log
from oloproof_nb.cli import main

#: Four samples are few clusters: the gate is allowed to decide on them here.
LOOSE = {"min_clusters": 2, "allow_approximate_methods": True}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The log (.eval in its folder, and the same as .json), made once per session in a child process (read only:
    a test edits a copy)."""
    with shared_logs(tmp_path_factory, "refund-desk", refund_desk) as root:
        (eval_file,) = sorted((root / "logs").glob("*.eval"))
        yield {"dir": root / "logs", "eval": eval_file, "json": root / "json" / "refund_desk.json", "root": root}


@pytest.fixture(scope="module")
def run(logs: dict[str, Path]) -> op.Run:
    return op.from_inspect(logs["dir"], state_key="world")


def _by_case(frame: pd.DataFrame, column: str) -> dict[tuple[str, int], object]:
    return {(str(c), int(e)): v for c, e, v in zip(frame["case_id"], frame["epoch"], frame[column], strict=True)}


def test_cases_one_row_per_sample_and_epoch(run: op.Run) -> None:
    cases = run.cases
    assert len(cases) == 8 and run.n_cases == 8
    assert sorted(set(cases["case_id"])) == ["3", "s1", "s2", "s4"]  # the int id 3 as text
    assert cases["epoch"].dtype == "int64" and sorted(cases["epoch"]) == [1, 1, 1, 1, 2, 2, 2, 2]
    assert run.manifest.epochs == run.epochs == 2  # compare refuses runs of different epochs by this count
    status = _by_case(cases, "status")
    assert status[("s4", 1)] == status[("s4", 2)] == "error"
    assert [status[(c, e)] for c in ("s1", "s2", "3") for e in (1, 2)] == ["completed"] * 6
    assert "refund service down" in str(_by_case(cases, "error")[("s4", 1)])
    assert _by_case(cases, "cluster")[("s2", 2)] == "s2"  # each sample its own cluster by default
    assert _by_case(cases, "n_tool_calls")[("3", 2)] == 0 and _by_case(cases, "trajectory_length")[("3", 2)] == 1
    assert _by_case(cases, "trajectory_length")[("s1", 1)] == 3
    assert _by_case(cases, "target")[("s1", 1)] == "refunded"
    assert _by_case(cases, "input")[("s1", 1)] == "Please refund order ord-001."
    assert _by_case(cases, "metadata")[("3", 1)]["topic"] == "shipping"
    assert run.system_version == "mockllm/model" and run.finished


def test_sample_digest_is_the_hash_of_id_input_target_metadata(run: op.Run) -> None:
    body = {"id": "s1", "input": "Please refund order ord-001.", "target": "refunded",
            "metadata": {"topic": "billing", "order_id": "ord-001",
                         "initial_state": {"orders": {"ord-001": {"status": "delivered"}}}}}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digests = _by_case(run.cases, "digest")
    assert digests[("s1", 1)] == digests[("s1", 2)] == hashlib.sha256(text.encode()).hexdigest()
    assert len({digests[(c, 1)] for c in ("s1", "s2", "3", "s4")}) == 4
    assert _by_case(run.snapshots, "case_digest")[("s1", 2)] == digests[("s1", 1)]


def test_steps_hold_tool_calls_with_arguments_and_results(run: op.Run) -> None:
    steps = run.steps
    calls = steps[steps["kind"] == "tool_call"]
    assert len(calls) == 7  # s1 ×2, s2 ×2, 3 epoch 1, s4 ×2 (its call raised: no result)
    s2 = calls[(calls["case_id"] == "s2") & (calls["epoch"] == 1)].iloc[0]
    assert s2["tool"] == "issue_refund" and s2["args"] == {"order_id": "ord-999"}
    assert s2["result"] == {"ok": False, "error": "no such order"} and bool(s2["is_error"])
    s1 = calls[calls["case_id"] == "s1"].iloc[0]
    assert s1["result"] == {"ok": True} and not bool(s1["is_error"])
    messages = steps[(steps["case_id"] == "s1") & (steps["epoch"] == 1) & (steps["kind"] == "message")]
    assert list(messages["role"]) == ["assistant", "assistant"] and messages["content"].iloc[-1] == "refunded"
    assert "epoch: 1" not in set(steps["content"].dropna())  # system messages are not steps


def test_verdicts_map_the_scores_by_hand(run: op.Run) -> None:
    v = run.verdicts
    assert set(v["evaluator"]) == {"inspect_scorer"} and run.criteria == ["match", "world_refunded"]
    counts = v.groupby(["criterion", "verdict"]).size().to_dict()
    assert counts == {("match", "pass"): 6, ("match", "missing"): 2,
                      ("world_refunded", "pass"): 3, ("world_refunded", "fail"): 3,
                      ("world_refunded", "missing"): 2}
    world = v[v["criterion"] == "world_refunded"]
    assert _by_case(world, "verdict")[("3", 2)] == "fail" and _by_case(world, "verdict")[("3", 1)] == "pass"
    assert _by_case(world, "reason")[("s2", 1)] == "score 0.0"


def test_snapshots_and_changes_from_the_store(run: op.Run) -> None:
    snaps = _by_case(run.snapshots, "state")
    assert len(snaps) == 8
    assert snaps[("s1", 1)] == {"orders": {"ord-001": {"status": "refunded"}}}
    assert snaps[("3", 2)] == {"orders": {"ord-003": {"status": "delivered"}}}
    changes = run.changes
    assert sorted(zip(changes["case_id"], changes["epoch"], strict=True)) == [("3", 1), ("s1", 1), ("s1", 2)]
    assert set(changes["path"]) == {"orders.ord-001.status", "orders.ord-003.status"}
    assert set(changes["before"]) == {"delivered"} and set(changes["after"]) == {"refunded"}


def test_no_state_key_no_snapshots(logs: dict[str, Path]) -> None:
    plain = op.from_inspect(logs["eval"])
    assert plain.snapshots.empty and plain.changes.empty and not plain.cases["has_state"].any()


def test_json_log_reads_the_same(run: op.Run, logs: dict[str, Path]) -> None:
    other = op.from_inspect(logs["json"], state_key="world")
    cols = ["case_id", "epoch", "criterion", "verdict"]
    assert other.verdicts[cols].equals(run.verdicts[cols])
    assert list(other.cases["digest"]) == list(run.cases["digest"])


def test_an_eval_archive_is_read_in_batches_not_one_sample_at_a_time(logs: dict[str, Path], tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect's one-sample reader parses the archive's central directory again for every sample,
    so reading a log one sample at a time grew with the square of its samples (4,000 samples: about 145 s;
    ``python benchmarks/inspect_logs.py``). An .eval is read in batches, one directory parse each, in Inspect's
    order; the frames equal those read one at a time, also with batches smaller than the log."""
    import inspect_ai.log

    from oloproof_nb._analysis import inspect_log

    def unbatched(*args: Any, **kwargs: Any) -> Any:
        raise IndexError("as for a sample missing from the archive: every batch is read one sample at a time")

    with monkeypatch.context() as m:
        m.setattr(inspect_ai.log, "read_eval_log_samples_by_id", unbatched)
        one_at_a_time = op.from_inspect(logs["eval"], state_key="world")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an .eval archive read one sample at a time")

    monkeypatch.setattr(inspect_ai.log, "read_eval_log_samples", refuse)
    monkeypatch.setattr(inspect_ai.log, "read_eval_log_sample", refuse)
    for batch in (3, 128):  # 8 sample epochs: batches of 3, 3, 2, and one batch of all
        monkeypatch.setattr(inspect_log, "BATCH", batch)
        batched = op.from_inspect(logs["eval"], state_key="world")
        for name in ("cases", "steps", "verdicts", "snapshots", "changes"):
            pd.testing.assert_frame_equal(getattr(batched, name), getattr(one_at_a_time, name), obj=name)


def test_cluster_from_a_metadata_key(logs: dict[str, Path]) -> None:
    topic = op.from_inspect(logs["eval"], cluster="topic")
    assert _by_case(topic.cases, "cluster") == {("s1", 1): "billing", ("s1", 2): "billing", ("s2", 1): "billing",
                                                ("s2", 2): "billing", ("3", 1): "shipping", ("3", 2): "shipping",
                                                ("s4", 1): "shipping", ("s4", 2): "shipping"}
    assert set(topic.verdicts["cluster"]) == {"billing", "shipping"}
    with pytest.raises(op.OloproofError, match="cluster='nope'.*topic"):
        op.from_inspect(logs["eval"], cluster="nope")
    with pytest.raises(op.OloproofError, match="state_key='nope'.*world"):
        op.from_inspect(logs["eval"], state_key="nope")


def test_score_map_and_threshold(logs: dict[str, Path]) -> None:
    with pytest.warns(UserWarning, match="criterion world_refunded's 6 scores .* cannot pass") as caught:
        strict = op.from_inspect(logs["eval"], score_map={"C": "fail"}, pass_threshold=2)
    assert not any(issubclass(w.category, op.VacuousCheckWarning) for w in caught)  # it cannot pass, not fail
    counts = strict.verdicts.groupby(["criterion", "verdict"]).size().to_dict()
    assert counts[("match", "fail")] == 6 and counts[("world_refunded", "fail")] == 6
    lenient = op.from_inspect(logs["eval"], score_map=lambda value: True)
    assert (lenient.verdicts["verdict"] != "fail").all()
    assert (lenient.verdicts[lenient.verdicts["case_id"] == "s4"]["verdict"] == "missing").all()
    with pytest.raises(op.OloproofError, match="score_map"):
        op.from_inspect(logs["eval"], score_map={"C": "yes"})


@pytest.mark.parametrize("threshold", [0, -1])
def test_a_pass_threshold_at_or_below_0_on_0_to_1_scores_is_a_vacuous_check(logs: dict[str, Path],
                                                                           threshold: float) -> None:
    """world_refunded scores 1.0 three times and 0.0 three times (s4's two epochs raised). pass_threshold=0 (meant as
    "above 0") or -1 passed the three 0.0 scores too, 6 of 6 scored, as -inf did before it was refused; now that
    criterion is a vacuous check (warned, kept with the run, marked by the gate). match, scored "C", is judged by
    the table, not the threshold: no finding."""
    with pytest.warns(op.VacuousCheckWarning, match=rf"pass_threshold={threshold}: each of criterion "
                      r"world_refunded's 6 scores is a number in \[0, 1\]") as caught:
        run = op.from_inspect(logs["eval"], pass_threshold=threshold)
    assert caught[0].filename == __file__
    world = run.verdicts[run.verdicts["criterion"] == "world_refunded"]
    assert world["verdict"].value_counts().to_dict() == {"pass": 6, "missing": 2}
    assert list(run.manifest.suite_config.vacuous) == ["world_refunded"]
    table = op.gate(run, release={**LOOSE, "criteria": {"world_refunded": 0.1}}).table.set_index("criterion")
    assert bool(table.loc["world_refunded", "vacuous"]) and not bool(table.loc["match", "vacuous"])


@pytest.mark.parametrize("threshold", [7, 1.5])
def test_a_pass_threshold_above_1_on_0_to_1_scores_is_a_criterion_that_cannot_pass(logs: dict[str, Path],
                                                                                 threshold: float) -> None:
    """pass_threshold is every criterion's: given for a 1-10 rating, it judged world_refunded (1.0 three times, 0.0
    three times) too, and its three full marks failed, 0 of 6, with no word. Now that criterion is warned as one
    that cannot pass (a UserWarning: a vacuous check is one that cannot fail); the gate, which cannot PASS it, does
    not mark it vacuous. match ("C") is no finding."""
    with pytest.warns(UserWarning) as caught:
        run = op.from_inspect(logs["eval"], pass_threshold=threshold)
    assert not any(issubclass(w.category, op.VacuousCheckWarning) for w in caught)
    messages = [str(w.message) for w in caught if "cannot pass" in str(w.message)]
    assert len(messages) == 1 and caught[0].filename == __file__
    assert f"pass_threshold={threshold:g}: each of criterion world_refunded's 6 scores is a number in [0, 1], below " \
        "the threshold, so the criterion cannot pass" in messages[0]
    world = run.verdicts[run.verdicts["criterion"] == "world_refunded"]
    assert world["verdict"].value_counts().to_dict() == {"fail": 6, "missing": 2}
    assert run.manifest.suite_config.vacuous == {}


@pytest.mark.parametrize(("threshold", "finding"), [
    ("7", "below the threshold, so the criterion cannot pass (the threshold applies to every criterion); judge it "
          "from a second reading of the log, without the threshold"),
    ("0", "and a number passes at or above the threshold, so a score of 0 passes and the criterion cannot fail")])
def test_the_command_warns_of_a_pass_threshold_in_its_own_words(logs: dict[str, Path], threshold: str, finding: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof gate LOG --pass-threshold 7`` warned "pass_threshold=7: …; read a 0–1 scorer without pass_threshold,
    in a from_inspect of its own": the Python call's words, where the command was given a flag (its
    errors were already said in the command's words). world_refunded's six scores are 1.0 three times and 0.0
    three times (the table of test_a_pass_threshold_above_1_…): each line names the flag as given, once."""
    assert main(["gate", str(logs["eval"]), "--pass-threshold", threshold]) == 1  # no criterion gated: BLOCK
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "world_refunded's 6 scores" in line]
    assert len(said) == 1, err
    assert f": --pass-threshold {threshold}: each of criterion world_refunded's 6 scores is a number in [0, 1], " \
        f"{finding}" in said[0]
    assert "pass_threshold" not in err and "from_inspect" not in err


@pytest.mark.parametrize("threshold", [1e-9, 0.5, 1])
def test_a_pass_threshold_above_0_fails_a_0_score_and_is_no_finding(logs: dict[str, Path], threshold: float) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        run = op.from_inspect(logs["eval"], pass_threshold=threshold)
    world = run.verdicts[run.verdicts["criterion"] == "world_refunded"]
    assert world["verdict"].value_counts().to_dict() == {"pass": 3, "fail": 3, "missing": 2}
    assert run.manifest.suite_config.vacuous == {}


@pytest.mark.parametrize("threshold", [-1, 0, 1e-9, 0.5, 1, 1.000001])
def test_only_a_pass_threshold_above_1_says_a_criterion_cannot_pass(logs: dict[str, Path], threshold: float) -> None:
    """The tests above check each threshold for its own finding, not for the other one. By hand
    on world_refunded (1.0 three times, 0.0 three times): at -1 or 0 every score passes (vacuous, never "cannot
    pass"); in (0, 1] the 1.0s pass and the 0.0s fail (no finding); at 1.000001 even 1.0 fails (cannot pass, never
    vacuous)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = op.from_inspect(logs["eval"], pass_threshold=threshold)
    cannot_pass = [str(w.message) for w in caught if "cannot pass" in str(w.message)]
    vacuous = [w for w in caught if issubclass(w.category, op.VacuousCheckWarning)]
    passed = int(((run.verdicts["criterion"] == "world_refunded") & (run.verdicts["verdict"] == "pass")).sum())
    if threshold <= 0:
        assert (len(vacuous), cannot_pass, passed) == (1, [], 6)
    elif threshold <= 1:
        assert (vacuous, cannot_pass, passed) == ([], [], 3)
    else:
        assert (vacuous, len(cannot_pass), passed) == ([], 1, 0)
        assert "criterion world_refunded's 6 scores" in cannot_pass[0]


def test_a_criterion_with_a_score_off_0_to_1_can_pass_above_1_and_is_no_finding(logs: dict[str, Path],
                                                                                 tmp_path: Path) -> None:
    """The words "cannot pass" are said only of a criterion whose every score is in [0, 1]. The log with
    sample s1's first world_refunded score 1.0 rewritten as 8 (a rating's score): at pass_threshold=7 that 8 passes
    and the other five (1.0 twice, 0.0 three times) fail, by hand 1 of 6, so no warning says it cannot pass."""
    import warnings

    doc = json.loads(logs["json"].read_text(encoding="utf-8"))
    (first,) = [s for s in doc["samples"] if (s["id"], s["epoch"]) == ("s1", 1)]
    assert first["scores"]["world_refunded"]["value"] == 1.0
    first["scores"]["world_refunded"]["value"] = 8
    edited = tmp_path / "rated.json"
    edited.write_text(json.dumps(doc), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = op.from_inspect(edited, pass_threshold=7)
    assert [str(w.message) for w in caught if "cannot pass" in str(w.message)] == []
    world = run.verdicts[run.verdicts["criterion"] == "world_refunded"]
    assert world["verdict"].value_counts().to_dict() == {"fail": 5, "pass": 1, "missing": 2}


def test_gate_slice_table_report_and_panel(run: op.Run, tmp_path: Path) -> None:
    """Acceptance: a real Inspect AI log gives a gate, a slice table and a report."""
    g = op.gate(run, release={**LOOSE, "criteria": {"match": 0.0, "world_refunded": 0.99}})
    table = g.table.set_index("criterion")
    assert g.clustered and g.n_source_clusters == 4
    assert table.loc["match", "n"] == 8 and table.loc["match", "passed"] == 6 and table.loc["match", "missing"] == 2
    assert table.loc["world_refunded", "passed"] == 3 and table.loc["world_refunded", "n_clusters"] == 4
    assert table.loc["match", "verdict"] == "PASS"  # ci_low >= 0: the boundary passes
    assert table.loc["world_refunded", "verdict"] != "PASS" and g.verdict == "BLOCK"
    assert table.loc["world_refunded", "failing_clusters"] == 3  # s2, 3 and s4 hold a non-pass row
    slices = op.slice_table(run, "tool_calls:1")
    world = slices[slices["criterion"] == "world_refunded"].set_index("bin")
    # <1 tool call: 3 epoch 2 (fail); >=1: s1 ×2 pass, s2 ×2 fail, 3 epoch 1 pass, s4 ×2 missing
    assert world.loc["<1", "support"] == 1 and world.loc["<1", "passed"] == 0
    assert world.loc["≥1", "support"] == 7 and world.loc["≥1", "passed"] == 3
    report = op.export_table(slices, tmp_path / "slices.csv")
    assert Path(report).exists()
    from oloproof_nb._display.report import write_report

    html = write_report(run, tmp_path / "report.html", release={**LOOSE, "criteria": {"match": 0.0}})
    text = Path(html).read_text(encoding="utf-8")
    assert "world_refunded" in text and "tool_calls" in text
    assert op.plots.gate(g) is not None
    panel = run.panel("s2")
    assert panel.status == "completed" and "Please refund" in panel._repr_html_()


def test_a_sample_numbered_3_is_case_3_and_a_panel_of_the_number_says_so(run: op.Run) -> None:
    """The log's third sample has the id 3 (an int); its case is "3", as the cases table shows it. run.panel(3) said
    "no case 3 in run …", read as a sample the log lacks; it now says that case ids are text and which to give."""
    assert "3" in set(run.cases["case_id"]) and run.panel("3", epoch=2).status == "completed"
    with pytest.raises(op.OloproofError, match=r"^case id 3 is not text \(int\): case ids are text .*; give '3'$"):
        run.panel(3)  # type: ignore[arg-type]
    with pytest.raises(op.OloproofError, match=r"give '3'$"):
        run.record(3, epoch=2)  # type: ignore[arg-type]


def test_the_report_of_a_log_names_the_samples_that_did_not_pass(logs: dict[str, Path], tmp_path: Path) -> None:
    """`oloproof report LOG` lists the samples by criterion, grouped by the --cluster key, each epoch a row (by hand
    from the task's table: world_refunded fails s2 in both epochs and 3 in epoch 2, s4 errored in both: missing;
    match is missing for s4 only, and passes at threshold 0, so it is listed for its rows)."""
    from markdown_it import MarkdownIt

    passing = tmp_path / "loose.yaml"
    passing.write_text("min_clusters: 2\nallow_approximate_methods: true\n"
                       "criteria: {match: 0.0, world_refunded: 0.99}\n", encoding="utf-8")
    out = tmp_path / "r.md"
    assert main(["report", str(logs["dir"]), "--out", str(out), "--cluster", "topic", "--state-key", "world",
                 "--release", str(passing)]) == 1
    page = MarkdownIt("commonmark").enable("table").render(out.read_text(encoding="utf-8"))
    section = page.split("<h2>Cases that did not pass</h2>")[1].split("<h2>")[0]
    tables = {name: re.findall(r"<tr>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*<td>(.*?)</td>", body)
              for name, body in re.findall(r"<h3><code>(.*?)</code></h3>(.*?)(?=<h3>|$)", section, re.S)}
    assert list(tables) == ["match", "world_refunded"]
    assert tables["match"] == [("shipping", "s4", "1", "missing"), ("shipping", "s4", "2", "missing")]
    assert tables["world_refunded"] == [
        ("billing", "s2", "1", "fail"), ("billing", "s2", "2", "fail"),
        ("shipping", "3", "2", "fail"), ("shipping", "s4", "1", "missing"), ("shipping", "s4", "2", "missing")]


def test_detection(logs: dict[str, Path], tmp_path: Path) -> None:
    assert is_inspect_log(logs["eval"]) and is_inspect_log(logs["json"])
    other = tmp_path / "x.json"
    other.write_text('{"a": 1}', encoding="utf-8")
    assert not is_inspect_log(other) and not is_inspect_log(tmp_path)
    with pytest.raises(op.OloproofError, match="not an Inspect AI log"):
        op.from_inspect(other)
    with pytest.raises(op.OloproofError, match="no Inspect AI log"):
        op.from_inspect(tmp_path)
    damaged = tmp_path / "bad" / "damaged.eval"
    damaged.parent.mkdir()
    with zipfile.ZipFile(damaged, "w") as z:
        z.writestr("header.json", "{not json")
    assert is_inspect_log(damaged)
    with pytest.raises(op.OloproofError, match="damaged.eval: cannot read"):
        op.from_inspect(damaged)
    assert main(["gate", str(damaged.parent)]) == 2


def test_a_log_missing_sample_entries_is_refused(logs: dict[str, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A finished .eval whose header counts its samples, with one sample entry removed from the archive: it
    was read as the samples left (the failing ones removed, a PASS); now one line naming the file, exit 2."""
    import inspect_ai.log  # noqa: F401 - on Python < 3.14 it teaches zipfile the Zstandard entries of an .eval

    with zipfile.ZipFile(logs["eval"]) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    samples = sorted(n for n in entries if n.startswith("samples/"))
    assert len(samples) > 1
    dropped = tmp_path / "dropped.eval"
    with zipfile.ZipFile(dropped, "w") as z:
        for name, data in entries.items():
            if name != samples[0]:
                z.writestr(name, data)
    header = len(op.from_inspect(logs["eval"]).cases)
    with pytest.raises(op.OloproofError, match=rf"dropped.eval: its header counts {header} samples .* but "
                                               rf"{header - 1} could be read"):
        op.from_inspect(dropped)
    assert main(["gate", str(dropped)]) == 2
    assert "could be read" in capsys.readouterr().err


def test_the_samples_a_header_counts_leave_out_early_stops_and_unresolved_ones(tmp_path: Path) -> None:
    """An early-stopping manager that skips epoch 2 of 3 samples leaves 3 of total_samples 6 in a finished
    log (Inspect's own reader calls it complete): refused as damaged in a first version of the count. A
    drained task's logged_samples counts what it resolved, its cancelled samples' transcripts left out
    (such a log was refused as damaged). A log that finished otherwise is not counted."""
    from types import SimpleNamespace as NS

    from oloproof_nb._analysis.inspect_log import _check_sample_count

    stops = NS(manager="m", early_stops=[NS(id=f"s{i}", epoch=2) for i in range(3)])
    header = NS(status="success", results=NS(total_samples=6, logged_samples=None, early_stopping=stops))
    assert "skipped 3 of its 6 planned" in str(_check_sample_count(tmp_path / "x.eval", header, 3))
    with pytest.raises(op.OloproofError, match=r"x.eval: its header counts 3 samples .* but 2 could be read"):
        _check_sample_count(tmp_path / "x.eval", header, 2)
    drained = NS(status="success", results=NS(total_samples=6, logged_samples=4, early_stopping=None))
    assert "2 of its 6 planned sample epochs never ran" in str(_check_sample_count(tmp_path / "x.eval", drained, 4))
    # the cancelled samples' transcripts are in the log but not in logged_samples: more entries than it counts
    assert "1 of its 6 planned sample epochs never ran" in str(_check_sample_count(tmp_path / "x.eval", drained, 5))
    assert _check_sample_count(tmp_path / "x.eval", drained, 6) is None  # every planned sample is there
    with pytest.raises(op.OloproofError, match="counts 4 samples .* but 3 could be read"):
        _check_sample_count(tmp_path / "x.eval", drained, 3)  # fewer than it counts: entries lost
    with pytest.raises(op.OloproofError, match="counts 4 samples .* but 7 could be read"):
        _check_sample_count(tmp_path / "x.eval", drained, 7)  # more than it planned
    assert _check_sample_count(tmp_path / "x.eval", NS(status="cancelled", results=drained.results), 1) is None
    whole = NS(status="success", results=NS(total_samples=6, logged_samples=6, early_stopping=None))
    assert _check_sample_count(tmp_path / "x.eval", whole, 6) is None  # every planned sample logged
    plain = NS(status="success", results=NS(total_samples=6, logged_samples=None, early_stopping=None))
    assert _check_sample_count(tmp_path / "x.eval", plain, 6) is None


def _rewritten(logs: dict[str, Path], tmp_path: Path, name: str, edit: Any) -> Path:
    """The module's real log, read with Inspect, changed by ``edit(log)`` and written by Inspect to its own folder."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(logs["eval"])
    edit(log)
    folder = tmp_path / name
    folder.mkdir()
    write_eval_log(log, folder / f"{name}.eval")
    return folder


def test_a_drained_log_has_no_release_decision(logs: dict[str, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``inspect ctl task drain`` (or ``task cancel --action score``) abandons the queued samples
    and finishes the log, its header counting the samples it resolved in ``results.logged_samples``. The log
    was judged on the samples it happened to run: 40 of 80 planned, the 40 that would fail never run, PASS,
    exit 0. Now the Run reads (for a notebook) but has no release decision: BLOCK ``unfinished``, exit 2."""

    def drain(log: Any) -> None:  # what a drain after s2 leaves: the samples of "3" and s4 never ran
        log.samples = [s for s in log.samples if s.id in ("s1", "s2")]
        log.results.logged_samples = len(log.samples)

    from inspect_ai.log import EvalError

    folder = _rewritten(logs, tmp_path, "drained", drain)
    run = op.from_inspect(folder)
    assert len(run.cases) == 4 and set(run.verdicts["verdict"]) == {"pass", "fail"}
    gate = op.gate(run, release={"criteria": {"match": 0.5}, **LOOSE})
    assert gate.verdict == "BLOCK"
    assert gate.reason.startswith("unfinished: drained.eval: 4 of its 8 planned sample epochs never ran (the task "
                                  "was drained or cancelled)")
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {match: 0.5}\nmin_clusters: 2\nallow_approximate_methods: true\n")
    assert main(["gate", str(folder), "--release", str(release)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "4 of its 8 planned sample epochs never ran" in err

    def drain_with_a_cancelled_sample(log: Any) -> None:  # Inspect leaves a cancelled sample out of the count
        drain(log)
        cancelled = log.samples[0]
        cancelled.error, cancelled.scores = EvalError(message="CancelledError()", traceback="", traceback_ansi=""), {}
        log.results.logged_samples = len(log.samples) - 1

    import inspect_ai.log

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a drained archive read one sample at a time")

    with monkeypatch.context() as m:  # only the samples it holds are asked for: no batch falls back
        m.setattr(inspect_ai.log, "read_eval_log_sample", refuse)
        cancelled = op.from_inspect(_rewritten(logs, tmp_path, "cancelled", drain_with_a_cancelled_sample))
    assert len(cancelled.cases) == 4 and _by_case(cancelled.cases, "status")[("s1", 1)] == "error"
    assert op.gate(cancelled, release={"criteria": {"match": 0.5}, **LOOSE}).reason.startswith(
        "unfinished: cancelled.eval: 4 of its 8 planned sample epochs never ran")  # it was refused as damaged

    def every(log: Any) -> None:  # every planned sample resolved: logged_samples equals the plan
        log.results.logged_samples = log.results.total_samples

    whole = op.from_inspect(_rewritten(logs, tmp_path, "whole", every))
    assert not op.gate(whole, release={"criteria": {"match": 0.5}, **LOOSE}).reason.startswith("unfinished")


def test_an_early_stopped_log_has_no_release_decision(logs: dict[str, Path], tmp_path: Path) -> None:
    """An early-stopping manager that skipped every epoch of the samples that would fail left
    them out of the gate unseen (PASS on 30 of 40 samples). A log with skipped sample epochs now has no
    release decision, and the reason names the manager and the first sample epoch it skipped."""
    from inspect_ai.util._early_stopping import EarlyStop, EarlyStoppingSummary

    def stop(log: Any) -> None:
        log.samples = [s for s in log.samples if not (s.id == "s2" and s.epoch == 2)]
        log.results.early_stopping = EarlyStoppingSummary(
            manager="decided", early_stops=[EarlyStop(id="s2", epoch=2, reason="decided")], metadata={})

    run = op.from_inspect(_rewritten(logs, tmp_path, "stopped", stop))
    assert len(run.cases) == 7  # not refused as damaged: the header's count leaves the early stop out
    gate = op.gate(run, release={"criteria": {"match": 0.5}, **LOOSE})
    assert gate.verdict == "BLOCK"
    assert gate.reason.startswith("unfinished: stopped.eval: an early-stopping manager (decided) skipped 1 of its 8 "
                                  "planned sample epochs (sample 's2' epoch 2 first)")


def test_a_sample_stopped_by_time_or_an_operator_has_every_verdict_missing(logs: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    """A sample stopped by its time limit kept its score's verdict (an eval whose every sample
    timed out, with a lenient scorer, passed). As a run's case that overran ``case_timeout_s``, it is now
    ``timeout`` with every verdict missing; another limit (messages, tokens) is ``failed`` and keeps its score."""
    from inspect_ai.log import EvalSampleLimit

    def limits(log: Any) -> None:
        for sample in log.samples:
            if (sample.id, sample.epoch) == ("s1", 1):
                sample.limit = EvalSampleLimit(type="time", limit=4)
            elif (sample.id, sample.epoch) == ("s1", 2):
                sample.limit = EvalSampleLimit(type="working", limit=4)
            elif (sample.id, sample.epoch) == ("s2", 1):
                sample.limit = EvalSampleLimit(type="message", limit=3)
            elif (sample.id, sample.epoch) == ("s2", 2):  # `inspect ctl task cancel --action score` while it ran
                sample.limit = EvalSampleLimit(type="operator", limit=1)

    run = op.from_inspect(_rewritten(logs, tmp_path, "limits", limits))
    status = _by_case(run.cases, "status")
    assert (status[("s1", 1)], status[("s1", 2)], status[("s2", 1)], status[("s2", 2)]) == (
        "timeout", "timeout", "failed", "error")
    v_rows = run.verdicts[(run.verdicts["case_id"] == "s2") & (run.verdicts["epoch"] == 2)]
    # scored on its partial work, a 600-sample log with 300 such samples passed the gate
    assert set(v_rows["verdict"]) == {"missing"} and len(v_rows) == 2
    assert set(v_rows["reason"]) == {"sample error: stopped by an operator before it finished (operator limit)"}
    v = run.verdicts
    s1 = v[v["case_id"] == "s1"]
    assert len(s1) == 4 and set(s1["verdict"]) == {"missing"}
    assert set(s1["reason"]) == {"sample timeout: time limit reached (4)", "sample timeout: working limit reached (4)"}
    s2 = v[(v["case_id"] == "s2") & (v["epoch"] == 1)].set_index("criterion")["verdict"].to_dict()
    assert s2 == {"match": "pass", "world_refunded": "fail"}  # the task table's verdicts, kept
    counts = v.groupby(["criterion", "verdict"]).size().to_dict()  # the hand count less s1's and s2 e2's rows
    assert counts == {("match", "pass"): 3, ("match", "missing"): 5,
                      ("world_refunded", "pass"): 1, ("world_refunded", "fail"): 2,
                      ("world_refunded", "missing"): 5}


def test_a_damaged_log_in_a_folder_is_named_not_skipped(logs: dict[str, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A truncated .eval beside a good log was skipped, and the folder judged on the good one alone."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(logs["eval"], folder / "good.eval")
    data = logs["eval"].read_bytes()
    (folder / "truncated.eval").write_bytes(data[: len(data) * 9 // 10])
    with pytest.raises(op.OloproofError, match=r"truncated.eval: not a readable Inspect AI log"):
        op.from_inspect(folder)
    assert main(["gate", str(folder)]) == 2
    assert "truncated.eval: not a readable Inspect AI log" in capsys.readouterr().err
    assert main(["gate", str(folder / "truncated.eval")]) == 2  # given alone: not "no such run directory"
    assert "truncated.eval: not a readable Inspect AI log" in capsys.readouterr().err


def test_a_log_folder_is_read_two_levels_deep_by_the_cli_and_from_inspect_alike(
        logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Inspect AI writes its logs flat into its log folder. The CLI's detection looked two levels deep while
    from_inspect read every level: a stray .eval deep in an archive was blamed as a damaged log of the folder,
    and a log three levels down was "not a run directory" to the CLI but read by from_inspect."""
    folder = tmp_path / "logs"
    (folder / "2026").mkdir(parents=True)
    shutil.copy2(logs["eval"], folder / "2026" / "good.eval")  # two levels: read by both
    stray = folder / "archive" / "2025" / "q1" / "old.eval"
    stray.parent.mkdir(parents=True)
    stray.write_text("not a log", encoding="utf-8")
    assert len(op.from_inspect(folder).cases) == len(op.from_inspect(logs["eval"]).cases)
    assert main(["gate", str(folder)]) in (0, 1)
    capsys.readouterr()
    deep = tmp_path / "deep"
    (deep / "a" / "b").mkdir(parents=True)
    shutil.copy2(logs["eval"], deep / "a" / "b" / "log.eval")  # three levels: neither looks there
    with pytest.raises(op.OloproofError, match=r"deep: no Inspect AI log \(\.eval or \.json\) in this folder"):
        op.from_inspect(deep)
    assert main(["gate", str(deep)]) == 2
    assert "deep: not a run directory" in capsys.readouterr().err


def test_a_folder_of_tasks_with_different_scorers(logs: dict[str, Path], tmp_path: Path) -> None:
    """Two tasks scored ``match`` + ``world_refunded`` and ``match`` + ``world_b``: each sample gets rows for
    its own task's scorers only. Before, each was padded with ``missing`` rows ("the scorer gave no score")
    for the other task's scorer, which never ran on it: half of each such criterion missing, a false FAIL.
    The ``match`` both tasks share is one criterion per task (it pooled them), each as the log alone
    reads it."""
    from inspect_ai.log import read_eval_log, write_eval_log

    folder = tmp_path / "two"
    folder.mkdir()
    shutil.copy2(logs["json"], folder / "a.json")
    other = read_eval_log(str(logs["json"]))
    other.eval.task = "refund_desk_b"
    other.eval.dataset.sample_ids = [f"b-{i}" for i in other.eval.dataset.sample_ids or []]
    for spec in other.eval.scorers or []:
        if spec.name == "world_refunded":
            spec.name = "world_b"
    for sample in other.samples or []:
        sample.id = f"b-{sample.id}"
        if sample.scores and "world_refunded" in sample.scores:
            sample.scores["world_b"] = sample.scores.pop("world_refunded")
        for event in sample.events or []:  # renamed where the scorer recorded its score too, as it would have
            if getattr(event, "event", None) == "score" and getattr(event, "scorer", None) == "world_refunded":
                event.scorer = "world_b"
    write_eval_log(other, str(folder / "b.json"), format="json")
    one = op.from_inspect(logs["json"]).verdicts
    both = op.from_inspect(folder).verdicts
    ids_a = set(one["case_id"])
    for criterion, ids in (("world_refunded", ids_a), ("world_b", {f"b-{i}" for i in ids_a})):
        rows = both[both["criterion"] == criterion]
        assert set(rows["case_id"]) == ids, criterion
        assert (rows["reason"] != "the scorer gave no score").all()
    mine = both[both["criterion"] == "world_refunded"].reset_index(drop=True)
    theirs = one[one["criterion"] == "world_refunded"].reset_index(drop=True)
    assert list(mine["verdict"]) == list(theirs["verdict"])
    assert "match" not in set(both["criterion"])
    theirs = one[one["criterion"] == "match"].reset_index(drop=True)
    for task, prefix in (("refund_desk", ""), ("refund_desk_b", "b-")):
        rows = both[both["criterion"] == f"{task}/match"].reset_index(drop=True)
        assert list(rows["case_id"]) == [prefix + c for c in theirs["case_id"]], task
        assert list(rows["verdict"]) == list(theirs["verdict"]), task


def test_missing_inspect_names_the_extra(logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as when it is not installed
    with pytest.raises(op.OloproofError, match=r"pip install 'oloproof_nb\[inspect\]'"):
        op.from_inspect(logs["eval"])


def test_cli_gate_and_report_accept_inspect_logs(logs: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    passing = tmp_path / "pass.yaml"
    head = "min_clusters: 2\nallow_approximate_methods: true\n"
    passing.write_text(head + "criteria: {match: 0.0}\n", encoding="utf-8")
    blocking = tmp_path / "block.yaml"
    blocking.write_text(head + "criteria: {match: 0.0, world_refunded: 0.99}\n", encoding="utf-8")
    assert main(["gate", str(logs["eval"]), "--release", str(passing)]) == 0
    assert "gate: PASS" in capsys.readouterr().out
    assert main(["gate", str(logs["dir"]), "--release", str(blocking), "--state-key", "world"]) == 1
    assert main(["gate", str(logs["json"])]) == 1  # no thresholds: nothing gated, BLOCK
    capsys.readouterr()
    assert main(["gate", str(logs["eval"]), "--cluster", "nope"]) == 2
    assert "cluster='nope'" in capsys.readouterr().err
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("criteria: {accuracy: 0.5}\n", encoding="utf-8")
    assert main(["gate", str(logs["eval"]), "--release", str(unknown)]) == 2
    # a report is written whatever the gate says, and the command exits on the gate: no thresholds, BLOCK
    assert main(["report", str(logs["dir"]), "--out", str(tmp_path / "r.md"), "--cluster", "topic"]) == 1
    assert (tmp_path / "r.md").exists()
    assert main(["report", str(logs["eval"]), "--release", str(passing), "--out", str(tmp_path / "p.md")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("gate: PASS — exit 0")


def test_core_import_does_not_load_inspect() -> None:
    code = "import sys, oloproof_nb; print(sorted(m for m in sys.modules if m.startswith(('inspect_ai', 'jsonpatch'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The folder of an ``eval_set`` whose solver rewrites each sample's metadata per epoch (tests/_inspect_task.py)."""
    with shared_logs(tmp_path_factory, "tagged", of_mode("--tagged")) as root:
        yield root / "logs"


def _hand_count(folder: Path) -> tuple[list[Any], dict[str, str]]:
    """The samples of the folder's one log (read_eval_log), and each sample's topic as its dataset gave it."""
    from inspect_ai.log import read_eval_log

    (file,) = sorted(folder.glob("*.eval"))
    samples = list(read_eval_log(str(file)).samples or [])
    topics = {}
    for sample in samples:
        (init,) = [e for e in sample.events if e.event == "sample_init"]
        topics[str(sample.id)] = dict(init.sample.metadata or {})["topic"]
    return samples, topics


def test_an_eval_set_folder_reads_its_logs_not_its_listing(tagged: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """An eval_set writes logs.json beside its logs: each log's header under its file name, so its first bytes
    name "version" and "eval". It was taken for a log, and every eval_set folder was refused (exit 2, "cannot
    read this Inspect AI log")."""
    assert (tagged / "logs.json").exists() and not is_inspect_log(tagged / "logs.json")
    samples, _ = _hand_count(tagged)
    run = op.from_inspect(tagged)
    assert len(run.cases) == len(samples) == 18 and run.finished
    passed = sum(s.scores["tagged_ok"].value == "C" for s in samples)
    assert passed == 15 and (run.verdicts["verdict"] == "pass").sum() == passed
    release = tmp_path / "release.yaml"
    release.write_text("min_clusters: 2\nallow_approximate_methods: true\ncriteria: {tagged_ok: 0.1}\n",
                       encoding="utf-8")
    assert main(["gate", str(tagged), "--release", str(release)]) == 0  # 6 samples, 5 pass in every epoch
    assert "gate: PASS" in capsys.readouterr().out
    with pytest.raises(op.OloproofError, match="logs.json: not an Inspect AI log"):
        op.from_inspect(tagged / "logs.json")


def test_cluster_and_digest_are_the_datasets_whatever_a_solver_wrote(tagged: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The solver rewrote ``topic`` in each epoch (A/1, A/2, A/3, ...): the log's metadata is the final state's.
    ``cluster="topic"`` made 6 clusters of the 2 topics, each sample's three epochs in three clusters, and the
    gate said PASS with min_clusters 3; every epoch had its own digest. Now the cluster and the digest are the
    dataset's (the sample_init event): 2 clusters, too few, and one digest per sample."""
    samples, topics = _hand_count(tagged)
    assert {str(s.metadata["topic"]) for s in samples} == {"A/1", "A/2", "A/3", "B/1", "B/2", "B/3"}
    assert sorted(set(topics.values())) == ["A", "B"]
    (file,) = sorted(tagged.glob("*.eval"))
    run = op.from_inspect(file, cluster="topic")
    assert _by_case(run.cases, "cluster") == {(str(s.id), s.epoch): topics[str(s.id)] for s in samples}
    shown: Any = _by_case(run.cases, "metadata")[("t0", 2)]
    assert shown["topic"] == "A/2"  # the metadata shown is the log's
    body = {"id": "t0", "input": "Question 0.", "target": "ok", "metadata": {"topic": "A"}}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digests = _by_case(run.cases, "digest")
    assert {digests[("t0", e)] for e in (1, 2, 3)} == {hashlib.sha256(text.encode()).hexdigest()}
    assert len(set(digests.values())) == 6
    release = {"criteria": {"tagged_ok": 0.5}, "min_clusters": 3, "allow_approximate_methods": True}
    g = op.gate(run, release=release)
    row = g.table.set_index("criterion").loc["tagged_ok"]
    assert row["n_clusters"] == 2 and row["passed"] == 15 and row["n"] == 18
    assert g.verdict == "BLOCK" and row["reason"].startswith("too_few_clusters")
    path = tmp_path / "release.yaml"
    path.write_text("min_clusters: 3\nallow_approximate_methods: true\ncriteria: {tagged_ok: 0.5}\n",
                    encoding="utf-8")
    assert main(["gate", str(file), "--release", str(path), "--cluster", "topic"]) == 1
    capsys.readouterr()


def test_a_cluster_key_that_differs_between_epochs_is_refused(tagged: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The same log with its events left out (no sample_init event: only the final metadata is known): a
    sample's epochs would fall in three clusters; one line naming the file, the sample and the values."""
    from inspect_ai.log import read_eval_log, write_eval_log

    (file,) = sorted(tagged.glob("*.eval"))
    log = read_eval_log(str(file))
    for sample in log.samples or []:
        sample.events = []
    bare = tmp_path / "bare.json"
    write_eval_log(log, str(bare), format="json")
    first = next(s for s in log.samples or [] if s.epoch == 1)
    with pytest.raises(op.OloproofError, match=rf"bare.json: cluster='topic': sample '{first.id}' has topic "
                                               rf"'{first.metadata['topic']}' in epoch 1 but '.*' in epoch [23]"):
        op.from_inspect(bare, cluster="topic")
    assert main(["gate", str(bare), "--cluster", "topic"]) == 2
    assert "in epoch 1 but" in capsys.readouterr().err
    assert len(op.from_inspect(bare).cases) == len(log.samples or [])  # each sample its own cluster: fine


def test_ids_equal_as_text_in_one_log_and_a_fifo(logs: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A log edited so that sample 's1' has the id '3' beside the int id 3 (Inspect refuses such a dataset;
    an edited or merged log may hold it): Inspect's reader yields one of them, so fewer samples than the
    header counts, one line naming the file. A FIFO named like a log is never opened: one line, not "no such
    file" (only the FIFO part is new)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(logs["json"]))
    for sample in log.samples or []:
        if sample.id == "s1":
            sample.id = "3"
    twice = tmp_path / "twice.json"
    write_eval_log(log, str(twice), format="json")
    assert {type(s.id) for s in read_eval_log(str(twice)).samples or [] if str(s.id) == "3"} == {int, str}
    with pytest.raises(op.OloproofError, match=r"twice.json: its header counts 8 samples .* but 6 could be read"):
        op.from_inspect(twice)
    assert main(["gate", str(twice)]) == 2
    fifo = tmp_path / "pipe.eval"
    os.mkfifo(fifo)
    with pytest.raises(op.OloproofError, match="pipe.eval: not a regular file"):
        op.from_inspect(fifo)
    capsys.readouterr()
    assert main(["gate", str(fifo)]) == 2  # routed to the log reader, not "not a directory"
    assert "pipe.eval: not a regular file or folder; give an Inspect AI log" in capsys.readouterr().err


def test_score_strings_read_as_inspect_reads_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A scorer returned "c", " C", "C ", "i", " yes" (a grader's letter in lower case, a padded word). Inspect's
    own metrics (value_to_float) count them 0: "c" is not CORRECT. oloproof stripped and upper-cased them, so
    "c", " C" and "C " passed: 3 passes more than the log's own accuracy. Now a string never passes where Inspect
    counts 0 (such a value is missing, and score_map={"c": "pass"} maps it)."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    write_logs(tmp_path, "--values", str(tmp_path / "logs"))
    (file,) = sorted((tmp_path / "logs").glob("*.eval"))
    log = read_eval_log(str(file))
    to_float = value_to_float()
    inspect_says = {str(s.id): to_float((s.scores or {})["given"].value) for s in log.samples or []}
    run = op.from_inspect(file)
    verdict = _by_case(run.verdicts, "verdict")
    assert len(verdict) == len(inspect_says) == 24
    one_scale = {"v14", "v15", "v16"}  # 1.0, 0.5 and 1: numbers of a criterion whose numbers reach 7 (see below)
    for cid, value in inspect_says.items():  # a pass only where Inspect counts 1; "1.0" (Inspect: 1) is missing
        assert (verdict[(cid, 1)] == "pass") == (value == 1.0 and cid != "v19" and cid not in one_scale), (cid, value)
    assert sum(v == 1.0 for v in inspect_says.values()) == 8  # C, yes, Yes, TRUE, 1.0, 1, True, "1.0"
    assert verdict[("v1", 1)] == verdict[("v2", 1)] == verdict[("v3", 1)] == "missing"  # "c", " C", "C "
    table = op.gate(run, release={**LOOSE, "criteria": {"given": 0.0}}).table.set_index("criterion")
    assert table.loc["given", "passed"] == 5 and table.loc["given", "n"] == 24
    lenient = op.from_inspect(file, score_map={"c": "pass"})
    assert _by_case(lenient.verdicts, "verdict")[("v1", 1)] == "pass"
    # 7, 2.5 and -1 are on some other scale: 7 and 2.5 passed at the default cut of 1 (a 1–10 rating of 2 passed)
    assert [inspect_says[c] for c in ("v21", "v22", "v23")] == [7.0, 2.5, -1.0]
    assert [verdict[(c, 1)] for c in ("v21", "v22", "v23")] == ["missing"] * 3
    reasons = _by_case(run.verdicts, "reason")
    assert "score 7 is not in [0, 1]; say which scores pass with pass_threshold=" in reasons[("v21", 1)]
    # one scale per criterion. A 1 on a 1–10 rating (its worst) passed as full marks while 2–10
    # were missing; once any number of the criterion is off [0, 1], its numbers in [0, 1] are missing too
    assert [verdict[(c, 1)] for c in sorted(one_scale)] == ["missing"] * 3
    assert reasons[("v16", 1)].startswith("score 1: the scorer's scores of this criterion reach 7, so they are not")
    cut = _by_case(op.from_inspect(file, pass_threshold=5).verdicts, "verdict")
    assert [cut[(c, 1)] for c in ("v21", "v22", "v23", "v14")] == ["pass", "fail", "fail", "fail"]  # v14 is 1.0
    assert main(["gate", str(file), "--pass-threshold", "5"]) == 1  # read with the cut; no criteria listed: BLOCK
    (tmp_path / "empty").mkdir()
    assert main(["gate", str(tmp_path / "empty"), "--pass-threshold", "5"]) == 2  # for Inspect logs only
    assert "--cluster, --state-key and --pass-threshold apply to Inspect AI logs only" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["json", "eval"])
def test_a_log_nested_too_deeply_is_refused_before_inspect_reads_it(logs: dict[str, Path], tmp_path: Path,
                                                                    kind: str) -> None:
    """A 200 KB ``.json`` log nested 100,000 deep grew ``oloproof gate`` to 24 GB until the kernel killed it
    (inspect-ai's reader); an ``.eval`` whose sample nests 20,000 deep took 1.1 GB. Now one line, at once."""
    from oloproof_nb._analysis.inspect_files import MAX_LOG_DEPTH

    deep = "[" * 100_000 + "]" * 100_000
    if kind == "json":
        bad = tmp_path / "deep.json"
        bad.write_text('{"version": 2, "eval": ' + deep + "}", encoding="utf-8")
        where = str(bad)
    else:
        bad = tmp_path / "deep.eval"
        with zipfile.ZipFile(logs["eval"]) as src, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as dst:
            names = src.namelist()
            sample = next(n for n in names if n.startswith("samples/"))
            for name in names:
                data = src.read(name)
                if name == sample:  # a deeply nested value in one sample's metadata
                    doc = json.loads(data)
                    doc["metadata"] = {"blob": "PLACEHOLDER"}
                    data = json.dumps(doc).replace('"PLACEHOLDER"', deep).encode("utf-8")
                dst.writestr(name, data)
        where = f"{bad}: {sample}"
    code = main(["gate", str(bad)])
    assert code == 2
    with pytest.raises(op.OloproofError) as info:
        op.from_inspect(bad)
    assert str(info.value) == (f"{where}: nested 100001 levels deep (at most {MAX_LOG_DEPTH}); not an Inspect AI "
                               "log oloproof reads") if kind == "json" else str(info.value).startswith(where)


@pytest.mark.parametrize("where", ["header", "sample"])
def test_a_log_holding_a_number_too_long_for_python_is_refused_not_a_crash(logs: dict[str, Path], tmp_path: Path,
                                                                           where: str) -> None:
    """A ``.json`` log with a 5,001-digit integer, in its header or in one sample: inspect-ai reads it
    with ijson, whose C parser crashed the whole process on it (SIGSEGV: exit 139, no line; in Python, a notebook's
    kernel died). Now one line, exit 2. A subprocess: before the fix the crash would have taken the test run too."""
    from _reliability_systems import run_cli

    doc = json.loads(logs["json"].read_text(encoding="utf-8"))
    (doc["eval"] if where == "header" else doc["samples"][0])["metadata"] = {"blob": "PLACEHOLDER"}
    bad = tmp_path / "huge.json"
    bad.write_text(json.dumps(doc).replace('"PLACEHOLDER"', "1" + "0" * 5000), encoding="utf-8")
    done = run_cli("gate", str(bad))
    assert (done.returncode, done.stderr.splitlines()) == (2, [
        f"oloproof: error: {bad}: holds a number whose integer part runs past 4,300 digits (Python's limit for "
        "reading text as an integer); not an Inspect AI log oloproof reads"])
    with pytest.raises(op.OloproofError):  # the library refuses it the same way, before inspect-ai reads it
        op.from_inspect(bad)
    fine = tmp_path / "fine.json"  # the same digits in a string, or a long fraction, are no such number
    fine.write_text(json.dumps(doc).replace('"PLACEHOLDER"', json.dumps("1" * 5001) + ', "f": 0.' + "1" * 5001),
                    encoding="utf-8")
    assert len(op.from_inspect(fine).cases) == len(op.from_inspect(logs["json"]).cases)


def test_a_scorer_run_with_other_options_is_another_check(logs: dict[str, Path], tmp_path: Path) -> None:
    """Logs record each scorer's arguments. A candidate scored by ``match`` with other options (a lenient
    setting) compared as the same check (NO_REGRESSION for a worse agent), and a folder mixing the two settings
    was pooled into one criterion. Now the comparison says check_changed, and the folder is refused."""
    doc = json.loads(logs["json"].read_text(encoding="utf-8"))
    assert [s["name"] for s in doc["eval"]["scorers"]][0] == "match"
    doc["eval"]["scorers"][0]["options"] = {"location": "any", "ignore_case": True}
    other = tmp_path / "lenient" / "refund_desk.json"
    other.parent.mkdir()
    other.write_text(json.dumps(doc), encoding="utf-8")
    base, cand = op.from_inspect(logs["json"]), op.from_inspect(other)
    table = op.compare(base, cand).table.set_index("criterion")
    assert table.loc["match", "verdict"] == "INSUFFICIENT_EVIDENCE" and "check_changed" in table.loc["match", "reason"]
    assert "check_changed" not in table.loc["world_refunded", "reason"]
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(logs["json"], mixed / "a.json")
    shutil.copy(other, mixed / "b.json")
    with pytest.raises(op.OloproofError, match=r"scorer 'match' runs with options \{\"ignore_case\": true, "
                                               r"\"location\": \"any\"\}, but .* ran it with \{\}"):
        op.from_inspect(mixed)


def test_two_tasks_running_one_scorer_with_other_options_are_a_criterion_each(
        logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An eval of two tasks, ``match()`` in one and ``match(location="any")`` in the other: the folder was refused
    (one criterion pooled both tasks, so one criterion, two settings). A scorer several tasks share is now a
    criterion per task, each of one setting, so the folder is read, each task's ``match`` with its own options (the
    refusal stays for logs of one task, :func:`test_a_scorer_run_with_other_options_is_another_check`)."""
    doc = json.loads(logs["json"].read_text(encoding="utf-8"))
    doc["eval"]["task"] = "refund_desk_b"
    doc["eval"]["scorers"][0]["options"] = {"location": "any"}
    doc["eval"]["dataset"]["sample_ids"] = [f"b-{i}" for i in doc["eval"]["dataset"]["sample_ids"]]
    for sample in doc["samples"]:
        sample["id"] = f"b-{sample['id']}"
    folder = tmp_path / "two_tasks"
    folder.mkdir()
    shutil.copy(logs["json"], folder / "a.json")
    (folder / "b.json").write_text(json.dumps(doc), encoding="utf-8")
    run = op.from_inspect(folder)
    options = {e.criterion: e.options for e in run.config.evaluators if e.criterion.endswith("/match")}
    assert options == {"refund_desk/match": "", "refund_desk_b/match": '{"location": "any"}'}
    assert main(["gate", str(folder)]) == 1  # read (exit 2 before); no release.yaml: nothing gated, BLOCK
    assert capsys.readouterr().err == ""


def test_a_log_read_with_another_pass_threshold_or_score_map_is_another_check(logs: dict[str, Path],
                                                                            tmp_path: Path) -> None:
    """How a log's scores become verdicts is part of the check. A worse candidate (``match`` P where
    the base had C: 6 passes of 8 lost; ``world_refunded`` 0.5 where it had 1.0: 3 of 8 lost) read with
    ``score_map={"P": "pass"}`` and ``pass_threshold=0.5`` had the base's rates (0.75 and 0.375), no flip, and
    NO_REGRESSION under a margin its interval cleared, with nothing said. It is now check_changed on both
    criteria; both logs read the same way are compared as before."""
    doc = json.loads(logs["json"].read_text(encoding="utf-8"))
    doc["eval"]["run_id"], doc["eval"]["eval_id"] = "candidate-run", "candidate-eval"
    for sample in doc["samples"]:
        scores = sample.get("scores") or {}
        if scores.get("match", {}).get("value") == "C":
            scores["match"]["value"] = "P"
        if scores.get("world_refunded", {}).get("value") == 1.0:
            scores["world_refunded"]["value"] = 0.5
    worse = tmp_path / "worse" / "refund_desk.json"
    worse.parent.mkdir()
    worse.write_text(json.dumps(doc), encoding="utf-8")
    rule = {**LOOSE, "regression": {"margin": 0.9}}
    base = op.from_inspect(logs["json"])
    honest = op.compare(base, op.from_inspect(worse), release=rule).table.set_index("criterion")
    assert list(honest["pass_to_fail"]) == [6, 3] and list(honest["candidate_rate"]) == [0.0, 0.0]
    lenient = op.from_inspect(worse, score_map={"P": "pass"}, pass_threshold=0.5)
    cmp = op.compare(base, lenient, release=rule)
    table = cmp.table.set_index("criterion")
    assert list(table["pass_to_fail"]) == [0, 0] and list(table["base_rate"]) == [0.75, 0.375]  # no flip seen
    assert set(table["verdict"]) == {"INSUFFICIENT_EVIDENCE"} and cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert all(reason.startswith("check_changed") for reason in table["reason"])
    for threshold, score_map in ((0.5, None), (None, {"P": "pass"}), (None, lambda value: "pass")):
        one = op.compare(base, op.from_inspect(worse, score_map=score_map, pass_threshold=threshold), release=rule)
        assert any(reason.startswith("check_changed") for reason in one.table["reason"]), (threshold, score_map)
    same = op.compare(op.from_inspect(logs["json"], pass_threshold=0.5, score_map={"P": "pass"}), lenient,
                      release=rule)
    assert not any("check_changed" in reason for reason in same.table["reason"])  # read alike: one check


def test_one_eval_read_from_two_copies_of_its_log_is_one_run(logs: dict[str, Path], tmp_path: Path) -> None:
    """One run given twice is refused by op.compare (README §6a), but a run read from Inspect AI logs
    keeps the log's path in its manifest, so the eval read from a second copy of its folder (a CI artifact
    downloaded twice), or from its .json beside the .eval, was compared with itself: every difference 0, and
    NO_REGRESSION under a margin the interval clears. Its scorers re-run with other options stay comparable
    (the test above)."""
    again = tmp_path / "downloaded-again"
    shutil.copytree(logs["dir"], again)
    base = op.from_inspect(logs["dir"])
    for copy in (again, logs["json"]):
        with pytest.raises(op.OloproofError, match=r"^compare: the base and the candidate are the same run "):
            op.compare(base, op.from_inspect(copy), release={**LOOSE, "regression": {"margin": 0.99}})


def test_one_eval_read_twice_is_one_run_whatever_its_findings_name(logs: dict[str, Path], tmp_path: Path) -> None:
    """A run's findings name where its logs were read from (a vacuous check the path given to
    from_inspect, samples that never ran the log's file name), and the manifest keeps them. Read with
    pass_threshold=0 (world_refunded cannot fail), the eval from a second copy of its folder was compared with
    itself: NO_REGRESSION, exit 0; a drained log and its copy downloaded as 'refund_desk (1).json' likewise were
    compared. Both are one run, refused; the eval re-read with another threshold is still compared."""
    import warnings

    rule = {**LOOSE, "regression": {"margin": 0.99}}
    again = tmp_path / "downloaded-again"
    shutil.copytree(logs["dir"], again)
    doc = json.loads(logs["json"].read_text(encoding="utf-8"))
    doc["results"]["total_samples"], doc["results"]["logged_samples"] = 10, 8  # 2 sample epochs never ran
    drained, copy = tmp_path / "a" / "refund_desk.json", tmp_path / "b" / "refund_desk (1).json"
    for file in (drained, copy):
        file.parent.mkdir()
        file.write_text(json.dumps(doc), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)
        base = op.from_inspect(logs["dir"], pass_threshold=0)
        assert list(base.manifest.suite_config.vacuous) == ["world_refunded"]  # a finding naming logs["dir"]
        pairs = [(base, op.from_inspect(again, pass_threshold=0)),
                 (op.from_inspect(drained), op.from_inspect(copy))]
        for one, other in pairs:
            with pytest.raises(op.OloproofError, match=r"^compare: the base and the candidate are the same run "):
                op.compare(one, other, release=rule)
        rejudged = op.compare(op.from_inspect(logs["dir"], pass_threshold=0.5), pairs[0][1], release=rule)
    assert rejudged.verdict == "INSUFFICIENT_EVIDENCE"  # another reading of the eval: compared, check_changed
    assert any(reason.startswith("check_changed") for reason in rejudged.table["reason"])


def test_a_log_inspect_cannot_read_says_inspects_reason(logs: dict[str, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A log of a newer format said only "Unable to read log file"; Inspect's reason (the
    version it cannot read) was in the exception's cause and dropped."""
    body = json.loads(logs["json"].read_text(encoding="utf-8"))
    body["version"] = 99
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(op.OloproofError, match=r"newer.json: cannot read this Inspect AI log \(.*Unable to read "
                                               r"version 99 of log format"):
        op.from_inspect(newer)
    assert main(["gate", str(newer)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "version 99" in err


def test_an_archive_member_bigger_than_the_cap_is_refused_before_inspect_reads_it(
        logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A 1 MB .eval holding a 1 GiB header.json took 2.2 GB of memory (a bigger one: killed, exit 137).
    A member larger than MAX_LOG_MEMBER_BYTES uncompressed is refused in one line; one of exactly that size is read."""
    import inspect_ai.log  # noqa: F401 - on Python < 3.14 it teaches zipfile the Zstandard entries of an .eval

    from oloproof_nb._analysis import inspect_files

    with zipfile.ZipFile(logs["eval"]) as z:
        largest = max((info for info in z.infolist() if info.filename.endswith(".json")), key=lambda i: i.file_size)
    monkeypatch.setattr(inspect_files, "MAX_LOG_MEMBER_BYTES", largest.file_size)
    assert len(op.from_inspect(logs["eval"]).cases) == 8  # at the cap: read
    monkeypatch.setattr(inspect_files, "MAX_LOG_MEMBER_BYTES", largest.file_size - 1)
    named = rf"{re.escape(logs['eval'].name)}: {re.escape(largest.filename)}: more than "  # a log name may hold a +
    with pytest.raises(op.OloproofError, match=named):
        op.from_inspect(logs["eval"])
    assert main(["gate", str(logs["eval"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "uncompressed" in err


def test_a_header_inspect_refuses_is_one_short_reason_not_a_validation_dump(
        logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A header Inspect's model refuses gave pydantic's whole dump (``1 validation error for EvalLog
    … For further information visit https://errors.pydantic.dev…``) inside the line; now its first problem."""
    import inspect_ai.log  # noqa: F401 - on Python < 3.14 it teaches zipfile the Zstandard entries of an .eval

    with zipfile.ZipFile(logs["eval"]) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    entries["header.json"] = json.dumps({"version": 2, "status": "success", "a": 1}).encode("utf-8")
    bad = tmp_path / "bad.eval"
    with zipfile.ZipFile(bad, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    assert main(["gate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == f"oloproof: error: {bad}: cannot read this Inspect AI log (eval: is required)\n"
    assert main(["gate", str(logs["dir"]), "--pass-threshold", "nan"]) == 2
    assert capsys.readouterr().err.startswith("oloproof: error: --pass-threshold nan: give a finite number")
    for endless in ("-inf", "inf"):  # -inf passed every numeric score, a gate that could not fail
        assert main(["gate", str(logs["dir"]), f"--pass-threshold={endless}"]) == 2
        assert capsys.readouterr().err.startswith(f"oloproof: error: --pass-threshold {endless}: give a finite number")


def test_a_header_problem_is_worded_by_the_one_validation_formatter(
        logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Inspect reader worded pydantic's problems itself (``results.scores.1.scored_samples: Input
    should be a valid integer``); now as every other file's, by ``errors.validation_problem``: the key as
    ``format_loc`` writes it, and the value it got."""
    import inspect_ai.log  # noqa: F401 - on Python < 3.14 it teaches zipfile the Zstandard entries of an .eval

    with zipfile.ZipFile(logs["eval"]) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    header = json.loads(entries["header.json"])
    header["results"]["scores"][1]["scored_samples"] = "many"  # a count, in the second scorer's results
    entries["header.json"] = json.dumps(header).encode("utf-8")
    bad = tmp_path / "damaged.eval"
    with zipfile.ZipFile(bad, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    expected = (f"{bad}: cannot read this Inspect AI log (results.scores[1].scored_samples: Input should be a "
                "valid integer, unable to parse string as an integer (got 'many'))")
    with pytest.raises(op.OloproofError) as info:
        op.from_inspect(bad)
    assert str(info.value) == expected
    assert main(["gate", str(bad)]) == 2
    assert capsys.readouterr().err == f"oloproof: error: {expected}\n"


def test_a_log_gated_without_thresholds_says_to_give_them(logs: dict[str, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """An Inspect log has no release.yaml of its own: the hint asks for --release, not for ./release.yaml."""
    assert main(["gate", str(logs["eval"])]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == ["no criterion to gate: give the thresholds with --release RELEASE_YAML",
                          "gate: BLOCK — exit 1: no_criteria: nothing was gated"]


# -- edges found by mutation testing ---------------------------------------------------------------


def _beside_its_log(logs: dict[str, Path], tmp_path: Path, prefix: str, *, model: str | None = None,
                    status: str | None = None) -> Path:
    """A folder holding the JSON log as ``log.json`` and, as ``other.json``, a copy of it whose sample ids start
    with ``prefix`` (other samples), of another ``model`` or ``status`` when given."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(logs["json"], folder / "log.json")
    data = json.loads(logs["json"].read_text(encoding="utf-8"))
    if model is not None:
        data["eval"]["model"] = model
    if status is not None:
        data["status"] = status
    for sample in data.get("samples") or []:
        sample["id"] = f"{prefix}-{sample['id']}"
    dataset = data["eval"].get("dataset") or {}
    if dataset.get("sample_ids"):
        dataset["sample_ids"] = [f"{prefix}-{sid}" for sid in dataset["sample_ids"]]
    (folder / "other.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_one_eval_read_with_two_thresholds_that_judge_alike_is_compared_not_refused(logs: dict[str, Path]) -> None:
    """The eval read with pass_threshold 0.5 and 0.9 gives the same verdicts (no score lies between) under the same
    id and manifest; only the reading, in ``config``, differs. It is a re-judged run, compared (check_changed), not
    one run given twice."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)
        half, most = op.from_inspect(logs["dir"], pass_threshold=0.5), op.from_inspect(logs["dir"], pass_threshold=0.9)
        assert half.verdicts.equals(most.verdicts) and half.run_id == most.run_id
        cmp = op.compare(half, most, release={**LOOSE, "regression": {"margin": 0.99}})
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert any(reason.startswith("check_changed") for reason in cmp.table["reason"])


def test_one_log_twice_in_a_folder_is_refused_not_doubled(logs: dict[str, Path], tmp_path: Path) -> None:
    """The same log copied twice into a folder (a CI artifact downloaded twice) would count each sample twice."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(logs["eval"], folder / "a.eval")
    shutil.copy2(logs["eval"], folder / "b.eval")
    with pytest.raises(op.OloproofError, match=r"sample '.+' epoch 1 is also in .*a\.eval"):
        op.from_inspect(folder)


def test_logs_of_two_models_are_refused(logs: dict[str, Path], tmp_path: Path) -> None:
    """A folder holding one model's log and another model's (other sample ids) is two systems, not one run."""
    folder = _beside_its_log(logs, tmp_path, "other", model="mockllm/other")
    with pytest.raises(op.OloproofError, match=r"logs of different models"):
        op.from_inspect(folder)


def test_a_folder_with_one_unfinished_log_is_an_unfinished_run(logs: dict[str, Path], tmp_path: Path) -> None:
    """One finished log and one still running (status "started", other samples): the run did not finish, so its
    manifest has no finished_at (the gate then gives no release decision)."""
    folder = _beside_its_log(logs, tmp_path, "more", status="started")
    run = op.from_inspect(folder)
    assert run.manifest.finished_at is None
    assert op.from_inspect(folder / "log.json").manifest.finished_at is not None
    # the gate says why in the Inspect AI log's own terms
    assert op.gate(run, release={"criteria": {"match": 0.5}, **LOOSE}).reason.startswith(
        "unfinished: the Inspect AI eval did not finish (its log status is not 'success')")
    # its repr says so on its second line, in the same terms (no case count of a plan it lacks)
    assert repr(run).splitlines()[1] == ("  not finished: the Inspect AI eval did not finish (its log status is not "
                                         "'success')")


# -- edges found by mutation testing ---------------------------------------------------------------


def _one_sample(log: Any, sid: str, epoch: int) -> Any:
    """The sample ``sid`` epoch ``epoch`` of a log read with Inspect."""
    (sample,) = [s for s in log.samples or [] if (s.id, s.epoch) == (sid, epoch)]
    return sample


def test_an_invalidated_sample_is_an_error_with_every_verdict_missing(logs: dict[str, Path], tmp_path: Path) -> None:
    """A sample invalidated after the eval (``inspect_ai.log.invalidate_samples``: a reviewer found it unsound) was
    judged on its scores, its pass counted as evidence; it is an ``error`` case with every verdict missing."""
    from inspect_ai.log import ProvenanceData, invalidate_samples

    def invalidate(log: Any) -> None:
        uuid = _one_sample(log, "s1", 1).uuid
        log.samples = invalidate_samples(log, [uuid], ProvenanceData(author="reviewer", reason="leaked")).samples
        log.invalidated = True

    run = op.from_inspect(_rewritten(logs, tmp_path, "invalidated", invalidate))
    status, error = _by_case(run.cases, "status"), _by_case(run.cases, "error")
    assert (status[("s1", 1)], error[("s1", 1)]) == ("error", "the sample was invalidated")
    assert status[("s1", 2)] == "completed"  # its other epoch is not invalidated
    v = run.verdicts
    rows = v[(v["case_id"] == "s1") & (v["epoch"] == 1)]
    assert len(rows) == 2 and set(rows["verdict"]) == {"missing"}
    assert set(rows["reason"]) == {"sample error: the sample was invalidated"}
    counts = v.groupby(["criterion", "verdict"]).size().to_dict()  # the hand count less s1 epoch 1's two passes
    assert counts == {("match", "pass"): 5, ("match", "missing"): 3,
                      ("world_refunded", "pass"): 2, ("world_refunded", "fail"): 3,
                      ("world_refunded", "missing"): 3}


def test_a_tool_call_inspect_logged_as_an_error_is_a_failed_result(logs: dict[str, Path], tmp_path: Path) -> None:
    """A tool call whose result Inspect logged as an error (a ``ToolCallError``: a timeout) must read as a failed
    call, ``{"ok": false, "error": type, "message": ...}``; it read as ``"ok": true`` with an error beside it."""
    from inspect_ai.tool import ToolCallError

    def time_out(log: Any) -> None:
        for message in _one_sample(log, "s1", 1).messages:
            if message.role == "tool":
                message.error = ToolCallError(type="timeout", message="issue_refund timed out")

    run = op.from_inspect(_rewritten(logs, tmp_path, "tool_error", time_out))
    steps = run.steps
    calls = steps[(steps["kind"] == "tool_call") & (steps["case_id"] == "s1")].set_index("epoch")
    assert calls.loc[1, "result"] == {"ok": False, "error": "timeout", "message": "issue_refund timed out"}
    assert bool(calls.loc[1, "is_error"])
    assert calls.loc[2, "result"] == {"ok": True} and not bool(calls.loc[2, "is_error"])  # the untouched epoch


def test_a_timed_out_samples_trajectory_is_failed_as_a_run_records_it(logs: dict[str, Path], tmp_path: Path) -> None:
    """A sample stopped by its time limit is the case status ``timeout``, but its trajectory's status was stored as
    ``timeout`` too, which no Trajectory holds (completed, failed or waiting): op.Trajectory refused the record."""
    from inspect_ai.log import EvalSampleLimit

    def time_limit(log: Any) -> None:
        _one_sample(log, "s1", 1).limit = EvalSampleLimit(type="time", limit=4)

    run = op.from_inspect(_rewritten(logs, tmp_path, "timed_out", time_limit))
    assert _by_case(run.cases, "status")[("s1", 1)] == "timeout"
    stored = run.record("s1", 1)["trajectory"]
    assert stored is not None and stored["status"] == "failed"
    assert op.Trajectory.model_validate(stored).answer == "refunded"  # what it did is kept, as a run records it


def test_a_log_holding_a_sample_its_early_stop_skipped_is_refused(logs: dict[str, Path], tmp_path: Path) -> None:
    """The header of a finished log says an early-stopping manager skipped s2's epoch 2 (7 of its 8 sample epochs),
    yet the log holds all 8: its header and its samples disagree (an edited or merged log); it was read as is."""
    from inspect_ai.util._early_stopping import EarlyStop, EarlyStoppingSummary

    def stop_but_keep(log: Any) -> None:
        log.results.early_stopping = EarlyStoppingSummary(
            manager="decided", early_stops=[EarlyStop(id="s2", epoch=2, reason="decided")], metadata={})

    folder = _rewritten(logs, tmp_path, "kept", stop_but_keep)
    with pytest.raises(op.OloproofError, match=r"kept.eval: its header counts 7 samples .* but 8 could be read"):
        op.from_inspect(folder)


def test_a_sample_whose_initial_state_is_unknown_has_no_changes_rows(logs: dict[str, Path], tmp_path: Path) -> None:
    """s1 epoch 1 without its store events (a log written with its events trimmed): its initial state is unknown, so
    nothing can be said to have changed; its ``changes`` rows were computed against a missing initial state."""

    def trim(log: Any) -> None:
        sample = _one_sample(log, "s1", 1)
        sample.events = [e for e in sample.events if e.event != "store"]

    run = op.from_inspect(_rewritten(logs, tmp_path, "trimmed", trim), state_key="world")
    assert _by_case(run.snapshots, "state")[("s1", 1)] == {"orders": {"ord-001": {"status": "refunded"}}}
    changes = run.changes  # the hand count of test_snapshots_and_changes_from_the_store less s1 epoch 1
    assert sorted(zip(changes["case_id"], changes["epoch"], strict=True)) == [("3", 1), ("s1", 2)]


def test_a_json_file_beside_the_logs_whose_first_key_is_version_is_not_a_log(logs: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    """A folder of logs holding another JSON file whose first key is ``version`` (a fixtures file, a package
    manifest) but which names no ``eval``: it was taken for a log and the folder refused (cannot read)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(logs["json"], folder / "refund_desk.json")
    (folder / "fixtures.json").write_text(json.dumps({"version": "1.4.2", "orders": ["ord-001"]}), encoding="utf-8")
    assert len(op.from_inspect(folder).cases) == 8  # the log alone
    assert not is_inspect_log(folder / "fixtures.json")


def test_a_log_nested_one_level_past_the_cap_is_refused(tmp_path: Path) -> None:
    """The boundary of the nesting cap: a log one level deeper than MAX_LOG_DEPTH is refused by oloproof, naming the
    depth, before inspect-ai reads it; one exactly at the cap is handed to inspect-ai (which refuses this non-log)."""
    from oloproof_nb._analysis.inspect_files import MAX_LOG_DEPTH

    def nested(name: str, depth: int) -> Path:  # by hand: the outer object is level 1, each list one more
        path = tmp_path / name
        lists = depth - 1
        path.write_text('{"version": 2, "eval": ' + "[" * lists + "]" * lists + "}", encoding="utf-8")
        return path

    over = nested("over.json", MAX_LOG_DEPTH + 1)
    with pytest.raises(op.OloproofError) as info:
        op.from_inspect(over)
    assert str(info.value) == (f"{over}: nested {MAX_LOG_DEPTH + 1} levels deep (at most {MAX_LOG_DEPTH}); not an "
                               "Inspect AI log oloproof reads")
    at = nested("at.json", MAX_LOG_DEPTH)
    with pytest.raises(op.OloproofError, match=r"at\.json: cannot read this Inspect AI log"):
        op.from_inspect(at)


@pytest.fixture(scope="module")
def subsets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``--subset`` logs (tests/_inspect_task.py): one task of 20 samples, 3 failing, run on selections."""
    with shared_logs(tmp_path_factory, "subset", of_mode("--subset")) as root:
        yield root / "logs"


@pytest.mark.parametrize(("folder", "ran"), [("picked", 17), ("first", 12)])
def test_a_log_of_a_selection_of_its_dataset_has_no_release_decision(subsets: Path, folder: str, ran: int,
                                                                      tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``inspect eval --sample-id`` of the 17 samples of 20 that pass gave PASS, exit 0 (17 of 17,
    interval 0.804-1.000 at 0.8), the 3 failing never run; ``--limit 12`` ran the first 12 alike. A log whose
    eval ran fewer of its dataset's samples than it has is read (a notebook can look at it) but has no release
    decision, as a drained one: BLOCK ``unfinished``, ``oloproof gate`` exits 2."""
    run = op.from_inspect(subsets / folder)
    assert len(run.cases) == ran and set(run.verdicts["verdict"]) == {"pass"}  # a hand count: p0-p16 are C
    gate = op.gate(run, release={"criteria": {"graded": 0.8}, **LOOSE})
    assert gate.verdict == "BLOCK"
    assert re.match(rf"unfinished: \S+\.eval: task 'picked' ran {ran} of its dataset's 20 samples \(a --limit or "
                    r"--sample-id selection; to gate it, run every sample, or shards that together cover the dataset, "
                    r"into one folder\)", gate.reason), gate.reason
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {graded: 0.8}\nallow_approximate_methods: true\n")
    assert main(["gate", str(subsets / folder), "--release", str(release)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"ran {ran} of its dataset's 20 samples" in err


def test_shards_of_one_task_that_ran_every_sample_are_gated(subsets: Path) -> None:
    """Two logs of one task run on ``limit=(0, 10)`` and ``limit=(10, 20)`` together ran all 20 samples: no
    selection is named, and the gate decides on the 20 (17 pass, by hand from PICKED)."""
    run = op.from_inspect(subsets / "shards")
    assert len(run.cases) == 20 and int((run.verdicts["verdict"] == "pass").sum()) == 17
    gate = op.gate(run, release={"criteria": {"graded": 0.8}, **LOOSE})
    assert not gate.reason.startswith("unfinished"), gate.reason
    assert gate.table.set_index("criterion").loc["graded", "n"] == 20


def test_a_selection_of_one_dataset_is_not_hidden_by_another_dataset_of_its_task(subsets: Path) -> None:
    """Two datasets under one task name (a task argument picks the dataset), all 6 samples of one run
    and 2 of the other's 4 (``--limit 2``; its last two, never run, fail): the 8 ids were counted against the
    larger dataset's 6, no selection was named, and the gate gave PASS (8 of 8). Each dataset is counted apart."""
    run = op.from_inspect(subsets / "splits")
    assert len(run.cases) == 8 and set(run.verdicts["verdict"]) == {"pass"}  # by hand: t0-t5, h0, h1 are C
    gate = op.gate(run, release={"criteria": {"graded": 0.3}, **LOOSE})
    assert gate.verdict == "BLOCK"
    assert re.match(r"unfinished: \S+\.eval: task 'split' ran 2 of its dataset's 4 samples \(a --limit or "
                    r"--sample-id selection; to gate it, run every sample, or shards that together cover the dataset, "
                    r"into one folder\)", gate.reason), gate.reason


@pytest.fixture(scope="module")
def sourced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``--source`` logs (tests/_inspect_task.py): two tasks driven by an Inspect ``SampleSource``."""
    pytest.importorskip("inspect_ai", minversion="0.3.285")  # SampleSource and enqueue_sample
    with shared_logs(tmp_path_factory, "source", of_mode("--source")) as root:
        yield root / "logs"


def test_a_log_whose_sample_source_added_samples_and_epochs_reads_every_sample(sourced: Path, tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]
                                                                             ) -> None:
    """A task whose dataset is a ``SampleSource`` adds samples (and epochs, ``enqueue_sample(...,
    epoch=2)``) as it runs; its header's ``dataset.sample_ids`` and ``epochs`` name only the seed, and the .eval was
    read by them: 4 of its 8 samples, refused as damaged ("its header counts 8 samples ... but 4 could be read"). By
    hand (SOURCE_FAILS): ``added`` 8 runs, f1 and f2 fail; ``epochs`` 7 runs, b1 epoch 1 and b2 epochs 1-2 fail. The
    .json copy, which Inspect reads whole, reads the same."""
    from inspect_ai.log import read_eval_log, write_eval_log
    from scipy.stats import binomtest

    added = op.from_inspect(sourced / "added")
    verdicts = added.verdicts
    assert sorted(verdicts.loc[verdicts["verdict"] == "fail", "case_id"]) == ["f1", "f2"] and len(verdicts) == 8
    again = op.from_inspect(sourced / "epochs")
    rows = sorted(zip(again.verdicts["case_id"], again.verdicts["epoch"], again.verdicts["verdict"], strict=True))
    assert rows == [("b0", 1, "pass"), ("b1", 1, "fail"), ("b1", 2, "pass"), ("b2", 1, "fail"), ("b2", 2, "fail"),
                    ("b2", 3, "pass"), ("b3", 1, "pass")]
    assert again.epochs == 3
    (log,) = sorted((sourced / "epochs").glob("*.eval"))
    whole = tmp_path / "epochs.json"
    write_eval_log(read_eval_log(str(log)), str(whole), format="json")
    cols = ["case_id", "epoch", "verdict"]
    assert op.from_inspect(whole).verdicts[cols].equals(again.verdicts[cols])
    # 6 of 8 unclustered: Clopper-Pearson's lower bound 0.349 is above 0.3, so the gate decides PASS
    low = binomtest(6, 8).proportion_ci(method="exact").low
    gate = op.gate(added, release={"criteria": {"listed": 0.3}})
    assert gate.verdict == "PASS" and gate.table["ci_low"].iloc[0] == pytest.approx(low)
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {listed: 0.3}\n")
    assert main(["gate", str(sourced / "added"), "--release", str(release)]) == 0
    capsys.readouterr()


def test_a_sample_source_eval_run_with_a_limit_reads_as_a_whole_run_of_its_seed(sourced: Path, tmp_path: Path,
                                                                                 capsys: pytest.CaptureFixture[str]
                                                                                 ) -> None:
    """README (Inspect AI logs): Inspect drops the samples a ``SampleSource`` adds past ``--limit`` with no trace in
    the log's header, so the ``added`` task run with ``limit=4`` reads as a whole run of its seed: a0 … a3, all
    passing (f1 and f2, which fail, never ran). At a threshold of 0.35, between the Clopper-Pearson lower bounds of
    6 of 8 (0.349) and 4 of 4 (0.398), the limited eval gates PASS, exit 0, and the whole eval INSUFFICIENT_EVIDENCE,
    BLOCK, exit 1: the sentence the README states, pinned (no code change: this is Inspect's behaviour)."""
    from scipy.stats import binomtest

    whole, limited = op.from_inspect(sourced / "added"), op.from_inspect(sourced / "limited")
    assert sorted(limited.verdicts["case_id"]) == ["a0", "a1", "a2", "a3"]
    assert set(limited.verdicts["verdict"]) == {"pass"}
    assert (len(whole.verdicts), int((whole.verdicts["verdict"] == "pass").sum())) == (8, 6)
    low_whole, low_limited = (binomtest(k, n).proportion_ci(method="exact").low for k, n in ((6, 8), (4, 4)))
    assert low_whole < 0.35 <= low_limited
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {listed: 0.35}\n")
    by_limit = op.gate(limited, release=release)
    assert by_limit.verdict == "PASS" and by_limit.table["ci_low"].iloc[0] == pytest.approx(low_limited)
    row = op.gate(whole, release=release).table.iloc[0]
    assert (row["verdict"], row["reason"]) == ("INSUFFICIENT_EVIDENCE", "interval_includes_threshold")
    assert main(["gate", str(sourced / "limited"), "--release", str(release)]) == 0
    assert main(["gate", str(sourced / "added"), "--release", str(release)]) == 1
    capsys.readouterr()


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``--settings`` logs (tests/_inspect_task.py): two shards of one task that differ in one setting."""
    with shared_logs(tmp_path_factory, "settings", of_mode("--settings")) as root:
        yield root / "logs"


def _refusal(first: Path, second: Path, key: str, value: str, before: str) -> str:
    return (rf"{re.escape(str(second))}: {re.escape(key)} is {re.escape(value)}, but {re.escape(str(first))} has "
            rf"{re.escape(before)}: logs of one task run with different settings are two agents; read one setting's "
            r"logs at a time \(one folder per setting\) and compare the runs with op\.compare$")


def test_shards_of_one_task_run_at_two_temperatures_are_refused(shards: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Logs of one task, same model, half its samples at temperature 0 and half at 1 (with a system
    message), were read silently as one run of 20 and gated as one agent, pooling two agents' rates. The generation
    settings are part of the agent (an eval's ``temperature=``, in the header's ``plan.config``, or the model's
    ``GenerateConfig``): refused in one line naming both logs and the key. Shards that differ only in
    ``max_connections`` (how calls reach the model) are one agent, read as one run of 20 (17 pass, by hand)."""
    from inspect_ai.log import read_eval_log

    first, second = sorted((shards / "temperature").glob("*.eval"))  # read in this order (same-second names: any)
    was, now = (str(read_eval_log(str(f), header_only=True).plan.config.temperature) for f in (first, second))
    assert {was, now} == {"0.0", "1.0"}
    with pytest.raises(op.OloproofError) as info:
        op.from_inspect(shards / "temperature")
    assert re.match(_refusal(first, second, "plan.config.temperature", now, was), str(info.value)), info.value
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {graded: 0.8}\nallow_approximate_methods: true\n")
    assert main(["gate", str(shards / "temperature"), "--release", str(release)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"plan.config.temperature is {now}, but {first} has {was}" in err, err
    with pytest.raises(op.OloproofError, match=r"eval\.model_generate_config\.\w+ is .*two agents"):
        op.from_inspect(shards / "model_config")
    run = op.from_inspect(shards / "connections")
    assert len(run.cases) == 20 and int((run.verdicts["verdict"] == "pass").sum()) == 17
    gate = op.gate(run, release={"criteria": {"graded": 0.8}, **LOOSE})
    assert gate.table.set_index("criterion").loc["graded", "n"] == 20


def test_shards_run_under_other_sample_limits_are_refused(shards: Path) -> None:
    """The limits a sample runs under (``message_limit``, ``token_limit``, ``time_limit`` ..., in the
    header's ``eval.config``, where a task's own limits are recorded too) and the approval policy of its tool calls
    decide what the agent can do; shards at ``message_limit=50`` and at ``2`` were read as one run of 20 and gated as
    one agent. Refused as two agents, naming the key; shards that differ only in how the eval ran (``max_samples``,
    ``fail_on_error``, log settings) are still one run of 20 (17 pass, by hand)."""
    with pytest.raises(op.OloproofError) as info:
        op.from_inspect(shards / "limits")
    # which log is read first is not fixed: the two are named by the same second and a random suffix
    found = re.search(r"eval\.config\.message_limit is (\S+), but .* has (\S+): logs of one task run with different "
                      r"settings are two agents", str(info.value))
    assert found is not None and {found[1], found[2]} == {"50", "2"}, str(info.value)
    run = op.from_inspect(shards / "eval_config")
    assert len(run.cases) == 20 and int((run.verdicts["verdict"] == "pass").sum()) == 17


def test_a_role_models_connections_and_base_url_are_not_the_agent(shards: Path) -> None:
    """Shards whose ``grader`` role's model differs only in ``max_connections`` and its base URL (how calls
    reach it, left out of the eval's own model) were refused as two agents (``eval.model_roles.grader.config.
    max_connections is 4, but ... has 2``). They are one agent, read as one run of 20 (17 pass, by hand); a role's
    model at another temperature is still refused."""
    run = op.from_inspect(shards / "roles")
    assert len(run.cases) == 20 and int((run.verdicts["verdict"] == "pass").sum()) == 17
    with pytest.raises(op.OloproofError) as info:
        op.from_inspect(shards / "role_temperature")
    # which log is read first is not fixed: the two are named by the same second and a random suffix
    found = re.search(r"eval\.model_roles\.grader\.config\.temperature is (\S+), but .* has (\S+): logs of one task "
                      r"run with different settings are two agents", str(info.value))
    assert found is not None and {found[1], found[2]} == {"0.0", "1.0"}, str(info.value)


def test_shards_of_two_versions_or_sandboxes_of_a_task_are_refused(shards: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Shards of task ``picked`` at ``version=1`` and ``version=2`` (a task's author raises the version
    when the task changes), or with a ``local`` sandbox and with none, were read silently as one run of 20 samples
    and gated as one task. Refused in one line naming the key (``eval.task_version``, ``eval.sandbox.type``); the
    command exits 2."""
    pytest.importorskip("inspect_ai")
    for folder, key, values in [("version", "eval.task_version", {"1", "2"}),
                                ("sandbox", "eval.sandbox.type", {'"local"', "not set"})]:
        with pytest.raises(op.OloproofError) as info:
            op.from_inspect(shards / folder)
        # which log is read first is not fixed: the two are named by the same second and a random suffix
        found = re.search(rf"{re.escape(key)} is (.+), but .* has (.+): logs of one task run with different settings "
                          r"are two versions of the task; read one setting's logs at a time", str(info.value))
        assert found is not None and {found[1], found[2]} == values, str(info.value)
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {graded: 0.5}\nallow_approximate_methods: true\nmin_clusters: 2\n")
    assert main(["gate", str(shards / "version"), "--release", str(release)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "eval.task_version is" in err, err


def test_two_tasks_of_other_versions_and_sandboxes_are_one_run(shards: Path) -> None:
    """A task's version and sandbox are compared among the logs of that task only. A folder of
    task ``picked`` at ``version=1`` with a ``local`` sandbox and task ``other`` at ``version=2`` with none (each run
    whole) is one run of two tasks (40 samples, 17 of each task's 20 pass, by hand), not "two versions of the task":
    compared across tasks, the second log was refused."""
    pytest.importorskip("inspect_ai")
    run = op.from_inspect(shards / "two_tasks")
    assert len(run.cases) == 40 and int((run.verdicts["verdict"] == "pass").sum()) == 34


def test_shards_on_two_gpus_of_one_kind_are_one_agent(shards: Path) -> None:
    """Every model argument was compared, so shards of one model on ``device="cuda:0"``, port 8000 and
    on ``"cuda:1"``, port 8001 (where the model runs, not what it computes) were refused as two agents
    (``eval.model_args.device is "cuda:1", but ... has "cuda:0"``). They are one run of 20 (17 pass, by hand)."""
    pytest.importorskip("inspect_ai")
    run = op.from_inspect(shards / "device")
    assert len(run.cases) == 20 and int((run.verdicts["verdict"] == "pass").sum()) == 17


def test_the_selections_are_counted_per_task_and_dataset_as_text_ids() -> None:
    """Task a ran samples 1 and 2, task b samples 3 and 4 of one 4-sample dataset named
    alike: each ran 2 of 4 (together they are no shards of one task). Shards of task c ran ids 1 and '1' (the same
    sample, once an int) and 2 of 3: 2 of 3, named after the first log. A header listing no sample ran none of
    them; one without sample ids adds nothing. Task f ran half of each of two 4-sample datasets: two selections."""
    from types import SimpleNamespace as NS

    from oloproof_nb._analysis.inspect_log import _note_selection, _selections

    picked: dict[tuple[str, str, int], tuple[set[str], Path]] = {}
    for task, ids, file in [("a", [1, 2], "a1.eval"), ("b", [3, 4], "b1.eval"), ("c", [1], "c1.eval"),
                            ("c", ["1", 2], "c2.eval"), ("d", None, "d1.eval"), ("e", [], "e1.eval")]:
        _note_selection(picked, task, NS(name="qa", samples=4 if task != "c" else 3, sample_ids=ids), Path(file))
    for name, ids, file in [("qa", [1, 2], "f1.eval"), ("qb", [3, 4], "f2.eval")]:  # one task, two datasets of 4
        _note_selection(picked, "f", NS(name=name, samples=4, sample_ids=ids), Path(file))
    assert _selections(picked) == [
        f"{name}: task {task!r} ran 2 of its dataset's {size} samples (a --limit or --sample-id selection; to gate "
        "it, run every sample, or shards that together cover the dataset, into one folder)"
        for name, task, size in [("a1.eval", "a", 4), ("b1.eval", "b", 4), ("c1.eval", "c", 3)]] + [
        "e1.eval: task 'e' ran 0 of its dataset's 4 samples (a --limit or --sample-id selection; to gate it, run "
        "every sample, or shards that together cover the dataset, into one folder)"] + [
        f"{name}: task 'f' ran 2 of its dataset's 4 samples (a --limit or --sample-id selection; to gate it, run "
        "every sample, or shards that together cover the dataset, into one folder)" for name in ("f1.eval", "f2.eval")]


def test_a_solver_setting_is_a_tasks_own_and_a_model_setting_every_tasks(logs: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    """A second task whose plan runs at temperature 0.3 (another task may use another solver)
    is read with the first; a second task whose model's generate config says temperature 0.3 is refused, the
    model's settings being the same in every log of one agent whatever the task."""
    from inspect_ai.log import read_eval_log, write_eval_log

    def second_task(folder: Path, change: str) -> Path:
        folder.mkdir()
        shutil.copy2(logs["json"], folder / "a.json")
        other = read_eval_log(str(logs["json"]))
        other.eval.task = "refund_desk_b"
        other.eval.dataset.sample_ids = [f"b-{i}" for i in other.eval.dataset.sample_ids or []]
        for sample in other.samples or []:
            sample.id = f"b-{sample.id}"
        if change == "plan":
            other.plan.config.temperature = 0.3
        else:
            other.eval.model_generate_config.temperature = 0.3
        write_eval_log(other, str(folder / "b.json"), format="json")
        return folder

    one = op.from_inspect(logs["json"])
    both = op.from_inspect(second_task(tmp_path / "plan", "plan"))
    assert len(both.cases) == 2 * len(one.cases)
    with pytest.raises(op.OloproofError, match=r"eval\.model_generate_config\.temperature is .*two agents"):
        op.from_inspect(second_task(tmp_path / "model", "model"))


def test_a_log_modified_outside_the_years_datetime_holds_is_read_by_its_creation_time(
        logs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log whose file carries a modification time past the year 9999 (tmpfs holds one: ``touch -d
    @253402300800``, a clock far ahead) stopped ``oloproof gate LOG`` with "internal error: ValueError: year 10000
    is out of range", though the log records when it was created: its modification time was turned into a date
    for every log, needed or not. It is read only for a log without a creation time (simulated: the file's stat
    says year 10000); the run starts when the log says it was created."""
    from datetime import datetime, timezone

    log = tmp_path / "refund_desk.json"
    shutil.copy2(logs["json"], log)
    real = Path.stat

    def far_ahead(self: Path, **kwargs: Any) -> os.stat_result:
        st = real(self, **kwargs)
        if self != log:
            return st
        return os.stat_result((*st[:8], 253402300800, st[9]))  # st_mtime: 10000-01-01

    monkeypatch.setattr(Path, "stat", far_ahead)
    run = op.from_inspect(log)
    created = json.loads(log.read_text(encoding="utf-8"))["eval"]["created"]
    assert run.manifest.started_at == datetime.fromisoformat(created).astimezone(timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


def test_a_json_log_whose_keys_another_tool_sorted_is_never_left_out_of_its_folder(logs: dict[str, Path],
                                                                                 tmp_path: Path) -> None:
    """A ``.json`` log written again with its keys sorted (``jq -S``, ``json.dump(sort_keys=True)``)
    does not start with ``"version"``. It was not taken for a log, so a folder holding it beside another log was
    judged on the other alone, silently (8 samples of 16). Inspect's ``read_eval_log`` reads it, but not its header
    alone (``header_only``), so it is refused, naming the file, as a log that cannot be read is."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(logs["eval"], folder / logs["eval"].name)
    body = json.loads(logs["json"].read_text(encoding="utf-8"))
    for sample in body["samples"]:  # other samples than the .eval's, so the two are not one log twice
        sample["id"] = f"b{sample['id']}"
    body["eval"]["dataset"]["sample_ids"] = [f"b{sid}" for sid in body["eval"]["dataset"]["sample_ids"]]
    again = folder / "again.json"
    again.write_text(json.dumps(body, sort_keys=True), encoding="utf-8")
    assert not again.read_text(encoding="utf-8").startswith('{"version"')
    assert is_inspect_log(again)
    with pytest.raises(op.OloproofError, match=r"again\.json: cannot read this Inspect AI log"):
        op.from_inspect(folder)
    assert main(["gate", str(folder)]) == 2
    listing = tmp_path / "logs.json"  # an eval_set's listing, its keys sorted too: each log's header one level down
    listing.write_text(json.dumps({logs["eval"].name: {"eval": body["eval"], "version": 2}}, sort_keys=True),
                       encoding="utf-8")
    assert not is_inspect_log(listing)


def test_a_header_planning_a_huge_number_of_epochs_is_read_by_its_summaries_not_listed(
        logs: dict[str, Path], tmp_path: Path) -> None:
    """A log whose header says ``"epochs": 10000000000000000000`` (edited, or damaged), beside 8 samples that
    ``results.total_samples`` counts: the plan of 4 samples × 10¹⁹ epochs was listed one entry at a time, and the
    process took 23 GB before the kernel killed it. Now a plan past MAX_PLAN is read by the log's own
    sample summaries: its 8 sample epochs, as the unedited log. Run under a 1 GiB address-space limit."""
    pytest.importorskip("resource")  # the child limits its address space
    text = logs["json"].read_text(encoding="utf-8")
    assert text.count('"epochs": 2,') == 1
    edited = tmp_path / "epochs.json"
    edited.write_text(text.replace('"epochs": 2,', '"epochs": 10000000000000000000,'), encoding="utf-8")
    script = (f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({2**30}, {2**30}))\n"
              "import sys\nimport oloproof_nb as op\n"
              "for path in sys.argv[1:]:\n"
              "    try:\n        cases = op.from_inspect(path).cases\n"
              "        print(sorted(zip(cases['case_id'].astype(str), cases['epoch'].astype(int))))\n"
              "    except Exception as exc:\n        print(f'{type(exc).__name__}: {exc}')\n")
    done = subprocess.run([sys.executable, "-c", script, str(logs["json"]), str(edited)], capture_output=True,
                          text=True, timeout=120)
    unedited, read = done.stdout.splitlines()
    assert read == unedited, done.stderr
    assert read.count("', ") == 8  # 4 samples × 2 epochs, by hand


def _plan_header(ids: list[str], epochs: int, status: str = "success", total: int | None = None) -> Any:
    """A log header as ``_samples`` reads it: the plan (``sample_ids`` × ``epochs``), the status and the count."""
    from types import SimpleNamespace as NS

    return NS(eval=NS(dataset=NS(sample_ids=ids), config=NS(epochs=epochs)), status=status,
              results=NS(total_samples=total, logged_samples=None))


def _summaries_log(held: list[tuple[str, int]] | None) -> Any:
    """A stand-in for ``inspect_ai.log``: its summaries hold ``held`` (None: they cannot be read); a sample read is
    its ``(id, epoch)``."""
    from types import SimpleNamespace as NS

    def summaries(file: Path) -> list[Any]:
        if held is None:
            raise ValueError("no summaries")
        return [NS(id=sid, epoch=epoch) for sid, epoch in held]

    return NS(read_eval_log_sample_summaries=summaries,
              read_eval_log_sample=lambda file, sid, epoch, resolve_attachments: (sid, epoch))


def test_samples_are_read_in_the_plans_order_and_a_huge_plan_by_its_summaries(monkeypatch: pytest.MonkeyPatch,
                                                                              tmp_path: Path) -> None:
    """``_samples`` streams each dataset sample's epochs in turn (Inspect's order), whatever order the summaries
    list them in; a plan past MAX_PLAN is read by its summaries even when the header counts nothing, and refused in
    one line when they cannot be read; a finished plan of MAX_PLAN sample epochs is listed. Hand-written plans
    (the last epoch moved after the others, epochs in the summaries' order, a huge plan listed
    or refused as a damaged log, a plan of exactly MAX_PLAN read by its summaries)."""
    from oloproof_nb._analysis import inspect_log
    from oloproof_nb.errors import OloproofError

    file = tmp_path / "log.json"
    held = [("b", 2), ("a", 2), ("b", 1), ("a", 1), ("z", 1)]  # z: added as the task ran (a SampleSource)
    started = _plan_header(["a", "b"], 2, status="started")
    assert list(inspect_log._samples(_summaries_log(held), file, started)) == [
        ("a", 1), ("a", 2), ("b", 1), ("b", 2), ("z", 1)]
    huge = _plan_header(["a", "b"], 10**19)  # a success that counts nothing: only the plan's size says read less
    assert list(inspect_log._samples(_summaries_log(held[:4]), file, huge)) == [("a", 1), ("a", 2), ("b", 1),
                                                                                 ("b", 2)]
    with pytest.raises(OloproofError, match=rf"^{re.escape(str(file))}: its header plans 20,000,000,000,000,000,000 "
                                            r"sample epochs \(2 samples × 10,000,000,000,000,000,000 epochs\)"):
        list(inspect_log._samples(_summaries_log(None), file, huge))
    # epochs 9 and 1 held in that order (a set of them iterates 9 first): still 1 before 9
    assert list(inspect_log._samples(_summaries_log([("a", 9), ("a", 1)]), file, _plan_header(["a"], 9, "started"))
                ) == [("a", 1), ("a", 9)]
    monkeypatch.setattr(inspect_log, "MAX_PLAN", 4)  # a finished plan of MAX_PLAN: listed, no summaries read
    asked = _summaries_log(held[:1])
    read = asked.read_eval_log_sample_summaries
    calls: list[Path] = []
    asked.read_eval_log_sample_summaries = lambda f: calls.append(f) or read(f)
    assert list(inspect_log._samples(asked, file, _plan_header(["a", "b"], 2))) == [
        ("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert calls == []


@pytest.mark.slow  # a child process importing inspect-ai: about 3 s
def test_a_zstd_eval_log_is_read_in_a_fresh_process_inspect(logs: dict[str, Path]) -> None:
    """Inspect AI writes an .eval log's members with zstd (compression method 93), which the standard ``zipfile`` reads
    only once inspect-ai is imported (``zipfile_zstd`` patches it in, before Python 3.14). :func:`check_log_nesting`
    opens the archive with ``zipfile``: run before inspect-ai was imported, it refused every real log as "cannot read
    this Inspect AI log (NotImplementedError: That compression method is not supported)". A fresh process, where
    nothing imported inspect-ai before ``from_inspect``, pins that order."""
    with zipfile.ZipFile(logs["eval"]) as archive:
        assert {info.compress_type for info in archive.infolist()} == {93}  # zstd: what this test is about
    code = "import sys, oloproof_nb as op; print(len(op.from_inspect(sys.argv[1]).cases))"
    out = subprocess.run([sys.executable, "-c", code, str(logs["eval"])], capture_output=True, text=True)
    assert (out.returncode, out.stdout.strip()) == (0, "8"), out.stderr
