"""`porter scan PATH... --target T`: find what breaks or slows down on the target, and report it.

Exit codes: 0 nothing at or above --fail-on (or --exit-zero), 1 findings at or above it, 2 usage,
configuration or internal error (--exit-zero does not hide those). Machine formats put only their payload on stdout; notes go to stderr.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

import typer
from rich.console import Console

from porter.cli.errors import bugs_reported
from porter.cli.progress import Progress
from porter.errors import UsageError
from porter.report import FINDINGS_FORMATS

KERNEL_FORMATS = ("table", "json")


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    """Repeatable, comma-separated flags as one tuple (None when the flag was not given)."""
    if not values:
        return None
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


STDIN = "-"


def scan_command(
    paths: list[str] = typer.Argument(
        None,
        help="Directories or files to scan (several: paths from the git top level holding them); - reads "
        "one source from stdin.",
        show_default=False,
    ),
    target: str = typer.Option(None, "--target", "-t", help="Target name or gfx arch (default: config, else mi350x)."),
    select: list[str] = typer.Option(None, "--select", help="Rule ids/prefixes to run (comma list, repeatable)."),
    extend_select: list[str] = typer.Option(
        None, "--extend-select", help="Rule ids to add to the default set, e.g. opt-in rules (or opt-in for all)."
    ),
    ignore: list[str] = typer.Option(None, "--ignore", help="Rule ids/prefixes to skip (comma list, repeatable)."),
    fail_on: str = typer.Option(None, "--fail-on", help="error | warning | info | never (default: error)."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even with findings (errors still exit 2)."),
    output_format: str = typer.Option(
        "terminal", "--format", help="terminal | json | sarif | github | markdown (with --kernels: table | json)."
    ),
    output: Path = typer.Option(None, "--output", "-o", help="Write the report to this file (atomically)."),
    sarif_output: Path = typer.Option(None, "--sarif-output", help="Also write the SARIF log to this file."),
    json_output: Path = typer.Option(None, "--json-output", help="Also write the JSON report to this file."),
    max_annotations: int = typer.Option(
        None,
        "--max-annotations",
        help="--format github: annotate only the N most severe findings; every finding "
        "goes to $GITHUB_STEP_SUMMARY when it is set.",
    ),
    jobs: int = typer.Option(None, "--jobs", "-j", help="Worker processes (default: config, else CPU count)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not update the scan cache."),
    kernels: bool = typer.Option(False, "--kernels", help="List Triton kernels and autotune configs vs target limits."),
    statistics: bool = typer.Option(False, "--statistics", help="Show counts per rule instead of each finding."),
    rules: list[Path] = typer.Option(
        None, "--rules", help="Rule files/directories to use instead of the bundled catalog."
    ),
    project_root: Path = typer.Option(
        None, "--project-root", help="Resolve sarif/github paths from here (default: the git top level)."
    ),
    show_unreachable: bool = typer.Option(
        False,
        "--show-unreachable",
        help="Also show findings in code that never runs on the target (NVIDIA-only "
        "branches, other vendors' backends); they never count for the exit code.",
    ),
    stdin_filename: Path = typer.Option(
        None, "--stdin-filename", help="With -: the path the source is reported under and its config is found from."
    ),
    files_from: str = typer.Option(
        None, "--files-from", help="Scan the paths listed in this file, one a line (- : stdin)."
    ),
    diff_base: str = typer.Option(
        None, "--diff-base", help="Report only findings introduced since the merge base of this git ref and HEAD."
    ),
    config_file: Path = typer.Option(
        None, "--config", help="Read [tool.porter] from this file instead of the nearest pyproject.toml."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="A line per analysed file."),
) -> None:
    """Scan Python sources for CUDA-flavoured idioms that break or slow down on AMD Instinct GPUs."""
    from porter.cli.progress import verbosity

    with bugs_reported():
        code = run_scan(
            paths or [],
            target=target,
            select=_split(select),
            extend_select=_split(extend_select),
            ignore=_split(ignore),
            fail_on=fail_on,
            output_format=output_format,
            output=output,
            jobs=jobs,
            use_cache=not no_cache,
            kernels=kernels,
            statistics=statistics,
            rule_paths=rules or None,
            project_root=project_root,
            show_unreachable=show_unreachable,
            exit_zero=exit_zero,
            stdin_filename=stdin_filename,
            files_from=files_from,
            diff_base=diff_base,
            config_file=config_file,
            verbosity=verbosity(quiet, verbose),
            also={"sarif": sarif_output, "json": json_output},
            max_annotations=max_annotations,
        )
    raise typer.Exit(code)


@dataclass(frozen=True)
class ScanInput:
    """What to scan: paths on disk, or one source read from stdin (`text`, reported as `stdin_path`)."""

    paths: list[Path]
    text: str | None = None
    stdin_path: Path | None = None

    @property
    def config_start(self) -> Path:
        """Where the config search starts (the stdin file's directory, else the scan root)."""
        from porter.analyze.scan import scan_root

        if self.text is not None:
            return self.stdin_path.resolve().parent if self.stdin_path is not None else Path.cwd()
        return scan_root(self.paths)


def read_input(paths, files_from: str | None, stdin_filename: Path | None, stdin=None) -> ScanInput:
    """The positional paths and --files-from as one ScanInput; `-` among the paths reads stdin."""
    stdin = stdin if stdin is not None else sys.stdin
    given = [str(p) for p in (paths if isinstance(paths, (list, tuple)) else [paths])]
    if STDIN in given and files_from == STDIN:
        raise UsageError("scan -: stdin holds one source; give no other path (nor --files-from -)")
    if files_from is not None:
        given += _listed_paths(files_from, stdin)
    if STDIN in given:
        if len(given) > 1:
            raise UsageError("scan -: stdin holds one source; give no other path (nor --files-from -)")
        return ScanInput([], text=_stdin_text(stdin), stdin_path=stdin_filename)
    if stdin_filename is not None:
        raise UsageError("--stdin-filename is for `porter scan -` (a source on stdin)")
    if not given:
        raise UsageError("no path to scan (give paths, - for stdin, or --files-from FILE)")
    return ScanInput([Path(p) for p in given])


def _stdin_text(stdin) -> str:
    """The source on stdin; UsageError when it is not UTF-8 (a strict stream raises on read, a
    surrogateescape one, as under the C locale, hands back surrogates that no later stage can encode)."""
    try:
        text = stdin.read()
        text.encode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError) as error:
        raise UsageError(f"scan -: stdin is not UTF-8 text (at position {error.start})") from None
    return text


def _listed_paths(files_from: str, stdin) -> list[str]:
    """One path a line (blank lines and surrounding whitespace ignored), from a file or `-` (stdin)."""
    if files_from == STDIN:
        text = stdin.read()
    else:
        try:
            text = Path(files_from).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"--files-from {files_from}: cannot read: {error}") from None
    listed = [line.strip() for line in text.splitlines() if line.strip()]
    if not listed:
        raise UsageError(f"--files-from {files_from}: lists no path")
    return listed


def run_scan(
    path,
    *,
    target=None,
    select=None,
    extend_select=None,
    ignore=None,
    fail_on=None,
    output_format="terminal",
    output=None,
    jobs=None,
    use_cache=True,
    kernels=False,
    statistics=False,
    rule_paths=None,
    project_root=None,
    show_unreachable=False,
    exit_zero=False,
    stdin_filename=None,
    files_from=None,
    diff_base=None,
    config_file=None,
    verbosity=1,
    also=None,
    max_annotations=None,
    stdin=None,
) -> int:
    """The scan command without Typer: returns the exit code (raises PorterError for exit 2).
    `path`: one path or a list of them (files or directories; `-` reads stdin)."""
    from porter.cli.progress import Progress
    from porter.config import load_config
    from porter.targets import get_target

    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    if max_annotations is not None and (max_annotations < 0 or output_format != "github"):
        raise UsageError("--max-annotations takes a number >= 0 and goes with --format github")
    scanned = read_input(path, files_from, stdin_filename, stdin)
    if scanned.text is not None and (kernels or diff_base):
        raise UsageError("scan -: --kernels and --diff-base read files on disk, not stdin")
    config = load_config(scanned.config_start, config_file).with_overrides(
        target=target, select=select, extend_select=extend_select, ignore=ignore, fail_on=fail_on, jobs=jobs
    )
    resolved_target = get_target(config.target_name)
    if kernels:
        return _run_kernels(_one_or_many(scanned.paths), resolved_target, config, output_format, output)
    request = FindingsRequest(
        output_format,
        output,
        use_cache,
        statistics,
        rule_paths,
        project_root,
        show_unreachable,
        diff_base,
        dict(also or {}),
        max_annotations,
        Progress(verbosity),
    )
    code = _run_findings(scanned, resolved_target, config, request)
    return 0 if exit_zero else code


def _one_or_many(paths: list[Path]) -> Path | list[Path]:
    return paths[0] if len(paths) == 1 else paths


@dataclass(frozen=True)
class FindingsRequest:
    """How to scan and report findings (the flags beyond rule selection, which the config carries)."""

    output_format: str
    output: Path | None
    use_cache: bool
    statistics: bool
    rule_paths: list[Path] | None
    project_root: Path | None
    show_unreachable: bool
    diff_base: str | None
    also: dict[str, Path | None]
    max_annotations: int | None
    progress: Progress


def _scan(scanned: ScanInput, target, config, ruleset, request: FindingsRequest, base):
    from porter.analyze.scan import scan_text, scan_tree

    if scanned.text is not None:
        name = scanned.stdin_path
        root = name.resolve().parent if name is not None else None
        return scan_text(scanned.text, name.name if name is not None else STDIN, target, ruleset, config, root)
    with request.progress.counter("scanning") as progress:
        result = scan_tree(
            _one_or_many(scanned.paths),
            target,
            ruleset,
            jobs=config.jobs,
            use_cache=request.use_cache,
            config=config,
            progress=progress,
        )
    if base is None:
        return result
    from porter.analyze.baseline import new_findings

    return new_findings(
        result,
        base,
        lambda files: scan_tree(_one_or_many(files), target, ruleset, jobs=config.jobs, use_cache=False, config=config),
    )


def _run_findings(scanned: ScanInput, target, config, request: FindingsRequest) -> int:
    from porter.analyze import load_rules
    from porter.report import findings_renderer
    from porter.report.output import emit
    from porter.report.summary import at_or_above

    output_format, output = request.output_format, request.output
    if output_format not in FINDINGS_FORMATS:
        raise UsageError(f"--format {output_format!r}: choose one of {', '.join(FINDINGS_FORMATS)}")
    base = None
    if request.diff_base is not None:  # before the scan: a bad ref fails before minutes of scanning
        from porter.analyze.baseline import resolve_base

        base = resolve_base(scanned.paths, request.diff_base)
    ruleset = load_rules(
        request.rule_paths, select=config.select, ignore=config.ignore, extend_select=config.extend_select
    )
    result = _scan(scanned, target, config, ruleset, request, base)
    for note in result.stats.notes:
        typer.secho(f"porter: note: {note}", err=True, fg="yellow")
    counted = result.findings  # the exit code counts only code that runs (or may run) on the target
    if request.show_unreachable:
        result = replace(result, findings=sorted(result.findings + result.unreachable, key=lambda f: f.sort_key()))
    elif result.unreachable:
        written_for_amd = sum(1 for f in result.unreachable if f.reach == "rocm_only")
        opted_in = sum(1 for f in result.unreachable if f.reach == "opt_in")
        unreached = sum(1 for f in result.unreachable if f.reach == "unreached")
        also = f" or premised on NVIDIA tuning in code written for AMD ({written_for_amd})" if written_for_amd else ""
        also += f" or only where a default-off option is turned on ({opted_in})" if opted_in else ""
        also += f" or that no entry point of the package reaches ({unreached})" if unreached else ""
        typer.secho(
            f"porter: note: {len(result.unreachable)} finding(s) in code that does not run on {target.name}{also} "
            "hidden (--show-unreachable lists them)",
            err=True,
            fg="yellow",
        )
    for extra_format, destination in request.also.items():
        if destination is not None:
            emit(findings_renderer(extra_format, request.project_root)(result), destination)
    if request.statistics:
        _emit_statistics(result, output_format, output)
    elif output_format == "terminal" and not output:
        from porter.report.terminal import print_terminal

        print_terminal(result, Console(highlight=False))
    else:
        emit(findings_renderer(output_format, request.project_root, request.max_annotations)(result), output)
    if output_format == "github":
        _write_step_summary(result, request.max_annotations)
    return 1 if at_or_above(counted, config.fail_on) else 0


def _write_step_summary(result, max_annotations: int | None) -> None:
    """Append every finding to the GitHub job summary when the runner provides one."""
    import os

    from porter.report.github import step_summary

    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as summary:
            summary.write(step_summary(result, max_annotations))
    except OSError as error:
        raise UsageError(f"$GITHUB_STEP_SUMMARY {path}: cannot write: {error.strerror or error}") from None


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
    rows = [
        f"{row['count']:>6}  {row['rule']}  {row['name']}  [{row['severity']}]" + ("  [fix]" if row["fixable"] else "")
        for row in summary["by_rule"]
    ]
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
