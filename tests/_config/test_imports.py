"""Importing the user's code from a suite folder leaves the process as it found it (apart from what is documented)."""

from __future__ import annotations

import gc
import hashlib
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
    own = hashlib.sha256((tmp_path / "sysmod.py").read_bytes()).hexdigest()
    assert code_digests(tmp_path, "sysmod:Sub", sub) == [own]  # without the classes: the module's file alone


@pytest.mark.parametrize("kind", ["fifo", "device"])  # a folder was refused before too
def test_file_digest_refuses_what_is_no_regular_file_without_waiting(tmp_path: Path, kind: str) -> None:
    """Review G21: the gate digests the suite's case file to see whether it changed since a run; a named pipe put
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
