"""Codemods for the verifier's runtime findings (porter.remedy.codemods.runtime) and their routing.

The findings are built as porter.verify.runtime (dev-emul) writes them: rules PT906/PT907, located at the
launch call, with data["launch"], data["kernel"] (its config), data["value"] and data["origin"]."""

from __future__ import annotations

from pathlib import Path

from porter.records import Finding
from porter.remedy.codemods import CodemodContext, get_codemod
from porter.remedy.codemods.autotune import _Cfg, _footprint
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
    return Finding(
        rule=rule,
        name=rule.lower(),
        severity="error",
        path=path,
        line=line,
        column=1,
        end_line=end_line or line,
        end_column=1,
        message="seen on the target",
        fix="codemod",
        provenance="runtime",
        data=data,
    )


def threads(line: int, end_line: int | None = None, origin=None) -> Finding:
    return runtime(
        "PT906",
        "pkg/ops.py",
        line,
        end_line,
        origin=origin,
        launch={"path": "pkg/ops.py", "line": line, "tests": ["tests/test_ops.py::test_softmax"]},
        kernel={
            "name": "_softmax_kernel",
            "path": "pkg/kernels.py",
            "line": 3,
            "end_line": 9,
            "config": {"BLOCK_SIZE": 65536, "num_warps": 32, "num_stages": 3},
        },
        value={"name": "num_warps", "value": 32, "limit": 16},
    )


def lds(value: int, config: dict, path: str = "pkg/ops.py", line: int = 13) -> Finding:
    return runtime(
        "PT907",
        path,
        line,
        launch={"path": path, "line": line, "tests": []},
        kernel={"name": "matmul_kernel", "path": "pkg/ops.py", "line": 12, "end_line": 15, "config": config},
        value={"name": "lds_bytes", "value": value, "limit": TARGET.lds_bytes},
    )


def test_threads_over_the_limit_are_capped_at_the_launch():
    result = get_codemod("PT906")(OPS, [threads(20, 21)], TARGET, CTX)
    assert "num_warps=porter_shim.cap_num_warps(num_warps))" in result.text
    assert "from pkg import _porter_shim as porter_shim" in result.text and result.uses_shim
    assert "_softmax_kernel: 32 > 16 at pkg/ops.py:20" in result.rationale
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
    plan = plan_patches(
        root, [threads(27)], TARGET, PlanOptions(agent=lambda fs, text, t: asked.extend(fs) or "no answer")
    )
    assert [f.rule for f in asked] == ["PT906"] and plan.needs_review[0].kind == "agent"


def test_a_confirmed_static_finding_is_fixed_at_the_launch_its_evidence_names(tmp_path):
    """flow reports PT101 at the helper; the target's PT906 at the launch confirmed it (merge_findings):
    the launch is tried first, so a test of the helper's own values keeps passing."""
    root = write_repo(tmp_path)
    evidence = threads(20, 21)
    static = Finding(
        rule="PT101",
        name="num-warps-over-wave64-limit",
        severity="error",
        path="pkg/settings.py",
        line=8,
        column=9,
        end_line=8,
        end_column=23,
        message="num_warps 32 > 16",
        fix="codemod",
        provenance="runtime",
        data={
            "value": 32,
            "runtime": [
                {
                    "rule": "PT906",
                    "message": evidence.message,
                    "launch": evidence.data["launch"],
                    "kernel": evidence.data["kernel"],
                    "value": evidence.data["value"],
                }
            ],
        },
    )
    plan = plan_patches(root, [static], TARGET)
    [patch] = [p for p in plan.patches if p.rules]
    assert patch.paths == ["pkg/ops.py"] and patch.rules == ["PT101"]
    assert "num_warps=porter_shim.cap_num_warps(num_warps))" in patch.edits[0].after


def test_lds_over_budget_refits_a_new_amd_list_with_the_measured_size():
    config = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2}
    estimate = _footprint(_Cfg({k: v for k, v in config.items() if k.startswith("BLOCK")}, 4, 2), 2)
    measured = 200_000  # the compiled kernel's figure: four times porter's estimate
    result = get_codemod("PT907")(OPS, [lds(measured, config)], TARGET, CTX)
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
    first = get_codemod("PT907")(OPS, [lds(120_000, config)], TARGET, CTX).text
    assert get_codemod("PT907")(first, [lds(120_000, config)], TARGET, CTX) is None  # already fits
    second = get_codemod("PT907")(first, [lds(400_000, config)], TARGET, CTX)
    assert second is not None and second.text.count("MATMUL_KERNEL_AMD_CONFIGS = [") == 1
    assert second.text.count("# porter: autotune configs") == 1
    before, after = amd_configs(first), amd_configs(second.text)
    assert sum(s * m["BLOCK_K"] for m, s in after) < sum(s * m["BLOCK_K"] for m, s in before)


def test_lds_of_a_kernel_without_an_autotune_list_declines():
    finding = runtime(
        "PT907",
        "pkg/ops.py",
        20,
        kernel={"name": "_softmax_kernel", "config": {"BLOCK_SIZE": 65536, "num_warps": 16, "num_stages": 1}},
        value={"value": 300_000, "limit": TARGET.lds_bytes},
    )
    assert get_codemod("PT907")(OPS, [finding], TARGET, CTX) is None


def test_lds_launched_from_another_module_is_fixed_in_the_kernel_file(tmp_path):
    root = write_repo(tmp_path)
    (root / "pkg" / "api.py").write_text(
        "from pkg.ops import matmul_kernel\n\n\ndef mm(a, b, c):\n    matmul_kernel[(1,)](a, b, c)\n"
    )
    config = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2}
    plan = plan_patches(root, [lds(200_000, config, path="pkg/api.py", line=5)], TARGET)
    [patch] = [p for p in plan.patches if p.rules]
    assert patch.paths == ["pkg/ops.py"] and "MATMUL_KERNEL_AMD_CONFIGS" in patch.edits[0].after


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
