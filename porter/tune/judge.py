"""One voice for scan and tune: the analyzer's config rules (PT103 num_stages, PT106 NVIDIA-tuned
lists, PT107 LDS) ask porter.tune's model before calling a GEMM config wrong for a target.

A config is `near_best` when the model ranks it within NEAR of its best over the standard space
at one of a set of representative problems (PROBLEMS: LLM projections and recommendation MLPs,
M = 16 to 16384): such a config is one porter tune itself would pick, so deep stages in it are not
"copied from NVIDIA". The LDS a config needs is the model's (per the target's pipeliner), the
figure Triton's compile records match.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from porter.targets import Target
from porter.tune.config import GemmConfig, parse_config
from porter.tune.dtypes import GemmDtype, native_fp8, resolve_dtype
from porter.tune.model import Machine, infeasibility, lds_bytes, predict_seconds

NEAR = 1.03  # within 3% of the model's best: inside the H200 sweeps' timing noise (README)
# representative problems: M from decode to large batches, on square, wide (MLP up), deep (MLP
# down) and small (recommendation) N x K
PROBLEMS = tuple(
    (m, n, k)
    for m in (16, 32, 128, 512, 2048, 4096, 8192, 16384)
    for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (1024, 1024))
)


def dtype_for(elem_bytes: int | None, kernel_dtypes: tuple | list | set = ()) -> str:
    """The porter dtype a kernel's operand size stands for (2-byte: bf16 unless only fp16 shows)."""
    if elem_bytes == 1:
        return "fp8"
    if elem_bytes == 4:
        return "fp32"
    return "fp16" if "float16" in kernel_dtypes and "bfloat16" not in kernel_dtypes else "bf16"


def tune_dtype(dtype: str, target: Target) -> str:
    """dtype_for's name as porter tune takes it on the target: a 1-byte operand ("fp8") is the target's own e4m3
    (FNUZ on gfx942), so the model ranks fp8 kernels there instead of refusing float8_e4m3fn."""
    return native_fp8(target) if dtype == "fp8" else dtype


def _resolve(dtype: str, target: Target) -> GemmDtype:
    return resolve_dtype(tune_dtype(dtype, target), target)


def _config(raw: Mapping[str, int]) -> GemmConfig | None:
    try:
        return parse_config(dict(raw), "config")
    except Exception:  # noqa: BLE001 - a config the model cannot read is judged by the rule alone
        return None


def near_best(target: Target, dtype: str, raw: Mapping[str, int]) -> bool:
    """True when porter.tune would pick this config (within NEAR of its best) for some problem."""
    cfg = _config(raw)
    if cfg is None:
        return False
    try:
        gd = _resolve(dtype, target)
    except Exception:  # noqa: BLE001 - a dtype the target lacks: no verdict from the model
        return False
    return _near_best(target.name, gd.name, cfg)


@lru_cache(maxsize=4096)
def _near_best(target_name: str, dtype: str, cfg: GemmConfig) -> bool:
    from porter.targets import get_target
    from porter.tune.rank import fastest_gemm_ms

    target = get_target(target_name)
    machine = Machine.build(target, resolve_dtype(dtype, target))
    for m, n, k in PROBLEMS:
        mine = predict_seconds(machine, m, n, k, cfg) * 1e3
        if mine <= NEAR * fastest_gemm_ms(target_name, dtype, m, n, k):
            return True
    return False


def _readable(target: Target, dtype: str, raw: Mapping[str, int]) -> tuple[Machine, GemmConfig] | None:
    """The model's machine and config for a site's values; None when the model cannot read them."""
    cfg = _config(raw)
    if cfg is None:
        return None
    try:
        return Machine.build(target, _resolve(dtype, target)), cfg
    except Exception:  # noqa: BLE001 - an unknown dtype or target: the rule judges alone
        return None


def model_lds_bytes(target: Target, dtype: str, raw: Mapping[str, int]) -> int | None:
    """The LDS the model (and Triton's compile records) give this config; None when unreadable."""
    found = _readable(target, dtype, raw)
    return None if found is None else lds_bytes(*found)


def feasible(target: Target, dtype: str, raw: Mapping[str, int]) -> bool:
    found = _readable(target, dtype, raw)
    return found is not None and infeasibility(*found) is None
