"""`porter rewrite PATH --target T`: turn findings into reviewable patches, verify them, optionally apply.

Without --apply nothing in the scanned tree is touched: patches and the report go to --out
(default ./porter-report). With --apply only accepted patches are written, all-or-nothing.
Exit codes: 0 every patch accepted (or unverified), 1 any patch rejected, 2 usage or internal error.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import typer

from porter.cli.errors import report_internal_error
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
    exclusive: bool = typer.Option(False, "--exclusive", help="Write the target's values directly (drop the NVIDIA branch)."),
    output_format: str = typer.Option("text", "--format", help="text | json | github (summary on stdout)."),
    select: list[str] = typer.Option(None, "--select", help="Rule ids/prefixes to run (comma list, repeatable)."),
    ignore: list[str] = typer.Option(None, "--ignore", help="Rule ids/prefixes to skip (comma list, repeatable)."),
    no_verify: bool = typer.Option(False, "--no-verify", help="Skip verification; patches are marked unverified."),
    tune: str = typer.Option(None, "--tune", help="topk=N: keep the N best model-ranked configs per shape bucket."),
    agent: str = typer.Option(None, "--agent", help="none (default) | openai | replay: who proposes fixes no codemod can make."),
    agent_replay: Path = typer.Option(None, "--agent-replay", help="With --agent replay: a saved report's agent/ directory."),
) -> None:
    """Rewrite CUDA-flavoured code for the target: codemods, the porter shim, and a report of the rest."""
    try:
        code = run_rewrite(
            path, target=target, out=out, apply=apply, allow_dirty=allow_dirty, exclusive=exclusive,
            output_format=output_format, select=_split(select), ignore=_split(ignore), verify=not no_verify,
            tune_topk=parse_tune(tune), agent=agent, agent_replay=agent_replay,
        )
    except PorterError:
        raise
    except Exception as error:
        report_internal_error(error)
    raise typer.Exit(code)


def git_dirty(root: Path, exclude: Path | None = None) -> bool | None:
    """True when `git status --porcelain` lists changes; None when root is not in a git work tree.
    `exclude`: porter's own report directory when it lies inside the tree (a previous run's report)."""
    try:
        inside = subprocess.run(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return None
    spec = ["."]
    if exclude is not None:
        try:
            spec.append(f":(exclude){exclude.resolve().relative_to(root.resolve()).as_posix()}")
        except ValueError:
            pass  # the report goes outside the tree
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", *spec],
                            capture_output=True, text=True, timeout=60)
    return bool(status.stdout.strip())


def run_rewrite(path: Path, *, target=None, out: Path = Path("porter-report"), apply=False, allow_dirty=False,
                exclusive=False, output_format="text", select=None, ignore=None, verify=True, tune_topk=None,
                agent=None, agent_replay=None, echo=typer.echo) -> int:
    """The rewrite command without Typer: returns the exit code (raises PorterError for exit 2)."""
    from porter.analyze import load_rules
    from porter.analyze.scan import scan_tree
    from porter.config import load_config
    from porter.remedy.patches import compose, write_files_atomically
    from porter.remedy.planner import PlanOptions, plan_patches
    from porter.report import patches as patch_report
    from porter.report.report_dir import write_report_dir
    from porter.targets import get_target

    if output_format not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, got {output_format!r}")
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory (rewrite works on a repository or package directory)")
    config = load_config(path).with_overrides(target=target, select=select, ignore=ignore)
    resolved = get_target(config.target_name)
    if apply and not allow_dirty and git_dirty(path, exclude=out):
        raise UsageError(f"{path}: the git tree has uncommitted changes; commit them or pass --allow-dirty")

    ruleset = load_rules(select=config.select, ignore=config.ignore)
    result = scan_tree(path, resolved, ruleset, config=config)
    root = Path(result.root)
    docs = {rule_id: dict(info.docs) for rule_id, info in result.rules.items()}
    safety = {rule_id: info.safety or "safe" for rule_id, info in result.rules.items()}
    agent_run = _agent_run(root, result, resolved, ruleset, config, docs, exclusive, verify, agent, agent_replay)
    plan = plan_patches(root, result.findings, resolved, PlanOptions(
        exclusive=exclusive, shim_module=config.shim_module, config_source=config.source, tune_topk=tune_topk,
        rule_docs=docs, rule_safety=safety, agent=agent_run.hook if agent_run else None))

    verdicts, verification = _verify(root, plan, resolved, verify, config)
    accepted = {p.id for p in plan.patches if p.id not in verdicts or verdicts[p.id].accepted}
    applied: set[str] = set()
    skipped: dict[str, str] = {p.id: "rejected by the verifier" for p in plan.patches if p.id not in accepted}
    if apply:
        texts, not_applied = compose(plan.patches, plan.originals, accepted)
        write_files_atomically(root, texts)
        skipped.update(not_applied)
        applied = accepted - set(not_applied)

    options = {"exclusive": exclusive, "apply": apply, "verification": verification, "tune_topk": tune_topk,
               "root": str(root)}
    out_dir = write_report_dir(out, plan, verdicts, applied, skipped, options, scan_result=result)
    if agent_run:
        agent_run.save(out_dir)
    if output_format == "json":
        echo(patch_report.render_json(plan, verdicts, applied, skipped, options), nl=False)
    elif output_format == "github":
        echo(patch_report.render_github(plan, verdicts, applied, skipped), nl=False)
    else:
        echo(patch_report.render_text(plan, verdicts, applied, skipped, str(out_dir)), nl=False)
    rejected = any(not v.accepted for v in verdicts.values())
    return 1 if rejected else 0


def _agent_run(root: Path, result, target, ruleset, config, docs, exclusive, verify, mode, replay_dir):
    """The agent's part of the run, or None when no model is configured (offline, the default)."""
    from porter.discover import DiscoverOptions, discover
    from porter.remedy.agent import AgentSettings, client_for
    from porter.remedy.agent.hook import start_agent_run
    from porter.remedy.agent.loop import load_python_files

    settings = AgentSettings.from_config(config.table("agent"), f"{config.source or 'pyproject.toml'}: [tool.porter.agent]")
    client = client_for(mode, settings, replay_dir)
    if client is None:
        return None
    files = load_python_files(root, [f.path for f in discover(root, DiscoverOptions()).files])
    check = None
    if verify:
        from porter.verify import VerifyOptions, verify_patches

        options = VerifyOptions().with_config(config.table("verify"), config.source or "pyproject.toml")
        check = lambda patch: verify_patches(root, [patch], target, options)[0]  # noqa: E731
    return start_agent_run(root, result.findings, files, target, ruleset, client, settings, docs, exclusive,
                           verify=check, config=config)


def _verify(root: Path, plan, target, verify: bool, config) -> tuple[dict, str]:
    """Verdicts by patch id from porter.verify, and a line saying how verification went."""
    if not verify:
        return {}, "skipped (--no-verify): patches are unverified"
    if not plan.patches:
        return {}, "nothing to verify"
    try:
        from porter.verify import VerifyOptions, verify_patches
    except ImportError:
        return {}, "verifier not available in this build: patches are unverified"
    options = VerifyOptions().with_config(config.table("verify"), config.source or "pyproject.toml")
    try:
        verdicts = verify_patches(root, plan.patches, target, options)
    except PorterError:
        raise
    except Exception as error:  # the verifier failing is not a verdict on the patches: keep them unverified
        typer.secho(f"porter: warning: verification failed ({type(error).__name__}: {error}); "
                    "patches are unverified", err=True, fg="yellow")
        return {}, f"failed ({type(error).__name__}): patches are unverified"
    return {v.patch_id: v for v in verdicts}, "porter verify (replayed tests and cross-compiled kernels)"


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("rewrite")(rewrite_command)
