"""oloproof_nb: judge stateful agents by the world they leave behind.

The public API; everything else may change. See shared/DESIGN.md and the README.
"""

from . import plots
from ._version import __version__
from .cases import Case, Expected, case_digest, load_cases
from .errors import CaseFileError, ConfigError, LabelFileError, OloproofError, RunDirError
from .evaluators import FaultRecovery
from .export import export_table
from .gate import Gate, gate
from .observe import ContractFileError, observe_file, verify_contract_file
from .outcomes import outcome_summary, receipts_frame
from .paths import ABSENT, flatten, get_path, leaf_diff, parse_path
from .receipts import DigestKeyError, Evidence, OutcomeContract, Receipt, classify_outcome
from .replay_cache import ReplayCache
from .results import Run, load_run
from .runner import run
from .slices import slice_table
from .stats import Interval, cluster_se, rate_interval
from .suite import Suite, load_suite
from .system import (
    FAULTS,
    MALFORMED_RESULT,
    Change,
    Message,
    RecordedAgent,
    Recorder,
    Replayable,
    ReplayDiverged,
    Stateful,
    ToolCall,
    Trajectory,
    fault_result,
)
from .validity import validity

__all__ = [
    "__version__",
    "ABSENT",
    "Case",
    "CaseFileError",
    "Change",
    "ConfigError",
    "Expected",
    "FAULTS",
    "Gate",
    "Interval",
    "LabelFileError",
    "MALFORMED_RESULT",
    "Message",
    "OloproofError",
    "RecordedAgent",
    "Recorder",
    "ReplayDiverged",
    "Replayable",
    "Run",
    "RunDirError",
    "Stateful",
    "Suite",
    "ToolCall",
    "Trajectory",
    "case_digest",
    "cluster_se",
    "gate",
    "rate_interval",
    "fault_result",
    "flatten",
    "get_path",
    "leaf_diff",
    "load_cases",
    "load_run",
    "load_suite",
    "parse_path",
    "run",
    "validity",
    "FaultRecovery",
    "ReplayCache",
    "ContractFileError",
    "DigestKeyError",
    "Evidence",
    "OutcomeContract",
    "Receipt",
    "classify_outcome",
    "observe_file",
    "outcome_summary",
    "receipts_frame",
    "verify_contract_file",
    "export_table",
    "plots",
    "slice_table",
]
