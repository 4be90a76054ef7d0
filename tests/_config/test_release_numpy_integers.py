"""A NumPy integer is the whole number it is for a strict whole-number setting.

``min_clusters`` and ``bootstrap.resamples`` / ``seed`` are strict (``20.0`` refused, as ``epochs: 2.0`` is).
Strict pydantic also refused ``np.int64(30)``, which the settings took before, saying "Input should be a valid
integer (got np.int64(30))": a release given in Python with a seed drawn by ``rng.integers`` stopped. ``op.run``
reads a NumPy integer for ``epochs=`` as the integer it is; these settings now do too, and still refuse ``20.0``,
a NumPy float and a NumPy bool.
"""

from __future__ import annotations

import numpy as np
import pytest

from oloproof_nb._config.release import parse_release
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb.errors import ConfigError


def test_numpy_integers_are_read_as_whole_numbers() -> None:
    """Mutant caught: without the conversion, each of these is refused as "not a valid integer"."""
    cfg = parse_release({"min_clusters": np.int64(30), "bootstrap": {"resamples": np.int32(2000),
                                                                     "seed": np.uint16(7)}}, "release")
    assert (cfg.min_clusters, cfg.bootstrap.resamples, cfg.bootstrap.seed) == (30, 2000, 7)
    assert type(cfg.min_clusters) is int and type(cfg.bootstrap.seed) is int
    suite = parse_suite_config({"name": "s", "system": "m:S", "evaluators": [], "epochs": np.int64(3)}, "oloproof.yaml")
    assert suite.epochs == 3 and type(suite.epochs) is int


@pytest.mark.parametrize(("value", "why"), [(np.float64(20.0), "must be a whole number written without a decimal "
                                                                "point (got np.float64(20.0))"),
                                            (np.bool_(True), "must be a whole number of clusters, not true"),
                                            (np.int64(1), "Input should be greater than or equal to 2")])
def test_what_is_no_whole_number_of_clusters_stays_refused(value: object, why: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_release({"min_clusters": value}, "release")
    assert str(err.value).startswith(f"release: min_clusters: {why}")
