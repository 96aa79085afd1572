"""Probe objects (a dataclass built from platform values) and launch keywords gathered in mappings, as the value flow
follows them to a kernel's constexpr flag (eagle-harness's `arch.pdl()` over its `Gpu` probe, issue 14)."""

from __future__ import annotations

from tests.analyze.test_project_reach import reach

# eagle-harness's kernels/arch.py, cut down: `_probe` builds a Gpu whose vendor is "amd" and sm 0 on ROCm; pdl()
# asks `g.nvidia` (a property of the record) through gpu(), which may also return None
ARCH = """
import functools
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    vendor: str  # "nvidia" | "amd"
    arch: str
    sm: int

    @property
    def nvidia(self) -> bool:
        return self.vendor == "nvidia"


def _index(device):
    if isinstance(device, int):
        return device
    return torch.cuda.current_device()


@functools.lru_cache(maxsize=None)
def _probe(index: int) -> Gpu:
    props = torch.cuda.get_device_properties(index)
    if torch.version.hip:
        return Gpu(index, props.name, "amd", props.gcnArchName.split(":")[0], 0)
    return Gpu(index, props.name, "nvidia", f"sm_{props.major}{props.minor}", props.major * 10 + props.minor)


def gpu(device=None) -> Optional[Gpu]:
    if not torch.cuda.is_available():
        return None
    index = _index(device)
    return _probe(index) if index is not None else None


def pdl(device=None) -> bool:
    \"\"\"Programmatic dependent launch, sm_90+ on NVIDIA.\"\"\"
    g = gpu(device)
    return g is not None and g.nvidia and g.sm >= 90
"""

KERNEL = """
import triton
import triton.language as tl

from pkg import arch


@triton.jit
def _walk(x_ptr, USE_GDC: tl.constexpr = False):
    if USE_GDC:
        tl.extra.cuda.gdc_wait()
    tl.store(x_ptr, tl.load(x_ptr))
"""


def test_a_flag_read_from_a_probe_objects_property_is_false_on_amd():
    ops = (
        KERNEL
        + """
def walk(x):
    _walk[(1,)](x, USE_GDC=arch.pdl(x.device))
"""
    )
    files = {"pkg/__init__.py": "", "pkg/arch.py": ARCH, "pkg/ops.py": ops}
    verdict, why = reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait", target="h100")[0] == "target"


def test_a_probe_object_whose_vendor_is_runtime_data_leaves_the_flag_undecided():
    files = {
        "pkg/__init__.py": "",
        "pkg/arch.py": ARCH.replace(
            '"amd", props.gcnArchName.split(":")[0], 0)', "read_vendor(), props.gcnArchName, read_sm())"
        ),
        "pkg/ops.py": KERNEL + "\ndef walk(x):\n    _walk[(1,)](x, USE_GDC=arch.pdl(x.device))\n",
    }
    assert reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait")[0] == "target"


# gdn_tree_recurrence's launch: the PDL keywords merged into a long `common = dict(...)`, handed to a private launcher
# as a parameter and spread there next to a second mapping a documented builder returns
LAUNCH = """
def _state_args(a, b):
    \"\"\"The state-addressing arguments.

    Documented at length, key by key.
    \"\"\"
    return dict(
        stride_a=a.stride(0),
        stride_b=b.stride(0),
    )


def _launch(common, *, a, b):
    _walk[(1,)](
        **common,
        num_warps=1,
        **_state_args(a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b),
    )


def walk(x, a, b):
    pdl = {"USE_GDC": True, "launch_pdl": True} if arch.pdl(x.device) else {}
    common = dict(
        x_ptr=x,
        first_runtime_argument_with_a_long_name=x.stride(0),
        second_runtime_argument_with_a_long_name=x.stride(1),
        third_runtime_argument_with_a_long_name=x.shape[0],
        fourth_runtime_argument_with_a_long_name=x.shape[1],
        fifth_runtime_argument_with_a_long_name=x.numel(),
        sixth_runtime_argument_with_a_long_name=x.dtype,
        seventh_runtime_argument_with_a_long_name=x.device,
        eighth_runtime_argument_with_a_long_name=x.element_size(),
        **pdl,
    )
    _launch(common, a=a, b=b)
"""


def test_launch_keywords_through_a_launcher_parameter_and_two_spreads_keep_the_default():
    files = {"pkg/__init__.py": "", "pkg/arch.py": ARCH, "pkg/ops.py": KERNEL + LAUNCH}
    verdict, why = reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait", target="h100")[0] == "target"


def test_a_mapping_filled_after_its_binding_leaves_the_flag_undecided():
    # gdn_tree_conv's `meta["USE_GDC"] = pdl`: the keys the binding shows are not all the launch passes
    ops = LAUNCH.replace(
        "    _launch(common, a=a, b=b)", '    common["USE_GDC"] = flag(x)\n    _launch(common, a=a, b=b)'
    )
    files = {"pkg/__init__.py": "", "pkg/arch.py": ARCH, "pkg/ops.py": KERNEL + ops}
    assert reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait")[0] == "target"


def test_a_key_added_to_a_mapping_after_its_binding_is_read_from_its_store():
    # gdn_tree_conv's `meta["USE_GDC"] = pdl` with `pdl = arch.pdl(x.device)`: the launch passes that key too
    ops = LAUNCH.replace(
        "    _launch(common, a=a, b=b)",
        '    gdc = arch.pdl(x.device)\n    common["USE_GDC"] = gdc\n    _launch(common, a=a, b=b)',
    ).replace('{"USE_GDC": True, "launch_pdl": True} if arch.pdl(x.device) else {}', "{}")
    files = {"pkg/__init__.py": "", "pkg/arch.py": ARCH, "pkg/ops.py": KERNEL + ops}
    verdict, why = reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait")
    assert verdict == "nvidia_only", why
    assert reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait", target="h100")[0] == "target"
    # set only in a branch, or changed again by a method, the key may hold anything
    branch = ops.replace('    common["USE_GDC"] = gdc', '    if a is not None:\n        common["USE_GDC"] = gdc')
    files["pkg/ops.py"] = KERNEL + branch
    assert reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait")[0] == "target"
    updated = ops.replace('    common["USE_GDC"] = gdc', '    common["USE_GDC"] = gdc\n    common.update(b)')
    files["pkg/ops.py"] = KERNEL + updated
    assert reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait")[0] == "target"


def test_a_second_spread_of_runtime_data_leaves_the_flag_undecided():
    ops = LAUNCH.replace("**_state_args(a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b)", "**extra")
    ops = ops.replace("def _launch(common, *, a, b):", "def _launch(common, *, a, b, extra=None):")
    files = {"pkg/__init__.py": "", "pkg/arch.py": ARCH, "pkg/ops.py": KERNEL + ops}
    assert reach(files, "pkg/ops.py", "tl.extra.cuda.gdc_wait")[0] == "target"
