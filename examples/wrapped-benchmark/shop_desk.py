"""The wrapper: the benchmark in ``bench/`` (its SQLite shop and its agent) as an oloproof_nb system.

``reset(state)`` loads a case's ``initial_state`` into a new database of the benchmark's own and ``snapshot()``
reads it back, each table a dict keyed by its primary key (a row's position is not its identity). The benchmark's agent
is given a stand-in for its env whose ``step`` sends every tool call through ``rec.tool`` under the tool's own
name: the run records it, and a fault replay can hand back a failure in its place.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

from bench.agent import ScriptedAgent
from bench.env import KEYS, ShopEnv, ToolError

import oloproof_nb as op


def by_key(data: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The benchmark's tables (lists of rows) as a state: ``{table: {key: the row without its key}}``."""
    return {table: {row[key]: {col: value for col, value in row.items() if col != key} for row in data[table]}
            for table, key in KEYS.items()}


def as_rows(state: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A state as the benchmark's tables: the other way round from :func:`by_key`.

    A table the shop has not (``"customer"`` for ``"customers"``) is refused, not left out: left out, a case's rows
    were never loaded, and the agent was judged to have deleted them. So is a row that is not an object of its
    columns, or one that gives its key column again (it would move the row under another key).
    """
    unknown = sorted(set(state) - set(KEYS))
    if unknown:
        raise ValueError(f"unknown tables in state: {unknown}; allowed: {list(KEYS)}")
    rows: dict[str, list[dict[str, Any]]] = {}
    for table, key in KEYS.items():
        given = state.get(table, {})
        if not isinstance(given, dict):
            raise ValueError(f"state {table}: expected an object of rows keyed by {key}, got {type(given).__name__}")
        for name, row in given.items():
            if not isinstance(row, dict):
                raise ValueError(f"state {table}.{name}: expected an object of columns, got {type(row).__name__}")
            if key in row:
                raise ValueError(f"state {table}.{name}: {key!r} is the row's key, given by its name; leave it out of "
                                 "the row")
        rows[table] = [{key: name, **row} for name, row in given.items()]
    return rows


def columns_of(env: ShopEnv) -> dict[str, list[str]]:
    """Each table's columns but its key, as the shop's database names them."""
    return {table: [row["name"] for row in env.db.execute(f"PRAGMA table_info({table})") if row["name"] != key]
            for table, key in KEYS.items()}


def refuse_unknown_columns(rows: dict[str, list[dict[str, Any]]], columns: dict[str, list[str]]) -> None:
    """Refuse a row that names a column other than the table's own, spelled exactly.

    SQLite reads a column name whatever its case and quoting, and keeps the first of two that name one column:
    ``Credit``, ``"credit"`` or ``[credit]`` were loaded into ``credit`` and read back by that name, a second
    ``CREDIT`` beside ``credit`` and a ``CUSTOMER_ID`` beside the key were dropped, and the agent was judged to
    have changed the row.
    """
    for table, key in KEYS.items():
        for row in rows[table]:
            unknown = sorted(set(row) - {key, *columns[table]})
            if unknown:
                raise ValueError(f"unknown columns in state {table}.{row[key]}: {unknown}; "
                                 f"allowed: {columns[table]}")


class RecordingEnv:
    """What the benchmark's agent is given as its env."""

    def __init__(self, env: ShopEnv, rec: op.Recorder) -> None:
        self.env, self.rec = env, rec

    def step(self, name: str, **kwargs: Any) -> Any:
        # a tool that raises ToolError (a refused action) is recorded as a failed step and raised again
        out = self.rec.tool(name, functools.partial(self.env.step, name), **kwargs)
        if isinstance(out, dict) and out.get("ok") is False:  # a fault replay's result (op.fault_result) ...
            raise ToolError(out["message"])  # ... given to the agent the way the benchmark's tools fail
        return out


def _close(held: list[ShopEnv]) -> None:
    held[0].db.close()


class ShopDesk(op.RecordedAgent):
    """The benchmark's agent on the benchmark's env: a Stateful, Replayable system."""

    version = "shopbench-scripted-1"

    def __init__(self) -> None:
        self._held = [ShopEnv({})]  # the open env; each reset builds a new one
        # closed with the desk (Python 3.13 warns of a connection garbage-collected open)
        weakref.finalize(self, _close, self._held)

    @property
    def env(self) -> ShopEnv:
        return self._held[0]

    def reset(self, state: dict[str, Any]) -> None:
        # a new database each case, by the benchmark's own constructor and loader: what a case left on the connection
        # besides its rows (a TEMP trigger, an ATTACHed database, a write never committed) dies with it
        rows = as_rows(state)  # a table the shop has not is refused before a database is opened
        fresh = ShopEnv({})
        try:  # a state the tables refuse (a column they have not, a value SQLite cannot store) closes the new one
            refuse_unknown_columns(rows, columns_of(fresh))
            fresh.load(rows)
        except BaseException:
            fresh.db.close()
            raise
        old, self._held[0] = self._held[0], fresh
        old.db.close()

    def snapshot(self) -> dict[str, Any]:
        return by_key(self.env.dump())

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        agent = ScriptedAgent(input["customer_id"])
        return agent.solve(RecordingEnv(self.env, rec), input["instruction"])
