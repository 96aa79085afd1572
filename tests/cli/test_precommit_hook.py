"""`.pre-commit-hooks.yaml`: the hook's entry run the way pre-commit runs it (files appended, from the repo root)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
# PT402 (error, opt-in: the project's config turns it on)
SMI = 'import subprocess\n\nsubprocess.run(["nvidia-smi"])\n'
CONFIG = '[tool.porter]\nextend_select = ["PT402"]\n'
PLAIN = "def add(a, b):\n    return a + b\n"


@pytest.fixture(scope="module")
def hook():
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (found,) = [entry for entry in hooks if entry["id"] == "porter-scan"]
    return found


@pytest.fixture
def project(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "pkg" / "ops").mkdir(parents=True)
    (tmp_path / "pkg" / "ops" / "smi.py").write_text(SMI, encoding="utf-8")
    (tmp_path / "pkg" / "plain.py").write_text(PLAIN, encoding="utf-8")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "other.py").write_text(PLAIN, encoding="utf-8")
    return tmp_path


def run_hook(hook, project, *files):
    """pre-commit's call: the entry split like a shell would, the hook's args, then the file names."""
    command = [*shlex.split(hook["entry"]), *hook.get("args", []), *files]
    bin_dir = str(Path(sys.executable).parent)  # the environment porter is installed in, as pre-commit's venv
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=120)


def test_hook_manifest_says_what_pre_commit_needs(hook):
    assert hook["entry"] == "porter scan" and hook["language"] == "python"
    assert hook["types"] == ["python"] and hook["pass_filenames"] is True and hook["require_serial"] is False


def test_hook_fails_on_a_finding_and_names_the_file_from_the_repository_root(hook, project):
    done = run_hook(hook, project, "pkg/plain.py", "pkg/ops/smi.py", "tools/other.py")
    assert done.returncode == 1, done.stderr
    assert "pkg/ops/smi.py:3:17 error PT402" in done.stdout
    assert "Traceback" not in done.stderr


def test_hook_passes_on_clean_files(hook, project):
    done = run_hook(hook, project, "pkg/plain.py", "tools/other.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_hook_with_a_deleted_file_exits_2(hook, project):
    done = run_hook(hook, project, "pkg/plain.py", "pkg/gone.py")
    assert done.returncode == 2 and "pkg/gone.py: no such file or directory" in done.stderr
