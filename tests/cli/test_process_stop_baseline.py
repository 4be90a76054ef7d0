"""``oloproof run --baseline`` stopped in its do-nothing baseline, once the run itself had finished.

Its line said ``finish it with: oloproof run SUITE --out DIR --resume``: that resume finds the run finished and
does nothing, and makes no baseline (the flag was left out). A bug in the baseline also named a Python call,
``op.baseline(suite)``. The line now says the run finished and gives the command that makes its baseline anew
(``--resume --baseline``: the finished run is left as it is, and a baseline is never resumed).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.evaluators import answer as answer_module

CASES = [{"id": f"c{i}", "input": {"answer": "done", "k": i}, "initial_state": {}, "expected": {"answer": "done"}}
         for i in range(3)]


def _suite(make_suite: Callable[..., Path]) -> Path:
    return make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.1}})


def test_a_bug_in_the_baseline_names_the_command_that_makes_it_anew(make_suite: Callable[..., Path], tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The answer check raises on the no-op's answer (None) alone: the run finishes, its baseline stops on a bug."""
    root, out = _suite(make_suite), tmp_path / "run"
    real = answer_module.answers_equal

    def judge(expected: Any, actual: Any, normalize: bool) -> bool:
        if actual is None:
            raise ZeroDivisionError("a bug in the answer check")
        return real(expected, actual, normalize)

    monkeypatch.setattr(answer_module, "answers_equal", judge)
    assert main(["run", str(root), "--out", str(out), "--baseline", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("oloproof: the do-nothing baseline stopped: internal error: "
                          "ZeroDivisionError: a bug in the answer check")
    assert "op.baseline" not in err and "op.run" not in err
    assert err.endswith(f"; the run finished in {out} — run its do-nothing baseline anew with: oloproof run {root} "
                        f"--out {out} --resume --baseline\n")
    assert op.load_run(out).finished
    monkeypatch.setattr(answer_module, "answers_equal", real)
    # the command given makes the baseline and leaves the finished run as it was
    journal = (out / "cases.jsonl").read_bytes()
    assert main(["run", str(root), "--out", str(out), "--resume", "--baseline", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "nothing to resume" in printed and "with a do-nothing agent" in printed
    assert (out / "cases.jsonl").read_bytes() == journal


@pytest.mark.parametrize(("final", "exitcode", "start"), [
    (("interrupted",), 0, "oloproof: interrupted; the run finished in"),
    (None, -9, "oloproof: error: the do-nothing baseline stopped before it finished: the process running the "
               "system was killed by signal SIGKILL; the run finished in"),
])
def test_a_stop_or_a_kill_in_the_baseline_names_the_command_that_makes_it_anew(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], final: tuple[str, ...] | None, exitcode: int, start: str) -> None:
    """A Ctrl-C, or the end of the run's process, once the run had finished: the baseline was running."""
    from oloproof_nb.cli import commands

    root, out = _suite(make_suite), tmp_path / "run"
    assert op.run(op.load_suite(root), out=out, progress=False).finished
    monkeypatch.setattr(commands, "run_in_child", lambda args, params, update: (final, out, exitcode, None))
    assert main(["run", str(root), "--out", str(out), "--baseline", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (f"{start} {out} — run its do-nothing baseline anew with: oloproof run {root} --out {out} "
                   "--resume --baseline\n")


def test_a_run_stopped_before_it_finished_keeps_the_baseline_in_its_resume(make_suite: Callable[..., Path],
                                                                           tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Stopped in the run itself, ``--resume`` alone finished it with no baseline: the command keeps the flag."""
    from oloproof_nb.cli import commands

    root, out = _suite(make_suite), tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text("{}", encoding="utf-8")  # started, not finished
    monkeypatch.setattr(commands, "run_in_child", lambda args, params, update: (("interrupted",), out, 0, None))
    assert main(["run", str(root), "--out", str(out), "--baseline", "--quiet"]) == 2
    assert capsys.readouterr().err == (f"oloproof: interrupted; the run is in {out} — finish it with: oloproof run "
                                       f"{root} --out {out} --resume --baseline\n")
