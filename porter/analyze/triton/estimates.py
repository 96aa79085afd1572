"""Per-config resource estimates against a target (threads, LDS). Estimates only: the verifier
reads the real figures from the kernel compiled for the target.

LDS of a pipelined GEMM: num_stages x (BLOCK_M x BLOCK_K + BLOCK_K x BLOCK_N) x element bytes. On
gfx950 with Triton 3.9 this is what the compiler allocates (shared/reference/measured.md); gfx942's stream
pipeliner allocates (num_stages - 1) x (...) for a launch Triton specializes as aligned (sizes and row strides
divisible by 16, as the JIT finds them for most tensors), a single buffer of the larger tile only where it cannot
prove that (bench/tune/amd_lds_alignment.py). `lds_bytes_low` is the (stages - 1) figure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from porter.analyze.triton import names
from porter.analyze.triton.fold import Val
from porter.analyze.triton.records import ConfigInfo, KernelInfo, LaunchSite
from porter.tune.constants import constants_for, stage_buffers

NOTE = (
    "estimate only: num_stages x (BM x BK + BK x BN) x element bytes; the AMD pipeliner allocates "
    "less on some Triton versions (gfx942), porter verify reads the compiled kernel's LDS"
)
TRITON_DEFAULT_NUM_WARPS = 4  # triton.Config and the launcher both default to 4


@dataclass
class Estimate:
    target: str
    num_warps: int | None
    threads: int | None
    thread_limit: int
    threads_ok: bool | None
    num_stages: int | None
    blocks: dict[str, list] = field(default_factory=dict)  # "M" -> [key, value]
    elem_bytes: int | None = None  # None: operand dtype not visible (lds figures then assume 2 bytes)
    elem_bytes_source: str = ""
    lds_bytes: int | None = None
    lds_bytes_low: int | None = None
    lds_limit: int = 0
    lds_ok: bool | None = None
    formula: str = ""
    note: str = NOTE

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _worst(val: Val | None) -> int | None:
    """Largest possible integer value (the case that can fail), None when unknown."""
    if val is None or not val.known or val.partial:
        return None
    ints = [v for v in val.values if isinstance(v, int) and not isinstance(v, bool)]
    return max(ints) if ints and len(ints) == len(val.values) else None


def block_sizes(values: dict[str, Val], kernel: KernelInfo | None) -> dict[str, list]:
    """{"M": [key, size], ...} from config/launch values, then the kernel's constexpr defaults."""
    found: dict[str, list] = {}
    sources = [values]
    if kernel is not None:
        sources.append({p.name: p.default for p in kernel.params if p.default is not None})
    for source in sources:
        for key, val in source.items():
            dim = names.block_dim(key)
            size = _worst(val)
            if dim and dim not in found and size is not None:
                found[dim] = [key, size]
    return found


def estimate(values: dict[str, Val], kernel: KernelInfo | None, target) -> Estimate:
    """Estimate for merged option/meta values (num_warps, num_stages, BLOCK_*)."""
    num_warps = _worst(values.get("num_warps")) if "num_warps" in values else TRITON_DEFAULT_NUM_WARPS
    threads = num_warps * target.wave_size if num_warps is not None else None
    est = Estimate(
        target=target.name,
        num_warps=num_warps,
        threads=threads,
        thread_limit=target.max_threads_per_block,
        threads_ok=None if threads is None else threads <= target.max_threads_per_block,
        num_stages=_worst(values.get("num_stages")),
        lds_limit=target.lds_bytes,
    )
    if kernel is None or not kernel.gemm_like:
        return est
    est.blocks = block_sizes(values, kernel)
    est.elem_bytes, est.elem_bytes_source = kernel.elem_bytes, kernel.elem_bytes_source
    if est.num_stages is None or not all(d in est.blocks for d in "MNK"):
        return est
    m, n, k = (est.blocks[d][1] for d in "MNK")
    stages, low_stages = max(est.num_stages, 1), max(est.num_stages - 1, 1)
    elements = m * k + k * n
    size = est.elem_bytes if est.elem_bytes is not None else names.ASSUMED_ELEM_BYTES
    est.lds_bytes = stages * elements * size
    est.lds_bytes_low = low_stages * elements * size
    est.formula = f"{stages} x ({m}x{k} + {k}x{n}) x {size} B"
    if est.elem_bytes is not None:
        est.lds_ok = est.lds_bytes <= target.lds_bytes
        return est
    # operand dtype unknown: over only if even 1-byte operands are, fits only if 4-byte ones do
    est.formula += " (operand dtype not visible: 2 bytes assumed)"
    const = constants_for(target)
    if const.lds_buffers == "stages_minus_one":
        return _stage_buffers_but_one(est, elements, stage_buffers(const, est.num_stages), target)
    est.lds_ok = (
        False
        if low_stages * elements > target.lds_bytes
        else True
        if stages * elements * 4 <= target.lds_bytes
        else None
    )
    return est


def _stage_buffers_but_one(est: Estimate, elements: int, low_stages: int, target) -> Estimate:
    """A target whose pipeliner allocates (num_stages - 1) stage buffers (gfx942's, for the aligned launches Triton's
    specialization gives most tensors; the tune model's `lds_buffers`): that figure is the estimate. Over when even
    1-byte operands are, fits when 4-byte ones do."""
    est.lds_bytes = est.lds_bytes_low = low_stages * elements * names.ASSUMED_ELEM_BYTES
    est.formula = est.formula.replace(f"{max(est.num_stages or 1, 1)} x (", f"{low_stages} x (", 1)
    est.formula += f"; {target.name} allocates num_stages - 1 buffers"
    limit = target.lds_bytes
    est.lds_ok = False if low_stages * elements > limit else True if low_stages * elements * 4 <= limit else None
    return est


def estimate_config(config: ConfigInfo, kernel: KernelInfo | None, target) -> Estimate:
    return estimate({**config.meta, **config.options}, kernel, target)


def estimate_launch(launch: LaunchSite, kernel: KernelInfo | None, target) -> Estimate:
    return estimate({**launch.meta, **launch.options}, kernel, target)
