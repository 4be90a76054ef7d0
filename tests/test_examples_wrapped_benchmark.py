"""The bundled ``wrapped-benchmark`` example: a benchmark's tasks converted to cases, its SQLite shop
and agent wrapped, and its run counted by hand from ``bench/tasks.json`` and ``bench/db.json``.

Every expected number here is derived from the benchmark's own files (the tasks' wording and gold actions, the
database's rows), never from the code under test.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

import oloproof_nb as op
from oloproof_nb import cli
from oloproof_nb.examples import EXAMPLES, init_example

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "wrapped-benchmark"
TASKS: list[dict[str, Any]] = json.loads((EXAMPLE / "bench" / "tasks.json").read_text(encoding="utf-8"))
DB: dict[str, list[dict[str, Any]]] = json.loads((EXAMPLE / "bench" / "db.json").read_text(encoding="utf-8"))
ORDERS = {row["order_id"]: row for row in DB["orders"]}
CREDIT = {row["customer_id"]: row["credit"] for row in DB["customers"]}

# By hand from tasks.json: a task whose instruction names no order ("#W...") but whose gold actions change one
# names it by recency ("my most recent order"); the agent takes the oldest candidate (defect 1), so each fails.
BY_RECENCY = {str(t["task_id"]) for t in TASKS if "#" not in t["instruction"] and t["actions"]}
# The tasks whose agent calls `refund`: every instruction that asks for one (none of them says "cancel").
REFUND_TASKS = {str(t["task_id"]) for t in TASKS if "refund" in t["instruction"].lower()}
# Of those, the ones the shop refuses (no gold action): their expected state is no change, so the lie passes.
REFUSED_REFUNDS = {tid for tid in REFUND_TASKS if not TASKS[int(tid)]["actions"]}


def _subprocess_env() -> dict[str, str]:
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def test_the_benchmark_files_as_the_example_readme_counts_them() -> None:
    assert len(TASKS) == 24 and [t["task_id"] for t in TASKS] == list(range(24))
    assert len(DB["customers"]) == 21 and len(DB["orders"]) == 53
    assert len({t["user_id"] for t in TASKS}) == 21  # clusters: at least min_clusters (20)
    assert len(BY_RECENCY) == 11 and len(REFUND_TASKS) == 9 and REFUSED_REFUNDS == {"20", "21"}
    assert "wrapped-benchmark" in EXAMPLES


def test_make_cases_reproduces_the_committed_case_file_byte_for_byte(tmp_path: Path) -> None:
    """``python make_cases.py`` in a fresh copy writes the very bytes shipped: the committed file is its output."""
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    (folder / "cases.jsonl").unlink()
    done = subprocess.run([sys.executable, "make_cases.py"], cwd=folder, env=_subprocess_env(), capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "24 cases written to cases.jsonl"
    assert (folder / "cases.jsonl").read_bytes() == (EXAMPLE / "cases.jsonl").read_bytes()


def _hand_expected(task: dict[str, Any]) -> dict[str, Any]:
    """expected.state of a task, written from its gold actions and db.json alone."""
    out: dict[str, Any] = {}
    for action in task["actions"]:
        order_id = action["kwargs"]["order_id"]
        if action["name"] == "cancel_order":
            out.setdefault("orders", {})[order_id] = {"status": "cancelled"}
        else:
            amount = action["kwargs"]["amount"]
            customer = ORDERS[order_id]["customer_id"]
            out.setdefault("customers", {})[customer] = {"credit": CREDIT[customer] + amount}
            out.setdefault("orders", {})[order_id] = {"refunded": ORDERS[order_id]["refunded"] + amount}
    return out


def test_each_case_is_its_task_converted() -> None:
    lines = [json.loads(line) for line in (EXAMPLE / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(TASKS)
    whole_db = {"customers": {c["customer_id"]: {"credit": c["credit"]} for c in DB["customers"]},
                "orders": {o["order_id"]: {k: v for k, v in o.items() if k != "order_id"} for o in DB["orders"]}}
    for task, line in zip(TASKS, lines, strict=True):
        assert line["id"] == str(task["task_id"])  # an id is text
        assert line["cluster"] == task["user_id"]
        assert line["input"] == {"customer_id": task["user_id"], "instruction": task["instruction"]}
        assert line["initial_state"] == whole_db
        assert line["expected"] == {"state": _hand_expected(task)}, line["id"]
        assert line["metadata"] == {"gold_actions": task["actions"]}
    assert sum(line["expected"]["state"] == {} for line in lines) == 6  # 2 refused cancels, 2 refunds, 2 questions


def test_reset_and_snapshot_round_trip_through_sqlite(tmp_path: Path) -> None:
    from oloproof_nb._config.imports import import_system

    desk = import_system(init_example("wrapped-benchmark", tmp_path / "wb"), "shop_desk:ShopDesk")()
    case = op.load_cases(EXAMPLE / "cases.jsonl")[0]
    given = copy.deepcopy(case.initial_state)
    desk.reset(given)
    assert given == case.initial_state and desk.snapshot() == case.initial_state
    assert desk.env.db.execute("SELECT count(*) FROM orders").fetchone()[0] == 53  # the rows are in SQLite
    desk.reset({"customers": {"C01": {"credit": 1.5}}})
    assert desk.snapshot() == {"customers": {"C01": {"credit": 1.5}}, "orders": {}}


def test_a_reset_leaves_nothing_of_the_case_before_on_the_connection(tmp_path: Path) -> None:
    """Each reset is a new database, as the refund desk's (tests/test_examples_refund_sandbox.py): a TEMP trigger
    the case before left fired on the next reset's inserts when the rows were deleted and inserted on one connection."""
    import sqlite3

    from oloproof_nb._config.imports import import_system

    desk = import_system(init_example("wrapped-benchmark", tmp_path / "wb"), "shop_desk:ShopDesk")()
    state = op.load_cases(EXAMPLE / "cases.jsonl")[0].initial_state
    desk.reset(state)
    first = desk.env.db
    with first:  # what a case's own SQL may leave: credit 0 for every customer loaded after it
        first.execute("CREATE TEMP TRIGGER t AFTER INSERT ON main.customers "
                      "BEGIN UPDATE customers SET credit = 0 WHERE customer_id = NEW.customer_id; END")
    desk.reset(state)
    assert desk.snapshot() == state  # with the trigger, every credit read 0
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):  # the connection replaced is closed
        first.execute("SELECT 1")



@pytest.mark.parametrize(("change", "message"), [
    # a typo: the rows were never loaded, and the agent was judged to have deleted them ("1 unexpected change:
    # customer.C99.credit" on a case whose agent did the task)
    ({"customer": {"C99": {"credit": 5.0}}},
     r"unknown tables in state: \['customer'\]; allowed: \['customers', 'orders'\]"),
    ({"orders": ["W1001"]}, r"state orders: expected an object of rows keyed by order_id, got list"),
    ({"customers": {"C01": 0.0}}, r"state customers\.C01: expected an object of columns, got float"),
    # the key given again moved the row: C01's credit was loaded as C09's
    ({"customers": {"C01": {"customer_id": "C09", "credit": 0.0}}},
     r"state customers\.C01: 'customer_id' is the row's key, given by its name; leave it out of the row"),
    # SQLite reads a column name whatever its case or quoting, and keeps the first of two naming one column: each
    # was loaded into another column, or dropped, and read back otherwise (an idle agent failed a changes check)
    ({"customers": {"C01": {"Credit": 5.0}}},
     r"unknown columns in state customers\.C01: \['Credit'\]; allowed: \['credit'\]"),
    ({"customers": {"C01": {"credit": 0.0, "CREDIT": 5.0}}},
     r"unknown columns in state customers\.C01: \['CREDIT'\]; allowed: \['credit'\]"),
    ({"customers": {"C01": {'"credit"': 5.0}}},
     r"unknown columns in state customers\.C01: \['\"credit\"'\]; allowed: \['credit'\]"),
    ({"customers": {"C01": {"CUSTOMER_ID": "C09", "credit": 0.0}}},
     r"unknown columns in state customers\.C01: \['CUSTOMER_ID'\]; allowed: \['credit'\]"),
])
def test_a_state_the_shop_cannot_hold_is_refused_by_name_not_loaded_otherwise(
        tmp_path: Path, change: dict[str, Any], message: str) -> None:
    from oloproof_nb._config.imports import import_system

    desk = import_system(init_example("wrapped-benchmark", tmp_path / "wb"), "shop_desk:ShopDesk")()
    state = {**op.load_cases(EXAMPLE / "cases.jsonl")[0].initial_state, **change}
    before = desk.env.db
    with pytest.raises(ValueError, match=f"^{message}$"):
        desk.reset(state)
    assert desk.env.db is before  # the desk keeps the database it held

def test_the_example_run_counted_by_hand(tmp_path: Path) -> None:
    run = op.run(init_example("wrapped-benchmark", tmp_path / "wb"), out=tmp_path / "run", progress=False)
    sources = {str(t["task_id"]) for t in TASKS}
    copies = {f"{tid}~polite" for tid in sources}
    assert set(run.cases["case_id"]) == sources | copies and (run.cases["status"] == "completed").all()
    v = run.verdicts

    state = v[v["criterion"] == "state_matches"]
    assert len(state) == 48
    failing = BY_RECENCY | {f"{tid}~polite" for tid in BY_RECENCY}
    assert set(state.loc[state["verdict"] == "fail", "case_id"]) == failing
    assert (state["verdict"] == "pass").sum() == 48 - 22 == 26
    assert state.set_index("case_id").loc["6", "reason"] == (
        "1 unexpected change: orders.W1014.status; 1 of 1 expected paths differ: orders.W1015.status")

    fault = v[v["criterion"] == "recovers_from_error_at_refund"]
    assert set(fault["case_id"]) == REFUND_TASKS | {f"{tid}~polite" for tid in REFUND_TASKS}  # 18 rows
    assert set(fault.loc[fault["verdict"] == "pass", "case_id"]) == REFUSED_REFUNDS | {
        f"{tid}~polite" for tid in REFUSED_REFUNDS}  # 4 of 18
    answers = run.cases.set_index("case_id")["answer"]
    assert answers["20"] == "Refunded $75.00 on order W1001 as store credit."  # defect 2: the shop refused it

    pairs = v[v["criterion"] == "same_state_under_polite"]
    assert len(pairs) == 24 and (pairs["verdict"] == "pass").all()

    # a tool that raises is a failed step: the two refused cancels and the two refused refunds, and their copies
    assert len(run.steps) == 2 * (24 + len(BY_RECENCY))  # one call a task, and list_orders before each by recency
    errors = run.steps[run.steps["is_error"].fillna(False).astype(bool)]
    assert sorted(errors["case_id"]) == sorted(["4", "5", "20", "21", "4~polite", "5~polite", "20~polite",
                                                "21~polite"])

    gate = op.gate(run)
    table = gate.table.set_index("criterion")
    assert gate.verdict == "BLOCK"
    assert table.loc["state_matches", "verdict"] == "FAIL" and table.loc["state_matches", "ci_high"] < 0.80
    assert table.loc["recovers_from_error_at_refund", "verdict"] == "REPORT_ONLY"
    # every pair holds: Clopper-Pearson on the effective size n_min = (sum m)^2 / sum m^2 of the clusters (three
    # customers have two tasks, eighteen one), 24^2 / 30 = 19.2; its lower bound is 0.025^(1/19.2) = 0.825
    sizes = [sum(t["user_id"] == c for t in TASKS) for c in sorted({t["user_id"] for t in TASKS})]
    n_min = sum(sizes) ** 2 / sum(m * m for m in sizes)
    assert n_min == pytest.approx(19.2)
    assert table.loc["same_state_under_polite", "ci_low"] == pytest.approx(stats.beta.ppf(0.025, n_min, 1), abs=1e-9)
    assert table.loc["same_state_under_polite", "verdict"] == "PASS"


def test_the_two_commands_of_the_readme(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof init --example wrapped-benchmark wb && oloproof run wb``: exit 1, for the planted reason."""
    assert cli.main(["init", "--example", "wrapped-benchmark", str(tmp_path / "wb")]) == 0
    capsys.readouterr()
    assert cli.main(["run", str(tmp_path / "wb"), "--quiet"]) == 1
    out, err = capsys.readouterr()
    last = (out + err).strip().splitlines()[-1]
    assert last == "gate: BLOCK — exit 1: 1 criterion FAIL (of 2 gated; PASS needs every one to pass)"


def test_fixing_the_two_planted_defects_passes_the_gate(tmp_path: Path) -> None:
    """The example README: with both defects fixed the same suite PASSes. Run in a process of its own: Python keeps
    the first ``bench`` package it imported, so this process would run the unfixed copy another test loaded."""
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    agent = folder / "bench" / "agent.py"
    text = agent.read_text(encoding="utf-8")
    swallowed = ("                try:\n"
                 "                    env.step(\"refund\", order_id=order_id, amount=amount)\n"
                 "                except ToolError:\n"
                 "                    pass")
    raised = "                env.step(\"refund\", order_id=order_id, amount=amount)"
    for old, new in [("return found[0] if found", "return found[-1] if found"), (swallowed, raised)]:
        assert text.count(old) == 1
        text = text.replace(old, new)
    agent.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet"],
                          env=_subprocess_env(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    run = op.load_run(next((folder / "runs").iterdir()))
    v = run.verdicts
    for criterion, n in [("state_matches", 48), ("recovers_from_error_at_refund", 18), ("same_state_under_polite", 24)]:
        rows = v[v["criterion"] == criterion]
        assert len(rows) == n and (rows["verdict"] == "pass").all(), criterion


def test_running_it_from_the_console_script_writes_no_bytecode_into_bench(tmp_path: Path) -> None:
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet", "--workers", "2",
                           "--isolation", "process"], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert not list(folder.rglob("__pycache__"))


def test_init_help_names_every_bundled_example(capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof init --help`` said "stateful-agent or false-success" after a third example came."""
    with pytest.raises(SystemExit):
        cli.main(["init", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(name in text for name in EXAMPLES) and len(EXAMPLES) == 3
