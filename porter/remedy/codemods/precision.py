"""TF32 dot precision in Triton (PT114): `allow_tf32=True` / `input_precision="tf32"` per target."""

from __future__ import annotations

import libcst as cst

from porter.remedy.codemods import codemod
from porter.remedy.codemods._cst import LineScoped, code, finish, string_value, transform


class _DotPrecision(LineScoped):
    def leave_Arg(self, original, updated):
        if updated.keyword is None or not self.in_scope(original):
            return updated
        key = updated.keyword.value
        if key == "allow_tf32" and isinstance(updated.value, cst.Name) and updated.value.value == "True":
            return self._set(original, updated.with_changes(keyword=cst.Name("input_precision")), "tf32")
        if "precision" in key.lower() and string_value(updated.value) in ("tf32", "tf32x3"):
            return self._set(original, updated, string_value(updated.value))
        return updated

    def _set(self, original, arg: cst.Arg, asked: str) -> cst.Arg:
        allowed = self.target.fp32_dot_precisions
        new_value: cst.BaseExpression
        if self.ctx.exclusive:
            wanted = self.target.best_fp32_dot_precision if asked == "tf32" else _more_precise(allowed)
            new_value = cst.SimpleString(f'"{wanted}"')
        elif asked == "tf32":
            new_value = self.shim("DOT_PRECISION")
        else:
            self.notes.append(
                f"line {self.line_of(original)}: tf32x3 kept: no portable equivalent in the shim; "
                f"on {self.target.name} use one of {', '.join(allowed)}"
            )
            return cst.ensure_type(original, cst.Arg)
        new = arg.with_changes(value=new_value)
        if code(new) == code(original):
            return new
        self.changes.append(
            f"line {self.line_of(original)}: {code(original).strip().rstrip(',')} -> {code(new).strip().rstrip(',')}"
        )
        return new


def _more_precise(allowed: tuple[str, ...]) -> str:
    """tf32x3 asks for near-fp32 accuracy: bf16x6 where the target has it, else ieee."""
    return "bf16x6" if "bf16x6" in allowed else "ieee"


@codemod("PT114")
def dot_precision(source, findings, target, ctx):
    transformer = _DotPrecision(findings, ctx, target)
    new = transform(source, transformer)
    rationale = (
        f"{target.name} ({target.arch}) accepts fp32 dot precisions {', '.join(target.fp32_dot_precisions)} "
        f"(TF32: {target.tf32}); the closest to tf32 is {target.best_fp32_dot_precision}."
        + (
            " porter_shim.DOT_PRECISION keeps tf32 on NVIDIA and picks the target's precision on AMD."
            if transformer.uses_shim
            else ""
        )
    )
    return finish(
        source,
        new,
        transformer,
        ctx,
        rationale,
        target.facts("tf32", "fp32_dot_precisions", "best_fp32_dot_precision"),
        safety="unsafe" if target.best_fp32_dot_precision != "tf32" else "safe",
    )
