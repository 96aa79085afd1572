"""Codemods for the verifier's runtime findings (porter.remedy.codemods.runtime) and their routing."""

from __future__ import annotations

from pathlib import Path

from porter.records import Finding
from porter.remedy.codemods import CodemodContext, get_codemod
from porter.remedy.codemods.autotune import _footprint, _Cfg
from porter.remedy.planner import PlanOptions, plan_patches
from porter.targets import get_target

TARGET = get_target("mi350x")
CTX = CodemodContext(path="pkg/ops.py", shim_import="from pkg import _porter_shim as porter_shim")

SETTINGS = """\
import triton


def calculate_settings(n):
    block = triton.next_power_of_2(n)
    num_warps = 4
    if block >= 32768:
        num_warps = 32
    return block, num_warps
"""

OPS = """\
import triton
import triton.language as tl

from pkg.settings import calculate_settings

CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=3),
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tl.store(c, tl.dot(tl.load(a), tl.load(b)))


def softmax(kernel, x, out):
    block, num_warps = calculate_settings(x.shape[1])
    kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK_SIZE=block,
                          num_warps=num_warps)


def softmax_with_options(kernel, x, out):
    block, num_warps = calculate_settings(x.shape[1])
    options = {"num_warps": num_warps}
    kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK_SIZE=block, **options)
"""


def runtime(rule: str, path: str, line: int, end_line: int | None = None, **data) -> Finding:
    return Finding(rule=rule, name=rule.lower(), severity="error", path=path, line=line, column=1,
                   end_line=end_line or line, end_column=1, message="seen on the target", fix="codemod",
                   provenance="runtime", data=data)


def threads(line: int, end_line: int | None = None, **extra) -> Finding:
    return runtime("RT101", "pkg/ops.py", line, end_line, kernel="_softmax_kernel", launch=f"pkg/ops.py:{line}",
                   value=2048, limit=1024, **extra)


def lds(value: int, config: dict) -> Finding:
    return runtime("RT107", "pkg/ops.py", 13, kernel="pkg.ops:matmul_kernel", launch="pkg/ops.py:13", value=value,
                   limit=TARGET.lds_bytes, config=config)


def test_threads_over_the_limit_are_capped_at_the_launch():
    result = get_codemod("RT101")(OPS, [threads(20, 21)], TARGET, CTX)
    assert "num_warps=porter_shim.cap_num_warps(num_warps))" in result.text
    assert "from pkg import _porter_shim as porter_shim" in result.text and result.uses_shim
    assert "2048 > 1024 at pkg/ops.py:20" in result.rationale
    assert result.text.count("cap_num_warps") == 1  # the other launch is not touched


def test_a_launch_without_a_num_warps_keyword_is_capped_at_the_origin(tmp_path):
    root = write_repo(tmp_path)
    origin = {"path": "pkg/settings.py", "line": 8}
    plan = plan_patches(root, [threads(27, origin=origin)], TARGET)
    patched = {p.paths[0]: p.edits[0].after for p in plan.patches if p.rules}
    assert list(patched) == ["pkg/settings.py"]
    assert "num_warps = porter_shim.cap_num_warps(32)" in patched["pkg/settings.py"]
    assert "num_warps = 4\n" in patched["pkg/settings.py"]  # within the limit: unchanged
    assert not plan.needs_review


def test_a_runtime_finding_nothing_fixes_is_reviewed_with_its_evidence(tmp_path):
    root = write_repo(tmp_path)
    plan = plan_patches(root, [threads(27)], TARGET)
    assert plan.patches == []
    [item] = plan.needs_review
    assert item.kind == "runtime" and "seen on the target" in item.reason


def test_runtime_findings_with_a_model_go_to_the_agent(tmp_path):
    root = write_repo(tmp_path)
    asked = []
    plan = plan_patches(root, [threads(27)], TARGET, PlanOptions(agent=lambda fs, text, t: asked.extend(fs)))
    assert [f.rule for f in asked] == ["RT101"] and plan.needs_review[0].kind == "agent"


def test_kind_routes_an_unknown_runtime_rule_to_its_codemod(tmp_path):
    root = write_repo(tmp_path)
    finding = runtime("RTX9", "pkg/ops.py", 20, 21, kind="threads", kernel="_softmax_kernel", value=2048)
    plan = plan_patches(root, [finding], TARGET)
    assert [p.rules for p in plan.patches if p.rules] == [["RTX9"]]


def test_lds_over_budget_refits_a_new_amd_list_with_the_measured_size():
    config = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2}
    estimate = _footprint(_Cfg({k: v for k, v in config.items() if k.startswith("BLOCK")}, 4, 2), 2)
    measured = 200_000  # the compiled kernel's figure: four times porter's estimate
    result = get_codemod("RT107")(OPS, [lds(measured, config)], TARGET, CTX)
    assert result is not None and result.safety == "unsafe"
    assert "configs=MATMUL_KERNEL_AMD_CONFIGS if porter_shim.IS_HIP else CONFIGS" in result.text
    assert 'triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=4)' in result.text
    fitted = amd_configs(result.text)
    scale = measured / estimate
    for meta, stages in fitted:
        size = stages * (meta["BLOCK_M"] * meta["BLOCK_K"] + meta["BLOCK_K"] * meta["BLOCK_N"]) * 2 * scale
        assert size <= TARGET.lds_bytes, (meta, stages)
    tiles = [({k: m[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}, s) for m, s in fitted]
    # the measured config: BLOCK_K halved first, the target's 2 pipeline stages kept
    assert (dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=32), 2) in tiles


def test_lds_refits_the_amd_list_porter_wrote_before():
    config = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2}
    first = get_codemod("RT107")(OPS, [lds(120_000, config)], TARGET, CTX).text
    assert get_codemod("RT107")(first, [lds(120_000, config)], TARGET, CTX) is None  # already fits
    second = get_codemod("RT107")(first, [lds(400_000, config)], TARGET, CTX)
    assert second is not None and second.text.count("MATMUL_KERNEL_AMD_CONFIGS = [") == 1
    assert second.text.count("# porter: autotune configs") == 1
    before, after = amd_configs(first), amd_configs(second.text)
    assert sum(s * m["BLOCK_K"] for m, s in after) < sum(s * m["BLOCK_K"] for m, s in before)


def test_lds_of_a_kernel_without_an_autotune_list_declines():
    finding = runtime("RT107", "pkg/ops.py", 20, kernel="_softmax_kernel", value=300_000,
                      config={"BLOCK_SIZE": 65536, "num_warps": 16, "num_stages": 1})
    assert get_codemod("RT107")(OPS, [finding], TARGET, CTX) is None


def write_repo(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "settings.py").write_text(SETTINGS)
    (root / "pkg" / "ops.py").write_text(OPS)
    return root


def amd_configs(text: str) -> list[tuple[dict, int]]:
    import ast

    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MATMUL_KERNEL_AMD_CONFIGS":
            out = []
            for call in node.value.elts:
                meta = ast.literal_eval(call.args[0])
                stages = next(k.value.value for k in call.keywords if k.arg == "num_stages")
                out.append((meta, stages))
            return out
    raise AssertionError("no AMD list")
