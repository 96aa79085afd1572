"""PyTorch/library/environment rules (PT2xx-PT4xx) on code shaped like real ROCm-aware projects.

Each excerpt below is written for this test in the style of code found in open-source kernels,
training and serving libraries (op builders, attention dispatch, quantization helpers). The
"fine" ones produced false positives before the rules were tightened (review of liger-kernel,
xformers, torchao, deepspeed, bitsandbytes, vllm, sglang, unsloth): they must stay silent on
MI300X and MI350X. The "positive" ones are real hazards that must still be found.
"""

from __future__ import annotations

import textwrap

import pytest

from porter.analyze import analyze_source, load_rules
from porter.targets import get_target

RULES = load_rules(select=["PT2", "PT3", "PT4", "opt-in"])  # opt-in rules are tested like the others
TARGETS = ["mi300x", "mi350x"]


def findings(code: str, target: str) -> list[tuple[str, int]]:
    found = analyze_source(textwrap.dedent(code), "excerpt.py", get_target(target), RULES)
    return [(f.rule, f.line) for f in found]


# ---- ROCm-fine code: no finding ---------------------------------------------------------------

OP_BUILDER = """
import os
import sys
import torch
import torch.utils.cpp_extension


class FusedOptimizerBuilder(CUDAOpBuilder):
    def nvcc_args(self):
        flags = ["-O3"] + self.version_dependent_macros()
        if not self.is_rocm_pytorch():
            flags.extend(["-allow-unsupported-compiler" if sys.platform == "win32" else "",
                          "-lineinfo", "--use_fast_math"] + self.compute_capability_args())
        else:
            flags.extend(["-D__HIP_PLATFORM_AMD__=1", "-ffast-math"])
        return flags

    def include_paths(self):
        if self.build_for_cpu:
            return []
        elif not self.is_rocm_pytorch():
            return [os.path.join(torch.utils.cpp_extension.CUDA_HOME, "include")]
        return [os.path.join(torch.utils.cpp_extension.ROCM_HOME, "include")]

    def is_compatible(self):
        ok = True
        if not self.is_rocm_pytorch() and torch.cuda.is_available():
            torch_cuda_major = int(torch.version.cuda.split(".")[0])
            ok = torch_cuda_major >= 11
        return ok

    def cross_compile_archs(self):
        if torch.utils.cpp_extension.CUDA_HOME is not None:
            return ["8.0", "9.0"]
        return []

    def jit_load(self):
        saved = os.environ.get("TORCH_CUDA_ARCH_LIST")
        try:
            if self.is_rocm_pytorch():
                os.environ["PYTORCH_ROCM_ARCH"] = self.rocm_arch()
            return self.load()
        finally:
            if saved is not None:
                os.environ["TORCH_CUDA_ARCH_LIST"] = saved
"""

ATTENTION_DISPATCH = """
import torch

FORWARD_OPS = [
    cutlass_op.FwOp if torch.version.cuda else ck_op.FwOp,
    flash_op.FwOp,
]
IS_CUDA = torch.cuda.is_available() and torch.version.cuda
IS_ROCM = torch.cuda.is_available() and torch.version.hip


def describe_build():
    print(f"CUDA: {torch.version.cuda or 'N/A'}  HIP: {torch.version.hip or 'N/A'}")


def toolkit_version():
    if torch.version.cuda:
        text = torch.version.cuda
    elif torch.version.hip:
        text = torch.version.hip
    else:
        return None
    return tuple(map(int, text.split(".")[:2]))


def skip_known_regression():
    if torch.version.cuda is None or not torch.version.cuda.startswith("12.9"):
        return
    disable_fused_path()
"""

CAPABILITY_CHECKS = """
import torch


def use_fused_grad_accumulation(grad_weight, grad_logits):
    # Ampere-level gate: bf16 GEMM with fp32 accumulation, fine on every Instinct part
    return (
        grad_weight.device.type == "cuda"
        and torch.cuda.get_device_capability(grad_weight.device)[0] >= 8
        and grad_logits.dtype in (torch.float16, torch.bfloat16)
    )


def check_sm90_kernel(x):
    if not torch.cuda.is_available() or torch.cuda.get_device_capability(x.device) != (9, 0):
        raise RuntimeError("this CuTe kernel requires a Hopper (sm90) GPU")


def is_blackwell():
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10


def supports_fp16_tensor_cores():
    major, _ = torch.cuda.get_device_capability()
    if major < 7:
        return False
    return True


def has_hopper_tma():
    return torch.cuda.is_available() and torch.version.cuda and torch.cuda.get_device_capability() >= (9, 0)


def pick_attention_backend():
    if torch.version.hip:
        return "aiter"
    if torch.cuda.get_device_capability() >= (9, 0):
        return "fa3"
    return "fa2"


def sm100_only():
    if is_hip():
        return None
    major, minor = torch.cuda.get_device_capability()
    if major * 10 + minor >= 90:
        return "tma"
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "code",
    [OP_BUILDER, ATTENTION_DISPATCH, CAPABILITY_CHECKS],
    ids=["op-builder", "attention-dispatch", "capability-checks"],
)
def test_rocm_aware_code_is_silent(code, target):
    assert findings(code, target) == []


# ---- real hazards: still found --------------------------------------------------------------

SETUP_SCRIPT = """
import os
import subprocess
from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension

os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0"
nvcc_version = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "-V"])
ext = CUDAExtension("fused_ops", ["fused.cu"],
                    extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math", "-lineinfo"]})
"""


@pytest.mark.parametrize("target", TARGETS)
def test_nvidia_only_setup_script_is_found(target):
    rules = {rule for rule, _ in findings(SETUP_SCRIPT, target)}
    assert {"PT405", "PT404", "PT215"} <= rules


HOPPER_GATES = """
import torch

major, minor = torch.cuda.get_device_capability()
if major >= 9:
    from flash_attn_interface import flash_attn_func
sm = major * 10 + minor
USE_TMA = sm >= 90
if torch.version.cuda and Version(torch.version.cuda) >= Version("12.1"):
    enable_fast_path()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_hopper_gates_and_cuda_version_checks_are_found(target):
    found = findings(HOPPER_GATES, target)
    assert ("PT202", 5) in found and ("PT202", 8) in found
    assert ("PT201", 9) in found


FP8_QUANT = """
import torch
import triton

FP8_DTYPE = torch.float8_e4m3fn
FP8_MAX = 448.0


def quantize(x):
    scale = x.abs().amax() / FP8_MAX
    return (x / scale).to(FP8_DTYPE), scale


@triton.jit
def fp8_gemm_kernel(a_ptr, b_ptr, c_ptr):
    pass
"""


def test_ocp_fp8_constants_are_found_on_gfx942_only():
    # the dtype is found where it is bound (line 4), through the quantizing cast that uses it; 448 matches that
    # dtype, so PT207 (a bound meeting the caller's dtype) stays quiet
    assert findings(FP8_QUANT, "mi300x") == [("PT206", 5)]
    assert findings(FP8_QUANT, "mi350x") == []
    callers_dtype = FP8_QUANT.replace("def quantize(x):", "def quantize(x, dtype):").replace(
        ".to(FP8_DTYPE)", ".to(dtype)"
    )
    assert findings(callers_dtype, "mi300x") == [("PT207", 6)]


MX_CONSTANTS = """
import torch
import triton

F8E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max


@triton.jit
def quantize_kernel(x_ptr, y_ptr):
    pass
"""


def test_ocp_fp8_range_in_mx_or_nvfp4_modules_is_right_by_spec():
    for path in ("torchao/prototype/mx_formats/constants.py", "vllm/quantization/online/nvfp4.py"):
        assert analyze_source(MX_CONSTANTS, path, get_target("mi300x"), RULES) == []
    assert [f.rule for f in analyze_source(MX_CONSTANTS, "pkg/fp8.py", get_target("mi300x"), RULES)] == ["PT206"]


SELF_IMPORTS = """
from xformers.ops import memory_efficient_attention
import bitsandbytes.functional as F
"""


def test_a_library_importing_itself_is_not_a_dependency():
    found = analyze_source(SELF_IMPORTS, "xformers/ops/fmha/dispatch.py", get_target("mi300x"), RULES)
    assert [f.rule for f in found] == ["PT305"]  # xformers is the project here; bitsandbytes is not
    found = analyze_source(SELF_IMPORTS, "bitsandbytes/backends/utils.py", get_target("mi300x"), RULES)
    assert [f.rule for f in found] == ["PT302"]


FA3_PROBE = """
import torch


def fa3_available():
    has_cuda = torch.version.cuda is not None
    is_sm90 = has_cuda and (8, 0) <= torch.cuda.get_device_capability() <= (9, 0)
    return is_sm90 and flash3_extension is not None
"""


@pytest.mark.parametrize("target", TARGETS)
def test_platform_flag_variables_guard_like_the_test_itself(target):
    assert findings(FA3_PROBE, target) == []


CUTE_BACKEND = """
import cutlass
import cutlass.cute as cute
from cutlass import Int32, const_expr
from cutlass.cute.runtime import from_dlpack
from flash_attn import flash_attn_func
from flash_attn.bert_padding import pad_input
"""


def test_advice_only_libraries_are_reported_once_per_file_and_shimmed_ones_per_import():
    found = analyze_source(CUTE_BACKEND, "pkg/cute_kernels.py", get_target("mi350x"), RULES)
    cutlass = [f for f in found if f.rule == "PT310"]
    assert [f.line for f in cutlass] == [2] and cutlass[0].data["imports_in_file"] == 4
    assert [f.line for f in found if f.rule == "PT301"] == [6, 7]  # the shim rewrites each import


FNUZ_AWARE_LOADER = """
import torch
import triton


@triton.jit
def scaled_gemm_kernel(a_ptr, b_ptr, c_ptr):
    pass


def quantize_weight(weight, scale):
    return (weight / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


def process_weights_after_loading(layer):
    if is_fp8_fnuz():
        layer.weight, layer.scale = normalize_e4m3fn_to_e4m3fnuz(layer.weight, layer.scale)
"""


def test_fp8_modules_that_convert_to_fnuz_get_info_not_errors():
    found = analyze_source(FNUZ_AWARE_LOADER, "quant/fp8.py", get_target("mi300x"), RULES)
    assert [(f.rule, f.severity) for f in found] == [("PT206", "info")]
    plain = FNUZ_AWARE_LOADER.split("def process_weights_after_loading")[0]
    # (an OCP buffer allocated for checkpoint loading is not a finding: PT206 reports the fp8 data a quantizer makes)
    assert [(f.rule, f.severity) for f in analyze_source(plain, "quant/fp8.py", get_target("mi300x"), RULES)] == [
        ("PT206", "error")
    ]


ROCM_AWARE_BUILDER = """
class OpBuilder:
    def compute_capability_args(self):
        return [f"-gencode=arch=compute_{n},code=sm_{n}" for n in self.archs()]

    def nvcc_args(self):
        if self.is_rocm_pytorch():
            return ["-O3", "-ffast-math"]
        return ["-O3"] + self.compute_capability_args()

    def builder(self):
        from torch.utils.cpp_extension import CUDAExtension  # DeepSpeed imports it where it builds

        return CUDAExtension(name=self.name, sources=self.sources(), extra_compile_args={"nvcc": self.nvcc_args()})
"""


def test_nvcc_flags_in_a_rocm_aware_builder_are_info():
    found = analyze_source(ROCM_AWARE_BUILDER, "op_builder/builder.py", get_target("mi350x"), RULES)
    assert [(f.rule, f.severity) for f in found] == [("PT215", "info")]
