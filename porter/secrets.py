"""Which environment values porter treats as secrets, and scrubbing them from text.

A secret is the value of OPENAI_API_KEY, of the agent's `api_key_env`, of any variable named in
`[tool.porter.agent] secret_env`, or of a variable whose name says it holds one (`*_API_KEY`,
`*_TOKEN`, `*SECRET*`, `*PASSWORD*`). Such values never reach a file porter writes, a report, or
the environment of a test command. Values shorter than MIN_SECRET_CHARS are not treated as
secrets: scrubbing "1" would mangle every report.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8
SECRET_NAME = re.compile(r"(^|_)(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(_|$)|SECRET", re.IGNORECASE)
_REGISTERED: set[str] = {"OPENAI_API_KEY"}


def register_secret_env(*names: str) -> None:
    """Treat these environment variables as secrets for the rest of the process (configured names)."""
    _REGISTERED.update(name for name in names if name)


def is_secret_name(name: str) -> bool:
    return name in _REGISTERED or bool(SECRET_NAME.search(name))


def secret_names(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return sorted(name for name in env if is_secret_name(name))


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret values now in the environment, longest first (so a value inside another goes last)."""
    env = os.environ if environ is None else environ
    values = {env[name] for name in secret_names(env) if len(env[name]) >= MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


def scrub(text: str, extra: list[str] | tuple[str, ...] = ()) -> str:
    """`text` with every secret value (and each of `extra`) replaced by [redacted]."""
    for secret in [*secret_values(), *(value for value in extra if len(value) >= MIN_SECRET_CHARS)]:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def contains_secret(text: str, extra: list[str] | tuple[str, ...] = ()) -> bool:
    return scrub(text, extra) != text


def without_secrets(environ: dict[str, str]) -> dict[str, str]:
    """A copy of an environment with every secret-named variable removed."""
    return {name: value for name, value in environ.items() if not is_secret_name(name)}
