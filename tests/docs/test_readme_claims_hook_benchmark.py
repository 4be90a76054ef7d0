"""The README sentences changed since ``9720f56`` (5 Dec 2026) that no test pinned yet.

Each test names the sentence it pins and runs it against the real behaviour. Expected values are counted by hand
(from the example's ``bench/`` files, or from POSIX ``sh`` and signal numbers), never read back from the code that
made them. The sentences other tests already pin are not repeated here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb import cli
from oloproof_nb.examples import init_example

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "wrapped-benchmark"
TASKS = json.loads((EXAMPLE / "bench" / "tasks.json").read_text(encoding="utf-8"))
# By hand, as tests/test_examples_wrapped_benchmark.py counts them: the tasks that name their order by recency fail
# state_matches (defect 1), each with its polite copy: 48 - 2 * 11 = 26 pass.
BY_RECENCY = {str(t["task_id"]) for t in TASKS if "#" not in t["instruction"] and t["actions"]}

#: The installed console script (``pip install -e .`` makes it next to the interpreter).
SCRIPT = Path(sys.executable).with_name("oloproof")


# --- README section 1: "A model call (`rec.model`) that raises is still not recorded: a replay returns recorded
# outputs without calling the model." The other tests raise from *tools* only.

def test_a_model_call_that_raises_reaches_the_agent_and_leaves_no_step() -> None:
    rec = op.Recorder()

    def down() -> str:
        raise TimeoutError("the model is down")

    with pytest.raises(TimeoutError, match="the model is down"):
        rec.model("llm", down)
    assert rec.steps == []  # not recorded: no step, unlike a tool that raised
    rec.tool("lookup", lambda: {"ok": True})
    assert [s.kind for s in rec.steps] == ["tool_call"]


# --- README section 8, `oloproof receipt`: "with `["sh", "-c", "SCRIPT"]` that argument is the script's `$0`, not
# `$1`: write `["sh", "-c", "! grep -q ERROR \"$1\"", "sh"]`, or `"$0"`; an unset `$1` made `grep` fail on `""` and
# the `!` a pass". POSIX sh: the first word after the script is $0.

def _receipt(folder: Path, command: list[str], text: str) -> int:
    (folder / "report.txt").write_text(text, encoding="utf-8")
    contract = folder / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report", "locator": "report.txt",
                                    "run_started_at": "2020-01-01T00:00:00Z", "validator": {"command": command}}),
                        encoding="utf-8")
    return cli.main(["receipt", str(contract)])


@pytest.mark.parametrize("command", [["sh", "-c", '! grep -q ERROR "$1"', "sh"], ["sh", "-c", '! grep -q ERROR "$0"']])
def test_the_sh_forms_the_readme_gives_read_the_artifact(tmp_path: Path, command: list[str],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert _receipt(tmp_path, command, "ERROR: the total is wrong\n") == 2  # validator_failed
    assert _receipt(tmp_path, command, "all good\n") == 0
    capsys.readouterr()


def test_the_sh_form_the_readme_warns_of_passes_a_bad_artifact(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The pitfall: without the extra word, the path is $0 and "$1" is empty, so grep fails and ``!`` passes."""
    assert _receipt(tmp_path, ["sh", "-c", '! grep -q ERROR "$1"'], "ERROR: the total is wrong\n") == 0
    capsys.readouterr()


# --- README section 5, `oloproof receipt`: "Every other signal that ends a process by default (SIGQUIT, a Ctrl-\\;
# SIGUSR1, SIGALRM, ...) does the same (before, they ended it 138, 142)" and "SIGKILL cannot be caught
# (137)". A shell reports death by signal N as 128 + N; subprocess as -N. The validator itself signals the hook (its
# parent): no delay, no race.

@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")
@pytest.mark.parametrize("name", ["SIGUSR1", "SIGALRM", "SIGKILL"])
def test_a_signal_that_ends_the_hook_is_exit_2_but_sigkill(tmp_path: Path, name: str) -> None:
    assert SCRIPT.exists(), f"the console script is not installed next to {sys.executable}: pip install -e ."
    (tmp_path / "report.txt").write_text("all good\n", encoding="utf-8")
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report", "locator": "report.txt",
                                    "run_started_at": "2020-01-01T00:00:00Z",
                                    "validator": {"command": ["sh", "-c", f"kill -{name[3:]} $PPID; exit 0"]}}),
                        encoding="utf-8")
    done = subprocess.run([str(SCRIPT), "receipt", str(contract)], capture_output=True, text=True, timeout=120,
                          check=False)
    if name == "SIGKILL":  # the one a process cannot catch: 128 + 9 in a shell
        assert done.returncode == -signal.SIGKILL and 128 + signal.SIGKILL == 137, done.stderr
    else:  # as SIGTERM: "A Ctrl-C, SIGTERM or SIGHUP stops the hook with exit 2"
        assert done.returncode == 2, done.stderr
        assert done.stderr == f"oloproof: not verified: stopped by {name} (the validator it ran was stopped too)\n"


# --- examples/wrapped-benchmark/README.md, "The wrapper": "`ShopEnv` opens its connection with
# `check_same_thread=False`: with `--workers 2` a desk is called from another thread than the one that built it
# (without it, some cases were `error` ...)". tests/test_examples_wrapped_benchmark.py runs two workers as processes
# only.

def test_the_wrapped_benchmark_on_two_worker_threads_is_the_same_run(tmp_path: Path) -> None:
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    run = op.run(folder, out=tmp_path / "run", workers=2, isolation="thread", cache=False, progress=False)
    assert len(run.cases) == 48 and (run.cases["status"] == "completed").all()
    state = run.verdicts[run.verdicts["criterion"] == "state_matches"]
    assert int((state["verdict"] == "pass").sum()) == 48 - 2 * len(BY_RECENCY) == 26


# --- examples/wrapped-benchmark/README.md: "`snapshot()` reads `ShopEnv.dump()` back into the same shape
# (`op.baseline(suite).run.changes` is empty: the round trip holds)".

def test_the_idle_baseline_of_the_wrapped_benchmark_changes_nothing(tmp_path: Path) -> None:
    idle = op.baseline(op.load_suite(init_example("wrapped-benchmark", tmp_path / "wb")), out=tmp_path / "idle")
    assert len(idle.run.cases) == 48 and len(idle.run.changes) == 0


# --- examples/wrapped-benchmark/README.md: "`bench/` lies inside the suite folder, so its files count in the run's
# code fingerprint: an edited `agent.py` replays anew." Each run in a process of its own (Python keeps the first
# `bench` it imported, as the README says next).

def _cli_run(folder: Path, out: Path) -> op.Run:
    done = subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet", "--out", str(out)],
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr  # the planted defects: BLOCK
    return op.load_run(out)


def _fingerprint(run: op.Run) -> str:
    return str(json.loads((run.directory / "manifest.json").read_text(encoding="utf-8"))["code_fingerprint"])


def test_an_edited_bench_module_changes_the_fingerprint_and_replays_anew(tmp_path: Path) -> None:
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    first = _cli_run(folder, tmp_path / "r1")
    again = _cli_run(folder, tmp_path / "r2")
    assert _fingerprint(again) == _fingerprint(first) and again.replays["cached"].all()  # 18 refund replays reused
    agent = folder / "bench" / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    edited = _cli_run(folder, tmp_path / "r3")
    assert _fingerprint(edited) != _fingerprint(first)
    assert len(edited.replays) == 18 and not edited.replays["cached"].any()


# --- benchmarks/README.md section 4: "(With pyarrow 16.1 — the oldest the package allows is 16.0, `.ci/oldest.txt`
# — ...)". It said "With pyarrow 16.1, the oldest the package allows", where pyproject's floor and the CI pin of the
# oldest versions are 16.0 (pyarrow>=16, pyarrow==16.0.0).

def test_the_oldest_pyarrow_the_benchmarks_readme_names_is_the_ci_pin() -> None:
    import re

    root = Path(__file__).resolve().parents[2]
    pins = dict(line.split("==") for line in (root / ".ci" / "oldest.txt").read_text(encoding="utf-8").splitlines()
                if "==" in line and not line.startswith("#"))
    text = " ".join((root / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    named = re.findall(r"the oldest the package allows is ([0-9.]+)", text)
    assert named and all(pins["pyarrow"].startswith(v + ".") or pins["pyarrow"] == v for v in named), (named, pins)
    assert "the oldest the package allows," not in text  # the old wording, naming no version of its own
