"""Which kind of source a file name denotes; rules declare the kinds they read (python by default)."""

from __future__ import annotations

import fnmatch

# name globs per kind, matched on the file name only (not the directory)
KIND_GLOBS: dict[str, tuple[str, ...]] = {
    "python": ("*.py",),
    "shell": ("*.sh", "*.bash"),
    "dockerfile": ("Dockerfile", "Dockerfile.*", "*.dockerfile", "Containerfile"),
}
DEFAULT_KINDS = frozenset({"python"})


def kind_of(name: str) -> str | None:
    """The kind of a file name, or None when no rule category reads such files."""
    if name.endswith(".py"):  # the common case, without fnmatch
        return "python"
    for kind, globs in KIND_GLOBS.items():
        if any(fnmatch.fnmatchcase(name, glob) for glob in globs):
            return kind
    return None
