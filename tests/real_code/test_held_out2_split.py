"""The second held-out split (held_out2): its packages, its labels file, and the guards that keep it unseen.

Offline: nothing is downloaded or scanned; the scoring path is driven with a stored finding written here.
The split's own figures are not asserted: it is scored once, at the end, by the lead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "real_code"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
import score  # noqa: E402


@pytest.fixture(scope="module")
def packages():
    return corpus.load_corpus()


def test_held_out2_packages_are_pinned_and_new(packages):
    held_out2 = packages.split("held_out2")
    assert len(held_out2) >= 4
    others = {p.name for p in packages.packages if p.split != "held_out2"}
    assert not others & {p.name for p in held_out2}
    for package in held_out2:
        assert package.version[0].isdigit() and "*" not in package.version, package


def test_held_out2_labels_are_valid_and_of_that_split_only(packages):
    labels = corpus.load_labels(corpus.HELD_OUT2_LABELS_FILE)
    names = {p.name for p in packages.split("held_out2")}
    assert labels, "labels_held_out2.jsonl is empty"
    assert {label.key.package for label in labels} <= names
    assert all(label.target in (corpus.ANY_TARGET, *packages.targets) for label in labels)
    assert all(label.reason and label.verdict in corpus.VERDICTS for label in labels)
    dev_keys = {label.key for label in corpus.load_labels()}
    assert not dev_keys & {label.key for label in labels}


def test_default_label_files_include_held_out2():
    assert corpus.HELD_OUT2_LABELS_FILE in score.label_files(None)


def test_unlabelled_listing_refuses_held_out2(tmp_path, capsys):
    stored = tmp_path / "stored"
    stored.mkdir()
    (stored / "gemlite.mi300x.jsonl").write_text(_finding("gemlite", "mi300x").to_json() + "\n")
    assert score.main(["--split", "held_out2", "--unlabelled", "PT101", "--findings", str(stored)]) == 2
    assert "held-out" in capsys.readouterr().err


def test_held_out2_split_scores_its_findings_with_its_labels(packages, tmp_path, capsys):
    name = packages.split("held_out2")[0].name
    stored = tmp_path / "stored"
    stored.mkdir()
    finding = _finding(name, "mi300x")
    corpus.write_findings([finding], stored / f"{name}.mi300x.jsonl")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(corpus.label_line(finding, "false", "behind a CUDA-only guard") + "\n")
    argv = ["--split", "held_out2", "--findings", str(stored), "--no-ports", "--json", "--labels", str(labels)]
    assert score.main(argv + ["--targets", "mi300x"]) == 0
    overall = json.loads(capsys.readouterr().out)["targets"]["mi300x"]["overall"]
    assert (overall["findings"], overall["false"], overall["unlabelled"]) == (1, 1, 0)
    assert score.main(["--split", "dev", *argv[2:], "--targets", "mi300x"]) == 0  # not a dev package
    assert json.loads(capsys.readouterr().out)["targets"]["mi300x"]["overall"]["findings"] == 0


def _finding(package: str, target: str) -> corpus.CorpusFinding:
    rule = sorted(score.rules_that_ran([]))[0]
    return corpus.CorpusFinding(
        package, target, "pkg/kernels.py", 3, 0, rule, "warning", "target", "num_warps = 32", "a message"
    )
