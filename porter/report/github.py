"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

Escaping follows the runner's rules (actions/toolkit command.ts): in the message `%`, CR and LF
are percent-encoded; in property values `:` and `,` are too, since they delimit properties.
"""

from __future__ import annotations

from pathlib import Path

from porter.report.locations import ProjectPaths, project_paths

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


SCAN_ROOT = ProjectPaths(Path("."), "")  # paths as the findings carry them


def annotation(finding, paths: ProjectPaths = SCAN_ROOT) -> str:
    properties = {
        "file": paths.path(finding.path),  # the runner resolves it from the repository root
        "line": finding.line,
        "col": finding.column,
        "endLine": finding.end_line,
        "endColumn": finding.end_column,
        "title": f"{finding.rule} {finding.name}",
    }
    rendered = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{LEVELS.get(finding.severity, 'warning')} {rendered}::{escape_data(finding.message)}"


def render_github(result, project_root=None) -> str:
    paths = project_paths(result.root, project_root)
    lines = [annotation(finding, paths) for finding in result.findings]
    return "".join(line + "\n" for line in lines)
