"""op.compare / oloproof compare of two runs made while the suite was loosened, compared after it was
put back.

Both runs made while oloproof.yaml said ``epochs: 1`` (the suite asks 3), or without the cases the candidate fails,
agree with each other: no ``check_changed``, ``fewer_epochs`` or ``cases_not_in_both_runs`` holds them back. The
forgetful desk that lends only on a request's first try then read NO_REGRESSION, exit 0, against the desk that always
lends, without a word, where ``oloproof gate`` of the same candidate run warns that oloproof.yaml differs (epochs) and
the suite's own 3 epochs make it a regression (``tests/_analysis/test_compare_false_no_regression.py``). The comparison
now says so as the gate does: a warning, ``cmp.drift``, a note and the command's last line; the runs' verdicts still
decide.

Counts are by hand from the systems' rules: with one epoch both desks lend on all 40 first tries, no flip, and the
interval is d̂ ± (1 − 0.025^(1/40)) = ±0.0880, inside margin 0.1.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml
from _epoch_systems import LOANS, library_suite

import oloproof_nb as op
from oloproof_nb.cli import main

RELEASE = {"allow_approximate_methods": True, "regression": {"margin": 0.1}}


def _set(root: Path, **keys: object) -> None:
    """Rewrite keys of the suite's oloproof.yaml."""
    body = yaml.safe_load((root / "oloproof.yaml").read_text(encoding="utf-8"))
    body.update(keys)
    (root / "oloproof.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")


def _runs_of_a_loosened_suite(tmp_path: Path) -> tuple[Path, op.Run, op.Run]:
    """The good desk, then the forgetful one, each run while oloproof.yaml said ``epochs: 1``; the suite then put back
    to its 3 epochs (the candidate's system left named)."""
    root = library_suite(tmp_path / "suite", "Good", epochs=1, release=RELEASE)
    base = op.run(op.load_suite(root), out=root / "runs" / "base", progress=False)
    _set(root, system="desk:Forgetful")
    cand = op.run(op.load_suite(root), out=root / "runs" / "cand", progress=False)
    _set(root, epochs=3)
    return root, base, cand


def test_runs_of_a_suite_loosened_since_are_told_against_it_as_it_is_now(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, base, cand = _runs_of_a_loosened_suite(tmp_path)
    with pytest.warns(UserWarning, match=r"oloproof\.yaml differs from the one the candidate run .* \(epochs\)"):
        cmp = op.compare(base, cand)
    table = cmp.table.set_index("criterion")
    assert list(table["n"]) == [LOANS, LOANS] and list(table["pass_to_fail"]) == [0, 0]
    assert table["ci_low"].to_list() == pytest.approx([-(1 - 0.025 ** (1 / LOANS))] * 2, abs=1e-12)
    assert cmp.verdict == "NO_REGRESSION"  # the runs' verdicts decide, as the gate's do ...
    assert len(cmp.drift) == 1 and cmp.drift[0].startswith(f"{root / 'oloproof.yaml'} differs from the one the "
                                                          f"candidate run {cand.run_id} was made with (epochs)")
    assert cmp.drift[0] in cmp.notes  # ... and the reader is told the suite asks otherwise now
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["compare", str(base.directory), str(cand.directory)]) == 0
    out = capsys.readouterr().out
    assert "note: " + str(root / "oloproof.yaml") in out
    assert out.strip().splitlines()[-1].endswith(
        "; the candidate's suite folder has changed since its run (1 file(s): see the note above)")


def test_cases_taken_out_of_both_runs_and_put_back_are_named(tmp_path: Path) -> None:
    """Both runs made on the first 30 loans; the file then holds 40 again (10 cases added since the candidate run)."""
    root = library_suite(tmp_path / "suite", "Good", epochs=1, release=RELEASE)
    lines = (root / "cases.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (root / "cases.jsonl").write_text("".join(lines[:30]), encoding="utf-8")
    base = op.run(op.load_suite(root), out=root / "runs" / "base", progress=False)
    _set(root, system="desk:Idle")
    cand = op.run(op.load_suite(root), out=root / "runs" / "cand", progress=False)
    (root / "cases.jsonl").write_text("".join(lines), encoding="utf-8")
    assert json.loads(lines[30])["id"] == "b30"
    with pytest.warns(UserWarning, match=r"cases\.jsonl differs from the one the candidate run"):
        cmp = op.compare(base, cand)
    assert cmp.verdict == "REGRESSION"  # the idle desk lends nothing: 30 of 30 lost on state_matches
    assert cmp.drift == (f"{root / 'cases.jsonl'} differs from the one the candidate run {cand.run_id} was made with "
                         "(10 case(s) added (first 'b30')); both runs were judged on the cases and by the checks they "
                         "recorded, so this comparison says nothing of the suite as it is now: to compare by it, run "
                         "both versions again",)


def test_a_suite_as_the_runs_used_it_says_nothing(tmp_path: Path) -> None:
    """The same two runs with oloproof.yaml left as the candidate ran it: no warning, no drift, no note of it."""
    root = library_suite(tmp_path / "suite", "Good", epochs=1, release=RELEASE)
    base = op.run(op.load_suite(root), out=root / "runs" / "base", progress=False)
    _set(root, system="desk:Forgetful")
    cand = op.run(op.load_suite(root), out=root / "runs" / "cand", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        cmp = op.compare(base, cand)
    assert cmp.drift == () and cmp.verdict == "NO_REGRESSION"
    assert not [note for note in cmp.notes if "differs from the one the candidate run" in note]
