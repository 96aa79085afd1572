"""PT101..PT119 through the engine: folded data for the remedy stage, target-aware results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from porter.analyze import analyze_source, load_rules
from tests.analyze.test_triton_inventory import GEMM_MODULE

H = "import triton\nimport triton.language as tl\n"


@pytest.fixture(scope="module")
def triton_rules():
    # the opt-in ones too, each is tested here; PT115 is named since it is opt-in on FNUZ targets
    return load_rules(select=["PT1", "PT115", *OPT_IN_TRITON])


# measured noisy on real code; PT103/PT106 (NVIDIA-tuned stages and lists): 0 and 1 true of ~180 findings;
# PT102/PT116 (warp-size arithmetic, SM counts): no true finding over all spent splits (measured_prec25.txt);
# PT108 (shared_memory_per_block_optin, smem literals): none in any labelled split either (session 33)
OPT_IN_TRITON = ["PT102", "PT103", "PT104", "PT106", "PT108", "PT111", "PT116", "PT117", "PT119", "PT120"]


def scan(ruleset, text: str, target: str, rule: str | None = None):
    findings = analyze_source(text, "k.py", target, ruleset)
    assert not [f for f in findings if f.rule in ("PT000", "PT001")], findings
    return [f for f in findings if rule is None or f.rule == rule]


def test_all_twenty_three_rules_load(triton_rules):
    ids = sorted(r.id if hasattr(r, "id") else r["id"] for r in triton_rules.rules)
    assert ids == [f"PT1{n:02d}" for n in range(1, 24)]


def test_noisy_triton_rules_are_opt_in():
    default = {r.id for r in load_rules(select=["PT1"]).rules}
    assert default.isdisjoint(OPT_IN_TRITON) and len(default) == 23 - len(OPT_IN_TRITON)
    assert {r.id for r in load_rules(select=["PT111"]).rules} == {"PT111"}  # by id it still runs


def test_num_warps_from_comprehension_points_at_the_literal(triton_rules):
    text = (
        H + "CONFIGS = [triton.Config({'BLOCK': 64}, num_warps=w, num_stages=s)\n"
        "           for w in [4, 8, 32] for s in [1, 2]]\n"
    )
    (finding,) = scan(triton_rules, text, "mi300x", "PT101")
    assert (finding.line, finding.column) == (4, 28)  # the `32` in the list, 1-based column
    assert finding.data["value"] == 32 and finding.data["threads"] == 2048
    assert finding.data["config_indices"] == [4, 5] and finding.data["where"] == "config"
    assert finding.data["suggested"] == 16 and finding.fix == "codemod"
    json.dumps(finding.data)


def test_num_warps_from_heuristics_and_computed_launch(triton_rules):
    findings = scan(triton_rules, GEMM_MODULE, "mi300x", "PT101")
    wheres = sorted(f.data["where"] for f in findings)
    assert wheres == ["heuristics", "launch"]
    assert all(f.data["value"] == 32 for f in findings)
    assert scan(triton_rules, GEMM_MODULE, "h100", "PT101") == []


def test_vendor_guarded_nvidia_configs_are_not_findings_on_amd(triton_rules):
    """The tutorial-style module keeps its deep NVIDIA configs behind is_cuda(): nothing to port."""
    rules = {f.rule for f in scan(triton_rules, GEMM_MODULE, "mi300x")}
    assert not rules & {"PT103", "PT104", "PT106", "PT107"}


def test_same_config_error_on_mi300x_fine_on_mi350x(triton_rules):
    text = (
        H + "@triton.autotune(configs=[triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, "
        "num_warps=8, num_stages=S)], key=['M'])\n@triton.jit\ndef mm(a, b):\n    c = tl.dot(a.to(tl.float16), b.to(tl.float16))\n"
    )
    four, three = text.replace("S)", "4)"), text.replace("S)", "3)")
    (error,) = scan(triton_rules, four, "mi300x", "PT107")
    assert error.severity == "error"
    assert "131072 B" in error.message and "65536 B" in error.message and "estimate" in error.message
    assert error.data["lds_bytes"] == 131072 and error.data["limit"] == 65536
    # 3 stages: the full estimate (96 KiB) is over, but gfx942's pipeliner allocates (stages - 1)
    # buffers, 64 KiB (Triton 3.9's compile record), which porter.tune's LDS says too: one voice
    assert scan(triton_rules, three, "mi300x", "PT107") == []
    assert scan(triton_rules, three, "mi350x", "PT107") == []
    assert scan(triton_rules, four, "mi350x", "PT107") == []


def test_nvidia_tuned_list_is_error_when_every_config_fails(triton_rules):
    text = (
        H + "@triton.autotune(configs=[triton.Config({'BLOCK_M': 256, 'BLOCK_N': 128, 'BLOCK_K': 64}, "
        "num_warps=8, num_stages=4)], key=['M'])\n@triton.jit\ndef mm(a, b):\n    c = tl.dot(a.to(tl.float16), b.to(tl.float16))\n"
    )
    (finding,) = scan(triton_rules, text, "mi300x", "PT106")
    assert finding.severity == "error" and finding.data["over_lds"] == 1
    (mi350,) = scan(triton_rules, text, "mi350x", "PT106")
    assert mi350.severity == "error" and mi350.data["over_lds"] == 1  # 192 KiB > 160 KiB
    smaller = text.replace("'BLOCK_M': 256", "'BLOCK_M': 128")  # 128 KiB: fits gfx950, 4 stages
    assert scan(triton_rules, smaller, "mi350x", "PT106") == []  # porter tune ranks it within 3%: not NVIDIA-tuned
    slow = text.replace("'BLOCK_M': 256, 'BLOCK_N': 128, 'BLOCK_K': 64", "'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32")
    (deep,) = scan(triton_rules, slow.replace("num_stages=4", "num_stages=5"), "mi350x", "PT106")
    assert deep.severity == "warning" and deep.data == {**deep.data, "deep_stages": 1, "over_lds": 0}


def test_inline_ptx_records_the_instruction(triton_rules):
    text = (
        H + "@triton.jit\ndef k(x):\n"
        "    a = tl.inline_asm_elementwise('rsqrt.approx.ftz.f32 $0, $1;', '=f,f', [x], dtype=tl.float32, is_pure=True, pack=1)\n"
        "    b = tl.inline_asm_elementwise('prmt.b32 $0, $1, 0, 0x0123;', '=r,r', [x], dtype=tl.int32, is_pure=True, pack=1)\n"
    )
    first, second = scan(triton_rules, text, "mi300x", "PT109")
    assert first.data["ptx_op"] == "rsqrt.approx.ftz.f32" and first.data["portable"] == "tl.rsqrt"
    assert first.data["constraints"] == "=f,f" and first.data["fix_hint"] == "codemod"
    assert second.data["ptx_op"] is None and second.data["fix_hint"] == "agent"
    assert "prmt.b32" in second.message


def test_tf32_precision_follows_target_facts(triton_rules):
    text = H + "PREC = 'tf32'\n@triton.jit\ndef k(a, b):\n    c = tl.dot(a, b, input_precision=PREC)\n"
    (finding,) = scan(triton_rules, text, "mi350x", "PT114")
    assert finding.line == 3  # the literal behind the constant
    assert finding.data["precision"] == "tf32" and finding.data["suggested"] == "bf16x3"
    assert scan(triton_rules, text, "mi300x", "PT114") == []
    default = H + "@triton.jit\ndef k(a, b):\n    x = a.to(tl.float32)\n    c = tl.dot(x, b.to(tl.float32))\n"
    assert scan(triton_rules, default, "mi350x", "PT114") == []  # ieee is the result fp32 operands ask for
    assert scan(triton_rules, default, "mi300x", "PT114") == []


def test_fp8_family_per_target(triton_rules):
    # OCP on gfx942 counts as a dot operand only: the stored conversion `q` is right there (bench/real_code)
    text = (
        H + "@triton.jit\ndef k(x, b):\n    q = x.to(tl.float8e4nv)\n    r = x.to(tl.float8e5b16)\n"
        "    acc = tl.dot(x.to(tl.float8e4nv), b)\n"
    )
    on_942 = scan(triton_rules, text, "mi300x", "PT115")
    assert [(f.line, f.data["dtype"], f.data["suggested"], f.severity) for f in on_942] == [
        (7, "float8e4nv", "tl.float8e4b8", "error")
    ]
    on_950 = scan(triton_rules, text, "mi350x", "PT115")
    assert [(f.data["dtype"], f.data["suggested"], f.severity) for f in on_950] == [
        ("float8e5b16", "tl.float8e5", "warning")
    ]


def test_nvidia_only_options_point_at_the_keyword(triton_rules):
    text = H + "@triton.jit\ndef k(x): pass\ndef f(x):\n    k[(1,)](x, num_warps=4, maxnreg=128, num_ctas=2)\n"
    findings = scan(triton_rules, text, "mi300x", "PT105")
    assert [(f.data["option"], f.data["value"], f.column) for f in findings] == [
        ("maxnreg", 128, 29),
        ("num_ctas", 2, 42),
    ]


def test_an_unused_libdevice_import_is_reported_only_where_it_is_re_exported(triton_rules):
    # seen on fp8-coat 1.0.11: gelu_fwd.py imports extra.cuda's libdevice, never calls it, and its `__all__` lists only
    # fp8_gelu_forward, so no star import takes the name either: nothing compiles an __nv_ function
    text = "from triton.language.extra.cuda import libdevice\nimport triton\n__all__ = ['fp8_gelu_forward']\n"
    assert not scan(triton_rules, text, "mi300x", "PT110")
    assert scan(triton_rules, text.replace("'fp8_gelu_forward'", "'libdevice'"), "mi300x", "PT110")
    # a used import carries its uses, from which the project analysis decides its reach
    used = text + "@triton.jit\ndef k(x):\n    return libdevice.signbit(x)\n"
    assert [f.data["reached_through"] for f in scan(triton_rules, used, "mi300x", "PT110")] == [[[6, 12]]]


def test_libdevice_alias_use_is_reported_once_at_the_import(triton_rules):
    text = (
        "from triton.language.extra.cuda import libdevice\nimport triton\n"
        "@triton.jit\ndef k(x):\n    y = libdevice.rsqrt(x)\n    z = libdevice.exp(y)\n"
    )
    findings = scan(triton_rules, text, "mi300x", "PT110")
    assert [(f.line, f.data["member"], f.data["portable"]) for f in findings] == [(1, "libdevice", True)]
    text = (
        "from triton.language.extra import cuda\nimport triton\n"
        "@triton.jit\ndef k(x):\n    y = cuda.libdevice.rsqrt(x)\n    t = cuda.globaltimer()\n"
    )
    findings = scan(triton_rules, text, "mi300x", "PT110")
    assert [(f.line, f.data["member"], f.data["portable"]) for f in findings] == [
        (1, "cuda", False),
        (6, "globaltimer", False),
    ]


def test_sm_count_and_warp_size_are_amd_only(triton_rules):
    text = "import triton\nNUM_SMS = 132\nWARP_SIZE = 32\n"
    assert {f.rule for f in scan(triton_rules, text, "mi355x")} == {"PT116", "PT102"}
    assert scan(triton_rules, text, "b200") == []


def test_strides_rule_needs_the_target_fact(triton_rules):
    text = "import torch\na = torch.empty(8192, 4096, dtype=torch.bfloat16)\nc = torch.mm(a, a)\n"
    (finding,) = scan(triton_rules, text, "mi300x", "PT119")
    assert finding.data == {**finding.data, "row_bytes": 8192, "hotspot": 512, "suggested_ld": 4224}
    assert scan(triton_rules, text, "mi350x", "PT119") == []  # no documented hot-spot size for gfx950


RULE_FILES = sorted((Path(__file__).resolve().parents[2] / "rules" / "triton").glob("PT1*.yaml"))
FIX_KINDS = {"codemod", "shim", "agent", "advice"}


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_files_document_and_cross_target_examples(path):
    rule = yaml.safe_load(path.read_text())
    assert path.stem == f"{rule['id']}-{rule['name']}" and rule["category"] == "triton"
    assert rule["idiom"] == f"T{int(rule['id'][3:]):02d}"
    assert rule["fix"]["kind"] in FIX_KINDS
    assert all(rule["docs"].get(key) for key in ("what", "why", "example", "use_instead", "references"))
    tests = rule["tests"]
    default = tests.get("target", "mi300x")
    valid = [e if isinstance(e, dict) else {"code": e} for e in tests["valid"]]
    invalid = tests["invalid"]
    assert valid and invalid
    # the same code is invalid on one target and valid on another
    flagged = {(e["code"], e.get("target", default)) for e in invalid}
    assert any(code == e["code"] and e.get("target", default) != target for e in valid for code, target in flagged), (
        "no cross-target example pair"
    )


def test_thirty_two_hard_coded_in_prose_and_unrelated_math_is_not_reported(triton_rules):
    """Conservative rules: plain numbers without warp/SM/smem names stay silent."""
    text = (
        H + "BATCH = 32\nN = 132\nsize = 232448\nx = rows // 32\n@triton.jit\ndef k(x, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, 32)\n    y = tl.load(x + offs)\n"
    )
    assert scan(triton_rules, text, "mi300x") == []


def test_values_behind_vendor_tests_count_only_for_their_vendor(triton_rules):
    text = (
        H + "@triton.jit\ndef k(a, b, BK: tl.constexpr):\n    c = tl.dot(a, b)\n"
        "def f(x, big):\n"
        "    if is_hip():\n        nw = 16\n    else:\n        nw = 8 if big else 32\n"
        "    k[(1,)](x, x, num_warps=nw, num_stages=4 if torch.version.cuda else 2)\n"
        "    k[(1,)](x, x, num_warps=32 if not is_hip() else 16)\n"
    )
    assert [f.rule for f in scan(triton_rules, text, "mi300x") if f.rule in ("PT101", "PT103")] == []
    nvidia_only = text.replace("if is_hip():\n        nw = 16\n    else:\n        nw = 8 if big else 32", "nw = 32")
    assert [f.line for f in scan(triton_rules, nvidia_only, "mi300x", "PT101")] == [7]


def test_probed_or_other_device_code_is_not_reported(triton_rules):
    text = (
        "import torch\np = torch.cuda.get_device_properties(0)\n"
        "if hasattr(p, 'shared_memory_per_block_optin'):\n    smem = p.shared_memory_per_block_optin\n"
        "try:\n    smem = p.shared_memory_per_block_optin\nexcept AttributeError:\n    smem = p.shared_memory_per_block\n"
        "if device_type == 'mtia':\n    multi_processor_count = 64\nelse:\n    NUM_SMS = 132\n"
    )
    assert [(f.rule, f.line) for f in scan(triton_rules, text, "mi300x")] == [("PT116", 12)]


def test_warp_size_parameter_default_is_a_warning(triton_rules):
    text = "import triton\ndef launch(x, warp_size: int = 32):\n    return x\n"
    (finding,) = scan(triton_rules, text, "mi300x", "PT102")
    assert finding.severity == "warning" and finding.data["form"] == "default"
