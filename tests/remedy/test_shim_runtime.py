"""The rendered shim at run time: answers under PORTER_EMULATE_TARGET, device detection, helpers.

Emulated answers are checked in fresh subprocesses (the shim must import without porter); the helpers
in-process on a freshly loaded copy of the module.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from porter.remedy.shim import render_shim
from porter.targets import all_targets, get_target

TL_NAMES = {"float8_e4m3fn": "fp8e4nv", "float8_e4m3fnuz": "fp8e4b8"}  # str() of the Triton dtypes
DEFAULT_TARGET = "mi350x"

LOADER = r"""
import importlib.util, json, os, sys
sys.modules["porter"] = None  # the shim must run where porter is not installed


def fresh_shim(emulate):
    # A new copy of the module: each answer is computed once per module, from the environment.
    os.environ.pop("PORTER_EMULATE_TARGET", None)
    if emulate:
        os.environ["PORTER_EMULATE_TARGET"] = emulate
    spec = importlib.util.spec_from_file_location(f"porter_shim_{emulate}", "porter_shim.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
"""

PROBE = (
    LOADER
    + r"""
def answers(s):
    names = ["BACKEND", "ARCH", "TARGET", "IS_HIP", "WARP_SIZE", "MAX_THREADS_PER_BLOCK", "MAX_NUM_WARPS",
             "LDS_BYTES", "NUM_SMS", "FP8_E4M3_MAX"]
    out = {name: getattr(s, name) for name in names}
    out.update(FP8_E4M3=str(s.FP8_E4M3), FP8_E5M2=str(s.FP8_E5M2), TL_FP8_E4M3=str(s.TL_FP8_E4M3),
               DOT_PRECISION=str(getattr(s.DOT_PRECISION, "value", s.DOT_PRECISION)), is_rocm=s.is_rocm(),
               features={f: s.has_feature(f) for f in s.FEATURES},
               cap=[s.cap_num_warps(n) for n in (1, 4, 8, 16, 32, 64)],
               amd_options=s.amd_options(waves_per_eu=2, matrix_instr_nonkdim=16, kpack=2),
               stages=[s.num_stages("gemm"), s.num_stages("fused"), s.num_stages("gemm", default=4)],
               memory=list(s.gpu_memory_info()) if s.device().emulated else None)
    return out


results = {}
for emulate in json.loads(sys.argv[1]):
    try:
        results[str(emulate)] = answers(fresh_shim(emulate))
    except ValueError as error:
        results[str(emulate)] = {"error": str(error)}
print(json.dumps(results))
"""
)

EMULATED = list(dict.fromkeys(["mi300x", "gfx942", "gfx950", "MI350X", "sm_90", *all_targets()]))


@pytest.fixture(scope="module")
def shim_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("shim")
    (directory / "porter_shim.py").write_text(render_shim("porter_shim.py", default_target=DEFAULT_TARGET).after)
    return directory


def run_in(shim_dir: Path, code: str, *args: str) -> str:
    """Run `code` as a script next to the shim (Triton needs kernels in a file); its last line."""
    script = shim_dir / f"script_{hashlib.sha1(code.encode()).hexdigest()[:12]}.py"
    script.write_text(code)
    env = {key: value for key, value in os.environ.items() if key not in ("PORTER_EMULATE_TARGET", "TRITON_INTERPRET")}
    env["PYTHONPATH"] = str(shim_dir)
    result = subprocess.run(
        [sys.executable, str(script), *args], cwd=shim_dir, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def emulated_answers(shim_dir) -> dict:
    """Every answer of the shim for each PORTER_EMULATE_TARGET value, from one fresh interpreter."""
    return json.loads(run_in(shim_dir, PROBE, json.dumps(EMULATED + [None, "gfx90a"])))


def expected_answers(emulate: str | None) -> dict:
    target = get_target(emulate or DEFAULT_TARGET)
    on_gpu = emulate is not None
    is_hip = on_gpu and target.is_amd
    features = {
        "tma": target.features["tma"],
        "wgmma": target.features["wgmma"],
        "fp8": "fp8" in target.matrix_flops_per_unit_clk,
        "bf16": "bf16" in target.matrix_flops_per_unit_clk,
        "tf32": target.tf32 == "native",
        "clusters": target.features["clusters"],
        "warp_specialization": target.features["warp_specialization"],
        "mxfp4": target.features["mxfp4"],
    }
    stages = [target.triton["gemm_num_stages"], target.triton["fused_num_stages"]]
    knobs = {"waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2}
    return {
        "BACKEND": ("hip" if target.is_amd else "cuda") if on_gpu else "cpu",
        "ARCH": target.arch if on_gpu else None,
        "TARGET": target.name if on_gpu else None,
        "IS_HIP": is_hip,
        "is_rocm": is_hip,
        "WARP_SIZE": target.wave_size,
        "MAX_THREADS_PER_BLOCK": target.max_threads_per_block,
        "MAX_NUM_WARPS": target.max_num_warps,
        "LDS_BYTES": target.lds_bytes,
        "NUM_SMS": target.units,
        "FP8_E4M3_MAX": target.fp8_e4m3_max,
        "FP8_E4M3": f"torch.{target.fp8_formats['e4m3']}",
        "FP8_E5M2": f"torch.{target.fp8_formats['e5m2']}",
        "TL_FP8_E4M3": TL_NAMES[target.fp8_formats["e4m3"]],
        "DOT_PRECISION": target.best_fp32_dot_precision if on_gpu else "ieee",
        "features": features if on_gpu else dict.fromkeys(features, False),
        "cap": [min(n, target.max_num_warps) for n in (1, 4, 8, 16, 32, 64)],
        "amd_options": {k: v for k, v in knobs.items() if k in target.triton["amd_options"]} if is_hip else {},
        "stages": stages + [stages[0] if is_hip else 4],
        "memory": [target.hbm_bytes, target.hbm_bytes] if on_gpu else None,
    }


@pytest.mark.parametrize("emulate", EMULATED + [None])
def test_answers_equal_porter_targets(emulated_answers, emulate):
    assert emulated_answers[str(emulate)] == expected_answers(emulate)


def test_emulated_answers_differ_between_amd_and_nvidia(emulated_answers):
    """Guards the comparison above against a shim that ignores the variable."""
    mi300x, h100 = emulated_answers["mi300x"], emulated_answers["h100"]
    assert mi300x["WARP_SIZE"] != h100["WARP_SIZE"] and mi300x["FP8_E4M3"] != h100["FP8_E4M3"]


def test_unknown_emulated_target_is_a_clear_error(emulated_answers):
    assert emulated_answers["gfx90a"]["error"].startswith("PORTER_EMULATE_TARGET='gfx90a': unknown target")


def test_imports_and_answers_without_torch_or_triton(shim_dir):
    code = (
        "import os, sys\n"
        "for name in ('torch', 'triton', 'triton.language', 'porter'): sys.modules[name] = None\n"
        "import porter_shim as s\n"
        "print(s.WARP_SIZE, s.DOT_PRECISION, s.FP8_E4M3, s.TL_FP8_E4M3, s.FP8_E4M3_MAX, s.IS_HIP, s.BACKEND,\n"
        "      os.environ.get('PORTER_EMULATE_TARGET'))"
    )
    target = get_target(DEFAULT_TARGET)
    assert run_in(shim_dir, code) == f"{target.wave_size} ieee None None {target.fp8_e4m3_max} False cpu None"
    emulated = LOADER.replace('sys.modules["porter"] = None', code.split("\n")[1]) + (
        "s = fresh_shim('mi300x')\nprint(s.WARP_SIZE, s.DOT_PRECISION, s.FP8_E4M3, s.IS_HIP, s.gpu_memory_info().total)"
    )
    mi300x = get_target("mi300x")
    expected = f"{mi300x.wave_size} {mi300x.best_fp32_dot_precision} None True {mi300x.hbm_bytes}"
    assert run_in(shim_dir, emulated) == expected


DOT_KERNEL = (
    LOADER
    + r"""
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)[:, None] * N
    cols = tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + rows + cols)
    b = tl.load(b_ptr + rows + cols)
    tl.store(c_ptr + rows + cols, tl.dot(a, b, input_precision=porter_shim.DOT_PRECISION))


torch.manual_seed(0)
a, b = torch.randn(32, 32), torch.randn(32, 32)
results = {}
for emulate in json.loads(sys.argv[1]):
    porter_shim = fresh_shim(emulate)
    c = torch.empty(32, 32)
    dot_kernel[(1,)](a, b, c, N=32)
    results[str(emulate)] = [porter_shim.DOT_PRECISION.value, float((c - a @ b).abs().max())]
print(json.dumps(results))
"""
)


@pytest.mark.slow
def test_dot_precision_runs_in_a_kernel_under_the_interpreter(shim_dir):
    """Under TRITON_INTERPRET=1, bf16x3 (gfx950's) becomes ieee: the interpreter refuses it and computes
    in the operands' dtype whatever precision it is given."""
    expected = {"mi300x": "tf32", "mi350x": "ieee", "h100": "tf32", "None": "ieee"}
    results = json.loads(run_in(shim_dir, DOT_KERNEL, json.dumps(["mi300x", "mi350x", "h100", None])))
    assert {key: used for key, (used, _) in results.items()} == expected
    assert all(error < 1e-3 for _, error in results.values())


COMPILE = (
    LOADER
    + r"""
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def dot_fp8_kernel(a_ptr, b_ptr, c_ptr, q_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)[:, None] * N
    cols = tl.arange(0, N)[None, :]
    c = tl.dot(tl.load(a_ptr + rows + cols), tl.load(b_ptr + rows + cols), input_precision=porter_shim.DOT_PRECISION)
    tl.store(c_ptr + rows + cols, c)
    tl.store(q_ptr + rows + cols, c.to(porter_shim.TL_FP8_E4M3))


results = {}
for name, backend, arch in json.loads(sys.argv[1]):
    porter_shim = fresh_shim(name)
    signature = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "q_ptr": "*" + str(porter_shim.TL_FP8_E4M3),
                 "N": "constexpr"}
    target = GPUTarget(backend, arch, porter_shim.WARP_SIZE)
    try:
        triton.compile(ASTSource(dot_fp8_kernel, signature, {"N": 32}), target=target)
        results[name] = porter_shim.DOT_PRECISION.value
    except Exception as error:
        results[name] = f"error: {str(error)[:300]}"
print(json.dumps(results))
"""
)


@pytest.mark.slow
def test_dot_precision_and_fp8_dtype_compile_for_each_target(shim_dir):
    """The answers are ones Triton's real backends accept for that arch (cross-compiled, no GPU needed)."""
    names = ["mi300x", "mi350x", "h100"]
    jobs = [[name, *get_target(name).triton_target[:2]] for name in names]
    results = json.loads(run_in(shim_dir, COMPILE, json.dumps(jobs)))
    assert results == {name: get_target(name).best_fp32_dot_precision for name in names}


# ---- in-process checks on a fresh copy of the module (no GPU on this machine) ----------------------


@pytest.fixture
def load_shim(shim_dir, monkeypatch):
    monkeypatch.delenv("PORTER_EMULATE_TARGET", raising=False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    loaded = []

    def load(emulate: str | None = None) -> types.ModuleType:
        if emulate:
            monkeypatch.setenv("PORTER_EMULATE_TARGET", emulate)
        name = f"porter_shim_copy_{len(loaded)}"
        spec = importlib.util.spec_from_file_location(name, shim_dir / "porter_shim.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded.append(module)
        return module

    return load


def test_lookup_matches_porter_targets(load_shim):
    shim = load_shim()
    for name, target in all_targets().items():
        assert shim.lookup(name.upper()) == name
        for alias in target.aliases:
            assert shim.lookup(alias) == get_target(alias).name
    assert shim.lookup("gfx942:sramecc+:xnack-") == "mi300x"
    assert shim.lookup("gfx90a") is None and shim.lookup("sm_80") is None


def test_bad_arguments_are_rejected(load_shim):
    shim = load_shim("mi350x")
    with pytest.raises(ValueError, match="positive"):
        shim.cap_num_warps(0)
    with pytest.raises(ValueError, match="unknown feature 'fp4'"):
        shim.has_feature("fp4")
    with pytest.raises(TypeError, match="waves_per_cu"):
        shim.amd_options(waves_per_cu=2)
    with pytest.raises(ValueError, match="kind"):
        shim.num_stages("attention")


def test_nvtx_range_is_a_no_op_context_and_decorator_on_cpu(load_shim):
    shim = load_shim()
    ran = []
    with shim.nvtx_range("forward"):
        ran.append("with")

    @shim.nvtx_range("step")  # nvtx.annotate is also used as a decorator
    def step(value):
        ran.append(value)
        return value * 2

    assert step(3) == 6 and step(4) == 8
    assert ran == ["with", 3, 4]


def test_nvtx_range_pushes_and_pops_on_a_gpu(load_shim, monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda.nvtx, "range_push", lambda name: calls.append(("push", name)))
    monkeypatch.setattr(torch.cuda.nvtx, "range_pop", lambda: calls.append(("pop",)))
    shim = load_shim()
    with pytest.raises(KeyError):
        with shim.nvtx_range("forward"):
            raise KeyError("the range still closes")
    assert calls == [("push", "forward"), ("pop",)]


def test_gpu_memory_info_without_a_gpu_raises(load_shim):
    shim = load_shim()
    with pytest.raises(RuntimeError, match=r"gpu_memory_info\(0\): no GPU found"):
        shim.gpu_memory_info()
    emulated = load_shim("mi300x").gpu_memory_info()
    assert emulated == (get_target("mi300x").hbm_bytes,) * 2 and emulated.used == 0


def fake_gpu(monkeypatch, *, hip: str | None, capability=(9, 0), **properties):
    """Stand-in for torch.cuda on a GPU machine (none is attached here)."""
    monkeypatch.setattr(torch.version, "hip", hip)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *args: capability)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *args: types.SimpleNamespace(**properties))


def test_detects_a_known_rocm_gpu_and_reads_its_cu_count(load_shim, monkeypatch):
    fake_gpu(monkeypatch, hip="6.4", gcnArchName="gfx942:sramecc+:xnack-", multi_processor_count=80)
    shim = load_shim()  # an MI308X: gfx942 with 80 CUs
    assert (shim.BACKEND, shim.ARCH, shim.TARGET, shim.IS_HIP) == ("hip", "gfx942", "mi300x", True)
    assert shim.WARP_SIZE == get_target("gfx942").wave_size and shim.NUM_SMS == 80
    assert shim.FP8_E4M3 == torch.float8_e4m3fnuz


def test_unknown_gpu_gets_the_conservative_target_corrected_by_the_device(load_shim, monkeypatch):
    fake_gpu(
        monkeypatch,
        hip="6.4",
        gcnArchName="gfx90a:sramecc+:xnack-",
        multi_processor_count=104,
        warp_size=64,
        shared_memory_per_block=65536,
    )
    shim = load_shim()
    assert (shim.BACKEND, shim.ARCH, shim.TARGET) == ("hip", "gfx90a", None)
    assert shim.NUM_SMS == 104 and shim.DOT_PRECISION.value == "ieee"
    assert not any(shim.has_feature(name) for name in shim.FEATURES)


def test_detects_cuda_by_capability(load_shim, monkeypatch):
    fake_gpu(monkeypatch, hip=None, capability=(9, 0), multi_processor_count=132)
    shim = load_shim()
    assert (shim.BACKEND, shim.ARCH, shim.TARGET, shim.IS_HIP) == ("cuda", "sm_90", "h100", False)
    assert shim.amd_options(waves_per_eu=2) == {} and shim.num_stages("gemm", default=4) == 4


def reference_attention(q, k, v, causal, scale=None):
    """Plain attention on flash_attn's [batch, seqlen, heads, dim] layout, heads repeated for GQA."""
    q, k, v = (t.transpose(1, 2).double() for t in (q, k, v))
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    scores = (q @ k.transpose(-1, -2)) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if causal:
        sq, sk = q.shape[-2], k.shape[-2]
        visible = torch.ones(sq, sk, dtype=torch.bool).tril(sk - sq)  # bottom-right aligned, as flash_attn
        scores = scores.masked_fill(~visible, float("-inf"))
    return (scores.softmax(-1) @ v).transpose(1, 2).float()


@pytest.mark.parametrize(
    "seqlen_q, seqlen_k, heads_q, heads_kv, causal, scale",
    [
        (64, 64, 4, 4, False, None),
        (64, 64, 4, 4, True, None),
        (16, 48, 4, 4, True, None),
        (32, 32, 8, 2, True, 0.3),
        (40, 24, 2, 2, False, None),
    ],
)
def test_flash_attn_func_matches_reference(load_shim, seqlen_q, seqlen_k, heads_q, heads_kv, causal, scale):
    shim = load_shim()
    torch.manual_seed(0)
    q = torch.randn(2, seqlen_q, heads_q, 32)
    k, v = torch.randn(2, seqlen_k, heads_kv, 32), torch.randn(2, seqlen_k, heads_kv, 32)
    out = shim.flash_attn_func(q, k, v, softmax_scale=scale, causal=causal)
    assert out.shape == q.shape and out.is_contiguous()
    torch.testing.assert_close(out, reference_attention(q, k, v, causal, scale), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    "capability, on, off",
    [
        (
            (8, 9),
            {"fp8", "bf16", "tf32"},
            {"tma", "wgmma", "clusters", "warp_specialization", "mxfp4"},
        ),  # L40S, RTX 4090
        ((10, 3), {"fp8", "bf16", "tf32", "tma", "clusters", "warp_specialization", "mxfp4"}, {"wgmma"}),  # B300
        (
            (12, 0),
            {"fp8", "bf16", "tf32", "tma", "clusters", "warp_specialization", "mxfp4"},
            {"wgmma"},
        ),  # RTX PRO 6000
        ((7, 0), set(), {"fp8", "bf16", "tf32", "tma", "wgmma"}),  # V100
    ],
)
def test_unknown_nvidia_part_keeps_what_its_capability_gives_it(load_shim, monkeypatch, capability, on, off):
    fake_gpu(
        monkeypatch,
        hip=None,
        capability=capability,
        multi_processor_count=148,
        warp_size=32,
        shared_memory_per_block_optin=101376,
    )
    shim = load_shim()
    assert (shim.BACKEND, shim.TARGET, shim.IS_HIP) == ("cuda", None, False)
    assert {name for name in on if shim.has_feature(name)} == on
    assert not any(shim.has_feature(name) for name in off)
    assert shim.DOT_PRECISION.value == "tf32"  # what the original code asked for, on every NVIDIA part
    assert shim.NUM_SMS == 148 and shim.LDS_BYTES == 101376 and shim.MAX_NUM_WARPS == 32
    assert shim.FP8_E4M3 == torch.float8_e4m3fn and shim.cap_num_warps(32) == 32


def test_the_capability_table_reproduces_every_known_nvidia_target(load_shim):
    shim = load_shim()
    for name, target in all_targets().items():
        if target.vendor != "nvidia":
            continue
        derived = {
            feature: shim._capability_has(tuple(target.capability), shim._NVIDIA_FEATURE_CAPABILITY.get(feature))
            for feature in shim.FEATURES
        }
        assert derived == shim._TARGETS[name]["features"], name
