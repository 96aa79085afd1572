"""`[tool.porter]` configuration, found as ruff finds its own and overridden by flags.

The file is `--config PATH`, else the nearest pyproject.toml holding a `[tool.porter]` table, searched
from the scanned directory upward; inside a git work tree the search stops at its top level (a
repository's config never comes from the directory it was cloned into).

Scalar keys are validated here (type and allowed values) so a typo fails early with the file and
key named. Sub-tables (`[tool.porter.agent]`, `[tool.porter.verify]`, `[tool.porter.remedy]`) have
their names and keys checked here too, so a misspelling fails every command, not only the stage that
reads it; their values belong to those stages, readable with `PorterConfig.table(name)`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path, PurePosixPath
from typing import Any

from porter import toml as tomllib
from porter.errors import ConfigError, UsageError

PYPROJECT = "pyproject.toml"
FAIL_ON_CHOICES = ("error", "warning", "info", "never")
DEFAULT_TARGET = "mi350x"
DEFAULT_CACHE_DIR = ".porter-cache"
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
# The keys of each sub-table; the stage that reads one validates its values (and uses this list).
SUB_TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "verify": ("test_cmd", "timeout", "compile_timeout", "jobs", "compile_jobs", "cross_compile", "select_tests"),
    "agent": (
        "model",
        "base_url",
        "api_key_env",
        "timeout_s",
        "max_retries",
        "max_rounds",
        "max_calls",
        "max_tokens",
        "max_wall_s",
        "max_reply_bytes",
        "temperature",
        "secret_env",
    ),
    "remedy": ("patch_tests",),
}


@dataclass(frozen=True)
class PorterConfig:
    target: str | None = None
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()  # added to the default (or selected) rules, e.g. opt-in rule ids
    ignore: tuple[str, ...] = ()
    fail_on: str = "error"
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    jobs: int | None = None
    cache_dir: str = DEFAULT_CACHE_DIR
    shim_module: str | None = None
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # Platform statements (mypy's always_true/always_false): predicates true only on NVIDIA / only on ROCm,
    # by qualified name (`mypkg.utils.is_cuda`) or bare name (`IS_NVIDIA`), and globs of paths never loaded
    # on the target (another backend's folder). See porter.analyze.project.
    nvidia_only: tuple[str, ...] = ()
    rocm_only: tuple[str, ...] = ()
    nvidia_only_paths: tuple[str, ...] = ()
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)  # sub-tables, by name
    source: str | None = None  # the pyproject.toml the values came from, for messages

    def table(self, name: str) -> dict[str, Any]:
        """A sub-table such as `agent` or `verify` ({} when absent)."""
        return dict(self.tables.get(name, {}))

    def with_overrides(self, **flags: Any) -> PorterConfig:
        """Command-line values win over the file; None (flag not given) keeps the file's value.

        Rule selection as ruff resolves it: `ignore` adds to the file's list, but a command-line
        `select` starts afresh, so only the command line's own ignores and extend_select apply to it.
        """
        given = {key: value for key, value in flags.items() if value is not None}
        unknown = set(given) - set(SCALAR_KEYS)
        if unknown:
            raise UsageError(f"unknown configuration override(s): {', '.join(sorted(unknown))}")
        checked = {key: _check(key, value, "command line") for key, value in given.items()}
        if "select" in checked or "ignore" in checked:
            kept = () if "select" in checked else self.ignore
            checked["ignore"] = tuple(dict.fromkeys((*kept, *checked.get("ignore", ()))))
        if "select" in checked:
            checked.setdefault("extend_select", ())
        return replace(self, **checked)

    @property
    def target_name(self) -> str:
        return self.target or DEFAULT_TARGET

    def cache_path(self, root: str | Path) -> Path | None:
        """`cache_dir` under `root`; None when it resolves outside it (a symbolic link out of the tree):
        porter writes, and prunes, only inside the repository it ports."""
        path = Path(root) / self.cache_dir
        inside = Path(os.path.realpath(root))
        return path if inside in Path(os.path.realpath(path)).parents else None


SCALAR_KEYS = tuple(f.name for f in fields(PorterConfig) if f.name not in ("tables", "source"))


def load_config(root: str | Path, config_file: str | Path | None = None) -> PorterConfig:
    """The `[tool.porter]` table of `config_file`, else of the nearest pyproject.toml upward from `root`
    (find_config); defaults when there is none."""
    if config_file is not None:
        path = Path(config_file)
        if not path.is_file():
            raise UsageError(f"--config {path}: no such file")
        if _read_table(path) is None:
            raise ConfigError(f"--config {path}: the file has no [tool.porter] table")
    else:
        found = find_config(Path(root))
        if found is None:
            return PorterConfig()
        path = found
    return _parse_table(_read_table(path) or {}, path)


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.porter] table in `start` (a file's directory) or above it,
    stopping at the git work tree's top level (the directory holding `.git`)."""
    directory = Path(os.path.abspath(start))
    directory = directory if directory.is_dir() else directory.parent
    for candidate in (directory, *directory.parents):
        path = candidate / PYPROJECT
        if path.is_file() and _read_table(path) is not None:
            return path
        if (candidate / ".git").exists():
            return None
    return None


def _parse_table(table: dict[str, Any], path: Path) -> PorterConfig:
    values: dict[str, Any] = {}
    tables: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        if key in SCALAR_KEYS:
            values[key] = _check(key, value, str(path))
        elif isinstance(value, dict):
            tables[key] = _check_sub_table(key, value, path)
        else:
            valid = ", ".join(SCALAR_KEYS)
            raise ConfigError(
                f"{path}: [tool.porter] unknown key {key!r}; valid keys: {valid} (or a [tool.porter.<name>] sub-table)"
            )
    return PorterConfig(**values, tables=tables, source=str(path))


def _check_sub_table(name: str, table: dict[str, Any], path: Path) -> dict[str, Any]:
    if name not in SUB_TABLE_KEYS:
        raise ConfigError(
            f"{path}: unknown sub-table [tool.porter.{name}]; valid sub-tables: "
            + ", ".join(f"[tool.porter.{known}]" for known in SUB_TABLE_KEYS)
        )
    unknown = sorted(set(table) - set(SUB_TABLE_KEYS[name]))
    if unknown:
        raise ConfigError(
            f"{path}: [tool.porter.{name}] unknown key(s) {', '.join(unknown)}; "
            f"valid keys: {', '.join(SUB_TABLE_KEYS[name])}"
        )
    return table


def _read_table(path: Path) -> dict[str, Any] | None:
    """The file's [tool.porter] table; None when it has none."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: malformed TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    tool = document.get("tool", {})
    table = tool.get("porter") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.porter must be a table, got {type(table).__name__}")
    return table


def _check(key: str, value: Any, where: str) -> Any:
    """Validate one scalar key; returns the value in the dataclass's type."""

    def fail(expected: str) -> ConfigError:
        return ConfigError(f"{where}: [tool.porter] {key}: expected {expected}, got {value!r}")

    if key in (
        "select",
        "extend_select",
        "ignore",
        "exclude",
        "include",
        "nvidia_only",
        "rocm_only",
        "nvidia_only_paths",
    ):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
            raise fail("a list of strings")
        return tuple(item.strip() for item in value if item.strip())
    if key in ("jobs", "max_file_bytes"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise fail("a positive integer")
        return value
    if key == "fail_on":
        if value not in FAIL_ON_CHOICES:
            raise fail("one of " + ", ".join(FAIL_ON_CHOICES))
        return value
    if key == "cache_dir":
        if not isinstance(value, str) or not value:
            raise fail("a non-empty string")
        parts = PurePosixPath(value.replace("\\", "/")).parts
        if not parts or parts[0] == "/" or ".." in parts or ".git" in parts:
            raise fail("a relative path inside the repository, outside .git")
        return value
    if key == "target":
        if not isinstance(value, str):
            raise fail("a target name or gfx arch")
        _check_target(value, where)
        return value
    if not isinstance(value, str) or not value:
        raise fail("a non-empty string")
    return value


def _check_target(name: str, where: str) -> None:
    from porter.targets import get_target

    try:
        get_target(name)
    except UsageError as error:
        raise ConfigError(f"{where}: [tool.porter] target: {error}") from None
