"""Dump a scan's findings as JSON, to compare a change's results with the code before it (issue 14).

    /work/venv/bin/python bench/scan_findings_dump.py OUT.json --installed torch/_inductor triton
    /work/venv/bin/python bench/scan_findings_dump.py OUT.json --path fixtures
    /work/venv/bin/python bench/scan_findings_dump.py --compare BEFORE.json AFTER.json

Each target (mi300x, mi350x) gets its reported and unreachable findings and its skipped files, no cache.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scan_bench import installed_copy  # noqa: E402

from porter.analyze import load_rules  # noqa: E402
from porter.analyze.scan import scan_tree  # noqa: E402
from porter.config import PorterConfig  # noqa: E402

TARGETS = ("mi300x", "mi350x")


def dump(root: Path, jobs: int) -> dict:
    ruleset = load_rules()
    out = {}
    for target in TARGETS:
        result = scan_tree(root, target, ruleset, jobs=jobs, use_cache=False, config=PorterConfig())
        out[target] = {
            "findings": [f.to_dict() for f in result.findings],
            "unreachable": [f.to_dict() for f in result.unreachable],
            "skipped": [note.path for note in result.skipped],
        }
    return out


def compare(before: dict, after: dict) -> int:
    differences = 0
    for target in TARGETS:
        for kind in ("findings", "unreachable", "skipped"):
            old = {json.dumps(x, sort_keys=True) for x in before[target][kind]}
            new = {json.dumps(x, sort_keys=True) for x in after[target][kind]}
            for line in sorted(old - new):
                print(f"{target} {kind} only before: {line}")
            for line in sorted(new - old):
                print(f"{target} {kind} only after: {line}")
            differences += len(old ^ new)
            print(f"{target} {kind}: {len(old)} before, {len(new)} after, {len(old ^ new)} differ")
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?")
    parser.add_argument("--installed", nargs="+")
    parser.add_argument("--path")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--compare", nargs=2)
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(Path(p).read_text()) for p in args.compare)
        return compare(before, after)
    root = installed_copy(args.installed) if args.installed else Path(args.path)
    Path(args.out).write_text(json.dumps(dump(root, args.jobs), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
