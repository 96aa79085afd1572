"""The NVIDIA-first fixture package fixtures/nvfirst (src layout, package `nvfirst`) before any port:
it keeps the idioms the port must handle, and its own tests pass on this CPU under Triton's interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from porter.analyze import load_rules
from porter.analyze.scan import scan_tree
from porter.targets import get_target

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "nvfirst"

IDIOMS = [
    ("src/nvfirst/settings.py", "num_warps = 32"),  # a computed num_warps, up to 32, through a helper
    ("src/nvfirst/softmax.py", "block_size, num_warps = calculate_settings(n_cols)"),
    ("src/nvfirst/softmax.py", "num_warps=num_warps)"),
    ("src/nvfirst/activations.py", "tl.inline_asm_elementwise(_FAST_SIGMOID_PTX"),  # no portable twin in porter's table
    ("src/nvfirst/activations.py", "ex2.approx.ftz.f32 t, t;"),
    ("src/nvfirst/matmul.py", 'input_precision="tf32"'),
    (
        "src/nvfirst/matmul.py",
        '{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3',
    ),
    ("src/nvfirst/fp8.py", "torch.float8_e4m3fn"),
    ("src/nvfirst/fp8.py", "FP8_MAX = 448.0"),
    ("src/nvfirst/fp8.py", "torch.cuda.get_device_capability() >= (8, 9)"),
    ("src/nvfirst/fp8.py", '{"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128}, num_warps=8, num_stages=4'),
]


@pytest.mark.parametrize("relative, text", IDIOMS)
def test_fixture_keeps_its_nvidia_idioms(relative, text):
    assert text in (FIXTURE / relative).read_text(encoding="utf-8")


def test_fixture_is_a_src_layout_package():
    assert (FIXTURE / "src" / "nvfirst" / "__init__.py").is_file() and not (FIXTURE / "nvfirst").exists()
    assert 'where = ["src"]' in (FIXTURE / "pyproject.toml").read_text()


def test_scan_finds_what_breaks_on_each_target():
    rules = load_rules(extend_select=["PT103"])  # the opt-in tuning rule: the fixture's configs were tuned on H100
    found = {
        name: {f.rule for f in scan_tree(FIXTURE, get_target(name), rules).findings} for name in ("mi350x", "mi300x")
    }
    assert {"PT103", "PT107", "PT109", "PT114"} <= found["mi350x"]  # tf32 is a compile error on gfx950 only
    # and quantize_fp8 makes OCP e4m3fn data, gfx942 is FNUZ (its 448 matches that dtype: PT207 stays quiet)
    assert {"PT103", "PT109", "PT206"} <= found["mi300x"] and "PT207" not in found["mi300x"]
    # its 128x256x128 fp8 config at 4 stages: gfx942 (Triton 3.9) allocates 3 buffers of both tiles for an aligned
    # launch, 144 KiB over 64 (bench/tune/amd_lds_alignment.py; without the launcher's hints 32 KiB)
    assert "PT107" in found["mi300x"]
    assert "PT114" not in found["mi300x"]


@pytest.mark.slow
def test_fixture_tests_pass_on_the_cpu_under_the_interpreter(tmp_path):
    tree = tmp_path / "nvfirst"
    shutil.copytree(FIXTURE, tree, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    env = {k: v for k, v in os.environ.items() if k not in ("PORTER_EMULATE_TARGET", "TRITON_INTERPRET", "PYTHONPATH")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "17 passed" in done.stdout


@pytest.mark.slow
def test_the_ptx_path_compiles_for_sm_90(tmp_path):
    """The interpreter never compiles the PTX path; Triton's NVIDIA backend does (the H200 run found a
    non-constexpr global here that no CPU test saw)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import triton\nfrom triton.backends.compiler import GPUTarget\nfrom nvfirst import activations\n"
        "sig = {'gate_ptr': '*fp32', 'up_ptr': '*fp32', 'out_ptr': '*fp32', 'n_cols': 'i32', 'stride': 'i32',"
        " 'BLOCK_SIZE': 'constexpr'}\n"
        "src = triton.compiler.ASTSource(fn=activations._silu_mul_kernel, signature=sig, constexprs={'BLOCK_SIZE': 1024})\n"
        "ptx = triton.compile(src, target=GPUTarget('cuda', 90, 32)).asm['ptx']\n"
        "print('ex2.approx.ftz.f32' in ptx and 'rcp.approx.ftz.f32' in ptx)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PORTER_EMULATE_TARGET", "TRITON_INTERPRET")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(FIXTURE / "src")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("True"), done.stderr[-2000:]
