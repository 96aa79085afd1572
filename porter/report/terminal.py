"""The default human view: findings grouped by file with a code frame, then a summary table."""

from __future__ import annotations

import io
from itertools import groupby

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from porter.report.rules import info_for
from porter.report.source_lines import SourceLines
from porter.report.summary import summarize

STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}
MAX_FRAME_LINES = 6


def _frame(finding, source: SourceLines) -> Text:
    """The offending lines with numbers, the finding's columns underlined."""
    rows = source.frame(finding)
    out = Text()
    if not rows:
        return out
    shown = rows[:MAX_FRAME_LINES]
    width = len(str(shown[-1][0]))
    for number, line in shown:
        out.append(f"  {number:>{width}} | ", style="dim")
        out.append_text(_highlight(finding, number, line))
        out.append("\n")
        if number == finding.line == finding.end_line:
            out.append_text(_carets(finding, width, line))
    if len(rows) > len(shown):
        out.append(f"  {'':>{width}} | ... {len(rows) - len(shown)} more line(s)\n", style="dim")
    return out


def _carets(finding, width: int, line: str) -> Text:
    """A ^^^ line under a one-line finding, so the spot shows without colour too."""
    start = max(0, finding.column - 1)
    length = max(1, min(finding.end_column - 1, len(line)) - start)
    return Text(f"  {'':>{width}} | " + " " * start + "^" * length + "\n", style=STYLES.get(finding.severity, ""))


def _highlight(finding, number: int, line: str) -> Text:
    text = Text(line)
    start = finding.column - 1 if number == finding.line else 0
    end = finding.end_column - 1 if number == finding.end_line else len(line)
    if 0 <= start < end:
        text.stylize("bold underline " + STYLES.get(finding.severity, ""), start, min(end, len(line)))
    return text


def _finding_header(finding, rules) -> Text:
    info = info_for(rules, finding)
    fix = f"fix: {finding.fix}" + (f", {info.safety}" if info.safety else "") if finding.fix else "no automatic fix"
    header = Text()
    header.append(f"{finding.path}:{finding.line}:{finding.column} ", style="bold")
    header.append(f"{finding.severity} ", style=STYLES.get(finding.severity, ""))
    header.append(f"{finding.rule} ", style="bold")
    header.append(f"[{finding.name}] ", style="dim")
    header.append(finding.message)
    if (
        finding.reach != "target"
    ):  # reach unknown: a platform test porter could not decide; nvidia_only: shown on request
        header.append(f"  [reach {finding.reach}: {finding.reach_reason}]", style="magenta")
    header.append(f"  ({fix})", style="green" if finding.fix else "dim")
    return header


def _summary_table(result) -> Table:
    summary = summarize(result.findings)
    table = Table(title=f"porter scan summary: {result.target}", title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("rule", "left"),
        ("name", "left"),
        ("severity", "left"),
        ("count", "right"),
        ("fix", "left"),
    )
    for column, justify in columns:
        table.add_column(column, justify=justify)
    for row in summary["by_rule"]:
        table.add_row(
            row["rule"],
            row["name"],
            Text(row["severity"], style=STYLES.get(row["severity"], "")),
            str(row["count"]),
            row["fix"] or "-",
        )
    return table


def _totals_line(result) -> str:
    summary, stats = summarize(result.findings), result.stats
    counts = summary["by_severity"]
    return (
        f"{summary['total']} finding(s) in {summary['files']} file(s) "
        f"({counts['error']} error, {counts['warning']} warning, {counts['info']} info; {summary['fixable']} fixable). "
        f"Scanned {stats.files_seen} file(s), {stats.lines} lines in {stats.seconds:.2f}s "
        f"({stats.cache_hits} cached, {stats.prefiltered} pre-filtered, {len(result.skipped)} skipped)."
    )


def print_terminal(result, console: Console, show_skipped: bool = True) -> None:
    source = SourceLines(result.root)
    for path, group in groupby(result.findings, key=lambda finding: finding.path):
        console.rule(Text(path, style="bold"), align="left")
        for finding in group:
            console.print(_finding_header(finding, result.rules), soft_wrap=True)
            console.print(_frame(finding, source), end="", soft_wrap=True)
        console.print()
    if show_skipped and result.skipped:
        console.print(Text(f"Skipped {len(result.skipped)} file(s):", style="bold"))
        for note in result.skipped:
            console.print(Text(f"  {note.path}: {note.reason}", style="dim"))
    if result.findings:
        console.print(_summary_table(result))
    console.print(_totals_line(result), soft_wrap=True)


def render_terminal(result, width: int = 120) -> str:
    """The terminal view as plain text (for --output)."""
    console = Console(record=True, width=width, color_system=None, force_terminal=False, file=_Discard())
    print_terminal(result, console)
    return console.export_text()


class _Discard(io.StringIO):
    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        pass
