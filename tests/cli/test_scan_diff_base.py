"""`porter scan --diff-base REF`: only findings the branch introduces, against a real git repository."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from porter.cli import main
from tests.scan_helpers import SMI_FILE, write_rules

SMI_TWICE = SMI_FILE + "\n\ndef again():\n    subprocess.run(['nvidia-smi', '-L'])\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def rules(tmp_path_factory):
    return str(write_rules(tmp_path_factory.mktemp("rules")))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """main: pkg/smi.py with one finding; branch `work` checked out on top of it."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the base versions' scratch directory, to check cleanup
    (tmp_path / "tmp").mkdir()
    tempfile.tempdir = None
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg" / "smi.py").write_text(SMI_FILE, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "work")
    yield root
    tempfile.tempdir = None


def findings(capsys, *args) -> tuple[int, list[tuple[str, str, int]]]:
    code = main(["scan", *map(str, args), "--format", "json", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    return code, [(f["rule"], f["path"], f["line"]) for f in report["findings"]]


def test_only_the_new_finding_is_reported(repo, rules, capsys):
    (repo / "pkg" / "smi.py").write_text(SMI_TWICE, encoding="utf-8")
    git(repo, "commit", "-qam", "second call")
    assert findings(capsys, repo / "pkg", "--rules", rules)[1] == [("PT991", "smi.py", 3), ("PT991", "smi.py", 7)]
    assert findings(capsys, repo / "pkg", "--rules", rules, "--diff-base", "main")[1] == [("PT991", "smi.py", 7)]
    assert not list((repo.parent / "tmp").iterdir())  # the base versions' directory is gone


def test_moved_lines_and_unchanged_files_report_nothing(repo, rules, capsys):
    (repo / "pkg" / "smi.py").write_text("# a new first line\n" + SMI_FILE, encoding="utf-8")
    (repo / "pkg" / "other.py").write_text("x = 1\n", encoding="utf-8")
    code, found = findings(capsys, repo / "pkg", "--rules", rules, "--diff-base", "main", "--fail-on", "warning")
    assert (code, found) == (0, [])


def test_working_tree_and_untracked_files_count(repo, rules, capsys):
    (repo / "pkg" / "fresh.py").write_text(SMI_FILE, encoding="utf-8")  # untracked
    assert findings(capsys, repo, "--rules", rules, "--diff-base", "main")[1] == [("PT991", "pkg/fresh.py", 3)]


def test_a_renamed_file_keeps_its_old_findings(repo, rules, capsys):
    git(repo, "mv", "pkg/smi.py", "pkg/gpus.py")  # git pairs the two while most of the text is kept (-M, 50 %)
    (repo / "pkg" / "gpus.py").write_text(SMI_FILE + "subprocess.run(['nvidia-smi', '-L'])\n", encoding="utf-8")
    assert findings(capsys, repo / "pkg", "--rules", rules, "--diff-base", "main")[1] == [("PT991", "gpus.py", 4)]


def test_a_repeated_line_counts_by_occurrence(repo, rules, capsys):
    call = "\n\ndef again():\n    subprocess.run(['nvidia-smi'])\n"
    (repo / "pkg" / "smi.py").write_text(SMI_FILE + call, encoding="utf-8")
    code, found = findings(capsys, repo / "pkg", "--rules", rules, "--diff-base", "main")
    assert [line for _, _, line in found] == [7]  # the same text twice: the second occurrence is the new one


def test_the_merge_base_not_the_ref_tip_is_the_baseline(repo, rules, capsys):
    git(repo, "checkout", "-q", "main")
    (repo / "pkg" / "late.py").write_text(SMI_FILE, encoding="utf-8")  # lands on main after the branch point
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "later on main")
    git(repo, "checkout", "-q", "work")
    (repo / "pkg" / "smi.py").write_text(SMI_TWICE, encoding="utf-8")
    assert findings(capsys, repo / "pkg", "--rules", rules, "--diff-base", "main")[1] == [("PT991", "smi.py", 7)]


def test_unknown_ref_and_no_repository_are_one_line_errors(repo, tmp_path, rules, capsys):
    assert main(["scan", str(repo), "--rules", rules, "--diff-base", "no-such-branch"]) == 2
    assert capsys.readouterr().err == f"porter: error: --diff-base no-such-branch: no such commit in {repo}\n"
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "a.py").write_text(SMI_FILE, encoding="utf-8")
    assert main(["scan", str(outside), "--rules", rules, "--diff-base", "main"]) == 2
    assert capsys.readouterr().err == f"porter: error: --diff-base: {outside} is not inside a git work tree\n"


def test_a_branch_that_inserts_above_moves_and_deletes_reports_only_its_new_call(repo, rules, capsys):
    for name in ("moved.py", "doomed.py"):
        (repo / "pkg" / name).write_text(SMI_FILE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two more files")
    git(repo, "branch", "-f", "main")  # the base now holds smi.py, moved.py and doomed.py, each with one finding
    header = "".join(f"# line {n} pushed in above the old call\n" for n in range(5))
    new_call = "\n\ndef listed():\n    subprocess.run(['nvidia-smi', '--query'])\n"
    (repo / "pkg" / "smi.py").write_text(header + SMI_FILE + new_call, encoding="utf-8")
    git(repo, "mv", "pkg/moved.py", "pkg/renamed.py")
    git(repo, "rm", "-q", "pkg/doomed.py")
    git(repo, "commit", "-qam", "insert above, add a call, move one file, delete another")
    assert findings(capsys, repo / "pkg", "--rules", rules)[1] == [
        ("PT991", "renamed.py", 3),
        ("PT991", "smi.py", 8),
        ("PT991", "smi.py", 12),
    ]
    code, found = findings(capsys, repo / "pkg", "--rules", rules, "--diff-base", "main", "--fail-on", "warning")
    assert (code, found) == (1, [("PT991", "smi.py", 12)])


def test_a_file_moved_and_rewritten_past_git_rename_detection_keeps_its_old_finding(repo, rules, capsys):
    git(repo, "mv", "pkg/smi.py", "pkg/gpus.py")
    rewritten = "".join(f"def helper_{n}(x):\n    return x + {n}\n\n\n" for n in range(12)) + SMI_FILE
    (repo / "pkg" / "gpus.py").write_text(rewritten + "subprocess.run(['nvidia-smi', '-q'])\n", encoding="utf-8")
    git(repo, "commit", "-qam", "move and rewrite: too little text kept for git to pair the two")
    assert "R" not in git(repo, "diff", "--name-status", "-M", "main", "HEAD").split()[0]
    assert findings(capsys, repo / "pkg", "--rules", rules, "--diff-base", "main")[1] == [("PT991", "gpus.py", 52)]
