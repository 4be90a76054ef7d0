"""oloproof_nb: judge stateful agents by the world they leave behind.

The public API: explicit re-exports, listed in ``__all__``; everything under
``_core``, ``_config``, ``evaluators``, ``_run``, ``_analysis`` and ``_display``
may change. See shared/DESIGN.md and the README.

``import oloproof_nb`` loads nothing but this table: each public name's module is
imported on its first use (PEP 562), so a command that needs little — the
``oloproof receipt`` completion hook — never loads pandas, and a notebook pays for
what it uses. The evaluator families are imported here (they register the
``type:`` names a suite may use; they need pydantic, not pandas).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import evaluators as _evaluators  # noqa: F401  (registers every evaluator type a suite may name)
from ._version import __version__

if TYPE_CHECKING:  # what each name is, for type checkers; at run time the names are imported on first use
    from ._analysis.baseline import Baseline
    from ._analysis.epochs import reduce_epochs
    from ._analysis.receipts import outcome_summary, receipts_frame
    from ._analysis.slices import slice_table
    from ._analysis.validity import validity
    from ._config.cases import load_cases
    from ._config.suite import Suite, load_suite
    from ._core.case import Case, Expected, case_digest
    from ._core.epochs import pass_at_k, pass_hat_k
    from ._core.paths import ABSENT, flatten, get_path, leaf_diff, parse_path
    from ._core.receipts import Evidence, OutcomeContract, Receipt, classify_outcome
    from ._core.recorder import RecordedAgent, Recorder, ReplayDiverged
    from ._core.stats import Interval, cluster_se, rate_interval, rate_interval_from_sums
    from ._core.trajectory import (
        FAULTS,
        MALFORMED_RESULT,
        Change,
        Message,
        Replayable,
        Stateful,
        ToolCall,
        Trajectory,
        fault_result,
    )
    from ._display import plots
    from ._display.baseline import baseline
    from ._display.compare import Comparison, compare
    from ._display.export import export_table
    from ._display.notebook import Gate, Run, from_inspect, gate, load_run, load_runs, run
    from ._run.observe import observe_file, verify_contract_file
    from ._run.replay_cache import ReplayCache
    from .errors import (
        CaseFileError,
        ConfigError,
        ContractFileError,
        DigestKeyError,
        DuplicateCaseWarning,
        LabelFileError,
        OloproofError,
        RunDirError,
        SliceWarning,
        VacuousCheckWarning,
    )
    from .evaluators import FaultRecovery

__all__ = [
    "__version__",
    # suites and cases
    "Suite",
    "load_suite",
    "Case",
    "Expected",
    "case_digest",
    "load_cases",
    # systems
    "Stateful",
    "Replayable",
    "Trajectory",
    "ToolCall",
    "Message",
    "Change",
    "Recorder",
    "RecordedAgent",
    "ReplayDiverged",
    "FAULTS",
    "MALFORMED_RESULT",
    "fault_result",
    "FaultRecovery",
    "ReplayCache",
    # paths
    "ABSENT",
    "flatten",
    "get_path",
    "leaf_diff",
    "parse_path",
    # running and loading
    "run",
    "Run",
    "load_run",
    "load_runs",
    "from_inspect",
    # the gate and statistics
    "gate",
    "Gate",
    "Interval",
    "rate_interval",
    "rate_interval_from_sums",
    "cluster_se",
    "validity",
    "slice_table",
    # comparing two runs
    "compare",
    "Comparison",
    # epochs
    "reduce_epochs",
    "pass_hat_k",
    "pass_at_k",
    "baseline",
    "Baseline",
    # outcome receipts
    "OutcomeContract",
    "Evidence",
    "Receipt",
    "classify_outcome",
    "observe_file",
    "verify_contract_file",
    "receipts_frame",
    "outcome_summary",
    # display
    "plots",
    "export_table",
    # errors
    "OloproofError",
    "ConfigError",
    "CaseFileError",
    "LabelFileError",
    "RunDirError",
    "ContractFileError",
    "DigestKeyError",
    "VacuousCheckWarning",
    "DuplicateCaseWarning",
    "SliceWarning",
]


#: Where each public name lives (a module, or ``plots``: the module itself).
_WHERE: dict[str, str] = {
    "Baseline": "._analysis.baseline",
    "reduce_epochs": "._analysis.epochs",
    "outcome_summary": "._analysis.receipts",
    "receipts_frame": "._analysis.receipts",
    "slice_table": "._analysis.slices",
    "validity": "._analysis.validity",
    "load_cases": "._config.cases",
    "Suite": "._config.suite",
    "load_suite": "._config.suite",
    "Case": "._core.case",
    "Expected": "._core.case",
    "case_digest": "._core.case",
    "pass_at_k": "._core.epochs",
    "pass_hat_k": "._core.epochs",
    "ABSENT": "._core.paths",
    "flatten": "._core.paths",
    "get_path": "._core.paths",
    "leaf_diff": "._core.paths",
    "parse_path": "._core.paths",
    "Evidence": "._core.receipts",
    "OutcomeContract": "._core.receipts",
    "Receipt": "._core.receipts",
    "classify_outcome": "._core.receipts",
    "RecordedAgent": "._core.recorder",
    "Recorder": "._core.recorder",
    "ReplayDiverged": "._core.recorder",
    "Interval": "._core.stats",
    "cluster_se": "._core.stats",
    "rate_interval": "._core.stats",
    "rate_interval_from_sums": "._core.stats",
    "FAULTS": "._core.trajectory",
    "MALFORMED_RESULT": "._core.trajectory",
    "Change": "._core.trajectory",
    "Message": "._core.trajectory",
    "Replayable": "._core.trajectory",
    "Stateful": "._core.trajectory",
    "ToolCall": "._core.trajectory",
    "Trajectory": "._core.trajectory",
    "fault_result": "._core.trajectory",
    "plots": "._display",
    "baseline": "._display.baseline",
    "Comparison": "._display.compare",
    "compare": "._display.compare",
    "export_table": "._display.export",
    "Gate": "._display.notebook",
    "Run": "._display.notebook",
    "from_inspect": "._display.notebook",
    "gate": "._display.notebook",
    "load_run": "._display.notebook",
    "load_runs": "._display.notebook",
    "run": "._display.notebook",
    "observe_file": "._run.observe",
    "verify_contract_file": "._run.observe",
    "ReplayCache": "._run.replay_cache",
    "CaseFileError": ".errors",
    "ConfigError": ".errors",
    "ContractFileError": ".errors",
    "DigestKeyError": ".errors",
    "LabelFileError": ".errors",
    "OloproofError": ".errors",
    "RunDirError": ".errors",
    "VacuousCheckWarning": ".errors",
    "DuplicateCaseWarning": ".errors",
    "SliceWarning": ".errors",
    "FaultRecovery": ".evaluators",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on its first use and keep the name here (PEP 562)."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where, __name__)
    value = getattr(module, name) if hasattr(module, name) else importlib.import_module(f"{where}.{name}", __name__)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
