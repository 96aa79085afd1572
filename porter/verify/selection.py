"""Which test files a change can affect, from the static import graph of the repository.

A test file is selected when it imports, directly or through other modules of the repository, a
module the change touches (or is itself touched). A conftest.py counts for every test below its
directory. When a touched file is not a Python module of the repository (pyproject.toml, a data
file, a conftest) or nothing can be selected, the caller falls back to the full suite.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from porter.discover.ignore import DEFAULT_EXCLUDED_DIRS
from porter.records import TestRun


@dataclass
class ImportGraph:
    modules: dict[str, str] = field(default_factory=dict)  # dotted name -> relative path
    imports: dict[str, set[str]] = field(default_factory=dict)  # relative path -> module names it imports

    def module_of(self, rel: str) -> str | None:
        for name, path in self.modules.items():
            if path == rel:
                return name
        return None


def is_test_file(rel: str) -> bool:
    name = Path(rel).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _python_files(root: Path):
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part in DEFAULT_EXCLUDED_DIRS or part.startswith(".") for part in rel.parts[:-1]):
            continue
        yield rel.as_posix(), path


def _module_names(rel: str) -> list[str]:
    """Dotted names a file can be imported as: from the root, and from src/ in a src layout."""
    parts = list(Path(rel).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    names = [".".join(parts)] if parts else []
    if len(parts) > 1 and parts[0] == "src":
        names.append(".".join(parts[1:]))
    return names


def _imported_names(tree: ast.AST, package: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".") if package else []
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, base] if base else anchor)
            if base:
                found.add(base)
            found.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
    return found


def build_import_graph(root: Path) -> ImportGraph:
    graph = ImportGraph()
    sources = list(_python_files(root))
    for rel, _ in sources:
        for name in _module_names(rel):
            graph.modules.setdefault(name, rel)
    for rel, path in sources:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            graph.imports[rel] = set()
            continue
        names = _module_names(rel)
        package = names[0] if names else ""
        if not rel.endswith("__init__.py"):
            package = package.rpartition(".")[0]
        graph.imports[rel] = _imported_names(tree, package)
    return graph


def _dependencies(graph: ImportGraph, rel: str) -> set[str]:
    """Files of the repository `rel` imports directly, with the packages on the way (their __init__)."""
    deps: set[str] = set()
    for name in graph.imports.get(rel, ()):
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            target = graph.modules.get(".".join(parts[:end]))
            if target and target != rel:
                deps.add(target)
    return deps


def reverse_closure(graph: ImportGraph, touched: set[str]) -> set[str]:
    """Every file that imports a touched file, directly or transitively (touched included)."""
    importers: dict[str, set[str]] = {}
    for rel in graph.imports:
        for dep in _dependencies(graph, rel):
            importers.setdefault(dep, set()).add(rel)
    reached = set(touched)
    frontier = list(touched)
    while frontier:
        current = frontier.pop()
        for importer in importers.get(current, ()):
            if importer not in reached:
                reached.add(importer)
                frontier.append(importer)
    return reached


def select_tests(root: Path, touched: list[str]) -> list[str] | None:
    """Test files (relative paths) to run for a change touching `touched`; None = the full suite."""
    graph = build_import_graph(root)
    python_touched = set()
    for rel in touched:
        if Path(rel).name == "conftest.py" or not rel.endswith(".py") or rel not in graph.imports:
            return None
        python_touched.add(rel)
    reached = reverse_closure(graph, python_touched)
    selected = {rel for rel in reached if is_test_file(rel)}
    for conftest in (rel for rel in reached if Path(rel).name == "conftest.py"):
        folder = Path(conftest).parent
        selected.update(rel for rel in graph.imports if is_test_file(rel) and folder in Path(rel).parents)
    return sorted(selected) or None


def imports_any(root: Path, prefixes: tuple[str, ...]) -> bool:
    """Whether any Python file of the repository imports one of these top-level packages."""
    graph = build_import_graph(root)
    return any(name.split(".")[0] in prefixes for names in graph.imports.values() for name in names)


def tests_importing(run: TestRun, paths: list[str]) -> list[str]:
    """The replayed tests that passed and imported one of `paths` (collection included)."""
    wanted = set(paths)
    return [test for test in run.passed if wanted & set(run.imports.get(test, ()))]


def unexercised_warning(run: TestRun, paths: list[str]) -> str:
    """A warning when no passing replayed test imported the patched Python files, else ''."""
    python = sorted(path for path in paths if path.endswith(".py"))
    if not python or tests_importing(run, python):
        return ""
    shown = ", ".join(python[:3]) + (f" and {len(python) - 3} more" if len(python) > 3 else "")
    if not run.imports:
        return (
            f"the replay recorded no imports (not a pytest run?), so no test is known to exercise the "
            f"patched code ({shown})"
        )
    return f"no test that passed in the replay imports the patched code ({shown}): the tests say nothing about it"
