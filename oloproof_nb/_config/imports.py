"""Importing the user's code from a suite folder: the system and the registered validators.

A top-level module file of the suite folder (``refund_desk.py``) is loaded
under a name unique to its folder, ``_oloproof_suite_<hash>_<module>``, so two
suites with a module of the same name never collide. What the process keeps
afterwards, exactly:

- ``sys.path`` and ``sys.dont_write_bytecode`` are restored (the folder is on
  ``sys.path`` only while the module executes, and no ``__pycache__`` is written
  into the suite);
- ``sys.modules`` keeps one entry per suite folder and module under that
  unique name (classes defined there stay picklable); an edited file replaces
  it, so the previous copy is not kept alive by oloproof. Modules the user's
  code imports itself stay in ``sys.modules`` as Python keeps them;
- a dotted ``module:attr`` (a package installed or on the folder) is imported
  with :func:`importlib.import_module` under its own name.

Whatever the module raises while it is imported — an exception, or
``SystemExit`` / ``KeyboardInterrupt`` / another ``BaseException`` from its own
code — is a :class:`~oloproof_nb.errors.ConfigError` naming ``system``.

:func:`code_digests` gives the content digests of the files that define a
system (the module ``system:`` names, the file defining the class or
factory, and the suite folder's own modules they import, :func:`suite_imports`):
the run's code fingerprint is built on them.
"""

from __future__ import annotations

import ast
import collections
import difflib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
import threading
import types
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, describe_exception, quote, warn_at_caller
from .files import UnreadableFile, open_regular

__all__ = ["CODE_KEY", "import_system", "load_validators", "load_check", "file_digest", "module_file",
           "code_digests", "code_layers", "suite_imports", "function_digest", "stale_function", "stale_import",
           "changed_file", "defined_elsewhere",
           "foreign_copy", "class_source", "user_classes", "portable_name", "methods_elsewhere"]

#: Prefix of a ``Suite.digests`` (and ``Manifest.digests``) key that holds the digest of the code of a suite's
#: python check or registered validator: ``"code:checks:task_done"``.
CODE_KEY = "code:"

_IMPORT_LOCK = threading.Lock()
#: (suite folder, module) -> (file digest, module): the latest import of each, and nothing older.
_MODULES: dict[tuple[str, str], tuple[str | None, Any]] = {}


def module_file(root: Path, module_name: str) -> Path | None:
    """The file a top-level ``module_name`` is loaded from in the suite folder, or None (a dotted or installed one)."""
    candidate = root / f"{module_name}.py"
    return candidate if "." not in module_name and candidate.is_file() else None


def _lies_in(path: Path, folders: Iterable[Path]) -> bool:
    """Whether the absolute ``path`` lies in one of ``folders``, as reached or as resolved (a symlinked package, a
    symlinked suite folder)."""
    places = (path, path.resolve())
    return any(folder in p.parents for p in places for folder in folders)


def foreign_copy(root: Path, module_name: str, found: str | Path | None) -> str | None:
    """Why ``module_name``, imported from the file ``found``, is another folder's copy of a module the suite folder
    ``root`` holds itself (a module name is imported once per process, so this suite would run that copy's code),
    or None. The folder holds a module when it has ``name.py`` or ``name/__init__.py`` (a data folder named like a
    library does not); a module of the standard library or an installed package is nobody's copy.

    Examples
    --------
    >>> foreign_copy(Path("/nowhere"), "json", "/usr/lib/python3/json/__init__.py") is None
    True
    """
    top = module_name.split(".", 1)[0]
    if found is None or not ((root / f"{top}.py").is_file() or (root / top / "__init__.py").is_file()):
        return None
    path = Path(os.path.abspath(found))
    if _lies_in(path, (root.absolute(), root.resolve())):
        return None  # in the folder, as reached or as resolved (a symlinked package, a symlinked suite folder)
    if _lies_in(path, _library_dirs()):
        return None  # a module of the suite named like a library the process imported: not a copy of the suite
    own = root.joinpath(*module_name.split("."))
    for mine in (own.with_suffix(".py"), own / "__init__.py"):
        try:
            if mine.is_file() and file_digest(mine) == file_digest(path):
                return None  # a byte-identical copy runs the same code
        except OSError:
            pass
    return (f"module {quote(module_name)} is already imported from {found}, not from this suite folder ({root}), and "
            "Python keeps one module per name: this suite would run that copy's code; restart the process (in a "
            "notebook: the kernel) to load this one")


def _check_not_another_copy(root: Path, module_name: str, module: Any, file: str | Path) -> None:
    found = getattr(module, "__file__", None)
    why = foreign_copy(root, module_name, found if isinstance(found, str) else None)
    if why is not None:
        raise ConfigError(file, "system", why)


def import_system(root: Path, spec: str, file: str | Path = "oloproof.yaml") -> Any:
    """Import ``module:attr`` from the suite folder ``root`` and return the attribute.

    A top-level module file is imported again when its content changed since
    the last import (a notebook that re-loads the suite gets the new code).

    Raises
    ------
    ConfigError
        Naming ``file`` and ``system``: the module cannot be imported, raised
        while importing, or has no such attribute.
    """
    module_name, attr = spec.split(":", 1)
    stem = module_name.removesuffix(".py")
    if stem != module_name and module_file(root, stem) is not None:  # the file's name: no module 'library_desk.py'
        raise ConfigError(file, "system", f"{quote(spec)} names the module by its file; write it without .py: "
                                          f"{quote(f'{stem}:{attr}')}")
    source = module_file(root, module_name)
    content = file_digest(source) if source is not None else None
    key = (str(root.resolve()), module_name)
    with _IMPORT_LOCK:
        cached = _MODULES.get(key)
        if cached is not None and cached[0] == content:
            module = cached[1]
        else:
            module = _load_module(root, module_name, file)
            _MODULES[key] = (content, module)
    if not hasattr(module, attr):
        # only what could be named here: a system, check or validator is callable (never `np`, `annotations`)
        names = [n for n, v in vars(module).items() if not n.startswith("_") and callable(v)]
        near = difflib.get_close_matches(attr, names, n=1, cutoff=0.6)  # LoanDsk for LoanDesk
        raise ConfigError(file, "system", f"module {quote(module_name)} has no attribute {quote(attr)}"
                          + (f"; did you mean {quote(near[0])}?" if near else ""))
    return getattr(module, attr)


#: How the name a suite folder's module is imported under begins (``_oloproof_suite_<hash>_``, :func:`_load_module`).
_SUITE_MODULE = re.compile(r"_oloproof_suite_[0-9a-f]{12}_")


def portable_name(obj: Any) -> str:
    """``module.qualname`` of a class or function, a suite folder's module named by its file (``refund_desk``)
    rather than by the name unique to the folder it was imported from: the same in a moved or copied suite.

    Examples
    --------
    >>> portable_name(functools.partial)
    'functools.partial'
    """
    module = _SUITE_MODULE.sub("", str(getattr(obj, "__module__", None) or "?"), count=1)
    return f"{module}.{getattr(obj, '__qualname__', '?')}"


def _suite_package_lacking(root: Path, missing: str | None) -> tuple[str, str] | None:
    """``(package, file)`` when the module ``missing`` (a ``ModuleNotFoundError``'s name) belongs to a package
    imported from the suite folder ``root`` (``tools.fmt`` with the folder's ``tools/`` imported): the file it would
    be, relative to ``root`` (``tools/fmt.py``); else None (an installed package's module, a top-level name).

    Examples
    --------
    >>> _suite_package_lacking(Path("/nowhere"), "json.nothing") is None
    True
    """
    if not missing or "." not in missing:
        return None
    package, _, last = missing.rpartition(".")
    places = getattr(sys.modules.get(package), "__path__", None) or []
    folder = root.resolve()
    for place in places:
        path = Path(place)
        if path == folder or _lies_in(path, [folder]):
            try:
                where = path.resolve().relative_to(folder)
            except ValueError:  # reached through a link into the folder from outside it
                where = Path(package.replace(".", "/"))
            return package, (where / f"{last}.py").as_posix()
    return None


def _load_module(root: Path, module_name: str, file: str | Path) -> Any:
    candidate = module_file(root, module_name)
    added = str(root.resolve())
    sys.path.insert(0, added)
    # the suite folder is the user's: importing from it must not write __pycache__ there
    dont_write_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        if candidate is not None:
            unique = f"_oloproof_suite_{hashlib.sha256(os.fsencode(added)).hexdigest()[:12]}_{module_name}"
            spec = importlib.util.spec_from_file_location(unique, candidate)
            if spec is None or spec.loader is None:
                raise ConfigError(file, "system", f"cannot import {quote(module_name)} from {root}")
            module = importlib.util.module_from_spec(spec)
            previous = sys.modules.get(unique)
            sys.modules[unique] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                if previous is None:
                    sys.modules.pop(unique, None)
                else:
                    sys.modules[unique] = previous
                raise
            return module
        module = importlib.import_module(module_name)
        _check_not_another_copy(root, module_name, module, file)
        return module
    except ConfigError:
        raise
    except ModuleNotFoundError as exc:
        missing = exc.name
        local = _suite_package_lacking(root, missing)
        if local is not None and missing != module_name:  # tools/ of the suite folder has no fmt.py: nothing to install
            raise ConfigError(file, "system", f"importing {quote(module_name)} raised {describe_exception(exc)}: "
                              f"the suite folder's package {quote(local[0])} has no {local[1]} (a module of its "
                              "own, not a package to install); add the file, or fix the import") from None
        if missing and missing != module_name and not module_name.startswith(f"{missing}."):
            # the module was found; a module it imports was not (a dependency left out of this environment)
            raise ConfigError(file, "system", f"importing {quote(module_name)} raised {describe_exception(exc)}: "
                              f"install the package that provides {quote(missing)} in the Python that "
                              f"runs oloproof ({sys.executable}), or fix the import") from None
        raise ConfigError(file, "system", f"cannot import {quote(module_name)} from {root}: {exc}") from None
    except BaseException as exc:  # noqa: BLE001 - SystemExit or KeyboardInterrupt from the module's own code too
        raise ConfigError(file, "system", f"importing {quote(module_name)} raised {describe_exception(exc)}") from None
    finally:
        sys.dont_write_bytecode = dont_write_bytecode
        try:
            sys.path.remove(added)
        except ValueError:
            pass


#: ``type.__flags__`` bit of a class made at run time (every ``class`` statement); a type written in C is static.
_HEAP_TYPE = 1 << 9


def class_source(cls: type) -> Path | None:
    """The file that defines ``cls`` (its source, else the compiled module), or None when no file on disk does:
    a class typed into a notebook cell or an interactive prompt, where ``inspect`` names a pseudo-file such as
    ``<ipython-input-1-…>``, or nothing."""
    for find in (inspect.getsourcefile, inspect.getfile):
        try:
            found = find(cls)
        except (TypeError, OSError):  # defined nowhere a file says
            continue
        if found is not None and Path(found).is_file():
            return Path(found)
    return None


def _library_dirs() -> tuple[Path, ...]:
    """Where the standard library and installed packages live: ``sysconfig``'s stdlib, purelib and platlib, and
    ``site``'s folders (a distribution's ``dist-packages``, the user site, a venv's base interpreter)."""
    import site
    import sysconfig

    found = [sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")]
    found += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    found.append(site.getusersitepackages())
    return tuple(sorted({Path(d).resolve() for d in found if d}))


def user_classes(instance: Any) -> list[type]:
    """The classes of ``instance``'s MRO whose code is the user's: made at run time (not a static C type such as
    ``object``), outside oloproof_nb, the interpreter's built-in modules (``_thread._local``), the standard
    library and installed packages among its bases (``typing.Protocol``, pydantic's ``BaseModel``: their code
    changes with a version, and counting them would refuse a resume, or a remote worker, after an upgrade that
    changed no code of the user's). The system's own class counts wherever it is installed (an agent
    installed with ``pip install .``). A class defined in no file (a notebook cell) is kept: it cannot be
    fingerprinted."""
    libraries = _library_dirs()
    own = type(instance)
    out = []
    for c in own.__mro__:
        if not c.__flags__ & _HEAP_TYPE or c.__module__.split(".")[0] == "oloproof_nb":
            continue
        if c.__module__ in sys.builtin_module_names:
            continue
        source = class_source(c)
        if c is not own and source is not None and any(source.resolve().is_relative_to(d) for d in libraries):
            continue  # a base of a library's; the system's own class counts wherever it is installed
        out.append(c)
    return out


def _function_source(fn: Any) -> Path | None:
    """The file that defines the function ``fn``, or None when no file on disk does (typed into a notebook cell,
    where ``inspect`` names a pseudo-file such as ``/tmp/ipykernel_…/….py``, or made by ``exec``)."""
    found = _source_of(fn)
    return found if found is not None and found.is_file() else None


def _functions_in(value: Any) -> list[Any]:
    """The functions an attribute of a class holds: itself, a static or class method's, a property's accessors, a
    cached property's, each with what it wraps (:func:`code_layers`)."""
    if isinstance(value, (staticmethod, classmethod)):
        held: list[Any] = [value.__func__]
    elif isinstance(value, property):
        held = [value.fget, value.fset, value.fdel]
    elif isinstance(value, functools.cached_property):
        held = [value.func]
    else:
        held = [value]
    return [layer for fn in held if inspect.isfunction(fn) for layer in code_layers(fn) if inspect.isfunction(layer)]


def _in_no_file(fn: Any) -> bool:
    """Whether no file holds the function ``fn``: typed into a notebook cell or an interactive prompt (its module,
    ``__main__`` there, has no file), or run by ``exec`` in a namespace of its own. A function of a module that has
    a file holds one, even where ``inspect`` finds no source (a zip archive, a module shipped compiled)."""
    module = sys.modules.get(str(fn.__globals__.get("__name__")))
    if module is None:
        return _function_source(fn) is None
    return not isinstance(getattr(module, "__file__", None), str)


def _tuple_new(fn: Any) -> bool:
    """Whether ``fn`` is the ``__new__`` ``collections.namedtuple`` made for a named tuple: evaluated in a namespace
    of its own (``namedtuple_<name>``, no module, no file), it holds no code but the class's field names."""
    names = fn.__globals__
    return str(names.get("__name__")).startswith("namedtuple_") and names.get("_tuple_new") is tuple.__new__


def methods_elsewhere(classes: Sequence[type]) -> list[Any] | None:
    """The code a system runs that the files of its classes do not hold: the functions in a class's namespace
    defined in another module than the class (a method assigned from another file, ``RefundDesk.act = fixes.act``),
    or None when one of them, or a function in the class's module's namespace, is defined in no file (typed into a
    notebook cell and assigned there: ``RefundDesk.act = act``, ``refund_desk.parse_request = parse``).

    A function of an installed package's or the standard library's is left out, as such a base class is (its code
    changes with a version); one a library made for the class is the class's own: a dataclass's ``__init__`` runs
    in the class's module, and a named tuple's ``__new__`` (``typing.NamedTuple``, ``collections.namedtuple``),
    which ``collections`` evaluates in a namespace of its own, is built from the field names the class's file holds.

    Examples
    --------
    >>> class Desk:
    ...     def run(self, input): return "refunded"
    >>> methods_elsewhere([Desk])
    []
    >>> cell = {"__name__": "__notebook_cell__"}
    >>> exec("def run(self, input): return 'escalated'", cell)
    >>> Desk.run = cell["run"]
    >>> methods_elsewhere([Desk]) is None
    True
    """
    libraries = _library_dirs()
    out: list[Any] = []
    for cls in classes:
        for value in list(vars(cls).values()):
            for fn in _functions_in(value):
                if fn.__globals__.get("__name__") == cls.__module__ or _tuple_new(fn) or any(
                        fn is seen for seen in out):
                    continue
                if _in_no_file(fn):
                    return None
                source = _function_source(fn)
                if source is not None and not any(source.resolve().is_relative_to(d) for d in libraries):
                    out.append(fn)
        module = sys.modules.get(cls.__module__)
        for value in list(vars(module).values()) if module is not None else []:
            if any(fn.__globals__.get("__name__") != cls.__module__ and _in_no_file(fn)
                   for fn in _functions_in(value)):
                return None
    return out


def code_digests(root: Path | None, spec: str | None, target: Any, classes: Sequence[type] = (),
                 methods: Sequence[Any] = ()) -> list[str]:
    """SHA-256 digests of the files that define a system, sorted (content only: a moved suite keeps them).

    Parameters
    ----------
    root : Path or None
        The suite folder (None for a system given in Python).
    spec : str or None
        ``module:attr`` from oloproof.yaml: its module's file (in the suite folder, or wherever
        the imported module lives).
    target : object
        The class, factory or instance: the file that defines it (its class, for an instance).
    classes : sequence of type
        More classes whose files count (the built system's own classes and bases, :func:`user_classes`).
    methods : sequence of function
        More functions whose files count (:func:`methods_elsewhere`: a method assigned from another file).

    Returns
    -------
    list of str
        One digest per distinct file found; empty when no file can be found (e.g. a class typed
        into an interactive prompt). With ``root``, the suite folder's own modules that code imports count
        too (:func:`suite_imports`): an edited helper beside the system's module is an edited system.
    """
    files: set[Path] = set()
    if spec is not None:
        module_name = spec.split(":", 1)[0]
        local = module_file(root, module_name) if root is not None else None
        if local is not None:
            files.add(local)
        else:
            module = sys.modules.get(module_name)
            found = getattr(module, "__file__", None)
            if isinstance(found, str):
                files.add(Path(found))
    layers = code_layers(target)
    files.update(source for source in map(_source_of, layers) if source is not None)
    files.update(path for path in map(class_source, classes) if path is not None)
    files.update(path for path in map(_function_source, methods) if path is not None)
    out: set[str] = set()
    if root is not None:
        imported = suite_imports(root, [*layers, *classes, *methods])
        files -= set(imported)
        out.update(imported.values())
    for path in files:
        try:
            out.add(file_digest(path))
        except OSError:
            continue
    return sorted(out)


#: Most modules :func:`suite_imports` follows (a suite folder's own helpers; a runaway import graph stops there).
_MAX_SUITE_MODULES = 256
#: Largest module file whose import statements :func:`_top_imports` reads (1 MiB). Parsing is the cost: a generated
#: 4.9 MB module took 8.7 s to follow, 1 MiB about 0.4 s here. A bigger module is still fingerprinted
#: by its bytes; only the modules its import statements name are not followed, with a warning naming it.
MAX_IMPORT_SCAN_BYTES = 1 << 20


def suite_imports(root: Path, objects: Sequence[Any]) -> dict[Path, str]:
    """The files of the suite folder's own modules that the code of ``objects`` imports, followed through what
    those modules import in turn: a ``recovery.py`` beside ``refund_desk.py`` that the desk calls after a refund.

    A module counts when its file lies in ``root`` (as reached or as resolved) and outside the standard library
    and installed packages (a virtual environment kept in the suite folder); oloproof_nb's own never do. The
    modules looked at are those of each object (a function's globals, a class's module), and in each the modules,
    functions and classes it names and the modules its import statements at the top name (:func:`_top_imports`:
    ``from rules import LIMITS`` leaves a dict among its names, no module). At most :data:`_MAX_SUITE_MODULES`
    modules are followed; the import statements of a module file over :data:`MAX_IMPORT_SCAN_BYTES` are not read
    (a ``UserWarning`` names it), though the file itself counts.

    Parameters
    ----------
    root : Path
        The suite folder.
    objects : sequence of object
        The functions and classes that run (:func:`code_layers`, :func:`user_classes`).

    Returns
    -------
    dict of Path to str
        Each file found (the modules of ``objects`` themselves included when they lie in ``root``) with the
        digest of the code this process runs from it: the file's when the process first looked at the module
        here, for Python keeps a module it imported (a helper edited in a notebook after its first run still runs
        its old code, and stored replays must be keyed by that code, not by the file's new text).
    """
    folders = {root.absolute(), root.resolve()}
    libraries = _library_dirs()
    seen: set[str] = set()
    found: dict[Path, str] = {}
    queue: list[Any] = []

    def visit(module: Any) -> None:
        name = getattr(module, "__name__", None)
        file = getattr(module, "__file__", None)
        if not isinstance(module, types.ModuleType) or not isinstance(name, str) or name in seen:
            return
        seen.add(name)
        if not isinstance(file, str) or name.split(".", 1)[0] == "oloproof_nb":
            return
        path = Path(os.path.abspath(file))
        if not _lies_in(path, folders) or _lies_in(path, libraries):
            return
        try:
            found[path] = _running_digest(module, path)
        except OSError:
            return
        queue.append(module)

    def module_of(value: Any) -> Any:
        if inspect.isfunction(value):
            return sys.modules.get(str(value.__globals__.get("__name__")))
        if inspect.isclass(value):
            return sys.modules.get(str(value.__module__))
        return value if isinstance(value, types.ModuleType) else None

    for obj in objects:
        visit(module_of(obj))
    while queue and len(found) < _MAX_SUITE_MODULES:
        module = queue.pop()
        for value in list(vars(module).values()):
            if isinstance(value, types.ModuleType) or inspect.isfunction(value) or inspect.isclass(value):
                visit(module_of(value))
        # what its import statements name, whatever it took from there: `from policy import LIMITS` leaves a dict
        # among its names, no module (before, the edited policy kept the cached replays)
        path = Path(os.path.abspath(module.__file__))
        for name in _top_imports(path, found[path], getattr(module, "__package__", None) or ""):
            visit(sys.modules.get(name))
    return found


@functools.lru_cache(maxsize=1024)
def _top_imports(path: Path, digest: str, package: str) -> tuple[str, ...]:
    r"""The modules the import statements at the top of the module file ``path`` name (``digest``: its running
    digest, for the cache), each with its parents: ``import a.b`` and ``from a.b import c`` name ``a``, ``a.b``
    and (``c`` may be a module) ``a.b.c``; a relative import is resolved against ``package``. An import inside
    a function is left out (it has not run when the fingerprint is taken); one in a class body (``class Desk:
    from rules import LIMIT``, run as the module is) or under ``if`` or ``try`` at the top counts. Empty when the
    file cannot be read or parsed, and when it holds more than :data:`MAX_IMPORT_SCAN_BYTES` bytes (not parsed,
    which took seconds: a ``UserWarning`` names the file and the cap; once per file content, as this is cached).

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = f.write_text("from policy import LIMITS\ntry:\n    import a.b\nexcept ImportError:\n    pass\n"
    ...                  "def f():\n    import later\n")
    >>> _top_imports(f, "d", "")
    ('policy', 'policy.LIMITS', 'a', 'a.b')
    """
    try:
        handle, info = open_regular(path)
        with handle:
            source = handle.read(MAX_IMPORT_SCAN_BYTES + 1)  # no more than the cap, whatever the file grew to
        if len(source) > MAX_IMPORT_SCAN_BYTES:
            warn_at_caller(f"{path}: {max(info.st_size, len(source)):,} bytes, over the {MAX_IMPORT_SCAN_BYTES:,} "
                           "(1 MiB) whose import statements the code fingerprint reads: the file itself counts, but "
                           "a module of the suite folder it takes only a value from (from rules import LIMIT) does "
                           "not; define fingerprint() on the system to cover it")
            return ()
        tree = ast.parse(source, filename=str(path))
    except (UnreadableFile, OSError, SyntaxError, ValueError, RecursionError):
        return ()
    names: list[str] = []

    def dotted(name: str) -> None:
        parts = name.split(".")
        names.extend(".".join(parts[:i]) for i in range(1, len(parts) + 1))

    nodes: collections.deque[ast.AST] = collections.deque([tree])
    while nodes:
        node = nodes.popleft()
        if isinstance(node, ast.Import):
            for alias in node.names:
                dotted(alias.name)
        elif isinstance(node, ast.ImportFrom):
            try:
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                    else node.module or ""
            except (ImportError, ValueError):  # a relative import in a module of no package
                continue
            dotted(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.expr)):  # a class body runs
            nodes.extend(ast.iter_child_nodes(node))
    return tuple(dict.fromkeys(n for n in names if n))


def _running_digest(module: types.ModuleType, path: Path) -> str:
    """The digest of ``path`` when this process first asked it of ``module`` (:data:`_FIRST_DIGEST`): the code the
    module runs, whatever the file holds now."""
    seen = _FIRST_DIGEST.get(id(module))
    if seen is not None and seen[0]() is module:
        return seen[1]
    digest = file_digest(path)
    _FIRST_DIGEST[id(module)] = (weakref.ref(module, _forget(id(module))), digest)
    return digest


def function_digest(root: Path, spec: str, target: Any) -> str | None:
    """One digest of the code of a suite's ``module:function`` (a python check or a validator).

    SHA-256 of the sorted :func:`code_digests` of ``spec``: the file of the module it names, the file that
    defines the function (they differ when the module imports it from another one) and the suite folder's own
    modules that code imports (:func:`suite_imports`: a ``helpers.py`` it takes a function or a constant from).
    What it calls or reads in other files is not in it: a module outside the suite folder, one imported inside a
    function, a data file. None when no file defines it (a builtin, or a function typed at a prompt).
    """
    files = code_digests(root, spec, target)
    return hashlib.sha256("\n".join(files).encode()).hexdigest() if files else None


#: The digest of the file defining each layer of a check or validator (a function, a decorator's wrapper, a
#: class) when this process first saw the object. Python keeps a module once imported (a package, a dotted name,
#: a file the suite's module imports the function from), so an object whose defining file changed since is older
#: than that file: what it runs is not what the file says. (A top-level module of the suite folder is imported
#: again when it changes: new objects.) Keyed by ``id``, with a weak reference that says whether the object at
#: that id is still the one recorded; an entry goes when its object does.
_FIRST_DIGEST: dict[int, tuple[weakref.ref[Any], str]] = {}


def _forget(key: int) -> Callable[[weakref.ref[Any]], None]:
    def forget(ref: weakref.ref[Any]) -> None:
        if _FIRST_DIGEST.get(key, (None, ""))[0] is ref:
            del _FIRST_DIGEST[key]
    return forget


def code_layers(target: Any) -> list[Any]:
    """Everything that runs when ``target`` is called, outermost first: the object itself, a ``functools.partial``'s
    function, a bound method's function, each ``__wrapped__`` of a decorated function (a decorator's wrapper runs
    too), and for an instance its class. At most a few dozen layers.

    Examples
    --------
    >>> import functools
    >>> def inner(x): return x
    >>> [getattr(f, "__name__", "partial") for f in code_layers(functools.partial(inner, 1))]
    ['partial', 'inner']
    """
    layers: list[Any] = []
    for _ in range(32):
        if any(target is seen for seen in layers):
            break
        layers.append(target)
        if isinstance(target, functools.partial):
            target = target.func
        elif inspect.ismethod(target):
            target = target.__func__
        elif inspect.isfunction(target) and hasattr(target, "__wrapped__"):
            target = target.__wrapped__
        elif not (inspect.isclass(target) or inspect.isfunction(target) or inspect.isbuiltin(target)):
            target = type(target)  # an instance: its class's code runs
        else:
            break
    return layers


def _source_of(layer: Any) -> Path | None:
    """The file defining a function or a class (None: a builtin, a partial, or defined nowhere a file says)."""
    if not (inspect.isclass(layer) or inspect.isfunction(layer)):
        return None
    try:
        source = inspect.getsourcefile(layer)
    except (TypeError, OSError):
        return None
    return Path(source) if source is not None else None


def _names_elsewhere(root: Path, obj: Any) -> str | None:
    # a function's own module is its globals' (functools.wraps copies __module__ onto a wrapper defined elsewhere)
    module_name = obj.__globals__.get("__name__") if inspect.isfunction(obj) else getattr(obj, "__module__", None)
    source = _source_of(obj)
    if not isinstance(module_name, str) or source is None:
        return None
    return foreign_copy(root, module_name, source)


def defined_elsewhere(root: Path, target: Any) -> str | None:
    """Why what ``target`` runs comes from another folder's copy of a module this suite folder holds, or None:
    any layer of it (:func:`code_layers`), or a module, function or class the module of one of its functions or
    classes imported (a ``checks.py`` that calls ``helpers.score``, where another suite's ``helpers`` was imported
    first; a system class whose module imports the suite's ``bench`` package, where another suite's ``bench`` was
    imported first)."""
    for layer in code_layers(target):
        if not (inspect.isclass(layer) or inspect.isfunction(layer)):
            continue
        why = _names_elsewhere(root, layer)
        names = getattr(layer, "__globals__", None)
        if names is None:  # a class: its module's names
            names = vars(sys.modules.get(str(layer.__module__), types.ModuleType("?")))
        for value in list(names.values()):
            if why is not None:
                break
            if isinstance(value, types.ModuleType):
                file = getattr(value, "__file__", None)
                why = foreign_copy(root, value.__name__, file if isinstance(file, str) else None)
            elif inspect.isclass(value) or inspect.isfunction(value):
                why = _names_elsewhere(root, value)
        if why is None:
            why = _imports_elsewhere(root, sys.modules.get(str(names.get("__name__"))))
        if why is not None:
            return why
    return None


def _imports_elsewhere(root: Path, module: Any) -> str | None:
    """Why a module its import statements name (:func:`_top_imports`) is another folder's copy of one ``root``
    holds, for ``module`` a module of the suite folder, else None: ``from helpers import ACCEPT`` leaves a set among
    its names, no module or function (a second copy of a suite, its checks taking a constant from its
    own edited ``helpers.py``, judged with the first copy's constant, without a word)."""
    file = getattr(module, "__file__", None)
    if not isinstance(module, types.ModuleType) or not isinstance(file, str):
        return None
    path = Path(os.path.abspath(file))
    if not _lies_in(path, (root.absolute(), root.resolve())):
        return None
    try:
        digest = file_digest(path)
    except OSError:
        return None
    for name in _top_imports(path, digest, getattr(module, "__package__", None) or ""):
        imported = sys.modules.get(name)
        found = getattr(imported, "__file__", None)
        if isinstance(imported, types.ModuleType) and isinstance(found, str):
            why = foreign_copy(root, name, found)
            if why is not None:
                return why
    return None


def stale_import(root: Path, target: Any) -> Path | None:
    """A file of the suite folder's own modules that the code of ``target`` imports (:func:`suite_imports`: a
    ``bench/agent.py`` the system's module takes its agent from) whose bytes changed since this process imported
    it, else None: Python keeps a module it imported, so the system would run the old code (an agent
    edited in a notebook gave the old agent's 26 of 48 again, its replays from the cache, without a word).

    Examples
    --------
    >>> stale_import(Path("/nowhere"), len) is None
    True
    """
    return changed_file(suite_imports(root, code_layers(target)))


def changed_file(files: Mapping[Path, str]) -> Path | None:
    """The first of ``files`` (a file → the digest of the code run from it, :func:`suite_imports`) whose bytes have
    another digest now, else None; a file that cannot be read is passed over.

    Examples
    --------
    >>> changed_file({}) is None
    True
    """
    for path, running in files.items():
        try:
            if file_digest(path) != running:
                return path
        except OSError:
            continue
    return None


def stale_function(target: Any) -> Path | None:
    """The file defining a layer of what ``target`` runs (:func:`code_layers`: the function, a decorator's
    wrapper, a partial's function, a class) when that file changed after this process first saw the layer, else
    None: the object predates the file, so the code it runs is not the file's.

    The first call for an object records its file's digest. An object no weak reference can point to (a builtin)
    or defined in no file is never stale.
    """
    for layer in code_layers(target):
        source = _source_of(layer)
        if source is None:
            continue
        try:
            digest = file_digest(source)
        except OSError:
            continue
        seen = _FIRST_DIGEST.get(id(layer))
        if seen is not None and seen[0]() is layer:
            if seen[1] != digest:
                return source
            continue
        try:  # first seen (or another object now at a freed id)
            _FIRST_DIGEST[id(layer)] = (weakref.ref(layer, _forget(id(layer))), digest)
        except TypeError:
            continue
    return None


def file_digest(path: Path) -> str:
    """SHA-256 hex of a regular file's bytes, read in 1 MiB pieces.

    Raises
    ------
    OSError
        For what is not a readable regular file (``FileNotFoundError`` for nothing there): a named pipe or a device
        put in its place is refused without waiting for a writer (:func:`~.files.open_regular`).
    """
    try:
        handle, _ = open_regular(path)
    except UnreadableFile as exc:
        raise (FileNotFoundError if exc.missing else OSError)(f"{path}: {exc}") from None
    h = hashlib.sha256()
    with handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_validators(
    root: Path, specs: Mapping[str, str], file: str | Path
) -> dict[str, Callable[[Path], Any]]:
    """Import every registered validator from the suite folder.

    Parameters
    ----------
    root : Path
        The suite folder; a top-level module file there is imported under a name unique to the
        folder (as the system is, see :func:`import_system`).
    specs : Mapping[str, str]
        ``{name: "module:function"}`` from oloproof.yaml.
    file : str or Path
        The oloproof.yaml the specs come from (named in errors).

    Returns
    -------
    dict
        ``{name: callable}``, in the order of ``specs``.

    Raises
    ------
    ConfigError
        Naming ``file`` and ``validators.<name>``: the module cannot be imported, has no such
        attribute, or the attribute is not callable.
    """
    out: dict[str, Callable[[Path], Any]] = {}
    for name, spec in specs.items():
        key = f"validators.{name}"
        try:
            target = import_system(root, spec, file)
        except ConfigError as exc:
            raise ConfigError(file, key, exc.message) from None
        if not callable(target):
            raise ConfigError(file, key, f"{quote(spec)} is a {type(target).__name__}, not a function; "
                                         "a validator is a callable taking the artifact's path")
        out[name] = target
    return out


def load_check(root: Path, spec: str, file: str | Path = "oloproof.yaml", key: str = "check") -> Callable[..., Any]:
    """Import a suite's Python check ``module:function`` from the suite folder (as the system is imported).

    Raises
    ------
    ConfigError
        Naming ``file`` and ``key``: the module cannot be imported, has no such attribute, it is not callable, or
        it is an ``async def`` or generator function.
    """
    try:
        target = import_system(root, spec, file)
    except ConfigError as exc:
        raise ConfigError(file, key, exc.message) from None
    if not callable(target):
        raise ConfigError(file, key, f"{quote(spec)} is a {type(target).__name__}, not a function; a check is called "
                                     "with (case, initial_state, final_state, trajectory)")
    # the run calls a check as a plain function and reads what it returns: an async def check gave a coroutine,
    # never run (each case missing, "check returned <coroutine object …>", and Python's "never awaited" warning
    # pointing at oloproof), a generator function a generator, on every case of the run; an object whose __call__
    # is one (a check built by a class) is called the same way
    called = [target] if inspect.isclass(target) else [target, inspect.getattr_static(type(target), "__call__", None)]
    made = ("an async def function" if any(inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f)
                                           for f in called)
            else "a generator function" if any(inspect.isgeneratorfunction(f) for f in called) else "")
    if made:
        raise ConfigError(file, key, f"{quote(spec)} is {made}: a check is called as a plain function and never "
                                     "awaited or iterated; make it a def that returns True, False, None, a (verdict, "
                                     "reason) pair or a score (an async one: return asyncio.run(...) of it)")
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # some builtins have none: found out when it is called
        return target  # type: ignore[no-any-return]
    try:
        signature.bind(None, None, None, None)
    except TypeError as exc:
        raise ConfigError(file, key, f"{quote(spec)} cannot be called with (case, initial_state, final_state, "
                                     f"trajectory): {exc}; its signature is {spec.split(':')[1]}{signature}") from None
    return target  # type: ignore[no-any-return]
