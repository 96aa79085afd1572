"""Expand an autotune `configs=` expression into the triton.Config entries it builds.

Handles list/tuple literals, `*` splices, `+` concatenation, list comprehensions over literal lists,
`range(...)` and `itertools.product(...)`, a name bound to such a list (module constant or local),
a call of a module function that just returns such a list (each `return` counted, with the vendor
guard of its branch), and `A if is_hip() else B`. Anything else marks the list incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from porter.analyze.triton import names
from porter.analyze.triton.fold import Possible, Val, const
from porter.analyze.triton.records import ConfigInfo

MAX_CONFIGS = 512
MAX_DEPTH = 12


@dataclass
class _Site:
    call: cst.Call
    env: dict[str, Val]
    guard: str | None
    entry: cst.CSTNode | None = None  # the list element that produced it (a helper call), if not the Config


@dataclass
class _Expansion:
    sites: list[_Site] = field(default_factory=list)
    complete: bool = True

    def add(self, other: _Expansion) -> None:
        self.sites.extend(other.sites)
        self.complete &= other.complete


def expand_config_list(inv, expr: cst.BaseExpression) -> tuple[list[ConfigInfo], str, bool]:
    source = "literal"
    if isinstance(expr, cst.Name):
        source = f"constant:{expr.value}"
    elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and inv.module_function(expr.func.value):
        source = f"function:{expr.func.value}"
    expansion = _Expander(inv).expand(expr, {}, None, 0)
    if not expansion.sites and not expansion.complete:
        source = "unknown"
    configs = [_config(inv, i, site) for i, site in enumerate(expansion.sites[:MAX_CONFIGS])]
    return configs, source, expansion.complete and len(expansion.sites) <= MAX_CONFIGS


class _Expander:
    def __init__(self, inv):
        self.inv = inv

    def expand(
        self,
        expr: cst.BaseExpression,
        env: dict[str, Val],
        guard: str | None,
        depth: int,
        entry: cst.CSTNode | None = None,
    ) -> _Expansion:
        out = _Expansion()
        if depth > MAX_DEPTH:
            out.complete = False
            return out
        inv = self.inv
        if isinstance(expr, cst.Call) and inv.matches(expr.func, names.CONFIG):
            out.sites.append(_Site(expr, dict(env), inv.guard_at(expr) or guard, entry))
        elif isinstance(expr, (cst.List, cst.Tuple)):
            for element in expr.elements:
                out.add(self.expand(element.value, env, guard, depth + 1))
        elif isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            self._comprehension(expr, expr.for_in, env, guard, depth, out)
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            out.add(self.expand(expr.left, env, guard, depth + 1))
            out.add(self.expand(expr.right, env, guard, depth + 1))
        elif isinstance(expr, cst.IfExp):
            code = inv.code(expr.test)
            out.add(self.expand(expr.body, env, names.guard_of_test(code, True) or guard, depth + 1))
            out.add(self.expand(expr.orelse, env, names.guard_of_test(code, False) or guard, depth + 1))
        elif isinstance(expr, cst.Name) and expr.value not in env:
            bound = inv.assignments(expr)
            if not bound:
                out.complete = False
            for value in bound or ():
                out.add(self.expand(value, env, guard, depth + 1, entry))
        elif isinstance(expr, cst.Call):
            self._call(expr, env, guard, depth, out, entry)
        else:
            out.complete = False
        return out

    def _call(self, call: cst.Call, env, guard, depth, out: _Expansion, entry) -> None:
        inv = self.inv
        func = call.func
        if isinstance(func, cst.Name) and func.value in ("list", "tuple", "sorted") and len(call.args) == 1:
            out.add(self.expand(call.args[0].value, env, guard, depth + 1))
            return
        function = inv.module_function(func.value) if isinstance(func, cst.Name) else None
        if function is None:
            out.complete = False
            return
        returns = [n for n in _own_nodes(function.body) if isinstance(n, cst.Return)]
        if not returns:
            out.complete = False
        inner_env = _bind_arguments(inv, function, call, env)
        for ret in returns:
            if ret.value is None:
                continue
            out.add(self.expand(ret.value, inner_env, inv.guard_at(ret) or guard, depth + 1, entry or call))

    def _comprehension(self, comp, for_in: cst.CompFor, env, guard, depth, out: _Expansion) -> None:
        items = self._iterate(for_in.iter, env)
        if items is None:
            out.complete = False
            return
        for item in items:
            bound = dict(env)
            if not _bind(for_in.target, item, bound):
                out.complete = False
                return
            if not self._passes(for_in.ifs, bound, out):
                continue
            if for_in.inner_for_in is not None:
                self._comprehension(comp, for_in.inner_for_in, bound, guard, depth, out)
            else:
                out.add(self.expand(comp.elt, bound, guard, depth + 1))
            if len(out.sites) > MAX_CONFIGS:
                out.complete = False
                return

    def _passes(self, ifs, env, out: _Expansion) -> bool:
        for condition in ifs:
            value = self.inv.fold(condition.test, env)
            if not value.is_single:
                out.complete = False  # cannot tell: keep the entry, note the doubt
                continue
            if not value.single:
                return False
        return True

    def _iterate(self, iterable: cst.BaseExpression, env) -> list[Val] | None:
        """One Val per iteration; element origins are kept when the iterable is a literal list."""
        if isinstance(iterable, (cst.List, cst.Tuple)) and not any(
            isinstance(e, cst.StarredElement) for e in iterable.elements
        ):
            items = [self.inv.fold(e.value, env) for e in iterable.elements]
            if all(v.is_single for v in items):
                return [_literal_item(v, e.value) for v, e in zip(items, iterable.elements)]
        if isinstance(iterable, cst.Name) and iterable.value not in env:
            bound = self.inv.assignments(iterable)
            if bound and len(bound) == 1:
                return self._iterate(bound[0], {})
        folded = self.inv.fold(iterable, env)
        value = folded.single
        if not folded.is_single or not isinstance(value, (list, tuple)):
            return None
        return [const(v, iterable) for v in value]


def _bind_arguments(inv, function: cst.FunctionDef, call: cst.Call, env: dict[str, Val]) -> dict[str, Val]:
    """Parameters of a config helper (`def cfg(bm, bn, num_stages=3)`) bound to the call's folded
    arguments, defaults for the rest; parameters it cannot bind stay unknown."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    bound: dict[str, Val] = {}
    args = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return bound
    for param, arg in zip(positional, args):
        bound[param.name.value] = inv.fold(arg.value, env)
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = inv.fold(arg.value, env)
    for param in [*positional, *params.kwonly_params]:
        if param.name.value not in bound and param.default is not None:
            bound[param.name.value] = inv.fold(param.default)
    return bound


def _literal_item(val: Val, node: cst.BaseExpression) -> Val:
    if isinstance(node, (cst.Tuple, cst.List)) and val.possibles:
        return Val([Possible(val.single, val.possibles[0].node)])
    return val


def _bind(target: cst.BaseExpression, item: Val, env: dict[str, Val]) -> bool:
    if isinstance(target, cst.Name):
        env[target.value] = item
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        value = item.single
        origin = item.possibles[0].node if item.known and item.possibles else None
        if not isinstance(value, (list, tuple)) or len(value) != len(target.elements) or origin is None:
            return False  # origin is set whenever value is: a single known value has a node
        sub_nodes = (
            origin.elements
            if isinstance(origin, (cst.Tuple, cst.List)) and len(origin.elements) == len(value)
            else None
        )
        for i, element in enumerate(target.elements):
            node = sub_nodes[i].value if sub_nodes else origin
            if not _bind(element.value, const(value[i], node), env):
                return False
        return True
    return False


def _own_nodes(body):
    """Nodes of a function body, not descending into nested functions, classes or lambdas."""
    stack = [body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(reversed(node.children))


def _config(inv, index: int, site: _Site) -> ConfigInfo:
    call, env = site.call, site.env
    meta: dict[str, Val] = {}
    meta_nodes: dict[str, cst.CSTNode] = {}
    options: dict[str, Val] = {}
    option_nodes: dict[str, cst.CSTNode] = {}
    meta_complete = True
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for slot, arg in zip(names.CONFIG_POSITIONAL, positional):
        if slot != "meta":
            options[slot], option_nodes[slot] = inv.fold(arg.value, env), arg.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value != "kwargs":
            options[arg.keyword.value], option_nodes[arg.keyword.value] = inv.fold(arg.value, env), arg.value
    meta_expr = next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value == "kwargs"),
        positional[0].value if positional else None,
    )
    if meta_expr is not None:
        meta_complete = _meta(inv, meta_expr, env, meta, meta_nodes, 0)
    bindings = {name: val.single for name, val in env.items() if val.is_single}
    entry = site.entry if site.entry is not None else call
    return ConfigInfo(
        index=index,
        node=call,
        spanner=inv.span,
        meta=meta,
        meta_nodes=meta_nodes,
        options=options,
        option_nodes=option_nodes,
        bindings=bindings,
        guard=site.guard,
        meta_complete=meta_complete,
        entry=entry,
    )


def _meta(inv, expr, env, meta, meta_nodes, depth) -> bool:
    """Fill meta from a dict literal, dict(...) call or a name bound to one; False if incomplete."""
    if depth > MAX_DEPTH:
        return False
    complete = True
    if isinstance(expr, cst.Dict):
        for element in expr.elements:
            if isinstance(element, cst.StarredDictElement):
                complete &= _meta(inv, element.value, env, meta, meta_nodes, depth + 1)
                continue
            if not isinstance(element, cst.DictElement):  # never: a dict element is starred or keyed
                continue
            key = inv.fold(element.key, env).single
            if not isinstance(key, str):
                complete = False
                continue
            meta[key], meta_nodes[key] = inv.fold(element.value, env), element.value
        return complete
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict":
        for arg in expr.args:
            if arg.keyword is not None:
                meta[arg.keyword.value], meta_nodes[arg.keyword.value] = inv.fold(arg.value, env), arg.value
            else:
                complete &= _meta(inv, arg.value, env, meta, meta_nodes, depth + 1)
        return complete
    if isinstance(expr, cst.Name) and expr.value not in env:
        bound = inv.assignments(expr)
        if bound and len(bound) == 1:
            return _meta(inv, bound[0], env, meta, meta_nodes, depth + 1)
    folded = inv.fold(expr, env)
    if folded.is_single and isinstance(folded.single, dict):
        for key, value in folded.single.items():
            meta[str(key)], meta_nodes[str(key)] = const(value, expr), expr
        return True
    return False
