"""OCP fp8 data made in a module without Triton kernels, for the project's Triton kernels in another module.

PT206 / PT221 speak where the fp8 data meets code compiled for the target. A layer module that allocates its
weights as float8_e4m3fn and hands them to the project's own Triton GEMM (imported from the kernel module) is
such a place, as much as a module defining its kernels (torchao's BlockwiseQuantLinear, pytorch/ao#4136).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from porter.analyze import load_rules
from porter.analyze.scan import scan_tree
from porter.config import PorterConfig

KERNELS = """\
import torch
import triton
import triton.language as tl


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr):
    a = tl.load(a_ptr)
    b = tl.load(b_ptr)
    tl.store(c_ptr, tl.dot(a, b))


def fp8_gemm(a, b):
    c = torch.empty(a.shape[0], b.shape[0], dtype=torch.bfloat16, device=a.device)
    gemm_kernel[(1,)](a, b, c)
    return c
"""

LINEAR = """\
import torch
from torch import nn

from pkg.kernels import fp8_gemm


class QuantLinear(nn.Module):
    def __init__(self, n, k, dtype: torch.dtype = torch.float8_e4m3fn):
        super().__init__()
        supported = [
            torch.float8_e4m3fn,
            torch.float8_e5m2,
        ]
        assert dtype in supported, f"Unsupported dtype: {dtype}"
        self.weight = nn.Parameter(torch.empty(n, k, dtype=dtype))

    def forward(self, x):
        return fp8_gemm(x, self.weight)
"""

# the same layer feeding torch._scaled_mm (a torch GEMM: PT208's) instead of the project's kernels
LINEAR_TORCH_GEMM = LINEAR.replace("from pkg.kernels import fp8_gemm\n", "").replace(
    "fp8_gemm(x, self.weight)", "torch._scaled_mm(x, self.weight.t(), out_dtype=torch.bfloat16)"
)

# the kernel module decodes its operands to fp16 before the dot: the fp8 bytes are storage both ends share
DECODING_KERNELS = KERNELS.replace("b = tl.load(b_ptr)", "b = tl.load(b_ptr).to(tl.float16)").replace(
    "a = tl.load(a_ptr)", "a = tl.load(a_ptr).to(tl.float16)"
)


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text), encoding="utf-8")


def linear_findings(root: Path, target: str) -> list[tuple[int, str]]:
    result = scan_tree(root, target, load_rules(), jobs=1, config=PorterConfig(), use_cache=False)
    return sorted((f.line, f.rule) for f in result.findings if f.path == "pkg/linear.py" and f.rule in RULES)


RULES = {"PT206", "PT221"}


@pytest.fixture
def package(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": KERNELS, "pkg/linear.py": LINEAR})
    return tmp_path


def test_fp8_default_and_allow_list_of_a_layer_feeding_the_project_s_triton_gemm(package):
    assert linear_findings(package, "mi300x") == [(8, "PT206"), (14, "PT221")]
    result = scan_tree(package, "mi300x", load_rules(), jobs=1, config=PorterConfig(), use_cache=False)
    default = next(f for f in result.findings if f.rule == "PT206" and f.path == "pkg/linear.py")
    assert "through `fp8_gemm` (pkg/kernels.py)" in default.message
    guard = next(f for f in result.findings if f.rule == "PT221" and f.path == "pkg/linear.py")
    assert guard.data["admitted"] == {"line": 10, "end_line": 13}  # the allow-list a port widens


def test_silent_on_an_ocp_target(package):
    assert linear_findings(package, "mi350x") == []


def test_silent_where_the_data_feeds_a_torch_gemm_or_kernels_that_only_decode(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": KERNELS, "pkg/linear.py": LINEAR_TORCH_GEMM})
    assert linear_findings(tmp_path, "mi300x") == []
    write(tmp_path, {"pkg/kernels.py": DECODING_KERNELS, "pkg/linear.py": LINEAR})
    assert [rule for _, rule in linear_findings(tmp_path, "mi300x")] == ["PT221"]


def test_a_relative_import_of_the_kernel_module_is_followed_too(tmp_path):
    relative = LINEAR.replace("from pkg.kernels import fp8_gemm", "from .kernels import fp8_gemm")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": KERNELS, "pkg/linear.py": relative})
    assert linear_findings(tmp_path, "mi300x") == [(8, "PT206"), (14, "PT221")]


INDEX_KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def remap_kernel(ids_ptr):
    tl.store(ids_ptr, tl.load(ids_ptr) + 1)


def remap(ids):
    remap_kernel[(1,)](ids)
"""

# a CUTLASS-style layer: its fp8 data goes to a vendor GEMM; the project kernel it calls remaps indices
VENDOR_GEMM_LAYER = """\
import torch

from pkg.index import remap


def quantize(w, s):
    return (w / s).clamp(-448, 448).to(torch.float8_e4m3fn)


def run(ids, x, w):
    remap(ids)
    return vendor.fp8_gemm(x, w)
"""

# the project's fp8 GEMM is called, but from another module-level function than the one making the data
OTHER_SCOPE_LAYER = """\
import torch

from pkg.kernels import fp8_gemm


def quantize(w, s):
    return (w / s).clamp(-448, 448).to(torch.float8_e4m3fn)


def bench(x, w):
    return fp8_gemm(x, w)
"""


# quantizes and hands the fp8 weights to the project's fp8 GEMM in the same function
QUANTIZE_AND_MULTIPLY = """\
import torch

from pkg.kernels import fp8_gemm


def linear(x, w, s):
    fp8_max = torch.finfo(torch.float8_e4m3fn).max
    w8 = (w / s).clamp(-fp8_max, fp8_max).to(torch.float8_e4m3fn)
    return fp8_gemm(x, w8)
"""


@pytest.mark.parametrize(
    "files",
    [
        {"pkg/index.py": INDEX_KERNELS, "pkg/linear.py": VENDOR_GEMM_LAYER},
        {"pkg/kernels.py": KERNELS, "pkg/linear.py": OTHER_SCOPE_LAYER},
    ],
    ids=["kernel-without-fp8", "other-function"],
)
def test_silent_where_the_project_kernel_called_is_not_the_fp8_data_s_consumer(tmp_path, files):
    write(tmp_path, {"pkg/__init__.py": "", **files})
    assert linear_findings(tmp_path, "mi300x") == []


def test_a_quantizer_calling_the_project_s_fp8_gemm_itself_is_the_finding(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": KERNELS, "pkg/linear.py": QUANTIZE_AND_MULTIPLY})
    assert linear_findings(tmp_path, "mi300x") == [(7, "PT206"), (8, "PT206")]


def test_a_quantize_dequantize_simulation_hands_the_gemm_no_fp8(tmp_path):
    simulated = QUANTIZE_AND_MULTIPLY.replace(".to(torch.float8_e4m3fn)", ".to(torch.float8_e4m3fn).to(torch.float32)")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": KERNELS, "pkg/linear.py": simulated})
    assert linear_findings(tmp_path, "mi300x") == []


def test_fp8_data_handed_only_to_a_vendor_kernel_is_not_the_project_s(tmp_path):
    vendor = QUANTIZE_AND_MULTIPLY.replace("return fp8_gemm(x, w8)", "fp8_gemm(x, w)\n    return vendor.attention(w8)")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": KERNELS, "pkg/linear.py": vendor})
    assert linear_findings(tmp_path, "mi300x") == []


def test_the_kernel_module_s_api_may_launch_through_a_helper(tmp_path):
    # torchao's blockwise_fp8_gemm returns `_blockwise_fp8_gemm_impl(...)`, bound when Triton is first used
    wrapped = KERNELS.replace("def fp8_gemm(a, b):", "def _fp8_gemm_impl(a, b):") + (
        "\n\ndef fp8_gemm(a, b):\n    return _fp8_gemm_impl(a, b)\n"
    )
    write(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": wrapped, "pkg/linear.py": LINEAR})
    assert linear_findings(tmp_path, "mi300x") == [(8, "PT206"), (14, "PT221")]
