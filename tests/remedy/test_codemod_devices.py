from tests.codemod_cases import check, run

HARDWARE = """\
import torch

NUM_SMS = 132  # H100 SXM5


def check_cuda_build():
    if torch.cuda.is_available() and torch.version.cuda is None:
        raise RuntimeError("needs a CUDA build")
    if not torch.version.cuda:
        raise RuntimeError("needs a CUDA build")
    assert torch.version.cuda is not None, "CUDA only"
    if torch.version.cuda is not None and int(torch.version.cuda.split(".")[0]) < 12:
        raise RuntimeError("old CUDA")


def fp8_supported():
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)


def quantize(x):
    if torch.cuda.get_device_capability() >= (9, 0):
        return x.to(torch.float8_e4m3fn)
    return x
"""


def test_hard_coded_sm_count():
    check(
        "PT116",
        HARDWARE,
        [3],
        expected=HARDWARE.replace("import torch\n", "import torch\nimport porter_shim\n", 1).replace(
            "NUM_SMS = 132", "NUM_SMS = porter_shim.multiprocessor_count()"
        ),
    )


def test_version_cuda_checks_accept_hip():
    result = check(
        "PT201",
        HARDWARE,
        [7, 9, 11, 12],
        expected=HARDWARE.replace(
            "and torch.version.cuda is None:", "and (torch.version.cuda is None and torch.version.hip is None):"
        )
        .replace("if not torch.version.cuda:", "if not (torch.version.cuda or torch.version.hip):")
        .replace(
            "assert torch.version.cuda is not None,",
            "assert torch.version.cuda is not None or torch.version.hip is not None,",
        ),
    )
    assert not result.uses_shim


def test_capability_gates():
    result = check(
        "PT202",
        HARDWARE,
        [17, 21],
        expected=HARDWARE.replace("import torch\n", "import torch\nimport porter_shim\n", 1)
        .replace(
            "    if torch.cuda.get_device_capability() >= (9, 0):",
            '    if (porter_shim.has_feature("fp8") if porter_shim.IS_HIP else torch.cuda.get_device_capability() >= (9, 0)):',
        )
        .replace(
            "torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)",
            "torch.cuda.is_available() and (not porter_shim.IS_HIP and torch.cuda.get_device_capability() >= (9, 0))",
        ),
    )
    # the fp8 gate names its feature; the bare Hopper gate cannot, so AMD takes the fallback and a person reviews it
    assert result.safety == "unsafe" and len(result.notes) == 1 and "line 17" in result.notes[0]


def test_capability_gate_with_feature_is_safe():
    result = run("PT202", HARDWARE, [21])
    assert result.safety == "safe" and 'porter_shim.has_feature("fp8")' in result.text


def test_smem_optin_and_device_strings():
    check(
        "PT108",
        "smem = props.shared_memory_per_block_optin\n",
        [1],
        expected='smem = (getattr(props, "shared_memory_per_block_optin", None) or props.shared_memory_per_block)\n',
    )
    check(
        "PT220",
        "x = x.to('hip:0')\nd = torch.device(\"rocm\")\n",
        [1, 2],
        expected="x = x.to('cuda:0')\nd = torch.device(\"cuda\")\n",
    )


SMI = """\
import subprocess


def gpu_memory_mb(index: int = 0) -> tuple[int, int]:
    out = subprocess.check_output(
        ["nvidia-smi", f"--id={index}", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"],
        text=True,
    )
    used, total = (int(field) for field in out.strip().split(","))
    return used, total
"""


def test_nvidia_smi_memory_query_gets_a_rocm_branch():
    check(
        "PT402",
        SMI,
        [6],
        expected="""\
import subprocess
import porter_shim


def gpu_memory_mb(index: int = 0) -> tuple[int, int]:
    if porter_shim.IS_HIP:  # nvidia-smi is absent on ROCm: the same CSV from the shim
        _porter_free, _porter_total = porter_shim.gpu_memory_info(index)
        out = f"{(_porter_total - _porter_free) // 1048576}, {_porter_total // 1048576}\\n"
    else:
        out = subprocess.check_output(
            ["nvidia-smi", f"--id={index}", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"],
            text=True,
        )
    used, total = (int(field) for field in out.strip().split(","))
    return used, total
""",
    )


def test_nvidia_smi_branch_produces_the_csv_the_code_parses():
    result = run("PT402", SMI, [6], exclusive=True)
    namespace = {}
    shim = type("Shim", (), {"gpu_memory_info": staticmethod(lambda index: (3 * 2**30, 8 * 2**30))})
    exec(compile(result.text.replace("import porter_shim\n", ""), "m.py", "exec"), {"porter_shim": shim}, namespace)
    assert namespace["gpu_memory_mb"](0) == (5 * 1024, 8 * 1024)


def test_nvidia_smi_other_queries_decline():
    assert run("PT402", 'out = subprocess.check_output(["nvidia-smi", "-L"])\n', [1]) is None


def test_negative_capability_gate_stays_true_on_amd():
    source = "import torch\nif torch.cuda.get_device_capability(d) != (9, 0):\n    raise RuntimeError('Hopper only')\n"
    check(
        "PT202",
        source,
        [2],
        expected=source.replace("import torch\n", "import torch\nimport porter_shim\n").replace(
            "if torch.cuda.get_device_capability(d) != (9, 0):",
            "if (porter_shim.IS_HIP or torch.cuda.get_device_capability(d) != (9, 0)):",
        ),
    )
    fp8 = "if torch.cuda.get_device_capability() < (8, 9):\n    use_fp8 = False\n"
    check(
        "PT202",
        fp8,
        [1],
        expected='import porter_shim\nif (not porter_shim.has_feature("fp8") if porter_shim.IS_HIP else '
        "torch.cuda.get_device_capability() < (8, 9)):\n    use_fp8 = False\n",
    )
    check(
        "PT202",
        fp8,
        [1],
        exclusive=True,
        expected='import porter_shim\nif not porter_shim.has_feature("fp8"):\n    use_fp8 = False\n',
    )
