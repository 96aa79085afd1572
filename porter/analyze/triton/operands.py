"""The dtype of a tl.dot's operands, as far as the kernel's source shows it.

The LDS a GEMM config needs scales with the operand size, so the estimate must use the real one:
a bf16 kernel sized at 4 bytes turns configs that fit into errors, int8 at 4 bytes is off by 4x.
Evidence, followed through locals: casts (`x.to(tl.bfloat16)`, `tl.cast`), `tl.zeros/full(dtype=)`,
constexpr dtype parameters (their default and what this module's launches pass), shape-only ops
(`tl.trans`, `x.T`, `tl.reshape`), arithmetic with scalars, and the other operand of the same dot
(tl.dot takes equal dtypes). A TF32 knob is no evidence: `allow_tf32=False` and TF32-for-fp32-only
settings sit on bf16 dots too. A pointer's element type is a run-time fact: `tl.load(p)` alone is
unknown, and so is the estimate then (said as such, never reported as an error on a guess).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from porter.analyze.triton import names

MAX_DEPTH = 8
_SHAPE_OPS = {
    f"triton.language.{n}"
    for n in (
        "trans",
        "permute",
        "reshape",
        "view",
        "broadcast_to",
        "expand_dims",
        "ravel",
        "join",
        "interleave",
        "maximum",
        "minimum",
        "abs",
        "clamp",
        "flip",
        "advance",
    )
}
_FILLS = {"triton.language.zeros", "triton.language.full", "triton.language.zeros_like", "triton.language.full_like"}
SCALED_FORMAT_BYTES = {"e2m1": 1, "e4m3": 1, "e5m2": 1, "e2m3": 1, "e3m2": 1, "bf16": 2, "fp16": 2}


def dtype_name(inv, node: cst.CSTNode) -> str | None:
    """'bfloat16' for tl.bfloat16 (however triton.language is imported); None for anything else."""
    if type(node) is cst.Attribute and node.attr.value not in names.DTYPE_BYTES:
        return None  # aliases rewrite only the head of a dotted name: the last part decides
    if type(node) is cst.Name and node.value not in inv._ctx.index.aliases:
        return None  # a bare name that no import binds is never triton.language.<dtype>
    return next(
        (
            q.rsplit(".", 1)[1]
            for q in inv.qnames(node)
            if q.startswith("triton.language.") and q.rsplit(".", 1)[1] in names.DTYPE_BYTES
        ),
        None,
    )


class OperandTypes:
    """dtype sets of expressions inside one kernel; `param_dtypes` are its constexpr dtype parameters'
    possible values (from defaults and this module's launches)."""

    def __init__(self, inv, kernel: cst.FunctionDef, param_dtypes: dict[str, set[str]]):
        self.inv = inv
        self.params = {
            p.name.value for p in [*kernel.params.params, *kernel.params.posonly_params, *kernel.params.kwonly_params]
        }
        self.param_dtypes = param_dtypes

    def of(self, expr: cst.BaseExpression | None, depth: int = 0) -> set[str] | None:
        """The dtypes the expression may have; None when the source does not show it."""
        if expr is None or depth > MAX_DEPTH:
            return None
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            return self.of(expr.value, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self.of(expr.value, depth + 1)
        if isinstance(expr, cst.IfExp):
            return _union(self.of(expr.body, depth + 1), self.of(expr.orelse, depth + 1))
        if isinstance(expr, cst.BinaryOperation):
            return self._arith(expr, depth)
        if isinstance(expr, cst.UnaryOperation):
            return self.of(expr.expression, depth + 1)
        if isinstance(expr, cst.Name):
            return self._name(expr, depth)
        return None

    def dtype_value(self, expr: cst.BaseExpression) -> set[str] | None:
        """What a dtype argument (`tl.bfloat16`, a constexpr dtype parameter) may be."""
        found = dtype_name(self.inv, expr)
        if found:
            return {found}
        if isinstance(expr, cst.Name) and expr.value in self.param_dtypes:
            return set(self.param_dtypes[expr.value]) or None
        return None

    def _call(self, call: cst.Call, depth: int) -> set[str] | None:
        func = call.func
        inv = self.inv
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and call.args:
            return self.dtype_value(call.args[0].value)
        if inv.matches(func, {"triton.language.cast"}) and len(call.args) > 1:
            cast_to = _arg(call, "dtype", 1)
            return self.dtype_value(cast_to) if cast_to is not None else None
        if inv.matches(func, _FILLS):
            dtype = _arg(call, "dtype", 2 if inv.matches(func, {"triton.language.full"}) else 1)
            if dtype is not None:
                return self.dtype_value(dtype)
            like = call.args[0].value if call.args and "like" in inv.code(func) else None
            return self.of(like, depth + 1) if like is not None else {"float32"}
        if inv.matches(func, {"triton.language.where"}) and len(call.args) == 3:
            return _union(self.of(call.args[1].value, depth + 1), self.of(call.args[2].value, depth + 1))
        if inv.matches(func, _SHAPE_OPS) and call.args:
            return self.of(call.args[0].value, depth + 1)
        if isinstance(func, cst.Attribute) and func.attr.value in ("trans", "permute", "reshape", "view"):
            return self.of(func.value, depth + 1)  # x.trans(), x.reshape(...)
        return None  # tl.load(p): the pointer's element type is known at run time only

    def _arith(self, expr: cst.BinaryOperation, depth: int) -> set[str] | None:
        left, right = self.of(expr.left, depth + 1), self.of(expr.right, depth + 1)
        scalar = (cst.Integer, cst.Float)
        if left is None and isinstance(expr.left, scalar):
            return right
        if right is None and isinstance(expr.right, scalar):
            return left
        if left is None or right is None:
            return None
        widest = max(left | right, key=lambda d: names.DTYPE_BYTES[d])
        return {widest}  # tensor-tensor arithmetic promotes to the wider type

    def _name(self, name: cst.Name, depth: int) -> set[str] | None:
        bound = self.inv.assignments(name)
        if not bound:
            return None
        found: set[str] = set()
        for expr in bound:
            if not isinstance(expr, cst.BaseExpression):
                return None  # tuple projections, loop targets: not followed for dtypes
            one = self.of(expr, depth + 1)
            if one is None:
                return None
            found |= one
        return found


def dot_operand_bytes(
    inv, kernel: cst.FunctionDef, dots: list[cst.Call], param_dtypes: dict[str, set[str]]
) -> tuple[int | None, str]:
    """(bytes per operand element, how it is known) over the kernel's dots: the smallest known size,
    or (None, 'unknown ...') when no dot shows its operands' dtype."""
    types = OperandTypes(inv, kernel, param_dtypes)
    sizes: list[tuple[int, str]] = []
    for dot in dots:
        if inv.matches(dot.func, {"triton.language.dot_scaled"}):
            size = _scaled_format_bytes(inv, dot)
            if size is not None:
                sizes.append(size)
            continue
        operands = [types.of(arg.value) for arg in [a for a in dot.args if a.keyword is None][:2]]
        known = [o for o in operands if o]
        if not known:
            continue
        dtypes = set().union(*known)  # tl.dot takes equal operand dtypes: one known side tells both
        widest = max(dtypes, key=lambda d: names.DTYPE_BYTES[d])
        sizes.append((names.DTYPE_BYTES[widest], widest))
    if not sizes:
        return None, "unknown (the dot operands' dtype is not visible: loaded through run-time pointers)"
    smallest, dtype = min(sizes)
    return smallest, f"dot operands ({dtype})"


def _scaled_format_bytes(inv, dot: cst.Call) -> tuple[int, str] | None:
    fmt = _arg(dot, "lhs_format", 2)
    value = inv.fold(fmt).single if fmt is not None else None
    if isinstance(value, str) and value in SCALED_FORMAT_BYTES:
        return SCALED_FORMAT_BYTES[value], value
    return None


def param_dtypes(inv, kernel_name: str, params: list[Any]) -> dict[str, set[str]]:
    """Constexpr dtype parameters of a kernel: their default and what this module's launches pass."""
    out: dict[str, set[str]] = {}
    for param in params:
        default = param.node.default
        found = dtype_name(inv, default) if default is not None else None
        if found:
            out.setdefault(param.name, set()).add(found)
    for launch in inv.launches:
        if launch.kernel != kernel_name or not launch.kernel_known:
            continue
        for key, node in launch.meta_nodes.items():
            found = dtype_name(inv, node)
            if found:
                out.setdefault(key, set()).add(found)
    return out


def _arg(call: cst.Call, keyword: str, position: int) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if len(positional) > position else None


def _union(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    return None if a is None or b is None else a | b
