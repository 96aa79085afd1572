"""Visitor for PT316: xformers' CUDA-only attention operators (CUTLASS, FlashAttention-3) chosen explicitly.

On ROCm, xformers builds only its Composable Kernel operators: `cutlass.FwOp.OPERATOR` is None there
(`is_pt_cutlass_compatible()` returns False when `torch.version.hip` is set, xformers 0.0.35
ops/fmha/torch_attention_compat.py) and FlashAttention-3 is a Hopper kernel. memory_efficient_attention's own
dispatch skips them; code that picks one by hand (`cutlass.FwOp().apply(...)`, `op=cutlass.FwOp`) fails there.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from porter.analyze.guards import CUDA, ROCM, platform_of_test
from porter.analyze.triton.inventory import walk
from porter.analyze.visitors import Hit, ModuleContext, register
from porter.analyze.visitors.triton_common import references

_CUDA_ONLY_OPS = {
    "xformers.ops.fmha.cutlass.FwOp": "CUTLASS",
    "xformers.ops.fmha.cutlass.BwOp": "CUTLASS",
    "xformers.ops.fmha.flash3.FwOp": "FlashAttention-3",
    "xformers.ops.fmha.flash3.BwOp": "FlashAttention-3",
    "xformers.ops.fmha.MemoryEfficientAttentionCutlassOp": "CUTLASS",
    "xformers.ops.MemoryEfficientAttentionCutlassOp": "CUTLASS",
    "xformers.ops.fmha.MemoryEfficientAttentionCutlassFwdFlashBwOp": "CUTLASS",
    "xformers.ops.MemoryEfficientAttentionCutlassFwdFlashBwOp": "CUTLASS",
}
_SKIP_DECORATORS = ("skipif", "skipIf", "skipUnless")
_RUNS = ("apply", "apply_bmhk")  # the operator classes' entry points


@register("xformers_cuda_only_op")
def xformers_cuda_only_op(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT316: a CUTLASS / FlashAttention-3 xformers operator that the code runs itself (called, passed as
    `op=`, or bound to a local that is), outside functions that only NVIDIA runs. Dispatch priority lists,
    aliases and tuples kept for later are not uses."""
    inv = ctx.triton
    if inv is None:
        return
    for node, qualified in references(inv, tuple(_CUDA_ONLY_OPS)):
        op = _operator(qualified)
        if op is None or _nvidia_only_function(ctx, inv, node):
            continue
        runs = _applied(inv, node, qualified) if qualified != op else _chosen(inv, node)
        if runs:
            yield Hit(node, {"name": ctx.code_for(node), "kind": _CUDA_ONLY_OPS[op]})


def _operator(qualified: str) -> str | None:
    """The CUDA-only operator a qualified name is, or is an attribute of (`cutlass.FwOp.apply`)."""
    return next((op for op in _CUDA_ONLY_OPS if qualified == op or qualified.startswith(op + ".")), None)


def _applied(inv, node: cst.CSTNode, qualified: str) -> bool:
    """`FwOp.apply(...)` runs the operator; `FwOp.not_supported_reasons(...)` or `.OPERATOR` only probe it."""
    parent = inv.parent(node)
    return qualified.rsplit(".", 1)[1] in _RUNS and isinstance(parent, cst.Call) and parent.func is node


def _chosen(inv, node: cst.CSTNode) -> bool:
    """The operator is run here: called (`FwOp()`, `FwOp.apply(...)`), passed as `op=` (alone or in a pair),
    or assigned to a local name of a function that calls it or passes it as `op=`."""
    parent = inv.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return True
    if _op_argument(inv, node):
        return True
    function = inv.enclosing_function(node)
    if function is None or not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
        return False
    local = parent.targets[0].target
    if not isinstance(local, cst.Name):
        return False
    return any(_runs_name(n, local.value) for n in walk(function.body))


def _op_argument(inv, node: cst.CSTNode) -> bool:
    child = node
    for ancestor in inv.ancestors(node):
        if isinstance(ancestor, cst.Arg):
            return ancestor.keyword is not None and ancestor.keyword.value == "op" and ancestor.value is child
        if not isinstance(ancestor, (cst.Tuple, cst.Element)):
            return False
        child = ancestor
    return False


def _runs_name(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name:
        return True
    return (
        isinstance(node, cst.Arg)
        and node.keyword is not None
        and node.keyword.value == "op"
        and isinstance(node.value, cst.Name)
        and node.value.value == name
    )


def _nvidia_only_function(ctx: ModuleContext, inv, node: cst.CSTNode) -> bool:
    """A function registered or run only on NVIDIA by its decorator: tritonbench's
    `@register_benchmark(enabled=HAS_XFORMERS and not is_hip())`, `@pytest.mark.skipif(torch.version.hip ...)`."""
    for ancestor in inv.ancestors(node):
        if not isinstance(ancestor, cst.FunctionDef):
            continue
        for decorator in ancestor.decorators:
            call = decorator.decorator
            if isinstance(call, cst.Call) and _decorator_platform(ctx, call) == CUDA:
                return True
    return False


def _decorator_platform(ctx: ModuleContext, call: cst.Call) -> str | None:
    """CUDA when the decorator enables the function only on a CUDA build (`enabled=<CUDA test>`) or skips it
    on ROCm (`skipif(<ROCm test>)`, `skipUnless(<CUDA test>)`)."""
    name = call.func.attr.value if isinstance(call.func, cst.Attribute) else getattr(call.func, "value", "")
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "enabled":
            return platform_of_test(ctx, arg.value)
        if name in _SKIP_DECORATORS and keyword in (None, "condition"):
            platform = platform_of_test(ctx, arg.value)
            if name == "skipUnless":
                return platform
            return {ROCM: CUDA, CUDA: ROCM}.get(platform) if platform is not None else None
    return None
