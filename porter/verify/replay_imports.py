"""Which repository files each replayed test imported (collection included), for the verifier.

The replay plugin installs `ImportTracker` as early as it loads, before the conftests. Every import
statement (and `importlib.import_module`) records an edge importer -> imported by module name,
cached modules included, so a test file that imports a package another file loaded first still
gets the edge. Modules first loaded while a test runs are its own seeds too. At the end a test's
imports are the closure over those edges from its file, the conftests above it and its seeds,
kept to the files inside the repository. Standard library only: it runs before torch is imported.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any


class ImportTracker:
    def __init__(self) -> None:
        self.edges: dict[str, set[str]] = {}  # importer module -> modules it imported
        self.seeds: dict[str, set[str]] = {}  # test id -> modules first loaded while it ran
        self.tests: list[str] = []  # every test id that started, in order
        self._before: set[str] = set()
        self._lock = threading.Lock()
        self._original_import: Callable[..., Any] | None = None
        self._original_import_module: Callable[..., Any] | None = None

    # ------------------------------------------------------------ recording

    def install(self) -> None:
        if self._original_import is not None:
            return
        self._original_import = builtins.__import__
        self._original_import_module = importlib.import_module
        builtins.__import__ = self._import
        importlib.import_module = self._import_module

    def uninstall(self) -> None:
        if self._original_import is not None:
            builtins.__import__ = self._original_import
        if self._original_import_module is not None:
            importlib.import_module = self._original_import_module
        self._original_import = self._original_import_module = None

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        module = self._original_import(name, globals, locals, fromlist, level)
        importer = (globals or {}).get("__name__")
        if importer:
            self._note(importer, _absolute_name(name, globals, level), fromlist)
        return module

    def _import_module(self, name, package=None):
        module = self._original_import_module(name, package)
        importer = sys._getframe(1).f_globals.get("__name__")
        if importer:
            self._note(importer, module.__name__, ())
        return module

    def _note(self, importer: str, imported: str, fromlist) -> None:
        if not imported:
            return
        names = {imported}
        for item in fromlist or ():
            if isinstance(item, str) and f"{imported}.{item}" in sys.modules:
                names.add(f"{imported}.{item}")  # `from package import submodule`
        with self._lock:
            self.edges.setdefault(importer, set()).update(names)

    def test_started(self, test_id: str) -> None:
        self.tests.append(test_id)
        self._before = set(sys.modules)

    def test_finished(self, test_id: str) -> None:
        loaded = set(sys.modules) - self._before
        if loaded:
            self.seeds.setdefault(test_id, set()).update(loaded)
        self._before = set(sys.modules)

    # ------------------------------------------------------------ the answer

    def imports_by_test(self, root: Path) -> dict[str, list[str]]:
        """test id -> sorted repository-relative .py files it imported."""
        files = _repository_modules(root)
        names_of_file: dict[str, set[str]] = {}
        for name, rel in files.items():
            names_of_file.setdefault(rel, set()).add(name)
        answer: dict[str, list[str]] = {}
        for test_id in dict.fromkeys(self.tests):
            starts = set(self.seeds.get(test_id, ()))
            for rel in _test_files(test_id, names_of_file):
                starts |= names_of_file.get(rel, set())
            reached = self._closure(starts)
            answer[test_id] = sorted({files[name] for name in reached if name in files})
        return answer

    def _closure(self, starts: set[str]) -> set[str]:
        reached: set[str] = set()
        frontier = [name for name in starts]
        while frontier:
            name = frontier.pop()
            if name in reached:
                continue
            reached.add(name)
            frontier.extend(_parents(name))  # importing a.b.c runs a/__init__ and a/b/__init__
            frontier.extend(self.edges.get(name, ()))
        return reached


def _absolute_name(name: str, globals: dict | None, level: int) -> str:
    if not level:
        return name
    package = (globals or {}).get("__package__") or (globals or {}).get("__name__", "").rpartition(".")[0]
    try:
        return importlib.util.resolve_name("." * level + name, package)
    except (ImportError, ValueError):
        return ""


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def _repository_modules(root: Path) -> dict[str, str]:
    """module name -> file (relative to `root`, POSIX) for every loaded module defined in the repository."""
    resolved = root.resolve()
    found: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file or not file.endswith(".py"):
            continue
        try:
            found[name] = Path(file).resolve().relative_to(resolved).as_posix()
        except (ValueError, OSError):
            continue
    return found


def _test_files(test_id: str, known: dict[str, set[str]]) -> list[str]:
    """The test's own file and the conftest.py files pytest loaded for it (its folder and above)."""
    path = PurePosixPath(test_id.split("::", 1)[0])
    files = [path.as_posix()]
    for folder in path.parents:
        conftest = (folder / "conftest.py").as_posix() if str(folder) != "." else "conftest.py"
        if conftest in known:
            files.append(conftest)
    return files


TRACKER = ImportTracker()
