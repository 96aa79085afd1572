"""Triton GEMM launch configurations: parsing, validation and the dict form the CLI prints."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from porter.errors import UsageError

REQUIRED_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages")
OPTIONAL_KEYS = ("GROUP_M", "waves_per_eu", "matrix_instr_nonkdim", "kpack", "NUM_KSPLIT")
_SYNONYMS = {
    "BLOCK_SIZE_M": "BLOCK_M",
    "BLOCK_SIZE_N": "BLOCK_N",
    "BLOCK_SIZE_K": "BLOCK_K",
    "GROUP_SIZE_M": "GROUP_M",
    "SPLIT_K": "NUM_KSPLIT",
}
DEFAULT_GROUP_M = 8
MAX_VALUE = 2**31 - 1  # no tile, warp count, stage count or knob comes near it; past it the model's floats overflow


@dataclass(frozen=True)
class GemmConfig:
    BLOCK_M: int
    BLOCK_N: int
    BLOCK_K: int
    num_warps: int
    num_stages: int
    GROUP_M: int | None = None
    waves_per_eu: int | None = None
    matrix_instr_nonkdim: int | None = None
    kpack: int | None = None  # AMD gfx942: MFMA operands loaded kpack x the instruction's K per lane
    NUM_KSPLIT: int | None = None  # split-K (AMD aiter's GEMMs): K in this many slices, fp32 partials reduced

    @property
    def k_splits(self) -> int:
        return self.NUM_KSPLIT or 1

    @property
    def group_m(self) -> int:
        return self.GROUP_M if self.GROUP_M is not None else DEFAULT_GROUP_M

    def to_dict(self) -> dict[str, int]:
        """Config keys in a stable order; optional knobs only when set."""
        out = {key: getattr(self, key) for key in REQUIRED_KEYS}
        out.update({key: getattr(self, key) for key in OPTIONAL_KEYS if getattr(self, key) is not None})
        return out


def parse_config(raw: Any, where: str = "candidate") -> GemmConfig:
    """A GemmConfig from a dict (or GemmConfig); UsageError naming `where` and the bad key."""
    if isinstance(raw, GemmConfig):
        return raw
    if not isinstance(raw, Mapping):
        raise UsageError(f"{where}: expected an object with keys {', '.join(REQUIRED_KEYS)}, got {type(raw).__name__}")
    if (
        raw.keys() <= _CANONICAL
        and all(type(v) is int and (0 < v <= MAX_VALUE or (v == 0 and key in _ZERO_OK)) for key, v in raw.items())
        and _has_required(raw)
    ):
        if all(not (raw[key] & (raw[key] - 1)) for key in _POWER_OF_TWO):
            return GemmConfig(**raw)  # fast path: already canonical, positive ints, power-of-two tiles
    values: dict[Any, Any] = {}
    for key, value in raw.items():
        name = _SYNONYMS.get(key, key)
        if name in values:
            raise UsageError(f"{where}: key {key!r} sets {name!r} a second time (it is a synonym)")
        values[name] = value
    unknown = sorted(set(values) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)})")
    for key in REQUIRED_KEYS:
        if key not in values:
            raise UsageError(f"{where}: missing key {key!r}")
    for key, value in values.items():
        _check_int(value, key, where)
    return GemmConfig(**values)


_CANONICAL = frozenset(REQUIRED_KEYS + OPTIONAL_KEYS)
# tl.arange needs power-of-two tiles; Triton's compile options assert num_warps is a power of two (CUDA and HIP)
_POWER_OF_TWO = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps")
_ZERO_OK = frozenset(("waves_per_eu", "matrix_instr_nonkdim"))  # 0: the compiler's choice


def _has_required(raw: Mapping) -> bool:
    return all(key in raw for key in REQUIRED_KEYS)


def _check_int(value: Any, key: str, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{where}: key {key!r} must be an integer, got {value!r}")
    floor = 0 if key in _ZERO_OK else 1
    if value < floor:
        raise UsageError(f"{where}: key {key!r} must be >= {floor}, got {value}")
    if value > MAX_VALUE:
        raise UsageError(f"{where}: key {key!r} must be at most 2**31 - 1, got a {value.bit_length()}-bit integer")
    if key in _POWER_OF_TWO and value & (value - 1):
        why = "tl.arange needs one" if key.startswith("BLOCK_") else "Triton requires one"
        raise UsageError(f"{where}: key {key!r} must be a power of two ({why}), got {value}")
