"""Report writers. Findings: terminal, json, sarif, github, markdown (one small module each)."""

from __future__ import annotations

from collections.abc import Callable

FINDINGS_FORMATS = ("terminal", "json", "sarif", "github", "markdown")


def findings_renderer(name: str) -> Callable:
    """The function `result -> str` for a findings format name."""
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
    return render
