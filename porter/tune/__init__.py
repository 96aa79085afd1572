"""Analytical GEMM performance model: zero-warmup Triton config selection (`porter tune`).

rank_gemm(target, dtype, m, n, k, candidates=None, top=None) -> list[RankedConfig]
predict_gemm_ms(target, dtype, m, n, k, config=None) -> float
default_space(target, dtype, m) -> list[GemmConfig]
"""

from porter.tune.config import GemmConfig, parse_config
from porter.tune.constants import ModelConstants, constants_for
from porter.tune.dtypes import resolve_dtype
from porter.tune.rank import RankedConfig, explain_infeasible, predict_gemm_ms, rank_gemm
from porter.tune.space import default_space as _default_space


def default_space(target, dtype: str, m: int) -> list[GemmConfig]:
    """Feasible standard-space configs (perfmodel.md) for `dtype` on `target` (name or Target)."""
    from porter.tune.rank import _target

    return _default_space(_target(target), dtype, m)


__all__ = [
    "GemmConfig",
    "ModelConstants",
    "RankedConfig",
    "constants_for",
    "default_space",
    "explain_infeasible",
    "parse_config",
    "predict_gemm_ms",
    "rank_gemm",
    "resolve_dtype",
]
