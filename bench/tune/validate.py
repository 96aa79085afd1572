"""Re-score the model against the stored H200 sweep and print the held-out table.

    /work/venv/bin/python bench/tune/validate.py [--data bench/tune/data/h200_sweep.json] [--split val|cal] [--rows]

Scores are best_time / pick_time per (dtype, shape): 1.0 = the exhaustive best. Selectors: the
model's pick (zero warm-up), the best measured among the model's top 4 / top 8, a fixed default
config (128x128x64, 4 warps, 3 stages), the best single fixed config (chosen on the calibration
split), and the best of the Triton tutorial's 8-config autotune list. Also prints how long one
selection over 200 candidates takes.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from porter.tune import default_space, rank_gemm  # noqa: E402
from porter.tune.scoring import HELD_OUT_SPLITS, Row, evaluate, format_table, load_rows  # noqa: E402

DATA = [
    ROOT / "bench" / "tune" / "data" / name
    for name in (
        "h200_sweep.json",
        "h200_cal2.json",
        "h200_cal3.json",
        "h200_fresh.json",
        "h200_blind.json",
        "h200_blind2.json",
        "h200_cal4.json",
        "h200_blind3.json",
        "h200_blind4.json",
        "h200_blind5.json",
        "h200_blind6.json",
        "h200_blind7.json",
        "h200_blind8.json",
        "h200_cal5.json",
        "h200_blind9.json",
        "h200_blind10.json",
        "h200_blind11.json",
        "h200_blind12.json",
        "h200_blind13.json",
        "h200_blind14.json",
        "h200_blind15.json",
        "h200_cal6.json",
        "h200_cal7.json",
        "h200_blind16.json",
        "h200_blind17.json",
        "h200_blind18.json",
        "h200_blind19.json",
        "h200_blind20.json",
    )
]
# Sweeps timed on an H100 (session 31 on), scored against porter's h100 spec, which shares the H200's constants (one
# chip; only the HBM figure differs). sweep_rows names them by file stem, `h100_blind21` ...
# A blind sweep joins only once it is scored (its `<split>_h100_scored_once.txt` exists): one committed unopened
# waits outside every calibration and leave-one-out run.
H100_DATA = sorted(
    path
    for path in (ROOT / "bench" / "tune" / "data").glob("h100_*.json")
    if (path.parent / f"{path.stem.removeprefix('h100_')}_h100_scored_once.txt").exists()
)


def gpu_of(sweep: str) -> str:
    """The porter target a sweep (as sweep_rows names it) was timed on."""
    return "h100" if sweep.startswith("h100_") else "h200"


# Short rows of DATA timed again, the first file preferred; a row's split field there names the sweep it came from:
# - every row whose best was under 60 us, in session 28 with a 200 us GPU spin before each timed launch (sweep.py
#   --lead-us): without it, Triton's 25-50 us Python launch path can land between the start event and the kernel
#   (launch_gap.py), adding up to ~40 us to a 5-10 us kernel;
# - every row whose best was under 50 us, in session 26 with L2 emptied by a read (--flush read): a write-flush leaves
#   dirty lines the next 10-30 us kernel writes back, 1-3x its time round to round.
RETIMED = (
    ROOT / "bench" / "tune" / "data" / "h200_lead_short.json",
    ROOT / "bench" / "tune" / "data" / "h200_retime_short.json",
)


def sweep_rows(paths: list[Path]) -> list[tuple[str, Row]]:
    """(sweep name, row) of every row of the given sweeps, the short ones replaced by their re-timing."""
    retimed = {}
    for path in reversed(RETIMED):  # the first file wins
        if path.exists():
            retimed.update({(row.split, row.name, row.dtype): row for row in load_rows(path)})
    pairs = []
    for path in paths:
        sweep = path.stem.removeprefix("h200_")
        for row in load_rows(path):
            again = retimed.get((sweep, row.name, row.dtype))
            pairs.append((sweep, replace(again, split=row.split) if again else row))
    return pairs


def calibration_rows(paths: list[Path] | None = None) -> list[Row]:
    """The rows of the stored sweeps (DATA by default), short ones re-timed."""
    return [row for _, row in sweep_rows([p for p in (paths or DATA) if p.exists()])]


def selection_time_ms(target: str = "h200", dtype: str = "fp8e4m3", n_candidates: int = 200) -> float:
    """CPU milliseconds of one ranking of n_candidates configs (best of five)."""
    space = [c.to_dict() for c in default_space(target, dtype, 16)]
    candidates = (space * (n_candidates // len(space) + 1))[:n_candidates]
    rank_gemm(target, dtype, 4096, 4096, 4096, candidates=candidates)  # warm imports and caches
    runs = []
    for _ in range(5):
        start = time.process_time()
        rank_gemm(target, dtype, 4096, 4096, 4096, candidates=candidates)
        runs.append((time.process_time() - start) * 1e3)
    return min(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", default=[p for p in DATA if p.exists()])
    parser.add_argument(
        "--split",
        nargs="+",
        default=[*HELD_OUT_SPLITS, "cal5", "cal6", "cal7", "blind16", "blind17", "blind18", "blind19", "blind20"],
        help="cal, val, fresh, blind, blind2, blind3, blind4, blind5, blind6, blind7, blind8, cal5, blind9, blind10, cal6, blind11, blind12, blind13, blind14, blind15, cal7, blind16, blind17, blind18, blind19, blind20",
    )
    parser.add_argument("--rows", action="store_true", help="print the per-shape scores too")
    parser.add_argument("--target", default="h200", help="the GPU the --data sweeps ran on (a porter target)")
    args = parser.parse_args()
    rows = calibration_rows(args.data)
    result = evaluate(rows, args.target)
    if args.rows:
        for r in result["rows"]:
            if r["split"] in args.split:
                print(
                    f"{r['dtype']:5s} {r['name']:16s} {r['m']:6d}x{r['n']:6d}x{r['k']:6d} best {r['best_ms']:8.4f} ms "
                    f"pick {r['pick_ms']:8.4f} {r['pick']} model {r['model']:.3f} top4 {r['model_top4']:.3f} "
                    f"tut8 {r['tutorial8']:.3f}"
                )
    for split in args.split:
        if f"{split}/all" in result:
            print(format_table(result, split))
    print(f"best fixed config (chosen on cal): {result['fixed']}")
    for split in args.split:
        untimed = [r["name"] + "/" + r["dtype"] for r in result["rows"] if r["split"] == split and r["pick_untimed"]]
        if untimed:  # scored on the timed configs only: the real pick has no measurement
            print(
                f"{split}: the model ranks an untimed config of porter's space first on {len(untimed)} rows: "
                + ", ".join(untimed)
            )
    print(
        f"selection over 200 candidates (CPU time): h200 fp8 {selection_time_ms():.2f} ms, "
        f"mi350x bf16 {selection_time_ms('mi350x', 'bf16'):.2f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
