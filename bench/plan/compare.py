"""Print porter plan's predictions against the H200 measurements (bench/plan/data/).

    /work/venv/bin/python bench/plan/compare.py [--constants '{"step_overhead_ms": 4.2}'] [--json]

"dyn" is the batch-dependent memory: measured peak less what was allocated before the first step.
Constants come from porter/targets/specs.yaml (h200 plan_model) unless --constants overrides some.
"""

from __future__ import annotations

import argparse
import json
import sys

from porter.plan.step import plan_constants
from porter.plan.validation import compare, summary
from porter.targets import get_target


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--constants", default="{}")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    constants = {**plan_constants(get_target("h200")), **json.loads(args.constants)}
    rows = compare(constants=constants)
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary(rows)}, indent=1))
        return 0
    print(
        f"{'precision':9} {'tables':6} {'batch':>6} {'set':5} {'measured':>9} {'predicted':>9} {'error':>7} "
        f"{'noise':>6} {'peak GB':>8} {'pred GB':>8} {'err':>6} {'dyn GB':>7} {'pred':>6} {'err':>5}"
    )
    for r in rows:
        print(
            f"{r['precision']:9} {r['placement']:6} {r['batch']:>6} {'calib' if r['calibration'] else 'valid':5} "
            f"{r['measured_ms']:>8.2f}ms {r['predicted_ms']:>7.2f}ms {r['error']:>+7.1%} {r['run_spread']:>6.1%} "
            f"{r['measured_peak_gb']:>8.2f} {r['predicted_peak_gb']:>8.2f} {r['peak_error']:>+6.1%} "
            f"{r['measured_dynamic_gb']:>7.2f} {r['predicted_dynamic_gb']:>6.2f} "
            f"{r['predicted_dynamic_gb'] / r['measured_dynamic_gb'] - 1:>+5.0%}"
        )
    s = summary(rows)
    print(
        f"held-out cases: {s['held_out']}; step-time error: mean |e| {s['mean_abs_error_held_out']:.1%}, "
        f"max |e| {s['max_abs_error_held_out']:.1%}; peak-memory error max |e| {s['max_abs_peak_error']:.1%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
