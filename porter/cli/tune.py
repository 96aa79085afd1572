"""`porter tune` (being built: registers nothing yet)."""

import typer


def register(app: typer.Typer) -> None:
    """Add the command to the app."""
