"""``outcome_contract``: the promised artifact exists, is this run's, has the right bytes and passes its check.

For every case with an ``outcome`` (an :class:`~oloproof_nb.OutcomeContract`), the
evaluator observes the artifact right after the case, classifies the evidence into a receipt
(:func:`~oloproof_nb.classify_outcome`) and gives one verdict. Receipts go to
``run.receipts``; they never hold the contract's locator, the artifact's content or a key.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import ClassVar, Literal

from pydantic import Field

from .._config.contracts import DEFAULT_MAX_ARTIFACT_BYTES, DEFAULT_OBSERVE_TIMEOUT_S
from .._core.evaluator import CaseContext, Evaluation, Evaluator, Scope, register
from .._core.receipts import OutcomeContract, Receipt, classify_outcome
from .._core.records import ReceiptRow

__all__ = ["OutcomeContractEvaluator", "unobserved_receipt"]


def unobserved_receipt(contract: OutcomeContract, run_started_at: datetime, why: str) -> Receipt:
    """An ``unverified`` receipt for an outcome nobody could observe (``why`` says what stopped it).

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> r = unobserved_receipt(OutcomeContract(artifact_id="a"), datetime(2026, 7, 25, tzinfo=timezone.utc),
    ...                        "observe() raised OSError")
    >>> r.status, r.reason
    ('unverified', 'unverified: observe() raised OSError')
    """
    return Receipt(
        artifact_id=contract.artifact_id,
        run_started_at=run_started_at,
        expected_sha256=contract.expected_sha256,
        validator=contract.validator,
        status="unverified",
        reason=f"unverified: {why}",
    )


@register
class OutcomeContractEvaluator(Evaluator):
    """Passes when the case's outcome receipt is ``verified``.

    Applies to cases with an ``outcome``. Right after the case, while the system is live:

    1. a system with ``observe(artifact_id)`` is asked for evidence. It may return
       ``None`` (nothing there), an :class:`~oloproof_nb.Evidence` or a dict of its
       fields (``evidence_source`` defaults to ``system_observe``), or a :class:`os.PathLike`:
       the artifact is that local file, observed by the toolkit (stat, digest, the registered
       validator) with ``evidence_source`` ``system_observe``;
    2. otherwise a contract with a ``locator`` is observed with the local-file observer at
       ``locator`` relative to the suite folder (``evidence_source`` ``local_file_stat``);
    3. otherwise nothing can observe it: the receipt is ``unverified``.

    Verdicts: ``pass`` for ``verified``; ``fail`` (reason: the receipt's) for a failure status
    or ``unverified``; ``missing`` (reason: the failure) when the case raised or timed out,
    with an ``unverified`` receipt (the run was expected to deliver but was never observed).
    A trajectory with status ``waiting`` gets a ``waiting`` receipt and **no verdict row**:
    it is neither a pass nor a failure, so the gate and the summary leave it out.

    Parameters
    ----------
    validators : list of str
        Names of validators registered in oloproof.yaml that this evaluator may run. Empty
        (the default): every registered validator. A case contract naming a validator outside
        a non-empty list is an error when the suite loads.
    clock_slack_s : float
        Seconds subtracted from the case's start to give ``run_started_at`` (default 0.01).
        File systems stamp modification times from a coarse clock (one kernel tick, 1–10 ms,
        behind), so a file written right after the start could otherwise look older than the run.
    observe_timeout_s : float
        Seconds reading and digesting a local artifact may take (default 60); past it the receipt
        is ``unverified``. Only regular files are read: a directory, named pipe or device is
        ``unverified`` without being opened.
    max_artifact_bytes : int
        Largest local artifact read (default 1 GiB, ``1073741824``); a bigger one is ``unverified``.
    criterion : str, optional
        Default ``outcome_verified``.

    Notes
    -----
    ``run_started_at = case_started_at - clock_slack_s``, where ``case_started_at`` is taken
    before the sandbox is reset; a file at the contract's ``locator`` that is the very file the reset left
    (the same modification time, size and inode right after the reset and after the case) is ``stale`` too,
    however recent its time (a reset that writes its fixture files makes them newer than the case start).
    A system that places its artifacts itself (``observe``) is not asked before its run (that could block
    or leave traces in the state judged): its reset must leave earlier artifacts with their earlier times,
    as the false-success example's does. The version of an artifact (modification time and digest) an
    earlier case of the run was shown before this case started is ``stale`` too: ``clock_slack_s`` cannot
    tell it from a new file when the case before ended milliseconds earlier (epochs, metamorphic copies).
    An ``observe()`` that times out gives ``missing`` with an ``unverified`` receipt, and one that raises an
    ``Exception`` ``fail`` with one (``unverified: observe() raised OSError``; the type only; a ``SystemExit`` or
    ``KeyboardInterrupt`` it raises is ``missing``, as a timeout). Validators
    run with the case timeout (``case_timeout_s``) and the suite folder as working directory.
    """

    type: Literal["outcome_contract"]
    validators: list[str] = Field(default_factory=list)
    # strict: a number written as text ("5") or a boolean (true as 1 byte) is a mistake, not a setting
    clock_slack_s: float = Field(default=0.01, ge=0, le=60, strict=True)
    observe_timeout_s: float = Field(default=DEFAULT_OBSERVE_TIMEOUT_S, gt=0, allow_inf_nan=False, strict=True)
    max_artifact_bytes: int = Field(default=DEFAULT_MAX_ARTIFACT_BYTES, ge=1, strict=True)

    scope: ClassVar[Scope] = "system"
    observes_after_case: ClassVar[bool] = True

    def default_criterion(self) -> str:
        return "outcome_verified"

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if ctx.case.outcome is None:
            return Evaluation()
        if ctx.run is None:
            return self.missing("outcome_contract needs a live run (nothing to observe with)")
        contract = OutcomeContract.model_validate(ctx.case.outcome)
        started = ctx.run.case_started_at - timedelta(seconds=self.clock_slack_s)
        if ctx.failure is not None:
            receipt = unobserved_receipt(contract, started, f"not observed: the case ended with status {ctx.status}")
            return Evaluation(verdicts=[self.verdict("missing", ctx.failure)], receipts=[_row(ctx, receipt)])
        if ctx.status == "waiting":
            receipt = classify_outcome(contract, None, run_started_at=started, waiting=True)
            return Evaluation(receipts=[_row(ctx, receipt)])
        evidence, problem = ctx.run.collect_evidence(contract, ctx.system, self.validators,
                                                     observe_timeout_s=self.observe_timeout_s,
                                                     max_artifact_bytes=self.max_artifact_bytes)
        if problem is not None:
            receipt = unobserved_receipt(contract, started, problem)
        else:
            receipt = classify_outcome(contract, evidence, run_started_at=started,
                                       untouched=evidence is not None and ctx.run.untouched_since_reset(contract),
                                       earlier=evidence is not None and ctx.run.shown_to_an_earlier_case(evidence))
        ok = receipt.status == "verified"
        verdict = self.verdict("pass" if ok else "fail", "" if ok else receipt.reason)
        return Evaluation(verdicts=[verdict], receipts=[_row(ctx, receipt)])

    def interrupted(self, ctx: CaseContext, reason: str, *, timed_out: bool) -> Evaluation:
        """The system's ``observe()`` timed out or ended the call with what is no ``Exception`` (``SystemExit``,
        ``KeyboardInterrupt``): ``missing``, with an ``unverified`` receipt (the case
        was expected to deliver and was never observed; without it the summary left the case out)."""
        if ctx.case.outcome is None or ctx.run is None:
            return self.missing(reason)
        contract = OutcomeContract.model_validate(ctx.case.outcome)
        started = ctx.run.case_started_at - timedelta(seconds=self.clock_slack_s)
        why = "the system timed out while observing it" if timed_out else "the system raised while observing it"
        receipt = unobserved_receipt(contract, started, f"not observed: {why}")  # no message: it could quote a path
        return Evaluation(verdicts=[self.verdict("missing", reason)], receipts=[_row(ctx, receipt)])

    def validator_names(self) -> list[str]:
        return list(self.validators)

    def validators_run(self, registered: Sequence[str]) -> list[str]:
        return [name for name in registered if not self.validators or name in self.validators]


def _row(ctx: CaseContext, receipt: Receipt) -> ReceiptRow:
    return {"case_id": ctx.case.id, **receipt.to_json_dict()}  # type: ignore[typeddict-item]
