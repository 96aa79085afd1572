"""`--format github --max-annotations N`: the N most severe as annotations, every finding in the job summary;
`--sarif-output` / `--json-output` write the other reports of the same scan."""

from __future__ import annotations

import json

import pytest

from porter.cli import main
from tests.scan_helpers import write_rules, write_tree


@pytest.fixture
def tree(tmp_path):
    return write_tree(tmp_path / "repo", copies=3)  # 3 errors (PT990) and 3 warnings (PT991)


@pytest.fixture
def rules(tmp_path):
    return str(write_rules(tmp_path / "rules"))


def annotations(out: str) -> list[str]:
    return [line.split(" ", 1)[0] for line in out.splitlines() if line.startswith("::")]


def test_the_most_severe_are_annotated_and_the_summary_lists_all(tree, rules, tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert (
        main(["scan", str(tree), "--rules", rules, "--no-cache", "--format", "github", "--max-annotations", "4"]) == 1
    )
    assert sorted(annotations(capsys.readouterr().out)) == ["::error"] * 3 + ["::warning"]  # in path order
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\nporter annotated 4 of 6 finding(s) (--max-annotations 4")  # appended
    assert text.count("**PT990**") == 3 and text.count("**PT991**") == 3


def test_without_a_cap_every_finding_is_annotated_and_no_summary_without_the_runner(tree, rules, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    main(["scan", str(tree), "--rules", rules, "--no-cache", "--format", "github"])
    assert len(annotations(capsys.readouterr().out)) == 6


def test_max_annotations_needs_the_github_format(tree, rules, capsys):
    assert main(["scan", str(tree), "--rules", rules, "--max-annotations", "3"]) == 2
    assert "--max-annotations" in capsys.readouterr().err


def test_one_scan_writes_sarif_and_json_beside_the_annotations(tree, rules, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    sarif, report = tmp_path / "porter.sarif", tmp_path / "porter.json"
    main(
        [
            "scan",
            str(tree),
            "--rules",
            rules,
            "--no-cache",
            "--format",
            "github",
            "--sarif-output",
            str(sarif),
            "--json-output",
            str(report),
        ]
    )
    assert len(annotations(capsys.readouterr().out)) == 6
    assert len(json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]) == 6
    assert len(json.loads(report.read_text(encoding="utf-8"))["findings"]) == 6
