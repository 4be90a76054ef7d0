"""The set-up runs in the repository's folder, and the tour's ``oloproof init --example NAME DEST`` commands make
their suites there: each of those folders is one git leaves alone, so ``git status`` after the first hour shows none
of them (``/wb/``, section 1a's wrapped benchmark, was missing beside ``/demo/`` and ``/fs/``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_suite_folder_the_readme_makes_in_the_checkout_is_ignored() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    made = set(re.findall(r"oloproof init --example [\w-]+ ([\w-]+)(?=[\s`])", text))
    assert {"demo", "fs", "wb"} <= made
    ignored = {line.strip() for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()}
    assert sorted(folder for folder in made if f"/{folder}/" not in ignored) == []
