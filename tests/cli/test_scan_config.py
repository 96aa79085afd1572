"""[tool.porter] loading: values, sub-tables, overrides and the errors that name file and key."""

from __future__ import annotations

import pytest

from porter.config import DEFAULT_MAX_FILE_BYTES, PorterConfig, find_config, load_config
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
    pyproject(
        tmp_path,
        """
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
""",
    )
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
    pyproject(
        tmp_path, '[tool.porter]\nselect = ["PT1", "PT2"]\nignore = ["PT116", "PT2"]\nextend_select = ["PT115"]\n'
    )
    config = load_config(tmp_path)
    assert config.with_overrides(ignore=("PT101", "PT116")).ignore == ("PT116", "PT2", "PT101")
    assert config.with_overrides(ignore=None).ignore == ("PT116", "PT2")
    fresh = config.with_overrides(select=("PT2",))  # ruff: the command line's select drops the file's ignores
    assert (fresh.select, fresh.ignore, fresh.extend_select) == (("PT2",), (), ())  # and its extend_select
    assert config.with_overrides(ignore=("PT101",)).extend_select == ("PT115",)
    assert config.with_overrides(select=("PT2",), extend_select=("PT209",)).extend_select == ("PT209",)
    assert config.with_overrides(select=("PT2",), ignore=("PT208",)).ignore == ("PT208",)


def test_malformed_toml_names_the_file(tmp_path):
    pyproject(tmp_path, "[tool.porter\ntarget = 'x'\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: malformed TOML"):
        load_config(tmp_path)


@pytest.mark.parametrize(
    "line, key, expected",
    [
        ("jobs = 'four'", "jobs", "a positive integer"),
        ("jobs = 0", "jobs", "a positive integer"),
        ("jobs = true", "jobs", "a positive integer"),
        ("max_file_bytes = -5", "max_file_bytes", "a positive integer"),
        ("select = [1, 2]", "select", "a list of strings"),
        ("exclude = 3", "exclude", "a list of strings"),
        ("fail_on = 'fatal'", "fail_on", "one of error, warning, info, never"),
        ("cache_dir = 7", "cache_dir", "a non-empty string"),
        ("cache_dir = '../elsewhere'", "cache_dir", "a relative path inside the repository"),
        ("cache_dir = '/var/cache/porter'", "cache_dir", "a relative path inside the repository"),
        ("cache_dir = '.git/porter'", "cache_dir", "outside .git"),
        ("target = 5", "target", "a target name"),
    ],
)
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
    for key in (
        "target",
        "select",
        "ignore",
        "fail_on",
        "exclude",
        "include",
        "jobs",
        "cache_dir",
        "shim_module",
        "max_file_bytes",
    ):
        assert key in message


def test_config_errors_are_usage_errors():
    assert issubclass(ConfigError, UsageError)


def test_misspelled_sub_table_and_sub_table_key_name_file_and_key(tmp_path):
    pyproject(tmp_path, "[tool.porter.verfy]\ntimeout = 60\n")
    with pytest.raises(
        ConfigError,
        match=r"pyproject.toml: unknown sub-table \[tool.porter.verfy\]; valid sub-tables: "
        r"\[tool.porter.verify\]",
    ):
        load_config(tmp_path)
    pyproject(tmp_path, "[tool.porter.verify]\ntimout = 60\n")
    with pytest.raises(
        ConfigError,
        match=r"pyproject.toml: \[tool.porter.verify\] unknown key\(s\) timout; valid keys: "
        r"test_cmd, timeout",
    ):
        load_config(tmp_path)


def test_nearest_pyproject_upward_wins(tmp_path):
    pyproject(tmp_path, '[tool.porter]\ntarget = "mi300x"\n')
    package = tmp_path / "packages" / "kernels"
    package.mkdir(parents=True)
    (tmp_path / "packages" / "pyproject.toml").write_text("[project]\nname = 'no-porter-table'\n", encoding="utf-8")
    assert load_config(package).target == "mi300x"  # a pyproject without [tool.porter] is passed over, as ruff does
    pyproject(package, '[tool.porter]\ntarget = "mi355x"\n')
    assert load_config(package).target == "mi355x" and load_config(package).source == str(package / "pyproject.toml")
    assert find_config(package / "ops.py") == package / "pyproject.toml"  # a file starts from its directory


def test_the_search_stops_at_the_git_top_level(tmp_path):
    pyproject(tmp_path, '[tool.porter]\ntarget = "mi300x"\n')  # the directory the repository was cloned into
    repo = tmp_path / "clone"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert find_config(repo / "src") is None and load_config(repo / "src") == PorterConfig()
    pyproject(repo, '[tool.porter]\ntarget = "mi355x"\n')
    assert load_config(repo / "src").target == "mi355x"


def test_config_flag_reads_that_file_only(tmp_path):
    pyproject(tmp_path, '[tool.porter]\ntarget = "mi300x"\n')
    chosen = tmp_path / "ci.toml"
    chosen.write_text('[tool.porter]\ntarget = "mi355x"\n', encoding="utf-8")
    assert load_config(tmp_path, chosen).target == "mi355x"
    with pytest.raises(UsageError, match="--config .*missing.toml: no such file"):
        load_config(tmp_path, tmp_path / "missing.toml")
    chosen.write_text("[project]\nname = 'x'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="has no \\[tool.porter\\] table"):
        load_config(tmp_path, chosen)


@pytest.mark.parametrize("command", ["scan", "rewrite", "verify"])
def test_every_command_that_reads_config_takes_config(tmp_path, command, capsys):
    from porter.cli import main

    (tmp_path / "pkg").mkdir()
    bad = tmp_path / "bad.toml"
    bad.write_text("[tool.porter]\ntargte = 'mi300x'\n", encoding="utf-8")
    assert main([command, str(tmp_path / "pkg"), "--config", str(bad)]) == 2
    assert f"{bad}: [tool.porter] unknown key 'targte'" in capsys.readouterr().err


def test_globs_of_a_config_found_upward_are_read_from_its_directory(tmp_path):
    from porter.analyze import load_rules
    from porter.analyze.scan import scan_tree
    from tests.scan_helpers import write_rules, write_tree

    pyproject(tmp_path, '[tool.porter]\nexclude = ["packages/kernels/vendored/**"]\n')
    package = tmp_path / "packages" / "kernels"
    write_tree(package)
    write_tree(package / "vendored")
    ruleset = load_rules([write_rules(tmp_path / "rules")])
    config = load_config(package)
    paths = {f.path for f in scan_tree(package, "mi350x", ruleset, config=config, use_cache=False).findings}
    assert paths == {"pkg/sub0/sync.py", "pkg/sub0/smi.py"}  # vendored/ excluded, as the repository's config says
