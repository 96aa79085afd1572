"""Build the Triton inventory of one module: kernels, autotune config lists, launch sites.

Everything is static: names resolve through libcst's QualifiedNameProvider (so `import
triton.language as tl`, `from triton import jit` and friends all work) and values through the
constant folder in fold.py.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import libcst as cst

from porter.analyze.triton import names, operands
from porter.analyze.triton.fold import UNKNOWN, Folder, Possible, Val, combine
from porter.analyze.triton.records import (
    AutotuneInfo,
    ConfigInfo,
    KernelInfo,
    LaunchSite,
    Param,
    Span,
)

_ALIASES = {"tl": "triton.language"}  # fallback for snippets that use `tl.` without importing it
_Node = TypeVar("_Node", bound=cst.CSTNode)


@dataclasses.dataclass(frozen=True)
class Projection:
    """Scope-table entry for one name of a tuple target bound to a non-literal:
    `BLOCK_SIZE, num_warps = calculate_settings(n)` binds num_warps to Projection(call, 1)."""

    value: Any  # a cst expression, or an Element
    index: int


@dataclasses.dataclass(frozen=True)
class Element:
    """Scope-table entry for a for-loop target: any element of the iterable (`for w in [4, 8, 32]`)."""

    iterable: cst.BaseExpression


Bound = cst.BaseExpression | Projection | Element  # what a scope table records for one binding


class _Scopes:
    """Assignments per scope (module = None, else the FunctionDef). A name bound in a way the folder
    cannot follow (loop target, import, augmented assignment, parameter) maps to None: unknown.

    Built from the engine's node index (no walk of its own): each binding node finds its scope through
    the parent map, memoised along the way. Lambda bodies bind nothing in the enclosing scope."""

    def __init__(self, nodes: Callable[[type], list], structure: _Structure) -> None:
        self.tables: dict[Any, dict[str, list[Bound] | None]] = {None: {}}
        self.mutated: set[tuple[Any, str]] = set()
        self.functions: dict[str, cst.FunctionDef] = {}
        self._nodes = nodes
        self._structure = structure
        self._kinds: dict[tuple[Any, str], set[type]] = {}
        self._mixed: set[tuple[Any, str]] = set()  # (scope, name) bound by both Assign and AnnAssign

    def collect(self) -> None:
        for node in self._nodes(cst.FunctionDef):
            self._function(node)
        for node_type, visit in (
            (cst.ClassDef, self._class),
            (cst.AugAssign, self._aug_assign),
            (cst.For, self._for),
            (cst.With, self._with),
            (cst.NamedExpr, self._named_expr),
            (cst.Import, self._import),
            (cst.ImportFrom, self._import),
            (cst.Call, self._call),
        ):
            for node in self._nodes(node_type):
                if node_type is cst.Call and not _mutates(node):
                    continue
                scope = self._owner(node)
                if scope is not _IN_LAMBDA:
                    visit(scope, node)
        values = {}
        for node_type in (cst.Assign, cst.AnnAssign):
            for node in self._nodes(node_type):
                values[id(node)] = node
                self._assignment(self._owner(node), node)
        if self._mixed:
            self._reorder(values)

    def _owner(self, node: cst.CSTNode) -> Any:
        """The FunctionDef whose scope the node binds in (None: module; _IN_LAMBDA: nowhere)."""
        structure = self._structure
        if isinstance(node, cst.NamedExpr):
            node = node.target  # a Name: the engine knows its statement
        if structure.in_lambda(node):
            return _IN_LAMBDA
        owner = structure.enclosing_function(node)
        return owner if owner is not _UNSET else self._owner_by_parents(node)

    def _owner_by_parents(self, node: cst.CSTNode) -> Any:
        current = self._structure.parent(node)
        while current is not None:
            if isinstance(current, cst.FunctionDef):
                return current
            if isinstance(current, cst.Lambda):
                return _IN_LAMBDA
            current = self._structure.parent(current)
        return None

    def _bind(self, scope: Any, name: str, value: Bound | None, kind: type | None = None) -> None:
        table = self.tables.setdefault(scope, {})
        bound = table.get(name)
        if value is None or (name in table and bound is None):
            table[name] = None
        else:
            if bound is None:
                bound = table[name] = []
            bound.append(value)
            if kind is not None:
                kinds = self._kinds.setdefault((scope, name), set())
                kinds.add(kind)
                if len(kinds) > 1:
                    self._mixed.add((scope, name))

    def _bind_target(
        self, scope: Any, target: cst.BaseExpression, value: Bound | None, kind: type | None = None
    ) -> None:
        if isinstance(target, cst.Name):
            self._bind(scope, target.value, value, kind)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            paired = values is not None and len(values) == len(target.elements)
            starred = any(isinstance(e, cst.StarredElement) for e in target.elements)
            for i, element in enumerate(target.elements):
                item = values[i].value if paired else None
                if item is None and value is not None and not starred and not isinstance(element, cst.StarredElement):
                    item = Projection(value, i)  # folded element-wise: a helper's `return a, b`
                self._bind_target(scope, element.value, item, kind)

    def _function(self, node: cst.FunctionDef) -> None:
        scope = self._owner(node)
        if scope is None:
            self.functions.setdefault(node.name.value, node)
        self._bind(scope, node.name.value, None)
        self.tables.setdefault(node, {})
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            self._bind(node, param.name.value, None)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._bind(node, star.name.value, None)

    def _class(self, scope: Any, node: cst.ClassDef) -> None:
        self._bind(scope, node.name.value, None)

    def _assignment(self, scope: Any, node: cst.Assign | cst.AnnAssign) -> None:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind_target(scope, target.target, node.value, cst.Assign)
        elif node.value is not None:
            self._bind_target(scope, node.target, node.value, cst.AnnAssign)

    def _reorder(self, statements: dict[int, cst.CSTNode]) -> None:
        """Values of a name bound by both `x = ...` and `x: T = ...` go back into source order."""
        order = {id(line): i for i, line in enumerate(self._nodes(cst.SimpleStatementLine))}
        for scope, name in self._mixed:
            values = self.tables[scope].get(name)
            if not values:
                continue
            where = {}
            for statement in statements.values():
                line = self._structure.parents.get(id(statement))
                key = (order.get(id(line), -1), line.body.index(statement) if line is not None else 0)
                for value in _assigned_values(statement):
                    where.setdefault(id(value), key)
            values.sort(key=lambda value: where.get(id(value), (-1, 0)))

    def _aug_assign(self, scope: Any, node: cst.AugAssign) -> None:
        self._bind_target(scope, node.target, None)
        if isinstance(node.target, cst.Name):
            self.mutated.add((scope, node.target.value))

    def _for(self, scope: Any, node: cst.For) -> None:
        self._bind_target(scope, node.target, Element(node.iter))

    def _with(self, scope: Any, node: cst.With) -> None:
        for item in node.items:
            if item.asname is not None:
                self._bind_target(scope, item.asname.name, None)

    def _named_expr(self, scope: Any, node: cst.NamedExpr) -> None:
        self._bind_target(scope, node.target, None)

    def _import(self, scope: Any, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            bound = alias.asname.name if alias.asname else alias.name
            while isinstance(bound, cst.Attribute):
                bound = bound.value
            if isinstance(bound, cst.Name):
                self._bind(scope, bound.value, None)

    def _call(self, scope: Any, node: cst.Call) -> None:
        self.mutated.add((scope, node.func.value.value))


def _mutates(call: cst.Call) -> bool:
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.attr.value in ("append", "extend", "insert", "pop", "remove", "clear")
    )


class _Structure:
    """The statement skeleton of a module (statements, suites, handlers: no expressions), walked once.

    It knows the parent of every statement-level node and the function each statement runs in. Parents
    of expressions are filled in per statement, on demand (a few statements per module need them),
    instead of one parent map over every node."""

    _FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.module = ctx.module
        self.parents: dict[int, cst.CSTNode] = {}
        self.function_of: dict[int, cst.FunctionDef | None] = {}  # statement -> function strictly around it
        self._walked: set[int] = set()
        self._lambda_ids: set[int] | None = None
        stack: list[tuple[cst.CSTNode, Any]] = []
        for statement in self.module.body:
            self.parents[id(statement)] = self.module
            stack.append((statement, None))
        while stack:
            node, function = stack.pop()
            self.function_of[id(node)] = function
            if isinstance(node, cst.SimpleStatementLine):
                for small in node.body:
                    self.parents[id(small)] = node
                    self.function_of[id(small)] = function
                continue
            inner = node if isinstance(node, cst.FunctionDef) else function
            self._enter(node, inner, stack)

    def _enter(self, node: cst.CSTNode, function: Any, stack: list) -> None:
        for name in self._FIELDS:
            value = getattr(node, name, None)
            if value is None:
                continue
            for child in value if isinstance(value, (list, tuple)) else (value,):
                if not isinstance(child, cst.CSTNode):
                    continue  # a suite's body of statements is handled below; `body` of a Name... never
                self.parents[id(child)] = node
                if isinstance(child, cst.BaseStatement):
                    stack.append((child, function))
                elif isinstance(child, cst.BaseSmallStatement):  # `if x: y = 1`
                    self.function_of[id(child)] = function
                else:  # suite, Else, Finally, ExceptHandler, MatchCase: statements below
                    self._enter(child, function, stack)

    def enclosing_function(self, node: cst.CSTNode) -> Any:
        """Innermost FunctionDef strictly around the node (lambdas looked through); _UNSET: not known here."""
        if isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
            return self.function_of.get(id(node), _UNSET)
        statement = self.statement_of(node)
        if statement is None:
            return _UNSET
        if isinstance(statement, cst.FunctionDef):
            return statement  # decorators, parameters, annotations: inside the def, as in the tree
        return self.function_of.get(id(statement), _UNSET)

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """Innermost statement around an expression: the engine's for the node or a node below it."""
        found = self.ctx.statement_of(node)
        if found is not None:
            return found
        stack, budget = [node], 64
        while stack and budget:
            budget -= 1
            current = stack.pop()
            if isinstance(current, (cst.BaseStatement, cst.BaseSmallStatement, cst.BaseSuite)):
                return None
            found = self.ctx.statement_of(current)
            if found is not None:
                return found
            stack.extend(_children(current))
        return None

    def in_lambda(self, node: cst.CSTNode) -> bool:
        if not self.ctx.nodes(cst.Lambda):
            return False
        if self._lambda_ids is None:
            self._lambda_ids = {id(n) for lam in self.ctx.nodes(cst.Lambda) for n in _walk(lam.body)}
            self._lambda_ids.update(id(n) for lam in self.ctx.nodes(cst.Lambda) for n in _walk(lam.params))
        return id(node) in self._lambda_ids

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        found = self.parents.get(id(node), _UNSET)
        if found is not _UNSET:
            return found
        if node is self.module:
            return None
        statement = self.statement_of(node)
        if statement is not None and id(statement) not in self._walked:
            self._walk_statement(statement)
            found = self.parents.get(id(node), _UNSET)
            if found is not _UNSET:
                return found
        return self.ctx.parent(node)  # anything else: the engine's whole-module parent map

    def _walk_statement(self, statement: cst.CSTNode) -> None:
        """Parents of the statement's own expressions (nested statements have their own walk)."""
        self._walked.add(id(statement))
        parents = self.parents
        stack = [statement]
        while stack:
            node = stack.pop()
            for child in _children(node):
                parents[id(child)] = node
                if not isinstance(child, cst.BaseStatement):
                    stack.append(child)


def _assigned_values(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    """The value expressions an Assign/AnnAssign binds (tuple targets pair element-wise)."""
    value = getattr(statement, "value", None)
    if value is None:
        return []
    out, pending = [], [value]
    while pending:
        current = pending.pop()
        out.append(current)
        if isinstance(current, (cst.Tuple, cst.List)):
            pending += [element.value for element in current.elements]
    return out


_UNSET = object()
_IN_LAMBDA = object()  # owner marker: inside a lambda, binds nothing


class TritonInventory:
    """The Triton view of one module plus the helpers visitors share (names, folding, guards).

    Reads the engine's one walk (ctx.nodes, ctx.parent, ctx.qualified_names, ctx.position): the
    scope tables are built on the first name lookup, kernels only when the module mentions triton."""

    def __init__(self, ctx: Any):
        self.path = ctx.path
        self.module = ctx.module
        self._ctx = ctx
        self._qualified_names = ctx.qualified_names
        self._position = ctx.position
        self._structure_built: _Structure | None = None
        self._scopes_built: _Scopes | None = None
        self._qnames: dict[int, set[str]] = {}
        self._codes: dict[int, str] = {}
        # block -> (statement index, vendor) of its static_asserts on a vendor test
        self._block_asserts: dict[int, list[tuple[int, str]]] = {}
        self._args: list[cst.Arg] | None = None
        self._references: list[tuple[cst.CSTNode, list[str]]] | None = None
        self._resolving: set[tuple[int, str]] = set()
        self.folder = Folder(self._lookup, self.qnames, self._fold_call, self.code)
        self.kernels: list[KernelInfo] = []
        self.launches: list[LaunchSite] = []
        self.orphan_configs: list[ConfigInfo] = []  # triton.Config lists no autotune here consumes
        # Kernels, autotune and Config calls all need a `triton.` qualified name: no "triton", none of them.
        _Builder(self).run(kernels="triton" in ctx.text)

    @property
    def _structure(self) -> _Structure:
        if self._structure_built is None:
            self._structure_built = _Structure(self._ctx)
        return self._structure_built

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._structure.parent(node)

    @property
    def _scopes(self) -> _Scopes:
        if self._scopes_built is None:
            self._scopes_built = _Scopes(self.nodes, self._structure)
            self._scopes_built.collect()
        return self._scopes_built

    # toolbox ------------------------------------------------------------------------------------
    def qnames(self, node: cst.CSTNode) -> set[str]:
        """Qualified names of a Name/Attribute; falls back to the dotted source text, and reads an
        unimported `tl.` as triton.language. Memoised per node (callers must not mutate the set)."""
        found = self._qnames.get(id(node))
        if found is None:
            found = self._qnames[id(node)] = self._resolve_qnames(node)
        return found

    def _resolve_qnames(self, node: cst.CSTNode) -> set[str]:
        found = set(self._qualified_names(node)) if isinstance(node, (cst.Name, cst.Attribute)) else set()
        if not found:
            dotted = _dotted(node)
            if dotted is not None:
                found = {dotted}
        for name in list(found):
            head, _, rest = name.partition(".")
            if head in _ALIASES:
                found.add(f"{_ALIASES[head]}.{rest}" if rest else _ALIASES[head])
        return found

    def nodes(self, node_type: type[_Node]) -> list[_Node]:
        """Every node of exactly this type, in source order, from the engine's one walk (nodes inside
        import statements excluded; the Import/ImportFrom statements themselves are there)."""
        if node_type is cst.Arg:
            return cast("list[_Node]", self._all_args())
        return self._ctx.nodes(node_type)

    def _all_args(self) -> list[cst.Arg]:
        """The engine indexes a call's arguments as their values; the Arg nodes come from the calls."""
        if self._args is None:
            self._args = [*self._ctx.nodes(cst.Arg), *(arg for call in self._ctx.nodes(cst.Call) for arg in call.args)]
        return self._args

    def nodes_of(self, *node_types: type) -> list[cst.CSTNode]:
        return [node for node_type in node_types for node in self.nodes(node_type)]

    def calls_to(self, wanted: set[str]) -> list[cst.Call]:
        return [c for c in self.nodes(cst.Call) if self.matches(c.func, wanted)]

    def matches(self, node: cst.CSTNode, wanted: set[str]) -> bool:
        return not self.qnames(node).isdisjoint(wanted)

    def references(self) -> list[tuple[cst.CSTNode, list[str]]]:
        """Outermost Name/Attribute expressions outside imports, with their sorted qualified names."""
        if self._references is None:
            inner = {id(a.value) for a in self.nodes(cst.Attribute)}
            inner.update(id(a.name) for a in self.nodes(cst.AsName))
            self._references = [
                (node, sorted(self.qnames(node)))
                for node_type in (cst.Name, cst.Attribute)
                for node in self.nodes(node_type)
                if id(node) not in inner
            ]
        return self._references

    def span(self, node: cst.CSTNode) -> Span:
        code_range = self._position(node)
        return Span(code_range.start.line, code_range.start.column + 1, code_range.end.line, code_range.end.column + 1)

    def code(self, node: cst.CSTNode) -> str:
        code = self._codes.get(id(node))
        if code is None:
            code = self._codes[id(node)] = self.module.code_for_node(node)
        return code

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parent(node)
        while current is not None:
            yield current
            current = self._parent(current)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """Innermost FunctionDef around the node (lambdas looked through)."""
        found = self._structure.enclosing_function(node)
        if found is not _UNSET:
            return found
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def kernel_at(self, node: cst.CSTNode) -> KernelInfo | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                kernel = self.kernel(ancestor.name.value)
                if kernel is not None and kernel.node is ancestor:
                    return kernel
        return None

    def kernel(self, name: str) -> KernelInfo | None:
        return next((k for k in self.kernels if k.name == name), None)

    def fold(self, node: cst.BaseExpression | None, env: dict[str, Val] | None = None) -> Val:
        return self.folder.fold(node, env)

    def guard_at(self, node: cst.CSTNode) -> str | None:
        """'amd'/'nvidia' when the node sits in a branch of a vendor test, or after a `tl.static_assert` of one in
        its block (innermost test wins)."""
        child = node
        for ancestor in self.ancestors(node):
            branch = None
            if isinstance(ancestor, cst.If):
                branch = True if child is ancestor.body else False if child is ancestor.orelse else None
            elif isinstance(ancestor, cst.IfExp):
                branch = True if child is ancestor.body else False if child is ancestor.orelse else None
            elif isinstance(ancestor, cst.IndentedBlock):
                guard = self._asserted_before(ancestor, child)
                if guard:
                    return guard
            if branch is not None:
                guard = names.guard_of_test(self.code(ancestor.test), branch)
                if guard:
                    return guard
            child = ancestor
        return None

    def _asserted_before(self, block: cst.IndentedBlock, statement: cst.CSTNode) -> str | None:
        """'amd'/'nvidia' when a statement before `statement` in the block is `tl.static_assert(<vendor test>, ...)`:
        the compile stops there on the other vendor's backend, so the rest of the block is that vendor's only
        (triton_kernels' flexpoint: `tl.static_assert(cuda_capability_geq(8, 6), ...)` before its PTX)."""
        asserts = self._block_asserts.get(id(block))
        if asserts is None:
            asserts = self._block_asserts[id(block)] = list(self._vendor_asserts(block))
        if not asserts:
            return None
        index = next((i for i, s in enumerate(block.body) if s is statement), -1)
        return next((vendor for at, vendor in asserts if at < index), None)

    def _vendor_asserts(self, block: cst.IndentedBlock) -> Iterator[tuple[int, str]]:
        for index, line in enumerate(block.body):
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                call = small.value if isinstance(small, cst.Expr) else None
                if isinstance(call, cst.Call) and _is_static_assert(call) and call.args:
                    guard = names.guard_of_test(self.code(call.args[0].value), True)
                    if guard in ("amd", "nvidia"):
                        yield index, guard

    def in_import_fallback(self, node: cst.CSTNode) -> bool:
        """Inside `except ImportError/ModuleNotFoundError:`: a fallback for old installs, not the main path."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.ExceptHandler) and ancestor.type is not None:
                if re.search(r"\b(ImportError|ModuleNotFoundError)\b", self.code(ancestor.type)):
                    return True
        return False

    def assignments(self, name_node: cst.Name) -> list[cst.BaseExpression] | None:
        """Expressions bound to the name in the innermost scope that binds it; None when unknown."""
        name = name_node.value
        function = self.enclosing_function(name_node)
        while True:
            table = self._scopes.tables.get(function, {})
            if name in table:
                if (function, name) in self._scopes.mutated:
                    return None
                return table[name]
            if function is None:
                return None
            function = self.enclosing_function(function)

    def module_function(self, name: str) -> cst.FunctionDef | None:
        return self._scopes.functions.get(name)

    def _lookup(self, name_node: cst.Name, env: dict[str, Val]) -> Val:
        exprs = self.assignments(name_node)
        key = (id(exprs), name_node.value)
        if not exprs or key in self._resolving:
            return UNKNOWN
        self._resolving.add(key)
        try:
            folded = [self._fold_bound(expr, env) for expr in exprs]
        finally:
            self._resolving.discard(key)
        if any(not v.known for v in folded):
            return UNKNOWN
        folded = self._overwritten(exprs, folded)
        return Val([p for v in folded for p in (v.possibles or ())], any(v.partial for v in folded))

    def _overwritten(self, exprs: list, folded: list[Val]) -> list[Val]:
        """`nw = 32` then `if is_hip(): nw = 16`: on AMD the 32 never reaches a use (dead_on="amd")."""
        anchors = [e.value if isinstance(e, Projection) else e.iterable if isinstance(e, Element) else e for e in exprs]
        anchors = [a.iterable if isinstance(a, Element) else a for a in anchors]
        guards = [self.guard_at(a) if isinstance(a, cst.CSTNode) else None for a in anchors]
        if not any(g in ("amd", "nvidia") for g in guards):
            return folded
        out = []
        for i, val in enumerate(folded):
            later = {g for g in guards[i + 1 :] if g in ("amd", "nvidia")}
            if guards[i] is None and len(later) == 1 and self.condition_of(anchors[i]) is None:
                vendor = later.pop()
                val = Val(
                    [dataclasses.replace(p, dead_on=p.dead_on or vendor) for p in (val.possibles or ())], val.partial
                )
            out.append(val)
        return out

    def _fold_bound(self, expr: Any, env: dict[str, Val]) -> Val:
        """One scope-table entry folded, its values marked with the branch condition it is bound under
        (`num_warps = 32` under `if BLOCK_SIZE >= 32768:`)."""
        if isinstance(expr, Projection):
            val = self.fold_item(expr.value, expr.index, env)
            anchor = expr.value.iterable if isinstance(expr.value, Element) else expr.value
        elif isinstance(expr, Element):
            val, anchor = self.fold_element(expr.iterable, env), expr.iterable
        else:
            val, anchor = self.fold(expr, env), expr
        if not val.known:
            return val
        when = self.condition_of(anchor)
        if when is None:
            return val
        return Val(
            [
                p if p.when is not None or p.module is not None else dataclasses.replace(p, when=when)
                for p in (val.possibles or ())
            ],
            val.partial,
        )

    def condition_of(self, node: cst.CSTNode) -> str | None:
        """The test of the innermost `if` (in the node's function) whose branch holds the node."""
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                return None
            if isinstance(ancestor, cst.If):
                test = self.code(ancestor.test).strip()
                if child is ancestor.body:
                    return test
                if child is ancestor.orelse:
                    return f"not ({test})"
            child = ancestor
        return None

    def fold_item(self, expr: Any, index: int, env: dict[str, Val] | None = None, depth: int = 0) -> Val:
        """Element `index` of what `expr` evaluates to, folded element-wise so one unknown element of a
        tuple (`return BLOCK_SIZE, num_warps`) does not hide the others."""
        env = env or {}
        if depth > 8:
            return UNKNOWN
        if isinstance(expr, Element):
            whole = self.fold_element(expr.iterable, env)
            return combine(expr.iterable, lambda v: v[index], whole)
        if isinstance(expr, (cst.Tuple, cst.List)):
            elements = expr.elements
            if any(isinstance(e, cst.StarredElement) for e in elements) or index >= len(elements):
                return UNKNOWN
            return self.fold(elements[index].value, env)
        if isinstance(expr, cst.Name) and expr.value not in env:
            exprs = self.assignments(expr)
            key = (id(exprs), expr.value, index)
            if not exprs or key in self._resolving:
                return UNKNOWN
            self._resolving.add(key)
            try:
                parts = [
                    self.fold_item_of_entry(e, index, env, depth)
                    if isinstance(e, Projection)
                    else self._fold_bound(Projection(e, index), env)
                    for e in exprs
                ]
            finally:
                self._resolving.discard(key)
            return _union(parts)
        if isinstance(expr, cst.IfExp):
            test = self.fold(expr.test, env)
            if test.known and len({bool(v) for v in test.values}) == 1:
                return self.fold_item(expr.body if test.values[0] else expr.orelse, index, env, depth + 1)
            return _union(
                [self.fold_item(expr.body, index, env, depth + 1), self.fold_item(expr.orelse, index, env, depth + 1)]
            )
        if isinstance(expr, cst.Call):
            from porter.analyze.triton import flow

            folded = flow.fold_call(self, expr, env, index)
            if folded is not None:
                return folded
        return combine(expr, lambda v: v[index], self.fold(expr, env))

    def fold_item_of_entry(self, entry: Projection, index: int, env, depth: int) -> Val:
        """Element `index` of a name bound by a tuple target (`a, (b, c) = ...`): nested projection."""
        inner = self.fold_item(entry.value, entry.index, env, depth + 1)
        return combine(
            entry.value if isinstance(entry.value, cst.CSTNode) else entry.value.iterable, lambda v: v[index], inner
        )

    def fold_element(self, iterable: cst.BaseExpression, env: dict[str, Val] | None = None, depth: int = 0) -> Val:
        """Any element of an iterable, each from where it is written: `[4, 8, 32]`, a comprehension over
        one (filters applied where they fold), a name bound to one, `range(...)`."""
        env = env or {}
        if depth > 8:
            return UNKNOWN
        if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
            if any(isinstance(e, cst.StarredElement) for e in iterable.elements):
                return UNKNOWN
            return _union([self.fold(e.value, env) for e in iterable.elements], empty_ok=True)
        if isinstance(iterable, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self._fold_comprehension(iterable, iterable.for_in, env, depth)
        if isinstance(iterable, cst.Name) and iterable.value not in env:
            exprs = self.assignments(iterable)
            key = (id(exprs), iterable.value, "element")
            if not exprs or key in self._resolving or any(isinstance(e, (Projection, Element)) for e in exprs):
                return UNKNOWN
            self._resolving.add(key)
            try:
                return _union([self.fold_element(e, env, depth + 1) for e in exprs])
            finally:
                self._resolving.discard(key)
        whole = self.fold(iterable, env)
        value = whole.single
        if not whole.is_single or not isinstance(value, (list, tuple)):
            return UNKNOWN
        return Val([Possible(v, iterable) for v in value])

    def _fold_comprehension(self, comp, for_in: cst.CompFor, env: dict[str, Val], depth: int) -> Val:
        if not isinstance(for_in.target, cst.Name) or for_in.inner_for_in is not None:
            return UNKNOWN
        items = self.fold_element(for_in.iter, env, depth + 1)
        if not items.known:
            return UNKNOWN
        parts = []
        for possible in items.possibles or ():
            bound = {**env, for_in.target.value: Val([possible])}
            tests = [self.fold(condition.test, bound) for condition in for_in.ifs]
            if any(t.is_single and not t.single for t in tests):
                continue  # a filter that drops this element (`if w * 64 <= 1024`)
            parts.append(self.fold(comp.elt, bound))
        return _union(parts, empty_ok=True)

    def _fold_call(self, call: cst.Call, env: dict[str, Val]) -> Val | None:
        from porter.analyze.triton import flow

        return flow.fold_call(self, call, env, None)

    # output -------------------------------------------------------------------------------------
    def val_dict(self, val: Val | None, node: cst.CSTNode | None) -> dict[str, Any] | None:
        if val is None:
            return None
        out: dict[str, Any] = {"known": val.known, "values": _jsonable(val.values)}
        if val.known:  # where each value was written: what a codemod edits
            out["origins"] = [
                {"value": _jsonable(p.value), "text": self.code(p.node), **self.span(p.node).to_dict()}
                for p in (val.possibles or ())
            ]
        if node is not None:
            span = self.span(node)
            out |= {"text": self.code(node), "line": span.line, "column": span.column}
        return out

    def to_dict(self, target: Any = None) -> dict[str, Any]:
        from porter.analyze.triton.serialize import inventory_dict

        return inventory_dict(self, target)


def _union(parts: list[Val], empty_ok: bool = False) -> Val:
    if any(not v.known for v in parts) or (not parts and not empty_ok):
        return UNKNOWN
    return Val([p for v in parts for p in (v.possibles or ())], any(v.partial for v in parts))


def _dotted(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


class _Builder:
    """Fills the inventory's kernels and launches."""

    def __init__(self, inv: TritonInventory):
        self.inv = inv

    def run(self, kernels: bool = True) -> None:
        if kernels:
            for node in self.inv.nodes(cst.FunctionDef):
                if node.decorators:
                    kernel = self._kernel(node)
                    if kernel is not None:
                        self.inv.kernels.append(kernel)
        for node in self.inv.nodes(cst.Call):
            if isinstance(node.func, cst.Subscript):
                launch = self._launch(node)
            else:
                launch = self._wrapped_launch(node) if node.args else None
            if launch is not None:
                self.inv.launches.extend(self._table_entries(launch) or [launch])
        if kernels:
            self._operand_sizes()
            self._orphans()

    def _orphans(self) -> None:
        """Config lists built here but tuned elsewhere (a configs module): expand the outermost
        list or comprehension around each triton.Config no autotune of this module reached."""
        from porter.analyze.triton.configs import expand_config_list

        reached = {id(c.node) for k in self.inv.kernels if k.autotune for c in k.autotune.configs}
        done: set[int] = set()
        for node in self.inv.calls_to(names.CONFIG):
            if id(node) in reached:
                continue
            root = node
            for ancestor in self.inv.ancestors(node):
                if isinstance(ancestor, (cst.List, cst.Tuple, cst.ListComp, cst.BinaryOperation)):
                    root = ancestor
                elif not isinstance(ancestor, (cst.Element, cst.StarredElement, cst.LeftSquareBracket)):
                    break
            if id(root) in done:
                continue
            done.add(id(root))
            configs, _, _ = expand_config_list(self.inv, root)
            for config in configs:
                if id(config.node) not in reached:
                    config.index = len(self.inv.orphan_configs)
                    self.inv.orphan_configs.append(config)

    # kernels ------------------------------------------------------------------------------------
    def _kernel(self, node: cst.FunctionDef) -> KernelInfo | None:
        inv = self.inv
        decorators: list[tuple[str, cst.Decorator]] = []
        for decorator in node.decorators:
            expr = decorator.decorator
            callee = expr.func if isinstance(expr, cst.Call) else expr
            qualified = inv.qnames(callee)
            kind = (
                "triton.jit"
                if qualified & names.JIT
                else "triton.autotune"
                if qualified & names.AUTOTUNE
                else "triton.heuristics"
                if qualified & names.HEURISTICS
                else None
            )
            decorators.append((kind or next(iter(sorted(qualified)), inv.code(callee)), decorator))
        if not any(kind == "triton.jit" for kind, _ in decorators):
            return None
        dots: list[cst.Call] = []
        named: list[cst.CSTNode] = []  # Names and Attributes of the body: where dtypes are written
        for n in _walk(node.body):
            node_type = type(n)
            if node_type is cst.Call:
                if inv.matches(n.func, names.DOT):
                    dots.append(n)
            elif node_type is cst.Name or node_type is cst.Attribute:
                named.append(n)
        kernel = KernelInfo(
            name=node.name.value,
            node=node,
            spanner=inv.span,
            decorators=[k for k, _ in decorators],
            params=self._params(node),
            gemm_like=bool(dots),
            dot_nodes=dots,
            dtypes=self._dtypes(named),
            elem_bytes=None,
            elem_bytes_source="no tl.dot",
        )
        for kind, decorator in decorators:
            if kind == "triton.autotune" and isinstance(decorator.decorator, cst.Call):
                kernel.autotune = self._autotune(kernel, decorator.decorator)
            elif kind == "triton.heuristics" and isinstance(decorator.decorator, cst.Call):
                self._heuristics(kernel, decorator.decorator)
        return kernel

    def _params(self, node: cst.FunctionDef) -> list[Param]:
        out = []
        for param in [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]:
            annotation = param.annotation.annotation if param.annotation else None
            constexpr = annotation is not None and self.inv.matches(annotation, names.CONSTEXPR)
            out.append(
                Param(
                    name=param.name.value,
                    constexpr=constexpr,
                    annotation=self.inv.code(annotation) if annotation is not None else None,
                    default=self.inv.fold(param.default) if param.default is not None else None,
                    node=param,
                )
            )
        return out

    def _dtypes(self, named: list[cst.CSTNode]) -> list[str]:
        """Triton dtypes the kernel names (accumulator dtypes of tl.zeros/out_dtype left out)."""
        found: list[str] = []
        for n in named:
            dtype = operands.dtype_name(self.inv, n)
            if dtype and dtype not in found and not self._is_accumulator_dtype(n):
                found.append(dtype)
        return found

    def _operand_sizes(self) -> None:
        """GEMM operand element size of each kernel, once the launches (constexpr dtypes) are known."""
        for kernel in self.inv.kernels:
            if kernel.dot_nodes:
                dtypes = operands.param_dtypes(self.inv, kernel.name, kernel.params)
                kernel.elem_bytes, kernel.elem_bytes_source = operands.dot_operand_bytes(
                    self.inv, kernel.node, kernel.dot_nodes, dtypes
                )

    def _is_accumulator_dtype(self, node: cst.CSTNode) -> bool:
        parent = self.inv.parent(node)
        if not isinstance(parent, cst.Arg) or parent.keyword is None:
            return False
        if parent.keyword.value == "out_dtype":
            return True
        call = self.inv.parent(parent)
        return (
            parent.keyword.value == "dtype"
            and isinstance(call, cst.Call)
            and self.inv.matches(call.func, {"triton.language.zeros", "triton.language.full"})
        )

    def _autotune(self, kernel: KernelInfo, call: cst.Call) -> AutotuneInfo:
        from porter.analyze.triton.configs import expand_config_list

        configs_arg = _argument(call, "configs", 0)
        key_arg = _argument(call, "key", 1)
        key = self.inv.fold(key_arg).single if key_arg is not None else None
        configs, source, complete = (
            ([], "unknown", False) if configs_arg is None else expand_config_list(self.inv, configs_arg)
        )
        return AutotuneInfo(
            kernel=kernel.name,
            node=call,
            spanner=self.inv.span,
            key=list(key) if isinstance(key, (list, tuple)) else None,
            configs=configs,
            configs_source=source,
            complete=complete,
        )

    def _heuristics(self, kernel: KernelInfo, call: cst.Call) -> None:
        values = _argument(call, "values", 0)
        if not isinstance(values, cst.Dict):
            return
        for element in values.elements:
            if not isinstance(element, cst.DictElement):
                continue
            key = self.inv.fold(element.key).single
            value = element.value.body if isinstance(element.value, cst.Lambda) else element.value
            if isinstance(key, str):
                kernel.heuristics[key] = self.inv.fold(value)
                kernel.heuristics_nodes[key] = value

    # launches -----------------------------------------------------------------------------------
    def _wrapped_launch(self, node: cst.Call) -> LaunchSite | None:
        """`_launch(kernel, grid, args, num_warps=nw)` / `kernel.run(..., num_warps=nw)`: launch options
        passed to a project helper that launches (or to a JIT function's run/warmup). Config builders and
        tl.range have their own readers; dict(...) and unknown library calls are not launches."""
        if not any(a.keyword is not None and a.keyword.value in _WRAPPED_KEYS for a in node.args):
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("run", "warmup"):
            pass
        elif (
            isinstance(func, cst.Name)
            and func.value not in ("dict", "Config")
            and not self.inv.matches(func, names.CONFIG | {"triton.language.range"})
        ):
            from porter.analyze.triton import flow

            target = flow.resolve_function(self.inv, func)
            if target is None or not _launches(target[1]):
                return None  # not a launch helper (a Config builder, a settings helper, ...)
        else:
            return None
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        options = {k: v for k, v in keywords.items() if k in names.LAUNCH_OPTIONS}
        inv = self.inv
        return LaunchSite(
            kernel=inv.code(func),
            kernel_known=False,
            node=node,
            spanner=inv.span,
            grid="",
            options={k: inv.fold(v) for k, v in options.items()},
            option_nodes=options,
            meta={},
            meta_nodes={},
            guard=inv.guard_at(node),
        )

    def _launch(self, node: cst.Call) -> LaunchSite | None:
        inv = self.inv
        subscript = node.func
        assert isinstance(subscript, cst.Subscript)
        kernel_expr = subscript.value
        local = inv.kernel(kernel_expr.value) if isinstance(kernel_expr, cst.Name) else None
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        if local is None and not (set(keywords) & names.LAUNCH_OPTIONS):
            return None
        name = inv.code(kernel_expr)
        options = {k: v for k, v in keywords.items() if k in names.LAUNCH_OPTIONS}
        meta = {k: v for k, v in keywords.items() if k not in names.LAUNCH_OPTIONS}
        grid = subscript.slice[0].slice.value if isinstance(subscript.slice[0].slice, cst.Index) else subscript
        return LaunchSite(
            kernel=local.name if local else name,
            kernel_known=local is not None,
            node=node,
            spanner=inv.span,
            grid=inv.code(grid),
            options={k: inv.fold(v) for k, v in options.items()},
            option_nodes=options,
            meta={k: inv.fold(v) for k, v in meta.items()},
            meta_nodes=meta,
            guard=inv.guard_at(node),
        )

    def _table_entries(self, launch: LaunchSite) -> list[LaunchSite] | None:
        """`num_stages=configs[dtype]["num_stages"]` or `**configs[dtype]` over a dict literal of config dicts keyed
        by a run-time value (persistent_matmul's per-dtype table, the batch-invariant matmul's): one launch per
        entry, each with that entry's values and reported at its `"num_stages"` (the line a port changes). None
        when the launch reads no such table."""
        keywords = {**launch.option_nodes, **launch.meta_nodes}
        picks = {k: p for k, p in ((k, _table_pick(v)) for k, v in keywords.items()) if p is not None}
        splats = [s for s in (_table_splat(arg) for arg in launch.node.args) if s is not None]
        reads = [(p[0], p[1]) for p in picks.values()] + splats
        if len({(self.inv.code(name), self.inv.code(key)) for name, key in reads}) != 1:
            return None  # no table, or two tables (or two keys) whose entries do not pair up
        name, key = reads[0]
        table = self._config_table(name)
        if table is None or self.inv.fold(key).known:  # a known key: the folder picks its entry itself
            return None
        sites = []
        for entry in table:
            values = {k: v for k, v in _string_keyed(self.inv, entry) if k is not None}
            nodes = {k: values.get(p[2]) for k, p in picks.items()} | (values if splats else {})
            sites.append(self._entry_launch(launch, nodes, anchor=values.get("num_stages") or entry))
        return sites

    def _entry_launch(
        self, launch: LaunchSite, nodes: dict[str, cst.BaseExpression | None], anchor: cst.CSTNode
    ) -> LaunchSite:
        """The launch with one table entry's values (a key the entry lacks is unknown there)."""
        options, option_nodes = dict(launch.options), dict(launch.option_nodes)
        meta, meta_nodes = dict(launch.meta), dict(launch.meta_nodes)
        for keyword, node in nodes.items():
            val, where = UNKNOWN if node is None else self.inv.fold(node), node or _keyword_node(launch, keyword)
            if keyword in names.LAUNCH_OPTIONS:
                options[keyword], option_nodes[keyword] = val, where
            else:
                meta[keyword], meta_nodes[keyword] = val, where
        return dataclasses.replace(
            launch, options=options, option_nodes=option_nodes, meta=meta, meta_nodes=meta_nodes, anchor=anchor
        )

    def _config_table(self, name: cst.Name) -> list[cst.Dict] | None:
        """The entries of the one dict literal of dict literals bound to `name` (local or module); None otherwise."""
        bound = self.inv.assignments(name)
        if not bound or len(bound) != 1 or not isinstance(bound[0], cst.Dict) or not bound[0].elements:
            return None
        entries = [e.value for e in bound[0].elements if isinstance(e, cst.DictElement)]
        if len(entries) != len(bound[0].elements) or not all(isinstance(e, cst.Dict) for e in entries):
            return None
        return cast("list[cst.Dict]", entries)


def _table_pick(value: cst.CSTNode) -> tuple[cst.Name, cst.BaseExpression, str] | None:
    """(table, run-time key, entry key) of `table[key]["entry key"]`; None for any other expression."""
    if not isinstance(value, cst.Subscript) or not isinstance(value.value, cst.Subscript):
        return None
    inner = value.value
    if not isinstance(inner.value, cst.Name) or len(inner.slice) != 1 or len(value.slice) != 1:
        return None
    key, field_ = inner.slice[0].slice, value.slice[0].slice
    if not isinstance(key, cst.Index) or not isinstance(field_, cst.Index):
        return None
    if not isinstance(field_.value, cst.SimpleString) or not isinstance(field_.value.evaluated_value, str):
        return None
    return inner.value, key.value, field_.value.evaluated_value


def _table_splat(arg: cst.Arg) -> tuple[cst.Name, cst.BaseExpression] | None:
    """(table, run-time key) of a `**table[key]` argument; None for any other argument."""
    value = arg.value
    if arg.star != "**" or not isinstance(value, cst.Subscript) or not isinstance(value.value, cst.Name):
        return None
    if len(value.slice) != 1 or not isinstance(value.slice[0].slice, cst.Index):
        return None
    return value.value, value.slice[0].slice.value


def _keyword_node(launch: LaunchSite, keyword: str) -> cst.CSTNode:
    """The node a launch keyword was written at (the call itself for one a table entry adds)."""
    return launch.option_nodes.get(keyword) or launch.meta_nodes.get(keyword) or launch.node


def _string_keyed(inv, entry: cst.Dict) -> Iterator[tuple[str | None, cst.BaseExpression]]:
    """(key, value node) of a config dict literal; the key None when it is not a literal string."""
    for element in entry.elements:
        if isinstance(element, cst.DictElement):
            key = inv.fold(element.key).single
            yield (key if isinstance(key, str) else None), element.value


_WRAPPED_KEYS = ("num_warps", "num_stages", "waves_per_eu")


def _launches(function: cst.FunctionDef) -> bool:
    """The function launches a kernel itself: `kernel[grid](...)` or `kernel.run(...)` in its body."""
    for node in _walk(function.body):
        if isinstance(node, cst.Call) and (
            isinstance(node.func, cst.Subscript)
            or (isinstance(node.func, cst.Attribute) and node.func.attr.value == "run")
        ):
            return True
    return False


_FIELDS: dict[type, tuple[str, ...]] = {}
_TOKEN_TYPES = (
    cst.BaseParenthesizableWhitespace,
    cst.Comma,
    cst.Dot,
    cst.AssignEqual,
    cst.Colon,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Semicolon,
    cst.Newline,
    cst.TrailingWhitespace,
    cst.EmptyLine,
)


def _fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if not f.name.startswith("whitespace") and f.name not in ("lpar", "rpar", "leading_lines")
        )
        _FIELDS[node_type] = fields
    return fields


_KEEP: dict[type, bool] = {}


def _keep(node_type: type) -> bool:
    """Is a value of this type a node worth visiting (not punctuation or whitespace)? Cached: isinstance
    against libcst's abstract base classes is slow."""
    keep = _KEEP.get(node_type)
    if keep is None:
        keep = issubclass(node_type, cst.CSTNode) and not issubclass(node_type, _TOKEN_TYPES)
        _KEEP[node_type] = keep
    return keep


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Child nodes in field order, punctuation and whitespace left out (libcst's .children is slow)."""
    out: list[cst.CSTNode] = []
    fields = _FIELDS.get(type(node)) or _fields(type(node))
    keep = _KEEP
    for name in fields:
        value = getattr(node, name)
        value_type = type(value)
        if value_type is list or value_type is tuple:
            for child in value:
                ok = keep.get(type(child))
                if ok or (ok is None and _keep(type(child))):
                    out.append(child)
        else:
            ok = keep.get(value_type)
            if ok or (ok is None and _keep(value_type)):
                out.append(value)
    return out


def _walk(node: cst.CSTNode | Any) -> Iterator[cst.CSTNode]:
    """Pre-order walk over a node (or a sequence of nodes)."""
    stack = list(reversed(node)) if isinstance(node, (list, tuple)) else [node]
    pop, extend = stack.pop, stack.extend
    while stack:
        current = pop()
        yield current
        children = _children(current)
        if children:
            children.reverse()
            extend(children)


def _argument(call: cst.Call, keyword: str, position: int) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position].value if len(positional) > position else None


walk = _walk
argument = _argument


def _is_static_assert(call: cst.Call) -> bool:
    """`tl.static_assert(...)`, `triton.language.static_assert(...)`, `static_assert(...)`: checked at compile time."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name == "static_assert"
