"""Replay the example's tests on a real NVIDIA GPU (`porter verify --device cuda` without the CLI's
optional dependencies): the original tree and the tree `porter rewrite` produced must both pass.

    python3 bench/verify_h200.py OUT.json TREE [TREE ...]

Prints one line per tree and writes the verdicts (porter.records.Verdict) as JSON. Not a test: it
needs a GPU (run through the device tool; figures in the H6 report).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from porter.targets import get_target  # noqa: E402
from porter.verify.core import verify_tree  # noqa: E402
from porter.verify.options import VerifyOptions  # noqa: E402


def gpu_name() -> str:
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def main(out: str, trees: list[str]) -> int:
    import torch
    import triton

    results = {"gpu": gpu_name(), "torch": torch.__version__, "triton": triton.__version__, "trees": {}}
    options = VerifyOptions(device="cuda", jobs=4, timeout_s=110, cross_compile=False)
    for tree in trees:
        start = time.monotonic()
        verdict = verify_tree(Path(tree), get_target("h200"), options)
        run = verdict.tests
        results["trees"][tree] = verdict.to_dict() | {"wall_s": round(time.monotonic() - start, 1)}
        print(
            f"{tree}: accepted={verdict.accepted} passed={len(run.passed)} failed={len(run.failed)} "
            f"errors={len(run.errors)} skipped={len(run.skipped)} ({run.duration_s:.1f} s)",
            flush=True,
        )
        for reason in verdict.reasons:
            print(f"  - {reason}", flush=True)
    Path(out).write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
