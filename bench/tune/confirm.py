"""Re-time the model's pick against the sweep's best config, side by side, on one NVIDIA GPU.

A sweep's best is the minimum over ~150 noisy timings, so best / pick is biased low. This times
only the two configs of each (dtype, shape), interleaved over several rounds (median of CUDA
events per round, L2 flushed before each launch, as in sweep.py), and reports best / pick again.
With --idle-s the GPU idles that long before each timing, so the SM clock is back at its top bin
(under back-to-back load a long 16-bit GEMM pulls it from 1980 to ~1450 MHz: data/h200_clock_drift.txt).

    /work/venv/bin/python bench/tune/confirm.py --make bench/tune/data/confirm_blind2_pairs.json   # here
    python3 bench/tune/confirm.py --pairs bench/tune/data/confirm_blind2_pairs.json --out OUT   # on the GPU
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def make_pairs(out: Path, split: str, scored: list[Path], target: str = "h200") -> None:
    sys.path.insert(0, str(HERE.parents[1]))
    sys.path.insert(0, str(HERE))
    from validate import DATA  # noqa: E402  (the calibration sweeps: never a sealed blind split beside them)

    from porter.tune.scoring import evaluate, load_rows  # noqa: E402

    # a blind sweep joins only through --data, once its scored_once file exists
    rows = [row for path in [*DATA, *scored] if path.exists() for row in load_rows(path)]
    result = evaluate(rows, target)
    by_key = {(r.dtype, r.name): r for r in rows}
    pairs = []
    for entry in result["rows"]:
        if entry["split"] != split:
            continue
        row = by_key[(entry["dtype"], entry["name"])]
        best = list(row.configs[row.ms.index(row.best)])
        pairs.append(
            {
                "name": entry["name"],
                "dtype": entry["dtype"],
                "m": entry["m"],
                "n": entry["n"],
                "k": entry["k"],
                "pick": entry["pick"],
                "best": best,
                "sweep_score": entry["model"],
            }
        )
    out.write_text(json.dumps(pairs, indent=1), encoding="utf-8")
    print(f"{len(pairs)} pairs -> {out}")


def confirm(pairs_path: Path, out_dir: Path, rounds: int, idle_s: float, flush: str, lead_us: float) -> None:
    sys.path.insert(0, str(HERE))
    import torch  # noqa: E402 (on the GPU machine only)
    from sweep import TIMING, launch, make_operands, time_launch  # noqa: E402 (needs torch and triton)

    TIMING.update(flush=flush, lead_us=lead_us)

    results = []
    for pair in json.loads(pairs_path.read_text(encoding="utf-8")):
        if pair["pick"] == pair["best"]:  # nothing to compare: the score is 1 by definition
            results.append({**pair, "pick_ms": [], "best_ms": [], "score": 1.0})
            continue
        a, b, c = make_operands(pair["dtype"], pair["m"], pair["n"], pair["k"])
        times = {"pick": [], "best": []}
        for _ in range(rounds):
            for which in ("pick", "best"):
                cfg = tuple(pair[which])
                if idle_s:
                    torch.cuda.synchronize()
                    time.sleep(idle_s)
                times[which].append(time_launch(lambda: launch(a, b, c, cfg), budget_ms=8.0))
        pick, best = min(times["pick"]), min(times["best"])
        score = min(1.0, best / pick) if pair["pick"] != pair["best"] else 1.0
        results.append({**pair, "pick_ms": times["pick"], "best_ms": times["best"], "score": score})
        print(f"{pair['dtype']:5s} {pair['name']:16s} sweep {pair['sweep_score']:.3f} re-timed {score:.3f}", flush=True)
        del a, b, c
    logs = [math.log(r["score"]) for r in results]
    print(
        f"re-timed: geomean {math.exp(sum(logs) / len(logs)):.3f}, min {min(r['score'] for r in results):.3f} "
        f"over {len(results)} rows"
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "confirm.json").write_text(json.dumps(results), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make", type=Path, help="write the pick/best pairs of --split here")
    parser.add_argument("--split", default="blind2")
    parser.add_argument("--data", type=Path, action="append", default=[], help="a scored blind sweep (with --make)")
    parser.add_argument("--target", default="h200", help="the porter target the --data sweep ran on (with --make)")
    parser.add_argument("--pairs", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle-s", type=float, default=0.0, help="GPU idle before each timing (clock held)")
    parser.add_argument("--flush", choices=("write", "read"), default="write", help="how L2 is emptied (sweep.py)")
    parser.add_argument("--lead-us", type=float, default=0.0, help="GPU spin before each timed launch (sweep.py)")
    args = parser.parse_args()
    if args.make:
        make_pairs(args.make, args.split, args.data, args.target)
    elif args.pairs and args.out:
        confirm(args.pairs, args.out, args.rounds, args.idle_s, args.flush, args.lead_us)
    else:
        parser.error("give --make FILE, or --pairs FILE --out DIR")
    return 0


if __name__ == "__main__":
    sys.exit(main())
