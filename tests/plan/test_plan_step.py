"""porter plan: GEMM pricing (TF32 on gfx950), step-time components, communication."""

from __future__ import annotations

import pytest

from porter.plan.evaluate import evaluate
from porter.plan.gemm import effective_precision, gemm_ms, roofline_gemm_ms
from porter.plan.step import dense_gemm_ms, plan_constants, scale_up_gbps
from porter.targets import get_target
from tests.plan.test_plan_model import tiny


def test_tf32_has_no_native_path_on_gfx950():
    mi350x, mi300x, b200 = get_target("mi350x"), get_target("mi300x"), get_target("b200")
    assert effective_precision(mi350x, "tf32", "fp32") == "fp32"
    assert effective_precision(mi350x, "tf32", "bf16x3") == "bf16x3"
    assert effective_precision(mi300x, "tf32", "fp32") == "tf32"  # XF32 on gfx942
    assert effective_precision(b200, "tf32", "fp32") == "tf32"


def test_bf16x3_costs_three_bf16_products_when_compute_bound():
    mi350x = get_target("mi350x")
    shape = (16384, 8192, 8192)
    bf16 = roofline_gemm_ms(mi350x, "bf16", *shape)
    assert roofline_gemm_ms(mi350x, "bf16x3", *shape) == pytest.approx(3 * bf16)
    # full fp32 runs on the fp32 matrix rate: slower still than bf16x3
    assert roofline_gemm_ms(mi350x, "fp32", *shape) > roofline_gemm_ms(mi350x, "bf16x3", *shape)
    expected_ms = 2 * 16384 * 8192 * 8192 / (mi350x.peak_tflops("bf16") * 1e12) * 1e3
    assert bf16 == pytest.approx(expected_ms, rel=0.01)


def test_memory_bound_gemm_priced_by_bytes():
    mi350x = get_target("mi350x")
    m, n, k = 65536, 1, 256
    assert gemm_ms(mi350x, "bf16", m, n, k) == pytest.approx(
        (m * k + k * n + m * n) * 2 / (mi350x.hbm_gbps * 1e9) * 1e3
    )


def test_direct_port_of_tf32_recipe_is_slower_on_mi350x_gemms():
    model = tiny(
        batch_size_per_gpu=8192,
        dense={"num_dense_features": 16, "bottom_mlp": [512, 256, 4], "top_mlp": [1024, 1024, 1]},
    )
    mi350x, b200 = get_target("mi350x"), get_target("b200")
    fp32 = dense_gemm_ms(model, mi350x, plan_constants(mi350x))[0]
    bf16x3 = dense_gemm_ms(model.replace(tf32_fallback="bf16x3"), mi350x, plan_constants(mi350x))[0]
    tf32_b200 = dense_gemm_ms(model, b200, plan_constants(b200))[0]
    assert fp32 > bf16x3 > tf32_b200


def test_step_components_add_up_and_scale_with_batch():
    model = tiny(batch_size_per_gpu=4096)
    target = get_target("mi350x")
    small, large = evaluate(model, target), evaluate(model.replace(batch_size_per_gpu=65536), target)
    for e in (small, large):
        assert sum(e.step.components().values()) == pytest.approx(e.step.total)
    assert large.step.total > small.step.total
    assert large.throughput > small.throughput  # fixed costs amortised


def test_uvm_misses_cost_host_link_time():
    base = tiny(batch_size_per_gpu=8192)
    uvm = tiny(
        batch_size_per_gpu=8192,
        tables=[
            {"name": "a", "rows": 1000, "dim": 4, "pooling": 2, "placement": "uvm", "cache_fraction": 0.5},
            {"name": "b", "rows": 10, "dim": 4, "optimizer": "adam"},
        ],
    )
    target = get_target("b200")
    assert evaluate(base, target).step.embedding_uvm == 0
    assert evaluate(uvm, target).step.embedding_uvm > 0


def test_interconnect_bandwidth_from_specs():
    mi350x, b200 = get_target("mi350x"), get_target("b200")
    links = mi350x.extra["interconnect"]
    assert scale_up_gbps(mi350x, 7) == pytest.approx(7 * links["link_gbps_per_dir"])
    assert scale_up_gbps(mi350x, 3) == pytest.approx(3 * links["link_gbps_per_dir"])  # mesh: one link per peer
    assert scale_up_gbps(b200, 3) == b200.extra["interconnect"]["gbps_per_dir"]  # switch: full bandwidth


def test_all_to_all_grows_with_row_wise_shards():
    tables = [{"name": f"t{i}", "rows": 10**6, "dim": 4} for i in range(4)]
    dense = {"num_dense_features": 4, "bottom_mlp": [4], "top_mlp": [2, 1]}
    table_wise = tiny(
        gpus=4, batch_size_per_gpu=8192, dense=dense, tables=[{**t, "sharding": "table_wise"} for t in tables]
    )
    row_wise = tiny(
        gpus=4, batch_size_per_gpu=8192, dense=dense, tables=[{**t, "sharding": "row_wise"} for t in tables]
    )
    target = get_target("mi350x")
    assert evaluate(row_wise, target).step.all_to_all > 2 * evaluate(table_wise, target).step.all_to_all > 0


def test_tune_model_source_prices_bf16x3_as_three_bf16_products():
    mi350x = get_target("mi350x")
    bf16 = gemm_ms(mi350x, "bf16", 8192, 1024, 1024, "tune")
    assert 0 < bf16 < float("inf")
    assert gemm_ms(mi350x, "bf16x3", 8192, 1024, 1024, "tune") == pytest.approx(3 * bf16)


def test_narrow_output_gemms_are_priced_with_split_k():
    # a weight gradient of a 4-wide layer: 256 x 4 outputs cannot fill 256 CUs, K is the batch
    from porter.plan.gemm import gemm_ms
    from porter.tune import predict_gemm_ms

    mi350x = get_target("mi350x")
    unsplit = predict_gemm_ms(mi350x, "bf16", 256, 4, 8192)
    split = gemm_ms(mi350x, "bf16", 256, 4, 8192, source="tune")
    assert split < unsplit / 4  # slices of K run side by side
    operand_bytes = (256 * 8192 + 8192 * 4) * 2
    assert split > operand_bytes / (mi350x.hbm_gbps * 1e9) * 1e3  # still slower than reading the operands
    # an output that fills the device keeps the plain kernel's price
    assert gemm_ms(mi350x, "bf16", 8192, 8192, 1024, source="tune") == pytest.approx(
        predict_gemm_ms(mi350x, "bf16", 8192, 8192, 1024)
    )
