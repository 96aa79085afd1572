"""Project-level platform reachability (issue 14 part 1): predicates, regions, call sites, statements, re-exports."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from porter.analyze import load_rules
from porter.analyze.project import Project, ReachStatements
from porter.analyze.project_facts import module_facts
from porter.analyze.scan import scan_tree
from porter.config import PorterConfig, load_config
from porter.errors import ConfigError
from porter.targets import get_target


def project(files: dict[str, str], target: str = "mi300x", statements: ReachStatements | None = None) -> Project:
    texts = {path: textwrap.dedent(text) for path, text in files.items()}
    words = statements.words() if statements else ()
    facts = {path: module_facts(text, path, words) for path, text in texts.items()}
    return Project(facts, get_target(target), statements), texts


def reach(files: dict[str, str], path: str, marker: str, target: str = "mi300x", statements=None) -> tuple[str, str]:
    built, texts = project(files, target, statements)
    for number, line in enumerate(texts[path].splitlines(), start=1):
        if marker in line:
            verdict = built.reach(path, number, line.index(marker) + 1)
            return verdict.reach, verdict.reason
    raise AssertionError(f"{marker!r} not in {path}")


UTILS = """
    import functools
    import torch
    import triton

    @functools.lru_cache(maxsize=None)
    def is_hip() -> bool:
        return torch.version.hip is not None

    _is_hip = is_hip()

    def is_cdna() -> bool:
        return is_hip() and triton.runtime.driver.active.get_current_target().arch in ("gfx940", "gfx942", "gfx950")

    IS_NVIDIA = triton.runtime.driver.active.get_current_target().backend == "cuda"

    def get_device_type():
        if torch.cuda.is_available() and torch.version.hip:
            return "hip"
        elif torch.cuda.is_available():
            return "cuda"
        return "cpu"

    DEVICE_TYPE = get_device_type()

    def is_fp8_fnuz() -> bool:
        if _is_hip:
            return "gfx94" in torch.cuda.get_device_properties("cuda").gcnArchName
        return False

    def _check_tma_support():
        return IS_NVIDIA and torch.cuda.get_device_capability()[0] >= 9

    use_tma = _check_tma_support()
    IS_TF32_SUPPORTED = IS_NVIDIA and torch.cuda.get_device_capability()[0] >= 8
"""


def ops(body: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/ops.py": body}


def test_rocm_check_else_branch_is_nvidia_only_and_its_body_runs():
    files = ops("""
        from pkg.utils import is_hip
        def f():
            if is_hip():
                on_amd = 1
            else:
                on_nvidia = 2
    """)
    assert reach(files, "pkg/ops.py", "on_amd")[0] == "target"
    verdict, why = reach(files, "pkg/ops.py", "on_nvidia")
    assert verdict == "nvidia_only" and "is_hip()" in why


def test_predicates_are_read_from_their_definitions_not_their_names():
    files = ops("""
        from .utils import is_cuda
        def f():
            if is_cuda():
                runs_on_rocm_too = 1
    """)
    files["pkg/utils.py"] = "import torch\ndef is_cuda():\n    return torch.cuda.is_available()\n"
    assert reach(files, "pkg/ops.py", "runs_on_rocm_too")[0] == "target"  # is_available() is true on ROCm
    files["pkg/utils.py"] = "import torch\ndef is_cuda():\n    return torch.version.cuda is not None\n"
    assert reach(files, "pkg/ops.py", "runs_on_rocm_too")[0] == "nvidia_only"


@pytest.mark.parametrize(
    "test, expected",
    [
        ("IS_NVIDIA", "nvidia_only"),  # Triton's active backend
        ("not IS_NVIDIA", "target"),
        ("is_cdna()", "target"),  # derived from is_hip() and the target's arch
        ("_is_hip", "target"),
        ('DEVICE_TYPE in ("hip", "xpu")', "target"),
        ('DEVICE_TYPE == "cuda"', "nvidia_only"),
        ("use_tma", "nvidia_only"),  # use_tma = _check_tma_support() = IS_NVIDIA and cap >= 9
        ("IS_TF32_SUPPORTED", "nvidia_only"),
    ],
)
def test_derived_flags_and_predicates(test, expected):
    files = ops(f"""
        from pkg.utils import IS_NVIDIA, is_cdna, _is_hip, DEVICE_TYPE, use_tma, IS_TF32_SUPPORTED
        def f():
            if {test}:
                guarded = 1
    """)
    assert reach(files, "pkg/ops.py", "guarded")[0] == expected


def test_device_properties_decide_per_target():
    files = ops("""
        from pkg.utils import is_fp8_fnuz
        def f():
            if is_fp8_fnuz():
                fnuz_path = 1
    """)
    assert reach(files, "pkg/ops.py", "fnuz_path", "mi300x")[0] == "target"  # gfx942 reads fnuz fp8
    assert reach(files, "pkg/ops.py", "fnuz_path", "mi350x")[0] == "nvidia_only"  # gfx950 is OCP


def test_platform_objects_of_an_uninstalled_layer():
    files = {
        "pkg/ops.py": textwrap.dedent("""
        from vllm.platforms import current_platform
        def f():
            if current_platform.is_rocm():
                rocm = 1
            if current_platform.is_cuda():
                cuda = 1
            if current_platform.is_cuda_alike():
                alike = 1
            x = 1 if current_platform.has_device_capability(90) else 2
            y = hopper_only() if current_platform.is_device_capability(90) else 3
    """)
    }
    assert reach(files, "pkg/ops.py", "rocm")[0] == "target"
    assert reach(files, "pkg/ops.py", "cuda = 1")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "alike")[0] == "target"  # CUDA or ROCm
    assert reach(files, "pkg/ops.py", "1 if")[0] == "target"  # ROCm reports (9, 4) on gfx942: >= 90
    assert reach(files, "pkg/ops.py", "hopper_only")[0] == "nvidia_only"  # 94 != 90


def test_early_return_and_assert_leave_the_rest_of_the_block():
    files = ops("""
        import torch
        from pkg.utils import is_hip
        def f():
            if is_hip():
                return fallback()
            after_return = 1

        def g():
            assert torch.version.cuda, "CUDA build required"
            after_assert = 1

        def h():
            if torch.cuda.get_device_capability() < (9, 0):
                return
            hopper_gate = 1
    """)
    assert reach(files, "pkg/ops.py", "fallback")[0] == "target"
    assert reach(files, "pkg/ops.py", "after_return")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "after_assert")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "hopper_gate")[0] == "target"  # (9, 4) passes a Hopper gate: a real finding


def test_capability_is_bound_per_function():
    files = {
        "pkg/ops.py": textwrap.dedent("""
        import torch
        def from_arch(arch: str):
            major = int(arch[3])
            if major >= 10:
                parsed = 1

        def from_torch():
            major, minor = torch.cuda.get_device_capability()
            if major >= 10:
                blackwell = 1
    """)
    }
    assert reach(files, "pkg/ops.py", "parsed")[0] == "target"  # runtime data, not the CUDA capability
    assert reach(files, "pkg/ops.py", "blackwell")[0] == "nvidia_only"  # 9 >= 10 is false on gfx942


def test_undecided_platform_test_is_unknown():
    files = {
        "pkg/ops.py": textwrap.dedent("""
        import torch
        def f():
            if torch.cuda.get_device_properties(0).total_memory > 100 * 2**30:
                by_memory = 1
    """)
    }
    verdict, why = reach(files, "pkg/ops.py", "by_memory")
    assert verdict == "unknown" and "total_memory" in why


def test_constexpr_kernel_parameter_fed_from_a_flag():
    files = ops("""
        import triton
        import triton.language as tl
        from pkg.utils import use_tma, is_hip

        @triton.jit
        def kernel(X, USE_TMA: tl.constexpr, HIP: tl.constexpr = False):
            if USE_TMA:
                tma_path = 1
            if HIP:
                hip_path = 1

        def launch(x):
            kernel[(1,)](x, USE_TMA=use_tma, HIP=is_hip())
    """)
    assert reach(files, "pkg/ops.py", "tma_path")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "hip_path")[0] == "target"


def test_constexpr_flag_off_at_every_launch_compiles_its_branch_out():
    # seen on gemlite 0.6.0: inline PTX under `if ptx_pack:`, a constexpr defaulting to False, and launches that
    # pass a module setting that is False unless the user opts in
    files = ops("""
        import triton
        import triton.language as tl

        ENABLE_PTX_PACK = False
        FAST_PATH = True

        @triton.jit
        def pack(x, ptx_pack: tl.constexpr = False, fast: tl.constexpr = False, other: tl.constexpr = False):
            if ptx_pack:
                ptx_inline = 1
            if not ptx_pack:
                portable = 1
            if fast:
                fast_path = 1
            if other:
                passed_at_runtime = 1

        @triton.autotune(configs=[triton.Config({"tuned": True})], key=["n"])
        @triton.jit
        def tuned_kernel(x, n, tuned: tl.constexpr = False):
            if tuned:
                tuned_path = 1

        @triton.jit
        def never_launched(x, flag: tl.constexpr = False):
            if flag:
                no_launch = 1

        @triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
        @triton.jit
        def tuned_passed(x, n, BLOCK: tl.constexpr, ws: tl.constexpr = True):
            if ws:
                passed_off = 1

        def launch(x, y, n):
            pack[(1,)](x, ptx_pack=ENABLE_PTX_PACK, fast=FAST_PATH, other=y)
            pack[(1,)](x)
            pack[(1,)](x, other=n > 4)
            tuned_kernel[(1,)](x, n)
            tuned_passed[(1,)](x, n, ws=ENABLE_PTX_PACK)
    """)
    verdict, why = reach(files, "pkg/ops.py", "ptx_inline")
    assert verdict == "nvidia_only" and "`ptx_pack` is True" in why
    assert reach(files, "pkg/ops.py", "portable")[0] == "target"
    assert reach(files, "pkg/ops.py", "fast_path")[0] == "target"  # one launch passes a true value
    assert reach(files, "pkg/ops.py", "passed_at_runtime")[0] == "target"  # runtime values decide nothing
    assert reach(files, "pkg/ops.py", "tuned_path")[0] == "target"  # the autotuner's configs may set it
    assert reach(files, "pkg/ops.py", "passed_off")[0] == "nvidia_only"  # but not one every launch passes
    files["pkg/model.py"] = "from pkg.ops import launch\n"
    verdict, why = reach(files, "pkg/ops.py", "no_launch")  # no launch in the project: the kernel runs nowhere
    assert verdict == "unreached" and "nothing in the project launches" in why
    exported = {**files, **ops(files["pkg/ops.py"] + '\n        __all__ = ["never_launched"]\n')}
    assert reach(exported, "pkg/ops.py", "no_launch")[0] == "target"  # the package's API: callers unknown


def test_every_import_is_an_edge_of_the_import_graph_even_when_its_name_was_bound_before():
    # seen on adasplash 0.2.2: two functions of `__init__` import `sparse_attn`, one from each kernel module; the
    # second binding of the name is the only import of adasplash_v2, whose kernels the package does launch
    kernels = """
        import triton
        @triton.jit
        def unlaunched(x):
            dead_code = 1
    """
    files = {
        "pkg/__init__.py": """
            def v1(x):
                from .first import sparse_attn
                return sparse_attn(x)
            def v2(x):
                from .second import sparse_attn
                return sparse_attn(x)
        """,
        "pkg/first.py": kernels,
        "pkg/second.py": kernels,
    }
    for module in ("pkg/first.py", "pkg/second.py"):  # imported, so an unlaunched kernel there runs nowhere
        verdict, why = reach(files, module, "dead_code")
        assert verdict == "unreached" and "nothing in the project launches" in why


def test_backend_class_enabled_by_a_platform_flag():
    # seen on fla 0.6.0: TileLang backends set `default_enable = IS_NVIDIA_HOPPER and ...`; their kernels
    # (another module, used only by the class's methods) never run on AMD
    files = ops("""
        from pkg.utils import IS_NVIDIA, _is_hip
        from pkg.kernels import hopper_kernel, amd_kernel

        class HopperBackend(Backend):
            default_enable = IS_NVIDIA and TRITON_NEW
            def run(self, x):
                in_hopper_class = 1
                return hopper_kernel(x)

        class AmdBackend(Backend):
            default_enable = _is_hip
            def run(self, x):
                in_amd_class = 1
                return amd_kernel(x)

        class PlainBackend(Backend):
            default_enable = False
            def run(self, x):
                in_plain_class = 1

        class TypedBackend(Backend):
            enabled: ClassVar[bool] = IS_NVIDIA
            def run(self, x):
                in_typed_class = 1

        @dataclass
        class Settings:
            enabled: bool = IS_NVIDIA  # an instance's field: the class is used either way
            def run(self, x):
                in_settings = 1
    """)
    files["pkg/kernels.py"] = "def hopper_kernel(x):\n    threads = 1\ndef amd_kernel(x):\n    waves = 1\n"
    verdict, why = reach(files, "pkg/ops.py", "in_hopper_class")
    assert verdict == "nvidia_only" and "IS_NVIDIA and TRITON_NEW" in why
    assert reach(files, "pkg/kernels.py", "threads")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "in_amd_class")[0] == "target"
    assert reach(files, "pkg/kernels.py", "waves")[0] == "target"
    assert reach(files, "pkg/ops.py", "in_plain_class")[0] == "target"  # off everywhere: not a platform question
    assert reach(files, "pkg/ops.py", "in_typed_class")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "in_settings")[0] == "target"


def test_keyword_option_set_from_a_value_false_on_the_target():
    # seen on fla 0.6.0 (`launch_pdl=use_pdl`, use_pdl = IS_NVIDIA and cap >= 9) and gemlite 0.6.0
    # (`tl.range(..., warp_specialize=warp_specialize)`, a constexpr every launch leaves False)
    files = ops("""
        import triton
        import triton.language as tl
        from pkg.utils import IS_NVIDIA, _is_hip

        @triton.jit
        def kernel(x, n, warp_specialize: tl.constexpr = False, pipelined: tl.constexpr = False):
            for k in tl.range(n, warp_specialize=warp_specialize):
                pass
            for k in tl.range(n, num_stages=pipelined, loop_unroll_factor=n):
                pass

        def launch(x, n):
            use_pdl = IS_NVIDIA and n > 4
            on_amd = _is_hip
            kernel[(1,)](x, n, pipelined=n > 2, launch_pdl=use_pdl, hint=on_amd, count=n)
            build(name, cuda_home=torch.utils.cpp_extension.CUDA_HOME)
    """)
    verdict, why = reach(files, "pkg/ops.py", "warp_specialize=warp_specialize")
    assert verdict == "nvidia_only" and "`warp_specialize`, which is False" in why
    assert reach(files, "pkg/ops.py", "launch_pdl=use_pdl")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "num_stages=pipelined")[0] == "target"  # the launch's value is runtime data
    assert reach(files, "pkg/ops.py", "hint=on_amd")[0] == "target"  # true on ROCm
    assert reach(files, "pkg/ops.py", "count=n")[0] == "target"
    assert reach(files, "pkg/ops.py", "cuda_home=")[0] == "target"  # None on ROCm: what a rule may report
    assert reach(files, "pkg/ops.py", "kernel[(1,)]")[0] == "target"  # the call itself runs


def test_a_pdl_predicate_of_another_package_is_false_on_amd():
    # seen on tokenspeed 0.1.1: `ENABLE_PDL=pdl_enabled()` from tokenspeed_kernel (is_hopper_plus underneath), a
    # package outside the scanned tree; programmatic dependent launch exists only on NVIDIA sm_90+
    files = ops("""
        import triton
        import triton.language as tl
        from other_pkg.platform import pdl_enabled, tuned

        @triton.jit
        def kernel(x, ENABLE_PDL: tl.constexpr, FAST: tl.constexpr):
            if ENABLE_PDL:
                tl.extra.cuda.gdc_wait()
            if FAST:
                fast_path = 1

        def launch(x):
            kernel[(1,)](x, ENABLE_PDL=pdl_enabled(), FAST=tuned())
    """)
    assert reach(files, "pkg/ops.py", "gdc_wait")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "gdc_wait", target="mi350x")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "fast_path")[0] == "target"  # another package's unnamed choice: undecided
    assert reach(files, "pkg/ops.py", "gdc_wait", target="h100")[0] != "nvidia_only"
    # a switch a user sets is no capability predicate: on AMD it is where gdc_wait would fail
    for switch in ("cfg.ENABLE_PDL", "USE_PDL", "enable_pdl()"):
        flagged = {**files, "pkg/ops.py": files["pkg/ops.py"].replace("pdl_enabled()", switch)}
        flagged["pkg/ops.py"] = flagged["pkg/ops.py"].replace(
            "from other_pkg.platform import pdl_enabled, tuned", "from other_pkg.platform import cfg, USE_PDL, tuned"
        )
        assert reach(flagged, "pkg/ops.py", "gdc_wait")[0] != "nvidia_only", switch


def test_type_checking_imports_never_run():
    # seen on vllm 0.33.0: `if TYPE_CHECKING: from flashinfer.fused_moe import QuantFormat`
    files = ops("""
        from typing import TYPE_CHECKING
        import typing
        if TYPE_CHECKING:
            from flashinfer.fused_moe import QuantFormat
        if typing.TYPE_CHECKING:
            import cutlass
        if not TYPE_CHECKING:
            at_run_time = 1
    """)
    verdict, why = reach(files, "pkg/ops.py", "QuantFormat")
    assert verdict == "nvidia_only" and "TYPE_CHECKING" in why
    assert reach(files, "pkg/ops.py", "cutlass")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "at_run_time")[0] == "target"


def test_test_calling_a_platform_predicate_of_the_module():
    # seen on flag_gems 5.0.2: `if streamk_scenario(a, b, M, N, K):`, true only when the capability's major is 8
    files = ops("""
        import torch

        def streamk_scenario(a, M, K):
            capability = torch.cuda.get_device_capability()
            return capability[0] == 8 and a.is_contiguous() and K > M * 5

        def wide_scenario(a, M, K):
            capability = torch.cuda.get_device_capability()
            return capability[0] >= 8 and K > M * 5

        def mm(a, M, K):
            if streamk_scenario(a, M, K):
                streamk_launch = 1
            if wide_scenario(a, M, K):
                wide_launch = 1
            return general_launch(a)
    """)
    verdict, why = reach(files, "pkg/ops.py", "streamk_launch")
    assert verdict == "nvidia_only" and "streamk_scenario" in why
    assert reach(files, "pkg/ops.py", "wide_launch")[0] == "target"  # (9, 4) >= 8, and K decides at run time
    assert reach(files, "pkg/ops.py", "general_launch")[0] == "target"


def test_a_public_functions_parameters_are_not_read_from_the_projects_calls():
    # seen on flag_gems 5.0.2: fused_experts(..., use_int4_w4a16=False) is API (re-exported by flag_gems.fused):
    # users pass True; a public function's default is no evidence, only values every project call passes by name
    files = ops("""
        from pkg.utils import IS_NVIDIA

        def fused_experts(x, use_int4_w4a16: bool = False):
            if use_int4_w4a16:
                public_branch = 1

        def _dispatch(x, use_int4_w4a16: bool = False):
            if use_int4_w4a16:
                private_branch = 1

        def fill_state(x, use_pdl: bool = False):
            if use_pdl:
                pdl_wait = 1

        def run(x):
            fused_experts(x)
            _dispatch(x)
            fill_state(x, use_pdl=IS_NVIDIA)  # seen on lmdeploy 0.18.0: every call passes a platform value
    """)
    files["pkg/__init__.py"] = "from pkg.ops import fused_experts\n"
    assert reach(files, "pkg/ops.py", "public_branch")[0] == "target"
    assert reach(files, "pkg/ops.py", "private_branch")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "pdl_wait")[0] == "nvidia_only"


def test_function_whose_every_use_is_cuda_guarded():
    files = ops("""
        from pkg.utils import IS_NVIDIA
        def _cuda_helper():
            inside_private = 1

        def cuda_helper():
            inside_public = 1

        def _shared():
            inside_shared = 1

        def caller():
            if IS_NVIDIA:
                _cuda_helper()
                cuda_helper()
                _shared()
            _shared()
    """)
    assert reach(files, "pkg/ops.py", "inside_private")[0] == "nvidia_only"
    # seen on fla 0.6.0: softplus_nv (inline PTX) is used only under `if IS_NVIDIA:`, and no `__init__` exports it
    assert reach(files, "pkg/ops.py", "inside_public")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "inside_shared")[0] == "target"
    # a package's API (imported by name in an `__init__`) has callers outside the project; a star import is no API
    files["pkg/__init__.py"] = "from pkg.ops import cuda_helper\nfrom pkg.ops import *\n"
    assert reach(files, "pkg/ops.py", "inside_public")[0] == "unknown"
    assert reach(files, "pkg/ops.py", "inside_private")[0] == "nvidia_only"
    # an `__init__` that imports the function to use it itself (a backend package) does not re-export it
    files["pkg/__init__.py"] = (
        "from pkg.ops import cuda_helper\nfrom pkg.utils import IS_NVIDIA\nif IS_NVIDIA:\n    register(cuda_helper)\n"
    )
    assert reach(files, "pkg/ops.py", "inside_public")[0] == "nvidia_only"
    files["pkg/__init__.py"] += "__all__ = ['cuda_helper']\n"
    assert reach(files, "pkg/ops.py", "inside_public")[0] == "unknown"


def test_platform_classes_and_vendor_folders():
    files = {
        "vllm/platforms/cuda.py": "class CudaPlatformBase(Platform):\n    _enum = PlatformEnum.CUDA\n    def f(self):\n        cuda_cls = 1\n",
        "vllm/platforms/rocm.py": "class RocmPlatform(Platform):\n    _enum = PlatformEnum.ROCM\n    def f(self):\n        rocm_cls = 1\n",
        "flag_gems/runtime/backend/_ascend/ops.py": "def f():\n    ascend = 1\n",
        "flag_gems/runtime/backend/_amd/ops.py": "def f():\n    amd = 1\n",
        "gptqmodel/nn_modules/qlinear/mlx.py": "def f():\n    apple = 1\n",  # Apple's MLX backend
        "gptqmodel/nn_modules/qlinear/mlxtra.py": "def f():\n    other = 1\n",
    }
    assert reach(files, "vllm/platforms/cuda.py", "cuda_cls")[0] == "nvidia_only"
    assert reach(files, "vllm/platforms/rocm.py", "rocm_cls")[0] == "target"
    assert reach(files, "flag_gems/runtime/backend/_ascend/ops.py", "ascend")[0] == "nvidia_only"
    assert reach(files, "flag_gems/runtime/backend/_amd/ops.py", "amd")[0] == "target"
    assert reach(files, "gptqmodel/nn_modules/qlinear/mlx.py", "apple")[0] == "nvidia_only"
    assert reach(files, "gptqmodel/nn_modules/qlinear/mlxtra.py", "other")[0] == "target"


def test_nvidia_module_of_a_per_vendor_layer_with_an_amd_sibling():
    # seen on zeus (device/gpu/nvidia.py beside amd.py) and gitm-labs (telemetry/backends/nvidia.py beside amd.py):
    # the platform loads its own vendor's module; an `nvidia.py` with no AMD sibling may be what every GPU runs
    files = {
        "zeus/gpu/nvidia.py": "def f():\n    nvml_backend = 1\n",
        "zeus/gpu/amd.py": "def f():\n    amdsmi_backend = 1\n",
        "tool/nvidia_smi.py": "def f():\n    lone = 1\n",
        "other/amd.py": "def f():\n    elsewhere = 1\n",
    }
    verdict, why = reach(files, "zeus/gpu/nvidia.py", "nvml_backend")
    assert verdict == "nvidia_only" and "`amd.py` beside it" in why
    assert reach(files, "zeus/gpu/amd.py", "amdsmi_backend")[0] == "target"
    assert reach(files, "tool/nvidia_smi.py", "lone")[0] == "target"  # its AMD module would sit in its own folder
    assert reach(files, "zeus/gpu/nvidia.py", "nvml_backend", target="mi350x")[0] == "nvidia_only"
    # an AMD module built on the NVIDIA one (`class AMDGPU(NvidiaGPU)`) runs its code on AMD
    files["zeus/gpu/amd.py"] = "from zeus.gpu.nvidia import f as base\ndef f():\n    amdsmi_backend = 1\n"
    assert reach(files, "zeus/gpu/nvidia.py", "nvml_backend")[0] == "target"


def test_module_importing_an_nvidia_only_library_at_top_level_never_loads():
    # seen on real code: vllm's CuTe-DSL router and liger's cutedsl ops import cutlass / cuda.bindings at top
    # level; a guarded or function-level import, or Triton's own NVIDIA modules, leave the module loadable
    files = {
        "pkg/router_cutedsl.py": "import cutlass\nfrom cuda.bindings.driver import CUstream\ndef f():\n    cute_launch = 1\n",
        "pkg/guarded.py": "try:\n    import cutlass\nexcept ImportError:\n    cutlass = None\ndef f():\n    guarded = 1\n",
        "pkg/lazy.py": "def f():\n    import deep_gemm\n    lazy = 1\n",
        "pkg/kernels.py": "from triton.language.extra.cuda import libdevice\ndef f():\n    ptx_math = 1\n",
        "pkg/cuda_utils.py": "import cudaq_like_name\nfrom cuda_helpers import x\ndef f():\n    similar_names = 1\n",
    }
    verdict, why = reach(files, "pkg/router_cutedsl.py", "cute_launch")
    assert verdict == "nvidia_only" and "imports `cutlass` (line 1) unconditionally" in why
    assert reach(files, "pkg/guarded.py", "guarded")[0] == "target"
    assert reach(files, "pkg/lazy.py", "lazy")[0] == "target"
    assert reach(files, "pkg/kernels.py", "ptx_math")[0] == "target"
    assert reach(files, "pkg/cuda_utils.py", "similar_names")[0] == "target"


def test_module_importing_an_nvidia_only_library_in_every_branch_never_loads():
    # seen on lightning-thunder 0.2.6: the nvFuser executor imports nvfuser_direct or nvfuser, by version
    both = "if version() >= 2:\n    import nvfuser_direct as nvfuser\nelse:\n    import nvfuser\n"
    files = {
        "pkg/nvfuserex_impl.py": both + "def f():\n    fuser = 1\n",
        "pkg/elif_chain.py": "if a:\n    import nvfuser\nelif b:\n    import cutlass\nelse:\n    import deep_gemm\n"
        "def f():\n    chain = 1\n",
        "pkg/fallback.py": "if a:\n    import nvfuser\nelse:\n    import torch\ndef f():\n    portable = 1\n",
        "pkg/no_else.py": "if a:\n    import nvfuser\ndef f():\n    optional = 1\n",
        "pkg/open_elif.py": "if a:\n    import nvfuser\nelif b:\n    import cutlass\ndef f():\n    open_chain = 1\n",
    }
    verdict, why = reach(files, "pkg/nvfuserex_impl.py", "fuser")
    assert verdict == "nvidia_only" and "`nvfuser_direct` or `nvfuser`" in why
    assert reach(files, "pkg/elif_chain.py", "chain")[0] == "nvidia_only"
    assert reach(files, "pkg/fallback.py", "portable")[0] == "target"
    assert reach(files, "pkg/no_else.py", "optional")[0] == "target"
    assert reach(files, "pkg/open_elif.py", "open_chain")[0] == "target"


def test_module_written_in_gluons_hopper_dialect_is_nvidia_only():
    # lmdeploy 0.18.0 blocked_fp8_gemm_gluon.py: wgmma/TMA Gluon kernels compile for Hopper only; the AMD
    # dialect, or plain Gluon, is not about NVIDIA
    files = {
        "pkg/gemm_gluon.py": "from triton.experimental.gluon.language.nvidia.hopper import tma\ndef f():\n    wgmma = 1\n",
        "pkg/desc.py": "from triton.experimental.gluon.nvidia.blackwell import TensorDescriptor\ndef f():\n    tcgen = 1\n",
        "pkg/amd_gluon.py": "from triton.experimental.gluon.language.amd import cdna3\ndef f():\n    mfma = 1\n",
        "pkg/plain.py": "from triton.experimental.gluon import language as gl\ndef f():\n    portable = 1\n",
    }
    verdict, why = reach(files, "pkg/gemm_gluon.py", "wgmma")
    assert verdict == "nvidia_only" and "compile only for NVIDIA" in why
    assert reach(files, "pkg/desc.py", "tcgen")[0] == "nvidia_only"
    assert reach(files, "pkg/amd_gluon.py", "mfma")[0] == "target"
    assert reach(files, "pkg/plain.py", "portable")[0] == "target"


def test_user_statements():
    files = {
        "mypkg/__init__.py": "",
        "mypkg/cuda_kernels/__init__.py": "",
        "mypkg/utils.py": "def is_cuda():\n    return read_env()\n",
        "mypkg/ops.py": textwrap.dedent("""
        from mypkg.utils import is_cuda
        from mypkg.flags import FAST_PATH
        def f():
            if is_cuda():
                stated = 1
            if FAST_PATH:
                rocm_stated = 1
    """),
    }
    assert reach(files, "mypkg/ops.py", "stated")[0] == "nvidia_only"  # undecided by its body: read by name
    files["mypkg/ops.py"] = files["mypkg/ops.py"].replace("is_cuda", "fancy_check")
    files["mypkg/utils.py"] = "def fancy_check():\n    return read_env()\n"
    assert reach(files, "mypkg/ops.py", "stated")[0] == "target"  # nothing says it is about the platform
    stated = ReachStatements(
        nvidia_only=("mypkg.utils.fancy_check",), rocm_only=("FAST_PATH",), nvidia_only_paths=("mypkg/cuda_kernels/*",)
    )
    assert reach(files, "mypkg/ops.py", "stated", statements=stated)[0] == "nvidia_only"
    assert reach(files, "mypkg/ops.py", "rocm_stated", statements=stated)[0] == "target"
    files["mypkg/cuda_kernels/k.py"] = "def f():\n    in_path = 1\n"
    assert reach(files, "mypkg/cuda_kernels/k.py", "in_path", statements=stated)[0] == "nvidia_only"
    assert reach(files, "mypkg/cuda_kernels/k.py", "in_path")[0] == "target"


def test_config_keys(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.porter]\nnvidia_only = ["mypkg.utils.is_cuda", "IS_NVIDIA"]\nrocm_only = "mypkg.utils.on_amd"\n'
        'nvidia_only_paths = ["mypkg/_nvidia/*"]\n'
    )
    config = load_config(tmp_path)
    assert config.nvidia_only == ("mypkg.utils.is_cuda", "IS_NVIDIA")
    assert config.rocm_only == ("mypkg.utils.on_amd",)
    assert config.nvidia_only_paths == ("mypkg/_nvidia/*",)
    (tmp_path / "pyproject.toml").write_text("[tool.porter]\nnvidia_only = 3\n")
    with pytest.raises(ConfigError, match="nvidia_only"):
        load_config(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.porter]\nnvidia_onyl = []\n")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(tmp_path)


def test_reexports_resolve_through_the_project():
    built, _ = project(
        {
            "pkg/__init__.py": "",
            "pkg/triton_utils/__init__.py": "from pkg.triton_utils.importing import HAS_TRITON\nif HAS_TRITON:\n    import triton\n    import triton.language as tl\n",
            "pkg/triton_utils/importing.py": "HAS_TRITON = True\n",
            "pkg/layers/ops.py": "from pkg.triton_utils import tl, triton\nfrom ..triton_utils import tl as tl2\nfrom pkg.triton_utils.importing import HAS_TRITON\n",
            "pkg/other.py": "from .triton_utils import triton as tr\n",
        }
    )
    assert built.aliases_for("pkg/layers/ops.py") == {
        "tl": "triton.language",
        "triton": "triton",
        "tl2": "triton.language",
    }
    assert built.aliases_for("pkg/other.py") == {"tr": "triton"}


KERNEL = """
from pkg.triton_utils import tl, triton


@triton.jit
def add_kernel(X, N, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + offsets, tl.load(X + offsets, mask=offsets < N), mask=offsets < N)


def add(x):
    add_kernel[(1,)](x, x.numel(), BLOCK=1024, num_warps=32)
"""


MM_KERNEL = """
from pkg.triton_utils import tl, triton


@triton.jit
def mm_kernel(A, B, C, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    a = tl.load(A + tl.arange(0, BLOCK_M)[:, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, :])
    b = tl.load(B + tl.arange(0, BLOCK_K)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :])
    c = tl.dot(a, b)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [c], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(C + tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :], y)


def mm(a, b, c):
    mm_kernel[(1,)](a, b, c, BLOCK_M=256, BLOCK_N=256, BLOCK_K=128, num_warps=8, num_stages=4)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))


def test_triton_rules_see_kernels_through_a_reexport(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/triton_utils.py": "import triton\nimport triton.language as tl\n",
            "pkg/ops.py": MM_KERNEL,
        },
    )
    ruleset = load_rules(extend_select=["PT103"])  # PT103 is opt-in (the NVIDIA-tuning group)
    found = scan_tree(tmp_path, "mi300x", ruleset, jobs=1, config=PorterConfig())
    assert {"PT109", "PT103"} <= {f.rule for f in found.findings if f.path == "pkg/ops.py"}  # inline asm, LDS
    # the re-export module changes: the cached findings of the importing file must not be reused
    (tmp_path / "pkg/triton_utils.py").write_text("tl = None\ntriton = None\n")
    again = scan_tree(tmp_path, "mi300x", ruleset, jobs=1, config=PorterConfig())
    assert not {"PT109", "PT103"} & {f.rule for f in again.findings}


def test_a_triton_build_under_another_name_is_triton(tmp_path):
    # tokenspeed re-exports `import tokenspeed_triton as triton` from its utils; a module importing the build
    # directly reads the same: every Triton rule sees the kernels (they were silent on all of tokenspeed's)
    direct = MM_KERNEL.replace(
        "from pkg.triton_utils import tl, triton",
        "import fork_triton as triton\nfrom fork_triton import language as tl",
    )
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/triton_utils.py": "import fork_triton as triton\nimport fork_triton.language as tl\n",
            "pkg/ops.py": MM_KERNEL,
            "pkg/direct.py": direct,
        },
    )
    found = scan_tree(tmp_path, "mi300x", load_rules(), jobs=1, config=PorterConfig(), use_cache=False)
    assert {f.path for f in found.findings if f.rule == "PT109"} == {"pkg/ops.py", "pkg/direct.py"}  # inline asm
    # a module of another name imported as `tr`, or a submodule imported as triton, is no Triton build
    (tmp_path / "pkg/triton_utils.py").write_text("import fork_triton as tr\nfrom fork import triton\n")
    again = scan_tree(tmp_path, "mi300x", load_rules(), jobs=1, config=PorterConfig(), use_cache=False)
    assert {f.path for f in again.findings if f.rule == "PT109"} == {"pkg/direct.py"}


# a package whose ops module gates a capability read on a predicate of its utils module (True on ROCm)
AMD_BUILD_PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/utils.py": "import torch\ndef amd_build():\n    return torch.version.hip is not None\n",
    "pkg/ops.py": """
        import torch
        from pkg.utils import amd_build

        def pick_tma():
            if not amd_build():
                return torch.cuda.get_device_capability() >= (9, 0)
            return False
    """,
}


def test_scan_drops_nvidia_only_findings_and_recomputes_reach_from_cached_facts(tmp_path):
    write(tmp_path, AMD_BUILD_PACKAGE)
    ruleset = load_rules()
    first = scan_tree(tmp_path, "mi300x", ruleset, jobs=1, config=PorterConfig())
    assert not [f for f in first.findings if f.path == "pkg/ops.py"]
    hidden = [f for f in first.unreachable if f.path == "pkg/ops.py"]
    assert hidden and all(f.reach == "nvidia_only" and "amd_build()" in f.reach_reason for f in hidden)
    # only the predicate's module changes: ops.py's findings come from the cache, its reach is decided anew
    (tmp_path / "pkg/utils.py").write_text("def amd_build():\n    return False\n")
    second = scan_tree(tmp_path, "mi300x", ruleset, jobs=1, config=PorterConfig())
    assert second.stats.cache_hits >= 1
    assert [f.rule for f in second.findings if f.path == "pkg/ops.py"] == [f.rule for f in hidden]


def test_scanning_the_package_folder_itself_resolves_the_package_s_own_absolute_imports(tmp_path):
    # `porter scan pkg` (the package as root) names its modules `pkg.ops` as `porter scan .` does from the folder
    # above: `from pkg.utils import amd_build` resolves, and both give the same reach (freetoken's norm.py)
    write(tmp_path, AMD_BUILD_PACKAGE)
    ruleset = load_rules()
    above = scan_tree(tmp_path, "mi300x", ruleset, jobs=1, config=PorterConfig(), use_cache=False)
    inside = scan_tree(tmp_path / "pkg", "mi300x", ruleset, jobs=1, config=PorterConfig(), use_cache=False)
    assert above.unreachable and not above.findings
    assert not inside.findings and [f.path for f in inside.unreachable] == ["ops.py"] * len(above.unreachable)
    assert [f.reach_reason for f in inside.unreachable] == [f.reach_reason for f in above.unreachable]


def test_cli_exit_code_ignores_unreachable_and_the_flag_shows_them(tmp_path, capsys):
    from porter.cli import main

    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/backend/_ascend/k.py": KERNEL.replace("pkg.triton_utils", "triton_shim"),
            "triton_shim.py": "import triton\nimport triton.language as tl\n",
        },
    )
    args = ["scan", str(tmp_path), "--target", "mi300x", "--format", "json", "--no-cache", "--fail-on", "info"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
    assert main([*args, "--show-unreachable"]) == 0
    records = json.loads(capsys.readouterr().out)["findings"]
    assert any(r["rule"] == "PT101" and r["reach"] == "nvidia_only" for r in records)


def test_kernel_inventory_lists_kernels_defined_through_a_reexport(tmp_path):
    from porter.analyze.scan import kernel_inventory

    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/triton_utils.py": "import triton\nimport triton.language as tl\n",
            "pkg/ops.py": MM_KERNEL,
        },
    )

    def kernels() -> list[str]:
        inventory = kernel_inventory(tmp_path, "mi300x", config=PorterConfig(), jobs=1)
        return [kernel["name"] for found in inventory.files for kernel in found["kernels"]]

    assert kernels() == ["mm_kernel"]
    (tmp_path / "pkg/triton_utils.py").write_text("tl = None\ntriton = None\n")
    assert kernels() == []


def test_seen_on_real_code_tensor_flags_and_positional_parameters_stay_undecided():
    files = {
        "pkg/ops.py": textwrap.dedent("""
        def dequant(x, quant_state=None, store_preact=True):
            if x.is_cuda and quant_state is None:
                tensor_flag = 1
            if store_preact:
                by_position = 1

        def caller(x, s):
            dequant(x, s, False)

        class RocmLike:
            def pick(self):
                if self.is_rocm():
                    method_by_name = 1
                else:
                    method_else = 1
    """)
    }
    assert reach(files, "pkg/ops.py", "tensor_flag")[0] == "target"  # x.is_cuda is true on ROCm as well
    # passed positionally (False): not its default; the platform does not decide it, the project's only call
    # leaves it off (marked in host code as opt-in, never NVIDIA-only)
    verdict, why = reach(files, "pkg/ops.py", "by_position")
    assert verdict == "unknown" and "`store_preact` is True" in why
    assert reach(files, "pkg/ops.py", "method_by_name")[0] == "target"
    assert reach(files, "pkg/ops.py", "method_else")[0] == "nvidia_only"


def test_code_after_an_import_probe_of_an_nvidia_only_library_needs_it():
    # lmdeploy 0.18.0 blockedf8_modules.py: `try: import deep_gemm / except ImportError: return False`, then a
    # capability gate that only NVIDIA reaches; a probe of a portable library, or a handler that falls through,
    # leaves the rest on the target
    files = {
        "pkg/probe.py": textwrap.dedent("""
        def has_deep_gemm():
            try:
                import deep_gemm
            except ImportError:
                return False
            return hopper_gate()

        def has_triton():
            try:
                import triton
            except ImportError:
                return False
            return portable_gate()

        def falls_through():
            try:
                import deep_gemm
            except ImportError:
                deep_gemm = None
            return fallback_gate()
        """)
    }
    verdict, why = reach(files, "pkg/probe.py", "hopper_gate")
    assert verdict == "nvidia_only" and "import deep_gemm" in why
    assert reach(files, "pkg/probe.py", "portable_gate")[0] == "target"
    assert reach(files, "pkg/probe.py", "fallback_gate")[0] == "target"


STAR_UTILS = """
import torch

try:
    import deep_gemm  # noqa: F401
    _has_deep_gemm = True
except ImportError:
    _has_deep_gemm = False


def on_nv_build():
    return torch.version.cuda is not None


use_dg = on_nv_build() and _has_deep_gemm
_use_gate = on_nv_build()
"""


@pytest.mark.parametrize(
    "files",
    [
        {"pkg/__init__.py": "", "pkg/utils.py": STAR_UTILS},
        {"pkg/__init__.py": "", "pkg/base.py": STAR_UTILS, "pkg/utils.py": "from .base import *\n"},
        {"pkg/__init__.py": "", "pkg/base.py": STAR_UTILS, "pkg/utils.py": "from pkg.base import use_dg\n"},
    ],
    ids=["star", "star-of-star", "star-of-reexport"],
)
def test_star_imports_take_flags_from_the_imported_module(files):
    user = "from .utils import *\n\n\ndef run(x):\n    if use_dg:\n        return x.DG_CALL\n    return x.OTHER\n"
    files = {**files, "pkg/ops.py": user}
    assert reach(files, "pkg/ops.py", "DG_CALL")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "OTHER")[0] != "nvidia_only"


def test_star_imports_honour_all_and_private_names():
    user = "from .utils import *\n\n\ndef run(x):\n    if _use_gate:\n        return x.PRIVATE\n    if use_dg:\n        return x.LISTED\n"
    files = {"pkg/__init__.py": "", "pkg/utils.py": STAR_UTILS, "pkg/ops.py": user}
    assert reach(files, "pkg/ops.py", "PRIVATE")[0] != "nvidia_only"  # `_private` names are not star-exported
    assert reach(files, "pkg/ops.py", "LISTED")[0] == "nvidia_only"
    hidden = {**files, "pkg/utils.py": STAR_UTILS + "__all__ = ['on_nv_build']\n"}
    assert reach(hidden, "pkg/ops.py", "LISTED")[0] != "nvidia_only"  # not in __all__: not imported by *


def amd_only(files: dict[str, str], path: str, marker: str, target: str = "mi300x") -> str | None:
    """The reason code at `marker` is found written for AMD (Project.amd_only), or None."""
    built, texts = project(files, target)
    for number, line in enumerate(texts[path].splitlines(), start=1):
        if marker in line:
            verdict = built.amd_only(path, number, line.index(marker) + 1)
            return verdict.reason if verdict is not None else None
    raise AssertionError(f"{marker!r} not in {path}")


def test_code_written_for_amd_is_what_the_analysis_run_for_nvidia_does_not_reach():
    files = ops("""
        import torch
        from pkg.utils import is_hip, IS_NVIDIA
        from vllm.platforms import current_platform

        def pick():
            if is_hip():
                amd_branch = 1
            if current_platform.is_rocm():
                platform_branch = 1
            if not IS_NVIDIA:
                not_nvidia = 1
            if torch.cuda.is_available():
                both_vendors = 1
            if torch.cuda.get_device_capability() >= (8, 0):
                capability_on_both = 1
            if IS_NVIDIA:
                nvidia_branch = 1
            plain = 1

        def _amd_helper():
            helper_body = 1

        def _shared_helper():
            shared_body = 1

        def run():
            if is_hip():
                _amd_helper()
                _shared_helper()
            else:
                _shared_helper()
    """)
    files["pkg/rocm_native.py"] = "def f():\n    amd_module = 1\n"
    files["pkg/rocmish.py"] = "def f():\n    similar_name = 1\n"
    files["pkg/ops/rocm/gemm.py"] = "def f():\n    amd_folder = 1\n"
    files["pkg/aiter_ops.py"] = "import aiter\ndef f():\n    needs_aiter = 1\n"
    files["pkg/platforms.py"] = (
        "class RocmPlatform(Platform):\n    _enum = PlatformEnum.ROCM\n    def f(self):\n        rocm_cls = 1\n"
        "class CudaPlatform(Platform):\n    _enum = PlatformEnum.CUDA\n    def f(self):\n        cuda_cls = 1\n"
    )
    assert "`is_hip()` is True; on h100 it is False" in amd_only(files, "pkg/ops.py", "amd_branch")
    for marker in ("platform_branch", "not_nvidia", "helper_body"):
        assert amd_only(files, "pkg/ops.py", marker), marker
    for marker in ("both_vendors", "capability_on_both", "plain", "shared_body"):
        assert amd_only(files, "pkg/ops.py", marker) is None, marker
    assert amd_only(files, "pkg/ops.py", "nvidia_branch") is None  # not on the target at all: reach says so
    assert "`rocm_native.py`" in amd_only(files, "pkg/rocm_native.py", "amd_module")
    assert amd_only(files, "pkg/rocmish.py", "similar_name") is None
    assert "`rocm/`" in amd_only(files, "pkg/ops/rocm/gemm.py", "amd_folder")
    assert "`aiter`" in amd_only(files, "pkg/aiter_ops.py", "needs_aiter")
    assert "RocmPlatform" in amd_only(files, "pkg/platforms.py", "rocm_cls")
    assert amd_only(files, "pkg/platforms.py", "cuda_cls") is None


def test_user_statements_are_read_the_other_way_round_for_nvidia():
    files = ops("from mypkg import on_amd_gpu\nif on_amd_gpu():\n    stated = 1\n")
    statements = ReachStatements(rocm_only=("on_amd_gpu",))
    built, texts = project(files, "mi300x", statements)
    line = next(n for n, text in enumerate(texts["pkg/ops.py"].splitlines(), start=1) if "stated" in text)
    assert built.reach("pkg/ops.py", line, 5).reach == "target"
    assert built.amd_only("pkg/ops.py", line, 5) is not None


def test_nvidia_tuning_findings_are_dropped_in_code_written_for_amd(tmp_path):
    # seen on aphrodite-engine 0.24.1: kernels/linear/mxfp8/rocm_native.py, a gfx950 MXFP8 GEMM whose tile table
    # was measured on gfx950; PT103/PT107 said its stages and LDS were tuned for NVIDIA
    guarded = MM_KERNEL.replace(
        "def mm(a, b, c):\n", "def mm(a, b, c):\n    if not torch.version.hip:\n        return\n"
    ).replace("from pkg", "import torch\nfrom pkg")
    either = MM_KERNEL.replace(
        "def mm(a, b, c):\n", "def mm(a, b, c):\n    if not torch.cuda.is_available():\n        return\n"
    )
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/triton_utils.py": "import triton\nimport triton.language as tl\n",
            "pkg/rocm_gemm.py": MM_KERNEL,
            "pkg/guarded_gemm.py": guarded,
            "pkg/gemm.py": MM_KERNEL,
            "pkg/either_gemm.py": either.replace("from pkg", "import torch\nfrom pkg"),
        },
    )
    rules = load_rules(extend_select=["PT103"])  # PT103 is opt-in (the NVIDIA-tuning group)
    found = scan_tree(tmp_path, "mi300x", rules, jobs=1, config=PorterConfig())
    reported = {(f.path, f.rule) for f in found.findings}
    dropped = [f for f in found.unreachable if f.reach == "rocm_only"]
    for path in ("pkg/rocm_gemm.py", "pkg/guarded_gemm.py"):
        assert (path, "PT103") not in reported and (path, "PT109") in reported  # inline PTX breaks on AMD code too
        assert any(f.path == path and f.rule == "PT103" and "written for AMD" in f.reach_reason for f in dropped)
    for path in ("pkg/gemm.py", "pkg/either_gemm.py"):
        assert (path, "PT103") in reported


def test_a_convolution_premise_holds_only_where_the_project_may_convolve(tmp_path):
    # seen on rwkv 0.8.32: model.py sets cudnn.benchmark, but RWKV runs no convolution, so MIOpen's find never runs
    flag = "import torch\ntorch.backends.cudnn.benchmark = True\n"
    model = "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        self.proj = nn.{layer}\n"

    def pt205_paths(files: dict[str, str]) -> set[str]:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        write(root, files)
        found = scan_tree(root, "mi300x", load_rules(), jobs=1, config=PorterConfig())
        return {f.path for f in found.findings if f.rule == "PT205"}

    recurrent = {"pkg/__init__.py": "", "pkg/train.py": flag, "pkg/model.py": model.format(layer="Linear(4, 4)")}
    assert pt205_paths(recurrent) == set()
    convolutional = {**recurrent, "pkg/model.py": model.format(layer="Conv2d(3, 8, 3)")}
    assert pt205_paths(convolutional) == {"pkg/train.py"}
    from_a_model_zoo = {**recurrent, "pkg/model.py": "import timm\n"}
    assert pt205_paths(from_a_model_zoo) == {"pkg/train.py"}
    assert pt205_paths({"train.py": flag}) == {"train.py"}  # alone, the model may live anywhere


def test_amd_arch_guards_decide_per_target_and_mark_code_written_for_amd():
    files = ops("""
        import torch
        import triton
        from amd_helpers import is_gfx950, on_gfx942, is_cdna3

        def arch():
            return triton.runtime.driver.active.get_current_target().arch

        def pick():
            if is_gfx950():
                gfx950_by_name = 1
            if on_gfx942():
                gfx942_by_name = 1
            if is_cdna3():
                cdna3_by_name = 1
            if "gfx95" in torch.cuda.get_device_properties(0).gcnArchName:
                gfx95_by_string = 1
            if arch() == "gfx942":
                gfx942_by_triton = 1
            if is_gfx950_or_newer():
                undecided_name = 1

        def dispatch(backend):
            if backend.is_gfx95():  # seen on sglang 0.5.23: which GEMM backend was chosen, not which GPU runs
                chosen_backend = 1
            else:
                other_backend = 1
    """)
    for marker, on in [
        ("gfx950_by_name", "mi350x"),
        ("gfx942_by_name", "mi300x"),
        ("cdna3_by_name", "mi300x"),
        ("gfx95_by_string", "mi350x"),
        ("gfx942_by_triton", "mi300x"),
    ]:
        off = "mi300x" if on == "mi350x" else "mi350x"
        assert reach(files, "pkg/ops.py", marker, on)[0] == "target", marker
        verdict, why = reach(files, "pkg/ops.py", marker, off)
        assert verdict == "nvidia_only" and f"on {off} it is False" in why, marker
        assert amd_only(files, "pkg/ops.py", marker, on), marker  # never runs on NVIDIA either
    assert reach(files, "pkg/ops.py", "undecided_name", "mi300x")[0] == "unknown"
    for target in ("mi300x", "mi350x"):
        assert reach(files, "pkg/ops.py", "chosen_backend", target)[0] == "unknown"
        assert reach(files, "pkg/ops.py", "other_backend", target)[0] == "unknown"


def test_cli_shows_findings_dropped_in_code_written_for_amd_with_the_reason(tmp_path, capsys):
    from porter.cli import main

    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/triton_utils.py": "import triton\nimport triton.language as tl\n",
            "pkg/rocm_gemm.py": MM_KERNEL,
        },
    )
    args = ["scan", str(tmp_path), "--target", "mi350x", "--format", "json", "--no-cache", "--select", "PT103"]
    main(args)
    captured = capsys.readouterr()
    assert json.loads(captured.out)["findings"] == []
    assert "premised on NVIDIA tuning in code written for AMD (1)" in captured.err
    main([*args, "--show-unreachable"])
    records = json.loads(capsys.readouterr().out)["findings"]
    assert [(r["rule"], r["reach"]) for r in records] == [("PT103", "rocm_only")]
    assert "written for AMD, it does not run on h100" in records[0]["reach_reason"]


def test_arch_parsed_from_gcn_arch_name_with_a_regex():
    # seen on helion (_compat.supports_amd_cdna_tunables): the gfx number is parsed with re.match and int(..., 16)
    files = ops("""
        import re
        import torch
        from pkg.utils import is_hip

        def supports_amd_cdna_tunables() -> bool:
            if not is_hip():
                return False
            try:
                props = torch.cuda.get_device_properties(torch.cuda.current_device())
                arch = getattr(props, "gcnArchName", None)
                if arch is None:
                    return False
                match = re.match(r"gfx([0-9a-f]{3})", arch.split(":")[0])
                return match is not None and int(match.group(1), 16) >= 0x908
            except Exception:
                return False

        def wide_mfma():
            return re.search(r"gfx95[0-9]", torch.cuda.get_device_properties(0).gcnArchName) is not None

        def pick(pattern, text):
            if not supports_amd_cdna_tunables():
                eviction_hints = 1
            if supports_amd_cdna_tunables():
                cdna_space = 1
            if wide_mfma():
                gfx95_space = 1
            if re.match(pattern, text):
                runtime_text = 1
    """)
    verdict, why = reach(files, "pkg/ops.py", "eviction_hints")
    assert verdict == "nvidia_only" and "supports_amd_cdna_tunables()" in why
    assert reach(files, "pkg/ops.py", "cdna_space")[0] == "target"
    assert amd_only(files, "pkg/ops.py", "cdna_space")
    assert reach(files, "pkg/ops.py", "gfx95_space", "mi300x")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "gfx95_space", "mi350x")[0] == "target"
    assert reach(files, "pkg/ops.py", "runtime_text")[0] == "target"
    assert amd_only(files, "pkg/ops.py", "runtime_text") is None


def test_a_hand_written_cache_returns_what_its_function_stores():
    # seen on aphrodite-engine 0.24.1 (triton_turboquant_*): FP8_E4B15 = _use_fp8_e4b15(), a per-device cache
    # filled with `1 if cap < (8, 9) else 0`; ROCm reports (9, 4)/(9, 5), so the e4b15 branch is compiled out
    files = ops("""
        import torch
        from vllm.platforms import current_platform

        _FP8_E4B15: dict[int, int] = {}
        _RUNTIME: dict[int, int] = {}
        _PREFILLED = {0: 1}

        def _use_fp8_e4b15(device: int = 0) -> int:
            if device not in _FP8_E4B15:
                if current_platform.is_cuda_alike():
                    cap = torch.cuda.get_device_capability(device)
                    _FP8_E4B15[device] = 1 if cap < (8, 9) else 0
                else:
                    _FP8_E4B15[device] = 0
            return _FP8_E4B15[device]

        def _measured(device: int = 0) -> int:
            if device not in _RUNTIME:
                _RUNTIME[device] = torch.cuda.mem_get_info(device)[0] > 0
            return _RUNTIME[device]

        def _prefilled(device: int = 0) -> int:
            if device not in _PREFILLED:
                _PREFILLED[device] = 0
            return _PREFILLED[device]

        def pick():
            if _use_fp8_e4b15():
                e4b15_path = 1
            else:
                e4nv_path = 1
            if _measured():
                runtime_path = 1
            if _prefilled():
                prefilled_path = 1
    """)
    verdict, why = reach(files, "pkg/ops.py", "e4b15_path")
    assert verdict == "nvidia_only" and "_use_fp8_e4b15()" in why
    assert reach(files, "pkg/ops.py", "e4nv_path")[0] == "target"
    assert reach(files, "pkg/ops.py", "runtime_path")[0] == "target"
    assert reach(files, "pkg/ops.py", "prefilled_path")[0] == "target"


HIP_DEFAULT = """
    import torch

    def _tma_kernel(x):
        tma_path = 1

    def matmul(x, no_use_persistent=None, use_persistent=None, other=None, plain=None):
        if use_persistent:
            no_use_persistent = False
        elif no_use_persistent is None:
            # default True for AMD and False for NVIDIA
            if torch.version.hip is not None:
                no_use_persistent = True
            else:
                no_use_persistent = False
        if other is None:
            other = torch.version.hip is not None
        if plain is None:
            plain = x.numel() > 4  # not a platform value: nothing decided
        if no_use_persistent:
            non_persistent = 1
        else:
            _tma_kernel(x)
        if other:
            other_amd = 1
        if plain:
            plain_branch = 1
"""


def test_parameter_defaulted_from_the_platform_takes_that_value():
    # seen on fbgemm-gpu-genai 1.9.0: matmul_fp8_row(..., no_use_persistent=None) picks the non-persistent kernel
    # on HIP; the TMA persistent kernels run only on NVIDIA unless a caller asks for them
    files = ops(HIP_DEFAULT)
    verdict, why = reach(files, "pkg/ops.py", "tma_path")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "non_persistent")[0] == "target"
    assert reach(files, "pkg/ops.py", "other_amd")[0] == "target"
    assert reach(files, "pkg/ops.py", "tma_path", target="h100")[0] == "target"
    assert reach(files, "pkg/ops.py", "non_persistent", target="h100")[0] == "nvidia_only"  # AMD-only there
    assert reach(files, "pkg/ops.py", "plain_branch")[0] == "target"


@pytest.mark.parametrize(
    "call",
    [
        "matmul(x, no_use_persistent=False)",  # a project call asking for the persistent kernel
        "matmul(x, use_persistent=True)",  # an earlier branch that sets it instead
        "matmul(x, False)",  # passed positionally
        "matmul(*args)",
    ],
)
def test_parameter_defaulted_from_the_platform_yields_to_project_calls(call):
    files = ops(HIP_DEFAULT + f"\n    def caller(x, args):\n        {call}\n")
    assert reach(files, "pkg/ops.py", "tma_path")[0] == "target"
    files = ops(HIP_DEFAULT + "\n    def caller(x):\n        matmul(x, no_use_persistent=True)\n")
    assert reach(files, "pkg/ops.py", "tma_path")[0] == "nvidia_only"


def test_device_name_predicates_read_the_targets_product_name():
    # seen on litgpt 0.5.13: check_nvlink_connectivity calls _check_nvidia_connectivity (nvidia-smi) only when the
    # device name says NVIDIA
    files = ops("""
        import torch

        def _nvidia():
            nvidia_smi = 1

        def _amd():
            rocm_smi = 1

        def check(model):
            device_properties = torch.cuda.get_device_properties(0)
            gpu_name = device_properties.name.lower()
            if "nvidia" in gpu_name:
                _nvidia()
            elif "amd" in gpu_name:
                _amd()
            if torch.cuda.get_device_name().startswith("NVIDIA"):
                nvidia_prefix = 1
            if "MI300" in torch.cuda.get_device_name(0):
                mi300_only = 1
            model_name = model.name.lower()  # a name read from runtime data decides nothing
            if "nvidia" in model_name:
                runtime_name = 1
    """)
    verdict, why = reach(files, "pkg/ops.py", "nvidia_smi")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "rocm_smi")[0] == "target"
    assert reach(files, "pkg/ops.py", "nvidia_prefix")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "mi300_only", "mi300x")[0] == "target"
    assert reach(files, "pkg/ops.py", "mi300_only", "mi350x")[0] == "nvidia_only"  # MI350X is not an MI300
    assert reach(files, "pkg/ops.py", "runtime_name")[0] == "target"
    assert reach(files, "pkg/ops.py", "nvidia_smi", "h100")[0] == "target"
    assert reach(files, "pkg/ops.py", "rocm_smi", "h100")[0] == "nvidia_only"


def test_a_name_bound_twice_is_not_derived_from_a_platform_local():
    # seen on lmdeploy 0.18.0: `pdl_supported = is_cuda()`, then under `if pdl_supported:` a second binding from
    # the capability; locals merge every binding, so deriving the second would leave undecided what is_cuda decides
    files = ops("""
        from pkg.utils import IS_NVIDIA

        def launch(x):
            pdl_supported = IS_NVIDIA
            if pdl_supported:
                nv_cap = torch.cuda.get_device_capability()
                pdl_supported = nv_cap[0] >= 9
            use_pdl = pdl_supported and x.numel() > 4
            if use_pdl:
                pdl_branch = 1
    """)
    assert reach(files, "pkg/ops.py", "pdl_branch")[0] == "nvidia_only"


SPLIT_K_KERNELS = """
    import triton
    import triton.language as tl
    from triton import Config

    def io_bound_configs():
        configs = []
        split_k_range = [1]
        for block_m in [16, 32]:
            for split_k in split_k_range:
                configs.append(Config({"BLOCK_M": block_m, "SPLIT_K": split_k}, num_stages=2))
            for split_k in []:  # disabled
                configs.append(Config({"BLOCK_M": block_m, "SPLIT_K": split_k}))
        return configs

    _TUPLES = [(64, 1), (128, 1)]
    COMPUTE = [Config({"BLOCK_M": 128, "SPLIT_K": 1})]
    CONFIGS = COMPUTE + io_bound_configs() + [Config({"BLOCK_M": m, "SPLIT_K": s}) for m, s in _TUPLES]
    SPLIT_CONFIGS = [Config({"BLOCK_M": 64, "SPLIT_K": s}) for s in (1, 4)]

    @triton.autotune(configs=CONFIGS, key=["M"])
    @triton.jit
    def gemm(C, acc, M, BLOCK_M: tl.constexpr, SPLIT_K: tl.constexpr):
        if SPLIT_K == 1:
            stored = 1
        else:
            split_atomic = 1

    @triton.autotune(configs=SPLIT_CONFIGS, key=["M"])
    @triton.jit
    def split_gemm(C, acc, M, BLOCK_M: tl.constexpr, SPLIT_K: tl.constexpr):
        if SPLIT_K > 1:
            really_split = 1

    @triton.autotune(configs=CONFIGS, key=["M"])
    @triton.heuristics({"SPLIT_K": lambda args: 2})
    @triton.jit
    def heuristic_gemm(C, acc, M, BLOCK_M: tl.constexpr, SPLIT_K: tl.constexpr):
        if SPLIT_K > 1:
            heuristic_split = 1

    def run(c, acc, m):
        gemm[(1,)](c, acc, m)
        split_gemm[(1,)](c, acc, m)
        heuristic_gemm[(1,)](c, acc, m)
"""


def test_a_constexpr_every_autotune_config_sets_alike_decides_its_branches():
    # seen on fbgemm-gpu-genai 1.9.0: `if SPLIT_K == 1: tl.store(...) else: tl.atomic_add(...)` under config lists
    # built by nested loops (the split-K loop iterates `[]`) and comprehensions over tuples: SPLIT_K is always 1
    files = ops(SPLIT_K_KERNELS)
    verdict, why = reach(files, "pkg/ops.py", "split_atomic")
    assert verdict == "nvidia_only" and "SPLIT_K == 1" in why and "autotune list sets SPLIT_K = 1" in why
    assert reach(files, "pkg/ops.py", "stored")[0] == "target"
    assert reach(files, "pkg/ops.py", "really_split")[0] == "target"  # configs set SPLIT_K to 1 and 4
    assert reach(files, "pkg/ops.py", "heuristic_split")[0] == "target"  # a heuristic computes it


@pytest.mark.parametrize(
    "configs",
    [
        "CONFIGS + extra_configs",  # a list from elsewhere
        "[Config(base)]",  # keys not written out
        "[Config({'SPLIT_K': k}) for k in ks]",  # a loop over runtime data
    ],
)
def test_config_lists_porter_cannot_read_decide_nothing(configs):
    files = ops(
        SPLIT_K_KERNELS.replace(
            '@triton.autotune(configs=CONFIGS, key=["M"])\n    @triton.jit\n    def gemm',
            (f'@triton.autotune(configs={configs}, key=["M"])\n    @triton.jit\n    def gemm'),
        )
    )
    assert f"configs={configs}" in textwrap.dedent(files["pkg/ops.py"])
    assert reach(files, "pkg/ops.py", "split_atomic")[0] == "target"


def test_a_flag_passed_positionally_at_every_launch_decides_the_kernels_branches():
    # seen on conch-triton-kernels 1.3: `fp8_dtype = tl.float8e4b8 if cxpr_is_rocm else tl.float8e4nv`, with the
    # launch passing `cxpr_is_rocm` (bound to current_platform.is_amd()) as its 4th positional argument
    files = ops("""
        import triton
        import triton.language as tl
        from pkg.utils import is_hip

        @triton.jit
        def kernel(X, N, scale, IS_ROCM: tl.constexpr, OTHER: tl.constexpr):
            dtype = tl.float8e4b8 if IS_ROCM else tl.float8e4nv
            if OTHER:
                runtime_branch = 1

        def launch(x, n, s, other):
            cxpr_is_rocm: tl.constexpr = is_hip()
            kernel[(1,)](x, n, s, cxpr_is_rocm, other)
    """)
    assert reach(files, "pkg/ops.py", "tl.float8e4nv")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "tl.float8e4b8")[0] == "target"
    assert reach(files, "pkg/ops.py", "tl.float8e4nv", target="h100")[0] == "target"
    assert reach(files, "pkg/ops.py", "runtime_branch")[0] == "target"  # a runtime value decides nothing


def test_a_kernel_nothing_launches_runs_nowhere_unless_it_is_api():
    # seen on verl 0.9.1 (backward kernels no call site launches) and gemlite 0.6.0 (next_power_of_2_ptx_triton,
    # never called: the public name next_power_of_2_triton is bound to the bitwise variant)
    files = ops("""
        import triton
        import triton.language as tl

        @triton.jit
        def ptx_variant(x):
            ptx_body = tl.inline_asm_elementwise("lg2.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32)

        @triton.jit
        def bitwise_variant(x):
            bitwise_body = x

        next_pow2 = bitwise_variant

        @triton.jit
        def kernel(x):
            launched_body = next_pow2(x)

        def helper(x):
            plain_python = 1

        def run(x):
            kernel[(1,)](x)
    """)
    files["pkg/model.py"] = "from pkg.ops import run\n"  # the project uses the module
    verdict, why = reach(files, "pkg/ops.py", "ptx_body")
    assert verdict == "unreached" and "`ptx_variant`" in why
    assert reach(files, "pkg/ops.py", "bitwise_body")[0] == "target"  # named by the alias
    assert reach(files, "pkg/ops.py", "launched_body")[0] == "target"
    assert reach(files, "pkg/ops.py", "plain_python")[0] == "target"  # not a kernel: a Python API
    exported = {**files, "pkg/__init__.py": "from pkg.ops import ptx_variant\n"}
    assert reach(exported, "pkg/ops.py", "ptx_body")[0] == "target"  # re-exported: the package's API
    unimported = {path: text for path, text in files.items() if path != "pkg/model.py"}
    assert reach(unimported, "pkg/ops.py", "ptx_body")[0] == "target"  # nothing imports it: for outside callers
    alone = {"ops.py": textwrap.dedent(files["pkg/ops.py"])}
    assert reach(alone, "ops.py", "ptx_body")[0] == "target"  # one file scanned: its users are elsewhere


def test_a_device_function_library_keeps_its_uncalled_functions_on_target():
    # seen on fla's dev port pair pr664 (regressed at 2bfd7a4): fla/ops/utils/softplus.py defines `softplus` and
    # `softplus2` in inline PTX, uses neither itself, and its package `__init__` re-exports only `softplus`; the
    # kernels calling `softplus2` live in other fla modules. The PTX in `softplus2` runs on the target.
    files = {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from pkg.ops.softplus import softplus\n",
        "pkg/ops/softplus.py": textwrap.dedent("""
            import triton
            import triton.language as tl

            @triton.jit
            def softplus(x):
                return tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32)

            @triton.jit
            def softplus2(x):
                library_ptx = tl.inline_asm_elementwise("lg2.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32)
                return library_ptx

            @triton.jit
            def unlaunched_kernel(x_ptr):
                kernel_ptx = tl.inline_asm_elementwise("lg2.approx.f32 $0, $1;", "=f,f", [x_ptr], dtype=tl.float32)
                tl.store(x_ptr, kernel_ptx)
        """),
        "pkg/model.py": "from pkg.ops import softplus\n",
    }
    verdict, why = reach(files, "pkg/ops/softplus.py", "library_ptx")
    assert verdict == "target", why
    # a kernel (it returns nothing: launched, never called) that nothing launches stays dead (fla's index.py)
    verdict, why = reach(files, "pkg/ops/softplus.py", "kernel_ptx =")
    assert verdict == "unreached" and "`unlaunched_kernel`" in why
    # the same module once it launches a kernel of its own: an uncalled function there is a dead variant
    launched = dict(files)
    launched["pkg/ops/softplus.py"] += textwrap.dedent("""
        @triton.jit
        def kernel(x):
            y = softplus(x)

        def run(x):
            kernel[(1,)](x)
    """)
    verdict, why = reach(launched, "pkg/ops/softplus.py", "library_ptx")
    assert verdict == "unreached" and "`softplus2`" in why


def test_paths_named_for_an_nvidia_architecture_are_nvidia_only():
    # seen on freesolo-chalk (`chalk/ops/arch/sm89/`, a folder per NVIDIA capability) and kt-kernel
    # (`layout_details/hopper_value.py`, chosen under cuda_capability_geq(9))
    body = "import torch\nFP8 = torch.float8_e4m3fn\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/arch/sm89/fp8_base.py": body,
        "pkg/layout/__init__.py": "",
        "pkg/layout/hopper_value.py": body,
        "pkg/layout/smem_value.py": body,
    }
    verdict, why = reach(files, "pkg/arch/sm89/fp8_base.py", "FP8")
    assert verdict == "nvidia_only" and "`sm89`" in why
    assert reach(files, "pkg/layout/hopper_value.py", "FP8")[0] == "nvidia_only"
    assert reach(files, "pkg/layout/smem_value.py", "FP8")[0] == "target"  # an ordinary name
    assert reach(files, "pkg/arch/sm89/fp8_base.py", "FP8", "h100")[0] != "nvidia_only"  # it runs there


def test_code_behind_an_opt_in_environment_switch_is_marked_unknown():
    # seen on fairchem-core 2.24: `SCT_CHUNK = int(os.environ.get("UMA_NITRO_SCT_CHUNK", "0"))` gates an ablation
    # kernel; cut-cross-entropy's CCE_AUTOTUNE turns on a perf model that calls nvidia-smi. Marked, not dropped:
    # the second crashes on ROCm for every user who opts in (dropping both lost 3 true findings for 1 false)
    files = {
        "pkg/__init__.py": "",
        "pkg/envs.py": """
            import os
            from os import getenv

            SCT_CHUNK = int(os.environ.get("UMA_NITRO_SCT_CHUNK", "0"))
            PROFILE = getenv("PKG_PROFILE", "0") == "1"
            FAST = os.getenv("PKG_FAST", "1") == "1"
            WORLD = int(os.environ.get("WORLD_SIZE", "1"))
        """,
        "pkg/ops.py": """
            import os
            from pkg.envs import SCT_CHUNK, PROFILE, FAST, WORLD

            def run(x, n):
                if SCT_CHUNK > 0:
                    chunked(x)
                if PROFILE:
                    profiled(x)
                if FAST:
                    fast(x)
                else:
                    slow(x)
                if WORLD > 1:
                    sharded(x)
                if "PKG_DEBUG" in os.environ:
                    debug(x)
                if n > 4:
                    large(x)
                launch(x, use_pdl=PROFILE)
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "chunked(x)")
    assert verdict == "unknown" and "`SCT_CHUNK > 0` is True" in why and "opts in" in why
    assert reach(files, "pkg/ops.py", "profiled(x)")[0] == "unknown"
    assert reach(files, "pkg/ops.py", "debug(x)")[0] == "unknown"
    assert reach(files, "pkg/ops.py", "use_pdl=PROFILE")[0] == "unknown"
    assert reach(files, "pkg/ops.py", "fast(x)")[0] == "target"  # on unless a user turns it off
    assert reach(files, "pkg/ops.py", "slow(x)")[0] == "unknown"
    assert reach(files, "pkg/ops.py", "sharded(x)")[0] == "target"  # a launcher sets WORLD_SIZE: no default
    assert reach(files, "pkg/ops.py", "large(x)")[0] == "target"  # runtime data, not a switch


def test_a_copy_nothing_imports_of_a_module_the_project_imports_runs_nowhere():
    # seen on hip-attn 1.2.9: v1_1/attention2_draft_causal_batch_gpu*.py are earlier drafts of
    # attention2_draft_prefetch.py (9-12 of their 16-18 kernels by the same names); only the latter is imported
    kernels = "".join(f"@triton.jit\ndef {name}(x):\n    pass\n" for name in ("_fwd", "_bwd", "_mask"))
    files = {
        "pkg/__init__.py": "from pkg.attention import attend\n",
        "pkg/attention.py": "import triton\n" + kernels + "def attend(x):\n    _fwd[(1,)](x)\n",
        "pkg/attention_draft.py": "import triton\n"
        + kernels.replace("_mask", "_old_mask")
        + "def run(x):\n    _fwd[(1,)](x)\n",
        "pkg/tools.py": "import triton\n" + kernels + "def run(x):\n    _fwd[(1,)](x)\n",  # imported below: not a copy
        "pkg/cli.py": "from pkg.tools import run\n",
        "pkg/entry.py": "import triton\n@triton.jit\ndef _fwd(x):\n    pass\n@triton.jit\ndef _own(x):\n    pass\n",
    }
    verdict, why = reach(files, "pkg/attention_draft.py", "_fwd[(1,)]")
    assert verdict == "unreached" and "superseded copy" in why and "2 of its 3" in why and "pkg/attention.py" in why
    assert reach(files, "pkg/attention.py", "_fwd[(1,)]")[0] == "target"
    assert reach(files, "pkg/tools.py", "_fwd[(1,)]")[0] == "target"
    # an entry point sharing one kernel name of two: nothing says it is a copy
    assert reach(files, "pkg/entry.py", "def _own")[0] == "target"


def test_a_module_nothing_imports_whose_kernels_moved_to_modules_beside_it_runs_nowhere():
    # seen on hip-attn 1.2.9: v1_0/attention1_gpu.py, whose kernels moved to attention1_block_gpu.py and the
    # attention1_block_gpu_kernel/ folder (7 of its 8 by the same names); nothing imports the old module
    def kernels(*names):
        return "import triton\n" + "".join(f"@triton.jit\ndef {n}(x):\n    pass\n" for n in names)

    files = {
        "pkg/__init__.py": "from pkg.v1.block import attend\n",
        "pkg/v1/__init__.py": "",
        "pkg/v1/block.py": kernels("_sdbmm", "_sdbmm_bwd") + "from pkg.v1.block_kernel.score import _score\n"
        "def attend(x):\n    _sdbmm[(1,)](x)\n",
        "pkg/v1/block_kernel/__init__.py": "",
        "pkg/v1/block_kernel/score.py": kernels("_score", "_score_bwd"),
        "pkg/v1/old.py": kernels("_sdbmm", "_sdbmm_bwd", "_score", "_kth") + "def run(x):\n    _kth[(1,)](x)\n",
        # a module elsewhere sharing the names is no evidence: its kernels did not move beside it
        "pkg/v2/__init__.py": "",
        "pkg/v2/tools.py": kernels("_sdbmm", "_score", "_own", "_other") + "def run(x):\n    _own[(1,)](x)\n",
    }
    verdict, why = reach(files, "pkg/v1/old.py", "_kth[(1,)]")
    assert verdict == "unreached" and "3 of its 4" in why and "pkg/v1/block_kernel/score.py" in why, why
    assert reach(files, "pkg/v2/tools.py", "_own[(1,)]")[0] == "target"
    assert reach(files, "pkg/v1/block.py", "_sdbmm[(1,)]")[0] == "target"


def test_a_private_or_retired_module_nothing_imports_runs_nowhere():
    # seen on flashlib 0.4.0 (umap/triton/sgd_legacy.py beside the live sgd_step.py) and fp8-coat 1.0.11
    # (real_quantization/_memory_io.py, a bandwidth benchmark no module imports)
    kernel = "import triton\n@triton.jit\ndef _step(x):\n    pass\ndef run(x):\n    _step[(1,)](x)\n"
    files = {
        "pkg/__init__.py": "from pkg.sgd_step import run\n",
        "pkg/sgd_step.py": kernel,
        "pkg/sgd_legacy.py": kernel,
        "pkg/_memory_io.py": kernel,
        "pkg/_quantize.py": kernel,  # private, but imported below: it runs
        "pkg/linear.py": "from pkg._quantize import run\n",
        "pkg/tools.py": kernel,  # public and unimported: an entry point for outside callers
        "pkg/_cli.py": kernel + "def main():\n    run(1)\n",  # a console script's entry point (`pkg._cli:main`)
        # seen on flash-attn-triton 0.1.1 (triton_kernel/flash_attn_dao.py, flash-attn's kernel with its test_op)
        "pkg/flash_ref.py": "import pytest\n" + kernel,
        "pkg/checks.py": kernel + "def check():\n    import pytest\n",  # pytest only inside a function: a library
    }
    verdict, why = reach(files, "pkg/sgd_legacy.py", "_step[(1,)]")
    assert verdict == "unreached" and "retired or unreleased module (`sgd_legacy`)" in why
    verdict, why = reach(files, "pkg/_memory_io.py", "_step[(1,)]")
    assert verdict == "unreached" and "private module (`_memory_io`)" in why
    verdict, why = reach(files, "pkg/flash_ref.py", "_step[(1,)]")
    assert verdict == "unreached" and "test module (`flash_ref` imports pytest" in why
    for live in ("pkg/sgd_step.py", "pkg/_quantize.py", "pkg/tools.py", "pkg/_cli.py", "pkg/checks.py"):
        assert reach(files, live, "_step[(1,)]")[0] == "target"
    # scanned without its package, nothing tells whether a module is imported
    assert reach({"pkg/_memory_io.py": kernel}, "pkg/_memory_io.py", "_step[(1,)]")[0] == "target"


def test_a_module_constant_set_false_in_the_code_turns_its_branch_off():
    # facts format 15 records tests that read a module constant, so a hard-coded switch is evaluated too
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            LEGACY_PATH = False

            def run(x):
                if LEGACY_PATH:
                    legacy(x)
                current(x)
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "legacy(x)")
    assert verdict == "nvidia_only" and "`LEGACY_PATH` is True; on mi300x it is False" in why
    assert reach(files, "pkg/ops.py", "current(x)")[0] == "target"


def test_a_function_runs_past_an_import_of_its_own_package_only_where_that_module_loads():
    # seen on kernel-fun: chain.backward imports bwd_intra (cutlass, cuda.bindings) beside bwd_wy_t, then launches
    # bwd_wy_t's Triton kernel; on ROCm the import raises first
    files = {
        "pkg/__init__.py": "",
        "pkg/cute_part.py": "import cutlass\n",
        "pkg/triton_part.py": "def launch(x):\n    pass\n",
        "pkg/chain.py": """
            def backward(x):
                prepare(x)
                from . import cute_part, triton_part
                triton_part.launch(x)

            def forward(x):
                from .triton_part import launch
                launch(x)
        """,
    }
    verdict, why = reach(files, "pkg/chain.py", "triton_part.launch(x)")
    assert verdict == "nvidia_only" and "`import pkg.cute_part`" in why and "cutlass" in why
    assert reach(files, "pkg/chain.py", "prepare(x)")[0] == "target"
    built, texts = project(files)
    line = texts["pkg/chain.py"].splitlines().index("    launch(x)") + 1
    assert built.reach("pkg/chain.py", line, 5).reach == "target"


def test_a_local_hard_coded_once_decides_its_branch():
    # seen on hip-attn 1.2.9: `using_fused_iteration = True` then `if using_fused_iteration: ... else: <old path>`
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            def run(x, steps):
                fused = True
                if fused:
                    current(x)
                else:
                    legacy(x)
                done = False
                for _ in steps:
                    if not done:
                        first(x)
                    done = True
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "legacy(x)")
    assert verdict == "nvidia_only" and "`fused` is False" in why
    assert reach(files, "pkg/ops.py", "current(x)")[0] == "target"
    assert reach(files, "pkg/ops.py", "first(x)")[0] == "target"  # stored twice: the loop changes it


def test_a_constexpr_left_out_of_the_launch_keywords_a_helper_builds_keeps_its_default():
    # facts format 16 records a launch's `**mapping`: on ROCm the helper returns no keywords, so PDL stays False
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import torch
            import triton
            import triton.language as tl

            _NO_KW = {}
            _PDL_KW = {"PDL": True, "launch_pdl": True}

            def pdl_active(device):
                return torch.version.hip is None and device.type == "cuda"

            def _pdl_kw(device):  # no platform word here: kept because a launch spreads what it returns
                if not pdl_active(device):
                    return _NO_KW
                return _PDL_KW

            @triton.jit
            def _enter(PDL: tl.constexpr):
                if PDL:
                    tl.inline_asm_elementwise("griddepcontrol.wait;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)

            @triton.jit
            def _rows(x_ptr, PDL: tl.constexpr = False, WIDE: tl.constexpr = False):
                _enter(PDL)
                if WIDE:
                    tl.store(x_ptr, 1)

            def rows(x):
                _rows[(1,)](x, **_pdl_kw(x.device))
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "tl.inline_asm_elementwise")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "tl.inline_asm_elementwise", target="h100")[0] == "target"
    assert reach(files, "pkg/ops.py", "tl.store(x_ptr, 1)")[0] == "nvidia_only"  # not in the mapping: its default


def test_launch_keywords_gathered_in_a_local_dict_keep_the_constexpr_default():
    # grouped-nf4-gemm's decode GEMV: `pdl = _pdl_kw(dev, T)` (a try, `{}` when the import fails), merged into
    # `common = dict(..., **pdl)`, launched with `**common`: on ROCm the helper returns `{}`, so PDL keeps False
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import torch
            import triton
            import triton.language as tl

            _NO_KW = {}
            _PDL_KW = {"PDL": True, "launch_pdl": True}

            def pdl_active(device):
                if torch.version.hip:
                    return False
                return device.type == "cuda"

            def _pdl_kw(device, rows):
                if not pdl_active(device):
                    return _NO_KW
                return _PDL_KW

            @triton.jit
            def _rows(x_ptr, BLOCK: tl.constexpr, PDL: tl.constexpr = False):
                if PDL:
                    tl.inline_asm_elementwise("griddepcontrol.wait;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)

            def rows(x, block):
                try:
                    pdl = _pdl_kw(x.device, x.shape[0])
                except ImportError:
                    pdl = {}
                common = dict(BLOCK=block, num_warps=4, **pdl)
                _rows[(1,)](x, **common)
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "tl.inline_asm_elementwise")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "tl.inline_asm_elementwise", target="h100")[0] == "target"


def test_a_string_selection_narrowed_by_exiting_guards_decides_the_constexpr_it_indexes():
    # grouped-nf4-gemm's `_bw_decode`: "prmt32" (inline PTX) only when compiled for CUDA, an environment override
    # checked against the choices and refused where PTX cannot run; `DECODE=_BW_DECODES[decode]` then picks the
    # kernel's branch. On ROCm every path that returns gives "tree", whatever the environment holds.
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import os
            import torch
            import triton
            import triton.language as tl

            _DECODES = {"tree": 0, "prmt32": 2}

            def _decode(device):
                compiled = torch.device(device).type == "cuda" and not torch.version.hip
                v = (os.environ.get("PKG_DECODE") or "").strip().lower()
                if not v:
                    return "prmt32" if compiled else "tree"
                if v not in _DECODES:
                    raise ValueError(v)
                if v == "prmt32" and not compiled:
                    raise ValueError("prmt32 needs inline PTX")
                return v

            @triton.jit
            def _prmt(w):
                return tl.inline_asm_elementwise("prmt.b32 $0, $1, 0, 0;", "=r,r", [w], dtype=tl.int32, is_pure=True, pack=1)

            @triton.jit
            def _gemv(x_ptr, DECODE: tl.constexpr):
                w = tl.load(x_ptr)
                if DECODE == 0:
                    tl.store(x_ptr, w + 1)
                else:
                    tl.store(x_ptr, _prmt(w))

            def gemv(x):
                decode = _decode(x.device)
                common = dict(DECODE=_DECODES[decode], num_warps=4)
                _gemv[(1,)](x, **common)
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "tl.inline_asm_elementwise")
    assert verdict == "nvidia_only", why
    assert "DECODE == 0" in why
    assert reach(files, "pkg/ops.py", "tl.store(x_ptr, w + 1)")[0] == "target"
    # on NVIDIA the environment may pick either decode: both stay
    assert reach(files, "pkg/ops.py", "tl.inline_asm_elementwise", target="h100")[0] != "nvidia_only"


def test_an_assertion_narrows_a_selection_like_an_exiting_guard():
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import os
            import torch

            def _backend():
                v = os.environ.get("PKG_BACKEND", "auto")
                if v == "auto":
                    return "triton" if torch.version.hip else "ptx"
                assert v in ("triton", "ptx"), v
                assert v != "ptx" or torch.version.cuda is not None, "PTX needs CUDA"
                return v

            def run(x):
                if _backend() == "ptx":
                    torch.cuda.nvtx.range_push("ptx")
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "torch.cuda.nvtx")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "torch.cuda.nvtx", target="h100")[0] == "target"


def test_an_exiting_guard_narrows_only_what_follows_it():
    # the value a guard leaves is what runs after it; a later rebinding replaces it
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import os
            import torch

            def _mode():
                v = os.environ.get("PKG_MODE")
                if v != "fast":
                    raise ValueError(v)
                v = os.environ.get("PKG_OTHER")
                return v

            def run(x):
                if _mode() == "fast":
                    torch.cuda.nvtx.range_push("fast")
        """,
    }
    verdict, _ = reach(files, "pkg/ops.py", "torch.cuda.nvtx")
    assert verdict == "target"


E4M3_COMPAT = """
    import os
    import torch

    def _env_force() -> bool:
        return os.environ.get("PKG_FORCE_EMU", "").lower() in ("1", "true")

    FORCE_EMU = _env_force()
    _native: bool | None = None

    def e4m3_native() -> bool:
        global _native
        if _native is None:
            if FORCE_EMU:
                _native = False
            elif torch.version.hip is not None:
                _native = False
            else:
                _native = torch.cuda.get_device_capability() >= (8, 9)
        return _native
"""


def test_a_global_filled_by_its_function_is_read_from_the_module_not_as_a_local():
    # freetoken's e4m3_native(): `global _native`, None until the first call fills it; the capability store is no
    # local of the function, so `if _native is None` reads the module's None and ROCm's branch answers False
    files = {
        "pkg/__init__.py": "",
        "pkg/compat.py": E4M3_COMPAT,
        "pkg/ops.py": """
            from pkg.compat import e4m3_native

            def linear(x, w, scale):
                w8a8 = scale is not None and e4m3_native()
                if w8a8:
                    return torch._scaled_mm(x, w, scale_a=scale, scale_b=scale)
                return x @ w
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "torch._scaled_mm")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "torch._scaled_mm", target="h100")[0] != "nvidia_only"


def test_a_local_from_a_project_call_merges_every_binding_of_it():
    # `w8a8 = ... e4m3_native()` then `w8a8 = False` stays False; rebound from runtime data it is undecided
    body = """
        import torch
        from pkg.compat import e4m3_native

        def linear(x, w, scale, segments):
            w8a8 = scale is not None and e4m3_native()
            if segments:
                w8a8 = {again}
            if w8a8:
                return torch._scaled_mm(x, w, scale_a=scale, scale_b=scale)
            return x @ w
    """
    files = {"pkg/__init__.py": "", "pkg/compat.py": E4M3_COMPAT, "pkg/ops.py": body.format(again="False")}
    assert reach(files, "pkg/ops.py", "torch._scaled_mm")[0] == "nvidia_only"
    files["pkg/ops.py"] = body.format(again="segments[0] > 1")
    assert reach(files, "pkg/ops.py", "torch._scaled_mm")[0] == "target"


def test_a_top_level_binding_read_only_in_dead_code_is_dead():
    # freetoken: `from triton.language.extra.cuda import gdc_wait` called only under a PDL constexpr fed by a
    # capability predicate False on ROCm, and `FP8 = torch.float8_e4m3fn` read only on the W8A8 route
    files = {
        "pkg/__init__.py": "",
        "pkg/compat.py": E4M3_COMPAT,
        "pkg/ops.py": """
            import torch
            import triton
            import triton.language as tl
            from triton.language.extra.cuda import gdc_wait
            from pkg.compat import e4m3_native

            FP8 = torch.float8_e4m3fn
            BF16 = torch.bfloat16

            def _pdl():
                return torch.version.hip is None and torch.cuda.get_device_capability()[0] >= 9

            @triton.jit
            def _act(x_ptr, ENABLE_PDL: tl.constexpr):
                if ENABLE_PDL:
                    gdc_wait()
                tl.store(x_ptr, tl.load(x_ptr) * 2)

            def act(x):
                _act[(1,)](x, ENABLE_PDL=_pdl())

            def quant(x):
                if e4m3_native():
                    return x.to(FP8)
                return x.to(BF16)
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "from triton.language.extra.cuda import gdc_wait")
    assert verdict == "nvidia_only", why
    verdict, why = reach(files, "pkg/ops.py", "FP8 = torch.float8_e4m3fn")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "BF16 = torch.bfloat16")[0] == "target"
    assert reach(files, "pkg/ops.py", "FP8 = torch.float8_e4m3fn", target="h100")[0] == "target"


def test_a_top_level_binding_other_modules_import_or_export_stays():
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import torch
            FP8 = torch.float8_e4m3fn

            def quant(x):
                if torch.version.hip is None:
                    return x.to(FP8)
                return x
        """,
        "pkg/user.py": """
            from pkg.ops import FP8
        """,
    }
    assert reach(files, "pkg/ops.py", "FP8 = torch.float8_e4m3fn")[0] == "target"


def test_a_local_rebound_under_its_own_truth_keeps_the_first_value_s_falsity():
    # lmdeploy 0.18.0 v4_compressor: `pdl_supported = is_cuda()`, then `if pdl_supported: pdl_supported = cap >= 9`;
    # the second binding runs only where the first is true, so on ROCm `use_pdl` stays False
    files = ops("""
        import triton
        import triton.language as tl
        from pkg.utils import is_hip

        def is_cuda():
            return not is_hip()

        @triton.jit
        def _score(x, USE_PDL: tl.constexpr):
            if USE_PDL:
                tl.extra.cuda.gdc_wait()
            tl.store(x, 1)

        def score(x, cap, use_pdl=None):
            if use_pdl is not False:
                pdl_supported = is_cuda()
                if pdl_supported:
                    pdl_supported = cap[0] >= 9
                use_pdl = pdl_supported and (use_pdl is True or x.numel() > 4096)
            _score[(1,)](x, USE_PDL=use_pdl)
    """)
    assert reach(files, "pkg/ops.py", "gdc_wait")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "gdc_wait", target="h100")[0] != "nvidia_only"


def test_a_top_level_binding_that_calls_or_is_star_imported_stays():
    # a value that calls runs at every import (a CUDA build loaded at import); a star import hands the name on
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import torch
            from torch.utils.cpp_extension import load

            _ext = load(name="k", sources=["k.cu"])
            FP8 = torch.float8_e4m3fn

            def run(x):
                if torch.version.hip is None:
                    return _ext.op(x.to(FP8))
                return x
        """,
        "pkg/user.py": """
            from pkg.ops import *
        """,
    }
    assert reach(files, "pkg/ops.py", "_ext = load")[0] == "target"
    assert reach(files, "pkg/ops.py", "from torch.utils.cpp_extension import load")[0] == "target"
    assert reach(files, "pkg/ops.py", "FP8 = torch.float8_e4m3fn")[0] == "target"
    files["pkg/user.py"] = "import pkg.ops\n"
    assert reach(files, "pkg/ops.py", "FP8 = torch.float8_e4m3fn")[0] == "nvidia_only"


def test_a_triton_backend_member_only_cuda_defines_is_absent_on_amd():
    # triton-runner: `capability = backend._parse_arch(options.arch) if hasattr(backend, "_parse_arch") else None`,
    # backend from make_backend(target); only CUDABackend defines _parse_arch, so the PTX-version query is skipped
    files = {
        "pkg/__init__.py": "",
        "pkg/compile.py": """
            from triton.compiler.compiler import make_backend
            from triton.runtime import driver

            def compile(src, options, target=None):
                if target is None:
                    target = driver.active.get_current_target()
                backend = make_backend(target)
                capability = backend._parse_arch(options.arch) if hasattr(backend, "_parse_arch") else None
                if capability is not None:
                    from triton.backends.nvidia.compiler import get_ptx_version_from_options
                    return get_ptx_version_from_options(options, capability)
                if hasattr(backend, "parse_options"):
                    return backend.parse_options(options)
        """,
    }
    verdict, why = reach(files, "pkg/compile.py", "return get_ptx_version_from_options")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/compile.py", "return get_ptx_version_from_options", target="h100")[0] == "target"
    assert reach(files, "pkg/compile.py", "return backend.parse_options")[0] == "target"  # a member both define


REFUSAL = """
    import torch

    def rocm_version():
        return getattr(torch.version, "hip", None) or None

    def rocm_refusal(what):
        hip = rocm_version()
        if not hip:
            return None
        return f"AMD GPU (ROCm {hip}): {what} is not yet supported on AMD"
"""
# a selector whose docstring and comments make it longer than a predicate's code may be: its code is what counts
SELECTOR = (
    '''
    def fp8_unsupported(q):
        """Why fp8 attention cannot run for q.
'''
    + "".join(f"        Line {i} of a long docstring.\n" for i in range(40))
    + '''        """
        why = rocm_refusal("fp8 attention")
        if why:
            return why
'''
    + "".join(f"        # comment {i}\n" for i in range(30))
    + """        if q.dtype not in (torch.bfloat16, torch.float16):
            return f"fp8 loads q as bf16, got {q.dtype}"
        return None
"""
)


def test_code_after_a_refusal_helper_answers_on_rocm_is_nvidia_only():
    # grouped-nf4-gemm's rocm_refusal(): a reason string on ROCm, None elsewhere; `if why: raise` and a selector
    # returning that reason first (`assert _why is None` before the fp8 launch) keep the fp8 kernels off ROCm
    ops = """
    import torch
    import triton
    import triton.language as tl
    from pkg.shim import rocm_refusal

    @triton.jit
    def _append(x_ptr):
        tl.store(x_ptr, tl.load(x_ptr).to(tl.float8e4nv))

    @triton.jit
    def _attend(y_ptr):
        tl.store(y_ptr, tl.load(y_ptr).to(tl.float8e4nv))

    def append(x):
        why = rocm_refusal("the fused append")
        if why:
            raise RuntimeError(why)
        _append[(1,)](x)

    def attend(q):
        _why = fp8_unsupported(q)
        assert _why is None, _why
        _attend[(1,)](q)
    """
    files = {"pkg/__init__.py": "", "pkg/shim.py": REFUSAL, "pkg/ops.py": ops + SELECTOR}
    for marker in ("tl.store(x_ptr", "tl.store(y_ptr", "_append[(1,)](x)", "_attend[(1,)](q)"):
        verdict, why = reach(files, "pkg/ops.py", marker)
        assert verdict == "nvidia_only", (marker, why)
        assert reach(files, "pkg/ops.py", marker, target="h100")[0] == "target"


def test_a_refusal_the_target_does_not_give_leaves_the_code_reachable():
    files = {
        "pkg/__init__.py": "",
        "pkg/shim.py": REFUSAL.replace("if not hip:", "if hip:"),
        "pkg/ops.py": """
            from pkg.shim import rocm_refusal

            def append(x, kernel):
                why = rocm_refusal("the fused append")
                if why:
                    raise RuntimeError(why)
                kernel(x)
        """,
    }
    assert reach(files, "pkg/ops.py", "kernel(x)")[0] == "target"


def test_launch_keywords_spread_from_runtime_data_leave_the_constexpr_undecided():
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import triton
            import triton.language as tl

            @triton.jit
            def _rows(x_ptr, PDL: tl.constexpr = False):
                if PDL:
                    tl.inline_asm_elementwise("griddepcontrol.wait;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)

            def rows(x, options):
                _rows[(1,)](x, **options)
        """,
    }
    assert reach(files, "pkg/ops.py", "tl.inline_asm_elementwise")[0] == "target"


def test_a_predicate_that_probes_nvidia_smi_is_false_on_amd():
    # optimum-benchmark's is_nvidia_system(): the tool is absent on AMD machines, so the except branch answers there
    files = {
        "pkg/__init__.py": "",
        "pkg/env.py": """
            import subprocess

            def is_nvidia_system():
                try:
                    subprocess.check_output("nvidia-smi")
                    return True
                except Exception:
                    return False

            def is_rocm_system():
                try:
                    subprocess.check_output(["rocm-smi", "--showuse"])
                    return True
                except Exception:
                    return False
        """,
        "pkg/memory.py": """
            import subprocess
            from pkg.env import is_nvidia_system, is_rocm_system

            def used(index):
                if is_nvidia_system():
                    return subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used"])
                if is_rocm_system():
                    return subprocess.check_output(["rocm-smi", "--showmeminfo", "vram"])
        """,
    }
    assert reach(files, "pkg/memory.py", '["nvidia-smi"')[0] == "nvidia_only"
    assert reach(files, "pkg/memory.py", '["rocm-smi"')[0] == "target"
    assert reach(files, "pkg/memory.py", '["nvidia-smi"', target="h100")[0] == "target"


def test_the_smi_probe_answers_with_the_handler_that_catches_the_missing_tool():
    # a handler for another error first (KeyboardInterrupt re-raised) is not what runs where nvidia-smi is absent
    files = {
        "pkg/__init__.py": "",
        "pkg/env.py": """
            import subprocess

            def is_nvidia_system():
                try:
                    subprocess.check_output(["nvidia-smi", "-L"])
                    return True
                except KeyboardInterrupt:
                    raise
                except (FileNotFoundError, subprocess.CalledProcessError):
                    return False
        """,
        "pkg/memory.py": """
            import subprocess
            from pkg.env import is_nvidia_system

            def used(index):
                if is_nvidia_system():
                    return subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used"])
        """,
    }
    assert reach(files, "pkg/memory.py", '["nvidia-smi"')[0] == "nvidia_only"
    assert reach(files, "pkg/memory.py", '["nvidia-smi"', target="h100")[0] == "target"


OPTION_KERNELS = """
    import triton
    import triton.language as tl

    @triton.jit
    def atomic_kernel(x, out):
        tl.atomic_add(out, tl.load(x))

    @triton.jit
    def two_pass_kernel(x, out):
        tl.store(out, tl.load(x))

    @triton.jit
    def owners_kernel(x, OWNERS: tl.constexpr = False):
        if OWNERS:
            tl.atomic_add(x, 1)

    def gemv(x, out, split_k=None, use_atomic: bool = False):
        if use_atomic:
            atomic_kernel[(1,)](x, out)
        else:
            two_pass_kernel[(1,)](x, out)

    def gemv_forwarding(x, out, atomic=False):
        return gemv(x, out, use_atomic=atomic)

    def build_tiles(x, _owners=None):
        owners_kernel[(1,)](x, OWNERS=_owners is not None)

    def reduce(x, out, mode="center"):
        if mode == "position":
            positional(x)

    if __name__ == "__main__":
        gemv(1, 2, use_atomic=True)
        reduce(1, 2, mode="position")
"""


MODEL_CALLS = """
    from pkg.kernels import gemv, gemv_forwarding, reduce

    def forward(x, out):
        gemv(x, out)
        gemv_forwarding(x, out)
        reduce(x, out)
"""


def test_code_behind_an_option_no_caller_sets_is_opt_in():
    # seen on polarquant 0.6.0: polar_gemv_splitk(..., use_atomic=False) launches its atomic kernel only when a
    # caller passes True, which only the module's `__main__` self-test and its benchmarks do; grouped-nf4-gemm's
    # OWNERS constexpr is set only when a test passes `_owners`
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": OPTION_KERNELS,
        "pkg/model.py": MODEL_CALLS,
        "tests/test_kernels.py": """
            from pkg.kernels import gemv, reduce

            def test_atomic():
                gemv(1, 2, use_atomic=True)
                reduce(1, 2, "position")
        """,
    }
    verdict, why = reach(files, "pkg/kernels.py", "tl.atomic_add(out")  # the kernel only that branch launches
    assert verdict == "opt_in" and "`use_atomic` is True" in why and "default run" in why
    assert reach(files, "pkg/kernels.py", "tl.store(out")[0] == "target"
    assert reach(files, "pkg/kernels.py", "tl.atomic_add(x, 1)")[0] == "opt_in"  # a private parameter
    # host code behind the option is marked, not dropped: a user who turns it on runs it at once
    verdict, why = reach(files, "pkg/kernels.py", "atomic_kernel[(1,)]")
    assert verdict == "unknown" and "`use_atomic` is True" in why
    assert reach(files, "pkg/kernels.py", "positional(x)")[0] == "unknown"
    assert reach(files, "pkg/kernels.py", "two_pass_kernel[(1,)]")[0] == "target"
    # a caller of the package that passes the option on (through a wrapper) keeps the code reached
    on = dict(
        files, **{"pkg/train.py": "from pkg.kernels import gemv_forwarding\n\ngemv_forwarding(1, 2, atomic=True)\n"}
    )
    assert reach(on, "pkg/kernels.py", "tl.atomic_add(out")[0] == "target"
    # a function nothing in the project calls is an entry point: its callers may pass anything
    unused = dict(files, **{"pkg/model.py": "x = 1\n"})
    assert reach(unused, "pkg/kernels.py", "tl.atomic_add(out")[0] == "target"


def test_an_api_option_is_the_users_choice():
    # seen on flashlib 0.4.0: flash_standard_scaler_fit(X, fused=True) is re-exported by its package; its two-pass
    # kernels (fused=False) are the documented fallback its users pick, though no call in flashlib passes False
    kernels = "import triton\n\n@triton.jit\ndef two_pass(x):\n    pass\n\n@triton.jit\ndef atomic(x):\n    pass\n"
    files = {
        "pkg/__init__.py": "from pkg.scaler import fit\n",
        "pkg/scaler.py": kernels
        + textwrap.dedent("""
            def fit(x, fused=True):
                if not fused:
                    two_pass[(1,)](x)

            def gemv(x, use_atomic=False):
                if use_atomic:
                    atomic[(1,)](x)
        """),
        "pkg/model.py": "from pkg.scaler import fit, gemv\n\ndef forward(x):\n    fit(x)\n    gemv(x)\n",
    }
    assert reach(files, "pkg/scaler.py", "def two_pass")[0] == "target"
    assert reach(files, "pkg/scaler.py", "def atomic")[0] == "opt_in"
    files["pkg/scaler.py"] = files["pkg/scaler.py"].replace("def gemv", "__all__ = ['gemv']\n\ndef gemv")
    assert reach(files, "pkg/scaler.py", "def atomic")[0] == "target"


def test_an_api_option_only_the_packages_tests_set_is_opt_in():
    # seen on polarquant 0.6.0: polar_gemv_splitk(..., use_atomic=False) is re-exported by its kernels package, but
    # polar_matmul calls it with use_atomic left False and only the module's `__main__` benchmark passes True: a
    # variant the package measures, not one its users are offered (flashlib's `fused`, which no call passes, stays)
    kernels = "import triton\n\n@triton.jit\ndef atomic(x):\n    pass\n\n@triton.jit\ndef plain(x):\n    pass\n"
    files = {
        "pkg/__init__.py": "from pkg.gemv import gemv\n\n__all__ = ['gemv']\n",
        "pkg/gemv.py": kernels
        + textwrap.dedent("""
            def gemv(x, split_k=None, use_atomic: bool = False):
                if use_atomic:
                    atomic[(1,)](x)
                else:
                    plain[(1,)](x)

            if __name__ == "__main__":
                for atomic_mode in [False, True]:
                    gemv(1, use_atomic=atomic_mode)
        """),
        "pkg/matmul.py": "from pkg.gemv import gemv\n\ndef polar_matmul(x):\n    return gemv(x, 4)\n",
    }
    verdict, why = reach(files, "pkg/gemv.py", "def atomic")
    assert verdict == "opt_in" and "`use_atomic` is True" in why
    assert reach(files, "pkg/gemv.py", "def plain")[0] == "target"
    # a call of the package's own code that sets it keeps it reached
    setting = dict(files, **{"pkg/model.py": "from pkg.gemv import gemv\n\ngemv(1, use_atomic=True)\n"})
    assert reach(setting, "pkg/gemv.py", "def atomic")[0] == "target"
    # no test sets it: an API option the package never exercises is its users' choice
    untested = dict(files, **{"pkg/gemv.py": files["pkg/gemv.py"].split("if __name__")[0]})
    assert reach(untested, "pkg/gemv.py", "def atomic")[0] == "target"
    # tests that pass only the default do not exercise it: the other value stays the users' choice
    default_only = dict(
        files, **{"pkg/gemv.py": files["pkg/gemv.py"].replace("use_atomic=atomic_mode", "use_atomic=False")}
    )
    assert reach(default_only, "pkg/gemv.py", "def atomic")[0] == "target"
    # the package's own code never calls it: an entry point, whatever its tests pass
    entry = dict(files, **{"pkg/matmul.py": "x = 1\n"})
    assert reach(entry, "pkg/gemv.py", "def atomic")[0] == "target"


FUSED_BACKWARD = """
    import os
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _fused_kernel(dq):
        tl.atomic_add(dq, 1)

    @triton.jit
    def _plain_kernel(dq):
        tl.store(dq, 2)

    def _bwd_fused(dq):
        _fused_kernel[(1,)](dq)

    def _bwd_plain(dq):
        _plain_kernel[(1,)](dq)

    class Attn(torch.autograd.Function):
        @staticmethod
        def backward(ctx, dq):
            if os.environ.get("FUSED_BWD", "0") == "1":
                _bwd_fused(dq)
            else:
                _bwd_plain(dq)

    class AttnFused(torch.autograd.Function):
        @staticmethod
        def backward(ctx, dq):
            _bwd_fused(dq)

    class _CudaOnly(torch.autograd.Function):
        @staticmethod
        def backward(ctx, dq):
            _bwd_plain(dq)  # CUDA only

    def attn_train(q):
        if torch.version.cuda is not None:
            _CudaOnly.apply(q)
        return Attn.apply(q)

    def attn_train_fused(q):
        return AttnFused.apply(q)
"""


def test_methods_run_where_their_class_is_used_and_an_unexported_entry_of_a_private_module_is_opt_in():
    # seen on fastflash-attention 0.2.0: the atomic dQ kernel of FastFlashAttnFusedAtomic (an autograd Function)
    # runs only under UNIFLASH_BWD_FUSED_ATOMIC=1 (default '0') or through fastflash_attn_train_fused_atomic, which
    # nothing in the package calls and its `__init__` does not re-export from the private `_kernel` module
    files = {"pkg/__init__.py": "from pkg._kernel import attn_train\n", "pkg/_kernel.py": FUSED_BACKWARD}
    verdict, why = reach(files, "pkg/_kernel.py", "tl.atomic_add(dq, 1)")
    assert verdict == "opt_in" and "`AttnFused`" in why and "`attn_train_fused`" in why and "`_kernel`" in why
    assert reach(files, "pkg/_kernel.py", "tl.store(dq, 2)")[0] == "target"
    assert reach(files, "pkg/_kernel.py", "_bwd_plain(dq)")[0] == "target"  # Attn.backward: Attn is used
    # a method of a class every use of which is NVIDIA-only is NVIDIA-only
    verdict, why = reach(files, "pkg/_kernel.py", "_bwd_plain(dq)  # CUDA only")
    assert verdict == "nvidia_only" and "every use of `_CudaOnly`" in why
    # the entry the package re-exports is its users' to call; so is any name of a public module
    exported = dict(files, **{"pkg/__init__.py": "from pkg._kernel import attn_train, attn_train_fused\n"})
    assert reach(exported, "pkg/_kernel.py", "tl.atomic_add(dq, 1)")[0] == "target"
    public = {"pkg/__init__.py": "from pkg.kernel import attn_train\n", "pkg/kernel.py": FUSED_BACKWARD}
    assert reach(public, "pkg/kernel.py", "tl.atomic_add(dq, 1)")[0] == "target"
    # a private module the package re-exports nothing from is no API module: its unused names are left alone
    internal = dict(files, **{"pkg/__init__.py": "", "pkg/model.py": "from pkg._kernel import attn_train\n"})
    assert reach(internal, "pkg/_kernel.py", "tl.atomic_add(dq, 1)")[0] == "target"


def test_a_class_used_through_an_attribute_in_another_module_is_used_there():
    files = {
        "pkg/__init__.py": "from pkg._kernel import attn_train\n",
        "pkg/_kernel.py": FUSED_BACKWARD,
        "pkg/model.py": "from pkg._kernel import AttnFused\n\ndef forward(q):\n    return AttnFused.apply(q)\n",
    }
    assert reach(files, "pkg/_kernel.py", "tl.atomic_add(dq, 1)")[0] == "target"


def test_a_function_called_only_as_a_torch_custom_op_is_used_there():
    # seen on fairchem-core 2.24: `@triton_op("uma_nitro::segreduce_tgt_bal")` launches _segreduce_tgt_bal_kernel
    # and is called only as torch.ops.uma_nitro.segreduce_tgt_bal(...) under `elif SCT_CHUNK:`, an ablation
    # switch read from UMA_NITRO_SCT_CHUNK (default 0)
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import os
            import torch
            import triton
            import triton.language as tl
            from torch.library import triton_op, wrap_triton

            SCT_CHUNK = int(os.environ.get("UMA_NITRO_SCT_CHUNK", "0"))

            @triton.jit
            def _bal_kernel(x, CHUNK: tl.constexpr):
                tl.atomic_add(x, 1)

            @triton_op("nitro::bal", mutates_args={"x"})
            def _bal(x: torch.Tensor) -> None:
                wrap_triton(_bal_kernel)[(1,)](x, CHUNK=SCT_CHUNK)

            @triton.jit
            def _plain_kernel(x):
                tl.atomic_add(x, 2)

            @torch.library.custom_op("nitro::plain", mutates_args=())
            def _plain(x: torch.Tensor) -> None:
                _plain_kernel[(1,)](x)

            def backward(x):
                if SCT_CHUNK:
                    torch.ops.nitro.bal(x)
                torch.ops.nitro.plain.default(x)
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "tl.atomic_add(x, 1)")
    assert verdict == "opt_in" and "`_bal`" in why and "SCT_CHUNK" in why
    assert reach(files, "pkg/ops.py", "tl.atomic_add(x, 2)")[0] == "target"


def test_opt_in_findings_are_hidden_from_the_scan_and_kept_for_show_unreachable(tmp_path):
    ptx = 'tl.inline_asm_elementwise("cvt.rn.tf32.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)'
    kernels = OPTION_KERNELS.replace("tl.atomic_add(out, tl.load(x))", f"tl.store(out, {ptx})")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": kernels, "pkg/model.py": MODEL_CALLS})
    found = scan_tree(tmp_path, "mi300x", load_rules(), jobs=1, config=PorterConfig())
    assert not [f for f in found.findings if f.rule == "PT109"]  # the PTX sits in a kernel only an option launches
    dropped = [f for f in found.unreachable if f.rule == "PT109"]
    assert len(dropped) == 1 and dropped[0].reach == "opt_in" and "`use_atomic` is True" in dropped[0].reach_reason


def test_an_f_string_of_decided_values_is_decided_and_a_converted_one_is_not():
    files = ops("""
        import torch
        ARCH = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]

        def pick_a(x):
            if f"{ARCH}" == "gfx942":
                return x + 1

        def pick_b(x):
            if f"{ARCH!r}" == "gfx942":  # the repr is quoted: not what the comparison reads
                return x + 2
    """)
    assert reach(files, "pkg/ops.py", "x + 1")[0] == "target"
    assert reach(files, "pkg/ops.py", "x + 1", target="mi350x")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "x + 2", target="mi350x")[0] == "target"


def test_a_cached_wrapper_of_an_imported_predicate_feeds_the_kernel_constexpr():
    # freetoken 0.2.1: `_pdl_supported()` (no platform word in its name or text) returns the arch module's
    # is_sm90_supported(), whose capability helper returns None on ROCm; the launch passes `ENABLE_PDL=pdl`
    files = {
        "pkg/__init__.py": "",
        "pkg/arch.py": """
            import functools
            import torch

            @functools.cache
            def is_rocm() -> bool:
                return getattr(torch.version, "hip", None) is not None

            @functools.cache
            def _capability():
                if is_rocm():
                    return None
                return torch.cuda.get_device_capability()

            def is_arch_supported(major: int, minor: int = 0) -> bool:
                arch = _capability()
                if arch is None:
                    return False
                return arch >= (major, minor)

            def is_sm90_supported() -> bool:
                return is_arch_supported(9, 0)
        """,
        "pkg/ops.py": """
            import functools
            import triton
            import triton.language as tl
            from triton.language.extra.cuda import gdc_wait

            from pkg.arch import is_sm90_supported

            @functools.cache
            def _pdl_supported() -> bool:
                return is_sm90_supported()

            @triton.jit
            def _kernel(x_ptr, ENABLE_PDL: tl.constexpr):
                if ENABLE_PDL:
                    gdc_wait()
                tl.store(x_ptr, 1)

            def run(x):
                pdl = _pdl_supported()
                _kernel[(1,)](x, ENABLE_PDL=pdl)
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "gdc_wait()")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "gdc_wait()", target="h100")[0] == "target"
    assert reach(files, "pkg/ops.py", "tl.store(x_ptr, 1)")[0] == "target"


def test_a_function_that_fills_or_bumps_a_local_in_a_platform_branch_is_not_the_literal_it_started_from():
    # a short function that calls a predicate is read for its value: what it returns is the local after the
    # branch, not the `[]` / `0` it was bound to (`append` and `+=` on the target make it non-empty / non-zero)
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import torch
            from triton.language.extra.cuda import gdc_wait

            def is_hip() -> bool:
                return torch.version.hip is not None

            def _extra_args():
                args = []
                if is_hip():
                    args.append("--offload-arch")
                return args

            def _rocm_count():
                n = 0
                if is_hip():
                    n += 1
                return n

            def _scaled(x):
                y = torch.empty_like(x)
                if is_hip():
                    y = y * 2
                return y

            def run(x):
                if _extra_args():
                    gdc_wait()
                if _rocm_count():
                    x.add_(1)
                if _scaled(x):
                    x.add_(2)
                if not _rocm_count():
                    x.add_(3)
        """,
    }
    assert reach(files, "pkg/ops.py", "gdc_wait()")[0] == "target"
    assert reach(files, "pkg/ops.py", "x.add_(1)")[0] == "target"
    assert reach(files, "pkg/ops.py", "x.add_(2)")[0] == "target"
    assert reach(files, "pkg/ops.py", "x.add_(3)")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "x.add_(3)", target="h100")[0] == "target"


def test_a_module_in_a_folder_without_init_that_nothing_the_package_loads_imports_is_unreached():
    # seen on fp8-coat 1.0.11: coat/activation/fake_quantization/ (no __init__.py) holds a Triton quantizer that
    # only its sibling quantize_function.py imports, and nothing imports that; seen on flash-maxsim 0.3.0: a
    # `*_fusedbwd_proposal.py` design module nothing imports
    kernel = "import triton\n@triton.jit\ndef _q(x):\n    pass\ndef run(x):\n    _q[(1,)](x)\n"
    files = {
        "pkg/__init__.py": "from pkg.live import run\n",
        "pkg/live.py": kernel,
        "pkg/fake/quantizer.py": kernel,
        "pkg/fake/function.py": "from pkg.fake.quantizer import run\n",
        "pkg/ns/used.py": kernel,  # a namespace folder a live module imports from: it loads
        "pkg/model.py": "from pkg.ns.used import run\n",
        "pkg/maxsim_fusedbwd_proposal.py": kernel,
        "scripts/tool.py": kernel,  # beside the package, not inside it: an entry point of its own
    }
    verdict, why = reach(files, "pkg/fake/quantizer.py", "_q[(1,)]")
    assert verdict == "unreached" and "`pkg/fake/`, a folder without `__init__.py`" in why
    assert "only modules nothing loads import it (pkg/fake/function.py)" in why
    verdict, why = reach(files, "pkg/maxsim_fusedbwd_proposal.py", "_q[(1,)]")
    assert verdict == "unreached" and "unreleased module (`maxsim_fusedbwd_proposal`)" in why
    for live in ("pkg/live.py", "pkg/ns/used.py", "scripts/tool.py"):
        assert reach(files, live, "_q[(1,)]")[0] == "target", live
    # a scan of part of the package (its top-level `__init__` not in it) cannot tell that nothing imports the
    # folder: freetoken's kernel/triton/ is such a folder, imported from model code outside the scan
    part = {path: text for path, text in files.items() if path != "pkg/__init__.py"}
    part["pkg/sub/__init__.py"] = ""
    part["pkg/sub/fake/quantizer.py"] = kernel
    assert reach(part, "pkg/sub/fake/quantizer.py", "_q[(1,)]")[0] == "target"


def test_an_unused_public_name_outside_the_api_its_package_states_is_unreached():
    # seen on triton-runner 0.3.8: testing/__init__.py lists `__all__` and re-exports do_bench and others from
    # core.py, not set_gpu_clock (an A100 clock helper nothing calls)
    core = "import subprocess\ndef do_bench(f):\n    return f()\ndef set_clock():\n    subprocess.check_output(['nvidia-smi'])\n"
    files = {
        "pkg/__init__.py": "from pkg.gemm import gemm\n",
        "pkg/testing/__init__.py": "from .core import do_bench\n__all__ = ['do_bench']\n",
        "pkg/testing/core.py": core,
        "pkg/gemm.py": "from pkg.utils import int_mm\ndef gemm(a):\n    return int_mm(a)\n",
        "pkg/utils.py": "def int_mm(a):\n    return a\ndef stats(a):\n    return a.float().max()\n",
    }
    verdict, why = reach(files, "pkg/testing/core.py", "subprocess.check_output")
    assert verdict == "unreached" and "`__all__` leaves it out" in why and "`set_clock`" in why
    assert reach(files, "pkg/testing/core.py", "return f()")[0] == "target"
    # users' names stay: one the `__init__` exports without `__all__`, one a module imports (a use or a re-export),
    # a partial scan; and a module no `__init__` exports from, though only the package's modules import it: its
    # public helpers are for users and tests (float8-experimental's fp8_tensor_statistics, changed by a ROCm port)
    no_all = dict(files, **{"pkg/testing/__init__.py": "from .core import do_bench\n"})
    assert reach(no_all, "pkg/testing/core.py", "subprocess.check_output")[0] == "target"
    imported = dict(files, **{"pkg/bench.py": "from pkg.testing.core import set_clock\n"})
    assert reach(imported, "pkg/testing/core.py", "subprocess.check_output")[0] == "target"
    part = {path: text for path, text in files.items() if path != "pkg/__init__.py"}
    assert reach(part, "pkg/testing/core.py", "subprocess.check_output")[0] == "target"
    assert reach(files, "pkg/utils.py", "a.float().max()")[0] == "target"


def test_cli_hides_findings_no_entry_point_reaches_and_shows_them_with_the_reason(tmp_path, capsys):
    from porter.cli import main

    files = {"pkg/__init__.py": "", "pkg/triton_utils.py": "import triton\nimport triton.language as tl\n"}
    write(tmp_path, {**files, "pkg/mm_proposal.py": MM_KERNEL})
    args = ["scan", str(tmp_path), "--target", "mi350x", "--format", "json", "--no-cache", "--select", "PT103"]
    main(args)
    captured = capsys.readouterr()
    assert json.loads(captured.out)["findings"] == []
    assert "that no entry point of the package reaches (1)" in captured.err
    main([*args, "--show-unreachable"])
    records = json.loads(capsys.readouterr().out)["findings"]
    assert [(r["rule"], r["reach"]) for r in records] == [("PT103", "unreached")]
    assert "unreleased module (`mm_proposal`)" in records[0]["reach_reason"]


# seen on fp8-coat 1.0.11 (`_stochastic_rounding` under STOCHASTIC, every `stochastic=False`) and hip-attn 1.2.9
# (`SAMPLE_METHOD == "position"`, the args default "center"): a kernel's constexpr fed from options of the package's
# API, which no code of the package sets
CONSTEXPR_API = {
    "pkg/__init__.py": "from pkg.ops import divide, fit\n\n__all__ = ['divide', 'fit']\n",
    "pkg/ops.py": """
        import triton
        import triton.language as tl
        from triton.language.extra.cuda import libdevice

        @triton.jit
        def _rounding(x):
            return libdevice.signbit(x)

        @triton.jit
        def _divide_kernel(x, STOCHASTIC: tl.constexpr, METHOD: tl.constexpr, FAST: tl.constexpr):
            if STOCHASTIC:
                x = _rounding(x)
            if METHOD == "position":
                tl.atomic_add(x, 1)
            if FAST:
                tl.store(x, 4)
            else:
                tl.atomic_add(x, 5)
            tl.store(x, 2)

        @triton.jit
        def _two_pass_kernel(x):
            tl.atomic_add(x, 3)

        def divide(x, stochastic=False, method="center", fast=True):
            _divide_kernel[(1,)](x, STOCHASTIC=stochastic, METHOD=method, FAST=fast)

        def quantize(x, stochastic=False):
            divide(x, stochastic=stochastic)

        def fit(x, fused=True):
            if not fused:
                _two_pass_kernel[(1,)](x)
    """,
    "pkg/model.py": "from pkg.ops import divide, quantize\n\ndef forward(x):\n    quantize(x)\n    divide(x)\n",
}


def test_a_constexpr_fed_from_api_options_no_package_code_sets_is_opt_in():
    verdict, why = reach(CONSTEXPR_API, "pkg/ops.py", "x = _rounding(x)")
    assert verdict == "opt_in" and "only `STOCHASTIC` adds" in why and "API is called with its defaults" in why
    assert reach(CONSTEXPR_API, "pkg/ops.py", "return libdevice.signbit")[0] == "opt_in"  # its only use is there
    assert reach(CONSTEXPR_API, "pkg/ops.py", "tl.atomic_add(x, 1)")[0] == "opt_in"  # METHOD is "center"
    assert reach(CONSTEXPR_API, "pkg/ops.py", "tl.store(x, 2)")[0] == "target"
    # an alternative the option selects is the users' choice (the switch a port flips where the default fails)
    assert reach(CONSTEXPR_API, "pkg/ops.py", "tl.atomic_add(x, 5)")[0] == "target"
    # a host branch on an API option stays the users' choice: `fit(x, fused=False)` launches a whole kernel
    assert reach(CONSTEXPR_API, "pkg/ops.py", "tl.atomic_add(x, 3)")[0] == "target"
    # the package's own code passing the other value keeps the branch compiled
    files = dict(CONSTEXPR_API, **{"pkg/train.py": "from pkg.ops import quantize\n\nquantize(1, stochastic=True)\n"})
    assert reach(files, "pkg/ops.py", "x = _rounding(x)")[0] == "target"
    files = dict(CONSTEXPR_API, **{"pkg/train.py": "from pkg.ops import divide\n\ndivide(1, method=pick())\n"})
    assert reach(files, "pkg/ops.py", "tl.atomic_add(x, 1)")[0] == "target"


def test_an_import_used_only_in_dropped_code_takes_the_reach_of_its_uses(tmp_path):
    # seen on freetoken (gdc_wait / gdc_launch_dependents imported from extra.cuda, called only under an ENABLE_PDL
    # constexpr False on ROCm) and fp8-coat 1.0.11 (libdevice used only in `_stochastic_rounding`): extra.cuda
    # loads on the HIP build, and only a kernel that calls its functions fails to compile
    pdl = """
        import torch
        import triton
        import triton.language as tl
        from triton.language.extra.cuda import gdc_wait

        @triton.jit
        def _act_kernel(x, ENABLE_PDL: tl.constexpr):
            if ENABLE_PDL:
                gdc_wait()
            tl.store(x, 1)

        def act(x):
            _act_kernel[(1,)](x, ENABLE_PDL=torch.version.hip is None)

        __all__ = ["act"]
    """
    write(tmp_path, {"pkg/__init__.py": "", "pkg/act.py": pdl, **CONSTEXPR_API})
    found = scan_tree(tmp_path, "mi300x", load_rules(select=["PT110"]), jobs=1, config=PorterConfig())
    assert not found.findings
    dropped = {f.path: f for f in found.unreachable}
    assert dropped["pkg/act.py"].reach == "nvidia_only" and "ENABLE_PDL" in dropped["pkg/act.py"].reach_reason
    assert (
        dropped["pkg/ops.py"].reach == "opt_in"
        and "every use of the names it binds" in dropped["pkg/ops.py"].reach_reason
    )
    # a use in code that runs keeps the import reported; so does a re-export (`__all__` naming it)
    used = pdl.replace("tl.store(x, 1)", "tl.store(x, 1)\n            gdc_wait()")
    write(tmp_path, {"pkg/act.py": used})
    found = scan_tree(tmp_path, "mi300x", load_rules(select=["PT110"]), jobs=1, config=PorterConfig(), use_cache=False)
    assert [f.path for f in found.findings] == ["pkg/act.py"]
    write(tmp_path, {"pkg/act.py": pdl.replace('["act"]', '["act", "gdc_wait"]')})
    found = scan_tree(tmp_path, "mi300x", load_rules(select=["PT110"]), jobs=1, config=PorterConfig(), use_cache=False)
    assert [f.path for f in found.findings] == ["pkg/act.py"]
    # another module importing the name from here may call it where it runs
    write(tmp_path, {"pkg/act.py": pdl, "pkg/other.py": "from pkg.act import gdc_wait\n"})
    found = scan_tree(tmp_path, "mi300x", load_rules(select=["PT110"]), jobs=1, config=PorterConfig(), use_cache=False)
    assert "pkg/act.py" in [f.path for f in found.findings]


# seen on hip-attn 1.2.9: the v1.1 kernels take SAMPLE_METHOD and LOGIT_SOFTCAP from fields of HiPAttentionArgs,
# a dataclass the package exports, passed positionally after `*args.safe_stride(q, 4)`; its fields default to
# "center" and None (`__post_init__` turns 0 into None), and the package's own code sets neither
ARGS_KERNELS = {
    "pkg/__init__.py": "from pkg.attn import Args, attention\n\n__all__ = ['Args', 'attention']\n",
    "pkg/attn.py": """
        from dataclasses import dataclass
        from typing import Optional

        import triton
        import triton.language as tl

        @dataclass
        class Args:
            block_size: int = 64
            sample_method: str = "center"
            logit_softcap: Optional[float] = None

            def __post_init__(self):
                if self.logit_softcap == 0:
                    self.logit_softcap = None

            def safe_stride(self, x, n):
                return x.stride()

        @triton.jit
        def _attn_kernel(q, s0, s1, SAMPLE_METHOD: tl.constexpr, LOGIT_SOFTCAP: tl.constexpr):
            if SAMPLE_METHOD == "position":
                tl.atomic_add(q, 1)
            if LOGIT_SOFTCAP is not None:
                tl.atomic_add(q, 2)
            tl.store(q, 3)

        def masking(q, args: "Args"):
            _attn_kernel[(1,)](q, *args.safe_stride(q, 2), args.sample_method, args.logit_softcap)

        def attention(q, args: Optional[Args] = None, **kwargs):
            if args is None:
                args = Args(**kwargs)
            masking(q, args)
            return q
            masking(q, Args(sample_method="position"))  # never runs
    """,
    "pkg/model.py": "from pkg.attn import Args, attention\n\ndef forward(q):\n    return attention(q, Args(block_size=32))\n",
}


def test_a_constexpr_fed_from_fields_of_a_settings_record_takes_their_defaults():
    verdict, why = reach(ARGS_KERNELS, "pkg/attn.py", "tl.atomic_add(q, 1)")
    assert verdict == "opt_in" and "SAMPLE_METHOD" in why
    assert reach(ARGS_KERNELS, "pkg/attn.py", "tl.atomic_add(q, 2)")[0] == "opt_in"
    assert reach(ARGS_KERNELS, "pkg/attn.py", "tl.store(q, 3)")[0] == "target"
    # the package's own code setting a field, by construction, store, replace or through the entry's **kwargs
    for setting in (
        "attention(q, Args(sample_method=pick()))",
        "attention(q, sample_method='position')",
        "a = Args()\n    a.sample_method = 'position'\n    attention(q, a)",
        "attention(q, dataclasses.replace(Args(), sample_method='position'))",
    ):
        model = f"import dataclasses\nfrom pkg.attn import Args, attention\n\ndef forward(q):\n    {setting}\n"
        files = dict(ARGS_KERNELS, **{"pkg/model.py": model})
        assert reach(files, "pkg/attn.py", "tl.atomic_add(q, 1)")[0] == "target", setting
    # a softcap the project passes keeps its branch
    files = dict(ARGS_KERNELS, **{"pkg/model.py": "from pkg.attn import Args\n\nArgs(logit_softcap=30.0)\n"})
    assert reach(files, "pkg/attn.py", "tl.atomic_add(q, 2)")[0] == "target"
    # a construction after a `return` never runs: it sets nothing
    live = ARGS_KERNELS["pkg/attn.py"].replace("            return q\n", "")
    assert reach(dict(ARGS_KERNELS, **{"pkg/attn.py": live}), "pkg/attn.py", "tl.atomic_add(q, 1)")[0] == "target"


@pytest.mark.parametrize(
    "guard",
    [
        "try:\n    if b != 'triton':\n        raise ValueError(b)\nexcept ValueError:\n    pass",
        "with contextlib.suppress(ValueError):\n    if b != 'triton':\n        raise ValueError(b)",
        "with contextlib.suppress(AssertionError):\n    assert b == 'triton'",
    ],
)
def test_a_raise_a_handler_catches_narrows_nothing(guard):
    # the raise goes on after the `try` (or a suppressing `with`): b may still be any value the environment holds
    body = textwrap.indent(guard, " " * 16)
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": f"""
            import contextlib
            import os
            import torch

            def _backend():
                b = os.environ.get("PKG_BACKEND", "cuda")
{body}
                return b

            def run(x):
                if _backend() == "triton":
                    return x
                else:
                    torch.cuda.nvtx.range_push("cuda")
        """,
    }
    verdict, why = reach(files, "pkg/ops.py", "torch.cuda.nvtx")
    assert verdict == "target", why


def test_a_raise_a_handler_raises_again_still_exits():
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": """
            import os
            import torch

            def _backend():
                b = os.environ.get("PKG_BACKEND", "cuda")
                try:
                    if b != "triton":
                        raise ValueError(b)
                except ValueError:
                    raise
                return b

            def run(x):
                if _backend() == "triton":
                    return x
                else:
                    torch.cuda.nvtx.range_push("cuda")
        """,
    }
    assert reach(files, "pkg/ops.py", "torch.cuda.nvtx")[0] != "target"


def test_a_local_bound_from_a_bare_project_call_keeps_its_later_bindings():
    # `w8a8 = e4m3_native()` (no other test before the call) then `w8a8 = True` on a branch: both are kept
    body = """
        import torch
        from pkg.compat import e4m3_native

        def linear(x, w, scale, force):
            w8a8 = e4m3_native()
            if force:
                w8a8 = True
            if w8a8:
                return torch._scaled_mm(x, w, scale_a=scale, scale_b=scale)
            return x @ w
    """
    facts = module_facts(textwrap.dedent(body), "pkg/ops.py")
    assert facts["locals"]["linear"]["w8a8"] == ["e4m3_native()", "True"]
    files = {"pkg/__init__.py": "", "pkg/compat.py": E4M3_COMPAT, "pkg/ops.py": body}
    verdict, why = reach(files, "pkg/ops.py", "torch._scaled_mm")
    assert verdict == "target", why


MODES_OPS = """
    import os
    import torch

    def _tree(x):
        return x

    _MODES = {"tree": _tree}
    _FLAGS = {"nvtx": False}
    {fill}

    def _mode():
        m = os.environ.get("PKG_MODE", "")
        if not m:
            return "tree" if torch.version.hip else "graph"
        if m not in _MODES:
            raise ValueError(m)
        return m

    def run(x):
        if _mode() == "tree":
            return _MODES["tree"](x)
        else:
            torch.cuda.nvtx.range_push("other")

    def mark(x):
        if _FLAGS["nvtx"]:
            torch.cuda.nvtx.mark("on")
"""


@pytest.mark.parametrize(
    ("fill", "elsewhere"),
    [
        ("def register(name, fn):\n        _MODES[name] = fn\n        _FLAGS.update(nvtx=True)", ""),
        ("", "from pkg.ops import _MODES, _FLAGS\n\n_MODES['fast'] = len\n_FLAGS['nvtx'] = True\n"),
        ("", "from pkg import ops\n\nops._MODES['fast'] = len\nops._FLAGS['nvtx'] = True\n"),
    ],
    ids=["filled-in-module", "imported-by-name", "read-on-the-module"],
)
def test_a_module_level_mapping_filled_later_is_not_read_at_its_literal_keys(fill, elsewhere):
    # `def register(n, f): _MODES[n] = f`: `if m not in _MODES: raise` leaves m undecided (a mode the user picks
    # may run the other branch on ROCm), `_FLAGS["nvtx"]` too
    files = {"pkg/__init__.py": "", "pkg/ops.py": MODES_OPS.replace("{fill}", fill), "pkg/plugins.py": elsewhere}
    verdict, why = reach(files, "pkg/ops.py", "torch.cuda.nvtx.range_push")
    assert verdict == "unknown", why
    assert "only where a user opts in" in why
    verdict, why = reach(files, "pkg/ops.py", "torch.cuda.nvtx.mark")
    assert verdict == "target", why


def test_a_module_level_mapping_nothing_fills_is_read_at_its_literal_keys():
    files = {"pkg/__init__.py": "", "pkg/ops.py": MODES_OPS.replace("{fill}", ""), "pkg/plugins.py": ""}
    assert reach(files, "pkg/ops.py", "torch.cuda.nvtx.range_push")[0] == "nvidia_only"
    assert reach(files, "pkg/ops.py", "torch.cuda.nvtx.mark")[0] == "nvidia_only"


def test_an_option_body_that_replaces_a_value_or_returns_is_an_alternative_not_an_optional_step():
    # `x = slow(...)` then `if FAST: x = fast(...)`, or `if FAST: return ...`: the option picks an implementation
    kernel = CONSTEXPR_API["pkg/ops.py"]
    for body, marker in (
        ("y = tl.load(x)\n            if STOCHASTIC:\n                y = _rounding(x)", "y = _rounding(x)"),
        ("if STOCHASTIC:\n                return _rounding(x)", "return _rounding(x)"),  # the rest is its else too
    ):
        files = dict(
            CONSTEXPR_API, **{"pkg/ops.py": kernel.replace("if STOCHASTIC:\n                x = _rounding(x)", body)}
        )
        assert reach(files, "pkg/ops.py", marker)[0] == "target", body
    # a parameter the body transforms stays an added step (COAT's `x = _rounding(x)`)
    assert reach(CONSTEXPR_API, "pkg/ops.py", "x = _rounding(x)")[0] == "opt_in"
    # so does a local it rebinds from its own value (hip-attn's `qk = tanh(qk / LOGIT_SOFTCAP) * LOGIT_SOFTCAP`)
    for body, marker in (
        ("y = tl.load(x)\n            if STOCHASTIC:\n                y = _rounding(y) * 2", "y = _rounding(y)"),
        ("y = tl.load(x)\n            if STOCHASTIC:\n                y += _rounding(x)", "y += _rounding(x)"),
    ):
        files = dict(
            CONSTEXPR_API, **{"pkg/ops.py": kernel.replace("if STOCHASTIC:\n                x = _rounding(x)", body)}
        )
        assert reach(files, "pkg/ops.py", marker)[0] == "opt_in", body


KWARGS_ENTRY = {
    "pkg/__init__.py": "from pkg.ops import quantize\n\n__all__ = ['quantize']\n",
    "pkg/ops.py": """
        import triton
        import triton.language as tl

        @triton.jit
        def _kernel(x, STOCHASTIC: tl.constexpr = False):
            if STOCHASTIC:
                tl.atomic_add(x, 1)
            tl.store(x, 2)

        def _entry(x, **kwargs):
            _kernel[(1,)](x, **kwargs)

        def quantize(x):
            _entry(x)
    """,
}


def test_an_entrys_kwargs_it_changes_itself_or_hands_to_unknown_callers_are_undecided():
    assert reach(KWARGS_ENTRY, "pkg/ops.py", "tl.atomic_add(x, 1)")[0] == "opt_in"  # no caller passes STOCHASTIC
    ops = KWARGS_ENTRY["pkg/ops.py"]
    for change in (
        "_entry(x, **kwargs):\n            kwargs['STOCHASTIC'] = True\n",
        "_entry(x, **kwargs):\n            kwargs.update(STOCHASTIC=True)\n",
        "_entry(x, **kwargs):\n            kwargs = dict(kwargs, STOCHASTIC=True)\n",
    ):
        files = dict(KWARGS_ENTRY, **{"pkg/ops.py": ops.replace("_entry(x, **kwargs):\n", change)})
        assert reach(files, "pkg/ops.py", "tl.atomic_add(x, 1)")[0] == "target", change
    # a reference that is no call (a dispatch table, a partial) is a caller that may pass anything
    for use in ("_TABLE = {'q': _entry}\n", "_STOCHASTIC = functools.partial(_entry, STOCHASTIC=True)\n"):
        files = dict(KWARGS_ENTRY, **{"pkg/ops.py": "import functools\n" + textwrap.dedent(ops) + use})
        assert reach(files, "pkg/ops.py", "tl.atomic_add(x, 1)")[0] == "target", use


def test_a_settings_record_built_or_stored_where_the_analysis_does_not_see_it_is_undecided():
    attn = ARGS_KERNELS["pkg/attn.py"]
    method = "\n            def safe_stride(self, x, n):"
    model = "from pkg.attn import Args, attention\n\ndef forward(q, text):\n    return attention(q, {})\n"
    for added, built in (
        # a classmethod building it with `cls(**...)`, called by the project
        ("@classmethod\ndef parse(cls, text):\n    return cls(**text)", "Args.parse(text)"),
        # a method building another one by name
        ("def positioned(self):\n    return Args(sample_method='position')", "Args().positioned()"),
        # a frozen dataclass's store
        ("def pick(self, m):\n    object.__setattr__(self, 'sample_method', m)", "Args()"),
    ):
        code = "\n" + textwrap.indent(added, " " * 12) + "\n"
        files = dict(ARGS_KERNELS, **{"pkg/attn.py": attn.replace(method, code + method)})
        files["pkg/model.py"] = model.format(built)
        assert reach(files, "pkg/attn.py", "tl.store(q, 3)")[0] == "target"
        assert reach(files, "pkg/attn.py", "tl.atomic_add(q, 1)")[0] == "target", added
    # the class used otherwise than constructed or named as a type: a partial, an alias, a subclass
    for use in (
        "functools.partial(Args, sample_method=text)()",
        "Alias(sample_method=text)",
        "Sub()",
    ):
        head = "import functools\nfrom pkg.attn import Args, attention\n\nAlias = Args\n\n"
        head += "class Sub(Args):\n    def pick(self):\n        self.sample_method = 'position'\n\n"
        files = dict(
            ARGS_KERNELS, **{"pkg/model.py": head + f"def forward(q, text):\n    return attention(q, {use})\n"}
        )
        assert reach(files, "pkg/attn.py", "tl.atomic_add(q, 1)")[0] == "target", use
    # a dataclass with a base class: fields and stores it inherits
    base = "        @dataclass\n        class Base:\n            pass\n\n        @dataclass\n        class Args(Base):"
    inherited = attn.replace("        @dataclass\n        class Args:", base)
    assert reach(dict(ARGS_KERNELS, **{"pkg/attn.py": inherited}), "pkg/attn.py", "tl.atomic_add(q, 1)")[0] == "target"
    # naming the type only (an annotation, an isinstance test) keeps the field's default
    typed = "from pkg.attn import Args, attention\n\ndef forward(q, a: Args):\n    assert isinstance(a, Args)\n    return attention(q, a)\n"
    assert reach(dict(ARGS_KERNELS, **{"pkg/model.py": typed}), "pkg/attn.py", "tl.atomic_add(q, 1)")[0] == "opt_in"


def test_a_record_method_storing_its_own_parameter_in_a_field_is_undecided():
    # `def enable(self, use_pdl): self.use_pdl = use_pdl` stores what its caller passes, not what the name suggests
    attn = (
        ARGS_KERNELS["pkg/attn.py"]
        .replace('sample_method: str = "center"', 'sample_method: str = "center"\n            use_pdl: bool = False')
        .replace("LOGIT_SOFTCAP: tl.constexpr):", "LOGIT_SOFTCAP: tl.constexpr, USE_PDL: tl.constexpr):")
        .replace("tl.store(q, 3)", "tl.store(q, 3)\n            if USE_PDL:\n                tl.atomic_add(q, 4)")
        .replace("args.logit_softcap)", "args.logit_softcap, args.use_pdl)")
    )
    files = dict(ARGS_KERNELS, **{"pkg/attn.py": attn})
    assert reach(files, "pkg/attn.py", "tl.atomic_add(q, 4)")[0] == "opt_in"  # no code of the package sets it
    enable = "\n            def enable(self, use_pdl):\n                self.use_pdl = use_pdl\n"
    files["pkg/attn.py"] = attn.replace("\n            def safe_stride", enable + "\n            def safe_stride")
    assert reach(files, "pkg/attn.py", "tl.atomic_add(q, 4)")[0] == "target"
    # a constant the method stores is read as such
    files["pkg/attn.py"] = attn.replace(
        "\n            def safe_stride", enable.replace("= use_pdl", "= False") + "\n            def safe_stride"
    )
    assert reach(files, "pkg/attn.py", "tl.atomic_add(q, 4)")[0] == "opt_in"
