"""The release.yaml model: thresholds and statistical settings of the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import quote
from .files import config_error, read_yaml

__all__ = ["ReleaseConfig", "BootstrapConfig", "RegressionConfig", "load_release", "parse_release"]


class BootstrapConfig(BaseModel):
    """Cluster bootstrap settings: ``resamples`` (default 10,000) and ``seed`` (default 0)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    resamples: int = Field(default=10_000, ge=100, le=1_000_000)  # bounded: the draws are held in memory
    seed: int = Field(default=0, ge=0)  # numpy seeds are non-negative


class RegressionConfig(BaseModel):
    """The regression rule of ``op.compare``: ``margin`` (default 0.02) and ``criteria`` (default: every
    criterion both runs judge). A criterion shows ``NO_REGRESSION`` when the lower end of the paired difference
    (candidate − base) is at or above −margin, ``REGRESSION`` when its upper end is below −margin."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    margin: float = Field(default=0.02, ge=0, lt=1)
    criteria: list[str] | None = Field(default=None, min_length=1)


class ReleaseConfig(BaseModel):
    """release.yaml: the gate's thresholds and statistics.

    Attributes
    ----------
    confidence : float
        Two-sided confidence level of every interval (default 0.95).
    allow_approximate_methods : bool
        Must be true for a clustered run to get a PASS or FAIL (default false).
    min_clusters : int
        Source cases (clusters) needed for approximate methods (default 20).
    method : {"cluster_t", "cluster_bootstrap"}
        Interval for clustered runs (default ``cluster_t``).
    unclustered_method : {"clopper_pearson", "wilson"}
        Interval for unclustered runs (default ``clopper_pearson``).
    bootstrap : BootstrapConfig
        ``resamples`` and ``seed`` of the cluster bootstrap.
    criteria : dict of str to float
        Criterion name → minimum rate; every criterion named here blocks.
    regression : RegressionConfig
        ``margin`` and ``criteria`` of the regression rule of ``op.compare``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    confidence: float = Field(default=0.95, gt=0, lt=1)
    allow_approximate_methods: bool = False
    min_clusters: int = Field(default=20, ge=2)
    method: Literal["cluster_t", "cluster_bootstrap"] = "cluster_t"
    unclustered_method: Literal["clopper_pearson", "wilson"] = "clopper_pearson"
    bootstrap: BootstrapConfig = Field(default_factory=BootstrapConfig)
    criteria: dict[str, float] = Field(default_factory=dict)
    regression: RegressionConfig = Field(default_factory=RegressionConfig)

    @field_validator("criteria", mode="before")
    @classmethod
    def _numbers_only(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for name, threshold in value.items():
                if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
                    raise ValueError(f"threshold of {quote(name)} must be a number between 0 and 1, "
                                     f"got {quote(threshold)}")
        return value

    @field_validator("criteria")
    @classmethod
    def _thresholds(cls, value: dict[str, float]) -> dict[str, float]:
        for name, threshold in value.items():
            if not 0.0 <= threshold <= 1.0:
                raise ValueError(f"threshold of {quote(name)} must be between 0 and 1, got {threshold!r}")
        return value


def parse_release(raw: dict[str, Any], file: str | Path = "release.yaml") -> ReleaseConfig:
    """Validate a release mapping; errors name the file and the key."""
    try:
        return ReleaseConfig.model_validate(raw)
    except ValidationError as exc:
        raise config_error(file, exc, ReleaseConfig) from None


def load_release(path: str | Path) -> ReleaseConfig:
    """Read and validate a release.yaml file."""
    path = Path(path)
    return parse_release(read_yaml(path), path)
