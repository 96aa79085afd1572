"""analyze_source: one parse, one index walk, every applicable rule's match entries, findings.

Built-in rules (no YAML, always on):
  PT000 parse-error     the file is not valid Python for libcst; severity error, fix null.
  PT001 analyzer-error  a rule's visitor raised (the other rules' findings are still returned), or the analysis
                        of a whole file could not finish (scan: uncached, so the scan fails closed).

Match vocabulary (rules/schema.json): call, attribute (+assign), import, name, keyword, string,
env, number, visitor. Entries are grouped by kind so each kind looks at its candidate nodes once,
and a node's last name segment is checked against the rules' literal tails before any alias lookup.
"""

from __future__ import annotations

import fnmatch
import functools
import io
import re
import tokenize
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from porter.analyze.guards import only_on_cuda
from porter.analyze.index import build_index, catches_any, dotted_name, iter_strings, literal_value, qualified_names
from porter.analyze.project_facts import MISSING_COMMAND_ERRORS
from porter.analyze.rules import Rule, RuleSet, lookup_fact
from porter.analyze.statement_flow import binds, header_nodes, header_reads, own_statements, written
from porter.analyze.triton import flow
from porter.analyze.visitors import ModuleContext, get_visitor
from porter.discover.source import parse_hazard
from porter.records import Finding, Severity
from porter.targets import Target, get_target

PARSE_ERROR = ("PT000", "parse-error")
ANALYZER_ERROR = ("PT001", "analyzer-error")
_SNIPPET_LINES = 8


# ---- target applicability, variants, messages ----------------------------------------------------


def applies(rule: Rule, target: Target) -> bool:
    names = {"all", target.vendor, target.arch, target.name, *target.aliases}
    return any(name.lower() in names for name in rule.applies_to)


def condition_holds(when: dict[str, Any], target: Target) -> bool:
    for key, expected in when.items():
        found, actual = lookup_fact(target, key)
        if not found or not _value_matches(actual, expected):
            return False
    return True


def _value_matches(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        ops = {
            "lt": lambda a, b: a < b,
            "le": lambda a, b: a <= b,
            "gt": lambda a, b: a > b,
            "ge": lambda a, b: a >= b,
            "ne": lambda a, b: a != b,
        }
        try:
            return all(ops[op](_comparable(actual), _comparable(bound)) for op, bound in expected.items())
        except TypeError:
            return False
    if isinstance(expected, list) and not isinstance(actual, (list, tuple)):
        return any(_value_matches(actual, option) for option in expected)
    return _comparable(actual) == _comparable(expected)


def _comparable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def active_variant(rule: Rule, target: Target) -> dict[str, Any] | None:
    return next((v for v in rule.variants if condition_holds(v["when"], target)), None)


class _Missing:
    """A placeholder with no value: formats back to itself so the gap stays visible."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str) -> _Missing:
        return _Missing(f"{self.name}.{attr}")

    def __getitem__(self, key: Any) -> _Missing:
        return _Missing(f"{self.name}[{key}]")

    def __format__(self, spec: str) -> str:
        return "{" + self.name + (":" + spec if spec else "") + "}"


class _TargetView:
    """`{target.x}` reads a Target attribute, then Target.extra; `{target}` is its name."""

    def __init__(self, target: Target) -> None:
        self._target = target

    def __getattr__(self, attr: str) -> Any:
        found, value = lookup_fact(self._target, attr)
        return value if found else _Missing(f"target.{attr}")

    def __format__(self, spec: str) -> str:
        return format(self._target.name, spec)


class _Values(dict):
    def __missing__(self, key: str) -> _Missing:
        return _Missing(key)


def format_message(template: str, target: Target, data: dict[str, Any]) -> str:
    try:
        return template.format_map(_Values(data, target=_TargetView(target)))
    except Exception:  # a bad format spec or index: show the template rather than fail
        return template


_TARGET_FIELD = re.compile(r"\{target\.([A-Za-z_][A-Za-z0-9_.]*)")


def cited_facts(target: Target, message: str, variant: dict | None) -> dict[str, Any]:
    keys = list(dict.fromkeys(_TARGET_FIELD.findall(message) + list((variant or {}).get("when", {}))))
    facts: dict[str, Any] = {"target": target.name, "arch": target.arch}
    for key in keys:
        found, value = lookup_fact(target, key)
        if found and key not in ("name", "arch"):
            facts[key] = _plain(value)
    return facts


def _plain(value: Any) -> Any:
    """JSON-friendly copy: findings are cached and serialised."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


# ---- suppressions -------------------------------------------------------------------------------

_NOQA = re.compile(
    r"#\s*noqa\b(?:\s*:\s*(?P<noqa>[A-Za-z0-9_,\- \t]+))?"
    r"|#\s*porter:\s*ignore(?P<file>-file)?(?:\[(?P<ids>[^\]]*)\])?"
)


@dataclass
class Suppressions:
    by_line: dict[int, set[str] | None] = field(default_factory=dict)  # None: everything
    whole_file: set[str] | None = field(default_factory=set)

    @classmethod
    def parse(cls, text: str) -> Suppressions:
        found = cls()
        if "noqa" not in text and "porter:" not in text:
            return found
        for line, comment in _comments(text):
            for match in _NOQA.finditer(comment):
                found._add(line, match)
        return found

    def _add(self, line: int, match: re.Match) -> None:
        codes_text = match.group("noqa") if match.group("noqa") is not None else match.group("ids")
        codes = None if codes_text is None else {c for c in re.split(r"[,\s]+", codes_text) if c}
        if match.group("file"):
            self.whole_file = None if codes is None or self.whole_file is None else self.whole_file | codes
            return
        current = self.by_line.get(line, set())
        self.by_line[line] = None if codes is None or current is None else current | codes

    def suppressed(self, rule: Rule | tuple, lines: Iterable[int]) -> bool:
        keys = {rule.id, rule.name} if isinstance(rule, Rule) else set(rule)
        if self.whole_file is None or keys & self.whole_file:
            return True
        for line in lines:
            codes = self.by_line.get(line, set())
            if codes is None or keys & codes:
                return True
        return False


def _comments(text: str) -> Iterable[tuple[int, str]]:
    """(line, text) of each comment token: a `# noqa` inside a string literal suppresses nothing.
    Source the tokenizer rejects (libcst parses some it does not) falls back to every line."""
    try:
        return [
            (token.start[0], token.string)
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        return list(enumerate(text.splitlines(), start=1))


# ---- compiled match entries -----------------------------------------------------------------------

_GLOB = re.compile(r"[*?\[]")


class _Patterns:
    """Qualified-name patterns: exact names plus fnmatch globs, with literal tails for cheap checks."""

    def __init__(self, patterns: str | list[str]) -> None:
        items = patterns if isinstance(patterns, list) else [patterns]
        self.exact = {p for p in items if not _GLOB.search(p)}
        globs = [p for p in items if _GLOB.search(p)]
        self.glob = re.compile("|".join(fnmatch.translate(p) for p in globs)) if globs else None
        tails = {p.rsplit(".", 1)[-1] for p in items}
        self.tails = None if any(_GLOB.search(t) for t in tails) else tails  # None: any tail

    def matches(self, names: Iterable[str]) -> str | None:
        for name in names:
            if name in self.exact or (self.glob is not None and self.glob.match(name)):
                return name
        return None

    def matches_prefix(self, names: Iterable[str]) -> str | None:
        """Module patterns: `flash_attn` also matches `flash_attn.ops`."""
        for name in names:
            if self.matches([name]):
                return name
            for exact in self.exact:
                if name.startswith(exact + "."):
                    return name
        return None


def _tail_match(entry: dict[str, Any], names: Iterable[str]) -> str | None:
    """`tail_only` call entries: the pattern must match the callee's own name, not its module path,
    and a name matching `unless` (probes such as is_mxfp4_supported) is not a use."""
    for name in names:
        tail = name.rsplit(".", 1)[-1]
        if entry["_patterns"].matches([tail]) and not (entry["_unless"] and entry["_unless"].search(tail)):
            return name
    return None


def _catches_missing_command(node: cst.Try) -> bool:
    """A handler that runs when the command is absent (a bare except, or one naming such an error)."""
    return catches_any(node, MISSING_COMMAND_ERRORS)


def _asks_which(test: cst.BaseExpression) -> bool:
    """`if shutil.which("nvidia-smi"):` / `if which(...) is not None and ...:` (a positive test of the lookup)."""
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            name = dotted_name(node.func) or ""
            if name.rsplit(".", 1)[-1] == "which":
                return True
        elif isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
            stack.extend((node.left, node.right))
        elif isinstance(node, cst.Comparison) and all(
            isinstance(c.operator, cst.IsNot) and isinstance(c.comparator, cst.Name) and c.comparator.value == "None"
            for c in node.comparisons
        ):
            stack.append(node.left)
    return False


def _compile_entry(entry: dict[str, Any]) -> dict[str, Any]:
    compiled = dict(entry)
    if entry.get("aware_of"):
        compiled["_aware"] = re.compile(entry["aware_of"])
    if entry.get("importing"):
        compiled["_importing"] = _Patterns(entry["importing"])
    if entry.get("in_files"):
        compiled["_in_files"] = tuple(entry["in_files"])
    if entry.get("tail_only"):
        compiled["_tail_only"] = True
        compiled["_unless"] = re.compile(entry["unless"]) if entry.get("unless") else None
    for key in ("call", "attribute", "import", "name", "env"):
        if key in entry:
            compiled["_patterns"] = _Patterns(entry[key])
    if "keyword" in entry:
        compiled["_calls"] = _Patterns(entry["keyword"]["call"])
        compiled["_names"] = _Patterns(entry["keyword"]["name"])
    if "string" in entry:
        compiled["_regex"] = re.compile(entry["string"]["regex"])
        if "in_call" in entry["string"]:
            compiled["_calls"] = _Patterns(entry["string"]["in_call"])
    if "number" in entry:
        values = entry["number"]["value"]
        compiled["_values"] = {float(v) for v in (values if isinstance(values, list) else [values])}
        if "near" in entry["number"]:
            compiled["_near"] = re.compile(entry["number"]["near"])
    if "env" in entry:
        names = entry["env"] if isinstance(entry["env"], list) else [entry["env"]]
        body = "|".join(fnmatch.translate(n).replace(r"\Z", "").removeprefix("(?s:").removesuffix(")") for n in names)
        compiled["_env_exact"] = re.compile(rf"(?:{body})\Z")
        name_body = body.replace(".*", "[A-Za-z0-9_]*")  # a glob in a command string stops at the name's end
        compiled["_env_inline"] = re.compile(rf"(?<![A-Za-z0-9_])({name_body})=([^\s;&|'\"]*)")
        compiled["_unless_values"] = {str(v) for v in entry.get("unless_value", ())}
        if entry.get("not_beside"):
            compiled["_beside"] = _Patterns(entry["not_beside"])
    return compiled


def _compiled(rule: Rule) -> list[dict[str, Any]]:
    cached = rule.__dict__.get("_compiled_match")
    if cached is None:
        cached = [_compile_entry(e) for e in rule.match]
        rule.__dict__["_compiled_match"] = cached
    return cached


# ---- matching --------------------------------------------------------------------------------------


@dataclass
class _RawHit:
    rule: Rule
    node: cst.CSTNode
    data: dict[str, Any]
    severity: Severity | None = None
    message: str | None = None
    unreachable: bool = False  # in a branch only a CUDA build runs (porter.analyze.guards)


_ENV_CALL_TAILS = {"getenv", "putenv", "unsetenv", "setenv", "delenv", "get", "setdefault", "pop"}
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")
_ENV_INLINE = re.compile(r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]*=")
# what may precede "X=..." in a shell command: the start, a separator or `$(`, then `export` / `env` / `-e`
# and other assignments; prose ("measured with X=0: ...") has words there instead
_COMMAND_LEAD = re.compile(
    r"(?:\A|[;&|(`\n]|\$\()\s*(?:(?:export|env|set|sudo|-e|--env)\s+)?(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*\Z"
)


def _in_command_position(text: str, start: int) -> bool:
    return _COMMAND_LEAD.search(text[:start]) is not None


@dataclass
class EnvRef:
    """One place an environment variable is named: os.environ[...], getenv/get/setdefault/pop("X"),
    a dict key or keyword (env dicts, dict(X=...)), or "X=..." inside a string (shell commands)."""

    node: cst.CSTNode
    name: str  # the variable ("" for inline strings: read `text`)
    value: Any  # the literal assigned, when visible
    sets: bool  # assigned/passed rather than read
    inline: bool = False
    text: str = ""


def _inline_assignment(text: str) -> bool:
    return _command_assignment(_ENV_INLINE, text) is not None


def _command_assignment(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first "X=..." of `pattern` in `text` that sits where a shell command sets a variable."""
    return next((m for m in pattern.finditer(text) if _in_command_position(text, m.start())), None)


def env_references(ctx: ModuleContext) -> list[EnvRef]:
    """Every environment-variable reference in the module (computed once per module)."""
    cached = ctx.cache.get("env_references")
    if cached is not None:
        return cached
    index = ctx.index
    refs: list[EnvRef] = []
    keyed: dict[int, tuple[bool, Any]] = {}  # string id -> (sets, value node)
    assigned = {id(t.target): n.value for n in index.of(cst.Assign) for t in n.targets}
    for node in index.of(cst.Subscript):
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            value = assigned.get(id(node))
            keyed[id(node.slice[0].slice.value)] = (value is not None, value)
    for node in index.of(cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                keyed[id(element.key)] = (True, element.value)
    for call in index.of(cst.Call):
        tail = call.func.attr.value if isinstance(call.func, cst.Attribute) else getattr(call.func, "value", None)
        if call.args and tail in _ENV_CALL_TAILS and call.args[0].keyword is None:
            sets = tail in ("putenv", "setenv", "setdefault")
            keyed[id(call.args[0].value)] = (sets, call.args[1].value if len(call.args) > 1 and sets else None)
        for arg in call.args:
            if arg.keyword is not None and _ENV_NAME.match(arg.keyword.value):
                refs.append(EnvRef(arg, arg.keyword.value, _plain(literal_value(arg.value)), True))
    for node in index.of(cst.SimpleString):
        (text,) = iter_strings(node)
        usage = keyed.get(id(node))
        if usage is not None and _ENV_NAME.match(text):
            sets, value = usage
            refs.append(EnvRef(node, text, _plain(literal_value(value)) if value is not None else None, sets))
        elif "=" in text and id(node) not in index.docstrings and _inline_assignment(text):
            refs.append(EnvRef(node, "", None, True, inline=True, text=text))
    ctx.cache["env_references"] = refs
    return refs


class _Matcher:
    """Runs every (rule, entry) of the active rules over one module's index."""

    def __init__(self, ctx: ModuleContext, rules: list[Rule]) -> None:
        self.ctx = ctx
        self.index = ctx.index
        self.aliases = ctx.index.aliases
        self.hits: list[_RawHit] = []
        self.errors: list[tuple[Rule, str]] = []
        self.by_kind: dict[str, list[tuple[Rule, dict]]] = {}
        for rule in rules:
            for entry in _compiled(rule):
                kind = next(
                    k
                    for k in ("call", "attribute", "import", "name", "keyword", "string", "env", "number", "visitor")
                    if k in entry
                )
                self.by_kind.setdefault(kind, []).append((rule, entry))
        self._qn_cache: dict[int, set[str]] = {}

    @functools.cached_property
    def _imported(self) -> list[str]:
        """Every module and name the file imports, at any depth (a builder's `from torch.utils import
        cpp_extension` inside a function counts)."""
        return [name for _node, name in self.index.imports]

    def qnames(self, node: cst.CSTNode) -> set[str]:
        key = id(node)
        names = self._qn_cache.get(key)
        if names is None:
            names = self._qn_cache[key] = qualified_names(node, self.aliases)
        return names

    def hit(self, rule: Rule, entry: dict, node: cst.CSTNode, **data: Any) -> None:
        if self._applies(entry):
            self.hits.append(_RawHit(rule, node, *self._placed(entry, data)))

    def _applies(self, entry: dict) -> bool:
        """Is this file one the entry is about (`importing`, `in_files`, and `aware_of` with `aware_silent`)? The
        conditions read the file only, so a visitor's entry is asked once, before the visitor walks it."""
        if "_importing" in entry and not entry["_importing"].matches_prefix(self._imported):
            return False  # the module never imports the API the hit only matters through
        if "_in_files" in entry and not _file_named(self.ctx.path, entry["_in_files"]):
            return False  # the hit matters only in a file of this role (the project's own setup.py)
        # the rule is about files that ignore ROCm; this one handles it (flags of the CUDA path)
        return not (entry.get("aware_silent") and self._aware(entry))

    def _aware(self, entry: dict) -> bool:
        return "_aware" in entry and entry["_aware"].search(self.ctx.text) is not None

    def _placed(self, entry: dict, data: dict[str, Any]) -> tuple[dict[str, Any], Severity | None]:
        """A hit's data and severity in a file the entry applies to: info where the module handles the AMD side."""
        merged = dict(entry.get("data") or {})
        merged.update(data)
        if not self._aware(entry):
            return merged, None
        merged["module_handles"] = entry["aware_of"]
        return merged, "info"  # the module already handles the AMD side somewhere: worth a look, not an error

    def run(self) -> None:
        kinds = self.by_kind
        if "call" in kinds or "keyword" in kinds:
            self._calls(kinds.get("call", []), kinds.get("keyword", []))
        if "attribute" in kinds or "name" in kinds:
            self._references(kinds.get("attribute", []) + kinds.get("name", []))
        if "import" in kinds:
            self._imports(kinds["import"])
        if "string" in kinds:
            self._strings(kinds["string"])
        if "env" in kinds:
            self._env(kinds["env"])
        if "number" in kinds:
            self._numbers(kinds["number"])
        for rule, entry in kinds.get("visitor", []):
            self._visitor(rule, entry)

    @staticmethod
    def _tail(node: cst.CSTNode) -> str | None:
        if isinstance(node, cst.Attribute):
            return node.attr.value
        if isinstance(node, cst.Name):
            return node.value
        return None

    @staticmethod
    def _tails(entries: list[tuple[Rule, dict]], key: str) -> set[str] | None:
        tails: set[str] = set()
        for _, entry in entries:
            entry_tails = entry[key].tails
            if entry_tails is None:
                return None
            tails |= entry_tails
        return tails

    def _calls(self, calls: list[tuple[Rule, dict]], keywords: list[tuple[Rule, dict]]) -> None:
        tails = self._tails(calls, "_patterns") if calls else set()
        kw_names = set()
        for _, entry in keywords:
            kw_names |= entry["_names"].exact
        kw_globs = any(entry["_names"].glob is not None for _, entry in keywords)
        for call in self.index.of(cst.Call):
            tail = self._tail(call.func)
            if calls and (tails is None or tail in tails):
                names = self.qnames(call)
                for rule, entry in calls:
                    if "_tail_only" in entry:
                        matched = _tail_match(entry, names)
                    else:
                        matched = entry["_patterns"].matches(names)
                    if matched and not (entry.get("returned_ok") and isinstance(self.ctx.parent(call), cst.Return)):
                        self.hit(rule, entry, call, qualified_name=matched)
            if keywords:
                for arg in call.args:
                    if arg.keyword is None or (arg.keyword.value not in kw_names and not kw_globs):
                        continue
                    for rule, entry in keywords:
                        self._keyword(rule, entry, call, arg)

    def _keyword(self, rule: Rule, entry: dict, call: cst.Call, arg: cst.Arg) -> None:
        if arg.keyword is None or not entry["_names"].matches([arg.keyword.value]):
            return
        matched = entry["_calls"].matches(self.qnames(call))
        if not matched:
            return
        value = literal_value(arg.value, default=_UNKNOWN)
        constraint = entry["keyword"].get("value")
        if constraint and not _literal_ok(value, constraint):
            return
        data = {"qualified_name": matched, "keyword": arg.keyword.value}
        if value is not _UNKNOWN:
            data["value"] = value
        self.hit(rule, entry, arg, **data)

    def _references(self, entries: list[tuple[Rule, dict]]) -> None:
        tails = self._tails(entries, "_patterns")
        assigned = self._assignment_targets() if any(e.get("assign") for _, e in entries) else {}
        for node_type in (cst.Attribute, cst.Name):
            for node in self.index.of(node_type):
                if tails is not None and self._tail(node) not in tails:
                    continue
                names = self.qnames(node)
                for rule, entry in entries:
                    if entry.get("assign") and id(node) not in assigned:
                        continue
                    matched = entry["_patterns"].matches(names)
                    if not matched:
                        continue
                    if entry.get("probe_ok") and self._is_probe(node):
                        continue
                    if entry.get("checks_ok") and self._is_check(node):
                        continue
                    data: dict[str, Any] = {"qualified_name": matched}
                    if id(node) in assigned:
                        value = literal_value(assigned[id(node)], default=_UNKNOWN)
                        if "value" in entry and not _literal_ok(value, entry["value"]):
                            continue
                        if value is not _UNKNOWN:
                            data["value"] = value
                    self.hit(rule, entry, node, **data)

    def _is_probe(self, node: cst.CSTNode) -> bool:
        """`X is None`, `X is not None`, `if X:`, `not X`: testing a value (e.g. CUDA_HOME) handles its absence."""
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Comparison) or isinstance(parent, cst.ComparisonTarget):
            comparison = parent if isinstance(parent, cst.Comparison) else self.ctx.parent(parent)
            if not isinstance(comparison, cst.Comparison):
                return False
            return all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in comparison.comparisons)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            return True
        if (
            isinstance(parent, cst.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            name = re.escape(parent.targets[0].target.value)  # `home = CUDA_HOME` then `if home is None:`
            return re.search(rf"\b{name}\s+is\s+(not\s+)?None\b|\bif\s+not\s+{name}\b", self.ctx.text) is not None
        return isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is node

    def _is_check(self, node: cst.CSTNode) -> bool:
        """`x.dtype == torch.float8_e4m3fn`, `dtype in (A, B)`, `{A: tl.float8e4nv}`: the value is only
        compared with or looked up, never produced."""
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Element):  # one of a tuple/list/set: judge the container
            container = self.ctx.parent(parent)
            if container is None:
                return False
            node, parent = container, self.ctx.parent(container)
        if isinstance(parent, cst.ComparisonTarget):
            return isinstance(parent.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot, cst.In, cst.NotIn))
        if isinstance(parent, cst.Comparison):
            return all(
                isinstance(c.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot, cst.In, cst.NotIn))
                for c in parent.comparisons
            )
        if isinstance(parent, cst.Arg):  # `flag.startswith("-gencode")`: a prefix test reads the value
            call = self.ctx.parent(parent)
            return (
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in ("startswith", "endswith")
            )
        return isinstance(parent, cst.DictElement) and parent.key is node

    def _assignment_targets(self) -> dict[int, cst.CSTNode]:
        """id(assigned Name/Attribute) -> the value expression assigned to it."""
        targets: dict[int, cst.CSTNode] = {}
        for node in self.index.of(cst.Assign):
            for target in node.targets:
                targets[id(target.target)] = node.value
        for node in self.index.of(cst.AugAssign):
            targets[id(node.target)] = node.value
        for node in self.index.of(cst.AnnAssign):
            if node.value is not None:
                targets[id(node.target)] = node.value
        return targets

    def _imports(self, entries: list[tuple[Rule, dict]]) -> None:
        guarded = self.index.guarded_imports
        own = _own_packages(self.ctx.path)
        first: dict[tuple[str, str], dict] = {}  # (rule, library) -> first finding's data + statements counted
        reported: set[tuple[str, int]] = set()
        for node, name in self.index.imports:
            if name.split(".", 1)[0] in own:
                continue  # the project imports itself (scanning xformers, bitsandbytes...): not a dependency
            for rule, entry in entries:
                if id(node) in guarded and not entry.get("guarded"):
                    continue
                matched = entry["_patterns"].matches_prefix([name])
                if not matched:
                    continue
                key = (rule.id, matched.split(".", 1)[0])
                if key in first and rule.fix_kind not in _PER_SITE_FIXES:
                    counted = first[key]
                    if id(node) not in counted:  # one finding per library per file; no per-site edit
                        counted[id(node)] = None
                        counted["data"]["imports_in_file"] += 1
                    continue
                if (rule.id, id(node)) in reported:
                    continue  # `from x import a, b` lists x, x.a and x.b: one statement, one finding
                reported.add((rule.id, id(node)))
                first_call = self._first_call_data(node, matched) if entry.get("first_call") else {}
                self.hit(rule, entry, node, module=matched, qualified_name=matched, imports_in_file=1, **first_call)
                first.setdefault(key, {"data": self.hits[-1].data, id(node): None})
        for call in self.index.of(cst.Call):  # importlib.import_module("x") / __import__("x")
            if self._tail(call.func) not in ("import_module", "__import__") or not call.args:
                continue
            module = literal_value(call.args[0].value)
            if isinstance(module, str) and module.split(".", 1)[0] not in own:
                for rule, entry in entries:
                    if id(call) in guarded and not entry.get("guarded"):
                        continue
                    matched = entry["_patterns"].matches_prefix([module])
                    if matched:
                        first_call = {"first_call_note": ""} if entry.get("first_call") else {}
                        self.hit(rule, entry, call, module=matched, qualified_name=matched, **first_call)

    def _first_call_data(self, node: cst.CSTNode, module: str) -> dict[str, Any]:
        """Data for the message (`first_call_note`): where a missing library stops the program first, the check
        that raises without it (`requirement`, from `_requirement_before`) and the first call into it
        (`first_call`), each a line the report can point at."""
        notes: list[str] = []
        data: dict[str, Any] = {"first_call_note": ""}
        first = self._first_call_through(node, module)
        if first is not None:
            data["first_call"] = {"line": first[0]}
            calls = self._calls_through(node, module)
            if calls:
                data["calls"] = calls
                uses = self._results_used(node, module)
                if uses:
                    data["results_used"] = uses
        requirement = self._requirement_before(node, module)
        if requirement:
            data["requirement"] = requirement
            notes.append(f"required on line {requirement['line']}, which raises without it")
        if first is not None:
            notes.append(f"first called on line {first[0]}: `{first[1]}()`")
        data["first_call_note"] = f" ({'; '.join(notes)})" if notes else ""
        return data

    def _first_call_through(self, node: cst.CSTNode, module: str) -> tuple[int, str] | None:
        """The first call into `module` after its import (its line and callee), in the importing function (anywhere
        below, for a module-level import): where a binding that loads its library lazily (pynvml's nvmlInit) fails
        at run time."""
        first = next(self._calls_after(node, module, self._importing_function(node)), None)
        return None if first is None else (first[0], self.ctx.code_for(first[1].func))

    def _importing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ctx.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def _calls_after(
        self, node: cst.CSTNode, module: str, function: cst.FunctionDef | None
    ) -> Iterator[tuple[int, cst.Call]]:
        """(line, call) of each call into `module` below the import `node`, inside `function` (None: anywhere)."""
        after = self.ctx.position(node).end.line
        for call in self.index.of(cst.Call):
            line = self.ctx.position(call).start.line
            if line <= after or (function is not None and all(a is not function for a in self.ctx.ancestors(call))):
                continue
            if self._calls_module(call, module):
                yield line, call

    def _calls_module(self, call: cst.Call, module: str) -> bool:
        return any(name == module or name.startswith(module + ".") for name in self.ctx.qualified_names(call.func))

    def _calls_through(self, node: cst.CSTNode, module: str) -> list[dict[str, int]]:
        """Every statement of the importing function that calls into `module` after the import, as spans: the code
        a port has to replace or guard, not only the first call (accelerate's nvmlDeviceGetHandleByIndex and the
        loop over nvmlDeviceGetCpuAffinity). A loop over a call's result spans its body, which works on what the
        library returned. None for a module-level import: the module's calls sit in functions of their own, often
        behind a loaded-flag the import does not see (crystools' `if self.pynvmlLoaded`)."""
        function = self._importing_function(node)
        if function is None:
            return []
        spans: dict[int, int] = {}
        for _line, call in self._calls_after(node, module, function):
            statement = next((a for a in self.ctx.ancestors(call) if isinstance(a, cst.BaseStatement)), None)
            if statement is None:
                continue
            span = self.ctx.position(statement)
            end = span.end.line if isinstance(statement, (cst.SimpleStatementLine, cst.For)) else span.start.line
            spans[span.start.line] = max(end, spans.get(span.start.line, end))
        return [{"line": start, "end_line": end} for start, end in sorted(spans.items())]

    def _results_used(self, node: cst.CSTNode, module: str) -> list[dict[str, int]]:
        """The rest of the importing function's code that a port has to move with the library's calls: statements
        that read what a call returned (transitively: accelerate's affinity string turned into a CPU list), the
        bindings those calls and statements start from (`handles = []`, `num_elements = ...`), and the loop
        headers around the calls (`for device_index in self.device_ids:`). A value slice within one function, as
        spans; the calls themselves are `calls`."""
        function = self._importing_function(node)
        if function is None:
            return []
        after = self.ctx.position(node).end.line
        outer = {id(a) for a in self.ctx.ancestors(node)}  # blocks around the import run on NVIDIA as well
        statements = [
            s for s in own_statements(function) if self.ctx.position(s).start.line > after and id(s) not in outer
        ]
        seeds = {id(s) for s in statements if self._calls_into(s, module)}
        if not seeds:
            return []
        taken: dict[int, cst.BaseStatement] = {}
        tainted: set[str] = set()
        for statement in statements:  # source order: a value flows forward
            if id(statement) in seeds or header_reads(statement) & tainted:
                taken[id(statement)] = statement
                tainted |= written(statement)
        spans: dict[int, int] = {}
        for statement in statements:
            if id(statement) in seeds or any(id(a) in seeds for a in self.ctx.ancestors(statement)):
                continue  # a call's own span (`calls`)
            starts = any(
                binds(statement) & header_reads(user)
                and self.ctx.position(user).start.line > self.ctx.position(statement).start.line
                for user in taken.values()
            )
            around = isinstance(statement, (cst.For, cst.While)) and any(
                id(a) == id(statement) for user in taken.values() for a in self.ctx.ancestors(user)
            )
            if id(statement) in taken or starts or around:
                position = self.ctx.position(statement)
                end = position.end.line if isinstance(statement, cst.SimpleStatementLine) else position.start.line
                spans[position.start.line] = end
        return [{"line": start, "end_line": end} for start, end in sorted(spans.items())]

    def _calls_into(self, statement: cst.BaseStatement, module: str) -> bool:
        """The statement itself (a compound statement: its header) calls into the module."""
        return any(
            isinstance(call, cst.Call) and self._calls_module(call, module)
            for call in header_nodes(statement, cst.Call)
        )

    def _requirement_before(self, node: cst.CSTNode, module: str) -> dict[str, Any]:
        """An `if not <probe of the module>(): raise ...` just before the import, in the same block (accelerate's
        `if not is_pynvml_available(): raise ImportError(...)`): where the missing library stops the program first
        on a node without it. Its span (the `requirement` data) is a place the report can point at."""
        statement = next((a for a in self.ctx.ancestors(node) if isinstance(a, cst.SimpleStatementLine)), None)
        block = self.ctx.parent(statement) if statement is not None else None
        body = getattr(block, "body", None)
        if not isinstance(body, (list, tuple)) or statement not in body:
            return {}
        stem = module.split(".", 1)[0].lower().removeprefix("py")  # pynvml -> nvml, py3nvml -> 3nvml
        for previous in reversed(body[: body.index(statement)]):
            if isinstance(previous, cst.If) and _probes(previous.test, stem) and _raises(previous.body):
                span = self.ctx.position(previous)
                return {"line": span.start.line, "end_line": span.end.line}
        return {}

    def _string_nodes(self) -> Iterable[cst.CSTNode]:
        yield from self.index.of(cst.SimpleString)
        yield from self.index.of(cst.FormattedString)

    def _strings(self, entries: list[tuple[Rule, dict]]) -> None:
        docstrings = self.index.docstrings
        for node in self._string_nodes():
            (text,) = iter_strings(node)
            for rule, entry in entries:
                if id(node) in docstrings and not entry["string"].get("docstrings"):
                    continue
                match = entry["_regex"].search(text)
                if not match or (entry["string"].get("checks_ok") and self._is_check(node)):
                    continue
                data = {"value": text, "match": match.group(0)}
                if "_calls" in entry:
                    call = self.index.call_arg_of.get(id(node))
                    matched = entry["_calls"].matches(self.qnames(call)) if call is not None else None
                    if not matched:
                        continue
                    if entry["string"].get("fallback_ok") and call is not None and self._has_fallback(call):
                        continue
                    data["qualified_name"] = matched
                self.hit(rule, entry, node, **data)

    def _has_fallback(self, node: cst.CSTNode) -> bool:
        """The call sits in a `try:` body whose handler catches the missing command (FileNotFoundError, OSError,
        CalledProcessError, ...), or in the body of an `if` that first asks `shutil.which(...)`: it copes on AMD."""
        child, parent = node, self.ctx.parent(node)
        while parent is not None:
            owner = self.ctx.parent(parent) if isinstance(parent, cst.IndentedBlock) else None
            if isinstance(owner, cst.Try) and owner.body is parent and _catches_missing_command(owner):
                return True
            if isinstance(owner, cst.If) and owner.body is parent and _asks_which(owner.test):
                return True
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(parent, cst.IfExp) and child is parent.body and _asks_which(parent.test):
                return True
            child, parent = parent, self.ctx.parent(parent)
        return False

    def _env(self, entries: list[tuple[Rule, dict]]) -> None:
        refs = env_references(self.ctx)
        for ref in refs:
            for rule, entry in entries:
                if entry.get("sets") and not ref.sets:
                    continue
                if ref.inline:
                    match = _command_assignment(entry["_env_inline"], ref.text)
                    if match and not self._env_excused(entry, ref, match.group(2), refs):
                        self.hit(rule, entry, ref.node, env=match.group(1), value=None)
                elif entry["_env_exact"].match(ref.name) and not self._env_excused(entry, ref, ref.value, refs):
                    self.hit(rule, entry, ref.node, env=ref.name, value=ref.value)

    def _env_excused(self, entry: dict, ref: EnvRef, value: Any, refs: list[EnvRef]) -> bool:
        """`unless_value`: the place sets a value that turns the feature off (a no-op where it does not exist).
        `not_beside`: the same scope also sets one of these variables, the mark of a recipe the rule's
        advice is not about (CUDA_LAUNCH_BLOCKING next to CUBLAS_WORKSPACE_CONFIG is a determinism setup)."""
        if ref.sets and value is not None and str(value) in entry["_unless_values"]:
            return True
        beside = entry.get("_beside")
        if beside is None:
            return False
        scope = self.index.scope_of.get(id(ref.node), ())
        return any(
            other.sets
            and not other.inline
            and beside.matches({other.name})
            and self.index.scope_of.get(id(other.node), ()) == scope
            for other in refs
        )

    def _numbers(self, entries: list[tuple[Rule, dict]]) -> None:
        for node_type in (cst.Integer, cst.Float):
            for node in self.index.of(node_type):
                value = literal_value(node)
                if value is None:
                    continue
                for rule, entry in entries:
                    if float(value) not in entry["_values"]:
                        continue
                    if "_near" in entry and not entry["_near"].search(self._surroundings(node)):
                        continue
                    self.hit(rule, entry, node, value=value)

    def _surroundings(self, node: cst.CSTNode) -> str:
        """The text a `near:` regex reads: the enclosing simple statement (or compound header) and scope names."""
        statement = self.index.statement_of.get(id(node))
        parts = list(self.index.scope_of.get(id(node), ()))
        if isinstance(statement, cst.SimpleStatementLine):
            parts.append(self.ctx.module.code_for_node(statement))
        elif statement is not None:
            for name in ("test", "target", "iter", "items", "subject"):
                part = getattr(statement, name, None)
                if isinstance(part, cst.CSTNode):
                    parts.append(self.ctx.module.code_for_node(part))
        return "\n".join(parts)

    def _visitor(self, rule: Rule, entry: dict) -> None:
        function = get_visitor(entry["visitor"])
        if function is None:
            self.errors.append((rule, f"no visitor is registered as {entry['visitor']!r}"))
            return
        if not self._applies(entry):
            return
        try:
            for found in function(self.ctx, rule, self.ctx.target) or ():
                data, severity = self._placed(entry, found.data or {})
                self.hits.append(_RawHit(rule, found.node, data, found.severity or severity, found.message))
        except Exception as exc:  # one broken visitor must not hide the other rules' findings
            self.errors.append((rule, f"{type(exc).__name__}: {exc}"))


_UNKNOWN = object()
_PER_SITE_FIXES = ("codemod", "shim")  # these rewrite every import, so every import is reported


def _probes(test: cst.BaseExpression, stem: str) -> bool:
    """A test that asks whether a library is there: `not is_pynvml_available()`, `find_spec("pynvml") is None`."""
    text = cst.Module(body=[]).code_for_node(test).lower()
    return stem in text and ("available" in text or "find_spec" in text or "installed" in text)


def _raises(block: cst.BaseSuite) -> bool:
    """The block's statements end in a raise (it refuses to go on)."""
    statements = getattr(block, "body", ())
    last = statements[-1] if statements else None
    small = getattr(last, "body", ()) if isinstance(last, cst.SimpleStatementLine) else ()
    return any(isinstance(item, cst.Raise) for item in small)


def _file_named(path: str, patterns: tuple[str, ...]) -> bool:
    """Whether the scanned file's name (not its folders) matches one of the glob patterns."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _own_packages(path: str) -> set[str]:
    """Folder names on the scanned file's (relative) path: imports of them are the project's own code."""
    parts = path.replace("\\", "/").split("/")[:-1]
    return {part for part in parts if part.isidentifier()}


def _literal_ok(value: Any, constraint: dict[str, Any]) -> bool:
    if value is _UNKNOWN:
        return False
    if "equals" in constraint:
        options = constraint["equals"] if isinstance(constraint["equals"], list) else [constraint["equals"]]
        if value not in options:
            return False
    if "regex" in constraint and not re.search(constraint["regex"], str(value)):
        return False
    for op, check in (
        ("lt", lambda a, b: a < b),
        ("le", lambda a, b: a <= b),
        ("gt", lambda a, b: a > b),
        ("ge", lambda a, b: a >= b),
    ):
        if op in constraint:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not check(value, constraint[op]):
                return False
    return True


# ---- findings ----------------------------------------------------------------------------------------


def analyze_source(
    text: str,
    path: str,
    target: Target | str,
    ruleset: RuleSet,
    aliases: dict[str, str] | None = None,
    keep_unreachable: bool = False,
    only: Collection[str] | None = None,
) -> list[Finding]:
    """Findings of every rule in `ruleset` that applies to `target`, suppressions applied, sorted.

    `aliases` (local name -> library name) binds names the project re-exports (porter.analyze.project):
    `from pkg.triton_utils import tl` reads as triton.language. Hits in a branch only a CUDA build runs
    are dropped, or kept with reach "nvidia_only" when `keep_unreachable` (the scan shows them on request).
    Never raises on any input text: unparsable source is one PT000 finding; a visitor that fails
    is one PT001 finding. `only` (rule ids) narrows the rules tried to those the scan's `ast` pre-filter
    (porter.analyze.prefilter) left: the others cannot match this text.
    """
    try:
        target = get_target(target) if isinstance(target, str) else target
        return _analyze(text, path, target, ruleset, aliases or {}, keep_unreachable, only)
    except RecursionError:
        return [_builtin_finding(PARSE_ERROR, path, target, "too deeply nested for the parser", 1, 1)]
    except Exception as exc:  # the promise: never raise on input text
        return [_builtin_finding(ANALYZER_ERROR, path, target, f"internal error: {type(exc).__name__}: {exc}", 1, 1)]


def _active_rules(text: str, target: Target, ruleset: RuleSet, only: Collection[str] | None = None) -> list[Rule]:
    rules = _target_rules(target, ruleset)
    if only is not None:  # the scan's pre-filter kept these for their text tokens and ast triggers already
        return [rule for rule in rules if rule.id in only]
    return [rule for rule in rules if any(token in text for token in rule.tokens)]


_TARGET_RULES: list[Any] = [None, None, ()]  # (ruleset, target, its rules for the target): the last one asked


def _target_rules(target: Target, ruleset: RuleSet) -> tuple[Rule, ...]:
    """The rules that apply to `target` and report there, worked out once per (rule set, target), not per file."""
    if _TARGET_RULES[0] is not ruleset or _TARGET_RULES[1] is not target:
        _TARGET_RULES[:] = [ruleset, target, tuple(rule for rule in ruleset.rules if _reports_on(rule, target))]
    return _TARGET_RULES[2]


def _reports_on(rule: Rule, target: Target) -> bool:
    if not applies(rule, target):
        return False
    variant = active_variant(rule, target)
    if variant is None:
        return True
    if variant.get("enabled_by_default") is False and not rule.named:
        return False  # opt-in on this target
    return "severity" not in variant or variant["severity"] is not None  # None: no finding


def _analyze(
    text: str,
    path: str,
    target: Target,
    ruleset: RuleSet,
    aliases: dict[str, str],
    keep_unreachable: bool,
    only: Collection[str] | None = None,
) -> list[Finding]:
    rules = _active_rules(text, target, ruleset, only)
    if not rules:
        return []
    if _nesting_depth(text) > _MAX_NESTING:  # libcst's native parser overflows its stack, uncatchably
        return [_builtin_finding(PARSE_ERROR, path, target, "brackets nested too deeply to parse", 1, 1)]
    hazard = parse_hazard(text)
    if hazard:  # a segfault or a parse of minutes: skipped with this message instead
        return [_builtin_finding(PARSE_ERROR, path, target, f"not parsed: {hazard}", 1, 1)]
    try:
        module = flow.parsed_module(path, text) or cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message = f"cannot parse: {exc.message}".strip()
        return [_builtin_finding(PARSE_ERROR, path, target, message, exc.raw_line, exc.raw_column + 1)]
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:  # libcst rejects some inputs (e.g. null bytes) with other errors
        return [_builtin_finding(PARSE_ERROR, path, target, f"cannot parse: {exc}".splitlines()[0], 1, 1)]
    index = build_index(module)
    for local, name in aliases.items():
        index.aliases[local] = {name}
    ctx = ModuleContext(path, text, module, index, target)
    matcher = _Matcher(ctx, rules)
    matcher.run()
    kept = []
    for raw in matcher.hits:
        raw.unreachable = _behind_cuda_guard(raw, ctx)
        if keep_unreachable or not raw.unreachable:
            kept.append(raw)
    matcher.hits = kept
    suppressions = Suppressions.parse(text) if kept else Suppressions()  # tokenizing costs; most files have no hit
    findings = []
    seen: set[tuple[str, int, int]] = set()
    for raw in matcher.hits:
        finding = _finding(raw, ctx, target, suppressions)
        if finding is None:
            continue
        key = (finding.rule, finding.line, finding.column)
        if key not in seen:  # `torch.a.b` also contains `torch.a`: report the outermost once
            seen.add(key)
            findings.append(finding)
    for rule, error in matcher.errors:
        findings.append(
            _builtin_finding(ANALYZER_ERROR, path, target, f"rule {rule.id} ({rule.name}) failed: {error}", 1, 1)
        )
    findings.sort(key=lambda f: (f.line, f.column, f.rule))
    return findings


def parse_refused(text: str) -> bool:
    """The engine reports this text as PT000 before parsing it (too deeply nested, or a parse hazard)."""
    return _nesting_depth(text) > _MAX_NESTING or bool(parse_hazard(text))


def _behind_cuda_guard(raw: _RawHit, ctx: ModuleContext) -> bool:
    """Hits in a branch only a CUDA build runs (`if not is_rocm(): ...`) are fine on ROCm."""
    if not raw.rule.get("platform_guards", raw.rule.category != "triton"):
        return False
    return only_on_cuda(ctx, raw.node)


_MAX_NESTING = 400
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")


def _nesting_depth(text: str) -> int:
    """Deepest bracket nesting (strings and comments counted too: an upper bound, cheap when few brackets)."""
    if text.count("(") + text.count("[") + text.count("{") <= _MAX_NESTING:
        return 0
    depth = deepest = 0
    for char in _NOT_BRACKETS.sub("", text):
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def _finding(raw: _RawHit, ctx: ModuleContext, target: Target, suppressions: Suppressions) -> Finding | None:
    rule = raw.rule
    variant = active_variant(rule, target)
    severity = raw.severity or (variant.get("severity") if variant and "severity" in variant else rule.severity)
    if severity is None:
        return None
    template = raw.message or (variant or {}).get("message") or rule.message
    fix = variant["fix"] if variant and "fix" in variant else rule.fix
    position = ctx.position(raw.node)
    line, end_line = position.start.line, position.end.line
    statement = ctx.index.statement_of.get(id(raw.node))
    lines = [line]
    if statement is not None:
        lines.append(ctx.position(statement).start.line)
    if suppressions.suppressed(rule, lines):
        return None
    data = {k: _plain(v) for k, v in raw.data.items()}
    return Finding(
        rule=rule.id,
        name=rule.name,
        severity=severity,
        path=ctx.path,
        line=line,
        column=position.start.column + 1,
        end_line=end_line,
        end_column=position.end.column + 1,
        message=format_message(template, target, data),
        fix=(fix or {}).get("kind"),
        category=rule.category,
        target=target.name,
        facts=cited_facts(target, template, variant),
        data=data,
        snippet=_snippet(ctx, line, end_line),
        reach="nvidia_only" if raw.unreachable else "target",
        reach_reason="in a branch only a CUDA build runs" if raw.unreachable else "",
    )


def _snippet(ctx: ModuleContext, line: int, end_line: int) -> str:
    last = min(end_line, line + _SNIPPET_LINES - 1)
    return "\n".join(ctx.positions.line_text(n) for n in range(line, last + 1))


def analyzer_failure(path: str, target: Any, message: str) -> Finding:
    """PT001 for a whole file the analysis could not finish: an error finding, so that an unchecked file
    fails the scan's exit code rather than passing as clean."""
    return _builtin_finding(ANALYZER_ERROR, path, target, message, 1, 1)


def _builtin_finding(kind: tuple[str, str], path: str, target: Any, message: str, line: int, column: int) -> Finding:
    name = getattr(target, "name", str(target))
    return Finding(
        rule=kind[0],
        name=kind[1],
        severity="error",
        path=path,
        line=max(1, line or 1),
        column=max(1, column or 1),
        end_line=max(1, line or 1),
        end_column=max(1, column or 1),
        message=message,
        fix=None,
        category="",
        target=name,
        facts={"target": name, "arch": getattr(target, "arch", "")},
    )
