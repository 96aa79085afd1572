"""FP8 codemods: Triton fp8 dtypes (PT115), torch fp8 dtypes (PT206), the 448 e4m3 max literal (PT207).

Portable: the shim picks OCP (e4m3fn, max 448) or FNUZ (e4m3fnuz, max 240) at run time from the
device; --exclusive writes the target's format directly.
"""

from __future__ import annotations

import re

import libcst as cst

from porter.remedy.codemods import codemod
from porter.remedy.codemods._cst import LineScoped, code, finish, number_value, transform

# Triton fp8 dtype per torch fp8 dtype name (idioms.md T15).
_TL_FOR_TORCH = {
    "float8_e4m3fn": "float8e4nv",
    "float8_e4m3fnuz": "float8e4b8",
    "float8_e5m2": "float8e5",
    "float8_e5m2fnuz": "float8e5b16",
}
_TL_E4M3_OCP = "float8e4nv"
_TL_E5M2_OCP = "float8e5"
_TORCH_SHIM = {"float8_e4m3fn": "FP8_E4M3", "float8_e5m2": "FP8_E5M2"}
_OCP_E4M3_MAX = 448.0  # the OCP e4m3 maximum that NVIDIA-first code hard-codes (pattern, not a target fact)
_FP8_MAX_NAME = re.compile(r"(fp8|f8|e4m3).*max|max.*(fp8|f8|e4m3)", re.IGNORECASE)
# Block-scaled formats whose e4m3 scales are OCP by definition: their Triton dtype must not follow the device.
_OCP_BY_DEFINITION = re.compile(r"nvfp4|mxfp|e8m0", re.IGNORECASE)


class _TritonFp8(LineScoped):
    def leave_Attribute(self, original, updated):
        if updated.attr.value not in (_TL_E4M3_OCP, _TL_E5M2_OCP) or not self.in_scope(original):
            return updated
        if self.ctx.exclusive:
            torch_name = self.target.fp8_formats["e4m3" if updated.attr.value == _TL_E4M3_OCP else "e5m2"]
            new = updated.with_changes(attr=cst.Name(_TL_FOR_TORCH[torch_name]))
            if code(new) == code(updated):
                return updated
        elif updated.attr.value == _TL_E4M3_OCP:
            new = self.shim("TL_FP8_E4M3")
        else:
            self.notes.append(
                f"line {self.line_of(original)}: {code(updated)} kept (the shim exposes only TL_FP8_E4M3)"
            )
            return updated
        self.changes.append(f"line {self.line_of(original)}: {code(updated)} -> {code(new)}")
        return new


@codemod("PT115")
def triton_fp8_dtype(source, findings, target, ctx):
    transformer = _TritonFp8(findings, ctx, target)
    new = transform(source, transformer)
    rationale = (
        f"{target.name} uses {target.fp8_family.upper()} fp8 ({target.fp8_formats['e4m3']}); the Triton dtype must match "
        "the tensors' format or values decode wrong (FNUZ bias 8 vs OCP 7) or fall back to emulation."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("fp8_family", "fp8_formats"))


class _TorchFp8(LineScoped):
    def leave_Attribute(self, original, updated):
        name = updated.attr.value
        if name not in _TORCH_SHIM or not self.in_scope(original):
            return updated
        if self.ctx.exclusive:
            wanted = self.target.fp8_formats["e4m3" if "e4m3" in name else "e5m2"]
            if wanted == name:
                return updated
            new = updated.with_changes(attr=cst.Name(wanted))
        else:
            new = self.shim(_TORCH_SHIM[name])
        self.changes.append(f"line {self.line_of(original)}: {code(updated)} -> {code(new)}")
        return new


@codemod("PT206")
def torch_fp8_dtype(source, findings, target, ctx):
    transformer = _TorchFp8(findings, ctx, target)
    new = transform(source, transformer)
    rationale = (
        f"{target.name} ({target.arch}) computes fp8 in {target.fp8_family.upper()} format "
        f"({target.fp8_formats['e4m3']}, {target.fp8_formats['e5m2']}); the dtype is chosen per device."
    )
    if new != source and not _OCP_BY_DEFINITION.search(source):
        new = _follow_in_module(new, transformer, findings, ctx, target)
    result = finish(source, new, transformer, ctx, rationale, target.facts("fp8_family", "fp8_formats", "fp8_e4m3_max"))
    if result is not None:
        result.notes.append("Checkpoints stored in OCP e4m3fn must be converted (and scales doubled) to load as FNUZ.")
    return result


def _follow_in_module(source, transformer, findings, ctx, target) -> str:
    """The module's Triton fp8 dtype and named e4m3 maximum describe the tensors PT206 re-typed: they change
    with them, or its kernels would write OCP values (clamped at 448) into FNUZ buffers."""
    for follower in (_FollowTritonFp8(findings, ctx, target), _FollowFp8Max(findings, ctx, target)):
        source = transform(source, follower)
        transformer.changes += follower.changes
        transformer.notes += follower.notes
        transformer.uses_shim |= follower.uses_shim
    return source


class _Fp8Max(LineScoped):
    def leave_Float(self, original, updated):
        return self._replace(original, updated)

    def leave_Integer(self, original, updated):
        return self._replace(original, updated)

    def _replace(self, original, updated):
        if number_value(updated) != _OCP_E4M3_MAX or not self.in_scope(original):
            return updated
        if self.ctx.exclusive:
            if self.target.fp8_e4m3_max == _OCP_E4M3_MAX:
                return updated
            new = cst.Float(repr(float(self.target.fp8_e4m3_max)))
        else:
            new = self.shim("FP8_E4M3_MAX")
        self.changes.append(f"line {self.line_of(original)}: {code(updated)} -> {code(new)}")
        return new


class _WholeModule(LineScoped):
    """Edits the whole module (outside porter's NVIDIA branches): it follows a dtype PT206 changed."""

    def in_scope(self, node: cst.CSTNode) -> bool:
        return not self.in_nvidia_branch


class _FollowTritonFp8(_WholeModule, _TritonFp8):
    pass


class _FollowFp8Max(_WholeModule, _Fp8Max):
    """Only a maximum bound to an fp8-named variable or parameter (`FP8_MAX = 448.0`): a bare 448 may be a size."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._bindings: list[bool] = []  # per enclosing assignment or parameter: is its name an fp8 maximum's?

    def visit_Assign(self, node: cst.Assign) -> bool:
        self._bindings.append(any(_FP8_MAX_NAME.search(code(t.target)) for t in node.targets))
        return True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        self._bindings.append(bool(_FP8_MAX_NAME.search(code(node.target))))
        return True

    def visit_Param(self, node: cst.Param) -> bool:
        self._bindings.append(bool(_FP8_MAX_NAME.search(node.name.value)))
        return True

    def leave_Assign(self, original, updated):
        self._bindings.pop()
        return updated

    leave_AnnAssign = leave_Assign
    leave_Param = leave_Assign

    def _replace(self, original, updated):
        return super()._replace(original, updated) if self._bindings and self._bindings[-1] else updated


@codemod("PT207")
def fp8_max_literal(source, findings, target, ctx):
    transformer = _Fp8Max(findings, ctx, target)
    new = transform(source, transformer)
    rationale = (
        f"e4m3 saturates at {target.fp8_e4m3_max} on {target.name} ({target.fp8_family.upper()}), not 448; "
        "scales computed against 448 overflow. The maximum now follows the device's fp8 format."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("fp8_family", "fp8_e4m3_max"))
