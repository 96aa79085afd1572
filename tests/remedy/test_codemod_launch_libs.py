from tests.codemod_cases import check, run


def test_nvidia_only_launch_options_move_to_a_cuda_only_dict():
    check(
        "PT105",
        "kernel[grid](x, y, BLOCK=64, maxnreg=128, launch_pdl=True)\n",
        [1],
        expected=(
            "import porter_shim\n"
            'kernel[grid](x, y, BLOCK=64, **{} if porter_shim.IS_HIP else {"maxnreg": 128, "launch_pdl": True})\n'
        ),
    )
    check(
        "PT105",
        'cfg = triton.Config({"BLOCK": 64}, num_warps=4, num_ctas=2)\n',
        [1],
        exclusive=True,
        expected='cfg = triton.Config({"BLOCK": 64}, num_warps=4)\n',
    )
    assert run("PT105", "cfg = triton.Config({}, num_ctas=1)\n", [1]) is None


def test_nvtx_package_becomes_shim_range():
    check(
        "PT211",
        'import nvtx\nimport torch\n\nwith nvtx.annotate("fwd", color="blue"):\n    y = model(x)\n',
        [1],
        expected='import torch\nimport porter_shim\n\nwith porter_shim.nvtx_range("fwd"):\n    y = model(x)\n',
    )


def test_flash_attn_import_falls_back_to_the_shim():
    check(
        "PT301",
        "import torch\nfrom flash_attn import flash_attn_func\n",
        [2],
        expected=(
            "import torch\nimport porter_shim\ntry:\n    from flash_attn import flash_attn_func\n"
            "except ImportError:  # no flash_attn wheel (e.g. ROCm): SDPA through the shim\n"
            "    flash_attn_func = porter_shim.flash_attn_func\n"
        ),
    )
    assert run("PT301", "from flash_attn import flash_attn_varlen_func\n", [1]) is None
