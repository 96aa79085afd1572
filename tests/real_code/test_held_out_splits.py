"""The later held-out splits (held_out2 .. held_out17): their packages, their label files, and the guards
that keep them unseen. The port pairs and hunk classes of held_out3 and held_out5 are checked in test_held_out_port_splits.py.

Offline: nothing is downloaded or scanned; the scoring path is driven with a stored finding written here.
A split's own figures are not asserted: each is scored once, at the end, by the lead.
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

# split -> (its labels file, the fewest packages it holds)
SPLITS = {
    "held_out2": (corpus.labels_file("held_out2"), 4),
    "held_out3": (corpus.labels_file("held_out3"), 5),
    "held_out4": (corpus.labels_file("held_out4"), 10),
    "held_out5": (corpus.labels_file("held_out5"), 12),
    "held_out6": (corpus.labels_file("held_out6"), 20),
    "held_out7": (corpus.labels_file("held_out7"), 18),
    "held_out8": (corpus.labels_file("held_out8"), 14),
    "held_out9": (corpus.labels_file("held_out9"), 15),
    "held_out10": (corpus.labels_file("held_out10"), 15),
    "held_out11": (corpus.labels_file("held_out11"), 15),
    "held_out12": (corpus.labels_file("held_out12"), 14),
    "held_out13": (corpus.labels_file("held_out13"), 13),
    "held_out14": (corpus.labels_file("held_out14"), 12),
    "held_out15": (corpus.labels_file("held_out15"), 20),
    "held_out16": (corpus.labels_file("held_out16"), 34),
    "held_out17": (corpus.labels_file("held_out17"), 19),
}
ALL_LABEL_FILES = tuple(corpus.labels_file(split) for split in corpus.SPLITS if corpus.labels_file(split).is_file())


@pytest.fixture(scope="module")
def packages():
    return corpus.load_corpus()


@pytest.mark.parametrize("split", SPLITS)
def test_packages_are_pinned_and_in_no_other_split(packages, split):
    held_out = packages.split(split)
    assert len(held_out) >= SPLITS[split][1]
    others = {p.name for p in packages.packages if p.split != split}
    assert not others & {p.name for p in held_out}
    for package in held_out:
        assert package.version[0].isdigit() and "*" not in package.version, package


@pytest.mark.parametrize("split", SPLITS)
def test_labels_are_valid_and_of_that_split_only(packages, split):
    own = SPLITS[split][0]
    labels = corpus.load_labels(own)
    names = {p.name for p in packages.split(split)}
    assert labels, f"{own.name} is empty"
    assert {label.key.package for label in labels} <= names
    assert all(label.target in (corpus.ANY_TARGET, *packages.targets) for label in labels)
    assert all(label.reason and label.verdict in corpus.VERDICTS for label in labels)
    other_keys = {label.key for path in ALL_LABEL_FILES if path != own for label in corpus.load_labels(path)}
    assert not other_keys & {label.key for label in labels}


@pytest.mark.parametrize("split", SPLITS)
def test_default_label_files_include_the_split(split):
    assert SPLITS[split][0] in score.label_files(None)


@pytest.mark.parametrize("split", SPLITS)
def test_unlabelled_listing_refuses_the_split(packages, split, tmp_path, capsys):
    name = packages.split(split)[0].name
    stored = tmp_path / "stored"
    stored.mkdir()
    (stored / f"{name}.mi300x.jsonl").write_text(_finding(name, "mi300x").to_json() + "\n")
    assert score.main(["--split", split, "--unlabelled", "PT101", "--findings", str(stored)]) == 2
    assert "held-out" in capsys.readouterr().err


@pytest.mark.parametrize("split", SPLITS)
def test_the_split_scores_its_findings_with_its_labels(packages, split, tmp_path, capsys):
    name = packages.split(split)[0].name
    stored = tmp_path / "stored"
    stored.mkdir()
    finding = _finding(name, "mi300x")
    corpus.write_findings([finding], stored / f"{name}.mi300x.jsonl")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(corpus.label_line(finding, "false", "behind a CUDA-only guard") + "\n")
    argv = ["--split", split, "--findings", str(stored), "--no-ports", "--json", "--labels", str(labels)]
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
