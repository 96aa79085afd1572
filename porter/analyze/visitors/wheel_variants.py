"""Visitors that read which build of a package a module imports on the GPU it finds."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import libcst as cst

from porter.analyze.guards import only_on_cuda, platform_of_test
from porter.analyze.index import dotted_name
from porter.analyze.visitors import Hit, ModuleContext, register

_IS_AVAILABLE = "torch.cuda.is_available"
# a name part that marks a CUDA build of a package: llama_cpp_cuda, foo_cuda12, bar_cu121
_CUDA_BUILD_PART = re.compile(r"cuda\d*|cu\d{2,3}")


@register("cuda_build_chosen_by_availability")
def cuda_build_chosen_by_availability(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """`if torch.cuda.is_available(): from llama_cpp_cuda import Llama / else: from llama_cpp import Llama`
    (text-generation-webui before #3225): the test is true on ROCm as well, so an AMD GPU gets the package's
    CUDA build, whose CUDA runtime libraries are not there. The finding is the availability test, the line a port
    changes (`and not torch.version.hip`)."""
    for statement in ctx.nodes(cst.If):
        if not isinstance(statement.orelse, cst.Else):
            continue
        availability = _availability_call(ctx, statement.test)
        if availability is None or platform_of_test(ctx, statement.test) is not None:
            continue  # a vendor test beside it (`and torch.version.cuda`) already keeps ROCm out
        variant = _cuda_variant(_imported_modules(statement.body), _imported_modules(statement.orelse.body))
        if variant is None or only_on_cuda(ctx, statement):
            continue
        cuda_build, generic = variant
        yield Hit(availability, {"cuda_build": cuda_build, "generic": generic})


def _availability_call(ctx: ModuleContext, test: cst.BaseExpression) -> cst.Call | None:
    """The `torch.cuda.is_available()` call that the test holds (alone or in an `and`)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _availability_call(ctx, test.left) or _availability_call(ctx, test.right)
    if isinstance(test, cst.Call) and _IS_AVAILABLE in ctx.qualified_names(test.func):
        return test
    return None


def _imported_modules(block: cst.BaseSuite) -> Iterator[str]:
    """Absolute module names imported by the block's own statements (not those of nested blocks)."""
    for line in getattr(block, "body", ()):
        for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                yield dotted_name(small.module) or ""
            elif isinstance(small, cst.Import):
                yield from (dotted_name(alias.name) or "" for alias in small.names)


def _cuda_variant(chosen: Iterable[str], otherwise: Iterable[str]) -> tuple[str, str] | None:
    """(CUDA build, generic package) when the branch imports a top-level package whose name is the else branch's
    plus a CUDA part (`llama_cpp_cuda` / `llama_cpp`): two builds of one project shipped as separate wheels.
    Subpackages (`pkg.cuda` / `pkg.cpu`) are left alone: a torch extension's "cuda" backend is often HIP-built."""
    generic = set(otherwise)
    for module in chosen:
        head, dot, rest = module.partition(".")
        stripped = "_".join(word for word in head.split("_") if not _CUDA_BUILD_PART.fullmatch(word))
        if stripped and stripped != head and stripped + dot + rest in generic:
            return module, stripped + dot + rest
    return None
