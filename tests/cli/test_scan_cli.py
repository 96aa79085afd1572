"""`porter scan` through porter.cli.main: exit codes, formats on stdout, --output, errors."""

from __future__ import annotations

import json
import subprocess

import pytest

from porter.analyze import scan as scan_module
from porter.cli import main
from tests.scan_helpers import write_rules, write_tree


@pytest.fixture
def rules(tmp_path_factory):
    return str(write_rules(tmp_path_factory.mktemp("rules")))


@pytest.fixture
def tree(tmp_path):
    return write_tree(tmp_path / "repo")


def scan(*args):
    return main(["scan", *map(str, args)])


def test_exit_codes_follow_fail_on(tree, rules, capsys):
    assert scan(tree, "--rules", rules, "--no-cache") == 1  # PT990 is an error
    assert scan(tree, "--rules", rules, "--fail-on", "never") == 0
    assert scan(tree, "--rules", rules, "--ignore", "PT990") == 0  # only a warning left
    assert scan(tree, "--rules", rules, "--ignore", "PT990", "--fail-on", "warning") == 1
    assert scan(tree, "--rules", rules, "--select", "PT991,PT990", "--ignore", "PT99") == 0
    (tree / "pkg" / "sub0" / "sync.py").unlink()
    (tree / "pkg" / "sub0" / "smi.py").unlink()
    assert scan(tree, "--rules", rules, "--fail-on", "info") == 0
    capsys.readouterr()


def test_json_payload_alone_on_stdout(tree, rules, capsys):
    assert scan(tree, "--rules", rules, "--format", "json", "--target", "gfx942") == 1
    out = capsys.readouterr().out
    document = json.loads(out)
    assert document["target"] == "mi300x"
    assert [(f["rule"], f["path"], f["line"], f["column"]) for f in document["findings"]] == [
        ("PT991", "pkg/sub0/smi.py", 3, 17),
        ("PT990", "pkg/sub0/sync.py", 5, 5),
    ]


@pytest.mark.parametrize(
    "fmt, check",
    [
        ("sarif", lambda text: json.loads(text)["version"] == "2.1.0"),
        ("github", lambda text: text.startswith("::warning file=pkg/sub0/smi.py,line=3,")),
        ("markdown", lambda text: text.startswith("# porter scan: mi350x")),
        ("terminal", lambda text: "pkg/sub0/sync.py:5:5 error PT990" in text),
    ],
)
def test_output_file_is_written_and_stdout_stays_empty(tree, rules, capsys, tmp_path, fmt, check):
    target = tmp_path / "reports" / f"out.{fmt}"
    assert scan(tree, "--rules", rules, "--format", fmt, "--output", target) == 1
    assert capsys.readouterr().out == ""
    assert check(target.read_text(encoding="utf-8"))


def test_terminal_view_on_stdout(tree, rules, capsys):
    assert scan(tree, "--rules", rules, "--target", "mi355x") == 1
    out = capsys.readouterr().out
    assert "torch.cuda.synchronize() on mi355x" in out and "porter scan summary" in out


def test_statistics(tree, rules, capsys):
    assert scan(tree, "--rules", rules, "--statistics") == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["1", "PT990", "test-cuda-synchronize", "[error]"]
    assert lines[-1].split() == ["2", "total"]
    assert scan(tree, "--rules", rules, "--statistics", "--format", "json") == 1
    assert json.loads(capsys.readouterr().out)["total"] == 2


def test_usage_errors_exit_2(tree, rules, tmp_path, capsys):
    assert scan(tmp_path / "missing", "--rules", rules) == 2
    assert "missing: no such file or directory" in capsys.readouterr().err
    assert scan(tree, "--rules", rules, "--target", "h100x") == 2
    assert "unknown target 'h100x'" in capsys.readouterr().err
    assert scan(tree, "--rules", rules, "--format", "xml") == 2
    assert "--format 'xml'" in capsys.readouterr().err
    assert scan(tree, "--rules", rules, "--fail-on", "sometimes") == 2
    assert scan(tree, "--rules", rules, "--select", "PT5") == 2
    assert "matches no rule" in capsys.readouterr().err
    assert scan(tree, "--rules", rules, "-j", "0") == 2


def test_bad_config_exits_2_naming_file_and_key(tree, rules, capsys):
    (tree / "pyproject.toml").write_text("[tool.porter]\njobs = 'many'\n", encoding="utf-8")
    assert scan(tree, "--rules", rules) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml" in err and "[tool.porter] jobs" in err and "Traceback" not in err


def test_config_supplies_target_and_fail_on(tree, rules, capsys):
    (tree / "pyproject.toml").write_text('[tool.porter]\ntarget = "mi300x"\nfail_on = "never"\n', encoding="utf-8")
    assert scan(tree, "--rules", rules, "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["target"] == "mi300x"
    assert scan(tree, "--rules", rules, "--fail-on", "error", "--format", "json") == 1  # the flag wins
    capsys.readouterr()


def test_internal_error_is_one_line_and_a_hint(tree, rules, capsys, monkeypatch):
    def broken_scan(*args, **kwargs):  # stands in for a porter bug: no real input can be relied on to cause one
        raise RuntimeError("boom")

    monkeypatch.setattr(scan_module, "scan_tree", broken_scan)
    assert scan(tree, "--rules", rules) == 2
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "PORTER_DEBUG=1" in err and "Traceback" not in err
    monkeypatch.setenv("PORTER_DEBUG", "1")
    assert scan(tree, "--rules", rules) == 2
    assert "Traceback" in capsys.readouterr().err


def _json_findings(capsys):
    document = json.loads(capsys.readouterr().out)
    return document, [(f["rule"], f["path"]) for f in document["findings"]]  # (document, (rule, path) pairs)


def test_several_paths_report_paths_from_the_git_top_level(tree, rules, capsys, monkeypatch):
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    sub = tree / "pkg" / "sub0"
    # a file named twice (alone and inside a named directory) is reported once
    assert (
        scan(sub / "sync.py", sub, tree / "pkg" / "plain.py", "--rules", rules, "--format", "json", "--no-cache") == 1
    )
    _, findings = _json_findings(capsys)
    assert findings == [("PT991", "pkg/sub0/smi.py"), ("PT990", "pkg/sub0/sync.py")]
    monkeypatch.chdir(tree)  # pre-commit's way: relative names from the repository root
    assert scan("pkg/sub0/smi.py", "pkg/plain.py", "--rules", rules, "--format", "json", "--no-cache") == 0
    assert _json_findings(capsys)[1] == [("PT991", "pkg/sub0/smi.py")]


def test_several_paths_outside_git_start_from_their_common_directory(tmp_path, rules, capsys, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # even if the temporary folder lies in a repo
    tree = write_tree(tmp_path / "plain-dir")
    assert (
        scan(tree / "pkg" / "sub0" / "sync.py", tree / "pkg" / "sub0" / "smi.py", "--rules", rules, "--format", "json")
        == 1
    )
    assert _json_findings(capsys)[1] == [("PT991", "smi.py"), ("PT990", "sync.py")]
    config_dir = tree / "pkg" / "sub0"
    (config_dir / "pyproject.toml").write_text('[tool.porter]\ntarget = "mi355x"\n', encoding="utf-8")
    assert scan(config_dir / "sync.py", config_dir / "smi.py", "--rules", rules, "--format", "json") == 1
    assert json.loads(capsys.readouterr().out)["target"] == "mi355x"  # the shared root's config applies


def test_several_paths_one_missing_exits_2(tree, rules, capsys):
    assert scan(tree / "pkg", tree / "nope.py", "--rules", rules) == 2
    assert "nope.py: no such file or directory" in capsys.readouterr().err


def test_exit_zero_keeps_errors_at_2(tree, rules, capsys):
    assert scan(tree, "--rules", rules, "--exit-zero") == 0
    assert "PT990" in capsys.readouterr().out  # the findings are still reported
    assert scan(tree, "--rules", rules, "--exit-zero", "--target", "h100x") == 2
    assert scan(tree / "missing", "--rules", rules, "--exit-zero") == 2
    (tree / "pyproject.toml").write_text("[tool.porter]\njobs = 'many'\n", encoding="utf-8")
    assert scan(tree, "--rules", rules, "--exit-zero") == 2
    capsys.readouterr()


def test_cli_ignore_extends_the_configured_ignores(tree, rules, capsys):
    (tree / "pyproject.toml").write_text('[tool.porter]\nignore = ["PT991"]\n', encoding="utf-8")
    assert scan(tree, "--rules", rules, "--format", "json", "--fail-on", "info") == 1
    assert {rule for rule, _ in _json_findings(capsys)[1]} == {"PT990"}
    assert scan(tree, "--rules", rules, "--format", "json", "--ignore", "PT990", "--fail-on", "info") == 0
    assert _json_findings(capsys)[1] == []  # the configured PT991 ignore still holds
    assert scan(tree, "--rules", rules, "--format", "json", "--select", "PT991", "--fail-on", "info") == 1
    assert {rule for rule, _ in _json_findings(capsys)[1]} == {"PT991"}  # --select replaces, as in ruff
