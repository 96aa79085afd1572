"""Registry of named Python visitors for rules whose match YAML cannot express.

A rule's `match: [{visitor: NAME}]` entry calls the function registered under NAME once per module:

    from porter.analyze.visitors import register, Hit, ModuleContext

    @register("num_warps_limit")
    def num_warps_limit(ctx: ModuleContext, rule, target) -> Iterable[Hit]: ...

`rule` is the porter.analyze.rules.Rule (attributes id, name, message...; `rule["key"]` / `rule.get`
read its YAML mapping), `target` the porter Target. Each Hit names the
node to report; its `data` fills the rule message's {placeholders} and travels to Finding.data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper

from porter.records import Severity
from porter.registry import Registry

if TYPE_CHECKING:
    from porter.analyze.rules import Rule

VisitorFn = Callable[["ModuleContext", "Rule", Any], Iterable["Hit"]]

_VISITORS: Registry[VisitorFn] = Registry("visitor", ("porter.analyze.visitors", "porter.analyze.triton"))
# the nodes a boolean test is built of: a name inside one is being tested, not used as a value
CONDITION_PARTS = (cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation, cst.UnaryOperation)


@dataclass
class Hit:
    """One place a visitor reports. `severity`/`message` override the rule's (and variant's)."""

    node: cst.CSTNode
    data: dict[str, Any] = field(default_factory=dict)
    severity: Severity | None = None
    message: str | None = None


def register(name: str) -> Callable[[VisitorFn], VisitorFn]:
    """Register `fn` as the visitor called `name` (names are unique across the project)."""

    def decorator(fn: VisitorFn) -> VisitorFn:
        _VISITORS.add(name, fn)
        return fn

    return decorator


def get_visitor(name: str) -> VisitorFn | None:
    return _VISITORS.get(name)


def registered_names() -> list[str]:
    return _VISITORS.names()


class ModuleContext:
    """What a visitor sees of one module: text, tree, one shared index, lazily computed metadata.

    The engine's own walk (porter.analyze.index) already holds every node by type, the import alias
    table and each literal's enclosing statement, so visitors should read `ctx.nodes(cst.Call)` rather
    than walk the tree again. `qualified_names` resolves through import aliases like libcst's
    QualifiedNameProvider (scope-insensitive, several times cheaper); `position` and `wrapper`
    (a MetadataWrapper over the same nodes, for ParentNodeProvider/ScopeProvider...) are computed on
    first use only.
    """

    def __init__(self, path: str, text: str, module: cst.Module, index: Any = None, target: Any = None):
        from porter.analyze.index import build_index

        self.path = path
        self.text = text
        self.module = module
        self.index = index if index is not None else build_index(module)
        self.target = target
        self.cache: dict[str, Any] = {}  # visitors may memoise shared work here
        self._positions: Any = None
        self._parents: dict[int, cst.CSTNode] | None = None

    # -- names ---------------------------------------------------------------------------------
    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """Qualified names of a Name/Attribute (of a Call: its callee), e.g. {"torch.cuda.synchronize"}."""
        from porter.analyze.index import qualified_names

        return qualified_names(node, self.index.aliases)

    def nodes(self, node_type: type) -> list:
        """Every node of exactly this libcst type, in source order (imports' own names excluded)."""
        return self.index.of(node_type)

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """Innermost statement around a literal, name, call, subscript, dict or comparison."""
        return self.index.statement_of.get(id(node))

    def scope_names(self, node: cst.CSTNode) -> tuple[str, ...]:
        """Names of the functions/classes around such a node, outermost first."""
        return self.index.scope_of.get(id(node), ())

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        if self._parents is None:
            from porter.analyze.index import parent_map

            self._parents = parent_map(self.module)
        return self._parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """The node's parent, its parent's parent, ... up to the module."""
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def is_top_level(self, node: cst.CSTNode) -> bool:
        """Is the node one of the module's own statements (its parent the Module)? Without the parent map, which
        walks the whole tree."""
        top = self.cache.get("top_level_ids")
        if top is None:
            top = self.cache["top_level_ids"] = {id(statement) for statement in self.module.body}
        return id(node) in top

    def code_for(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # -- positions and libcst metadata ------------------------------------------------------------
    def position(self, node: cst.CSTNode) -> CodeRange:
        """libcst-style CodeRange: 1-based lines, 0-based columns, statements without leading comments."""
        return self.positions[node]

    @property
    def positions(self) -> Any:
        if self._positions is None:
            from porter.analyze.index import LazyPositions

            self._positions = LazyPositions(self.module, self.text, getattr(self.index, "top_of", {}))
        return self._positions

    @cached_property
    def wrapper(self) -> MetadataWrapper:
        return MetadataWrapper(self.module, unsafe_skip_copy=True)

    def resolve(self, provider: Any) -> Any:
        """Any libcst metadata (ParentNodeProvider, ScopeProvider...) over the same node objects."""
        return self.wrapper.resolve(provider)

    @cached_property
    def triton(self) -> Any:
        """The module's Triton inventory (H2's porter.analyze.triton.build_inventory), or None."""
        from porter.analyze.triton import build_inventory

        return build_inventory(self)
