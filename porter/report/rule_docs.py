"""Rule documentation for people: `porter rule ID`, `porter rules` and the generated docs/rules.md.

Everything here is rendered from the rule YAML files (summary, docs, fix, references), so the
documentation cannot drift from what the analyzer runs; a test regenerates docs/rules.md and
compares.
"""

from __future__ import annotations

import json

from porter.report.rules import RuleInfo

INDEX_HEADER = """# porter rules

Generated from `rules/**/*.yaml` by `porter rules --format markdown`; do not edit by hand.
Ids: PT1xx Triton, PT2xx PyTorch, PT3xx libraries, PT4xx environment and build.
`porter rule ID` shows one rule in the terminal.
"""


def rule_text(info: RuleInfo) -> str:
    """One rule as plain text, for the terminal."""
    fix = f"{info.fix} ({info.safety})" if info.fix and info.safety else (info.fix or "none")
    head = f"{info.id} {info.name}\n  severity: {info.severity}   category: {info.category or '-'}   fix: {fix}\n"
    if not info.enabled_by_default:
        head += f"  opt-in: off by default; enable with --extend-select {info.id} (or extend_select in pyproject)\n"
    elif info.opt_in_on:
        head += f"  opt-in where {info.opt_in_where}: enable there with --extend-select {info.id}\n"
    return head + "\n" + info.help_text() + _references_text(info) + "\n"


def _references_text(info: RuleInfo) -> str:
    references = info.docs.get("references") or []
    return "\n\nReferences:\n" + "\n".join(f"  {ref}" for ref in references) if references else ""


def rule_record(info: RuleInfo) -> dict:
    return {
        "id": info.id,
        "name": info.name,
        "summary": info.summary,
        "severity": info.severity,
        "category": info.category,
        "fix": info.fix,
        "fix_safety": info.safety or None,
        "enabled_by_default": info.enabled_by_default,
        "opt_in_on": list(info.opt_in_on),
        "docs": info.docs,
    }


def rules_json(infos: list[RuleInfo]) -> str:
    return json.dumps([rule_record(info) for info in infos], indent=2, default=str) + "\n"


def rules_table(infos: list[RuleInfo]) -> str:
    """One line a rule: id, severity, fix, name and summary."""
    rows = [
        f"{info.id}  {info.severity:<7}  {(info.fix or '-'):<7}  {'' if info.enabled_by_default else '(opt-in) '}"
        f"{info.name}: {info.summary}"
        for info in infos
    ]
    return "".join(row + "\n" for row in rows)


def rules_markdown(infos: list[RuleInfo]) -> str:
    """The rule index: a table, then a section per rule (anchors are the lower-case ids)."""
    table = ["| id | name | severity | fix | default | summary |", "|---|---|---|---|---|---|"]
    table += [
        f"| [{info.id}](#{info.id.lower()}) | `{info.name}` | {info.severity} | {info.fix or '-'} | "
        f"{info.default_text()} | {_cell(info.summary)} |"
        for info in infos
    ]
    sections = [f"## {info.id}\n\n" + info.help_markdown() for info in infos]
    return INDEX_HEADER + "\n" + "\n".join(table) + "\n\n" + "\n\n".join(sections) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
