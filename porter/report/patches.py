"""Patch-level report text: the summary and per-patch sections of `porter rewrite` in each format."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from porter.report.github import escape_data, escape_property
from porter.verify.crosscompile import compile_outcome

FOLD_DIFF_LINES = 40  # longer diffs (the generated shim) are folded in report.md


def verdict_state(patch_id: str, verdicts: dict[str, Any]) -> str:
    """accepted | rejected | unverified: no verdict is unverified, never accepted."""
    verdict = verdicts.get(patch_id)
    return "unverified" if verdict is None else verdict.status


def patch_status(patch_id: str, verdicts: dict[str, Any], applied: set[str], skipped: dict[str, str]) -> str:
    state = verdict_state(patch_id, verdicts)
    if patch_id in applied:
        state += ", applied"
    elif patch_id in skipped:
        state += ", not applied"
    return state


def summary_counts(plan, verdicts: dict[str, Any], options: dict[str, Any] | None = None) -> dict[str, Any]:
    by_rule = Counter(f.rule for f in plan.findings)
    by_severity = Counter(f.severity for f in plan.findings)
    by_remedy = Counter(str(f.fix) for f in plan.findings)
    states = Counter(verdict_state(p.id, verdicts) for p in plan.patches)
    return {
        "target_failures": len((options or {}).get("target_failures", [])),
        "findings": len(plan.findings),
        "patches": len(plan.patches),
        "accepted": states["accepted"],
        "rejected": states["rejected"],
        "unverified": states["unverified"],
        "needs_review": len(plan.needs_review),
        "by_rule": dict(sorted(by_rule.items())),
        "by_severity": dict(sorted(by_severity.items())),
        "by_remedy": dict(sorted(by_remedy.items())),
    }


def _failure_line(failure: dict[str, Any]) -> str:
    """Rule, launch site and the verifier's evidence (the message names the kernel, config and values)."""
    return f"{failure['rule']} {failure['path']}:{failure['line']}: {failure['message']}"


def headline(plan, verdicts, options: dict[str, Any]) -> str:
    """The one line that says whether the port is done on the target."""
    counts = summary_counts(plan, verdicts, options)
    t = plan.target
    if options.get("problem"):
        return f"porter rewrite for {t.name} ({t.arch}): NOT VERIFIED, verification could not run: {options['problem']}"
    if not options.get("verified", True):
        return (
            f"porter rewrite for {t.name} ({t.arch}): NOT VERIFIED (--no-verify): {counts['patches']} unverified "
            "patches, nothing is known about the target"
        )
    done = counts["target_failures"] == 0 and counts["rejected"] == 0 and counts["unverified"] == 0
    state = "done on the target" if done else "NOT DONE"
    return (
        f"porter rewrite for {t.name} ({t.arch}): {state}: {counts['target_failures']} target failure(s), "
        f"{counts['rejected']} rejected, {counts['unverified']} unverified, {counts['accepted']} accepted "
        f"of {counts['patches']} patches; {counts['needs_review']} finding(s) need review"
    )


def render_text(plan, verdicts, applied, skipped, out_dir: str | None, options: dict[str, Any] | None = None) -> str:
    options = options or {}
    lines = [headline(plan, verdicts, options)]
    failures = options.get("target_failures", [])
    if failures:
        lines.append("still failing on the target:")
        lines += [f"  FAIL  {_failure_line(f)}" for f in failures]
    ordered = sorted(plan.patches, key=lambda p: verdict_state(p.id, verdicts) == "accepted")
    for patch in ordered:
        state = patch_status(patch.id, verdicts, applied, skipped)
        deps = f" (after {', '.join(patch.depends_on)})" if patch.depends_on else ""
        lines.append(f"  {patch.id}  [{state}] {patch.title}{deps}")
        verdict = verdicts.get(patch.id)
        if verdict is not None and not verdict.accepted:
            lines.extend(f"      {verdict.status}: {reason}" for reason in verdict.reasons)
        if patch.id in skipped:
            lines.append(f"      not applied: {skipped[patch.id]}")
    for item in plan.needs_review:
        f = item.finding
        lines.append(f"  review  {f.path}:{f.line}:{f.column} {f.rule} ({item.kind}): {item.reason}")
    if options.get("verification"):
        lines.append(f"verification: {options['verification']}")
    if out_dir:
        lines.append(f"report: {out_dir}/report.md")
    return "\n".join(lines) + "\n"


def render_github(plan, verdicts, applied, skipped, options: dict[str, Any] | None = None) -> str:
    out = []
    for failure in (options or {}).get("target_failures", []):
        props = (
            f"file={escape_property(failure['path'])},line={failure['line']},"
            f"title={escape_property(failure['rule'] + ' fails on the target')}"
        )
        out.append(f"::error {props}::{escape_data(failure['message'])}")
    for patch in plan.patches:
        state = patch_status(patch.id, verdicts, applied, skipped)
        level = "notice" if state.startswith("accepted") else "warning"
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
        record["state"] = verdict_state(patch.id, verdicts)
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
        "options": {k: v for k, v in options.items() if k != "target_failures"},
        "headline": headline(plan, verdicts, options),
        "summary": summary_counts(plan, verdicts, options),
        "target_failures": options.get("target_failures", []),
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
    """What still fails on the target first, then what needs review, then the accepted patches."""
    counts = summary_counts(plan, verdicts, options)
    t = plan.target
    md = [f"# porter rewrite report: {t.name} ({t.arch})", "", f"**{headline(plan, verdicts, options)}**", ""]
    mode = (
        "exclusive (target values written directly)"
        if options.get("exclusive")
        else "portable (NVIDIA branch kept, target chosen at run time)"
    )
    md += [f"Mode: {mode}. Verification: {options.get('verification') or 'not run'}.", ""]
    if options.get("problem"):
        md += [
            "## Verification could not run",
            "",
            options["problem"],
            "",
            "Set these in the repository's `pyproject.toml` and run again:",
            "",
            "```toml",
            "[tool.porter.verify]",
            'test_cmd = "python -m pytest tests"  # the command that runs the tests',
            "timeout = 1200  # seconds per test run",
            "select_tests = true  # only tests importing patched files",
            "```",
            "",
        ]
    md += ["## Still failing on the target", ""]
    failures = options.get("target_failures", [])
    md += [f"- {_failure_line(f)}" for f in failures] or ["Nothing the replay and the cross-compile saw."]
    md += [""]
    md += ["## Needs review", ""]
    pending = [p for p in plan.patches if verdict_state(p.id, verdicts) != "accepted"]
    for patch in pending:
        md += _patch_section(
            patch, verdicts.get(patch.id), patch_status(patch.id, verdicts, applied, skipped), skipped.get(patch.id)
        )
    for item in plan.needs_review:
        f = item.finding
        head = f"- `{f.path}:{f.line}` **{f.rule}** {f.name} ({f.severity}, {item.kind}): {f.message}"
        md += review_item_lines(item, head, reason_label="why not patched: ")
    if not pending and not plan.needs_review:
        md += ["Nothing."]
    md += ["", "## Accepted patches", ""]
    for patch in plan.patches:
        if verdict_state(patch.id, verdicts) == "accepted":
            md += _patch_section(
                patch, verdicts.get(patch.id), patch_status(patch.id, verdicts, applied, skipped), skipped.get(patch.id)
            )
    md += [
        "## Summary",
        "",
        f"{counts['findings']} findings, {counts['patches']} patches ({counts['accepted']} accepted, "
        f"{counts['rejected']} rejected, {counts['unverified']} unverified), {counts['needs_review']} need review.",
        "",
    ]
    for number, item in enumerate(options.get("rounds", []), start=1):
        md.append(
            f"- round {number}: {item['patches']} patches, {item['accepted']} accepted"
            + (f", new runtime findings: {', '.join(item['new_runtime'])}" if item["new_runtime"] else "")
            + (f", remedied at the launches instead: {'; '.join(item['relocated'])}" if item.get("relocated") else "")
            + (f", {item['agent_asked']} finding(s) sent to the agent" if item.get("agent_asked") else "")
        )
    md += [""]
    md += _table(sorted(counts["by_rule"].items()), "rule") + [""]
    md += _table(sorted(counts["by_severity"].items()), "severity") + [""]
    md += _table(sorted(counts["by_remedy"].items()), "remedy") + [""]
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
    if verdict is None:
        md.append("- verifier: unverified (no verdict)")
    else:
        md.append(f"- verifier: {verdict.status}")
        md.extend(f"  - {reason}" for reason in verdict.reasons)
        if verdict.stacked_on:
            md.append(
                f"  - judged on top of {', '.join(verdict.stacked_on)} (judged before it; its tests ran with them applied)"
            )
        if verdict.newly_failing:
            md.append(f"  - newly failing: {', '.join(verdict.newly_failing)}")
        if verdict.newly_passing:
            md.append(f"  - newly passing: {', '.join(verdict.newly_passing)}")
        for record in verdict.compiles:
            md.append(f"  - compiled {record.kernel} for {record.arch}: {compile_outcome(record)}")
        md.extend(f"  - warning: {w}" for w in verdict.warnings)
    if skip_reason:
        md.append(f"- not applied: {skip_reason}")
    diff = ["```diff", patch.diff.rstrip("\n"), "```"]
    if patch.diff.count("\n") > FOLD_DIFF_LINES:
        diff = [
            "<details><summary>diff ({} lines)</summary>".format(patch.diff.count("\n")),
            "",
            *diff,
            "",
            "</details>",
        ]
    md += ["", *diff, ""]
    return md
