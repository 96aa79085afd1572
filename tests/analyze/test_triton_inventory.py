"""Triton inventory of realistic modules: kernels, autotune configs, launches, guards, to_dict."""

from __future__ import annotations

import json

import pytest

from porter.analyze.triton import inventory_for_source
from porter.analyze.triton.names import guard_of_test
from porter.targets import get_target

# An autotuned GEMM module in the style of Triton's matmul tutorial: per-vendor config functions,
# a comprehension-built list, `from triton import jit`, constexpr params with defaults, a launcher.
GEMM_MODULE = """\
import torch
import triton
import triton.language as tl
from triton import jit

GROUP = 8
BIG_TILES = [(128, 256, 64), (256, 128, 64)]


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def get_cuda_autotune_config():
    return [
        triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": GROUP},
                      num_stages=s, num_warps=8)
        for (m, n, k) in BIG_TILES for s in [3, 4]
    ] + [triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": GROUP},
                       num_stages=5, num_warps=2)]


def get_hip_autotune_config():
    return [
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 1,
                       "waves_per_eu": 2}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 4,
                       "waves_per_eu": 2, "matrix_instr_nonkdim": 16}, num_warps=4, num_stages=2),
    ]


def get_autotune_config():
    if is_cuda():
        return get_cuda_autotune_config()
    else:
        return get_hip_autotune_config()


@triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"])
@jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr = ""):
    pid = tl.program_id(axis=0)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptr)
        b = tl.load(b_ptr)
        accumulator = tl.dot(a, b, accumulator)
    c = accumulator.to(tl.float16)
    tl.store(c_ptr, c)


@triton.heuristics({"num_warps": lambda args: 32 if args["BLOCK"] >= 4096 else 8})
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr = 1024):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr, x)


def matmul(a, b):
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K)
    return c


def softmax(x, big):
    y = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]),
                                  num_warps=32 if big else 8, num_stages=1)
    return y
"""


def line_of(text: str) -> int:
    """1-based line of the first source line containing `text`."""
    return next(i for i, line in enumerate(GEMM_MODULE.splitlines(), 1) if text in line)


def test_kernels_are_found_through_every_import_style():
    inv = inventory_for_source(GEMM_MODULE, "gemm.py")
    assert [k.name for k in inv.kernels] == ["matmul_kernel", "softmax_kernel"]
    matmul = inv.kernel("matmul_kernel")
    assert matmul.decorators == ["triton.autotune", "triton.jit"]
    assert matmul.gemm_like and len(matmul.dot_nodes) == 1
    assert matmul.constexpr_names == ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "ACTIVATION"]
    assert matmul.param("ACTIVATION").default.values == [""]
    assert "float16" in matmul.dtypes and "float32" not in matmul.dtypes  # accumulator dtype left out
    softmax = inv.kernel("softmax_kernel")
    assert not softmax.gemm_like
    assert softmax.heuristics["num_warps"].values == [32, 8]


def test_autotune_configs_from_vendor_config_functions():
    inv = inventory_for_source(GEMM_MODULE, "gemm.py")
    tune = inv.kernel("matmul_kernel").autotune
    assert tune.configs_source == "function:get_autotune_config" and tune.complete
    assert tune.key == ["M", "N", "K"]
    guards = [c.guard for c in tune.configs]
    assert guards == ["nvidia"] * 5 + ["amd"] * 2
    first = tune.configs[0]
    assert first.meta["BLOCK_SIZE_M"].values == [128] and first.meta["GROUP_SIZE_M"].values == [8]
    assert first.options["num_stages"].values == [3] and first.bindings == {"m": 128, "n": 256, "k": 64, "s": 3}
    # comprehension entries point at the same Config call, values at the literal list elements
    assert tune.configs[1].node is first.node and tune.configs[1].options["num_stages"].values == [4]
    origin = tune.configs[1].options["num_stages"].possibles[0].node
    assert inv.code(origin) == "4" and inv.span(origin).line == line_of("for s in [3, 4]")
    assert [c.amd_knobs for c in tune.configs[5:]] == [["waves_per_eu"], ["waves_per_eu", "matrix_instr_nonkdim"]]


def test_launch_sites():
    inv = inventory_for_source(GEMM_MODULE, "gemm.py")
    mm, sm = inv.launches
    assert mm.kernel == "matmul_kernel" and mm.kernel_known and mm.options == {} and mm.grid == "grid"
    assert sm.options["num_warps"].values == [32, 8] and sm.options["num_stages"].values == [1]
    assert not sm.meta["BLOCK"].known  # next_power_of_2 of a runtime shape: unknown, not guessed
    assert sm.span.line == line_of("softmax_kernel[(x.shape[0],)]")


def test_config_list_bound_to_constant_and_inline_comprehension():
    source = (
        "import triton\nimport triton.language as tl\n"
        "CONFIGS = [triton.Config({'BLOCK_M': bm, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=w, num_stages=s)\n"
        "           for bm in [64, 128] for w in [4, 8] for s in [3, 4] if not (bm == 64 and w == 8)]\n"
        "@triton.autotune(configs=CONFIGS + [triton.Config({'BLOCK_M': 32}, num_warps=2)], key=['M'])\n"
        "@triton.jit\ndef k(a, b, BLOCK_M: tl.constexpr):\n    c = tl.dot(a, b)\n"
    )
    tune = inventory_for_source(source).kernel("k").autotune
    assert tune.complete and len(tune.configs) == 7
    assert [c.bindings.get("bm") for c in tune.configs] == [64, 64, 128, 128, 128, 128, None]


def test_unresolvable_config_list_is_marked_incomplete():
    source = (
        "import triton\nfrom mypkg import make_configs\n"
        "@triton.autotune(configs=make_configs(), key=['M'])\n@triton.jit\ndef k(x):\n    pass\n"
    )
    tune = inventory_for_source(source).kernel("k").autotune
    assert tune.configs == [] and not tune.complete and tune.configs_source == "unknown"


def test_appended_config_list_is_incomplete_not_guessed():
    source = (
        "import triton\nCONFIGS = [triton.Config({'B': 1})]\nCONFIGS.append(triton.Config({'B': 2}))\n"
        "@triton.autotune(configs=CONFIGS, key=['M'])\n@triton.jit\ndef k(x):\n    pass\n"
    )
    tune = inventory_for_source(source).kernel("k").autotune
    assert not tune.complete


def test_configs_module_without_autotune_still_inventoried():
    source = (
        "import triton\n"
        "def configs():\n    return [triton.Config({'BLOCK': b}, num_warps=w) for b in [64, 128] for w in [8, 32]]\n"
    )
    inv = inventory_for_source(source)
    assert [c.options["num_warps"].single for c in inv.orphan_configs] == [8, 32, 8, 32]
    assert [c.index for c in inv.orphan_configs] == [0, 1, 2, 3]


def test_to_dict_is_json_and_carries_estimates():
    inv = inventory_for_source(GEMM_MODULE, "gemm.py")
    data = json.loads(json.dumps(inv.to_dict(get_target("mi300x"))))
    assert data["path"] == "gemm.py" and data["target"] == "mi300x"
    assert [k["name"] for k in data["kernels"]] == ["matmul_kernel", "softmax_kernel"]
    tune = data["autotunes"][0]
    assert tune["configs_source"] == "function:get_autotune_config" and len(tune["configs"]) == 7
    config = tune["configs"][1]
    assert config["options"]["num_stages"]["values"] == [4]
    assert config["options"]["num_stages"]["origins"][0]["text"] == "4"
    est = config["estimate"]
    # operand dtype not shown: 2 bytes assumed, in the num_stages - 1 buffers gfx942 allocates for aligned launches
    assert est["lds_bytes"] == 3 * (256 * 64 + 64 * 128) * 2 and est["lds_ok"] is False  # 72 KiB even at 1 byte
    assert est["threads"] == 8 * 64 and est["note"].startswith("estimate only")
    assert data["launches"][1]["options"]["num_warps"]["values"] == [32, 8]
    assert inv.to_dict()["autotunes"][0]["configs"][0]["estimate"] is None  # no target: no estimate


def test_syntax_error_raises_parser_error():
    import libcst

    try:
        inventory_for_source("def (:\n")
    except libcst.ParserSyntaxError:
        return
    raise AssertionError("expected a ParserSyntaxError")


def test_config_helper_function_arguments_are_bound():
    source = (
        "import triton\nimport triton.language as tl\n"
        "def _config(bm, bn, bk, num_stages, num_warps=4):\n"
        "    meta = {'BLOCK_M': bm, 'BLOCK_N': bn, 'BLOCK_K': bk}\n"
        "    return triton.Config(meta, num_stages=num_stages, num_warps=num_warps)\n"
        "CONFIGS = [\n    _config(128, 256, 64, num_stages=3, num_warps=8),\n    _config(64, 64, 32, 2),\n]\n"
        "@triton.autotune(configs=CONFIGS, key=['M'])\n@triton.jit\ndef k(a, b):\n    c = tl.dot(a, b)\n"
    )
    inv = inventory_for_source(source)
    first, second = inv.kernel("k").autotune.configs
    assert {key: val.single for key, val in first.meta.items()} == {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}
    assert first.options["num_stages"].single == 3 and second.options["num_warps"].single == 4  # default
    # values point at the call site literals, the entry at the helper call
    assert inv.span(first.options["num_stages"].possibles[0].node).line == 7
    assert first.entry_span.line == 7 and second.entry_span.line == 8 and first.span.line == 5
    data = inv.to_dict()["autotunes"][0]["configs"][1]
    assert data["line"] == 8 and data["call"]["line"] == 5


@pytest.mark.parametrize(
    "test, branch, guard",
    [
        ("is_hip()", True, "amd"),
        ("is_hip()", False, "nvidia"),
        ("not is_hip()", True, "nvidia"),
        ("torch.version.hip is not None", True, "amd"),
        ("torch.version.hip is None", True, "nvidia"),
        ("torch.version.cuda", True, "nvidia"),
        ("is_cuda() and cap >= (9, 0)", True, "nvidia"),
        ("torch.cuda.is_available()", True, None),  # true on ROCm too: not a vendor test
        ("device_type == 'xpu'", True, "other"),
        ("device_type == 'xpu'", False, None),
        ("big", True, None),
    ],
)
def test_vendor_guards(test, branch, guard):
    assert guard_of_test(test, branch) == guard


SCOPES_MODULE = """\
import triton
import triton.language as tl
NW = 4
NW: int = 8
if big:
    NW = 32
ITEMS = []
(lambda: ITEMS.append(1))()
def host(x, cb=lambda y: y.append(1)):
    if x: W = 16
    else: W = 32
    try:
        S = 2
    except ImportError:
        S = 3
    kern[(1,)](x, num_warps=NW, num_stages=S, BLOCK=W)
@triton.jit
def kern(X, BLOCK: tl.constexpr):
    pass
"""


def test_scope_tables_follow_statement_structure():
    """Bindings found through the engine's node index (no walk of the inventory's own): source order
    across `x = ` and `x: T = `, one-line suites, try/except branches, mutation inside a lambda ignored."""
    inv = inventory_for_source(SCOPES_MODULE, "scopes.py")
    (launch,) = inv.launches
    assert launch.kernel == "kern" and launch.kernel_known
    assert launch.options["num_warps"].values == [4, 8, 32]
    assert launch.options["num_stages"].values == [2, 3]
    assert launch.meta["BLOCK"].values == [16, 32]
    items = next(n for n in inv.references() if inv.code(n[0]) == "ITEMS")[0]
    assert inv.fold(items).values == [[]]  # the lambda's append runs in the lambda, not at module level
    assert inv.enclosing_function(launch.node).name.value == "host"
