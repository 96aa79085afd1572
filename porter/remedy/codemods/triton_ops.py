"""Triton source codemods: CUDA libdevice namespace (PT110), inline PTX with portable equivalents (PT109).

The PTX table maps single fast-math instructions onto `tl` ops that every backend lowers (and that run
under TRITON_INTERPRET=1, which libdevice calls do not: they return None there).
"""

from __future__ import annotations

import re

import libcst as cst

from porter.remedy.codemods import CodemodResult, codemod
from porter.remedy.codemods._cst import LineScoped, code, describe, expr, finish, string_value, transform

# ---- PT110 tl.extra.cuda.libdevice -> triton.language.extra.libdevice ------------------------------

_CUDA_ONLY = {"globaltimer", "smid", "num_threads", "gdc_wait", "gdc_launch_dependents"}


# libdevice functions with a `tl` op every backend lowers and the interpreter runs (libdevice calls
# return None under TRITON_INTERPRET=1, so a verifier replaying tests on the CPU cannot check them).
_TL_FOR_LIBDEVICE = {
    "tanh": "(2 * tl.sigmoid(2 * {0}) - 1)",
    "exp": "tl.exp({0})",
    "exp2": "tl.exp2({0})",
    "log": "tl.log({0})",
    "log2": "tl.log2({0})",
    "sqrt": "tl.sqrt({0})",
    "rsqrt": "tl.rsqrt({0})",
    "sin": "tl.sin({0})",
    "cos": "tl.cos({0})",
    "fabs": "tl.abs({0})",
    "abs": "tl.abs({0})",
    "floor": "tl.floor({0})",
    "ceil": "tl.ceil({0})",
    "erf": "tl.erf({0})",
    "fma": "tl.fma({0}, {1}, {2})",
}


class _Libdevice(LineScoped):
    def __init__(self, findings, ctx, target):
        super().__init__(findings, ctx, target)
        self.bindings: set[str] = set()  # local names bound to the CUDA libdevice module by a fixed import
        self.mapped: list[str] = []

    def leave_Call(self, original, updated):
        func = updated.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _TL_FOR_LIBDEVICE:
            return updated
        owner = code(func.value)
        via_import = owner in self.bindings
        via_path = code(original.func.value).endswith("extra.cuda.libdevice") and self.in_scope(original)
        if not (via_import or via_path) or any(a.keyword or a.star for a in updated.args):
            return updated
        template = _TL_FOR_LIBDEVICE[func.attr.value]
        if template.count("{") != len(updated.args):
            return updated
        args = [code(a.value) if _atomic(a.value) else f"({code(a.value)})" for a in updated.args]
        new = expr(template.format(*args))
        self.mapped.append(f"line {self.line_of(original)}: libdevice.{func.attr.value} -> {code(new)}")
        return new

    def leave_ImportFrom(self, original, updated):
        if not self.in_scope(original) or updated.module is None:
            return updated
        module = code(updated.module)
        if module == "triton.language.extra.cuda" and _only_libdevice(updated):
            self.bindings |= {(a.asname.name.value if a.asname else a.name.value) for a in updated.names}
            self.changes.append(
                f"line {self.line_of(original)}: from triton.language.extra.cuda -> triton.language.extra"
            )
            return updated.with_changes(module=expr("triton.language.extra"))
        if module == "triton.language.extra.cuda.libdevice":
            self.changes.append(
                f"line {self.line_of(original)}: triton.language.extra.cuda.libdevice -> triton.language.extra.libdevice"
            )
            return updated.with_changes(module=expr("triton.language.extra.libdevice"))
        return updated

    def leave_Attribute(self, original, updated):
        # tl.extra.cuda.libdevice.X -> tl.extra.libdevice.X
        if updated.attr.value != "libdevice" or not self.in_scope(original):
            return updated
        owner = updated.value
        if isinstance(owner, cst.Attribute) and owner.attr.value == "cuda" and code(owner.value).endswith("extra"):
            self.changes.append(f"line {self.line_of(original)}: {code(updated)} -> {code(owner.value)}.libdevice")
            return updated.with_changes(value=owner.value)
        return updated


def _atomic(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float))


def _only_libdevice(node: cst.ImportFrom) -> bool:
    if isinstance(node.names, cst.ImportStar):
        return False
    return all(alias.name.value == "libdevice" for alias in node.names)


@codemod("PT110")
def libdevice_namespace(source, findings, target, ctx):
    transformer = _Libdevice(findings, ctx, target)
    # Calls are visited before the import that binds their module only when the import comes later;
    # collect the bindings first so every call through a fixed import is seen.
    transformer.bindings = _cuda_libdevice_bindings(source)
    new = transform(source, transformer)
    if new == source:
        return None
    notes = ["Functions that exist only under extra.cuda (globaltimer, smid, gdc_*) are not rewritten."]
    if transformer.mapped:
        notes.append(
            "libdevice calls with a tl equivalent became tl ops (they run under TRITON_INTERPRET=1; "
            "tanh via 2*sigmoid(2x)-1 loses relative accuracy very near 0)."
        )
    return CodemodResult(
        text=new,
        rationale=(
            "triton.language.extra.cuda binds NVIDIA's __nv_* libdevice, which the AMD backend drops; "
            "triton.language.extra.libdevice is redirected per backend (ocml/ockl on HIP), and calls with a "
            "portable tl op use it. " + describe(transformer.changes + transformer.mapped)
        ),
        notes=notes,
        facts=target.facts("arch"),
        safety="unsafe" if transformer.mapped else "safe",
    )


def _cuda_libdevice_bindings(source: str) -> set[str]:
    names: set[str] = set()
    for stmt in cst.parse_module(source).body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if (
                isinstance(small, cst.ImportFrom)
                and small.module is not None
                and code(small.module) == "triton.language.extra.cuda"
                and _only_libdevice(small)
                and not isinstance(small.names, cst.ImportStar)
            ):
                names |= {a.evaluated_alias or a.evaluated_name for a in small.names}
    return names


# ---- PT109 inline PTX --------------------------------------------------------------------------------

_UNARY = re.compile(
    r"^\s*(?P<op>tanh|ex2|rcp|rsqrt|sqrt|lg2|sin|cos)\.approx(?:\.ftz)?\.f32\s+\$0\s*,\s*\$(?P<a>\d+)\s*;?\s*$"
)
_PACK_BF16X2 = re.compile(r"^\s*cvt\.rn\.bf16x2\.f32\s+\$0\s*,\s*\$(?P<hi>\d+)\s*,\s*\$(?P<lo>\d+)\s*;?\s*$")
_UNARY_TL = {
    "tanh": "(2 * tl.sigmoid(2 * {x}) - 1)",
    "ex2": "tl.exp2({x})",
    "rcp": "(1.0 / {x})",
    "rsqrt": "tl.rsqrt({x})",
    "sqrt": "tl.sqrt({x})",
    "lg2": "tl.log2({x})",
    "sin": "tl.sin({x})",
    "cos": "tl.cos({x})",
}


def _call_args(call: cst.Call) -> dict[str, cst.BaseExpression]:
    """inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack) by position or keyword."""
    order = ["asm", "constraints", "args", "dtype", "is_pure", "pack"]
    out: dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else (order[index] if index < len(order) else None)
        if key is not None:
            out[key] = arg.value
    return out


def _operand(args: list[cst.BaseExpression], dollar: str) -> str | None:
    """PTX operand $i (i >= 1) is the (i-1)th input when there is one output."""
    index = int(dollar) - 1
    return code(args[index]) if 0 <= index < len(args) else None


def _portable(call: cst.Call) -> str | None:
    parts = _call_args(call)
    asm_node = parts.get("asm")
    asm = string_value(asm_node) if asm_node is not None else None
    inputs = parts.get("args")
    pack = parts.get("pack")
    if asm is None or not isinstance(inputs, (cst.List, cst.Tuple)) or (pack is not None and code(pack) != "1"):
        return None
    args = [element.value for element in inputs.elements]
    unary = _UNARY.match(asm)
    if unary:
        x = _operand(args, unary.group("a"))
        return None if x is None else _UNARY_TL[unary.group("op")].format(x=f"({x})" if not x.isidentifier() else x)
    pack2 = _PACK_BF16X2.match(asm)
    if pack2:
        hi, lo = _operand(args, pack2.group("hi")), _operand(args, pack2.group("lo"))
        if hi is None or lo is None or parts.get("dtype") is None:
            return None
        bits = "({v}).to(tl.bfloat16).to(tl.uint16, bitcast=True).to(tl.uint32)"
        packed = f"(({bits.format(v=hi)} << 16) | {bits.format(v=lo)})"
        return f"{packed}.to({code(parts['dtype'])}, bitcast=True)"
    return None


class _InlinePtx(LineScoped):
    def leave_Call(self, original, updated):
        if not code(updated.func).endswith("inline_asm_elementwise") or not self.in_scope(original):
            return updated
        if self.in_nvidia_branch:
            return updated  # the CUDA side of a branch porter (or the author) already wrote
        replacement = _portable(updated)
        if replacement is None:
            self.notes.append(f"line {self.line_of(original)}: PTX not in the portable table; left for review")
            return updated
        asm = string_value(_call_args(updated)["asm"]).strip()
        if self.ctx.exclusive:
            new = expr(replacement)
        else:  # NVIDIA keeps its instruction: the branch is a constexpr, only one side is compiled
            new = cst.IfExp(
                test=self.shim("IS_HIP"),
                body=expr(replacement),
                orelse=updated,
                whitespace_before_if=cst.SimpleWhitespace(" "),
                whitespace_after_if=cst.SimpleWhitespace(" "),
                whitespace_before_else=cst.SimpleWhitespace(" "),
                whitespace_after_else=cst.SimpleWhitespace(" "),
            )
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self.changes.append(
            f"line {self.line_of(original)}: PTX `{asm}` -> `{replacement}`"
            + ("" if self.ctx.exclusive else " on HIP (porter_shim.IS_HIP); CUDA keeps the PTX")
        )
        return new


@codemod("PT109")
def inline_ptx(source, findings, target, ctx):
    transformer = _InlinePtx(findings, ctx, target)
    new = transform(source, transformer)
    rationale = (
        f"PTX text and NVPTX constraints mean nothing to the AMDGPU backend ({target.arch}); these instructions "
        "have Triton ops every backend lowers (approximate PTX -> IEEE-accurate or near: results may differ in "
        "the last bits)."
        + (
            " The op is chosen by a compile-time branch on porter_shim.IS_HIP (a plain bool: Triton compiles one side), so NVIDIA compiles exactly the "
            "PTX it had."
            if not ctx.exclusive
            else " --exclusive: the PTX is gone on every backend."
        )
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("arch"), safety="unsafe")
