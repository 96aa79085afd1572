"""Value flow between the statements of one function, read from libcst trees: which statements bind, read and
write which names (`x` or `self.x` chains). Used to slice what a port has to move with a library's calls."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from porter.analyze.index import dotted_name


def own_statements(function: cst.FunctionDef) -> list[cst.BaseStatement]:
    """The function's statements in source order, nested blocks included, nested functions and classes not."""
    out: list[cst.BaseStatement] = []

    def visit(statement: cst.CSTNode) -> None:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or not isinstance(statement, cst.BaseStatement):
            return
        out.append(statement)
        if not isinstance(statement, cst.BaseCompoundStatement):
            return
        walk(statement.body)
        parts = (
            getattr(statement, "orelse", None),
            *getattr(statement, "handlers", ()),
            getattr(statement, "finalbody", None),
        )
        for part in parts:
            if isinstance(part, cst.If):  # an `elif`: a statement of its own
                visit(part)
            elif part is not None and isinstance(getattr(part, "body", None), cst.BaseSuite):
                walk(part.body)

    def walk(block: cst.BaseSuite) -> None:
        for statement in getattr(block, "body", ()):
            visit(statement)

    walk(function.body)
    return out


def _header_parts(statement: cst.BaseStatement) -> list[cst.CSTNode]:
    """A simple statement whole, or a compound statement's header (a loop's target and iterable, an `if` /
    `while` test, a `with` item), not its body."""
    if isinstance(statement, cst.SimpleStatementLine):
        return [statement]
    if isinstance(statement, cst.For):
        return [statement.target, statement.iter]
    if isinstance(statement, (cst.If, cst.While)):
        return [statement.test]
    if isinstance(statement, cst.With):
        return list(statement.items)
    return []


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below `node`, lambdas excluded (their body runs later, if at all)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, cst.Lambda):
            stack.extend(current.children)


def header_nodes(statement: cst.BaseStatement, kind: type | tuple[type, ...]) -> Iterator[cst.CSTNode]:
    for part in _header_parts(statement):
        yield from (n for n in _walk(part) if isinstance(n, kind))


def _name_of(node: cst.CSTNode) -> str | None:
    """`x` or `self.x` (a dotted chain of names), the form a binding and a later read share."""
    return dotted_name(node) or None if isinstance(node, (cst.Name, cst.Attribute)) else None


def binds(statement: cst.BaseStatement) -> set[str]:
    """Names a statement (re)binds: assignment targets and a loop's target; mutated receivers are `written`."""
    targets: list[cst.CSTNode] = []
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                targets += [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets.append(small.target)
    elif isinstance(statement, cst.For):
        targets.append(statement.target)
    names: set[str] = set()
    for target in targets:
        elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        names |= {n for n in map(_name_of, elements) if n}
    return names


# methods that put a value into their receiver (`handles.append(handle)`): the receiver now holds what was computed
_FILLING_METHODS = {"append", "extend", "insert", "add", "update", "setdefault"}


def written(statement: cst.BaseStatement) -> set[str]:
    """Names whose value a statement sets from what it computes: its bindings, receivers of `append`-like calls,
    and, for a compound statement, everything its body writes (a loop over a call's result)."""
    written = set(binds(statement))
    nodes = (
        _walk(statement) if isinstance(statement, cst.BaseCompoundStatement) else header_nodes(statement, cst.CSTNode)
    )
    for node in nodes:
        if isinstance(node, cst.Assign):
            written |= {n for n in (_name_of(t.target) for t in node.targets) if n}
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For)):
            written |= {n for n in [_name_of(node.target)] if n}
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _FILLING_METHODS
        ):
            written |= {n for n in [_name_of(node.func.value)] if n}
    return written


def header_reads(statement: cst.BaseStatement) -> set[str]:
    """Names and `a.b` chains a simple statement or a compound statement's header reads (an attribute's own
    name is part of its chain, not a name read on its own)."""
    reads: set[str] = set()
    stack = list(_header_parts(statement))
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Name, cst.Attribute)):
            name = _name_of(current)
            if name:
                reads.add(name)
            if isinstance(current, cst.Attribute):
                stack.append(current.value)
            continue
        if not isinstance(current, cst.Lambda):
            stack.extend(current.children)
    return reads
