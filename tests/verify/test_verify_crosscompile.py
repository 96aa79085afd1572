"""Cross-compilation of recorded launches for AMD targets with Triton's own backend, on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.targets import get_target
from porter.verify.crosscompile import (
    compile_jobs,
    jobs_from_launches,
    production_specialization,
    record_failure,
    unchecked_compiles,
)

KERNELS = """
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def tf32_dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b, input_precision="tf32"))


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))
"""

ADD = {
    "kernel": "add_kernel",
    "module": "kernels",
    "qualname": "add_kernel",
    "file": "kernels.py",
    "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
    "constexprs": {"BLOCK": 1024},
    "options": {"num_warps": 4, "num_stages": 3},
}
DOT = {
    "kernel": "tf32_dot_kernel",
    "module": "kernels",
    "qualname": "tf32_dot_kernel",
    "file": "kernels.py",
    "signature": {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "N": "constexpr"},
    "constexprs": {"N": 32},
    "options": {"num_warps": 4, "num_stages": 2},
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cc")
    (root / "kernels.py").write_text(KERNELS, encoding="utf-8")
    return root


def test_autotune_configs_become_compile_jobs() -> None:
    launch = ADD | {
        "autotune_configs": [
            {"BLOCK": 64, "num_warps": 2, "num_stages": 1, "num_ctas": 1},
            {"BLOCK": 128, "num_warps": 32, "num_stages": 1, "num_ctas": 1},
        ]
    }
    jobs = jobs_from_launches([launch])
    assert [(j["constexprs"]["BLOCK"], j["options"]["num_warps"]) for j in jobs] == [(1024, 4), (64, 2), (128, 32)]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mi350x", "mi300x"])
def test_small_kernel_and_tf32_dot_per_arch(repo: Path, tmp_path: Path, name: str) -> None:
    target = get_target(name)
    wide = ADD | {"options": {"num_warps": 32, "num_stages": 3}}
    add, dot, too_wide = compile_jobs(repo, [ADD, DOT, wide], target, jobs=2, cache_dir=tmp_path / "cache")
    assert add.ok and add.launchable and add.arch == target.arch
    assert add.vgprs > 0 and add.sgprs > 0 and add.spills == 0 and add.occupancy > 0
    assert (add.threads, add.thread_limit, add.lds_limit) == (256, 1024, target.lds_bytes)
    assert too_wide.ok and not too_wide.launchable
    assert "2048 threads, over the" in record_failure(too_wide)
    if name == "mi350x":  # gfx950 has no tf32: the compiler refuses the precision
        assert not dot.ok
        # Triton 3.9 offers ('ieee', 'bf16x3', 'bf16x6') there, 3.4 only ('ieee',): tf32 is refused by both
        assert "input_precision must be one of (" in dot.error and "Got tf32" in dot.error
    else:  # gfx942 runs tf32 on its xf32 MFMA
        assert dot.ok and dot.lds_bytes is not None
    again = compile_jobs(repo, [ADD], target, jobs=1, cache_dir=tmp_path / "cache")[0]
    assert again.cached and again.vgprs == add.vgprs


@pytest.mark.slow
def test_import_failure_is_a_record_not_a_crash(repo: Path) -> None:
    broken = ADD | {"module": "no_such_module_porter"}
    [record] = compile_jobs(repo, [broken], get_target("mi350x"), jobs=1)
    assert not record.ok and record.error.startswith("cannot import no_such_module_porter")
    # the worker could not load what the replay launched: no evidence either way, never a target failure
    assert not record.checked and record_failure(record) == ""
    assert unchecked_compiles([record]).startswith("1 kernel compile(s) for gfx950 could not finish")


@pytest.mark.slow
def test_a_compile_that_times_out_is_unchecked_not_a_failure(repo: Path, tmp_path: Path) -> None:
    from porter.records import Verdict
    from porter.verify.runtime import runtime_findings

    [record] = compile_jobs(repo, [GEMM], get_target("mi300x"), jobs=1, timeout_s=0.01, cache_dir=tmp_path / "c")
    assert (record.ok, record.checked, record.error) == (False, False, "compile timed out (limit 0.01 s per kernel)")
    assert record_failure(record) == ""
    assert runtime_findings(Verdict("tree", False, compiles=[record]), get_target("mi300x"), repo) == []
    assert not list((tmp_path / "c").glob("*.json"))  # not cached: the next run compiles it again


GEMM = {
    "kernel": "gemm_kernel",
    "module": "kernels",
    "qualname": "gemm_kernel",
    "file": "kernels.py",
    "signature": {
        "a_ptr": "*fp16",
        "b_ptr": "*fp16",
        "c_ptr": "*fp16",
        "K": "i32",
        "stride_am": "i32",
        "stride_bk": "i32",
        "BM": "constexpr",
        "BN": "constexpr",
        "BK": "constexpr",
    },
    "constexprs": {"BM": 128, "BN": 128, "BK": 64},
    "options": {"num_warps": 4, "num_stages": 3},
}


def test_a_launch_records_how_the_launcher_specializes_its_arguments() -> None:
    import torch
    import triton.language as tl

    from porter.verify.replay_plugin import describe_launch

    def kernel(x_ptr, n, m, BLOCK: tl.constexpr):
        pass

    aligned, odd = torch.empty(64), torch.empty(64)[1:]
    record = describe_launch(kernel, (aligned, 4096, 17), {"BLOCK": 64})
    assert record["specialization"]["x_ptr"].startswith("D") and record["specialization"]["n"] == "D"
    assert "m" not in record["specialization"] and "BLOCK" not in record["specialization"]
    assert "D" not in describe_launch(kernel, (odd, 4096, 17), {"BLOCK": 64})["specialization"].get("x_ptr", "")


@pytest.mark.slow
def test_an_aligned_gemm_compiles_with_its_stage_buffers_on_gfx942(repo: Path, tmp_path: Path) -> None:
    # what the launcher specializes (16-byte pointers, K and row strides divisible by 16) reaches the compile:
    # gfx942 then allocates num_stages - 1 buffers of both tiles; without the hints one buffer of the larger tile
    aligned = GEMM | {"specialization": dict.fromkeys(("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk"), "D")}
    bare, hinted = compile_jobs(repo, [GEMM, aligned], get_target("mi300x"), jobs=2, cache_dir=tmp_path / "cache")
    assert bare.ok and hinted.ok
    assert hinted.lds_bytes == 2 * (128 * 64 + 64 * 128) * 2 and bare.lds_bytes == 128 * 64 * 2


def test_jobs_compile_the_specialization_of_production_shapes() -> None:
    # a test's odd or run-to-run random sizes do not decide the kernel compiled: integers are taken divisible by 16,
    # pointers as the replay saw them (an unaligned view stays unaligned), flags (i1) never
    launch = GEMM | {
        "signature": GEMM["signature"] | {"TRANS": "i1"},
        "specialization": {"a_ptr": "DS", "b_ptr": "S", "K": "", "M": "D"},
    }
    spec = production_specialization(launch)
    assert spec["a_ptr"] == "DS" and spec["b_ptr"] == "S" and "c_ptr" not in spec
    assert spec["K"] == spec["stride_am"] == spec["stride_bk"] == "D" and "TRANS" not in spec and "BM" not in spec
    odd = launch | {"specialization": {"a_ptr": "DS", "b_ptr": "S"}}
    assert jobs_from_launches([launch])[0]["specialization"] == jobs_from_launches([odd])[0]["specialization"]
