"""The human-port pairs of the fifth held-out split (held_out5) and their hunk classes.

Offline: nothing is downloaded or scanned, and the port trees are not needed (only pairs.yaml, lines.json and the
hunk-class files are read). The split's own figures are not asserted: it is scored once, at the end, by the lead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parents[2] / "bench" / "real_code"
sys.path.insert(0, str(BENCH))

import ports  # noqa: E402


def test_held_out5_port_pairs_are_new_and_every_hunk_is_classified():
    pairs = ports.load_pairs(split="held_out5")
    assert len(pairs) >= 6
    earlier = [p for p in ports.load_pairs(split="all") if p.split != "held_out5"]
    assert not {(p.repo, p.after) for p in earlier} & {(p.repo, p.after) for p in pairs}
    assert not {p.id for p in earlier} & {p.id for p in pairs}
    lines, classes = ports.load_lines(), ports.load_classes()
    for pair in pairs:
        kinds = ports.hunk_classes(pair.id, lines[pair.id], classes)
        assert kinds and set(kinds) <= {"a", "b", "c"}, pair.id
        assert all(row["why"] and row["idiom"] for row in classes[pair.id].values())
    named = yaml.safe_load(ports.HELD_OUT5_CLASSES_FILE.read_text())["pairs"]
    assert set(named) == {p.id for p in pairs}, "the held_out5 class file names its pairs only"


def test_ports_command_line_takes_the_held_out5_split(monkeypatch, tmp_path):
    seen = {}

    def fake_score(targets, split, cache, only):
        seen["split"] = split
        return {"split": split, "cache": str(cache), "missing": ["x"], "how_to_get": "clone x"}

    monkeypatch.setattr(ports, "score_ports", fake_score)
    assert ports.main(["--split", "held_out5", "--cache", str(tmp_path)]) == 2  # missing trees fail closed
    assert seen["split"] == "held_out5"
