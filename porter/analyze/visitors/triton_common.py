"""Helpers shared by the Triton visitors (PT101..PT119): where option values come from, vendor
guards, and outermost references to qualified names."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from porter.analyze.triton import flow
from porter.analyze.triton.fold import Possible, Val
from porter.analyze.triton.names import JIT
from porter.analyze.triton.records import ConfigInfo, KernelInfo


@dataclass
class OptionSite:
    """One place an option/meta value is set: an autotune config, a launch, heuristics, a default."""

    where: str  # autotune | config | launch | heuristics | jit-default
    kernel: KernelInfo | None
    val: Val
    node: cst.CSTNode  # the value expression (keyword value, dict value)
    guard: str | None = None
    config: ConfigInfo | None = None
    values: dict[str, Val] = field(default_factory=dict)  # all option+meta values of the site
    inv: Any = None  # the inventory the site is in when it is another module's (a caller of a helper here)

    def location(self, here) -> str:
        owner = self.inv or here
        return f"{owner.path}:{owner.span(self.node).line}"


def uses_triton(ctx) -> bool:
    """The module imports Triton, itself or through the project's re-exports (`from pkg.triton_utils import tl`).
    Warp-size arithmetic and shared-memory budgets elsewhere size CUDA C or CuTe DSL launches (FlashInfer's JIT
    program tables), which are never built for AMD: they are not Triton's num_warps or its LDS."""
    return any(name == "triton" or name.startswith("triton.") for names in ctx.index.aliases.values() for name in names)


def is_triton_kernel(ctx, function: cst.FunctionDef) -> bool:
    """The function is decorated with `@triton.jit` (called or not, under any alias)."""
    for decorator in function.decorators:
        target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        if ctx.qualified_names(target) & JIT:
            return True
    return False


def defines_triton_kernels(ctx) -> bool:
    """The module defines @triton.jit kernels: data a torch quantizer makes here is what they compute with, on
    the target. Elsewhere it feeds vendor kernels (Marlin, CUTLASS, FBGEMM, cuTile: their contract) or a torch
    GEMM."""
    return "triton" in ctx.text and any(is_triton_kernel(ctx, f) for f in ctx.nodes(cst.FunctionDef))


@dataclass(frozen=True, eq=False)
class KernelConsumer:
    """A function of another project module that defines Triton kernels (the kernel module's API), called from the
    module at hand."""

    name: str  # as the calling module writes it (`blockwise_fp8_gemm`)
    path: str  # the defining module, as the scan shows it
    ctx: Any  # that module's ModuleContext: its kernels are the ones the data meets
    scopes: frozenset[str]  # the module-level def / class around each call ("" for a call at module level)
    sites: tuple[cst.Call, ...] = ()  # the calls, in the calling module


MAX_CONSUMER_CALLEES = 24  # distinct imported callees resolved per module (each may parse a module once)
_FP8_TEXT = re.compile(r"(?i)float8|fp8|e4m3|e5m2")


def fp8_kernel_consumers(ctx, near: cst.CSTNode) -> list[KernelConsumer]:
    """The project kernel launchers (project_kernel_consumers) that fp8 data made at `near` may meet: called in
    the same module-level function or class (a layer's `__init__` allocates, its `forward` calls the GEMM; any,
    for a module-level constant), in a module whose kernels work on fp8 (it names an fp8 type). A kernel of an
    unrelated kind (an index remap next to a CUTLASS fp8 GEMM) says nothing about the fp8 data's consumer."""
    scope = (ctx.scope_names(near) or ("",))[0]
    return [
        c
        for c in project_kernel_consumers(ctx)
        if (not scope or scope in c.scopes) and _FP8_TEXT.search(c.ctx.text) is not None
    ]


def project_kernel_consumers(ctx) -> list[KernelConsumer]:
    """The functions of other project modules defining Triton kernels that this module calls
    (`blockwise_fp8_gemm(x, s, self.weight, ...)`, imported from the project's kernel module): data made here
    and handed to them meets Triton code compiled for the target there, as in a module defining its own kernels.
    Resolved through the tree scan's imports (porter.analyze.triton.flow); empty outside a tree scan."""
    if "kernel_consumers" not in ctx.cache:
        ctx.cache["kernel_consumers"] = _resolve_kernel_consumers(ctx)
    return ctx.cache["kernel_consumers"]


def _resolve_kernel_consumers(ctx) -> list[KernelConsumer]:
    if flow.project() is None:
        return []
    calls: dict[str, list[cst.Call]] = {}
    for call in ctx.nodes(cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            written = f"{func.value.value}.{func.attr.value}"
        elif isinstance(func, cst.Name):
            written = func.value
        else:
            continue
        if written in calls or (len(calls) < MAX_CONSUMER_CALLEES and _may_be_project_import(ctx, written)):
            calls.setdefault(written, []).append(call)
    inv = ctx.triton
    found: list[KernelConsumer] = []
    for written, sites in calls.items():
        resolved = flow.resolve_function(inv, sites[0].func)
        if resolved is None or resolved[0] is inv:
            continue
        callee = resolved[0]
        # the kernel module's API: it launches them, itself or through the module's helpers (`_gemm_impl(a, b)`)
        if defines_triton_kernels(callee._ctx):
            scopes = frozenset((ctx.scope_names(site) or ("",))[0] for site in sites)
            found.append(KernelConsumer(written, callee.path, callee._ctx, scopes, tuple(sites)))
    return found


def _may_be_project_import(ctx, written: str) -> bool:
    """`f` / `mod.f` may name a function of another scanned module: imported from one, not from a library outside
    the tree (torch, triton). Relative imports are not in the alias table: their bound names are asked for."""
    head = written.split(".", 1)[0]
    qualified = ctx.index.aliases.get(head)
    if not qualified:
        return head in _relatively_imported(ctx)
    return any(_in_scanned_tree(name if "." in written else name.rsplit(".", 1)[0]) for name in qualified)


def _relatively_imported(ctx) -> set[str]:
    """Names bound by the module's relative imports (`from .kernels import fp8_gemm`, `from . import ops`)."""
    if "relative_imports" not in ctx.cache:
        names: set[str] = set()
        for node in ctx.nodes(cst.ImportFrom):
            if not node.relative or isinstance(node.names, cst.ImportStar):
                continue
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(bound, cst.Name):
                    names.add(bound.value)
        ctx.cache["relative_imports"] = names
    return ctx.cache["relative_imports"]


def _in_scanned_tree(module: str) -> bool:
    tree = flow.project()
    if tree is None:
        return False
    path = module.replace(".", "/")
    endings = (f"{path}.py", f"{path}/__init__.py")
    return any(file == e or file.endswith("/" + e) for file in tree.files for e in endings)


def skip_for_target(guard: str | None, target) -> bool:
    """Code behind `if is_cuda():` is already vendor-specific: not a finding on AMD (and vice versa)."""
    return guard is not None and guard != target.vendor


def live(inv, val: Val, target) -> Val:
    """The possible values left on this target: `32 if not is_hip() else 16` is only 16 on AMD."""
    if not val.known:
        return val
    return Val(
        [
            p
            for p in (val.possibles or ())
            if p.dead_on != target.vendor and not skip_for_target((p.module or inv).guard_at(p.node), target)
        ],
        val.partial,
    )


def live_values(inv, values: dict[str, Val], target) -> dict[str, Val]:
    return {key: live(inv, val, target) for key, val in values.items()}


def config_sites(inv) -> Iterator[tuple[KernelInfo | None, ConfigInfo, str]]:
    for kernel in inv.kernels:
        if kernel.autotune:
            for config in kernel.autotune.configs:
                yield kernel, config, "autotune"
    for config in inv.orphan_configs:
        yield None, config, "config"


def option_sites(inv, key: str, target) -> Iterator[OptionSite]:
    """Every place `key` (num_warps, num_stages, BLOCK_M, ...) is set for a kernel of this module."""
    for kernel, config, where in config_sites(inv):
        val = config.value(key)
        if val is not None and not skip_for_target(config.guard, target) and not config.dropped_on(target):
            node = config.option_nodes.get(key) or config.meta_nodes.get(key)
            # node is None when neither option_nodes nor meta_nodes holds the key: OptionSite.node should become
            # Optional, which its consumers (origin_node -> Hit) must then handle; left to the analyzer's owner.
            yield OptionSite(
                where,
                kernel,
                live(inv, val, target),
                node,  # type: ignore[arg-type]
                config.guard,
                config,
                live_values(inv, {**config.meta, **config.options}, target),
            )
    for launch in inv.launches:
        val = launch.options.get(key) or launch.meta.get(key)
        if val is not None and not skip_for_target(launch.guard, target):
            kernel = inv.kernel(launch.kernel) if launch.kernel_known else None
            node = launch.option_nodes.get(key) or launch.meta_nodes.get(key)
            yield OptionSite(
                "launch",
                kernel,
                live(inv, val, target),
                node,
                launch.guard,
                None,
                live_values(inv, {**launch.meta, **launch.options}, target),
            )
    for caller in flow.caller_sites(inv, key):
        if not skip_for_target(caller.guard, target):
            kernel = caller.inv.kernel(caller.kernel) if caller.kernel else None
            yield OptionSite(
                caller.where,
                kernel,
                live(inv, caller.val, target),
                caller.node,
                caller.guard,
                None,
                live_values(caller.inv, caller.values, target),
                inv=caller.inv,
            )
    for kernel in inv.kernels:
        if key in kernel.heuristics:
            yield OptionSite(
                "heuristics", kernel, live(inv, kernel.heuristics[key], target), kernel.heuristics_nodes[key]
            )
    if key == "num_stages":  # per-loop pipelining depth: `for k in tl.range(0, K, BK, num_stages=3)`
        for call in inv.calls_to({"triton.language.range"}):
            arg = keyword_arg(call, key)
            if arg is not None and not skip_for_target(inv.guard_at(call), target):
                yield OptionSite("loop", inv.kernel_at(call), live(inv, inv.fold(arg.value), target), arg.value)


def by_origin(sites: list[tuple[OptionSite, Possible]]) -> Iterator[tuple[Possible, list[OptionSite]]]:
    """Group (site, possible value) pairs by the literal they came from: one finding per literal.
    A value from a helper of a module outside the scan groups at the site (it cannot be reported there)."""
    groups: dict[int, tuple[Possible, list[OptionSite]]] = {}
    for site, possible in sites:
        if flow.is_reported_elsewhere(possible):
            continue
        anchor = possible.node if possible.module is None else site.node
        groups.setdefault(id(anchor), (possible, []))[1].append(site)
    yield from groups.values()


def origin_node(possible: Possible, sites: list[OptionSite]) -> cst.CSTNode:
    """Where the finding goes: the literal when it is in this module, else the (local) site."""
    return possible.node if possible.module is None else sites[0].node


def site_data(sites: list[OptionSite], possible: Possible | None = None, here=None) -> dict[str, Any]:
    first = sites[0]
    data: dict[str, Any] = {"where": first.where, "kernel": first.kernel.name if first.kernel else None}
    indices = [s.config.index for s in sites if s.config is not None and s.inv is None]
    if indices:
        data["config_index"] = indices[0]
        data["config_indices"] = sorted(set(indices))
    if here is not None:
        data["launches"] = sorted({s.location(here) for s in sites})
    if possible is not None:
        vals = [s.val for s in sites]
        merged = (
            Val([p for v in vals if v.known for p in (v.possibles or ())], any(v.partial for v in vals))
            if all(v.known for v in vals)
            else None
        )
        described = flow.describe(possible, merged)
        data["flow"] = described
        data["origin"] = flow.origin_record(possible, here) if here is not None else None
        if possible.module is not None and data["origin"] is not None:
            described = f"{described}; set at {data['origin']['path']}:{data['origin']['line']}"
        reaches = data.get("launches") or []
        shown = ", ".join(reaches[:4]) + (f" and {len(reaches) - 4} more" if len(reaches) > 4 else "")
        data["flow_note"] = (
            (f"; {described}; reaches {shown}" if described else f"; reaches {shown}")
            if possible.module is not None
            or possible.via
            or possible.when
            or len(reaches) > 1
            or any(s.inv is not None for s in sites)
            else ""
        )
    return data


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def references(inv, prefixes: tuple[str, ...]) -> Iterator[tuple[cst.CSTNode, str]]:
    """Outermost Name/Attribute expressions whose qualified name starts with one of `prefixes`
    (imports themselves excluded), with the matching qualified name."""
    for node, qualified_names in inv.references():
        for qualified in qualified_names:
            if qualified.startswith(prefixes):
                yield node, qualified
                break


def in_try_handling(inv, node: cst.CSTNode, handles: Callable[[cst.ExceptHandler], bool]) -> bool:
    """The node sits in the body of a `try` one of whose handlers `handles` what it raises on AMD: the
    fallback is what runs there (PT118's nvidia-smi probes, PT122's NVIDIA backend uses)."""
    child = node
    for ancestor in inv.ancestors(node):
        if isinstance(ancestor, cst.Try) and child is ancestor.body and any(handles(h) for h in ancestor.handlers):
            return True
        child = ancestor
    return False


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def calls(inv, wanted: set[str]) -> Iterator[cst.Call]:
    yield from inv.calls_to(wanted)
