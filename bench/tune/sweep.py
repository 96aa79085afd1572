"""Exhaustive timing sweep of the plain Triton matmul (tutorial kernel) on one NVIDIA GPU.

Standalone: needs only torch and triton (the device machine has no porter). Compiles every
(dtype, specialisation class, config) first in parallel worker processes (they fill Triton's disk
cache through `JITFunction.warmup`), then times each config on each shape in the main process
with CUDA events, flushing L2 before every timed launch, and writes one JSON file:

    {"meta": {...}, "configs": [[BM, BN, BK, warps, stages, GROUP_M], ...],
     "compile": {dtype: {class: [[n_regs, n_spills, shared] | null, ...]}},
     "results": [{"name", "split", "dtype", "m", "n", "k", "ms": [float | null, ...],
                  "cublas_ms", "rel_err"}]}

`ms[i]` belongs to `configs[i]`; null means not timed (failed to compile or launch, e.g. shared
memory over the limit, or a small-tile config on a large-M shape).

`compile` records are [n_regs, n_spills, shared, mma] where mma is the matrix instruction in the PTX
("wgmma", "mma" for mma.sync, "fma" for none); sweeps before cal4 have the first three only.

dtypes: bf16, fp16, fp8 (e4m3, B column-major, C bf16) and fp32 (fp32 operands and C, tl.dot's default
input_precision "tf32"; cuBLAS timed with TF32 allowed).

Usage: python3 bench/tune/sweep.py --out DIR [--suite smoke|full|fresh|cal2|blind|cal3|blind2|cal4|blind3|blind4|blind5|blind6|blind7|blind8|blind9|cal5|blind10|cal6|blind11|blind12|blind13|blind14|blind15|blind16|cal7|cal8|blind17|blind18|blind19|blind20|blind21|blind22|blind23|blind24|blind25|blind26|blind27|blind28|blind29|blind30|blind31|blind32|blind33|blind34|blind35]
       [--shapes data/retime_short_shapes.json]
       [--dtypes bf16,fp8] [--budget-s 480] [--workers 16] [--idle-s 0.1 --idle-above-ms 0.3]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import itertools
import json
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # Grouped program order: GROUP_M tile-rows are walked column by column for L2 reuse.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# ---------------------------------------------------------------- candidate space and shapes

SMEM_LIMIT = 232448  # H100/H200 opt-in shared memory per block (Triton's limit)
REGS_PER_THREAD = 255
WARP = 32
TUTORIAL = [  # Triton's matmul tutorial, get_cuda_autotune_config(), its first 8 entries
    (128, 256, 64, 8, 3),
    (64, 256, 32, 4, 4),
    (128, 128, 32, 4, 4),
    (128, 64, 32, 4, 4),
    (64, 128, 32, 4, 4),
    (128, 32, 32, 4, 4),
    (64, 32, 32, 2, 5),
    (32, 64, 32, 2, 5),
]
SMALL_M_LIMIT = 128  # small-tile (BLOCK_M 32) configs are timed only for M <= this


def standard_configs(elem_bytes: int) -> list[tuple]:
    out = []
    for bm, bn, bk, w, s in itertools.product((64, 128, 256), (64, 128, 256), (32, 64, 128), (4, 8), (2, 3, 4, 5)):
        if s * (bm + bn) * bk * elem_bytes > SMEM_LIMIT:
            continue
        if bm * bn // (w * WARP) > REGS_PER_THREAD - 64:  # accumulator would spill
            continue
        out.append((bm, bn, bk, w, s))
    return out


def small_configs() -> list[tuple]:
    return [(32, bn, bk, 4, s) for bn in (32, 64, 128) for bk in (64, 128) for s in (3, 4, 5)]


def all_configs() -> list[tuple]:
    # union over dtypes (fp8's smaller elements admit more stages); G fixed at 8
    seen, out = set(), []
    for cfg in standard_configs(1) + small_configs() + TUTORIAL:
        if cfg not in seen:
            seen.add(cfg)
            out.append(cfg)
    return [c + (8,) for c in out]


SHAPES = [  # name, M, N, K, split (cal = calibration, val = held-out validation)
    ("decode_qkv8b", 1, 6144, 4096, "cal"),
    ("decode_down8b", 1, 4096, 14336, "val"),
    ("decode_up70b", 1, 28672, 8192, "cal"),
    ("m8_up8b", 8, 14336, 4096, "val"),
    ("m16_o8b", 16, 4096, 4096, "cal"),
    ("m32_up8b", 32, 14336, 4096, "val"),
    ("m64_qkv70b", 64, 10240, 8192, "cal"),
    ("m128_down8b", 128, 4096, 14336, "val"),
    ("m256_o70b", 256, 8192, 8192, "cal"),
    ("m512_up8b", 512, 14336, 4096, "val"),
    ("m1024_qkv8b", 1024, 6144, 4096, "cal"),
    ("m2048_down8b", 2048, 4096, 14336, "val"),
    ("m3000_o8b", 3000, 4096, 4096, "cal"),
    ("m4096_o8b", 4096, 4096, 4096, "val"),
    ("m8192_qkv70b", 8192, 10240, 8192, "cal"),
    ("m16384_up8b", 16384, 14336, 4096, "val"),
    ("rec_bot_65536", 65536, 256, 512, "cal"),
    ("rec_top_65536", 65536, 1024, 480, "val"),
    ("rec_top_32768", 32768, 1024, 1024, "cal"),
    ("rec_top_16384", 16384, 512, 1024, "val"),
    ("rec_odd_8192", 8192, 1000, 1000, "cal"),
    ("rec_odd_65536", 65536, 1000, 1000, "val"),
    ("rec_odd_2048", 2048, 1000, 1000, "val"),
    ("rec_wide_65536", 65536, 480, 1024, "cal"),
]
FRESH = [  # a second, later suite: shapes never used to fit or design the model (split "fresh")
    ("f_decode_5k", 1, 5120, 5120, "fresh"),
    ("f_decode_up14b", 1, 13824, 5120, "fresh"),
    ("f_m4_qkv", 4, 7168, 5120, "fresh"),
    ("f_m24_down", 24, 5120, 13824, "fresh"),
    ("f_m48_up", 48, 17408, 5120, "fresh"),
    ("f_m96_o", 96, 5120, 5120, "fresh"),
    ("f_m192_qkv", 192, 7168, 5120, "fresh"),
    ("f_m384_up", 384, 13824, 5120, "fresh"),
    ("f_m768_down", 768, 5120, 13824, "fresh"),
    ("f_m1536_qkv", 1536, 7168, 5120, "fresh"),
    ("f_m2500_o", 2500, 5120, 5120, "fresh"),
    ("f_m6144_up", 6144, 13824, 5120, "fresh"),
    ("f_m12288_o", 12288, 5120, 5120, "fresh"),
    ("f_rec_131072", 131072, 256, 256, "fresh"),
    ("f_rec_8192", 8192, 1536, 768, "fresh"),
    ("f_rec_24576", 24576, 768, 1536, "fresh"),
    ("f_rec_49152", 49152, 512, 2048, "fresh"),
    ("f_rec_odd_24576", 24576, 1000, 1000, "fresh"),
]
CAL2 = [  # a third suite, more calibration shapes (split "cal"): more M buckets, small N, small or
    # unaligned K and N, square GEMMs
    ("c2_m2_qkv", 2, 5120, 4096, "cal"),
    ("c2_m12_o", 12, 8192, 8192, "cal"),
    ("c2_m40_gate", 40, 11008, 4096, "cal"),
    ("c2_m80_down", 80, 4096, 11008, "cal"),
    ("c2_m160_qkv", 160, 12288, 4096, "cal"),
    ("c2_m320_o", 320, 4096, 4096, "cal"),
    ("c2_m640_up", 640, 11008, 4096, "cal"),
    ("c2_m1280_down", 1280, 4096, 11008, "cal"),
    ("c2_m1920_qkv", 1920, 9216, 3072, "cal"),
    ("c2_m5000_o", 5000, 3072, 3072, "cal"),
    ("c2_m10240_up", 10240, 8192, 3072, "cal"),
    ("c2_m32768_down", 32768, 2048, 8192, "cal"),
    ("c2_sq_2k", 2048, 2048, 2048, "cal"),
    ("c2_sq_8k", 8192, 8192, 8192, "cal"),
    ("c2_bigk", 512, 512, 65536, "cal"),
    ("c2_rec_n128", 32768, 128, 1024, "cal"),
    ("c2_rec_k128", 131072, 512, 128, "cal"),
    ("c2_rec_n64", 65536, 64, 2048, "cal"),
    ("c2_rec_4k", 4096, 2048, 2048, "cal"),
    ("c2_odd_m", 12345, 4096, 4096, "cal"),
    ("c2_odd_n", 4096, 4100, 4096, "cal"),
    ("c2_odd_k", 8192, 3072, 1030, "cal"),
    ("c2_odd_rec", 16384, 1000, 2000, "cal"),
    ("c2_odd_small", 512, 1000, 1000, "cal"),
]
BLIND = [  # taken with CAL2, kept aside (split "blind"): scored once, after the model is final
    ("b_decode_7k", 1, 7168, 7168, "blind"),
    ("b_m3_up", 3, 18944, 3584, "blind"),
    ("b_m20_qkv", 20, 4608, 3584, "blind"),
    ("b_m56_down", 56, 3584, 18944, "blind"),
    ("b_m112_o", 112, 7168, 7168, "blind"),
    ("b_m224_up", 224, 18944, 3584, "blind"),
    ("b_m448_qkv", 448, 9216, 7168, "blind"),
    ("b_m896_down", 896, 3584, 18944, "blind"),
    ("b_m1792_o", 1792, 3584, 3584, "blind"),
    ("b_m3584_up", 3584, 18944, 3584, "blind"),
    ("b_m7168_qkv", 7168, 4608, 3584, "blind"),
    ("b_m14336_o", 14336, 7168, 7168, "blind"),
    ("b_sq_3k", 3072, 3072, 3072, "blind"),
    ("b_rec_98304", 98304, 384, 768, "blind"),
    ("b_rec_12288", 12288, 2048, 512, "blind"),
    ("b_rec_40960", 40960, 256, 1536, "blind"),
    ("b_rec_n96", 65536, 96, 4096, "blind"),
    ("b_odd_k", 6144, 2048, 1500, "blind"),
    ("b_odd_n", 20000, 1500, 1024, "blind"),
    ("b_odd_all", 3333, 999, 777, "blind"),
]
CAL3 = [  # a fourth suite (split "cal"), taken at stop 10: more mid-M shapes with large N and K,
    # small M, and sizes off the 16-element grid along one or all dimensions
    ("c3_m6_o", 6, 8192, 8192, "cal"),
    ("c3_m28_down", 28, 4096, 14336, "cal"),
    ("c3_m72_up", 72, 14336, 4096, "cal"),
    ("c3_m200_up70b", 200, 28672, 8192, "cal"),
    ("c3_m300_qkv70b", 300, 10240, 8192, "cal"),
    ("c3_m384_down70b", 384, 8192, 28672, "cal"),
    ("c3_m600_o70b", 600, 8192, 8192, "cal"),
    ("c3_m700_gate", 700, 14336, 4096, "cal"),
    ("c3_m1000_o", 1000, 5120, 5120, "cal"),
    ("c3_m20000_up", 20000, 14336, 4096, "cal"),
    ("c3_rec_k256", 65536, 512, 256, "cal"),
    ("c3_rec_1536", 16384, 1536, 1536, "cal"),
    ("c3_rec_n64", 131072, 64, 512, "cal"),
    ("c3_odd_k_big", 4096, 4096, 1000, "cal"),
    ("c3_odd_n_mid", 2048, 1000, 4096, "cal"),
    ("c3_odd_all", 5000, 3000, 1500, "cal"),
    ("c3_odd_m", 777, 4096, 4096, "cal"),
    ("c3_odd_nk", 1024, 2500, 2500, "cal"),
    ("c3_odd_k_small", 16384, 512, 300, "cal"),
    ("c3_odd_rec", 32768, 479, 1023, "cal"),
]
BLIND2 = [  # taken with CAL3 and committed before any model change (split "blind2"): scored once,
    # after the model is final
    ("b2_decode_o70b", 1, 8192, 8192, "blind2"),
    ("b2_m2_down70b", 2, 8192, 28672, "blind2"),
    ("b2_m10_qkv", 10, 4096, 3584, "blind2"),
    ("b2_m36_up", 36, 14336, 3584, "blind2"),
    ("b2_m64_gate", 64, 13824, 5120, "blind2"),
    ("b2_m100_down", 100, 5120, 13824, "blind2"),
    ("b2_m176_o", 176, 6144, 6144, "blind2"),
    ("b2_m256_qkv", 256, 7168, 5120, "blind2"),
    ("b2_m512_down", 512, 5120, 27648, "blind2"),
    ("b2_m1000_up", 1000, 8192, 3072, "blind2"),
    ("b2_m2304_o", 2304, 4096, 4096, "blind2"),
    ("b2_m4000_qkv", 4000, 12288, 4096, "blind2"),
    ("b2_m8000_down", 8000, 3072, 8192, "blind2"),
    ("b2_m16000_o", 16000, 5120, 5120, "blind2"),
    ("b2_m32768_qkv", 32768, 2560, 2560, "blind2"),
    ("b2_m65536_up", 65536, 1024, 4096, "blind2"),
    ("b2_sq_1k", 1024, 1024, 1024, "blind2"),
    ("b2_sq_6k", 6144, 6144, 6144, "blind2"),
    ("b2_rec_bot", 131072, 128, 256, "blind2"),
    ("b2_rec_top", 49152, 768, 384, "blind2"),
    ("b2_rec_wide", 16384, 2048, 1024, "blind2"),
    ("b2_rec_dcn", 24576, 1280, 1280, "blind2"),
    ("b2_rec_n48", 65536, 48, 1024, "blind2"),
    ("b2_odd_m", 5555, 4096, 2048, "blind2"),
    ("b2_odd_n", 8192, 1234, 2048, "blind2"),
    ("b2_odd_k", 2048, 4096, 999, "blind2"),
    ("b2_odd_all", 9999, 1111, 555, "blind2"),
    ("b2_odd_vocab", 512, 50257, 1024, "blind2"),
    ("b2_odd_small", 7, 3000, 5000, "blind2"),
]
CAL4 = [  # a fifth suite (split "cal") for fp16 and fp32/TF32: the M buckets, rec MLPs, odd sizes
    ("c4_decode_qkv", 1, 6144, 4096, "cal"),
    ("c4_m8_o", 8, 4096, 4096, "cal"),
    ("c4_m32_up", 32, 14336, 4096, "cal"),
    ("c4_m64_down", 64, 4096, 14336, "cal"),
    ("c4_m128_qkv", 128, 10240, 8192, "cal"),
    ("c4_m256_up", 256, 11008, 4096, "cal"),
    ("c4_m512_o", 512, 8192, 8192, "cal"),
    ("c4_m1024_down", 1024, 4096, 11008, "cal"),
    ("c4_m2048_qkv", 2048, 6144, 4096, "cal"),
    ("c4_m4096_o", 4096, 4096, 4096, "cal"),
    ("c4_m8192_up", 8192, 14336, 4096, "cal"),
    ("c4_m16384_o", 16384, 5120, 5120, "cal"),
    ("c4_sq_2k", 2048, 2048, 2048, "cal"),
    ("c4_rec_bot", 65536, 256, 512, "cal"),
    ("c4_rec_top", 32768, 1024, 1024, "cal"),
    ("c4_rec_n128", 131072, 128, 256, "cal"),
    ("c4_rec_wide", 16384, 2048, 1024, "cal"),
    ("c4_odd_rec", 8192, 1000, 1000, "cal"),
    ("c4_odd_k", 4096, 4096, 1030, "cal"),
    ("c4_odd_m", 3000, 4096, 4096, "cal"),
]
BLIND3 = [  # taken with CAL4, committed before the fp16/fp32 model changes (split "blind3"): scored
    # once, after the model is final
    ("b3_decode_o70b", 1, 8192, 8192, "blind3"),
    ("b3_m4_up", 4, 13824, 5120, "blind3"),
    ("b3_m16_qkv", 16, 5120, 5120, "blind3"),
    ("b3_m48_down", 48, 5120, 13824, "blind3"),
    ("b3_m96_o", 96, 7168, 7168, "blind3"),
    ("b3_m192_up", 192, 14336, 4096, "blind3"),
    ("b3_m384_qkv", 384, 9216, 7168, "blind3"),
    ("b3_m768_down", 768, 4096, 14336, "blind3"),
    ("b3_m1536_o", 1536, 5120, 5120, "blind3"),
    ("b3_m3072_up", 3072, 11008, 4096, "blind3"),
    ("b3_m6144_qkv", 6144, 7168, 5120, "blind3"),
    ("b3_m12288_down", 12288, 4096, 11008, "blind3"),
    ("b3_m32768_o", 32768, 2048, 2048, "blind3"),
    ("b3_sq_6k", 6144, 6144, 6144, "blind3"),
    ("b3_rec_98304", 98304, 512, 384, "blind3"),
    ("b3_rec_24576", 24576, 1536, 768, "blind3"),
    ("b3_rec_n64", 65536, 64, 2048, "blind3"),
    ("b3_odd_n", 6144, 1234, 3072, "blind3"),
    ("b3_odd_all", 4444, 1999, 1333, "blind3"),
    ("b3_odd_vocab", 256, 32001, 2048, "blind3"),
]
BLIND4 = [  # fp32 only, taken after the fp32 model of blind3's scoring was changed (split "blind4"):
    # scored once, after the model is final
    ("b4_decode_qkv", 1, 5120, 5120, "blind4"),
    ("b4_m24_up", 24, 11008, 4096, "blind4"),
    ("b4_m160_o", 160, 6144, 6144, "blind4"),
    ("b4_m640_qkv", 640, 7168, 4096, "blind4"),
    ("b4_m2496_down", 2496, 4096, 11008, "blind4"),
    ("b4_m10000_o", 10000, 4096, 4096, "blind4"),
    ("b4_sq_3k", 3072, 3072, 3072, "blind4"),
    ("b4_rec_49152", 49152, 768, 512, "blind4"),
    ("b4_rec_n96", 65536, 96, 1024, "blind4"),
    ("b4_odd_n", 4096, 3000, 2048, "blind4"),
    ("b4_odd_k", 8192, 2048, 1500, "blind4"),
    ("b4_odd_nk", 2224, 1111, 3333, "blind4"),
    ("b4_odd_vocab", 1024, 50257, 768, "blind4"),
    ("b4_odd_rec", 32768, 479, 1023, "blind4"),
]
BLIND5 = [  # taken after the model of dev-tune2 was final (split "blind5"), scored once: each shape in
    # one dtype (the 6th field), none of them timed before; M on the 16-grid except where a shape is
    # meant to be irregular, so that each dtype compiles four specialisation classes
    ("b5_bf_decode_qkv", 1, 7168, 5120, "blind5", "bf16"),
    ("b5_bf_m16_up", 16, 27648, 5120, "blind5", "bf16"),
    ("b5_bf_m48_o", 48, 5120, 5120, "blind5", "bf16"),
    ("b5_bf_m144_down", 144, 5120, 27648, "blind5", "bf16"),
    ("b5_bf_m1200_up", 1200, 27648, 5120, "blind5", "bf16"),
    ("b5_bf_m3504_o", 3504, 5120, 5120, "blind5", "bf16"),
    ("b5_bf_m12288_qkv", 12288, 7168, 5120, "blind5", "bf16"),
    ("b5_bf_rec_bot", 65536, 128, 512, "blind5", "bf16"),
    ("b5_bf_rec_mid", 24576, 1024, 2048, "blind5", "bf16"),
    ("b5_bf_odd_vocab", 768, 100277, 1024, "blind5", "bf16"),
    ("b5_bf_odd_k", 3072, 3072, 2500, "blind5", "bf16"),
    ("b5_h_decode_up", 1, 9216, 4096, "blind5", "fp16"),
    ("b5_h_m32_qkv", 32, 7168, 5120, "blind5", "fp16"),
    ("b5_h_m80_up", 80, 27648, 5120, "blind5", "fp16"),
    ("b5_h_m320_down", 320, 5120, 13824, "blind5", "fp16"),
    ("b5_h_m2000_o", 2000, 4096, 4096, "blind5", "fp16"),
    ("b5_h_m6000_down", 6000, 5120, 13824, "blind5", "fp16"),
    ("b5_h_rec_top", 49152, 1024, 768, "blind5", "fp16"),
    ("b5_h_rec_n32", 65536, 32, 1024, "blind5", "fp16"),
    ("b5_h_odd_n", 2048, 7000, 4096, "blind5", "fp16"),
    ("b5_h_odd_all", 1555, 2777, 3001, "blind5", "fp16"),
    ("b5_f8_decode_up", 1, 28672, 4096, "blind5", "fp8"),
    ("b5_f8_m16_o", 16, 7168, 7168, "blind5", "fp8"),
    ("b5_f8_m64_qkv", 64, 6144, 4096, "blind5", "fp8"),
    ("b5_f8_m256_up", 256, 14336, 4096, "blind5", "fp8"),
    ("b5_f8_m896_down", 896, 4096, 14336, "blind5", "fp8"),
    ("b5_f8_m6000_qkv", 6000, 10240, 8192, "blind5", "fp8"),
    ("b5_f8_m40000_o", 40000, 4096, 4096, "blind5", "fp8"),
    ("b5_f8_rec_bot", 131072, 256, 128, "blind5", "fp8"),
    ("b5_f8_rec_mid", 16384, 2048, 2048, "blind5", "fp8"),
    ("b5_f8_odd_k", 6144, 4096, 1800, "blind5", "fp8"),
    ("b5_f8_odd_n", 1024, 12345, 4096, "blind5", "fp8"),
    ("b5_f32_decode", 1, 4096, 4096, "blind5", "fp32"),
    ("b5_f32_m16_up", 16, 14336, 4096, "blind5", "fp32"),
    ("b5_f32_m96_o", 96, 6144, 6144, "blind5", "fp32"),
    ("b5_f32_m384_qkv", 384, 6144, 4096, "blind5", "fp32"),
    ("b5_f32_m1536_down", 1536, 4096, 11008, "blind5", "fp32"),
    ("b5_f32_m6144_o", 6144, 4096, 4096, "blind5", "fp32"),
    ("b5_f32_rec_top", 32768, 512, 1024, "blind5", "fp32"),
    ("b5_f32_rec_n64", 131072, 64, 256, "blind5", "fp32"),
    ("b5_f32_odd_k", 4096, 4096, 1234, "blind5", "fp32"),
    ("b5_f32_odd_all", 3001, 2001, 1001, "blind5", "fp32"),
]
BLIND6 = [  # taken after the model of dev2-tune's round was begun, before any of its model changes (split
    # "blind6"), scored once after the model is final: each shape in one dtype, none timed before
    ("b6_bf_decode_down", 1, 4096, 12288, "blind6", "bf16"),
    ("b6_bf_m24_qkv", 24, 10240, 8192, "blind6", "bf16"),
    ("b6_bf_m112_up", 112, 22016, 4096, "blind6", "bf16"),
    ("b6_bf_m640_o", 640, 8192, 8192, "blind6", "bf16"),
    ("b6_bf_m2560_down", 2560, 4096, 14336, "blind6", "bf16"),
    ("b6_bf_m20480_qkv", 20480, 3072, 2048, "blind6", "bf16"),
    ("b6_bf_rec_top", 40960, 512, 1536, "blind6", "bf16"),
    ("b6_bf_rec_n96", 81920, 96, 640, "blind6", "bf16"),
    ("b6_bf_odd_n", 4096, 5555, 2048, "blind6", "bf16"),
    ("b6_bf_odd_k", 1792, 6144, 3333, "blind6", "bf16"),
    ("b6_bf_odd_all", 2222, 1777, 4444, "blind6", "bf16"),
    ("b6_h_decode_up", 1, 12288, 5120, "blind6", "fp16"),
    ("b6_h_m12_down", 12, 4096, 11008, "blind6", "fp16"),
    ("b6_h_m64_up", 64, 18944, 3584, "blind6", "fp16"),
    ("b6_h_m200_o", 200, 8192, 8192, "blind6", "fp16"),
    ("b6_h_m1008_qkv", 1008, 7168, 5120, "blind6", "fp16"),
    ("b6_h_m16384_o", 16384, 6144, 4096, "blind6", "fp16"),
    ("b6_h_rec_bot", 65536, 768, 256, "blind6", "fp16"),
    ("b6_h_rec_mid", 24576, 2048, 512, "blind6", "fp16"),
    ("b6_h_odd_all", 3000, 3000, 3000, "blind6", "fp16"),
    ("b6_h_odd_nk", 2048, 11000, 1500, "blind6", "fp16"),
    ("b6_h_odd_m", 4999, 4096, 4096, "blind6", "fp16"),
    ("b6_f8_decode_up", 1, 18432, 7168, "blind6", "fp8"),
    ("b6_f8_m8_o", 8, 7168, 2048, "blind6", "fp8"),
    ("b6_f8_m32_up", 32, 24576, 1536, "blind6", "fp8"),
    ("b6_f8_m128_down", 128, 7168, 16384, "blind6", "fp8"),
    ("b6_f8_m512_qkv", 512, 4608, 7168, "blind6", "fp8"),
    ("b6_f8_m2048_o", 2048, 7168, 4608, "blind6", "fp8"),
    ("b6_f8_m10000_up", 10000, 8192, 2048, "blind6", "fp8"),
    ("b6_f8_rec_bot", 262144, 128, 256, "blind6", "fp8"),
    ("b6_f8_rec_mid", 32768, 1024, 512, "blind6", "fp8"),
    ("b6_f8_odd_n", 4096, 3000, 4096, "blind6", "fp8"),
    ("b6_f8_odd_all", 5000, 999, 3001, "blind6", "fp8"),
    ("b6_f32_decode", 1, 11008, 4096, "blind6", "fp32"),
    ("b6_f32_m24_qkv", 24, 8192, 4096, "blind6", "fp32"),
    ("b6_f32_m192_down", 192, 4096, 11008, "blind6", "fp32"),
    ("b6_f32_m768_o", 768, 3072, 3072, "blind6", "fp32"),
    ("b6_f32_m2048_up", 2048, 8192, 2048, "blind6", "fp32"),
    ("b6_f32_m8192_down", 8192, 2048, 8192, "blind6", "fp32"),
    ("b6_f32_rec_mid", 65536, 256, 1024, "blind6", "fp32"),
    ("b6_f32_rec_n32", 49152, 32, 512, "blind6", "fp32"),
    ("b6_f32_odd_all", 2500, 2500, 2500, "blind6", "fp32"),
    ("b6_f32_odd_k", 8192, 1024, 777, "blind6", "fp32"),
    ("b6_f32_odd_n", 1024, 10000, 2048, "blind6", "fp32"),
]
BLIND7 = [  # taken at the start of dev2-tune2's round, before any of its model changes (split "blind7"),
    # scored once after the model is final: each shape in one dtype, none timed before; weighted to the
    # weak classes of blind6 (sizes off the 16-element grid, small M, tall-skinny)
    ("b7_bf_decode_oddk", 1, 8192, 3000, "blind7", "bf16"),
    ("b7_bf_m2_down", 2, 5120, 13824, "blind7", "bf16"),
    ("b7_bf_m48_up", 48, 13824, 5120, "blind7", "bf16"),
    ("b7_bf_odd_m", 3333, 4096, 4096, "blind7", "bf16"),
    ("b7_bf_odd_all", 1500, 2500, 3500, "blind7", "bf16"),
    ("b7_bf_odd_nk", 6000, 1000, 7000, "blind7", "bf16"),
    ("b7_bf_odd_n", 4096, 7777, 1024, "blind7", "bf16"),
    ("b7_bf_rec_n48", 98304, 48, 384, "blind7", "bf16"),
    ("b7_bf_rec_odd", 131072, 200, 1000, "blind7", "bf16"),
    ("b7_bf_odd_k", 12288, 12288, 1111, "blind7", "bf16"),
    ("b7_f8_decode_o", 1, 7168, 4096, "blind7", "fp8"),
    ("b7_f8_decode_up", 1, 24576, 6144, "blind7", "fp8"),
    ("b7_f8_m4_up", 4, 16384, 4096, "blind7", "fp8"),
    ("b7_f8_m16_down", 16, 4096, 14336, "blind7", "fp8"),
    ("b7_f8_m64_qkv", 64, 12288, 3072, "blind7", "fp8"),
    ("b7_f8_odd_all", 3000, 7000, 5000, "blind7", "fp8"),
    ("b7_f8_odd_n", 8000, 2222, 1024, "blind7", "fp8"),
    ("b7_f8_rec_n64", 196608, 64, 512, "blind7", "fp8"),
    ("b7_f8_odd_all2", 1234, 5678, 2468, "blind7", "fp8"),
    ("b7_f8_odd_k", 6144, 6144, 999, "blind7", "fp8"),
    ("b7_h_decode_oddk", 1, 6144, 5000, "blind7", "fp16"),
    ("b7_h_m40_oddn", 40, 9999, 4096, "blind7", "fp16"),
    ("b7_h_rec_n96", 100000, 96, 512, "blind7", "fp16"),
    ("b7_h_odd_mk", 5555, 2000, 3333, "blind7", "fp16"),
    ("b7_f32_m4_up", 4, 8192, 2048, "blind7", "fp32"),
    ("b7_f32_odd_nk", 2000, 3000, 1500, "blind7", "fp32"),
    ("b7_f32_rec_n128", 98304, 128, 384, "blind7", "fp32"),
    ("b7_f32_odd_mk", 7000, 512, 2222, "blind7", "fp32"),
]
BLIND8 = [  # taken by the lead after dev2-tune2's final model (829f285), before any later model change (split
    # "blind8"), scored once: the final model's only held-out figure. Realistic mix as blind5/6 (LLM projections
    # of models not swept before at M = 1..32768, recommendation MLPs, a quarter off the 16-element grid)
    ("b8_bf_decode_qkv", 1, 7168, 3584, "blind8", "bf16"),
    ("b8_bf_m8_up", 8, 27648, 5120, "blind8", "bf16"),
    ("b8_bf_m96_down", 96, 5120, 27648, "blind8", "bf16"),
    ("b8_bf_m384_o", 384, 6144, 6144, "blind8", "bf16"),
    ("b8_bf_m3072_up", 3072, 17408, 5120, "blind8", "bf16"),
    ("b8_bf_m32768_o", 32768, 2304, 2304, "blind8", "bf16"),
    ("b8_bf_rec_mid", 24576, 1280, 768, "blind8", "bf16"),
    ("b8_bf_rec_n160", 65536, 160, 1152, "blind8", "bf16"),
    ("b8_bf_odd_n", 2048, 3500, 3072, "blind8", "bf16"),
    ("b8_bf_odd_k", 4096, 2048, 1800, "blind8", "bf16"),
    ("b8_h_decode_o", 1, 3072, 3072, "blind8", "fp16"),
    ("b8_h_m16_up", 16, 11008, 2560, "blind8", "fp16"),
    ("b8_h_m256_qkv", 256, 7680, 2560, "blind8", "fp16"),
    ("b8_h_m1536_down", 1536, 3584, 18944, "blind8", "fp16"),
    ("b8_h_m6144_o", 6144, 5120, 5120, "blind8", "fp16"),
    ("b8_h_m20000_up", 20000, 8192, 1024, "blind8", "fp16"),
    ("b8_h_rec_top", 32768, 384, 2048, "blind8", "fp16"),
    ("b8_h_rec_n80", 131072, 80, 320, "blind8", "fp16"),
    ("b8_h_odd_m", 1000, 4096, 2048, "blind8", "fp16"),
    ("b8_h_odd_all", 3100, 2100, 1300, "blind8", "fp16"),
    ("b8_f8_decode_down", 1, 5120, 17408, "blind8", "fp8"),
    ("b8_f8_m8_qkv", 8, 9216, 7168, "blind8", "fp8"),
    ("b8_f8_m48_o", 48, 7168, 7168, "blind8", "fp8"),
    ("b8_f8_m256_up", 256, 18432, 7168, "blind8", "fp8"),
    ("b8_f8_m1024_down", 1024, 7168, 9216, "blind8", "fp8"),
    ("b8_f8_m4096_qkv", 4096, 3072, 5120, "blind8", "fp8"),
    ("b8_f8_m16384_up", 16384, 12288, 4096, "blind8", "fp8"),
    ("b8_f8_rec_mid", 65536, 768, 1024, "blind8", "fp8"),
    ("b8_f8_odd_n", 2048, 6000, 4096, "blind8", "fp8"),
    ("b8_f8_odd_k", 8192, 4096, 2500, "blind8", "fp8"),
    ("b8_f32_decode_up", 1, 13824, 3072, "blind8", "fp32"),
    ("b8_f32_m16_o", 16, 3584, 3584, "blind8", "fp32"),
    ("b8_f32_m128_qkv", 128, 6144, 4096, "blind8", "fp32"),
    ("b8_f32_m1024_up", 1024, 11008, 4096, "blind8", "fp32"),
    ("b8_f32_m4096_down", 4096, 4096, 11008, "blind8", "fp32"),
    ("b8_f32_m16384_o", 16384, 4096, 4096, "blind8", "fp32"),
    ("b8_f32_rec_bot", 131072, 256, 512, "blind8", "fp32"),
    ("b8_f32_rec_n64", 65536, 64, 1024, "blind8", "fp32"),
    ("b8_f32_odd_n", 4096, 1500, 4096, "blind8", "fp32"),
    ("b8_f32_odd_mk", 3000, 2048, 1700, "blind8", "fp32"),
]
BLIND9 = [  # taken at the start of the 2026-12-04 second round, before any of its model changes (split
    # "blind9"), scored once after the model is final. Model dims not swept before (Gemma-2-27B, Yi-34B, InternLM2-20B,
    # Phi-3-medium, Command-R), M = 1..131072, recommendation MLPs, about a quarter off the 16-element grid
    ("b9_bf_decode_up", 1, 36864, 4608, "blind9", "bf16"),
    ("b9_bf_m4_down", 4, 4608, 36864, "blind9", "bf16"),
    ("b9_bf_m24_qkv", 24, 9216, 6144, "blind9", "bf16"),
    ("b9_bf_m64_down", 64, 6144, 16384, "blind9", "bf16"),
    ("b9_bf_m160_up", 160, 20480, 7168, "blind9", "bf16"),
    ("b9_bf_m768_o", 768, 4608, 4096, "blind9", "bf16"),
    ("b9_bf_m2048_down", 2048, 5120, 17920, "blind9", "bf16"),
    ("b9_bf_m8192_up", 8192, 22528, 8192, "blind9", "bf16"),
    ("b9_bf_m16384_qkv", 16384, 9216, 6144, "blind9", "bf16"),
    ("b9_bf_rec_mid", 49152, 1024, 256, "blind9", "bf16"),
    ("b9_bf_rec_n112", 65536, 112, 2048, "blind9", "bf16"),
    ("b9_bf_odd_m", 1777, 6144, 4096, "blind9", "bf16"),
    ("b9_bf_odd_nk", 4096, 2900, 1900, "blind9", "bf16"),
    ("b9_bf_odd_k", 12000, 4096, 3000, "blind9", "bf16"),
    ("b9_h_decode_o", 1, 4608, 4096, "blind9", "fp16"),
    ("b9_h_m12_up", 12, 17920, 5120, "blind9", "fp16"),
    ("b9_h_m128_down", 128, 5120, 17920, "blind9", "fp16"),
    ("b9_h_m1024_qkv", 1024, 9216, 6144, "blind9", "fp16"),
    ("b9_h_m4096_up", 4096, 16384, 6144, "blind9", "fp16"),
    ("b9_h_m32768_o", 32768, 3072, 3072, "blind9", "fp16"),
    ("b9_h_rec_n192", 98304, 192, 768, "blind9", "fp16"),
    ("b9_h_rec_mid", 32768, 1536, 512, "blind9", "fp16"),
    ("b9_h_odd_n", 3072, 5000, 2048, "blind9", "fp16"),
    ("b9_h_odd_all", 2345, 3456, 4567, "blind9", "fp16"),
    ("b9_f8_decode_up", 1, 20480, 7168, "blind9", "fp8"),
    ("b9_f8_m2_o", 2, 6144, 6144, "blind9", "fp8"),
    ("b9_f8_m32_down", 32, 7168, 20480, "blind9", "fp8"),
    ("b9_f8_m96_qkv", 96, 9216, 6144, "blind9", "fp8"),
    ("b9_f8_m512_up", 512, 24576, 6144, "blind9", "fp8"),
    ("b9_f8_m2048_o", 2048, 4608, 4096, "blind9", "fp8"),
    ("b9_f8_m8192_down", 8192, 6144, 16384, "blind9", "fp8"),
    ("b9_f8_rec", 131072, 512, 512, "blind9", "fp8"),
    ("b9_f8_odd_m", 5000, 8192, 4096, "blind9", "fp8"),
    ("b9_f8_odd_nk", 4096, 3300, 2700, "blind9", "fp8"),
    ("b9_f32_decode_qkv", 1, 9216, 6144, "blind9", "fp32"),
    ("b9_f32_m8_up", 8, 16384, 6144, "blind9", "fp32"),
    ("b9_f32_m64_down", 64, 4608, 36864, "blind9", "fp32"),
    ("b9_f32_m512_qkv", 512, 9216, 6144, "blind9", "fp32"),
    ("b9_f32_m2048_up", 2048, 17920, 5120, "blind9", "fp32"),
    ("b9_f32_m8192_o", 8192, 6144, 6144, "blind9", "fp32"),
    ("b9_f32_rec_n32", 98304, 32, 256, "blind9", "fp32"),
    ("b9_f32_rec_mid", 32768, 1024, 768, "blind9", "fp32"),
    ("b9_f32_odd_n", 2048, 4500, 2048, "blind9", "fp32"),
    ("b9_f32_odd_mk", 6000, 3072, 2300, "blind9", "fp32"),
]
CAL5 = [  # calibration, taken after dev3-tune3's mma.sync term to test it (helper's measurement list): the
    # 1- vs 2-tiles-per-SM serialisation at M = 96, the M = 1 / 16 per-step floor, 128x256 BK 32 vs 64 by waves,
    # and sizes off the 16-element grid whose register counts sit near 128
    ("c5_bf_m96_down", 96, 5120, 27648, "cal5", "bf16"),
    ("c5_bf_m96_down2", 96, 10240, 27648, "cal5", "bf16"),
    ("c5_bf_decode_14k", 1, 4096, 14336, "cal5", "bf16"),
    ("c5_bf_decode_28k", 1, 4096, 28672, "cal5", "bf16"),
    ("c5_bf_m16_14k", 16, 4096, 14336, "cal5", "bf16"),
    ("c5_bf_m16_28k", 16, 4096, 28672, "cal5", "bf16"),
    ("c5_bf_sq8k", 8192, 8192, 8192, "cal5", "bf16"),
    ("c5_bf_2k_k8k", 2048, 2048, 8192, "cal5", "bf16"),
    ("c5_bf_odd_n", 4096, 2000, 1800, "cal5", "bf16"),
    ("c5_bf_odd_mk", 3000, 4096, 2100, "cal5", "bf16"),
    ("c5_h_odd_nk", 5000, 3000, 1000, "cal5", "fp16"),
    ("c5_f8_decode_14k", 1, 4096, 14336, "cal5", "fp8"),
    ("c5_f8_decode_28k", 1, 4096, 28672, "cal5", "fp8"),
    ("c5_f8_m16_28k", 16, 4096, 28672, "cal5", "fp8"),
]
BLIND10 = [  # taken mid-round on 2026-12-04, after dev3-tune4's model (f9d620d) and blind9's scoring, before any
    # later model change (split "blind10"): model dims not swept before (Llama-3.1-405B, GPT-OSS, GLM-4, Granite-3,
    # MiniCPM, DeepSeek-V2-Lite, StarCoder2, Mistral-Large), M = 1..131072, recommendation MLPs, a quarter off-grid
    ("b10_bf_decode_up", 1, 53248, 16384, "blind10", "bf16"),
    ("b10_bf_m8_o", 8, 2880, 2880, "blind10", "bf16"),
    ("b10_bf_m32_up", 32, 13696, 4096, "blind10", "bf16"),
    ("b10_bf_m128_down", 128, 4096, 12800, "blind10", "bf16"),
    ("b10_bf_m448_qkv", 448, 15360, 12288, "blind10", "bf16"),
    ("b10_bf_m1536_up", 1536, 24576, 6144, "blind10", "bf16"),
    ("b10_bf_m4096_down", 4096, 2048, 10944, "blind10", "bf16"),
    ("b10_bf_m12288_o", 12288, 6144, 6144, "blind10", "bf16"),
    ("b10_bf_m65536_up", 65536, 5760, 2304, "blind10", "bf16"),
    ("b10_bf_rec_n320", 81920, 320, 1536, "blind10", "bf16"),
    ("b10_bf_odd_n", 6144, 2900, 4096, "blind10", "bf16"),
    ("b10_bf_odd_mk", 2500, 8192, 1500, "blind10", "bf16"),
    ("b10_h_decode_down", 1, 2304, 5760, "blind10", "fp16"),
    ("b10_h_m20_up", 20, 12800, 4096, "blind10", "fp16"),
    ("b10_h_m200_o", 200, 12288, 12288, "blind10", "fp16"),
    ("b10_h_m2048_qkv", 2048, 2560, 2048, "blind10", "fp16"),
    ("b10_h_m8192_down", 8192, 5120, 13696, "blind10", "fp16"),
    ("b10_h_m24576_up", 24576, 10944, 2048, "blind10", "fp16"),
    ("b10_h_rec_n640", 65536, 640, 256, "blind10", "fp16"),
    ("b10_h_rec_bot", 131072, 128, 384, "blind10", "fp16"),
    ("b10_h_odd_m", 7000, 4096, 4096, "blind10", "fp16"),
    ("b10_h_odd_k", 4096, 4096, 2900, "blind10", "fp16"),
    ("b10_f8_decode_o", 1, 12288, 12288, "blind10", "fp8"),
    ("b10_f8_m4_down", 4, 16384, 53248, "blind10", "fp8"),
    ("b10_f8_m64_up", 64, 28672, 12288, "blind10", "fp8"),
    ("b10_f8_m320_qkv", 320, 7168, 4096, "blind10", "fp8"),
    ("b10_f8_m3072_down", 3072, 4096, 13696, "blind10", "fp8"),
    ("b10_f8_m16384_o", 16384, 2880, 2880, "blind10", "fp8"),
    ("b10_f8_rec_mid", 98304, 1024, 512, "blind10", "fp8"),
    ("b10_f8_m1024_up", 1024, 11008, 2048, "blind10", "fp8"),
    ("b10_f8_odd_n", 4096, 5000, 4096, "blind10", "fp8"),
    ("b10_f8_odd_all", 3500, 2700, 1900, "blind10", "fp8"),
    ("b10_f32_decode_up", 1, 12800, 4096, "blind10", "fp32"),
    ("b10_f32_m32_o", 32, 6144, 6144, "blind10", "fp32"),
    ("b10_f32_m256_down", 256, 2048, 10944, "blind10", "fp32"),
    ("b10_f32_m4096_qkv", 4096, 6144, 4096, "blind10", "fp32"),
    ("b10_f32_m16384_up", 16384, 5760, 2304, "blind10", "fp32"),
    ("b10_f32_rec_n96", 131072, 96, 512, "blind10", "fp32"),
    ("b10_f32_odd_m", 2900, 4096, 2048, "blind10", "fp32"),
    ("b10_f32_odd_nk", 8192, 1900, 2500, "blind10", "fp32"),
]
CAL6 = [  # calibration, taken 2026-12-04 (session 23) beside blind11: the classes of blind10's worst picks -- fp8 with
    # every dim off-grid near 2-4k, fp32 tall-skinny recommendation shapes (N 64-128, K 256-768), fp16 large odd-M
    # squares, fp16 recommendation N = 512-768 at small K, fp8 mid-size squares near 3k
    ("c6_f8_odd_all_a", 3100, 2500, 1700, "cal6", "fp8"),
    ("c6_f8_odd_all_b", 4500, 3300, 2300, "cal6", "fp8"),
    ("c6_f8_sq3k", 12288, 3072, 3072, "cal6", "fp8"),
    ("c6_f8_odd_sq", 20000, 2600, 2600, "cal6", "fp8"),
    ("c6_f32_rec_n64", 131072, 64, 512, "cal6", "fp32"),
    ("c6_f32_rec_n128", 65536, 128, 768, "cal6", "fp32"),
    ("c6_f32_rec_n80", 98304, 80, 384, "cal6", "fp32"),
    ("c6_h_odd_sq_a", 6000, 4096, 4096, "cal6", "fp16"),
    ("c6_h_odd_sq_b", 9000, 5120, 5120, "cal6", "fp16"),
    ("c6_h_rec_n512", 65536, 512, 256, "cal6", "fp16"),
    ("c6_h_rec_n768", 49152, 768, 384, "cal6", "fp16"),
    ("c6_bf_odd_sq", 7000, 4096, 4096, "cal6", "bf16"),
]
BLIND11 = [  # taken 2026-12-04 (session 23) before any model change of the session (split "blind11"): model dims not
    # swept before (Qwen2.5-72B, Falcon-40B, DBRX, Qwen3 MoE experts, Gemma-3-12B/27B, OLMo-2-13B, Nemotron-4-340B,
    # Llama-4-Scout), M = 1..131072, recommendation MLPs, a quarter off the 16-element grid
    ("b11_bf_decode_up", 1, 29568, 8192, "blind11", "bf16"),
    ("b11_bf_m6_qkv", 6, 10240, 8192, "blind11", "bf16"),
    ("b11_bf_m48_down", 48, 5120, 13824, "blind11", "bf16"),
    ("b11_bf_m256_moe", 256, 1536, 4096, "blind11", "bf16"),
    ("b11_bf_m640_up", 640, 21504, 5376, "blind11", "bf16"),
    ("b11_bf_m3072_o", 3072, 3840, 3840, "blind11", "bf16"),
    ("b11_bf_m10240_down", 10240, 6144, 10752, "blind11", "bf16"),
    ("b11_bf_m32768_up", 32768, 15360, 3840, "blind11", "bf16"),
    ("b11_bf_rec_n256", 131072, 256, 1024, "blind11", "bf16"),
    ("b11_bf_rec_n48", 65536, 48, 768, "blind11", "bf16"),
    ("b11_bf_odd_m", 4321, 8192, 5120, "blind11", "bf16"),
    ("b11_bf_odd_nk", 8192, 3700, 2500, "blind11", "bf16"),
    ("b11_h_decode_qkv", 1, 10240, 8192, "blind11", "fp16"),
    ("b11_h_m16_down", 16, 8192, 29568, "blind11", "fp16"),
    ("b11_h_m96_moe", 96, 4096, 1536, "blind11", "fp16"),
    ("b11_h_m384_up", 384, 13824, 5120, "blind11", "fp16"),
    ("b11_h_m1536_o", 1536, 5376, 4096, "blind11", "fp16"),
    ("b11_h_m6144_up", 6144, 32768, 8192, "blind11", "fp16"),
    ("b11_h_m49152_down", 49152, 3840, 15360, "blind11", "fp16"),
    ("b11_h_rec_n384", 98304, 384, 1024, "blind11", "fp16"),
    ("b11_h_odd_n", 5120, 6000, 3072, "blind11", "fp16"),
    ("b11_h_odd_mk", 3333, 4096, 3500, "blind11", "fp16"),
    ("b11_f8_decode_down", 1, 8192, 29568, "blind11", "fp8"),
    ("b11_f8_m8_up", 8, 73728, 18432, "blind11", "fp8"),
    ("b11_f8_m40_o", 40, 5120, 5120, "blind11", "fp8"),
    ("b11_f8_m192_qkv", 192, 10240, 8192, "blind11", "fp8"),
    ("b11_f8_m1024_moe", 1024, 1536, 4096, "blind11", "fp8"),
    ("b11_f8_m4096_up", 4096, 21504, 5376, "blind11", "fp8"),
    ("b11_f8_m24576_o", 24576, 8192, 8192, "blind11", "fp8"),
    ("b11_f8_rec_n768", 65536, 768, 1024, "blind11", "fp8"),
    ("b11_f8_odd_m", 2750, 6144, 6144, "blind11", "fp8"),
    ("b11_f8_odd_nk", 6144, 4500, 3100, "blind11", "fp8"),
    ("b11_f32_decode_o", 1, 8192, 8192, "blind11", "fp32"),
    ("b11_f32_m24_up", 24, 13824, 5120, "blind11", "fp32"),
    ("b11_f32_m192_down", 192, 3840, 15360, "blind11", "fp32"),
    ("b11_f32_m1024_qkv", 1024, 10240, 8192, "blind11", "fp32"),
    ("b11_f32_m8192_o", 8192, 5376, 4096, "blind11", "fp32"),
    ("b11_f32_m32768_up", 32768, 3072, 1024, "blind11", "fp32"),
    ("b11_f32_rec_n192", 131072, 192, 256, "blind11", "fp32"),
    ("b11_f32_rec_n48", 98304, 48, 1024, "blind11", "fp32"),
    ("b11_f32_odd_m", 5555, 4096, 3072, "blind11", "fp32"),
    ("b11_f32_odd_nk", 4096, 2300, 3900, "blind11", "fp32"),
]
BLIND12 = [  # taken 2026-12-04 (session 24) before any model change of the session (split "blind12"): model dims not
    # swept before (Mistral-Large-2, Yi-34B, DeepSeek-V3 dense and experts, Command-R, InternLM2-20B, StarCoder2-15B,
    # Granite-3-8B, MiniCPM3, Phi-4), M = 1..131072, recommendation MLPs, a quarter off the 16-element grid
    ("b12_bf_decode_o", 1, 12288, 12288, "blind12", "bf16"),
    ("b12_bf_m12_up", 12, 40960, 7168, "blind12", "bf16"),
    ("b12_bf_m80_moe", 80, 2048, 7168, "blind12", "bf16"),
    ("b12_bf_m512_down", 512, 6144, 16384, "blind12", "bf16"),
    ("b12_bf_m1792_qkv", 1792, 10240, 8192, "blind12", "bf16"),
    ("b12_bf_m5120_up", 5120, 24576, 6144, "blind12", "bf16"),
    ("b12_bf_m16384_down", 16384, 4096, 12800, "blind12", "bf16"),
    ("b12_bf_m65536_o", 65536, 5120, 5120, "blind12", "bf16"),
    ("b12_bf_rec_n512", 131072, 512, 512, "blind12", "bf16"),
    ("b12_bf_rec_n96", 98304, 96, 1024, "blind12", "bf16"),
    ("b12_bf_odd_m", 6789, 7168, 4096, "blind12", "bf16"),
    ("b12_bf_odd_nk", 4096, 5500, 3300, "blind12", "bf16"),
    ("b12_h_decode_up", 1, 35840, 5120, "blind12", "fp16"),
    ("b12_h_m24_o", 24, 7168, 7168, "blind12", "fp16"),
    ("b12_h_m160_down", 160, 4096, 17920, "blind12", "fp16"),
    ("b12_h_m768_moe", 768, 2048, 7168, "blind12", "fp16"),
    ("b12_h_m2560_up", 2560, 16384, 6144, "blind12", "fp16"),
    ("b12_h_m12288_qkv", 12288, 9216, 5120, "blind12", "fp16"),
    ("b12_h_m40960_o", 40960, 4096, 4096, "blind12", "fp16"),
    ("b12_h_rec_n256", 131072, 256, 768, "blind12", "fp16"),
    ("b12_h_odd_m", 2222, 12288, 4096, "blind12", "fp16"),
    ("b12_h_odd_nk", 8192, 3000, 4700, "blind12", "fp16"),
    ("b12_f8_decode_up", 1, 28672, 12288, "blind12", "fp8"),
    ("b12_f8_m16_down", 16, 7168, 18432, "blind12", "fp8"),
    ("b12_f8_m64_moe", 64, 4096, 7168, "blind12", "fp8"),
    ("b12_f8_m384_o", 384, 8192, 8192, "blind12", "fp8"),
    ("b12_f8_m2048_up", 2048, 22528, 8192, "blind12", "fp8"),
    ("b12_f8_m8192_down", 8192, 6144, 16384, "blind12", "fp8"),
    ("b12_f8_m32768_qkv", 32768, 7168, 4096, "blind12", "fp8"),
    ("b12_f8_rec_n512", 98304, 512, 1024, "blind12", "fp8"),
    ("b12_f8_odd_m", 5432, 4096, 4096, "blind12", "fp8"),
    ("b12_f8_odd_all", 2900, 3900, 2100, "blind12", "fp8"),
    ("b12_f32_decode_down", 1, 5120, 17920, "blind12", "fp32"),
    ("b12_f32_m48_qkv", 48, 9216, 5120, "blind12", "fp32"),
    ("b12_f32_m320_up", 320, 12800, 4096, "blind12", "fp32"),
    ("b12_f32_m2048_o", 2048, 7168, 7168, "blind12", "fp32"),
    ("b12_f32_m12288_down", 12288, 4096, 6144, "blind12", "fp32"),
    ("b12_f32_m65536_up", 65536, 2048, 1024, "blind12", "fp32"),
    ("b12_f32_rec_n256", 131072, 256, 512, "blind12", "fp32"),
    ("b12_f32_rec_n32", 65536, 32, 768, "blind12", "fp32"),
    ("b12_f32_odd_m", 3777, 6144, 2048, "blind12", "fp32"),
    ("b12_f32_odd_nk", 6144, 2700, 3300, "blind12", "fp32"),
]
BLIND13 = [  # taken 2026-12-04 (session 24) with blind12, kept unopened until the session's model is final (split
    # "blind13"): Mixtral-8x22B, Qwen2-57B-A14B experts, GLM-4-9B, Phi-3-medium, Jamba, Arctic, Baichuan-M1, Llama-3.2-3B,
    # SmolLM2, gpt-oss dims; M = 1..131072, recommendation MLPs, a quarter off the 16-element grid
    ("b13_bf_decode_up", 1, 16384, 6144, "blind13", "bf16"),
    ("b13_bf_m4_qkv", 4, 5120, 4096, "blind13", "bf16"),
    ("b13_bf_m40_moe", 40, 2560, 3584, "blind13", "bf16"),
    ("b13_bf_m320_down", 320, 3072, 8192, "blind13", "bf16"),
    ("b13_bf_m1280_up", 1280, 27392, 4096, "blind13", "bf16"),
    ("b13_bf_m4096_o", 4096, 5120, 5120, "blind13", "bf16"),
    ("b13_bf_m20480_up", 20480, 17920, 5120, "blind13", "bf16"),
    ("b13_bf_m49152_down", 49152, 4096, 13696, "blind13", "bf16"),
    ("b13_bf_rec_n384", 131072, 384, 512, "blind13", "bf16"),
    ("b13_bf_rec_n64", 65536, 64, 1536, "blind13", "bf16"),
    ("b13_bf_odd_m", 3210, 6144, 6144, "blind13", "bf16"),
    ("b13_bf_odd_nk", 12288, 2900, 1700, "blind13", "bf16"),
    ("b13_h_decode_o", 1, 6144, 6144, "blind13", "fp16"),
    ("b13_h_m8_up", 8, 17920, 5120, "blind13", "fp16"),
    ("b13_h_m128_moe", 128, 2560, 3584, "blind13", "fp16"),
    ("b13_h_m1024_down", 1024, 3072, 8192, "blind13", "fp16"),
    ("b13_h_m3584_qkv", 3584, 7680, 5120, "blind13", "fp16"),
    ("b13_h_m16384_up", 16384, 8192, 3072, "blind13", "fp16"),
    ("b13_h_m65536_down", 65536, 2048, 8192, "blind13", "fp16"),
    ("b13_h_rec_n128", 131072, 128, 1024, "blind13", "fp16"),
    ("b13_h_odd_m", 7777, 5120, 5120, "blind13", "fp16"),
    ("b13_h_odd_nk", 4096, 6500, 2200, "blind13", "fp16"),
    ("b13_f8_decode_qkv", 1, 7680, 5120, "blind13", "fp8"),
    ("b13_f8_m32_up", 32, 32768, 6144, "blind13", "fp8"),
    ("b13_f8_m96_moe", 96, 2880, 2880, "blind13", "fp8"),
    ("b13_f8_m640_down", 640, 6144, 16384, "blind13", "fp8"),
    ("b13_f8_m3072_o", 3072, 6144, 6144, "blind13", "fp8"),
    ("b13_f8_m12288_up", 12288, 13696, 4096, "blind13", "fp8"),
    ("b13_f8_m49152_o", 49152, 3072, 3072, "blind13", "fp8"),
    ("b13_f8_rec_n256", 131072, 256, 768, "blind13", "fp8"),
    ("b13_f8_odd_m", 9100, 5120, 5120, "blind13", "fp8"),
    ("b13_f8_odd_nk", 4096, 3500, 5300, "blind13", "fp8"),
    ("b13_f32_decode_up", 1, 13696, 4096, "blind13", "fp32"),
    ("b13_f32_m16_o", 16, 5120, 5120, "blind13", "fp32"),
    ("b13_f32_m128_up", 128, 8192, 3072, "blind13", "fp32"),
    ("b13_f32_m768_down", 768, 4096, 13696, "blind13", "fp32"),
    ("b13_f32_m4096_qkv", 4096, 7680, 5120, "blind13", "fp32"),
    ("b13_f32_m24576_o", 24576, 3072, 3072, "blind13", "fp32"),
    ("b13_f32_rec_n128", 131072, 128, 384, "blind13", "fp32"),
    ("b13_f32_rec_n64", 65536, 64, 1024, "blind13", "fp32"),
    ("b13_f32_odd_m", 7100, 3072, 4096, "blind13", "fp32"),
    ("b13_f32_odd_nk", 6144, 3300, 2600, "blind13", "fp32"),
]
BLIND14 = [  # taken 2026-12-04 (session 24) before any model change of the session, kept unopened until the session's
    # model is final (split "blind14"): Qwen2.5-32B, Qwen1.5-110B, Gemma-2-2B/9B, Mistral-7B, Phi-3.5-MoE and OLMoE experts,
    # Hunyuan-Large, DeepSeek-V2-Lite, StableLM-2, Llama-3.2-1B dims; M = 1..131072, recommendation MLPs, off-grid sizes
    ("b14_bf_decode_down", 1, 5120, 27648, "blind14", "bf16"),
    ("b14_bf_m10_up", 10, 49152, 8192, "blind14", "bf16"),
    ("b14_bf_m56_moe", 56, 6400, 4096, "blind14", "bf16"),
    ("b14_bf_m448_o", 448, 3584, 3584, "blind14", "bf16"),
    ("b14_bf_m2304_up", 2304, 14336, 4096, "blind14", "bf16"),
    ("b14_bf_m8192_down", 8192, 6400, 18304, "blind14", "bf16"),
    ("b14_bf_m24576_up", 24576, 9216, 2304, "blind14", "bf16"),
    ("b14_bf_m98304_o", 98304, 2048, 2048, "blind14", "bf16"),
    ("b14_bf_rec_n768", 131072, 768, 256, "blind14", "bf16"),
    ("b14_bf_rec_n160", 65536, 160, 512, "blind14", "bf16"),
    ("b14_bf_odd_m", 5050, 5120, 5120, "blind14", "bf16"),
    ("b14_bf_odd_nk", 6144, 4700, 2900, "blind14", "bf16"),
    ("b14_h_decode_o", 1, 8192, 8192, "blind14", "fp16"),
    ("b14_h_m20_down", 20, 3584, 14336, "blind14", "fp16"),
    ("b14_h_m200_moe", 200, 1408, 2048, "blind14", "fp16"),
    ("b14_h_m1280_qkv", 1280, 6144, 4096, "blind14", "fp16"),
    ("b14_h_m4608_up", 4608, 27648, 5120, "blind14", "fp16"),
    ("b14_h_m20480_down", 20480, 2304, 9216, "blind14", "fp16"),
    ("b14_h_m81920_o", 81920, 3584, 3584, "blind14", "fp16"),
    ("b14_h_rec_n512", 98304, 512, 512, "blind14", "fp16"),
    ("b14_h_odd_m", 4567, 8192, 3072, "blind14", "fp16"),
    ("b14_h_odd_nk", 10240, 2100, 3700, "blind14", "fp16"),
    ("b14_f8_decode_up", 1, 14336, 4096, "blind14", "fp8"),
    ("b14_f8_m24_qkv", 24, 10240, 8192, "blind14", "fp8"),
    ("b14_f8_m128_moe", 128, 1024, 2048, "blind14", "fp8"),
    ("b14_f8_m512_down", 512, 8192, 49152, "blind14", "fp8"),
    ("b14_f8_m1536_o", 1536, 5120, 5120, "blind14", "fp8"),
    ("b14_f8_m6144_up", 6144, 18304, 6400, "blind14", "fp8"),
    ("b14_f8_m65536_down", 65536, 2048, 5632, "blind14", "fp8"),
    ("b14_f8_rec_n384", 131072, 384, 512, "blind14", "fp8"),
    ("b14_f8_odd_m", 7300, 4096, 4096, "blind14", "fp8"),
    ("b14_f8_odd_nk", 8192, 2700, 3900, "blind14", "fp8"),
    ("b14_f32_decode_qkv", 1, 6144, 4096, "blind14", "fp32"),
    ("b14_f32_m40_down", 40, 4096, 14336, "blind14", "fp32"),
    ("b14_f32_m256_up", 256, 9216, 2304, "blind14", "fp32"),
    ("b14_f32_m1536_moe", 1536, 6400, 4096, "blind14", "fp32"),
    ("b14_f32_m6144_o", 6144, 5120, 5120, "blind14", "fp32"),
    ("b14_f32_m49152_down", 49152, 2048, 2048, "blind14", "fp32"),
    ("b14_f32_rec_n96", 131072, 96, 768, "blind14", "fp32"),
    ("b14_f32_rec_n320", 65536, 320, 256, "blind14", "fp32"),
    ("b14_f32_odd_m", 3900, 5120, 3072, "blind14", "fp32"),
    ("b14_f32_odd_nk", 5120, 3100, 2300, "blind14", "fp32"),
]
BLIND15 = [  # taken 2026-12-04 (session 24) after the session's model was final, timed with the clock held (--idle-s)
    # and scored once (split "blind15"): Mistral-Nemo-12B, Qwen2-1.5B/7B, Llama-2-13B, DeepSeek-Coder-33B, Granite-34B,
    # Mixtral-8x7B experts dims; M = 1..131072, recommendation MLPs, off-grid sizes
    ("b15_bf_decode_qkv", 1, 7168, 5120, "blind15", "bf16"),
    ("b15_bf_m32_down", 32, 5120, 14336, "blind15", "bf16"),
    ("b15_bf_m160_moe", 160, 14336, 4096, "blind15", "bf16"),
    ("b15_bf_m2048_up", 2048, 13824, 5120, "blind15", "bf16"),
    ("b15_bf_m16384_o", 16384, 7168, 7168, "blind15", "bf16"),
    ("b15_bf_rec_n640", 131072, 640, 384, "blind15", "bf16"),
    ("b15_bf_odd_m", 3456, 8960, 1536, "blind15", "bf16"),
    ("b15_h_decode_up", 1, 18944, 3584, "blind15", "fp16"),
    ("b15_h_m64_o", 64, 5120, 5120, "blind15", "fp16"),
    ("b15_h_m512_moe", 512, 4096, 14336, "blind15", "fp16"),
    ("b15_h_m4096_down", 4096, 3584, 18944, "blind15", "fp16"),
    ("b15_h_m32768_qkv", 32768, 4608, 3584, "blind15", "fp16"),
    ("b15_h_rec_n192", 98304, 192, 640, "blind15", "fp16"),
    ("b15_h_odd_nk", 6144, 3300, 1900, "blind15", "fp16"),
    ("b15_f8_decode_down", 1, 5120, 13824, "blind15", "fp8"),
    ("b15_f8_m48_up", 48, 19200, 7168, "blind15", "fp8"),
    ("b15_f8_m256_moe", 256, 2048, 5120, "blind15", "fp8"),
    ("b15_f8_m2560_o", 2560, 7168, 7168, "blind15", "fp8"),
    ("b15_f8_m20480_up", 20480, 13824, 5120, "blind15", "fp8"),
    ("b15_f8_rec_n640", 131072, 640, 768, "blind15", "fp8"),
    ("b15_f8_odd_m", 6500, 5120, 3072, "blind15", "fp8"),
    ("b15_f32_decode_o", 1, 5120, 5120, "blind15", "fp32"),
    ("b15_f32_m80_up", 80, 8960, 1536, "blind15", "fp32"),
    ("b15_f32_m640_down", 640, 3584, 18944, "blind15", "fp32"),
    ("b15_f32_m3072_qkv", 3072, 4608, 3584, "blind15", "fp32"),
    ("b15_f32_m16384_o", 16384, 5120, 5120, "blind15", "fp32"),
    ("b15_f32_rec_n160", 131072, 160, 640, "blind15", "fp32"),
    ("b15_f32_odd_nk", 7168, 2500, 3500, "blind15", "fp32"),
]
BLIND16 = [  # taken 2026-12-04 (session 25) at the session's start, before any model change, clock held (--idle-s);
    # scored once (split "blind16") after the session's model was final: Qwen2.5-32B, InternLM2-20B, DeepSeek-V2-Lite
    # and OLMoE experts, Command-R, StarCoder2-15B, Gemma-2-9B, Phi-3-medium, Yi-34B, Falcon-40B, Baichuan2-13B dims
    ("b16_bf_decode_up", 1, 27648, 5120, "blind16", "bf16"),
    ("b16_bf_m24_down", 24, 6144, 16384, "blind16", "bf16"),
    ("b16_bf_m192_moe", 192, 1408, 2048, "blind16", "bf16"),
    ("b16_bf_m3072_down", 3072, 8192, 22528, "blind16", "bf16"),
    ("b16_bf_m12288_up", 12288, 24576, 6144, "blind16", "bf16"),
    ("b16_bf_rec_n448", 131072, 448, 320, "blind16", "bf16"),
    ("b16_bf_odd_m", 5300, 3584, 14336, "blind16", "bf16"),
    ("b16_h_decode_down", 1, 3584, 14336, "blind16", "fp16"),
    ("b16_h_m96_up", 96, 17920, 5120, "blind16", "fp16"),
    ("b16_h_m640_moe", 640, 1024, 2048, "blind16", "fp16"),
    ("b16_h_m6144_down", 6144, 7168, 20480, "blind16", "fp16"),
    ("b16_h_m49152_o", 49152, 3584, 3584, "blind16", "fp16"),
    ("b16_h_rec_n224", 65536, 224, 896, "blind16", "fp16"),
    ("b16_h_odd_all", 2800, 6600, 4100, "blind16", "fp16"),
    ("b16_f8_decode_up", 1, 32768, 8192, "blind16", "fp8"),
    ("b16_f8_m40_down", 40, 8192, 22528, "blind16", "fp8"),
    ("b16_f8_m192_moe", 192, 1536, 5120, "blind16", "fp8"),
    ("b16_f8_m1024_up", 1024, 13696, 5120, "blind16", "fp8"),
    ("b16_f8_m16384_o", 16384, 6144, 6144, "blind16", "fp8"),
    ("b16_f8_rec_n192", 131072, 192, 384, "blind16", "fp8"),
    ("b16_f8_odd_all", 4444, 6000, 2800, "blind16", "fp8"),
    ("b16_f32_decode_up", 1, 13824, 5120, "blind16", "fp32"),
    ("b16_f32_m8_down", 8, 4096, 11008, "blind16", "fp32"),
    ("b16_f32_m384_o", 384, 6144, 6144, "blind16", "fp32"),
    ("b16_f32_m2560_up", 2560, 14336, 3584, "blind16", "fp32"),
    ("b16_f32_m32768_down", 32768, 3072, 1024, "blind16", "fp32"),
    ("b16_f32_rec_n352", 98304, 352, 512, "blind16", "fp32"),
    ("b16_f32_odd_all", 5555, 4100, 2600, "blind16", "fp32"),
]
CAL7 = [  # calibration, taken 2026-12-04 (session 25) beside blind16, clock held: fp8 only, the classes of the recurring
    # fp8 misses -- small MoE GEMMs of 10-30 us and large-M GEMMs where 256x128 tiles were picked
    ("c7_f8_m128_moe", 128, 2048, 7168, "cal7", "fp8"),
    ("c7_f8_m256_moe", 256, 1536, 4096, "cal7", "fp8"),
    ("c7_f8_m512_moe", 512, 1024, 2048, "cal7", "fp8"),
    ("c7_f8_m96_moe", 96, 4096, 2048, "cal7", "fp8"),
    ("c7_f8_m320_moe", 320, 2816, 4096, "cal7", "fp8"),
    ("c7_f8_m384_moe", 384, 1408, 2048, "cal7", "fp8"),
    ("c7_f8_m64_moe", 64, 2560, 5120, "cal7", "fp8"),
    ("c7_f8_m768_moe", 768, 2048, 2048, "cal7", "fp8"),
    ("c7_f8_m32768_sq", 32768, 4096, 4096, "cal7", "fp8"),
    ("c7_f8_m65536_n3072", 65536, 3072, 2048, "cal7", "fp8"),
    ("c7_f8_m24576_up", 24576, 8192, 5120, "cal7", "fp8"),
    ("c7_f8_m16384_up", 16384, 14336, 4096, "cal7", "fp8"),
    ("c7_f8_m49152_n1536", 49152, 1536, 4096, "cal7", "fp8"),
    ("c7_f8_m4096_down", 4096, 4096, 8192, "cal7", "fp8"),
    ("c7_f8_m8192_sq", 8192, 2048, 2048, "cal7", "fp8"),
    ("c7_f8_decode_up", 1, 8192, 28672, "cal7", "fp8"),
]
CAL8 = [  # calibration, taken 2026-12-04 (session 25), clock held: fp8 small MoE GEMMs of ~10-20 us, where the sweeps'
    # first timings and their re-timings disagreed by up to 2x (cal7's retime_ms): three cal7 shapes and blind14's and
    # blind15's MoE misses swept again, two new ones, then the first three once more at the end -- how far the best
    # config and the model's score move between sweeps of one shape
    ("c8_f8_m96_moe_a", 96, 4096, 2048, "cal8", "fp8"),
    ("c8_f8_m384_moe_a", 384, 1408, 2048, "cal8", "fp8"),
    ("c8_f8_m768_moe_a", 768, 2048, 2048, "cal8", "fp8"),
    ("c8_f8_m128_moe_b14", 128, 1024, 2048, "cal8", "fp8"),
    ("c8_f8_m256_moe_b15", 256, 2048, 5120, "cal8", "fp8"),
    ("c8_f8_m192_moe", 192, 2048, 4096, "cal8", "fp8"),
    ("c8_f8_m640_moe", 640, 1536, 3072, "cal8", "fp8"),
    ("c8_f8_m96_moe_b", 96, 4096, 2048, "cal8", "fp8"),
    ("c8_f8_m384_moe_b", 384, 1408, 2048, "cal8", "fp8"),
    ("c8_f8_m768_moe_b", 768, 2048, 2048, "cal8", "fp8"),
]
BLIND17 = [  # taken 2026-12-04 (session 25) after the session's tune model was final, clock held, rows under 50 us timed
    # in two passes (--second-pass-below-ms 0.05); scored once (split "blind17"): Llama-3.2-3B, Qwen2.5-14B, Mistral-Small-24B,
    # Phi-4, Gemma-2-27B, Qwen1.5-MoE and DBRX experts, Llama-3.1-405B slices, recommendation MLPs, off-grid sizes
    ("b17_bf_decode_o", 1, 3072, 3072, "blind17", "bf16"),
    ("b17_bf_m48_up", 48, 13824, 5120, "blind17", "bf16"),
    ("b17_bf_m256_moe", 256, 2816, 2048, "blind17", "bf16"),
    ("b17_bf_m1536_qkv", 1536, 7168, 5120, "blind17", "bf16"),
    ("b17_bf_m8192_down", 8192, 4608, 36864, "blind17", "bf16"),
    ("b17_bf_rec_n320", 131072, 320, 1024, "blind17", "bf16"),
    ("b17_bf_odd_all", 3300, 5400, 2700, "blind17", "bf16"),
    ("b17_h_decode_up", 1, 36864, 4608, "blind17", "fp16"),
    ("b17_h_m16_o", 16, 5120, 5120, "blind17", "fp16"),
    ("b17_h_m320_moe", 320, 1408, 2048, "blind17", "fp16"),
    ("b17_h_m2048_down", 2048, 5120, 17920, "blind17", "fp16"),
    ("b17_h_m24576_up", 24576, 13824, 5120, "blind17", "fp16"),
    ("b17_h_rec_n96", 131072, 96, 512, "blind17", "fp16"),
    ("b17_h_odd_m", 6666, 4096, 3072, "blind17", "fp16"),
    ("b17_f8_decode_down", 1, 5120, 17920, "blind17", "fp8"),
    ("b17_f8_m96_o", 96, 8192, 8192, "blind17", "fp8"),
    ("b17_f8_m160_moe", 160, 2816, 2048, "blind17", "fp8"),
    ("b17_f8_m512_moe", 512, 10752, 6144, "blind17", "fp8"),
    ("b17_f8_m4096_up", 4096, 36864, 4608, "blind17", "fp8"),
    ("b17_f8_m32768_o", 32768, 3072, 3072, "blind17", "fp8"),
    ("b17_f8_odd_m", 5100, 7168, 5120, "blind17", "fp8"),
    ("b17_f32_decode_down", 1, 3072, 8192, "blind17", "fp32"),
    ("b17_f32_m32_qkv", 32, 7168, 5120, "blind17", "fp32"),
    ("b17_f32_m192_moe", 192, 2816, 2048, "blind17", "fp32"),
    ("b17_f32_m1024_up", 1024, 17920, 5120, "blind17", "fp32"),
    ("b17_f32_m8192_o", 8192, 4096, 4096, "blind17", "fp32"),
    ("b17_f32_rec_n256", 65536, 256, 1024, "blind17", "fp32"),
    ("b17_f32_odd_nk", 4096, 3900, 2900, "blind17", "fp32"),
]
BLIND18 = [  # taken 2026-12-04 (session 25) after the session's tune model was final, clock held, L2 emptied by a read
    # (--flush read), rows under 50 us in two passes; scored once (split "blind18"): Llama-3-8B/70B, Qwen2-57B-A14B and
    # Mixtral-8x22B experts, Nemotron-4-15B, Gemma-7B, Yi-9B, CodeLlama-34B, recommendation MLPs, off-grid sizes
    ("b18_bf_decode_down", 1, 4096, 14336, "blind18", "bf16"),
    ("b18_bf_m64_moe", 64, 2560, 3584, "blind18", "bf16"),
    ("b18_bf_m400_up", 400, 24576, 6144, "blind18", "bf16"),
    ("b18_bf_m3584_o", 3584, 8192, 8192, "blind18", "bf16"),
    ("b18_bf_m32768_qkv", 32768, 6144, 4096, "blind18", "bf16"),
    ("b18_bf_rec_n576", 131072, 576, 448, "blind18", "bf16"),
    ("b18_bf_odd_nk", 4096, 4700, 3100, "blind18", "bf16"),
    ("b18_h_decode_qkv", 1, 10240, 8192, "blind18", "fp16"),
    ("b18_h_m40_down", 40, 6144, 16384, "blind18", "fp16"),
    ("b18_h_m224_moe", 224, 2048, 6144, "blind18", "fp16"),
    ("b18_h_m1536_up", 1536, 24576, 3072, "blind18", "fp16"),
    ("b18_h_m16384_down", 16384, 4096, 11008, "blind18", "fp16"),
    ("b18_h_rec_n320", 98304, 320, 384, "blind18", "fp16"),
    ("b18_h_odd_all", 3700, 5300, 2500, "blind18", "fp16"),
    ("b18_f8_decode_qkv", 1, 10240, 8192, "blind18", "fp8"),
    ("b18_f8_m24_up", 24, 28672, 8192, "blind18", "fp8"),
    ("b18_f8_m224_moe", 224, 2560, 3584, "blind18", "fp8"),
    ("b18_f8_m448_moe", 448, 1536, 6144, "blind18", "fp8"),
    ("b18_f8_m2048_o", 2048, 8192, 8192, "blind18", "fp8"),
    ("b18_f8_m49152_up", 49152, 6144, 3072, "blind18", "fp8"),
    ("b18_f8_odd_nk", 6144, 5500, 3300, "blind18", "fp8"),
    ("b18_f32_decode_up", 1, 11008, 4096, "blind18", "fp32"),
    ("b18_f32_m64_o", 64, 8192, 8192, "blind18", "fp32"),
    ("b18_f32_m256_moe", 256, 2560, 3584, "blind18", "fp32"),
    ("b18_f32_m1536_down", 1536, 4096, 14336, "blind18", "fp32"),
    ("b18_f32_m16384_qkv", 16384, 3072, 3072, "blind18", "fp32"),
    ("b18_f32_rec_n192", 131072, 192, 384, "blind18", "fp32"),
    ("b18_f32_odd_m", 4321, 6144, 2048, "blind18", "fp32"),
]
BLIND19 = [  # taken 2026-12-04 (session 26) with the read flush and a 0.1 s idle after long timings, before the refit on
    # re-timed short calibration rows; scored once (split "blind19") after the model is final: Phi-3-medium, Gemma-2-9B/27B,
    # DBRX and Qwen3-30B-A3B experts, Command-R, StarCoder2-15B, Yi-34B, Mixtral-8x22B, recommendation MLPs, off-grid sizes
    ("b19_bf_decode_up", 1, 17920, 5120, "blind19", "bf16"),
    ("b19_bf_m32_down", 32, 4608, 36864, "blind19", "bf16"),
    ("b19_bf_m128_moe", 128, 10752, 6144, "blind19", "bf16"),
    ("b19_bf_m2048_up", 2048, 22528, 8192, "blind19", "bf16"),
    ("b19_bf_m24576_o", 24576, 6144, 6144, "blind19", "bf16"),
    ("b19_bf_rec_n384", 131072, 384, 512, "blind19", "bf16"),
    ("b19_bf_odd_all", 5600, 3800, 2700, "blind19", "bf16"),
    ("b19_h_decode_down", 1, 6144, 24576, "blind19", "fp16"),
    ("b19_h_m16_up", 16, 14336, 3584, "blind19", "fp16"),
    ("b19_h_m320_moe", 320, 768, 2048, "blind19", "fp16"),
    ("b19_h_m1024_down", 1024, 3584, 14336, "blind19", "fp16"),
    ("b19_h_m40960_o", 40960, 5120, 5120, "blind19", "fp16"),
    ("b19_h_rec_n896", 65536, 896, 256, "blind19", "fp16"),
    ("b19_h_odd_all", 2900, 6100, 1500, "blind19", "fp16"),
    ("b19_f8_decode_up", 1, 16384, 6144, "blind19", "fp8"),
    ("b19_f8_m48_down", 48, 8192, 22528, "blind19", "fp8"),
    ("b19_f8_m192_moe", 192, 1536, 2048, "blind19", "fp8"),
    ("b19_f8_m640_qkv", 640, 12288, 4096, "blind19", "fp8"),
    ("b19_f8_m4096_up", 4096, 20480, 7168, "blind19", "fp8"),
    ("b19_f8_m32768_down", 32768, 2560, 8192, "blind19", "fp8"),
    ("b19_f8_odd_all", 5200, 4300, 2900, "blind19", "fp8"),
    ("b19_f32_decode_o", 1, 8192, 8192, "blind19", "fp32"),
    ("b19_f32_m96_down", 96, 4096, 14336, "blind19", "fp32"),
    ("b19_f32_m384_moe", 384, 1792, 3072, "blind19", "fp32"),
    ("b19_f32_m2560_o", 2560, 5120, 5120, "blind19", "fp32"),
    ("b19_f32_m12288_up", 12288, 4096, 2048, "blind19", "fp32"),
    ("b19_f32_rec_n256", 98304, 256, 512, "blind19", "fp32"),
    ("b19_f32_odd_all", 3300, 2700, 4500, "blind19", "fp32"),
]
BLIND20 = [  # taken 2026-12-05 (session 28) with the read flush, a 0.1 s idle after long timings and a 200 us GPU spin before
    # each timed launch (--lead-us, launch_gap.py); scored once (split "blind20") after the model is final: Llama-3.1-405B,
    # Mistral-Large, Qwen2.5-72B, Baichuan2-13B, InternLM2-20B, DeepSeek-V2-Lite and Qwen3-235B experts, rec MLPs, off-grid
    ("b20_bf_decode_qkv", 1, 18432, 16384, "blind20", "bf16"),
    ("b20_bf_m56_down", 56, 5120, 13696, "blind20", "bf16"),
    ("b20_bf_m288_moe", 288, 2816, 2048, "blind20", "bf16"),
    ("b20_bf_m1536_up", 1536, 29568, 8192, "blind20", "bf16"),
    ("b20_bf_m12288_o", 12288, 4096, 4096, "blind20", "bf16"),
    ("b20_bf_rec_n640", 65536, 640, 1024, "blind20", "bf16"),
    ("b20_bf_odd_mn", 3000, 5000, 4096, "blind20", "bf16"),
    ("b20_h_decode_up", 1, 27392, 5120, "blind20", "fp16"),
    ("b20_h_m8_o", 8, 8192, 8192, "blind20", "fp16"),
    ("b20_h_m480_moe", 480, 2048, 1408, "blind20", "fp16"),
    ("b20_h_m2048_qkv", 2048, 7168, 6144, "blind20", "fp16"),
    ("b20_h_m20480_down", 20480, 4096, 6144, "blind20", "fp16"),
    ("b20_h_rec_n128", 131072, 128, 768, "blind20", "fp16"),
    ("b20_h_odd_k", 4096, 4096, 3333, "blind20", "fp16"),
    ("b20_f8_decode_o", 1, 16384, 16384, "blind20", "fp8"),
    ("b20_f8_m16_up", 16, 28672, 12288, "blind20", "fp8"),
    ("b20_f8_m128_moe", 128, 2048, 1408, "blind20", "fp8"),
    ("b20_f8_m352_moe", 352, 3072, 4096, "blind20", "fp8"),
    ("b20_f8_m1024_qkv", 1024, 18432, 16384, "blind20", "fp8"),
    ("b20_f8_m65536_o", 65536, 4096, 4096, "blind20", "fp8"),
    ("b20_f8_odd_mk", 3100, 6144, 2200, "blind20", "fp8"),
    ("b20_f32_decode_down", 1, 5120, 13824, "blind20", "fp32"),
    ("b20_f32_m24_qkv", 24, 6144, 4096, "blind20", "fp32"),
    ("b20_f32_m320_moe", 320, 2048, 1408, "blind20", "fp32"),
    ("b20_f32_m4096_o", 4096, 5120, 5120, "blind20", "fp32"),
    ("b20_f32_m32768_up", 32768, 2816, 2048, "blind20", "fp32"),
    ("b20_f32_rec_n512", 131072, 512, 256, "blind20", "fp32"),
    ("b20_f32_odd_n", 2048, 3500, 4096, "blind20", "fp32"),
]
BLIND21 = [  # defined 2026-12-05 (session 29) before any model change; swept in session 31 on the lent H100 like
    # blind20 (read flush, 0.1 s idle, 200 us GPU spin before each timed launch) and scored once (split "blind21", h100
    # spec) with the model of session 25: Falcon-40B, DBRX and Mixtral-8x22B experts, Phi-3-medium, GPT-J, Gemma-7B,
    # Nemotron-15B, rec MLPs, off-grid sizes
    ("b21_bf_decode_up", 1, 32768, 8192, "blind21", "bf16"),
    ("b21_bf_m24_o", 24, 8192, 8192, "blind21", "bf16"),
    ("b21_bf_m224_moe", 224, 10752, 6144, "blind21", "bf16"),
    ("b21_bf_m3072_down", 3072, 4096, 16384, "blind21", "bf16"),
    ("b21_bf_m24576_qkv", 24576, 9216, 8192, "blind21", "bf16"),
    ("b21_bf_rec_n192", 98304, 192, 1536, "blind21", "bf16"),
    ("b21_bf_odd_nk", 6000, 3001, 2047, "blind21", "bf16"),
    ("b21_h_decode_down", 1, 6144, 16384, "blind21", "fp16"),
    ("b21_h_m40_up", 40, 24576, 3072, "blind21", "fp16"),
    ("b21_h_m640_moe", 640, 16384, 6144, "blind21", "fp16"),
    ("b21_h_m6144_o", 6144, 3072, 3072, "blind21", "fp16"),
    ("b21_h_m57344_up", 57344, 16384, 4096, "blind21", "fp16"),
    ("b21_h_rec_n1536", 32768, 1536, 640, "blind21", "fp16"),
    ("b21_h_odd_mn", 2222, 7777, 4096, "blind21", "fp16"),
    ("b21_f8_decode_qkv", 1, 10240, 6144, "blind21", "fp8"),
    ("b21_f8_m12_down", 12, 3072, 24576, "blind21", "fp8"),
    ("b21_f8_m256_moe", 256, 16384, 6144, "blind21", "fp8"),
    ("b21_f8_m1536_o", 1536, 8192, 8192, "blind21", "fp8"),
    ("b21_f8_m16384_down", 16384, 5120, 17920, "blind21", "fp8"),
    ("b21_f8_rec_n384", 131072, 384, 768, "blind21", "fp8"),
    ("b21_f8_odd_k", 4096, 6144, 1800, "blind21", "fp8"),
    ("b21_f32_decode_up", 1, 16384, 4096, "blind21", "fp32"),
    ("b21_f32_m56_o", 56, 6144, 6144, "blind21", "fp32"),
    ("b21_f32_m448_moe", 448, 6144, 2048, "blind21", "fp32"),
    ("b21_f32_m1024_down", 1024, 3072, 24576, "blind21", "fp32"),
    ("b21_f32_m16384_qkv", 16384, 3584, 3072, "blind21", "fp32"),
    ("b21_f32_rec_n768", 65536, 768, 384, "blind21", "fp32"),
    ("b21_f32_odd_all", 1777, 2999, 3111, "blind21", "fp32"),
]
BLIND22 = [  # defined 2026-12-05 (session 31) with the model of session 25, before any sweep of it: Llama-3.2-3B,
    # Qwen2-57B-A14B experts, Yi-34B, Command-R, StarCoder2-15B, MPT-30B, Grok-1 experts, rec MLPs, off-grid sizes; to
    # be swept like blind21 and scored once (split "blind22") on whichever GPU is lent
    ("b22_bf_decode_o", 1, 3072, 3072, "blind22", "bf16"),
    ("b22_bf_m48_up", 48, 20480, 7168, "blind22", "bf16"),
    ("b22_bf_m384_moe", 384, 2560, 3584, "blind22", "bf16"),
    ("b22_bf_m2560_qkv", 2560, 8192, 8192, "blind22", "bf16"),
    ("b22_bf_m40960_down", 40960, 6144, 24576, "blind22", "bf16"),
    ("b22_bf_rec_n320", 65536, 320, 2048, "blind22", "bf16"),
    ("b22_bf_odd_mk", 4321, 4096, 3000, "blind22", "bf16"),
    ("b22_h_decode_qkv", 1, 9216, 7168, "blind22", "fp16"),
    ("b22_h_m20_down", 20, 6144, 24576, "blind22", "fp16"),
    ("b22_h_m768_moe", 768, 32768, 6144, "blind22", "fp16"),
    ("b22_h_m4096_up", 4096, 16384, 6144, "blind22", "fp16"),
    ("b22_h_m32768_o", 32768, 7168, 7168, "blind22", "fp16"),
    ("b22_h_rec_n256", 131072, 256, 1024, "blind22", "fp16"),
    ("b22_h_odd_all", 3333, 2500, 1999, "blind22", "fp16"),
    ("b22_f8_decode_up", 1, 20480, 7168, "blind22", "fp8"),
    ("b22_f8_m32_o", 32, 8192, 8192, "blind22", "fp8"),
    ("b22_f8_m512_moe", 512, 2560, 3584, "blind22", "fp8"),
    ("b22_f8_m3072_qkv", 3072, 10240, 6144, "blind22", "fp8"),
    ("b22_f8_m49152_up", 49152, 16384, 6144, "blind22", "fp8"),
    ("b22_f8_rec_n640", 98304, 640, 1536, "blind22", "fp8"),
    ("b22_f8_odd_n", 4096, 5555, 4096, "blind22", "fp8"),
    ("b22_f32_decode_o", 1, 8192, 8192, "blind22", "fp32"),
    ("b22_f32_m16_up", 16, 12288, 3072, "blind22", "fp32"),
    ("b22_f32_m640_moe", 640, 2560, 3584, "blind22", "fp32"),
    ("b22_f32_m2048_down", 2048, 3072, 12288, "blind22", "fp32"),
    ("b22_f32_m24576_o", 24576, 4096, 4096, "blind22", "fp32"),
    ("b22_f32_rec_n1024", 65536, 1024, 512, "blind22", "fp32"),
    ("b22_f32_odd_mn", 2999, 4444, 2048, "blind22", "fp32"),
]
BLIND23 = [  # defined 2026-12-05 (session 32) after session 32's model change (490cd54), before any sweep of it:
    # Falcon-7B, Mistral-Small-24B, Snowflake Arctic and OLMoE experts, InternLM2-20B, Llama-3.2-1B, Qwen2.5-0.5B,
    # Llama-3.1-405B, rec MLPs, off-grid sizes; to be swept like blind22 and scored once (split "blind23")
    ("b23_bf_decode_up", 1, 18176, 4544, "blind23", "bf16"),
    ("b23_bf_m16_down", 16, 5120, 32768, "blind23", "bf16"),
    ("b23_bf_m160_moe", 160, 4864, 7168, "blind23", "bf16"),
    ("b23_bf_m1536_qkv", 1536, 8192, 6144, "blind23", "bf16"),
    ("b23_bf_m16384_up", 16384, 8192, 2048, "blind23", "bf16"),
    ("b23_bf_rec_n224", 131072, 224, 768, "blind23", "bf16"),
    ("b23_bf_odd_n", 2500, 6001, 3072, "blind23", "bf16"),
    ("b23_h_decode_down", 1, 896, 4864, "blind23", "fp16"),
    ("b23_h_m56_up", 56, 32768, 5120, "blind23", "fp16"),
    ("b23_h_m288_moe", 288, 2048, 2048, "blind23", "fp16"),
    ("b23_h_m2048_o", 2048, 6144, 6144, "blind23", "fp16"),
    ("b23_h_m32768_down", 32768, 4544, 18176, "blind23", "fp16"),
    ("b23_h_rec_n448", 65536, 448, 1536, "blind23", "fp16"),
    ("b23_h_odd_k", 4096, 4096, 3001, "blind23", "fp16"),
    ("b23_f8_decode_down", 1, 16384, 53248, "blind23", "fp8"),
    ("b23_f8_m8_up", 8, 53248, 16384, "blind23", "fp8"),
    ("b23_f8_m96_moe", 96, 9728, 7168, "blind23", "fp8"),
    ("b23_f8_m768_qkv", 768, 18432, 16384, "blind23", "fp8"),
    ("b23_f8_m8192_down", 8192, 4544, 18176, "blind23", "fp8"),
    ("b23_f8_rec_n896", 65536, 896, 384, "blind23", "fp8"),
    ("b23_f8_odd_mn", 3457, 5001, 4096, "blind23", "fp8"),
    ("b23_f32_decode_qkv", 1, 3072, 2048, "blind23", "fp32"),
    ("b23_f32_m40_down", 40, 2048, 8192, "blind23", "fp32"),
    ("b23_f32_m208_moe", 208, 2816, 2048, "blind23", "fp32"),
    ("b23_f32_m3072_up", 3072, 9728, 2560, "blind23", "fp32"),
    ("b23_f32_m65536_o", 65536, 2048, 2048, "blind23", "fp32"),
    ("b23_f32_rec_n160", 131072, 160, 512, "blind23", "fp32"),
    ("b23_f32_odd_nk", 3000, 1777, 2999, "blind23", "fp32"),
]
BLIND24 = [  # defined 2026-12-05 (session 32) after the 16-bit store-row change (b875fcd), before any sweep of it:
    # Gemma-3-12B and -27B, Phi-3.5-MoE and Qwen3-30B-A3B experts, Mistral-Nemo-12B, Qwen3-8B, Granite-3-2B, rec MLPs,
    # off-grid sizes; to be swept like blind23 and scored once (split "blind24")
    ("b24_bf_decode_down", 1, 3840, 15360, "blind24", "bf16"),
    ("b24_bf_m12_up", 12, 43008, 5376, "blind24", "bf16"),
    ("b24_bf_m96_moe", 96, 12800, 4096, "blind24", "bf16"),
    ("b24_bf_m640_qkv", 640, 6144, 5120, "blind24", "bf16"),
    ("b24_bf_m12288_o", 12288, 5376, 5376, "blind24", "bf16"),
    ("b24_bf_rec_n80", 131072, 80, 1024, "blind24", "bf16"),
    ("b24_bf_odd_mk", 3333, 4096, 2222, "blind24", "bf16"),
    ("b24_h_decode_up", 1, 24576, 4096, "blind24", "fp16"),
    ("b24_h_m28_down", 28, 4096, 12288, "blind24", "fp16"),
    ("b24_h_m416_moe", 416, 1536, 2048, "blind24", "fp16"),
    ("b24_h_m3072_qkv", 3072, 8192, 3840, "blind24", "fp16"),
    ("b24_h_m24576_up", 24576, 28672, 5120, "blind24", "fp16"),
    ("b24_h_rec_n576", 65536, 576, 2048, "blind24", "fp16"),
    ("b24_h_odd_mn", 4999, 3001, 4096, "blind24", "fp16"),
    ("b24_f8_decode_qkv", 1, 8192, 3840, "blind24", "fp8"),
    ("b24_f8_m4_down", 4, 5376, 21504, "blind24", "fp8"),
    ("b24_f8_m224_moe", 224, 1536, 2048, "blind24", "fp8"),
    ("b24_f8_m2048_up", 2048, 28672, 5120, "blind24", "fp8"),
    ("b24_f8_m32768_o", 32768, 3840, 4096, "blind24", "fp8"),
    ("b24_f8_rec_n320", 131072, 320, 640, "blind24", "fp8"),
    ("b24_f8_odd_k", 6144, 4096, 2999, "blind24", "fp8"),
    ("b24_f32_decode_down", 1, 2048, 8192, "blind24", "fp32"),
    ("b24_f32_m8_up", 8, 16384, 2048, "blind24", "fp32"),
    ("b24_f32_m96_moe", 96, 12800, 4096, "blind24", "fp32"),
    ("b24_f32_m1536_o", 1536, 4096, 4096, "blind24", "fp32"),
    ("b24_f32_m16384_down", 16384, 2048, 8192, "blind24", "fp32"),
    ("b24_f32_rec_n256", 131072, 256, 1024, "blind24", "fp32"),
    ("b24_f32_odd_mn", 2777, 3333, 2048, "blind24", "fp32"),
]
BLIND25 = [  # defined 2026-12-05 (session 32) with the final model of the session (b875fcd), no change after it:
    # Pythia-12B, OPT-30B, DeepSeek-V2 and Llama-4-Scout experts, T5-XXL, ViT-H, BLOOM-7B, Whisper-large, CLIP-L, rec
    # MLPs, off-grid sizes; to be swept like blind24 and scored once (split "blind25")
    ("b25_bf_decode_up", 1, 20480, 5120, "blind25", "bf16"),
    ("b25_bf_m4_down", 4, 7168, 28672, "blind25", "bf16"),
    ("b25_bf_m192_moe", 192, 3072, 5120, "blind25", "bf16"),
    ("b25_bf_m4096_ff", 4096, 10240, 4096, "blind25", "bf16"),
    ("b25_bf_m65536_vit", 65536, 5120, 1280, "blind25", "bf16"),
    ("b25_bf_rec_n112", 98304, 112, 2048, "blind25", "bf16"),
    ("b25_bf_odd_all", 2345, 3457, 1999, "blind25", "bf16"),
    ("b25_h_decode_o", 1, 7168, 7168, "blind25", "fp16"),
    ("b25_h_m8_up", 8, 16384, 4096, "blind25", "fp16"),
    ("b25_h_m320_moe", 320, 16384, 5120, "blind25", "fp16"),
    ("b25_h_m4096_down", 4096, 1280, 5120, "blind25", "fp16"),
    ("b25_h_m16384_clip", 16384, 4096, 1024, "blind25", "fp16"),
    ("b25_h_rec_n1280", 65536, 1280, 320, "blind25", "fp16"),
    ("b25_h_odd_nk", 3072, 3001, 2001, "blind25", "fp16"),
    ("b25_f8_decode_up", 1, 57344, 7168, "blind25", "fp8"),
    ("b25_f8_m16_o", 16, 5120, 5120, "blind25", "fp8"),
    ("b25_f8_m64_moe", 64, 16384, 5120, "blind25", "fp8"),
    ("b25_f8_m4096_down", 4096, 5120, 20480, "blind25", "fp8"),
    ("b25_f8_m65536_qkv", 65536, 6144, 4096, "blind25", "fp8"),
    ("b25_f8_rec_n192", 131072, 192, 1536, "blind25", "fp8"),
    ("b25_f8_odd_mk", 5001, 4096, 3003, "blind25", "fp8"),
    ("b25_f32_decode_down", 1, 4096, 10240, "blind25", "fp32"),
    ("b25_f32_m32_up", 32, 10240, 4096, "blind25", "fp32"),
    ("b25_f32_m512_moe", 512, 3072, 5120, "blind25", "fp32"),
    ("b25_f32_m2048_qkv", 2048, 6144, 4096, "blind25", "fp32"),
    ("b25_f32_m32768_down", 32768, 1280, 5120, "blind25", "fp32"),
    ("b25_f32_rec_n48", 131072, 48, 1024, "blind25", "fp32"),
    ("b25_f32_odd_k", 4096, 2048, 3333, "blind25", "fp32"),
]
BLIND26 = [  # defined 2026-12-05 (session 33) before any sweep and before that session's DRAM terms; not swept yet (no
    # device was lent after it): Mixtral-8x22B, Llama-2-70B, Qwen2-57B-A14B experts, Falcon-40B, Gemma-2-27B, SDXL
    # attention, DLRM-style rec MLPs, off-grid sizes; to be swept like blind25 and scored once (split "blind26")
    ("b26_bf_decode_up", 1, 22016, 6144, "blind26", "bf16"),
    ("b26_bf_m24_o", 24, 6656, 6656, "blind26", "bf16"),
    ("b26_bf_m288_moe", 288, 2560, 3584, "blind26", "bf16"),
    ("b26_bf_m6144_qkv", 6144, 9216, 8192, "blind26", "bf16"),
    ("b26_bf_m32768_attn", 32768, 1920, 640, "blind26", "bf16"),
    ("b26_bf_rec_n144", 65536, 144, 1536, "blind26", "bf16"),
    ("b26_bf_odd_nk", 1777, 5003, 2561, "blind26", "bf16"),
    ("b26_h_decode_down", 1, 4608, 36864, "blind26", "fp16"),
    ("b26_h_m12_up", 12, 28672, 8192, "blind26", "fp16"),
    ("b26_h_m640_moe", 640, 5120, 2560, "blind26", "fp16"),
    ("b26_h_m8192_o", 8192, 4608, 4096, "blind26", "fp16"),
    ("b26_h_m49152_ff", 49152, 2560, 640, "blind26", "fp16"),
    ("b26_h_rec_n96", 131072, 96, 1536, "blind26", "fp16"),
    ("b26_h_odd_mk", 3001, 6144, 1777, "blind26", "fp16"),
    ("b26_f8_decode_o", 1, 6144, 6144, "blind26", "fp8"),
    ("b26_f8_m32_up", 32, 36864, 4608, "blind26", "fp8"),
    ("b26_f8_m160_moe", 160, 5632, 6144, "blind26", "fp8"),
    ("b26_f8_m3072_down", 3072, 8192, 28672, "blind26", "fp8"),
    ("b26_f8_m24576_qkv", 24576, 10240, 8192, "blind26", "fp8"),
    ("b26_f8_rec_n128", 131072, 128, 2048, "blind26", "fp8"),
    ("b26_f8_odd_all", 4444, 3333, 2999, "blind26", "fp8"),
    ("b26_f32_decode_up", 1, 13824, 6144, "blind26", "fp32"),
    ("b26_f32_m48_o", 48, 6144, 6144, "blind26", "fp32"),
    ("b26_f32_m320_moe", 320, 2816, 4096, "blind26", "fp32"),
    ("b26_f32_m4096_up", 4096, 5632, 2048, "blind26", "fp32"),
    ("b26_f32_m24576_down", 24576, 1536, 4096, "blind26", "fp32"),
    ("b26_f32_rec_n64", 98304, 64, 1536, "blind26", "fp32"),
    ("b26_f32_odd_n", 4096, 3001, 4096, "blind26", "fp32"),
]
BLIND27 = [  # defined 2026-12-06 (session 35) before any model change of the session (model as at c83b7e6):
    # Llama-3-405B, Qwen2.5-72B, DeepSeek-V3 experts, Phi-3-medium, Gemma-7B, Mistral-Large, Command-R, Yi-34B, rec
    # MLPs, off-grid sizes; more fp8 rows at M <= 8 (blind26's weakest); swept like blind26, scored once ("blind27")
    ("b27_bf_decode_o", 1, 16384, 16384, "blind27", "bf16"),
    ("b27_bf_m16_up", 16, 29568, 8192, "blind27", "bf16"),
    ("b27_bf_m256_moe", 256, 2048, 7168, "blind27", "bf16"),
    ("b27_bf_m8192_down", 8192, 5120, 17920, "blind27", "bf16"),
    ("b27_bf_m16384_up", 16384, 6144, 3072, "blind27", "bf16"),
    ("b27_bf_rec_n80", 131072, 80, 1024, "blind27", "bf16"),
    ("b27_bf_odd_all", 2999, 4001, 3001, "blind27", "bf16"),
    ("b27_h_decode_up", 1, 28672, 12288, "blind27", "fp16"),
    ("b27_h_m4_o", 4, 8192, 8192, "blind27", "fp16"),
    ("b27_h_m384_moe", 384, 7168, 2048, "blind27", "fp16"),
    ("b27_h_m2048_qkv", 2048, 10240, 8192, "blind27", "fp16"),
    ("b27_h_m65536_attn", 65536, 1024, 1024, "blind27", "fp16"),
    ("b27_h_rec_n160", 98304, 160, 1024, "blind27", "fp16"),
    ("b27_h_odd_nk", 1234, 5555, 4444, "blind27", "fp16"),
    ("b27_f8_decode_down", 1, 7168, 20480, "blind27", "fp8"),
    ("b27_f8_m2_up", 2, 22528, 8192, "blind27", "fp8"),
    ("b27_f8_m8_o", 8, 12288, 12288, "blind27", "fp8"),
    ("b27_f8_m48_moe", 48, 4096, 7168, "blind27", "fp8"),
    ("b27_f8_m1024_qkv", 1024, 9216, 6144, "blind27", "fp8"),
    ("b27_f8_m16384_up", 16384, 24576, 3072, "blind27", "fp8"),
    ("b27_f8_rec_n96", 131072, 96, 1024, "blind27", "fp8"),
    ("b27_f8_odd_all", 3777, 2222, 5555, "blind27", "fp8"),
    ("b27_f32_decode_o", 1, 5120, 5120, "blind27", "fp32"),
    ("b27_f32_m16_up", 16, 17920, 5120, "blind27", "fp32"),
    ("b27_f32_m768_moe", 768, 2048, 7168, "blind27", "fp32"),
    ("b27_f32_m8192_o", 8192, 4096, 4096, "blind27", "fp32"),
    ("b27_f32_m65536_down", 65536, 768, 3072, "blind27", "fp32"),
    ("b27_f32_rec_n32", 131072, 32, 512, "blind27", "fp32"),
    ("b27_f32_odd_m", 4001, 4096, 2048, "blind27", "fp32"),
]
BLIND28 = [  # defined 2026-12-06 (session 35) after blind27 was scored and before any model change of the session:
    # GPT-J-6B, Falcon-180B, Baichuan2-13B, InternLM2-20B, Mixtral-8x7B and Qwen3-30B-A3B experts, GLM-4-9B, BERT-large,
    # SAM ViT-H, rec MLPs, off-grid sizes; small-M rows of every dtype (blind27's misses); scored once ("blind28")
    ("b28_bf_decode_up", 1, 59392, 14848, "blind28", "bf16"),
    ("b28_bf_m8_o", 8, 5120, 5120, "blind28", "bf16"),
    ("b28_bf_m96_moe", 96, 1536, 2048, "blind28", "bf16"),
    ("b28_bf_m4096_up", 4096, 16384, 4096, "blind28", "bf16"),
    ("b28_bf_m32768_bert", 32768, 4096, 1024, "blind28", "bf16"),
    ("b28_bf_rec_n224", 65536, 224, 2048, "blind28", "bf16"),
    ("b28_bf_odd_mn", 3333, 2777, 4096, "blind28", "bf16"),
    ("b28_h_decode_down", 1, 5120, 13696, "blind28", "fp16"),
    ("b28_h_m24_up", 24, 16384, 6144, "blind28", "fp16"),
    ("b28_h_m448_moe", 448, 14336, 4096, "blind28", "fp16"),
    ("b28_h_m8192_qkv", 8192, 12288, 4096, "blind28", "fp16"),
    ("b28_h_m65536_sam", 65536, 3840, 1280, "blind28", "fp16"),
    ("b28_h_rec_n64", 131072, 64, 2048, "blind28", "fp16"),
    ("b28_h_odd_k", 2048, 4096, 3001, "blind28", "fp16"),
    ("b28_f8_decode_qkv", 1, 6144, 4096, "blind28", "fp8"),
    ("b28_f8_m4_down", 4, 4096, 13696, "blind28", "fp8"),
    ("b28_f8_m16_up", 16, 27392, 5120, "blind28", "fp8"),
    ("b28_f8_m128_moe", 128, 4096, 14336, "blind28", "fp8"),
    ("b28_f8_m2048_o", 2048, 6144, 6144, "blind28", "fp8"),
    ("b28_f8_m32768_up", 32768, 14336, 4096, "blind28", "fp8"),
    ("b28_f8_rec_n160", 131072, 160, 2048, "blind28", "fp8"),
    ("b28_f8_odd_nk", 4096, 3001, 5003, "blind28", "fp8"),
    ("b28_f32_decode_up", 1, 16384, 4096, "blind28", "fp32"),
    ("b28_f32_m8_o", 8, 6144, 6144, "blind28", "fp32"),
    ("b28_f32_m192_moe", 192, 768, 2048, "blind28", "fp32"),
    ("b28_f32_m2048_up", 2048, 13696, 5120, "blind28", "fp32"),
    ("b28_f32_m16384_o", 16384, 4096, 4096, "blind28", "fp32"),
    ("b28_f32_rec_n128", 98304, 128, 2048, "blind28", "fp32"),
    ("b28_f32_odd_all", 3001, 2999, 3003, "blind28", "fp32"),
]
BLIND29 = [  # defined 2026-12-06 (session 35) after blind28 was scored, before the session's second model change:
    # OLMo-2-13B, Mistral-Nemo-12B, Qwen2.5-32B, DBRX and Qwen1.5-MoE experts, Llama-3.2-3B, Granite-20B, DiT-XL, rec
    # MLPs, off-grid sizes; swept like blind28 and scored once ("blind29")
    ("b29_bf_decode_qkv", 1, 7168, 5120, "blind29", "bf16"),
    ("b29_bf_m32_down", 32, 5120, 13824, "blind29", "bf16"),
    ("b29_bf_m224_moe", 224, 10752, 6144, "blind29", "bf16"),
    ("b29_bf_m2048_up", 2048, 27648, 5120, "blind29", "bf16"),
    ("b29_bf_m16384_dit", 16384, 1152, 4608, "blind29", "bf16"),
    ("b29_bf_rec_n176", 131072, 176, 1024, "blind29", "bf16"),
    ("b29_bf_odd_k", 4096, 4096, 2777, "blind29", "bf16"),
    ("b29_h_decode_o", 1, 5120, 5120, "blind29", "fp16"),
    ("b29_h_m2_up", 2, 14336, 5120, "blind29", "fp16"),
    ("b29_h_m160_moe", 160, 2816, 2048, "blind29", "fp16"),
    ("b29_h_m4096_qkv", 4096, 5120, 3072, "blind29", "fp16"),
    ("b29_h_m32768_down", 32768, 3072, 8192, "blind29", "fp16"),
    ("b29_h_rec_n112", 65536, 112, 1024, "blind29", "fp16"),
    ("b29_h_odd_mn", 2999, 3001, 4096, "blind29", "fp16"),
    ("b29_f8_decode_up", 1, 13824, 5120, "blind29", "fp8"),
    ("b29_f8_decode_o", 1, 5120, 5120, "blind29", "fp8"),
    ("b29_f8_m8_down", 8, 6144, 24576, "blind29", "fp8"),
    ("b29_f8_m64_moe", 64, 21504, 6144, "blind29", "fp8"),
    ("b29_f8_m1024_up", 1024, 16384, 3072, "blind29", "fp8"),
    ("b29_f8_m16384_o", 16384, 6144, 6144, "blind29", "fp8"),
    ("b29_f8_rec_n224", 131072, 224, 1024, "blind29", "fp8"),
    ("b29_f8_odd_mk", 3001, 4096, 4444, "blind29", "fp8"),
    ("b29_f32_decode_down", 1, 3072, 8192, "blind29", "fp32"),
    ("b29_f32_m24_o", 24, 5120, 5120, "blind29", "fp32"),
    ("b29_f32_m256_moe", 256, 1408, 2048, "blind29", "fp32"),
    ("b29_f32_m4096_qkv", 4096, 7168, 5120, "blind29", "fp32"),
    ("b29_f32_m32768_up", 32768, 2048, 1024, "blind29", "fp32"),
    ("b29_f32_rec_n96", 131072, 96, 1024, "blind29", "fp32"),
    ("b29_f32_odd_n", 2048, 3333, 4096, "blind29", "fp32"),
]
BLIND30 = [  # defined 2026-12-06 (session 36) after blind29 was scored and before any model change of the session:
    # Llama-3.1-70B, Gemma-2-27B, Phi-3-medium, Yi-34B, DeepSeek-V2-Lite and OLMoE experts, Command-R, ViT-L, T5-XL,
    # rec MLPs, off-grid sizes; two fp8 decode rows with N <= 16k (blind26-29's recurring miss); scored once ("blind30")
    ("b30_bf_decode_up", 1, 28672, 8192, "blind30", "bf16"),
    ("b30_bf_m16_o", 16, 4608, 4096, "blind30", "bf16"),
    ("b30_bf_m320_moe", 320, 1408, 2048, "blind30", "bf16"),
    ("b30_bf_m4096_down", 4096, 5120, 17920, "blind30", "bf16"),
    ("b30_bf_m65536_vit", 65536, 4096, 1024, "blind30", "bf16"),
    ("b30_bf_rec_n192", 131072, 192, 1536, "blind30", "bf16"),
    ("b30_bf_odd_n", 4096, 3777, 4096, "blind30", "bf16"),
    ("b30_h_decode_qkv", 1, 9216, 4608, "blind30", "fp16"),
    ("b30_h_m4_down", 4, 7168, 20480, "blind30", "fp16"),
    ("b30_h_m128_moe", 128, 2048, 1024, "blind30", "fp16"),
    ("b30_h_m2048_up", 2048, 22528, 8192, "blind30", "fp16"),
    ("b30_h_m16384_t5", 16384, 2048, 5120, "blind30", "fp16"),
    ("b30_h_rec_n80", 131072, 80, 2048, "blind30", "fp16"),
    ("b30_h_odd_mk", 3003, 4096, 3333, "blind30", "fp16"),
    ("b30_f8_decode_o", 1, 8192, 8192, "blind30", "fp8"),
    ("b30_f8_decode_qkv", 1, 10240, 8192, "blind30", "fp8"),
    ("b30_f8_m2_up", 2, 35840, 5120, "blind30", "fp8"),
    ("b30_f8_m32_down", 32, 4608, 36864, "blind30", "fp8"),
    ("b30_f8_m256_moe", 256, 2048, 1408, "blind30", "fp8"),
    ("b30_f8_m4096_up", 4096, 20480, 7168, "blind30", "fp8"),
    ("b30_f8_rec_n96", 131072, 96, 2048, "blind30", "fp8"),
    ("b30_f8_odd_mn", 2777, 5003, 4096, "blind30", "fp8"),
    ("b30_f32_decode_o", 1, 4608, 4096, "blind30", "fp32"),
    ("b30_f32_m16_up", 16, 17920, 5120, "blind30", "fp32"),
    ("b30_f32_m160_moe", 160, 1024, 2048, "blind30", "fp32"),
    ("b30_f32_m8192_o", 8192, 8192, 8192, "blind30", "fp32"),
    ("b30_f32_m65536_vit", 65536, 1024, 4096, "blind30", "fp32"),
    ("b30_f32_rec_n160", 65536, 160, 1024, "blind30", "fp32"),
    ("b30_f32_odd_k", 3072, 3072, 3001, "blind30", "fp32"),
]
BLIND31 = [  # defined 2026-12-06 (session 37) after blind30 was scored and before any model change of the session:
    # Qwen2.5-72B, Mistral-Large-2, Llama-3.2-3B, Gemma-3-12B, DeepSeek-V3 and Mixtral experts, BERT-large, rec MLPs,
    # off-grid sizes; three fp8 rows at M <= 2 (the recurring fp8 miss); scored once ("blind31")
    ("b31_bf_decode_o", 1, 8192, 8192, "blind31", "bf16"),
    ("b31_bf_m8_up", 8, 29568, 8192, "blind31", "bf16"),
    ("b31_bf_m192_moe", 192, 2048, 7168, "blind31", "bf16"),
    ("b31_bf_m2048_qkv", 2048, 10240, 8192, "blind31", "bf16"),
    ("b31_bf_m32768_bert", 32768, 4096, 1024, "blind31", "bf16"),
    ("b31_bf_rec_n112", 131072, 112, 2048, "blind31", "bf16"),
    ("b31_bf_odd_k", 4096, 4096, 3003, "blind31", "bf16"),
    ("b31_h_decode_up", 1, 15360, 3840, "blind31", "fp16"),
    ("b31_h_m24_o", 24, 12288, 12288, "blind31", "fp16"),
    ("b31_h_m512_moe", 512, 14336, 4096, "blind31", "fp16"),
    ("b31_h_m4096_down", 4096, 3072, 8192, "blind31", "fp16"),
    ("b31_h_m65536_bert", 65536, 1024, 4096, "blind31", "fp16"),
    ("b31_h_rec_n240", 65536, 240, 1536, "blind31", "fp16"),
    ("b31_h_odd_n", 2048, 5555, 4096, "blind31", "fp16"),
    ("b31_f8_decode_up", 1, 15360, 3840, "blind31", "fp8"),
    ("b31_f8_decode_o", 1, 12288, 12288, "blind31", "fp8"),
    ("b31_f8_m2_qkv", 2, 10240, 8192, "blind31", "fp8"),
    ("b31_f8_m16_down", 16, 8192, 29568, "blind31", "fp8"),
    ("b31_f8_m128_moe", 128, 4096, 7168, "blind31", "fp8"),
    ("b31_f8_m8192_up", 8192, 28672, 12288, "blind31", "fp8"),
    ("b31_f8_rec_n160", 131072, 160, 1024, "blind31", "fp8"),
    ("b31_f8_odd_mk", 3333, 8192, 5001, "blind31", "fp8"),
    ("b31_f32_decode_up", 1, 8192, 3072, "blind31", "fp32"),
    ("b31_f32_m48_o", 48, 3840, 3840, "blind31", "fp32"),
    ("b31_f32_m384_moe", 384, 2048, 4096, "blind31", "fp32"),
    ("b31_f32_m4096_up", 4096, 14336, 4096, "blind31", "fp32"),
    ("b31_f32_m32768_bert", 32768, 1024, 1024, "blind31", "fp32"),
    ("b31_f32_rec_n64", 131072, 64, 2048, "blind31", "fp32"),
    ("b31_f32_odd_mn", 3001, 2999, 2048, "blind31", "fp32"),
]
BLIND32 = [  # defined 2026-12-06 (session 37) after blind31 was scored, with no model change pending: swept now and
    # kept unopened for the next model change (Llama-3.1-405B, Qwen3-32B / 30B-A3B experts, Phi-4, Falcon-40B, ViT-H,
    # rec MLPs, off-grid sizes; fp8 rows at M <= 2 and M = 16..32 with long K, blind30-31's misses); scored once ("blind32")
    ("b32_bf_decode_up", 1, 53248, 16384, "blind32", "bf16"),
    ("b32_bf_m4_o", 4, 5120, 5120, "blind32", "bf16"),
    ("b32_bf_m96_moe", 96, 768, 2048, "blind32", "bf16"),
    ("b32_bf_m1024_qkv", 1024, 7168, 5120, "blind32", "bf16"),
    ("b32_bf_m16384_vith", 16384, 5120, 1280, "blind32", "bf16"),
    ("b32_bf_rec_n144", 131072, 144, 1024, "blind32", "bf16"),
    ("b32_bf_odd_mn", 3777, 2222, 4096, "blind32", "bf16"),
    ("b32_h_decode_o", 1, 5120, 5120, "blind32", "fp16"),
    ("b32_h_m32_up", 32, 25600, 5120, "blind32", "fp16"),
    ("b32_h_m256_moe", 256, 1536, 2048, "blind32", "fp16"),
    ("b32_h_m8192_down", 8192, 8192, 17920, "blind32", "fp16"),
    ("b32_h_m32768_vith", 32768, 1280, 5120, "blind32", "fp16"),
    ("b32_h_rec_n48", 131072, 48, 2048, "blind32", "fp16"),
    ("b32_h_odd_k", 2048, 2048, 7777, "blind32", "fp16"),
    ("b32_f8_decode_o", 1, 16384, 16384, "blind32", "fp8"),
    ("b32_f8_decode_qkv", 1, 7168, 5120, "blind32", "fp8"),
    ("b32_f8_m2_up", 2, 17920, 5120, "blind32", "fp8"),
    ("b32_f8_m24_down", 24, 5120, 25600, "blind32", "fp8"),
    ("b32_f8_m512_moe", 512, 768, 2048, "blind32", "fp8"),
    ("b32_f8_m2048_o", 2048, 16384, 16384, "blind32", "fp8"),
    ("b32_f8_rec_n192", 131072, 192, 2048, "blind32", "fp8"),
    ("b32_f8_odd_n", 4096, 6001, 4096, "blind32", "fp8"),
    ("b32_f32_decode_qkv", 1, 7168, 5120, "blind32", "fp32"),
    ("b32_f32_m8_o", 8, 5120, 5120, "blind32", "fp32"),
    ("b32_f32_m192_moe", 192, 768, 2048, "blind32", "fp32"),
    ("b32_f32_m2048_up", 2048, 17920, 5120, "blind32", "fp32"),
    ("b32_f32_m16384_vith", 16384, 1280, 1280, "blind32", "fp32"),
    ("b32_f32_rec_n112", 131072, 112, 1024, "blind32", "fp32"),
    ("b32_f32_odd_k", 4096, 2048, 3333, "blind32", "fp32"),
]
BLIND33 = [  # defined 2026-12-06 (session 41) after blind32 was scored once, with no model change pending: swept now
    # and kept unopened for the next model change (Llama-3.1-8B, Mistral-Nemo-12B, Gemma-2-9B, Qwen2.5-14B, StarCoder2-15B,
    # DeepSeek-V3 dense layers, Qwen3-235B experts, DiT-XL, rec MLPs, off-grid sizes; fp8 rows at M <= 2 and M = 16..48
    # with long K, the recurring fp8 misses); scored once ("blind33")
    ("b33_bf_decode_up", 1, 14336, 4096, "blind33", "bf16"),
    ("b33_bf_m12_o", 12, 6144, 6144, "blind33", "bf16"),
    ("b33_bf_m160_moe", 160, 1536, 4096, "blind33", "bf16"),
    ("b33_bf_m3072_qkv", 3072, 6144, 5120, "blind33", "bf16"),
    ("b33_bf_m65536_dit", 65536, 1152, 4608, "blind33", "bf16"),
    ("b33_bf_rec_n80", 131072, 80, 1536, "blind33", "bf16"),
    ("b33_bf_odd_mk", 2999, 4096, 4444, "blind33", "bf16"),
    ("b33_h_decode_down", 1, 3584, 14336, "blind33", "fp16"),
    ("b33_h_m48_up", 48, 13824, 5120, "blind33", "fp16"),
    ("b33_h_m384_moe", 384, 4096, 1536, "blind33", "fp16"),
    ("b33_h_m4096_o", 4096, 5120, 5120, "blind33", "fp16"),
    ("b33_h_m16384_dit", 16384, 4608, 1152, "blind33", "fp16"),
    ("b33_h_rec_n96", 131072, 96, 1024, "blind33", "fp16"),
    ("b33_h_odd_n", 4096, 3001, 2048, "blind33", "fp16"),
    ("b33_f8_decode_up", 1, 18432, 7168, "blind33", "fp8"),
    ("b33_f8_decode_o", 1, 4096, 4096, "blind33", "fp8"),
    ("b33_f8_m2_qkv", 2, 6144, 5120, "blind33", "fp8"),
    ("b33_f8_m48_down", 48, 7168, 18432, "blind33", "fp8"),
    ("b33_f8_m256_moe", 256, 1536, 4096, "blind33", "fp8"),
    ("b33_f8_m4096_up", 4096, 14336, 4096, "blind33", "fp8"),
    ("b33_f8_rec_n224", 131072, 224, 1024, "blind33", "fp8"),
    ("b33_f8_odd_k", 2048, 4096, 6007, "blind33", "fp8"),
    ("b33_f32_decode_o", 1, 6144, 6144, "blind33", "fp32"),
    ("b33_f32_m16_up", 16, 14336, 4096, "blind33", "fp32"),
    ("b33_f32_m128_moe", 128, 1536, 4096, "blind33", "fp32"),
    ("b33_f32_m1024_o", 1024, 5120, 5120, "blind33", "fp32"),
    ("b33_f32_m65536_dit", 65536, 1152, 1152, "blind33", "fp32"),
    ("b33_f32_rec_n160", 131072, 160, 2048, "blind33", "fp32"),
    ("b33_f32_odd_mn", 5555, 1999, 1024, "blind33", "fp32"),
]
BLIND34 = [  # defined 2026-12-07 (session 43) for the L1-overflow term (model.l1_overflow), before any of it was timed:
    # Qwen2.5-7B, Llama-2-7B, Phi-3-mini, Gemma-2-27B, ViT-L, BERT, MoE experts, rec MLPs, off-grid sizes; fp32 has 11
    # rows (the term touches fp32 alone); scored once ("blind34")
    ("b34_bf_decode_up", 1, 18944, 3584, "blind34", "bf16"),
    ("b34_bf_m24_down", 24, 3584, 18944, "blind34", "bf16"),
    ("b34_bf_m96_moe", 96, 2048, 7168, "blind34", "bf16"),
    ("b34_bf_m2048_up", 2048, 36864, 4608, "blind34", "bf16"),
    ("b34_bf_m16384_vit", 16384, 1024, 4096, "blind34", "bf16"),
    ("b34_bf_rec_n64", 131072, 64, 256, "blind34", "bf16"),
    ("b34_bf_odd_all", 1777, 5000, 3000, "blind34", "bf16"),
    ("b34_h_decode_up", 1, 8192, 3072, "blind34", "fp16"),
    ("b34_h_m32_up", 32, 14336, 4096, "blind34", "fp16"),
    ("b34_h_m200_down", 200, 4096, 14336, "blind34", "fp16"),
    ("b34_h_m1024_down", 1024, 3072, 8192, "blind34", "fp16"),
    ("b34_h_m32768_bert", 32768, 768, 3072, "blind34", "fp16"),
    ("b34_h_rec_n128", 65536, 128, 1024, "blind34", "fp16"),
    ("b34_h_odd_cube", 3000, 3000, 3000, "blind34", "fp16"),
    ("b34_f8_decode_up", 1, 11008, 4096, "blind34", "fp8"),
    ("b34_f8_m4_o", 4, 7168, 2048, "blind34", "fp8"),
    ("b34_f8_m64_sq", 64, 4096, 4096, "blind34", "fp8"),
    ("b34_f8_m512_up", 512, 18944, 3584, "blind34", "fp8"),
    ("b34_f8_m8192_k1024", 8192, 8192, 1024, "blind34", "fp8"),
    ("b34_f8_rec_n512", 65536, 512, 2048, "blind34", "fp8"),
    ("b34_f8_odd_all", 1500, 6000, 2500, "blind34", "fp8"),
    ("b34_f32_decode_up", 1, 11008, 4096, "blind34", "fp32"),
    ("b34_f32_m8_qkv", 8, 9216, 3072, "blind34", "fp32"),
    ("b34_f32_m64_moe", 64, 2048, 7168, "blind34", "fp32"),
    ("b34_f32_m256_o", 256, 3584, 3584, "blind34", "fp32"),
    ("b34_f32_m512_up", 512, 8192, 3072, "blind34", "fp32"),
    ("b34_f32_m2048_down", 2048, 3072, 8192, "blind34", "fp32"),
    ("b34_f32_m8192_vit", 8192, 4096, 1024, "blind34", "fp32"),
    ("b34_f32_m32768_bert", 32768, 1024, 1024, "blind34", "fp32"),
    ("b34_f32_rec_n256", 65536, 256, 512, "blind34", "fp32"),
    ("b34_f32_rec_k479", 16384, 1024, 479, "blind34", "fp32"),
    ("b34_f32_odd_all", 3333, 2777, 1555, "blind34", "fp32"),
]
BLIND35 = [  # defined 2026-12-07 (session 44), after blind34 was scored, before any of it was timed: Llama-3-70B,
    # Mixtral-8x7B experts, Qwen2-72B, Yi-34B, GPT-J, Falcon-40B, InternLM2-20B, DLRM layers, off-grid sizes; fp8 has 9
    # rows (blind34's weakest dtype); kept unopened for the next model change, scored once ("blind35")
    ("b35_bf_decode_qkv", 1, 10240, 8192, "blind35", "bf16"),
    ("b35_bf_m8_up", 8, 28672, 8192, "blind35", "bf16"),
    ("b35_bf_m160_moe", 160, 14336, 4096, "blind35", "bf16"),
    ("b35_bf_m4096_o", 4096, 7168, 7168, "blind35", "bf16"),
    ("b35_bf_m32768_gptj", 32768, 4096, 16384, "blind35", "bf16"),
    ("b35_bf_rec_n96", 131072, 96, 512, "blind35", "bf16"),
    ("b35_bf_odd_k", 3072, 3072, 3333, "blind35", "bf16"),
    ("b35_h_decode_down", 1, 8192, 29568, "blind35", "fp16"),
    ("b35_h_m16_qkv", 16, 7168, 7168, "blind35", "fp16"),
    ("b35_h_m640_moe", 640, 4096, 14336, "blind35", "fp16"),
    ("b35_h_m2048_falcon", 2048, 32768, 8192, "blind35", "fp16"),
    ("b35_h_m16384_o", 16384, 6144, 6144, "blind35", "fp16"),
    ("b35_h_rec_n384", 65536, 384, 1536, "blind35", "fp16"),
    ("b35_h_odd_m", 4321, 4096, 4096, "blind35", "fp16"),
    ("b35_f8_decode_o", 1, 7168, 7168, "blind35", "fp8"),
    ("b35_f8_m2_up", 2, 29568, 8192, "blind35", "fp8"),
    ("b35_f8_m48_qkv", 48, 10240, 8192, "blind35", "fp8"),
    ("b35_f8_m256_moe", 256, 14336, 4096, "blind35", "fp8"),
    ("b35_f8_m2048_o", 2048, 8192, 8192, "blind35", "fp8"),
    ("b35_f8_m16384_k512", 16384, 16384, 512, "blind35", "fp8"),
    ("b35_f8_rec_n256", 131072, 256, 1024, "blind35", "fp8"),
    ("b35_f8_odd_n", 4096, 7001, 4096, "blind35", "fp8"),
    ("b35_f8_odd_all", 2500, 3500, 1500, "blind35", "fp8"),
    ("b35_f32_decode_qkv", 1, 6144, 4096, "blind35", "fp32"),
    ("b35_f32_m32_down", 32, 4096, 14336, "blind35", "fp32"),
    ("b35_f32_m192_moe", 192, 2048, 4096, "blind35", "fp32"),
    ("b35_f32_m4096_sq", 4096, 4096, 4096, "blind35", "fp32"),
    ("b35_f32_m65536_dlrm", 65536, 512, 1024, "blind35", "fp32"),
    ("b35_f32_odd_mk", 3001, 2048, 2999, "blind35", "fp32"),
]
SUITES = {
    "full": SHAPES,
    "fresh": FRESH,
    "cal2": CAL2,
    "blind": BLIND,
    "cal3": CAL3,
    "blind2": BLIND2,
    "cal4": CAL4,
    "blind3": BLIND3,
    "blind4": BLIND4,
    "blind5": BLIND5,
    "blind6": BLIND6,
    "blind7": BLIND7,
    "blind8": BLIND8,
    "blind9": BLIND9,
    "cal5": CAL5,
    "blind10": BLIND10,
    "cal6": CAL6,
    "blind11": BLIND11,
    "blind12": BLIND12,
    "blind13": BLIND13,
    "blind14": BLIND14,
    "blind15": BLIND15,
    "blind16": BLIND16,
    "cal7": CAL7,
    "cal8": CAL8,
    "blind17": BLIND17,
    "blind18": BLIND18,
    "blind19": BLIND19,
    "blind20": BLIND20,
    "blind21": BLIND21,
    "blind22": BLIND22,
    "blind23": BLIND23,
    "blind24": BLIND24,
    "blind25": BLIND25,
    "blind26": BLIND26,
    "blind27": BLIND27,
    "blind28": BLIND28,
    "blind29": BLIND29,
    "blind30": BLIND30,
    "blind31": BLIND31,
    "blind32": BLIND32,
    "blind33": BLIND33,
    "blind34": BLIND34,
    "blind35": BLIND35,
}
SMOKE = ["m4096_o8b", "decode_qkv8b"]
DTYPES = ("bf16", "fp8")  # the default; cal4 and blind3 were run with --dtypes fp16,fp32
ELEM_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "fp32": 4}
TORCH_DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp8": torch.float8_e4m3fn, "fp32": torch.float32}
OUT_DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp8": torch.bfloat16, "fp32": torch.float32}
RETIME = 8  # fastest configs timed a second time per shape


def spec_class(m: int, n: int, k: int) -> str:
    """Triton specialises integer arguments on ==1 and %16==0: one compile per class."""

    def tag(v):
        return "1" if v == 1 else ("D" if v % 16 == 0 else "x")

    return tag(m) + tag(n) + tag(k)


def shape_configs(configs: list[tuple], m: int, dtype: str, stride: int = 1) -> list[int]:
    """Indices timed for this shape: small tiles only for small M, within shared memory (BLOCK_M 32
    runs mma.sync, which holds stages - 1 buffers: the compile records; the compile decides)."""
    elem = ELEM_BYTES[dtype]

    def buffers(c):
        return c[4] - 1 if c[0] < 64 else c[4]

    return [
        i
        for i, c in enumerate(configs)
        if (c[0] > 32 or m <= SMALL_M_LIMIT)
        and buffers(c) * (c[0] + c[1]) * c[2] * elem <= SMEM_LIMIT
        and i % stride == 0
    ]


# ---------------------------------------------------------------- tensors and launches


def make_operands(dtype: str, m: int, n: int, k: int, device="cuda"):
    gen = torch.Generator(device=device).manual_seed(m * 7 + n * 13 + k)
    a = torch.randn(m, k, device=device, generator=gen)
    b = torch.randn(k, n, device=device, generator=gen)
    if dtype != "fp8":
        elem = TORCH_DTYPE[dtype]
        return a.to(elem), b.to(elem), torch.empty(m, n, device=device, dtype=OUT_DTYPE[dtype])
    # fp8 e4m3fn; B column-major (stored [N, K] contiguous, used as its transpose); C bf16
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
    return a8, b8, torch.empty(m, n, device=device, dtype=torch.bfloat16)


def launch(a, b, c, cfg):
    bm, bn, bk, w, s, g = cfg
    m, k = a.shape
    n = b.shape[1]
    args = (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    kwargs = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, num_warps=w, num_stages=s)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    return matmul_kernel[grid](*args, **kwargs)


# ---------------------------------------------------------------- parallel compile


def _compile_task(task):
    dtype, m, n, k, cfg = task
    try:
        # MockTensor stand-ins (warmup wraps torch dtypes): specialisation depends only on the
        # integer arguments and 16-byte pointer alignment, which the real tensors also have
        elem = TORCH_DTYPE[dtype]
        b_strides = (1, k) if dtype == "fp8" else (n, 1)
        args = (elem, elem, OUT_DTYPE[dtype], m, n, k, k, 1) + b_strides + (n, 1)
        bm, bn, bk, w, s, g = cfg
        kern = matmul_kernel.warmup(
            *args, grid=(1,), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, num_warps=w, num_stages=s
        )
        kern._init_handles()  # loads the binary: raises OutOfResources when shared memory is over
        try:
            ptx = kern.asm["ptx"]
        except Exception:  # noqa: BLE001 - the instruction is a note, never worth a failed record
            ptx = ""
        mma = "wgmma" if "wgmma.mma_async" in ptx else ("mma" if "mma.sync" in ptx else ("fma" if ptx else "?"))
        return [kern.n_regs, kern.n_spills, kern.metadata.shared, mma]
    except Exception as exc:  # a config that does not compile or load is data, not a crash
        return repr(exc)[:200]


def compile_all(tasks, workers: int, timeout_s: float):
    """Results in task order; a task not done within timeout_s gets "timeout" (compiled later inline)."""
    ctx = __import__("multiprocessing").get_context("spawn")
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    futures = [pool.submit(_compile_task, t) for t in tasks]
    done, _ = cf.wait(futures, timeout=timeout_s)
    pool.shutdown(wait=False, cancel_futures=True)
    return [f.result() if f in done else "timeout" for f in futures]


# ---------------------------------------------------------------- timing

_FLUSH = None
_FLUSH_SINK = None


# how a sweep times, set once from the command line: --flush (sweeps before blind18 wrote, zero_, as
# triton.testing.do_bench does), --idle-s / --idle-above-ms, --second-pass-below-ms
TIMING = {
    "flush": "write",
    "idle_s": 0.0,
    "idle_above_ms": 0.3,
    "second_pass_below_ms": 0.0,
    "lead_us": 0.0,
    "max_reps": 25,
}
SPIN_CYCLES_PER_US = 1980  # the H200's top SM clock: torch.cuda._sleep counts clock cycles


def flush_l2() -> None:
    """Evict the operands from L2 before a timing.

    Writing the 256 MB buffer leaves L2 full of dirty lines, which the timed kernel then pays to write back:
    ~9 us or ~20-27 us for the same 9 us fp8 kernel, round to round (data/confirm_blind17.json, b17_f8_m160_moe).
    Reading it leaves clean lines that are dropped for free."""
    global _FLUSH, _FLUSH_SINK
    if _FLUSH is None:
        _FLUSH = torch.zeros(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
        _FLUSH_SINK = torch.zeros((), dtype=torch.int32, device="cuda")
    if TIMING["flush"] == "read":
        torch.amax(_FLUSH, dim=0, out=_FLUSH_SINK)
    else:
        _FLUSH.zero_()


def gpu_spin(us: float) -> None:
    """Keep the GPU busy for `us` while the CPU queues a start event and a launch: without it, a kernel shorter than
    Triton's Python launch path can start after its start event by the launch's CPU time (launch_gap.py)."""
    if us:
        torch.cuda._sleep(int(us * SPIN_CYCLES_PER_US))


def time_launch(fn, budget_ms: float, max_reps: int | None = None) -> float:
    """Median of per-launch CUDA-event times, L2 flushed before each launch."""
    max_reps = max_reps or TIMING["max_reps"]
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    estimate = max(start.elapsed_time(end), 1e-3)
    reps = int(min(max_reps, max(3, budget_ms / estimate)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for s, e in events:
        flush_l2()
        gpu_spin(TIMING["lead_us"])
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def cublas_ms(a, b, dtype):
    if dtype != "fp8":  # fp32: TF32 allowed, as the Triton kernel's tl.dot runs it
        torch.backends.cuda.matmul.allow_tf32 = dtype == "fp32"
        return time_launch(lambda: torch.matmul(a, b), 10)
    one = torch.ones((), device="cuda")
    try:
        return time_launch(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), 10)
    except Exception:
        return None


def reference_error(a, b, c, dtype):
    torch.backends.cuda.matmul.allow_tf32 = False  # an fp32 reference, whatever cuBLAS was last allowed
    ref = a.float() @ b.float()
    return float((c.float() - ref).norm() / ref.norm())


def rest_after(last_ms) -> None:
    """Let the GPU idle after a long timing, so the next one starts at the top SM clock.

    Back to back, long 16-bit GEMMs pull the H200 from 1980 to ~1450 MHz (data/h200_clock_drift.txt),
    and a config's time then depends on when in the sweep it was timed."""
    if TIMING["idle_s"] and (last_ms is None or last_ms > TIMING["idle_above_ms"]):
        torch.cuda.synchronize()
        time.sleep(TIMING["idle_s"])


def time_shape(dtype, name, m, n, k, split, configs, deadline, stride):
    a, b, c = make_operands(dtype, m, n, k)
    idx = shape_configs(configs, m, dtype, stride)
    ms = [None] * len(configs)
    default = configs.index((128, 128, 64, 4, 3, 8)) if (128, 128, 64, 4, 3, 8) in configs else idx[0]
    c.fill_(float("nan"))
    launch(a, b, c, configs[default])
    torch.cuda.synchronize()
    err = reference_error(a, b, c, dtype)
    last = None
    for i in idx:
        if time.time() > deadline:
            break
        rest_after(last)
        try:
            ms[i] = last = time_launch(lambda: launch(a, b, c, configs[i]), budget_ms=8.0)
        except Exception as exc:  # out of resources at launch: infeasible here
            msg = str(exc)
            if "out of resource" not in msg.lower() and "OutOfResources" not in type(exc).__name__:
                print(f"  {dtype} {name} cfg {configs[i]}: {type(exc).__name__}: {msg[:120]}", flush=True)
    first_pass = None
    shortest = min((x for x in ms if x is not None), default=1e9)
    if TIMING["second_pass_below_ms"] and shortest < TIMING["second_pass_below_ms"]:
        # a row of ~10-30 us kernels: one pass can run every config up to 2x slow for a stretch (cal7's re-times
        # 0.48-1.18 where cal8, the same shapes swept twice, agrees within 3 %); a second full pass in reverse
        # order, each config's faster timing kept, so neither the pick nor the best rests on one slow stretch
        first_pass = list(ms)
        for i in reversed(idx):
            if first_pass[i] is not None and time.time() < deadline:
                ms[i] = min(first_pass[i], time_launch(lambda: launch(a, b, c, configs[i]), budget_ms=8.0))
    # the fastest configs once more, in reverse order: how far a second timing moves them (noise)
    fastest = sorted((i for i in idx if ms[i] is not None), key=lambda i: ms[i])[:RETIME]
    retime = {}
    for i in reversed(fastest):
        if time.time() < deadline:
            rest_after(ms[i])
            retime[str(i)] = time_launch(lambda: launch(a, b, c, configs[i]), budget_ms=8.0)
    ref = cublas_ms(a, b, dtype)
    del a, b, c
    return {
        "name": name,
        "split": split,
        "dtype": dtype,
        "m": m,
        "n": n,
        "k": k,
        "ms": ms,
        "retime_ms": retime,
        "first_pass_ms": first_pass,
        "cublas_ms": ref,
        "rel_err": err,
    }


# ---------------------------------------------------------------- main


def suite_shapes(suite: str, shapes_file: str | None) -> list[tuple]:
    """The (name, m, n, k, split[, dtype]) rows to sweep: a --shapes file's, else the suite's."""
    if shapes_file:
        with open(shapes_file) as fh:
            return [tuple(row) for row in json.load(fh)]
    return [s for s in SHAPES if s[0] in SMOKE] if suite == "smoke" else SUITES[suite]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--suite", choices=("smoke", *SUITES), default="full")
    parser.add_argument(
        "--shapes", help="JSON list of [name, m, n, k, split, dtype] rows to sweep instead of a suite (re-timings)"
    )
    parser.add_argument("--budget-s", type=float, default=480)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 8)
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--idle-s", type=float, default=0.0, help="GPU idle before a timing that follows a long one")
    parser.add_argument("--idle-above-ms", type=float, default=0.3, help="what counts as long for --idle-s")
    parser.add_argument(
        "--second-pass-below-ms", type=float, default=0.0, help="time every config twice where a row's best is shorter"
    )
    parser.add_argument("--flush", choices=("write", "read"), default="write", help="how L2 is emptied before a timing")
    parser.add_argument("--lead-us", type=float, default=0.0, help="GPU spin before each timed launch (launch_gap.py)")
    parser.add_argument("--max-reps", type=int, default=25, help="timed launches per config at most")
    parser.add_argument("--config-stride", type=int, default=1, help="time every n-th config only (smoke runs)")
    args = parser.parse_args()
    TIMING.update(
        flush=args.flush,
        idle_s=args.idle_s,
        idle_above_ms=args.idle_above_ms,
        second_pass_below_ms=args.second_pass_below_ms,
        lead_us=args.lead_us,
        max_reps=args.max_reps,
    )
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    deadline = t0 + args.budget_s
    configs = all_configs()
    dtypes = args.dtypes.split(",")
    shapes = suite_shapes(args.suite, args.shapes)
    if args.shapes:
        args.suite = os.path.splitext(os.path.basename(args.shapes))[0]
    # a shape with a 6th field runs in that dtype only (blind5); the others in every --dtypes one
    jobs = [
        (shape[:5], dtype) for shape, dtype in itertools.product(shapes, dtypes) if len(shape) < 6 or shape[5] == dtype
    ]

    # one compile per (dtype, class, config) that some shape of that class will time
    tasks, keys = [], []
    for dtype in dtypes:
        by_class = {}
        for (_name, m, n, k, _split), _dtype in (job for job in jobs if job[1] == dtype):
            entry = by_class.setdefault(spec_class(m, n, k), (m, n, k, set()))
            entry[3].update(shape_configs(configs, m, dtype, args.config_stride))
        for cls, (m, n, k, idx) in by_class.items():
            for i in sorted(idx):
                tasks.append((dtype, m, n, k, configs[i]))
                keys.append((dtype, cls, i))
    print(
        f"{len(configs)} configs, {len(jobs)} (shape, dtype) rows, {len(tasks)} compiles on {args.workers} workers",
        flush=True,
    )
    compiled = compile_all(tasks, args.workers, args.budget_s * 0.55)
    t_compile = time.time() - t0
    print(f"compile: {t_compile:.1f} s ({len(tasks) / t_compile:.1f}/s)", flush=True)
    compile_info: dict = {}
    for (dtype, cls, i), info in zip(keys, compiled):
        compile_info.setdefault(dtype, {}).setdefault(cls, [None] * len(configs))[i] = info

    results = []
    out_path = os.path.join(args.out, f"sweep_{args.suite}.json")
    meta = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "compile_s": round(t_compile, 1),
        "fp32_dot": "tl.dot default input_precision (tf32)",
        "flush_bytes": 256 * 1024 * 1024,
        "timing": "median of CUDA events, L2 flushed",
        "idle_s": args.idle_s,
        "idle_above_ms": args.idle_above_ms,
        "second_pass_below_ms": args.second_pass_below_ms,
        "flush": args.flush,
        "lead_us": args.lead_us,
        "max_reps": args.max_reps,
    }
    for (name, m, n, k, split), dtype in jobs:
        if time.time() > deadline:
            print(f"deadline: skipping {dtype} {name}", flush=True)
            continue
        ts = time.time()
        row = time_shape(dtype, name, m, n, k, split, configs, deadline, args.config_stride)
        results.append(row)
        timed = [x for x in row["ms"] if x is not None]
        best = min(timed) if timed else float("nan")
        print(
            f"{dtype:5s} {name:16s} {m:6d}x{n:6d}x{k:6d} best {best:8.4f} ms cublas "
            f"{row['cublas_ms'] or float('nan'):8.4f} n={len(timed)} err {row['rel_err']:.1e} "
            f"({time.time() - ts:.1f} s)",
            flush=True,
        )
        meta["elapsed_s"] = round(time.time() - t0, 1)
        doc = {"meta": meta, "configs": [list(c) for c in configs], "compile": compile_info, "results": results}
        with open(out_path + ".tmp", "w") as fh:
            json.dump(doc, fh)
        os.replace(out_path + ".tmp", out_path)
    print(f"done in {time.time() - t0:.1f} s -> {out_path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
