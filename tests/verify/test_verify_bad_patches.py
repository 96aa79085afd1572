"""The planted bad patches of fixtures/bad_patches are rejected on the example with precise reasons."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from porter.cli import main
from porter.targets import get_target
from porter.verify import VerifyOptions, verify_patches
from porter.verify.workspace import patch_from_file

BAD = Path(__file__).resolve().parents[2] / "fixtures" / "bad_patches"
SOFTMAX_ONLY = (sys.executable, "-m", "pytest", "tests/test_softmax.py")


@pytest.mark.slow
def test_planted_bad_patches_are_rejected_and_the_fix_accepted(example_repo: Path) -> None:
    files = {
        name: BAD / f"{name}.patch"
        for name in ("allow-rocm-build", "softmax-num-warps-32", "softmax-wrong-denominator")
    }
    patches = [patch_from_file(path) for path in files.values()]
    for patch in patches[1:]:
        patch.depends_on = ["allow-rocm-build"]
    options = VerifyOptions(jobs=0, test_cmd=SOFTMAX_ONLY, timeout_s=300)
    fix, warps, denominator = verify_patches(example_repo, patches, get_target("mi350x"), options, patch_files=files)

    assert fix.accepted, fix.reasons
    assert "tests/test_softmax.py::test_softmax_matches_torch[64-100]" in fix.newly_passing
    assert any(
        w.startswith(
            "still fails, not caused by these patches: nvkernels/normalization.py::softmax_kernel "
            "[fp32: BLOCK_SIZE=4096, num_warps=32"
        )
        for w in fix.warnings
    )

    assert not warps.accepted
    # BLOCK_SIZE 128 and 256 are the patch's doing; 4096 already launched 32 warps before it
    assert warps.reasons == [
        "nvkernels/normalization.py::softmax_kernel (2 launches/configs, e.g. [fp32: BLOCK_SIZE=128, num_warps=32, "
        "num_stages=3]) would fail at launch on gfx950: num_warps=32 x 64 lanes = 2048 threads, over the mi350x "
        "limit of 1024: fails at launch"
    ]
    failing = [r for r in warps.compiles if not r.launchable]
    assert {r.config["BLOCK_SIZE"] for r in failing} == {128, 256, 4096}
    assert all(r.threads == 2048 and r.thread_limit == 1024 for r in failing)

    assert not denominator.accepted
    assert (
        "test passed without these patches and fails with them: "
        "tests/test_softmax.py::test_softmax_matches_torch[64-100]"
    ) in " ".join(denominator.reasons)
    assert (example_repo / "nvkernels/normalization.py").read_text().count("num_warps = 32 if") == 1


def test_cli_usage_errors_exit_2(example_repo: Path, capsys) -> None:
    assert main(["verify", str(example_repo), "--device", "rocm"]) == 2
    assert "--device: expected one of cpu, cuda" in capsys.readouterr().err
    assert main(["verify", str(example_repo / "missing")]) == 2
    assert main(["verify", str(example_repo), "--patch", str(BAD / "no-such.patch")]) == 2
    assert "no-such.patch: patch file not found" in capsys.readouterr().err


@pytest.mark.parametrize("content", [b"", b"\x00\x01binary\xff", b"just some words\n"])
def test_a_patch_file_git_cannot_read_is_a_usage_error_before_any_test_runs(
    example_repo: Path, tmp_path, capsys, content
):
    not_a_patch = tmp_path / "0001-nothing.patch"
    not_a_patch.write_bytes(content)
    assert main(["verify", str(example_repo), "--patch", str(not_a_patch), "-q"]) == 2
    err = capsys.readouterr().err
    assert "0001-nothing.patch is not a patch git can read" in err and "Traceback" not in err
