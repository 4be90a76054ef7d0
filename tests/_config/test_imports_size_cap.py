"""The import statements of a module file over 1 MiB are not parsed (a generated 4.9 MB module took
8.7 s to follow); the file is still fingerprinted by its bytes, and a warning names it and the cap."""

from __future__ import annotations

import hashlib
import sys
import warnings
from pathlib import Path

import pytest

from oloproof_nb._config.imports import MAX_IMPORT_SCAN_BYTES, _top_imports, import_system, suite_imports

HEAD = "from {helper} import LIMIT\n\n\nclass S:\n    def run(self, x):\n        return x <= LIMIT\n"


def _module_of_size(path: Path, head: str, size: int) -> None:
    """``head`` then one comment line padding the file to exactly ``size`` bytes."""
    pad = size - len(head.encode("utf-8")) - 2  # "#" and "\n"
    assert pad >= 0
    path.write_bytes((head + "#" + "x" * pad + "\n").encode("utf-8"))
    assert path.stat().st_size == size


def test_the_cap_is_1_mib() -> None:
    assert MAX_IMPORT_SCAN_BYTES == 1_048_576


def test_a_module_of_exactly_the_cap_is_read_one_byte_more_is_not(tmp_path: Path) -> None:
    at, over = tmp_path / "at.py", tmp_path / "over.py"
    _module_of_size(at, "from rules import LIMIT\n", MAX_IMPORT_SCAN_BYTES)
    _module_of_size(over, "from rules import LIMIT\n", MAX_IMPORT_SCAN_BYTES + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at the cap
        assert _top_imports(at, "f33-at", "") == ("rules", "rules.LIMIT")
    with pytest.warns(UserWarning) as caught:
        assert _top_imports(over, "f33-over", "") == ()
    [warning] = caught
    text = str(warning.message)
    assert text.startswith(f"{over}: 1,048,577 bytes, over the 1,048,576 (1 MiB)") and "fingerprint()" in text


def test_a_module_over_the_cap_still_counts_but_its_helper_taken_by_value_does_not(tmp_path: Path) -> None:
    """Through ``suite_imports``, as the code fingerprint takes it: at the cap the helper the module takes a
    constant from is followed; one byte over, the module's own file is there (its digest, checked with hashlib)
    but the helper is not, and the warning names the module's file."""
    results = {}
    for name, size in (("at", MAX_IMPORT_SCAN_BYTES), ("over", MAX_IMPORT_SCAN_BYTES + 1)):
        suite = tmp_path / f"suite_{name}"
        suite.mkdir()
        helper = f"rules_f33_{name}"
        (suite / f"{helper}.py").write_text("LIMIT = 3\n", encoding="utf-8")
        _module_of_size(suite / "desk_f33.py", HEAD.format(helper=helper), size)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cls = import_system(suite, "desk_f33:S")
                assert cls().run(3) is True
                found = suite_imports(suite, [cls])
        finally:
            sys.modules.pop(helper, None)
        results[name] = (sorted(p.name for p in found), [str(w.message) for w in caught],
                         found.get(suite / "desk_f33.py"),
                         hashlib.sha256((suite / "desk_f33.py").read_bytes()).hexdigest())
    names, said, digest, reference = results["at"]
    assert names == ["desk_f33.py", "rules_f33_at.py"] and said == [] and digest == reference
    names, said, digest, reference = results["over"]
    assert names == ["desk_f33.py"] and digest == reference
    assert len(said) == 1 and said[0].startswith(f"{tmp_path / 'suite_over' / 'desk_f33.py'}: 1,048,577 bytes")
