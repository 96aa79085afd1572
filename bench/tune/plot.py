"""Plot porter tune's predicted time against the measured time, one panel per dtype.

    /work/venv/bin/python bench/tune/plot.py [--out bench/tune/pred_vs_measured.png]

Every timed (shape, config) of the stored sweeps (bench/tune/data/h200_*.json, and h100_*.json
against the h100 spec) is a grey dot; the model's pick of each shape is a coloured dot (calibration
rows blue, the blind split scored once with the final model orange; every earlier split is
calibration now).
Each panel's title gives the median |log(predicted / measured)| of the picks and of all configs,
and the held-out geomean score (best / pick). Needs matplotlib (pip install '.[plot]').
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from porter.targets import get_target  # noqa: E402
from porter.tune.scoring import model_order, model_predictions  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import DATA, H100_DATA, gpu_of, sweep_rows  # noqa: E402  (the calibration sweeps: never a sealed blind split beside them)

DTYPES = ("bf16", "fp16", "fp8", "fp32")
# the last split scored once, with the final model of session 44 (2-warp term); blind35 waits unopened
HELD_OUT = {"h100_blind34"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "tune" / "pred_vs_measured.png")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    targets = {gpu: get_target(gpu) for gpu in ("h100", "h200")}
    rows = sweep_rows([p for p in DATA if p.exists()] + H100_DATA)
    fig, axes = plt.subplots(2, 2, figsize=(10, 9.2))
    for ax, tag in zip(axes.flat, DTYPES):
        every_x, every_y, picks, errs_all, errs_pick, scores = (
            [],
            [],
            {"cal": ([], []), "held-out": ([], [])},
            [],
            [],
            [],
        )
        for sweep, row in ((sw, r) for sw, r in rows if r.dtype == tag):
            pred = model_predictions(row, targets[gpu_of(sweep)])
            pick = model_order(row, targets[gpu_of(sweep)])[0]  # porter tune's first, near-ties included
            for p, t in zip(pred, row.ms):
                if math.isfinite(p):
                    every_x.append(t)
                    every_y.append(p)
                    errs_all.append(abs(math.log(p / t)))
            group = "held-out" if sweep in HELD_OUT else "cal"
            picks[group][0].append(row.ms[pick])
            picks[group][1].append(pred[pick])
            errs_pick.append(abs(math.log(pred[pick] / row.ms[pick])))
            if group == "held-out":
                scores.append(math.log(row.best / row.ms[pick]))
        ax.scatter(every_x, every_y, s=2, c="0.75", alpha=0.35, linewidths=0, label="every timed config")
        for group, colour in (("cal", "tab:blue"), ("held-out", "tab:orange")):
            xs, ys = picks[group]
            ax.scatter(xs, ys, s=14, c=colour, label=f"model's pick ({group}, {len(xs)} shapes)")
        lo = min(every_x + every_y)
        hi = max(every_x + every_y)
        ax.plot([lo, hi], [lo, hi], c="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured ms (H200; H100 sweeps against the h100 spec)")
        ax.set_ylabel("predicted ms")
        geo = math.exp(sum(scores) / len(scores)) if scores else float("nan")
        ax.set_title(
            f"{tag}: median |log err| picks {statistics.median(errs_pick):.2f}, all "
            f"{statistics.median(errs_all):.2f}\nheld-out pick score {geo:.3f} ({len(scores)} shapes)",
            fontsize=9,
        )
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("porter tune on the H200 and H100: predicted vs measured time per (shape, config)", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
