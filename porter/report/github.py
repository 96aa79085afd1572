"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

GitHub shows at most 10 annotations of each level per step and 50 per job, dropping the rest
silently; `--max-annotations N` keeps the N most severe and the step summary (step_summary, for
$GITHUB_STEP_SUMMARY) lists every finding, so nothing is lost.

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


SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def annotated(findings, max_annotations: int | None) -> list:
    """The findings that get an annotation: all, or the `max_annotations` most severe (then in path order)."""
    if max_annotations is None:
        return list(findings)
    ranked = sorted(findings, key=lambda f: (SEVERITY_ORDER.get(f.severity, 3), f.sort_key()))
    return sorted(ranked[:max_annotations], key=lambda f: f.sort_key())


def render_github(result, project_root=None, max_annotations: int | None = None) -> str:
    paths = project_paths(result.root, project_root)
    lines = [annotation(finding, paths) for finding in annotated(result.findings, max_annotations)]
    return "".join(line + "\n" for line in lines)


def step_summary(result, max_annotations: int | None = None) -> str:
    """Markdown for the job summary: how many findings were annotated, then every finding."""
    from porter.report.markdown import render_markdown

    shown = len(annotated(result.findings, max_annotations))
    head = (
        f"porter annotated {shown} of {len(result.findings)} finding(s)"
        + (f" (--max-annotations {max_annotations}, most severe first)" if max_annotations is not None else "")
        + "; all of them are listed below.\n\n"
    )
    return head + render_markdown(result) + "\n"
