"""Inspect AI log rules (settings retuned while an eval ran, scores edited by hand, log names): the edges the other
Inspect log tests leave unpinned, each found by a mutant they let live.

- **A retune to the value in force.** ``inspect ctl config --message-limit 50`` on an eval launched at
  ``message_limit=50`` is recorded in ``config_updates`` all the same (Inspect records a change whenever no live
  override was set). Every sample ran at 50 (Inspect's own ``effective_eval_config`` gives 50), yet the log was refused
  as run under two settings. Now a change to the value in force decides nothing; one that moved the limit is refused
  even when a later ``clear`` put it back (the samples between ran under the other), as is one in a later update or
  in a later change of one update, and a change of a generation setting of the agent (``temperature``), while a
  retune of the client's ``timeout`` is read.
- **Scores edited by hand.** The warning names the edit that gave the score its value now: a score edited twice
  (``I`` to ``P`` by ``a``, then to ``C`` by ``b``, then its explanation by ``c``) is ``from 'I' to 'C' by 'b'``; one
  edit alone is said too; an edit at epoch 2 names epoch 2; a score added by ``edit_score`` (no scorer value) is
  said; an edit putting back the scorer's own value is not.
- **An infinite score shows no scale.** A 0–1 scorer computing a ratio gave ``inf`` once: read as a number off [0, 1],
  it made the criterion a rating scale and its other 8 scores ``missing`` (0 of 9 judged, where by hand 6 pass and
  2 fail); its reason asked for a ``pass_threshold``, with which it would be missing still. Now ±inf is no score and
  no scale, its reason says so.
- **Log names.** Inspect lists a ``.json`` as a log when its name *starts* with the eval's time
  (``inspect_ai.log.list_eval_logs``, ``re.match``), with ``-`` or ``:`` between hours, minutes and seconds: a
  ``notes_2026-07-25T14-00-00.json`` beside the logs is not one, an empty ``2026-07-25T14:00:00+00:00_t_x.json`` is.

The logs are made for real with the mockllm model by this file run as a script (``python THIS ROOT``), in its own
process, as ``tests/_analysis/test_inspect_logs_mixed_settings.py`` does; the retuned copies add the ``config_updates``
record Inspect writes (``ConfigUpdate``), and the edited ones are edited by Inspect's own ``edit_score``.
"""

from __future__ import annotations

import json
import shutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from _inspect_logs import made, run_inspect, shared_logs

#: (folder, the config_updates as (config, name, value or "clear") per update) of the log launched at message_limit=50
RETUNES = {
    "same": [[("eval", "message_limit", 50)]],
    "same_cleared": [[("eval", "message_limit", 50)], [("eval", "message_limit", "clear")]],
    "back": [[("eval", "message_limit", 100)], [("eval", "message_limit", "clear")]],
    "later": [[("eval", "max_samples", 2)], [("eval", "max_samples", 4), ("eval", "token_limit", 1000)]],
    "timeout": [[("generate", "timeout", 30)]],
    "temperature": [[("generate", "temperature", 0.9)]],
}

#: The ``unit`` task's 0–1 scores, as its scorer computed them (read by ``float()``): 6 ones, 2 zeros, one ``inf``.
UNIT = ["1"] * 6 + ["0"] * 2 + ["inf"]


def _write(root: Path) -> None:  # pragma: no cover - run in a child process
    """The logs (see the module): ROOT/limited and its retuned copies ROOT/<RETUNES key>; ROOT/graded and its edited
    copies ROOT/one_edit, ROOT/twice, ROOT/added; ROOT/epochs (2 epochs) and ROOT/epoch2. Each copy is written only
    when the installed inspect-ai has the API (``ConfigUpdate``, ``edit_score``)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai import log as inspect_log
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, accuracy, scorer
    from inspect_ai.solver import TaskState, generate

    @scorer(metrics=[accuracy()])
    def graded():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=state.metadata["grade"])

        return score

    def policy(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        out = ModelOutput.from_content("mockllm/model", "ok")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=policy)

    def run(folder: str, grades: str, **options: object) -> str:
        task = Task(dataset=[Sample(id=f"p{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                             for i, grade in enumerate(grades)], solver=generate(), scorer=graded(), name="picked")
        logs = inspect_eval(task, model=model, log_dir=str(root / folder), display="none", max_samples=8, **options)
        assert logs[0].status == "success"
        return str(logs[0].location)

    def copy(log: object, folder: str, name: str) -> None:
        (root / folder).mkdir()
        write_eval_log(log, str(root / folder / Path(name).name))  # type: ignore[arg-type]

    @scorer(metrics=[accuracy()])
    def unit():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=float(state.metadata["grade"]))  # a 0–1 score computed as a ratio: inf once

        return score

    unit_task = Task(dataset=[Sample(id=f"u{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                              for i, grade in enumerate(UNIT)], solver=generate(), scorer=unit(), name="unit")
    assert inspect_eval(unit_task, model=model, log_dir=str(root / "unit"), display="none")[0].status == "success"
    limited = run("limited", "C" * 20, message_limit=50)
    run("json", "C" * 19 + "I", log_format="json")
    for folder, updates in RETUNES.items() if hasattr(inspect_log, "ConfigUpdate") else ():
        log = read_eval_log(limited)
        log.config_updates = [inspect_log.ConfigUpdate(
            changes=[inspect_log.ConfigValueChange(config=kind, name=name, value=None if value == "clear" else value,
                                                   cleared=value == "clear") for kind, name, value in update],
            scope="task", provenance=inspect_log.ProvenanceData(author="ops", reason="retune"))
            for update in updates]
        copy(log, folder, limited)
        if hasattr(inspect_log, "effective_eval_config"):  # Inspect's own fold: what the eval ended up under
            (root / folder / "effective.json").write_text(json.dumps(
                inspect_log.effective_eval_config(log).message_limit), encoding="utf-8")
    graded_path = run("graded", "C" * 27 + "I" * 3)
    two_epochs = run("epochs", "I" * 5, epochs=2)
    if not hasattr(inspect_log, "edit_score"):
        return
    from inspect_ai.scorer import ScoreEdit

    def edit(log: object, sid: str, who: str, why: str | None = None, epoch: int | None = None,
             name: str = "graded", **change: object) -> None:
        inspect_log.edit_score(log, sid, name, ScoreEdit(  # type: ignore[arg-type]
            **change, provenance=inspect_log.ProvenanceData(author=who, reason=why)), epoch=epoch)  # type: ignore[arg-type]

    log = read_eval_log(graded_path)
    edit(log, "p29", "dev", "close enough", value="C")
    edit(log, "p0", "dev", "confirmed", value="C")  # the scorer's own value: no change
    copy(log, "one_edit", graded_path)
    log = read_eval_log(graded_path)
    edit(log, "p29", "a", "partial", value="P")
    edit(log, "p29", "b", "full marks", value="C")
    edit(log, "p29", "c", "typo", explanation="fixed")
    copy(log, "twice", graded_path)
    log = read_eval_log(graded_path)
    edit(log, "p3", "dev", "second look", name="review", value="C")
    copy(log, "added", graded_path)
    log = read_eval_log(two_epochs)
    edit(log, "p1", "dev", "second try was fine", epoch=2, value="C")
    copy(log, "epoch2", two_epochs)


def _made_by_a_child(root: Path) -> None:
    run_inspect([__file__, str(root)], root)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The logs :func:`_write` makes, in a child process, once per test session (read only: a test edits a copy)."""
    pytest.importorskip("inspect_ai")
    with shared_logs(tmp_path_factory, "retunes-edits", _made_by_a_child) as root:
        yield root


def _only_log(folder: Path, tmp_path: Path) -> Path:
    """The log of ``folder`` alone, in a folder of its own (``effective.json`` beside it is not a log)."""
    (log,) = sorted(folder.glob("*.eval"))
    alone = tmp_path / folder.name
    alone.mkdir()
    shutil.copy(log, alone / log.name)
    return alone


def _gate(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from oloproof_nb.cli import main

    release = tmp_path / "release.yaml"
    release.write_text("criteria: {graded: 0.7}\nallow_approximate_methods: true\n", encoding="utf-8")
    code = main(["gate", str(folder), "--release", str(release)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_retune_to_the_value_in_force_is_read(logs: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``message_limit`` set to 50 on an eval launched at 50 (then that override cleared, back to the launch value):
    Inspect's ``effective_eval_config`` gives 50, every sample ran at it; the log gates 20 of 20 as its unretuned
    original does (before, it was refused, exit 2)."""
    folders = [made(logs / "same"), made(logs / "same_cleared")]
    for folder in folders:
        if (folder / "effective.json").exists():
            assert json.loads((folder / "effective.json").read_text(encoding="utf-8")) == 50
    for log in [_only_log(logs / "limited", tmp_path)] + [_only_log(f, tmp_path) for f in folders]:
        code, out, err = _gate(log, tmp_path, capsys)
        assert code == 0 and "| graded    | 20 | 20 " in out, (log, out, err)


@pytest.mark.parametrize(("folder", "said"), [
    ("back", "message_limit was changed to 100 while it ran"),
    ("later", "token_limit was changed to 1000 while it ran"),
    ("temperature", "temperature was changed to 0.9 while it ran"),
])
def test_a_retune_of_the_agent_is_refused_wherever_it_is_recorded(
        logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], folder: str, said: str) -> None:
    """Limited at 100, then put back (``clear``: Inspect's fold ends at 50, the launch value, but the samples between
    ran at 100); a limit changed in the second change of the second update; a generation setting of the agent."""
    import oloproof_nb as op

    log = _only_log(made(logs / folder), tmp_path)
    if folder == "back" and (logs / folder / "effective.json").exists():
        assert json.loads((logs / folder / "effective.json").read_text(encoding="utf-8")) == 50
    code, out, err = _gate(log, tmp_path, capsys)
    line = err.strip()
    assert code == 2 and "PASS" not in out and "\n" not in line and "Traceback" not in line
    assert said in line and "config_updates" in line
    with pytest.raises(op.OloproofError, match=said):
        op.from_inspect(log)


def test_a_retune_of_how_the_client_calls_the_model_is_read(logs: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``timeout`` (``inspect ctl config --timeout``) is how calls reach the model, not the agent: 20 of 20, PASS."""
    code, out, err = _gate(_only_log(made(logs / "timeout"), tmp_path), tmp_path, capsys)
    assert code == 0 and "| graded    | 20 | 20 " in out, (out, err)


def _edit_warnings(folder: Path) -> tuple[list[str], object]:
    import oloproof_nb as op

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = op.from_inspect(folder)
    return [str(w.message) for w in caught if "changed by hand" in str(w.message)], run


def test_one_edit_alone_is_said_and_an_edit_to_the_scorers_own_value_is_not(logs: Path) -> None:
    """p29 edited from I to C, p0 from C to C: one score changed (by hand: 28 of 30 pass, the unedited log's 27 + 1)."""
    said, run = _edit_warnings(made(logs / "one_edit"))
    assert int((run.verdicts.verdict == "pass").sum()) == 28  # type: ignore[attr-defined]
    assert len(said) == 1
    assert "1 score(s) of scorer 'graded' were changed by hand after the eval" in said[0]
    assert "the first sample 'p29' epoch 1 from 'I' to 'C' by 'dev' ('close enough')" in said[0]


def test_the_edit_named_is_the_one_that_gave_the_value_now(logs: Path) -> None:
    """p29: I to P by a, P to C by b, then its explanation by c: its value now is b's."""
    said, _ = _edit_warnings(made(logs / "twice"))
    assert len(said) == 1
    assert "1 score(s) of scorer 'graded'" in said[0]
    assert "sample 'p29' epoch 1 from 'I' to 'C' by 'b' ('full marks')" in said[0]


def test_a_score_added_by_hand_is_said(logs: Path) -> None:
    """``edit_score`` of a scorer the sample had no score of adds one: no scorer gave it, so it is said as added,
    and is no criterion (as a score under a name no scorer gave)."""
    import oloproof_nb as op

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = op.from_inspect(made(logs / "added"))
    said = [str(w.message) for w in caught if "by hand" in str(w.message)]
    assert len(said) == 1
    assert "1 score(s) under 'review', a name no scorer of the eval gave, were added by hand" in said[0]
    assert "sample 'p3' epoch 1 as 'C' by 'dev' ('second look')" in said[0]
    assert "review" not in set(run.verdicts.criterion)


def test_an_edit_names_its_epoch(logs: Path) -> None:
    """5 samples at 2 epochs, every score I; p1's second epoch edited to C: 1 of 10 pass (by hand)."""
    said, run = _edit_warnings(made(logs / "epoch2"))
    assert int((run.verdicts.verdict == "pass").sum()) == 1  # type: ignore[attr-defined]
    assert len(said) == 1 and "sample 'p1' epoch 2 from 'I' to 'C' by 'dev'" in said[0]


def test_a_json_named_with_a_time_inside_its_name_is_not_a_log(logs: Path, tmp_path: Path) -> None:
    """Inspect's listing matches the time at the start of a name only: ``notes_2026-07-25T14-00-00.json`` beside the
    log is no log, to Inspect as to oloproof (the folder reads as its one log)."""
    from inspect_ai.log import list_eval_logs

    from oloproof_nb._analysis.inspect_files import inspect_log_files

    folder = _only_log(logs / "limited", tmp_path)
    (folder / "notes_2026-07-25T14-00-00.json").write_text("{}", encoding="utf-8")
    assert [Path(info.name).name for info in list_eval_logs(str(folder))] == [next(folder.glob("*.eval")).name]
    assert inspect_log_files(folder) == sorted(folder.glob("*.eval"))


def test_a_json_log_under_the_name_inspect_gave_it_is_read(logs: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """An eval run with ``log_format="json"``: its log, named by Inspect, is a log (19 of 20 pass, by hand), not a
    ``.json`` named as a log that does not read as one."""
    from inspect_ai.log import list_eval_logs

    import oloproof_nb as op

    (log,) = sorted((logs / "json").glob("*.json"))
    assert [Path(info.name).name for info in list_eval_logs(str(logs / "json"))] == [log.name]
    assert log.name[:4].isdigit() and "_picked_" in log.name
    run = op.from_inspect(logs / "json")
    assert int((run.verdicts.verdict == "pass").sum()) == 19 and len(run.verdicts) == 20
    code, out, err = _gate(logs / "json", tmp_path, capsys)
    assert code == 0 and "| graded    | 20 | 19 " in out, (out, err)


def test_an_empty_json_named_with_colons_in_its_time_is_refused(logs: Path, tmp_path: Path) -> None:
    """Inspect's log names may write the time with ``:`` (``14:00:00``); its listing takes such a ``.json`` for one."""
    from inspect_ai.log import list_eval_logs

    import oloproof_nb as op
    from oloproof_nb._analysis.inspect_files import inspect_log_files

    folder = _only_log(logs / "limited", tmp_path)
    empty = folder / "2026-07-25T14:00:00+00:00_picked_x.json"
    empty.write_bytes(b"")
    assert empty.name in [Path(info.name).name for info in list_eval_logs(str(folder))]
    with pytest.raises(op.OloproofError, match=r"^.*2026-07-25T14:00:00\+00:00_picked_x\.json: not a readable"):
        inspect_log_files(folder)


def test_an_infinite_score_shows_no_scale(logs: Path) -> None:
    """A 0–1 scorer's 6 ones, 2 zeros and one ``inf``, no ``pass_threshold``: by hand 6 pass, 2 fail, the inf
    missing as no score (before, the inf was taken for a scale off [0, 1] and all 9 were missing)."""
    import oloproof_nb as op
    from oloproof_nb._core.scoremap import on_default_scale, score_verdict

    assert sum(g == "1" for g in UNIT) == 6 and sum(g == "0" for g in UNIT) == 2
    run = op.from_inspect(logs / "unit")
    verdicts = run.verdicts.set_index("case_id")
    assert verdicts.verdict.value_counts().to_dict() == {"pass": 6, "fail": 2, "missing": 1}
    assert verdicts.loc["u8", "verdict"] == "missing"
    assert verdicts.loc["u8", "reason"] == "score inf is not a finite number, so no score"
    for value in (float("inf"), float("-inf")):
        assert on_default_scale(value) is None
        assert score_verdict(value) == ("missing", f"score {value!r} is not a finite number, so no score")
    assert on_default_scale(7.0) is False and score_verdict(7.0)[1].startswith("score 7.0 is not in [0, 1]")


if __name__ == "__main__":  # pragma: no cover - the logs, in a child process of the fixture
    _write(Path(sys.argv[1]))
