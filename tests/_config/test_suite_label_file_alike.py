"""A transform's label file missing beside a file spelled much like it (``labels/polite.json`` written for
``labels/polite.jsonl``): told only to write one, as the case file was before it named the file its folder holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _metamorphic_systems import case, mm_suite, transform

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

RELATION = [{"type": "metamorphic_relation", "relation": "same_output", "transform": "polite"}]


def test_a_label_file_saved_under_a_name_like_it_is_named(make_suite: Callable[..., Path]) -> None:
    root = mm_suite(make_suite, [case("c1")], [transform("polite")], RELATION)
    (root / "labels" / "polite.jsonl").rename(root / "labels" / "polite.json")
    with pytest.raises(ConfigError) as caught:
        op.load_suite(root)
    assert caught.value.key == "metamorphic.transforms[0].validity_labels"
    assert caught.value.message == (f"label file {root / 'labels' / 'polite.jsonl'} not found; the folder holds "
                                    "'polite.json': name it in validity_labels, or rename it")


def test_the_label_file_of_another_transform_is_not_offered(make_suite: Callable[..., Path]) -> None:
    """``labels/polit.jsonl`` of one transform is spelled much like ``labels/polite.jsonl``, the other's: the
    first not written yet is told to write it, not to use the other transform's judgements."""
    root = mm_suite(make_suite, [case("c1")], [transform("polite"), transform("polit", "now")], RELATION)
    (root / "labels" / "polit.jsonl").unlink()
    with pytest.raises(ConfigError) as caught:
        op.load_suite(root)
    assert caught.value.key == "metamorphic.transforms[1].validity_labels"
    assert caught.value.message.startswith(f"label file {root / 'labels' / 'polit.jsonl'} not found; write one "
                                           "judgement per line")
