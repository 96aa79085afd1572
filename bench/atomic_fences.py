"""Fences around Triton's default-sem atomics on AMD, counted in the compiled AMDGCN (CPU only, no GPU).

PT121's evidence: a tl.atomic_add without `sem=` takes acq_rel, which the AMD backend lowers with an L2 writeback
(`buffer_wbl2`) before and an invalidate (`buffer_inv`) after. This compiles a masked block atomic in an epilogue
and one inside a loop, for gfx942 and gfx950, at several block sizes, with the default sem and with "relaxed",
and prints the atomic instructions and the fences each kernel holds. Measured with Triton 3.9: one fence pair per
atomic statement whatever the block size, none with "relaxed".

    /work/venv/bin/python bench/atomic_fences.py
"""

from __future__ import annotations

import re

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def epilogue_atomic(x_ptr, out_ptr, n, BLOCK: tl.constexpr, RELAXED: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if RELAXED:
        tl.atomic_add(out_ptr + offs % 64, x, mask=mask, sem="relaxed")
    else:
        tl.atomic_add(out_ptr + offs % 64, x, mask=mask)


@triton.jit
def loop_atomic(x_ptr, out_ptr, n, BLOCK: tl.constexpr, RELAXED: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for start in range(0, n, BLOCK):
        mask = offs + start < n
        x = tl.load(x_ptr + start + offs, mask=mask)
        if RELAXED:
            tl.atomic_add(out_ptr + offs, x, mask=mask, sem="relaxed")
        else:
            tl.atomic_add(out_ptr + offs, x, mask=mask)


SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr", "RELAXED": "constexpr"}


def count(kernel, arch: str, block: int, relaxed: bool) -> tuple[int, int, int]:
    """(atomic instructions, L2 writebacks, L2 invalidates) in the kernel's AMDGCN."""
    source = ASTSource(kernel, SIGNATURE, {"BLOCK": block, "RELAXED": relaxed})
    asm = triton.compile(source, target=GPUTarget("hip", arch, 64), options={"num_warps": 4}).asm["amdgcn"]
    return (
        len(re.findall(r"\b(?:global|buffer)_atomic_\w+", asm)),
        len(re.findall(r"\bbuffer_wbl2\b|\bglobal_wb\b", asm)),
        len(re.findall(r"\bbuffer_inv\b|\bglobal_inv\b", asm)),
    )


def main() -> None:
    print(f"Triton {triton.__version__}; num_warps 4")
    print(f"{'kernel':16s} {'arch':7s} {'block':>5s} {'sem':8s} {'atomics':>7s} {'wbl2':>5s} {'inv':>4s}")
    for kernel in (epilogue_atomic, loop_atomic):
        for arch in ("gfx942", "gfx950"):
            for block in (256, 1024, 4096):
                for relaxed in (False, True):
                    atomics, writebacks, invalidates = count(kernel, arch, block, relaxed)
                    sem = "relaxed" if relaxed else "default"
                    name = kernel.fn.__name__
                    print(f"{name:16s} {arch:7s} {block:5d} {sem:8s} {atomics:7d} {writebacks:5d} {invalidates:4d}")


if __name__ == "__main__":
    main()
