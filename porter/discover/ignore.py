"""Git-style ignore rules: the root's and nested .gitignore files, built-in excludes, config globs."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pathspec

# directories never worth scanning: VCS data, environments, caches, build output
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        "build",
        "dist",
        "site-packages",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        ".porter-cache",
        ".porter-apply",
    }
)


@dataclass(frozen=True)
class IgnoreLayer:
    """The patterns of one .gitignore, which apply to paths below `prefix` ("" for the root).

    `base` is the scan root's path relative to the .gitignore's directory, for the .gitignore files
    of the root's ancestors inside the same git work tree ("" for the root and below).
    """

    prefix: str
    spec: pathspec.GitIgnoreSpec
    base: str = ""


def compile_globs(patterns) -> pathspec.GitIgnoreSpec | None:
    patterns = [p for p in patterns if p.strip()]
    return pathspec.GitIgnoreSpec.from_lines(patterns) if patterns else None


def read_gitignore(directory: str, prefix: str) -> IgnoreLayer | None:
    """The layer for `directory/.gitignore`, or None when absent or unreadable."""
    path = os.path.join(directory, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    spec = compile_globs(lines)
    return IgnoreLayer(prefix, spec) if spec else None


def is_ignored(layers: tuple[IgnoreLayer, ...], rel: str, is_dir: bool) -> bool:
    """Git semantics: the deepest .gitignore with a matching pattern decides; `!` re-includes."""
    decision = None
    suffix = "/" if is_dir else ""
    for layer in layers:
        if layer.prefix and not rel.startswith(layer.prefix):
            continue
        include = layer.spec.check_file(layer.base + rel[len(layer.prefix) :] + suffix).include
        if include is not None:
            decision = include
    return bool(decision)


def ancestor_layers(root: str) -> tuple[IgnoreLayer, ...]:
    """The .gitignore files above `root` up to its git work tree's top (none outside a work tree)."""
    layers: list[IgnoreLayer] = []
    current, base = root, ""
    while not os.path.exists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return ()  # not inside a git work tree: ancestors' .gitignore files do not apply
        base = os.path.basename(current) + "/" + base
        current = parent
        layer = read_gitignore(current, "")
        if layer is not None:
            layers.append(IgnoreLayer("", layer.spec, base))
    return tuple(reversed(layers))  # outermost first: deeper files decide last
