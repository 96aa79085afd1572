"""Co-design proposals: changes to the recipe that use what the target has and the source lacks.

Every proposal is evaluated against the direct port (the source recipe, unchanged, on the target)
and carries: what to change, why (the target facts it rests on), and its projected step time,
throughput and memory. The combined plan applies the compatible proposals in order, so the
report can show where the speedup comes from (a waterfall).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from porter.plan.evaluate import Evaluation, evaluate
from porter.plan.gemm import align, effective_precision
from porter.plan.model import ModelDesc
from porter.targets import Target

BATCH_STEP = 1024  # per-GPU batch sizes the batch proposal tries are multiples of this
MAX_BATCH_GROWTH = 4  # beyond ~4x the learning-rate schedule rarely carries over


@dataclass
class Proposal:
    id: str
    title: str
    change: str
    why: str
    facts: dict
    result: Evaluation
    baseline: Evaluation
    notes: list[str] = field(default_factory=list)
    in_combined: bool = True

    @property
    def speedup(self) -> float:
        """Throughput (samples/s) over the direct port's."""
        return self.result.throughput / self.baseline.throughput

    @property
    def per_gpu_speedup(self) -> float:
        return self.result.per_gpu_throughput / self.baseline.per_gpu_throughput

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "change": self.change,
            "why": self.why,
            "facts": self.facts,
            "speedup_vs_direct_port": round(self.speedup, 4),
            "per_gpu_speedup_vs_direct_port": round(self.per_gpu_speedup, 4),
            "in_combined_plan": self.in_combined,
            "notes": self.notes,
            "projected": self.result.to_dict(),
        }


def _gb(value: float) -> str:
    return f"{value / 1e9:.1f} GB"


def hbm_resident(model: ModelDesc, target: Target, direct: Evaluation) -> Proposal | None:
    """Tables in HBM rather than UVM/host, resharded by size for the target's capacity."""
    offloaded = [t.name for t in model.tables if t.placement != "hbm"]
    resharded = evaluate(model, target, "hbm-resident, resharded", auto=True)
    if not offloaded and resharded.step.all_to_all >= direct.step.all_to_all:
        return None
    still = [name for name, where in resharded.plan.summary().items() if "uvm" in where or "host" in where]
    change = (
        f"place {', '.join(offloaded) or 'all tables'} in HBM and let the sharder re-shard by size "
        f"(row-wise only where a table would unbalance the GPUs): {_summary_changes(direct, resharded)}"
    )
    why = (
        f"{target.name} has {_gb(target.hbm_bytes)} of HBM per GPU "
        f"({_gb(target.hbm_bytes * (1 - model.headroom))} usable with {model.headroom:.0%} headroom); "
        f"UVM misses cross the host link ({target.extra.get('interconnect', {}).get('host_link', 'PCIe')}) and "
        f"row-wise shards multiply the all-to-all"
    )
    notes = [f"still offloaded: {', '.join(still)}"] if still else []
    return Proposal(
        "hbm-resident-tables",
        "HBM-resident tables, fewer shards",
        change,
        why,
        target.facts("hbm_bytes", "hbm_gbps", "interconnect"),
        resharded,
        direct,
        notes,
    )


def _summary_changes(before: Evaluation, after: Evaluation) -> str:
    old, new = before.plan.summary(), after.plan.summary()
    changed = [f"{name}: {old[name]} -> {new[name]}" for name in new if old.get(name) != new[name]]
    return "; ".join(changed[:6]) + (f"; and {len(changed) - 6} more" if len(changed) > 6 else "") or "no change"


def tf32_to_bf16x3(model: ModelDesc, target: Target, direct: Evaluation) -> Proposal | None:
    """Where the target has no TF32, run fp32 GEMMs as three bf16 products instead of full fp32."""
    if model.matmul_precision != "tf32" or target.tf32 != "none" or model.tf32_fallback == "bf16x3":
        return None
    changed = model.replace(tf32_fallback="bf16x3")
    result = evaluate(changed, target, "bf16x3", auto=False)
    bf16 = evaluate(model.replace(matmul_precision="bf16", activation_dtype="bf16"), target, "bf16")
    notes = [
        f"bf16 autocast instead (accuracy to re-validate): {bf16.step.total:.2f} ms/step, "
        f"{bf16.throughput / direct.throughput:.2f}x the direct port"
    ]
    return Proposal(
        "tf32-to-bf16x3",
        "TF32 matmuls as bf16x3",
        "keep fp32 weights and activations; run the MLP GEMMs with three bf16 products (Triton "
        "tl.dot(input_precision='bf16x3'), or hipBLASLt's emulated path), instead of the full-fp32 GEMMs "
        "a TF32 recipe falls back to",
        f"{target.name} has no TF32 (target.tf32 = {target.tf32!r}; fp32 dot precisions "
        f"{', '.join(target.fp32_dot_precisions)}): full fp32 runs at {target.peak_tflops('fp32'):.0f} TFLOP/s, "
        f"bf16x3 at about {target.peak_tflops('bf16') / 3:.0f} (a third of bf16's {target.peak_tflops('bf16'):.0f})",
        target.facts("tf32", "fp32_dot_precisions", "best_fp32_dot_precision"),
        result,
        direct,
        notes,
    )


def fp8_format(model: ModelDesc, source: Target, target: Target, direct: Evaluation) -> Proposal | None:
    """fp8 MLP GEMMs in the target's own format (carried over, or proposed as an option)."""
    if "fp8" not in target.matrix_flops_per_unit_clk:
        return None
    dtype = target.fp8_formats[model.fp8_format]
    source_dtype = source.fp8_formats.get(model.fp8_format, "none")
    rescale = source.fp8_e4m3_max != target.fp8_e4m3_max
    if model.fp8:
        result = direct
        change = f"store and compute fp8 as torch.{dtype} (source used torch.{source_dtype})"
    else:
        result = evaluate(model.replace(fp8=True), target, "fp8 MLP", auto=False)
        change = (
            f"optional: run the hidden MLP GEMMs in fp8 (torch.{dtype}, per-tensor scales; first and last "
            f"layer stay in {direct.step.precision})"
        )
    why = (
        f"{target.name} computes fp8 at {target.peak_tflops('fp8'):.0f} TFLOP/s in {target.fp8_family.upper()} "
        f"formats ({', '.join(target.fp8_formats.values())}), e4m3 max {target.fp8_e4m3_max:g}"
    )
    notes = []
    if rescale:
        notes.append(
            f"e4m3 max differs ({source.fp8_e4m3_max:g} on {source.name}, {target.fp8_e4m3_max:g} on "
            f"{target.name}): recompute scales; checkpoints do not carry over bit for bit"
        )
    if not model.fp8:
        notes.append("not in the combined plan: fp8 training needs accuracy validation")
    return Proposal(
        "fp8-format",
        f"fp8 as {dtype}",
        change,
        why,
        target.facts("fp8_formats", "fp8_family", "fp8_e4m3_max"),
        result,
        direct,
        notes,
        in_combined=model.fp8,
    )


def aligned_shapes(model: ModelDesc, target: Target, direct: Evaluation) -> Proposal | None:
    """Zero-pad the MLP input widths to the target's matrix-instruction K, list other odd widths."""
    precision = effective_precision(target, model.matmul_precision, model.tf32_fallback)
    _, n_align, k_align = align(target, "bf16" if precision == "bf16x3" else precision)
    multiple = max(n_align, k_align)
    inputs = {"dense features": model.dense.num_dense_features, "interaction output": model.interaction_width()}
    odd_inputs = {name: w for name, w in inputs.items() if w % multiple}
    odd_widths = [w for w in (*model.dense.bottom_mlp, *model.dense.top_mlp[:-1]) if w % multiple]
    odd_dims = sorted({t.dim for t in model.tables if t.dim % multiple})
    if not (odd_inputs or odd_widths or odd_dims):
        return None
    result = evaluate(model.replace(pad_inputs_to=multiple), target, "aligned", auto=False)
    padded = ", ".join(f"{name} {w} -> {-(-w // multiple) * multiple}" for name, w in odd_inputs.items())
    change = f"zero-pad {padded or 'nothing'} (function-preserving)"
    if odd_widths:
        change += f"; consider hidden widths {odd_widths} rounded to multiples of {multiple}"
    if odd_dims:
        change += f"; embedding dims {odd_dims} to multiples of {multiple}"
    shapes = target.mfma.get("bf16") if target.mfma else target.extra.get("mma_align")
    why = (
        f"{target.name}'s matrix instructions work on {shapes} (M, N, K[, cycles]) tiles: a K that is not a "
        f"multiple of {multiple} pays for the padded tile anyway and breaks 16-byte vector loads"
    )
    notes = ["the step model prices tile padding only; the vector-load effect is not modelled (measure it)"]
    return Proposal(
        "aligned-shapes",
        f"GEMM shapes aligned to {multiple}",
        change,
        why,
        target.facts("mfma", "wave_size"),
        result,
        direct,
        notes,
    )


def largest_fitting_batch(model: ModelDesc, target: Target, auto: bool, max_growth: float = MAX_BATCH_GROWTH) -> int:
    """Largest per-GPU batch (a multiple of BATCH_STEP above the current one, at most max_growth times
    it) whose memory fits; memory grows with the batch, so a binary search finds it."""

    def fits(batch: int) -> bool:
        return evaluate(model.replace(batch_size_per_gpu=batch), target, auto=auto).memory.fits

    low, high = 0, int(model.batch_size_per_gpu * (max_growth - 1)) // BATCH_STEP  # in BATCH_STEPs above now
    while low < high:
        mid = (low + high + 1) // 2
        if fits(model.batch_size_per_gpu + mid * BATCH_STEP):
            low = mid
        else:
            high = mid - 1
    return model.batch_size_per_gpu + low * BATCH_STEP


def larger_batch(
    model: ModelDesc,
    target: Target,
    direct: Evaluation,
    base: ModelDesc | None = None,
    auto: bool = True,
    max_growth: float = MAX_BATCH_GROWTH,
) -> Proposal | None:
    """The largest per-GPU batch that fits the target's HBM (after the placement change)."""
    base = base or model
    batch = largest_fitting_batch(base, target, auto, max_growth)
    if batch <= model.batch_size_per_gpu:
        return None
    best = evaluate(base.replace(batch_size_per_gpu=batch), target, "larger batch", auto=auto)
    growth = best.model.batch_size_per_gpu / model.batch_size_per_gpu
    change = (
        f"per-GPU batch {model.batch_size_per_gpu} -> {best.model.batch_size_per_gpu} "
        f"(global {model.global_batch} -> {best.model.global_batch})"
    )
    why = (
        f"{_gb(target.hbm_bytes)} of HBM leaves room for {growth:.1f}x the activations; larger GEMM M and "
        f"fewer fixed costs per sample"
    )
    notes = [
        f"learning rate: scale by {growth:.1f}x (SGD, linear rule) or sqrt({growth:.1f}) = {growth**0.5:.2f}x "
        f"(Adam/Adagrad), with a warm-up over the first few thousand steps; re-validate NE/AUC since the "
        f"global batch changes"
    ]
    return Proposal("larger-batch", "Larger per-GPU batch", change, why, target.facts("hbm_bytes"), best, direct, notes)


def job_sizes(gpus: int, per_node: int) -> list[int]:
    """GPU counts below `gpus` that a job is run on, ascending: any count within one node, whole nodes above."""
    return [n for n in range(1, gpus) if n <= per_node or n % per_node == 0]


def fewer_gpus(model: ModelDesc, target: Target, direct: Evaluation, base: ModelDesc | None = None) -> Proposal | None:
    """Same global batch on fewer GPUs: the smallest count that fits and keeps the direct port's speed,
    else the smallest that fits. Counts are job sizes (up to one node, then whole nodes), and each is judged
    by bisection: with the global batch fixed, memory per GPU falls and throughput rises with the count, so
    a 256-GPU job costs a few evaluations rather than 255."""
    base = base or model
    trials: dict[int, Evaluation] = {}

    def trial(gpus: int) -> Evaluation:
        if gpus not in trials:
            per_gpu = -(-model.global_batch // gpus)  # the global batch, rounded up to a multiple of the GPUs
            trials[gpus] = evaluate(
                base.replace(gpus=gpus, batch_size_per_gpu=per_gpu), target, f"{gpus} GPUs", auto=True
            )
        return trials[gpus]

    counts = job_sizes(model.gpus, model.gpus_per_node)
    fitting = counts[bisect_left(counts, True, key=lambda gpus: trial(gpus).memory.fits) :]
    if not fitting:
        return None
    pace = bisect_left(fitting, True, key=lambda gpus: trial(gpus).throughput >= direct.throughput)
    keeps_pace = pace < len(fitting)
    best = trial(fitting[pace] if keeps_pace else fitting[0])
    change = (
        f"{model.gpus} -> {best.model.gpus} GPUs, same global batch {model.global_batch} "
        f"(per-GPU {best.model.batch_size_per_gpu}, global {best.model.global_batch} after rounding)"
    )
    why = (
        f"{model.gpus} x {_gb(target.hbm_bytes)} holds more than the job needs; fewer GPUs means fewer shards "
        f"and less all-to-all"
    )
    notes = [
        f"{'keeps' if keeps_pace else 'does not keep'} the direct port's throughput on {model.gpus} GPUs; "
        f"per-GPU throughput {best.per_gpu_throughput / direct.per_gpu_throughput:.2f}x",
        "no learning-rate change: the global batch stays the same (up to rounding)",
    ]
    return Proposal(
        "fewer-gpus",
        "Fewer GPUs for the same job",
        change,
        why,
        target.facts("hbm_bytes"),
        best,
        direct,
        notes,
        in_combined=False,
    )


@dataclass
class CoDesign:
    source_current: Evaluation
    direct: Evaluation
    proposals: list[Proposal]
    waterfall: list[Evaluation]  # direct port, then each combined step applied in turn
    fewer_gpus_plan: Evaluation | None
    step_titles: list[str] = field(default_factory=list)  # the proposal behind each waterfall step

    @property
    def combined(self) -> Evaluation:
        return self.waterfall[-1]

    @property
    def speedup(self) -> float:
        return self.combined.throughput / self.direct.throughput


def co_design(model: ModelDesc, source: Target, target: Target) -> CoDesign:
    """Evaluate the source recipe on both targets, every proposal, and the combined plan."""
    source_current = evaluate(model, source, f"{source.name}: current recipe")
    direct = evaluate(model, target, f"{target.name}: direct port")
    proposals = [
        p
        for p in (
            hbm_resident(model, target, direct),
            tf32_to_bf16x3(model, target, direct),
            fp8_format(model, source, target, direct),
            aligned_shapes(model, target, direct),
            larger_batch(model, target, direct),
            fewer_gpus(model, target, direct),
        )
        if p is not None
    ]
    for proposal in proposals:  # only what the model projects to help joins the combined plan
        if proposal.speedup < 1.0 and proposal.id != "fewer-gpus" and proposal.in_combined:
            proposal.in_combined = False
            proposal.notes.append("not in the combined plan: no projected gain")
    waterfall, current = [direct], model
    auto = False
    for proposal in proposals:
        if not proposal.in_combined or proposal.id == "fewer-gpus":
            continue
        current, auto = _apply(proposal, current, auto)
        waterfall.append(evaluate(current, target, f"+ {proposal.title}", auto=auto))
    titles = [e.label for e in waterfall[1:]]
    if len(waterfall) > 1:
        waterfall[-1].label = f"{target.name}: co-design"
    fewer = fewer_gpus(model, target, direct, base=_without_batch(current, model))
    if fewer:
        fewer.result.label = f"{target.name}: co-design on {fewer.result.model.gpus} GPUs (same global batch)"
    return CoDesign(source_current, direct, proposals, waterfall, fewer.result if fewer else None, titles)


def _apply(proposal: Proposal, current: ModelDesc, auto: bool) -> tuple[ModelDesc, bool]:
    """Apply one proposal's change on top of the combined recipe so far."""
    changed = proposal.result.model
    if proposal.id == "hbm-resident-tables":
        return current, True
    if proposal.id == "tf32-to-bf16x3":
        return current.replace(tf32_fallback=changed.tf32_fallback), auto
    if proposal.id == "aligned-shapes":
        return current.replace(pad_inputs_to=changed.pad_inputs_to), auto
    if proposal.id == "larger-batch":
        return current.replace(batch_size_per_gpu=largest_fitting_batch(current, proposal.result.target, auto)), auto
    if proposal.id == "fp8-format":
        return current.replace(fp8=True), auto
    return current, auto


def _without_batch(current: ModelDesc, original: ModelDesc) -> ModelDesc:
    return current.replace(batch_size_per_gpu=original.batch_size_per_gpu)
