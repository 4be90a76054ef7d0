"""Two transforms naming one label file (oloproof_nb._config.suite): each line of a label file must judge a copy of
the transform that reads it, so a file two transforms share can hold no judgement at all."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _metamorphic_systems import case, mm_suite, transform, write_labels

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.errors import ConfigError

RELATION = [{"type": "metamorphic_relation", "relation": "same_output", "transform": "polite"}]


def _shared(make_suite: Callable[..., Path], second: str) -> Path:
    """A suite of two transforms, ``polite`` reading labels/shared.jsonl and ``urgent`` reading ``second``."""
    return mm_suite(make_suite, [case("c1"), case("c2")],
                    [transform("polite", minimum_validity=0.9, labels="labels/shared.jsonl"),
                     transform("urgent", "now", minimum_validity=0.9, labels=second)],
                    RELATION)


@pytest.mark.parametrize("second", ["labels/shared.jsonl", "./labels/shared.jsonl", "labels/../labels/shared.jsonl"])
def test_a_label_file_two_transforms_name_is_refused_at_the_second(make_suite: Callable[..., Path],
                                                                   second: str) -> None:
    root = _shared(make_suite, second)
    write_labels(root, "polite", [{"case_id": "c1~polite", "valid": True}, {"case_id": "c2~urgent", "valid": True}],
                 "labels/shared.jsonl")
    with pytest.raises(ConfigError) as info:
        op.load_suite(root)
    assert info.value.key == "metamorphic.transforms[1].validity_labels"
    assert info.value.message == (f"{second!r} is the label file of transform 'polite' (metamorphic.transforms[0]) "
                                  "too; a label file judges the copies of one transform: give 'urgent' a file of its "
                                  "own, e.g. labels/urgent.jsonl")


def test_an_empty_shared_label_file_is_refused_before_any_pair_is_labeled(make_suite: Callable[..., Path],
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Empty, the shared file loaded and ran both transforms unchecked; the first judgement written in it was then
    refused by the other transform, whose error offered its own ids ('e.g. c1~urgent') as the fix."""
    root = _shared(make_suite, "labels/shared.jsonl")
    before = (root / "labels" / "shared.jsonl").read_bytes()
    with pytest.raises(ConfigError, match=r"is the label file of transform 'polite'"):
        op.load_suite(root)
    assert main(["run", str(root), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "metamorphic.transforms[1].validity_labels" in err
    assert (root / "labels" / "shared.jsonl").read_bytes() == before


def test_a_link_to_another_transforms_label_file_is_the_same_file(make_suite: Callable[..., Path]) -> None:
    root = _shared(make_suite, "labels/urgent.jsonl")
    (root / "labels" / "urgent.jsonl").unlink()
    try:
        (root / "labels" / "urgent.jsonl").symlink_to("shared.jsonl")
    except OSError:
        pytest.skip("no symbolic links here")
    with pytest.raises(ConfigError, match=r"^.*transforms\[1\]\.validity_labels: 'labels/urgent\.jsonl' is the label "
                                          r"file of transform 'polite'"):
        op.load_suite(root)


def test_transforms_with_files_of_their_own_load_with_their_labels(make_suite: Callable[..., Path]) -> None:
    root = _shared(make_suite, "labels/urgent.jsonl")
    write_labels(root, "polite", [{"case_id": "c1~polite", "valid": True}], "labels/shared.jsonl")
    write_labels(root, "urgent", [{"case_id": "c2~urgent", "valid": False}])
    suite = op.load_suite(root)
    assert {name: [j["case_id"] for j in js] for name, js in suite.labels.items()} == {
        "polite": ["c1~polite"], "urgent": ["c2~urgent"]}
    assert json.loads((root / "labels" / "urgent.jsonl").read_text(encoding="utf-8"))["valid"] is False
