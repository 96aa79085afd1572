"""The one Jinja environment porter renders shims with (templates/ at the repository root, or the
copy packaged inside the wheel)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from porter.errors import PorterError


def templates_dir() -> Path:
    source_tree = Path(__file__).resolve().parent.parent / "templates"
    return source_tree if source_tree.is_dir() else Path(__file__).resolve().parent / "_data" / "templates"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,  # a missing value is a bug, not an empty string
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # renders Python source, not HTML
    )


def render_template(name: str, **values) -> str:
    try:
        return environment().get_template(name).render(**values)
    except jinja2.TemplateError as error:
        raise PorterError(f"template {name}: {error}") from None
