"""Evaluator families, one module each, registered under their ``type``."""

from .answer import AnswerMatches
from .base import EVALUATORS, CaseContext, Evaluation, Evaluator, register
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
]
