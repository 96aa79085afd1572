"""`[tool.porter]` configuration: read from the scanned root's pyproject.toml, overridden by flags.

Scalar keys are validated here (type and allowed values) so a typo fails early with the file and
key named. Sub-tables (`[tool.porter.agent]`, `[tool.porter.verify]`, ...) belong to the stages that
use them: they are passed through untouched as dicts, readable with `PorterConfig.table(name)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from porter import toml as tomllib
from porter.errors import ConfigError, UsageError

PYPROJECT = "pyproject.toml"
FAIL_ON_CHOICES = ("error", "warning", "info", "never")
DEFAULT_TARGET = "mi350x"
DEFAULT_CACHE_DIR = ".porter-cache"
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024


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
        """Command-line values win over the file; None (flag not given) keeps the file's value."""
        given = {key: value for key, value in flags.items() if value is not None}
        unknown = set(given) - set(SCALAR_KEYS)
        if unknown:
            raise UsageError(f"unknown configuration override(s): {', '.join(sorted(unknown))}")
        checked = {key: _check(key, value, "command line") for key, value in given.items()}
        return replace(self, **checked)

    @property
    def target_name(self) -> str:
        return self.target or DEFAULT_TARGET


SCALAR_KEYS = tuple(f.name for f in fields(PorterConfig) if f.name not in ("tables", "source"))


def load_config(root: str | Path) -> PorterConfig:
    """The `[tool.porter]` table of `root/pyproject.toml`; defaults when the file or table is absent."""
    path = Path(root) / PYPROJECT
    if not path.is_file():
        return PorterConfig()
    table = _read_table(path)
    values: dict[str, Any] = {}
    tables: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        if key in SCALAR_KEYS:
            values[key] = _check(key, value, str(path))
        elif isinstance(value, dict):
            tables[key] = value
        else:
            valid = ", ".join(SCALAR_KEYS)
            raise ConfigError(
                f"{path}: [tool.porter] unknown key {key!r}; valid keys: {valid} (or a [tool.porter.<name>] sub-table)"
            )
    return PorterConfig(**values, tables=tables, source=str(path))


def _read_table(path: Path) -> dict[str, Any]:
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: malformed TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    tool = document.get("tool", {})
    table = tool.get("porter", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.porter must be a table, got {type(table).__name__}")
    return table


def _check(key: str, value: Any, where: str) -> Any:
    """Validate one scalar key; returns the value in the dataclass's type."""
    def fail(expected: str) -> ConfigError:
        return ConfigError(f"{where}: [tool.porter] {key}: expected {expected}, got {value!r}")

    if key in ("select", "extend_select", "ignore", "exclude", "include", "nvidia_only", "rocm_only",
               "nvidia_only_paths"):
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
