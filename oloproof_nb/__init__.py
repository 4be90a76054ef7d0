"""oloproof_nb: judge stateful agents by the world they leave behind.

The public API: explicit re-exports, listed in ``__all__``; everything under
``_core``, ``_config``, ``evaluators``, ``_run``, ``_analysis`` and ``_display``
may change. See shared/DESIGN.md and the README.
"""

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
from ._version import __version__
from .errors import (
    CaseFileError,
    ConfigError,
    ContractFileError,
    DigestKeyError,
    LabelFileError,
    OloproofError,
    RunDirError,
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
]
