"""Analytical time model of the plain Triton matmul (the tutorial kernel: grouped program order
with GROUP_M, masked loads, fp32 accumulator) on one target.

Every hardware number comes from the target spec (porter.targets); the few free efficiency and
overhead factors come from `ModelConstants` (spec-derived defaults, fit per target where a GPU was
available). Terms, in the order perfmodel.md lists them:

1. feasibility: threads, LDS per the target's pipeliner, accumulator registers, MFMA fit;
2. tiles and waves: tiles = ceil(M/BM) ceil(N/BN) over units x resident blocks per unit;
3. tile waste: padded BM x BN x BK work is computed; masked rows cost no DRAM traffic;
4. compute per K step: the matrix rate of the instruction the config gets (wgmma or mma.sync on
   NVIDIA; the MFMA shape on AMD, with fp32 as tf32 where native, bf16x3 = three bf16 products);
5. memory per K step: L2 -> unit bytes, DRAM bytes after L2 reuse among the tiles that run
   together in GROUP_M order (per XCD on AMD: workgroups are dispatched round-robin over XCDs,
   each with a private L2, misses served by the Infinity Cache), the load latency the stages cover;
6. overlap: with loads in flight, compute, memory and latency per K step combine as a p-norm
   (`overlap_power`; infinite = the slowest alone); with none in flight (or element-wise loads,
   which serialise the loop) a tile's steps add up and co-resident tiles fill the waits; plus a
   fixed cost per K iteration, per tile (prologue/epilogue, C store) and per launch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from porter.errors import ConfigError
from porter.targets import Target
from porter.tune.config import GemmConfig
from porter.tune.constants import ModelConstants, constants_for, stage_buffers
from porter.tune.dtypes import GemmDtype

INFEASIBLE = math.inf


@dataclass(frozen=True)
class Machine:
    """The target facts one prediction needs, read once per (target, dtype, constants)."""

    target: Target
    dtype: GemmDtype
    const: ModelConstants
    clock_hz: float
    units: int
    wave: int
    peak_flops_clk: float  # per unit, the dtype's full matrix rate (before efficiency)
    hbm_bps: float  # achievable HBM bytes/s
    l2_unit_bps: float  # L2 -> one unit bytes/s
    l2_device_bps: float  # L2 -> all units bytes/s
    wrapped_bps: float | None  # re-reads of wrapped rows (M < BLOCK_M), device-wide
    l2_reuse_bytes: float  # operand size that stays resident across waves
    xcds: int  # L2 domains (1 = one device-wide L2)
    mall_bps: float | None
    latency_s: float  # L2 miss
    l2_latency_s: float  # L2 hit
    mma_buffers: int  # stage buffers held by an in-flight async MMA
    lds_bps: float | None  # shared memory / LDS bytes/s of one unit (None: not in the spec)
    mfma_table: tuple | None = None  # AMD: the dtype's MFMA instructions, (M, N, K, cycles) each

    @classmethod
    def build(cls, target: Target, dtype: GemmDtype, const: ModelConstants | None = None) -> Machine:
        const = const or constants_for(target)
        clock = target.clock_ghz * 1e9
        per_xcd = target.l2_scope == "xcd" and target.xcds > 1
        reuse_pool = target.mall_bytes if per_xcd and target.mall_bytes else (target.l2_bytes or 0)
        return cls(
            target=target,
            dtype=dtype,
            const=const,
            clock_hz=clock,
            units=target.units,
            wave=target.wave_size,
            peak_flops_clk=_peak_flops_clk(target, dtype),
            hbm_bps=target.hbm_gbps * 1e9 * const.hbm_eff,
            l2_unit_bps=const.l2_bytes_per_unit_clk * clock,
            l2_device_bps=(const.l2_device_bytes_per_clk or const.l2_bytes_per_unit_clk * target.units) * clock,
            wrapped_bps=_wrapped_bytes_per_clk(const, dtype) * clock if const.wrapped_bytes_per_clk else None,
            l2_reuse_bytes=reuse_pool * const.l2_fraction,
            xcds=target.xcds if per_xcd else 1,
            mall_bps=const.mall_gbps * 1e9 if (per_xcd and const.mall_gbps) else None,
            latency_s=const.mem_latency_ns * 1e-9,
            l2_latency_s=const.l2_latency_ns * 1e-9,
            mma_buffers=(
                const.async_mma_buffers
                if const.async_mma_buffers is not None
                else int(bool(target.features.get("wgmma")))
            ),
            lds_bps=(
                target.extra["lds_bytes_per_clk"] * clock * const.lds_eff
                if target.extra.get("lds_bytes_per_clk")
                else None
            ),
            mfma_table=_mfma_table(target, dtype),
        )


def _wrapped_bytes_per_clk(const: ModelConstants, dtype: GemmDtype) -> float:
    return const.wrapped_by_dtype.get(dtype.rate_key, const.wrapped_bytes_per_clk or 0.0)


def _peak_flops_clk(target: Target, dtype: GemmDtype) -> float:
    rates = target.matrix_flops_per_unit_clk
    if dtype.rate_key == "bf16x3":  # three bf16 products per fp32 product
        return rates["bf16"] / 3.0
    return float(rates[dtype.rate_key])


# ---------------------------------------------------------------- feasibility


def lds_bytes(machine: Machine, cfg: GemmConfig, unaligned: Unaligned | None = None) -> int:
    """Shared memory / LDS the pipelined loop allocates for A and B tiles. An operand loaded
    element-wise (see `unaligned_loads`) is staged through registers into a single buffer; only
    the operands with async copies get one buffer per stage (the sweeps' compile records)."""
    elem = machine.dtype.in_bytes
    stages = cfg.num_stages
    if stages <= 1:  # single-stage: one tile at a time
        return max(cfg.BLOCK_M, cfg.BLOCK_N) * cfg.BLOCK_K * elem
    buffers = stage_buffers(machine.const, stages)
    a_loaded = 1  # buffers of an element-wise A
    if machine.target.features.get("wgmma") and not _uses_wgmma(machine, cfg):
        # mma.sync reads its operands into registers: no buffer stays held by the MMA, and an
        # element-wise A goes from its loads straight to the MMA's registers
        buffers, a_loaded = stages - 1, 0
    a_buffers = a_loaded if unaligned and unaligned.a else buffers
    b_buffers = 1 if unaligned and unaligned.b else buffers
    tiles = (a_buffers * cfg.BLOCK_M + b_buffers * cfg.BLOCK_N) * cfg.BLOCK_K * elem
    return int(tiles * (1.0 + machine.const.lds_padding))


def acc_regs(machine: Machine, cfg: GemmConfig) -> float:
    """fp32 accumulator registers per lane. On AMD a tile narrower than its MFMA is padded to it:
    BLOCK_M = 16 on 32x32 instructions holds 32 rows of accumulators (gfx942/gfx950 compile
    records: 16x16x256 on 4 warps, 68 VGPRs with nonkdim 16, 128 with 32)."""
    bm, bn = cfg.BLOCK_M, cfg.BLOCK_N
    if machine.target.is_amd and machine.mfma_table:
        dim = _nonkdim(cfg)
        bm, bn = max(bm, dim), max(bn, dim)
    return bm * bn / (cfg.num_warps * machine.wave)


def infeasibility(machine: Machine, cfg: GemmConfig, unaligned: Unaligned | None = None) -> str | None:
    """Why `cfg` cannot run well on the target (None when it can); `unaligned`: the shape's
    element-wise operands (None: sizes aligned, the most shared memory a config can need)."""
    target, const = machine.target, machine.const
    threads = cfg.num_warps * machine.wave
    if threads > target.max_threads_per_block:
        return f"{cfg.num_warps} warps x {machine.wave} lanes = {threads} threads > {target.max_threads_per_block}"
    lds = lds_bytes(machine, cfg, unaligned)
    if lds > target.lds_bytes:
        return f"needs {lds // 1024} KiB of shared memory/LDS, {target.name} has {target.lds_bytes // 1024} KiB"
    if target.is_amd and cfg.waves_per_eu:
        most = _amd_fact(target, target.waves_per_simd_max, "waves_per_simd_max")
        if cfg.waves_per_eu > most:  # an occupancy the SIMD cannot hold: the compiler ignores the hint
            return f"waves_per_eu={cfg.waves_per_eu} > {target.name}'s {most} waves per SIMD"
    cap = const.max_acc_regs  # AMD: a waves_per_eu budget below the need spills (see spill_factor)
    acc = acc_regs(machine, cfg)
    if acc > cap:
        return f"{acc:.0f} accumulator registers per lane (> {cap}): spills"
    if target.is_amd and _mfma(machine, cfg) is None:
        return (
            f"no {machine.dtype.name} MFMA fits BLOCK_K={cfg.BLOCK_K} / matrix_instr_nonkdim={cfg.matrix_instr_nonkdim}"
        )
    return None


# ---------------------------------------------------------------- compute rate


def _nonkdim(cfg: GemmConfig) -> int:
    if cfg.matrix_instr_nonkdim:
        return cfg.matrix_instr_nonkdim
    return 32 if min(cfg.BLOCK_M, cfg.BLOCK_N) >= 32 else 16  # the compiler's choice when unset


def _amd_fact(target: Target, value: int | None, name: str) -> int:
    """A fact every AMD target's specs.yaml entry carries; a clear error when one does not."""
    if value is None:
        raise ConfigError(f"specs.yaml: {target.name} has no {name}, which the GEMM model needs")
    return value


def _mfma(machine: Machine, cfg: GemmConfig) -> Sequence[int] | None:
    """The fastest MFMA of the config's non-K dim whose K fits BLOCK_K: (M, N, K, cycles)."""
    if not machine.mfma_table:
        return (16, 16, 1, 0)  # no matrix instruction listed: flat rate from the spec
    # a tile narrower than the instruction is padded to it (compiles on gfx942/gfx950: BLOCK_M = 8
    # with nonkdim 16 or 32), at the padded tile's compute and registers
    return _fastest_mfma(machine.mfma_table, _nonkdim(cfg), cfg.BLOCK_K)


def _kpack(machine: Machine, cfg: GemmConfig) -> int:
    """The kpack the compiler applies: only where the target takes the option (gfx942; gfx950 sets it
    to 1) and BLOCK_K holds kpack of the MFMA's K (gfx942 compiles of BLOCK_K 16 with kpack 2 are
    identical to kpack 1)."""
    if not cfg.kpack or cfg.kpack <= 1 or "kpack" not in (machine.target.triton.get("amd_options") or ()):
        return 1
    ins = _mfma(machine, cfg)
    return cfg.kpack if ins is not None and ins[2] * cfg.kpack <= cfg.BLOCK_K else 1


def _mfma_table(target: Target, dtype: GemmDtype) -> tuple | None:
    key = "bf16" if dtype.rate_key == "bf16x3" else dtype.rate_key
    table = (target.mfma or {}).get(key) if target.is_amd else None
    return tuple(tuple(ins) for ins in table) if table else None


@lru_cache(maxsize=1024)
def _fastest_mfma(table: tuple, dim: int, block_k: int) -> tuple[int, int, int, int] | None:
    fits = [ins for ins in table if ins[0] == dim and ins[2] <= block_k]
    return max(fits, key=lambda ins: ins[0] * ins[1] * ins[2] / ins[3]) if fits else None


def unit_flops_clk(machine: Machine, cfg: GemmConfig) -> tuple[float, int, int]:
    """(FLOP per clock one unit gives this tile, padded BM, padded BN)."""
    target, const = machine.target, machine.const
    eff = const.eff(machine.dtype.rate_key)
    bm, bn = cfg.BLOCK_M, cfg.BLOCK_N
    if target.is_amd:
        ins = _mfma(machine, cfg)
        if ins is None or ins[3] == 0:
            return machine.peak_flops_clk * eff, bm, bn
        m_i, n_i, k_i, cycles = ins
        simds = _amd_fact(target, target.simds_per_unit, "simds_per_unit")
        per_simd = 2.0 * m_i * n_i * k_i / cycles
        if machine.dtype.rate_key == "bf16x3":
            per_simd /= 3.0
        if m_i >= 32:  # coarser instructions: fewer slots to hide the LDS reads behind (see specs.yaml)
            per_simd *= const.mfma32_interleave_eff
        pad_m, pad_n = -(-bm // m_i) * m_i, -(-bn // n_i) * n_i
        # each SIMD runs the MFMAs of its own warps; a tile with fewer MFMA blocks than warps leaves
        # the extra warps duplicating work (the compiler replicates the layout), not adding rate
        busy = min(simds, cfg.num_warps, (pad_m // m_i) * (pad_n // n_i))
        return per_simd * busy * eff, pad_m, pad_n
    rate = machine.peak_flops_clk * eff
    # warpgroup MMA needs whole warpgroups and 64 rows per warpgroup; else mma.sync
    if _uses_wgmma(machine, cfg):
        if bn >= 256 and cfg.num_warps > 4:  # 256-wide tiles on two warpgroups (measured)
            rate *= const.wide_mma_eff.get(machine.dtype.rate_key, 1.0)
    elif target.features.get("wgmma"):
        rate *= const.mma_fallback_eff_by_dtype.get(machine.dtype.rate_key, const.mma_fallback_eff)
        rate = _with_fragment_conversion(machine, cfg, rate)
    return rate, bm, bn


def _with_fragment_conversion(machine: Machine, cfg: GemmConfig, mma_rate: float) -> float:
    """FLOP per clock of an mma.sync tile whose 1-byte operands are converted before the MMA.
    sm_90 has no fp8 mma.sync: Triton reads fp8 fragments (ldmatrix) and turns them into f16
    (cvt.rn.f16x2.e4m3x2) for the f16 MMA. Each warp converts the A rows and B columns of its
    place in the warp grid once per K step and reuses them over its whole warp tile, so the
    conversions per FLOP fall as the warp tile grows: 32x128 tiles (warp tiles 32x32) measured
    ~2x faster per FLOP than 32x32 ones (16x16) at M <= 128, where a flat rate put them level.
    Conversions and MMAs issue from the same warps in a dependent chain: their times add."""
    per_clk = machine.const.sync_convert_elems_per_unit_clk
    if not per_clk or machine.dtype.in_bytes != 1:
        return mma_rate
    wm, wn = _warp_grid(cfg.BLOCK_M, cfg.BLOCK_N, cfg.num_warps)
    converted = (wn * cfg.BLOCK_M + wm * cfg.BLOCK_N) * cfg.BLOCK_K
    flops = 2.0 * cfg.BLOCK_M * cfg.BLOCK_N * cfg.BLOCK_K
    return flops / (flops / mma_rate + converted / per_clk)


def four_byte_copies(machine: Machine, cfg: GemmConfig, unaligned: Unaligned | None = None) -> tuple[int, int]:
    """(transposed, in order): elements per K step that one tile copies to shared memory with
    4-byte async copies, one element per copy. TF32 warpgroup MMAs read 32-bit operands only
    K-major, so Triton turns a row-major B around on its way in (compiled PTX for sm_90:
    cp.async.ca 4-byte for B, cp.async.cg 16-byte for A; 16-bit operands keep 16-byte copies).
    32-bit rows off the 16-byte grid (`Unaligned.narrow_a/b`) are copied 4 bytes at a time in
    order: no transposed writes, but four times the copies of a 16-byte row. mma.sync configs
    load an aligned B in rows and read it with scalar shared loads."""
    if machine.dtype.in_bytes != 4 or not machine.target.features.get("wgmma"):
        return 0, 0
    transposed = 0
    if not machine.dtype.b_k_contiguous and _uses_wgmma(machine, cfg):
        transposed = cfg.BLOCK_N * cfg.BLOCK_K
    in_order = 0
    if unaligned is not None:
        in_order += cfg.BLOCK_M * cfg.BLOCK_K * unaligned.narrow_a
        in_order += cfg.BLOCK_N * cfg.BLOCK_K * (unaligned.narrow_b and not transposed)
    return transposed, in_order


def l1_overflow(machine: Machine, cfg: GemmConfig, blocks: int, unaligned: Unaligned | None = None) -> float:
    """Share of the transposed 4-byte B copies in flight that the L1 cannot hold (0 to 1). Those copies go through
    L1 (cp.async.ca) one element each, so the lines of every stage in flight must stay there to be read whole; L1
    is what the unified array keeps beside the shared memory the resident tiles take (rounded up to the driver's
    carve-out). Measured on the fp32 sweeps: 256x64x32 on 5 stages (200 KB: 28 KB of L1 for 32 KB of B copies in
    flight) runs 2-5% slower than on 4 (160 KB), which the model otherwise ranks level. `blocks`: resident tiles
    per unit (blocks_per_unit)."""
    target = machine.target
    unified, carveouts = target.extra.get("l1_shared_bytes"), target.extra.get("shared_carveouts_kb")
    if not (machine.const.l1_overflow_cost and unified and carveouts):
        return 0.0
    transposed = four_byte_copies(machine, cfg, unaligned)[0]
    if not transposed:
        return 0.0
    shared = lds_bytes(machine, cfg, unaligned) * blocks
    carved = next((kb * 1024 for kb in carveouts if kb * 1024 >= shared), shared)
    in_flight = transposed * machine.dtype.in_bytes * blocks * max(0, cfg.num_stages - 1)
    return max(0.0, in_flight - (unified - carved)) / in_flight if in_flight else 0.0


def _uses_wgmma(machine: Machine, cfg: GemmConfig) -> bool:
    return bool(machine.target.features.get("wgmma")) and cfg.num_warps % 4 == 0 and cfg.BLOCK_M >= 64


def _wgmma_grid(cfg: GemmConfig) -> tuple[int, int]:
    """Warpgroups along M and along N: along M first, 64 rows each at least."""
    groups = cfg.num_warps // 4
    along_m = max(1, min(groups, cfg.BLOCK_M // 64))
    return along_m, groups // along_m


@lru_cache(maxsize=1024)
def _warp_grid(bm: int, bn: int, warps: int) -> tuple[int, int]:
    """Warps along M and along N for mma.sync / MFMA tiles: the split that reads least."""
    splits = [
        (wm, warps // wm)
        for wm in (1, 2, 4, 8, 16)
        if wm <= warps and warps % wm == 0 and wm <= max(1, bm // 16) and warps // wm <= max(1, bn // 16)
    ]
    return min(splits, key=lambda s: s[1] * bm + s[0] * bn, default=(warps, warps))


def lds_step_bytes(machine: Machine, cfg: GemmConfig, unaligned: Unaligned | None = None) -> float:
    """Shared memory / LDS bytes one tile moves per K step: the A and B tiles written once, then
    read by the matrix instructions. A warpgroup MMA (Hopper) reads its A rows and, per 64-row
    slice, the whole B tile; warps on mma.sync and MFMA read the A rows and B columns of their
    place in the warp grid (the split that reads least). Rows narrower than the 128-byte
    swizzle pattern conflict on banks: their bytes count (128 / row bytes) ** lds_row_exponent,
    except for operands loaded element-wise (stored by the loading threads, not by async copies;
    measured: fp8 with element-wise loads runs fastest at BLOCK_K = 32)."""
    bm, bn, bk, warps = cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, cfg.num_warps
    if _uses_wgmma(machine, cfg):
        along_m, along_n = _wgmma_grid(cfg)
        a_reads, b_reads = along_n * bm, bm * bn / 64
    else:
        wm, wn = _warp_grid(bm, bn, warps)
        a_reads, b_reads = wn * bm, wm * bn
    elem = machine.dtype.in_bytes
    b_row = bk if machine.dtype.b_k_contiguous else bn  # B's contiguous extent in the tile
    exponent = machine.const.lds_row_exponent
    a_cost = 1.0 if unaligned and unaligned.a else (128 / min(128, bk * elem)) ** exponent
    b_cost = 1.0 if unaligned and unaligned.b else (128 / min(128, b_row * elem)) ** exponent
    return ((bm + a_reads) * a_cost + (bn + b_reads) * b_cost) * bk * elem


def registers_needed(machine: Machine, cfg: GemmConfig, unaligned: Unaligned | None = None) -> float:
    """Registers per lane the kernel asks for: accumulators plus a fixed overhead (addresses,
    MMA fragments, async-copy bookkeeping); with element-wise loads a smaller fixed part plus the
    staged values and their addresses. Past the target's limit the excess spills."""
    return max(_loop_registers(machine, cfg, unaligned), _store_registers(machine, cfg, unaligned))


def _store_registers(machine: Machine, cfg: GemmConfig, unaligned: Unaligned | None) -> float:
    """Registers per lane of an epilogue that stores C element by element with M off the grid as
    well as N: each element carries its own address and row and column predicates (a row predicate
    is constant over 16 rows when M is on the grid). In the sweeps' compile records that class alone
    adds registers, and only with element-wise stores (fp8 256x128x32 on 8 warps: 255 + 46 spilled
    with N off the grid, 255 + 156 with M too; bf16 and fp16 alike), and its rows alone are measured
    slower for it (1.3-1.5x the prediction at every K, so the spills sit in the K loop); the epilogue
    of N off the grid alone spills once per tile, unmeasurable in the timings, and is not priced."""
    if unaligned is None or not unaligned.store_rows:  # (an Unaligned with stores only is falsy)
        return 0.0
    const = machine.const
    return acc_regs(machine, cfg) * const.store_row_regs_by_dtype.get(
        machine.dtype.rate_key, const.store_row_regs_per_acc
    )


def _loop_registers(machine: Machine, cfg: GemmConfig, unaligned: Unaligned | None) -> float:
    """Registers per lane of the K loop (see registers_needed)."""
    const = machine.const
    threads = cfg.num_warps * machine.wave
    if not unaligned:
        # AMD: plus the registers the operand tiles pass through per lane (gfx942's stream
        # pipeliner holds the next tile's global loads in registers; gfx950 copies to LDS directly)
        tile_dwords = (cfg.BLOCK_M + cfg.BLOCK_N) * cfg.BLOCK_K * machine.dtype.in_bytes / (4 * threads)
        # NVIDIA: each 4-byte copy a thread issues per K step keeps its own address and predicate
        copies = sum(four_byte_copies(machine, cfg, unaligned)) / threads
        per_tile_dword = const.reg_per_tile_dword - const.kpack_reg_saving * (_kpack(machine, cfg) - 1)
        return (
            acc_regs(machine, cfg)
            + const.reg_overhead
            + per_tile_dword * tile_dwords
            + const.copy_regs_per_elem * copies
        )
    per_elem = const.unaligned_regs_per_elem
    if not unaligned.along_n and const.k_only_regs_per_elem is not None:
        # loads along K only: within a row the addresses differ by constants, so ptxas recomputes
        # them instead of holding each (no offs % N wraps); the compile records fit fp8 128x128x64
        # on 8 warps in 255 registers with none spilled, 16-bit 64x256x64 in 128
        per_elem = const.k_only_regs_per_elem
    staged = per_elem * unaligned.elements / threads
    return acc_regs(machine, cfg) + const.unaligned_reg_overhead + staged


def blocks_per_unit(
    machine: Machine, cfg: GemmConfig, unaligned: Unaligned | None = None, regs: float | None = None
) -> int:
    """Resident blocks per unit, limited by threads, registers (`regs`: registers_needed, when the caller has it)
    and shared memory."""
    target, const = machine.target, machine.const
    threads = cfg.num_warps * machine.wave
    if regs is None:
        regs = registers_needed(machine, cfg, unaligned)
    if const.max_threads_per_unit is None:  # constants_for always sets it; a spec block may not null it
        raise ConfigError(f"specs.yaml: {target.name}: the GEMM model has no max_threads_per_unit")
    limits = [const.max_threads_per_unit // threads]
    lds = lds_bytes(machine, cfg, unaligned)
    if lds:
        limits.append(target.lds_bytes // lds)
    if target.is_amd:
        simds = _amd_fact(target, target.simds_per_unit, "simds_per_unit")
        waves_simd = min(
            _amd_fact(target, target.waves_per_simd_max, "waves_per_simd_max"),
            int(target.registers["vgprs_per_wave_max"] // regs),
        )
        if cfg.waves_per_eu:  # the compiler budgets registers for this occupancy (spilling if it must)
            waves_simd = cfg.waves_per_eu
        limits.append(waves_simd // -(-cfg.num_warps // simds))
    else:
        per_unit = target.registers["per_unit_32bit"]
        limits.append(int(per_unit // (threads * min(regs, target.registers["per_thread_max"]))))
    return max(1, min(limits))


# ---------------------------------------------------------------- memory footprint of a wave


def _footprint(tiles: int, tiles_m: int, tiles_n: int, group: int) -> tuple[int, int]:
    """Distinct tile-rows and tile-columns among `tiles` consecutive programs in GROUP_M order."""
    g = max(1, min(group, tiles_m))
    per_group = g * tiles_n
    if tiles <= per_group:
        rows = min(g, tiles)
        return rows, -(-tiles // rows)
    return min(tiles_m, g * -(-tiles // per_group)), tiles_n


def _xcd_footprint(tiles: int, rows: int, cols: int, tiles_m: int, group: int, xcds: int) -> tuple[int, int]:
    """Tile-rows and -columns one XCD touches when programs go round-robin over `xcds`."""
    per_xcd = -(-tiles // xcds)
    g = max(1, min(group, tiles_m))
    rows_x = min(rows, per_xcd, max(1, g // math.gcd(g, xcds)) * max(1, -(-rows // g)))
    cols_x = min(cols, per_xcd, max(1, -(-cols * g // xcds)) if g < xcds else cols)
    cols_x = max(cols_x, -(-per_xcd // rows_x))
    return rows_x, cols_x


# ---------------------------------------------------------------- time


def predict_seconds(machine: Machine, m: int, n: int, k: int, cfg: GemmConfig) -> float:
    """Predicted kernel time in seconds (math.inf when infeasible)."""
    unaligned = unaligned_loads(machine, n, k, cfg, m)
    if infeasibility(machine, cfg, unaligned) is not None:
        return INFEASIBLE
    return time_seconds(machine, m, n, k, cfg, unaligned)


def pick_order(machine: Machine, m: int, predicted: Sequence[tuple[float, GemmConfig]]) -> list[int]:
    """Indices of (seconds, config) pairs, best first: by predicted time (fewer stages first on a tie), except for
    near-ties of the best, which two constants may reorder: at small M (on the rate keys the constants name) the
    deepest pipeline then the fewest warps go first (ModelConstants.small_m_tie_share), and on targets whose
    pipeliner has a stage guidance, configs within that guidance go first (guided_stages_tie_share)."""
    # an exact tie is usually stages past the K loop's length (see _loads_ahead): the shallower holds less LDS
    order = sorted(range(len(predicted)), key=lambda i: (predicted[i][0], predicted[i][1].num_stages))
    if not order or math.isinf(predicted[order[0]][0]):
        return order
    const = machine.const
    share = const.small_m_tie_share
    if share and m <= const.small_m_tie_max_m and machine.dtype.rate_key in const.small_m_tie_rate_keys:
        ties = _near_ties(predicted, order, share)
        ties.sort(key=lambda i: (-predicted[i][1].num_stages, predicted[i][1].num_warps, predicted[i][0]))
        return ties + order[len(ties) :]
    if const.guided_stages_tie_share:
        guided = int(machine.target.triton["gemm_num_stages"])
        ties = _near_ties(predicted, order, const.guided_stages_tie_share)
        ties.sort(key=lambda i: predicted[i][1].num_stages > guided)  # stable: time order within each side
        return ties + order[len(ties) :]
    return order


def _near_ties(predicted: Sequence[tuple[float, GemmConfig]], order: list[int], share: float) -> list[int]:
    """The head of `order` predicted within `share` of the best."""
    limit = predicted[order[0]][0] * (1.0 + share)
    return [i for i in order if predicted[i][0] <= limit]


def time_seconds(
    machine: Machine, m: int, n: int, k: int, cfg: GemmConfig, unaligned: Unaligned | None = None
) -> float:
    """Predicted seconds of a config already known to be feasible: whole waves plus the rest
    (`unaligned`: the shape's element-wise operands when the caller has them already)."""
    const = machine.const
    bm, bn = cfg.BLOCK_M, cfg.BLOCK_N
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    splits, k_steps = _k_slices(k, cfg)
    tiles = tiles_m * tiles_n * splits
    if unaligned is None:
        unaligned = unaligned_loads(machine, n, k, cfg, m)
    regs = registers_needed(machine, cfg, unaligned)
    blocks = blocks_per_unit(machine, cfg, unaligned, regs)
    slots = machine.units * blocks
    full, rest = divmod(tiles, slots)
    waves = full + (1 if rest else 0)
    rate, pad_m, pad_n = unit_flops_clk(machine, cfg)
    ctx = _StepContext(
        machine, m, n, k, cfg, tiles_m, tiles_n, waves, k_steps, rate, pad_m, pad_n, unaligned, splits, regs, blocks
    )
    total = full * ctx.wave_time(slots) if full else 0.0
    if rest:
        total += ctx.wave_time(rest)
    return total * ctx.spill_factor + const.launch_us * 1e-6 + _reduce_seconds(machine, m, n, splits)


def _k_slices(k: int, cfg: GemmConfig) -> tuple[int, int]:
    """(K slices that run, K steps per slice). Split-K as AMD's aiter GEMMs run it: each slice
    covers cdiv(cdiv(K, NUM_KSPLIT), BLOCK_K) BLOCK_K steps, one program per (tile, slice)."""
    steps = -(-k // cfg.BLOCK_K)
    if cfg.k_splits <= 1:
        return 1, steps
    per_slice = -(-steps // cfg.k_splits)
    return -(-steps // per_slice), per_slice


def _reduce_seconds(machine: Machine, m: int, n: int, splits: int) -> float:
    """Split-K's second kernel: it reads the slices' fp32 partials and writes C (0 without split-K)."""
    if splits <= 1:
        return 0.0
    const = machine.const
    moved = m * n * (splits * 4 + machine.dtype.out_bytes)
    fixed = const.launch_us if const.reduce_launch_us is None else const.reduce_launch_us
    return moved / machine.hbm_bps + fixed * 1e-6


@dataclass(frozen=True)
class Unaligned:
    """Per tile and K step, the operand elements Triton loads one by one: an operand whose
    contiguous extent (and row stride) it cannot prove divisible by 16 gets no vector loads and
    no async copies. Loads along K (A; B when column-major) and along N (row-major B) run at
    separate rates: on the H200 the ones along N measured about half as fast per byte.
    `store` is set when C's rows are unaligned: the epilogue stores element by element;
    `store_rows` when M is off the grid too: each stored element has its own row predicate."""

    along_k: int = 0
    along_n: int = 0
    store: bool = False
    a: bool = False  # A is loaded element-wise
    b: bool = False  # B is loaded element-wise
    narrow_a: bool = False  # A goes by 4-byte async copies (32-bit elements, rows off 16 bytes)
    narrow_b: bool = False  # likewise B
    store_rows: bool = False  # element-wise C stores with M off the grid: a predicate per element

    @property
    def elements(self) -> int:
        return self.along_k + self.along_n

    def __bool__(self) -> bool:
        return self.along_k > 0 or self.along_n > 0


def unaligned_loads(machine: Machine, n: int, k: int, cfg: GemmConfig, m: int | None = None) -> Unaligned:
    """The shape's element-wise operands and stores (`m`: None when only N and K are known; M = 1
    is compiled as a constant, its row predicate too)."""
    div = machine.const.specialize_divisor
    a = bool(k % div)  # A is row-major: contiguous along K
    b = bool(k % div) if machine.dtype.b_k_contiguous else bool(n % div)
    store = bool(n % div)
    rows = store and m is not None and m != 1 and bool(m % div)
    if machine.dtype.in_bytes >= 4:  # a 4-byte async copy needs no more alignment than one element:
        return Unaligned(store=store, narrow_a=a, narrow_b=b, store_rows=rows)  # pipelined, narrower copies
    a_elems, b_elems = cfg.BLOCK_M * cfg.BLOCK_K * a, cfg.BLOCK_N * cfg.BLOCK_K * b
    if machine.dtype.b_k_contiguous:
        return Unaligned(a_elems + b_elems, 0, store, a, b, store_rows=rows)
    return Unaligned(a_elems, b_elems, store, a, b, store_rows=rows)


def _register_limit(target: Target) -> int:
    regs = target.registers
    return regs["per_thread_max"] if "per_thread_max" in regs else regs["vgprs_per_wave_max"]


def _overlap(power: float, *times: float) -> float:
    """Time of work on resources that run concurrently: the slowest one when `power` is infinite;
    a finite power adds queueing when several are near their limit (a p-norm of the times)."""
    top = max(times)
    if math.isinf(power) or top <= 0.0:
        return top
    total = 0.0
    for t in times:  # a plain loop: this runs several times per candidate
        total += (t / top) ** power
    return top * total ** (1.0 / power)


class _StepContext:
    """Per-config quantities shared by the (at most two) distinct waves of one launch."""

    __slots__ = (
        "mc",
        "m",
        "n",
        "cfg",
        "tiles_m",
        "tiles_n",
        "k_steps",
        "step_flops",
        "rate",
        "a_cross_wave",
        "b_cross_wave",
        "elem",
        "unaligned",
        "spill_factor",
        "lds_bytes",
        "copy_s",
        "splits",
        "out_bytes",
        "waves",
        "elementwise",
        "wgmma",
        "tile_bytes",
        "fixed",
        "a_cost",
        "b_cost",
        "l1_stall",
    )

    def __init__(
        self, mc, m, n, k, cfg, tiles_m, tiles_n, waves, k_steps, rate, pad_m, pad_n, unaligned, splits, regs, blocks
    ):
        self.mc, self.m, self.n, self.cfg = mc, m, n, cfg
        # asked for in every wave: computed once per config
        self.elementwise = bool(unaligned)
        self.wgmma = _uses_wgmma(mc, cfg)
        self.splits = splits
        self.waves = waves
        self.out_bytes = 4 if splits > 1 else mc.dtype.out_bytes  # split-K stores fp32 partials
        self.tiles_m, self.tiles_n, self.k_steps = tiles_m, tiles_n, k_steps
        self.step_flops = 2.0 * pad_m * pad_n * cfg.BLOCK_K
        self.rate = rate * mc.clock_hz  # FLOP/s of one unit on this tile
        self.elem = mc.dtype.in_bytes
        # an operand that fits the reuse pool is read from DRAM once over all waves
        a_total, b_total = m * k * self.elem, k * n * self.elem
        per_step = max(1, waves * k_steps)
        self.a_cross_wave = a_total / per_step if a_total <= mc.l2_reuse_bytes else None
        self.b_cross_wave = b_total / per_step if b_total <= mc.l2_reuse_bytes else None
        self.unaligned = unaligned
        self.lds_bytes = lds_step_bytes(mc, cfg, self.unaligned)
        # seconds of one tile's 4-byte copies per K step (0 when it has none): both kinds issue
        # through the same load/store pipe, so their times add
        transposed, in_order = four_byte_copies(mc, cfg, unaligned)
        self.copy_s = transposed / (mc.const.transposed_copy_elems_per_unit_clk * mc.clock_hz)
        if in_order and mc.const.narrow_copy_elems_per_unit_clk:
            self.copy_s += in_order / (mc.const.narrow_copy_elems_per_unit_clk * mc.clock_hz)
        self.spill_factor = self._spill_factor(regs)  # registers_needed, computed once by time_seconds
        self.l1_stall = 1.0 + mc.const.l1_overflow_cost * l1_overflow(mc, cfg, blocks, unaligned)
        # wrapped rows/columns (offs % M) are still loaded: L2 -> unit traffic is the full tile
        self.tile_bytes = (cfg.BLOCK_M + cfg.BLOCK_N) * cfg.BLOCK_K * self.elem
        # prologue (pipeline fill) and epilogue; co-resident tiles overlap theirs with each other's loops
        const = mc.const
        epilogue = const.epilogue_cycles_per_elem * cfg.BLOCK_M * cfg.BLOCK_N / (cfg.num_warps * mc.wave)
        self.fixed = mc.latency_s + (const.tile_cycles + epilogue) / mc.clock_hz
        # DRAM time per byte of A's and B's row segments (see _segment_cost)
        b_segment = cfg.BLOCK_K if mc.dtype.b_k_contiguous else min(cfg.BLOCK_N, n)
        self.a_cost, self.b_cost = self._segment_cost(cfg.BLOCK_K), self._segment_cost(b_segment)

    def _lds_power(self, per_unit: int) -> float:
        """How a tile's matrix instructions and its shared-memory reads combine. A warpgroup MMA
        (and an MFMA) reads its operands from shared memory itself, alongside the math. A warp on
        mma.sync first loads its fragments into registers (ldmatrix) and then issues the MMAs that
        wait on them; another warp of the same scheduler fills that wait, but with at most one
        resident warp per scheduler (`schedulers_per_unit`) there is none, and the two overlap
        less (`sync_mma_lds_overlap_power`; None: as concurrent as the other limits)."""
        mc = self.mc
        power = mc.const.sync_mma_lds_overlap_power
        schedulers = mc.target.extra.get("schedulers_per_unit")
        if power is None or not schedulers or mc.target.is_amd or self.wgmma:
            return mc.const.overlap_power
        return power if per_unit * self.cfg.num_warps <= schedulers else mc.const.overlap_power

    def _idle_tensor_cores(self, per_unit: int) -> float:
        """How much slower than the unit's rate an mma.sync tile computes when the unit holds fewer
        warps than schedulers: each warp issues on its own scheduler's tensor core, so one 2-warp
        tile alone on an SM leaves two of the four idle. A warpgroup MMA always spans all four."""
        mc = self.mc
        schedulers = mc.target.extra.get("schedulers_per_unit")
        warps = per_unit * self.cfg.num_warps
        if not schedulers or mc.target.is_amd or self.wgmma or warps >= schedulers:
            return 1.0
        return schedulers / warps

    def _spill_factor(self, need: float) -> float:
        """Element-wise loads stage values and addresses in registers, 4-byte copies hold an
        address each; past the limit they spill.
        On AMD any kernel can: the limit is the unified VGPR file (512 per lane), or the budget
        waves_per_eu asks for (512 / waves_per_eu), which the compiler meets by spilling."""
        mc = self.mc
        limit = _register_limit(mc.target)
        if mc.target.is_amd and self.cfg.waves_per_eu:
            limit = limit // self.cfg.waves_per_eu
        cost = mc.const.spill_cost_by_dtype.get(mc.dtype.rate_key, mc.const.spill_cost)
        return 1.0 + cost * max(0.0, need - limit) / limit

    def wave_time(self, tiles: int) -> float:
        mc, const, cfg = self.mc, self.mc.const, self.cfg
        bm, bn = cfg.BLOCK_M, cfg.BLOCK_N
        per_unit = -(-tiles // mc.units)
        row_a, col_b = min(bm, self.m), min(bn, self.n)
        compute = per_unit * self.step_flops / self.rate * self._idle_tensor_cores(per_unit)
        if mc.lds_bps:  # the matrix instructions wait on shared memory / LDS reads
            compute = _overlap(self._lds_power(per_unit), compute, per_unit * self.lds_bytes / mc.lds_bps)
        if self.copy_s:  # and on the 4-byte copies that fill it
            compute = _overlap(const.overlap_power, compute, per_unit * self.copy_s)
        tile_bytes = self.tile_bytes
        l2 = max(per_unit * tile_bytes / mc.l2_unit_bps, tiles * tile_bytes / mc.l2_device_bps)
        dram, dram_bytes = self._dram_step(tiles)
        dram *= self._inflight_factor(per_unit, dram_bytes / tiles)
        # a step's loads hit L2 except for the share that comes from DRAM
        miss = min(1.0, dram_bytes / (tiles * tile_bytes))
        latency = mc.l2_latency_s + miss * (mc.latency_s - mc.l2_latency_s)
        overhead = per_unit * const.k_iter_cycles / mc.clock_hz
        memory = _overlap(const.overlap_power, l2, dram)
        step_of = self._serial_step if self.elementwise else self._pipelined_step
        step = step_of(per_unit, compute, memory, latency) * self.l1_stall + overhead
        step += self._burst_stall(per_unit * tile_bytes)
        store = tiles * row_a * col_b * self.out_bytes / mc.hbm_bps
        if self.unaligned.store:  # element-wise C stores, per unit
            store += per_unit * bm * bn / (const.unaligned_store_elems_per_unit_clk * mc.clock_hz)
        return self.k_steps * step + store + self.fixed

    def _inflight_factor(self, per_unit: int, tile_dram_bytes: float) -> float:
        """How much slower than its share of the HBM rate a unit streams when its co-resident tiles
        keep too few DRAM bytes in flight (Little's law under load): each has its loads of `depth`
        steps ahead outstanding, a tile with no stage ahead part of one step's."""
        mc, const = self.mc, self.mc.const
        if not const.dram_inflight_latencies or not tile_dram_bytes or self.elementwise:
            return 1.0  # element-wise loads: no stages ahead, see _serial_step
        if const.dram_inflight_rate_keys is not None and mc.dtype.rate_key not in const.dram_inflight_rate_keys:
            return 1.0  # a width it did not help on (leave-one-sweep-out)
        depth = max(self._loads_ahead(), const.unbuffered_latency_hidden)
        needed = const.dram_inflight_latencies * mc.hbm_bps / mc.units * mc.latency_s
        inflight = per_unit * depth * tile_dram_bytes
        return max(1.0, needed / inflight) ** const.dram_inflight_exponent

    def _burst_stall(self, unit_step_bytes: float) -> float:
        """Seconds a K step waits on issuing its own copies, in launches of many waves. Measured on
        aligned 16-bit GEMMs: past ~9 waves 128x256 with BLOCK_K 32 runs 3-8% faster than with 64
        (and 128 slower still), under ~5 waves the two are level. The warps that issue the MMAs also
        issue the step's async copies; a burst larger than what the unit queues without stalling
        (`stage_burst_free_bytes`) holds them until it drains, and in the steady state of many waves
        (tiles out of step, L2 serving every K position at once) it drains slowest. Cause inferred
        from the timings, not profiled: hence a threshold on waves, chosen leave-one-sweep-out."""
        const = self.mc.const
        if not const.stage_burst_stall or self.elementwise or self.waves < const.stage_burst_min_waves:
            return 0.0
        if const.stage_burst_rate_keys is not None and self.mc.dtype.rate_key not in const.stage_burst_rate_keys:
            return 0.0  # a width it was never measured on
        excess = max(0.0, unit_step_bytes - const.stage_burst_free_bytes)
        return const.stage_burst_stall * excess / self.mc.l2_unit_bps

    def _serial_step(self, per_unit: int, compute: float, memory: float, latency: float) -> float:
        """One K step when an operand is loaded element-wise: each tile's warps load through
        registers, store to shared memory and wait for the MMA before the next step, so a tile's
        loads and MMAs add up (the MMA at `unaligned_mma_eff` of its pipelined rate) and the load
        latency is exposed unless co-resident tiles fill it with their own work."""
        const = self.mc.const
        tile = compute / per_unit / const.unaligned_mma_eff + self._scalar_load_s()
        exposed = latency
        if not self.unaligned.b and self.cfg.num_stages - 1 - self.mc.mma_buffers < 1:
            # B still comes by async copies, but with no stage ahead (the MMA holds the other
            # buffer) its copy waits behind the MMA each step instead of under the A loads
            exposed += const.serial_unbuffered_latency * latency
        return _overlap(const.overlap_power, per_unit * tile, tile + exposed, memory)

    def _scalar_load_s(self) -> float:
        """Seconds one tile's element-wise loads of a K step occupy its unit: coalesced ones (along
        K) and uncoalesced ones (along N) go through different limits and overlap each other."""
        const, clock = self.mc.const, self.mc.clock_hz
        along_k = self.unaligned.along_k * self.elem / (const.unaligned_bytes_per_unit_clk * clock)
        along_n = self.unaligned.along_n * self.elem / (const.uncoalesced_bytes_per_unit_clk * clock)
        return max(along_k, along_n, self._per_thread_load_s())

    def _per_thread_load_s(self) -> float:
        """The same loads as each thread runs them: one element at a time, a dependent chain of
        address, predicate, load and store to shared memory, in the serialised loop where few warps
        per scheduler hide little of it. Spread over the tile's threads, so 8 warps halve what 4
        take (measured on fp8 tiles off the 16-grid: 64x128x32 on 8 warps 10% faster than on 4)."""
        const = self.mc.const
        cycles = const.unaligned_thread_cycles_by_dtype.get(
            self.mc.dtype.rate_key, const.unaligned_thread_cycles_per_elem
        )
        if not cycles:
            return 0.0
        threads = self.cfg.num_warps * self.mc.wave
        return (self.unaligned.along_k + self.unaligned.along_n) / threads * cycles / self.mc.clock_hz

    def _loads_ahead(self) -> int:
        """K steps whose loads are in flight ahead of the MMAs: stages - 1, less the buffer an
        in-flight async MMA still reads, and never more than the loop has steps (a third stage
        of a one-step loop prefetches nothing; it only holds shared memory)."""
        return min(self.cfg.num_stages - 1 - self.mc.mma_buffers, self.k_steps)

    def _pipelined_step(self, per_unit: int, compute: float, memory: float, latency: float) -> float:
        """One K step of `per_unit` co-resident tiles. Loads run `depth` steps ahead: stages - 1,
        less the buffer an in-flight async MMA still reads. With no load ahead, each tile issues
        its loads after its MMAs and waits for the whole tile to arrive (latency plus its share
        of the transfer); co-resident tiles fill that wait with their own MMAs."""
        mc = self.mc
        depth = self._loads_ahead()
        if depth >= 1:
            return (
                _overlap(mc.const.overlap_power, compute, memory, latency / depth)
                + mc.const.latency_exposed * latency / depth
            )
        # the async MMA's wait leaves one group in flight: part of the load latency still overlaps it
        serial = (compute + memory) / per_unit + latency * (1.0 - mc.const.unbuffered_latency_hidden)
        return _overlap(mc.const.overlap_power, compute, serial, memory)

    def _wrapped_bps(self) -> float:
        """Device rate of the re-reads of rows past M. At M = 1 with A by async copies they all
        re-read A's one row, one copy per thread: the same few L2 lines for every tile of the wave
        (element-wise loads of one address coalesce in the warp)."""
        mc = self.mc
        const = mc.const
        single = const.single_row_wrapped_by_dtype.get(mc.dtype.rate_key, const.single_row_wrapped_bytes_per_clk)
        if self.m == 1 and single and not self.unaligned.a:
            return single * mc.clock_hz
        return mc.wrapped_bps

    def _segment_cost(self, elems: int) -> float:
        """DRAM time per byte, relative to full rate, of rows read `elems` contiguous elements at a
        time. Tall GEMMs with a narrow N stream A from DRAM: there 16-bit tiles with BLOCK_K 32
        (64-byte row segments) ran 10-25% slower than the same tiles with BLOCK_K 64 at equal
        predicted times, fp8's 32-byte segments slower still, fp32's 128-byte ones not at all."""
        const = self.mc.const
        if not const.dram_segment_bytes:
            return 1.0
        return max(1.0, const.dram_segment_bytes / (elems * self.elem)) ** const.dram_segment_exponent

    def _dram_step(self, tiles: int) -> tuple[float, float]:
        """(seconds, DRAM bytes) per K step for the DRAM (and Infinity Cache) traffic of one wave."""
        mc, cfg = self.mc, self.cfg
        bm, bn, bk = cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K
        # split-K: consecutive programs are the K slices of one tile, each reading its own K range
        slices = min(self.splits, tiles)
        rows, cols = _footprint(-(-tiles // slices), self.tiles_m, self.tiles_n, cfg.group_m)
        a_bytes = min(rows * bm, self.m) * bk * self.elem * slices
        b_bytes = min(cols * bn, self.n) * bk * self.elem * slices
        if self.a_cross_wave is not None:
            a_bytes = min(a_bytes, self.a_cross_wave)
        if self.b_cross_wave is not None:
            b_bytes = min(b_bytes, self.b_cross_wave)
        dram_bytes = a_bytes + b_bytes
        seconds = (a_bytes * self.a_cost + b_bytes * self.b_cost) / mc.hbm_bps
        if mc.wrapped_bps and bm > self.m:
            seconds += tiles * (bm - self.m) * bk * self.elem / self._wrapped_bps()
        if mc.xcds > 1:
            rows_x, cols_x = _xcd_footprint(-(-tiles // slices), rows, cols, self.tiles_m, cfg.group_m, mc.xcds)
            miss = mc.xcds * (min(rows_x * bm, self.m) + min(cols_x * bn, self.n)) * bk * self.elem * slices
            seconds = max(seconds, miss / (mc.mall_bps or mc.hbm_bps))
            dram_bytes = max(dram_bytes, miss)  # what misses the XCD's L2 pays the longer latency
        return seconds, dram_bytes
