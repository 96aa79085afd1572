"""[tool.porter] loading: values, sub-tables, overrides and the errors that name file and key."""

from __future__ import annotations

import pytest

from porter.config import DEFAULT_MAX_FILE_BYTES, PorterConfig, load_config
from porter.errors import ConfigError, UsageError


def pyproject(tmp_path, body: str):
    (tmp_path / "pyproject.toml").write_text(body, encoding="utf-8")
    return tmp_path


def test_defaults_without_pyproject_or_table(tmp_path):
    assert load_config(tmp_path) == PorterConfig()
    pyproject(tmp_path, "[project]\nname = 'x'\n")
    config = load_config(tmp_path)
    assert config.target_name == "mi350x" and config.fail_on == "error"
    assert config.max_file_bytes == DEFAULT_MAX_FILE_BYTES == 2 * 1024 * 1024


def test_all_keys_and_sub_tables(tmp_path):
    pyproject(tmp_path, """
[tool.porter]
target = "gfx942"
select = ["PT1", "PT201"]
ignore = ["PT116"]
fail_on = "warning"
exclude = ["legacy/"]
include = ["src/**"]
jobs = 3
cache_dir = ".cache/porter"
shim_module = "pkg._porter_shim"
max_file_bytes = 1000

[tool.porter.agent]
model = "qwen"
max_rounds = 3

[tool.porter.verify]
timeout = 60
""")
    config = load_config(tmp_path)
    assert config.target == "gfx942" and config.select == ("PT1", "PT201") and config.ignore == ("PT116",)
    assert config.fail_on == "warning" and config.exclude == ("legacy/",) and config.include == ("src/**",)
    assert config.jobs == 3 and config.cache_dir == ".cache/porter" and config.shim_module == "pkg._porter_shim"
    assert config.max_file_bytes == 1000
    assert config.table("agent") == {"model": "qwen", "max_rounds": 3}
    assert config.table("verify") == {"timeout": 60} and config.table("tune") == {}
    assert config.source.endswith("pyproject.toml")


def test_flags_override_file_values(tmp_path):
    pyproject(tmp_path, '[tool.porter]\ntarget = "mi300x"\nselect = ["PT1"]\njobs = 4\n')
    config = load_config(tmp_path).with_overrides(target="mi355x", select=None, jobs=1, fail_on="never")
    assert (config.target, config.select, config.jobs, config.fail_on) == ("mi355x", ("PT1",), 1, "never")
    with pytest.raises(ConfigError, match="command line.*fail_on"):
        config.with_overrides(fail_on="sometimes")


def test_cli_ignore_adds_to_the_configured_list_and_cli_select_starts_afresh(tmp_path):
    pyproject(tmp_path, '[tool.porter]\nselect = ["PT1", "PT2"]\nignore = ["PT116", "PT2"]\n')
    config = load_config(tmp_path)
    assert config.with_overrides(ignore=("PT101", "PT116")).ignore == ("PT116", "PT2", "PT101")
    assert config.with_overrides(ignore=None).ignore == ("PT116", "PT2")
    fresh = config.with_overrides(select=("PT2",))  # ruff: the command line's select drops the file's ignores
    assert (fresh.select, fresh.ignore) == (("PT2",), ())
    assert config.with_overrides(select=("PT2",), ignore=("PT208",)).ignore == ("PT208",)


def test_malformed_toml_names_the_file(tmp_path):
    pyproject(tmp_path, "[tool.porter\ntarget = 'x'\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: malformed TOML"):
        load_config(tmp_path)


@pytest.mark.parametrize("line, key, expected", [
    ("jobs = 'four'", "jobs", "a positive integer"),
    ("jobs = 0", "jobs", "a positive integer"),
    ("jobs = true", "jobs", "a positive integer"),
    ("max_file_bytes = -5", "max_file_bytes", "a positive integer"),
    ("select = [1, 2]", "select", "a list of strings"),
    ("exclude = 3", "exclude", "a list of strings"),
    ("fail_on = 'fatal'", "fail_on", "one of error, warning, info, never"),
    ("cache_dir = 7", "cache_dir", "a non-empty string"),
    ("target = 5", "target", "a target name"),
])
def test_wrong_types_name_file_and_key(tmp_path, line, key, expected):
    pyproject(tmp_path, f"[tool.porter]\n{line}\n")
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    message = str(error.value)
    assert "pyproject.toml" in message and f"[tool.porter] {key}" in message and expected in message


def test_unknown_target_is_a_config_error(tmp_path):
    pyproject(tmp_path, "[tool.porter]\ntarget = 'gfx1234'\n")
    with pytest.raises(ConfigError, match=r"\[tool.porter\] target: unknown target 'gfx1234'"):
        load_config(tmp_path)


def test_unknown_key_lists_the_valid_ones(tmp_path):
    pyproject(tmp_path, "[tool.porter]\ntargte = 'mi300x'\n")
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    message = str(error.value)
    assert "unknown key 'targte'" in message
    for key in ("target", "select", "ignore", "fail_on", "exclude", "include", "jobs", "cache_dir",
                "shim_module", "max_file_bytes"):
        assert key in message


def test_config_errors_are_usage_errors():
    assert issubclass(ConfigError, UsageError)
