"""``oloproof gate|report LOGS --pass-threshold NAME=X`` (repeatable): a threshold per criterion of an Inspect AI log.

The log is ``tests/_inspect_rated_log.py``'s (``ROWS``): ``rating`` (1-10) passes at or above 7 for 9, 7, 10 and 7.0
(4 of 8, by hand); ``exact`` (0-1) has five 1.0s; ``quality``, a key of the dict-valued ``checks``, is 7 or more
four times.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _inspect_rated_log import ROWS, shared_rated

from oloproof_nb.cli import main
from oloproof_nb.cli.dispatch import _cli_phrases


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with shared_rated(tmp_path_factory) as file:
        yield file


def _table(out: str) -> dict[str, tuple[int, int, int]]:
    """The gate table's rows: criterion -> (n, pass, miss)."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 4 and cells[1].isdigit():
            rows[cells[0]] = (int(cells[1]), int(cells[2]), int(cells[3]))
    return rows


def test_a_threshold_per_criterion_is_given_as_name_equals_x(rated: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Each NAME=X judges its criterion; the one not named (quality, a 1-10 key) keeps the default (missing)."""
    hand = (sum(r >= 7 for r, *_ in ROWS), sum(e == 1.0 for _, e, *_ in ROWS))
    assert hand == (4, 5)
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {rating: 0.3, exact: 0.3}\nmin_clusters: 2\nallow_approximate_methods: true\n",
                       encoding="utf-8")
    code = main(["gate", str(rated), "--release", str(release), "--pass-threshold", "rating=7",
                 "--pass-threshold", "exact=0.5"])
    out, err = capsys.readouterr()
    rows = _table(out)
    assert rows["rating"] == (8, hand[0], 0) and rows["exact"] == (8, hand[1], 0) and rows["quality"] == (8, 0, 8)
    assert code in (0, 1) and "warning" not in err
    # a key of a dict score by its criterion's name; a value that starts with '-' needs no '=' form here
    assert main(["gate", str(rated), "--pass-threshold", "quality=7", "--pass-threshold", "rating=-1"]) == 1
    rows = _table(capsys.readouterr().out)
    assert rows["quality"] == (8, 4, 0) and rows["rating"] == (8, 8, 0) and rows["exact"] == (8, 5, 0)


@pytest.mark.parametrize(("argv", "line"), [
    (["--pass-threshold", "7", "--pass-threshold", "rating=7"],
     "argument --pass-threshold: rating=7 after a plain X: give one X for every criterion, or NAME=X for each "
     "criterion, not both"),
    (["--pass-threshold", "rating=7", "--pass-threshold", "7"],
     "argument --pass-threshold: 7 after NAME=X: give one X for every criterion, or NAME=X for each criterion, "
     "not both"),
    (["--pass-threshold", "rating=7", "--pass-threshold", "rating=8"],
     "argument --pass-threshold: criterion rating given twice; give it once"),
    (["--pass-threshold", "7", "--pass-threshold", "8"], "argument --pass-threshold: given twice; give it once"),
    (["--pass-threshold", "rating=x"], "argument --pass-threshold: 'rating=x': 'x' is not a number (give NAME=X)"),
    (["--pass-threshold", "=7"], "argument --pass-threshold: '=7': no criterion name before '=' (give NAME=X)"),
])
def test_mixed_repeated_or_malformed_thresholds_are_one_line_exit_2(rated: Path, argv: list[str], line: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["gate", str(rated), *argv])
    err = capsys.readouterr().err
    assert info.value.code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err == f"oloproof: error: {line} (see `oloproof gate --help`)\n"


@pytest.mark.parametrize(("argv", "line"), [
    (["--pass-threshold", "ratng=7"], "--pass-threshold ratng=7: these logs have no criterion 'ratng'; their "
                                      "criteria: rating, exact, correct, quality"),
    (["--pass-threshold", "rating=7", "--pass-threshold", "exact=inf"],
     "--pass-threshold exact=inf: give a finite number (a numeric score of criterion exact passes at or above it)"),
])
def test_an_unknown_criterion_or_no_finite_number_is_one_line_exit_2(rated: Path, argv: list[str], line: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["gate", str(rated)], ["report", str(rated), "--out", str(rated.parent / "r.md")]):
        assert main([*command, *argv]) == 2
        err = capsys.readouterr().err
        assert err == f"oloproof: error: {line}\n"
    assert not (rated.parent / "r.md").exists()


def test_the_findings_name_the_flag_as_given(rated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """exact (every score in [0, 1]) given 7 cannot pass: the warning says ``--pass-threshold exact=7``, never the
    Python ``pass_threshold['exact']``; the plain 7 says how to give the criteria on its scale their own."""
    assert main(["gate", str(rated), "--pass-threshold", "rating=7", "--pass-threshold", "exact=7"]) == 1
    err = capsys.readouterr().err
    (said,) = [line for line in err.splitlines() if "warning" in line]
    assert ": --pass-threshold exact=7: each of criterion exact's 8 scores is a number in [0, 1], below the " \
        "threshold given for it, so the criterion cannot pass" in said
    assert "pass_threshold" not in err
    assert main(["gate", str(rated), "--pass-threshold", "7"]) == 1
    err = capsys.readouterr().err
    assert "or give the threshold to the criteria on its scale alone (--pass-threshold CRITERION=X)" in err
    assert "pass_threshold" not in err


def test_a_criterion_named_in_quotes_is_said_as_the_command_names_it() -> None:
    """The library names a criterion's own threshold as Python writes the name (either quotes, escapes)."""
    assert _cli_phrases("x: pass_threshold['judge/it\\'s']=7: y") == "x: --pass-threshold judge/it's=7: y"
    assert _cli_phrases('pass_threshold["it\'s"]=0.5:') == "--pass-threshold it's=0.5:"
    assert _cli_phrases("pass_threshold=7:") == "--pass-threshold 7:"
