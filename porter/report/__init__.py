"""Report writers. Findings: terminal, json, sarif, github, markdown (one small module each)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

FINDINGS_FORMATS = ("terminal", "json", "sarif", "github", "markdown")


def findings_renderer(name: str, project_root: Path | None = None, max_annotations: int | None = None) -> Callable:
    """The function `result -> str` for a findings format name. `project_root`: where the formats that
    name files for CI tools (sarif, github) resolve paths from (default: the git top level)."""
    render: Callable[..., str]
    if name == "json":
        from porter.report.json_report import render_json as render
    elif name == "sarif":
        from porter.report.sarif import render_sarif as render
    elif name == "github":
        from porter.report.github import render_github as render
    elif name == "markdown":
        from porter.report.markdown import render_markdown as render
    elif name == "terminal":
        from porter.report.terminal import render_terminal as render
    else:
        from porter.errors import UsageError

        raise UsageError(f"unknown format {name!r}; choose one of {', '.join(FINDINGS_FORMATS)}")
    if name == "github":
        return functools.partial(render, project_root=project_root, max_annotations=max_annotations)
    if name == "sarif":
        return functools.partial(render, project_root=project_root)
    return render
