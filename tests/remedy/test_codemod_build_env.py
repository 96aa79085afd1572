from tests.codemod_cases import check, run

SETUP = """\
import os
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0")
ext = CUDAExtension("ops", ["ops.cu"], extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math", "-gencode", "arch=compute_90a,code=sm_90a"]})
"""


def test_nvcc_flags_guarded_by_hip():
    check(
        "PT215",
        SETUP,
        [7],
        expected=SETUP.replace(
            "from torch.utils.cpp_extension import CUDAExtension\n",
            "from torch.utils.cpp_extension import CUDAExtension\nfrom torch.utils.cpp_extension import IS_HIP_EXTENSION\n",
        ).replace(
            '["-O3", "--use_fast_math", "-gencode", "arch=compute_90a,code=sm_90a"]',
            '["-O3"] + (["-ffast-math", "-fno-finite-math-only"] if IS_HIP_EXTENSION else ["--use_fast_math", "-gencode", "arch=compute_90a,code=sm_90a"])',
        ),
    )


def test_nvcc_flags_exclusive():
    check(
        "PT215",
        SETUP,
        [7],
        exclusive=True,
        expected=SETUP.replace(
            '["-O3", "--use_fast_math", "-gencode", "arch=compute_90a,code=sm_90a"]',
            '["-O3", "-ffast-math", "-fno-finite-math-only"]',
        ),
    )


def test_env_twins():
    check(
        "PT403",
        SETUP,
        [5],
        expected=SETUP.replace(
            'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
            'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\nos.environ["AMD_SERIALIZE_KERNEL"] = "3"\n',
        ),
    )
    check(
        "PT405",
        SETUP,
        [6],
        expected=SETUP.replace(
            'os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0")\n',
            'os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0")\nos.environ.setdefault("PYTORCH_ROCM_ARCH", "gfx942;gfx950")\n',
        ),
    )
    check(
        "PT403",
        'run(cmd, env={"CUDA_LAUNCH_BLOCKING": "1"})\n',
        [1],
        expected='run(cmd, env={"CUDA_LAUNCH_BLOCKING": "1", "AMD_SERIALIZE_KERNEL": "3"})\n',
    )


SDPA = """\
from torch.nn.attention import SDPBackend, sdpa_kernel

with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    o = attend(q, k, v)
with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
    o = attend(q, k, v)
"""


def test_sdpa_fallbacks():
    check(
        "PT210",
        SDPA,
        [3, 5],
        expected=SDPA.replace(
            "sdpa_kernel(SDPBackend.FLASH_ATTENTION)",
            "sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])",
        ).replace("enable_math=False, enable_mem_efficient=False", "enable_math=True, enable_mem_efficient=True"),
    )
    assert run("PT210", "with sdpa_kernel([SDPBackend.MATH]):\n    pass\n", [1]) is None


SDPA_RECORD = """\
import collections
import torch

Config = collections.namedtuple("Config", "enable_flash enable_math enable_mem_efficient")
A100 = Config(True, False, False)
OTHER = Config(enable_flash=False, enable_math=False, enable_mem_efficient=True)
with torch.backends.cuda.sdp_kernel(**A100._asdict()):
    o = attend(q, k, v)
"""


def test_sdpa_flags_of_a_namedtuple_turn_math_back_on_at_the_construction():
    # the scan reports `sdp_kernel(**config._asdict())` at each construction that turns math off, with enable_math's
    # place among the fields; the codemod works from those findings, and its output scans clean
    from porter.analyze import analyze_source, load_rules
    from porter.remedy.codemods import CodemodContext, get_codemod
    from porter.targets import get_target

    rules, target = load_rules(select=["PT210"]), get_target("mi300x")
    findings = analyze_source(SDPA_RECORD, "pkg/mod.py", target, rules)
    assert [(f.line, f.data["math_position"]) for f in findings] == [(5, 1), (6, 1)]
    result = get_codemod("PT210")(SDPA_RECORD, findings, target, CodemodContext(path="pkg/mod.py"))
    expected = SDPA_RECORD.replace("Config(True, False, False)", "Config(True, True, False)").replace(
        "enable_math=False, enable_mem", "enable_math=True, enable_mem"
    )
    assert result is not None and result.text == expected, result
    compile(result.text, "pkg/mod.py", "exec")
    assert analyze_source(result.text, "pkg/mod.py", target, rules) == []
    # a call nested in the construction's arguments, on the same line, is not the record
    nested = SDPA_RECORD.replace("Config(True, False, False)", "Config(True, False, pick(False, False))")
    findings = analyze_source(nested, "pkg/mod.py", target, rules)
    result = get_codemod("PT210")(nested, findings, target, CodemodContext(path="pkg/mod.py"))
    assert result is not None and "Config(True, True, pick(False, False))" in result.text, result
