"""Review F54 on F53's worker refusal: an executor's worker holding a helper of the system as imported before an edit
names itself and says to restart the workers, also when the edit came with another (the case file, or the desk's
own module): then the worker loads the suite anew, and ``load_suite`` refused in the words of the user's own process,
"restart the process (in a notebook: the kernel)", which the user had just done, naming no worker.

Module names are this file's own (Python keeps one module of a name per process; each test its own pair, as a worker
of the pool outlives none of its tests but this process keeps every module).
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
    version = "desk-f54w"

    def run(self, input):
        return {{"steps": [], "answer": ANSWER, "status": "completed"}}
'''


def _restart_this_process(root: Path, rules: str, desk: str) -> None:
    """Forget this process's imports of the suite folder's modules, as a restarted kernel has none."""
    for name in [n for n in sys.modules if n == rules or n.endswith(f"_{desk}")]:
        del sys.modules[name]
    for key in [k for k in imports._MODULES if k[0] == str(root.resolve())]:
        del imports._MODULES[key]


@pytest.mark.parametrize("also", ["cases", "desk"])
def test_a_worker_holding_an_edited_helper_says_to_restart_the_workers_whatever_else_was_edited(
        make_suite: Callable[..., Path], tmp_path: Path, also: str) -> None:
    rules, desk = f"f54rules_{also}", f"f54desk_{also}"
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
        else:  # the desk's own module edited too: the worker imports it again, and it takes the kept helper
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
