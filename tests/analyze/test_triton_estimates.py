"""Per-config estimates (threads, LDS) against porter targets."""

from __future__ import annotations

import pytest

from porter.analyze.triton import estimate_config, inventory_for_source
from porter.analyze.triton.names import block_dim
from porter.targets import get_target


def gemm(meta: str, options: str, operand_cast: str = "") -> str:
    return (
        "import triton\nimport triton.language as tl\n"
        f"@triton.autotune(configs=[triton.Config({{{meta}}}, {options})], key=['M'])\n"
        "@triton.jit\ndef k(a_ptr, b_ptr, BLOCK_K: tl.constexpr = 32):\n"
        f"    a = tl.load(a_ptr){operand_cast}\n    b = tl.load(b_ptr){operand_cast}\n    c = tl.dot(a, b)\n"
    )


def only_config(source: str):
    inv = inventory_for_source(source)
    kernel = inv.kernels[0]
    return kernel.autotune.configs[0], kernel


@pytest.mark.parametrize(
    "target, stages, lds_ok",
    [
        ("mi300x", 4, False),  # 128 KiB > 64 KiB
        ("mi300x", 2, True),  # 64 KiB fits exactly
        ("mi350x", 3, True),  # 96 KiB < 160 KiB
        ("mi350x", 4, True),  # 128 KiB < 160 KiB
        ("h100", 4, True),
    ],
)
def test_lds_estimate_128x128x64(target, stages, lds_ok):
    config, kernel = only_config(
        gemm("'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64", f"num_warps=8, num_stages={stages}", ".to(tl.bfloat16)")
    )
    est = estimate_config(config, kernel, get_target(target))
    assert est.lds_bytes == stages * (128 * 64 + 64 * 128) * 2
    assert est.lds_bytes_low == max(stages - 1, 1) * (128 * 64 + 64 * 128) * 2
    assert est.lds_limit == get_target(target).lds_bytes
    assert est.lds_ok is lds_ok
    assert est.elem_bytes == 2 and est.elem_bytes_source == "dot operands (bfloat16)"
    assert est.formula == f"{stages} x (128x64 + 64x128) x 2 B"


@pytest.mark.parametrize(
    "target, stages, lds_ok",
    [
        ("mi350x", 5, None),  # 2-byte guess over, but 1-byte operands (fp8/int8) would fit: unknown
        ("mi350x", 12, False),  # even 1-byte operands need 176 KiB for 11 stages: over whatever the dtype
        ("mi350x", 2, True),  # 128 KiB at 4 bytes fits 160 KiB: fine whatever the dtype
    ],
)
def test_lds_estimate_with_operand_dtype_unknown(target, stages, lds_ok):
    config, kernel = only_config(gemm("'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64", f"num_stages={stages}"))
    est = estimate_config(config, kernel, get_target(target))
    assert kernel.elem_bytes is None and kernel.elem_bytes_source.startswith("unknown")
    assert est.lds_ok is lds_ok
    assert est.lds_bytes == stages * (128 * 64 + 64 * 128) * 2 and "2 bytes assumed" in est.formula


@pytest.mark.parametrize(
    "blocks, stages, lds_ok",
    [
        # the compile records (bench/tune/amd_lds_alignment.py): fp16 128x256x64 aligned, 2 stages 48 KiB, 3 stages 96
        ("'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 64", 2, True),  # one buffer: 24 KiB at 2 bytes, 48 at 4
        ("'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 64", 2, None),  # one buffer: 48 KiB at 2 bytes, 96 at 4
        ("'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 64", 3, None),  # 96 KiB at 2 bytes, 48 KiB at 1 byte
        ("'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 128", 3, False),  # 96 KiB even at 1 byte (fp8 compiles there)
    ],
)
def test_gfx942_allocates_one_stage_buffer_fewer(blocks, stages, lds_ok):
    """Triton 3.9 on gfx942, for a launch it specializes as aligned (sizes and row strides divisible by 16): the stream
    pipeliner allocates num_stages - 1 buffers of both tiles; an unseen dtype is taken at the 2 bytes assumed."""
    config, kernel = only_config(gemm(blocks, f"num_stages={stages}"))
    est = estimate_config(config, kernel, get_target("mi300x"))
    m, n, k = (est.blocks[d][1] for d in "MNK")
    assert est.lds_bytes == est.lds_bytes_low == (stages - 1) * (m * k + k * n) * 2 and est.lds_ok is lds_ok
    assert est.formula.startswith(f"{stages - 1} x ({m}x{k} + {k}x{n}) x 2 B") and "num_stages - 1" in est.formula


def _dot_kernel(body: str, params: str = "a_ptr, b_ptr") -> str:
    return f"import triton\nimport triton.language as tl\n@triton.jit\ndef k({params}):\n" + "".join(
        f"    {line}\n" for line in body.splitlines()
    )


@pytest.mark.parametrize(
    "body, params, size, dtype",
    [
        # a TF32 knob says nothing about the operands: bf16 loads with allow_tf32=False are 2 bytes
        (
            "a = tl.load(a_ptr).to(tl.bfloat16)\nb = tl.load(b_ptr).to(tl.bfloat16)\nc = tl.dot(a, b, allow_tf32=False)",
            "a_ptr, b_ptr",
            2,
            "bfloat16",
        ),
        # one side's cast tells both (tl.dot takes equal dtypes); shape ops keep the dtype
        (
            "a = tl.load(a_ptr)\nb = tl.trans(tl.load(b_ptr).to(tl.int8))\nc = tl.dot(a, b, input_precision='ieee')",
            "a_ptr, b_ptr",
            1,
            "int8",
        ),
        ("a = tl.load(a_ptr).to(tl.float32)\nc = tl.dot(a, a.T, input_precision='tf32')", "a_ptr", 4, "float32"),
        # a constexpr dtype parameter: its default
        ("a = tl.load(a_ptr).to(DT)\nc = tl.dot(a, a)", "a_ptr, DT: tl.constexpr = tl.float16", 2, "float16"),
        # scalar arithmetic keeps the tensor's dtype
        ("a = tl.load(a_ptr).to(tl.float8e4nv) * 2\nc = tl.dot(a, a)", "a_ptr", 1, "float8e4nv"),
        (
            "c = tl.dot_scaled(tl.load(a_ptr), sa, 'e2m1', tl.load(b_ptr), sb, 'e2m1')",
            "a_ptr, b_ptr, sa, sb",
            1,
            "e2m1",
        ),
    ],
)
def test_operand_size_from_the_source(body, params, size, dtype):
    kernel = inventory_for_source(_dot_kernel(body, params)).kernels[0]
    assert kernel.elem_bytes == size and dtype in kernel.elem_bytes_source


@pytest.mark.parametrize(
    "body",
    [
        "c = tl.dot(tl.load(a_ptr), tl.load(b_ptr), allow_tf32=True)",  # TF32 knob, pointer dtypes unknown
        "c = tl.dot(tl.load(a_ptr), tl.load(b_ptr), input_precision='tf32')",
        "c = tl.dot(tl.load(a_ptr), tl.load(b_ptr))",
    ],
)
def test_operand_size_unknown_is_not_guessed(body):
    kernel = inventory_for_source(_dot_kernel(body)).kernels[0]
    assert kernel.elem_bytes is None and kernel.elem_bytes_source.startswith("unknown")


def test_constexpr_dtype_from_the_launch():
    source = (
        _dot_kernel("a = tl.load(a_ptr).to(DT)\nc = tl.dot(a, a)", "a_ptr, DT: tl.constexpr")
        + "def run(x):\n    k[(1,)](x, DT=tl.bfloat16)\n"
    )
    kernel = inventory_for_source(source).kernels[0]
    assert kernel.elem_bytes == 2 and "bfloat16" in kernel.elem_bytes_source


def test_threads_against_wave_size():
    config, kernel = only_config(gemm("'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32", "num_warps=32, num_stages=2"))
    amd = estimate_config(config, kernel, get_target("mi300x"))
    nvidia = estimate_config(config, kernel, get_target("h100"))
    assert (amd.threads, amd.threads_ok) == (2048, False)
    assert (nvidia.threads, nvidia.threads_ok) == (1024, True)


def test_default_num_warps_and_kernel_default_block():
    config, kernel = only_config(gemm("'BLOCK_M': 64, 'BLOCK_N': 64", "num_stages=2"))
    est = estimate_config(config, kernel, get_target("mi350x"))
    assert est.num_warps == 4 and est.threads == 256
    assert est.blocks["K"] == ["BLOCK_K", 32]  # from the kernel's constexpr default
    assert est.lds_bytes == 2 * (64 * 32 + 32 * 64) * 2


def test_element_size_from_operand_casts():
    config, kernel = only_config(
        gemm("'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64", "num_stages=2", ".to(tl.float8e4b8)")
    )
    est = estimate_config(config, kernel, get_target("mi300x"))
    assert est.elem_bytes == 1 and "float8e4b8" in est.elem_bytes_source
    assert est.lds_bytes == 2 * (128 * 64 + 64 * 128)


def test_unknown_values_give_no_lds_estimate():
    config, kernel = only_config(gemm("'BLOCK_M': bm, 'BLOCK_N': 128, 'BLOCK_K': 64", "num_stages=3"))
    est = estimate_config(config, kernel, get_target("mi300x"))
    assert est.lds_bytes is None and est.lds_ok is None


def test_no_lds_estimate_for_non_gemm_kernel():
    source = (
        "import triton\n@triton.autotune(configs=[triton.Config({'BLOCK': 1024}, num_stages=4)], key=['n'])\n"
        "@triton.jit\ndef k(x):\n    pass\n"
    )
    config, kernel = only_config(source)
    assert estimate_config(config, kernel, get_target("mi300x")).lds_bytes is None


@pytest.mark.parametrize(
    "key, dim",
    [
        ("BLOCK_M", "M"),
        ("BLOCK_SIZE_N", "N"),
        ("BK", "K"),
        ("TILE_M", "M"),
        ("BLOCK_K_SIZE", "K"),
        ("block_n", "N"),
        ("M_BLOCK", "M"),
        ("BLOCK_MN", None),
        ("GROUP_SIZE_M", None),
        ("BLOCK", None),
        ("num_warps", None),
    ],
)
def test_block_key_names(key, dim):
    assert block_dim(key) == dim
