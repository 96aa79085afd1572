"""One recipe on one target: shard plan, memory per GPU, step time and throughput together."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from porter.plan.memory import MemoryBreakdown, ShardPlan, memory_per_gpu, shard, table_budget
from porter.plan.model import ModelDesc
from porter.plan.step import StepBreakdown, plan_constants, step_time
from porter.targets import Target


@dataclass
class Evaluation:
    label: str
    model: ModelDesc
    target: Target
    plan: ShardPlan
    memory: MemoryBreakdown
    step: StepBreakdown

    @property
    def throughput(self) -> float:
        """Samples per second over the whole job."""
        return self.model.global_batch / (self.step.total / 1e3)

    @property
    def per_gpu_throughput(self) -> float:
        return self.throughput / self.model.gpus

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "target": self.target.name,
            "gpus": self.model.gpus,
            "batch_size_per_gpu": self.model.batch_size_per_gpu,
            "global_batch": self.model.global_batch,
            "matmul_precision": self.model.matmul_precision,
            "effective_precision": self.step.precision,
            "fp8": self.model.fp8,
            "step_ms": round(self.step.total, 4),
            "throughput_samples_per_s": round(self.throughput, 1),
            "per_gpu_throughput": round(self.per_gpu_throughput, 1),
            "step_breakdown_ms": {k: round(v, 4) for k, v in self.step.components().items()},
            "memory_bytes": {k: int(v) for k, v in self.memory.categories().items()},
            "memory_total_bytes": int(self.memory.total),
            "memory_budget_bytes": int(self.memory.budget),
            "hbm_bytes": int(self.memory.capacity),
            "fits": self.memory.fits,
            "host_embedding_bytes": int(self.memory.host_embeddings),
            "placement": self.plan.summary(),
        }


def evaluate(
    model: ModelDesc, target: Target, label: str = "", auto: bool = False, constants: dict | None = None
) -> Evaluation:
    """Evaluate a recipe. auto=True re-plans sharding and placement for this target's HBM
    (every table sharded by the greedy sharder, spilling to UVM only what does not fit)."""
    constants = constants or plan_constants(target)
    if auto:
        model = model.replace(
            tables=tuple(
                dataclasses.replace(t, sharding="auto", placement="hbm", cache_fraction=1.0, cache_hit_rate=None)
                for t in model.tables
            )
        )
    budget = table_budget(model, target, constants)
    plan = shard(model, model.gpus, budget, auto_placement=auto)
    memory = memory_per_gpu(model, target, plan, constants)
    return Evaluation(label, model, target, plan, memory, step_time(model, target, plan, constants))
