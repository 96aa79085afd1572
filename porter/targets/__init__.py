"""Target facts: one YAML file (specs.yaml) read into frozen `Target` records.

Everything that reasons about a GPU (rules, templates, the tuning and planning models) asks this
module, so a figure is corrected in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from porter.errors import UsageError

SPEC_FILE = "specs.yaml"


@dataclass(frozen=True)
class Target:
    name: str
    vendor: str  # amd | nvidia
    arch: str  # gfx942, gfx950, sm_90, sm_100
    family: str
    aliases: tuple[str, ...]
    units: int  # CUs or SMs
    clock_ghz: float
    wave_size: int
    max_threads_per_block: int
    lds_bytes: int  # shared memory / LDS usable by one block
    hbm_bytes: int
    hbm_gbps: float
    l2_bytes: int | None
    l2_scope: str  # "xcd": private per XCD; "device": one shared L2
    matrix_flops_per_unit_clk: dict[str, int]
    quoted_tflops: dict[str, float]
    fp8_formats: dict[str, str]  # {"e4m3": torch dtype name, "e5m2": ...}
    fp8_e4m3_max: float
    fp8_family: str  # ocp | fnuz
    tf32: str  # native | none
    fp32_dot_precisions: tuple[str, ...]
    best_fp32_dot_precision: str
    capability: tuple[int, int]
    features: dict[str, bool]
    triton: dict[str, Any]
    power_w: int
    xcds: int = 1
    mfma: dict[str, list[list[int]]] = field(default_factory=dict)
    registers: dict[str, int] = field(default_factory=dict)
    waves_per_simd_max: int | None = None
    simds_per_unit: int | None = None
    mall_bytes: int | None = None
    hbm_type: str = ""
    hbm_nominal_bytes: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # facts added by later models (interconnect...)

    @property
    def is_amd(self) -> bool:
        return self.vendor == "amd"

    @property
    def max_num_warps(self) -> int:
        """Largest Triton num_warps that launches: threads per block / lanes per wave."""
        return self.max_threads_per_block // self.wave_size

    @property
    def triton_target(self) -> tuple[str, int | str, int]:
        """(backend, arch, warp size) as triton.backends.compiler.GPUTarget takes them."""
        return (self.triton["backend"], self.triton["arch"], self.wave_size)

    def peak_tflops(self, dtype: str) -> float:
        """Dense matrix peak derived from per-clock rates: units x clock x FLOP/unit/clk."""
        per_clk = self.matrix_flops_per_unit_clk.get(dtype)
        if per_clk is None:
            raise KeyError(f"{self.name} has no matrix rate for {dtype}")
        return self.units * self.clock_ghz * 1e9 * per_clk / 1e12

    def facts(self, *keys: str) -> dict[str, Any]:
        """A small dict of named facts for a finding or patch to cite."""
        out: dict[str, Any] = {"target": self.name, "arch": self.arch}
        for key in keys:
            out[key] = getattr(self, key) if hasattr(self, key) else self.extra.get(key)
        return out


def _resolve_inheritance(raw: dict[str, dict]) -> dict[str, dict]:
    resolved: dict[str, dict] = {}

    def resolve(name: str, chain: tuple[str, ...] = ()) -> dict:
        if name in resolved:
            return resolved[name]
        if name in chain:
            raise UsageError(f"{SPEC_FILE}: inheritance loop through {name}")
        entry = dict(raw[name])
        parent = entry.pop("inherits", None)
        if parent:
            merged = dict(resolve(parent, chain + (name,)))
            merged.pop("aliases", None)
            merged.update(entry)
            entry = merged
        resolved[name] = entry
        return entry

    for name in raw:
        resolve(name)
    return resolved


_KNOWN_FIELDS = set(Target.__dataclass_fields__) - {"name", "extra"}


def _build(name: str, entry: dict) -> Target:
    known = {k: v for k, v in entry.items() if k in _KNOWN_FIELDS}
    extra = {k: v for k, v in entry.items() if k not in _KNOWN_FIELDS}
    known["aliases"] = tuple(known.get("aliases", ()))
    known["capability"] = tuple(known["capability"])
    known["fp32_dot_precisions"] = tuple(known["fp32_dot_precisions"])
    return Target(name=name, extra=extra, **known)


@lru_cache(maxsize=1)
def all_targets() -> dict[str, Target]:
    text = resources.files(__package__).joinpath(SPEC_FILE).read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    return {name: _build(name, entry) for name, entry in _resolve_inheritance(raw).items()}


def get_target(name_or_arch: str) -> Target:
    """Look a target up by name (mi350x), alias (mi350) or arch (gfx950, sm_90)."""
    key = name_or_arch.strip().lower()
    targets = all_targets()
    if key in targets:
        return targets[key]
    for target in targets.values():
        if key in target.aliases:
            return target
    names = ", ".join(sorted(targets))
    raise UsageError(f"unknown target {name_or_arch!r}; known targets: {names} (or a gfx arch: gfx942, gfx950)")
