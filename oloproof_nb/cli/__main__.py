"""``python -m oloproof_nb.cli``: the ``oloproof`` command (:func:`~oloproof_nb.cli.dispatch.main`)."""

from __future__ import annotations

import sys

from .dispatch import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
