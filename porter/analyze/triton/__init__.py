"""Triton-aware analysis: an inventory of kernels, autotune configs and launch sites per module,
a constant folder, and resource estimates against a porter target.

    inv = inventory_for_source(text, "k.py")
    for kernel in inv.kernels: kernel.autotune.configs[0].options["num_warps"].values
    inv.to_dict(target)      # JSON-able, for `porter scan --kernels`
"""

from __future__ import annotations

import libcst as cst

from porter.analyze.triton.estimates import Estimate, estimate, estimate_config, estimate_launch
from porter.analyze.triton.fold import UNKNOWN, Possible, Val
from porter.analyze.triton.inventory import TritonInventory
from porter.analyze.triton.records import AutotuneInfo, ConfigInfo, KernelInfo, LaunchSite, Param, Span

__all__ = [
    "AutotuneInfo",
    "ConfigInfo",
    "Estimate",
    "KernelInfo",
    "LaunchSite",
    "Param",
    "Possible",
    "Span",
    "TritonInventory",
    "UNKNOWN",
    "Val",
    "build_inventory",
    "estimate",
    "estimate_config",
    "estimate_launch",
    "inventory_for_source",
]


def build_inventory(ctx) -> TritonInventory:
    """What ModuleContext.triton calls: the inventory over the engine's node index, parent map, names
    and positions (porter.analyze.index); no walk of its own."""
    return TritonInventory(ctx)


def inventory_for_source(text: str, path: str = "<string>") -> TritonInventory:
    """Parse and inventory source text. Raises libcst.ParserSyntaxError on invalid Python."""
    from porter.analyze.visitors import ModuleContext

    return build_inventory(ModuleContext(path, text, cst.parse_module(text)))
