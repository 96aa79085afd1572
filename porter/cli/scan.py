"""`porter scan PATH --target T`: find what breaks or slows down on the target, and report it.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 usage, configuration or
internal error. Machine formats put only their payload on stdout; notes go to stderr.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import typer
from rich.console import Console

from porter.cli.errors import report_internal_error
from porter.errors import PorterError, UsageError
from porter.report import FINDINGS_FORMATS

KERNEL_FORMATS = ("table", "json")


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    """Repeatable, comma-separated flags as one tuple (None when the flag was not given)."""
    if not values:
        return None
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


def scan_command(
    path: Path = typer.Argument(..., help="Directory (or file) to scan.", show_default=False),
    target: str = typer.Option(None, "--target", "-t", help="Target name or gfx arch (default: config, else mi350x)."),
    select: list[str] = typer.Option(None, "--select", help="Rule ids/prefixes to run (comma list, repeatable)."),
    extend_select: list[str] = typer.Option(
        None, "--extend-select", help="Rule ids to add to the default set, e.g. opt-in rules (or opt-in for all)."
    ),
    ignore: list[str] = typer.Option(None, "--ignore", help="Rule ids/prefixes to skip (comma list, repeatable)."),
    fail_on: str = typer.Option(None, "--fail-on", help="error | warning | info | never (default: error)."),
    output_format: str = typer.Option(
        "terminal", "--format", help="terminal | json | sarif | github | markdown (with --kernels: table | json)."
    ),
    output: Path = typer.Option(None, "--output", "-o", help="Write the report to this file (atomically)."),
    jobs: int = typer.Option(None, "--jobs", "-j", help="Worker processes (default: config, else CPU count)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not update the scan cache."),
    kernels: bool = typer.Option(False, "--kernels", help="List Triton kernels and autotune configs vs target limits."),
    statistics: bool = typer.Option(False, "--statistics", help="Show counts per rule instead of each finding."),
    rules: list[Path] = typer.Option(None, "--rules", help="Rule files/directories to use instead of the bundled catalog."),
    project_root: Path = typer.Option(
        None, "--project-root", help="Resolve sarif/github paths from here (default: the git top level)."
    ),
    show_unreachable: bool = typer.Option(
        False, "--show-unreachable", help="Also show findings in code that never runs on the target (NVIDIA-only "
        "branches, other vendors' backends); they never count for the exit code."),
) -> None:
    """Scan Python sources for CUDA-flavoured idioms that break or slow down on AMD Instinct GPUs."""
    try:
        code = run_scan(
            path, target=target, select=_split(select), extend_select=_split(extend_select),
            ignore=_split(ignore), fail_on=fail_on,
            output_format=output_format, output=output, jobs=jobs, use_cache=not no_cache,
            kernels=kernels, statistics=statistics, rule_paths=rules or None, project_root=project_root,
            show_unreachable=show_unreachable,
        )
    except PorterError:
        raise
    except Exception as error:  # anything else is porter's bug: one line and a hint, not a traceback
        report_internal_error(error)
    raise typer.Exit(code)


def run_scan(path: Path, *, target=None, select=None, extend_select=None, ignore=None, fail_on=None,
             output_format="terminal", output=None, jobs=None, use_cache=True, kernels=False, statistics=False,
             rule_paths=None, project_root=None, show_unreachable=False) -> int:
    """The scan command without Typer: returns the exit code (raises PorterError for exit 2)."""
    from porter.config import load_config
    from porter.targets import get_target

    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    config_root = path if path.is_dir() else path.parent
    config = load_config(config_root).with_overrides(
        target=target, select=select, extend_select=extend_select, ignore=ignore, fail_on=fail_on, jobs=jobs
    )
    resolved_target = get_target(config.target_name)
    if kernels:
        return _run_kernels(path, resolved_target, config, output_format, output)
    return _run_findings(path, resolved_target, config, output_format, output, use_cache, statistics, rule_paths,
                         project_root, show_unreachable)


def _run_findings(path, target, config, output_format, output, use_cache, statistics, rule_paths,
                  project_root=None, show_unreachable=False) -> int:
    from porter.analyze import load_rules
    from porter.analyze.scan import scan_tree
    from porter.report import findings_renderer
    from porter.report.output import emit
    from porter.report.summary import at_or_above

    if output_format not in FINDINGS_FORMATS:
        raise UsageError(f"--format {output_format!r}: choose one of {', '.join(FINDINGS_FORMATS)}")
    ruleset = load_rules(rule_paths, select=config.select, ignore=config.ignore, extend_select=config.extend_select)
    with _progress_bar() as progress:
        result = scan_tree(path, target, ruleset, jobs=config.jobs, use_cache=use_cache, config=config,
                           progress=progress)
    for note in result.stats.notes:
        typer.secho(f"porter: note: {note}", err=True, fg="yellow")
    counted = result.findings  # the exit code counts only code that runs (or may run) on the target
    if show_unreachable:
        result = replace(result, findings=sorted(result.findings + result.unreachable, key=lambda f: f.sort_key()))
    elif result.unreachable:
        typer.secho(f"porter: note: {len(result.unreachable)} finding(s) in code that does not run on {target.name} "
                    "hidden (--show-unreachable lists them)", err=True, fg="yellow")
    if statistics:
        _emit_statistics(result, output_format, output)
    elif output_format == "terminal" and not output:
        from porter.report.terminal import print_terminal

        print_terminal(result, Console(highlight=False))
    else:
        emit(findings_renderer(output_format, project_root)(result), output)
    return 1 if at_or_above(counted, config.fail_on) else 0


@contextmanager
def _progress_bar():
    """A progress bar on stderr when it is a terminal (manual refresh: no thread alive across fork)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(stderr=True), auto_refresh=False, transient=True)
    task = bar.add_task("scan", total=None)
    with bar:
        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)
            bar.refresh()

        yield update


def _emit_statistics(result, output_format, output) -> None:
    """ruff-style --statistics: one row per rule (json: the summary object)."""
    import json

    from porter.report.output import emit
    from porter.report.summary import summarize

    summary = summarize(result.findings)
    if output_format == "json":
        emit(json.dumps(summary, indent=2) + "\n", output)
        return
    if output_format != "terminal":
        raise UsageError("--statistics prints a table (--format terminal) or json")
    rows = [f"{row['count']:>6}  {row['rule']}  {row['name']}  [{row['severity']}]"
            + ("  [fix]" if row["fixable"] else "") for row in summary["by_rule"]]
    emit("".join(line + "\n" for line in rows) + f"{summary['total']:>6}  total\n", output)


def _run_kernels(path, target, config, output_format, output) -> int:
    from porter.analyze.scan import kernel_inventory
    from porter.report.kernels import print_kernels, render_kernels_json, render_kernels_text
    from porter.report.output import emit

    output_format = "table" if output_format == "terminal" else output_format
    if output_format not in KERNEL_FORMATS:
        raise UsageError(f"--kernels --format {output_format!r}: choose one of {', '.join(KERNEL_FORMATS)}")
    inventory = kernel_inventory(path, target, config=config)
    if output_format == "json":
        emit(render_kernels_json(inventory), output)
    elif output:
        emit(render_kernels_text(inventory), output)
    else:
        print_kernels(inventory, Console(highlight=False, width=None if sys.stdout.isatty() else 200))
    return 0


def register(app: typer.Typer) -> None:
    app.command("scan")(scan_command)

