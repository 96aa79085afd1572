"""Visitors over Triton launch/autotune configuration values: PT101, PT103..PT107."""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from porter.analyze.guards import only_on_cuda
from porter.analyze.index import literal_value
from porter.analyze.triton import names
from porter.analyze.triton.estimates import block_sizes, estimate
from porter.analyze.triton.fold import Val, upper
from porter.analyze.triton.records import KernelInfo
from porter.analyze.visitors import Hit, ModuleContext, register
from porter.analyze.visitors.triton_common import (
    by_origin,
    config_sites,
    is_int,
    live,
    live_values,
    option_sites,
    origin_node,
    site_data,
    skip_for_target,
)
from porter.records import Severity


@register("num_warps_limit")
def num_warps_limit(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT101: num_warps x wave size above the target's threads per block (autotune, launch, heuristics,
    an autotuner's declared num_warps range)."""
    yield from _search_space_bounds(ctx, target)
    inv = ctx.triton
    if inv is None:
        return
    over = [
        (site, p)
        for site in option_sites(inv, "num_warps", target)
        if site.val.known
        for p in (site.val.possibles or ())
        if (upper(p.value) or 0) > target.max_num_warps
    ]
    for possible, sites in by_origin(over):
        value = upper(possible.value)
        pruned = all(_autotuner_skips(inv, site, target) for site in sites)
        yield Hit(
            origin_node(possible, sites),
            {
                **site_data(sites, possible, inv),
                "value": value,
                "threads": value * target.wave_size,
                "limit": target.max_num_warps,
                "suggested": target.max_num_warps,
                "skipped_by_autotuner": pruned,
                "autotune_note": _SKIPPED_NOTE if pruned else "",
            },
            severity="warning" if pruned else None,
        )


# An autotuner's num_warps search space declared as a range object: helion's `NumWarpsFragment(1, 32, default)`.
_WARPS_RANGE = re.compile(r"(?i)warps\w*(fragment|range|space)$")


def _search_space_bounds(ctx: ModuleContext, target) -> Iterable[Hit]:
    """`NumWarpsFragment(low, high, ...)` with high over the target's limit: the autotuner will try
    configs that cannot launch there (each fails to compile and wastes a search step)."""
    for call in ctx.nodes(cst.Call):
        func = call.func
        tail = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        if not isinstance(tail, str) or not _WARPS_RANGE.search(tail):
            continue
        bounds = [literal_value(a.value) for a in call.args[:2] if a.keyword is None]
        if len(bounds) != 2 or not all(type(b) is int for b in bounds):
            continue
        low, high = bounds
        if low <= target.max_num_warps < high and not _amd_excluded(ctx, call):
            yield Hit(
                call.args[1].value,
                {
                    "value": high,
                    "where": f"upper bound of the autotuner's search space {tail}({low}, {high})",
                    "flow_note": "",
                    "threads": high * target.wave_size,
                    "limit": target.max_num_warps,
                    "suggested": target.max_num_warps,
                    "autotune_note": _SEARCH_SPACE_NOTE,
                },
                severity="warning",
            )


_AMD_WORD = re.compile(r"(?i)(^|_)(amd|hip|rocm|cdna|gfx\d*)(_|$)")


def _amd_excluded(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """In a branch that an AMD test rules out: `X if not supports_amd_cdna_tunables() else Y` (X), a CUDA-only
    branch by the shared guards (`if not is_hip():`), or the else of `if is_rocm():`."""
    if only_on_cuda(ctx, node):
        return True
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, cst.FunctionDef):
        if isinstance(parent, (cst.If, cst.IfExp)) and child in (parent.body, parent.orelse):
            test = parent.test
            negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
            if isinstance(test, cst.UnaryOperation) and negated:
                test = test.expression
            if _names_amd(test) and (child is parent.body) == negated:
                return True
        child, parent = parent, ctx.parent(parent)
    return False


def _names_amd(test: cst.BaseExpression) -> bool:
    """`supports_amd_cdna_tunables()`, `is_hip()`, `IS_ROCM`: a test named for AMD GPUs."""
    func = test.func if isinstance(test, cst.Call) else test
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
    return isinstance(name, str) and _AMD_WORD.search(name) is not None


_SEARCH_SPACE_NOTE = "; configs above the limit fail to compile there and waste the autotuner's search"

_SKIPPED_NOTE = (
    "; other configs of the list fit: Triton 3.9 raises OutOfResources for this one at load and the "
    "autotuner skips it (a wasted compile; Triton versions without that check fail at launch)"
)


def _autotuner_skips(inv, site, target) -> bool:
    """An autotune entry over the limit whose list also holds entries within it: the autotuner drops it."""
    if site.where != "autotune" or site.kernel is None or site.kernel.autotune is None:
        return False
    owner = site.inv or inv
    fits = 0
    for config in site.kernel.autotune.configs:
        val = config.options.get("num_warps")
        val = live(owner, val, target) if val is not None else None
        if val is None:
            fits += 1  # the default, 4 warps
        elif val.known and not val.partial and all((upper(v) or 0) <= target.max_num_warps for v in val.values):
            fits += 1
    return fits > 0


def _list_offers_depth(inv, site, target, limit: int) -> bool:
    """An autotune entry whose list also holds entries of 1..limit stages: the autotuner times those on the
    target and keeps what runs best there (liger's `for s in [2, 3]`), so the deep entries cost compile time only."""
    if site.where != "autotune" or site.kernel is None or site.kernel.autotune is None:
        return False
    owner = site.inv or inv
    for config in site.kernel.autotune.configs:
        val = config.value("num_stages")  # flag_gems writes it into the meta dict: the same site reports it
        val = live(owner, val, target) if val is not None else None
        if val is not None and val.known and any(is_int(v) and 0 < v <= limit for v in val.values):
            return True
    return False


def _model_config(values: dict, kernel, target, **override) -> tuple[str, dict] | None:
    """(dtype, config) for porter.tune when the site's tile, warps and stages are all literal."""
    blocks = block_sizes(values, kernel)
    raw = {f"BLOCK_{d}": blocks[d][1] for d in "MNK" if d in blocks}
    for key in ("num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim"):
        val = values.get(key)
        if val is not None and val.known and val.is_single and is_int(val.single):
            raw[key] = val.single
    raw.setdefault("num_warps", 4)  # triton.Config's default
    raw.update(override)
    if len(raw) < 5 or not all(is_int(v) for v in raw.values()):
        return None
    from porter.tune.judge import dtype_for

    return dtype_for(kernel.elem_bytes, kernel.dtypes), raw


def _model_picks_it(values: dict, kernel, target, **override) -> bool:
    """porter.tune ranks this config within a few percent of its best for some problem: one voice
    with `porter tune`, whose picks these rules then never flag."""
    found = _model_config(values, kernel, target, **override)
    if found is None:
        return False
    from porter.tune.judge import near_best

    dtype, raw = found
    if kernel.elem_bytes is None:
        # the operands' dtype is not in the source (loaded through run-time pointers, as in the Triton tutorial):
        # a config porter tune picks at the 2-byte guess or for 1-byte operands is one voice with tune, as PT107
        # never reports an LDS overflow on the 2-byte guess alone. Not 4-byte: at fp32's rates almost any small
        # tile and stage count is near-best, which would silence the rule for every such kernel
        return any(near_best(target, d, raw) for d in (dtype, "fp8"))
    return near_best(target, dtype, raw)


def _stage_limit(kernel, target) -> tuple[int, int]:
    """(largest num_stages left alone, suggested value) for a GEMM-like kernel on this target."""
    limit = int(target.triton["gemm_num_stages"])
    suggested = int(target.triton["fused_num_stages"]) if len(kernel.dot_nodes) > 1 else limit
    return limit, suggested


@register("triton_num_stages")
def num_stages(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT103: num_stages deeper than the AMD guidance for GEMM-like kernels, or the old `0` trick."""
    inv = ctx.triton
    if inv is None:
        return
    flagged = []
    for site in option_sites(inv, "num_stages", target):
        if site.kernel is None or not site.kernel.gemm_like or not site.val.known:
            continue
        limit, _ = _stage_limit(site.kernel, target)
        offered = _list_offers_depth(inv, site, target, limit)
        flagged += [
            (site, p)
            for p in (site.val.possibles or ())
            if is_int(p.value)
            and (
                p.value == 0
                or (
                    p.value > limit
                    and not offered
                    and not (
                        len(site.kernel.dot_nodes) <= 1
                        and _model_picks_it(site.values, site.kernel, target, num_stages=p.value)
                    )
                )
            )
        ]
    for possible, sites in by_origin(flagged):
        limit, suggested = _stage_limit(sites[0].kernel, target)
        yield Hit(
            origin_node(possible, sites),
            {
                **site_data(sites, possible, inv),
                "value": possible.value,
                "limit": limit,
                "suggested": suggested,
                "form": "zero" if possible.value == 0 else "deep",
            },
        )


@register("triton_missing_amd_knobs")
def missing_amd_knobs(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT104: an autotune list of a GEMM-like kernel that never sets the target's AMD knobs."""
    inv = ctx.triton
    knobs = list(target.triton.get("amd_options") or ())
    if inv is None or not knobs:
        return
    for kernel in inv.kernels:
        tune = kernel.autotune
        if tune is None or not kernel.gemm_like or not tune.configs:
            continue
        if any(config.guard == "amd" for config in tune.configs):
            continue  # the list already has an AMD branch
        if any(key in config.meta for config in tune.configs for key in knobs):
            continue
        if not tune.complete:
            continue  # part of the list is invisible to porter: it may set the knobs
        yield Hit(tune.node, {"kernel": kernel.name, "configs": len(tune.configs), "missing": ", ".join(knobs)})


@register("triton_nvidia_only_options")
def nvidia_only_options(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT105: launch/Config options the HIP backend rejects (maxnreg, launch_pdl, num_ctas > 1, ...)."""
    inv = ctx.triton
    if inv is None:
        return
    seen: set[int] = set()
    items: list[tuple[dict[str, Val], dict[str, cst.CSTNode], str, KernelInfo | None, int | None]] = []
    for kernel, config, where in config_sites(inv):
        if not skip_for_target(config.guard, target):
            items.append((config.options, config.option_nodes, where, kernel, config.index))
    for launch in inv.launches:
        if not skip_for_target(launch.guard, target):
            items.append((launch.options, launch.option_nodes, "launch", inv.kernel(launch.kernel), None))
    for options, nodes, where, kernel, index in items:
        for option, val in options.items():
            node = nodes[option]
            val = live(inv, val, target)
            if val.known and not val.values:
                continue  # every value sits behind an NVIDIA-only branch
            if id(node) in seen or (kernel is not None and kernel.param(option) is not None):
                continue  # a kernel parameter of that name takes the keyword (vllm's `launch_pdl: tl.constexpr`)
            value = val.single if val.is_single else None
            if option == "num_ctas":
                if not (val.known and any(is_int(v) and v > 1 for v in val.values)):
                    continue
            elif option not in names.NVIDIA_ONLY_OPTIONS or (option == "maxnreg" and val.is_single and value is None):
                continue
            seen.add(id(node))
            arg = inv.parent(node)
            yield Hit(
                arg if isinstance(arg, cst.Arg) else node,
                {
                    "option": option,
                    "value": value if val.known else None,
                    "where": where,
                    "kernel": kernel.name if kernel else None,
                    "config_index": index,
                },
            )


def _list_stats(inv, kernel, target) -> dict:
    configs = [c for c in kernel.autotune.configs if not skip_for_target(c.guard, target)]
    limit = int(target.triton["gemm_num_stages"])
    deep = over_lds = over_threads = 0
    for config in configs:
        values = live_values(inv, {**config.meta, **config.options}, target)
        est = estimate(values, kernel, target)
        stages = values.get("num_stages")
        deep += bool(
            stages is not None
            and stages.known
            and any(is_int(v) and v > limit for v in stages.values)
            and not (len(kernel.dot_nodes) <= 1 and _model_picks_it(values, kernel, target))
        )
        # over the LDS as PT107 judges it: the full estimate over, and the model's (the target's pipeliner, as
        # Triton's compile records give it) over too; a config PT107 leaves alone is not NVIDIA-tuned for its LDS
        over_lds += est.lds_ok is False and not _model_lds_fits(values, kernel, target, est)
        over_threads += est.threads_ok is False
    return {
        "configs": len(configs),
        "deep_stages": deep,
        "over_lds": over_lds,
        "over_threads": over_threads,
        "stage_limit": limit,
    }


@register("triton_nvidia_tuned_list")
def nvidia_tuned_list(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT106: a GEMM autotune list with NVIDIA fingerprints (deep pipelines, tiles over the LDS,
    no AMD knobs) and no AMD branch."""
    inv = ctx.triton
    if inv is None:
        return
    knobs = set(target.triton.get("amd_options") or ())
    for kernel in inv.kernels:
        tune = kernel.autotune
        if tune is None or not kernel.gemm_like or not tune.configs:
            continue
        if any(c.guard == "amd" for c in tune.configs) or any(k in c.meta for c in tune.configs for k in knobs):
            continue
        stats = _list_stats(inv, kernel, target)
        if not stats["configs"] or not (stats["deep_stages"] or stats["over_lds"] or stats["over_threads"]):
            continue
        failing = max(stats["over_lds"], stats["over_threads"])
        severity: Severity | None = (
            "error" if failing == stats["configs"] and (stats["over_lds"] + stats["over_threads"]) else None
        )
        yield Hit(tune.node, {"kernel": kernel.name, **stats}, severity=severity)


def _lds_over(est, target) -> bool:
    """Over the LDS: for certain, or, when the operand dtype is not visible, even with 1-byte operands (fp8 and
    int8 kernels loading through pointers fit where the 2-byte guess does not: flag_gems' fp8 GEMMs, bench/real_code)."""
    if est.lds_ok is False:
        return True
    one_byte = est.lds_bytes // names.ASSUMED_ELEM_BYTES if est.lds_bytes is not None else None
    return est.lds_ok is None and one_byte is not None and one_byte > target.lds_bytes


def _model_lds_fits(values: dict, kernel, target, est) -> bool:
    """The full estimate is over but porter.tune's LDS for the target's pipeliner (the figure
    Triton's compile records give: (stages - 1) buffers on gfx942) fits: not a finding. Never
    clears a case where even the (stages - 1) estimate is over."""
    if est.lds_bytes_low is not None and est.lds_bytes_low > target.lds_bytes:
        return False
    found = _model_config(values, kernel, target)
    if found is None or est.elem_bytes is None:
        return False
    from porter.tune.judge import model_lds_bytes

    model = model_lds_bytes(target, *found)
    return model is not None and model <= target.lds_bytes


def _list_has_fitting_entry(inv, kernel, target) -> bool:
    """Some entry of the kernel's autotune list (or combination of a comprehension's values) fits the target's LDS
    at the operand size the source shows, else at the 2 bytes the estimate assumes: the autotuner keeps it and
    skips what overflows (liger's int8 and swiglu lists, flag_gems' scaled-mm tiles)."""
    size = kernel.elem_bytes or names.ASSUMED_ELEM_BYTES
    for config in kernel.autotune.configs:
        if skip_for_target(config.guard, target):
            continue
        least = _least_elements(live_values(inv, {**config.meta, **config.options}, target), kernel)
        if least is not None and least * size <= target.lds_bytes:
            return True
    return False


def _least_elements(values: dict[str, Val], kernel) -> int | None:
    """stages x (BM x BK + BK x BN) of the config's smallest combination; None when a value is not known."""
    least: dict[str, int] = {}
    for key, val in values.items():
        dim = names.block_dim(key) or ("S" if key == "num_stages" else None)
        ints = [v for v in (val.values if val.known and not val.partial else ()) if is_int(v)]
        if dim and dim not in least and ints:
            least[dim] = min(ints)
    for param in kernel.params:  # constexpr defaults for tile sizes the config does not set
        dim = names.block_dim(param.name)
        if (
            dim
            and dim not in least
            and param.default is not None
            and param.default.known
            and is_int(param.default.single)
        ):
            least[dim] = param.default.single
    if not all(d in least for d in "MNKS"):
        return None
    # num_stages buffers even where the target's pipeliner allocates one fewer: the operand size the source shows may
    # be a cast of wider loads (flashlib's Ozaki kernel loads fp32 and casts to bf16), which the buffers hold as loaded
    return max(least["S"], 1) * (least["M"] * least["K"] + least["K"] * least["N"])


@register("triton_lds_budget")
def lds_budget(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT107: a GEMM config whose LDS estimate exceeds the target's LDS. Error when even the
    (stages - 1) estimate is over; warning when only the full estimate is."""
    inv = ctx.triton
    if inv is None:
        return
    sites: list[tuple[KernelInfo | None, dict[str, Val], cst.CSTNode, str, int | None, str | None]] = [
        (kernel, live_values(inv, {**c.meta, **c.options}, target), c.entry or c.node, where, c.index, c.guard)
        for kernel, c, where in config_sites(inv)
    ]
    sites += [
        (
            inv.kernel(site.kernel),
            live_values(inv, {**site.meta, **site.options}, target),
            site.anchor or site.node,
            "launch",
            None,
            site.guard,
        )
        for site in inv.launches
        if site.kernel_known
    ]
    worst: dict[int, tuple] = {}  # one finding per Config call / launch: a comprehension builds many
    for kernel, values, node, where, index, guard in sites:
        if kernel is None or skip_for_target(guard, target):
            continue
        est = estimate(values, kernel, target)
        if not _lds_over(est, target) or _model_lds_fits(values, kernel, target, est):
            continue
        if where == "autotune" and _list_has_fitting_entry(inv, kernel, target):
            continue  # Triton 3.9 raises OutOfResources for this entry at load and the autotuner keeps the others
        previous = worst.get(id(node))
        indices = (previous[5] if previous else []) + ([index] if index is not None else [])
        if previous is None or est.lds_bytes > previous[3].lds_bytes:
            worst[id(node)] = (kernel, node, where, est, index, indices)
        else:
            worst[id(node)] = previous[:5] + (indices,)
    for kernel, node, where, est, index, indices in worst.values():
        # an unknown operand dtype is never an error on the 2-byte guess: only when 1-byte operands are over
        severity: Severity = "error" if est.lds_ok is False and est.lds_bytes_low > target.lds_bytes else "warning"
        yield Hit(
            node,
            {
                "kernel": kernel.name,
                "where": where,
                "config_index": index,
                "config_indices": indices,
                "lds_bytes": est.lds_bytes,
                "lds_kib": round(est.lds_bytes / 1024, 1),
                "lds_bytes_low": est.lds_bytes_low,
                "limit": target.lds_bytes,
                "limit_kib": round(target.lds_bytes / 1024, 1),
                "formula": est.formula,
                "num_stages": est.num_stages,
                "blocks": {d: v[1] for d, v in est.blocks.items()},
                "elem_bytes": est.elem_bytes,
                "elem_bytes_source": est.elem_bytes_source,
            },
            severity=severity,
        )
