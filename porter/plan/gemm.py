"""The one seam through which the step model prices a dense GEMM.

Two sources, chosen per target by `plan_model.gemm_source` in specs.yaml (so calibrated constants
and the GEMM model they were fitted with always travel together):
- "roofline": a tile-level roofline of its own: output tiles spread in waves over the compute
  units, each wave bound by matrix throughput or HBM traffic (the default);
- "tune": porter's Triton GEMM model (`porter.tune.predict_gemm_ms`, H7), where it prices the
  dtype; TF32 (which it does not price) and anything it refuses fall back to the roofline. When the
  output has too few tiles to fill the GPU (weight gradients of narrow layers: small M x N, K =
  the batch), the price is the best split-K a library would launch: s slices of K as one
  (s M, N, K / s) launch, plus writing and summing the fp32 partial results.
A roofline answer is divided by the target's calibrated `gemm_efficiency` (the measured share of peak);
porter.tune's answer already carries its own fitted efficiencies.
"""

from __future__ import annotations

import math
from functools import lru_cache

from porter.targets import Target, get_target

TILE = 128  # output tile edge of the roofline's model kernel (a modelling choice, not a hardware fact)
SPLIT_K = (2, 4, 8, 16, 32, 64)  # split-K factors tried when the output tiles cannot fill the GPU
MIN_SPLIT_K = 256  # shortest K slice a split leaves
OPERAND_BYTES = {"fp32": 4, "tf32": 4, "bf16x3": 4, "bf16": 2, "fp16": 2, "fp8": 1}


def effective_precision(target: Target, precision: str, tf32_fallback: str = "fp32") -> str:
    """The precision a GEMM really runs at on this target: TF32 where the target has none becomes
    full fp32 or three bf16 products (gfx950: target.tf32 == 'none')."""
    if precision == "tf32" and target.tf32 == "none":
        return tf32_fallback
    if precision == "fp8" and "fp8" not in target.matrix_flops_per_unit_clk:
        return "bf16"
    return precision


def align(target: Target, precision: str) -> tuple[int, int, int]:
    """Smallest matrix-instruction (M, N, K) the target pads a GEMM to."""
    base = "bf16" if precision in ("bf16x3", "tf32", "fp32") and target.mfma else precision
    if target.mfma:
        shapes = target.mfma.get(base) or target.mfma["bf16"]
        m, n, k, _ = shapes[0]  # specs.yaml lists the preferred instruction first
        return m, n, k
    return tuple(target.extra.get("mma_align", (1, 1, 1)))


def _rate_tflops(target: Target, precision: str) -> float:
    if precision == "bf16x3":
        return target.peak_tflops("bf16") / 3
    return target.peak_tflops(precision)


def roofline_gemm_ms(target: Target, precision: str, m: int, n: int, k: int) -> float:
    """Ideal time of one GEMM: waves of TILE x TILE output tiles, compute- or memory-bound."""
    am, an, ak = align(target, precision)
    pm, pn, pk = (math.ceil(x / a) * a for x, a in ((m, am), (n, an), (k, ak)))
    tiles = math.ceil(pm / TILE) * math.ceil(pn / TILE)
    waves = math.ceil(tiles / target.units)
    tile_flops = 2 * min(pm, TILE) * min(pn, TILE) * pk
    per_unit = _rate_tflops(target, precision) * 1e12 / target.units
    compute_s = waves * tile_flops / per_unit
    memory_s = (m * k + k * n + m * n) * OPERAND_BYTES[precision] / (target.hbm_gbps * 1e9)
    return max(compute_s, memory_s) * 1e3


def gemm_ms(
    target: Target, precision: str, m: int, n: int, k: int, source: str = "roofline", roofline_efficiency: float = 1.0
) -> float:
    """GEMM time in ms from the chosen source (see the module docstring)."""
    return _cached_gemm_ms(target.name, precision, m, n, k, source, roofline_efficiency)


@lru_cache(maxsize=8192)
def _cached_gemm_ms(
    target_name: str, precision: str, m: int, n: int, k: int, source: str, roofline_efficiency: float
) -> float:
    target = get_target(target_name)
    predicted = _from_tune(target, precision, m, n, k) if source == "tune" else None
    if predicted is not None:
        return predicted
    return roofline_gemm_ms(target, precision, m, n, k) / roofline_efficiency


def _from_tune(target: Target, precision: str, m: int, n: int, k: int) -> float | None:
    from porter.tune import predict_gemm_ms  # the analytical GEMM model

    dtype, repeats = ("bf16", 3) if precision == "bf16x3" else (precision, 1)
    if precision in ("tf32", "fp32"):
        # porter.tune's "fp32" is the target's best fp32 dot: TF32 where native. It prices a TF32 GEMM
        # there; a true fp32 GEMM (or TF32 where the target has none) is left to the roofline.
        if precision == "fp32" or target.tf32 != "native":
            return None
        dtype = "fp32"
    if dtype == "fp8":
        dtype = "fp8e4m3fnuz" if target.fp8_family == "fnuz" else "fp8e4m3"
    if dtype not in ("bf16", "fp16", "fp32", "fp8e4m3", "fp8e4m3fnuz"):
        return None
    try:
        value = repeats * _split_k_ms(target, dtype, m, n, k, predict_gemm_ms)
    except Exception:  # a shape or dtype the tune model refuses: fall back to the roofline
        return None
    # a framework's matmul calls the vendor BLAS: where the target has a measured ceiling
    # (porter.tune.library, e.g. cuBLAS TF32 2-3x faster than the best Triton GEMM), the faster wins
    from porter.tune.library import blas_ceiling, blas_seconds

    ceiling = blas_ceiling(target, dtype)
    if ceiling is not None:
        value = min(value, repeats * blas_seconds(target, dtype, m, n, k, ceiling) * 1e3)
    return value if math.isfinite(value) else None


def _split_k_ms(target: Target, dtype: str, m: int, n: int, k: int, predict) -> float:
    """The tune model's time, or a split-K launch's where the output leaves units idle."""
    best = float(predict(target, dtype, m, n, k))
    if math.ceil(m / TILE) * math.ceil(n / TILE) >= target.units:
        return best
    for split in SPLIT_K:
        if k // split < MIN_SPLIT_K:
            break
        partials = 2 * split * m * n * 4 / (target.hbm_gbps * 1e9) * 1e3  # fp32 partials written, then read
        best = min(best, float(predict(target, dtype, split * m, n, math.ceil(k / split))) + partials)
    return best


def gemm_source(source: str) -> str:
    """Which model priced the GEMMs, for the report."""
    if source != "tune":
        return "porter.plan tile roofline"
    return "porter.tune.predict_gemm_ms (full fp32 via the roofline)"
