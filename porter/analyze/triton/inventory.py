"""Build the Triton inventory of one module: kernels, autotune config lists, launch sites.

Everything is static: names resolve through libcst's QualifiedNameProvider (so `import
triton.language as tl`, `from triton import jit` and friends all work) and values through the
constant folder in fold.py.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Iterator

import libcst as cst

from porter.analyze.triton import names
from porter.analyze.triton.fold import UNKNOWN, Folder, Val
from porter.analyze.triton.records import (
    AutotuneInfo, ConfigInfo, KernelInfo, LaunchSite, Param, Span,
)

_ALIASES = {"tl": "triton.language"}  # fallback for snippets that use `tl.` without importing it


class _Scopes:
    """Assignments per scope (module = None, else the FunctionDef). A name bound in a way the folder
    cannot follow (loop target, import, augmented assignment, parameter) maps to None: unknown."""

    def __init__(self) -> None:
        self.tables: dict[Any, dict[str, list[cst.BaseExpression] | None]] = {None: {}}
        self.mutated: set[tuple[Any, str]] = set()
        self.functions: dict[str, cst.FunctionDef] = {}
        self.by_type: dict[type, list[cst.CSTNode]] = {}  # every node of the module, in source order
        self.parents: dict[int, cst.CSTNode] = {}
        self._stack: list[Any] = [None]

    def collect(self, root: cst.CSTNode) -> None:
        """Walk once, calling visit_<Type> / leave_FunctionDef like a libcst visitor would."""
        stack: list[Any] = [root]
        while stack:
            node = stack.pop()
            if node is _LEAVE:
                self._stack.pop()
                continue
            self.by_type.setdefault(type(node), []).append(node)
            visit = getattr(self, f"visit_{type(node).__name__}", None)
            if visit is not None and visit(node) is False:
                self._index_only(node, stack)
                continue
            if isinstance(node, cst.FunctionDef):
                stack.append(_LEAVE)
            children = _children(node)
            for child in children:
                self.parents[id(child)] = node
            stack.extend(reversed(children))

    def _index_only(self, node: cst.CSTNode, stack: list) -> None:
        """A subtree the scope tables skip (a lambda) still goes into the node index."""
        pending = [node]
        while pending:
            current = pending.pop()
            children = _children(current)
            for child in children:
                self.parents[id(child)] = current
                self.by_type.setdefault(type(child), []).append(child)
            pending.extend(reversed(children))

    @property
    def _table(self) -> dict:
        return self.tables[self._stack[-1]]

    def _bind(self, name: str, value: cst.BaseExpression | None) -> None:
        table = self._table
        if value is None or (name in table and table[name] is None):
            table[name] = None
        else:
            table.setdefault(name, []).append(value)

    def _bind_target(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            paired = values is not None and len(values) == len(target.elements)
            for i, element in enumerate(target.elements):
                self._bind_target(element.value, values[i].value if paired else None)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._stack[-1] is None:
            self.functions.setdefault(node.name.value, node)
        self._bind(node.name.value, None)
        self._stack.append(node)
        self.tables[node] = {}
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            self._bind(param.name.value, None)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._bind(star.name.value, None)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # lambda parameters and bodies bind nothing in the enclosing scope

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, None)
        if isinstance(node.target, cst.Name):
            self.mutated.add((self._stack[-1], node.target.value))

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, None)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound = node.asname.name if node.asname else node.name
        while isinstance(bound, cst.Attribute):
            bound = bound.value
        if isinstance(bound, cst.Name):
            self._bind(bound.value, None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.attr.value in ("append", "extend", "insert", "pop", "remove", "clear")):
            self.mutated.add((self._stack[-1], func.value.value))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self.visit_ImportAlias(alias)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self.visit_ImportAlias(alias)


_LEAVE = object()  # stack marker: leave the current function scope


class TritonInventory:
    """The Triton view of one module plus the helpers visitors share (names, folding, guards)."""

    def __init__(self, path: str, module: cst.Module, qualified_names: Callable[[cst.CSTNode], set[str]],
                 position: Callable[[cst.CSTNode], Any]):
        self.path = path
        self.module = module
        self._qualified_names = qualified_names
        self._position = position
        self._scopes = _Scopes()
        self._scopes.collect(self.module)
        parents = self._scopes.parents  # our own walk already knows every parent, by id
        self._parent = lambda node: parents.get(id(node))
        self._resolving: set[tuple[int, str]] = set()
        self.folder = Folder(self._lookup, self.qnames)
        self.kernels: list[KernelInfo] = []
        self.launches: list[LaunchSite] = []
        self.orphan_configs: list[ConfigInfo] = []  # triton.Config lists no autotune here consumes
        _Builder(self).run()

    # toolbox ------------------------------------------------------------------------------------
    def qnames(self, node: cst.CSTNode) -> set[str]:
        """Qualified names of a Name/Attribute; falls back to the dotted source text, and reads an
        unimported `tl.` as triton.language."""
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

    def nodes(self, node_type: type) -> list[cst.CSTNode]:
        """Every node of exactly this type, in source order (one walk, shared by all visitors)."""
        return self._scopes.by_type.get(node_type, [])

    def nodes_of(self, *node_types: type) -> list[cst.CSTNode]:
        return [node for node_type in node_types for node in self.nodes(node_type)]

    def calls_to(self, wanted: set[str]) -> list[cst.Call]:
        return [c for c in self.nodes(cst.Call) if self.matches(c.func, wanted)]

    def matches(self, node: cst.CSTNode, wanted: set[str]) -> bool:
        return bool(self.qnames(node) & wanted)

    def span(self, node: cst.CSTNode) -> Span:
        code_range = self._position(node)
        return Span(code_range.start.line, code_range.start.column + 1, code_range.end.line,
                    code_range.end.column + 1)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parent(node)
        while current is not None:
            yield current
            current = self._parent(current)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
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
        """'amd'/'nvidia' when the node sits in a branch of a vendor test (innermost test wins)."""
        child = node
        for ancestor in self.ancestors(node):
            branch = None
            if isinstance(ancestor, cst.If):
                branch = True if child is ancestor.body else False if child is ancestor.orelse else None
            elif isinstance(ancestor, cst.IfExp):
                branch = True if child is ancestor.body else False if child is ancestor.orelse else None
            if branch is not None:
                guard = names.guard_of_test(self.code(ancestor.test), branch)
                if guard:
                    return guard
            child = ancestor
        return None

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
            folded = [self.fold(expr, env) for expr in exprs]
        finally:
            self._resolving.discard(key)
        if any(not v.known for v in folded):
            return UNKNOWN
        return Val([p for v in folded for p in v.possibles])

    # output -------------------------------------------------------------------------------------
    def val_dict(self, val: Val | None, node: cst.CSTNode | None) -> dict[str, Any] | None:
        if val is None:
            return None
        out: dict[str, Any] = {"known": val.known, "values": _jsonable(val.values)}
        if val.known:  # where each value was written: what a codemod edits
            out["origins"] = [{"value": _jsonable(p.value), "text": self.code(p.node), **self.span(p.node).to_dict()}
                              for p in val.possibles]
        if node is not None:
            span = self.span(node)
            out |= {"text": self.code(node), "line": span.line, "column": span.column}
        return out

    def to_dict(self, target: Any = None) -> dict[str, Any]:
        from porter.analyze.triton.serialize import inventory_dict

        return inventory_dict(self, target)


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

    def run(self) -> None:
        for node in self.inv.nodes(cst.FunctionDef):
            if node.decorators:
                kernel = self._kernel(node)
                if kernel is not None:
                    self.inv.kernels.append(kernel)
        for node in self.inv.nodes(cst.Call):
            if isinstance(node.func, cst.Subscript):
                launch = self._launch(node)
                if launch is not None:
                    self.inv.launches.append(launch)
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
            kind = ("triton.jit" if qualified & names.JIT else "triton.autotune" if qualified & names.AUTOTUNE
                    else "triton.heuristics" if qualified & names.HEURISTICS else None)
            decorators.append((kind or next(iter(sorted(qualified)), inv.code(callee)), decorator))
        if not any(kind == "triton.jit" for kind, _ in decorators):
            return None
        dots = [n for n in _walk(node.body) if isinstance(n, cst.Call) and inv.matches(n.func, names.DOT)]
        dtypes, elem_bytes, source = self._dtypes(node, dots)
        kernel = KernelInfo(
            name=node.name.value, node=node, spanner=inv.span, decorators=[k for k, _ in decorators],
            params=self._params(node), gemm_like=bool(dots), dot_nodes=dots, dtypes=dtypes,
            elem_bytes=elem_bytes, elem_bytes_source=source,
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
            out.append(Param(
                name=param.name.value, constexpr=constexpr,
                annotation=self.inv.code(annotation) if annotation is not None else None,
                default=self.inv.fold(param.default) if param.default is not None else None, node=param,
            ))
        return out

    def _dtypes(self, node: cst.FunctionDef, dots: list[cst.Call]) -> tuple[list[str], int, str]:
        """Triton dtypes the kernel names (accumulator dtypes of tl.zeros/out_dtype left out), and the
        GEMM operand size: from the dot operands' visible casts, else assumed 2 bytes."""
        found: list[str] = []
        for n in _walk(node.body):
            if isinstance(n, (cst.Attribute, cst.Name)):
                dtype = self._dtype_name(n)
                if dtype and not self._is_accumulator_dtype(n) and dtype not in found:
                    found.append(dtype)
        operands = [self._operand_dtype(arg.value, 0) for dot in dots for arg in dot.args[:2]]
        operands = [d for d in operands if d]
        if operands:
            smallest = min(operands, key=lambda d: names.DTYPE_BYTES[d])
            return found, names.DTYPE_BYTES[smallest], f"dot operands ({smallest})"
        return found, names.ASSUMED_ELEM_BYTES, f"assumed ({names.ASSUMED_ELEM_BYTES} bytes: dot operand dtype not visible)"

    def _dtype_name(self, node: cst.CSTNode) -> str | None:
        return next((q.rsplit(".", 1)[1] for q in self.inv.qnames(node)
                     if q.startswith("triton.language.") and q.rsplit(".", 1)[1] in names.DTYPE_BYTES), None)

    def _operand_dtype(self, expr: cst.BaseExpression, depth: int) -> str | None:
        """dtype of `x.to(tl.float16)` / `tl.load(p).to(...)` / a local name bound to one."""
        if depth > 4:
            return None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "to" \
                and expr.args:
            return self._dtype_name(expr.args[0].value)
        if isinstance(expr, cst.Name):
            bound = self.inv.assignments(expr)
            if bound and len(bound) == 1:
                return self._operand_dtype(bound[0], depth + 1)
        return None

    def _is_accumulator_dtype(self, node: cst.CSTNode) -> bool:
        parent = self.inv.parent(node)
        if not isinstance(parent, cst.Arg) or parent.keyword is None:
            return False
        if parent.keyword.value == "out_dtype":
            return True
        call = self.inv.parent(parent)
        return (parent.keyword.value == "dtype" and isinstance(call, cst.Call)
                and self.inv.matches(call.func, {"triton.language.zeros", "triton.language.full"}))

    def _autotune(self, kernel: KernelInfo, call: cst.Call) -> AutotuneInfo:
        from porter.analyze.triton.configs import expand_config_list

        configs_arg = _argument(call, "configs", 0)
        key_arg = _argument(call, "key", 1)
        key = self.inv.fold(key_arg).single if key_arg is not None else None
        configs, source, complete = ([], "unknown", False) if configs_arg is None \
            else expand_config_list(self.inv, configs_arg)
        return AutotuneInfo(kernel=kernel.name, node=call, spanner=self.inv.span,
                            key=list(key) if isinstance(key, (list, tuple)) else None,
                            configs=configs, configs_source=source, complete=complete)

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
    def _launch(self, node: cst.Call) -> LaunchSite | None:
        inv = self.inv
        subscript = node.func
        assert isinstance(subscript, cst.Subscript)
        kernel_expr = subscript.value
        name = inv.code(kernel_expr)
        local = inv.kernel(kernel_expr.value) if isinstance(kernel_expr, cst.Name) else None
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        if local is None and not (set(keywords) & names.LAUNCH_OPTIONS):
            return None
        options = {k: v for k, v in keywords.items() if k in names.LAUNCH_OPTIONS}
        meta = {k: v for k, v in keywords.items() if k not in names.LAUNCH_OPTIONS}
        grid = subscript.slice[0].slice.value if isinstance(subscript.slice[0].slice, cst.Index) else subscript
        return LaunchSite(
            kernel=local.name if local else name, kernel_known=local is not None, node=node, spanner=inv.span,
            grid=inv.code(grid), options={k: inv.fold(v) for k, v in options.items()}, option_nodes=options,
            meta={k: inv.fold(v) for k, v in meta.items()}, meta_nodes=meta, guard=inv.guard_at(node),
        )


_FIELDS: dict[type, tuple[str, ...]] = {}
_TOKEN_TYPES = (cst.BaseParenthesizableWhitespace, cst.Comma, cst.Dot, cst.AssignEqual, cst.Colon,
                cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
                cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Semicolon, cst.Newline, cst.TrailingWhitespace,
                cst.EmptyLine)


def _fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = tuple(f.name for f in dataclasses.fields(node_type)
                       if not f.name.startswith("whitespace") and f.name not in ("lpar", "rpar", "leading_lines"))
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
    for name in _fields(type(node)):
        value = getattr(node, name)
        if type(value) in (list, tuple):
            out.extend(child for child in value if _keep(type(child)))
        elif _keep(type(value)):
            out.append(value)
    return out


def _walk(node: cst.CSTNode | Any) -> Iterator[cst.CSTNode]:
    """Pre-order walk over a node (or a sequence of nodes)."""
    stack = list(reversed(node)) if isinstance(node, (list, tuple)) else [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(_children(current)))


def _argument(call: cst.Call, keyword: str, position: int) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position].value if len(positional) > position else None


walk = _walk
argument = _argument
