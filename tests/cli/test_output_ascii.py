"""The ASCII stand-ins of a standard output that is not UTF-8 (``LANG=C`` in a CI job with
``PYTHONIOENCODING=ascii``): ``oloproof compare`` wrote ``d\\u0302 +/- the Clopper-Pearson bound`` and
``below \\u2212margin``, backslash escapes of the estimate's hat and the minus sign its reasons use."""

from __future__ import annotations

from oloproof_nb.cli.output import _encodable


def test_a_comparisons_reasons_are_written_in_ascii_without_escapes() -> None:
    reason = "the paired differences do not vary: d̂ ± the Clopper–Pearson bound; its interval lies below −margin"
    for encoding in ("ascii", "latin-1"):
        assert _encodable(reason, encoding) == ("the paired differences do not vary: d +/- the Clopper-Pearson "
                                                "bound; its interval lies below -margin")
