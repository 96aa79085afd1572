"""Fit h200's step-model constants on the calibration cases (porter.plan.validation.CALIBRATION_CASES)
and print them for specs.yaml. Fixed, not fitted: gemm_efficiency, hbm_efficiency and host_link_efficiency
(the measured 8192^3 matmul, device copy and host-to-device copy over their nominal rates).

    /work/venv/bin/python bench/plan/calibrate.py
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

from porter.plan.step import plan_constants
from porter.plan.validation import BENCH, compare, load_cases
from porter.targets import get_target

FITTED = ("step_overhead_ms", "sparse_grad_gelem_per_s", "host_gather_gbps", "overlap_power")


def nelder_mead(f, x0, steps=400):
    simplex = [np.array(x0, float)] + [np.array(x0, float) + np.eye(len(x0))[i] * 0.3 for i in range(len(x0))]
    for _ in range(steps):
        simplex.sort(key=f)
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]
        reflect = centroid + (centroid - worst)
        if f(reflect) < f(simplex[0]):
            expand = centroid + 2 * (centroid - worst)
            simplex[-1] = expand if f(expand) < f(reflect) else reflect
        elif f(reflect) < f(simplex[-2]):
            simplex[-1] = reflect
        else:
            contract = centroid + 0.5 * (worst - centroid)
            if f(contract) < f(worst):
                simplex[-1] = contract
            else:
                simplex = [simplex[0] + 0.5 * (s - simplex[0]) for s in simplex]
    return min(simplex, key=f)


def main() -> int:
    runs = sorted((BENCH / "data").glob("h200_run*.json"))
    first = json.loads(runs[0].read_text())
    target = get_target("h200")
    base = dict(plan_constants(target))
    base["host_link_efficiency"] = round(
        first["ceilings"]["h2d_gbps"] / target.extra["interconnect"]["host_link_gbps_per_dir"], 3
    )
    base["hbm_efficiency"] = round(first["ceilings"]["hbm_copy_gbps"] / target.hbm_gbps, 3)
    ceil = first["ceilings"]
    base["gemm_efficiency"] = round(
        (
            ceil["matmul_tf32_tflops"] / target.peak_tflops("tf32")
            + ceil["matmul_bf16_tflops"] / target.peak_tflops("bf16")
        )
        / 2,
        3,
    )

    def constants_from(x):
        c = dict(base)
        for name, value in zip(FITTED, x):
            c[name] = float(math.exp(value))
        return c

    def loss(x):
        c = constants_from(x)
        rows = compare(runs=runs, constants=c, only_calibration=True)
        return sum(math.log(r["predicted_ms"] / r["measured_ms"]) ** 2 for r in rows)

    x0 = [math.log(base[name]) for name in FITTED]
    best = constants_from(nelder_mead(loss, x0))
    # activation_factor: least squares on the dynamic (batch-dependent) memory of the calibration cases
    cases = [c for c in load_cases(runs) if c.calibration and c.placement == "hbm"]
    factors = []
    for factor in np.linspace(1.0, 6.0, 501):
        trial = {**best, "activation_factor": float(factor)}
        rows = [r for r in compare(runs=runs, constants=trial, only_calibration=True) if r["placement"] == "hbm"]
        err = sum(
            ((r["predicted_peak_gb"] - r["measured_peak_gb"]) / (r["measured_peak_gb"] - c.static_bytes / 1e9)) ** 2
            for r, c in zip(
                sorted(rows, key=lambda r: (r["precision"], r["batch"])),
                sorted(cases, key=lambda c: (c.precision, c.batch)),
            )
        )
        factors.append((err, float(factor)))
    best["activation_factor"] = round(min(factors)[1], 2)
    for name in FITTED:
        best[name] = round(best[name], 3)
    print(json.dumps(best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
