"""oloproof_nb._display.notebook: the progress bar of a run (the notebook face's other names are tested with
the layers they call)."""

from __future__ import annotations

import pytest

from oloproof_nb._display.notebook import progress_bar


def test_the_progress_bar_shows_the_suite_name_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Review R7: the bar's label is the suite's name, and tqdm wrote it to the terminal as it was, so a name
    holding ``\\x1b[8m`` hid what the terminal showed after it. It is written as its escape, as every other line
    oloproof prints is."""
    update, close = progress_bar("refunds\x1b[8m\u202e")
    update(0, 3)
    update(2, 3)
    close()
    err = capsys.readouterr().err
    assert "refunds\\x1b[8m\\u202e:   0%" in err and "0/3" in err
    assert "\x1b[8m" not in err and "\u202e" not in err
