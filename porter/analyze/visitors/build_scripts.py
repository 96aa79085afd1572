"""Visitors for extension build scripts (op builders, setup helpers) that YAML cannot state."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import libcst as cst

from porter.analyze.guards import CUDA, ROCM, only_on_cuda, platform_of_test
from porter.analyze.index import iter_strings
from porter.analyze.visitors import CONDITION_PARTS, Hit, ModuleContext, register

# CUDA toolkit / driver libraries a ROCm machine does not have (ROCm's are hiprand, hipblas, rccl, amdhip64...)
CUDA_LINK_FLAG = re.compile(
    r"-l(curand|cublas|cublasLt|cusparse|cusparseLt|cufft|cusolver|cufile|cudnn|cudart|cudart_static|cuda|nvrtc"
    r"|nvToolsExt|nvJitLink|nvidia-ml|nccl)\Z"
)

_EXITS = (cst.Return, cst.Raise)


@register("cuda_library_linked")
def cuda_library_linked(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """`return ['-lcurand']` in an op builder that builds for ROCm too (deepspeed's fp_quantizer before #7027).

    Only modules that test the platform and do not turn ROCm away: a build script that never names ROCm is a
    CUDA-only extension (its port is a hipify job, not this flag), and one whose ROCm branch returns or raises
    (`if self.is_rocm_pytorch(): return False` in is_compatible) never links on ROCm.
    """
    if not _builds_for_both(ctx):
        return
    for node in ctx.nodes(cst.SimpleString):
        (text,) = iter_strings(node)
        match = CUDA_LINK_FLAG.fullmatch(text)
        if match is None or only_on_cuda(ctx, node) or _compile_flags(ctx, node):
            continue
        yield Hit(node, {"flag": text, "library": match.group(1)})


_COMPILE_KEYWORDS = frozenset({"extra_compile_args", "extra_cflags", "extra_cuda_cflags", "cflags", "cuda_cflags"})
_COMPILE_KEYS = frozenset({"cxx", "nvcc"})
_COMPILE_FUNCTION = re.compile(r"cxx|cflags|compile|nvcc", re.IGNORECASE)


def _compile_flags(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """The flag sits in compile arguments (`extra_compile_args=`, a "cxx"/"nvcc" entry, a `cxx_args` method), which
    the compiler runs with -c: a -l there links nothing (deepspeed's TorchCPUOpBuilder.cxx_args)."""
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value in _COMPILE_KEYWORDS:
            return True
        if isinstance(parent, cst.DictElement) and isinstance(parent.key, cst.SimpleString):
            if parent.key.evaluated_value in _COMPILE_KEYS:
                return True
        if isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            return isinstance(parent, cst.FunctionDef) and _COMPILE_FUNCTION.search(parent.name.value) is not None
        parent = ctx.parent(parent)
    return False


def _builds_for_both(ctx: ModuleContext) -> bool:
    tests = list(_platform_tests(ctx))
    if not tests:
        return False
    return not any(platform == ROCM and _refuses(statement) for statement, platform in tests)


def _platform_tests(ctx: ModuleContext) -> Iterator[tuple[cst.If, str]]:
    for statement in ctx.nodes(cst.If):
        platform = platform_of_test(ctx, statement.test)
        if platform in (CUDA, ROCM):
            yield statement, platform


def _refuses(statement: cst.If) -> bool:
    """The ROCm branch ends in a return or raise: the module turns ROCm away (`return False` from is_compatible,
    gptqmodel's `return "Machete kernel is not supported on ROCm."`) or sends it down its own path."""
    body: Sequence[cst.BaseStatement] = getattr(statement.body, "body", [])
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], _EXITS)


# ---- the sm_ entries of torch.cuda.get_arch_list(), reduced as if never empty ---------------------------------

_GET_ARCH_LIST = "torch.cuda.get_arch_list"
_REDUCERS = frozenset({"max", "min"})
_COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.SetComp)


@register("sm_arch_list_reduced")
def sm_arch_list_reduced(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """`supported_sm = [int(a.split('_')[1]) for a in torch.cuda.get_arch_list() if 'sm_' in a]` then
    `max(supported_sm)` (torch's cpp_extension arch-flag code, copied into JIT loaders such as exllamav2's ext.py
    before 7662b61): ROCm PyTorch lists gfx targets only, the list is empty and max() raises ValueError. A module
    that tests the list first (`if not supported_sm: continue`) or passes `default=` is left alone."""
    for kind in _COMPREHENSIONS:
        for comprehension in ctx.nodes(kind):
            arch_call = _sm_filtered_arch_list(ctx, comprehension)
            if arch_call is None or only_on_cuda(ctx, comprehension):
                continue
            reducer = _unguarded_reducer(ctx, comprehension, ctx.scope_names(arch_call))
            if reducer is not None:
                yield Hit(comprehension, {"reducer": reducer})


def _sm_filtered_arch_list(ctx: ModuleContext, comprehension: cst.BaseComp) -> cst.Call | None:
    """The `torch.cuda.get_arch_list()` call a comprehension iterates, when its filter keeps only `sm_` entries."""
    loop = comprehension.for_in
    iterated = loop.iter
    if not (isinstance(iterated, cst.Call) and _GET_ARCH_LIST in ctx.qualified_names(iterated.func)):
        return None
    return iterated if any("sm_" in ctx.code_for(condition.test) for condition in loop.ifs) else None


def _unguarded_reducer(ctx: ModuleContext, comprehension: cst.BaseComp, scope: tuple[str, ...]) -> str | None:
    """`max` / `min` applied to the comprehension, directly or through the one name it is assigned to, with no
    `default=` and no test of that name in the same function."""
    direct = _reducer_around(ctx, comprehension)
    if direct is not None:
        return direct
    assign = ctx.parent(comprehension)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
        return None
    bound = assign.targets[0].target
    if not isinstance(bound, cst.Name):
        return None
    uses = [n for n in ctx.nodes(cst.Name) if n.value == bound.value and ctx.scope_names(n) == scope and n is not bound]
    if any(_is_tested(ctx, use) for use in uses):
        return None
    return next((r for r in (_reducer_around(ctx, use) for use in uses) if r is not None), None)


def _reducer_around(ctx: ModuleContext, node: cst.CSTNode) -> str | None:
    """The name of the `max` / `min` call (without `default=`) that `node` is part of an argument of."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.Call) and isinstance(ancestor.func, cst.Name):
            if ancestor.func.value in _REDUCERS:
                keywords = {arg.keyword.value for arg in ancestor.args if arg.keyword is not None}
                return None if "default" in keywords else ancestor.func.value
        if isinstance(ancestor, cst.BaseStatement):
            return None
    return None


def _is_tested(ctx: ModuleContext, use: cst.Name) -> bool:
    """`if not sms`, `if sms:`, `sms and ...`, `len(sms)`, `sms == []`: the code checks for an empty list."""
    parent = ctx.parent(use)
    if isinstance(parent, CONDITION_PARTS):
        return True
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is use:
        return True
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "len"


# ---- a name bound only when CUDA_HOME is set, read after the test in a setup.py -------------------------------

_CUDA_HOME = "torch.utils.cpp_extension.CUDA_HOME"
_BINDING_PARENTS = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.AsName, cst.Param, cst.NamedExpr)


@register("bound_only_with_cuda_home")
def bound_only_with_cuda_home(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """`if CUDA_HOME is not None: _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)` and, further down
    the same scope, `if bare_metal_version >= Version("11.8"):` (mamba-ssm's setup.py before #359). A ROCm PyTorch
    finds no nvcc, so CUDA_HOME is None, the body never binds the name and the later read raises NameError: `pip
    install` stops on AMD. The finding is the test's whole statement (the toolkit check the port moves under a CUDA
    branch) and names the reads (`uses`). Silent where the name is bound anywhere else in the scope, or where every
    read sits under a CUDA_HOME test of its own."""
    for statement in ctx.nodes(cst.If):
        if statement.orelse is not None or not _asks_cuda_home_set(ctx, statement.test):
            continue
        scope = ctx.scope_names(statement.test)
        end = ctx.position(statement).end.line
        bound = _bound_names(ctx, statement.body)
        names = {n.value for n in bound} - {"_"}
        inside = {id(n) for n in bound}
        if not names or any(_bound_outside(ctx, name, scope, inside) for name in names):
            continue
        uses = [use for use in ctx.nodes(cst.Name) if use.value in names and ctx.scope_names(use) == scope]
        late = [use for use in uses if ctx.position(use).start.line > end and not _binds(ctx, use)]
        late = [use for use in late if not _under_cuda_home_test(ctx, use)]
        if late:
            lines = sorted({ctx.position(use).start.line for use in late})
            yield Hit(
                statement,
                {
                    "names": ", ".join(sorted({use.value for use in late})),
                    "use_lines": ", ".join(map(str, lines)),
                    "uses": [{"line": line} for line in lines],
                },
            )


def _asks_cuda_home_set(ctx: ModuleContext, test: cst.BaseExpression) -> bool:
    """`CUDA_HOME is not None` or a bare `CUDA_HOME` (torch.utils.cpp_extension's, None without nvcc)."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        none = comparison.comparator
        if not (isinstance(comparison.operator, cst.IsNot) and isinstance(none, cst.Name) and none.value == "None"):
            return False
        test = test.left
    return isinstance(test, (cst.Name, cst.Attribute)) and _CUDA_HOME in ctx.qualified_names(test)


def _bound_names(ctx: ModuleContext, body: cst.BaseSuite) -> list[cst.Name]:
    """Names the body binds (assignment and loop targets), outside functions and classes it defines."""
    found: list[cst.Name] = []

    class Binder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if _binds(ctx, node):
                found.append(node)

    body.visit(Binder())
    return found


def _binds(ctx: ModuleContext, name: cst.Name) -> bool:
    """The name is a target (of an assignment, a loop, an `as`, a parameter), through tuple / list unpacking."""
    child: cst.CSTNode = name
    parent = ctx.parent(name)
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
        child, parent = parent, ctx.parent(parent)
    if isinstance(parent, (cst.AssignTarget, cst.AsName, cst.Param)):
        return True
    return isinstance(parent, _BINDING_PARENTS) and getattr(parent, "target", None) is child


def _bound_outside(ctx: ModuleContext, name: str, scope: tuple[str, ...], inside: set[int]) -> bool:
    """The scope binds the name somewhere other than the test's body (`inside`: its bindings; a default before
    it, an else elsewhere), or imports it."""
    for node in ctx.nodes(cst.Name):
        if node.value == name and ctx.scope_names(node) == scope and id(node) not in inside and _binds(ctx, node):
            return True
    imported = any(bound.rsplit(".", 1)[-1] == name for _node, bound in ctx.index.imports)
    return imported or f"global {name}" in ctx.text


def _under_cuda_home_test(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """The read sits in the body of its own `if CUDA_HOME is not None:`."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and ancestor.body is child and _asks_cuda_home_set(ctx, ancestor.test):
            return True
        child = ancestor
    return False
