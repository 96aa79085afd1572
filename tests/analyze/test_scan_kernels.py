"""`porter scan --kernels`: the Triton inventory with per-config estimates against target limits."""

from __future__ import annotations

import json

import pytest

from porter.analyze.scan import kernel_inventory
from porter.cli import main
from porter.targets import get_target

KERNEL = """import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=4),
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=32, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    a = tl.load(a_ptr).to(tl.float16)
    b = tl.load(b_ptr).to(tl.float16)
    tl.store(c_ptr, tl.dot(a, b))
"""


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "matmul.py").write_text(KERNEL, encoding="utf-8")
    (tmp_path / "kernels" / "plain.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "kernels" / "broken.py").write_text("import triton\ndef f(:\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("target_name", ["mi300x", "mi350x"])
def test_inventory_estimates_against_the_target(repo, target_name):
    target = get_target(target_name)
    inventory = kernel_inventory(repo, target_name, jobs=1)
    assert [record["path"] for record in inventory.files] == ["kernels/matmul.py"]
    (kernel,) = inventory.files[0]["kernels"]
    configs = kernel["autotune"]["configs"]
    assert kernel["name"] == "matmul_kernel" and len(configs) == 2
    small, big = (config["estimate"] for config in configs)
    assert small["thread_limit"] == big["thread_limit"] == target.max_threads_per_block
    assert small["threads"] == 8 * target.wave_size and small["threads_ok"] is True
    assert big["threads"] == 32 * target.wave_size and big["threads_ok"] is False
    assert small["lds_limit"] == target.lds_bytes
    assert [note.path for note in inventory.skipped] == ["kernels/broken.py"]


def test_kernels_table_and_json_through_the_cli(repo, capsys):
    assert main(["scan", str(repo), "--kernels", "--target", "mi300x"]) == 0
    out = capsys.readouterr().out
    assert "matmul_kernel" in out and "2048/1024" in out and "512/1024" in out
    assert "1 kernel(s), 2 autotune config(s) in 1 file(s); 2 config(s) over a mi300x limit" in out
    assert main(["scan", str(repo), "--kernels", "--target", "mi350x", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["target"] == "mi350x" and document["files"][0]["path"] == "kernels/matmul.py"
    assert main(["scan", str(repo), "--kernels", "--format", "sarif"]) == 2
    assert "--kernels --format 'sarif'" in capsys.readouterr().err
