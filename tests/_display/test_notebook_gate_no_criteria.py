"""A gate in a notebook that gated nothing says why, as ``oloproof gate`` does above its exit line: a suite whose
release file was saved as ``release.yml`` showed ``Gate: BLOCK (no_criteria: nothing was gated)`` and no word of the
file the folder holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.examples import init_example


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, op.Gate]:
    suite = init_example("false-success", tmp_path_factory.mktemp("nb") / "suite")
    os.replace(suite / "release.yaml", suite / "release.yml")
    return suite, op.gate(op.run(op.load_suite(suite), progress=False))


def test_a_release_file_named_alike_is_named_under_the_verdict(gated: tuple[Path, op.Gate]) -> None:
    suite, g = gated
    assert g.verdict == "BLOCK" and g.reason == "no_criteria: nothing was gated"
    said = (f"{suite / 'release.yaml'}: there was none when the run started, so no criterion is gated; the folder "
            f"holds 'release.yml': rename it release.yaml for the next run, or gate this one with "
            f"op.gate(run, release={str(suite / 'release.yml')!r})")
    assert repr(g).splitlines()[:2] == ["Gate: BLOCK (no_criteria: nothing was gated)", f"  {said}"]
    assert "the folder holds &#39;release.yml&#39;: rename it release.yaml" in g._repr_html_()


def test_the_gate_given_the_file_named_says_nothing_of_it(gated: tuple[Path, op.Gate]) -> None:
    suite, _ = gated
    runs = sorted((suite / "runs").iterdir())
    g = op.gate(op.load_run(runs[-1]), release=suite / "release.yml")
    assert g.reason == "" and "release.yml" not in repr(g)
