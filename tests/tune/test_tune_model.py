"""The analytical GEMM model: feasibility, wave quantization, precision costs, ranking."""

from __future__ import annotations

import math
import time

import pytest

from porter.errors import UsageError
from porter.targets import get_target
from porter.tune import default_space, explain_infeasible, parse_config, predict_gemm_ms, rank_gemm
from porter.tune.config import GemmConfig
from porter.tune.dtypes import resolve_dtype
from porter.tune.model import Machine, blocks_per_unit, pick_order, predict_seconds, unit_flops_clk

BIG_TILE = {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 4}


def test_big_tile_four_stages_exceeds_mi300x_lds_but_fits_h100():
    reason = explain_infeasible("mi300x", "bf16", BIG_TILE)
    assert reason is not None and "LDS" in reason and "64 KiB" in reason
    assert explain_infeasible("h100", "bf16", BIG_TILE) is None
    assert math.isinf(predict_gemm_ms("mi300x", "bf16", 4096, 4096, 4096, BIG_TILE))
    assert math.isfinite(predict_gemm_ms("h100", "bf16", 4096, 4096, 4096, BIG_TILE))


def test_thread_and_register_limits():
    too_many_warps = dict(BIG_TILE, num_warps=32)  # 32 x 64 lanes = 2048 threads on CDNA
    assert "threads" in explain_infeasible("mi350x", "bf16", too_many_warps)
    spills = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}
    assert "spills" in explain_infeasible("h100", "bf16", spills)


def test_default_space_is_feasible_and_adds_small_tiles_for_tiny_m():
    for target in ("mi300x", "mi350x", "h200"):
        space = default_space(target, "bf16", 4096)
        assert space and all(explain_infeasible(target, "bf16", c) is None for c in space)
        assert all(c.BLOCK_M >= 64 for c in space)
        assert any(c.BLOCK_M == 32 for c in default_space(target, "bf16", 8))
    amd = default_space("mi350x", "bf16", 4096)[0].to_dict()
    assert {"waves_per_eu", "matrix_instr_nonkdim"} <= set(amd)
    assert "waves_per_eu" not in default_space("h200", "bf16", 4096)[0].to_dict()


def test_wave_quantization_one_tile_over_a_wave_costs_a_wave():
    # configs that keep one block per unit, so a wave is exactly `units` tiles
    one_per_unit = {
        "h200": {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 4},
        "mi300x": {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 16, "num_stages": 2},
    }
    for name, cfg in one_per_unit.items():
        target = get_target(name)
        assert blocks_per_unit(Machine.build(target, resolve_dtype("bf16", target)), parse_config(cfg)) == 1
        bm, bn, units, k = cfg["BLOCK_M"], cfg["BLOCK_N"], target.units, 8192
        full = predict_gemm_ms(target, "bf16", bm * units, bn, k, cfg)
        over = predict_gemm_ms(target, "bf16", bm * (units + 1), bn, k, cfg)
        half = predict_gemm_ms(target, "bf16", bm * (units // 2), bn, k, cfg)
        assert over > 1.6 * full, name  # one tile more than a wave costs a second wave
        assert half <= full, name  # fewer tiles never cost more
        times = [predict_gemm_ms(target, "bf16", bm * t, bn, k, cfg) for t in range(1, 3 * units, 5)]
        # monotonic in the grid, up to the small gain of more tiles sharing operands in L2
        assert all(b >= 0.98 * a for a, b in zip(times, times[1:])), name
        steps = [predict_gemm_ms(target, "bf16", bm * w * units, bn, k, cfg) for w in (1, 2, 3)]
        assert steps[2] / steps[0] == pytest.approx(3, rel=0.1), name  # time grows by whole waves


def test_more_work_never_predicts_less_time():
    for target in ("h200", "mi300x"):
        base = predict_gemm_ms(target, "bf16", 2048, 2048, 2048)
        assert predict_gemm_ms(target, "bf16", 2048, 2048, 8192) > base
        assert predict_gemm_ms(target, "bf16", 8192, 2048, 2048) > base


def test_fp32_on_gfx950_pays_three_bf16_products():
    mi350x = get_target("mi350x")
    cfg = GemmConfig(128, 128, 32, 8, 2)
    bf16 = unit_flops_clk(Machine.build(mi350x, resolve_dtype("bf16", mi350x)), cfg)[0]
    fp32 = unit_flops_clk(Machine.build(mi350x, resolve_dtype("fp32", mi350x)), cfg)[0]
    assert fp32 == pytest.approx(bf16 / 3)
    # compute-bound end to end: fp32 about 3x (plus twice the bytes, still compute-bound)
    big = dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=32, num_warps=16, num_stages=2)
    ratio = predict_gemm_ms(mi350x, "fp32", 8192, 8192, 8192, big) / predict_gemm_ms(
        mi350x, "bf16", 8192, 8192, 8192, big
    )
    assert 2.5 < ratio < 3.5
    # on gfx942 fp32 runs as native XF32: half the bf16 rate, not a third
    mi300x = get_target("mi300x")
    xf32 = unit_flops_clk(Machine.build(mi300x, resolve_dtype("fp32", mi300x)), cfg)[0]
    b16 = unit_flops_clk(Machine.build(mi300x, resolve_dtype("bf16", mi300x)), cfg)[0]
    assert xf32 == pytest.approx(b16 / 2)


def test_fp8_fnuz_only_on_gfx942_and_ocp_not_on_gfx942():
    assert predict_gemm_ms("mi300x", "fp8e4m3fnuz", 1024, 1024, 1024) > 0
    for target in ("mi350x", "h200", "b200"):
        with pytest.raises(UsageError, match="FNUZ fp8 runs only on gfx942"):
            rank_gemm(target, "fp8e4m3fnuz", 1024, 1024, 1024)
    with pytest.raises(UsageError, match="use --dtype fp8e4m3fnuz"):
        rank_gemm("mi300x", "fp8e4m3", 1024, 1024, 1024)
    with pytest.raises(UsageError, match="unknown GEMM dtype"):
        rank_gemm("h200", "int4", 64, 64, 64)


def test_fp8_beats_bf16_when_compute_bound():
    assert predict_gemm_ms("h200", "fp8e4m3", 8192, 8192, 8192) < 0.7 * predict_gemm_ms(
        "h200", "bf16", 8192, 8192, 8192
    )


def test_ranks_any_candidate_list_in_order_and_drops_infeasible():
    candidates = [
        {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "num_warps": 4, "num_stages": 2},
        dict(BIG_TILE),
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2, "GROUP_M": 4},
    ]
    ranked = rank_gemm("mi300x", "bf16", 4096, 4096, 4096, candidates=candidates)
    assert len(ranked) == 2  # BIG_TILE dropped on mi300x
    assert [r.predicted_ms for r in ranked] == sorted(r.predicted_ms for r in ranked)
    assert ranked[0].config["BLOCK_M"] == 128 and ranked[0].config["GROUP_M"] == 4
    assert "GROUP_M" not in ranked[1].config  # keys echo what the candidate gave
    listed = rank_gemm("mi300x", "bf16", 4096, 4096, 4096, candidates=candidates, include_infeasible=True)
    assert len(listed) == 3 and not listed[-1].feasible and math.isinf(listed[-1].predicted_ms) and listed[-1].reason
    assert len(rank_gemm("h200", "bf16", 4096, 4096, 4096, candidates=candidates, top=1)) == 1


@pytest.mark.parametrize(
    "bad, key",
    [
        ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4}, "num_stages"),
        ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": "2"}, "num_stages"),
        ({"BLOCK_M": 96, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}, "BLOCK_M"),
        ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2, "splitk": 2}, "splitk"),
    ],
)
def test_malformed_candidate_names_entry_and_key(bad, key):
    with pytest.raises(UsageError, match=rf"candidate 1: .*{key}"):
        rank_gemm("h200", "bf16", 64, 64, 64, candidates=[dict(BIG_TILE), bad])


def test_predict_without_config_is_the_best_of_the_space():
    best = rank_gemm("mi350x", "fp8e4m3", 2048, 4096, 1024, top=1)[0]
    assert predict_gemm_ms("mi350x", "fp8e4m3", 2048, 4096, 1024) == pytest.approx(best.predicted_ms)
    assert best.predicted_ms > 0


def test_memory_bound_decode_is_near_hbm_time():
    # M=1: time is at least the weight bytes over HBM bandwidth, and within a few x of it
    h200 = get_target("h200")
    n, k = 8192, 8192
    floor_ms = n * k * 2 / (h200.hbm_gbps * 1e9) * 1e3
    pred = predict_gemm_ms(h200, "bf16", 1, n, k)
    assert floor_ms < pred < 4 * floor_ms


# A fixed pure-Python loop takes 26 ms of CPU time on the 2-core dev machine (idle, session 38), where selecting among
# 200 candidates took 9.1-9.8 ms (session 37's machine: 4.8 ms). The budget is 10 ms there.
REFERENCE_LOOP_S = 0.026
SELECTION_BUDGET_S = 0.010


def _reference_loop_seconds() -> float:
    """CPU time of the fixed loop, run beside each selection: what this machine gives Python code at that moment. A
    hyperthreaded CI core shared with another test worker slows both alike (measured: 9.5 -> 16 ms and 26 -> 44 ms)."""
    start = time.process_time()
    total = 0.0
    for i in range(100_000):
        total += math.sqrt(i) * 0.5 + max(i, 3) % 7
    return time.process_time() - start


@pytest.mark.parametrize("target,dtype", [("h200", "fp8e4m3"), ("mi350x", "bf16")])
def test_selecting_among_200_candidates_takes_under_10_ms(target, dtype):
    # 200 distinct candidates (the standard space at small M, repeated where it has fewer); CPU time of this
    # process, in units of the reference loop timed just before and after, best of seven: on the dev machine
    # that is the 10 ms budget, and neither a slower machine nor other load on it counts
    space = [c.to_dict() for c in default_space(target, dtype, 16)]
    candidates = (space * 2)[:200]
    assert len(candidates) == 200 and len({tuple(sorted(c.items())) for c in candidates}) >= 180
    rank_gemm(target, dtype, 4096, 4096, 4096, candidates=candidates)  # imports and caches warm
    ratios, runs = [], []
    for _ in range(7):
        before = _reference_loop_seconds()
        start = time.process_time()
        rank_gemm(target, dtype, 4096, 4096, 4096, candidates=candidates)
        runs.append(time.process_time() - start)
        ratios.append(runs[-1] / ((before + _reference_loop_seconds()) / 2))
    best = min(ratios)
    assert best * REFERENCE_LOOP_S < SELECTION_BUDGET_S, (
        f"{best * REFERENCE_LOOP_S * 1e3:.1f} ms on the dev machine",
        runs,
    )


def test_warpgroup_mma_reads_less_shared_memory_with_wide_tiles():
    # a warpgroup MMA re-reads B for each 64-row slice: 128x256 moves fewer bytes than 256x128
    from porter.tune.model import lds_step_bytes

    machine = Machine.build(get_target("h200"), resolve_dtype("bf16", get_target("h200")))
    wide = GemmConfig(128, 256, 64, 8, 3)
    tall = GemmConfig(256, 128, 64, 8, 3)
    assert lds_step_bytes(machine, wide) < lds_step_bytes(machine, tall)
    # rows narrower than the 128-byte swizzle cost more per byte (fp8 with BLOCK_K = 32)
    fp8 = Machine.build(get_target("h200"), resolve_dtype("fp8e4m3", get_target("h200")))
    narrow, full = GemmConfig(128, 128, 32, 8, 3), GemmConfig(128, 128, 128, 8, 3)
    assert lds_step_bytes(fp8, narrow) / 32 > lds_step_bytes(fp8, full) / 128


def test_unaligned_sizes_load_and_store_element_wise():
    from porter.tune.model import unaligned_loads

    target = get_target("h200")
    bf16 = Machine.build(target, resolve_dtype("bf16", target))
    fp8 = Machine.build(target, resolve_dtype("fp8e4m3", target))
    cfg = GemmConfig(128, 64, 32, 4, 3)
    assert not unaligned_loads(bf16, 4096, 4096, cfg)
    # row-major B with an odd N: B goes element by element along N, and so do C's stores
    odd_n = unaligned_loads(bf16, 4100, 4096, cfg)
    assert (odd_n.along_k, odd_n.along_n, odd_n.store) == (0, 64 * 32, True)
    # fp8's B is column-major: an odd K makes both operands element-wise along K
    odd_k = unaligned_loads(fp8, 4096, 1030, cfg)
    assert (odd_k.along_k, odd_k.along_n, odd_k.store) == ((128 + 64) * 32, 0, False)
    aligned = predict_gemm_ms("h200", "bf16", 4096, 4096, 4096, cfg.to_dict())
    assert predict_gemm_ms("h200", "bf16", 4096, 4100, 4096, cfg.to_dict()) > 1.5 * aligned


def test_element_wise_stores_with_m_off_the_grid_raise_the_register_need():
    # the sweeps' compile records (fp8, 256x128x32 on 8 warps, K off the grid): 255 registers + 46
    # spilled with N off the grid, 255 + 156 with M too, where each stored element has its own row
    # predicate; with M on the grid (or M = 1, a constant) the K loop's estimate stands
    from porter.tune.model import registers_needed, unaligned_loads

    target = get_target("h200")
    fp8 = Machine.build(target, resolve_dtype("fp8e4m3", target))
    wide, small = GemmConfig(256, 128, 32, 8, 3), GemmConfig(64, 128, 32, 8, 3)
    odd_m = unaligned_loads(fp8, 2500, 1700, wide, 3100)
    assert odd_m.store_rows and not unaligned_loads(fp8, 2500, 1700, wide, 3072).store_rows
    assert not unaligned_loads(fp8, 2500, 1700, wide, 1).store_rows
    assert not unaligned_loads(fp8, 2560, 1700, wide, 3100).store_rows  # C's rows aligned: vector stores
    loop = registers_needed(fp8, wide, unaligned_loads(fp8, 2500, 1700, wide, 3072))
    assert registers_needed(fp8, wide, odd_m) > loop + 40 > 255 + 40
    # a tile of few accumulators per thread keeps its loop estimate (64x128: 128 registers, none spilled)
    assert registers_needed(fp8, small, unaligned_loads(fp8, 2500, 1700, small, 3100)) == registers_needed(
        fp8, small, unaligned_loads(fp8, 2500, 1700, small, 3072)
    )
    # and the pick on that shape (cal6's c6_f8_odd_all_a) is no longer the spilling 256x128x32
    t_wide = predict_gemm_ms("h200", "fp8e4m3", 3100, 2500, 1700, wide.to_dict())
    assert t_wide > predict_gemm_ms("h200", "fp8e4m3", 3100, 2500, 1700, small.to_dict())


def test_16_bit_store_row_spills_are_not_priced():
    """bf16 256x64x32 on 4 warps, 2500x6001x3072 (M and N off the grid): the H100 compile records spill 186
    registers, yet it timed fastest of the shape (0.700 ms, the 2-stage 256x64x128 pick 0.838). Only fp8's
    store-row registers are priced (specs.yaml: store_row_regs_by_dtype)."""
    from porter.tune.model import registers_needed, unaligned_loads

    target = get_target("h100")
    tile = GemmConfig(256, 64, 32, 4, 5)
    bf16 = Machine.build(target, resolve_dtype("bf16", target))
    assert registers_needed(bf16, tile, unaligned_loads(bf16, 6001, 3072, tile, 2500)) == registers_needed(
        bf16, tile, unaligned_loads(bf16, 6001, 3072, tile, 2560)
    )
    fast, picked = tile.to_dict(), GemmConfig(256, 64, 128, 8, 2).to_dict()
    assert predict_gemm_ms("h100", "bf16", 2500, 6001, 3072, fast) < predict_gemm_ms(
        "h100", "bf16", 2500, 6001, 3072, picked
    )


def test_element_wise_loads_along_k_alone_need_fewer_registers():
    # compile records: fp8 128x128x64 on 8 warps with K off the grid (A and K-major B loaded along K)
    # fits in 255 registers with none spilled; 16-bit B off the grid along N (offs % N wraps) keeps
    # the full per-element rate, as its measured spills say
    from porter.tune.model import registers_needed, unaligned_loads

    target = get_target("h200")
    fp8 = Machine.build(target, resolve_dtype("fp8e4m3", target))
    bf16 = Machine.build(target, resolve_dtype("bf16", target))
    cfg = GemmConfig(128, 128, 64, 8, 3)
    along_k = unaligned_loads(fp8, 2560, 1700, cfg, 3072)
    assert along_k.along_k and not along_k.along_n
    # within a few registers of the record (the general rate said 291, a 14% spill charge)
    assert abs(registers_needed(fp8, cfg, along_k) - 255) <= 8
    along_n = unaligned_loads(bf16, 2500, 1700, cfg, 3072)
    assert along_n.along_n
    per_elem = fp8.const.unaligned_regs_per_elem
    expected = 64 + fp8.const.unaligned_reg_overhead + per_elem * along_n.elements / 256
    assert registers_needed(bf16, cfg, along_n) == pytest.approx(expected)


def test_shared_memory_matches_the_compiled_kernels():
    # the sweeps store ptxas's shared-memory figure for every compiled (dtype, alignment class,
    # config): async-copied operands get one buffer per stage on warpgroup MMA configs and one
    # fewer on mma.sync ones; element-wise operands a single buffer (none for A on mma.sync).
    # The model leaves out the epilogue's layout-conversion scratch, which only adds.
    import json
    from pathlib import Path

    from porter.tune.model import lds_bytes, unaligned_loads
    from porter.tune.scoring import SWEEP_DTYPES, to_config

    target = get_target("h200")
    exact = total = 0
    from tests.tune.test_tune_validation import SWEEPS  # the calibration sweeps: never a sealed blind split

    for name in SWEEPS:
        path = Path(__file__).resolve().parents[2] / "bench" / "tune" / "data" / name
        doc = json.loads(path.read_text(encoding="utf-8"))
        for dtype, classes in doc["compile"].items():
            machine = Machine.build(target, resolve_dtype(SWEEP_DTYPES[dtype], target))
            for cls, records in classes.items():
                n, k = (17 if cls[1] == "x" else 16), (17 if cls[2] == "x" else 16)  # x: not a multiple of 16
                for raw, record in zip(doc["configs"], records):
                    if not isinstance(record, list):
                        continue
                    cfg = to_config(tuple(raw))
                    unaligned = unaligned_loads(machine, n, k, cfg)
                    model = lds_bytes(machine, cfg, unaligned)
                    assert model <= record[2], (path.name, dtype, cls, raw, model, record)
                    exact += model == record[2]
                    total += 1
    assert total > 5000 and exact >= 0.85 * total, (exact, total)


def test_fp8_mma_sync_conversions_are_reused_over_the_warp_tile():
    """sm_90 fp8 on mma.sync converts each fragment element to f16 once per warp and K step: 32x128
    tiles (warp tiles 32x32) convert fewer elements per FLOP than 32x32 ones (16x16), so they run
    faster per FLOP; 16-bit operands need no conversion and keep one rate for both."""
    target = get_target("h200")
    wide = GemmConfig(32, 128, 128, 4, 5)
    narrow = GemmConfig(32, 32, 128, 4, 5)
    fp8 = Machine.build(target, resolve_dtype("fp8e4m3", target))
    assert unit_flops_clk(fp8, wide)[0] > 1.25 * unit_flops_clk(fp8, narrow)[0]
    bf16 = Machine.build(target, resolve_dtype("bf16", target))
    assert unit_flops_clk(bf16, wide)[0] == unit_flops_clk(bf16, narrow)[0]


def test_rows_past_m_cost_little_on_16_bit_tiles_and_more_on_fp8():
    """A 64-row tile at M = 32 re-reads rows 0-31 for its rows 32-63 (offs % M). The H200 sweeps time
    16-bit tiles as if those re-reads were nearly free (b19_bf_m32_down: 64x64 beats 32x64 by 16%),
    and fp8's 64-row tiles at small M as if they were not (specs.yaml: wrapped_by_dtype)."""
    target = get_target("h200")
    tile = GemmConfig(64, 64, 128, 4, 5)

    def wrapped_share(dtype: str) -> float:
        machine = Machine.build(target, resolve_dtype(dtype, target))
        return predict_seconds(machine, 32, 4608, 36864, tile) / predict_seconds(machine, 64, 4608, 36864, tile)

    assert wrapped_share("bf16") < 1.01
    assert wrapped_share("fp8e4m3") > 1.04


def test_tall_narrow_gemms_pick_deep_128_row_tiles_with_128_byte_rows():
    """bf16 131072x80x1024 (a rec layer) on the H100 sweep h100_blind24: 128x128x64 on 8 warps, 3 stages, 0.109 ms;
    BLOCK_K 32 (64-byte rows of A per step) 0.130, 64-row tiles on 2 stages 0.137. Without the DRAM row-segment
    and in-flight terms the model tied all three and picked the last."""
    shape = ("h100", "bf16", 131072, 80, 1024)
    best = predict_gemm_ms(*shape, GemmConfig(128, 128, 64, 8, 3).to_dict())
    assert best < predict_gemm_ms(*shape, GemmConfig(128, 128, 32, 8, 5).to_dict())
    assert best < predict_gemm_ms(*shape, GemmConfig(64, 128, 64, 4, 2).to_dict())


def test_dram_row_segments_cost_only_under_128_bytes():
    """BLOCK_K 32 reads 64-byte rows of a 16-bit A but 128-byte rows of an fp32 one: only the first pays."""
    from porter.tune.model import _StepContext

    target = get_target("h100")
    cfg = GemmConfig(128, 128, 32, 8, 4)

    def segment_cost(dtype: str) -> float:
        machine = Machine.build(target, resolve_dtype(dtype, target))
        ctx = _StepContext.__new__(_StepContext)
        ctx.mc, ctx.elem = machine, machine.dtype.in_bytes
        return ctx._segment_cost(cfg.BLOCK_K)

    assert segment_cost("bf16") == pytest.approx(2**0.5)
    assert segment_cost("fp32") == 1.0


def test_small_m_near_ties_go_to_the_deepest_pipeline_then_fewest_warps():
    # session 35: at M <= 64 the model cannot tell fp8 configs within 1% apart; measured, 5 stages and 4 warps win
    target = get_target("h200")
    machine = Machine.build(target, resolve_dtype("fp8e4m3", target))
    shallow_fast = GemmConfig(64, 256, 128, 8, 3, GROUP_M=8)
    deep_eight = GemmConfig(64, 256, 128, 8, 5, GROUP_M=8)
    deep_four = GemmConfig(64, 256, 128, 4, 5, GROUP_M=8)
    far = GemmConfig(32, 128, 128, 4, 5, GROUP_M=8)
    predicted = [(1.000e-5, shallow_fast), (1.004e-5, deep_eight), (1.008e-5, deep_four), (1.2e-5, far)]
    assert pick_order(machine, 1, predicted) == [2, 1, 0, 3]
    assert pick_order(machine, 4096, predicted) == [0, 1, 2, 3]  # large M: predicted time alone
    bf16 = Machine.build(target, resolve_dtype("bf16", target))
    assert pick_order(bf16, 1, predicted) == [0, 1, 2, 3]  # 16-bit: left out lost with it
    # rank_gemm (porter tune) orders the same way: a decode row where 3 and 5 stages are predicted within 1%
    pair = [GemmConfig(32, 128, 128, 4, 3, GROUP_M=8), GemmConfig(32, 128, 128, 4, 5, GROUP_M=8)]
    times = [predict_seconds(machine, 1, 57344, 7168, c) for c in pair]
    assert times[0] < times[1] <= times[0] * 1.01
    ranked = rank_gemm("h200", "fp8e4m3", 1, 57344, 7168, candidates=[c.to_dict() for c in pair])
    assert [r.config["num_stages"] for r in ranked] == [5, 3]


def test_stages_past_the_k_loop_hide_no_more_latency():
    # K = 256 with BLOCK_K 128 is two K steps: up to 3 stages (2 loads ahead) the deeper pipeline hides more of the
    # load latency, a fourth stage has no step left to prefetch and predicts the same time
    for name in ("mi300x", "mi350x", "h200"):
        target = get_target(name)
        machine = Machine.build(target, resolve_dtype("bf16", target))
        ahead = 1 + machine.mma_buffers  # the first stage count with a load ahead
        times = [
            predict_seconds(machine, 256, 1024, 256, GemmConfig(32, 32, 128, 4, s, GROUP_M=8))
            for s in (ahead + 1, ahead + 2, ahead + 3)
        ]
        assert times[0] > times[1] == times[2], (name, times)


def test_amd_near_ties_go_to_the_guided_num_stages():
    # inside 3% of the best (the judge's NEAR) the model cannot rank; on AMD the pipeliner's guidance (2 stages)
    # decides, as PT103 does. Exact ties go to fewer stages on every target
    target = get_target("mi350x")
    machine = Machine.build(target, resolve_dtype("bf16", target))
    deep = GemmConfig(256, 256, 32, 8, 4, GROUP_M=8)
    guided = GemmConfig(256, 256, 64, 8, 2, GROUP_M=8)
    far = GemmConfig(64, 64, 32, 4, 2, GROUP_M=8)
    assert pick_order(machine, 4096, [(1.00e-4, deep), (1.02e-4, guided), (1.2e-4, far)]) == [1, 0, 2]
    assert pick_order(machine, 4096, [(1.00e-4, deep), (1.04e-4, guided), (1.2e-4, far)]) == [0, 1, 2]
    h200 = get_target("h200")
    nvidia = Machine.build(h200, resolve_dtype("bf16", h200))
    assert pick_order(nvidia, 4096, [(1.00e-4, deep), (1.02e-4, guided)]) == [0, 1]
    tied = [(1.0e-4, GemmConfig(64, 64, 128, 4, 3, GROUP_M=8)), (1.0e-4, GemmConfig(64, 64, 128, 4, 2, GROUP_M=8))]
    assert pick_order(nvidia, 4096, tied) == [1, 0]


def test_fp32_b_copies_past_the_l1_left_beside_shared_memory_cost_a_step():
    # 256x64x32 fp32 on an H100: 40 KB a stage. On 5 stages (200 KB, carve-out 228 KB) 28 KB of L1 is left for 32 KB
    # of transposed B copies in flight, on 4 (160 KB, carve-out 164 KB) 92 KB for 24 KB: measured 2-5% slower on 5
    # stages (the fp32 blind33 misses), and the model ranks 4 stages first. 16-bit copies (cp.async.cg) and AMD
    # targets (no wgmma, no transposed copies) have no such term.
    from porter.tune.model import l1_overflow

    target = get_target("h100")
    machine = Machine.build(target, resolve_dtype("fp32", target))
    deep, shallow = GemmConfig(256, 64, 32, 8, 5, GROUP_M=8), GemmConfig(256, 64, 32, 8, 4, GROUP_M=8)
    blocks = {cfg: blocks_per_unit(machine, cfg) for cfg in (deep, shallow)}
    assert l1_overflow(machine, deep, blocks[deep]) == pytest.approx((32 - 28) / 32)
    assert l1_overflow(machine, shallow, blocks[shallow]) == 0.0
    ranked = rank_gemm("h100", "fp32", 65536, 1152, 1152, candidates=[deep.to_dict(), shallow.to_dict()])
    assert ranked[0].config["num_stages"] == 4
    for name, dtype in (("h100", "bf16"), ("mi300x", "fp32"), ("mi350x", "fp32")):
        other = get_target(name)
        other_machine = Machine.build(other, resolve_dtype(dtype, other))
        assert l1_overflow(other_machine, deep, blocks_per_unit(other_machine, deep)) == 0.0, (name, dtype)


def test_a_two_warp_mma_sync_tile_alone_on_an_sm_leaves_half_its_tensor_cores_idle():
    # fp32 128x1536x4096 on an H100: 96 tiles of 64x32 for 132 SMs, one tile an SM. Its 2 warps issue on 2 of the 4
    # schedulers, each with its own tensor core: the 2-warp pick measured 0.828 of the best (32x64x128 on 4 warps) in
    # blind33. With the idle tensor cores counted, 4 warps rank first; where an SM holds two such tiles, or on AMD
    # (the busy SIMDs are counted per tile), nothing changes.
    from porter.tune.model import _StepContext

    two, four = GemmConfig(64, 32, 32, 2, 5, GROUP_M=8), GemmConfig(32, 64, 128, 4, 4, GROUP_M=8)
    ranked = rank_gemm("h100", "fp32", 128, 1536, 4096, candidates=[two.to_dict(), four.to_dict()])
    assert ranked[0].config["num_warps"] == 4
    target = get_target("h100")
    machine = Machine.build(target, resolve_dtype("fp32", target))
    ctx = _StepContext.__new__(_StepContext)
    ctx.mc, ctx.cfg, ctx.wgmma = machine, two, False
    assert ctx._idle_tensor_cores(1) == 2.0
    assert ctx._idle_tensor_cores(2) == 1.0
    ctx.cfg = four
    assert ctx._idle_tensor_cores(1) == 1.0
    amd = get_target("mi300x")
    ctx.mc, ctx.cfg = Machine.build(amd, resolve_dtype("fp32", amd)), two
    assert ctx._idle_tensor_cores(1) == 1.0
