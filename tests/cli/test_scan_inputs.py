"""`porter scan -` (stdin, --stdin-filename) and `--files-from`: what editors, pipes and CI hand porter."""

from __future__ import annotations

import io
import json

import pytest

from porter.cli import main
from porter.cli.scan import run_scan
from porter.errors import UsageError
from tests.scan_helpers import SMI_FILE, SYNC_FILE, write_rules, write_tree


@pytest.fixture
def rules(tmp_path_factory):
    return str(write_rules(tmp_path_factory.mktemp("rules")))


def json_scan(capsys, *args, stdin: str | None = None, monkeypatch=None) -> tuple[int, dict]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["scan", *map(str, args), "--format", "json", "--no-cache"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_stdin_source_reported_under_stdin_filename(tmp_path, rules, capsys, monkeypatch):
    code, report = json_scan(
        capsys,
        "-",
        "--stdin-filename",
        tmp_path / "pkg" / "wait.py",
        "--rules",
        rules,
        stdin=SYNC_FILE,
        monkeypatch=monkeypatch,
    )
    assert code == 1  # PT990 is an error
    assert [(f["rule"], f["path"], f["line"]) for f in report["findings"]] == [("PT990", "wait.py", 5)]
    assert not (tmp_path / "pkg" / "wait.py").exists()  # the text came from stdin; nothing was written


def test_stdin_without_filename_is_named_dash(rules, capsys, monkeypatch):
    code, report = json_scan(capsys, "-", "--rules", rules, stdin=SMI_FILE, monkeypatch=monkeypatch)
    assert code == 0 and [(f["rule"], f["path"]) for f in report["findings"]] == [("PT991", "-")]


def test_stdin_text_wins_over_the_file_on_disk(tmp_path, rules, capsys, monkeypatch):
    (tmp_path / "wait.py").write_text("def nothing():\n    pass\n", encoding="utf-8")
    _, report = json_scan(
        capsys,
        "-",
        "--stdin-filename",
        tmp_path / "wait.py",
        "--rules",
        rules,
        stdin=SYNC_FILE,
        monkeypatch=monkeypatch,
    )
    assert [f["rule"] for f in report["findings"]] == ["PT990"]


def test_stdin_filename_finds_the_config(tmp_path, rules, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.porter]\nignore = ["PT990"]\n', encoding="utf-8")
    (tmp_path / "src").mkdir()
    code, report = json_scan(
        capsys,
        "-",
        "--stdin-filename",
        tmp_path / "src" / "wait.py",
        "--rules",
        rules,
        stdin=SYNC_FILE,
        monkeypatch=monkeypatch,
    )
    assert code == 0 and report["findings"] == []


def test_files_from_a_file_and_from_stdin(tmp_path, rules, capsys, monkeypatch):
    tree = write_tree(tmp_path / "repo")
    listing = tmp_path / "changed.txt"
    listing.write_text(f"{tree / 'pkg' / 'sub0' / 'sync.py'}\n\n  {tree / 'pkg' / 'plain.py'}  \n", encoding="utf-8")
    _, report = json_scan(capsys, "--files-from", listing, "--rules", rules)
    assert {f["rule"] for f in report["findings"]} == {"PT990"}
    _, piped = json_scan(
        capsys,
        "--files-from",
        "-",
        "--rules",
        rules,
        stdin=f"{tree / 'pkg' / 'sub0' / 'smi.py'}\n",
        monkeypatch=monkeypatch,
    )
    assert [f["rule"] for f in piped["findings"]] == ["PT991"]


def test_files_from_adds_to_the_positional_paths(tmp_path, rules, capsys):
    tree = write_tree(tmp_path / "repo")
    listing = tmp_path / "more.txt"
    listing.write_text(f"{tree / 'pkg' / 'sub0' / 'smi.py'}\n", encoding="utf-8")
    _, report = json_scan(capsys, tree / "pkg" / "sub0" / "sync.py", "--files-from", listing, "--rules", rules)
    assert sorted(f["rule"] for f in report["findings"]) == ["PT990", "PT991"]


@pytest.mark.parametrize(
    ("paths", "options", "message"),
    [
        (["-", "x.py"], {}, "stdin holds one source"),
        (["-"], {"files_from": "-"}, "stdin holds one source"),
        (["pkg"], {"stdin_filename": "a.py"}, "--stdin-filename is for"),
        ([], {}, "no path to scan"),
        (["-"], {"kernels": True}, "--kernels and --diff-base read files on disk"),
    ],
)
def test_input_errors_are_one_line_usage_errors(tmp_path, paths, options, message):
    (tmp_path / "pkg").mkdir()
    with pytest.raises(UsageError, match=message):
        run_scan([str(tmp_path / p) if p not in ("-",) else p for p in paths], stdin=io.StringIO(""), **options)


def test_files_from_that_lists_nothing_or_cannot_be_read(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(UsageError, match="lists no path"):
        run_scan([], files_from=str(empty))
    with pytest.raises(UsageError, match="cannot read"):
        run_scan([], files_from=str(tmp_path / "missing.txt"))


@pytest.mark.parametrize("errors", ["surrogateescape", "strict"])  # the C locale's stdin, and a UTF-8 locale's
def test_stdin_that_is_not_utf8_is_a_usage_error_not_a_bug(errors, capsys, monkeypatch):
    stream = io.TextIOWrapper(io.BytesIO(b"\xff\xfeimport torch\n"), encoding="utf-8", errors=errors)
    monkeypatch.setattr("sys.stdin", stream)
    assert main(["scan", "-", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "stdin is not UTF-8 text" in err and "internal error" not in err
