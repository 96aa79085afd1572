"""Counts over findings shared by every writer, and the --fail-on decision."""

from __future__ import annotations

from collections import Counter

from porter.records import SEVERITY_RANK, Finding

SEVERITIES = ("error", "warning", "info")


def at_or_above(findings: list[Finding], fail_on: str) -> list[Finding]:
    """The findings that make `--fail-on fail_on` fail (none for `never`)."""
    if fail_on == "never":
        return []
    floor = SEVERITY_RANK[fail_on]
    return [finding for finding in findings if SEVERITY_RANK.get(finding.severity, 0) >= floor]


def summarize(findings: list[Finding]) -> dict:
    by_severity: Counter[str] = Counter(finding.severity for finding in findings)
    rows: dict[str, dict] = {}
    for finding in findings:
        row = rows.setdefault(
            finding.rule,
            {
                "rule": finding.rule,
                "name": finding.name,
                "severity": finding.severity,
                "count": 0,
                "fixable": 0,
                "fix": finding.fix,
            },
        )
        row["count"] += 1
        row["fixable"] += finding.fix is not None and finding.fix != "advice"
        if SEVERITY_RANK.get(finding.severity, 0) > SEVERITY_RANK.get(row["severity"], 0):
            row["severity"] = finding.severity
    by_rule = sorted(
        rows.values(), key=lambda row: (-SEVERITY_RANK.get(row["severity"], 0), -row["count"], row["rule"])
    )
    return {
        "total": len(findings),
        "files": len({finding.path for finding in findings}),
        "by_severity": {severity: by_severity.get(severity, 0) for severity in SEVERITIES},
        "fixable": sum(row["fixable"] for row in by_rule),
        "by_rule": by_rule,
    }
