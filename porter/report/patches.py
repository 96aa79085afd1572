"""Patch-level report text: the summary and per-patch sections of `porter rewrite` in each format."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from porter.report.github import escape_data, escape_property


def patch_status(patch_id: str, verdicts: dict[str, Any], applied: set[str], skipped: dict[str, str]) -> str:
    verdict = verdicts.get(patch_id)
    if verdict is None:
        state = "unverified"
    else:
        state = "accepted" if verdict.accepted else "rejected"
    if patch_id in applied:
        state += ", applied"
    elif patch_id in skipped:
        state += ", not applied"
    return state


def summary_counts(plan, verdicts: dict[str, Any]) -> dict[str, Any]:
    by_rule = Counter(f.rule for f in plan.findings)
    by_severity = Counter(f.severity for f in plan.findings)
    by_remedy = Counter(str(f.fix) for f in plan.findings)
    return {
        "findings": len(plan.findings),
        "patches": len(plan.patches),
        "accepted": sum(1 for p in plan.patches if p.id in verdicts and verdicts[p.id].accepted),
        "rejected": sum(1 for p in plan.patches if p.id in verdicts and not verdicts[p.id].accepted),
        "unverified": sum(1 for p in plan.patches if p.id not in verdicts),
        "needs_review": len(plan.needs_review),
        "by_rule": dict(sorted(by_rule.items())),
        "by_severity": dict(sorted(by_severity.items())),
        "by_remedy": dict(sorted(by_remedy.items())),
    }


def render_text(plan, verdicts, applied, skipped, out_dir: str | None) -> str:
    lines = [f"porter rewrite for {plan.target.name} ({plan.target.arch}): {len(plan.findings)} findings, "
             f"{len(plan.patches)} patches, {len(plan.needs_review)} need review"]
    for patch in plan.patches:
        state = patch_status(patch.id, verdicts, applied, skipped)
        deps = f" (after {', '.join(patch.depends_on)})" if patch.depends_on else ""
        lines.append(f"  {patch.id}  [{state}] {patch.title}{deps}")
        verdict = verdicts.get(patch.id)
        if verdict is not None and not verdict.accepted:
            lines.extend(f"      rejected: {reason}" for reason in verdict.reasons)
        if patch.id in skipped:
            lines.append(f"      not applied: {skipped[patch.id]}")
    for item in plan.needs_review:
        f = item.finding
        lines.append(f"  review  {f.path}:{f.line}:{f.column} {f.rule} ({item.kind}): {item.reason}")
    if out_dir:
        lines.append(f"report: {out_dir}/report.md")
    return "\n".join(lines) + "\n"


def render_github(plan, verdicts, applied, skipped) -> str:
    out = []
    for patch in plan.patches:
        state = patch_status(patch.id, verdicts, applied, skipped)
        level = "warning" if "rejected" in state else "notice"
        for finding in patch.findings or []:
            props = f"file={escape_property(finding.path)},line={finding.line},title={escape_property(patch.id + ' ' + state)}"
            out.append(f"::{level} {props}::{escape_data(patch.title + ': ' + patch.rationale)}")
    for item in plan.needs_review:
        f = item.finding
        props = f"file={escape_property(f.path)},line={f.line},title={escape_property(f.rule + ' needs review')}"
        out.append(f"::warning {props}::{escape_data(f.message + ' ' + item.guidance)}")
    return "".join(line + "\n" for line in out)


def report_dict(plan, verdicts, applied, skipped, options: dict[str, Any]) -> dict[str, Any]:
    patches = []
    for patch in plan.patches:
        record = patch.to_dict()
        record["status"] = patch_status(patch.id, verdicts, applied, skipped)
        record["verdict"] = verdicts[patch.id].to_dict() if patch.id in verdicts else None
        record["not_applied_reason"] = skipped.get(patch.id)
        for edit in record["edits"]:  # the diff carries the change; whole texts would bloat the report
            edit.pop("before", None)
            edit.pop("after", None)
        record["file"] = f"patches/{patch.id}.patch"
        patches.append(record)
    return {
        "target": plan.target.name,
        "arch": plan.target.arch,
        "options": options,
        "summary": summary_counts(plan, verdicts),
        "patches": patches,
        "needs_review": [item.to_dict() for item in plan.needs_review],
        "findings": [f.to_dict() for f in plan.findings],
    }


def render_json(plan, verdicts, applied, skipped, options) -> str:
    return json.dumps(report_dict(plan, verdicts, applied, skipped, options), indent=2, default=str) + "\n"


def _table(rows: list[tuple[str, int]], header: str) -> list[str]:
    out = [f"| {header} | count |", "|---|---|"]
    out.extend(f"| {key} | {value} |" for key, value in rows)
    return out


def render_markdown(plan, verdicts, applied, skipped, options) -> str:
    counts = summary_counts(plan, verdicts)
    t = plan.target
    md = [f"# porter rewrite report: {t.name} ({t.arch})", ""]
    mode = "exclusive (target values written directly)" if options.get("exclusive") else "portable (NVIDIA branch kept, target chosen at run time)"
    md += [f"Mode: {mode}. Verification: {options.get('verification', 'not run')}.", ""]
    md += [f"{counts['findings']} findings, {counts['patches']} patches ({counts['accepted']} accepted, "
           f"{counts['rejected']} rejected, {counts['unverified']} unverified), {counts['needs_review']} need review.", ""]
    md += ["## Summary", ""]
    md += _table(sorted(counts["by_rule"].items()), "rule") + [""]
    md += _table(sorted(counts["by_severity"].items()), "severity") + [""]
    md += _table(sorted(counts["by_remedy"].items()), "remedy") + [""]
    md += ["## Patches", ""]
    for patch in plan.patches:
        md += _patch_section(patch, verdicts.get(patch.id), patch_status(patch.id, verdicts, applied, skipped), skipped.get(patch.id))
    md += ["## Needs review", ""]
    if not plan.needs_review:
        md += ["Nothing.", ""]
    for item in plan.needs_review:
        f = item.finding
        head = f"- `{f.path}:{f.line}` **{f.rule}** {f.name} ({f.severity}, {item.kind}): {f.message}"
        md += review_item_lines(item, head, reason_label="why not patched: ")
    return "\n".join(md) + "\n"


def review_item_lines(item, head: str, reason_label: str = "") -> list[str]:
    """A needs-review entry: its headline, why porter did not patch it, and the rule's guidance."""
    lines = [head, f"  - {reason_label}{item.reason}"]
    if item.guidance:
        lines.append(f"  - use instead: {' '.join(item.guidance.split())}")
    return lines


def _patch_section(patch, verdict, state: str, skip_reason: str | None) -> list[str]:
    md = [f"### {patch.id}: {patch.title}", "", f"Status: **{state}**. Kind: {patch.kind}. Safety: {patch.safety}."]
    if patch.depends_on:
        md.append(f"Apply after: {', '.join(patch.depends_on)}.")
    md += ["", patch.rationale, ""]
    if patch.facts:
        md.append("Target facts relied on: " + ", ".join(f"`{k}={v}`" for k, v in patch.facts.items()))
        md.append("")
    for note in patch.notes:
        md.append(f"- note: {note}")
    if verdict is not None:
        md.append(f"- verifier: {'accepted' if verdict.accepted else 'rejected'}")
        md.extend(f"  - {reason}" for reason in verdict.reasons)
        if verdict.newly_failing:
            md.append(f"  - newly failing: {', '.join(verdict.newly_failing)}")
        if verdict.newly_passing:
            md.append(f"  - newly passing: {', '.join(verdict.newly_passing)}")
        for record in verdict.compiles:
            status = "ok" if record.ok else f"failed: {record.error}"
            md.append(f"  - compiled {record.kernel} for {record.arch}: {status}")
        md.extend(f"  - warning: {w}" for w in verdict.warnings)
    if skip_reason:
        md.append(f"- not applied: {skip_reason}")
    md += ["", "```diff", patch.diff.rstrip("\n"), "```", ""]
    return md
