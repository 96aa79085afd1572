"""Config pruners that read the warp size at run time drop, per target, what the target cannot launch (issue 14)."""

from __future__ import annotations

import pytest

from porter.analyze import analyze_source, load_rules
from porter.analyze.project import Project
from porter.analyze.project_facts import module_facts
from porter.targets import get_target

RULES = load_rules()
MI300X = get_target("mi300x")

_KERNEL = """
@triton.autotune(configs={configs}, key=["N"])
@triton.jit
def _norm(X, N, BLOCK: tl.constexpr):
    tl.store(X + tl.arange(0, BLOCK), tl.load(X + tl.arange(0, BLOCK)))
"""

# A pruner over a config list argument with a warp size set by branches on the device (mamba's port).
BRANCHED_PRUNER = """
import torch
import triton
import triton.language as tl


def config_prune(configs):
    if torch.version.hip:
        arch = torch.cuda.get_device_properties(0).gcnArchName
        warp_size = 32 if "gfx11" in arch else 64
    else:
        warp_size = 32
    max_num_warps = 1024 // warp_size
    return [config for config in configs if config.num_warps <= max_num_warps]


configs_all = [triton.Config({}, num_warps=w) for w in [1, 2, 4, 8, 16, 32]]
pruned = config_prune(configs_all)
""" + _KERNEL.format(configs="pruned")

# A comprehension filter on the warp size Triton reports for the active device.
FILTERED_COMPREHENSION = """
import triton
import triton.language as tl

warp_size = triton.runtime.driver.active.get_current_target().warp_size
max_threads = 1024
configs = [triton.Config({}, num_warps=w) for w in [1, 2, 4, 8, 16, 32] if w * warp_size <= max_threads]
""" + _KERNEL.format(configs="configs")

# A pruner whose bound on num_warps depends on the device's warp size but does not fold: the limit is unknown.
UNFOLDABLE_PRUNER = """
import torch
import triton
import triton.language as tl


def prune(configs):
    limit = torch.cuda.get_device_properties(0).max_threads_per_block
    warp_size = torch.cuda.get_device_properties(0).warp_size
    return [c for c in configs if c.num_warps <= limit // warp_size]


configs = prune([triton.Config({}, num_warps=w) for w in [1, 2, 4, 8, 16, 32]])
""" + _KERNEL.format(configs="configs")

# A pruner on a bound that has nothing to do with the warp size: it keeps num_warps=32, which cannot launch.
WARP_FREE_PRUNER = """
import triton
import triton.language as tl


def prune(configs):
    return [c for c in configs if c.num_warps <= 32]


configs = prune([triton.Config({}, num_warps=w) for w in [1, 2, 4, 8, 16, 32]])
""" + _KERNEL.format(configs="configs")

# A filter on a warp size the code fixes at 32 (an NVIDIA assumption): folded as written, it keeps num_warps=32.
CONSTANT_WARP_FILTER = """
import triton
import triton.language as tl

WARP_SIZE = 32
configs = [triton.Config({}, num_warps=w) for w in [1, 2, 4, 8, 16, 32] if w * WARP_SIZE <= 1024]
""" + _KERNEL.format(configs="configs")


def _pt101(code: str, target=MI300X) -> list[int]:
    return [f.line for f in analyze_source(code, "m.py", target, RULES) if f.rule == "PT101"]


@pytest.mark.parametrize("code", [BRANCHED_PRUNER, FILTERED_COMPREHENSION, UNFOLDABLE_PRUNER])
def test_a_pruner_on_the_runtime_warp_size_drops_what_the_target_cannot_launch(code):
    assert _pt101(code) == []
    assert _pt101(code, get_target("mi350x")) == []


@pytest.mark.parametrize("code", [WARP_FREE_PRUNER, CONSTANT_WARP_FILTER])
def test_a_pruner_that_does_not_read_the_runtime_warp_size_keeps_the_finding(code):
    assert len(_pt101(code)) == 1


def test_the_same_list_without_its_pruner_is_a_finding():
    unpruned = BRANCHED_PRUNER.replace("configs=pruned", "configs=configs_all")
    assert len(_pt101(unpruned)) == 1


# The port's warp size when gcnArchName is missing: a test on the device name. An Instinct GPU takes the 64.
DEVICE_NAME_FALLBACK = """
import torch
import triton


def lanes():
    device_name = torch.cuda.get_device_properties(0).name
    if "instinct" in device_name.lower():
        warp_size = 64
    else:
        warp_size = 32
    return warp_size
"""


def _reach(code: str, marker: str, target: str) -> str:
    facts = {"m.py": module_facts(code, "m.py")}
    built = Project(facts, get_target(target))
    number, line = next((n, text) for n, text in enumerate(code.splitlines(), start=1) if marker in text)
    return built.reach("m.py", number, line.index(marker) + 1).reach


def test_the_radeon_branch_of_an_instinct_name_test_does_not_run_on_an_instinct():
    assert _reach(DEVICE_NAME_FALLBACK, "warp_size = 32", "mi300x") == "nvidia_only"
    assert _reach(DEVICE_NAME_FALLBACK, "warp_size = 64", "mi300x") == "target"
    assert _reach(DEVICE_NAME_FALLBACK, "warp_size = 32", "h100") == "target"
