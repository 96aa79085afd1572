"""Wave64 codemods: num_warps above the target's limit (PT101), warp-size-32 arithmetic (PT102)."""

from __future__ import annotations

import re

import libcst as cst

from porter.remedy.codemods import CodemodResult, codemod
from porter.remedy.codemods._cst import (
    LineScoped,
    code,
    describe,
    ensure_shim_import,
    expr,
    finish,
    int_value,
    transform,
)

_WARPS_NAME = re.compile(r"warps", re.IGNORECASE)
_WARP_SIZE_NAME = re.compile(r"warp_?size|lanes?_per_warp|threads_per_warp", re.IGNORECASE)
_VENDOR_TEST = re.compile(r"hip|rocm|is_amd|version\.cuda|is_cuda", re.IGNORECASE)
_NVIDIA_WARP = 32  # the NVIDIA warp width these idioms hard-code (the pattern we look for, not a target fact)


class _CapNumWarps(LineScoped):
    def visit_Module(self, node):
        # names already bound to a capped value: wrapping their uses again changes nothing
        self.capped_names = {
            t.target.value
            for stmt in node.body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
            if isinstance(small, cst.Assign)
            for t in small.targets
            if isinstance(t.target, cst.Name) and "cap_num_warps" in code(small.value)
        }
        for fn in _functions(node):
            for stmt in fn.body.body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, cst.Assign) and "cap_num_warps" in code(small.value):
                            self.capped_names |= {
                                t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                            }
        return True

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if updated.keyword is None or updated.keyword.value != "num_warps" or not self.in_scope(original):
            return updated
        if self.in_nvidia_branch:
            return updated
        value = self._capped(updated.value, self.line_of(original))
        return updated if value is None else updated.with_changes(value=value)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        names = [t.target for t in updated.targets]
        named = any(isinstance(n, cst.Name) and _WARPS_NAME.search(n.value) for n in names)
        if not (named or _literal_over(updated.value, self.target.max_num_warps)):
            return updated
        if not self.in_scope(original):
            return updated
        value = self._capped(updated.value, self.line_of(original))
        return updated if value is None else updated.with_changes(value=value)

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        key = updated.key
        if not (isinstance(key, cst.SimpleString) and key.evaluated_value == "num_warps"):
            return updated
        if not self.in_scope(original):
            return updated
        value = self._capped(updated.value, self.line_of(original))
        return updated if value is None else updated.with_changes(value=value)

    def _capped(self, value: cst.BaseExpression, line: int) -> cst.BaseExpression | None:
        limit = self.target.max_num_warps
        if "cap_num_warps" in code(value) or "min(" in code(value):
            return None  # already capped
        if isinstance(value, cst.Name) and value.value in getattr(self, "capped_names", ()):
            return None
        if isinstance(value, cst.IfExp) and _VENDOR_TEST.search(code(value.test)):
            return None  # `32 if not is_hip() else 16`: the author already branches per vendor
        literal = int_value(value)
        if literal is not None and literal <= limit:
            return None
        if self.ctx.exclusive:
            new = self._exclusive(value, limit)
        else:
            self.uses_shim = True
            new = expr(f"{self.ctx.shim_alias}.cap_num_warps({code(value)})")
        if new is not None:
            self.changes.append(f"line {line}: num_warps {code(value)} -> {code(new)}")
        return new

    def _exclusive(self, value: cst.BaseExpression, limit: int) -> cst.BaseExpression:
        literal = int_value(value)
        if literal is not None:
            return cst.Integer(str(min(literal, limit)))
        if isinstance(value, cst.IfExp):
            body = self._exclusive(value.body, limit) if int_value(value.body) is not None else value.body
            orelse = self._exclusive(value.orelse, limit) if int_value(value.orelse) is not None else value.orelse
            if all(int_value(b) is not None for b in (value.body, value.orelse)):
                return value.with_changes(body=body, orelse=orelse)
        return expr(f"min({code(value)}, {limit})")


def _functions(module: cst.Module):
    """Top-level functions and methods of top-level classes."""
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            yield stmt
        elif isinstance(stmt, cst.ClassDef):
            yield from (s for s in stmt.body.body if isinstance(s, cst.FunctionDef))


def _literal_over(value: cst.BaseExpression, limit: int) -> bool:
    """An int literal (or `a if c else b` of int literals) with some value above the limit."""
    branches = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
    values = [int_value(b) for b in branches]
    known = [v for v in values if v is not None]
    return len(known) == len(values) and max(known) > limit


@codemod("PT101")
def cap_num_warps(source, findings, target, ctx):
    transformer = _CapNumWarps(findings, ctx, target)
    new = transform(source, transformer)
    if new == source:
        return None
    if transformer.uses_shim:
        new = ensure_shim_import(new, ctx)
        how = "capped at run time by porter_shim.cap_num_warps (unchanged on NVIDIA, at most the limit on AMD)"
    else:
        how = f"capped at {target.max_num_warps} (--exclusive)"
    rationale = (
        f"{target.name} runs {target.wave_size}-lane waves and at most {target.max_threads_per_block} threads per "
        f"block, so num_warps may not exceed {target.max_num_warps}; {how}. Same thread count, re-tune if needed. "
        + describe(transformer.changes)
    )
    return CodemodResult(
        text=new,
        rationale=rationale,
        uses_shim=transformer.uses_shim,
        facts=target.facts("wave_size", "max_threads_per_block", "max_num_warps"),
    )


class _WarpSize(LineScoped):
    _OPS = (cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Divide)

    def leave_BinaryOperation(self, original, updated):
        if not isinstance(updated.operator, self._OPS) or not self.in_scope(original):
            return updated
        if int_value(updated.right) == _NVIDIA_WARP:
            return updated.with_changes(right=self._warp(updated.right, original))
        if isinstance(updated.operator, cst.Multiply) and int_value(updated.left) == _NVIDIA_WARP:
            return updated.with_changes(left=self._warp(updated.left, original))
        return updated

    def leave_Assign(self, original, updated):
        names = [t.target for t in updated.targets]
        if int_value(updated.value) != _NVIDIA_WARP or not self.in_scope(original):
            return updated
        if not any(isinstance(n, cst.Name) and _WARP_SIZE_NAME.search(n.value) for n in names):
            return updated
        return updated.with_changes(value=self._warp(updated.value, original))

    def _warp(self, literal, original) -> cst.BaseExpression:
        new: cst.BaseExpression
        if self.ctx.exclusive:
            new = cst.Integer(str(self.target.wave_size))
        else:
            new = self.shim("WARP_SIZE")
        self.changes.append(f"line {self.line_of(original)}: warp width 32 -> {code(new)}")
        return new


@codemod("PT102")
def warp_size(source, findings, target, ctx):
    transformer = _WarpSize(findings, ctx, target)
    new = transform(source, transformer)
    rationale = f"{target.name} waves are {target.wave_size} lanes wide, not 32; " + (
        "the width is read at run time from porter_shim.WARP_SIZE."
        if transformer.uses_shim
        else "written directly (--exclusive)."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("wave_size"))
