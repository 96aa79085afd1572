"""The model's per-target constants: defaults derived from the spec, overridden by the target's
`gemm_model:` block in specs.yaml (fit on measurements where a GPU of that kind was available).

Only these few numbers are ever fit, never anything per shape. `calibrated_on` names the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from porter.errors import ConfigError
from porter.targets import Target


@dataclass(frozen=True)
class ModelConstants:
    # efficiency: steady-state fraction of the matrix peak one tile reaches, per rate key
    compute_eff: dict[str, float] = field(default_factory=lambda: {"default": 0.8})
    mma_fallback_eff: float = 0.5  # NVIDIA: rate of mma.sync tiles (no warpgroup MMA) relative to peak
    lds_eff: float = 1.0  # achievable fraction of the spec's shared memory / LDS bandwidth
    lds_row_exponent: float = 0.5  # bank-conflict cost of rows narrower than 128 bytes (see lds_step_bytes)
    wide_mma_eff: dict[str, float] = field(default_factory=dict)  # rate of 256-wide warpgroup MMAs, per rate key
    hbm_eff: float = 0.85  # achievable fraction of the HBM bandwidth
    l2_bytes_per_unit_clk: float = 64.0  # L2 -> one unit bandwidth (bytes per unit per clock)
    l2_device_bytes_per_clk: float | None = None  # aggregate L2 -> units bandwidth (None: units x per-unit)
    wrapped_bytes_per_clk: float | None = None  # device rate for rows past M (offs % M re-reads the same
    # few lines, so the same L2 slices serve them); None: off
    wrapped_by_dtype: dict[str, float] = field(default_factory=dict)  # per rate key, where it differs
    single_row_wrapped_bytes_per_clk: float | None = None  # the same at M = 1, where every row past M
    # re-reads A's one row (Triton compiles M == 1 as a constant); None: wrapped_bytes_per_clk
    single_row_wrapped_by_dtype: dict[str, float] = field(default_factory=dict)  # per rate key, where it differs
    mall_gbps: float | None = None  # AMD Infinity Cache bandwidth (serves per-XCD L2 misses)
    # contiguous bytes of one row a tile's K step must read for DRAM to serve it at full rate: a shorter
    # segment (BLOCK_K x element bytes along K) wastes the rest of each access (None: off)
    dram_segment_bytes: float | None = None
    dram_segment_exponent: float = 1.0  # cost of a segment s < dram_segment_bytes: (dram_segment_bytes / s) ** this
    mem_latency_ns: float = 800.0  # latency of a load that misses L2 (DRAM)
    # DRAM bytes a unit must keep in flight to draw its share of the bandwidth, in bandwidth-latency
    # products (its share of the HBM rate x mem_latency); a step with fewer streams slower (None: off)
    dram_inflight_latencies: float | None = None
    dram_inflight_exponent: float = 0.5  # slowdown (needed / in flight) ** this
    dram_inflight_rate_keys: tuple[str, ...] | None = None  # rate keys it applies to (None: every one)
    l2_latency_ns: float = 300.0  # latency of a load that hits L2; a step's latency mixes the two
    overlap_power: float = math.inf  # how concurrent limits combine (p-norm; inf = the slowest alone)
    sync_mma_lds_overlap_power: float | None = None  # NVIDIA mma.sync: how ldmatrix reads and MMAs combine
    latency_exposed: float = 0.05  # share of the per-step latency left uncovered (jitter); deeper pipelines cut it
    # NVIDIA fp32: the transposed B copies (cp.async.ca, cached in L1) of the stages in flight need L1 to hold their
    # lines; a K step is this much slower per share of them the L1 left beside shared memory cannot hold (0: off)
    l1_overflow_cost: float = 0.0
    stage_burst_stall: float | None = None  # launches of many waves: share of a K step's copies past
    # stage_burst_free_bytes per unit that the issuing warps wait out (None: off); see model._burst_stall
    stage_burst_free_bytes: float = 24576.0
    stage_burst_min_waves: float = 9.0  # waves from which the stall shows (measured: none under ~5)
    stage_burst_rate_keys: tuple[str, ...] | None = None  # rate keys the stall applies to (None: every one)
    # small M (decode, MoE experts): the model cannot tell configs within this share of the best apart (all stream B
    # at the DRAM rate), while measured, deeper pipelines and 4 warps win there; such near-ties go to the most stages,
    # then the fewest warps (0: off). Rate keys it applies to and the largest M
    small_m_tie_share: float = 0.0
    small_m_tie_max_m: int = 64
    small_m_tie_rate_keys: tuple[str, ...] = ()
    # AMD: configs within this share of the best that keep to the pipeliner's guided num_stages go first. The model
    # cannot rank inside its own noise, and there the guidance (and scan's PT103, which says the same) decides (0: off)
    guided_stages_tie_share: float = 0.0
    k_iter_cycles: float = 60.0  # fixed cost per K iteration (address math, waits, barriers)
    tile_cycles: float = 2000.0  # fixed cost per tile (prologue, epilogue, scheduling)
    epilogue_cycles_per_elem: float = 0.0  # per C element per thread (convert, store): fewer warps, longer
    launch_us: float = 4.0  # kernel launch
    reduce_launch_us: float | None = None  # split-K's reduce kernel, queued behind the GEMM (None: launch_us)
    l2_fraction: float = 0.5  # share of L2 a re-read operand may occupy and still hit across waves
    # operands whose contiguous size is not a multiple of 16 elements: Triton cannot prove alignment,
    # so loads are element-wise through registers and the async copy pipeline is off
    unaligned_bytes_per_unit_clk: float = 5.0  # element-wise loads along K (coalesced) per unit
    uncoalesced_bytes_per_unit_clk: float = 3.0  # element-wise loads along N (row-major B) per unit
    unaligned_store_elems_per_unit_clk: float = 2.0  # element-wise C stores per unit
    unaligned_thread_cycles_per_elem: float | None = None  # the same loads per thread: cycles of each
    unaligned_thread_cycles_by_dtype: dict[str, float] = field(default_factory=dict)  # per rate key, where it differs
    # element's dependent chain (address, predicate, load, store to shared memory); None: off
    unbuffered_latency_hidden: float = 0.0  # share of the load latency hidden with no stage ahead (2 stages on wgmma)
    serial_unbuffered_latency: float = 0.0  # extra latency share when that loop's async B has no stage ahead
    unaligned_mma_eff: float = 1.0  # MMA rate in that serialised loop, relative to the pipelined rate
    # 32-bit operands on a warpgroup MMA (TF32 wgmma reads only K-major shared memory): a row-major B
    # is copied with one 4-byte async copy per element, transposed (the sweeps' PTX), at this rate
    transposed_copy_elems_per_unit_clk: float = 1.0
    # 32-bit rows off the 16-byte grid: copied in order, 4 bytes at a time (None: not priced)
    narrow_copy_elems_per_unit_clk: float | None = None
    copy_regs_per_elem: float = 0.0  # registers per lane per 4-byte copy it issues each K step
    mma_fallback_eff_by_dtype: dict[str, float] = field(default_factory=dict)  # per rate key, where it differs
    # NVIDIA mma.sync on 1-byte operands: fragment elements one unit converts to f16 per clock before the
    # f16 MMA (None: the conversion is folded into mma_fallback_eff_by_dtype)
    sync_convert_elems_per_unit_clk: float | None = None
    unaligned_regs_per_elem: float = 3.0  # registers per staged element (value + 64-bit address)
    unaligned_reg_overhead: int = 16  # registers per lane beside accumulators and staged elements
    # the same per element when every element-wise load runs along K (none wraps along N): None = as above
    k_only_regs_per_elem: float | None = None
    # element-wise C stores with M off the grid too: the kernel's registers per accumulator (the value,
    # its address, row and column predicates); 0: not priced (see model._store_registers)
    store_row_regs_per_acc: float = 0.0
    store_row_regs_by_dtype: dict[str, float] = field(default_factory=dict)  # per rate key, where it differs
    spill_cost: float = 4.0  # slowdown per register-file's worth of spilled registers
    spill_cost_by_dtype: dict[str, float] = field(default_factory=dict)  # per rate key, where it differs
    async_mma_buffers: int | None = None  # stage buffers an in-flight async MMA (wgmma) holds; None: 1 where wgmma
    specialize_divisor: int = 16  # Triton proves alignment from integer arguments divisible by this
    # feasibility
    lds_buffers: str = "stages"  # "stages" | "stages_minus_one" (AMD stream pipeliner on gfx942)
    lds_padding: float = 0.0  # extra LDS per tile byte (gfx950's async copies pad each row)
    max_acc_regs: int = 128  # fp32 accumulators per lane before the tile spills
    reg_overhead: int = 40  # registers per lane beside the accumulators (addresses, fragments)
    reg_per_tile_dword: float = 0.0  # AMD: more per 4-byte word of the A+B tiles per lane (compile records)
    kpack_reg_saving: float = 0.0  # AMD gfx942: registers per tile dword that kpack=2's b128 LDS reads save
    # AMD: rate of 32x32 MFMAs relative to 16x16 in a K loop that also reads LDS. Same peak and LDS bytes,
    # but half the instructions per loop body to interleave the LDS reads with (1.0: no difference)
    mfma32_interleave_eff: float = 1.0
    max_threads_per_unit: int | None = None  # resident threads per SM / CU (AMD: derived from waves)
    calibrated_on: str = "derived from the spec (not fit on measurements)"

    def eff(self, rate_key: str) -> float:
        table = self.compute_eff
        return table.get(rate_key, table.get("default", 0.8))

    def with_overrides(self, **changes: Any) -> ModelConstants:
        return replace(self, **changes)


_FIELD_NAMES = {f.name for f in fields(ModelConstants)}


def _vendor_defaults(target: Target) -> dict[str, Any]:
    if target.is_amd:
        # up to half the architectural VGPRs of accumulators: 256x256 on 8 waves and 128x256 on 4
        # (128 per lane), which AMD's tuned tables use on MI300X and MI350X; they compile with a few
        # spills on gfx950 (AGPRs hold the accumulators) and more on gfx942, which the register
        # estimate past the 512-VGPR file prices (spill_factor)
        if target.waves_per_simd_max is None or target.simds_per_unit is None:
            raise ConfigError(f"specs.yaml: {target.name} needs waves_per_simd_max and simds_per_unit")
        return {
            "max_threads_per_unit": target.waves_per_simd_max * target.simds_per_unit * target.wave_size,
            "max_acc_regs": target.registers["arch_vgprs"] // 2,
        }
    # half the per-thread registers for accumulators: 128x256 on 8 warps (128) fits, 256x256 does not
    return {
        "max_acc_regs": (target.registers["per_thread_max"] + 1) // 2,
        "max_threads_per_unit": 2 * target.max_threads_per_block,
    }


def stage_buffers(const: ModelConstants, num_stages: int) -> int:
    """The tile buffers a pipelined GEMM loop allocates for `num_stages` (`lds_buffers`): one fewer on gfx942's stream
    pipeliner, for the aligned launches Triton's specialization gives most tensors; one at least. Tune's LDS and scan's
    PT107 estimate both count with this."""
    return max(num_stages - 1 if const.lds_buffers == "stages_minus_one" else num_stages, 1)


def constants_for(target: Target) -> ModelConstants:
    """Constants for `target`: vendor defaults, then the spec's `gemm_model` block."""
    values: dict[str, Any] = _vendor_defaults(target)
    block = target.extra.get("gemm_model") or {}
    if not isinstance(block, dict):
        raise ConfigError(f"specs.yaml: {target.name}.gemm_model must be a mapping")
    for key, value in block.items():
        if key not in _FIELD_NAMES:
            raise ConfigError(f"specs.yaml: {target.name}.gemm_model has unknown key {key!r}")
        values[key] = dict(value) if isinstance(value, dict) else value
    return ModelConstants(**values)
