"""Leave-one-sweep-out check of a model constant: is a value chosen on the other sweeps still good
on the sweep left out?

    /work/venv/bin/python bench/tune/loo.py [--const NAME --values V1 V2 ...] [--dtype bf16 ...]

For every stored sweep (validate.py's list: each file is one suite of shapes swept together), the
value of NAME that maximises the sum of log(best / pick) over the rows of the other sweeps is chosen,
and the rows of the left-out sweep are scored with it. Prints, per dtype, the pick's geomean / min
in sample (each value, every row) and left out. Without --const: the stored constants' scores per
sweep and dtype (what a change must not lower). Table constants take KEY=VALUE pairs
(`--const spill_cost_by_dtype --values bf16=1.8 bf16=2.1`: the other keys keep their stored values).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from porter.targets import get_target  # noqa: E402
from porter.tune.constants import ModelConstants, constants_for  # noqa: E402
from porter.tune.scoring import Row, model_order  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import DATA, H100_DATA, gpu_of, sweep_rows  # noqa: E402

DTYPES = ("bf16", "fp16", "fp8", "fp32")


def pick_scores(rows: list[tuple[str, Row]], const: ModelConstants) -> list[float]:
    """best / time of the model's pick (porter tune's first, near-ties included), per row."""
    targets = {gpu: get_target(gpu) for gpu in ("h100", "h200")}
    scores = []
    for sweep, row in rows:
        pick = model_order(row, targets[gpu_of(sweep)], const)[0]
        scores.append(row.best / row.ms[pick])
    return scores


def geomean_min(values: list[float]) -> str:
    if not values:
        return "      -      "
    return f"{math.exp(sum(map(math.log, values)) / len(values)):.4f}/{min(values):.3f}"


def parse_value(base: ModelConstants, name: str, text: str):
    """A constant's value from the command line: a float, 'none', or KEY=VALUE for a table."""
    if "=" in text:
        table = dict(getattr(base, name))
        key, value = text.split("=", 1)
        table[key] = float(value)
        return table
    return None if text.lower() == "none" else float(text)


def left_out_scores(rows, scores_by_value: dict[str, list[float]]) -> tuple[list[float], dict[str, str]]:
    """Each sweep's rows scored with the value best on the other sweeps; the value chosen per sweep."""
    sweeps = sorted({sweep for sweep, _ in rows})
    held = [0.0] * len(rows)
    chosen = {}
    for left in sweeps:

        def others(value: str, left: str = left) -> float:
            return sum(math.log(s) for (sweep, _), s in zip(rows, scores_by_value[value]) if sweep != left)

        chosen[left] = max(scores_by_value, key=others)
        for i, (sweep, _) in enumerate(rows):
            if sweep == left:
                held[i] = scores_by_value[chosen[left]][i]
    return held, chosen


def by_dtype(rows, scores: list[float], dtype: str) -> list[float]:
    return [s for (_, row), s in zip(rows, scores) if row.dtype == dtype]


def print_per_sweep(rows, scores: list[float]) -> None:
    print(f"{'sweep':8s}" + "".join(f"{d:>16s}" for d in DTYPES))
    for sweep in sorted({sw for sw, _ in rows}) + ["all"]:
        cells = []
        for dtype in DTYPES:
            vals = [s for (sw, row), s in zip(rows, scores) if row.dtype == dtype and sweep in (sw, "all")]
            cells.append(f"{geomean_min(vals):>16s}")
        print(f"{sweep:8s}" + "".join(cells))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--const", help="a ModelConstants field")
    parser.add_argument("--values", nargs="+", default=[], help="values to try (none = unset; KEY=VALUE for tables)")
    parser.add_argument("--dtype", nargs="+", default=list(DTYPES))
    parser.add_argument(
        "--h100",
        action="store_true",
        help="also the H100 sweeps (data/h100_*.json), a fold each, against the h100 spec",
    )
    args = parser.parse_args()
    paths = [p for p in DATA if p.exists()] + (H100_DATA if args.h100 else [])
    rows = [(sweep, row) for sweep, row in sweep_rows(paths) if row.dtype in args.dtype]
    base = constants_for(get_target("h200"))
    if not args.const:
        print_per_sweep(rows, pick_scores(rows, base))
        return 0
    scores = {
        text: pick_scores(rows, replace(base, **{args.const: parse_value(base, args.const, text)}))
        for text in args.values
    }
    for text, values in scores.items():
        print(
            f"{args.const}={text:12s}" + "".join(f" {d} {geomean_min(by_dtype(rows, values, d))}" for d in args.dtype)
        )
    held, chosen = left_out_scores(rows, scores)
    print(
        f"{'left out':>{len(args.const) + 13}s}"
        + "".join(f" {d} {geomean_min(by_dtype(rows, held, d))}" for d in args.dtype)
    )
    print("chosen per left-out sweep:", ", ".join(f"{sweep} {value}" for sweep, value in chosen.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
