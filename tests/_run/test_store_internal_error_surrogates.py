"""``internal-error.txt`` keeps a traceback that quotes a name that is not UTF-8 (a lone surrogate)."""

from __future__ import annotations

from pathlib import Path

from oloproof_nb._core.records import Manifest
from oloproof_nb._run.store import RunStore

MANIFEST = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)


def test_a_traceback_quoting_a_name_that_is_not_utf8_is_saved_escaped(tmp_path: Path) -> None:
    """It raised UnicodeEncodeError in the runner's handler of a bug, in place of the bug's own error, and the
    traceback was not saved."""
    store = RunStore.create(tmp_path / "r", MANIFEST)
    path = store.save_internal_error("KeyError: 'caf\udce9'")
    store.close()
    assert path.read_text(encoding="utf-8").endswith("KeyError: 'caf\\udce9'\n")
