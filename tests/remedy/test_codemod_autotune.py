"""Autotune lists for the target: AMD list beside the NVIDIA one, feasible, knobs only on AMD."""

from __future__ import annotations

import re
import textwrap

from porter.remedy.codemods import CodemodContext, get_codemod
from porter.targets import get_target
from tests.codemod_cases import finding

SOURCE = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl

    # Tuned on H100.
    CONFIGS = [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=8),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=5, num_warps=2),
    ]


    @triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        a = tl.load(a_ptr + tl.arange(0, BLOCK_M)[:, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, :])
        b = tl.load(b_ptr + tl.arange(0, BLOCK_K)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :])
        tl.store(c_ptr, tl.dot(a, b))


    @triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=32, num_stages=4)], key=["n"])
    @triton.jit
    def add_kernel(x_ptr, n, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.store(x_ptr + tl.arange(0, BLOCK), x + 1)
    """)


def _rewrite(target: str, exclusive: bool = False, topk=None):
    ctx = CodemodContext(path="pkg/k.py", exclusive=exclusive, options={"tune_topk": topk})
    return get_codemod("PT107")(
        SOURCE, [finding("PT107", 7), finding("PT104", 13), finding("PT103", 22)], get_target(target), ctx
    )


def _amd_configs(text: str, kernel: str) -> str:
    """The body of the generated `<KERNEL>_AMD_CONFIGS = [...]` list."""
    lists = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^(\w+_AMD_CONFIGS) = \[\n(.*?)^\]", text, re.MULTILINE | re.DOTALL)
    }
    assert f"{kernel.upper()}_AMD_CONFIGS" in lists, lists.keys()
    return lists[f"{kernel.upper()}_AMD_CONFIGS"]


def _configs_of(body: str):
    out = []
    for line in body.splitlines():
        meta = dict(re.findall(r'"(\w+)": (\d+)', line))
        warps = int(re.search(r"num_warps=(\d+)", line).group(1))
        stages = int(re.search(r"num_stages=(\d+)", line).group(1))
        out.append(({k: int(v) for k, v in meta.items()}, warps, stages))
    return out


def test_amd_list_is_feasible_and_nvidia_list_untouched():
    target = get_target("mi300x")
    result = _rewrite("mi300x")
    text = result.text
    assert 'CONFIGS = [\n    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256' in text  # NVIDIA list as written
    assert "@triton.autotune(configs=MATMUL_KERNEL_AMD_CONFIGS if porter_shim.IS_HIP else CONFIGS" in text
    assert (
        "@triton.autotune(configs=ADD_KERNEL_AMD_CONFIGS if porter_shim.IS_HIP else "
        '[triton.Config({"BLOCK": 1024}, num_warps=32, num_stages=4)]'
    ) in text
    gemm = _configs_of(_amd_configs(text, "matmul_kernel"))
    assert gemm
    for meta, warps, stages in gemm:
        lds = stages * (meta["BLOCK_M"] * meta["BLOCK_K"] + meta["BLOCK_K"] * meta["BLOCK_N"]) * 2
        assert lds <= target.lds_bytes and warps * target.wave_size <= target.max_threads_per_block
        assert stages == target.triton["gemm_num_stages"]
        assert set(target.triton["amd_options"]) <= set(meta)  # knobs on the AMD branch only
    add = _configs_of(_amd_configs(text, "add_kernel"))
    assert add == [({"BLOCK": 1024}, 16, target.triton["fused_num_stages"])]  # no knobs for a non-GEMM kernel
    compile(text, "k.py", "exec")
    assert result.uses_shim and result.safety == "unsafe"


def test_model_picks_carry_predicted_times_in_rationale():
    result = _rewrite("mi300x", topk=2)
    assert "porter.tune picks (top 2 per M bucket" in result.text
    assert re.search(r"\d+\.\d+ ms", result.rationale)


def test_kpack_only_where_the_target_lists_it():
    text = _rewrite("mi350x").text
    assert "kpack" not in text and "matrix_instr_nonkdim" in text


def test_exclusive_replaces_the_list_and_rerun_declines():
    result = _rewrite("mi350x", exclusive=True)
    assert "@triton.autotune(configs=MATMUL_KERNEL_AMD_CONFIGS, key=" in result.text
    assert "porter_shim" not in result.text
    again = get_codemod("PT107")(
        result.text,
        [finding("PT107", 1, result.text.count("\n"))],
        get_target("mi350x"),
        CodemodContext(exclusive=True),
    )
    assert again is None


def test_portable_rerun_proposes_nothing():
    result = _rewrite("mi300x")
    again = get_codemod("PT107")(
        result.text, [finding("PT107", 1, result.text.count("\n"))], get_target("mi300x"), CodemodContext()
    )
    assert again is None


def test_unfoldable_list_declines():
    source = SOURCE.replace("CONFIGS = [", "CONFIGS = make_configs() + [")
    result = get_codemod("PT107")(source, [finding("PT107", 14)], get_target("mi300x"), CodemodContext())
    assert result is None


def test_comprehension_list_with_pre_hook_keeps_the_hook_and_drops_nvidia_only_options():
    source = textwrap.dedent("""\
        import triton
        import triton.language as tl


        def _hook(nargs):
            pass


        @triton.autotune(
            configs=[
                triton.Config({"BLOCK_M": BM, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=w, num_stages=4,
                              pre_hook=_hook, maxnreg=128)
                for BM in [64, 128]
                for w in [4, 8]
            ],
            key=["M"],
        )
        @triton.jit
        def k(a_ptr, M, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
            a = tl.load(a_ptr + tl.arange(0, BLOCK_M)[:, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, :])
            tl.store(a_ptr, tl.dot(a, a))
        """)
    result = get_codemod("PT107")(source, [finding("PT107", 11)], get_target("mi300x"), CodemodContext())
    body = _amd_configs(result.text, "k")
    assert body.count("pre_hook=_hook") == body.count("triton.Config(") > 0
    assert "maxnreg" not in body
    compile(result.text, "k.py", "exec")


def test_header_says_no_library_ceiling_was_measured_for_the_target():
    # porter.tune's library advice: AMD targets carry no measured hipBLASLt ceiling, so the
    # comment above the generated list says it cannot compare rather than guessing. The kernel's source shows no
    # operand dtype: the list is ranked at bf16, the dtype scan's judge reads there too (one voice)
    text = _rewrite("mi350x").text
    assert "# library: no measured hipBLASLt ceiling for bf16 on mi350x: cannot compare" in text
