"""Which rules could match a module, decided from its `ast` tree before any libcst parse (issue 14).

The scan's text pre-filter (rule tokens as substrings of the file) lets almost every file of a large
PyTorch tree through: `cuda`, `device`, `32` and `graph` appear everywhere, in comments and
identifiers alike. The facts pass already parses every module with `ast` (the C parser, many times
cheaper than libcst), so it also collects the module's words here: identifiers, import names, keyword
names, assignment targets, number literals and the raw text of string literals. Each rule gets a
trigger, a necessary condition for any of its hits read from those words, and only a file with at
least one rule whose trigger holds gets a libcst tree; the engine then runs only those rules.

Triggers are over-approximations by construction: a rule's YAML entries give theirs (the qualified
name's segments, a keyword's name, a regex's literals...), and a visitor's is declared in
VISITOR_TRIGGERS below. A visitor without a declared trigger, or an entry kind this module does not
know, always triggers: the text tokens alone decide for it, as before. tests/analyze/test_prefilter.py
runs every rule's invalid examples through its trigger, so a trigger that misses a rule's own example
fails the suite.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

_GLOB = re.compile(r"[*?\[]")
_SEPARATOR = "\0"  # between string literals: no rule token contains it


@dataclass(frozen=True)
class SourceWords:
    """What one `ast` walk learns of a module that the rule triggers read."""

    names: frozenset[str]  # every identifier: names, attributes, import segments, keywords, defs, params
    imported: frozenset[str]  # segments of imported module names (absolute and relative) and of their aliases
    imported_heads: frozenset[str]  # first segment of each absolutely imported name (`triton` for triton.language)
    assigned: frozenset[str]  # names and attributes inside assignment targets
    keywords: frozenset[str]  # keyword-argument names of calls
    with_calls: frozenset[str]  # last name of each call used as a `with` item (`graph` for torch.cuda.graph(g)),
    # also through the import that binds it (`from torch.cuda import graph as g`: g and graph)
    numbers: frozenset[float]  # int and float literals
    strings: str  # the source text of every string and bytes literal (f-strings whole), NUL-separated
    aliases: frozenset[str] = field(default_factory=frozenset)  # segments of the project's re-exports bound here
    values: str = ""  # the value of every str literal (and repr of every bytes one), NUL-separated

    def with_project_aliases(self, aliases: dict[str, str]) -> SourceWords:
        """The words once the project's re-exports (`from pkg.triton_utils import tl`) bind local names."""
        if not aliases:
            return self
        segments = frozenset(part for name in aliases.values() for part in name.split("."))
        heads = frozenset(name.split(".", 1)[0] for name in aliases.values())
        bound = frozenset(name.rsplit(".", 1)[-1] for local, name in aliases.items() if local in self.with_calls)
        return SourceWords(
            self.names | segments,
            self.imported | segments,
            self.imported_heads | heads,
            self.assigned,
            self.keywords,
            self.with_calls | bound,
            self.numbers,
            self.strings,
            self.aliases | segments,
            self.values,
        )

    def has_all(self, segments: Iterable[str]) -> bool:
        return all(segment in self.names for segment in segments)

    def in_strings(self, tokens: Iterable[str]) -> bool:
        return any(token in self.strings for token in tokens)

    def may_name_triton(self) -> bool:
        """The Triton inventory can read some name as `triton.*`: an import or re-export of triton, a `triton.`
        chain never imported, or an unimported `tl.` (inventory._ALIASES)."""
        return "triton" in self.names or "tl" in self.names

    def uses_triton(self) -> bool:
        """triton_common.uses_triton's necessary condition: some import or re-export of triton."""
        return "triton" in self.imported_heads


def source_words(tree: ast.AST, text: str) -> SourceWords:
    """The words of a module, from the tree `ast.parse(text)` returned."""
    return _Collector(text).collect(tree)


class _Collector:
    def __init__(self, text: str) -> None:
        self.text = text
        self.names: set[str] = set()
        self.imported: set[str] = set()
        self.heads: set[str] = set()
        self.assigned: set[str] = set()
        self.keywords: set[str] = set()
        self.with_calls: set[str] = set()
        self.numbers: set[float] = set()
        self.string_nodes: list[ast.expr] = []
        self.values: list[str] = []
        self.bound_tails: dict[str, set[str]] = {}  # local name an import binds -> last segment of what it names

    def collect(self, tree: ast.AST) -> SourceWords:
        names, numbers, strings = self.names, self.numbers, self.string_nodes
        stack: list[Any] = [tree]
        pop, push, fields_of, walks = stack.pop, stack.append, _FIELDS, _WALKED
        while stack:  # every node, as ast.walk without its per-node generators (operator and context leaves skipped)
            node = pop()
            kind = type(node)
            if kind is ast.Name:
                names.add(node.id)
                continue  # its only child is its context
            if kind is ast.Constant:
                value = node.value
                if isinstance(value, (str, bytes)):
                    strings.append(node)
                    self.values.append(value if isinstance(value, str) else repr(value))
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    numbers.add(float(value))
                continue
            if kind is ast.Attribute:
                names.add(node.attr)
            elif kind is ast.JoinedStr:
                strings.append(node)
            elif kind is ast.keyword:
                if node.arg is not None:
                    names.add(node.arg)
                    self.keywords.add(node.arg)
            elif kind in _TARGET_HOLDERS:
                self._targets(node)
            elif kind is ast.Import or kind is ast.ImportFrom:
                self._import(node)
                continue
            elif kind is ast.With or kind is ast.AsyncWith:
                self._with(node)
            elif kind in _DEFINITIONS:
                names.add(node.name)
            elif kind is ast.arg:
                names.add(node.arg)
            elif kind is ast.Global or kind is ast.Nonlocal:
                names.update(node.names)
            elif kind in _NAMED:  # `except E as e`, match patterns' captures and attribute names
                for field_name in _NAMED[kind]:
                    value = getattr(node, field_name, None)
                    if isinstance(value, str):
                        names.add(value)
                    elif isinstance(value, list):
                        names.update(v for v in value if isinstance(v, str))
            fields = fields_of.get(kind)
            if fields is None:
                fields = fields_of[kind] = tuple(node._fields)
            for field_name in fields:
                value = getattr(node, field_name, None)
                if type(value) is list:
                    for item in value:
                        walked = walks.get(type(item))
                        if walked is None:
                            walked = walks[type(item)] = _walked(type(item))
                        if walked:
                            push(item)
                else:
                    walked = walks.get(type(value))
                    if walked is None:
                        walked = walks[type(value)] = _walked(type(value))
                    if walked:
                        push(value)
        return SourceWords(
            frozenset(names),
            frozenset(self.imported),
            frozenset(self.heads),
            frozenset(self.assigned),
            frozenset(self.keywords),
            frozenset(self._resolved_with_calls()),
            frozenset(numbers),
            _SEPARATOR.join(self._segments(strings)),
            values=_SEPARATOR.join(self.values),
        )

    def _targets(self, node: Any) -> None:
        """The dotted chain of each target (`config.cuda.arch` -> arch, cuda, config), tuples unpacked."""
        stack = list(node.targets) if isinstance(node, ast.Assign) else [node.target]
        while stack:
            target = stack.pop()
            while isinstance(target, (ast.Attribute, ast.Subscript, ast.Starred)):
                if isinstance(target, ast.Attribute):
                    self.assigned.add(target.attr)
                target = target.value
            if isinstance(target, ast.Name):
                self.assigned.add(target.id)
            elif isinstance(target, (ast.Tuple, ast.List)):
                stack.extend(target.elts)

    def _import(self, node: Any) -> None:
        module = getattr(node, "module", None)
        bases = [module] if module else []
        if isinstance(node, ast.ImportFrom) and module and not node.level:
            self.heads.add(module.split(".", 1)[0])
        for alias in node.names:
            bases.append(alias.name)
            if alias.asname:
                bases.append(alias.asname)
            local = alias.asname or alias.name.split(".", 1)[0]
            self.bound_tails.setdefault(local, set()).add(alias.name.rsplit(".", 1)[-1])
            if isinstance(node, ast.Import):
                self.heads.add(alias.name.split(".", 1)[0])
        for name in bases:
            for segment in name.split("."):
                self.imported.add(segment)
                self.names.add(segment)

    def _with(self, node: Any) -> None:
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call):
                func = call.func
                if isinstance(func, ast.Attribute):
                    self.with_calls.add(func.attr)
                elif isinstance(func, ast.Name):
                    self.with_calls.add(func.id)

    def _resolved_with_calls(self) -> set[str]:
        found = set(self.with_calls)
        for name in self.with_calls:
            found |= self.bound_tails.get(name, set())
        return found

    def _segments(self, nodes: list[ast.expr]) -> list[str]:
        """Each literal's source text (libcst's rules read raw text: escapes unprocessed)."""
        lines = self.text.splitlines(keepends=True)
        encoded: dict[int, bytes] = {}
        out = []
        for node in nodes:
            start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1
            if start == end:
                out.append(_slice(lines, encoded, start, node.col_offset, node.end_col_offset))
            else:
                first = _slice(lines, encoded, start, node.col_offset, None)
                last = _slice(lines, encoded, end, 0, node.end_col_offset)
                out.append(first + "".join(lines[start + 1 : end]) + last)
        return out


def _slice(lines: list[str], encoded: dict[int, bytes], row: int, start: int, end: int | None) -> str:
    """ast columns are UTF-8 byte offsets: slice the line's bytes where it is not ASCII."""
    if row >= len(lines):
        return ""
    line = lines[row]
    if line.isascii():
        return line[start:end]
    data = encoded.get(row)
    if data is None:
        data = encoded[row] = line.encode("utf-8", "surrogatepass")
    return data[start:end].decode("utf-8", "replace")


_TARGET_HOLDERS = (ast.Assign, ast.AugAssign, ast.AnnAssign)
_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAVES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
_WALKED: dict[type, bool] = {}  # value type -> is it a node the walk enters


def _walked(kind: type) -> bool:
    return issubclass(kind, ast.AST) and not issubclass(kind, _LEAVES)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NAMED: dict[type, tuple[str, ...]] = {
    ast.ExceptHandler: ("name",),
    ast.MatchAs: ("name",),
    ast.MatchStar: ("name",),
    ast.MatchMapping: ("rest",),
    ast.MatchClass: ("kwd_attrs",),
}


# ---- triggers of YAML match entries ----------------------------------------------------------------

Trigger = Callable[[SourceWords], bool]


def _always(words: SourceWords) -> bool:
    return True


def _literal_parts(pattern: str) -> list[str]:
    """The dot-separated parts of a qualified-name pattern without glob characters: each is a whole
    segment of any name the pattern matches (a literal part sits between dots or at an end)."""
    return [part for part in pattern.split(".") if part and not _GLOB.search(part)]


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def _name_trigger(patterns: Any) -> Trigger:
    """A Name/Attribute/call pattern: every segment of a qualified name is an identifier of the module
    (the node's own chain, or the import that binds its head)."""
    wanted = [_literal_parts(p) for p in _as_list(patterns)]
    if any(not parts for parts in wanted):
        return _always

    def trigger(words: SourceWords) -> bool:
        return any(all(part in words.names for part in parts) for parts in wanted)

    return trigger


def _assigned_trigger(patterns: Any) -> Trigger:
    """`assign: true` attributes: the target's qualified name is its own chain (in an assignment target)
    plus the segments its head was imported as."""
    wanted = [_literal_parts(p) for p in _as_list(patterns)]
    if any(not parts for parts in wanted):
        return _always

    def trigger(words: SourceWords) -> bool:
        return any(
            all(part in words.assigned or part in words.imported or part in words.aliases for part in parts)
            for parts in wanted
        )

    return trigger


def _import_trigger(patterns: Any) -> Trigger:
    """Import entries match imported module names (or a literal `import_module("x")` argument)."""
    wanted = [_literal_parts(p) for p in _as_list(patterns)]
    if any(not parts for parts in wanted):
        return _always

    def trigger(words: SourceWords) -> bool:
        for parts in wanted:
            if all(part in words.imported for part in parts):
                return True
            if "import_module" in words.names or "__import__" in words.names:
                if all(part in words.strings or part in words.values for part in parts):
                    return True
        return False

    return trigger


def _string_trigger(regex: str) -> Trigger:
    from porter.analyze.rules import regex_literals

    tokens = regex_literals(regex)
    if not tokens or any(_SEPARATOR in t or "{" in t or "}" in t for t in tokens):
        return _always  # f-string holes read as "{}" in the engine: no literal to look for

    def trigger(words: SourceWords) -> bool:
        return words.in_strings(tokens)

    return trigger


def _value_trigger(regex: str) -> Trigger:
    """A keyword's `value: {regex}` reads str() of the literal's value (engine._literal_ok): a token with a
    character no number, bool, None or bracket prints must come from a str (or bytes) literal's value."""
    from porter.analyze.rules import regex_literals

    tokens = regex_literals(regex)
    if not tokens or not all(_only_from_text(token) for token in tokens):
        return _always
    return lambda words: any(token in words.values for token in tokens)


_PRINTED_BY_OTHERS = frozenset("0123456789.-+eEjJ()[], TrueFalsNonifa")


def _only_from_text(token: str) -> bool:
    return not (set(token) & set("\\'\"\0")) and bool(set(token) - _PRINTED_BY_OTHERS)


def _keyword_trigger(entry: dict) -> Trigger:
    names = _as_list(entry["name"])
    if any(_GLOB.search(n) for n in names):
        return _always
    value = entry.get("value") or {}
    value_check = _value_trigger(value["regex"]) if "regex" in value else _always

    def trigger(words: SourceWords) -> bool:
        return any(name in words.keywords for name in names) and value_check(words)

    return trigger


def _env_trigger(patterns: Any) -> Trigger:
    """Environment names are read from string literals or keyword names (engine.env_references)."""
    tokens = []
    for pattern in _as_list(patterns):
        runs = [run for run in re.split(r"[*?]|\[[^\]]*\]", pattern) if run]
        if not runs:
            return _always
        tokens.append(max(runs, key=len))

    def trigger(words: SourceWords) -> bool:
        return any(token in words.strings or any(token in k for k in words.keywords) for token in tokens)

    return trigger


def _number_trigger(values: Any) -> Trigger:
    wanted = {float(v) for v in _as_list(values)}

    def trigger(words: SourceWords) -> bool:
        return not wanted.isdisjoint(words.numbers)

    return trigger


def entry_trigger(entry: dict) -> Trigger:
    """A necessary condition for one match entry of a rule's YAML to hit (see engine._Matcher)."""
    if "visitor" in entry:
        return VISITOR_TRIGGERS.get(entry["visitor"], _always)
    if "call" in entry:
        if entry.get("tail_only"):  # the callee's own name matches, whatever module it comes from
            tails = [p.rsplit(".", 1)[-1] for p in _as_list(entry["call"])]
            return _always if any(_GLOB.search(t) for t in tails) else _name_trigger(tails)
        return _name_trigger(entry["call"])
    if "attribute" in entry or "name" in entry:
        patterns = entry.get("attribute", entry.get("name"))
        return _assigned_trigger(patterns) if entry.get("assign") else _name_trigger(patterns)
    if "import" in entry:
        return _import_trigger(entry["import"])
    if "keyword" in entry:
        return _both(_keyword_trigger(entry["keyword"]), _call_trigger(entry["keyword"].get("call")))
    if "string" in entry:
        return _both(_string_trigger(entry["string"]["regex"]), _call_trigger(entry["string"].get("in_call")))
    if "env" in entry:
        return _env_trigger(entry["env"])
    if "number" in entry:
        return _number_trigger(entry["number"]["value"])
    return _always


def _call_trigger(patterns: Any) -> Trigger:
    return _always if patterns is None else _name_trigger(patterns)


def _both(first: Trigger, second: Trigger) -> Trigger:
    if first is _always:
        return second
    if second is _always:
        return first
    return lambda words: first(words) and second(words)


def rule_trigger(rule: Any) -> Trigger:
    """Any of the rule's entries may hit (memoised on the rule); a rule with an entry this module has no
    condition for always may (its text tokens alone decide)."""
    cached = rule.__dict__.get("_ast_trigger")
    if cached is None:
        triggers = [entry_trigger(entry) for entry in rule.match]
        if not triggers or any(t is _always for t in triggers):
            cached = _always
        else:
            cached = lambda words: any(t(words) for t in triggers)  # noqa: E731
        rule.__dict__["_ast_trigger"] = cached
    return cached


def possible_rules(rules: Iterable[Any], words: SourceWords) -> frozenset[str]:
    """Ids of the rules whose trigger holds for the module."""
    return frozenset(rule.id for rule in rules if rule_trigger(rule)(words))


# ---- triggers declared for visitors ----------------------------------------------------------------
# Each reads the visitor it names (porter/analyze/visitors/): a necessary condition for any Hit it yields.
# Names resolved by the engine's qualified_names (import aliases only) need every segment; names the
# Triton inventory resolves may also expand an unimported `tl.` (inventory._ALIASES): only their last
# segment is certain. A visitor that follows values into other modules (value flow: num_warps,
# num_stages, launch options, autotune lists) has no trigger here: its text tokens decide.


def _torch_version_cuda(words: SourceWords) -> bool:  # pytorch.torch_version_cuda_use: torch.version.cuda
    return words.has_all(("torch", "version", "cuda"))


def _cuda_build_import(words: SourceWords) -> bool:  # wheel_variants.cuda_build_chosen_by_availability
    return words.has_all(("torch", "cuda", "is_available"))


def _sm_arch_list(words: SourceWords) -> bool:  # build_scripts.sm_arch_list_reduced: torch.cuda.get_arch_list()
    return words.has_all(("torch", "cuda", "get_arch_list"))


def _graph_capture(words: SourceWords) -> bool:  # pytorch.graph_capture_hazards: with torch.cuda.graph(...)
    return "graph" in words.with_calls and words.has_all(("torch", "cuda"))


def _warp_size_32(words: SourceWords) -> bool:  # triton_code.warp_size_32: uses_triton, a literal 32, 31 or 5,
    # and a warp or lane identifier (every form it reports names one: the target, keyword, parameter or operand)
    from porter.analyze.visitors.triton_code import _WARPISH

    return (
        words.uses_triton()
        and not words.numbers.isdisjoint((32.0, 31.0, 5.0))
        and any(_WARPISH.search(name) for name in words.names)
    )


def _smem_optin(words: SourceWords) -> bool:  # triton_host.smem_optin: the optin property, or (where Triton is
    # used) a budget literal; its name may be a dict key folded from another module's constant: not read here
    return "shared_memory_per_block_optin" in words.names or words.uses_triton()


def _autotune_list(words: SourceWords) -> bool:  # triton_configs.nvidia_tuned_list: a kernel under triton.autotune
    return "autotune" in words.names


def _tf32_dot(words: SourceWords) -> bool:  # triton_code.tf32_dot: calls to triton.language.dot
    return "dot" in words.names and words.may_name_triton()


def _capability_gate(words: SourceWords) -> bool:  # pytorch.capability_comparison: every capability part it reads
    # comes from torch.cuda.get_device_capability() or torch.cuda.get_device_properties(...).major/minor
    return words.has_all(("torch", "cuda")) and (
        "get_device_capability" in words.names or "get_device_properties" in words.names
    )


def _triton_fp8_dtypes(words: SourceWords) -> bool:  # triton_code.fp8_dtypes: triton.language.<an _FP8 dtype>
    from porter.analyze.visitors.triton_code import _FP8

    return not words.names.isdisjoint(_FP8) and words.may_name_triton()


def _reducing_atomics(words: SourceWords) -> bool:  # triton_code.atomic_default_sem: tl.atomic_add/max/min/and/or/xor
    from porter.analyze.visitors.triton_code import _REDUCING_ATOMICS

    return not words.names.isdisjoint(name.rsplit(".", 1)[1] for name in _REDUCING_ATOMICS) and words.may_name_triton()


def _inline_asm(words: SourceWords) -> bool:  # triton_code.inline_ptx: calls to tl.inline_asm_elementwise
    return "inline_asm_elementwise" in words.names and words.may_name_triton()


def _l2_cache_size(words: SourceWords) -> bool:  # pytorch.l2_cache_size_use: the L2_cache_size attribute
    return "L2_cache_size" in words.names


def _triton_nvidia_backend(words: SourceWords) -> bool:  # triton_backends: triton._C.libtriton.nvidia & co.
    return "triton" in words.names and ("nvidia" in words.names or "cublas" in words.names)


def _nccl_version_gate(words: SourceWords) -> bool:  # pytorch.nccl_version_gate: calls to torch.cuda.nccl.version
    return words.has_all(("torch", "cuda", "nccl", "version"))


def _cuda_link_flags(words: SourceWords) -> bool:  # build_scripts.cuda_library_linked: a "-l<CUDA library>" string
    from porter.analyze.visitors.build_scripts import CUDA_LINK_FLAG

    return any(CUDA_LINK_FLAG.fullmatch(value) for value in words.values.split(_SEPARATOR))


def _xformers_ops(words: SourceWords) -> bool:  # xformers_ops: operators reached through an xformers import
    return "xformers" in words.names


VISITOR_TRIGGERS: dict[str, Trigger] = {
    "triton_nvidia_backend": _triton_nvidia_backend,
    "xformers_cuda_only_op": _xformers_ops,
    "capability_comparison": _capability_gate,
    "triton_fp8_dtypes": _triton_fp8_dtypes,
    "triton_atomic_default_sem": _reducing_atomics,
    "triton_inline_ptx": _inline_asm,
    "l2_cache_size_use": _l2_cache_size,
    "torch_version_cuda_use": _torch_version_cuda,
    "cuda_build_chosen_by_availability": _cuda_build_import,
    "sm_arch_list_reduced": _sm_arch_list,
    "graph_capture_hazards": _graph_capture,
    "triton_warp_size_32": _warp_size_32,
    "triton_tf32_dot": _tf32_dot,
    "triton_smem_optin": _smem_optin,
    "triton_nvidia_tuned_list": _autotune_list,
    "nccl_version_gate": _nccl_version_gate,
    "cuda_library_linked": _cuda_link_flags,
}
