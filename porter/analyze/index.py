"""One cheap walk over a libcst module: node lists, import aliases, qualified names, positions.

libcst's QualifiedNameProvider and PositionProvider cost several parse-times per module, so the
engine does its own work here: a single iterative walk that skips whitespace/punctuation, an alias
table built from every import (scope-insensitive, like most linters), and positions computed only
when a finding needs one, by one code-generation pass that records token offsets.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from collections.abc import Collection, Iterable, Iterator
from itertools import accumulate
from typing import Any, TypeVar, cast

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

_SKIP_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "colon",
        "first_colon",
        "second_colon",
        "dot",
        "relative",
        "equal",
        "semicolon",
        "lbrace",
        "lbracket",
        "rbrace",
        "rbracket",
        "leading_lines",
        "lines_after_decorators",
        "trailing_whitespace",
        "header",
        "footer",
        "newline",
        "asynchronous",
        "star",
        "operator",
        "attr",
        "keyword",
        "empty_lines",
        "indent",
        "trailing_comma",
        "comment",
        "default_indent",
        "default_newline",
        "encoding",
        "has_trailing_newline",
        "conversion",
        "asname",
        "posonly_ind",
    }
)
_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELD_CACHE.get(node_type)
    if fields is None:
        if node_type in (cst.Import, cst.ImportFrom):
            fields = ()  # read by _note_statement; their names are bindings, not references
        else:
            skip = _SKIP_FIELDS | ({"name"} if node_type in (cst.FunctionDef, cst.ClassDef) else set())
            fields = tuple(
                f.name
                for f in dataclasses.fields(node_type)
                if f.name not in skip and not f.name.startswith("whitespace")
            )
        _FIELD_CACHE[node_type] = fields
    return fields


_STATEMENT_TYPES = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
_SCOPE_TYPES = (cst.FunctionDef, cst.ClassDef)
_EXIT = object()  # stack marker: restore the enclosing statement/scope
_Node = TypeVar("_Node", bound=cst.CSTNode)


@dataclasses.dataclass
class ModuleIndex:
    """What one walk learns about a module. Node lists are in source order."""

    nodes: dict[type, list[cst.CSTNode]]
    aliases: dict[str, set[str]]  # local name -> qualified names it was imported as
    imports: list[tuple[cst.CSTNode, str]]  # (Import/ImportFrom node, imported qualified name)
    statement_of: dict[int, cst.CSTNode]  # id(node) -> innermost enclosing statement
    scope_of: dict[int, tuple[str, ...]]  # id(node) -> names of enclosing defs/classes
    call_arg_of: dict[int, cst.Call]  # id(literal) -> the call it is a direct argument of
    docstrings: set[int]  # ids of string nodes that are bare expression statements
    guarded_imports: set[int] = dataclasses.field(default_factory=set)  # imports inside try/except ImportError
    top_of: dict[int, int] = dataclasses.field(default_factory=dict)  # id(node) -> index of its module.body statement

    def of(self, node_type: type[_Node]) -> list[_Node]:
        # build_index buckets nodes by their exact type, so the bucket for node_type holds only that type.
        return cast("list[_Node]", self.nodes.get(node_type, []))


_TRACKED_CONTEXT = (
    cst.SimpleString,
    cst.FormattedString,
    cst.ConcatenatedString,
    cst.Integer,
    cst.Float,
    cst.Call,
    cst.Attribute,
    cst.Name,
    cst.Subscript,
    cst.Dict,
    cst.Arg,
    cst.Comparison,
)


_STATEMENT, _TRACKED, _OTHER = "statement", "tracked", "other"
_KINDS: dict[type, str] = {}  # node type -> its role in the walk (isinstance on libcst's ABCs is slow)
_NODE_TYPES: dict[type, bool] = {}  # field value type -> is it a CSTNode


def _kind_of(node_type: type) -> str:
    if issubclass(node_type, _STATEMENT_TYPES):
        return _STATEMENT
    return _TRACKED if issubclass(node_type, _TRACKED_CONTEXT) else _OTHER


def build_index(module: cst.Module) -> ModuleIndex:
    nodes: dict[type, list[cst.CSTNode]] = {}
    aliases: dict[str, set[str]] = {}
    imports: list[tuple[cst.CSTNode, str]] = []
    statement_of: dict[int, cst.CSTNode] = {}
    scope_of: dict[int, tuple[str, ...]] = {}
    call_arg_of: dict[int, cst.Call] = {}
    docstrings: set[int] = set()
    guarded_imports: set[int] = set()
    top_of: dict[int, int] = {}
    top_index = {id(node): i for i, node in enumerate(module.body)}
    top = -1
    statement: cst.CSTNode | None = None
    scope: tuple[str, ...] = ()
    guarded = False
    # Items are (node, call it is a direct argument of | None); reversed pushes keep source order.
    stack: list[Any] = [(module, None)]
    pop, push = stack.pop, stack.append
    kinds, node_types = _KINDS, _NODE_TYPES
    while stack:
        node, in_call = pop()
        if node is _EXIT:
            statement, scope, guarded, top = in_call
            continue
        node_type = type(node)
        bucket = nodes.get(node_type)
        if bucket is None:
            nodes[node_type] = bucket = []
            if node_type not in kinds:
                kinds[node_type] = _kind_of(node_type)
        bucket.append(node)
        kind = kinds[node_type]
        if kind is _STATEMENT:
            push((_EXIT, (statement, scope, guarded, top)))
            statement = node
            top = top_index.get(id(node), top)
            top_of[id(node)] = top
            if node_type is cst.SimpleStatementLine:
                before = len(imports)
                _note_statement(node, aliases, imports, docstrings)
                if guarded and len(imports) > before:
                    guarded_imports.update(id(n) for n, _ in imports[before:])
            elif isinstance(node, _SCOPE_TYPES):
                scope = scope + (node.name.value,)
            elif node_type is cst.Try and _catches_import_error(node):
                guarded = True
            elif node_type is cst.If and _probes_availability(node.test):
                guarded = True
        elif kind is _TRACKED:
            if statement is not None:  # always set: Module.body holds only statements
                statement_of[id(node)] = statement
            top_of[id(node)] = top
            if scope:
                scope_of[id(node)] = scope
            if in_call is not None:
                call_arg_of[id(node)] = in_call
            if node_type is cst.Call:
                if guarded:  # importlib.import_module("x") inside try/except ImportError: a probe
                    guarded_imports.add(id(node))
                for arg in reversed(node.args):
                    top_of[id(arg)] = top
                    push((arg.value, node))
                push((node.func, None))
                continue
        if in_call is not None and node_type in (cst.List, cst.Tuple, cst.Set):
            for element in reversed(node.elements):
                push((element.value, in_call))
            continue
        for name in reversed(_child_fields(node_type)):
            value = getattr(node, name)
            value_type = type(value)
            if value_type is list or value_type is tuple:
                for child in reversed(value):
                    child_type = type(child)
                    is_node = node_types.get(child_type)
                    if is_node is None:
                        is_node = node_types[child_type] = issubclass(child_type, cst.CSTNode)
                    if is_node:
                        push((child, None))
            else:
                is_node = node_types.get(value_type)
                if is_node is None:
                    is_node = node_types[value_type] = issubclass(value_type, cst.CSTNode)
                if is_node:
                    push((value, None))
    for small_statements in cast("list[cst.SimpleStatementLine]", nodes.get(cst.SimpleStatementLine, [])):
        for small in small_statements.body:  # imports and other small statements are reported too
            top_of[id(small)] = top_of[id(small_statements)]
    add_triton_names(aliases, triton_distributions((local, full) for local, bound in aliases.items() for full in bound))
    return ModuleIndex(
        nodes, aliases, imports, statement_of, scope_of, call_arg_of, docstrings, guarded_imports, top_of
    )


_AVAILABILITY_PROBE = re.compile(r"^(find_spec|find_loader|_?is_\w+_available|_?\w+_is_available|has_package)$")


_AVAILABILITY_FLAG = re.compile(r"^_?(HAS_[A-Z0-9_]+|[A-Z0-9_]+_AVAILABLE)$")


def _probes_availability(test: cst.BaseExpression) -> bool:
    """`if importlib.util.find_spec("flash_attn"):` / `if is_flash_attn_available():` guard an optional import."""
    stack = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and _AVAILABILITY_FLAG.match(node.value):
            return True  # HAS_FLASH_ATTN / FLASH_ATTN_AVAILABLE: set by an earlier probe
        if (
            getattr(node, "value", None)
            if isinstance(node, cst.Name)
            else getattr(getattr(node, "attr", None), "value", None)
        ) == "TYPE_CHECKING":
            return True  # `if TYPE_CHECKING:` imports never run
        if isinstance(node, cst.Call):
            func = node.func
            tail = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
            if isinstance(tail, str) and _AVAILABILITY_PROBE.match(tail) and tail != "is_available":
                return True
        elif isinstance(node, (cst.BooleanOperation, cst.UnaryOperation, cst.Comparison)):
            stack.extend(
                c
                for c in (getattr(node, "left", None), getattr(node, "right", None), getattr(node, "expression", None))
                if c is not None
            )
    return False


_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}


def catches_any(node: cst.Try, errors: Collection[str]) -> bool:
    """Whether one of the try's handlers is a bare except or names one of `errors` (last dotted part)."""
    for handler in node.handlers:
        if handler.type is None:
            return True
        names = [handler.type] if not isinstance(handler.type, cst.Tuple) else [e.value for e in handler.type.elements]
        if any((dotted_name(n) or "").rsplit(".", 1)[-1] in errors for n in names):
            return True
    return False


def _catches_import_error(node: cst.Try) -> bool:
    """An import inside such a try has a fallback: it works (degraded) where the library is missing."""
    return catches_any(node, _IMPORT_ERRORS)


def _note_statement(line: cst.SimpleStatementLine, aliases: dict, imports: list, docstrings: set) -> None:
    for small in line.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted_name(alias.name)
                if not full:
                    continue
                imports.append((small, full))
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    aliases.setdefault(alias.asname.name.value, set()).add(full)
                else:
                    head = full.split(".", 1)[0]
                    aliases.setdefault(head, set()).add(head)
        elif isinstance(small, cst.ImportFrom):
            if small.relative or small.module is None:
                continue  # relative imports name project modules, not the libraries rules know
            base = dotted_name(small.module)
            imports.append((small, base))
            if isinstance(small.names, cst.ImportStar):
                continue
            for alias in small.names:
                name = dotted_name(alias.name)
                full = f"{base}.{name}"
                imports.append((small, full))
                local = name
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                aliases.setdefault(local, set()).add(full)
        elif isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
            docstrings.add(id(small.value))


def triton_distributions(bindings: Iterable[tuple[str, str]]) -> set[str]:
    """Of (local name, qualified name) imports, the top-level modules imported as `triton` (`import
    tokenspeed_triton as triton`): a Triton build shipped under another name, whose `jit`, `language` and `Config`
    are Triton's."""
    return {full for local, full in bindings if local == "triton" and full != "triton" and "." not in full}


def as_triton(name: str, distributions: set[str]) -> str | None:
    """`tokenspeed_triton.language.core` -> `triton.language.core` for a distribution's names, else None."""
    head, dot, rest = name.partition(".")
    return f"triton{dot}{rest}" if head in distributions else None


def add_triton_names(aliases: dict[str, set[str]], distributions: set[str]) -> None:
    """Each import of a Triton distribution also reads as Triton's own name, which the rules know."""
    if not distributions:
        return
    for bound in aliases.values():
        bound.update(t for full in list(bound) if (t := as_triton(full, distributions)) is not None)


def dotted_name(node: cst.CSTNode) -> str | None:
    """ "a.b.c" for a Name/Attribute chain, None for anything else (calls, subscripts...)."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def qualified_names(node: cst.CSTNode, aliases: dict[str, set[str]]) -> set[str]:
    """Qualified names of a Name/Attribute (a Call or Decorator: of its callee) through import aliases.

    A head name that no import binds resolves to itself, so `x.to` is "x.to" and unimported
    `torch.cuda.x` (a snippet, a parameter named torch) still reads as "torch.cuda.x".
    """
    if isinstance(node, cst.Call):
        node = node.func
    elif isinstance(node, cst.Decorator):
        node = node.decorator.func if isinstance(node.decorator, cst.Call) else node.decorator
    dotted = dotted_name(node)
    if dotted is None:
        return set()
    head, _, rest = dotted.partition(".")
    bound = aliases.get(head)
    if not bound:
        return {dotted}
    return {f"{base}.{rest}" if rest else base for base in bound}


class _OffsetRecorder(CodegenState):
    """Code generation that remembers, for every node, the token index where it starts and ends."""

    __slots__ = ("spans", "syntactic")

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.spans: dict[int, list[int]] = {}
        self.syntactic: dict[int, tuple[int, int]] = {}

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.spans[id(node)] = [len(self.tokens), -1]

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.spans[id(node)][1] = len(self.tokens)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _SyntacticSpan(self, node)


class _SyntacticSpan:
    """Statements exclude their leading comment lines and decorators, as PositionProvider does."""

    __slots__ = ("state", "node", "start")

    def __init__(self, state: _OffsetRecorder, node: cst.CSTNode) -> None:
        self.state, self.node = state, node

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)

    def __exit__(self, *exc: Any) -> None:
        self.state.syntactic[id(self.node)] = (self.start, len(self.state.tokens))


class Positions:
    """Node -> CodeRange (1-based lines, 0-based columns, like libcst), from one codegen pass."""

    def __init__(self, module: cst.Module, root: cst.CSTNode | None = None) -> None:
        state = _OffsetRecorder(module)
        (root or module)._codegen(state)
        self._spans = state.spans
        self._syntactic = state.syntactic
        tokens = state.tokens
        self._offsets = [0, *accumulate(map(len, tokens))]
        code = "".join(tokens)
        self.code = code
        self._line_starts = [0, *accumulate(len(line) for line in code.splitlines(keepends=True))]

    def _point(self, token_index: int) -> CodePosition:
        # the module pops its trailing newline token after the last statement recorded its end
        offset = self._offsets[min(token_index, len(self._offsets) - 1)]
        line = bisect_right(self._line_starts, offset) - 1
        return CodePosition(line + 1, offset - self._line_starts[line])

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        span = self._syntactic.get(id(node)) or self._spans.get(id(node))
        if span is None:
            raise KeyError(f"node {type(node).__name__} is not part of this module")
        start, end = span
        start_pos = self._point(start)
        if end > start:  # an end at a line start belongs to the line before (trailing newline)
            end_pos = self._point(end)
            offset = self._offsets[min(end, len(self._offsets) - 1)]
            if offset > 0 and self.code[offset - 1 : offset] == "\n":
                end_pos = self._end_before_newline(offset)
        else:
            end_pos = start_pos
        return CodeRange(start_pos, end_pos)

    def _end_before_newline(self, offset: int) -> CodePosition:
        offset -= 1
        if offset > 0 and self.code[offset - 1 : offset] == "\r":
            offset -= 1
        line = bisect_right(self._line_starts, offset) - 1
        return CodePosition(line + 1, offset - self._line_starts[line])

    def line_text(self, line: int) -> str:
        if line < 1 or line >= len(self._line_starts):
            return ""
        return self.code[self._line_starts[line - 1] : self._line_starts[line]].rstrip("\r\n")


class LazyPositions:
    """Positions that generate code only for the top-level statements holding the nodes asked about.

    Code generation costs about half a parse, and a file with findings usually needs a handful of
    statements. A top-level statement's first line comes from the stdlib `ast` (C, fast); its own
    codegen gives the rest. Any doubt (ast cannot parse, counts differ, generated text does not sit
    at that line) falls back to one whole-module pass.
    """

    def __init__(self, module: cst.Module, text: str, top_of: dict[int, int]) -> None:
        self.module, self.text, self.top_of = module, text, top_of
        self._lines = text.splitlines(keepends=True)
        self._line_starts = [0, *accumulate(len(line) for line in self._lines)]
        self._starts: list[int] | None = None
        self._by_statement: dict[int, tuple[Positions, int] | None] = {}
        self._whole: Positions | None = None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        top = self.top_of.get(id(node), -1)
        found = self._statement(top) if top >= 0 else None
        if found is None:
            return self._module_positions()[node]
        positions, first_line = found
        where = positions[node]
        return CodeRange(
            CodePosition(where.start.line + first_line - 1, where.start.column),
            CodePosition(where.end.line + first_line - 1, where.end.column),
        )

    def line_text(self, line: int) -> str:
        if line < 1 or line > len(self._lines):
            return ""
        return self._lines[line - 1].rstrip("\r\n")

    def _module_positions(self) -> Positions:
        if self._whole is None:
            self._whole = Positions(self.module)
        return self._whole

    def _statement(self, top: int) -> tuple[Positions, int] | None:
        if top not in self._by_statement:
            self._by_statement[top] = self._locate(top)
        return self._by_statement[top]

    def _locate(self, top: int) -> tuple[Positions, int] | None:
        starts = self._statement_lines()
        if starts is None or top >= len(starts):
            return None
        statement = self.module.body[top]
        first_line = starts[top] - len(getattr(statement, "leading_lines", ()))
        positions = Positions(self.module, statement)
        offset = self._line_starts[first_line - 1] if 0 < first_line <= len(self._lines) else -1
        if offset < 0 or not self.text.startswith(positions.code, offset):
            return None
        return positions, first_line

    def _statement_lines(self) -> list[int] | None:
        """First syntactic line (decorators included) of each module.body statement, from `ast`."""
        if self._starts is None:
            self._starts = _ast_statement_lines(self.module, self.text) or []
        return self._starts or None


def _ast_statement_lines(module: cst.Module, text: str) -> list[int] | None:
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines, index = [], 0
    for statement in module.body:
        if index >= len(body):
            return None
        node = body[index]
        decorators = getattr(node, "decorator_list", None)
        lines.append(decorators[0].lineno if decorators else node.lineno)
        index += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return lines if index == len(body) else None


def iter_strings(node: cst.CSTNode) -> Iterator[str]:
    """The literal text of a string node (f-string expressions read as "{}")."""
    if isinstance(node, cst.SimpleString):
        yield node.raw_value
    elif isinstance(node, cst.FormattedString):
        yield "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in node.parts)
    elif isinstance(node, cst.ConcatenatedString):
        yield from iter_strings(node.left)
        yield from iter_strings(node.right)


_NO_VALUE = object()


def literal_value(node: cst.CSTNode | None, default: Any = None) -> Any:
    """The Python value of a literal expression (numbers, strings, True/False/None, -x, tuples, lists)."""
    value = _literal(node)
    return default if value is _NO_VALUE else value


def _literal(node: Any) -> Any:
    if isinstance(node, cst.Integer):
        try:
            return int(node.value, 0) if not node.value.isdigit() else int(node.value)
        except ValueError:
            return int(node.value.replace("_", ""), 0) if node.value.startswith("0") else _NO_VALUE
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.SimpleString):
        try:
            return node.evaluated_value
        except Exception:
            return node.raw_value
    if isinstance(node, cst.ConcatenatedString):
        left, right = _literal(node.left), _literal(node.right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        return _NO_VALUE
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = _literal(node.expression)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.operator, cst.Minus) else inner
        return _NO_VALUE
    if isinstance(node, (cst.Tuple, cst.List)):
        values = [_literal(e.value) for e in node.elements if not isinstance(e, cst.StarredElement)]
        if len(values) != len(node.elements) or any(v is _NO_VALUE for v in values):
            return _NO_VALUE
        return tuple(values) if isinstance(node, cst.Tuple) else values
    return _NO_VALUE


_PARENT_FIELDS: dict[type, tuple[str, ...]] = {}
_IS_CHILD: dict[type, bool] = {}


def parent_map(module: cst.Module) -> dict[int, cst.CSTNode]:
    """id(child) -> parent for every node except whitespace (one field walk, no libcst visitor).

    Field names and "is this a non-whitespace node" are cached per type: dataclasses.fields() and
    isinstance() against libcst's ABCs dominate a naive walk.
    """
    parents: dict[int, cst.CSTNode] = {}
    stack: list[cst.CSTNode] = [module]
    pop, push = stack.pop, stack.append
    fields_of, is_child = _PARENT_FIELDS, _IS_CHILD
    while stack:
        node = pop()
        node_type = type(node)
        names = fields_of.get(node_type)
        if names is None:
            names = fields_of[node_type] = tuple(
                f.name for f in dataclasses.fields(node_type) if not f.name.startswith("whitespace")
            )
        for name in names:
            value = getattr(node, name)
            for child in value if type(value) in (list, tuple) else (value,):
                child_type = type(child)
                ok = is_child.get(child_type)
                if ok is None:
                    ok = is_child[child_type] = isinstance(child, cst.CSTNode) and not isinstance(
                        child, cst.BaseParenthesizableWhitespace
                    )
                if ok:
                    parents[id(child)] = node
                    push(child)
    return parents
