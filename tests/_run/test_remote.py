"""A run on an executor the user gives: what its workers check (``_run/remote.py``; the batches, the pooled
systems and lost batches are tested beside the runs that use them: ``test_parallel.py``,
``test_runner_executor_batches.py``, ``test_runner_worker_build.py``, ``test_runner_worker_reload.py``)."""

from __future__ import annotations

from oloproof_nb._run.remote import _worker_digests


def test_a_worker_checks_every_digest_of_the_suite_but_release_yaml() -> None:
    # release.yaml matters to the gate only: editing it while workers run must not stop them
    digests = {"cases.jsonl": "a", "oloproof.yaml": "b", "release.yaml": "c", "code:checks:done": "d"}
    assert _worker_digests(digests) == (("cases.jsonl", "a"), ("code:checks:done", "d"), ("oloproof.yaml", "b"))
