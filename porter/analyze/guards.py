"""Platform guards: is a node only ever executed on an NVIDIA (CUDA) build of PyTorch?

Real code that already supports ROCm keeps its NVIDIA-only pieces behind platform tests:

    if not self.is_rocm_pytorch(): flags += ["-lineinfo"]          # body: CUDA only
    op = cutlass.FwOp if torch.version.cuda else ck.FwOp             # IfExp body: CUDA only
    if torch.version.hip: ... else: cap >= (9, 0)                    # else of a ROCm test: CUDA only
    torch.version.cuda is None or torch.version.cuda.startswith(..)  # right of `or` after a ROCm test
    if is_hip(): return fallback()  (earlier in the block)           # what follows: CUDA only

Such a node is fine on ROCm, so most rules drop hits inside a CUDA-only branch (Rule option
`platform_guards`, on by default outside the triton category).

A test is classified from its code: CUDA-positive (`torch.version.cuda`, `is_cuda()`, `_is_cuda`,
`IS_CUDA`, `torch.version.hip is None`, `not is_rocm()`...) or ROCm-positive (the converse). A tensor's
`.is_cuda` property is true on ROCm too, so `x.is_cuda` is not a platform test.
"""

from __future__ import annotations

import re

import libcst as cst

from porter.analyze.visitors import ModuleContext

CUDA, ROCM = "cuda", "rocm"

# Names (bare, attribute tail, or called with no arguments) that state the platform.
_CUDA_NAME = re.compile(r"_?(is_cuda|IS_CUDA|is_nvidia|IS_NVIDIA|on_cuda|ON_CUDA|is_cuda_alike|use_cuda_build)\Z")
_ROCM_NAME = re.compile(
    r"_?(is_hip|IS_HIP|is_rocm|IS_ROCM|is_rocm_pytorch|on_rocm|ON_ROCM|use_rocm|USE_ROCM|is_amd|IS_AMD|IS_HIP_EXTENSION)\Z"
)
_PLATFORM_VALUES = {
    "torch.version.cuda": CUDA,
    "torch.utils.cpp_extension.CUDA_HOME": CUDA,
    "torch.version.hip": ROCM,
    "torch.utils.cpp_extension.ROCM_HOME": ROCM,
}
_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def platform_of_test(ctx: ModuleContext, test: cst.BaseExpression) -> str | None:
    """CUDA when `test` being true means a CUDA build, ROCM when it means a ROCm build, else None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _invert(platform_of_test(ctx, test.expression))
    if isinstance(test, cst.BooleanOperation):
        left, right = platform_of_test(ctx, test.left), platform_of_test(ctx, test.right)
        if isinstance(test.operator, cst.And):  # true only if both are: either side decides
            return left or right if CUDA not in (left, right) or ROCM not in (left, right) else None
        return left if left == right else None  # `or`: both sides must agree
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        return _platform_of_comparison(ctx, test)
    if isinstance(test, cst.Call) and not test.args:
        return _platform_of_name(ctx, test.func, called=True)
    if isinstance(test, (cst.Name, cst.Attribute)):
        return _platform_of_name(ctx, test, called=False)
    return None


def _invert(platform: str | None) -> str | None:
    return {CUDA: ROCM, ROCM: CUDA}.get(platform) if platform is not None else None


def _platform_of_name(ctx: ModuleContext, node: cst.BaseExpression, called: bool) -> str | None:
    names = ctx.qualified_names(node) if isinstance(node, (cst.Name, cst.Attribute)) else set()
    if "torch.version.cuda" in names:
        return CUDA
    if "torch.version.hip" in names:
        return ROCM
    if isinstance(node, cst.Attribute):
        if not called and not _is_flag_attribute(node):
            return None  # `tensor.is_cuda` is True on ROCm as well
        tail = node.attr.value
    elif isinstance(node, cst.Name):
        tail = node.value
    else:
        return None
    if _CUDA_NAME.match(tail):
        return CUDA
    if _ROCM_NAME.match(tail):
        return ROCM
    return _platform_flags(ctx).get(tail) if isinstance(node, cst.Name) else None


def _platform_flags(ctx: ModuleContext) -> dict[str, str]:
    """Names assigned exactly once from a platform test: `has_cuda = torch.version.cuda is not None`."""
    cached: dict[str, str] | None = ctx.cache.get("platform_flags")
    if cached is not None:
        return cached
    flags: dict[str, str] = {}
    counts: dict[str, int] = {}
    ctx.cache["platform_flags"] = flags  # set first: classifying a value may look names up
    for assign in ctx.nodes(cst.Assign):
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                counts[target.target.value] = counts.get(target.target.value, 0) + 1
    for assign in ctx.nodes(cst.Assign):
        names = [t.target.value for t in assign.targets if isinstance(t.target, cst.Name)]
        if len(names) == 1 and counts[names[0]] == 1 and _mentions_platform(assign.value):
            platform = platform_of_test(ctx, assign.value)
            if platform is not None:
                flags[names[0]] = platform
    return flags


def _mentions_platform(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.Attribute, cst.Call))


def _is_flag_attribute(node: cst.Attribute) -> bool:
    """`self.is_rocm` / `cls.IS_HIP` / `platform._is_hip` read a flag; `x.is_cuda` reads a tensor."""
    return _ROCM_NAME.match(node.attr.value) is not None or node.attr.value.isupper()


def _platform_of_comparison(ctx: ModuleContext, test: cst.Comparison) -> str | None:
    item = test.comparisons[0]
    sides = [test.left, item.comparator]
    if not any(isinstance(side, cst.Name) and side.value == "None" for side in sides):
        return None
    subject = sides[1] if isinstance(sides[0], cst.Name) and sides[0].value == "None" else sides[0]
    if not isinstance(subject, (cst.Name, cst.Attribute)):
        return None
    platform = next((_PLATFORM_VALUES[n] for n in ctx.qualified_names(subject) if n in _PLATFORM_VALUES), None)
    if platform is None:
        return None
    if isinstance(item.operator, (cst.Is, cst.Equal)):
        return _invert(platform)  # torch.version.hip is None -> CUDA
    if isinstance(item.operator, (cst.IsNot, cst.NotEqual)):
        return platform
    return None


def only_on_cuda(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """True when `node` sits in a branch that runs only on a CUDA build (see the module docstring)."""
    child, parent = node, ctx.parent(node)
    while parent is not None:
        if _guards_child(ctx, parent, child):
            return True
        child, parent = parent, ctx.parent(parent)
    return False


def _guards_child(ctx: ModuleContext, parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    if isinstance(parent, (cst.If, cst.IfExp, cst.While)):
        if child is parent.body:
            return platform_of_test(ctx, parent.test) == CUDA
        if child is getattr(parent, "orelse", None):
            return platform_of_test(ctx, parent.test) == ROCM
        return False
    if isinstance(parent, cst.Else):
        return False  # the If above decides, one level up
    if isinstance(parent, cst.BooleanOperation) and child is parent.right:
        wanted = CUDA if isinstance(parent.operator, cst.And) else ROCM
        return platform_of_test(ctx, parent.left) == wanted
    if isinstance(parent, (cst.IndentedBlock, cst.Module)):
        return _after_rocm_exit(ctx, parent.body, child)
    return False


def _after_rocm_exit(ctx: ModuleContext, body, child: cst.CSTNode) -> bool:
    """An earlier `if <ROCm test>: return/raise` in the same block leaves what follows to CUDA."""
    for statement in body:
        if statement is child:
            return False
        if isinstance(statement, cst.If) and statement.orelse is None and _ends_in_exit(statement.body):
            if platform_of_test(ctx, statement.test) == ROCM:
                return True
    return False


def _ends_in_exit(block: cst.BaseSuite) -> bool:
    body = getattr(block, "body", ())
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, _EXITS) for s in last.body)
    return isinstance(last, _EXITS)
