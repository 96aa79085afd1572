"""The `porter rewrite` report directory: report.md, report.json, patches/*.patch, findings.sarif,
needs-review.md. Every file is written atomically; the directory is porter's own output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from porter.report import patches as patch_report
from porter.report.output import atomic_write_text


def write_report_dir(out_dir: str | Path, plan, verdicts: dict[str, Any], applied: set[str], skipped: dict[str, str],
                     options: dict[str, Any], scan_result=None) -> Path:
    out = Path(out_dir)
    (out / "patches").mkdir(parents=True, exist_ok=True)
    for stale in (out / "patches").glob("*.patch"):  # a previous run's patches must not mix with these
        stale.unlink()
    for patch in plan.patches:
        atomic_write_text(out / "patches" / f"{patch.id}.patch", patch.diff)
    atomic_write_text(out / "report.md", patch_report.render_markdown(plan, verdicts, applied, skipped, options))
    atomic_write_text(out / "report.json", patch_report.render_json(plan, verdicts, applied, skipped, options))
    atomic_write_text(out / "needs-review.md", _needs_review(plan))
    if scan_result is not None:
        from porter.report.sarif import render_sarif  # H3's findings writer

        atomic_write_text(out / "findings.sarif", render_sarif(scan_result))
    return out


def _needs_review(plan) -> str:
    lines = [f"# Needs review ({plan.target.name})", ""]
    for item in plan.needs_review:
        f = item.finding
        head = f"- [ ] `{f.path}:{f.line}:{f.column}` {f.rule} {f.name} ({item.kind}): {f.message}"
        lines += patch_report.review_item_lines(item, head)
    if not plan.needs_review:
        lines.append("Nothing: every finding has a patch.")
    return "\n".join(lines) + "\n"
