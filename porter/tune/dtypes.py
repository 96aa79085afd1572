"""GEMM operand dtypes the model knows, and which target may run which."""

from __future__ import annotations

from dataclasses import dataclass

from porter.errors import UsageError
from porter.targets import Target


@dataclass(frozen=True)
class GemmDtype:
    name: str  # canonical: bf16, fp16, fp8e4m3, fp8e4m3fnuz, fp32
    in_bytes: int  # A and B element size
    out_bytes: int  # C element size (fp8 writes bf16)
    rate_key: str  # key into matrix_flops_per_unit_clk / mfma
    b_k_contiguous: bool = False  # fp8: B is column-major (K contiguous), as wgmma/MFMA fp8 want


_ALIASES = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "fp8": "fp8e4m3",
    "fp8e4m3": "fp8e4m3",
    "e4m3": "fp8e4m3",
    "fp8e4m3fn": "fp8e4m3",
    "float8_e4m3fn": "fp8e4m3",
    "fp8e4nv": "fp8e4m3",
    "fp8e4m3fnuz": "fp8e4m3fnuz",
    "float8_e4m3fnuz": "fp8e4m3fnuz",
    "e4m3fnuz": "fp8e4m3fnuz",
    "fp8e4b8": "fp8e4m3fnuz",
    "fp32": "fp32",
    "float32": "fp32",
    "float": "fp32",
}
_FP8_TORCH_NAME = {"fp8e4m3": "float8_e4m3fn", "fp8e4m3fnuz": "float8_e4m3fnuz"}
DTYPES = ("bf16", "fp16", "fp8e4m3", "fp8e4m3fnuz", "fp32")


def resolve_dtype(name: str, target: Target) -> GemmDtype:
    """Canonical dtype for `name` on `target`; a UsageError when the target lacks that format."""
    key = _ALIASES.get(str(name).strip().lower())
    if key is None:
        raise UsageError(f"unknown GEMM dtype {name!r}; known: {', '.join(DTYPES)}")
    if key in _FP8_TORCH_NAME:
        wanted = _FP8_TORCH_NAME[key]
        native = target.fp8_formats.get("e4m3")
        if wanted != native:
            other = "fp8e4m3fnuz" if native == "float8_e4m3fnuz" else "fp8e4m3"
            raise UsageError(
                f"dtype {key} ({wanted}) is not a format {target.name} ({target.arch}) computes in: its e4m3 "
                f"is {native} ({target.fp8_family.upper()}); use --dtype {other}"
                + ("; FNUZ fp8 runs only on gfx942" if key == "fp8e4m3fnuz" else "")
            )
        return GemmDtype(key, 1, 2, "fp8", b_k_contiguous=True)
    if key == "fp32":
        return GemmDtype(key, 4, 4, _fp32_rate_key(target))
    return GemmDtype(key, 2, 2, key)


def native_fp8(target: Target) -> str:
    """The porter dtype of the target's own fp8 e4m3: fp8e4m3fnuz on gfx942 (FNUZ), fp8e4m3 elsewhere. Where
    only the operand size is known (a 1-byte dot in scanned source), this is the format the target runs."""
    return "fp8e4m3fnuz" if target.fp8_formats.get("e4m3") == "float8_e4m3fnuz" else "fp8e4m3"


def _fp32_rate_key(target: Target) -> str:
    """fp32 dots run as the target's best precision: tf32 where native, bf16x3 on gfx950, else ieee."""
    best = target.best_fp32_dot_precision
    if best == "tf32" and "tf32" in target.matrix_flops_per_unit_clk:
        return "tf32"
    if best == "bf16x3":
        return "bf16x3"
    return "fp32"
