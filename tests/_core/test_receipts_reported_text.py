"""What a system reports in its evidence as text, a validator's error and who observed, may quote a file name
that is not UTF-8 (a lone surrogate): it is kept as its escape. Kept as it was, the receipt's reason could not
be built (``ValidationError`` for ``Receipt``) and a receipt holding it could not be written: either stopped the
run as an internal error."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import oloproof_nb as op

NOW = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)


def test_a_validator_error_quoting_a_name_that_is_not_utf8_is_kept_as_its_escape() -> None:
    ev = op.Evidence(artifact_id="a", observed_at=NOW, modified_at=NOW, validator="v",
                     validator_error="cannot open report-\udce9.csv", evidence_source="db-\udcff")
    assert ev.validator_error == "cannot open report-\\udce9.csv"
    assert ev.evidence_source == "db-\\udcff"
    receipt = op.classify_outcome(op.OutcomeContract(artifact_id="a", validator="v"), ev, run_started_at=NOW)
    assert (receipt.status, receipt.reason) == ("unverified", "unverified: cannot open report-\\udce9.csv")
    assert receipt.evidence_source == "db-\\udcff"
    json.dumps(receipt.to_json_dict(), ensure_ascii=False).encode("utf-8")  # storable as UTF-8


def test_text_utf8_holds_is_kept_as_it_is() -> None:
    ev = op.Evidence(artifact_id="a", observed_at=NOW, validator="v", validator_error="échec: rapport-é.csv",
                     evidence_source="base de données")
    assert (ev.validator_error, ev.evidence_source) == ("échec: rapport-é.csv", "base de données")
