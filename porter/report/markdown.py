"""`--format markdown`: a summary a reviewer can read in a pull request or an issue."""

from __future__ import annotations

from porter.report.rules import info_for
from porter.report.summary import summarize

SEVERITY_MARK = {"error": "error", "warning": "warning", "info": "info"}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _summary_table(summary: dict, rules) -> list[str]:
    lines = ["| rule | name | severity | findings | fix |", "|---|---|---|---:|---|"]
    for row in summary["by_rule"]:
        info = rules.get(row["rule"])
        fix = row["fix"] or "none"
        if info is not None and info.safety and row["fix"]:
            fix += f" ({info.safety})"
        lines.append(f"| {row['rule']} | {row['name']} | {row['severity']} | {row['count']} | {fix} |")
    return lines


def _file_sections(result) -> list[str]:
    lines: list[str] = []
    current = None
    for finding in result.findings:
        if finding.path != current:
            current = finding.path
            lines += ["", f"### `{current}`", ""]
        fix = f" (fix: {finding.fix})" if finding.fix else ""
        lines.append(
            f"- **{finding.rule}** `{finding.name}` {finding.severity} at line {finding.line}, "
            f"column {finding.column}: {_cell(finding.message)}{fix}"
        )
    return lines


def _rule_notes(result) -> list[str]:
    used = sorted({finding.rule for finding in result.findings})
    lines = []
    for rule_id in used:
        finding = next(f for f in result.findings if f.rule == rule_id)
        info = info_for(result.rules, finding)
        why = str(info.docs.get("why", "")).strip()
        if info.summary or why:
            lines.append(f"- **{rule_id} {info.name}**: {_cell(info.summary)}" + (f" {_cell(why)}" if why else ""))
    return ["", "## Rules", ""] + lines if lines else []


def render_markdown(result) -> str:
    summary = summarize(result.findings)
    counts = summary["by_severity"]
    lines = [
        f"# porter scan: {result.target}",
        "",
        f"{summary['total']} finding(s) in {summary['files']} file(s): "
        f"{counts['error']} error, {counts['warning']} warning, {counts['info']} info; "
        f"{summary['fixable']} with an automatic fix.",
        f"Scanned {result.stats.files_seen} file(s), {result.stats.lines} lines; {len(result.skipped)} skipped.",
    ]
    if summary["total"]:
        lines += ["", "## Summary", ""] + _summary_table(summary, result.rules)
        lines += ["", "## Findings"] + _file_sections(result)
        lines += _rule_notes(result)
    if result.skipped:
        lines += ["", "## Skipped files", ""]
        lines += [f"- `{note.path}`: {_cell(note.reason)}" for note in result.skipped]
    return "\n".join(lines) + "\n"
