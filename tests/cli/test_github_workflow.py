"""docs/examples/porter-scan.yml: the workflow's porter commands run, on a fixture repository, as written."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from porter.cli import main
from tests.scan_helpers import write_tree

WORKFLOW = Path(__file__).resolve().parents[2] / "docs" / "examples" / "porter-scan.yml"
PORTER_CALL = re.compile(r"\bporter( [^|>\n\"')]*)?(?=[|>\n\"')]|$)")


def steps() -> list[dict]:
    document = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (job,) = document["jobs"].values()
    return job["steps"]


def porter_calls() -> list[str]:
    """Every porter invocation in the run scripts (a pipe or a redirection ends one)."""
    calls = []
    for step in steps():
        for match in PORTER_CALL.finditer(step.get("run", "")):
            if not match.group(0).startswith("porter @"):  # the pip requirement, not a command
                calls.append(match.group(0).strip())
    return calls


def expand(command: str, package: str) -> list[str]:
    return shlex.split(command.replace("${{ matrix.package }}", package))[1:]


def test_the_workflow_scans_once_without_the_gpu_extra_and_caches_the_scan_cache():
    runs = [step.get("run", "") for step in steps()]
    assert sum(len(re.findall(r"\bporter scan\b", run)) for run in runs) == 1
    install = next(run for run in runs if "pip install" in run)
    assert "[gpu]" not in install and "porter" in install
    cache = next(step for step in steps() if str(step.get("uses", "")).startswith("actions/cache@"))
    assert cache["with"]["path"] == "${{ matrix.package }}/.porter-cache"
    assert (
        "steps.porter.outputs.version" in cache["with"]["key"] and "steps.porter.outputs.rules" in cache["with"]["key"]
    )
    upload = next(step for step in steps() if str(step.get("uses", "")).startswith("github/codeql-action/upload-sarif"))
    scan = next(call for call in porter_calls() if call.startswith("porter scan"))
    assert f"--sarif-output {upload['with']['sarif_file']}" in scan and "--max-annotations" in scan
    assert "${{ matrix.package }}" in upload["with"]["category"]  # one category per matrix job


@pytest.fixture
def monorepo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    document = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (job,) = document["jobs"].values()
    for package in job["strategy"]["matrix"]["package"]:
        write_tree(root / package)
        # the tree's error-level finding is nvidia-smi parsing (PT402), an opt-in rule
        (root / package / "pyproject.toml").write_text('[tool.porter]\nextend_select = ["PT402"]\n', encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    return root, job["strategy"]["matrix"]["package"]


def test_every_porter_command_in_the_workflow_runs(monorepo, capsys):
    root, packages = monorepo
    calls = porter_calls()
    assert [call.split()[:2] for call in calls] == [["porter", "--version"], ["porter", "rules"], ["porter", "scan"]]
    for package in packages:
        for call in calls:
            assert main(expand(call, package)) in (0, 1), call  # 2 would be a usage or config error
        out = capsys.readouterr().out
        assert "::error file=" + package + "/" in out  # annotations name files from the repository root
        sarif = json.loads((root / "porter.sarif").read_text(encoding="utf-8"))
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
        assert uris and all(uri.startswith(package + "/") and (root / uri).is_file() for uri in uris)
        assert (root / package / ".porter-cache").is_dir()  # what actions/cache saves
    assert "porter annotated" in (root.parent / "summary.md").read_text(encoding="utf-8")
