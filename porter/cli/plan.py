"""`porter plan`: the co-design advisor.

    porter plan MODEL.yaml --from b200 --to mi350x [--gpus N] [--out DIR] [--format md|json]
    porter plan --extract REPO [--out DIR]

The first form models memory and step time of the recipe in MODEL.yaml on both targets, lists the
proposals that use the target's strengths and the combined plan's speedup over a direct port;
it prints markdown (default) or JSON, and with --out writes plan.md, plan.json and plan.png there.
The second drafts MODEL.yaml from the code (printed, or written to DIR/model.yaml).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import typer

from porter.cli.errors import bugs_reported
from porter.errors import UsageError


def plan_command(
    model: Path = typer.Argument(None, help="Model description (YAML).", show_default=False),
    source: str = typer.Option("b200", "--from", help="Target the recipe runs on today."),
    target: str = typer.Option("mi350x", "--to", help="Target to port to."),
    gpus: int = typer.Option(None, "--gpus", min=1, help="Override the description's GPU count."),
    out: Path = typer.Option(None, "--out", help="Write plan.md, plan.json and plan.png into this directory."),
    output_format: str = typer.Option("md", "--format", help="What to print: md | json."),
    extract_repo: Path = typer.Option(None, "--extract", help="Draft the description from this repository's code."),
) -> None:
    """Model memory and step time on both targets and propose co-design changes."""
    with bugs_reported():
        _plan(model, source, target, gpus, out, output_format, extract_repo)


def _plan(model, source, target, gpus, out, output_format, extract_repo) -> None:
    if out is not None and out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    if extract_repo is not None:
        _extract(extract_repo, out)
        return
    if model is None:
        raise UsageError("porter plan: give a MODEL.yaml (or --extract REPO to draft one)")
    if output_format not in ("md", "json"):
        raise UsageError(f"--format: {output_format!r} is not one of md, json")
    from porter.plan.model import MAX_GPUS, load_model
    from porter.plan.proposals import co_design
    from porter.plan.report import to_json, to_markdown, write_report
    from porter.targets import get_target

    desc = load_model(model)
    if gpus is not None:
        if gpus > MAX_GPUS:
            raise UsageError(f"--gpus: {gpus} is out of range, must be [1, {MAX_GPUS}]")
        desc = desc.replace(gpus=gpus)
    plan = co_design(desc, get_target(source), get_target(target))
    if out is not None:
        written = write_report(plan, out)
        if "png" not in written:
            typer.secho("porter plan: matplotlib is not installed: chart skipped (pip install porter[plot])", err=True)
        for path in written.values():
            typer.secho(f"wrote {path}", err=True)
    typer.echo(json.dumps(to_json(plan), indent=2) if output_format == "json" else to_markdown(plan))


def _extract(repo: Path, out: Path | None) -> None:
    from porter.plan.extract import extract, render_yaml

    text = render_yaml(extract(repo), repo.resolve().name)
    if out is None:
        typer.echo(text, nl=False)
        return
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.yaml"
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".model.yaml.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    typer.secho(f"wrote {path}", err=True)


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
    app.command("plan")(plan_command)
