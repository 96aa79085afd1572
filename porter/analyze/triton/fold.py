"""A small constant folder over libcst expressions.

A folded value is a `Val`: the set of values an expression may take (`32 if big else 8` -> {32, 8}),
each with the node it came from so a finding can point at the literal to change. Anything porter
cannot evaluate for certain is `UNKNOWN`; nothing is guessed.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import libcst as cst

from porter.analyze.triton import names

MAX_POSSIBLE = 64  # cap on the cross product of possible values
# env key of a probe: the warp size a run-time read (`.warp_size`, a `warp_size` set by device branches) gives
RUNTIME_WARP_SIZE = "<runtime warp size>"
WARP_SIZE_WORD = re.compile(r"(?i)_?(warp|wave|wavefront)_?size\Z")


@dataclass(frozen=True)
class Possible:
    value: Any
    node: cst.CSTNode  # where the value was written (a literal, or the expression computing it)
    when: str | None = None  # the condition under which the value arises (`BLOCK_SIZE >= 32768`)
    module: Any = None  # the TritonInventory the node belongs to when it is another module's (a helper's)
    via: str | None = None  # the helper call the value came through (`calculate_settings(n_cols)`)
    dead_on: str | None = None  # "amd"/"nvidia": a later vendor branch reassigns the name there


@dataclass(frozen=True)
class Range:
    """An integer interval [lo, hi]; None is an open end. What a clamp of an unknown value gives:
    `max(4, min(32, block // 512))` is Range(4, 32)."""

    lo: int | None
    hi: int | None

    def __str__(self) -> str:
        return f"{'' if self.lo is None else self.lo}..{'' if self.hi is None else self.hi}"


def upper(value: Any) -> int | None:
    """The largest integer a value may take: the int itself, a Range's upper end; None when unbounded."""
    if isinstance(value, Range):
        return value.hi
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def lower(value: Any) -> int | None:
    if isinstance(value, Range):
        return value.lo
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Val:
    """Possible values of an expression; `possibles is None` means unknown. `partial`: the possibles
    are some of the values only (a helper with a return the folder cannot follow): enough to show a
    value that fails, never to show that all fit, so `single` and `is_single` say nothing then."""

    __slots__ = ("possibles", "partial")

    def __init__(self, possibles: Iterable[Possible] | None, partial: bool = False):
        self.partial = partial
        if possibles is None:
            self.possibles = None
            return
        unique: dict[tuple, Possible] = {}
        for item in possibles:
            unique.setdefault((_key(item.value), id(item.node)), item)
        self.possibles = tuple(unique.values()) if len(unique) <= MAX_POSSIBLE else None

    @property
    def known(self) -> bool:
        return self.possibles is not None

    @property
    def values(self) -> list[Any]:
        """Distinct possible values, in source order; [] when unknown."""
        seen: dict[tuple, Any] = {}
        for item in self.possibles or ():
            seen.setdefault(_key(item.value), item.value)
        return list(seen.values())

    @property
    def single(self) -> Any:
        """The value when exactly one is possible, else None."""
        values = self.values
        return values[0] if len(values) == 1 and not self.partial else None

    @property
    def is_single(self) -> bool:
        return len(self.values) == 1 and not self.partial

    def __repr__(self) -> str:
        return f"Val({self.values}{', ...' if self.partial else ''})" if self.known else "Val(unknown)"


UNKNOWN = Val(None)


def _key(value: Any) -> tuple:
    return (type(value).__name__, repr(value))


def const(value: Any, node: cst.CSTNode) -> Val:
    return Val([Possible(value, node)])


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.Divide: operator.truediv,
    cst.Modulo: operator.mod,
    cst.Power: operator.pow,
    cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
    cst.BitAnd: operator.and_,
    cst.BitOr: operator.or_,
    cst.BitXor: operator.xor,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.In: lambda a, b: a in b,
    cst.NotIn: lambda a, b: a not in b,
    cst.Is: operator.is_,
    cst.IsNot: operator.is_not,
}


def _next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


_CALLS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "int": int,
    "float": float,
    "len": len,
    "range": lambda *a: list(range(*a)),
    "builtins.min": min,
    "builtins.max": max,
    "builtins.abs": abs,
    "builtins.int": int,
    "builtins.float": float,
    "builtins.len": len,
    "builtins.range": lambda *a: list(range(*a)),
    "math.ceil": math.ceil,
    "math.floor": math.floor,
    "math.log2": math.log2,
    **{name: _next_power_of_2 for name in names.NEXT_POW2},
    **{name: lambda a, b: -(-a // b) for name in names.CDIV},
    **{name: lambda value: value for name in names.CONSTEXPR},
    **{name: lambda *lists: [tuple(t) for t in itertools.product(*lists)] for name in names.PRODUCT},
}

# Signature of the callbacks the folder needs from the inventory (scope tables and qualified names).
Lookup = Callable[[cst.Name, dict[str, Val]], Val]
QNames = Callable[[cst.CSTNode], set[str]]
# Folds a call of a project function (a settings helper) through its return values; None: not one.
Calls = Callable[[cst.Call, dict[str, Val]], "Val | None"]


class Folder:
    """Folds expressions. `lookup` resolves a Name (locals, then module constants); `env` holds
    comprehension bindings."""

    def __init__(
        self,
        lookup: Lookup,
        qnames: QNames,
        calls: Calls | None = None,
        code: Callable[[cst.CSTNode], str] | None = None,
    ):
        self._lookup = lookup
        self._qnames = qnames
        self._calls = calls
        self._code = code or (lambda node: "")

    def fold(self, node: cst.BaseExpression | None, env: dict[str, Val] | None = None) -> Val:
        if node is None:
            return UNKNOWN
        env = env or {}
        method = getattr(self, f"_fold_{type(node).__name__}", None)
        if method is None:
            return UNKNOWN
        try:
            return method(node, env)
        except RecursionError:
            return UNKNOWN

    # literals -----------------------------------------------------------------------------------
    def _fold_Integer(self, node: cst.Integer, env) -> Val:
        return const(node.evaluated_value, node)

    def _fold_Float(self, node: cst.Float, env) -> Val:
        return const(node.evaluated_value, node)

    def _fold_SimpleString(self, node: cst.SimpleString, env) -> Val:
        return const(node.evaluated_value, node)

    def _fold_ConcatenatedString(self, node: cst.ConcatenatedString, env) -> Val:
        value = node.evaluated_value
        return UNKNOWN if value is None else const(value, node)

    def _fold_Name(self, node: cst.Name, env) -> Val:
        if node.value in ("True", "False", "None"):
            return const({"True": True, "False": False, "None": None}[node.value], node)
        if node.value in env:
            return env[node.value]
        if RUNTIME_WARP_SIZE in env and WARP_SIZE_WORD.match(node.value):
            unprobed = self._lookup(node, {})
            if not unprobed.is_single:  # set at run time (a device query, or branches on the device)
                return env[RUNTIME_WARP_SIZE]
        return self._lookup(node, env)

    def _fold_Attribute(self, node: cst.Attribute, env) -> Val:
        """`config.num_warps` of a config a pruner's comprehension binds (env key "config.num_warps"), or a warp
        size read at run time (`get_current_target().warp_size`) while a probe binds it (RUNTIME_WARP_SIZE)."""
        if isinstance(node.value, cst.Name) and f"{node.value.value}.{node.attr.value}" in env:
            return env[f"{node.value.value}.{node.attr.value}"]
        if RUNTIME_WARP_SIZE in env and WARP_SIZE_WORD.match(node.attr.value):
            return env[RUNTIME_WARP_SIZE]
        return UNKNOWN

    # operators ----------------------------------------------------------------------------------
    def _fold_UnaryOperation(self, node: cst.UnaryOperation, env) -> Val:
        ops: dict[type, Callable[[Any], Any]] = {
            cst.Minus: operator.neg,
            cst.Plus: operator.pos,
            cst.Not: operator.not_,
            cst.BitInvert: operator.invert,
        }
        fn = ops.get(type(node.operator))
        if fn is None:
            return UNKNOWN
        return combine(node, fn, self.fold(node.expression, env))

    def _fold_BinaryOperation(self, node: cst.BinaryOperation, env) -> Val:
        fn = _BINOPS.get(type(node.operator))
        if fn is None:
            return UNKNOWN
        left, right = self.fold(node.left, env), self.fold(node.right, env)
        if _has_range(left) or _has_range(right):
            return _range_binop(type(node.operator), left, right)
        return combine(node, fn, left, right)

    def _fold_BooleanOperation(self, node: cst.BooleanOperation, env) -> Val:
        fn = (lambda a, b: a and b) if isinstance(node.operator, cst.And) else (lambda a, b: a or b)
        return combine(node, fn, self.fold(node.left, env), self.fold(node.right, env))

    def _fold_Comparison(self, node: cst.Comparison, env) -> Val:
        result = self.fold(node.left, env)
        left = result
        for target in node.comparisons:
            fn = _COMPARE.get(type(target.operator))
            right = self.fold(target.comparator, env)
            if fn is None:
                return UNKNOWN
            step = combine(node, fn, left, right)
            result = step if result is left else combine(node, lambda a, b: a and b, result, step)
            left = right
        return result

    def _fold_IfExp(self, node: cst.IfExp, env) -> Val:
        test = self.fold(node.test, env)
        body, orelse = self.fold(node.body, env), self.fold(node.orelse, env)
        if test.known and len({bool(v) for v in test.values}) == 1:
            return body if test.values[0] else orelse
        if not (body.known and orelse.known):
            return UNKNOWN
        # `64 if torch.version.hip else 32`: each arm is dead on the other vendor, wherever the value goes next
        test_code = self._code(node.test)
        body = _dead_on(body, _other_vendor(names.guard_of_test(test_code, True)))
        orelse = _dead_on(orelse, _other_vendor(names.guard_of_test(test_code, False)))
        return Val((body.possibles or ()) + (orelse.possibles or ()), body.partial or orelse.partial)

    # containers ---------------------------------------------------------------------------------
    def _fold_elements(self, elements, env):
        parts: list[Val] = []
        starred: list[bool] = []
        for element in elements:
            parts.append(self.fold(element.value, env))
            starred.append(isinstance(element, cst.StarredElement))

        def build(*values):
            out: list = []
            for value, is_star in zip(values, starred):
                out.extend(value) if is_star else out.append(value)
            return out

        return parts, build

    def _fold_List(self, node: cst.List, env) -> Val:
        parts, build = self._fold_elements(node.elements, env)
        return combine(node, build, *parts) if parts else const([], node)

    def _fold_Tuple(self, node: cst.Tuple, env) -> Val:
        parts, build = self._fold_elements(node.elements, env)
        return combine(node, lambda *v: tuple(build(*v)), *parts) if parts else const((), node)

    def _fold_Dict(self, node: cst.Dict, env) -> Val:
        keys, values = [], []
        for element in node.elements:
            if not isinstance(element, cst.DictElement):
                return UNKNOWN
            keys.append(self.fold(element.key, env))
            values.append(self.fold(element.value, env))
        count = len(keys)
        return combine(node, lambda *kv: dict(zip(kv[:count], kv[count:])), *keys, *values) if keys else const({}, node)

    def _fold_Subscript(self, node: cst.Subscript, env) -> Val:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return UNKNOWN
        return combine(node, lambda c, i: c[i], self.fold(node.value, env), self.fold(node.slice[0].slice.value, env))

    def _fold_Call(self, node: cst.Call, env) -> Val:
        qualified = self._qnames(node.func)
        if isinstance(node.func, cst.Name) and not qualified:
            qualified = {node.func.value}
        name = next((q for q in qualified if q in _CALLS), None)
        if name is None:
            folded = self._calls(node, env) if self._calls is not None else None
            return UNKNOWN if folded is None else folded
        if any(arg.keyword is not None or arg.star for arg in node.args):
            return UNKNOWN
        args = [self.fold(arg.value, env) for arg in node.args]
        if (
            name.rsplit(".", 1)[-1] in ("min", "max")
            and len(args) > 1
            and any(not a.known or _has_range(a) for a in args)
        ):
            return self._clamp(name.rsplit(".", 1)[-1], node, args)
        if len(args) == 1 and _has_range(args[0]) and name in names.NEXT_POW2:
            return _map_range(args[0], _next_power_of_2)
        return combine(node, _CALLS[name], *args)

    def _clamp(self, kind: str, node: cst.Call, args: list[Val]) -> Val:
        """min/max with an unknown or interval argument: the interval it is clamped to, its bound
        originating at the literal that sets it (`min(32, n // 512)`: upper end 32, at the 32)."""
        spans = [_span(val) for val in args]
        if any(span is _NOT_INT for span in spans):
            return UNKNOWN
        if kind == "min":
            bounded = [i for i, span in enumerate(spans) if span[1] is not None]
            lows = [span[0] for span in spans]
            lo = None if any(low is None for low in lows) else min(lows)
            if not bounded:
                return UNKNOWN
            cap = min(bounded, key=lambda i: spans[i][1])
            hi = spans[cap][1]
        else:
            known_lows = [i for i, span in enumerate(spans) if span[0] is not None]
            lo = max(spans[i][0] for i in known_lows) if known_lows else None
            highs = [span[1] for span in spans]
            if any(high is None for high in highs):
                return UNKNOWN if lo is None else Val([Possible(Range(lo, None), node)])
            cap = max(range(len(spans)), key=lambda i: spans[i][1])
            hi = spans[cap][1]
        origin = spans[cap][2]
        when = origin.when
        others = [arg for i, arg in enumerate(node.args) if i != cap]
        if kind == "min" and len(others) == 1 and not args[node.args.index(others[0])].known:
            when = _solve_at_least(others[0].value, hi, self._code)  # the cap binds when the other reaches it
        value = hi if lo == hi else Range(lo, hi)
        return Val([Possible(value, origin.node, when, origin.module, origin.via)], any(a.partial for a in args))


def combine(node: cst.CSTNode, fn: Callable[..., Any], *vals: Val) -> Val:
    """Apply fn over the cross product of possible values; results originate at `node`. A result built from a
    value dead on one vendor is dead there too (`threads // warp_size` with the 32 of `64 if hip else 32`)."""
    if any(not v.known for v in vals):
        return UNKNOWN
    results: list[Possible] = []
    for combo in itertools.product(*((v.possibles or ()) for v in vals)):
        if len(results) > MAX_POSSIBLE:
            return UNKNOWN
        dead = {p.dead_on for p in combo if p.dead_on}
        if len(dead) > 1:
            continue  # one arm of each vendor's branch: no build takes both
        try:
            value = fn(*(p.value for p in combo))
        except Exception:  # noqa: BLE001 - any failure of user arithmetic means "cannot fold"
            return UNKNOWN
        results.append(Possible(value, node, dead_on=dead.pop() if dead else None))
    return Val(results, any(v.partial for v in vals))


def _other_vendor(vendor: str | None) -> str | None:
    """The vendor on which code selected for `vendor` does not run ('other' device types say nothing here)."""
    return {"amd": "nvidia", "nvidia": "amd"}.get(vendor or "")


def _dead_on(val: Val, vendor: str | None) -> Val:
    if vendor is None or not val.known:
        return val
    marked = [dataclasses.replace(p, dead_on=p.dead_on or vendor) for p in (val.possibles or ())]
    return Val(marked, val.partial)


_NOT_INT = object()


def _has_range(val: Val) -> bool:
    return val.known and any(isinstance(p.value, Range) for p in (val.possibles or ()))


def _span(val: Val):
    """(lo, hi, the Possible of the upper end) of a Val of ints/Ranges; (None, None, None) when unknown;
    _NOT_INT when a value is not an integer."""
    if not val.known:
        return (None, None, None)
    if not val.possibles or any(lower(p.value) is None and upper(p.value) is None for p in val.possibles):
        return _NOT_INT
    lows = [lower(p.value) for p in val.possibles]
    known_lows = [low for low in lows if low is not None]
    top = max(val.possibles, key=lambda p: math.inf if (hi := upper(p.value)) is None else hi)
    return (None if len(known_lows) < len(lows) else min(known_lows), upper(top.value), top)


def _map_range(val: Val, fn: Callable[[int], int]) -> Val:
    """A monotone increasing fn over every possible value (Ranges end-wise)."""
    out = []
    for p in val.possibles or ():
        try:
            if isinstance(p.value, Range):
                lo = None if p.value.lo is None else fn(p.value.lo)
                hi = None if p.value.hi is None else fn(p.value.hi)
                value = lo if lo is not None and lo == hi else Range(lo, hi)
            elif upper(p.value) is not None:
                value = fn(p.value)
            else:
                return UNKNOWN
        except Exception:  # noqa: BLE001 - user arithmetic that fails: cannot fold
            return UNKNOWN
        out.append(Possible(value, p.node, p.when, p.module, p.via))
    return Val(out, val.partial)


_MONOTONE: dict[type, Callable[[Any, Any], Any]] = {
    cst.Add: operator.add,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
    cst.Subtract: operator.sub,
}


def _range_binop(op: type, left: Val, right: Val) -> Val:
    """Interval arithmetic where it stays monotone increasing: Range op positive constant
    (and constant + / * Range). Anything else is unknown."""
    fn = _MONOTONE.get(op)
    if fn is None:
        return UNKNOWN
    if _has_range(left) and right.is_single and isinstance(right.single, int) and not _has_range(right):
        constant = right.single
        if op is not cst.Add and op is not cst.Subtract and constant <= 0:
            return UNKNOWN
        return _map_range(left, lambda v: fn(v, constant))
    if _has_range(right) and left.is_single and isinstance(left.single, int) and op in (cst.Add, cst.Multiply):
        constant = left.single
        if op is cst.Multiply and constant <= 0:
            return UNKNOWN
        return _map_range(right, lambda v: fn(constant, v))
    return UNKNOWN


def _solve_at_least(expr: cst.BaseExpression, bound: int, code: Callable[[cst.CSTNode], str]) -> str:
    """`x // 512 >= 32` said as `x >= 16384`: the condition under which a clamp's cap is reached."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.right, cst.Integer):
        k = expr.right.evaluated_value
        left = code(expr.left).strip()
        if k > 0:
            if isinstance(expr.operator, (cst.FloorDivide, cst.Divide)):
                return f"{left} >= {bound * k}"
            if isinstance(expr.operator, cst.Multiply):
                return f"{left} >= {-(-bound // k)}"
            if isinstance(expr.operator, cst.RightShift):
                return f"{left} >= {bound << k}"
    return f"{code(expr).strip()} >= {bound}"
