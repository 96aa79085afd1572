"""Sharding and the per-GPU memory model.

A `ShardPlan` says which part of which table lives on which GPU and how much of it sits in HBM;
`memory_per_gpu` adds the dense model, its optimizer state, activations and embedding workspace,
and compares the busiest GPU with the target's HBM less the headroom the recipe keeps free.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from porter.plan.model import DTYPE_BYTES, ModelDesc, Table, hbm_hit_rate
from porter.targets import Target

# Sharder heuristics (choices, not hardware facts).
DATA_PARALLEL_MAX_BYTES = 64 * 2**20  # tables this small are replicated rather than sharded
TABLE_WISE_MAX_SHARE = 0.5  # a table bigger than this share of the mean per-GPU table load goes row-wise
COLUMN_SHARD_MIN_DIM = 32


@dataclass(frozen=True)
class Shard:
    table: Table
    gpu: int
    kind: str  # table_wise | row_wise | column_wise | data_parallel
    row_share: float = 1.0  # share of the table's rows (and of its lookups) this shard holds
    dim: int = 0  # columns this shard holds
    placement: str = "hbm"
    cache_fraction: float = 1.0  # share of this shard's bytes resident in HBM

    @property
    def bytes(self) -> float:
        return self.table.total_bytes * self.row_share * self.dim / self.table.dim

    @property
    def hbm_bytes(self) -> float:
        return self.bytes * self.cache_fraction

    @property
    def hit_rate(self) -> float:
        # the table's measured hit rate describes its UVM cache; a shard placed otherwise has none
        measured = self.table.cache_hit_rate if self.table.placement == "uvm" else None
        return hbm_hit_rate(self.placement, self.cache_fraction, measured)


@dataclass
class ShardPlan:
    gpus: int
    shards: list[Shard] = field(default_factory=list)

    def on_gpu(self, gpu: int) -> list[Shard]:
        return [s for s in self.shards if s.gpu == gpu]

    def hbm_load(self, gpu: int) -> float:
        return sum(s.hbm_bytes for s in self.on_gpu(gpu))

    def host_bytes(self) -> float:
        return sum(s.bytes - s.hbm_bytes for s in self.shards)

    def summary(self) -> dict[str, str]:
        """table -> 'row_wise x8, hbm' style description."""
        out: dict[str, str] = {}
        for shard in self.shards:
            kinds = [s for s in self.shards if s.table.name == shard.table.name]
            place = shard.placement if shard.placement != "uvm" else f"uvm {shard.cache_fraction:.0%} cached"
            where = f"gpu{shard.gpu}" if len(kinds) == 1 else f"x{len(kinds)}"
            out.setdefault(shard.table.name, f"{shard.kind} {where}, {place}")
        return out


def _split_columns(table: Table, gpus: int) -> int:
    return table.shards or max(1, min(gpus, table.dim // COLUMN_SHARD_MIN_DIM))


def auto_kind(table: Table, gpus: int, mean_load: float) -> str:
    """The greedy sharder's choice for one table: replicate the tiny, keep whole what balances,
    split by rows what would unbalance the GPUs."""
    if gpus == 1:
        return "table_wise"
    if table.total_bytes <= DATA_PARALLEL_MAX_BYTES:
        return "data_parallel"
    if table.total_bytes <= TABLE_WISE_MAX_SHARE * mean_load:
        return "table_wise"
    return "row_wise"


def shard(model: ModelDesc, gpus: int, table_budget: float, auto_placement: bool = False) -> ShardPlan:
    """Place every table: explicit shardings as given, `auto` by the greedy sharder (biggest first,
    each onto the least-loaded GPU). With auto_placement, a GPU over its table budget first has its
    largest auto table-wise table split row-wise; what still does not fit becomes UVM-cached with the
    cache fraction that fills the budget."""
    forced_row_wise: set[str] = set()
    while True:
        plan = _greedy(model, gpus, forced_row_wise)
        if not auto_placement:
            return plan
        over = [g for g in range(gpus) if plan.hbm_load(g) > table_budget]
        movable = [
            s
            for g in over
            for s in plan.on_gpu(g)
            if s.kind == "table_wise" and s.table.sharding == "auto" and gpus > 1
        ]
        if not movable:
            return _spill_to_uvm(plan, table_budget)
        forced_row_wise.add(max(movable, key=lambda s: s.bytes).table.name)


def _greedy(model: ModelDesc, gpus: int, forced_row_wise: set[str]) -> ShardPlan:
    plan = ShardPlan(gpus)
    load = [0.0] * gpus
    mean_load = sum(t.total_bytes * _cache_fraction(t) for t in model.tables) / gpus
    for table in sorted(model.tables, key=lambda t: -t.total_bytes):
        kind = table.sharding if table.sharding != "auto" else auto_kind(table, gpus, mean_load)
        if table.name in forced_row_wise:
            kind = "row_wise"
        cache = _cache_fraction(table)
        for gpu, share, dim in _pieces(table, kind, gpus, load):
            piece = Shard(table, gpu, kind, share, dim, table.placement, cache)
            plan.shards.append(piece)
            load[gpu] += piece.hbm_bytes
    return plan


def _cache_fraction(table: Table) -> float:
    return {"hbm": 1.0, "host": 0.0}.get(table.placement, table.cache_fraction)


def _pieces(table: Table, kind: str, gpus: int, load: list[float]):
    """(gpu, row share, columns) for each shard of a table."""
    if kind == "data_parallel":
        return [(g, 1.0, table.dim) for g in range(gpus)]
    if kind == "row_wise":
        count = min(table.shards or gpus, gpus)
        chosen = sorted(range(gpus), key=lambda g: (load[g], g))[:count]
        return [(g, 1.0 / count, table.dim) for g in chosen]
    if kind == "column_wise":
        count = min(_split_columns(table, gpus), gpus)
        chosen = sorted(range(gpus), key=lambda g: (load[g], g))[:count]
        base, extra = divmod(table.dim, count)
        return [(g, 1.0, base + (1 if i < extra else 0)) for i, g in enumerate(chosen)]
    least = min(range(gpus), key=lambda g: (load[g], g))
    return [(least, 1.0, table.dim)]


def _spill_to_uvm(plan: ShardPlan, table_budget: float) -> ShardPlan:
    """Turn the largest HBM shards of an overfull GPU into UVM-cached shards until it fits."""
    shards = list(plan.shards)
    for gpu in range(plan.gpus):
        excess = plan.hbm_load(gpu) - table_budget
        for shard_ in sorted((s for s in shards if s.gpu == gpu), key=lambda s: -s.hbm_bytes):
            if excess <= 0:
                break
            keep = max(0.0, shard_.hbm_bytes - excess)
            fraction = keep / shard_.bytes if shard_.bytes else 0.0
            excess -= shard_.hbm_bytes - keep
            shards[shards.index(shard_)] = Shard(
                shard_.table, gpu, shard_.kind, shard_.row_share, shard_.dim, "uvm", fraction
            )
        plan = ShardPlan(plan.gpus, shards)
    return plan


# ---------------------------------------------------------------- memory per GPU


@dataclass
class MemoryBreakdown:
    """Bytes on the busiest GPU (by embedding HBM load), by category."""

    embeddings: float
    dense_params: float
    dense_grads: float
    dense_optimizer: float
    activations: float
    embedding_workspace: float
    host_embeddings: float  # all GPUs together, outside HBM
    capacity: float
    headroom: float

    @property
    def total(self) -> float:
        return (
            self.embeddings
            + self.dense_params
            + self.dense_grads
            + self.dense_optimizer
            + self.activations
            + self.embedding_workspace
        )

    @property
    def budget(self) -> float:
        return self.capacity * (1 - self.headroom)

    @property
    def fits(self) -> bool:
        return self.total <= self.budget

    def categories(self) -> dict[str, float]:
        return {
            "embeddings (HBM)": self.embeddings,
            "dense params": self.dense_params,
            "dense grads": self.dense_grads,
            "dense optimizer": self.dense_optimizer,
            "activations": self.activations,
            "embedding workspace": self.embedding_workspace,
        }


def act_bytes(model: ModelDesc) -> float:
    return DTYPE_BYTES[model.activation_dtype]


def dense_static_bytes(model: ModelDesc) -> tuple[float, float, float]:
    """(params, grads, optimizer state) of the replicated dense part, plus data-parallel tables' grads."""
    params = model.dense_params()
    param_bytes = params * DTYPE_BYTES[model.dense.param_dtype]
    state_words = {"sgd": 0, "adagrad": 1, "adam": 2}[model.dense_optimizer]
    return param_bytes, params * 4, params * 4 * state_words


def activation_bytes(model: ModelDesc, batch: int, factor: float) -> float:
    """Saved activations and their gradients for one local batch (factor covers grads/workspace)."""
    features = len(model.tables) + 1
    widths = (
        model.dense.num_dense_features
        + sum(model.dense.bottom_mlp)
        + model.interaction_width()
        + sum(model.dense.top_mlp)
        + sum(t.dim for t in model.tables)
    )
    interaction = features * model.embedding_dim_out + (features * features if model.dense.interaction == "dot" else 0)
    return factor * batch * (widths + interaction) * act_bytes(model)


def shard_lookups(model: ModelDesc, shard_: Shard) -> float:
    """Lookups one shard serves per step: the global batch for model-parallel shards."""
    batch = model.batch_size_per_gpu if shard_.kind == "data_parallel" else model.global_batch
    return batch * shard_.table.pooling * shard_.row_share


def shard_bags(model: ModelDesc, shard_: Shard) -> float:
    """Pooled outputs one shard writes per step."""
    return model.batch_size_per_gpu if shard_.kind == "data_parallel" else model.global_batch


def embedding_workspace_bytes(model: ModelDesc, shards: list[Shard]) -> float:
    """Indices, pooled outputs before the all-to-all (and their grads), data-parallel table grads,
    and per-lookup gradients when the backward materializes them."""
    total = 0.0
    for s in shards:
        lookups = shard_lookups(model, s)
        total += lookups * 8 + 2 * shard_bags(model, s) * s.dim * act_bytes(model)
        if model.embedding_backward == "sparse":
            total += lookups * s.dim * DTYPE_BYTES[s.table.dtype]
        if s.kind == "data_parallel":
            total += s.table.param_bytes  # dense gradient of a replicated table, all-reduced
    return total


def table_budget(model: ModelDesc, target: Target, constants: dict) -> float:
    """HBM left for embedding tables on one GPU after the dense part, activations and headroom."""
    params, grads, state = dense_static_bytes(model)
    acts = activation_bytes(model, model.batch_size_per_gpu, constants["activation_factor"])
    return target.hbm_bytes * (1 - model.headroom) - params - grads - state - acts


def memory_per_gpu(model: ModelDesc, target: Target, plan: ShardPlan, constants: dict) -> MemoryBreakdown:
    """Memory on the GPU with the most embedding bytes in HBM."""
    busiest = max(range(plan.gpus), key=lambda g: (plan.hbm_load(g), -g))
    shards = plan.on_gpu(busiest)
    params, grads, state = dense_static_bytes(model)
    return MemoryBreakdown(
        embeddings=plan.hbm_load(busiest),
        dense_params=params,
        dense_grads=grads,
        dense_optimizer=state,
        activations=activation_bytes(model, model.batch_size_per_gpu, constants["activation_factor"]),
        embedding_workspace=embedding_workspace_bytes(model, shards),
        host_embeddings=plan.host_bytes(),
        capacity=target.hbm_bytes,
        headroom=model.headroom,
    )
