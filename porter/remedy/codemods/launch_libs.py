"""NVIDIA-only Triton options (PT105), the standalone nvtx package (PT211), flash_attn imports (PT301)."""

from __future__ import annotations

import libcst as cst

from porter.analyze.triton.names import NVIDIA_ONLY_KWARGS
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


def _nvidia_only(arg: cst.Arg) -> bool:
    if arg.keyword is None or arg.keyword.value not in NVIDIA_ONLY_KWARGS:
        return False
    ctas = int_value(arg.value)
    return not (arg.keyword.value == "num_ctas" and ctas is not None and ctas <= 1)


class _LaunchOptions(LineScoped):
    def leave_Call(self, original, updated):
        if not self.in_scope(original) or self.in_nvidia_branch:
            return updated
        moved = [a for a in updated.args if _nvidia_only(a)]
        if not moved:
            return updated
        kept = [a for a in updated.args if not _nvidia_only(a)]
        names = ", ".join(f"{a.keyword.value}={code(a.value)}" for a in moved)
        self.changes.append(f"line {self.line_of(original)}: {names} only on CUDA")
        if self.ctx.exclusive:
            return updated.with_changes(args=_fix_commas(kept))
        self.uses_shim = True
        items = ", ".join(f'"{a.keyword.value}": {code(a.value)}' for a in moved)
        extra = cst.Arg(value=expr(f"{{}} if {self.ctx.shim_alias}.IS_HIP else {{{items}}}"), star="**")
        return updated.with_changes(args=_fix_commas(kept + [extra]))


def _fix_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    out = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        if last:
            out.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        elif arg.comma is cst.MaybeSentinel.DEFAULT:
            out.append(arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        else:
            out.append(arg)
    return out


@codemod("PT105")
def nvidia_only_options(source, findings, target, ctx):
    transformer = _LaunchOptions(findings, ctx, target)
    new = transform(source, transformer)
    if new == source:
        return None
    if transformer.uses_shim:
        new = ensure_shim_import(new, ctx)
    how = "passed only when not porter_shim.IS_HIP" if transformer.uses_shim else "dropped (--exclusive)"
    return CodemodResult(
        text=new,
        rationale=(
            f"The HIP backend ({target.arch}) rejects launch and Config options it does not define "
            f"(KeyError: Keyword argument ... unrecognised; num_ctas > 1 is refused); they are now {how}. "
            + describe(transformer.changes)
        ),
        uses_shim=transformer.uses_shim,
        facts=target.facts("arch", "features"),
    )


# ---- PT211 nvtx package -------------------------------------------------------------------------------


class _Nvtx(LineScoped):
    def __init__(self, findings, ctx, target, bound: set[str]):
        super().__init__(findings, ctx, target)
        self.bound = bound  # local names of the nvtx module

    def leave_WithItem(self, original, updated):
        call = updated.item
        if not isinstance(call, cst.Call) or code(call.func) not in {f"{b}.annotate" for b in self.bound}:
            return updated
        message = [a for a in call.args if a.keyword is None or a.keyword.value == "message"][:1]
        if not message:
            return updated
        dropped = [a.keyword.value for a in call.args if a.keyword is not None and a.keyword.value != "message"]
        self.uses_shim = True
        new = expr(f"{self.ctx.shim_alias}.nvtx_range({code(message[0].value)})")
        self.changes.append(
            f"line {self.line_of(original)}: {code(call.func)} -> porter_shim.nvtx_range"
            + (f" (drops {', '.join(dropped)})" if dropped else "")
        )
        return updated.with_changes(item=new)

    def leave_Module(self, original, updated):
        # the import goes once nothing else in the module uses it
        text = updated.code
        if self.uses_shim and not any(f"{b}." in text.replace(f"import {b}", "") for b in self.bound):
            body = [s for s in updated.body if not _imports_only(s, self.bound)]
            return updated.with_changes(body=body)
        return updated


def _imports_only(stmt, names: set[str]) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Import):
        return False
    aliases = stmt.body[0].names
    return all(a.evaluated_name == "nvtx" and (a.evaluated_alias or "nvtx") in names for a in aliases)


def _nvtx_names(module: cst.Module) -> set[str]:
    out = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    out |= {a.evaluated_alias or a.evaluated_name for a in small.names if code(a.name) == "nvtx"}
    return out


@codemod("PT211")
def nvtx_markers(source, findings, target, ctx):
    bound = _nvtx_names(cst.parse_module(source))
    if not bound:
        return None
    transformer = _Nvtx(
        [type(f)(**{**f.__dict__, "line": 1, "end_line": 10**9}) for f in findings[:1]], ctx, target, bound
    )
    new = transform(source, transformer)  # every edit uses the shim
    rationale = (
        "NVIDIA's nvtx package only reaches Nsight; porter_shim.nvtx_range emits NVTX on CUDA and ROCTx on "
        "ROCm (visible to rocprofv3 --marker-trace)."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("vendor"))


# ---- PT301 flash_attn import ---------------------------------------------------------------------------


class _FlashAttn(LineScoped):
    tries = 0  # inside a try block: the import is already optional

    def visit_Try(self, node):
        self.tries += 1

    def leave_Try(self, original, updated):
        self.tries -= 1
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if not self.in_scope(original) or len(updated.body) != 1 or not isinstance(updated.body[0], cst.ImportFrom):
            return updated
        if self.tries:
            return updated
        node = updated.body[0]
        if node.module is None or code(node.module) != "flash_attn" or isinstance(node.names, cst.ImportStar):
            return updated
        names = [(a.name.value, a.asname.name.value if a.asname else a.name.value) for a in node.names]
        if [n for n, _ in names] != ["flash_attn_func"]:
            self.notes.append(
                f"line {self.line_of(original)}: imports beyond flash_attn_func have no shim; left for review"
            )
            return updated
        local = names[0][1]
        self.uses_shim = True
        self.changes.append(f"line {self.line_of(original)}: {local} falls back to porter_shim.flash_attn_func")
        if self.ctx.exclusive:
            return cst.parse_statement(f"{local} = {self.ctx.shim_alias}.flash_attn_func\n").with_changes(
                leading_lines=original.leading_lines
            )
        block = (
            f"try:\n    {code(node)}\nexcept ImportError:  # no flash_attn wheel (e.g. ROCm): SDPA through the shim\n"
            f"    {local} = {self.ctx.shim_alias}.flash_attn_func\n"
        )
        return cst.parse_statement(block).with_changes(leading_lines=original.leading_lines)


@codemod("PT301")
def flash_attn_import(source, findings, target, ctx):
    transformer = _FlashAttn(findings, ctx, target)
    new = transform(source, transformer)  # every edit uses the shim
    rationale = (
        "Upstream flash_attn wheels are CUDA-only; without one the import now falls back to "
        "porter_shim.flash_attn_func, the same call ([batch, seqlen, heads, head_dim]) over torch SDPA "
        "(AOTriton/CK kernels on ROCm)."
    )
    result = finish(source, new, transformer, ctx, rationale, target.facts("arch"), safety="unsafe")
    if result is not None:
        result.notes.append("Features beyond (q, k, v, dropout_p, softmax_scale, causal) are not covered by the shim.")
    return result
