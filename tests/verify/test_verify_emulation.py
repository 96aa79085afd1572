"""Under target emulation the project's AMD branches run: each way real code asks "am I on AMD,
which arch" (Triton's active driver target, torch.version.hip, gcnArchName, Tensor.is_cuda,
driver device properties) answers as the target, also at import time from a conftest; CUDA-only
context managers are no-ops; a src-layout package is replayed and cross-compiled from the copy;
porter's own site-packages stay off the project's path. Real Triton and torch, one replay each."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from porter.targets import get_target
from porter.verify import VerifyOptions, verify_tree
from porter.verify.crosscompile import import_root
from porter.verify.runner import run_tests

KERNELS = """
import torch
import triton
import triton.language as tl


def is_hip():
    return triton.runtime.driver.active.get_current_target().backend == "hip"


def is_cdna4():
    target = triton.runtime.driver.active.get_current_target()
    return is_hip() and target.arch == "gfx950" and target.warp_size == 64


IS_HIP_AT_IMPORT = is_hip()  # evaluated when the conftest imports the package


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # a float argument is an fp32 scalar in compiled Triton, so .to() works on it (Liger does this)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor.to(tl.float32), mask=mask)


def scale(x):
    assert x.is_cuda, "expects a GPU tensor"
    y = torch.empty_like(x)
    # the AMD branch: another factor and warp count, so the test can tell which branch ran
    factor, warps = (3.0, 2) if is_hip() else (2.0, 4)
    with torch.cuda.device(x.device.index):
        scale_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), factor, BLOCK=64, num_warps=warps)
    return y
"""

CONFTEST = "import emul_pkg.kernels  # noqa: F401  (asks is_hip() at import)\n"

TESTS = """
import torch
import triton

from emul_pkg import kernels


def test_triton_driver_reports_the_target():
    target = triton.runtime.driver.active.get_current_target()
    assert (target.backend, target.arch, target.warp_size) == ("hip", "gfx950", 64)
    assert kernels.IS_HIP_AT_IMPORT and kernels.is_cdna4()
    properties = triton.runtime.driver.active.utils.get_device_properties(0)
    assert properties["max_shared_mem"] == 163840 and properties["warpSize"] == 64


def test_torch_reports_a_rocm_build():
    assert torch.version.hip is not None and torch.version.cuda is None
    assert torch.cuda.get_device_properties(0).gcnArchName.split(":")[0] == "gfx950"
    assert torch.cuda.get_device_name(0).startswith("AMD Instinct")


def test_the_amd_branch_runs():
    x = torch.arange(100, dtype=torch.float32, device="cuda")
    torch.testing.assert_close(kernels.scale(x), x * 3.0)


def test_streams_and_device_context_are_no_ops():
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        y = kernels.scale(torch.ones(8, device="cuda"))
    torch.cuda.current_stream().wait_stream(stream)
    assert y.sum().item() == 24.0
"""


@pytest.fixture(scope="module")
def src_layout(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("emulation") / "src-project"
    files = {
        "src/emul_pkg/__init__.py": "",
        "src/emul_pkg/kernels.py": KERNELS,
        "tests/conftest.py": CONFTEST,
        "tests/test_emulation.py": TESTS,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def tree(src_layout: Path):
    return verify_tree(src_layout, get_target("mi350x"), VerifyOptions(jobs=0, timeout_s=300, compile_jobs=1))


def test_every_target_query_answers_as_the_target(tree) -> None:
    run = tree.tests
    assert run is not None and not run.failed and not run.errors, (run.messages, run.output_tail[-2000:])
    assert sorted(run.passed) == sorted(
        f"tests/test_emulation.py::{name}"
        for name in (
            "test_triton_driver_reports_the_target",
            "test_torch_reports_a_rocm_build",
            "test_the_amd_branch_runs",
            "test_streams_and_device_context_are_no_ops",
        )
    )


def test_the_amd_branch_is_what_was_launched_and_compiled(tree) -> None:
    [record] = tree.compiles
    assert record.ok and record.source == "src/emul_pkg/kernels.py", record.error
    assert record.config["num_warps"] == 2 and record.arch == "gfx950"  # the HIP branch's warps


def test_import_root_follows_the_layout() -> None:
    assert import_root("src/emul_pkg/kernels.py", "emul_pkg.kernels") == "src"
    assert import_root("kernels.py", "kernels") == ""
    assert import_root("ns/sub/k.py", "ns.sub.k") == ""  # a namespace package
    assert import_root("tests/test_k.py", "test_k") == "tests"  # pytest's rootdir import
    assert import_root("pkg/k.py", "other") is None


def test_porter_site_packages_stay_off_the_project_path(tmp_path: Path) -> None:
    (tmp_path / "test_path.py").write_text(
        "import os, sys\n\n\ndef test_path():\n    print('PATH=' + os.environ['PYTHONPATH'])\n    assert False\n",
        encoding="utf-8",
    )
    result = run_tests(tmp_path, VerifyOptions(jobs=0, timeout_s=120), "mi350x", None)
    [line] = [line for line in result.run.output_tail.splitlines() if line.startswith("PATH=")]
    entries = line[len("PATH=") :].split(":")
    site = next(p for p in sys.path if p.endswith("site-packages"))
    assert entries[0] == str(tmp_path) and site not in entries
    assert [p.name for p in Path(entries[1]).iterdir()] == ["porter"]
