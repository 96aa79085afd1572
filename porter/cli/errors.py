"""What every subcommand does with an exception porter did not expect: one line and a hint
instead of a traceback (the traceback too with PORTER_DEBUG set), then exit code 2.

Kept apart from porter/cli/__init__.py, which imports the command modules that use it.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer

from porter.errors import PorterError

HINT = "this is a bug in porter; rerun with PORTER_DEBUG=1 for the traceback and please report it"


@contextmanager
def bugs_reported() -> Iterator[None]:
    """Around a command's body: porter's own errors pass through (main prints them with their exit code);
    any other exception is porter's bug, told in one line by report_internal_error."""
    try:
        yield
    except PorterError:
        raise
    except Exception as error:
        report_internal_error(error)


def report_internal_error(error: Exception) -> NoReturn:
    """Print `error` as porter's bug and raise typer.Exit(2); call it from the `except` block.
    An OSError (disk full, permission denied) is the machine's, not porter's: one line naming the
    path and the cause."""
    if os.environ.get("PORTER_DEBUG"):
        traceback.print_exception(type(error), error, error.__traceback__)
    if isinstance(error, OSError) and error.strerror:
        where = error.filename if error.filename is not None else "porter"
        typer.secho(f"porter: {where}: {error.strerror}", err=True, fg="red")
        raise typer.Exit(2) from None
    typer.secho(f"porter: internal error: {type(error).__name__}: {error}", err=True, fg="red")
    typer.secho(f"porter: {HINT}", err=True)
    raise typer.Exit(2) from None
