"""Where a finding's file lies for tools that read paths from the repository root.

porter's findings carry paths relative to the scanned directory. GitHub code scanning, annotations
and most CI tools resolve paths from the repository root, so a scan of `packages/kernels` must
report `packages/kernels/ops.py`, not `ops.py`. The project root is the git top level that holds
the scanned directory, or the directory itself outside git; `--project-root` overrides it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from porter.errors import UsageError


def git_top_level(directory: Path) -> Path | None:
    """The work tree's top level holding `directory`, or None outside git (or without git)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None


@dataclass(frozen=True)
class ProjectPaths:
    """Maps scan-relative paths to project-relative ones. `prefix` is the scanned root's place in
    the project ('' when they are the same)."""

    project_root: Path
    prefix: str

    def path(self, scan_relative: str) -> str:
        return str(PurePosixPath(self.prefix) / scan_relative) if self.prefix else scan_relative

    def uri(self, scan_relative: str) -> str:
        """A relative URI reference: the project path, percent-encoded (RFC 3986) but for '/'."""
        return quote(self.path(scan_relative), safe="/")

    @property
    def category(self) -> str:
        """A name for this scan among several of one repository (SARIF automationDetails)."""
        return self.prefix or "."


def project_paths(scan_root: str | Path, project_root: str | Path | None = None) -> ProjectPaths:
    """Paths for a scan of `scan_root` (a directory, or the directory of a scanned file)."""
    root = Path(os.path.realpath(scan_root))
    if project_root is None:
        top = git_top_level(root if root.is_dir() else root.parent)
        project = Path(os.path.realpath(top)) if top else root
    else:
        project = Path(os.path.realpath(project_root))
    try:
        prefix = root.relative_to(project).as_posix()
    except ValueError:
        raise UsageError(f"--project-root {project}: does not contain the scanned path {root}") from None
    return ProjectPaths(project, "" if prefix == "." else prefix)
