"""Does ported code still pass and run as fast on NVIDIA? Original vs ported tree, same shapes, one GPU.

    python3 bench/ported_speed_h200.py OUT.json NAME=ORIGINAL_TREE,PORTED_TREE [NAME=...]

For each pair: the tree's own tests (`pytest -q` in the tree), then each public op timed with
triton.testing.do_bench (median of its timed runs, autotuning done in warm-up) in a fresh process per
tree, trees interleaved over ROUNDS rounds (original, ported, ported, original...) so clock drift hits
both; the figure kept per op is the median over rounds. Needs only torch, triton and pytest (no porter):
run it on the GPU machine. Figures are stored in bench/verify/ (see its README lines in the H6 report).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROUNDS = int(os.environ.get("PORTER_SPEED_ROUNDS", "2"))  # interleaved rounds per pair

# package -> op name -> (setup source, timed expression); shapes are the same for both trees
OPS = {
    "nvfirst": {
        "softmax_4096x32768_fp32": ("x = torch.randn(4096, 32768, device='cuda')", "nvfirst.softmax(x)"),
        "softmax_8192x1024_fp32": ("x = torch.randn(8192, 1024, device='cuda')", "nvfirst.softmax(x)"),
        "silu_mul_8192x8192_bf16": (
            "g = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16); u = torch.randn_like(g)",
            "nvfirst.silu_mul(g, u)",
        ),
        "matmul_tf32_4096": (
            "a = torch.randn(4096, 4096, device='cuda'); b = torch.randn(4096, 4096, device='cuda')",
            "nvfirst.matmul_tf32(a, b)",
        ),
        "quantize_fp8_8192x8192": ("x = torch.randn(8192, 8192, device='cuda')", "nvfirst.quantize_fp8(x)"),
        "fp8_matmul_4096": (
            "(aq, sa), (bq, sb) = nvfirst.quantize_fp8(torch.randn(4096, 4096, device='cuda')), "
            "nvfirst.quantize_fp8(torch.randn(4096, 4096, device='cuda'))",
            "nvfirst.fp8_matmul(aq, sa, bq, sb)",
        ),
    },
    "nvkernels": {
        "softmax_4096x8192_fp32": ("x = torch.randn(4096, 8192, device='cuda')", "nvkernels.softmax(x)"),
        "gelu_tanh_64M_fp32": ("x = torch.randn(64 * 2**20, device='cuda')", "nvkernels.gelu_tanh(x)"),
        "matmul_fp16_4096": (
            "a = torch.randn(4096, 4096, device='cuda', dtype=torch.float16); b = torch.randn_like(a)",
            "nvkernels.matmul(a, b)",
        ),
        "matmul_fp32_2048": (
            "a = torch.randn(2048, 2048, device='cuda'); b = torch.randn_like(a)",
            "nvkernels.matmul(a, b)",
        ),
        "fp8_matmul_4096": (
            "a = torch.randn(4096, 4096, device='cuda'); b = torch.randn_like(a)",
            "nvkernels.fp8_matmul(a, b)",
        ),
    },
}

TIMER = r"""
import json, sys
import torch, triton
sys.path.insert(0, sys.argv[1])
import {package}
out = {{}}
for name, (setup, timed) in json.loads(sys.argv[2]).items():
    scope = {{"torch": torch, "{package}": {package}}}
    exec(setup, scope)
    out[name] = triton.testing.do_bench(lambda: eval(timed, scope), warmup=50, rep=200)
print(json.dumps(out))
"""


def package_of(tree: Path) -> tuple[str, Path]:
    """(import name, directory to put on sys.path) for a tree of either layout."""
    for base in (tree / "src", tree):
        for name in OPS:
            if (base / name / "__init__.py").is_file():
                return name, base
    raise SystemExit(f"{tree}: no known package (one of {', '.join(OPS)})")


def run_tests(tree: Path) -> dict:
    start = time.monotonic()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("TRITON_INTERPRET", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|error|errors|skipped)", tail)}
    return {
        "returncode": done.returncode,
        "summary": tail,
        "counts": counts,
        "wall_s": round(time.monotonic() - start, 1),
    }


def time_ops(tree: Path) -> dict[str, float]:
    package, base = package_of(tree)
    code = TIMER.format(package=package)
    done = subprocess.run(
        [sys.executable, "-c", code, str(base), json.dumps(OPS[package])], capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: timing failed\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(name: str, original: Path, ported: Path) -> dict:
    trees = {"original": original, "ported": ported}
    tests = {label: run_tests(tree) for label, tree in trees.items()}
    rounds: dict[str, list[dict[str, float]]] = {"original": [], "ported": []}
    for index in range(ROUNDS):
        order = ("original", "ported") if index % 2 == 0 else ("ported", "original")
        for label in order:
            rounds[label].append(time_ops(trees[label]))
    ops = {}
    for op in rounds["original"][0]:
        first, second = (statistics.median(r[op] for r in rounds[label]) for label in ("original", "ported"))
        ops[op] = {
            "original_ms": round(first, 4),
            "ported_ms": round(second, 4),
            "ported_over_original": round(second / first, 3),
            "rounds_ms": {label: [round(r[op], 4) for r in rounds[label]] for label in rounds},
        }
    return {"trees": {label: str(tree) for label, tree in trees.items()}, "tests": tests, "ops": ops}


def main(out: str, pairs: list[str]) -> int:
    import torch
    import triton

    results = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "rounds": ROUNDS,
        "timer": "triton.testing.do_bench median, warmup=50 ms, rep=200 ms",
        "pairs": {},
    }
    for pair in pairs:
        name, _, trees = pair.partition("=")
        original, ported = (Path(p) for p in trees.split(","))
        results["pairs"][name] = measure(name, original, ported)
        for op, row in results["pairs"][name]["ops"].items():
            print(
                f"{name} {op}: original {row['original_ms']:.4f} ms, ported {row['ported_ms']:.4f} ms "
                f"({row['ported_over_original']:.3f}x)",
                flush=True,
            )
        for label, run in results["pairs"][name]["tests"].items():
            print(f"{name} {label} tests: {run['summary']}", flush=True)
        Path(out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")  # after each pair
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
