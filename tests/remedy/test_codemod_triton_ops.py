import os
import subprocess
import sys

import pytest

from tests.codemod_cases import check, run

ACTIVATIONS = """\
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def _tanh_fast(x):
    # MUFU.TANH: one instruction
    return tl.inline_asm_elementwise(
        "tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
    )


@triton.jit
def k(x_ptr, y_ptr):
    x = tl.load(x_ptr)
    r = tl.inline_asm_elementwise(asm="rcp.approx.ftz.f32 $0, $1;", constraints="=f,f", args=[x + 1], dtype=tl.float32, is_pure=True, pack=1)
    w = tl.extra.cuda.libdevice.rsqrt(x) + libdevice.tanh(x)
    tl.store(y_ptr, _tanh_fast(x) * r + w)
"""


def test_libdevice_namespace_and_calls_with_tl_ops():
    result = check(
        "PT110",
        ACTIVATIONS,
        [3, 18],
        expected=ACTIVATIONS.replace(
            "from triton.language.extra.cuda import libdevice", "from triton.language.extra import libdevice"
        ).replace("tl.extra.cuda.libdevice.rsqrt(x) + libdevice.tanh(x)", "tl.rsqrt(x) + (2 * tl.sigmoid(2 * x) - 1)"),
    )
    assert result.safety == "unsafe"


def test_libdevice_function_without_tl_op_keeps_the_neutral_namespace():
    source = "import triton.language as tl\n\n\ndef f(x):\n    return tl.extra.cuda.libdevice.rint(x)\n"
    check("PT110", source, [5], expected=source.replace("tl.extra.cuda.libdevice.rint", "tl.extra.libdevice.rint"))


TANH_ASM = 'tl.inline_asm_elementwise(\n        "tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1\n    )'
RCP_ASM = (
    'tl.inline_asm_elementwise(asm="rcp.approx.ftz.f32 $0, $1;", constraints="=f,f", args=[x + 1], '
    "dtype=tl.float32, is_pure=True, pack=1)"
)


def test_inline_ptx_table_keeps_the_ptx_on_nvidia_under_a_compile_time_branch():
    expected = (
        ACTIVATIONS.replace(TANH_ASM, f"((2 * tl.sigmoid(2 * x) - 1) if porter_shim.IS_HIP else {TANH_ASM})")
        .replace(RCP_ASM, f"((1.0 / (x + 1)) if porter_shim.IS_HIP else {RCP_ASM})")
        .replace(
            "from triton.language.extra.cuda import libdevice\n",
            "from triton.language.extra.cuda import libdevice\nimport porter_shim\n",
        )
    )
    result = check("PT109", ACTIVATIONS, [9, 17], expected=expected)
    assert result.safety == "unsafe" and result.uses_shim and "CUDA keeps the PTX" in result.rationale


def test_inline_ptx_table_exclusive_drops_the_ptx():
    result = check(
        "PT109",
        ACTIVATIONS,
        [9, 17],
        exclusive=True,
        expected=ACTIVATIONS.replace(TANH_ASM, "(2 * tl.sigmoid(2 * x) - 1)").replace(RCP_ASM, "(1.0 / (x + 1))"),
    )
    assert not result.uses_shim


def test_unknown_ptx_declines():
    source = 'y = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)\n'
    assert run("PT109", source, [1]) is None


PACK = """\
import torch
import triton
import triton.language as tl


@triton.jit
def pack(x_ptr, y_ptr, out_ptr):
    i = tl.arange(0, 8)
    lo = tl.load(x_ptr + i)
    hi = tl.load(y_ptr + i)
    p = tl.inline_asm_elementwise("cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,f,f", [lo, hi], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(out_ptr + i, p)


lo = torch.randn(8)
hi = torch.randn(8)
out = torch.empty(8, dtype=torch.int32)
pack[(1,)](lo, hi, out)
want = (hi.to(torch.bfloat16).view(torch.int16).to(torch.int32) << 16) | (lo.to(torch.bfloat16).view(torch.int16).to(torch.int32) & 0xFFFF)
# layout must match exactly; the interpreter's fp32->bf16 rounding may differ from torch's by one ulp
for shift in (16, 0):
    a, b = (out >> shift) & 0xFFFF, (want >> shift) & 0xFFFF
    assert int((a - b).abs().max()) <= 1, (out, want)
print("ok")
"""


@pytest.mark.slow
def test_bf16x2_pack_replacement_runs_in_the_interpreter(tmp_path):
    from porter.remedy.shim import render_shim

    result = run("PT109", PACK, [11])
    script = tmp_path / "pack.py"
    script.write_text(result.text)
    (tmp_path / "porter_shim.py").write_text(render_shim("porter_shim.py").after)
    env = dict(os.environ, TRITON_INTERPRET="1", PORTER_EMULATE_TARGET="mi300x", PYTHONPATH=str(tmp_path))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]
