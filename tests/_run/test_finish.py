"""What a stopped run's messages say about finishing it (oloproof_nb._run.finish)."""

from __future__ import annotations

import ast
from pathlib import Path

from oloproof_nb._run.finish import how_to_finish
from oloproof_nb._run.systems import GIVE_FINGERPRINT, NO_FINGERPRINT


def test_the_resume_it_names_is_python_that_gives_the_run_s_own_folder() -> None:
    """The call is parsed by Python's own parser (the outside reference): a folder holding a quote, a backslash and
    a space is the ``out=`` string literal exactly. Mutant caught: ``out='{directory}'`` (no repr), which is no
    Python for this folder, and ``resume=True`` left out."""
    directory = Path("/tmp/it's a \\ run")
    text = how_to_finish(directory, "f" * 64)
    prefix = "finish it with "
    assert text.startswith(prefix)
    call = ast.parse(text[len(prefix):], mode="eval").body
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "op.run"
    assert [ast.unparse(a) for a in call.args] == ["suite"]
    keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    assert keywords == {"out": "/tmp/it's a \\ run", "resume": True}


def test_a_run_of_a_system_without_a_fingerprint_is_never_sent_to_a_resume() -> None:
    """A system typed into a notebook cell records no fingerprint, and the runner refuses its resume. Mutant caught:
    the resume advice given whatever the fingerprint."""
    text = how_to_finish(Path("/tmp/run"), None)
    assert "resume=True" not in text and "op.run" not in text
    assert text == (f"it cannot be resumed: {NO_FINGERPRINT}, so a resume could not tell an edited cell; "
                    f"start a new run, or {GIVE_FINGERPRINT}")
