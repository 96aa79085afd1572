"""The third held-out split (held_out3): its packages, labels, port pairs and hunk classes, and the guards that keep it
unseen.

Offline: nothing is downloaded or scanned; the scoring path is driven with a stored finding written here, and the
port trees are not needed (only pairs.yaml, lines.json and the hunk-class files are read).
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
import ports  # noqa: E402
import score  # noqa: E402


@pytest.fixture(scope="module")
def packages():
    return corpus.load_corpus()


def test_held_out3_packages_are_pinned_and_new(packages):
    held_out3 = packages.split("held_out3")
    assert len(held_out3) >= 5
    others = {p.name for p in packages.packages if p.split != "held_out3"}
    assert not others & {p.name for p in held_out3}
    for package in held_out3:
        assert package.version[0].isdigit() and "*" not in package.version, package


def test_held_out3_labels_are_valid_and_of_that_split_only(packages):
    labels = corpus.load_labels(corpus.HELD_OUT3_LABELS_FILE)
    names = {p.name for p in packages.split("held_out3")}
    assert labels, "labels_held_out3.jsonl is empty"
    assert {label.key.package for label in labels} <= names
    assert all(label.target in (corpus.ANY_TARGET, *packages.targets) for label in labels)
    assert all(label.reason and label.verdict in corpus.VERDICTS for label in labels)
    other_files = (corpus.LABELS_FILE, corpus.HELD_OUT_LABELS_FILE, corpus.HELD_OUT2_LABELS_FILE)
    other_keys = {label.key for path in other_files for label in corpus.load_labels(path)}
    assert not other_keys & {label.key for label in labels}


def test_default_label_files_include_held_out3():
    assert corpus.HELD_OUT3_LABELS_FILE in score.label_files(None)


def test_unlabelled_listing_refuses_held_out3(packages, tmp_path, capsys):
    name = packages.split("held_out3")[0].name
    stored = tmp_path / "stored"
    stored.mkdir()
    (stored / f"{name}.mi300x.jsonl").write_text(_finding(name, "mi300x").to_json() + "\n")
    assert score.main(["--split", "held_out3", "--unlabelled", "PT101", "--findings", str(stored)]) == 2
    assert "held-out" in capsys.readouterr().err


def test_held_out3_split_scores_its_findings_with_its_labels(packages, tmp_path, capsys):
    name = packages.split("held_out3")[0].name
    stored = tmp_path / "stored"
    stored.mkdir()
    finding = _finding(name, "mi300x")
    corpus.write_findings([finding], stored / f"{name}.mi300x.jsonl")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(corpus.label_line(finding, "false", "behind a CUDA-only guard") + "\n")
    argv = ["--split", "held_out3", "--findings", str(stored), "--no-ports", "--json", "--labels", str(labels)]
    assert score.main(argv + ["--targets", "mi300x"]) == 0
    overall = json.loads(capsys.readouterr().out)["targets"]["mi300x"]["overall"]
    assert (overall["findings"], overall["false"], overall["unlabelled"]) == (1, 1, 0)
    assert score.main(["--split", "dev", *argv[2:], "--targets", "mi300x"]) == 0  # not a dev package
    assert json.loads(capsys.readouterr().out)["targets"]["mi300x"]["overall"]["findings"] == 0


def test_held_out3_port_pairs_are_new_and_every_hunk_is_classified():
    pairs = ports.load_pairs(split="held_out3")
    assert len(pairs) >= 4
    earlier = {(p.repo, p.after) for p in ports.load_pairs(split="all") if p.split != "held_out3"}
    assert not earlier & {(p.repo, p.after) for p in pairs}
    lines, classes = ports.load_lines(), ports.load_classes()
    for pair in pairs:
        kinds = ports.hunk_classes(pair.id, lines[pair.id], classes)
        assert kinds and set(kinds) <= {"a", "b", "c"}, pair.id
        assert all(row["why"] and row["idiom"] for row in classes[pair.id].values())
    assert {p.id for p in pairs} == set(_rows(ports.HELD_OUT3_CLASSES_FILE)), (
        "the held_out3 class file names its pairs only"
    )


def test_ports_command_line_takes_the_held_out3_split(monkeypatch, tmp_path):
    seen = {}

    def fake_score(targets, split, cache, only):
        seen["split"] = split
        return {"split": split, "cache": str(cache), "missing": ["x"], "how_to_get": "clone x"}

    monkeypatch.setattr(ports, "score_ports", fake_score)
    assert ports.main(["--split", "held_out3", "--cache", str(tmp_path)]) == 2  # missing trees fail closed
    assert seen["split"] == "held_out3"


def test_extract_takes_only_the_split_asked_for_and_all_by_default(tmp_path, capsys):
    repos = tmp_path / "no-clones"
    repos.mkdir()
    assert ports.main(["extract", "--repos", str(repos), "--cache", str(tmp_path), "--split", "held_out3"]) == 0
    asked = {p.repo for p in ports.load_pairs(split="held_out3")}
    named = {line.split()[4] for line in capsys.readouterr().err.splitlines() if "no clone of" in line}
    assert named == asked
    assert ports.main(["extract", "--repos", str(repos), "--cache", str(tmp_path)]) == 0
    named = {line.split()[4] for line in capsys.readouterr().err.splitlines() if "no clone of" in line}
    assert named == {p.repo for p in ports.load_pairs(split="all")}


def test_a_pair_classified_in_two_class_files_is_refused(tmp_path):
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    row = "  toy:\n    - {path: a.py, line: 1, digest: '000000000000', class: b, idiom: x, why: y}\n"
    one.write_text("pairs:\n" + row)
    two.write_text("pairs:\n" + row)
    assert set(ports.load_classes([one])) == {"toy"}
    with pytest.raises(ports.PortsError, match="another hunk-class file"):
        ports.load_classes([one, two])


def _rows(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())["pairs"]


def _finding(package: str, target: str) -> corpus.CorpusFinding:
    rule = sorted(score.rules_that_ran([]))[0]
    return corpus.CorpusFinding(
        package, target, "pkg/kernels.py", 3, 0, rule, "warning", "target", "num_warps = 32", "a message"
    )
