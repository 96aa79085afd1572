"""Visitors for extension build scripts (op builders, setup helpers) that YAML cannot state."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import libcst as cst

from porter.analyze.guards import CUDA, ROCM, only_on_cuda, platform_of_test
from porter.analyze.index import iter_strings
from porter.analyze.visitors import Hit, ModuleContext, register

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
