"""Records of the Triton inventory. Nodes stay on the records (for visitors' Hits) but never reach
to_dict, which is JSON-able. Lines and columns are 1-based, as in Finding."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from porter.analyze.triton import names
from porter.analyze.triton.fold import Val


@dataclass(frozen=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int

    def to_dict(self) -> dict[str, int]:
        return {"line": self.line, "column": self.column, "end_line": self.end_line, "end_column": self.end_column}


@dataclass
class Param:
    name: str
    constexpr: bool
    annotation: str | None
    default: Val | None
    node: cst.Param


@dataclass
class ConfigInfo:
    """One triton.Config(...) as it is instantiated (a comprehension yields one per iteration)."""

    index: int
    node: cst.Call
    spanner: Callable[[cst.CSTNode], Span] = field(repr=False)
    meta: dict[str, Val]  # the kwargs dict, AMD knobs included
    meta_nodes: dict[str, cst.CSTNode]  # key -> the value expression in the dict
    options: dict[str, Val]  # num_warps, num_stages, num_ctas, maxnreg ...
    option_nodes: dict[str, cst.CSTNode]  # option -> the keyword's value expression
    bindings: dict[str, Any] = field(default_factory=dict)  # comprehension variables of this entry
    guard: str | None = None  # "amd" | "nvidia" when the entry sits behind a vendor test
    meta_complete: bool = True  # False: the kwargs dict could not be folded entirely
    entry: cst.CSTNode | None = None  # the list element that built it: the Config call or a helper call
    # A config pruner that reads the warp size at run time (`num_warps * warp_size <= 1024`): the wave sizes on
    # which it provably drops this entry, and whether it drops it wherever it cannot launch (a bound on num_warps
    # that depends on the warp size but does not fold).
    dropped_on_waves: frozenset[int] = frozenset()
    pruned_if_unlaunchable: bool = False

    def dropped_on(self, target) -> bool:
        """The pruner removes this entry before the autotuner sees it on this target."""
        if target.wave_size in self.dropped_on_waves:
            return True
        if not self.pruned_if_unlaunchable:
            return False
        warps = self.options.get("num_warps")
        if warps is None or not warps.known or warps.partial:
            return False
        return all(isinstance(v, int) and v > target.max_num_warps for v in warps.values)

    @property
    def span(self) -> Span:
        return self.spanner(self.node)

    @property
    def entry_span(self) -> Span:
        return self.spanner(self.entry if self.entry is not None else self.node)

    @property
    def amd_knobs(self) -> list[str]:
        return [key for key in self.meta if key in names.AMD_KNOBS]

    def value(self, key: str) -> Val | None:
        """An option (num_warps...) or a meta key (BLOCK_M...)."""
        return self.options.get(key) or self.meta.get(key)


@dataclass
class AutotuneInfo:
    kernel: str
    node: cst.Call
    spanner: Callable[[cst.CSTNode], Span] = field(repr=False)
    key: list | None
    configs: list[ConfigInfo]
    configs_source: str  # literal | constant:NAME | function:NAME | unknown
    complete: bool  # False: some entries could not be folded and are missing from `configs`

    @property
    def span(self) -> Span:
        return self.spanner(self.node)


@dataclass
class KernelInfo:
    name: str
    node: cst.FunctionDef
    spanner: Callable[[cst.CSTNode], Span] = field(repr=False)
    decorators: list[str]
    params: list[Param]
    gemm_like: bool
    dot_nodes: list[cst.Call]
    dtypes: list[str]
    elem_bytes: int | None  # GEMM operand element size; None: the source does not show the operand dtype
    elem_bytes_source: str
    autotune: AutotuneInfo | None = None
    heuristics: dict[str, Val] = field(default_factory=dict)
    heuristics_nodes: dict[str, cst.CSTNode] = field(default_factory=dict)

    @property
    def span(self) -> Span:
        """Span of the kernel's name."""
        return self.spanner(self.node.name)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def constexpr_names(self) -> list[str]:
        return [p.name for p in self.params if p.constexpr]


@dataclass
class LaunchSite:
    """`kernel[grid](args..., num_warps=..., BLOCK=...)`."""

    kernel: str
    kernel_known: bool  # True: the kernel is a @triton.jit function of this module
    node: cst.Call
    spanner: Callable[[cst.CSTNode], Span] = field(repr=False)
    grid: str
    options: dict[str, Val]
    option_nodes: dict[str, cst.CSTNode]
    meta: dict[str, Val]
    meta_nodes: dict[str, cst.CSTNode]
    guard: str | None = None
    # where a finding about the whole config belongs when it is not the call: the entry of a per-dtype
    # config table the launch reads (`configs[dtype]["num_stages"]`), the line a port changes
    anchor: cst.CSTNode | None = None

    @property
    def span(self) -> Span:
        return self.spanner(self.node)
