"""Runs made by two oloproof_nb releases are neither pooled nor compared without a word.

Version 0.2.0 made the two releases tell apart, and a resume of a run another release started is
refused: "its verdicts would mix two releases' rules". ``op.load_runs`` pooled such runs silently and
gated the mix, and ``op.compare`` of a base run stored by the first release and a candidate run of this one said
nothing of it: a flip could be the rules' change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}} for i in range(3)]


def _made_by(directory: Path, release: str) -> None:
    """Say in the run's manifest that ``release`` of oloproof_nb made it (as the first release's runs say 0.1.0)."""
    path = directory / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["oloproof_nb"] = release
    path.write_text(json.dumps(manifest), encoding="utf-8")


def _two_runs(make_suite: Callable[..., Path], tmp_path: Path) -> tuple[Path, Path]:
    root = make_suite(CASES)
    old, new = (op.run(root, out=tmp_path / name, progress=False).directory for name in ("old", "new"))
    _made_by(old, "0.1.0")
    return old, new


def test_runs_of_two_oloproof_nb_releases_are_not_pooled(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    old, new = (op.load_run(d) for d in _two_runs(make_suite, tmp_path))
    assert (old.manifest.oloproof_nb, new.manifest.oloproof_nb) == ("0.1.0", op.__version__)
    for first, second in ((old, new), (new, old)):  # in both orders, each release named
        releases = f"{first.manifest.oloproof_nb}, {second.manifest.oloproof_nb}"
        with pytest.raises(op.OloproofError, match=re.escape(f"runs {first.run_id} and {second.run_id} were made by "
                                                             f"different oloproof_nb releases ({releases})")):
            op.load_runs([first.directory, second.directory])


def test_a_comparison_of_runs_of_two_releases_says_so(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    old, new = _two_runs(make_suite, tmp_path)
    said = [note for note in op.compare(op.load_run(old), op.load_run(new)).notes if "oloproof_nb releases" in note]
    assert said == [f"the runs were made by different oloproof_nb releases (0.1.0 the base, {op.__version__} the "
                    "candidate), which may judge a case otherwise: a flip may be the rules' change, not the system's; "
                    f"run the base again with the installed oloproof_nb {op.__version__} to compare the systems alone"]
    _made_by(old, op.__version__)  # the same release again: no such note
    assert not [note for note in op.compare(op.load_run(old), op.load_run(new)).notes if "oloproof_nb" in note]


def test_a_comparison_of_two_releases_names_the_run_to_make_again(make_suite: Callable[..., Path],
                                                                     tmp_path: Path) -> None:
    """The hint "run the base again with this release" named no release, and told to run the base again when the
    base was the run of the installed release and the candidate the older one: the run the installed release did not
    make is named, or both when it made neither."""
    old, new = _two_runs(make_suite, tmp_path)

    def tail(base: Path, candidate: Path) -> str:
        said = [n for n in op.compare(op.load_run(base), op.load_run(candidate)).notes if "oloproof_nb releases" in n]
        assert len(said) == 1, said
        return said[0].split("the system's; ")[1]

    assert tail(new, old) == (f"run the candidate again with the installed oloproof_nb {op.__version__} to compare "
                              "the systems alone")
    assert _releases_named(new, old) == f"({op.__version__} the base, 0.1.0 the candidate)"
    _made_by(new, "0.1.1")  # neither made by the installed release
    assert tail(old, new) == (f"run both again with one release (oloproof_nb {op.__version__} is installed) to "
                              "compare the systems alone")


def _releases_named(base: Path, candidate: Path) -> str:
    """The releases as the note names them, which run each."""
    note = next(n for n in op.compare(op.load_run(base), op.load_run(candidate)).notes if "oloproof_nb releases" in n)
    return "(" + note.split("(", 1)[1].split(")", 1)[0] + ")"
