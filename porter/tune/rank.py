"""Ranking candidate configs by predicted time: the public entry points."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from porter.errors import UsageError
from porter.targets import Target, get_target
from porter.tune.config import GemmConfig, parse_config
from porter.tune.constants import ModelConstants, constants_for
from porter.tune.dtypes import resolve_dtype
from porter.tune.model import Machine, infeasibility, pick_order, predict_seconds, time_seconds, unaligned_loads
from porter.tune.space import default_space


@dataclass(frozen=True)
class RankedConfig:
    config: dict[str, int]
    predicted_ms: float  # math.inf when infeasible
    feasible: bool = True
    reason: str | None = None  # why infeasible
    gemm_config: GemmConfig | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {**self.config, "predicted_ms": round(self.predicted_ms, 6)}


def _target(target: Target | str) -> Target:
    return target if isinstance(target, Target) else get_target(target)


MAX_GEMM_SIZE = 2**53  # exact as a float: the model's times stay finite


def _check_shape(m: int, n: int, k: int) -> None:
    for name, value in (("m", m), ("n", n), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"GEMM size {name} must be a positive integer, got {value!r}")
        if value > MAX_GEMM_SIZE:
            raise UsageError(f"GEMM size {name} must be at most 2**53, got a {value.bit_length()}-bit integer")


def rank_gemm(
    target: Target | str,
    dtype: str,
    m: int,
    n: int,
    k: int,
    candidates: Iterable[Any] | None = None,
    top: int | None = None,
    include_infeasible: bool = False,
    constants: ModelConstants | None = None,
) -> list[RankedConfig]:
    """Candidates (dicts or GemmConfig; the standard space when None) ranked best first by
    predicted time. Infeasible ones are dropped, or listed last with predicted_ms=inf and a
    reason when include_infeasible is set."""
    tgt = _target(target)
    _check_shape(m, n, k)
    machine = Machine.build(tgt, resolve_dtype(dtype, tgt), constants or constants_for(tgt))
    if candidates is None:
        configs = default_space(tgt, dtype, m)
    else:
        configs = [parse_config(raw, f"candidate {i}") for i, raw in enumerate(candidates)]
    timed, rejected = [], []
    for cfg in configs:
        unaligned = unaligned_loads(machine, n, k, cfg, m)
        reason = infeasibility(machine, cfg, unaligned)
        if reason is None:
            timed.append((time_seconds(machine, m, n, k, cfg, unaligned), cfg))
        elif include_infeasible:
            rejected.append(RankedConfig(cfg.to_dict(), math.inf, False, reason, gemm_config=cfg))
    ranked = [
        RankedConfig(timed[i][1].to_dict(), timed[i][0] * 1e3, gemm_config=timed[i][1])
        for i in pick_order(machine, m, timed)
    ]
    out = ranked + rejected
    return out[:top] if top else out


def predict_gemm_ms(
    target: Target | str,
    dtype: str,
    m: int,
    n: int,
    k: int,
    config: Any = None,
    constants: ModelConstants | None = None,
) -> float:
    """Predicted milliseconds of `config` (the best of the standard space when None); inf when
    the config is infeasible on the target."""
    if config is None:
        if constants is None:
            return _best_ms(_target(target).name, dtype, m, n, k)
        best = rank_gemm(target, dtype, m, n, k, top=1, constants=constants)
        return best[0].predicted_ms if best else math.inf
    tgt = _target(target)
    _check_shape(m, n, k)
    machine = Machine.build(tgt, resolve_dtype(dtype, tgt), constants or constants_for(tgt))
    return predict_seconds(machine, m, n, k, parse_config(config, "config")) * 1e3


@lru_cache(maxsize=4096)
def _pick_and_fastest_ms(target_name: str, dtype: str, m: int, n: int, k: int) -> tuple[float, float]:
    """One ranking of the standard space: the pick's predicted milliseconds and the lowest prediction."""
    ranked = rank_gemm(target_name, dtype, m, n, k)
    if not ranked:
        return math.inf, math.inf
    return ranked[0].predicted_ms, min(r.predicted_ms for r in ranked)


def _best_ms(target_name: str, dtype: str, m: int, n: int, k: int) -> float:
    return _pick_and_fastest_ms(target_name, dtype, m, n, k)[0]


def fastest_gemm_ms(target_name: str, dtype: str, m: int, n: int, k: int) -> float:
    """The lowest predicted milliseconds over the standard space: the pick's own time may sit above it, inside
    the model's noise, where a tie rule ordered a slower config first (model.pick_order)."""
    return _pick_and_fastest_ms(target_name, dtype, m, n, k)[1]


def explain_infeasible(target: Target | str, dtype: str, config: Any) -> str | None:
    """Why a config cannot run on the target (None when it can)."""
    tgt = _target(target)
    return infeasibility(Machine.build(tgt, resolve_dtype(dtype, tgt)), parse_config(config, "config"))
