"""Verification options: flags over `[tool.porter.verify]` over defaults."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from porter.config import SUB_TABLE_KEYS
from porter.errors import ConfigError

DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class VerifyOptions:
    device: str = "cpu"  # cpu: interpreter replay + redirection; cuda: the real device, as the code is
    test_cmd: tuple[str, ...] = ()  # () -> `python -m pytest`
    timeout_s: float = 600.0  # per test-command run
    compile_timeout_s: float = 180.0  # per kernel compile subprocess
    jobs: int | str = "auto"  # pytest-xdist workers ("auto", an int, 0 = no xdist)
    compile_jobs: int = 2  # parallel compile processes
    cross_compile: bool = True
    select_tests: bool = True  # import-graph selection; False: the full suite every run
    cache_dir: Path | None = None  # compile cache; None: <repo>/<[tool.porter] cache_dir>/verify
    keep_workspace: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)
    configured: bool = False  # [tool.porter] already applied (perhaps from --config): the verifier must not re-read it

    def with_porter_config(self, config: Any, repo: Path) -> VerifyOptions:
        """Apply a PorterConfig: its `[tool.porter.verify]` table and the compile cache under its cache_dir."""
        options = self.with_config(config.table("verify"), config.source or "pyproject.toml")
        inside = config.cache_path(Path(repo).resolve())
        cache_dir = options.cache_dir or (inside / "verify" if inside is not None else None)
        return replace(options, cache_dir=cache_dir, configured=True)

    def with_config(self, table: dict[str, Any], source: str = "pyproject.toml") -> VerifyOptions:
        """Fill the fields still at their defaults from a `[tool.porter.verify]` table."""
        known = set(SUB_TABLE_KEYS["verify"])
        unknown = set(table) - known
        if unknown:
            raise ConfigError(
                f"{source}: [tool.porter.verify] unknown key(s) {', '.join(sorted(unknown))}; "
                f"valid keys: {', '.join(sorted(known))}"
            )
        updates: dict[str, Any] = {}
        if "test_cmd" in table and not self.test_cmd:
            updates["test_cmd"] = parse_test_cmd(table["test_cmd"], f"{source}: [tool.porter.verify] test_cmd")
        for key, attr in (("timeout", "timeout_s"), ("compile_timeout", "compile_timeout_s")):
            if key in table:
                value = table[key]
                if (
                    not isinstance(value, (int, float))
                    or isinstance(value, bool)
                    or not math.isfinite(value)
                    or value <= 0
                ):
                    raise ConfigError(
                        f"{source}: [tool.porter.verify] {key} must be a positive finite number of "
                        f"seconds, got {value!r}"
                    )
                if getattr(self, attr) == getattr(VerifyOptions, attr):
                    updates[attr] = float(value)
        for key in ("cross_compile", "select_tests"):
            if key in table:
                if not isinstance(table[key], bool):
                    raise ConfigError(f"{source}: [tool.porter.verify] {key} must be true or false")
                updates[key] = table[key]
        for key in ("jobs", "compile_jobs"):
            if key in table:
                value = table[key]
                if not (value == "auto" and key == "jobs") and (not isinstance(value, int) or value < 0):
                    raise ConfigError(
                        f"{source}: [tool.porter.verify] {key} must be a non-negative integer"
                        + (' or "auto"' if key == "jobs" else "")
                    )
                updates[key] = value
        return replace(self, **updates)


def parse_test_cmd(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            parts = shlex.split(value)
        except ValueError as error:
            raise ConfigError(f"{where}: cannot parse {value!r}: {error}") from None
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = list(value)
    else:
        raise ConfigError(f"{where}: expected a command string or a list of strings")
    if not parts:
        raise ConfigError(f"{where}: the test command is empty")
    return tuple(parts)
