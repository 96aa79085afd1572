"""The human-port scoring of bench/real_code/ports.py on a tiny synthetic pair, with a real porter scan.

The pair is written here (no fetched code): the before tree launches a kernel with num_warps=32 and has
a settings helper returning 32; the "human" fix changes both, renames a local (a change no static rule
should claim) and adds an import and a helper (plumbing, not counted).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_ports():
    spec = importlib.util.spec_from_file_location("ports_bench", ROOT / "bench" / "real_code" / "ports.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ports_bench"] = module
    spec.loader.exec_module(module)
    return module


ports = _load_ports()

BEFORE = """import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x, n):
    block = 1024
    scale_kernel[(triton.cdiv(n, block),)](x, n, BLOCK=block, num_warps=32)
    total = n * 2
    return total
"""

AFTER = """import torch
import triton
import triton.language as tl


def is_hip():
    return torch.version.hip is not None


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x, n):
    block = 1024
    scale_kernel[(triton.cdiv(n, block),)](x, n, BLOCK=block, num_warps=16)
    doubled = n * 2
    return doubled
"""


@pytest.fixture()
def synthetic(tmp_path):
    for side, text in (("before", BEFORE), ("after", AFTER)):
        folder = tmp_path / "toy" / side / "pkg"
        folder.mkdir(parents=True)
        (folder / "ops.py").write_text(text)
    pair = ports.Pair("toy", "example/toy", "0" * 40, "1" * 40, ("pkg",), "dev", "synthetic pair")
    return pair, tmp_path


def test_hunks_leave_out_imports_and_new_helpers(synthetic):
    pair, cache = synthetic
    hunks = ports.derive_hunks(ports.tree(cache, pair, "before"), ports.tree(cache, pair, "after"))
    changed = [x.line for h in hunks for x in h.before]
    assert changed == [13, 14, 15]  # the launch, the renamed local and its return; not the imports
    fixed = [x.line for h in hunks for x in h.after]
    assert 6 not in fixed and 7 not in fixed  # the inserted is_hip() helper is plumbing


def test_real_scan_scores_the_launch_as_found_and_the_rename_as_missed(synthetic):
    pair, cache = synthetic
    hunks = ports.derive_hunks(ports.tree(cache, pair, "before"), ports.tree(cache, pair, "after"))
    score = ports.score_pair(pair, hunks, "mi300x", cache)
    assert (score.lines, score.lines_hit) == (3, 1)
    assert (score.hunks, score.hunks_hit) == (1, 1)
    assert "PT101" in score.rules_hit
    assert [x.line for x in score.missed] == [14, 15]
    assert (score.fixed, score.fixed_warned) == (3, 0)  # num_warps=16 is fine on mi300x
    summary = ports.summarize([score])
    assert summary["recall_lines"] == pytest.approx(1 / 3, abs=1e-3)
    assert summary["false_alarms"] == 0.0


def test_a_finding_at_a_value_flow_origin_counts_on_that_line():
    hit = ports.to_hit(
        {
            "rule": "PT101",
            "severity": "error",
            "path": "a.py",
            "line": 40,
            "end_line": 40,
            "data": {"origins": [{"value": 32, "line": 12, "end_line": 12}]},
        }
    )
    assert 12 in hit.lines and 40 in hit.lines
    other_file = ports.to_hit(
        {
            "rule": "PT101",
            "severity": "error",
            "path": "a.py",
            "line": 40,
            "data": {"origins": [{"path": "b.py", "line": 12}]},
        }
    )
    assert 12 not in other_file.lines


def test_a_changed_def_line_takes_findings_in_its_body():
    regions = ports.Regions("def f(x):\n    y = 1\n    return y\n\nz = f(2)\n")
    assert regions.around(1) == {1, 2, 3}
    assert regions.around(2) == {2}


def test_a_tree_that_is_not_the_pinned_one_is_refused(synthetic):
    pair, cache = synthetic
    hunks = ports.derive_hunks(ports.tree(cache, pair, "before"), ports.tree(cache, pair, "after"))
    (ports.tree(cache, pair, "before") / "pkg" / "ops.py").write_text(BEFORE.replace("num_warps=32", "num_warps=8"))
    with pytest.raises(ports.PortsError, match="not the pinned line"):
        ports.score_pair(pair, hunks, "mi300x", cache)


def test_missing_trees_say_how_to_get_them(tmp_path):
    pairs = ports.load_pairs(split="dev")
    result = ports.score_ports(["mi300x"], "dev", tmp_path)
    assert "targets" not in result and result["missing"] == [p.id for p in pairs]
    assert re.search(r"(?s)git clone https://github.com/\S+ .*ports.py extract", result["how_to_get"])
    assert ports.main(["--cache", str(tmp_path), "--targets", "mi300x"]) == 2


def test_committed_pairs_have_line_data_and_a_held_out_part():
    pairs = ports.load_pairs(split="all")
    lines = json.loads(ports.LINES_FILE.read_text())
    assert len(pairs) >= 14 and len({p.id for p in pairs}) == len(pairs)
    assert sum(p.split == "held_out" for p in pairs) >= 3
    assert all(lines.get(p.id) for p in pairs), "every pair has at least one port hunk"
    for pair in pairs:
        assert len(pair.before) == len(pair.after) == 40 and pair.description
        if pair.split == "dev":  # judged by hand, with a reason
            assert pair.rewrite["equivalent"] in ("yes", "partial", "no") and pair.rewrite["reason"]
        else:  # nobody has looked at porter's output on the held-out pairs
            assert pair.rewrite is None


def test_rewrite_edits_are_mapped_to_before_lines():
    before = {"pkg/ops.py": "a = 1\nlaunch(num_warps=32)\nb = 2\n", "pkg/gone.py": "x = 1\n"}
    after = {"pkg/ops.py": "a = 1\nlaunch(num_warps=16)\nb = 2\nc = 3\n", "pkg/new.py": "y = 2\n"}
    assert ports._edited_lines(before, after) == {"pkg/ops.py": {2, 3}}


def test_stacked_patches_apply_in_order(tmp_path):
    (tmp_path / "m.py").write_text("a = 1\nb = 2\n")
    first = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n+import shim\n a = 1\n b = 2\n"
    second = "--- a/m.py\n+++ b/m.py\n@@ -2,2 +2,2 @@\n a = 1\n-b = 2\n+b = shim.two()\n"
    assert ports._git_apply(tmp_path, first) and ports._git_apply(tmp_path, second)
    assert (tmp_path / "m.py").read_text() == "import shim\na = 1\nb = shim.two()\n"
    assert not ports._git_apply(tmp_path, second)


def test_a_line_the_port_left_wrong_is_not_a_fixed_line(synthetic):
    pair, cache = synthetic
    hunks = ports.derive_hunks(ports.tree(cache, pair, "before"), ports.tree(cache, pair, "after"))
    left = ports.Pair(**{**pair.__dict__, "still_wrong": {"mi300x": ["pkg/ops.py:18"]}})
    score = ports.score_pair(left, hunks, "mi300x", cache)
    assert (score.fixed, score.still_wrong, score.still_wrong_warned) == (2, 1, 0)


def test_in_scope_recall_counts_only_hunks_classed_a_or_c(synthetic):
    pair, cache = synthetic
    hunks = ports.derive_hunks(ports.tree(cache, pair, "before"), ports.tree(cache, pair, "after"))
    rows = {"toy": {(h.path, h.before[0].line): {"class": "b", "digest": h.before[0].digest} for h in hunks}}
    score = ports.score_pair(pair, hunks, "mi300x", cache, classes=ports.hunk_classes("toy", hunks, rows))
    assert (score.scope_hunks, score.scope_lines) == (0, 0) and score.hunks == 1  # b stays in the headline
    rows["toy"] = {key: {**row, "class": "a"} for key, row in rows["toy"].items()}
    score = ports.score_pair(pair, hunks, "mi300x", cache, classes=ports.hunk_classes("toy", hunks, rows))
    assert (score.scope_hunks, score.scope_hunks_hit, score.scope_lines, score.scope_lines_hit) == (1, 1, 3, 1)
    assert ports.summarize([score])["in_scope_recall_lines"] == pytest.approx(1 / 3, abs=1e-3)


def test_classes_out_of_step_with_the_hunks_are_refused(synthetic):
    pair, cache = synthetic
    hunks = ports.derive_hunks(ports.tree(cache, pair, "before"), ports.tree(cache, pair, "after"))
    with pytest.raises(ports.PortsError, match="unclassified"):
        ports.hunk_classes("toy", hunks, {"toy": {}})
    stale = {"toy": {(h.path, h.before[0].line): {"class": "a", "digest": "0" * 12} for h in hunks}}
    with pytest.raises(ports.PortsError, match="digest"):
        ports.hunk_classes("toy", hunks, stale)
    assert ports.hunk_classes("toy", hunks, {}) is None  # an unclassified (held-out) pair


def test_every_dev_hunk_is_classified_with_a_reason():
    lines, classes = ports.load_lines(), ports.load_classes()
    for pair in ports.load_pairs(split="dev"):
        kinds = ports.hunk_classes(pair.id, lines[pair.id], classes)
        assert kinds is not None and set(kinds) <= {"a", "b", "c"}
        assert all(row["why"] and row["idiom"] for row in classes[pair.id].values())
    held_out = {p.id for p in ports.load_pairs(split="held_out")}
    assert not held_out & set(classes), "held-out pairs are not looked at before the final scoring"
