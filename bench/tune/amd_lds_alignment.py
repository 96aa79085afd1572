"""How much LDS Triton's AMD backend allocates for a GEMM, by how the launch is specialized: compiles the tutorial
GEMM (sweep.py's kernel) for gfx942 and gfx950 on the CPU, once as Triton's launcher specializes it for aligned
tensors (16-byte pointers, sizes and row strides divisible by 16: the `tt.divisibility` attributes the JIT adds) and
once with only the pointers aligned (sizes and strides it cannot prove divisible), and prints `metadata.shared`.

    /work/venv/bin/python bench/tune/amd_lds_alignment.py [--out bench/tune/data/amd_lds_alignment.json]

Session 38: on gfx942 the aligned launch allocates (num_stages - 1) buffers of both tiles (fp16 128x256x64 at 3
stages: 96 KiB, over MI300X's 64 KiB), the unaligned one a single buffer of the larger tile (32 KiB): the figure
porter's PT107 had taken for every gfx942 launch. gfx950 allocates num_stages buffers either way.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from amd_compile import _kernel, tutorial_signature  # noqa: E402  (the tutorial kernel of sweep.py)

CONFIGS = [
    (128, 256, 64, 8, 2),
    (128, 256, 64, 8, 3),
    (128, 256, 64, 8, 4),
    (128, 128, 64, 4, 3),
    (128, 256, 128, 8, 3),
]
DTYPES = {"gfx942": ("fp16", "fp8e4b8"), "gfx950": ("fp16", "fp8e4nv")}
ALIGNED = (0, 1, 2, 3, 4, 5, 6, 8, 10)  # pointers, M, N, K and the row strides
POINTERS_ONLY = (0, 1, 2)


def compile_one(job: tuple) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    arch, dtype, (bm, bn, bk, warps, stages), aligned = job
    sig = tutorial_signature(dtype)
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (ALIGNED if aligned else POINTERS_ONLY)}
    kernel = triton.compile(
        ASTSource(_kernel(), sig, consts, attrs),
        target=GPUTarget("hip", arch, 64),
        options={"num_warps": warps, "num_stages": stages},
    )
    tiles = (bm * bk + bk * bn) * (1 if dtype.startswith("fp8") else 2)
    return {
        "arch": arch,
        "dtype": dtype,
        "config": [bm, bn, bk, warps, stages],
        "aligned": aligned,
        "lds": kernel.metadata.shared,
        "stage_buffers": round(kernel.metadata.shared / tiles, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "data" / "amd_lds_alignment.json")
    args = parser.parse_args()
    import triton

    jobs = [
        (arch, dt, cfg, al) for arch, dts in DTYPES.items() for dt in dts for cfg in CONFIGS for al in (True, False)
    ]
    with ProcessPoolExecutor(2) as pool:
        records = list(pool.map(compile_one, jobs))
    for r in records:
        what = "aligned" if r["aligned"] else "pointers only"
        print(
            f"{r['arch']} {r['dtype']:<8} {'x'.join(map(str, r['config'])):<16} {what:<14} LDS {r['lds'] // 1024:>4} KiB"
            f"  ({r['stage_buffers']} x both tiles)"
        )
    doc = {"triton": triton.__version__, "kernel": "bench/tune/sweep.py matmul_kernel", "records": records}
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{len(records)} records -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
