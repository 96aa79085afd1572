"""Step-time model: one training step (forward, backward, optimizer) on the busiest GPU.

    step = smoothmax(host dispatch, GPU work) + host-side embedding work + exposed communication

GPU work: dense GEMMs (forward + dgrad + wgrad per Linear, priced through porter.plan.gemm),
dense memory traffic (bias/activation passes, interaction, dense optimizer) and embedding lookups
forward + backward with the fused optimizer update, as bytes over HBM; UVM cache misses cross the
host link inside the lookup kernels. A backward that materializes per-lookup gradients (plain
PyTorch sparse grads, `embedding_backward: sparse`) is priced per gradient element
(`sparse_grad_gelem_per_s`: gather, sort and atomic adds are not bandwidth-bound). Host-placed tables are looked up and updated on the CPU and
their pooled outputs and gradients cross the host link. Communication: all-to-all of pooled
embeddings (forward and backward) and all-reduce of dense gradients, which overlaps the dense
backward. Small batches are bound by the host issuing kernels (`step_overhead_ms`), large ones by
the GPU; the smooth maximum (power `overlap_power`) joins the two regimes.
"""

from __future__ import annotations

from dataclasses import dataclass

from porter.errors import UsageError
from porter.plan.gemm import effective_precision, gemm_ms
from porter.plan.memory import ShardPlan, act_bytes, dense_static_bytes, shard_bags, shard_lookups
from porter.plan.model import DTYPE_BYTES, ModelDesc
from porter.targets import Target

DEFAULT_CONSTANTS = {  # used only for keys a target's plan_model leaves out
    "gemm_efficiency": 0.6,
    "hbm_efficiency": 0.6,
    "host_link_efficiency": 0.7,
    "host_gather_gbps": 20.0,
    "comm_efficiency": 0.7,
    "step_overhead_ms": 1.0,
    "overlap_power": 3.0,
    "activation_factor": 2.0,
    "gemm_source": "roofline",
    "sparse_grad_gelem_per_s": 20.0,
}
ELEMENTWISE_PASSES = 5  # bias+activation: write+read forward, three passes backward
INTERACTION_PASSES = 3  # forward, and two for the backward


def plan_constants(target: Target) -> dict:
    """The target's step-model constants (specs.yaml `plan_model`), defaults filled in."""
    return {**DEFAULT_CONSTANTS, **(target.extra.get("plan_model") or {})}


@dataclass
class StepBreakdown:
    """Milliseconds per step by component; `total` joins them as the module docstring says."""

    dense_gemm: float
    dense_memory: float
    embedding_hbm: float
    embedding_uvm: float
    host_embedding: float
    all_to_all: float
    all_reduce_exposed: float
    dispatch: float
    overlap_power: float
    precision: str

    @property
    def gpu(self) -> float:
        return self.dense_gemm + self.dense_memory + self.embedding_hbm + self.embedding_uvm

    @property
    def compute(self) -> float:
        """Dispatch and GPU work joined by the smooth maximum."""
        p = self.overlap_power
        return (self.dispatch**p + self.gpu**p) ** (1 / p)

    @property
    def total(self) -> float:
        return self.compute + self.host_embedding + self.all_to_all + self.all_reduce_exposed

    def components(self) -> dict[str, float]:
        """Components that add up to `total` (dispatch shows only what the GPU work does not hide)."""
        return {
            "dense GEMMs": self.dense_gemm,
            "dense memory": self.dense_memory,
            "embeddings (HBM)": self.embedding_hbm,
            "embeddings (UVM misses)": self.embedding_uvm,
            "host-side embeddings": self.host_embedding,
            "all-to-all": self.all_to_all,
            "all-reduce (exposed)": self.all_reduce_exposed,
            "dispatch (exposed)": self.compute - self.gpu,
        }


def matmul_precision(model: ModelDesc, target: Target, layer: str) -> str:
    """Precision one MLP layer runs at on the target (fp8 for all but the first and last layer)."""
    last = model.mlp_layers()[-1][0]
    if model.fp8 and layer not in ("bottom0", last):
        return effective_precision(target, "fp8")
    return effective_precision(target, model.matmul_precision, model.tf32_fallback)


def dense_gemm_ms(model: ModelDesc, target: Target, constants: dict) -> tuple[float, float]:
    """(total, backward) ms of the MLP GEMMs: forward, dgrad and wgrad of every Linear."""
    batch = model.batch_size_per_gpu
    price = {"source": constants["gemm_source"], "roofline_efficiency": constants["gemm_efficiency"]}
    forward = backward = 0.0
    for name, fan_in, fan_out in model.mlp_layers():
        precision = matmul_precision(model, target, name)
        forward += gemm_ms(target, precision, batch, fan_out, fan_in, **price)
        backward += gemm_ms(target, precision, fan_in, fan_out, batch, **price)  # weight gradient
        if name != "bottom0":  # the dense input needs no gradient
            backward += gemm_ms(target, precision, batch, fan_in, fan_out, **price)
    return forward + backward, backward


def dense_memory_bytes(model: ModelDesc) -> float:
    """Bias/activation passes, the interaction and the dense optimizer, as HBM bytes."""
    batch, act = model.batch_size_per_gpu, act_bytes(model)
    widths = sum(out for _, _, out in model.mlp_layers())
    features = len(model.tables) + 1
    interaction = features * model.embedding_dim_out + (features * features if model.dense.interaction == "dot" else 0)
    params, grads, state = dense_static_bytes(model)
    return (
        ELEMENTWISE_PASSES * batch * widths * act
        + INTERACTION_PASSES * batch * interaction * act
        + 2 * params
        + grads
        + 2 * state
    )


def embedding_bytes(model: ModelDesc, plan: ShardPlan, gpu: int) -> dict[str, float]:
    """Per-step embedding bytes on one GPU: HBM, host link (UVM misses, host outputs), host memory."""
    out = {"hbm": 0.0, "uvm_link": 0.0, "host_link": 0.0, "host_memory": 0.0, "sparse_elems": 0.0}
    act = act_bytes(model)
    for s in plan.on_gpu(gpu):
        lookups, bags = shard_lookups(model, s), shard_bags(model, s)
        row = s.dim * DTYPE_BYTES[s.table.dtype]
        state = s.table.row_state_bytes * (s.dim / s.table.dim)
        touched = lookups * (row + 2 * (row + state))  # forward read; backward read-modify-write
        if model.embedding_backward == "sparse":  # per-lookup gradients: gather, sort, atomic add
            out["sparse_elems"] += lookups * s.dim
        pooled = 2 * bags * s.dim * act  # pooled outputs forward, their gradients backward
        if s.placement == "host":
            out["host_memory"] += touched
            out["host_link"] += pooled
            continue
        out["hbm"] += s.hit_rate * touched + pooled
        out["uvm_link"] += (1 - s.hit_rate) * touched
    return out


def interconnect(target: Target) -> dict:
    """The target's interconnect facts (specs.yaml `interconnect`)."""
    fabric = target.extra.get("interconnect")
    if not fabric:
        raise UsageError(f"target {target.name} has no interconnect facts in porter/targets/specs.yaml")
    return fabric


def scale_up_gbps(target: Target, peers: int) -> float:
    """Per-GPU, per-direction bandwidth to `peers` GPUs of the same node."""
    fabric = interconnect(target)
    if fabric["topology"] == "mesh":  # one direct link per peer
        return min(peers, fabric["links"]) * fabric["link_gbps_per_dir"]
    return fabric["gbps_per_dir"]


def _comm_ms(bytes_out: float, gpus: int, target: Target, model: ModelDesc, eff: float) -> float:
    """Time to send bytes spread evenly over all other GPUs, intra-node and scale-out in parallel."""
    if gpus <= 1 or bytes_out <= 0:
        return 0.0
    fabric = interconnect(target)
    node = min(model.gpus_per_node, fabric["node_gpus"], gpus)
    off_node = (gpus - node) / (gpus - 1)
    intra = bytes_out * (1 - off_node) / (scale_up_gbps(target, node - 1) * 1e9 * eff) if node > 1 else 0.0
    inter = bytes_out * off_node / (fabric["scale_out_gbps_per_dir"] * 1e9 * eff) if off_node else 0.0
    return max(intra, inter) * 1e3


def all_to_all_ms(model: ModelDesc, target: Target, plan: ShardPlan, constants: dict) -> float:
    """Pooled embeddings out to the GPUs that own the samples, forward and backward (busiest GPU)."""
    gpus = plan.gpus
    if gpus <= 1:
        return 0.0
    act, remote = act_bytes(model), model.global_batch - model.batch_size_per_gpu
    sent = [sum(remote * s.dim * act for s in plan.on_gpu(g) if s.kind != "data_parallel") for g in range(gpus)]
    return 2 * _comm_ms(max(sent), gpus, target, model, constants["comm_efficiency"])


def all_reduce_ms(model: ModelDesc, target: Target, plan: ShardPlan, constants: dict) -> float:
    """Ring all-reduce of dense gradients and replicated tables' gradients (hierarchical across nodes)."""
    gpus = plan.gpus
    if gpus <= 1:
        return 0.0
    size = dense_static_bytes(model)[1] + sum(s.table.param_bytes for s in plan.on_gpu(0) if s.kind == "data_parallel")
    return _comm_ms(2 * (gpus - 1) / gpus * size, gpus, target, model, constants["comm_efficiency"])


def step_time(model: ModelDesc, target: Target, plan: ShardPlan, constants: dict | None = None) -> StepBreakdown:
    """Predicted step time on the busiest GPU."""
    constants = constants or plan_constants(target)
    gemm, gemm_backward = dense_gemm_ms(model, target, constants)
    hbm_s = 1e9 * target.hbm_gbps * constants["hbm_efficiency"]
    link_s = 1e9 * interconnect(target)["host_link_gbps_per_dir"] * constants["host_link_efficiency"]
    per_gpu = [embedding_bytes(model, plan, g) for g in range(plan.gpus)]

    sparse_s = constants["sparse_grad_gelem_per_s"] * 1e9

    def emb_cost(b: dict) -> float:
        return (
            b["hbm"] / hbm_s
            + b["sparse_elems"] / sparse_s
            + b["uvm_link"] / link_s
            + b["host_link"] / link_s
            + b["host_memory"] / (constants["host_gather_gbps"] * 1e9)
        )

    busiest = max(per_gpu, key=emb_cost)
    all_reduce = all_reduce_ms(model, target, plan, constants)
    return StepBreakdown(
        dense_gemm=gemm,
        dense_memory=dense_memory_bytes(model) / hbm_s * 1e3,
        embedding_hbm=(busiest["hbm"] / hbm_s + busiest["sparse_elems"] / sparse_s) * 1e3,
        embedding_uvm=busiest["uvm_link"] / link_s * 1e3,
        host_embedding=(busiest["host_link"] / link_s + busiest["host_memory"] / (constants["host_gather_gbps"] * 1e9))
        * 1e3,
        all_to_all=all_to_all_ms(model, target, plan, constants),
        all_reduce_exposed=max(0.0, all_reduce - gemm_backward),
        dispatch=constants["step_overhead_ms"],
        overlap_power=constants["overlap_power"],
        precision=effective_precision(target, model.matmul_precision, model.tf32_fallback),
    )
