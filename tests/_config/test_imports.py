"""Importing the user's code from a suite folder leaves the process as it found it (apart from what is documented)."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from _hostile_files import bounded, make_special

from oloproof_nb._config.imports import file_digest, import_system, load_validators
from oloproof_nb.errors import ConfigError


def _write(folder: Path, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sysmod.py").write_text(text, encoding="utf-8")


def test_sys_path_and_bytecode_flag_are_restored(tmp_path: Path) -> None:
    _write(tmp_path / "s", "import sys\nSEEN = list(sys.path)\nclass S:\n    pass\n")
    path_before, flag_before = list(sys.path), sys.dont_write_bytecode
    cls = import_system(tmp_path / "s", "sysmod:S")
    assert sys.path == path_before and sys.dont_write_bytecode is flag_before
    seen = sys.modules[cls.__module__].SEEN
    assert str((tmp_path / "s").resolve()) == seen[0]  # on sys.path while the module ran, not after
    assert not (tmp_path / "s" / "__pycache__").exists()


def test_a_failed_import_restores_sys_path_too(tmp_path: Path) -> None:
    _write(tmp_path / "s", "raise RuntimeError('boom')\n")
    before = list(sys.path)
    with pytest.raises(ConfigError, match="raised RuntimeError: boom"):
        import_system(tmp_path / "s", "sysmod:S")
    assert sys.path == before
    assert not [name for name in sys.modules if name.endswith("_sysmod") and "_oloproof_suite_" in name
                and getattr(sys.modules[name], "__file__", "").startswith(str(tmp_path))]


def test_an_edited_module_replaces_the_old_copy_which_is_freed(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    _write(folder, "class S:\n    v = 1\n")
    old = import_system(folder, "sysmod:S")
    name = old.__module__
    old_module = weakref.ref(sys.modules[name])
    _write(folder, "class S:\n    v = 2  # edited\n")
    new = import_system(folder, "sysmod:S")
    assert new.v == 2 and new.__module__ == name and sys.modules[name].S is new
    assert import_system(folder, "sysmod:S") is new  # unchanged content: the same module, not imported again
    del old
    gc.collect()
    assert old_module() is None  # oloproof keeps no reference to the edited-away copy
    entries = [n for n in sys.modules if n == name]
    assert entries == [name]  # one entry per folder and module


def test_two_suites_with_a_module_of_the_same_name_do_not_collide(tmp_path: Path) -> None:
    _write(tmp_path / "a", "class S:\n    who = 'a'\n")
    _write(tmp_path / "b", "class S:\n    who = 'b'\n")
    assert import_system(tmp_path / "a", "sysmod:S").who == "a"
    assert import_system(tmp_path / "b", "sysmod:S").who == "b"


def test_validators_are_imported_the_same_way(tmp_path: Path) -> None:
    _write(tmp_path / "s", "def ok(path):\n    return True\nNOT_CALLABLE = 3\n")
    before = list(sys.path)
    found = load_validators(tmp_path / "s", {"v": "sysmod:ok"}, "oloproof.yaml")
    assert found["v"](Path("x")) is True and sys.path == before
    with pytest.raises(ConfigError, match=r"validators\.w: 'sysmod:NOT_CALLABLE' is a int, not a function"):
        load_validators(tmp_path / "s", {"w": "sysmod:NOT_CALLABLE"}, "oloproof.yaml")


def test_a_dotted_module_name_is_never_a_file_of_the_suite_folder(tmp_path: Path) -> None:
    """``pkg.mod`` names a module of a package: a file called ``pkg.mod.py`` in the folder is not it."""
    from oloproof_nb._config.imports import module_file

    (tmp_path / "pkg.mod.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "mod.py").write_text("X = 1\n", encoding="utf-8")
    assert module_file(tmp_path, "pkg.mod") is None
    assert module_file(tmp_path, "mod") == tmp_path / "mod.py"


def test_the_files_of_the_classes_given_are_digested_too(tmp_path: Path) -> None:
    """``code_digests``' ``classes``: a base class defined in another file than the system's module counts (its
    edit changes what the system runs). The reference: sha256 of each file's bytes."""
    import hashlib

    from oloproof_nb._config.imports import code_digests

    (tmp_path / "basemod_m10.py").write_text("class Base:\n    def run(self, x):\n        return x\n", encoding="utf-8")
    _write(tmp_path, "from basemod_m10 import Base\n\nclass Sub(Base):\n    pass\n")
    sub = import_system(tmp_path, "sysmod:Sub")
    base = sub.__mro__[1]
    digests = code_digests(tmp_path, "sysmod:Sub", sub, [sub, base])
    expected = sorted(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
                      for name in ("sysmod.py", "basemod_m10.py"))
    assert digests == expected
    # without the classes too: sysmod.py imports Base from a module of the suite folder
    assert code_digests(tmp_path, "sysmod:Sub", sub) == expected
    assert code_digests(None, "sysmod:Sub", sub) == [hashlib.sha256((tmp_path / "sysmod.py").read_bytes()).hexdigest()]


def test_suite_imports_follows_the_suite_folders_own_modules_only(tmp_path: Path) -> None:
    """``suite_imports``: the modules of the suite folder the system's code imports, through what they import in
    turn (a function, a class or the module itself), and nothing from outside the folder. The reference: the
    files written, listed by hand."""
    from oloproof_nb._config.imports import code_digests, suite_imports

    suite, outside = tmp_path / "suite_r35", tmp_path / "elsewhere_r35"
    outside.mkdir()
    (outside / "outer_r35.py").write_text("FACTOR = 2\n", encoding="utf-8")
    suite.mkdir()
    (suite / "leaf_r35.py").write_text("LIMIT = 500\n", encoding="utf-8")
    (suite / "mid_r35.py").write_text("import leaf_r35\n\n\ndef allowed(x):\n    return x <= leaf_r35.LIMIT\n",
                                      encoding="utf-8")
    (suite / "unused_r35.py").write_text("X = 1\n", encoding="utf-8")
    _write(suite, "import json\nimport outer_r35\nfrom mid_r35 import allowed\n\nclass S:\n"
                  "    def run(self, x):\n        return allowed(x * outer_r35.FACTOR)\n")
    sys.path.insert(0, str(outside))
    try:
        cls = import_system(suite, "sysmod:S")
    finally:
        sys.path.remove(str(outside))
    found = suite_imports(suite, [cls])
    assert sorted(p.name for p in found) == ["leaf_r35.py", "mid_r35.py", "sysmod.py"]
    before = code_digests(suite, "sysmod:S", cls)
    assert len(before) == 3
    by_hand = sorted(hashlib.sha256((suite / n).read_bytes()).hexdigest()
                     for n in ("leaf_r35.py", "mid_r35.py", "sysmod.py"))
    assert before == by_hand
    (suite / "leaf_r35.py").write_text("LIMIT = 5000\n", encoding="utf-8")  # an edit two imports away
    # this process keeps the leaf it imported (LIMIT 500): the digest is of the code that runs, not of the file
    assert sys.modules["leaf_r35"].LIMIT == 500 and code_digests(suite, "sysmod:S", cls) == before
    fresh = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                            "from oloproof_nb._config.imports import code_digests, import_system; "
                            "cls = import_system(Path(sys.argv[1]), 'sysmod:S'); "
                            "print(' '.join(code_digests(Path(sys.argv[1]), 'sysmod:S', cls)))", str(suite)],
                           capture_output=True, text=True, timeout=60, check=False,
                           env={**os.environ, "PYTHONPATH": str(outside)})
    now = sorted(hashlib.sha256((suite / n).read_bytes()).hexdigest()
                 for n in ("leaf_r35.py", "mid_r35.py", "sysmod.py"))
    assert fresh.stdout.split() == now != before, fresh.stderr  # a new process runs, and names, the edited leaf
    assert suite_imports(suite, [json.dumps]) == {}  # the standard library is no helper of the suite


@pytest.mark.parametrize("kind", ["fifo", "device"])  # a folder was refused before too
def test_file_digest_refuses_what_is_no_regular_file_without_waiting(tmp_path: Path, kind: str) -> None:
    """The gate digests the suite's case file to see whether it changed since a run; a named pipe put
    there blocked ``file_digest`` (opened for reading, waiting for a writer) and ``/dev/zero`` never ended. Now
    both are an OSError at once, as a folder was (an IsADirectoryError); a regular file digests as hashlib says."""
    (tmp_path / "plain").write_bytes(b"x" * 3_000_000)
    assert file_digest(tmp_path / "plain") == hashlib.sha256(b"x" * 3_000_000).hexdigest()
    special = make_special(tmp_path / "cases.jsonl", kind)

    def digest() -> str:
        try:
            return file_digest(special)
        except OSError:
            return "refused"
    assert bounded(digest, 30, unblock=[special]) == "refused"
    with pytest.raises(FileNotFoundError):
        file_digest(tmp_path / "nothing")


def test_a_module_named_py_in_a_package_is_imported_as_named(tmp_path: Path) -> None:
    """``desk.py:Desk`` where the folder holds a package ``desk`` with a module ``py.py`` (and no ``desk.py``) names
    that module: only a spec whose stem is a file of the folder is the module written by its file's name."""
    (tmp_path / "desk").mkdir()
    (tmp_path / "desk" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "desk" / "py.py").write_text("class Desk:\n    pass\n", encoding="utf-8")
    cls = import_system(tmp_path, "desk.py:Desk")
    assert (cls.__name__, cls.__module__.rsplit(".", 1)[-1]) == ("Desk", "py")
