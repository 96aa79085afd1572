"""`porter rewrite PATH --target T`: turn findings into reviewable patches, verify them, optionally apply.

Without --apply nothing in the scanned tree is touched: patches and the report go to --out
(default ./porter-report). With --apply only accepted patches are written, all-or-nothing; an
unverified patch only with --apply --no-verify (marked so in the report).
Exit codes: 0 every patch accepted and nothing left failing on the target; 1 a target failure or a
rejected or unverified patch remains; 2 usage error, or verification could not run (nothing applied).
The work itself is porter.pipeline; this module parses flags and prints.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import typer

from porter.cli.errors import bugs_reported
from porter.cli.progress import Progress, verbosity
from porter.errors import PorterError, UsageError

FORMATS = ("text", "json", "github")


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


def parse_tune(value: str | None) -> int | None:
    """`--tune topk=N` -> N (None when not given)."""
    if value is None:
        return None
    key, _, number = value.partition("=")
    if key.strip() != "topk" or not number.strip().isdigit() or int(number) < 1:
        raise UsageError(f"--tune: expected topk=N with N >= 1, got {value!r}")
    return int(number)


def rewrite_command(
    path: Path = typer.Argument(..., help="Repository or package directory to rewrite.", show_default=False),
    target: str = typer.Option(None, "--target", "-t", help="Target name or gfx arch (default: config, else mi350x)."),
    out: Path = typer.Option(Path("porter-report"), "--out", help="Report directory (default ./porter-report)."),
    apply: bool = typer.Option(False, "--apply", help="Write the accepted patches into the tree (atomically)."),
    allow_dirty: bool = typer.Option(False, "--allow-dirty", help="With --apply, allow uncommitted git changes."),
    exclusive: bool = typer.Option(
        False, "--exclusive", help="Write the target's values directly (drop the NVIDIA branch)."
    ),
    output_format: str = typer.Option("text", "--format", help="text | json | github (summary on stdout)."),
    select: list[str] = typer.Option(None, "--select", help="Rule ids/prefixes to run (comma list, repeatable)."),
    extend_select: list[str] = typer.Option(
        None, "--extend-select", help="Rule ids to add to the default set, e.g. opt-in rules (or opt-in for all)."
    ),
    ignore: list[str] = typer.Option(None, "--ignore", help="Rule ids/prefixes to skip (comma list, repeatable)."),
    no_verify: bool = typer.Option(False, "--no-verify", help="Skip verification; patches are marked unverified."),
    tune: str = typer.Option(None, "--tune", help="topk=N: keep the N best model-ranked configs per shape bucket."),
    agent: str = typer.Option(
        None, "--agent", help="none (default) | openai | replay: who proposes fixes no codemod can make."
    ),
    agent_replay: Path = typer.Option(
        None, "--agent-replay", help="With --agent replay: a saved report's agent/ directory."
    ),
    config_file: Path = typer.Option(
        None, "--config", help="Read [tool.porter] from this file instead of the nearest pyproject.toml."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="A line per analysed file, test run and kernel compile."
    ),
) -> None:
    """Rewrite CUDA-flavoured code for the target: codemods, the porter shim, and a report of the rest."""
    with bugs_reported():
        code = run_rewrite(
            path,
            target=target,
            out=out,
            apply=apply,
            allow_dirty=allow_dirty,
            exclusive=exclusive,
            output_format=output_format,
            select=_split(select),
            extend_select=_split(extend_select),
            ignore=_split(ignore),
            verify=not no_verify,
            tune_topk=parse_tune(tune),
            agent=agent,
            agent_replay=agent_replay,
            config_file=config_file,
            progress=Progress(verbosity(quiet, verbose)),
        )
    raise typer.Exit(code)


def git_dirty(root: Path, exclude: Path | None = None) -> bool | None:
    """True when `git status --porcelain` lists changes; None when root is not in a git work tree.
    `exclude`: the --out directory; when it holds porter's previous report inside the tree, exactly
    the files that report consists of are left out (anything else there still counts)."""
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return None
    from porter.report.report_dir import report_pathspecs

    spec = ["."] + (report_pathspecs(exclude, root) if exclude is not None else [])
    status = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--", *spec], capture_output=True, text=True, timeout=60
    )
    return bool(status.stdout.strip())


def run_rewrite(
    path: Path,
    *,
    target=None,
    out: Path = Path("porter-report"),
    apply=False,
    allow_dirty=False,
    exclusive=False,
    output_format="text",
    select=None,
    extend_select=None,
    ignore=None,
    verify=True,
    tune_topk=None,
    agent=None,
    agent_replay=None,
    echo=typer.echo,
    config_file=None,
    progress=None,
) -> int:
    """The rewrite command without Typer: returns the exit code (raises PorterError for exit 2)."""
    from porter import pipeline
    from porter.analyze import load_rules
    from porter.config import load_config
    from porter.targets import get_target
    from porter.verify.memo import StateMemo

    if output_format not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, got {output_format!r}")
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory (rewrite works on a repository or package directory)")
    from porter.remedy.apply import recover
    from porter.report.report_dir import check_out_dir

    for line in recover(path):  # a killed --apply is finished before anything else reads the tree
        typer.secho(line, err=True, fg="yellow")
    check_out_dir(out, path)
    progress = progress if progress is not None else Progress()
    config = load_config(path, config_file).with_overrides(
        target=target, select=select, extend_select=extend_select, ignore=ignore
    )
    resolved = get_target(config.target_name)
    if apply and not allow_dirty and git_dirty(path, exclude=out):
        raise UsageError(f"{path}: the git tree has uncommitted changes; commit them or pass --allow-dirty")

    ruleset = load_rules(select=config.select, ignore=config.ignore, extend_select=config.extend_select)
    with progress.counter("scanning") as counter:
        scan = pipeline.analyze(path, resolved, config, ruleset, progress=counter)
    root = Path(scan.root)
    states = StateMemo()  # one for the loop's rounds and the agent's gate: a tree state is tested once
    run = _agent_run(root, scan, resolved, ruleset, config, exclusive, verify, agent, agent_replay, states)
    settings = pipeline.RewriteSettings(
        target=resolved,
        config=config,
        exclusive=exclusive,
        verify=verify,
        tune_topk=tune_topk,
        agent=pipeline.AgentMemo(run) if run is not None else None,
        progress=progress.note,
        steps=progress.steps,
        states=states,
    )
    result = pipeline.rewrite(root, scan, settings)
    texts = pipeline.stage(result, unverified=not verify) if apply else {}
    options = pipeline.report_options(result, exclusive=exclusive, apply=apply, tune_topk=tune_topk, root=str(root))
    extra = run.report_files() if run is not None else {}
    out_dir = pipeline.write_report(out, result, options, extra_files=extra)
    try:  # the report first: a report that cannot be written leaves the tree as it was
        pipeline.write_tree(root, texts, result.plan.originals if result.plan is not None else None)
    except PorterError as error:
        result.skipped.update({pid: f"not applied: {error}" for pid in result.applied})
        result.applied = set()
        pipeline.write_report(out, result, options, extra_files=extra)
        raise
    _print(result, options, str(out_dir), output_format, echo)
    if result.problem:
        raise PorterError(f"cannot verify: {result.problem}; nothing was applied (report: {out_dir}/report.md)")
    return result.exit_code


def _print(result, options, out_dir: str, output_format: str, echo) -> None:
    from porter.report import patches as patch_report

    plan, verdicts, applied, skipped = result.plan, result.verdicts, result.applied, result.skipped
    if output_format == "json":
        echo(patch_report.render_json(plan, verdicts, applied, skipped, options), nl=False)
    elif output_format == "github":
        echo(patch_report.render_github(plan, verdicts, applied, skipped, options), nl=False)
    else:
        echo(patch_report.render_text(plan, verdicts, applied, skipped, out_dir, options), nl=False)


def _agent_run(root: Path, scan, target, ruleset, config, exclusive, verify, mode, replay_dir, states):
    """The agent's part of the run, or None when no model is configured (offline, the default)."""
    from porter import pipeline
    from porter.discover import DiscoverOptions, discover
    from porter.remedy.agent import AgentSettings, client_for
    from porter.remedy.agent.hook import start_agent_run
    from porter.remedy.agent.loop import load_python_files

    settings = AgentSettings.from_config(
        config.table("agent"), f"{config.source or 'pyproject.toml'}: [tool.porter.agent]"
    )
    client = client_for(mode, settings, replay_dir)
    if client is None:
        return None
    docs = {rule_id: dict(info.docs) for rule_id, info in scan.rules.items()}
    files = load_python_files(root, [f.path for f in discover(root, DiscoverOptions()).files])
    check = pipeline.agent_verifier(root, target, config, states) if verify else None
    return start_agent_run(
        root, scan.findings, files, target, ruleset, client, settings, docs, exclusive, verify=check, config=config
    )


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("rewrite")(rewrite_command)
