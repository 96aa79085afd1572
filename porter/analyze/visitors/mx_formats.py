"""PT209: microscaling (MX/NV FP4, MXFP8) GEMMs that fail on GPUs without microscaling hardware.

What fails on gfx942 is PyTorch's scaled GEMM with block scales: `torch._scaled_mm` (and the
grouped and functional forms) with float8_e8m0fnu / float4_e2m1fn_x2 operands or scales, or a
BlockWise1x32 / 1x16 scaling recipe, raises "Block-wise scaling for Float8_e8m0fnu is only supported
on gfx950". Names are no evidence: `*mxfp4*` helpers dequantise, probe or select backends, and
Triton's tl.dot_scaled compiles for gfx942 (Triton 3.9 decomposes it to bf16 dots; measured).
So a finding needs a scaled-GEMM call in a function that handles MX data (or in a module whose
constants name the MX dtypes and that function uses them), outside the branches that exclude it: in a
`match recipe:` whose "mx" case builds e8m0 scales, the "tensor" and "row" cases' calls take fp32 scales.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from porter.analyze.visitors import Hit, ModuleContext, register

SCALED_GEMMS = {
    "torch._scaled_mm",
    "torch._scaled_grouped_mm",
    "torch.nn.functional.scaled_mm",
    "torch.nn.functional.scaled_grouped_mm",
    "torch.ops.aten._scaled_mm",
    "torch.ops.aten._scaled_mm.default",
    "torch.ops.aten._scaled_grouped_mm",
}
MX_DTYPES = {"torch.float8_e8m0fnu": "float8_e8m0fnu scales", "torch.float4_e2m1fn_x2": "float4_e2m1fn_x2 operands"}
MX_RECIPES = ("BlockWise1x32", "BlockWise1x16")


@register("mx_scaled_gemm")
def mx_scaled_gemm(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    calls = [c for c in ctx.nodes(cst.Call) if ctx.qualified_names(c.func) & SCALED_GEMMS]
    if not calls:
        return
    evidence = _mx_evidence(ctx)
    if not evidence:
        return
    for call in calls:
        scope = ctx.scope_names(call)
        what = _same_path(ctx, call, evidence.get(scope, ())) or _through_constant(ctx, call, evidence)
        if what:
            name = sorted(ctx.qualified_names(call.func))[0]
            yield Hit(call, {"what": f"{name} with {what}", "evidence": what})


def _mx_evidence(ctx: ModuleContext) -> dict:
    """scope (function names) -> [(node, what)] of the MX evidence it holds; the module-level constants
    bound to MX dtypes under the key ('<constants>', NAME), with what they name."""
    found: dict = {}
    for node in [*ctx.nodes(cst.Attribute), *ctx.nodes(cst.Name)]:
        tail = node.attr.value if isinstance(node, cst.Attribute) else node.value
        what = None
        if tail in ("float8_e8m0fnu", "float4_e2m1fn_x2"):
            what = next((MX_DTYPES[q] for q in ctx.qualified_names(node) if q in MX_DTYPES), None)
        elif tail in MX_RECIPES:
            what = f"{tail} scaling"
        if what is None:
            continue
        found.setdefault(ctx.scope_names(node), []).append((node, what))
        constant = _module_constant(ctx, node)
        if constant:
            found.setdefault(("<constants>", constant), []).append((node, what))
    return found


def _same_path(ctx: ModuleContext, call: cst.Call, evidence: Iterable[tuple[cst.CSTNode, str]]) -> str | None:
    """What the first piece of evidence says that can run on the call's path: not in another case of a
    `match` or the other arm of an `if` that holds the call."""
    call_path = _branch_path(ctx, call)
    for node, what in evidence:
        if not _exclusive(call_path, _branch_path(ctx, node)):
            return what
    return None


def _branch_path(ctx: ModuleContext, node: cst.CSTNode) -> dict[int, int]:
    """id(branching statement) -> id of the arm holding the node (a match case, an if's body or else)."""
    path: dict[int, int] = {}
    child = node
    for ancestor in ctx.ancestors(node):
        in_match_case = isinstance(ancestor, cst.Match) and isinstance(child, cst.MatchCase)
        if in_match_case or isinstance(ancestor, cst.If) and (child is ancestor.body or child is ancestor.orelse):
            path[id(ancestor)] = id(child)  # the test itself runs on every arm
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            break
        child = ancestor
    return path


def _exclusive(one: dict[int, int], other: dict[int, int]) -> bool:
    """Do the two nodes lie in different arms of one branching statement?"""
    return any(arm != other[branch] for branch, arm in one.items() if branch in other)


def _module_constant(ctx: ModuleContext, node: cst.CSTNode) -> str | None:
    """`_E8M0 = torch.float8_e8m0fnu` at module level: the name bound."""
    statement = ctx.statement_of(node)
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        statement = statement.body[0]
    if isinstance(statement, cst.Assign) and statement.value is node and not ctx.scope_names(node):
        target = statement.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    return None


def _through_constant(ctx: ModuleContext, call: cst.Call, evidence: dict) -> str | None:
    """The call's function uses a module constant bound to an MX dtype (`x.view(_E8M0)`) on the call's path."""
    constants = {key[1]: found[0][1] for key, found in evidence.items() if key[:1] == ("<constants>",)}
    scope = ctx.scope_names(call)
    if not constants or not scope:
        return None
    uses = [
        (n, constants[n.value]) for n in ctx.nodes(cst.Name) if n.value in constants and ctx.scope_names(n) == scope
    ]
    return _same_path(ctx, call, uses)
