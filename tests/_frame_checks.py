"""Frames built straight from a run's records (no Parquet involved), and a suite that fills every frame."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

import oloproof_nb as op
from oloproof_nb._analysis import frames
from oloproof_nb._analysis.columns import FRAMES
from oloproof_nb._core.labels import pair_labels
from oloproof_nb._run.runner import run_suite
from oloproof_nb.examples import init_example

__all__ = ["EXACT_CSV", "NAMES", "journal_frames", "everything_suite", "appended_records", "example_run_records",
           "copy_folders"]

NAMES = list(FRAMES)
#: ``pd.read_csv`` options that read every float bit for bit: pandas 2's default parser can miss the last bit;
#: pandas 3's is exact (and deprecates the option)
EXACT_CSV: dict[str, str] = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def journal_frames(run: op.Run) -> dict[str, pd.DataFrame]:
    """Every frame built from all the journal's records at once (no Parquet involved)."""
    recs = run.records
    rows, pairs = frames.run_scope_rows(run.config, run.labels, recs, run.manifest.n_cases)
    return {
        "cases": frames.cases_frame(recs), "steps": frames.steps_frame(recs),
        "snapshots": frames.snapshots_frame(recs), "changes": frames.changes_frame(recs),
        "verdicts": frames.verdicts_frame(recs, rows, _invalid(run)),  # no copy labeled invalid
        "comparisons": frames.comparisons_frame(recs),
        "replays": frames.replays_frame(recs), "pairs": frames.pairs_frame(pairs),
        "receipts": frames.receipts_frame_from_rows([{**r, "epoch": int(rec["case"].get("epoch", 1))}  # the record's
                                                     for rec in recs for r in rec.get("receipts", [])]),
    }


def _invalid(run: op.Run) -> set[str]:
    """The copies labeled invalid by a transform whose labels are checked, counted here from the labels alone."""
    out: set[str] = set()
    cases = run.cases
    sources = int(cases.loc[cases["transform"].isna(), "case_id"].nunique())  # one copy per source and transform
    for t in run.config.metamorphic.transforms:
        labels = pair_labels(run.labels.get(t.name, []))
        valid = sum(1 for v in labels.values() if v == "valid")
        if len(labels) == sources and valid >= t.minimum_validity * sources:
            out |= {c for c, v in labels.items() if v == "invalid"}
    return out


def everything_suite(root: Path) -> Path:
    """The refund desk example plus an outcome contract per source case: replays, pairs and receipts in one run."""
    folder = init_example("stateful-agent", root)
    cases = [json.loads(line) for line in (folder / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    (folder / "notes").mkdir()
    for i, case in enumerate(cases):
        case["outcome"] = {"artifact_id": f"note-{case['id']}", "locator": f"notes/{case['id']}.txt",
                           "require_fresh": False}
        if i % 3:  # a third of the notes are missing: receipts of several statuses
            (folder / "notes" / f"{case['id']}.txt").write_text("refund note\n", encoding="utf-8")
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = yaml.safe_load((folder / "oloproof.yaml").read_text(encoding="utf-8"))
    config["evaluators"].append({"type": "outcome_contract"})
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return folder


def rename_run(folder: Path, run_id: str) -> dict[str, object]:
    """Give the run in ``folder`` another run id, as another run would have it: its manifest and the run id each
    of its case records' states names (a folder whose manifest alone says another run is refused as holding two
    runs' files). Returns the manifest written, for a test to change more of."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    was, manifest["run_id"] = manifest["run_id"], run_id
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    journal = folder / "cases.jsonl"
    text = journal.read_text(encoding="utf-8")
    journal.write_text(text.replace(f'"run_id":{json.dumps(was)}', f'"run_id":{json.dumps(run_id)}'), encoding="utf-8")
    return manifest


def appended_records(folder: Path, out: Path, epochs: int | None = None) -> tuple[Path, list[tuple[Any, str | None]]]:
    """A finished run of the suite in ``folder`` (into ``out``), and its case records with their final state's
    address, as the runner appended them (what a live columnar copy is given)."""
    seen: list[tuple[Any, str | None]] = []

    class Spy:
        def start(self, directory: Path) -> None:
            pass

        def add(self, record: Any, state_ref: str | None, initial_ref: str | None = None) -> None:
            seen.append((record, state_ref))

    return run_suite(op.load_suite(folder), out=out, sink=Spy(), epochs=epochs), seen


def example_run_records(tmp_path: Path) -> tuple[Path, list[tuple[Any, str | None]]]:
    """:func:`appended_records` of the stateful-agent example (48 cases), run under ``tmp_path``."""
    return appended_records(init_example("stateful-agent", tmp_path / "suite"), tmp_path / "run")


def copy_folders(directory: Path) -> list[str]:
    """The names in a run folder that a columnar copy writes (``frames``, and a ``frames.tmp-…`` left behind)."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("frames"))
