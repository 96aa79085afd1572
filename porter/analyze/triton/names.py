"""Names and patterns the Triton analysis recognises (qualified names, block-size keys, dtypes)."""

from __future__ import annotations

import re

JIT = {"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"}
AUTOTUNE = {"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"}
HEURISTICS = {"triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics"}
CONFIG = {"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config"}
DOT = {"triton.language.dot", "triton.language.dot_scaled"}
NEXT_POW2 = {"triton.next_power_of_2", "triton.language.next_power_of_2"}
CDIV = {"triton.cdiv", "triton.language.cdiv"}
CONSTEXPR = {"triton.language.constexpr", "triton.language.core.constexpr"}
PRODUCT = {"itertools.product"}

# triton.Config(kwargs, num_warps, num_stages, num_ctas, maxnreg, pre_hook): positional order.
CONFIG_POSITIONAL = ("meta", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook")
CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook", "ir_override")

# Launch keywords Triton's launcher consumes as compile/launch options rather than kernel arguments
# (union of HIPOptions and CUDAOptions fields, Triton 3.9).
LAUNCH_OPTIONS = {
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "launch_pdl",
    "launch_cooperative_grid",
    "enable_fp_fusion",
    "waves_per_eu",
    "matrix_instr_nonkdim",
    "kpack",
    "schedule_hint",
    "ptx_version",
    "ptx_options",
    "sched4reg",
    "enable_reflect_ftz",
    "clc",
    "min_shared_mem",
    "ir_override",
    "debug",
    "sanitize_overflow",
    "instrumentation_mode",
    "allow_flush_denorm",
}
# Fields of CUDAOptions that HIPOptions lacks (Triton 3.9 third_party/{nvidia,amd}/backend/compiler.py):
# the HIP launcher raises "Keyword argument X was specified but unrecognised" for them.
NVIDIA_ONLY_OPTIONS = (
    "maxnreg",
    "launch_pdl",
    "ptx_version",
    "ptx_options",
    "sched4reg",
    "enable_reflect_ftz",
    "clc",
    "min_shared_mem",
    "ir_override",
)
# What a codemod strips or moves behind an NVIDIA branch: the options above, and num_ctas (HIP has it, but
# only 1 is accepted there; the codemods check the value).
NVIDIA_ONLY_KWARGS = frozenset({*NVIDIA_ONLY_OPTIONS, "num_ctas"})
# AMD compile knobs a triton.Config's kwargs dict may carry (HIPOptions). Which ones a target honours
# comes from porter.targets (target.triton["amd_options"]); this is the union, for the inventory.
AMD_KNOBS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack", "schedule_hint")

# Triton dtypes -> bytes per element.
DTYPE_BYTES = {
    "float8e4nv": 1,
    "float8e5": 1,
    "float8e4b8": 1,
    "float8e5b16": 1,
    "float8e4b15": 1,
    "int8": 1,
    "uint8": 1,
    "float16": 2,
    "bfloat16": 2,
    "int16": 2,
    "float32": 4,
    "int32": 4,
    "uint32": 4,
    "float64": 8,
    "int64": 8,
}
FLOAT_DTYPES = {
    "float8e4nv",
    "float8e5",
    "float8e4b8",
    "float8e5b16",
    "float8e4b15",
    "float16",
    "bfloat16",
    "float32",
    "float64",
}
ASSUMED_ELEM_BYTES = 2  # fp16/bf16 operands: the common case when a kernel names no dtype

_BLOCK_KEY = re.compile(
    r"^(?:(?:BLOCK|BLK|TILE)_?(?:SIZE_?)?([MNK])|B([MNK])|([MNK])_?(?:BLOCK|BLK|TILE)(?:_?SIZE)?|"
    r"(?:BLOCK|BLK|TILE)_?([MNK])_?SIZE)$",
    re.IGNORECASE,
)


def block_dim(key: str) -> str | None:
    """'BLOCK_SIZE_M' / 'BLOCK_M' / 'BM' / 'TILE_K' -> 'M'/'N'/'K'; None for other keys."""
    match = _BLOCK_KEY.match(key)
    if not match:
        return None
    return next(group for group in match.groups() if group).upper()


_AMD_GUARD = re.compile(
    r"version\.hip|\bis_hip\b|\bis_rocm\b|\bis_amd\b|['\"]hip['\"]|\brocm\b|\bgfx9|\bhip\b", re.IGNORECASE
)
# `cuda_capability_geq(10, 0)` (triton.language.target_info) is a constexpr False on the HIP backend: its
# body is compiled out on ROCm, like an `is_cuda()` branch.
_NV_GUARD = re.compile(
    r"version\.cuda|\bis_cuda\b|\bis_nvidia\b|['\"]cuda['\"]|\bnvidia\b|\bsm_?[89]\d|\bcuda_capability_geq\b",
    re.IGNORECASE,
)
_OTHER_DEVICE = re.compile(
    r"['\"](xpu|mtia|mps|cpu|npu|hpu|tpu|xla|meta)['\"]|\bis_(xpu|mps|npu|hpu|tpu)\b", re.IGNORECASE
)
_NEGATION = re.compile(r"^\s*not\s+|\bis\s+None\b|==\s*None|\bis\s+False\b")


def guard_of_test(code: str, branch: bool) -> str | None:
    """'amd' / 'nvidia' when a test like `is_hip()` / `torch.version.cuda` selects a vendor, 'other' for the
    body of a test for another device type (`device_type == "xpu"`); else None.

    `branch` is True for the if-body, False for the else-branch. `torch.cuda.is_available()` is true on
    ROCm too, so it is not a vendor test.
    """
    amd, nv = bool(_AMD_GUARD.search(code)), bool(_NV_GUARD.search(code))
    if amd == nv:
        # `device_type == "xpu"` / `"mtia"`: the branch is for another device, not this GPU
        other = _OTHER_DEVICE.search(code) and branch and not _NEGATION.search(code) and "!=" not in code
        return "other" if other else None
    vendor = "amd" if amd else "nvidia"
    if bool(_NEGATION.search(code)) != (not branch):
        vendor = "nvidia" if vendor == "amd" else "amd"
    return vendor
