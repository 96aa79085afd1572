"""CPU seconds of one cold scan of the issue-14 yardstick, no cache (not part of the test suite).

For A/B runs of two checkouts on a shared machine, where wall time says little: run it from each
checkout's root, alternating, and compare the minima (this process and its pool workers, scan only):

    PYTHONPATH=$PWD /work/venv/bin/python bench/scan_cpu.py [--jobs 2] [--target mi350x]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scan_bench import cpu_seconds, installed_copy  # noqa: E402

from porter.analyze import load_rules  # noqa: E402
from porter.analyze.scan import scan_tree  # noqa: E402
from porter.config import PorterConfig  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--installed", nargs="+", default=["torch/_inductor", "triton"])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--target", default="mi350x")
    args = parser.parse_args()
    root, ruleset = installed_copy(args.installed), load_rules()
    started = cpu_seconds()
    result = scan_tree(root, args.target, ruleset, jobs=args.jobs, use_cache=False, config=PorterConfig())
    print(
        f"cold scan -j{args.jobs} {args.target}: {cpu_seconds() - started:.2f} CPU s, "
        f"{len(result.findings)} findings ({len(result.unreachable)} unreachable)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
