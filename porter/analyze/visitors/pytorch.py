"""Visitors for PyTorch rules (PT2xx) whose condition YAML cannot state."""

from __future__ import annotations

import operator
import re
from typing import Any, Iterable, Iterator

import libcst as cst

from porter.analyze.index import literal_value
from porter.analyze.visitors import Hit, ModuleContext, register

_COMPARE = {cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge, cst.LessThan: operator.lt,
            cst.LessThanEqual: operator.le, cst.Equal: operator.eq, cst.NotEqual: operator.ne}
_CUDA_GUARD = re.compile(r"version\.cuda|is_cuda|is_nvidia|not\s+\S*version\.hip|version\.hip\s+is\s+None")


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below `node` (small subtrees only: the engine's index covers whole modules)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in current.children:
            stack.append(child)


def _is_cuda_guarded(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """`is_cuda and cap >= (9, 0)`: the comparison only runs on NVIDIA, so it is ROCm-safe."""
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
            other = parent.left if parent.right is child else parent.right
            if _CUDA_GUARD.search(ctx.code_for(other)):
                return True
        child, parent = parent, ctx.parent(parent)
    if isinstance(parent, (cst.If, cst.While)) and child is parent.test:
        return False
    return False


# ---- PT201: torch.version.cuda used as a condition or parsed --------------------------------------

_VERSION_PARSERS = {"Version", "parse", "LooseVersion", "StrictVersion", "parse_version", "int", "float", "tuple", "map"}


@register("torch_version_cuda_use")
def torch_version_cuda_use(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for node in [*ctx.nodes(cst.Attribute), *ctx.nodes(cst.Name)]:
        tail = node.attr.value if isinstance(node, cst.Attribute) else node.value
        if tail != "cuda" or "torch.version.cuda" not in ctx.qualified_names(node):
            continue
        use = _version_use(ctx, node)
        if use:
            yield Hit(node, {"use": use, "qualified_name": "torch.version.cuda"})


def _version_use(ctx: ModuleContext, node: cst.CSTNode) -> str | None:
    parent = ctx.parent(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return "parsed"  # torch.version.cuda.split(".") raises on ROCm (None)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        func = call.func if isinstance(call, cst.Call) else None
        tail = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        return "parsed" if tail in _VERSION_PARSERS else None
    if isinstance(parent, cst.ComparisonTarget) or isinstance(parent, cst.Comparison):
        comparison = parent if isinstance(parent, cst.Comparison) else ctx.parent(parent)
        ops = [type(c.operator) for c in comparison.comparisons]
        if all(op in (cst.Is, cst.IsNot) for op in ops):
            return None  # `torch.version.cuda is not None`: an explicit platform test, right on ROCm
        return "compared"
    if isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
        return "tested"
    if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and getattr(parent, "test", None) is node:
        return "tested"
    return None


# ---- PT202: compute-capability comparisons -------------------------------------------------------

_CAPABILITY = "torch.cuda.get_device_capability"


@register("capability_comparison")
def capability_comparison(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    aliases = _capability_names(ctx)
    for comparison in ctx.nodes(cst.Comparison):
        left = comparison.left
        for item in comparison.comparisons:
            op = _COMPARE.get(type(item.operator))
            sides = ((left, item.comparator, op), (item.comparator, left, _flip(op)))
            for side, other, side_op in sides:
                part = _capability_part(ctx, side, aliases)
                value = literal_value(other)
                if part is None or side_op is None or value is None:
                    continue
                if _is_cuda_guarded(ctx, comparison):
                    break
                yield _capability_hit(comparison, part, side_op, item.operator, value, target)
                break
            left = item.comparator


def _flip(op):
    flips = {operator.gt: operator.lt, operator.lt: operator.gt, operator.ge: operator.le, operator.le: operator.ge}
    return flips.get(op, op)


def _capability_hit(node, part, op, op_node, value, target) -> Hit:
    capability = tuple(target.capability)
    actual = capability if part == "capability" else capability[0 if part == "major" else 1]
    try:
        outcome = op(actual, tuple(value) if isinstance(value, list) else value)
    except TypeError:
        outcome = None
    symbol = {operator.gt: ">", operator.ge: ">=", operator.lt: "<", operator.le: "<=", operator.eq: "==",
              operator.ne: "!="}[op]
    data = {"part": part, "compared_to": value, "op": symbol, "actual": actual,
            "outcome": {True: "true", False: "false", None: "undecidable"}[outcome]}
    return Hit(node, data)


def _capability_names(ctx: ModuleContext) -> dict[str, str]:
    """Names assigned from get_device_capability(): `cap = ...` -> capability, `major, minor = ...`."""
    names: dict[str, str] = {}
    for assign in ctx.nodes(cst.Assign):
        if _CAPABILITY not in ctx.qualified_names(assign.value) or not isinstance(assign.value, cst.Call):
            continue
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                names[target.target.value] = "capability"
            elif isinstance(target.target, cst.Tuple):
                for part, element in zip(("major", "minor"), target.target.elements):
                    if isinstance(element.value, cst.Name):
                        names[element.value.value] = part
    return names


def _capability_part(ctx: ModuleContext, node: cst.CSTNode, aliases: dict[str, str]) -> str | None:
    if isinstance(node, cst.Call) and _CAPABILITY in ctx.qualified_names(node):
        return "capability"
    if isinstance(node, cst.Name):
        return aliases.get(node.value)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = literal_value(node.slice[0].slice.value)
        if index in (0, 1) and _capability_part(ctx, node.value, aliases) == "capability":
            return "major" if index == 0 else "minor"
    if isinstance(node, cst.Attribute) and node.attr.value in ("major", "minor"):
        base = node.value
        if isinstance(base, cst.Call) and "torch.cuda.get_device_properties" in ctx.qualified_names(base):
            return node.attr.value
    return None


# ---- PT203: NVIDIA product names compared against the device name -------------------------------

_NVIDIA_MODEL = re.compile(r"(?i)^(nvidia\s*)?(tesla\s*)?(geforce\s*)?(g?[hb]\d00|h800|a100|a800|a10g?|a30|a40|v100|"
                           r"l40s?|l4|t4|p100|rtx\s*\w+|dgx.*)\b")
_TEXT_TESTS = {"startswith", "endswith", "find", "index", "count", "search", "match", "fullmatch"}


@register("nvidia_device_name_check")
def nvidia_device_name_check(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for node in ctx.nodes(cst.SimpleString):
        text = literal_value(node)
        if not isinstance(text, str) or not _NVIDIA_MODEL.match(text.strip()):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.Arg):
            parent = ctx.parent(parent)
        used_as = None
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
            used_as = "comparison"
        elif isinstance(parent, cst.Call) and isinstance(parent.func, cst.Attribute) and parent.func.attr.value in _TEXT_TESTS:
            used_as = "text test"
        elif isinstance(parent, cst.DictElement) and parent.key is node:
            used_as = "table key"
        if used_as:
            yield Hit(node, {"model": text, "used_as": used_as})


# ---- PT210: SDPA forced onto one backend -----------------------------------------------------------

@register("sdpa_single_backend")
def sdpa_single_backend(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for call in ctx.nodes(cst.Call):
        names = ctx.qualified_names(call)
        if "torch.backends.cuda.sdp_kernel" in names:
            yield Hit(call, {"api": "torch.backends.cuda.sdp_kernel", "backend": "the enable_* flags"})
        elif "torch.nn.attention.sdpa_kernel" in names and call.args:
            first = call.args[0].value
            if isinstance(first, (cst.List, cst.Tuple)) and len(first.elements) > 1:
                continue  # a priority list lets ROCm fall through to a backend it has
            yield Hit(call, {"api": "torch.nn.attention.sdpa_kernel", "backend": ctx.code_for(first)})


# ---- PT212: host syncs and collectives inside CUDA-graph capture -----------------------------------

_SYNC_METHODS = {"item", "cpu", "tolist", "numpy", "nonzero", "synchronize"}
_SYNC_CALLS = ("torch.cuda.synchronize", "torch.distributed.", "torch.nonzero")


@register("graph_capture_hazards")
def graph_capture_hazards(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for with_node in ctx.nodes(cst.With):
        if not any(_is_capture(ctx, item.item) for item in with_node.items):
            continue
        for node in descendants(with_node.body):
            if not isinstance(node, cst.Call):
                continue
            what = None
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in _SYNC_METHODS:
                what = f".{node.func.attr.value}()"
            else:
                for name in ctx.qualified_names(node):
                    if name.startswith(_SYNC_CALLS):
                        what = name
            if what:
                yield Hit(node, {"call": what})


def _is_capture(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    names = ctx.qualified_names(node) if isinstance(node, cst.Call) else set()
    return bool(names & {"torch.cuda.graph", "torch.cuda.graphs.graph"})


# ---- PT214: L2_cache_size used as "the" last-level cache -------------------------------------------

@register("l2_cache_size_use")
def l2_cache_size_use(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for node in ctx.nodes(cst.Attribute):
        if node.attr.value == "L2_cache_size":
            yield Hit(node, {"property": "L2_cache_size"})
