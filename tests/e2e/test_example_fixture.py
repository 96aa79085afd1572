"""The bundled NVIDIA-first example (fixtures/example, package `nvkernels`) on this CPU machine.

Its own tests hard-code device="cuda"; here its pure-PyTorch parts run on the CPU in-process, and its
Triton kernels under TRITON_INTERPRET=1 in a subprocess (the autotuner needs a GPU driver, so the GEMM
kernel is launched with its first H100 config directly).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "example"

# The idioms the README's `porter rewrite` demo relies on: (file, text that must stay in it).
IDIOMS = [
    ("nvkernels/hardware.py", "torch.version.cuda is None"),
    ("nvkernels/hardware.py", "torch.cuda.get_device_capability() >= (9, 0)"),
    ("nvkernels/hardware.py", "NUM_SMS = 132"),
    ("nvkernels/hardware.py", '"nvidia-smi"'),
    ("nvkernels/__init__.py", "torch.backends.cuda.matmul.allow_tf32 = True"),
    ("nvkernels/gemm.py", "@triton.autotune(configs=H100_CONFIGS"),
    ("nvkernels/gemm.py", "_config(256, 128, 64, 8, num_stages=4, num_warps=8)"),
    ("nvkernels/gemm.py", 'input_precision="tf32"'),
    ("nvkernels/normalization.py", "num_warps = 32 if BLOCK_SIZE >= 4096 else 8"),
    ("nvkernels/activations.py", "NUM_WARPS * 32 * ELEMENTS_PER_THREAD"),
    ("nvkernels/activations.py", '"tanh.approx.f32 $0, $1;"'),
    ("nvkernels/activations.py", "from triton.language.extra.cuda import libdevice"),
    ("nvkernels/fp8.py", "torch.float8_e4m3fn"),
    ("nvkernels/fp8.py", "FP8_MAX = 448.0"),
    ("nvkernels/fp8.py", "tl.float8e4nv"),
    ("nvkernels/attention.py", "sdpa_kernel(SDPBackend.FLASH_ATTENTION)"),
    ("nvkernels/attention.py", "from flash_attn import flash_attn_func"),
]


@pytest.mark.parametrize("relative, text", IDIOMS)
def test_fixture_keeps_its_nvidia_idioms(relative, text):
    assert text in (FIXTURE / relative).read_text(encoding="utf-8")


def test_fixture_tests_hard_code_cuda():
    for test_file in sorted((FIXTURE / "tests").glob("test_*.py")):
        assert 'DEVICE = "cuda"' in test_file.read_text(encoding="utf-8"), test_file.name


@pytest.fixture
def nvkernels(monkeypatch):
    """The example package imported from the fixture; global state restored afterwards."""
    saved_tf32 = torch.backends.cuda.matmul.allow_tf32
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # keep the fixture tree free of __pycache__
    monkeypatch.syspath_prepend(str(FIXTURE))
    _forget_nvkernels()
    import nvkernels as package

    yield package
    _forget_nvkernels()
    torch.backends.cuda.matmul.allow_tf32 = saved_tf32


def _forget_nvkernels():
    for name in [name for name in sys.modules if name == "nvkernels" or name.startswith("nvkernels.")]:
        del sys.modules[name]


def test_import_on_cpu_turns_tf32_on(nvkernels):
    assert torch.backends.cuda.matmul.allow_tf32 is True
    assert nvkernels.hardware.fp8_supported() is False  # no GPU: the fp8 matmul takes its fallback


def test_version_check_rejects_a_rocm_build(nvkernels, monkeypatch):
    """The P01 bug porter fixes: a ROCm build has torch.version.cuda = None and a GPU."""
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(torch.version, "hip", "6.4.43482")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with pytest.raises(RuntimeError, match="needs a CUDA build"):
        nvkernels.hardware.check_cuda_build()


def reference_attention(q, k, v, causal):
    scores = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return (scores.softmax(-1) @ v.double()).float()


@pytest.mark.parametrize("causal", [False, True])
def test_attention_on_cpu(nvkernels, causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 64, 32) for _ in range(3))
    torch.testing.assert_close(
        nvkernels.attention(q, k, v, causal=causal), reference_attention(q, k, v, causal), atol=1e-5, rtol=1e-5
    )
    bshd = nvkernels.attention_bshd(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=causal)
    torch.testing.assert_close(bshd.transpose(1, 2), reference_attention(q, k, v, causal), atol=1e-5, rtol=1e-5)


def test_dequantize_fp8_on_cpu(nvkernels):
    codes = torch.tensor([-448.0, -1.5, 0.0, 0.25, 448.0]).to(nvkernels.fp8.FP8_DTYPE)
    out = nvkernels.dequantize_fp8(codes, torch.tensor(0.5))
    assert out.tolist() == [-224.0, -0.75, 0.0, 0.125, 224.0]


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="nvidia-smi is installed here")
def test_nvidia_smi_query_fails_without_nvidia_smi(nvkernels):
    """The E02 failure mode: the query shells out to a binary AMD machines do not have."""
    with pytest.raises(FileNotFoundError):
        nvkernels.hardware.gpu_memory_mb()


KERNELS_ON_CPU = r"""
import json, sys
import torch
sys.path.insert(0, sys.argv[1])
from nvkernels import fp8_matmul, gemm, quantize_fp8, softmax, dequantize_fp8

torch.manual_seed(0)
errors = {}
x = torch.randn(8, 4096)
errors["softmax_4096"] = float((softmax(x) - torch.softmax(x, -1)).abs().max())
x = torch.randn(64, 100)
errors["softmax_100"] = float((softmax(x) - torch.softmax(x, -1)).abs().max())

q = (torch.randn(64, 128) * 64).clamp(-448, 448).to(torch.float8_e4m3fn).float()
q[0, 0] = 448.0
y, scale = quantize_fp8(q / 56)  # values e4m3 represents exactly after scaling
errors["fp8_round_trip"] = float((dequantize_fp8(y, scale) - q / 56).abs().max())
a, b = q[:, :96] / 112, q.t()[:96, :64].contiguous() / 224  # both hold the 448 element
errors["fp8_matmul_rel"] = float((fp8_matmul(a, b).float() - a @ b).norm() / (a @ b).norm())

# The GEMM kernel body with the first H100 config (the autotuner itself needs a GPU driver).
config = gemm.H100_CONFIGS[0]
for dtype in (torch.float16, torch.float32):
    a, b = torch.randn(96, 72, dtype=dtype), torch.randn(72, 200, dtype=dtype)
    c = torch.empty(96, 200, dtype=dtype)
    grid = (-(-96 // config.kwargs["BLOCK_M"]) * -(-200 // config.kwargs["BLOCK_N"]),)
    gemm.matmul_kernel.fn[grid](a, b, c, 96, 200, 72, *a.stride(), *b.stride(), *c.stride(), **config.kwargs)
    errors[f"gemm_{dtype}"] = float((c.float() - a.float() @ b.float()).abs().max())
print(json.dumps(errors))
"""


@pytest.mark.slow
def test_fixture_kernels_run_under_the_interpreter(tmp_path):
    script = tmp_path / "kernels_on_cpu.py"
    script.write_text(KERNELS_ON_CPU)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PORTER_EMULATE_TARGET", None)
    result = subprocess.run(
        [sys.executable, str(script), str(FIXTURE)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    errors = json.loads(result.stdout.strip().splitlines()[-1])
    assert errors["softmax_4096"] < 1e-6 and errors["softmax_100"] < 1e-6
    assert errors["fp8_round_trip"] < 1e-6
    assert errors["fp8_matmul_rel"] < 1e-2
    assert errors["gemm_torch.float16"] < 0.1  # fp16 output rounding of sums near 30
    assert errors["gemm_torch.float32"] < 1e-3
