"""A release file given by a path to nothing, beside a file spelled much like it (``--release releas.yaml``).

A missing oloproof.yaml, case file or release.yaml of a suite names the file its folder holds; a mistyped
``--release`` was told only ``file not found`` while ``release.yaml`` sat beside the path given.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._config.release import load_release
from oloproof_nb.cli import main
from oloproof_nb.errors import ConfigError


def test_a_mistyped_release_file_names_the_file_beside_it(tmp_path: Path) -> None:
    (tmp_path / "release.yaml").write_text("criteria:\n  answer_matches: 0.8\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_release(tmp_path / "releas.yaml")
    assert caught.value.file == str(tmp_path / "releas.yaml")
    assert caught.value.message == "file not found; the folder holds 'release.yaml': give that file"


def test_a_missing_release_file_with_nothing_like_it_keeps_its_message(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_release(tmp_path / "release.yaml")
    assert caught.value.message == "file not found"


def test_gate_with_a_mistyped_release_exits_2_naming_the_file(make_suite: Callable[..., Path], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = make_suite([{"id": "c0", "input": {"n": 0}, "expected": {"answer": "ok"}}],
                      evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}})
    op.run(root, out=tmp_path / "run", progress=False)
    capsys.readouterr()
    assert main(["gate", str(tmp_path / "run"), "--release", str(root / "releas.yaml")]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"oloproof: error: {root / 'releas.yaml'}: file not found; the folder holds "
                              "'release.yaml': give that file\n")


def test_a_release_file_that_is_there_is_read_beside_one_spelled_like_it(tmp_path: Path) -> None:
    """Only a path to nothing is answered with a file spelled like it: ``release.yaml`` kept beside an older
    ``release.yml`` is read, not refused as "file not found"."""
    (tmp_path / "release.yaml").write_text("criteria:\n  answer_matches: 0.8\n", encoding="utf-8")
    (tmp_path / "release.yml").write_text("criteria:\n  answer_matches: 0.5\n", encoding="utf-8")
    assert load_release(tmp_path / "release.yaml").criteria == {"answer_matches": 0.8}


def test_a_dangling_link_is_named_as_one_beside_a_file_spelled_like_it(tmp_path: Path) -> None:
    """A link to nothing is a file the user made: it is named as such, not "file not found" beside ``release.yml``."""
    (tmp_path / "release.yml").write_text("criteria:\n  answer_matches: 0.5\n", encoding="utf-8")
    (tmp_path / "release.yaml").symlink_to("gone.yaml")
    with pytest.raises(ConfigError) as caught:
        load_release(tmp_path / "release.yaml")
    assert caught.value.message == ("is a dangling symbolic link (it points to 'gone.yaml', which does not exist); "
                                    "point it at the file, or remove it")


def test_a_path_holding_a_nul_is_refused_for_it_beside_a_file_spelled_like_it(tmp_path: Path) -> None:
    (tmp_path / "release.yaml").write_text("criteria:\n  answer_matches: 0.5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_release(tmp_path / "release\0.yaml")
    assert caught.value.message == "cannot read: embedded null byte"
