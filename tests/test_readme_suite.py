"""The README's smallest suite runs as written: its two YAML blocks, a system of three tools, a few cases.

The keys table beside it lists every top-level key of oloproof.yaml (checked against the model's fields).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

import oloproof_nb as op
from oloproof_nb._config.suite import SuiteConfig

README = Path(__file__).resolve().parent.parent / "README.md"

DESK = '''
import oloproof_nb as op


class LoanDesk(op.RecordedAgent):
    version = "loan-desk-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def lend(self, book, member):
        self.state["loans"][book] = member
        return {"ok": True}

    def act(self, input, rec):
        rec.tool("lend", self.lend, book=input["book"], member=input["member"])
        return "lent"
'''


def _yaml_block(text: str, first_line: str) -> dict:
    block = re.search(r"```yaml\n(" + re.escape(first_line) + r".*?)```", text, re.S)
    assert block is not None, first_line
    return yaml.safe_load(block.group(1))


def test_the_readmes_smallest_suite_runs_as_written(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    suite = _yaml_block(text, "# oloproof.yaml — the smallest suite")
    release = _yaml_block(text, "# release.yaml — without it nothing is gated")
    assert suite["system"] == "library_desk:LoanDesk" and set(release["criteria"]) == {"answer_matches",
                                                                                         "state_matches"}
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    (folder / "release.yaml").write_text(yaml.safe_dump(release), encoding="utf-8")
    (folder / "library_desk.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": f"b{i:02d}", "input": {"book": f"b{i:02d}", "member": "m1"}, "initial_state": {"loans": {}},
              "expected": {"answer": "lent", "state": {"loans": {f"b{i:02d}": "m1"}}}} for i in range(12)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    gate = op.gate(op.run(op.load_suite(folder), progress=False))
    # 12 of 12 pass each criterion: the exact lower bound 0.025 ** (1 / 12) = 0.735 is below 0.8, so not yet PASS
    assert gate.table.set_index("criterion")["passed"].to_dict() == {"answer_matches": 12, "state_matches": 12}
    assert set(gate.table["verdict"]) == {"INSUFFICIENT_EVIDENCE"}


def test_the_keys_table_lists_every_key_of_oloproof_yaml() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| key of oloproof.yaml |"):]
    table = table[:table.index("\n\n")]
    keys = {k for row in table.splitlines()[2:] for k in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert keys == set(SuiteConfig.model_fields)


def test_the_keys_table_gives_the_models_defaults() -> None:
    """Each default in the keys table is the model's: ``required`` where the key has none, ``none`` for an empty
    list or mapping, the value itself otherwise, and for ``tool_errors`` every signal of the default rule."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| key of oloproof.yaml |"):]
    table = table[:table.index("\n\n")]
    shown: dict[str, str] = {}
    for row in table.splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for key in re.findall(r"`(\w+)`", cells[0]):
            shown[key] = cells[1]
    for key, field in SuiteConfig.model_fields.items():
        if field.is_required():
            assert shown[key] == "required", key
            continue
        default = field.get_default(call_default_factory=True)
        if key == "tool_errors":
            signals = ([f"{k}: false" for k in default.ok_keys] + list(default.error_keys)
                       + [f"{k}: {v}" for k in default.status_keys for v in default.status_values])
            assert re.findall(r"`([^`]+)`", shown[key]) == signals
        elif key == "metamorphic":
            assert shown[key] == "none" and not default.transforms
        elif isinstance(default, (list, dict)):
            assert shown[key] == "none" and not default, key
        elif isinstance(default, str):
            assert shown[key] == f"`{default}`", key
        else:
            assert float(shown[key]) == default, key
