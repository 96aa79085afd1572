"""Runtime findings from a real replay and cross-compile for gfx950: each failure class gets its
PT9xx rule, located at the launch call, with the launch/kernel/value data the remedies and the
value flow read; merged with the static scan without duplicates; rendered by the report writers."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.analyze import load_rules
from porter.analyze.scan import scan_tree
from porter.records import FileEdit, Patch
from porter.report.rules import info_for, runtime_rule_infos
from porter.targets import get_target
from porter.verify import VerifyOptions, verify_patches, verify_tree
from porter.verify.runtime import merge_findings, runtime_findings, runtime_rules

KERNELS = """
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


def _num_warps(block):
    return 32 if block >= 2048 else 8  # NVIDIA-tuned: 32 x 64 lanes is 2048 threads on AMD


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def ptx_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)


@triton.jit
def tf32_kernel(a_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, a, input_precision="tf32"))


@triton.jit
def tanh_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs)))


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.zeros((M, N), dtype=tl.float32)
    for i in range(0, 4):  # loads that depend on i: the pipeliner stages them (num_stages buffers)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :] + i)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :] + i)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def copy(x):
    y = torch.empty_like(x)
    copy_kernel[(1,)](x, y, x.numel(), BLOCK=4096, num_warps=_num_warps(4096))
    return y


def ptx(x):
    ptx_kernel[(1,)](x, BLOCK=64)


def tf32(a):
    c = torch.empty_like(a)
    tf32_kernel[(1,)](a, c, N=32)
    return c


def tanh(x):
    tanh_kernel[(1,)](x, BLOCK=64)


def gemm(a, b):
    c = torch.empty(64, 64, dtype=torch.float32, device=a.device)
    gemm_kernel[(1,)](a, b, c, M=64, N=64, K=256, num_warps=4, num_stages=4)
    return c
"""

TESTS = """
import torch

import kernels


def test_copy():
    x = torch.arange(4096, dtype=torch.float32, device="cuda")
    assert torch.equal(kernels.copy(x), x)


def test_ptx():
    kernels.ptx(torch.ones(64, device="cuda"))


def test_tf32():
    kernels.tf32(torch.ones(32, 32, device="cuda"))


def test_tanh():
    kernels.tanh(torch.ones(64, device="cuda"))


def test_gemm():
    # 64x256 + 256x64 fp16 tiles, 64 KiB a stage: 256 KiB of LDS on 4 stages, over gfx950's 160 KiB. Short K keeps
    # the compile to seconds (256x256 tiles with K = 512, 512 KiB single-buffered, took three minutes)
    a = torch.ones(64 * 256 + 4, dtype=torch.float16, device="cuda")
    b = torch.ones(256 * 64 + 4, dtype=torch.float16, device="cuda")
    assert kernels.gemm(a, b)[0, 0].item() == 4 * 256.0
"""
TARGET = get_target("mi350x")
EXPECTED = {
    "copy_kernel": "PT906",
    "ptx_kernel": "PT902",
    "tf32_kernel": "PT903",
    "tanh_kernel": "PT904",
    "gemm_kernel": "PT907",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runtime") / "nvidia-first"
    root.mkdir()
    (root / "kernels.py").write_text(KERNELS, encoding="utf-8")
    (root / "test_kernels.py").write_text(TESTS, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def found(project: Path):
    verdict = verify_tree(project, TARGET, VerifyOptions(jobs=0, timeout_s=600, compile_jobs=2))
    return verdict, runtime_findings(verdict, TARGET, project)


def _launch_line(project: Path, call: str) -> int:
    lines = (project / "kernels.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, start=1) if call in line)


@pytest.mark.slow
def test_each_failure_class_has_its_rule_at_the_launch_call(project: Path, found) -> None:
    verdict, findings = found
    by_kernel = {f.data["kernel"]["name"]: f for f in findings}
    assert {name: f.rule for name, f in by_kernel.items()} == EXPECTED, [f.message for f in findings]
    for name, finding in by_kernel.items():
        assert finding.provenance == "runtime" and finding.severity == "error"
        assert (finding.path, finding.line) == ("kernels.py", _launch_line(project, f"{name}[(1,)]"))
        assert finding.data["launch"] == {
            "path": "kernels.py",
            "line": finding.line,
            "tests": [f"test_kernels.py::test_{name.split('_')[0]}"],
        }
        assert finding.data["origin"] is None and finding.data["kernel"]["arch"] == "gfx950"


@pytest.mark.slow
def test_the_offending_value_is_in_the_data(found) -> None:
    _, findings = found
    by_rule = {f.rule: f for f in findings}
    assert by_rule["PT906"].data["value"] == {"name": "num_warps", "value": 32, "limit": 16}
    assert "2048 threads" in by_rule["PT906"].message
    lds = by_rule["PT907"].data["value"]
    assert lds["name"] == "lds_bytes" and lds["value"] > lds["limit"] == TARGET.lds_bytes


@pytest.mark.slow
def test_merge_keeps_one_entry_per_confirmed_static_finding(project: Path, found) -> None:
    _, runtime = found
    # PT103 is opt-in (the NVIDIA-tuning group): turned on so the runtime LDS overflow folds into its static twin
    static = scan_tree(project, TARGET, load_rules(extend_select=["PT103"]), use_cache=False).findings
    merged = merge_findings(static, runtime)
    confirmed = [f for f in merged if f.data.get("runtime")]
    # inline PTX, libdevice (at its import), tf32, num_stages=4 at the launch that overflows LDS, and
    # num_warps=32 at its origin in the helper (value flow), which the 2048-thread launch confirms
    assert {f.rule for f in confirmed} >= {"PT109", "PT110", "PT114", "PT103", "PT101"}
    assert all(f.provenance == "runtime" and f.severity == "error" for f in confirmed)
    [origin] = [f for f in confirmed if f.rule == "PT101"]
    assert origin.line < _launch_line(project, "copy_kernel[") and origin.data["runtime"][0]["rule"] == "PT906"
    kept_runtime = {f.rule for f in merged if f.rule.startswith("PT9")}
    assert not kept_runtime  # each folded into its static twin
    assert len(merged) == len(static) + sum(1 for f in runtime if f.rule in kept_runtime)
    assert merge_findings(merged, []) == merged


def test_a_test_broken_by_a_patch_is_a_runtime_finding(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (tmp_path / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n", encoding="utf-8"
    )
    before = (tmp_path / "calc.py").read_text(encoding="utf-8")
    bad = Patch("0001-bad", "codemod", [], "bad", "test", [FileEdit("calc.py", before, before.replace("+", "-"))])
    [verdict] = verify_patches(tmp_path, [bad], TARGET, VerifyOptions(jobs=0, timeout_s=120))
    [finding] = runtime_findings(verdict, TARGET)
    assert (finding.rule, finding.path, finding.provenance) == ("PT908", "test_calc.py", "runtime")
    assert "0001-bad" in finding.message and finding.data["test"] == "test_calc.py::test_add"


def test_every_runtime_rule_renders_with_its_docs() -> None:
    infos = runtime_rule_infos()
    assert sorted(infos) == [f"PT90{i}" for i in range(1, 9)] == [rule.id for rule in runtime_rules()]
    for rule in runtime_rules():
        info = info_for({}, type("F", (), {"rule": rule.id})())
        assert info.docs["what"] and info.docs["why"] and f"**{rule.id} {rule.name}**" in info.help_markdown()


FINE_KERNEL = """
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def double(x):
    double_kernel[(1,)](x, x.numel(), BLOCK=64)
    return x
"""
FINE_TEST = """
import torch

from fine import double


def test_double():
    assert double(torch.ones(8, device="cuda")).tolist() == [2.0] * 8
"""


@pytest.mark.slow
def test_compiles_that_cannot_finish_leave_the_tree_unverified(tmp_path: Path) -> None:
    """Tests pass, and every compile times out: no evidence about the kernel, not a failure, no runtime finding."""
    (tmp_path / "fine.py").write_text(FINE_KERNEL, encoding="utf-8")
    (tmp_path / "test_fine.py").write_text(FINE_TEST, encoding="utf-8")
    options = VerifyOptions(jobs=0, timeout_s=600, compile_jobs=1, compile_timeout_s=0.01)
    verdict = verify_tree(tmp_path, TARGET, options)
    assert verdict.tests.passed == ["test_fine.py::test_double"]
    assert verdict.status == "unverified", verdict.reasons
    assert verdict.compiles and not any(record.checked for record in verdict.compiles)
    [reason] = verdict.reasons
    assert f"kernel compile(s) for {TARGET.arch} could not finish" in reason and "compile timed out" in reason
    assert runtime_findings(verdict, TARGET, tmp_path) == []
