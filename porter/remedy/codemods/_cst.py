"""libcst helpers shared by the codemods: line-scoped transformers, shim references, imports."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from porter.records import Finding
from porter.remedy.codemods import CodemodContext, CodemodResult

_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """The source text of one node, as libcst prints it."""
    return _EMPTY.code_for_node(node)


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def shim_ref(ctx: CodemodContext, name: str) -> cst.BaseExpression:
    """`porter_shim.NAME` (or the alias the context uses)."""
    return expr(f"{ctx.shim_alias}.{name}")


def mentions_shim(node: cst.CSTNode, ctx: CodemodContext) -> bool:
    return f"{ctx.shim_alias}." in code(node)


def int_value(node: cst.CSTNode) -> int | None:
    """The value of an integer literal (also `-3`), else None."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = int_value(node.expression)
        return None if inner is None else -inner
    return None


def number_value(node: cst.CSTNode) -> float | None:
    if isinstance(node, cst.Float):
        return float(node.evaluated_value)
    value = int_value(node)
    return None if value is None else float(value)


def string_value(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value if isinstance(node.evaluated_value, str) else None
    return None


def keyword_name(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


class LineScoped(cst.CSTTransformer):
    """A transformer that edits only nodes overlapping the lines of the findings it was given."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, findings: Sequence[Finding], ctx: CodemodContext, target):
        super().__init__()
        self.spans = [(f.line, max(f.end_line, f.line)) for f in findings]
        self.ctx = ctx
        self.target = target
        self.changes: list[str] = []  # one short description per edit, for the rationale
        self.notes: list[str] = []
        self.uses_shim = False

    # Nodes in the NVIDIA branch of `amd if porter_shim.IS_HIP else nvidia` (written by porter) are
    # kept as the user wrote them; codemods ask `in_nvidia_branch` before editing.
    def visit_IfExp(self, node: cst.IfExp) -> bool:
        if "IS_HIP" in code(node.test) or "version.hip" in code(node.test):
            self._nvidia_branches = getattr(self, "_nvidia_branches", set()) | {id(node.orelse)}
        return True

    def visit_If(self, node: cst.If) -> bool:
        if "IS_HIP" in code(node.test) or "version.hip" in code(node.test):
            if node.orelse is not None:
                self._nvidia_branches = getattr(self, "_nvidia_branches", set()) | {id(node.orelse)}
        return True

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in getattr(self, "_nvidia_branches", ()):
            self._nvidia_depth = getattr(self, "_nvidia_depth", 0) + 1
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):
        left = super().on_leave(original_node, updated_node)  # the branch's own node is in the branch too
        if id(original_node) in getattr(self, "_nvidia_branches", ()):
            self._nvidia_depth -= 1
        return left

    @property
    def in_nvidia_branch(self) -> bool:
        return getattr(self, "_nvidia_depth", 0) > 0

    def in_scope(self, node: cst.CSTNode) -> bool:
        pos = self.get_metadata(PositionProvider, node)
        return any(pos.start.line <= end and pos.end.line >= start for start, end in self.spans)

    def line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def start_of(self, node: cst.CSTNode) -> tuple[int, int]:
        """(line, column) where the node starts, both 1-based as a finding's `line` and `column` give it."""
        start = self.get_metadata(PositionProvider, node).start
        return start.line, start.column + 1

    def shim(self, name: str) -> cst.BaseExpression:
        self.uses_shim = True
        return shim_ref(self.ctx, name)


def transform(source: str, transformer: cst.CSTTransformer) -> str:
    """Run a metadata-aware transformer over `source` and return the new text."""
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)  # a fresh tree: no copy needed
    return wrapper.visit(transformer).code


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body
    )


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def ensure_import(source: str, statement: str) -> str:
    """Add a top-level import statement after the module's leading imports, once."""
    module = cst.parse_module(source)
    wanted = statement.strip()
    if any(code(stmt).strip() == wanted for stmt in module.body):
        return source
    bound = wanted.split()[-1]  # the name the statement binds (`... as porter_shim` / `import porter_shim`)
    insert_at = 0
    for index, stmt in enumerate(module.body):
        if _is_guarded_import(stmt) and re.search(rf"\b{re.escape(bound)}\b", code(stmt)):
            break  # a fallback that already uses the name must come after the import
        if _is_import(stmt) or _is_guarded_import(stmt) or (index == 0 and _is_docstring(stmt)):
            insert_at = index + 1
        else:
            break
    body = list(module.body)
    body.insert(insert_at, cst.parse_statement(wanted + "\n"))
    return module.with_changes(body=body).code


def _is_guarded_import(stmt: cst.CSTNode) -> bool:
    """`try: import x / except ImportError:` blocks count as part of the import section."""
    if not isinstance(stmt, cst.Try):
        return False
    return all(_is_import(inner) for inner in stmt.body.body)


def ensure_shim_import(source: str, ctx: CodemodContext) -> str:
    return ensure_import(source, ctx.shim_import)


def describe(changes: Iterable[str]) -> str:
    items = list(dict.fromkeys(changes))
    return "; ".join(items)


def finish(
    source: str, new: str, transformer: LineScoped, ctx: CodemodContext, rationale: str, facts, safety: str = "safe"
) -> CodemodResult | None:
    """A line-scoped codemod's result: None when the text is unchanged, else the new text (with the shim
    import when an edit uses the shim), the rationale followed by the edits, and the transformer's notes."""
    if new == source:
        return None
    if transformer.uses_shim:
        new = ensure_shim_import(new, ctx)
    return CodemodResult(
        text=new,
        rationale=(rationale + " " + describe(transformer.changes)).strip(),
        notes=transformer.notes,
        uses_shim=transformer.uses_shim,
        facts=facts,
        safety=safety,
    )
