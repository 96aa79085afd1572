"""Scoring a config selector against an exhaustive timing sweep (bench/tune/sweep.py output).

For each (dtype, shape) the exhaustive best is the reference; a selector scores best / pick.
Reported per split: geometric mean and minimum for the model's pick, the best of the model's
top-k (re-timed), a fixed default config, the best single fixed config (chosen on the
calibration split), and the best of the Triton tutorial's 8-config autotune list.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porter.targets import Target, get_target
from porter.tune.config import GemmConfig
from porter.tune.constants import ModelConstants, constants_for
from porter.tune.dtypes import resolve_dtype
from porter.tune.model import Machine, pick_order, predict_seconds
from porter.tune.space import default_space

SWEEP_DTYPES = {"bf16": "bf16", "fp8": "fp8e4m3", "fp16": "fp16", "fp32": "fp32"}  # sweep dtype tag -> porter dtype
DEFAULT_CONFIG = (128, 128, 64, 4, 3, 8)
TUTORIAL = [  # Triton matmul tutorial's get_cuda_autotune_config(), first 8 entries (GROUP_M 8)
    (128, 256, 64, 8, 3, 8),
    (64, 256, 32, 4, 4, 8),
    (128, 128, 32, 4, 4, 8),
    (128, 64, 32, 4, 4, 8),
    (64, 128, 32, 4, 4, 8),
    (128, 32, 32, 4, 4, 8),
    (64, 32, 32, 2, 5, 8),
    (32, 64, 32, 2, 5, 8),
]
# Splits of the stored H200 sweeps (bench/tune/data) that were held out when taken: each scored once by the model
# of its day, calibration since; the model must still beat the fixed baselines on every one.
HELD_OUT_SPLITS = (
    "val",
    "fresh",
    "blind",
    "blind2",
    "blind3",
    "blind4",
    "blind5",
    "blind6",
    "blind7",
    "blind8",
    "blind9",
    "blind10",
    "blind11",
    "blind12",
    "blind13",
    "blind14",
    "blind15",
)
SELECTORS = ("model", "model_top4", "model_top8", "default", "best_fixed", "tutorial8")


@dataclass
class Row:
    """One (dtype, shape) of the sweep: the configs with a timing and their times; `untimed` the
    configs that failed or were not tried (never scored as a time)."""

    name: str
    split: str
    dtype: str
    m: int
    n: int
    k: int
    configs: list[tuple]
    ms: list[float]
    cublas_ms: float | None = None
    untimed: list[tuple] = field(default_factory=list)  # configs of the sweep with no timing

    @property
    def best(self) -> float:
        return min(t for t in self.ms if t is not None)

    def time_of(self, cfg: tuple) -> float | None:
        try:
            return self.ms[self.configs.index(cfg)]
        except ValueError:
            return None


def load_rows(path: Path | str) -> list[Row]:
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    configs = [tuple(c) for c in doc["configs"]]
    rows = []
    for res in doc["results"]:
        tried = [i for i, t in enumerate(res["ms"]) if t is not None]
        if not tried:
            continue
        rows.append(
            Row(
                res["name"],
                res["split"],
                res["dtype"],
                res["m"],
                res["n"],
                res["k"],
                [configs[i] for i in tried],
                [res["ms"][i] for i in tried],
                res.get("cublas_ms"),
                [configs[i] for i, t in enumerate(res["ms"]) if t is None],
            )
        )
    return rows


def to_config(cfg: tuple) -> GemmConfig:
    bm, bn, bk, warps, stages, group = cfg
    return GemmConfig(bm, bn, bk, warps, stages, GROUP_M=group)


def model_order(row: Row, target: Target, const: ModelConstants | None = None) -> list[int]:
    """Indices of row.configs by predicted time, feasible first (the model's ranking)."""
    machine = Machine.build(target, resolve_dtype(SWEEP_DTYPES[row.dtype], target), const or constants_for(target))
    configs = [to_config(cfg) for cfg in row.configs]
    predicted = [(predict_seconds(machine, row.m, row.n, row.k, cfg), cfg) for cfg in configs]
    return pick_order(machine, row.m, predicted)


def model_predictions(row: Row, target: Target, const: ModelConstants | None = None) -> list[float]:
    machine = Machine.build(target, resolve_dtype(SWEEP_DTYPES[row.dtype], target), const or constants_for(target))
    return [predict_seconds(machine, row.m, row.n, row.k, to_config(cfg)) * 1e3 for cfg in row.configs]


def pick_untimed(row: Row, machine: Machine, best_timed_s: float) -> bool:
    """Whether `porter tune` itself would pick a config the sweep has no time for: one of its own
    candidate space (porter.tune.space) that the model ranks above the best timed one. Such a row
    is scored on the timed configs only, which flatters the model; validate.py counts them."""
    space = {
        (c.BLOCK_M, c.BLOCK_N, c.BLOCK_K, c.num_warps, c.num_stages)
        for c in default_space(machine.target, SWEEP_DTYPES[row.dtype], row.m)
    }
    return any(
        cfg[:5] in space and predict_seconds(machine, row.m, row.n, row.k, to_config(cfg)) < best_timed_s
        for cfg in row.untimed
    )


def best_fixed_config(rows: Iterable[Row]) -> tuple | None:
    """The config with the best geomean score over `rows` among those timed on all of them."""
    rows = list(rows)
    if not rows:
        return None
    common = set(rows[0].configs)
    for row in rows[1:]:
        common &= set(row.configs)
    best, best_score = None, -math.inf
    for cfg in sorted(common):
        score = sum(math.log(row.best / row.time_of(cfg)) for row in rows)
        if score > best_score:
            best, best_score = cfg, score
    return best


def row_scores(row: Row, order: list[int], fixed: dict[str, tuple | None]) -> dict[str, float]:
    best = row.best
    out = {
        "model": best / row.ms[order[0]],
        "model_top4": best / min(row.ms[i] for i in order[:4]),
        "model_top8": best / min(row.ms[i] for i in order[:8]),
    }
    for name in ("default", "best_fixed"):
        t = row.time_of(fixed[name]) if fixed[name] else None
        out[name] = best / t if t else math.nan
    tut = [t for t in (row.time_of(c) for c in TUTORIAL) if t is not None]
    out["tutorial8"] = best / min(tut) if tut else math.nan
    return out


def summarize(scores: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    table = {}
    for sel in SELECTORS:
        vals = [s[sel] for s in scores if not math.isnan(s[sel])]
        table[sel] = {
            "geomean": math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else math.nan,
            "min": min(vals) if vals else math.nan,
            "n": len(vals),
        }
    return table


def evaluate(rows: list[Row], target: Target | str = "h200", const: ModelConstants | None = None) -> dict[str, Any]:
    """Scores per split and dtype ("cal" = calibration, "val" = held-out, "fresh" = a later suite
    never used to fit or design the model), plus per-row detail."""
    tgt = target if isinstance(target, Target) else get_target(target)
    fixed_by_dtype = {}
    for dtype in sorted({r.dtype for r in rows}):
        cal = [r for r in rows if r.dtype == dtype and r.split == "cal"]
        fixed_by_dtype[dtype] = {"default": DEFAULT_CONFIG, "best_fixed": best_fixed_config(cal)}
    detail = []
    for row in rows:
        order = model_order(row, tgt, const)
        scores = row_scores(row, order, fixed_by_dtype[row.dtype])
        machine = Machine.build(tgt, resolve_dtype(SWEEP_DTYPES[row.dtype], tgt), const or constants_for(tgt))
        pick_s = predict_seconds(machine, row.m, row.n, row.k, to_config(row.configs[order[0]]))
        detail.append(
            {
                "name": row.name,
                "split": row.split,
                "dtype": row.dtype,
                "m": row.m,
                "n": row.n,
                "k": row.k,
                "best_ms": row.best,
                "pick": list(row.configs[order[0]]),
                "pick_ms": row.ms[order[0]],
                "cublas_ms": row.cublas_ms,
                "pick_untimed": pick_untimed(row, machine, pick_s),
                **scores,
            }
        )
    out: dict[str, Any] = {
        "fixed": {d: {k: list(v) if v else None for k, v in f.items()} for d, f in fixed_by_dtype.items()},
        "rows": detail,
    }
    for split in sorted({r.split for r in rows}):
        for dtype in ["all"] + sorted(fixed_by_dtype):
            chosen = [d for d in detail if d["split"] == split and dtype in ("all", d["dtype"])]
            out[f"{split}/{dtype}"] = summarize(chosen)
    return out


def format_table(result: dict[str, Any], split: str = "val") -> str:
    """Plain-text table: selectors as rows, geomean/min per dtype as columns."""
    groups = [key for key in result if key.startswith(split + "/")]
    header = f"{'selector (' + split + ')':22s}" + "".join(
        f"{g.split('/')[1] + ' geo':>11s}{'min':>7s}" for g in groups
    )
    lines = [header]
    for sel in SELECTORS:
        cells = "".join(f"{result[g][sel]['geomean']:11.3f}{result[g][sel]['min']:7.3f}" for g in groups)
        lines.append(f"{sel:22s}{cells}")
    counts = ", ".join(f"{g.split('/')[1]}: {result[g]['model']['n']} shapes" for g in groups)
    lines.append(f"({counts})")
    return "\n".join(lines)
