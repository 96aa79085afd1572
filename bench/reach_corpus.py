"""How the project-level reachability analysis moves findings, per real package (issue 14, part 1).

For each extracted package tree and target, scans without the cache (nothing is written into the
trees) and prints: findings on the target, unknown, NVIDIA-only by the file-local guard (dropped before
the project analysis existed as well) and NVIDIA-only by the project analysis (the findings that moved),
with the reasons that moved them. `--sample N` writes N moved findings per package, with their source
line, to a JSON file for judging by hand.

    /work/venv/bin/python bench/reach_corpus.py /work/corpus/src/vllm-0.33.0 ... [--targets mi300x mi350x]
        [--sample 10 --sample-out /tmp/reach-sample.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

from porter.analyze import load_rules
from porter.analyze.scan import scan_tree
from porter.config import load_config

FILE_LOCAL = "in a branch only a CUDA build runs"


def reason_kind(reason: str) -> str:
    for prefix, kind in (
        ("runs only when", "platform test"),
        ("every use of", "call sites"),
        ("in another vendor", "vendor folder"),
        ("a module for another", "vendor module"),
        ("in `", "platform class"),
        ("depends on", "undecided test"),
        ("matches nvidia_only_paths", "user statement"),
    ):
        if reason.startswith(prefix):
            return kind
    return "other"


def measure(root: Path, target: str, ruleset) -> dict:
    started = time.perf_counter()
    result = scan_tree(root, target, ruleset, jobs=2, use_cache=False, config=load_config(root))
    everything = result.findings + result.unreachable
    local = [f for f in result.unreachable if f.reach_reason == FILE_LOCAL]
    moved = [f for f in result.unreachable if f.reach_reason != FILE_LOCAL]
    unknown = [f for f in result.findings if f.reach == "unknown"]
    return {
        "package": root.name,
        "target": target,
        "seconds": round(time.perf_counter() - started, 1),
        "all": len(everything),
        "target_reach": len(result.findings) - len(unknown),
        "unknown": len(unknown),
        "nvidia_only_file_local": len(local),
        "nvidia_only_project": len(moved),
        "moved_by": dict(Counter(reason_kind(f.reach_reason) for f in moved + unknown)),
        "moved_rules": dict(Counter(f.rule for f in moved + unknown).most_common(8)),
        "_moved": moved + unknown,
    }


def sample(rows: list[dict], per_package: int, root_of: dict[str, Path], seed: int = 14) -> list[dict]:
    picked = []
    rng = random.Random(seed)
    for row in rows:
        if row["target"] != "mi300x":
            continue
        moved = row["_moved"]
        for finding in rng.sample(moved, min(per_package, len(moved))):
            lines = (root_of[row["package"]] / finding.path).read_text(errors="replace").splitlines()
            picked.append(
                {
                    "package": row["package"],
                    "path": finding.path,
                    "line": finding.line,
                    "rule": finding.rule,
                    "reach": finding.reach,
                    "reason": finding.reach_reason,
                    "code": lines[finding.line - 1].strip() if finding.line <= len(lines) else "",
                }
            )
    return picked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--targets", nargs="+", default=["mi300x", "mi350x"])
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--sample-out", type=Path)
    args = parser.parse_args()
    ruleset = load_rules()
    rows = []
    print(
        f"{'package':<28} {'target':<7} {'all':>6} {'target':>7} {'unknown':>7} {'nv-local':>8} {'nv-proj':>7} "
        f"{'s':>6}  moved by"
    )
    for root in args.roots:
        for target in args.targets:
            row = measure(root, target, ruleset)
            rows.append(row)
            print(
                f"{row['package']:<28} {target:<7} {row['all']:>6} {row['target_reach']:>7} {row['unknown']:>7} "
                f"{row['nvidia_only_file_local']:>8} {row['nvidia_only_project']:>7} {row['seconds']:>6}  "
                f"{row['moved_by']} {row['moved_rules']}",
                flush=True,
            )
    if args.sample and args.sample_out:
        picked = sample(rows, args.sample, {root.name: root for root in args.roots})
        args.sample_out.write_text(json.dumps(picked, indent=1))
        print(f"{len(picked)} sampled findings written to {args.sample_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
