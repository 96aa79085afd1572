"""The `porter` command line. Each subcommand lives in its own module beside this one and
registers itself on the shared Typer app; this module only wires them and maps errors to exit codes.

Exit codes (ruff's convention): 0 clean, 1 findings at or above --fail-on or a rejected patch,
2 usage, configuration or internal error.
"""

from __future__ import annotations

import sys

import typer

from porter import __version__
from porter.errors import PorterError

app = typer.Typer(
    name="porter",
    help="Port CUDA-flavoured PyTorch and Triton code to AMD Instinct GPUs and make it fast there.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"porter {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """porter: scan, rewrite, verify, tune and plan for AMD Instinct targets."""


def _register_commands() -> None:
    from porter.cli import plan, rewrite, rules, scan, targets, tune, verify

    for module in (scan, rewrite, verify, tune, plan, targets, rules):
        module.register(app)


_register_commands()


def main(argv: list[str] | None = None) -> int:
    """Console entry point: run the app, turning porter's errors into a message and exit code 2.

    Typer's standalone mode already maps usage errors to exit 2 and `typer.Exit(code)` to its code.
    """
    try:
        app(args=argv, prog_name="porter")
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except PorterError as error:
        typer.secho(f"porter: error: {error}", err=True, fg="red")
        return error.exit_code
    except KeyboardInterrupt:
        typer.secho("porter: interrupted", err=True, fg="red")
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
