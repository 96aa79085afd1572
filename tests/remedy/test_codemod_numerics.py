from tests.codemod_cases import check, run

FP8_SOURCE = """\
import torch
import triton
import triton.language as tl

FP8_DTYPE = torch.float8_e4m3fn
FP8_MAX = 448.0


@triton.jit
def quant(x_ptr, y_ptr, MAX: tl.constexpr):
    x = tl.load(x_ptr)
    y = tl.clamp(x, -MAX, MAX).to(tl.float8e4nv)
    tl.store(y_ptr, y)
"""


def test_torch_fp8_dtype_portable_and_exclusive_carries_the_module_along():
    """The kernel that writes the re-typed tensors and the maximum it clamps to change with the dtype."""
    check(
        "PT206",
        FP8_SOURCE,
        [5],
        expected=FP8_SOURCE.replace(
            "import triton.language as tl\n", "import triton.language as tl\nimport porter_shim\n"
        )
        .replace("torch.float8_e4m3fn", "porter_shim.FP8_E4M3")
        .replace("448.0", "porter_shim.FP8_E4M3_MAX")
        .replace("tl.float8e4nv", "porter_shim.TL_FP8_E4M3"),
    )
    check(
        "PT206",
        FP8_SOURCE,
        [5],
        exclusive=True,
        expected=FP8_SOURCE.replace("float8_e4m3fn", "float8_e4m3fnuz")
        .replace("448.0", "240.0")
        .replace("float8e4nv", "float8e4b8"),
    )


def test_torch_fp8_dtype_leaves_sizes_and_block_scaled_formats_alone():
    sized = FP8_SOURCE.replace("FP8_MAX = 448.0", "FP8_MAX = 448.0\nIMAGE_SIZE = 448")
    result = run("PT206", sized, [5], exclusive=True)
    assert result is not None and "IMAGE_SIZE = 448\n" in result.text and "FP8_MAX = 240.0" in result.text
    nvfp4 = "# NVFP4 block scales are OCP e4m3 by definition\n" + FP8_SOURCE
    result = run("PT206", nvfp4, [6], exclusive=True)
    assert result is not None and "tl.float8e4nv" in result.text and "FP8_MAX = 448.0" in result.text


def test_torch_fp8_dtype_is_already_right_on_gfx950_exclusive():
    assert run("PT206", FP8_SOURCE, [5], target="mi350x", exclusive=True) is None


def test_fp8_max_literal():
    check(
        "PT207",
        FP8_SOURCE,
        [6],
        expected=FP8_SOURCE.replace(
            "import triton.language as tl\n", "import triton.language as tl\nimport porter_shim\n"
        ).replace("448.0", "porter_shim.FP8_E4M3_MAX"),
    )
    check("PT207", FP8_SOURCE, [6], exclusive=True, expected=FP8_SOURCE.replace("448.0", "240.0"))


def test_fp8_max_negative_literal():
    check("PT207", "y = x.clamp(-448.0, 448)\n", [1], exclusive=True, expected="y = x.clamp(-240.0, 240.0)\n")


def test_triton_fp8_dtype():
    check(
        "PT115",
        FP8_SOURCE,
        [12],
        expected=FP8_SOURCE.replace(
            "import triton.language as tl\n", "import triton.language as tl\nimport porter_shim\n"
        ).replace("tl.float8e4nv", "porter_shim.TL_FP8_E4M3"),
    )
    check("PT115", FP8_SOURCE, [12], exclusive=True, expected=FP8_SOURCE.replace("float8e4nv", "float8e4b8"))


DOT_SOURCE = """\
import triton
import triton.language as tl


@triton.jit
def k(a, b, acc):
    acc = tl.dot(a, b, acc, input_precision="tf32")
    return tl.dot(a, b, allow_tf32=True)
"""


def test_tf32_dot_precision_portable():
    result = check(
        "PT114",
        DOT_SOURCE,
        [7, 8],
        target="mi350x",
        expected=DOT_SOURCE.replace(
            "import triton.language as tl\n", "import triton.language as tl\nimport porter_shim\n"
        )
        .replace('input_precision="tf32"', "input_precision=porter_shim.DOT_PRECISION")
        .replace("allow_tf32=True", "input_precision=porter_shim.DOT_PRECISION"),
    )
    assert result.facts["best_fp32_dot_precision"] == "bf16x3"


def test_tf32_dot_precision_exclusive_gfx950():
    check(
        "PT114",
        DOT_SOURCE,
        [7, 8],
        target="mi350x",
        exclusive=True,
        expected=DOT_SOURCE.replace('"tf32"', '"bf16x3"').replace("allow_tf32=True", 'input_precision="bf16x3"'),
    )


def test_tf32x3_kept_in_portable_mode_with_a_note():
    result = run("PT114", 'c = tl.dot(a, b, input_precision="tf32x3")\n', [1], target="mi350x")
    assert result is None
