"""--device cuda verifies on the GPU the tests see: it must be the target, else nothing is claimed (exit 2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from porter.targets import get_target
from porter.verify.options import VerifyOptions
from porter.verify.preflight import VerifierUnavailable, check, gpu_mismatch

MI300X_ON_ROCM = {
    "available": True,
    "hip": True,
    "name": "AMD Instinct MI300X",
    "arch": "gfx942:sramecc+:xnack-",
    "capability": [9, 4],
}
H200_ON_CUDA = {"available": True, "hip": False, "name": "NVIDIA H200", "arch": "NVIDIA H200", "capability": [9, 0]}


@pytest.mark.parametrize(
    ("gpu", "target", "expected"),
    [
        (MI300X_ON_ROCM, "mi300x", ""),
        (MI300X_ON_ROCM, "mi325x", ""),  # the same gfx942
        (MI300X_ON_ROCM, "mi350x", "the GPU here is AMD Instinct MI300X (gfx942), not mi350x (gfx950)"),
        (H200_ON_CUDA, "h200", ""),
        (H200_ON_CUDA, "h100", ""),  # both sm_90
        (H200_ON_CUDA, "mi350x", "the GPU here is NVIDIA H200 (capability 9.0), not mi350x (gfx950)"),
        (MI300X_ON_ROCM, "h100", "the GPU here is AMD Instinct MI300X (gfx942), not h100 (sm_90)"),
        ({"available": False, "hip": False}, "mi350x", "no GPU is visible to the test interpreter"),
    ],
)
def test_the_gpu_must_be_the_target(gpu: dict, target: str, expected: str) -> None:
    found = gpu_mismatch(gpu, get_target(target))
    assert found.startswith(expected) if expected else found == ""
    if expected:
        assert "--device cpu" in found  # the fix: emulate the target instead


def test_device_cuda_checks_the_gpu_this_machine_has(tmp_path: Path) -> None:
    """Here (CI, a CPU machine) there is none: cannot verify. On a GPU machine, its own target passes."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("import torch\n", encoding="utf-8")
    options = VerifyOptions(device="cuda", test_cmd=(sys.executable, "-m", "pytest"))
    if not torch.cuda.is_available():
        with pytest.raises(VerifierUnavailable, match="cannot verify on the GPU: no GPU is visible"):
            check(repo, options, get_target("mi350x"))
        return
    own = "mi300x" if torch.version.hip else "h200"  # gfx942 or sm_90, the GPUs this project is lent
    check(repo, options, get_target(own))
    with pytest.raises(VerifierUnavailable, match="not b200"):
        check(repo, options, get_target("b200"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without a GPU")
def test_cli_refuses_device_cuda_without_a_gpu(tmp_path: Path, capsys) -> None:
    from porter.cli import main

    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")
    assert main(["verify", str(repo), "--target", "mi350x", "--device", "cuda", "-q"]) == 2
    err = capsys.readouterr().err
    assert "cannot verify on the GPU: no GPU is visible to the test interpreter" in err
    assert "accepted" not in err
