"""Visitors that read how code recognises a GPU error by its message text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import libcst as cst

from porter.analyze.index import iter_strings
from porter.analyze.visitors import Hit, ModuleContext, register

# CUDA's allocator and runtime wording; ROCm's PyTorch says "HIP out of memory" / "HIP error: out of memory"
_CUDA_OOM = re.compile(r"\bCUDA (?:error: )?out of memory", re.IGNORECASE)
# a function that also accepts one of these recognises the error on ROCm as well
_PORTABLE_OOM = re.compile(r"\bHIP (?:error: )?out of memory|^\s*out of memory|OutOfMemoryError", re.IGNORECASE)
_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
_SEQUENCES = (cst.List, cst.Tuple, cst.Set)


@register("cuda_oom_text_test")
def cuda_oom_text_test(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """`"CUDA out of memory" in str(e)` (or a list of such texts scanned with `in`) deciding how to handle an
    error, in a function that never accepts ROCm's wording or torch's OutOfMemoryError."""
    for comparison in ctx.nodes(cst.Comparison):
        if not all(isinstance(t.operator, (cst.In, cst.NotIn)) for t in comparison.comparisons):
            continue
        needles = [n for n in _needles(ctx, comparison) if _CUDA_OOM.search(_text(n))]
        if not needles or _only_reraises(ctx, comparison) or _accepts_rocm(ctx, comparison):
            continue
        yield Hit(needles[0], {"text": _text(needles[0])})  # one finding per test, at its first CUDA text


def _text(node: cst.CSTNode) -> str:
    return "".join(iter_strings(node))


def _needles(ctx: ModuleContext, comparison: cst.Comparison) -> Iterator[cst.CSTNode]:
    """The string literals tested for containment: the left operand itself, or the elements of the literal list
    that a comprehension or loop variable on the left runs over (`any(s in msg for s in [...])`)."""
    left = comparison.left
    if isinstance(left, _STRINGS):
        yield left
    elif isinstance(left, cst.Name):
        sequence = _loop_sequence(ctx, comparison, left.value)
        if sequence is not None:
            yield from (e.value for e in sequence.elements if isinstance(e.value, _STRINGS))


def _loop_sequence(ctx: ModuleContext, node: cst.CSTNode, name: str) -> cst.List | cst.Tuple | cst.Set | None:
    """The literal sequence that the comprehension or `for` binding `name` around `node` iterates over, directly
    or through a name assigned once in the same function (or module)."""
    for ancestor in ctx.ancestors(node):
        loops = _comprehension_loops(ancestor) if isinstance(ancestor, _COMPREHENSIONS) else []
        if isinstance(ancestor, cst.For):
            loops = [(ancestor.target, ancestor.iter)]
        for bound, iterated in loops:
            if isinstance(bound, cst.Name) and bound.value == name:
                return _resolve_sequence(ctx, iterated)
        if isinstance(ancestor, cst.FunctionDef):
            return None
    return None


_COMPREHENSIONS = (cst.GeneratorExp, cst.ListComp, cst.SetComp)


def _comprehension_loops(node: cst.GeneratorExp | cst.ListComp | cst.SetComp) -> list[tuple[Any, Any]]:
    loops = []
    comp_for: cst.CompFor | None = node.for_in
    while comp_for is not None:
        loops.append((comp_for.target, comp_for.iter))
        comp_for = comp_for.inner_for_in
    return loops


def _resolve_sequence(ctx: ModuleContext, node: cst.BaseExpression) -> cst.List | cst.Tuple | cst.Set | None:
    if isinstance(node, _SEQUENCES):
        return node
    if not isinstance(node, cst.Name):
        return None
    scope = ctx.scope_names(node)
    values = [
        assign.value
        for assign in ctx.nodes(cst.Assign)
        if len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and assign.targets[0].target.value == node.value
        and ctx.scope_names(assign.targets[0].target) in (scope, ())
    ]
    return values[-1] if values and isinstance(values[-1], _SEQUENCES) else None


def _only_reraises(ctx: ModuleContext, comparison: cst.Comparison) -> bool:
    """`if "CUDA out of memory" in str(e): raise RuntimeError("clearer message") from e`: on ROCm the error still
    propagates, only the message differs, so nothing is handled differently."""
    statement = next((a for a in ctx.ancestors(comparison) if isinstance(a, cst.BaseCompoundStatement)), None)
    if not isinstance(statement, cst.If) or not isinstance(statement.body, cst.IndentedBlock):
        return False
    body = statement.body.body
    return len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Raise)


def _accepts_rocm(ctx: ModuleContext, comparison: cst.Comparison) -> bool:
    """The enclosing function (or, at top level, the module) also names ROCm's wording, a bare "out of memory" or
    torch's OutOfMemoryError class, which catches the error on every backend."""
    scope = ctx.scope_names(comparison)

    def inside(node: cst.CSTNode) -> bool:
        return ctx.scope_names(node)[: len(scope)] == scope

    texts = (_text(node) for kind in _STRINGS for node in ctx.nodes(kind) if inside(node))
    if any(_PORTABLE_OOM.search(text) for text in texts):
        return True
    names = [(n.value, n) for n in ctx.nodes(cst.Name)] + [(a.attr.value, a) for a in ctx.nodes(cst.Attribute)]
    return any(name.endswith("OutOfMemoryError") and inside(node) for name, node in names)
