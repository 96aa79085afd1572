"""PT122 (Triton's NVIDIA backend internals) and PT316 (xformers' CUDA-only operators): what the findings carry
beyond their lines, which the rule files' own examples do not check."""

from __future__ import annotations

import functools

from porter.analyze import analyze_source, load_rules
from porter.analyze.rules import rules_dir

TUTORIAL_BASELINE = """\
import torch
if not IS_FBCODE:
    if torch.cuda.is_available():
        from triton._C.libtriton import nvidia
        cublas = nvidia.cublas.CublasLt(torch.empty(1024, device="cuda", dtype=torch.uint8))
"""


@functools.cache
def _rules(rule_id: str):
    return load_rules([next(rules_dir().rglob(f"{rule_id}-*.yaml"))])


def _findings(text: str, rule_id: str, target: str = "mi300x"):
    return [f for f in analyze_source(text, "pkg/mod.py", target, _rules(rule_id)) if f.rule == rule_id]


def test_the_look_alike_guard_is_named_with_its_line():
    """The port changes the `if torch.cuda.is_available():` line, not the construction: the finding points there."""
    (finding,) = _findings(TUTORIAL_BASELINE, "PT122")
    assert (finding.line, finding.severity) == (5, "error")
    assert finding.data["guard"] == {"line": 3, "text": "torch.cuda.is_available()"}
    assert "libcublas.so" in finding.message and "line 3" in finding.message


def test_an_unrelated_outer_test_is_not_the_guard():
    text = "import torch\nif not IS_FBCODE:\n    from triton._C.libtriton import nvidia\n    c = nvidia.cublas.CublasLt(w)\n"
    (finding,) = _findings(text, "PT122")
    assert "guard" not in finding.data


def test_a_compiler_internal_is_a_warning_and_the_driver_an_error():
    compiler = "from triton.backends.nvidia.compiler import min_dot_size\nsizes = min_dot_size(target)\n"
    driver = "from triton.backends.nvidia.driver import CudaUtils\nutils = CudaUtils()\n"
    assert [f.severity for f in _findings(compiler, "PT122")] == ["warning"]
    (found,) = _findings(driver, "PT122")
    assert found.severity == "error" and found.data["library"] == "libcuda.so.1"


def test_an_import_error_handler_does_not_catch_the_missing_library():
    caught_import = (
        "try:\n    from triton._C.libtriton import nvidia\n    c = nvidia.cublas.CublasLt(w)\nexcept ImportError:\n"
        "    c = None\n"
    )
    caught_all = caught_import.replace("except ImportError:", "except Exception:")
    assert [f.line for f in _findings(caught_import, "PT122")] == [3]
    assert _findings(caught_all, "PT122") == []


def test_xformers_operator_probes_are_not_uses():
    probe = "from xformers.ops.fmha import cutlass\nreasons = cutlass.FwOp.not_supported_reasons(inp)\n"
    applied = "from xformers.ops.fmha import cutlass\nout = cutlass.FwOp.apply(inp, needs_gradient=False)\n"
    assert _findings(probe, "PT316") == []
    assert [f.line for f in _findings(applied, "PT316")] == [2]


def test_a_benchmark_enabled_only_on_cuda_is_nvidia_only():
    text = (
        "import torch\nfrom xformers.ops.fmha import cutlass\n\n"
        "@register_benchmark(enabled=torch.version.cuda is not None)\n"
        "def bench(inp):\n    return cutlass.FwOp().apply(inp, needs_gradient=False)\n"
    )
    assert _findings(text, "PT316") == []
    assert [
        f.line for f in _findings(text.replace("enabled=torch.version.cuda is not None", "enabled=True"), "PT316")
    ] == [6]
