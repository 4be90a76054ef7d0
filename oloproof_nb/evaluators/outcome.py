"""``outcome_contract``: the promised artifact exists, is this run's, has the right bytes and passes its check.

For every case with an ``outcome`` (an :class:`~oloproof_nb.receipts.OutcomeContract`), the
evaluator observes the artifact right after the case, classifies the evidence into a receipt
(:func:`~oloproof_nb.receipts.classify_outcome`) and gives one verdict. Receipts go to
``run.receipts``; they never hold the contract's locator, the artifact's content or a key.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError

from ..observe import EVIDENCE_SOURCE, observe_file
from ..receipts import DigestKeyError, Evidence, OutcomeContract, Receipt, classify_outcome
from ..services import CaseTimeout, Services
from .base import CaseContext, Evaluation, Evaluator, register

__all__ = ["OutcomeContractEvaluator", "SYSTEM_OBSERVE", "unobserved_receipt"]

#: ``evidence_source`` of evidence that came from the system's ``observe(artifact_id)``.
SYSTEM_OBSERVE = "system_observe"
_DEFAULT_VALIDATOR_TIMEOUT_S = 60.0


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
       ``None`` (nothing there), an :class:`~oloproof_nb.receipts.Evidence` or a dict of its
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
    criterion : str, optional
        Default ``outcome_verified``.

    Notes
    -----
    ``run_started_at = case_started_at - clock_slack_s``, where ``case_started_at`` is taken
    before the sandbox is reset. Validators run with the case timeout (``case_timeout_s``) and
    the suite folder as working directory.
    """

    type: Literal["outcome_contract"]
    validators: list[str] = Field(default_factory=list)
    clock_slack_s: float = Field(default=0.01, ge=0, le=60)

    scope: ClassVar[Literal["case", "system", "run"]] = "system"
    #: Observe the sandbox before any evaluator that replays (and so resets) it; see ``execute_case``.
    observes_after_case: ClassVar[bool] = True

    def default_criterion(self) -> str:
        return "outcome_verified"

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if ctx.case.outcome is None:
            return Evaluation()
        services: Services | None = ctx.services
        if services is None:
            return self.missing("outcome_contract needs a live run (no services to observe with)")
        contract = OutcomeContract.model_validate(ctx.case.outcome)
        started = services.case_started_at - timedelta(seconds=self.clock_slack_s)
        if ctx.failure is not None:
            receipt = unobserved_receipt(contract, started, f"not observed: the case ended with status {ctx.status}")
            return Evaluation(verdicts=[self.verdict("missing", ctx.failure)], receipts=[_row(ctx, receipt)])
        if ctx.status == "waiting":
            receipt = classify_outcome(contract, None, run_started_at=started, waiting=True)
            return Evaluation(receipts=[_row(ctx, receipt)])
        evidence, problem = self.collect(contract, ctx.system, services)
        if problem is not None:
            receipt = unobserved_receipt(contract, started, problem)
        else:
            receipt = classify_outcome(contract, evidence, run_started_at=started)
        ok = receipt.status == "verified"
        verdict = self.verdict("pass" if ok else "fail", "" if ok else receipt.reason)
        return Evaluation(verdicts=[verdict], receipts=[_row(ctx, receipt)])

    # -- observing ------------------------------------------------------------------------
    def registry(self, services: Services) -> dict[str, Callable[[Path], Any]]:
        """The registered validators this evaluator may run."""
        allowed = set(self.validators)
        return {name: fn for name, fn in services.validators.items() if not allowed or name in allowed}

    def collect(self, contract: OutcomeContract, system: Any,
                services: Services) -> tuple[Evidence | None, str | None]:
        """``(evidence, None)``, or ``(None, why)`` when the evidence is unavailable.

        ``(None, None)`` means the observer looked and found no artifact.
        """
        observe = getattr(system, "observe", None)
        if callable(observe):
            try:
                result = services.call(lambda: observe(contract.artifact_id))
            except CaseTimeout:
                raise  # the system is stuck: execute_case records a missing verdict and replaces it
            except Exception as exc:  # noqa: BLE001 - a broken observer leaves the outcome unverified
                # the type only: a message could quote a path or the content
                return None, f"observe() raised {type(exc).__name__}"
            return self._from_system(contract, result, services)
        if contract.locator is not None:
            root = services.suite_root if services.suite_root is not None else Path.cwd()
            return self._observe_file(contract, root / contract.locator, services, EVIDENCE_SOURCE)
        return None, (f"nothing can observe artifact {contract.artifact_id!r}: the system has no "
                      "observe(artifact_id) and the contract no locator")

    def _from_system(self, contract: OutcomeContract, result: Any,
                     services: Services) -> tuple[Evidence | None, str | None]:
        if result is None or isinstance(result, Evidence):
            return result, None
        if isinstance(result, os.PathLike):
            return self._observe_file(contract, Path(os.fspath(result)), services, SYSTEM_OBSERVE)
        if isinstance(result, Mapping):
            try:
                return Evidence.model_validate({"evidence_source": SYSTEM_OBSERVE, **result}), None
            except ValidationError as exc:
                err = exc.errors(include_url=False)[0]
                where = ".".join(str(part) for part in err["loc"]) or "evidence"
                return None, f"observe() returned invalid evidence: {where}: {err['msg']}"
        return None, (f"observe() returned {type(result).__name__}; expected Evidence, a dict of its fields, "
                      "a path or None")

    def _observe_file(self, contract: OutcomeContract, path: Path, services: Services,
                      source: str) -> tuple[Evidence | None, str | None]:
        try:
            evidence = observe_file(
                contract,
                path,
                validators=self.registry(services),
                validator_timeout_s=services.timeout_s or _DEFAULT_VALIDATOR_TIMEOUT_S,
                validator_cwd=services.suite_root,
            )
        except DigestKeyError as exc:  # names the variable, never its value
            return None, str(exc)
        except ValueError:  # its message names the path: say what happened without it
            return None, f"artifact {contract.artifact_id!r} exists but could not be read as a regular file"
        if evidence is None or evidence.evidence_source == source:
            return evidence, None
        return evidence.model_copy(update={"evidence_source": source}), None


def _row(ctx: CaseContext, receipt: Receipt) -> dict[str, Any]:
    return {"case_id": ctx.case.id, **receipt.to_json_dict()}
