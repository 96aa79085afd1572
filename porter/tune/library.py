"""Library advice: when the vendor BLAS (cuBLAS / hipBLASLt) is predicted faster than the best
Triton config, say so, with both predictions.

The vendor's time is a roofline per dtype, max(FLOP / (matrix peak x compute_eff), bytes / (HBM x
hbm_eff)) + launch, both rates times unaligned_eff when a row is off the 16-byte grid; its numbers are measured on the target (bench/tune/blas.py fits them
on the sweeps' cuBLAS timings) and kept in the target's `vendor_blas:` block in specs.yaml. A
target without one gets no verdict: a ceiling nobody measured is not guessed.
"""

from __future__ import annotations

import math
from typing import Any

from porter.errors import ConfigError
from porter.records import LibraryAdvice
from porter.targets import Target
from porter.tune.dtypes import resolve_dtype
from porter.tune.model import _peak_flops_clk

FASTER_MARGIN = 0.9  # the library must be predicted at least 10% faster to be recommended


def blas_ceiling(target: Target, dtype: str) -> dict[str, Any] | None:
    """The target's measured vendor-BLAS ceiling for `dtype` (None when none was measured)."""
    block = target.extra.get("vendor_blas") or {}
    if not isinstance(block, dict):
        raise ConfigError(f"specs.yaml: {target.name}.vendor_blas must be a mapping")
    entry = block.get(resolve_dtype(dtype, target).name)
    return dict(entry) if isinstance(entry, dict) else None


def blas_seconds(target: Target, dtype: str, m: int, n: int, k: int, ceiling: dict[str, Any]) -> float:
    """Predicted vendor-BLAS seconds for one GEMM under `ceiling` (compute_eff, hbm_eff, launch_us)."""
    gd = resolve_dtype(dtype, target)
    peak = target.units * target.clock_ghz * 1e9 * _peak_flops_clk(target, gd)
    flops = 2.0 * m * n * k
    moved = (m * k + k * n) * gd.in_bytes + m * n * gd.out_bytes
    slow = ceiling.get("unaligned_eff", 1.0) if _unaligned(gd.in_bytes, n, k) else 1.0
    compute = flops / (peak * ceiling["compute_eff"] * slow)
    memory = moved / (target.hbm_gbps * 1e9 * ceiling["hbm_eff"] * slow)
    return max(compute, memory) + ceiling["launch_us"] * 1e-6


def _unaligned(elem_bytes: int, n: int, k: int) -> bool:
    """Rows of A or B (row-major, contiguous along K and N) off the 16-byte grid: the libraries
    fall back to slower kernels (measured: cuBLAS about 3x under its roofline on such sizes)."""
    return bool((n * elem_bytes) % 16 or (k * elem_bytes) % 16)


def library_advice(target: Target, dtype: str, m: int, n: int, k: int, triton_ms: float) -> LibraryAdvice:
    """Compare the best Triton prediction with the vendor library's ceiling on this problem."""
    block = target.extra.get("vendor_blas") or {}
    library = str(block.get("library", "vendor BLAS")) if isinstance(block, dict) else "vendor BLAS"
    ceiling = blas_ceiling(target, dtype)
    name = resolve_dtype(dtype, target).name
    if ceiling is None:
        return LibraryAdvice(
            target.name,
            name,
            m,
            n,
            k,
            library,
            None,
            triton_ms,
            False,
            f"no measured {library} ceiling for {name} on {target.name}: cannot compare",
        )
    blas_ms = blas_seconds(target, dtype, m, n, k, ceiling) * 1e3
    faster = math.isfinite(triton_ms) and blas_ms < FASTER_MARGIN * triton_ms
    if faster:
        note = (
            f"{library} is predicted faster: {blas_ms:.4f} ms against {triton_ms:.4f} ms for the best Triton "
            f"config ({triton_ms / blas_ms:.2f}x); call torch.matmul here rather than a Triton GEMM"
        )
    elif not math.isfinite(triton_ms):
        note = f"no candidate Triton config runs on {target.name}: {library} ({blas_ms:.4f} ms) is the option left"
    else:
        note = f"Triton's best ({triton_ms:.4f} ms) is within 10% of {library} ({blas_ms:.4f} ms) or faster"
    return LibraryAdvice(target.name, name, m, n, k, library, blas_ms, triton_ms, faster, note)
