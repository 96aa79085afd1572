"""Rule files: locate, validate against rules/schema.json, select/ignore, fingerprint, prefilter tokens."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

import porter
from porter.errors import ConfigError
from porter.records import Severity

try:  # Python >= 3.11 names the regex parser privately; 3.10 still has the public modules
    from re import _constants as sre_constants  # type: ignore[attr-defined]  # private: typeshed omits it
    from re import _parser as sre_parse  # type: ignore[attr-defined]  # private: typeshed omits it
except ImportError:  # pragma: no cover
    import sre_constants
    import sre_parse

CATEGORIES = ("triton", "pytorch", "libraries", "environment")
RUNTIME_RULES = (
    "runtime"  # rules/runtime/: what the verifier sees on the target (porter.verify.runtime), not scan rules
)
OPT_IN = "opt-in"  # select key for every rule whose file says `enabled_by_default: false`
_PACKAGE_DIR = Path(porter.__file__).resolve().parent
_REPO_DIR = _PACKAGE_DIR.parent


def rules_dir() -> Path:
    """rules/ next to the porter package in a checkout, else the copy bundled in the wheel."""
    checkout = _REPO_DIR / "rules"
    if (checkout / "schema.json").is_file():
        return checkout
    return _PACKAGE_DIR / "_data" / "rules"


@dataclass
class Rule:
    """One rule file, validated. `raw` is the YAML mapping; visitors may read extra keys from it."""

    id: str
    name: str
    category: str
    summary: str
    severity: Severity
    message: str
    match: list[dict[str, Any]]
    applies_to: tuple[str, ...] = ("amd",)
    idiom: str | None = None
    variants: list[dict[str, Any]] = field(default_factory=list)
    prefilter: tuple[str, ...] = ()
    fix: dict[str, Any] | None = None
    docs: dict[str, Any] = field(default_factory=dict)
    tests: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    tokens: tuple[str, ...] = ()  # literal substrings a file must contain for this rule to match
    enabled_by_default: bool = True  # False: opt-in, runs only when selected by id, name or "opt-in"
    named: bool = False  # selected by id, name or "opt-in": turns on variants that are opt-in for their targets

    # Mapping-style access so visitors may treat the rule like its YAML dict.
    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    @property
    def fix_kind(self) -> str | None:
        return self.fix.get("kind") if self.fix else None


@dataclass
class RuleSet:
    rules: list[Rule]
    fingerprint: str
    prefilter_tokens: tuple[str, ...]  # "" among them means: every file must be parsed

    def __iter__(self):
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def get(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id or r.name == rule_id), None)

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.rules]

    def may_match(self, text: str) -> bool:
        """False when no rule can match: the file need not be parsed."""
        return any(token in text for token in self.prefilter_tokens)


@lru_cache(maxsize=1)
def _schema_validator() -> jsonschema.Draft202012Validator:
    schema_path = rules_dir() / "schema.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def load_rules(
    paths: Iterable[str | Path] | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
) -> RuleSet:
    """Load every *.yaml rule under `paths` (default: the rules/ directory), validated, filtered.

    No `select`: the rules enabled by default. `select`: exactly the rules it names (ids, id prefixes,
    names, categories). `extend_select` adds to either. Opt-in rules (`enabled_by_default: false`) run
    only when a select or extend_select key is their id, their name, or "opt-in"; a prefix or a category
    never turns them on, so `--select PT1` keeps meaning "the Triton rules a user gets by default".
    """
    files = _rule_files(paths)
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    digest = hashlib.sha256()
    for file in files:
        text = _read(file)
        digest.update(_display(file).encode() + b"\0" + text.encode() + b"\0")
        rule = _parse_cached(text, file)
        for key in (rule.id, rule.name):
            if key in seen:
                raise ConfigError(f"{_display(file)}: id: duplicate rule {key!r} (also in {seen[key]})")
            seen[key] = _display(file)
        rules.append(rule)
    rules = _filter(rules, select, ignore, extend_select)
    rules.sort(key=lambda r: r.id)
    digest.update(f"porter {porter.__version__} engine {_engine_digest()}".encode())
    digest.update(("select=" + ",".join(select) + ";ignore=" + ",".join(ignore)).encode())
    digest.update((";extend=" + ",".join(extend_select)).encode())
    tokens = sorted({t for r in rules for t in r.tokens})
    return RuleSet(rules=rules, fingerprint=digest.hexdigest()[:32], prefilter_tokens=tuple(tokens))


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{_display(file)}: cannot read rule file: {exc}") from None


def _rule_files(paths: Iterable[str | Path] | None) -> list[Path]:
    roots = [rules_dir()] if paths is None else [Path(p) for p in paths]
    files: list[Path] = []
    for root in roots:
        if root.is_dir():
            files.extend(
                sorted(p for p in root.rglob("*.yaml") if p.is_file() and p.relative_to(root).parts[0] != RUNTIME_RULES)
            )
        elif root.is_file():
            files.append(root)
        else:
            raise ConfigError(f"{root}: no such rule file or directory")
    return files


@lru_cache(maxsize=1)
def _engine_digest() -> str:
    """Analyzer source changes must invalidate scan caches too."""
    digest = hashlib.sha256()
    for source in sorted((_PACKAGE_DIR / "analyze").rglob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _display(file: Path) -> str:
    try:
        return file.resolve().relative_to(_REPO_DIR).as_posix()
    except ValueError:
        return str(file)


_PARSED: dict[tuple[str, str], Rule] = {}


def _parse_cached(text: str, file: Path) -> Rule:
    """Validation is the slow part of loading; the same file text always gives the same Rule."""
    key = (str(file.resolve()), hashlib.sha256(text.encode()).hexdigest())
    rule = _PARSED.get(key)
    if rule is None:
        rule = _PARSED[key] = parse_rule(text, file)
    return rule


def parse_rule(text: str, file: Path) -> Rule:
    """Validate one rule's YAML text; ConfigError names the file and the field path."""
    where = _display(file)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML: {exc}".splitlines()[0]) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping of rule fields")
    errors = sorted(_schema_validator().iter_errors(raw), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        error = _most_specific(errors[0])
        raise ConfigError(f"{where}: {_field_path(error.absolute_path)}: {_describe(error)}")
    _check_semantics(raw, file, where)
    rule = Rule(
        id=raw["id"],
        name=raw["name"],
        category=raw["category"],
        summary=raw["summary"],
        severity=raw["severity"],
        message=raw["message"],
        match=raw["match"],
        applies_to=tuple(raw.get("applies_to") or ("amd",)),
        idiom=raw.get("idiom"),
        variants=raw.get("variants") or [],
        prefilter=tuple(raw.get("prefilter") or ()),
        fix=raw.get("fix"),
        docs=raw.get("docs") or {},
        tests=raw.get("tests") or {},
        path=where,
        raw=raw,
        enabled_by_default=raw.get("enabled_by_default", True),
    )
    rule.tokens = rule_tokens(rule)
    return rule


def _field_path(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _most_specific(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For oneOf/anyOf failures, descend to the alternative that got furthest."""
    while error.validator in ("oneOf", "anyOf") and error.context:
        if all(e.validator == "type" and list(e.absolute_path) == list(error.absolute_path) for e in error.context):
            return error  # reported as "expected X or Y" by _describe
        deeper = [e for e in error.context if e.validator != "required" or len(error.context) == 1]
        best = jsonschema.exceptions.best_match(deeper or error.context)
        if best is None:
            break
        error = best
    return error


def _describe(error: jsonschema.ValidationError) -> str:
    kind = error.validator
    if kind == "type":
        return f"expected {_type_words(error.validator_value)}, got {json.dumps(error.instance, default=str)[:60]}"
    if kind in ("oneOf", "anyOf") and error.context:
        types = []
        for sub in error.context:
            types.extend(_as_list(sub.validator_value))
        return f"expected {_type_words(types)}, got {json.dumps(error.instance, default=str)[:60]}"
    if kind == "enum":
        return f"expected one of {', '.join(map(str, _as_list(error.validator_value)))}, got {error.instance!r}"
    if kind == "required":
        return error.message.replace("is a required property", "is required")
    if kind == "additionalProperties":
        return f"unknown field(s): {error.message.split('(')[-1].rstrip(')')}"
    if kind == "pattern":
        return f"{error.instance!r} does not match {error.validator_value}"
    return error.message


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, list) else [value]


def _type_words(types: Any) -> str:
    words = {
        "string": "string",
        "array": "list",
        "object": "mapping",
        "integer": "integer",
        "number": "number",
        "boolean": "boolean",
        "null": "null",
    }
    names = list(dict.fromkeys(words.get(t, str(t)) for t in _as_list(types)))
    return " or ".join(names)


def _check_semantics(raw: dict, file: Path, where: str) -> None:
    """What the schema cannot say: file naming, regexes, target keys, visitor names."""
    from porter.analyze.visitors import get_visitor, registered_names
    from porter.targets import all_targets

    stem = f"{raw['id']}-{raw['name']}"
    if file.suffix == ".yaml" and file.stem != stem:
        raise ConfigError(f"{where}: id: file must be named {stem}.yaml to match its id and name")
    if file.parent.name in CATEGORIES and file.parent.name != raw["category"]:
        raise ConfigError(f"{where}: category: {raw['category']!r} but the file is in rules/{file.parent.name}/")
    targets = all_targets()
    known = {"all"} | {t.vendor for t in targets.values()} | {t.arch for t in targets.values()}
    known |= set(targets) | {a for t in targets.values() for a in t.aliases}
    for i, name in enumerate(raw.get("applies_to") or ()):
        if name.lower() not in known:
            raise ConfigError(f"{where}: applies_to[{i}]: unknown target, vendor or arch {name!r}")
    for i, variant in enumerate(raw.get("variants") or ()):
        for key in variant["when"]:
            if not any(lookup_fact(t, key)[0] for t in targets.values()):
                raise ConfigError(f"{where}: variants[{i}].when.{key}: no target has a fact called {key!r}")
    for i, entry in enumerate(raw["match"]):
        for regex_path, regex in _entry_regexes(entry):
            try:
                re.compile(regex)
            except re.error as exc:
                raise ConfigError(f"{where}: match[{i}].{regex_path}: bad regular expression: {exc}") from None
        if "visitor" in entry and get_visitor(entry["visitor"]) is None:
            names = ", ".join(registered_names()) or "none"
            raise ConfigError(
                f"{where}: match[{i}].visitor: no visitor named {entry['visitor']!r} (registered: {names})"
            )


def _entry_regexes(entry: dict) -> list[tuple[str, str]]:
    found = []
    if "string" in entry:
        found.append(("string.regex", entry["string"]["regex"]))
    if "number" in entry and "near" in entry["number"]:
        found.append(("number.near", entry["number"]["near"]))
    if "keyword" in entry and "regex" in (entry["keyword"].get("value") or {}):
        found.append(("keyword.value.regex", entry["keyword"]["value"]["regex"]))
    return found


def lookup_fact(target: Any, key: str) -> tuple[bool, Any]:
    """(found, value) for a dotted fact path: Target attribute, else Target.extra, then dict keys."""
    head, *rest = key.split(".")
    if hasattr(target, head) and head != "extra":
        value = getattr(target, head)
    elif head in target.extra:
        value = target.extra[head]
    else:
        return False, None
    for part in rest:
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return False, None
    return True, value


def _filter(
    rules: list[Rule], select: Sequence[str], ignore: Sequence[str], extend_select: Sequence[str] = ()
) -> list[Rule]:
    def matches(rule: Rule, key: str) -> bool:
        return rule.id.startswith(key.upper()) or key in (rule.name, rule.category)

    def named(rule: Rule, key: str) -> bool:
        return key == OPT_IN or key.upper() == rule.id or key == rule.name

    def chosen(rule: Rule, key: str) -> bool:
        """A select key turns a rule on: opt-in rules only by their id, name or the opt-in group."""
        return matches(rule, key) if rule.enabled_by_default else named(rule, key)

    for option, keys in (("select", select), ("extend_select", extend_select), ("ignore", ignore)):
        for key in keys:
            if key != OPT_IN and not any(matches(r, key) or chosen(r, key) for r in rules):
                raise ConfigError(f"{option}: {key!r} matches no rule id, id prefix, name or category")
    if select:
        enabled = [r for r in rules if any(chosen(r, k) for k in select)]
    else:
        enabled = [r for r in rules if r.enabled_by_default]
    ids = {r.id for r in enabled}
    enabled += [r for r in rules if r.id not in ids and any(chosen(r, k) for k in extend_select)]
    kept = [r for r in enabled if not any(matches(r, k) or chosen(r, k) for k in ignore)]
    return [replace(r, named=True) if any(named(r, k) for k in (*select, *extend_select)) else r for r in kept]


# ---- prefilter tokens ---------------------------------------------------------------------------

_GLOB = re.compile(r"[*?\[]")


def rule_tokens(rule: Rule) -> tuple[str, ...]:
    """Literal substrings one of which any file this rule can match must contain ("" = any file)."""
    if rule.prefilter:
        return tuple(sorted(set(rule.prefilter)))
    tokens: set[str] = set()
    for entry in rule.match:
        entry_tokens = _entry_tokens(entry)
        if not entry_tokens:
            return ("",)
        tokens |= entry_tokens
    return tuple(sorted(tokens))


def _entry_tokens(entry: dict) -> set[str]:
    if "data" in entry:
        entry = {k: v for k, v in entry.items() if k != "data"}
    for key in ("call", "attribute", "import", "name"):
        if key in entry:
            return _pattern_tokens(entry[key], last_segment=True)
    if "env" in entry:
        return _pattern_tokens(entry["env"], last_segment=False)
    if "keyword" in entry:
        return _pattern_tokens(entry["keyword"]["name"], last_segment=False)
    if "number" in entry:
        values = entry["number"]["value"]
        return {_number_token(v) for v in (values if isinstance(values, list) else [values])}
    if "string" in entry:
        return regex_literals(entry["string"]["regex"]) or set()
    return set()  # visitor: the rule must declare `prefilter`


def _number_token(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _pattern_tokens(patterns: str | list[str], last_segment: bool) -> set[str]:
    tokens: set[str] = set()
    for pattern in patterns if isinstance(patterns, list) else [patterns]:
        parts = pattern.split(".") if last_segment else [pattern]
        tail = parts[-1]
        if not _GLOB.search(tail):
            tokens.add(tail)
            continue
        runs = [run for part in parts for run in re.split(r"[*?]|\[[^\]]*\]", part) if len(run) >= 3]
        if not runs:
            return set()
        tokens.add(max(runs, key=len))
    return tokens


def regex_literals(regex: str) -> set[str] | None:
    """A set of literals one of which every match of `regex` contains, or None when unknown."""
    try:
        parsed = sre_parse.parse(regex)
    except Exception:
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    return _sequence_literals(list(parsed))


def _sequence_literals(items: list) -> set[str] | None:
    best: set[str] | None = None
    best_score = 0
    run = ""

    def consider(candidate: set[str] | None) -> None:
        nonlocal best, best_score
        if candidate:
            score = min(len(c) for c in candidate)
            if score > best_score:
                best, best_score = candidate, score

    for op, arg in items:
        if op is sre_constants.LITERAL:
            run += chr(arg)
            continue
        consider({run} if run else None)
        run = ""
        if op is sre_constants.SUBPATTERN:
            consider(_sequence_literals(list(arg[-1])))
        elif op is sre_constants.BRANCH:
            alternatives = [_sequence_literals(list(branch)) for branch in arg[1]]
            if all(alternatives):
                consider(set().union(*(found for found in alternatives if found)))
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and arg[0] >= 1:
            consider(_sequence_literals(list(arg[2])))
    consider({run} if run else None)
    return best
