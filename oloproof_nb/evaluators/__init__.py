"""Evaluator families, one module each, registered under their ``type``."""

from .answer import AnswerMatches
from .base import EVALUATORS, CaseContext, Evaluation, Evaluator, register
from .fault import FaultRecovery
from .metamorphic import MetamorphicRelation
from .outcome import OutcomeContractEvaluator
from .state import StateMatches, StateUnchanged

__all__ = [
    "EVALUATORS",
    "CaseContext",
    "Evaluation",
    "Evaluator",
    "register",
    "AnswerMatches",
    "StateMatches",
    "StateUnchanged",
    "FaultRecovery",
    "MetamorphicRelation",
    "OutcomeContractEvaluator",
]
