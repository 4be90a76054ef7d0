"""Shared fixtures: tiny suites written into ``tmp_path`` and a copy of the bundled example.

Fixtures (no helper imports needed):

``make_suite(cases, evaluators=..., system_code=..., release=None, **config)``
    Writes ``oloproof.yaml``, ``cases.jsonl``, ``sysmod.py`` (and ``release.yaml``)
    into a fresh folder under ``tmp_path`` and returns the folder.
``example_suite``
    A fresh ``oloproof init --example stateful-agent`` copy in ``tmp_path``.
``plots_not_encoded``
    A report's plots are drawn but not encoded as PNG: for a test that reads only a report's text and tables.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import settings

os.environ["MPLBACKEND"] = "Agg"  # the whole session, notebook kernels included, draws headless

# Property tests have no time limit: Hypothesis's default (200 ms an example) is a timing assertion, and on a
# 2-core machine shared with other jobs an example of tests/_core/test_canonical.py took longer and failed the run
# (no test here asserts a timing; speed is measured in benchmarks/). The profile is set once, for every test module.
settings.register_profile("oloproof", deadline=None)
settings.load_profile("oloproof")


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_stay_under_the_session_folder(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """What the code under test leaves in the system's temporary folder — the traceback file of a simulated
    internal error, the folder of an example system whose process a test killed — goes under pytest's base
    folder (pruned by pytest), not into /tmp, where a hundred such files had piled up. Child processes too
    (``TMPDIR``). A short path: sockets of multiprocessing live there."""
    import tempfile

    folder = tmp_path_factory.mktemp("tmp")
    before_env, before_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = str(folder), str(folder)
    yield folder
    tempfile.tempdir = before_dir
    if before_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before_env

@pytest.fixture(autouse=True)
def _the_command_forks_as_in_its_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``oloproof run`` in its own process runs one Python thread when it starts the run's child, so it forks (see
    ``cli.process._start_method``; ``tests/cli/test_process.py`` checks that, and runs a spawned child too). Tests call
    ``main`` inside pytest's process, which holds threads of its own (helpers of earlier runs, Dask's, Inspect AI's):
    there it would spawn each child, 0.5 s of imports more each, and a monkeypatched function would not reach
    the child. They fork as the command does."""
    from oloproof_nb.cli import process

    monkeypatch.setattr(process, "_start_method",
                        lambda: "fork" if process.sys.platform.startswith("linux") else "spawn")


#: A generic scripted sandbox system. The case input says what to do:
#: ``{"answer": ..., "writes": [{"path": [k1, k2, ...], "value": v}], "deletes": [[k1, k2, ...]]}``.
SCRIPTED_SYSTEM = '''
import copy


class Scripted:
    """A dict sandbox; the input lists the writes and deletes the agent performs."""

    version = "scripted-1"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        steps = []
        for write in input.get("writes", []):
            node = self.state
            for key in write["path"][:-1]:
                node = node.setdefault(key, {})
            node[write["path"][-1]] = write["value"]
            steps.append({"kind": "tool_call", "tool": "write", "args": {"path": write["path"]},
                          "result": {"ok": True}})
        for path in input.get("deletes", []):
            node = self.state
            for key in path[:-1]:
                node = node[key]
            del node[path[-1]]
            steps.append({"kind": "tool_call", "tool": "delete", "args": {"path": path}, "result": {"ok": True}})
        steps.append({"kind": "message", "role": "assistant", "content": str(input.get("answer"))})
        return {"steps": steps, "answer": input.get("answer"), "status": "completed"}


class Stateless:
    """No reset, no snapshot: it records no state."""

    def run(self, input):
        return {"steps": [], "answer": input.get("answer")}
'''

DEFAULT_EVALUATORS: list[dict[str, Any]] = [
    {"type": "answer_matches"},
    {"type": "state_matches", "mode": "subset"},
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture
def make_suite(tmp_path: Path) -> Callable[..., Path]:
    """Factory of suite folders under ``tmp_path`` (each call gets its own folder)."""
    counter = itertools.count()

    def make(cases: list[dict[str, Any]], *, evaluators: list[dict[str, Any]] | None = None,
             system: str = "sysmod:Scripted", system_code: str = SCRIPTED_SYSTEM,
             release: dict[str, Any] | None = None, name: str = "tiny", folder: str | None = None,
             **config: Any) -> Path:
        root = tmp_path / (folder or f"suite{next(counter)}")
        root.mkdir(parents=True)
        (root / "sysmod.py").write_text(system_code, encoding="utf-8")
        write_jsonl(root / "cases.jsonl", cases)
        body = {"name": name, "system": system, "cases": "cases.jsonl",
                "evaluators": DEFAULT_EVALUATORS if evaluators is None else evaluators, **config}
        (root / "oloproof.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
        if release is not None:
            (root / "release.yaml").write_text(yaml.safe_dump(release, sort_keys=False), encoding="utf-8")
        return root

    return make


@pytest.fixture
def example_suite(tmp_path: Path) -> Path:
    """A fresh copy of the bundled stateful-agent example (via ``init_example``)."""
    from oloproof_nb.examples import init_example

    return init_example("stateful-agent", tmp_path / "demo")


@pytest.fixture
def plots_not_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A report's plots are drawn but not encoded as PNG (about 60% of a report's time): each is the 8 bytes of the
    PNG signature. For a test that reads only the report's text, tables and files, not its plots (the plot tests,
    and the report tests that read a plot, keep real PNGs)."""
    import matplotlib.pyplot as plt

    from oloproof_nb._display import report as report_module

    def closed(ax: Any) -> bytes:
        plt.close(ax.figure)
        return b"\x89PNG\r\n\x1a\n"

    monkeypatch.setattr(report_module, "_png", closed)
