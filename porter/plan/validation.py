"""Predicted against measured: the step model on the cases bench/plan/run_h200.py timed.

Each measured case is the benchmark's description with that case's batch size, matmul precision and
table placement; the prediction uses the target's constants from specs.yaml. Cases marked for
calibration are the ones the constants were fitted on (bench/plan/calibrate.py); the rest validate.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from porter.plan.evaluate import evaluate
from porter.plan.model import ModelDesc, load_model
from porter.plan.step import plan_constants
from porter.targets import Target, get_target

BENCH = Path(__file__).resolve().parents[2] / "bench" / "plan"
CALIBRATION_CASES = {("tf32", "hbm", 2048), ("tf32", "hbm", 32768), ("bf16", "hbm", 32768), ("tf32", "host", 8192)}


@dataclass
class Case:
    precision: str
    placement: str  # "hbm" or "host" (some tables on the host)
    batch: int
    placements: dict[str, str]
    step_ms: float  # mean over runs of each run's median
    spread: float  # (max - min) / mean over runs: run-to-run noise
    peak_bytes: float
    static_bytes: float

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.precision, self.placement, self.batch)

    @property
    def calibration(self) -> bool:
        return self.key in CALIBRATION_CASES


def load_cases(paths: list[Path]) -> list[Case]:
    """Merge repeated runs of the same sweep into one case each."""
    runs = [json.loads(Path(p).read_text()) for p in paths]
    merged: dict[tuple, list[dict]] = {}
    for run in runs:
        for case in run["cases"]:
            kind = "host" if "host" in case["placement"].values() else "hbm"
            merged.setdefault((case["precision"], kind, case["batch"]), []).append(case)
    out = []
    for (precision, kind, batch), cases in merged.items():
        times = [c["step_ms_median"] for c in cases]
        mean = sum(times) / len(times)
        out.append(
            Case(
                precision,
                kind,
                batch,
                cases[0]["placement"],
                mean,
                (max(times) - min(times)) / mean,
                max(c["peak_bytes"] for c in cases),
                cases[0]["static_bytes"],
            )
        )
    return sorted(out, key=lambda c: (c.placement, c.precision, c.batch))


def case_model(desc: ModelDesc, case: Case) -> ModelDesc:
    tables = tuple(dataclasses.replace(t, placement=case.placements.get(t.name, t.placement)) for t in desc.tables)
    act = "bf16" if case.precision == "bf16" else "fp32"
    return desc.replace(
        tables=tables, batch_size_per_gpu=case.batch, matmul_precision=case.precision, activation_dtype=act
    )


def predict(desc: ModelDesc, case: Case, target: Target, constants: dict | None = None):
    """(step ms, peak bytes, batch-dependent bytes) the model predicts for one case."""
    result = evaluate(case_model(desc, case), target, constants=constants)
    return result.step.total, result.memory.total, result.memory.total - result.memory.embeddings


def compare(
    desc_path: Path | None = None,
    runs: list[Path] | None = None,
    target: str = "h200",
    constants: dict | None = None,
    only_calibration: bool = False,
) -> list[dict]:
    """One row per case: measured, predicted, relative errors, calibration flag."""
    desc = load_model(desc_path or BENCH / "h200_dlrm.yaml")
    runs = runs or sorted((BENCH / "data").glob("h200_run*.json"))
    tgt = get_target(target)
    constants = constants or plan_constants(tgt)
    rows = []
    for case in load_cases(runs):
        if only_calibration and not case.calibration:
            continue
        ms, peak, dynamic = predict(desc, case, tgt, constants)
        rows.append(
            {
                "precision": case.precision,
                "placement": case.placement,
                "batch": case.batch,
                "calibration": case.calibration,
                "measured_ms": case.step_ms,
                "predicted_ms": ms,
                "error": ms / case.step_ms - 1,
                "run_spread": case.spread,
                "measured_peak_gb": case.peak_bytes / 1e9,
                "predicted_peak_gb": peak / 1e9,
                "peak_error": peak / case.peak_bytes - 1,
                # peak less what was allocated before the first step (tables, their state, the MLPs)
                "measured_dynamic_gb": (case.peak_bytes - case.static_bytes) / 1e9,
                "predicted_dynamic_gb": dynamic / 1e9,
            }
        )
    return rows


def summary(rows: list[dict]) -> dict:
    held_out = [r for r in rows if not r["calibration"]]
    return {
        "cases": len(rows),
        "held_out": len(held_out),
        "max_abs_error_held_out": max(abs(r["error"]) for r in held_out),
        "mean_abs_error_held_out": sum(abs(r["error"]) for r in held_out) / len(held_out),
        "max_abs_peak_error": max(abs(r["peak_error"]) for r in rows),
    }
