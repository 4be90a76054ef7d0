"""A ``state_unchanged`` or ``paths``-mode path written with a ``*``
(``orders.*.status``) names a key called '*'; the load warning said so, but ``absent_ok: true`` silenced it and
the check passed every case, an agent that rewrote every order's status among them. It is now refused at load."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

import oloproof_nb as op
from oloproof_nb.cli import main

#: Marks every order it is given refunded: it changes the very statuses the check is meant to guard.
SYSTEM = '''
import json

from oloproof_nb import RecordedAgent

class Desk(RecordedAgent):
    def __init__(self):
        super().__init__()
        self.state = {}
    def reset(self, state):
        self.state = json.loads(json.dumps(state))
    def snapshot(self):
        return json.loads(json.dumps(self.state))
    def act(self, input, rec):
        for order in self.state["orders"].values():
            order["status"] = "refunded"
        return "done"
'''


def suite(tmp: Path, ev: dict[str, Any], orders: dict[str, Any] | None = None) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "desk.py").write_text(SYSTEM)
    held = orders or {"ord-001": {"status": "open"}, "ord-002": {"status": "open"}}
    cases = [{"id": f"c{i}", "input": {"ask": f"refund {i}"}, "initial_state": {"orders": held},
              "expected": {"state": {}}} for i in range(3)]
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "g", "system": "desk:Desk", "evaluators": [ev]}))
    (tmp / "release.yaml").write_text(yaml.safe_dump({"criteria": {ev.get("criterion", "state_matches"): 0.5}}))
    return tmp


GLOBS = [
    ({"type": "state_unchanged", "criterion": "untouched", "paths": ["orders.*.status"], "absent_ok": True},
     "'*'", "give orders to cover every path under it"),
    ({"type": "state_unchanged", "criterion": "untouched", "paths": ["orders.ord-*"], "absent_ok": True},
     "'ord-*'", "give orders to cover every path under it"),
    ({"type": "state_matches", "mode": "paths", "paths": ["**.status"], "absent_ok": True},
     "'**'", "judge the whole state with state_matches mode: changes"),
]


@pytest.mark.parametrize(("ev", "key", "instead"), GLOBS)
def test_a_glob_path_with_absent_ok_is_refused_at_load(tmp_path: Path, ev: dict[str, Any], key: str,
                                                       instead: str) -> None:
    with pytest.raises(op.ConfigError) as caught:
        op.load_suite(suite(tmp_path, ev))
    message = str(caught.value)
    assert caught.value.key == "evaluators[0].paths" and message.startswith(str(tmp_path / "oloproof.yaml"))
    assert f"({ev['type']}, criterion {ev.get('criterion', 'state_matches')}) path {ev['paths'][0]!r}" in message
    assert "absent_ok: true passes every case where it stays absent, so the check cannot fail" in message
    assert f"exact paths, not patterns ({key} is read as a key of that name)" in message and instead in message
    assert "\n" not in message


def test_the_cli_refuses_it_in_one_line_and_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before, this desk, which sets every order's status to refunded, passed 3 of 3 cases of a check meant to keep
    every status as it was, and the gate said PASS."""
    folder = suite(tmp_path / "s", GLOBS[0][0])
    code = main(["run", str(folder), "--out", str(tmp_path / "r"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "Traceback" not in err[0], err
    assert "evaluators[0].paths" in err[0] and "'orders.*.status'" in err[0]
    assert not (tmp_path / "r").exists()


def test_the_subtree_the_message_names_fails_the_desk(tmp_path: Path) -> None:
    """What the message says to give instead judges the statuses: the desk fails every case."""
    ev = {"type": "state_unchanged", "criterion": "untouched", "paths": ["orders"], "absent_ok": True}
    run = op.run(op.load_suite(suite(tmp_path / "s", ev)), out=tmp_path / "r", progress=False)
    rows = run.verdicts[run.verdicts["criterion"] == "untouched"]
    assert rows["verdict"].tolist() == ["fail"] * 3


def test_a_key_a_case_holds_named_with_a_star_is_still_an_exact_path(tmp_path: Path) -> None:
    """A state that really holds a key called 'ord-*' is judged there, as without ``absent_ok``: no refusal, no
    warning, and the desk that changes its status fails."""
    ev = {"type": "state_unchanged", "criterion": "untouched", "paths": ["orders.ord-*.status"], "absent_ok": True}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = op.load_suite(suite(tmp_path / "s", ev, orders={"ord-*": {"status": "open"}}))
    run = op.run(loaded, out=tmp_path / "r", progress=False)
    rows = run.verdicts[run.verdicts["criterion"] == "untouched"]
    assert rows["verdict"].tolist() == ["fail"] * 3


def test_without_absent_ok_it_stays_a_warning(tmp_path: Path) -> None:
    """The finding the user silenced with absent_ok is the one a check without it still gets."""
    ev = {k: v for k, v in GLOBS[0][0].items() if k != "absent_ok"}
    with pytest.warns(op.VacuousCheckWarning, match=r"'orders\.\*\.status' is in no case's initial_state"):
        assert list(op.load_suite(suite(tmp_path, ev)).vacuous) == ["untouched"]
