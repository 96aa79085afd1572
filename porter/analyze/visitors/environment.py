"""Visitors for environment rules (PT4xx) that reason over all of a module's variables at once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from porter.analyze.visitors import Hit, ModuleContext, register

_VISIBLE = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")
_AMD_KNOBS = (
    "HIP_FORCE_DEV_KERNARG",
    "TORCH_BLAS_PREFER_HIPBLASLT",
    "PYTORCH_TUNABLEOP_ENABLED",
    "NCCL_MIN_NCHANNELS",
    "GPU_MAX_HW_QUEUES",
    "HSA_",
    "AMD_",
    "ROCR_",
    "HIP_",
    "MIOPEN_",
)


def _env_refs(ctx: ModuleContext):
    from porter.analyze.engine import env_references

    return env_references(ctx)


@register("visible_devices_mix")
def visible_devices_mix(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    refs = [r for r in _env_refs(ctx) if r.sets and r.name in _VISIBLE]
    names = sorted({r.name for r in refs})
    if len(names) < 2:
        return
    for ref in refs:
        others = ", ".join(n for n in names if n != ref.name)
        yield Hit(ref.node, {"env": ref.name, "others": others, "value": ref.value})


_LAUNCHER_MARKERS = (
    "__main__",
    "torchrun",
    "torch.distributed.run",
    "subprocess",
    "mp.spawn",
    "multiprocessing",
    "os.execv",
    "deepspeed.launcher",
    "accelerate launch",
)


@register("amd_runtime_knobs_absent")
def amd_runtime_knobs_absent(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    refs = _env_refs(ctx)
    sets = [r for r in refs if r.sets and not r.inline and r.name.startswith(("NCCL_", "CUDA_", "TORCH_NCCL_"))]
    if not sets or any(knob in ctx.text for knob in _AMD_KNOBS):
        return
    if not any(marker in ctx.text for marker in _LAUNCHER_MARKERS):
        return  # a library tweaking one NCCL variable is not a launch profile
    first = sets[0]
    yield Hit(first.node, {"env": first.name, "count": len(sets)})


_ROCM_ARCH_KNOBS = ("PYTORCH_ROCM_ARCH", "GPU_ARCHS", "--offload-arch", "AMDGPU_TARGETS", "GPU_TARGETS")


@register("cuda_arch_list_set")
def cuda_arch_list_set(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """TORCH_CUDA_ARCH_LIST set (not merely read) in a module that never sets a ROCm arch list."""
    if any(knob in ctx.text for knob in _ROCM_ARCH_KNOBS):
        return  # the module builds for ROCm arches too (e.g. DeepSpeed's op builders)
    for ref in _env_refs(ctx):
        if ref.inline and "TORCH_CUDA_ARCH_LIST=" in ref.text:
            yield Hit(ref.node, {"env": "TORCH_CUDA_ARCH_LIST", "value": None})
        elif ref.sets and ref.name == "TORCH_CUDA_ARCH_LIST":
            yield Hit(ref.node, {"env": ref.name, "value": ref.value})
