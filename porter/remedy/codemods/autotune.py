"""Autotune lists for the target (PT103 num_stages, PT104 AMD knobs, PT106 NVIDIA-tuned list, PT107 LDS).

The NVIDIA list stays as written; an AMD list generated for the target is added beside the kernel and
the decorator picks one at import time:

    MATMUL_KERNEL_AMD_CONFIGS = [triton.Config({...,"matrix_instr_nonkdim": 16}, num_warps=8, num_stages=2), ...]
    @triton.autotune(configs=MATMUL_KERNEL_AMD_CONFIGS if porter_shim.IS_HIP else H100_CONFIGS, key=[...])

The AMD list comes from porter.tune's analytical model (its picks for the kernel's M buckets, among
the standard space and the user's configs made feasible), or, without the model or for non-GEMM
kernels, from the user's configs reshaped to fit: num_warps capped, num_stages set to the target's
guidance, BLOCK_K halved until the LDS estimate fits, configs that cannot fit dropped (never all).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

import libcst as cst

from porter.analyze.triton.names import NVIDIA_ONLY_KWARGS
from porter.remedy.codemods import CodemodResult, codemod
from porter.remedy.codemods._cst import code, ensure_shim_import

# AMD compile-option values added on the AMD branch when the target lists the knob in
# target.triton.amd_options; starting points from idioms.md T04 (ROCm workload guide, Inductor's ROCm
# GEMM defaults), meant to be tuned.
_KNOB_DEFAULTS = {"waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 1}
_MIN_BLOCK_K = 16
# Representative GEMM sizes for the model: one M per bucket (1..64, 65..1024, >1024); N and K are not
# known at rewrite time, 4096 stands in for a large projection.
_M_BUCKETS = (("M<=64", 32), ("64<M<=1024", 512), ("M>1024", 4096))
_NK = 4096
_DEFAULT_TOPK = 1


@dataclass
class _Cfg:
    meta: dict[str, int]
    num_warps: int
    num_stages: int
    predicted: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)  # other Config kwargs (pre_hook=...), as source text

    def key(self) -> tuple:
        return (tuple(sorted(self.meta.items())), self.num_warps, self.num_stages, tuple(sorted(self.extra.items())))


def _overlaps(span, lines: list[tuple[int, int]]) -> bool:
    return any(span.line <= end and span.end_line >= start for start, end in lines)


def _block_keys(meta: dict[str, Any]) -> dict[str, str]:
    from porter.analyze.triton import names

    out = {}
    for key in meta:
        dim = names.block_dim(key)
        if dim and dim not in out:
            out[dim] = key
    return out


def _lds(cfg: _Cfg, blocks: dict[str, str], elem_bytes: int) -> int | None:
    if not all(d in blocks for d in "MNK"):
        return None
    m, n, k = (cfg.meta[blocks[d]] for d in "MNK")
    return max(cfg.num_stages, 1) * (m * k + k * n) * elem_bytes


def _folded(config) -> _Cfg | None:
    """The config's literal values, or None when any of them is not a single known int."""
    meta = {}
    for key, val in config.meta.items():
        if not val.is_single or not isinstance(val.single, int):
            return None
        meta[key] = val.single
    options = {}
    for key in ("num_warps", "num_stages"):
        val = config.options.get(key)
        if val is not None and (not val.is_single or not isinstance(val.single, int)):
            return None
        options[key] = val.single if val is not None else None
    extra = {}
    for key in set(config.options) - {"num_warps", "num_stages"}:
        if key in NVIDIA_ONLY_KWARGS:
            continue  # the HIP backend rejects these: the AMD list leaves them out
        node = config.option_nodes.get(key)
        if node is None:
            return None
        extra[key] = code(node)
    stages = options["num_stages"] if options["num_stages"] is not None else 3
    return _Cfg(meta, options["num_warps"] or 4, stages, extra=dict(sorted(extra.items())))


def _footprint(cfg: _Cfg, elem_bytes: int) -> int:
    """Proportional to a kernel's LDS (scaled by a compiled kernel's measured LDS, _Plan.measured_scale):
    the GEMM estimate when the config has BLOCK_M/N/K, else stages x the product of the block sizes."""
    gemm = _lds(cfg, _block_keys(cfg.meta), elem_bytes)
    if gemm is not None:
        return gemm
    size = 1
    for key, value in cfg.meta.items():
        if names_block_dim(key):
            size *= value
    return max(cfg.num_stages, 1) * size * elem_bytes


def names_block_dim(key: str) -> str | None:
    from porter.analyze.triton import names

    return names.block_dim(key) or ("S" if key.upper().startswith("BLOCK") else None)


_FP32_DOT_KNOBS = frozenset({"input_precision", "allow_tf32"})


def _unseen_operand_bytes(kernel) -> int:
    """Operand size for a list that must launch when the source hides the dot operands' dtype: 4 bytes
    where a dot carries an fp32 precision knob (it only matters for fp32 operands, so they are expected),
    else 2. The analyzer's estimate (PT107) stays at the likely size; a rewritten list must fit the worst."""
    dots = getattr(kernel, "dot_nodes", None) or []
    if any(arg.keyword is not None and arg.keyword.value in _FP32_DOT_KNOBS for dot in dots for arg in dot.args):
        return 4
    return 2


class _Plan:
    """The AMD list for one autotune site."""

    def __init__(self, kernel, target, measured_scale: float | None = None, lds_limit: int | None = None):
        self.kernel = kernel
        self.target = target
        # measured LDS of a compiled config over porter's estimate of it: the estimate of every config is
        # multiplied by it (runtime findings, porter.remedy.codemods.runtime); None: the static estimate
        self.measured_scale = measured_scale
        self.lds_limit = lds_limit or target.lds_bytes
        self.gemm = kernel.gemm_like
        fused = len(getattr(kernel, "dot_nodes", [])) > 1 or not self.gemm
        self.stages = target.triton["fused_num_stages" if fused else "gemm_num_stages"]
        self.elem_bytes = kernel.elem_bytes or _unseen_operand_bytes(kernel)
        self.changes: list[str] = []
        self.notes: list[str] = []
        self.library: list[str] = []  # porter.tune's library advice, per M bucket

    def advise_library(self, label: str, dtype: str, m: int, triton_ms: float) -> None:
        """Note where the vendor BLAS is predicted faster than the best Triton config (or that no
        ceiling was measured for this target, once)."""
        from porter.tune.library import library_advice

        advice = library_advice(self.target, dtype, m, _NK, _NK, triton_ms)
        if advice.library_ms is None:
            if advice.note not in self.library:
                self.library.append(advice.note)
        elif advice.library_faster:
            self.library.append(
                f"{label} (M={m}, N=K={_NK}): {advice.library} predicted faster, "
                f"{advice.library_ms:.4f} ms against {triton_ms:.4f} ms for Triton's best"
            )

    def reshape(self, configs: list[_Cfg]) -> list[_Cfg]:
        out: list[_Cfg] = []
        for index, cfg in enumerate(configs):
            fitted = self._fit(cfg, index)
            if fitted is not None and fitted.key() not in {c.key() for c in out}:
                out.append(fitted)
        if not out:  # never leave an empty list: the smallest tile, squeezed as far as it goes
            smallest = min(configs, key=lambda c: _lds(c, _block_keys(c.meta), self.elem_bytes) or 0)
            squeezed = self._fit(smallest, configs.index(smallest), force=True)
            if squeezed is not None:  # force=True always fits one
                out.append(squeezed)
        return out

    def _fit(self, cfg: _Cfg, index: int, force: bool = False) -> _Cfg | None:
        new = _Cfg(
            dict(cfg.meta),
            min(cfg.num_warps, self.target.max_num_warps),
            min(cfg.num_stages, self.stages) or 1,
            extra=dict(cfg.extra),
        )
        if self.gemm:
            new.num_stages = self.stages
        blocks = _block_keys(new.meta)
        limit = self.lds_limit
        if self.measured_scale is not None:
            self._shrink_measured(new, blocks)
        while (
            (_lds(new, blocks, self.elem_bytes) or 0) > limit and "K" in blocks and new.meta[blocks["K"]] > _MIN_BLOCK_K
        ):
            new.meta[blocks["K"]] //= 2
        while (_lds(new, blocks, self.elem_bytes) or 0) > limit and new.num_stages > 1:
            new.num_stages -= 1
        lds = _lds(new, blocks, self.elem_bytes) if self.measured_scale is None else self.estimate(new)
        if lds is not None and lds > limit and not force:
            self.changes.append(
                f"config {index} dropped: {lds} B of LDS even at BLOCK_K={new.meta[blocks['K']]}, 1 stage"
            )
            return None
        if new.key() != cfg.key():
            self.changes.append(f"config {index}: {_describe(cfg)} -> {_describe(new)}")
        return new

    def estimate(self, cfg: _Cfg) -> int:
        """LDS of a config as the compiled kernel has it: the footprint times the measured ratio."""
        return int(_footprint(cfg, self.elem_bytes) * (self.measured_scale or 1.0))

    def _shrink_measured(self, cfg: _Cfg, blocks: dict[str, str]) -> None:
        """As the static fit: BLOCK_K halved, then fewer stages, then BLOCK_N and BLOCK_M halved, until the
        measured estimate fits; sizes never go below 16."""
        for step in ("K", "stages", "N", "M"):
            key = blocks.get(step)
            while step == "stages" and self.estimate(cfg) > self.lds_limit and cfg.num_stages > 1:
                cfg.num_stages -= 1
            while key and self.estimate(cfg) > self.lds_limit and cfg.meta[key] > _MIN_BLOCK_K:
                cfg.meta[key] //= 2

    def knobs(self, cfg: _Cfg) -> dict[str, int]:
        if not self.gemm:
            return {}
        allowed = self.target.triton.get("amd_options", [])
        return {k: v for k, v in _KNOB_DEFAULTS.items() if k in allowed and k not in cfg.meta}


def _describe(cfg: _Cfg) -> str:
    blocks = _block_keys(cfg.meta)
    tile = "x".join(str(cfg.meta[blocks[d]]) for d in "MNK" if d in blocks) or "x".join(
        str(v) for k, v in cfg.meta.items() if not k.upper().startswith("GROUP")
    )
    return f"{tile} w{cfg.num_warps} s{cfg.num_stages}"


def _model_picks(plan: _Plan, feasible: list[_Cfg], key: list | None, topk: int) -> list[_Cfg] | None:
    """porter.tune's best configs per M bucket, among its standard space and the feasible user configs."""
    from porter.tune import default_space, rank_gemm

    if any(c.extra != feasible[0].extra for c in feasible):
        plan.notes.append("configs differ in other Config options: AMD list reshaped, not model-picked")
        return None
    blocks = _block_keys(feasible[0].meta)
    group = next((k for k in feasible[0].meta if k.upper().startswith("GROUP")), None)
    if set(feasible[0].meta) - set(blocks.values()) - {group} or not all(d in blocks for d in "MNK"):
        plan.notes.append("kernel meta has keys beyond BLOCK_M/N/K/GROUP_M: AMD list reshaped, not model-picked")
        return None
    if key is not None and not any(str(k).upper().startswith("M") for k in key):
        plan.notes.append(f"autotune key {key} has no M: AMD list reshaped, not model-picked")
        return None
    from porter.tune.judge import dtype_for, tune_dtype

    # the dtype scan's judge reads from the same kernel (one voice)
    dtype = tune_dtype(dtype_for(plan.elem_bytes, plan.kernel.dtypes), plan.target)
    to_model = {blocks["M"]: "BLOCK_M", blocks["N"]: "BLOCK_N", blocks["K"]: "BLOCK_K"} | (
        {group: "GROUP_M"} if group else {}
    )
    from_model = {v: k for k, v in to_model.items()}
    user = [
        {**{to_model[k]: v for k, v in c.meta.items()}, "num_warps": c.num_warps, "num_stages": c.num_stages}
        for c in feasible
    ]

    def fits(raw: dict) -> bool:  # the same LDS estimate the analyzer (PT107) applies
        tile = _Cfg(
            {"BLOCK_M": raw["BLOCK_M"], "BLOCK_N": raw["BLOCK_N"], "BLOCK_K": raw["BLOCK_K"]}, 1, raw["num_stages"]
        )
        return (
            _lds(tile, {"M": "BLOCK_M", "N": "BLOCK_N", "K": "BLOCK_K"}, plan.elem_bytes) or 0
        ) <= plan.target.lds_bytes

    picks: dict[tuple, _Cfg] = {}
    try:
        for label, m in _M_BUCKETS:
            # the AMD branch pipelines at the target's guided depth: the model chooses tiles, warps and knobs
            space = [g.to_dict() for g in default_space(plan.target, dtype, m) if g.num_stages == plan.stages]
            candidates = [c for c in space if fits(c)] + user
            ranking = rank_gemm(plan.target, dtype, m, _NK, _NK, candidates=candidates, top=topk)
            if ranking:
                plan.advise_library(label, dtype, m, ranking[0].predicted_ms)
            for ranked in ranking:
                raw = dict(ranked.config)
                cfg = _Cfg(
                    {from_model.get(k, k): raw.pop(k) for k in list(raw) if k in from_model},
                    raw.pop("num_warps"),
                    raw.pop("num_stages"),
                    extra=dict(feasible[0].extra),
                )
                if group is None:
                    raw.pop("GROUP_M", None)
                cfg.meta.update(raw)  # model-set knobs (waves_per_eu, matrix_instr_nonkdim)
                picks.setdefault(cfg.key(), cfg).predicted.append(
                    f"{label} (M={m}, N=K={_NK}): {ranked.predicted_ms:.4f} ms"
                )
    except Exception as error:  # a model failure must not lose the rewrite: fall back to reshaping
        plan.notes.append(f"porter.tune failed ({type(error).__name__}: {error}); AMD list reshaped instead")
        return None
    return list(picks.values()) or None


def _render_list(name: str, configs: list[_Cfg], plan: _Plan, config_call: str, header: str) -> cst.SimpleStatementLine:
    lines = []
    for cfg in configs:
        meta = {**cfg.meta, **plan.knobs(cfg)}
        items = ", ".join(f'"{k}": {v}' for k, v in meta.items())
        comment = f"  # predicted {'; '.join(cfg.predicted)}" if cfg.predicted else ""
        extra = "".join(f", {k}={v}" for k, v in cfg.extra.items())
        lines.append(
            f"    {config_call}({{{items}}}, num_warps={cfg.num_warps}, num_stages={cfg.num_stages}{extra}),{comment}\n"
        )
    text = f"{name} = [\n{''.join(lines)}]\n"
    stmt = cast(cst.SimpleStatementLine, cst.parse_statement(text))  # `name = [...]`: one simple statement
    comments = [cst.EmptyLine(comment=cst.Comment(f"# {line}")) for line in header.splitlines()]
    return stmt.with_changes(leading_lines=comments)


def _configs_arg(decorator: cst.Decorator) -> cst.Arg | None:
    call = decorator.decorator
    if not isinstance(call, cst.Call):
        return None
    for index, arg in enumerate(call.args):
        if (arg.keyword is not None and arg.keyword.value == "configs") or (arg.keyword is None and index == 0):
            return arg
    return None


class _Rewrite(cst.CSTTransformer):
    def __init__(self, sites: dict[str, tuple[str, cst.SimpleStatementLine]], ctx):
        super().__init__()
        self.sites = sites  # kernel name -> (AMD list name, its statement)
        self.ctx = ctx

    def leave_Module(self, original, updated):
        body = []
        for stmt in updated.body:
            site = self._site(stmt)
            if site is not None:
                name, assignment = site
                body.append(
                    assignment.with_changes(leading_lines=list(stmt.leading_lines) + list(assignment.leading_lines))
                )
                stmt = self._decorate(stmt, name)
            body.append(stmt)
        return updated.with_changes(body=body)

    def _site(self, stmt):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in self.sites:
            return self.sites[stmt.name.value]
        return None

    def _decorate(self, fn: cst.FunctionDef, amd_name: str) -> cst.FunctionDef:
        decorators = []
        for decorator in fn.decorators:
            arg = _configs_arg(decorator) if code(decorator.decorator).split("(")[0].endswith("autotune") else None
            if arg is not None and isinstance(decorator.decorator, cst.Call):
                value = cst.parse_expression(
                    amd_name
                    if self.ctx.exclusive
                    else f"{amd_name} if {self.ctx.shim_alias}.IS_HIP else {code(arg.value)}"
                )
                call = decorator.decorator
                args = [a.with_changes(value=value) if a is arg else a for a in call.args]
                decorator = decorator.with_changes(decorator=call.with_changes(args=args))
            decorators.append(decorator)
        return fn.with_changes(decorators=decorators, leading_lines=[cst.EmptyLine(), cst.EmptyLine()])


def _config_call(source: str) -> str:
    """How the module spells triton.Config (`triton.Config`, or a from-imported `Config`)."""
    if re.search(r"^from triton import .*\bConfig\b", source, re.MULTILINE) and not re.search(
        r"^import triton\b", source, re.MULTILINE
    ):
        return "Config"
    return "triton.Config"


@codemod("PT103", "PT104", "PT106", "PT107")
def autotune_for_target(source, findings, target, ctx):
    """Runs before the other codemods of a file (porter_priority): it rewrites whole config lists."""
    from porter.analyze.triton import inventory_for_source

    inventory = inventory_for_source(source, ctx.path)
    spans = [(f.line, max(f.end_line, f.line)) for f in findings]
    sites, rationale_parts, notes, facts = {}, [], [], target.facts("lds_bytes", "max_num_warps", "wave_size")
    claimed = []
    facts["triton"] = {k: target.triton[k] for k in ("gemm_num_stages", "fused_num_stages", "amd_options")}
    for kernel in inventory.kernels:
        tune = kernel.autotune
        if tune is None:
            continue
        # a config built by a helper (`_config(128, 256, ...)`) is reported at its list entry, not in the helper
        sites_of_list = [tune.span] + [s for c in tune.configs for s in (c.span, c.entry_span)]
        if not any(_overlaps(site, spans) for site in sites_of_list):
            continue
        decline = _decline_reason(kernel, tune, ctx)
        if decline:
            notes.append(f"{kernel.name}: {decline}")
            continue
        configs = [_folded(c) for c in tune.configs]
        plan = _Plan(kernel, target)
        feasible = plan.reshape(configs)
        topk = ctx.options.get("tune_topk") or _DEFAULT_TOPK
        picked = _model_picks(plan, feasible, tune.key, topk) if plan.gemm else None
        amd = picked or feasible
        name = f"{kernel.name.upper().lstrip('_')}_AMD_CONFIGS"
        how = (
            f"porter.tune picks (top {topk} per M bucket, N=K={_NK} assumed)"
            if picked
            else "the NVIDIA list reshaped to fit"
        )
        header = (
            f"porter: autotune configs for {target.name} ({target.arch}): {how}; num_warps <= "
            f"{target.max_num_warps}, num_stages {plan.stages}, LDS estimate <= {target.lds_bytes} B."
            + "".join(f"\nlibrary: {line}" for line in plan.library)
        )
        sites[kernel.name] = (name, _render_list(name, amd, plan, _config_call(source), header))
        claimed += [f for f in findings if _about_site(f, kernel.name, sites_of_list)]
        rationale_parts.append(
            f"{kernel.name}: {len(tune.configs)} NVIDIA configs -> {len(amd)} AMD configs ({how}). "
            + ("Candidates from the NVIDIA list, made feasible: " if picked else "Reshaped: ")
            + "; ".join(plan.changes[:12])
            + (" ..." if len(plan.changes) > 12 else "")
            + (
                ""
                if not picked
                else " Predicted: " + " | ".join(f"{_describe(c)}: {', '.join(c.predicted)}" for c in amd)
            )
        )
        notes.extend(plan.notes)
    if not sites:
        return None
    new = cst.parse_module(source).visit(_Rewrite(sites, ctx)).code
    if not ctx.exclusive:
        new = ensure_shim_import(new, ctx)
    lead = (
        f"{target.name} has {target.lds_bytes} B of LDS per workgroup, {target.wave_size}-lane waves (num_warps <= "
        f"{target.max_num_warps}) and AMD's pipeliner wants num_stages {target.triton['gemm_num_stages']} for a GEMM; "
        + (
            "the NVIDIA list is kept for CUDA and an AMD list is chosen when porter_shim.IS_HIP. "
            if not ctx.exclusive
            else "the AMD list replaces the NVIDIA one (--exclusive). "
        )
    )
    return CodemodResult(
        text=new,
        rationale=lead + " ".join(rationale_parts),
        notes=notes,
        uses_shim=not ctx.exclusive,
        facts=facts,
        safety="unsafe",
        claimed=claimed,
    )


def _about_site(finding, kernel: str, spans) -> bool:
    """Whether a finding is about this autotune list (its data names the kernel and an autotune config, or it
    sits on the decorator or a config), not about a launch site or a kernel default."""
    where = finding.data.get("where")
    if where is not None and where != "autotune":
        return False
    if finding.data.get("kernel") == kernel:
        return True
    return any(_overlaps(span, [(finding.line, max(finding.end_line, finding.line))]) for span in spans)


def _decline_reason(kernel, tune, ctx) -> str | None:
    if not tune.configs or not tune.complete:
        return "autotune configs could not be folded completely; left for review"
    if any(c.guard for c in tune.configs) or any(c.amd_knobs for c in tune.configs):
        return "the list already has an AMD branch or AMD knobs"
    decorator_text = " ".join(code(d) for d in kernel.node.decorators)
    if "IS_HIP" in decorator_text or "_AMD_CONFIGS" in decorator_text:
        return "already rewritten for AMD"
    if any(_folded(c) is None for c in tune.configs):
        return "some configs have values porter cannot fold to integers (or NVIDIA-only options)"
    return None


autotune_for_target.porter_priority = 0  # type: ignore[attr-defined]  # a marker the planner reads with getattr
