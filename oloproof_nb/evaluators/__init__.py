"""Evaluator families, one module each, registered under their ``type`` when this package is imported."""

from .._core.evaluator import EVALUATORS, CaseContext, Evaluation, Evaluator, RunContext, register
from .answer import AnswerMatches
from .fault import FaultRecovery
from .metamorphic import MetamorphicRelation
from .outcome import OutcomeContractEvaluator
from .python import PythonCheck
from .state import StateMatches, StateUnchanged

__all__ = [
    "EVALUATORS",
    "CaseContext",
    "Evaluation",
    "Evaluator",
    "RunContext",
    "register",
    "AnswerMatches",
    "StateMatches",
    "StateUnchanged",
    "FaultRecovery",
    "MetamorphicRelation",
    "OutcomeContractEvaluator",
    "PythonCheck",
]
