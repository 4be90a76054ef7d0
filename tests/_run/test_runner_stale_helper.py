"""An executor's worker that holds a helper of the system as imported before an edit.

The desk takes its answer from a module of the suite folder, which Python keeps once imported. After an edit of it,
the user restarts the kernel and loads the suite again, as the refusal in their own process said; a worker kept
across the restart (a Dask cluster's) still holds the old helper and cannot load the suite again. It refused with the
words of the user's own process, "restart the process (in a notebook: the kernel) and load the suite again", which
the user had just done, naming no worker (the helper edited alone, the worker holding the suite); and so again
when the edit came with another, the case file or the desk's own module, where the worker loads the suite anew and
``load_suite`` refused. Now it names the worker and says to restart the workers.

Module names are this file's own, one pair per test (Python keeps one module of a name per process, and this
process keeps every module while a pool's worker outlives none of the tests).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._config import imports
from oloproof_nb.errors import OloproofError

DESK = '''from {rules} import ANSWER


class Desk:
    version = "desk-f53w"

    def run(self, input):
        return {{"steps": [], "answer": ANSWER, "status": "completed"}}
'''


def _restart_this_process(root: Path, rules: str, desk: str) -> None:
    """Forget this process's imports of the suite folder's modules, as a restarted kernel has none."""
    for name in [n for n in sys.modules if n == rules or n.endswith(f"_{desk}")]:
        del sys.modules[name]
    for key in [k for k in imports._MODULES if k[0] == str(root.resolve())]:
        del imports._MODULES[key]


@pytest.mark.parametrize("also", ["nothing", "cases", "desk"])
def test_a_worker_holding_an_edited_helper_says_to_restart_the_workers(make_suite: Callable[..., Path],
                                                                        tmp_path: Path, also: str) -> None:
    rules, desk = f"f53rules_{also}", f"f53desk_{also}"
    root = make_suite([{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "yes"}} for i in range(2)],
                      system=f"{desk}:Desk", system_code="", evaluators=[{"type": "answer_matches"}])
    (root / f"{desk}.py").write_text(DESK.format(rules=rules), encoding="utf-8")
    helper = root / f"{rules}.py"
    helper.write_text('ANSWER = "yes"\n', encoding="utf-8")
    with ProcessPoolExecutor(1) as pool:
        first = op.run(op.load_suite(root), executor=pool, out=tmp_path / "first", progress=False)
        assert list(first.verdicts["verdict"]) == ["pass"] * 2
        helper.write_text('ANSWER = "no"\n', encoding="utf-8")
        if also == "cases":  # a case added: the worker's copy of the suite is another version of its files
            with (root / "cases.jsonl").open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"id": "c2", "input": {"n": 2}, "expected": {"answer": "yes"}}) + "\n")
        elif also == "desk":  # the desk's own module edited too: the worker imports it again, with the kept helper
            (root / f"{desk}.py").write_text(DESK.format(rules=rules) + "\n# edited\n", encoding="utf-8")
        _restart_this_process(root, rules, desk)
        suite = op.load_suite(root)  # this process imports the edited helper: it loads
        with pytest.raises(OloproofError) as info:
            op.run(suite, executor=pool, out=tmp_path / "second", progress=False)
    message = str(info.value)
    assert message.startswith(f"{root}: on worker ")
    assert f"{helper} changed since the worker imported the system's code from it" in message
    assert "restart the workers" in message
    assert "in a notebook: the kernel" not in message
    # the run stopped before any case was recorded
    assert not (tmp_path / "second" / "cases.jsonl").exists() or \
        not (tmp_path / "second" / "cases.jsonl").read_text(encoding="utf-8").strip()
    n_cases = json.loads((tmp_path / "second" / "manifest.json").read_text(encoding="utf-8"))["n_cases"]
    assert n_cases == (3 if also == "cases" else 2)
