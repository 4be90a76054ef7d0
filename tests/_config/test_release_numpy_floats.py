"""A NumPy float of another precision than Python's (``float32``, ``float16``) given for a release setting is the
decimal it shows.

``confidence=np.float32(0.95)`` was widened to 0.949999988079071: the gate listed ``confidence 0.95 →
0.949999988079071`` among the settings weaker than the run's own, and its intervals were 94.9999988…% ones. The same
float32 as a threshold was refused, "must be a number between 0 and 1, got np.float32(0.95)". Both now read it as
NumPy prints it (0.95), as the gate's level label (``fmt_level``) already did; a NumPy bool stays refused.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof_nb._config.release import ReleaseConfig, parse_release, relaxed_settings
from oloproof_nb.errors import ConfigError


def test_a_float32_setting_is_the_decimal_it_shows() -> None:
    """Mutant caught: without the reading, confidence and margin are the widened floats and the thresholds are
    refused."""
    assert float(np.float32(0.95)) == 0.949999988079071 and str(np.float32(0.95)) == "0.95"  # Python's vs NumPy's
    cfg = ReleaseConfig(confidence=np.float32(0.95), criteria={"a": np.float32(0.8), "b": np.float16(0.1)},
                        regression={"margin": np.float32(0.02)})
    assert (cfg.confidence, cfg.criteria, cfg.regression.margin) == (0.95, {"a": 0.8, "b": 0.1}, 0.02)
    assert {type(cfg.confidence), *map(type, cfg.criteria.values()), type(cfg.regression.margin)} == {float}
    parsed = parse_release({"confidence": np.float32(0.9), "criteria": {"a": np.int64(1)}}, "release")
    assert (parsed.confidence, parsed.criteria) == (0.9, {"a": 1})
    # the run's own 0.95: the same level, so no weaker setting (0.949999988079071 was one)
    assert relaxed_settings(ReleaseConfig(confidence=0.95, criteria={"a": 0.8}), cfg, ["confidence", "criteria"]) == []


@pytest.mark.parametrize(("threshold", "why"), [
    (np.bool_(True), "must be a number between 0 and 1, got "),  # NumPy's own repr of it follows
    (np.float32(1.5), "must be between 0 and 1, got 1.5"),
    (np.float32("nan"), "must be between 0 and 1, got nan"),
])
def test_what_is_no_threshold_stays_refused(threshold: object, why: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_release({"criteria": {"a": threshold}}, "release")
    assert str(err.value).startswith(f"release: criteria: threshold of 'a' {why}")


def test_a_float32_confidence_out_of_range_is_refused_in_its_own_digits() -> None:
    with pytest.raises(ConfigError) as err:
        parse_release({"confidence": np.float32(0.05)}, "release")
    assert str(err.value).startswith("release: confidence: 0.05 is below 0.5")
    assert math.isclose(float(np.float32(0.05)), 0.05, rel_tol=1e-7) and float(np.float32(0.05)) != 0.05



@pytest.mark.parametrize(("raw", "where", "said"), [
    ({"regression": {"margin": np.False_}}, "regression.margin", "a number between 0 and 1, not false"),
    ({"confidence": np.True_}, "confidence", "a confidence level, e.g. 0.95, not true"),
    ({"bootstrap": {"seed": np.False_}}, "bootstrap.seed", "a whole number, not false"),
])
def test_a_numpy_bool_setting_is_refused_as_a_python_bool_is(raw: dict[str, object], where: str, said: str) -> None:
    """A NumPy bool is no ``bool``: pydantic read ``np.False_`` as 0, a margin of 0 and a seed of 0 taken without a
    word (``False`` itself is refused), and ``np.True_`` as a confidence of "1"."""
    with pytest.raises(ConfigError) as err:
        parse_release(raw, "release")
    assert str(err.value).startswith(f"release: {where}: must be {said} (YAML reads yes, no, on and off")
