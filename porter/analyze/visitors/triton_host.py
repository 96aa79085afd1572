"""Visitors over host-side Triton/PyTorch code: PT108 (smem opt-in), PT116 (SM count), PT119 (strides)."""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from porter.analyze.visitors import Hit, ModuleContext, register
from porter.analyze.visitors.triton_code import _nvidia_dsl_module
from porter.analyze.visitors.triton_common import is_int, skip_for_target, uses_triton
from porter.targets import all_targets

_SMEM_NAME = re.compile(r"smem|shared_?mem|shared_?memory|lds", re.IGNORECASE)


def _bound_name(inv, node: cst.CSTNode, parent: cst.CSTNode | None) -> str | None:
    """The name an expression is assigned / passed / defaulted to (x = v, f(x=v), def f(x=v));
    `parent` is the node holding it (the caller knows it: no parent-map lookup)."""
    if isinstance(parent, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
        for target in targets:
            if isinstance(target, cst.Name):
                return target.value
            if isinstance(target, cst.Attribute):
                return target.attr.value
            if (
                isinstance(target, cst.Subscript)
                and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)
            ):
                key = inv.fold(target.slice[0].slice.value).single
                return key if isinstance(key, str) else None
    if isinstance(parent, cst.Arg) and parent.keyword is not None:
        return parent.keyword.value
    if isinstance(parent, cst.Param) and parent.default is node:
        return parent.name.value
    if isinstance(parent, cst.DictElement) and parent.value is node:
        key = inv.fold(parent.key).single
        return key if isinstance(key, str) else None
    return None


def _literal_candidates(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The value itself, IfExp branches and `x or default` fallbacks: where a hard-coded number hides."""
    if isinstance(node, cst.IfExp):
        return _literal_candidates(node.body) + _literal_candidates(node.orelse)
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        return _literal_candidates(node.left) + _literal_candidates(node.right)
    return [node]


def _bound_values(ctx: ModuleContext) -> list[tuple[str, cst.BaseExpression]]:
    """(name, value expression) for every assignment, keyword argument, default and dict entry; worked out once
    per module (PT108 and PT116 both read them, and naming a subscript or dict key folds it through value flow)."""
    found = ctx.cache.get("triton_bound_values")
    if found is None:
        found = ctx.cache["triton_bound_values"] = list(_each_bound_value(ctx.triton))
    return found


def _each_bound_value(inv) -> Iterable[tuple[str, cst.BaseExpression]]:
    for node in inv.nodes_of(cst.Assign, cst.AnnAssign, cst.Arg, cst.Param, cst.DictElement):
        value = None
        if isinstance(node, (cst.Assign, cst.AnnAssign)):
            value = node.value
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            value = node.value
        elif isinstance(node, cst.Param):
            value = node.default
        elif isinstance(node, cst.DictElement):
            value = node.value
        if value is None:
            continue
        name = _bound_name(inv, value, node)
        if name:
            yield name, value


@register("triton_smem_optin")
def smem_optin(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT108: `shared_memory_per_block_optin` (no ROCm counterpart) and shared-memory budgets written
    as NVIDIA literals (232448 = 227 KiB) or above the target's LDS. A CuTe DSL module (sm90 kernels that never
    load on AMD) budgets NVIDIA shared memory by design: skipped."""
    inv = ctx.triton
    if inv is None or _nvidia_dsl_module(ctx):
        return
    for node in inv.nodes(cst.Attribute):
        if node.attr.value == "shared_memory_per_block_optin":
            if not skip_for_target(inv.guard_at(node), target) and not _probed(inv, node):
                yield Hit(
                    node,
                    {
                        "form": "attribute",
                        "attribute": "shared_memory_per_block_optin",
                        "value": None,
                        "limit": target.lds_bytes,
                    },
                )
    if not uses_triton(ctx):
        return  # a literal budget sizes Triton configs only where Triton is used
    nvidia_budgets = {t.lds_bytes for t in all_targets().values() if t.vendor == "nvidia"}
    for name, value in _bound_values(ctx):
        if not _SMEM_NAME.search(name) or _only_compared(inv, name):
            continue
        for candidate in _literal_candidates(value):
            folded = inv.fold(candidate)
            number = folded.single
            if not is_int(number) or skip_for_target(inv.guard_at(candidate), target):
                continue
            if number > target.lds_bytes or number in nvidia_budgets:
                yield Hit(
                    candidate,
                    {"form": "literal", "attribute": name, "value": number, "limit": target.lds_bytes},
                    severity="warning",
                    message=(
                        f"{name} = {number} bytes is an NVIDIA shared-memory budget; "
                        f"{target.name} has {target.lds_bytes} bytes of LDS per workgroup: read it "
                        f"from the driver (max_shared_mem) instead"
                    ),
                )


def _only_compared(inv, name: str) -> bool:
    """Every read of the constant is a comparison operand (`smem_limit < _LOW_SMEM_CUTOFF_BYTES`, sglang's fused-MoE
    config choice): a threshold tested against the queried limit, which picks the small-LDS path on AMD, not a
    budget that sizes anything (bench/real_code held_out: labelled false)."""
    reads = [
        n
        for n in inv.nodes(cst.Name)
        if n.value == name and not isinstance(inv.parent(n), (cst.AssignTarget, cst.Param))
    ]
    return bool(reads) and all(isinstance(inv.parent(n), (cst.Comparison, cst.ComparisonTarget)) for n in reads)


_CATCHES_ATTRIBUTE_ERROR = re.compile(r"\b(AttributeError|Exception|BaseException)\b")


def _probed(inv, node: cst.CSTNode) -> bool:
    """The read sits behind `hasattr(p, "shared_memory_per_block_optin")` or in a `try` whose handler catches
    AttributeError (also `except Exception:`, unsloth's autotune cache falling back to Triton's max_shared_mem)."""
    for ancestor in inv.ancestors(node):
        if isinstance(ancestor, (cst.If, cst.IfExp)) and "shared_memory_per_block_optin" in inv.code(ancestor.test):
            return True
        if isinstance(ancestor, cst.Try) and any(
            h.type is None or _CATCHES_ATTRIBUTE_ERROR.search(inv.code(h.type)) for h in ancestor.handlers
        ):
            return True
    return False


_SM_NAME = re.compile(
    r"^(num_?sms?|n_?sms?|sm_?count|num_?cus?|cu_?count|multi_?processor_?count|"
    r"num_?multiprocessors|num_?compute_?units)$",
    re.IGNORECASE,
)


@register("triton_sm_count")
def sm_count(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT116: an SM/CU count written as a literal (NUM_SMS = 132, num_sms=... or 132)."""
    inv = ctx.triton
    if inv is None or _nvidia_dsl_module(ctx):
        return
    seen: set[int] = set()
    for name, value in _bound_values(ctx):
        if not _SM_NAME.match(name):
            continue
        for candidate in _literal_candidates(value):
            if not isinstance(candidate, cst.Integer) or id(candidate) in seen:
                continue
            number = candidate.evaluated_value
            if number <= 1 or skip_for_target(inv.guard_at(candidate), target) or _fallback_for(inv, candidate, name):
                continue
            seen.add(id(candidate))
            yield Hit(candidate, {"name": name, "value": number, "units": target.units})


def _fallback_for(inv, node: cst.CSTNode, name: str) -> bool:
    """The literal is assigned only when the queried value is missing (`if sm_count is None: sm_count = 108`,
    flag_gems' device_info), or only when the query raises (`try: ... get_device_properties(d).multi_processor_count`
    `except ...: sm_count = 64`, chalk): ROCm's PyTorch reports multi_processor_count, so the fallback never runs there."""
    for ancestor in inv.ancestors(node):
        if isinstance(ancestor, cst.If):
            test = inv.code(ancestor.test).replace(" ", "")
            return test in (f"{name}isNone", f"not{name}")
        if isinstance(ancestor, cst.ExceptHandler):
            guarded = inv.parent(ancestor)
            return isinstance(guarded, cst.Try) and "multi_processor_count" in inv.code(guarded.body)
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False


_ALLOCATORS = {f"torch.{n}" for n in ("empty", "zeros", "ones", "randn", "rand", "full", "randint")}
_TORCH_BYTES = {
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float32": 4,
    "float": 4,
    "float64": 8,
    "double": 8,
    "int8": 1,
    "uint8": 1,
    "float8_e4m3fn": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2": 1,
    "float8_e5m2fnuz": 1,
    "int32": 4,
    "int64": 8,
}
_GEMM_CALLS = {"torch.matmul", "torch.mm", "torch.bmm", "torch.addmm", "torch.nn.functional.linear", "torch._scaled_mm"}


def _module_has_gemm(inv) -> bool:
    if any(k.gemm_like for k in inv.kernels):
        return True
    if any(isinstance(node.operator, cst.MatrixMultiply) for node in inv.nodes(cst.BinaryOperation)):
        return True
    return bool(inv.calls_to(_GEMM_CALLS))


@register("triton_gemm_strides_512b")
def gemm_strides(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT119 (advice): a literal-shaped 2-D+ allocation whose row is a multiple of the target's
    stride hot-spot size, in a module that runs GEMMs."""
    inv = ctx.triton
    hotspot = target.extra.get("gemm_stride_hotspot_bytes")
    if inv is None or not hotspot or not _module_has_gemm(inv):
        return
    for node in inv.calls_to(_ALLOCATORS):
        shape = _shape(inv, node)
        if shape is None or len(shape) < 2 or skip_for_target(inv.guard_at(node), target):
            continue
        dtype_arg = next((a for a in node.args if a.keyword and a.keyword.value == "dtype"), None)
        dtype = "float32"
        if dtype_arg is not None:
            names_ = {q.rsplit(".", 1)[1] for q in inv.qnames(dtype_arg.value) if q.startswith("torch.")}
            named = next((n for n in names_ if n in _TORCH_BYTES), None)
            if named is None:
                continue
            dtype = named
        row_bytes = shape[-1] * _TORCH_BYTES[dtype]
        if row_bytes % hotspot == 0:
            pad = max(1, hotspot // (2 * _TORCH_BYTES[dtype]))
            yield Hit(
                node,
                {
                    "shape": list(shape),
                    "dtype": dtype,
                    "row_bytes": row_bytes,
                    "hotspot": hotspot,
                    "suggested_ld": shape[-1] + pad,
                },
            )


def _shape(inv, call: cst.Call) -> tuple[int, ...] | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if inv.matches(call.func, {"torch.full", "torch.randint"}):
        return None  # their first positional arguments are not all dimensions
    if len(positional) == 1:
        value = inv.fold(positional[0].value).single
        dims = tuple(value) if isinstance(value, (list, tuple)) else None
    else:
        values = [inv.fold(a.value).single for a in positional]
        dims = tuple(values) if positional else None
    if dims is None or not all(is_int(d) and d > 0 for d in dims):
        return None
    return dims
