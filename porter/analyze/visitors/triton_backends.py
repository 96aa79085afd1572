"""Visitor for PT122: Triton's NVIDIA backend internals (cuBLASLt through Triton, the CUDA driver module) used
where AMD runs them.

A ROCm machine has no libcublas.so and no libcuda.so.1: `nvidia.cublas.CublasLt(workspace)` raises RuntimeError
there (its constructor dlopens libcublas.so; checked with Triton 3.9 on a machine without it), and the CUDA driver
utilities fail to load. A Triton wheel built with only the AMD backend has no `triton._C.libtriton.nvidia` at all
(ImportError). The usual guard, `torch.cuda.is_available()`, is True on ROCm builds of PyTorch too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import libcst as cst

from porter.analyze.triton.names import guard_of_test
from porter.analyze.visitors import Hit, ModuleContext, register
from porter.analyze.visitors.triton_common import in_try_handling, references, skip_for_target
from porter.records import Severity

_NVIDIA_BACKEND = ("triton._C.libtriton.nvidia", "triton.backends.nvidia", "triton.testing.cublas")
# Names that load an NVIDIA library when used: cuBLASLt (libcublas.so) and the CUDA driver module (libcuda.so.1).
_NEEDS_NVIDIA_LIBRARY = re.compile(r"\.cublas\b|^triton\.testing\.cublas$|^triton\.backends\.nvidia\.driver\b")
# What a use raises on AMD: RuntimeError (dlopen failed in the C++ binding), ImportError (no NVIDIA backend built),
# OSError (a driver library not found). A handler naming one of these, or a catch-all, runs the fallback instead.
_FAILURES = re.compile(r"\b(RuntimeError|ImportError|ModuleNotFoundError|OSError|Exception|BaseException)\b")
# An `if` test that reads as "NVIDIA GPU present" but is true on ROCm too (a torch device's type is "cuda" there):
# the line a port changes. A test that also names the platform (torch.version.cuda, is_hip(), the Triton backend)
# is a vendor test.
_CUDA_LOOKALIKE = re.compile(
    r"torch\.cuda\.(is_available|device_count)\b|\b(device|device_type|type)\s*[=!]=\s*[\"']cuda[\"']"
)
_VENDOR_TEST = re.compile(
    r"version\.(cuda|hip)|\bis_(cuda|hip|rocm|nvidia|amd)\b|\bbackend\b|IS_(CUDA|HIP|ROCM|NVIDIA)"
)


@register("triton_nvidia_backend")
def nvidia_backend(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT122: a reference to triton._C.libtriton.nvidia / triton.backends.nvidia / triton.testing.cublas that
    is not behind an NVIDIA test, nor in a `try` whose handler catches the failure on AMD."""
    inv = ctx.triton
    if inv is None:
        return
    for node, qualified in references(inv, _NVIDIA_BACKEND):
        needs_library = bool(_NEEDS_NVIDIA_LIBRARY.search(qualified))
        if skip_for_target(_vendor_guard(inv, node), target) or _failure_handled(inv, node, needs_library):
            continue
        if isinstance(inv.parent(node), cst.ExceptHandler):
            continue  # `except PTXASError:` only names an error that AMD never raises
        data: dict[str, Any] = {"name": ctx.code_for(node), "qualified": qualified}
        guard = _lookalike_guard(inv, node)
        if guard is not None:
            data["guard"] = {"line": inv.span(guard).line, "text": inv.code(guard.test)}
        if needs_library:
            data["library"] = "libcuda.so.1" if ".driver" in qualified else "libcublas.so"
        severity: Severity = "error" if needs_library else "warning"
        yield Hit(node, data, severity=severity, message=_message(data, needs_library))


def _message(data: dict, needs_library: bool) -> str:
    what = (
        "loads {library}, which {target.name} does not have (RuntimeError)"
        if needs_library
        else "is Triton's NVIDIA backend: absent from an AMD-only Triton build, and what it answers (compile options,"
        " minimum dot sizes, passes) is NVIDIA's"
    )
    guard = (
        " Its guard `{guard[text]}` (line {guard[line]}) is true on ROCm builds of PyTorch as well: test the backend"
        ' (`triton.runtime.driver.active.get_current_target().backend == "cuda"` or `torch.version.cuda`).'
        if "guard" in data
        else " Guard it with an NVIDIA test (`torch.version.cuda`, the active Triton backend) and give AMD a path:"
        " `triton._C.libtriton.amd.hipblas.HipblasLt` for cuBLASLt, or torch.matmul."
    )
    return "`{name}` " + what + "." + guard


def _lookalike_only(code: str) -> bool:
    return bool(_CUDA_LOOKALIKE.search(code)) and not _VENDOR_TEST.search(code)


def _vendor_guard(inv, node: cst.CSTNode) -> str | None:
    """'amd' / 'nvidia' from the innermost vendor test around the node, like the inventory's guard_at, except
    that a look-alike (`device.type == "cuda"`, true on ROCm) is not one (helion-pr2048's min_dot_size)."""
    child = node
    for ancestor in inv.ancestors(node):
        if isinstance(ancestor, (cst.If, cst.IfExp)) and child in (ancestor.body, ancestor.orelse):
            code = inv.code(ancestor.test)
            guard = None if _lookalike_only(code) else guard_of_test(code, child is ancestor.body)
            if guard:
                return guard
        child = ancestor
    return None


def _lookalike_guard(inv, node: cst.CSTNode) -> cst.If | None:
    """The innermost `if` whose body holds the node and whose test only looks like an NVIDIA check."""
    child = node
    for ancestor in inv.ancestors(node):
        if isinstance(ancestor, cst.If) and child is ancestor.body and _lookalike_only(inv.code(ancestor.test)):
            return ancestor
        child = ancestor
    return None


def _failure_handled(inv, node: cst.CSTNode, needs_library: bool) -> bool:
    """The use sits in the body of a `try` whose handler catches what it raises on AMD: the fallback runs there.
    A handler for other errors only (`except (ImportError, IOError, AttributeError)` around a CublasLt
    construction, tritonbench's fp8 GEMM) lets the RuntimeError through."""
    needed = "RuntimeError" if needs_library else "ImportError"
    return in_try_handling(inv, node, lambda handler: _catches(inv, handler, needed))


def _catches(inv, handler: cst.ExceptHandler, needed: str) -> bool:
    if handler.type is None:
        return True
    caught = set(_FAILURES.findall(inv.code(handler.type)))
    if caught & {"Exception", "BaseException"}:
        return True
    if needed == "RuntimeError":
        return "RuntimeError" in caught
    return bool(caught & {"ImportError", "ModuleNotFoundError", "RuntimeError", "OSError"})
