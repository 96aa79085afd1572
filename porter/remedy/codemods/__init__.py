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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from porter.records import Finding
from porter.registry import Registry

CodemodFn = Callable[[str, list[Finding], Any, "CodemodContext"], "CodemodResult | None"]

_CODEMODS: Registry[CodemodFn] = Registry("codemod", (__name__,), skip_private=True)


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
            _CODEMODS.add(rule_id, fn)
        return fn

    return decorator


def get_codemod(rule_id: str) -> CodemodFn | None:
    return _CODEMODS.get(rule_id)


def registered_rules() -> list[str]:
    return _CODEMODS.names()
