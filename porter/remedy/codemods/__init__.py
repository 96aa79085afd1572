"""Codemod registry: one function per rule id turns a file's findings into new text.

    from porter.remedy.codemods import codemod, CodemodContext, CodemodResult

    @codemod("PT101")
    def cap_num_warps(source, findings, target, ctx) -> CodemodResult | None: ...

A codemod receives the whole text of one file, the findings of its rule in that file, the Target and
a CodemodContext (shim import, --exclusive, tuning options). It returns the new text with a rationale,
or None when it declines (nothing it can change safely); the planner then lists the findings as
needs-review. Codemods re-locate their nodes by line (libcst positions), never by text search.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

from porter.records import Finding

CodemodFn = Callable[[str, list[Finding], Any, "CodemodContext"], "CodemodResult | None"]

_REGISTRY: dict[str, CodemodFn] = {}


@dataclass
class CodemodContext:
    """What a codemod knows beyond the file: where the shim lives and how far to go."""

    path: str = "module.py"  # POSIX path relative to the repository root
    exclusive: bool = False  # write the target's value directly, dropping the NVIDIA branch
    shim_import: str = "import porter_shim"  # the statement that binds `shim_alias`
    shim_alias: str = "porter_shim"
    options: dict[str, Any] = field(default_factory=dict)  # e.g. {"tune_topk": 2}


@dataclass
class CodemodResult:
    text: str
    rationale: str
    notes: list[str] = field(default_factory=list)
    uses_shim: bool = False  # the new text imports the shim module
    facts: dict[str, Any] = field(default_factory=dict)  # target facts the change relies on
    safety: str = "safe"  # safe | unsafe (changes behaviour a reviewer must judge)
    claimed: list[Finding] | None = None  # the findings this change fixes; None: those on the lines it edits


def codemod(*rule_ids: str) -> Callable[[CodemodFn], CodemodFn]:
    """Register `fn` as the codemod of each rule id (one function may serve several rules)."""

    def decorator(fn: CodemodFn) -> CodemodFn:
        for rule_id in rule_ids:
            existing = _REGISTRY.get(rule_id)
            if existing is not None and _qualname(existing) != _qualname(fn):
                raise ValueError(f"codemod for {rule_id} registered twice ({_qualname(existing)}, {_qualname(fn)})")
            _REGISTRY[rule_id] = fn
        return fn

    return decorator


def _qualname(fn: Callable) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


_LOADED = False


def load_all() -> None:
    """Import every topic module of this package so their codemods register."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for info in pkgutil.iter_modules(__path__, __name__ + "."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):
            importlib.import_module(info.name)


def get_codemod(rule_id: str) -> CodemodFn | None:
    load_all()
    return _REGISTRY.get(rule_id)


def registered_rules() -> list[str]:
    load_all()
    return sorted(_REGISTRY)
