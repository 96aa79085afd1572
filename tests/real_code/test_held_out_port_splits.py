"""The held-out port splits classified from the diff alone (held_out3, held_out5, held_out6, held_out7, held_out8,
held_out11): their pairs and hunk classes (the packages and labels of the held-out splits are checked in
test_held_out_splits.py).

Offline: nothing is downloaded or scanned, and the port trees are not needed (only pairs.yaml, lines.json and the
hunk-class files are read).
The split's own figures are not asserted: it is scored once, at the end, by the lead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "real_code"
sys.path.insert(0, str(BENCH))

import ports  # noqa: E402

# split -> (the fewest pairs it was built with, its hunk-class file)
CLASSIFIED_SPLITS = {
    "held_out3": (4, ports.classes_file("held_out3")),
    "held_out5": (6, ports.classes_file("held_out5")),
    "held_out6": (6, ports.classes_file("held_out6")),
    "held_out7": (13, ports.classes_file("held_out7")),
    "held_out8": (16, ports.classes_file("held_out8")),
    "held_out11": (14, ports.classes_file("held_out11")),
}


@pytest.mark.parametrize("split", sorted(CLASSIFIED_SPLITS))
def test_held_out_port_pairs_are_new_and_every_hunk_is_classified(split):
    fewest, class_file = CLASSIFIED_SPLITS[split]
    pairs = ports.load_pairs(split=split)
    assert len(pairs) >= fewest
    earlier = {(p.repo, p.after) for p in ports.load_pairs(split="all") if p.split != split}
    assert not earlier & {(p.repo, p.after) for p in pairs}
    lines, classes = ports.load_lines(), ports.load_classes()
    for pair in pairs:
        kinds = ports.hunk_classes(pair.id, lines[pair.id], classes)
        assert kinds and set(kinds) <= {"a", "b", "c"}, pair.id
        assert all(row["why"] and row["idiom"] for row in classes[pair.id].values())
    assert {p.id for p in pairs} == set(_rows(class_file)), f"the {split} class file names its pairs only"


@pytest.mark.parametrize("split", sorted(CLASSIFIED_SPLITS))
def test_ports_command_line_takes_the_held_out_split(monkeypatch, tmp_path, split):
    seen = {}

    def fake_score(targets, split, cache, only):
        seen["split"] = split
        return {"split": split, "cache": str(cache), "missing": ["x"], "how_to_get": "clone x"}

    monkeypatch.setattr(ports, "score_ports", fake_score)
    assert ports.main(["--split", split, "--cache", str(tmp_path)]) == 2  # missing trees fail closed
    assert seen["split"] == split


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
