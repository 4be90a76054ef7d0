"""``Comparison.drift`` (a suite changed since the runs): the candidate's validity labels changed since its run are
named as its oloproof.yaml is, and the command's last line counts the files (one, then two).

The sentences are written out here from the README's words (section 10), not read off the code.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from _metamorphic_systems import all_valid, case, mm_suite, relabel, transform

import oloproof_nb as op
from oloproof_nb.cli import main


def _last_line(capsys: pytest.CaptureFixture[str], base: op.Run, cand: op.Run) -> str:
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["compare", str(base.directory), str(cand.directory)]) in (0, 1)
    return capsys.readouterr().out.strip().splitlines()[-1]


def test_labels_then_labels_and_oloproof_yaml_changed_since_the_candidate_run_are_named(
        make_suite: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    ids = ["c1", "c2", "c3", "c4"]
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t")], [{"type": "answer_matches"}],
                    {"t": all_valid(ids, "t")})
    base = op.run(op.load_suite(root), out=root / "runs" / "base", progress=False)
    cand = op.run(op.load_suite(root), out=root / "runs" / "cand", progress=False)
    labels = root / "labels" / "t.jsonl"
    relabel(labels, {"c1~t": False})  # the labels alone
    said_labels = (f"{labels} differs from the validity labels the candidate run {cand.run_id} was made with "
                   "(transform t: c1~t is labeled otherwise); the runs' labels decide which copies are scored: to "
                   "compare by the labels as they are now, run both versions again")
    with pytest.warns(UserWarning, match="differs from the validity labels the candidate run"):
        cmp = op.compare(base, cand)
    assert cmp.drift == (said_labels,) and said_labels in cmp.notes
    assert _last_line(capsys, base, cand).endswith(
        "; the candidate's suite folder has changed since its run (1 file(s): see the note above)")
    body = yaml.safe_load((root / "oloproof.yaml").read_text(encoding="utf-8"))
    (root / "oloproof.yaml").write_text(yaml.safe_dump({**body, "epochs": 2}, sort_keys=False), encoding="utf-8")
    said_yaml = (f"{root / 'oloproof.yaml'} differs from the one the candidate run {cand.run_id} was made with "
                 "(epochs); both runs were judged on the cases and by the checks they recorded, so this comparison "
                 "says nothing of the suite as it is now: to compare by it, run both versions again")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cmp = op.compare(base, cand)
    assert [str(w.message) for w in caught if "candidate run" in str(w.message)] == [said_yaml, said_labels]
    assert cmp.drift == (said_yaml, said_labels)
    assert _last_line(capsys, base, cand).endswith(
        "; the candidate's suite folder has changed since its run (2 file(s): see the notes above)")
