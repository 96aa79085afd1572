"""Visitors for environment rules (PT4xx) that reason over all of a module's variables at once."""

from __future__ import annotations

from typing import Any, Iterable

from porter.analyze.visitors import Hit, ModuleContext, register

_VISIBLE = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")
_AMD_KNOBS = ("HIP_FORCE_DEV_KERNARG", "TORCH_BLAS_PREFER_HIPBLASLT", "PYTORCH_TUNABLEOP_ENABLED",
              "NCCL_MIN_NCHANNELS", "GPU_MAX_HW_QUEUES", "HSA_", "AMD_", "ROCR_", "HIP_", "MIOPEN_")


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


@register("amd_runtime_knobs_absent")
def amd_runtime_knobs_absent(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    refs = _env_refs(ctx)
    sets = [r for r in refs if r.sets and not r.inline and r.name.startswith(("NCCL_", "CUDA_", "TORCH_NCCL_"))]
    if not sets or any(knob in ctx.text for knob in _AMD_KNOBS):
        return
    first = sets[0]
    yield Hit(first.node, {"env": first.name, "count": len(sets)})
