"""The analyzer engine: alias resolution, suppressions, variants per target, errors, select/ignore."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.analyze import analyze_source, load_rules
from porter.errors import ConfigError
from porter.targets import get_target

RULES = load_rules(select=["PT2", "PT3", "PT4", "opt-in"])  # opt-in rules are tested like the others
MI300X, MI350X = get_target("mi300x"), get_target("mi350x")


def rules_of(text, target=MI300X, ruleset=RULES):
    return [(f.rule, f.line) for f in analyze_source(text, "m.py", target, ruleset)]


@pytest.mark.parametrize(
    "code",
    [
        "import torch as t\nt.backends.cuda.matmul.allow_tf32 = True",
        "from torch.backends import cuda\ncuda.matmul.allow_tf32 = True",
        "import torch.backends.cuda as c\nc.matmul.allow_tf32 = True",
        "from torch.backends.cuda import matmul as mm\nmm.allow_tf32 = True",
    ],
)
def test_qualified_names_resolve_through_aliases(code):
    assert rules_of(code) == [("PT204", 2)]


def test_version_alias_resolves():
    assert rules_of("from torch import version\nif version.cuda >= '12.1':\n    pass") == [("PT201", 2)]


def test_version_parse_names_the_calls_that_reach_it_on_rocm():
    # deepspeed-pr6909's builder.py: the parse sits in a helper; the port guards the call outside the ROCm check
    code = (
        "import torch\n"
        "def assert_no_cuda_mismatch():\n"
        "    return torch.version.cuda.split('.')[:2]\n"
        "class Builder:\n"
        "    def cxx_args(self):\n"
        "        if not self.is_rocm_pytorch():\n"
        "            assert_no_cuda_mismatch()\n"
        "    def cuda_flag(self):\n"
        "        assert_no_cuda_mismatch()\n"
    )
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT201"]
    assert finding.line == 3 and finding.data["called_on"] == [{"line": 9}]
    assert "called on line 9 outside any CUDA-only test" in finding.message


def test_nvml_import_names_its_first_call():
    # optimum-benchmark-pr57's memory tracker: importing the binding works on ROCm, its nvmlInit() raises
    code = (
        "import torch\n"
        "nvmlInit = None\n"
        "def peak_memory(device_ids):\n"
        "    import py3nvml.py3nvml as nvml\n"
        "    torch.cuda.synchronize()\n"
        "    nvml.nvmlInit()\n"
        "    return [nvml.nvmlDeviceGetHandleByIndex(i) for i in device_ids]\n"
        "def other():\n"
        "    nvml.nvmlShutdown()\n"
    )
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT307"]
    assert finding.line == 4 and finding.data["first_call"] == {"line": 6}
    assert "(first called on line 6: `nvml.nvmlInit()`)" in finding.message


def test_nvml_import_names_the_availability_check_that_raises_first():
    # accelerate-pr4025's CPU affinity: on ROCm `is_pynvml_available()` is False and the raise stops it first
    code = (
        "import torch\n"
        "def set_affinity(i):\n"
        "    if torch.cuda.is_available():\n"
        "        from accelerate.utils import is_pynvml_available\n"
        "        if not is_pynvml_available():\n"
        "            raise ImportError(\n"
        "                'needs nvidia-ml-py'\n"
        "            )\n"
        "        import pynvml as nvml\n"
        "        nvml.nvmlInit()\n"
    )
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT307"]
    assert finding.line == 9 and finding.data["requirement"] == {"line": 5, "end_line": 8}
    assert "(required on line 5, which raises without it; first called on line 10" in finding.message


def test_nvml_availability_check_that_does_not_raise_is_not_a_requirement():
    code = "def f():\n    if not is_pynvml_available():\n        print('no nvml')\n    import pynvml\n    pynvml.nvmlInit()\n"
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT307"]
    assert "requirement" not in finding.data and finding.data["first_call"] == {"line": 5}


def test_setup_py_rule_reads_the_file_name_not_its_folder():
    code = "from torch.utils.cpp_extension import CUDAExtension\nflags = ['--use_fast_math']\n"
    ruleset = load_rules(select=["PT229"])
    assert [f.line for f in analyze_source(code, "pkg/setup.py", MI300X, ruleset)] == [2]
    assert analyze_source(code, "setup.py/ops.py", MI300X, ruleset) == []


def test_nvml_import_without_a_call_has_no_first_call():
    (finding,) = [f for f in analyze_source("import pynvml\n", "m.py", MI300X, RULES) if f.rule == "PT307"]
    assert "first_call" not in finding.data and "{" not in finding.message


def test_rocm_safe_code_is_not_flagged():
    code = (
        "import torch\nimport torch.distributed as dist\n"
        "dev = torch.device('cuda')\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\n"
        "dist.init_process_group(backend='nccl')\n"
        "if torch.cuda.is_available():\n    print(torch.cuda.get_device_name())\n"
        "y = x.to(f'cuda:{rank}')\n"
    )
    for target in (MI300X, MI350X):
        assert analyze_source(code, "m.py", target, load_rules()) == []


def test_variants_follow_target_facts():
    code = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True"
    (on_300,) = analyze_source(code, "m.py", MI300X, RULES)
    (on_350,) = analyze_source(code, "m.py", MI350X, RULES)
    assert (on_300.severity, on_350.severity) == ("info", "warning")
    assert on_300.facts["tf32"] == MI300X.tf32 and on_350.facts["tf32"] == MI350X.tf32
    assert MI350X.best_fp32_dot_precision in on_350.message


def test_null_variant_means_no_finding():
    code = (
        "import torch\nimport triton\n@triton.jit\ndef k(x):\n    pass\n"
        "w = (w * s).to(torch.float8_e4m3fn)\ndef quantize_fp8(x, dtype):\n    return (x / 448.0).to(dtype)"
    )
    assert rules_of(code, MI300X) == [("PT206", 6), ("PT207", 8)]
    assert rules_of(code, MI350X) == []
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT207"]
    assert str(MI300X.fp8_e4m3_max) in finding.message


def test_feature_flag_variant():
    code = "import torch\ny = torch._scaled_mm(a, b, sa.view(torch.float8_e8m0fnu), sb)"
    assert ("PT209", 2) in rules_of(code, MI300X)
    assert "PT209" not in {rule for rule, _ in rules_of(code, MI350X)}


def test_capability_outcome_is_computed_for_the_target():
    code = (
        "import torch\nmajor, minor = torch.cuda.get_device_capability()\nif major * 10 + minor >= 95:\n    use_tma()"
    )
    # false on gfx942 (9, 4): it stays where pre-Hopper NVIDIA parts go, fine; true on gfx950 (9, 5): Blackwell's branch
    assert analyze_source(code, "m.py", MI300X, RULES) == []
    (on_350,) = analyze_source(code, "m.py", MI350X, RULES)
    assert on_350.data["outcome"] == "true" and "b200" in on_350.data["meant_for"]
    # the tuple (9, 5) itself is gfx950's, which no NVIDIA part reports: a gate that tells AMD parts apart on purpose
    tuple_gate = "import torch\nif torch.cuda.get_device_capability() >= (9, 5):\n    pass"
    assert analyze_source(tuple_gate, "m.py", MI350X, RULES) == []


def test_positions_are_one_based_with_end_and_snippet():
    code = "import torch\nx = 1\ny = torch._scaled_mm(a, b,\n    sa, sb)\n"
    (finding,) = analyze_source(code, "m.py", MI300X, RULES)
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (3, 5, 4, 12)
    assert finding.snippet == "y = torch._scaled_mm(a, b,\n    sa, sb)"
    assert finding.fix == "advice" and finding.category == "pytorch" and finding.target == "mi300x"


@pytest.mark.parametrize(
    "comment,kept",
    [
        ("# noqa: PT208", False),
        ("# noqa", False),
        ("# porter: ignore[PT208]", False),
        ("# porter: ignore[PT101, scaled-mm-assumptions]", False),
        ("# noqa: E501", True),
        ("# porter: ignore[PT101]", True),
        ("", True),
    ],
)
def test_suppressions(comment, kept):
    code = f"import torch\ny = torch._scaled_mm(a, b, sa, sb)  {comment}\n"
    assert bool(analyze_source(code, "m.py", MI300X, RULES)) is kept


@pytest.mark.parametrize(
    "tail,kept",
    [
        ('; s = "# noqa"', True),
        ("; s = '# noqa: PT208'", True),
        ('; s = "# porter: ignore[PT208]"', True),
        ('; s = f"{a} # noqa"', True),
        ('; s = "# noqa"  # noqa: PT208', False),
        ("  # s = '#' # noqa", False),
    ],
)
def test_noqa_counts_only_in_comments(tail, kept):
    code = f"import torch\ny = torch._scaled_mm(a, b, sa, sb){tail}\n"
    assert bool(analyze_source(code, "m.py", MI300X, RULES)) is kept


def test_noqa_inside_a_multiline_string_or_docstring_suppresses_nothing():
    code = (
        '"""Usage:\n    # porter: ignore-file\n"""\nimport torch\n'
        'y = torch._scaled_mm(a, b, sa, sb); doc = """\n# noqa\n"""\n'
    )
    assert rules_of(code) == [("PT208", 5)]


def test_suppression_on_statement_line_covers_multiline_call():
    code = "import torch, triton\n@triton.jit\ndef k(x):\n    pass\ny = (x * s).to(  # noqa: PT206\n    torch.float8_e4m3fn,\n)\n"
    assert rules_of(code) == []
    assert rules_of(code.replace("  # noqa: PT206", "")) == [("PT206", 6)]


def test_file_level_suppression():
    code = "# porter: ignore-file[PT208]\nimport torch\ny = torch._scaled_mm(a, b)\nz = torch.nn.DataParallel(m)\n"
    assert rules_of(code) == [("PT219", 4)]


def test_parse_error_is_one_finding():
    findings = analyze_source("import torch\ndef broken(:\n    torch.cuda.x\n", "bad.py", MI300X, RULES)
    assert [(f.rule, f.name, f.severity, f.fix) for f in findings] == [("PT000", "parse-error", "error", None)]
    assert findings[0].line in (2, 3)  # libcst reports where it gave up


@pytest.mark.parametrize(
    "text", ["\x00torch", "torch\n\tif (", "'''torch", "torch" + "(" * 2000, "\ufeffimport torch\n"]
)
def test_never_raises(text):
    findings = analyze_source(text, "x.py", MI300X, load_rules())
    assert all(f.rule.startswith("PT") for f in findings)


def test_missing_placeholder_stays_visible():
    from porter.analyze.engine import format_message

    assert (
        format_message("{nope} on {target.name} {target.nonexistent}", MI300X, {})
        == "{nope} on mi300x {target.nonexistent}"
    )


def test_select_and_ignore():
    assert {r.category for r in load_rules(select=["PT2"]).rules} == {"pytorch"}
    ignored = load_rules(select=["PT2"], ignore=["PT204", "hip-device-string"])
    assert "PT204" not in ignored.ids and "PT220" not in ignored.ids and "PT202" in ignored.ids
    assert load_rules(select=["environment", "opt-in"], ignore=["PT1", "PT2", "PT3"]).ids == [
        f"PT40{i}" for i in range(1, 9)
    ]
    assert set(load_rules(select=["environment"]).ids) == {"PT401", "PT402", "PT407", "PT408"}  # PT403-PT406 opt-in
    with pytest.raises(ConfigError, match="PT999"):
        load_rules(select=["PT999"])


def test_fingerprint_and_prefilter():
    full = load_rules()
    assert full.fingerprint == load_rules().fingerprint != load_rules(select=["PT2"]).fingerprint
    assert "" not in full.prefilter_tokens
    assert not full.may_match("def add(a, b):\n    return a + b\n")
    assert full.may_match("import pynvml\n")  # PT307 (deep_gemm: PT311 is opt-in)


def _write_rule(tmp_path: Path, body: str, name: str = "PT299-x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


BASE = "id: PT299\nname: x\ncategory: pytorch\nsummary: s\nseverity: error\nmessage: m\n"


@pytest.mark.parametrize(
    "body,expected",
    [
        (BASE + "match:\n  - call: 5\n", r"PT299-x.yaml: match\[0\].call: expected string or list"),
        (BASE + "match:\n  - call: x\n    bogus: 1\n", r"match\[0\]: unknown field"),
        (BASE.replace("severity: error", "severity: fatal") + "match: [{call: x}]\n", r"severity: expected one of"),
        (BASE + "match: [{string: {regex: '('}}]\n", r"match\[0\].string.regex: bad regular expression"),
        (BASE + "match: [{visitor: no_such_visitor}]\n", r"match\[0\].visitor: no visitor named"),
        (BASE + "match: [{call: x}]\nvariants: [{when: {no_such_fact: 1}}]\n", r"variants\[0\].when.no_such_fact"),
        (BASE + "match: [{call: x}]\napplies_to: [mi999]\n", r"applies_to\[0\]: unknown"),
        ("id: PT299\n", r"PT299-x.yaml: .*is required"),
        (": : :\n", r"not valid YAML"),
    ],
)
def test_schema_errors_name_file_and_field(tmp_path, body, expected):
    with pytest.raises(ConfigError, match=expected):
        load_rules([_write_rule(tmp_path, body)])


def test_duplicate_ids_rejected(tmp_path):
    body = BASE + "match: [{call: x}]\n"
    (tmp_path / "a").mkdir()
    _write_rule(tmp_path / "a", body)
    (tmp_path / "b").mkdir()
    _write_rule(tmp_path / "b", body)
    with pytest.raises(ConfigError, match="duplicate rule"):
        load_rules([tmp_path])


def test_file_name_must_match_id(tmp_path):
    with pytest.raises(ConfigError, match="must be named PT299-x.yaml"):
        load_rules([_write_rule(tmp_path, BASE + "match: [{call: x}]\n", "PT298-y.yaml")])


def test_guarded_import_is_not_flagged():
    code = "try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\nimport flash_attn\n"
    assert rules_of(code) == [("PT301", 5)]


def test_nvml_finding_names_every_call_of_the_importing_function():
    # accelerate's set_numa_affinity before #4025: the handle and the affinity loop need NVML as much as nvmlInit
    code = (
        "def affinity(index):\n    import pynvml as nvml\n    nvml.nvmlInit()\n    n = 2\n"
        "    handle = nvml.nvmlDeviceGetHandleByIndex(index)\n"
        "    for j in nvml.nvmlDeviceGetCpuAffinity(handle, n):\n        print(j)\n"
    )
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT307"]
    assert finding.data["calls"] == [{"line": 3, "end_line": 3}, {"line": 5, "end_line": 5}, {"line": 6, "end_line": 7}]


def test_nvml_finding_names_the_code_that_works_on_what_the_calls_returned():
    # optimum-benchmark's peak-memory tracker before #57: the handle list, the loops and the sum move with the calls
    code = (
        "class Tracker:\n"
        "    def peak(self):\n"
        "        import py3nvml.py3nvml as nvml\n"
        "        handles = []\n"
        "        nvml.nvmlInit()\n"
        "        for i in self.device_ids:\n"
        "            handle = nvml.nvmlDeviceGetHandleByIndex(i)\n"
        "            handles.append(handle)\n"
        "        yield\n"
        "        for handle in handles:\n"
        "            info = nvml.nvmlDeviceGetMemoryInfo(handle)\n"
        "            self.peak_memory += info.used\n"
        "        print(self.unrelated)\n"
    )
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT307"]
    assert [u["line"] for u in finding.data["results_used"]] == [4, 6, 8, 10, 12]


def test_nvml_results_used_follow_a_value_and_the_bindings_a_call_reads():
    # accelerate's set_numa_affinity before #4025: the affinity bits become the CPU list handed to the OS
    code = (
        "def affinity(index):\n    import pynvml as nvml\n    nvml.nvmlInit()\n    n = 2\n"
        "    bits = ''\n"
        "    for j in nvml.nvmlDeviceGetCpuAffinity(nvml.nvmlDeviceGetHandleByIndex(index), n):\n"
        "        bits = f'{j:064b}{bits}'\n"
        "    cpus = [int(x) for x in bits]\n    cpus.reverse()\n    other = 3\n    os.sched_setaffinity(0, cpus)\n"
    )
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT307"]
    assert [u["line"] for u in finding.data["results_used"]] == [4, 5, 8, 9, 11]


def test_nvml_module_level_import_lists_no_calls():
    code = "import pynvml\n\ndef count():\n    return pynvml.nvmlDeviceGetCount()\n"
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, RULES) if f.rule == "PT307"]
    assert "calls" not in finding.data


def test_visitor_rule_honours_its_file_conditions():
    code = "from torch.utils.cpp_extension import CUDA_HOME\nif CUDA_HOME is not None:\n    v = probe(CUDA_HOME)\nprint(v)\n"
    ruleset = load_rules(select=["PT230"])
    (finding,) = analyze_source(code, "pkg/setup.py", MI300X, ruleset)
    assert (finding.line, finding.end_line, finding.data["uses"]) == (2, 3, [{"line": 4}])
    assert analyze_source(code, "pkg/build.py", MI300X, ruleset) == []
    assert (
        analyze_source(
            "import torch\n" + code.replace("print(v)", "print(v, torch.version.hip)"), "setup.py", MI300X, ruleset
        )
        == []
    )


def test_fnuz_for_every_hip_build_names_the_dtype_line():
    code = "import torch\nif torch.version.hip is not None:\n    dtype = torch.float8_e4m3fnuz\nelse:\n    dtype = torch.float8_e4m3fn\n"
    (finding,) = [f for f in analyze_source(code, "m.py", MI350X, load_rules(select=["PT228"])) if f.rule == "PT228"]
    assert finding.data["chosen"] == {"line": 3}


def test_e5m2_bound_for_every_other_dtype_names_the_whole_split():
    # float8-experimental's amax_to_scale before #235: the e4m3fn side goes too (torch.finfo(dtype).max for both)
    code = (
        "import torch\nE4M3_MAX = 448.0\nE5M2_MAX = 57344.0\n"
        "def amax_to_scale(amax, float8_dtype):\n"
        "    if float8_dtype == torch.float8_e4m3fn:\n"
        "        res = E4M3_MAX / amax\n"
        "    else:\n"
        "        res = E5M2_MAX / amax\n"
        "    return res\n"
    )
    (finding,) = [f for f in analyze_source(code, "m.py", MI300X, load_rules(select=["PT224"])) if f.rule == "PT224"]
    assert finding.line == 8 and finding.data["split"] == {"line": 5, "end_line": 8}


def test_capability_gate_names_its_chain_and_the_branch_the_target_takes():
    # lmdeploy's flash-attention tile chain before #3925: major 9 (gfx942 / gfx950) takes the sm9x table
    code = (
        "import torch\n\ndef meta(d):\n    cap = torch.cuda.get_device_capability()\n"
        "    if cap[0] < 8:\n        BLOCK_M, num_warps, num_stages = 64, 4, 1\n"
        "    elif cap[0] < 9:\n        BLOCK_M, num_warps, num_stages = 64, 4, 2\n"
        "    elif cap[0] < 10:\n        BLOCK_M, num_warps, num_stages = 128, 8, 3\n"
        "    else:\n        BLOCK_M, num_warps, num_stages = 128, 8, 2\n    return BLOCK_M, num_warps, num_stages\n"
    )
    findings = [f for f in analyze_source(code, "m.py", MI300X, load_rules(select=["PT202"])) if f.rule == "PT202"]
    taken = next(f for f in findings if f.line == 9)
    assert taken.data["chain"] == {"line": 5} and taken.data["taken"] == {"line": 10, "end_line": 10}
