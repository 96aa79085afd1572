"""`porter verify PATH --target T [--patch FILE ...]`: replay the tests on the CPU under the Triton
interpreter (or on the real GPU with --device cuda) and cross-compile every kernel launch for the
target; with patches, judge each one (baseline, batch, bisection).

Patch files are a series, applied in the order given: each depends on the ones before it.
Exit codes: 0 accepted; 1 a patch (or, without patches, the tree) rejected or unverified (a failing test or
kernel, no test evidence), or a runtime finding; 2 usage, configuration error, or the verifier could not run.
`--format json` puts only the verdicts on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer
from rich.console import Console

from porter.cli.errors import bugs_reported
from porter.cli.progress import Progress, verbosity
from porter.errors import PorterError, UsageError
from porter.records import Patch, Verdict, Verification

FORMATS = ("text", "json")


def verify_command(
    path: Path = typer.Argument(..., help="Repository (directory) to verify.", show_default=False),
    target: str = typer.Option(None, "--target", "-t", help="Target name or gfx arch (default: config, else mi350x)."),
    patch: list[Path] = typer.Option(
        None, "--patch", "-p", help="Patch file (git diff) to judge; repeatable, a series."
    ),
    device: str = typer.Option("cpu", "--device", help="cpu: interpreter replay + cross-compile; cuda: the real GPU."),
    test_cmd: str = typer.Option(None, "--test-cmd", help='Test command (default: config, else "python -m pytest").'),
    timeout: float = typer.Option(None, "--timeout", help="Seconds allowed per test-command run (default 600)."),
    jobs: str = typer.Option(None, "--jobs", "-j", help='pytest-xdist workers: "auto", a number, or 0 for none.'),
    no_compile: bool = typer.Option(False, "--no-compile", help="Skip cross-compilation for the target."),
    full_suite: bool = typer.Option(
        False, "--full-suite", help="Run every test, not only those the patches can affect."
    ),
    output_format: str = typer.Option("text", "--format", help="text | json."),
    output: Path = typer.Option(None, "--output", "-o", help="Write the JSON verdicts to this file (atomically)."),
    config_file: Path = typer.Option(
        None, "--config", help="Read [tool.porter] from this file instead of the nearest pyproject.toml."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="A line per test run and kernel compile as each finishes, then per test replayed.",
    ),
) -> None:
    """Replay tests on the CPU, cross-compile kernels for the target and judge patches."""
    with bugs_reported():
        code = run_verify(
            path,
            target=target,
            patch_files=patch or [],
            device=device,
            test_cmd=test_cmd,
            timeout=timeout,
            jobs=jobs,
            cross_compile=not no_compile,
            full_suite=full_suite,
            output_format=output_format,
            output=output,
            config_file=config_file,
            progress=Progress(verbosity(quiet, verbose)),
        )
    raise typer.Exit(code)


def _options(device, test_cmd, timeout, jobs, cross_compile, full_suite):
    from porter.verify.options import DEVICES, VerifyOptions, parse_test_cmd

    if device not in DEVICES:
        raise UsageError(f"--device: expected one of {', '.join(DEVICES)}, got {device!r}")
    if timeout is not None and timeout <= 0:
        raise UsageError("--timeout: expected a positive number of seconds")
    values: dict = {
        "device": device,
        "cross_compile": cross_compile and device == "cpu",
        "select_tests": not full_suite,
    }
    if test_cmd is not None:
        values["test_cmd"] = parse_test_cmd(test_cmd, "--test-cmd")
    if timeout is not None:
        values["timeout_s"] = float(timeout)
    if jobs is not None:
        if jobs != "auto" and not jobs.isdigit():
            raise UsageError(f'--jobs: expected "auto" or a number, got {jobs!r}')
        values["jobs"] = jobs if jobs == "auto" else int(jobs)
    return VerifyOptions(**values)


def run_verify(
    path: Path,
    *,
    target=None,
    patch_files=(),
    device="cpu",
    test_cmd=None,
    timeout=None,
    jobs=None,
    cross_compile=True,
    full_suite=False,
    output_format="text",
    output=None,
    config_file=None,
    progress=None,
) -> int:
    from porter.config import load_config
    from porter.pipeline import VerifierFailed
    from porter.targets import get_target
    from porter.verify import preflight
    from porter.verify.runtime import runtime_findings

    if output_format not in FORMATS:
        raise UsageError(f"--format: expected one of {', '.join(FORMATS)}, got {output_format!r}")
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory")
    progress = progress if progress is not None else Progress()
    config = load_config(path, config_file)
    target_record = get_target(target or config.target_name)
    options = _options(device, test_cmd, timeout, jobs, cross_compile, full_suite).with_porter_config(config, path)
    preflight.check(path, options, target_record)
    try:
        what = f"{len(patch_files)} patch(es)" if patch_files else "the tree"
        with progress.steps(f"verifying {what} on {target_record.name}") as step:
            verification = _judge(path, patch_files, target_record, options, step)
    except PorterError:
        raise
    except Exception as error:  # no verdict: never a pass
        raise VerifierFailed(f"cannot verify: the verifier failed ({type(error).__name__}: {error})") from error
    if verification.problem:  # no verdict on the code: exit 2, as `porter rewrite` does
        raise VerifierFailed(f"cannot verify: {verification.problem}")
    verdicts = verification.verdicts
    findings = [f for v in verdicts for f in runtime_findings(v, target_record, path.resolve())]
    for verdict in verdicts:
        for line in test_lines(verdict):
            progress.detail(line)
    payload = {
        "target": target_record.name,
        "arch": target_record.arch,
        "device": device,
        "verdicts": [v.to_dict() for v in verdicts],
        "runtime_findings": [f.to_dict() for f in findings],
    }
    if output is not None:
        _write_atomically(output, json.dumps(payload, indent=2, default=str) + "\n")
    if output_format == "json":
        sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")
    else:
        print_verdicts(verdicts, target_record)
        print_runtime_findings(findings)
    return 0 if all(v.accepted for v in verdicts) and not findings else 1


def _judge(path, patch_files, target_record, options, step) -> Verification:
    from porter.verify.core import judge_patches, judge_tree
    from porter.verify.workspace import PatchApplyError, patch_file_paths, patch_from_file

    if patch_files:
        patches: list[Patch] = []
        files: dict[str, Path] = {}
        for file in patch_files:
            record = patch_from_file(file)
            try:
                patch_file_paths(path, file)  # not a diff at all: say so now, not after the baseline run
            except PatchApplyError as error:
                raise UsageError(f"{file}: {error}") from None
            if record.id in files:
                raise UsageError(f"{file}: two patch files named {record.id}")
            record.depends_on = [patches[-1].id] if patches else []
            patches.append(record)
            files[record.id] = file.resolve()
        return judge_patches(path, patches, target_record, options, patch_files=files, progress=step)
    return judge_tree(path, target_record, options, progress=step)


def test_lines(verdict: Verdict) -> list[str]:
    """One line per test of a verdict's replay (`-v`), failures first."""
    run = verdict.tests
    if run is None:
        return []
    groups = (
        ("failed", run.failed),
        ("error", run.errors),
        ("passed", run.passed),
        ("skipped", run.skipped),
        ("not replayed", run.not_replayed),
    )
    return [f"{verdict.patch_id}: {status} {test}" for status, tests in groups for test in tests]


def print_runtime_findings(findings) -> None:
    """What failed on the target, as findings located at the launch call (provenance runtime)."""
    if not findings:
        return
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"[bold]runtime findings[/bold] ({len(findings)}): what fails on the target")
    for finding in findings:
        console.print(f"  {finding.path}:{finding.line} {finding.rule} {finding.name}: {finding.message}", markup=False)


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def print_verdicts(verdicts: list[Verdict], target) -> None:
    console = Console(highlight=False, soft_wrap=True)
    for verdict in verdicts:
        colour = {"accepted": "green", "rejected": "red", "unverified": "yellow"}[verdict.status]
        mark = f"[{colour}]{verdict.status}[/{colour}]"
        console.print(f"[bold]{verdict.patch_id}[/bold]: {mark} on {target.name} ({target.arch})")
        if verdict.tests is not None:
            run = verdict.tests
            console.print(
                f"  tests: {len(run.passed)} passed, {len(run.failed)} failed, {len(run.errors)} errors, "
                f"{len(run.skipped)} skipped, {len(run.not_replayed)} not replayed "
                f"({run.duration_s:.1f} s)"
            )
        for reason in verdict.reasons:
            console.print(f"  - {reason}", markup=False)
        for test in verdict.newly_passing:
            console.print(f"  + newly passing: {test}", markup=False)
        for warning in verdict.warnings:
            console.print(f"  ! {warning}", markup=False)
        if verdict.compiles:
            for line in _compile_lines(verdict):
                console.print(line, markup=False)


def _compile_lines(verdict: Verdict) -> list[str]:
    """One line per compiled (kernel, config): status, then the figures read from the kernel."""
    from porter.verify.crosscompile import pointer_dtypes

    lines = [f"  kernels compiled for {verdict.compiles[0].arch}:"]
    for record in verdict.compiles:
        config = ",".join(f"{k}={v}" for k, v in record.config.items())
        dtypes = pointer_dtypes(record)
        config = f"{dtypes}: {config}" if dtypes else config
        if not record.ok:
            status = "FAIL" if record.checked else "????"  # could not finish: neither pass nor failure
            lines.append(f"    {status} {record.source}::{record.kernel} [{config}]: {record.error}")
            continue
        status = "ok  " if record.launchable else "FAIL"
        figures = (
            f"vgpr {record.vgprs} sgpr {record.sgprs} spills {record.spills} lds {record.lds_bytes}/"
            f"{record.lds_limit} threads {record.threads}/{record.thread_limit} occupancy {record.occupancy}"
        )
        lines.append(f"    {status} {record.source}::{record.kernel} [{config}]: {figures}")
        lines += [f"         {note}" for note in record.notes]
    return lines


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("verify")(verify_command)
