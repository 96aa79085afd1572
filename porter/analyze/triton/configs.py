"""Expand an autotune `configs=` expression into the triton.Config entries it builds.

Handles list/tuple literals, `*` splices, `+` concatenation, list comprehensions over literal lists,
`range(...)` and `itertools.product(...)`, a name bound to such a list (module constant or local),
a call of a module function that just returns such a list (each `return` counted, with the vendor
guard of its branch), and `A if is_hip() else B`. Anything else marks the list incomplete.

A config pruner (`[c for c in configs if c.num_warps <= 1024 // warp_size]` over a config list argument, or a
comprehension filter `if w * warp_size <= 1024`) that reads the warp size at run time is folded once per wave size
of the targets: the entries it drops there are marked on the ConfigInfo (`dropped_on_waves`). One whose bound on
num_warps depends on the warp size but does not fold drops what cannot launch (`pruned_if_unlaunchable`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import libcst as cst

from porter.analyze.triton import names
from porter.analyze.triton.fold import RUNTIME_WARP_SIZE, WARP_SIZE_WORD, Possible, Val, const
from porter.analyze.triton.records import ConfigInfo

MAX_CONFIGS = 512
MAX_DEPTH = 12


@dataclass
class _Site:
    call: cst.Call
    env: dict[str, Val]
    guard: str | None
    entry: cst.CSTNode | None = None  # the list element that produced it (a helper call), if not the Config
    dropped_on_waves: frozenset[int] = frozenset()  # wave sizes on which a warp-size pruner drops it
    pruned_if_unlaunchable: bool = False  # a pruner bounds num_warps by the warp size in a way that does not fold


@dataclass
class _Verdict:
    """What a comprehension's filters do to one entry: dropped everywhere, or kept with per-target drops."""

    kept: bool = True
    dropped_on_waves: frozenset[int] = frozenset()
    pruned_if_unlaunchable: bool = False

    def mark(self, site: _Site) -> _Site:
        return dataclasses.replace(
            site,
            dropped_on_waves=site.dropped_on_waves | self.dropped_on_waves,
            pruned_if_unlaunchable=site.pruned_if_unlaunchable or self.pruned_if_unlaunchable,
        )


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
        self.list_arguments: dict[str, _Expansion] = {}  # parameters of the helper being expanded bound to configs
        from porter.targets import all_targets

        self.waves = sorted({target.wave_size for target in all_targets().values()})

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
        outer_lists = self.list_arguments
        self.list_arguments = self._config_arguments(function, call, env, guard, depth)
        try:
            for ret in returns:
                if ret.value is None:
                    continue
                out.add(self.expand(ret.value, inner_env, inv.guard_at(ret) or guard, depth + 1, entry or call))
        finally:
            self.list_arguments = outer_lists

    def _config_arguments(self, function: cst.FunctionDef, call: cst.Call, env, guard, depth) -> dict[str, _Expansion]:
        """Parameters of a pruner (`def config_prune(configs)`) bound to a config list the call passes."""
        if any(a.star for a in call.args):
            return {}
        params = [*function.params.posonly_params, *function.params.params]
        pairs = [(p.name.value, a.value) for p, a in zip(params, [a for a in call.args if a.keyword is None])]
        pairs += [(a.keyword.value, a.value) for a in call.args if a.keyword is not None]
        found = {}
        for name, value in pairs:
            expansion = self.expand(value, env, guard, depth + 1)
            if expansion.sites:
                found[name] = expansion
        return found

    def _comprehension(self, comp, for_in: cst.CompFor, env, guard, depth, out: _Expansion) -> None:
        if isinstance(for_in.iter, cst.Name) and for_in.iter.value in self.list_arguments:
            self._filter_configs(comp, for_in, self.list_arguments[for_in.iter.value], env, out)
            return
        warps = _names_in(_keyword(comp.elt, "num_warps"))
        items = self._iterate(for_in.iter, env)
        if items is None:
            out.complete = False
            return
        for item in items:
            bound = dict(env)
            if not _bind(for_in.target, item, bound):
                out.complete = False
                return
            verdict = self._passes(for_in.ifs, bound, out, lambda test: bool(_names_in(test) & warps))
            if not verdict.kept:
                continue
            inner = _Expansion()
            if for_in.inner_for_in is not None:
                self._comprehension(comp, for_in.inner_for_in, bound, guard, depth, inner)
            else:
                inner.add(self.expand(comp.elt, bound, guard, depth + 1))
            inner.sites = [verdict.mark(site) for site in inner.sites]
            out.add(inner)
            if len(out.sites) > MAX_CONFIGS:
                out.complete = False
                return

    def _filter_configs(self, comp, for_in: cst.CompFor, configs: _Expansion, env, out: _Expansion) -> None:
        """`[c for c in configs if c.num_warps <= max_warps]` in a pruner: each passed config, `c.num_warps`
        (and the other options it sets) folded from the config itself."""
        name = for_in.target
        if not (isinstance(name, cst.Name) and isinstance(comp.elt, cst.Name) and comp.elt.value == name.value):
            out.complete = False
            return
        if for_in.inner_for_in is not None:
            out.complete = False
            return
        out.complete &= configs.complete
        for site in configs.sites:
            bound = dict(env)
            for arg in site.call.args:
                if arg.keyword is not None:
                    bound[f"{name.value}.{arg.keyword.value}"] = self.inv.fold(arg.value, site.env)
            verdict = self._passes(for_in.ifs, bound, out, lambda test: _reads_option(test, name.value, "num_warps"))
            if verdict.kept:
                out.sites.append(verdict.mark(site))

    def _passes(self, ifs, env, out: _Expansion, tests_warps: Callable[[cst.BaseExpression], bool]) -> _Verdict:
        """Fold each filter; one that folds only with the warp size bound is folded per wave size of the targets."""
        verdict = _Verdict()
        for condition in ifs:
            value = self.inv.fold(condition.test, env)
            if value.is_single:
                if not value.single:
                    return _Verdict(kept=False)
                continue
            probes = {
                wave: self.inv.fold(condition.test, {**env, RUNTIME_WARP_SIZE: const(wave, condition.test)})
                for wave in self.waves
            }
            if all(p.is_single for p in probes.values()):
                dropped = frozenset(wave for wave, p in probes.items() if not p.single)
                verdict.dropped_on_waves |= dropped
            elif tests_warps(condition.test) and (
                _varies(value, probes.values()) or self._reads_warp_size(condition.test)
            ):
                verdict.pruned_if_unlaunchable = True
            else:
                out.complete = False  # cannot tell: keep the entry, note the doubt
        return verdict

    def _reads_warp_size(self, expr: cst.CSTNode, depth: int = 0) -> bool:
        """The expression reads a warp size (`props.warp_size`, `WARP_SIZE`), itself or through the names it uses
        (`max_warps = limit // warp_size`)."""
        if depth > 4:
            return False
        for node in _own_nodes(expr):
            word = (
                node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
            )
            if WARP_SIZE_WORD.match(word):
                return True
            if isinstance(node, cst.Name):
                bound = self.inv.assignments(node) or ()
                if any(isinstance(b, cst.CSTNode) and self._reads_warp_size(b, depth + 1) for b in bound):
                    return True
        return False

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
        dropped_on_waves=site.dropped_on_waves,
        pruned_if_unlaunchable=site.pruned_if_unlaunchable,
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


def _varies(value: Val, probes: Iterable[Val]) -> bool:
    """The filter's folded outcome changes with the warp size bound: it provably depends on it."""
    outcomes = {_outcome(v) for v in (value, *probes)}
    return len(outcomes) > 1


def _outcome(value: Val) -> frozenset | None:
    return frozenset(repr(v) for v in value.values) if value.known else None


def _keyword(call: cst.BaseExpression, name: str) -> cst.BaseExpression | None:
    if not isinstance(call, cst.Call):
        return None
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _names_in(node: cst.CSTNode | None) -> set[str]:
    return {n.value for n in _own_nodes(node) if isinstance(n, cst.Name)} if node is not None else set()


def _reads_option(test: cst.CSTNode, variable: str, option: str) -> bool:
    """`c.num_warps` in the filter of `for c in configs`."""
    return any(
        isinstance(n, cst.Attribute)
        and isinstance(n.value, cst.Name)
        and n.value.value == variable
        and n.attr.value == option
        for n in _own_nodes(test)
    )
