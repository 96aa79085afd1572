"""The standard candidate space (perfmodel.md), filtered by feasibility on the target."""

from __future__ import annotations

import itertools
from functools import lru_cache

from porter.targets import Target, get_target
from porter.tune.config import DEFAULT_GROUP_M, GemmConfig
from porter.tune.dtypes import resolve_dtype
from porter.tune.model import Machine, infeasibility

TILE_MN = (64, 128, 256)
TILE_K = (32, 64, 128)
WARPS = (4, 8)
STAGES = (2, 3, 4, 5)
# NVIDIA: the space is what the calibration sweeps time (bench/tune/sweep.py), so that porter tune's pick is the one
# the blind splits score. At or below SMALL_M the sweeps add 32-row tiles (the Triton tutorial's 2-warp 32x64 among
# them); at every M the tutorial's narrow entries (N = 32, 2 warps): mma.sync tiles, which need no transposed fp32
# B and were the measured best for fp32 at M = 128-256, where the product's wgmma tiles ran up to 4x slower.
SMALL_M = 128
SMALL_TILES = [(32, bn, bk, 4, s) for bn in (32, 64, 128) for bk in (64, 128) for s in (3, 4, 5)] + [(32, 64, 32, 2, 5)]
NARROW_TILES = [(128, 32, 32, 4, 4), (64, 32, 32, 2, 5)]
AMD_SMALL_M = 64  # at or below this M the AMD space adds AMD_SMALL_TILES
# AMD: 16-row tiles (the 16x16 MFMA's height) and K tiles of 256, as AMD's tuned gfx942/gfx950
# tables use at small M, at the stage counts those tables use (2, 3)
AMD_SMALL_TILES = [
    (bm, bn, bk, 4, s) for bm in (16, 32) for bn in (16, 32, 64, 128) for bk in (64, 128, 256) for s in (2, 3)
]
AMD_KNOBS = {"waves_per_eu": (0, 2), "matrix_instr_nonkdim": (16, 32)}


def _amd_variants(target: Target) -> list[dict[str, int]]:
    knobs = [name for name in AMD_KNOBS if name in (target.triton.get("amd_options") or ())]
    if not knobs:
        return [{}]
    return [dict(zip(knobs, values)) for values in itertools.product(*(AMD_KNOBS[name] for name in knobs))]


def default_space(target: Target, dtype: str, m: int) -> list[GemmConfig]:
    """Feasible configs of the standard space for `dtype` on `target`; small tiles when M is small."""
    return list(_space(target.name, dtype, m <= (AMD_SMALL_M if target.is_amd else SMALL_M)))


@lru_cache(maxsize=256)
def _space(target_name: str, dtype: str, small_m: bool) -> tuple[GemmConfig, ...]:
    target = get_target(target_name)
    machine = Machine.build(target, resolve_dtype(dtype, target))
    base = list(itertools.product(TILE_MN, TILE_MN, TILE_K, WARPS, STAGES))
    if not target.is_amd:
        base += NARROW_TILES
    if small_m:
        base += AMD_SMALL_TILES if target.is_amd else SMALL_TILES
    out = []
    for (bm, bn, bk, warps, stages), extra in itertools.product(base, _amd_variants(target)):
        cfg = GemmConfig(bm, bn, bk, warps, stages, GROUP_M=DEFAULT_GROUP_M, **extra)
        if infeasibility(machine, cfg) is None:
            out.append(cfg)
    return tuple(out)
