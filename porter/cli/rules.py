"""`porter rule ID` and `porter rules`: the rule catalog as ruff shows its own (`ruff rule`)."""

from __future__ import annotations

import typer

from porter.errors import UsageError

RULES_FORMATS = ("text", "json", "markdown")


def _catalog() -> list:
    from porter.analyze import load_rules
    from porter.analyze.rules import OPT_IN
    from porter.report.rules import BUILTIN_RULES, rule_infos

    infos = rule_infos(load_rules(extend_select=[OPT_IN]))  # the whole catalog, opt-in rules marked
    return sorted((info for rule_id, info in infos.items() if rule_id not in BUILTIN_RULES), key=lambda i: i.id)


def rule_command(
    rule_id: str = typer.Argument(..., help="A rule id (PT101) or name (num-warps-32).", show_default=False),
    output_format: str = typer.Option("text", "--format", help="text | json | markdown."),
) -> None:
    """Explain one rule: what it finds, why it matters on AMD, what to use instead."""
    from porter.report import rule_docs

    wanted = rule_id.strip()
    match = [info for info in _catalog() if wanted.upper() == info.id or wanted == info.name]
    if not match:
        raise UsageError(f"no rule {rule_id!r}: `porter rules` lists them")
    if output_format not in RULES_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(RULES_FORMATS)}, got {output_format!r}")
    info = match[0]
    render = {
        "text": rule_docs.rule_text,
        "markdown": lambda i: i.help_markdown() + "\n",
        "json": lambda i: rule_docs.rules_json([i]),
    }[output_format]
    typer.echo(render(info), nl=False)


def rules_command(
    output_format: str = typer.Option("text", "--format", help="text | json | markdown (the docs/rules.md page)."),
) -> None:
    """List every rule: id, severity, fix kind, name and summary."""
    from porter.report import rule_docs

    if output_format not in RULES_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(RULES_FORMATS)}, got {output_format!r}")
    render = {"text": rule_docs.rules_table, "json": rule_docs.rules_json, "markdown": rule_docs.rules_markdown}
    typer.echo(render[output_format](_catalog()), nl=False)


def register(app: typer.Typer) -> None:
    app.command("rule")(rule_command)
    app.command("rules")(rules_command)
