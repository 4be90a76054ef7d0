"""The Recorder's raising tools: what a replayed raise is matched against."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb._core.recorder import Recorder, ReplayDiverged


class Refused(Exception):
    pass


def _refuse() -> None:
    raise Refused("x")


@pytest.mark.parametrize("returned", [
    "done",                                             # not a dict: there is no "raised" to read
    ["Refused"],
    None,
    {"ok": False, "error": "timeout"},                  # a failure the tool returned, with no class named
    {"ok": True, "raised": "Refused"},                  # names the class, but it is not a failure
    {"ok": "false", "error": "Refused: x", "raised": "Refused"},  # "false" the text is not the JSON false
])
def test_a_raise_where_the_recording_returned_anything_diverges(returned: Any) -> None:
    """A recorded return of any shape that is not :func:`raised_result`'s (``ok`` false and a ``raised`` class)
    is not a raise: the replay's raise diverges, with ReplayDiverged (not a KeyError or AttributeError)."""
    rec = Recorder()
    assert rec.tool("t", lambda: returned) == returned
    again = Recorder.replaying(rec.trajectory(None), checkpoint=0, change=None)
    with pytest.raises(ReplayDiverged, match=r"^step 0: t raised 'Refused: x', recorded ") as caught:
        again.tool("t", _refuse)
    assert isinstance(caught.value.__cause__, Refused)  # the tool's own exception, for the traceback
