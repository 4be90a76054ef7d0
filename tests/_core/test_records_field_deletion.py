"""A field of ``manifest.json`` cannot be deleted from the model.

``del run.manifest.finished_at`` on a run whose value was None changed no value (no edit, so no
``edited_frames``), and a later read of the field (``run.finished``, its repr, the gate) raised AttributeError far
from the cause. Now the ``del`` itself is refused, naming the field, and the model is left as it was.
"""

from __future__ import annotations

import pytest

from oloproof_nb._core.records import Manifest, StoredSuite


def _manifest() -> Manifest:
    return Manifest(suite="s", run_id="r", started_at="2026-01-01T00:00:00Z", oloproof_nb="0", n_cases=1)


@pytest.mark.parametrize("name", ["finished_at", "n_cases", "suite_config"])
def test_a_manifest_field_cannot_be_deleted_and_stays_readable(name: str) -> None:
    manifest = _manifest()
    before = getattr(manifest, name)
    with pytest.raises(AttributeError, match=rf"^{name}: a field of manifest.json cannot be deleted"):
        delattr(manifest, name)
    assert getattr(manifest, name) == before  # read as before: no AttributeError later


def test_a_stored_suite_field_cannot_be_deleted() -> None:
    stored = _manifest().suite_config
    assert isinstance(stored, StoredSuite)
    with pytest.raises(AttributeError, match=r"^release: a field of manifest.json cannot be deleted"):
        del stored.release
    assert stored.release is None


def test_deleting_a_name_that_is_no_field_is_refused_as_pydantic_refuses_it() -> None:
    """Only fields are kept by the override; any other name goes to pydantic, which says it has
    no such attribute (a ``del`` that did nothing would hide a typo)."""
    manifest = _manifest()
    with pytest.raises(AttributeError, match="finshed_at"):
        del manifest.finshed_at
    assert manifest.model_dump() == _manifest().model_dump()
