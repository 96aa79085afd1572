"""Compile the tutorial GEMM (sweep.py's kernel) for gfx942 and gfx950 on the CPU and record what
the AMD backend allocates: VGPRs, AGPRs, spills, LDS, occupancy, the MFMA it chose and the LDS reads
(kpack 1, and kpack 2 on gfx942 for BLOCK_K >= 32).

    /work/venv/bin/python bench/tune/amd_compile.py [--out bench/tune/data/amd_compile_records.json]

No AMD GPU is needed: Triton's HIP backend compiles to a code object on any machine (measured.md).
The records fit porter's AMD register estimate (reg_overhead, reg_per_tile_dword in specs.yaml).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIGS = [
    (256, 256, 64, 8, 2),
    (256, 256, 64, 8, 3),
    (256, 256, 32, 8, 3),
    (128, 128, 64, 4, 2),
    (128, 128, 64, 4, 3),
    (256, 128, 64, 8, 2),
    (256, 128, 64, 8, 3),
    (128, 256, 64, 4, 2),
    (128, 128, 128, 8, 2),
    (64, 64, 128, 4, 3),
    (16, 16, 256, 4, 3),
    (8, 16, 256, 4, 3),
]


def _kernel():
    spec = importlib.util.spec_from_file_location("sweep", HERE / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.matmul_kernel


def tutorial_signature(operand: str) -> dict[str, str]:
    """Triton's signature of sweep.py's kernel: A and B of `operand` (a Triton type name: bf16, fp16, fp8e4b8...), C
    bf16, unit strides along K (A), N (B) and N (C) as constexprs."""
    sig = {"a_ptr": f"*{operand}", "b_ptr": f"*{operand}", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32"}
    for matrix, inner in (("a", "k"), ("b", "n"), ("c", "n")):
        outer = {"a": "m", "b": "k", "c": "m"}[matrix]
        sig[f"stride_{matrix}{outer}"] = "i32"
        sig[f"stride_{matrix}{inner}"] = "constexpr"
    return sig | dict.fromkeys(("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"), "constexpr")


def compile_one(job):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    arch, (bm, bn, bk, warps, stages), nonkdim, kpack = job
    sig = tutorial_signature("bf16")
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 4, 5, 6, 8, 10)}  # sizes and strides % 16 == 0
    kernel = triton.compile(
        ASTSource(_kernel(), sig, consts, attrs),
        target=GPUTarget("hip", arch, 64),
        options={"num_warps": warps, "num_stages": stages, "matrix_instr_nonkdim": nonkdim, "kpack": kpack},
    )
    asm = kernel.asm["amdgcn"]

    def field(pattern):
        found = re.search(pattern, asm)
        return int(found.group(1)) if found else None

    return {
        "arch": arch,
        "config": [bm, bn, bk, warps, stages],
        "matrix_instr_nonkdim": nonkdim,
        "kpack": kpack,
        "vgpr": field(r"\.vgpr_count:\s+(\d+)"),
        "agpr": field(r"\.agpr_count:\s+(\d+)"),
        "spills": field(r"\.vgpr_spill_count:\s+(\d+)"),
        "occupancy": field(r"; Occupancy:\s+(\d+)"),
        "lds": kernel.metadata.shared,
        "mfma": sorted(set(re.findall(r"v_mfma_\w+", asm))),
        "lds_reads": dict(sorted(Counter(re.findall(r"\b(ds_read\w*)", asm)).items())),
        "setprio": asm.count("s_setprio"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "data" / "amd_compile_records.json")
    args = parser.parse_args()
    import triton

    jobs = [(arch, cfg, nk, 1) for arch in ("gfx950", "gfx942") for cfg in CONFIGS for nk in (16, 32)]
    # kpack 2 (gfx942 only: gfx950 sets it to 1): b128 LDS reads instead of read2 b64, fewer VGPRs
    jobs += [("gfx942", cfg, 16, 2) for cfg in CONFIGS if cfg[2] >= 32]
    with ProcessPoolExecutor(2) as pool:
        records = list(pool.map(compile_one, jobs))
    doc = {
        "triton": triton.__version__,
        "kernel": "bench/tune/sweep.py matmul_kernel, bf16, sizes % 16 == 0",
        "records": records,
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{len(records)} records -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
