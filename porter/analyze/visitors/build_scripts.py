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
