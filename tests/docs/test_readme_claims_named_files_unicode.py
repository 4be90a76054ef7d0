"""The README sentences changed since ``1419afe`` (5 Dec 2026) that no test pinned as written.

Each test names the sentence it pins. Expected values are counted by hand, never read back from the code that made
them. The sentences other tests already pin are not repeated here.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import oloproof_nb as op

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_test_file_the_readme_names_exists() -> None:
    """The project's rule: a sentence is backed by a test named beside it. A test file renamed or removed leaves the
    sentence naming nothing; every ``tests/….py`` the README names must be there (72 on 5 Dec 2026)."""
    root = README.parent
    named = sorted(set(re.findall(r"tests/[\w/.-]+?\.py", README.read_text(encoding="utf-8"))))
    assert len(named) >= 72, named
    assert [path for path in named if not (root / path).is_file()] == []


DESK = '''
import unicodedata
import oloproof_nb as op


class Desk(op.RecordedAgent):
    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def act(self, input, rec):
        self.state["name"] = unicodedata.normalize(input["form"], "Jos\\u00e9")
        return self.state["name"]
'''


def test_a_sandbox_that_returns_the_decomposed_text_fails_the_composed_expected_state(tmp_path: Path) -> None:
    """README section 2: "`"José"` written composed (NFC) and decomposed (NFD …) are two values, and a sandbox that
    returns the one beside an `expected.state` that holds the other fails (`answer_matches`, with `normalize`,
    reads the two alike)". tests/_core/test_paths.py checks the comparison alone; here a run: the NFD case fails
    ``state_matches`` and passes ``answer_matches``, the NFC case passes both (by hand: 4 and 5 code points)."""
    composed = unicodedata.normalize("NFC", "José")
    assert (len(composed), len(unicodedata.normalize("NFD", "José"))) == (4, 5)
    root = tmp_path / "s"
    root.mkdir()
    (root / "desk.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": form, "input": {"form": form}, "initial_state": {"name": ""},
              "expected": {"answer": composed, "state": {"name": composed}}} for form in ("NFC", "NFD")]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: nfc\nsystem: desk:Desk\nevaluators:\n  - {type: state_matches}\n"
                                        "  - {type: answer_matches}\n", encoding="utf-8")
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    got = {(r.case_id, r.criterion): r.verdict for r in run.verdicts.itertuples()}
    assert got == {("NFC", "state_matches"): "pass", ("NFC", "answer_matches"): "pass",
                   ("NFD", "state_matches"): "fail", ("NFD", "answer_matches"): "pass"}
