"""Visitors for environment rules (PT4xx) that reason over all of a module's variables at once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import libcst as cst

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


# HIP reads both at the same level (aliases): one set from the other's value keeps them equal. ROCR_VISIBLE_DEVICES
# and GPU_DEVICE_ORDINAL filter at other levels, where the same value selects different GPUs.
_HIP_ALIASES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")


@register("visible_devices_mix")
def visible_devices_mix(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    refs = [r for r in _env_refs(ctx) if r.sets and r.name in _VISIBLE and not _mirrors_alias(ctx, r)]
    refs = [r for r in refs if not _agrees_with_alias(ctx, r, refs)]
    names = sorted({r.name for r in refs})
    if len(names) < 2:
        return
    for ref in refs:
        others = ", ".join(n for n in names if n != ref.name)
        yield Hit(ref.node, {"env": ref.name, "others": others, "value": ref.value})


def _mirrors_alias(ctx: ModuleContext, ref: Any) -> bool:
    """`os.environ["CUDA_VISIBLE_DEVICES"] = hip_val` where hip_val was read from HIP_VISIBLE_DEVICES in the same
    function (or the value is that read itself): a platform layer keeping the two aliases equal, not a mix."""
    if ref.name not in _HIP_ALIASES:
        return False
    other = next(n for n in _HIP_ALIASES if n != ref.name)
    statement = ctx.index.statement_of.get(id(ref.node))
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    if not isinstance(small, cst.Assign) or not any(_subscripted_by(t.target, ref.node) for t in small.targets):
        return False  # not `os.environ[name] = value` (an env dict's key, a read)
    sources = [small.value]
    if isinstance(small.value, cst.Name):
        scope = ctx.index.scope_of.get(id(ref.node), ())
        sources = [
            assign.value
            for assign in ctx.index.of(cst.Assign)
            for t in assign.targets
            if isinstance(t.target, cst.Name)
            and t.target.value == small.value.value
            and ctx.index.scope_of.get(id(t.target), ()) == scope
        ]
    return bool(sources) and all(_reads_env(ctx, source, other) for source in sources)


def _agrees_with_alias(ctx: ModuleContext, ref: Any, refs: list[Any]) -> bool:
    """HIP_VISIBLE_DEVICES set to the same literal as CUDA_VISIBLE_DEVICES in the same scope, or from the same local
    name (vllm-omni's ROCm platform layer: both `= visible`), and neither set to anything else there (trl's CPU-only
    child: both ""): the aliases agree, so only the CUDA one is kept (a ROCR_VISIBLE_DEVICES beside them is still a
    mix)."""
    value = _set_value(ctx, ref)
    if ref.name != "HIP_VISIBLE_DEVICES" or value is None:
        return False
    scope = ctx.index.scope_of.get(id(ref.node), ())
    same_scope = [r for r in refs if r.name in _HIP_ALIASES and ctx.index.scope_of.get(id(r.node), ()) == scope]
    return any(r.name == "CUDA_VISIBLE_DEVICES" for r in same_scope) and all(
        _set_value(ctx, r) == value for r in same_scope
    )


def _set_value(ctx: ModuleContext, ref: Any) -> tuple[str, Any] | None:
    """What a setting assigns, comparably: ("literal", value), or ("name", local) for `os.environ[X] = local`;
    None when neither is visible."""
    if ref.value is not None:
        return ("literal", ref.value)
    statement = ctx.index.statement_of.get(id(ref.node))
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name):
        if any(_subscripted_by(t.target, ref.node) for t in small.targets):
            return ("name", small.value.value)
    return None


def _subscripted_by(target: cst.BaseExpression, key: cst.CSTNode) -> bool:
    return isinstance(target, cst.Subscript) and any(
        isinstance(e.slice, cst.Index) and e.slice.value is key for e in target.slice
    )


def _reads_env(ctx: ModuleContext, node: cst.BaseExpression, name: str) -> bool:
    """Is the expression the variable's value: os.environ[name], os.environ.get(name[, d]), os.getenv(name[, d]),
    possibly `... or None`? (Not a test such as `"0" if name in os.environ else "1"`.)"""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        node = node.left
    if isinstance(node, cst.Call) and node.args:
        tail = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", None)
        return tail in ("get", "getenv") and _is_string(node.args[0].value, name)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _is_string(node.slice[0].slice.value, name)
    return False


def _is_string(node: cst.BaseExpression, text: str) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == text


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


_AMD_VISIBILITY = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


@register("cuda_visibility_unmasked")
def cuda_visibility_unmasked(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """CUDA_VISIBLE_DEVICES removed from the environment (`os.environ.pop`, `del os.environ[...]`, `os.unsetenv`)
    to undo a launcher's GPU masking, in a module that never names the AMD masks, and not as the restore of a
    value the function saved."""
    if any(name in ctx.text for name in _AMD_VISIBILITY):
        return
    for node in _removals(ctx, "CUDA_VISIBLE_DEVICES"):
        if not _restores(ctx, node):
            yield Hit(node, {"env": "CUDA_VISIBLE_DEVICES"})


def _removals(ctx: ModuleContext, name: str) -> Iterator[cst.CSTNode]:
    """The statements or calls that delete the variable from os.environ."""
    for call in ctx.nodes(cst.Call):
        func = call.func
        tail = func.attr.value if isinstance(func, cst.Attribute) else None
        if not call.args or not _is_string(call.args[0].value, name):
            continue
        if tail == "pop" and "environ" in ctx.code_for(func.value) or tail == "unsetenv":
            yield call
    for statement in ctx.nodes(cst.Del):
        target = statement.target
        if isinstance(target, cst.Subscript) and "environ" in ctx.code_for(target.value):
            index = target.slice[0].slice if len(target.slice) == 1 else None
            if isinstance(index, cst.Index) and _is_string(index.value, name):
                yield statement


def _restores(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """`finally: if old is None: del os.environ[name]`: a temporary mask of the function's own undone (a saved value
    that was absent), not a launcher's mask removed."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.Finally):
            return True
        if isinstance(ancestor, cst.If) and "is None" in ctx.code_for(ancestor.test):
            return True
        if isinstance(ancestor, cst.FunctionDef):
            return False
    return False
