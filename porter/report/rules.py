"""Rule metadata as the report writers need it, read from whatever rule objects the engine has.

The writers only need ids, names, summaries and docs; reading them through `_get` (attribute or
dict key) keeps the report layer independent of the rule engine's classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from porter.verify.runtime import runtime_rules

PARSE_ERROR_ID = "PT000"
ANALYZER_ERROR_ID = "PT001"


@dataclass(frozen=True)
class RuleInfo:
    id: str
    name: str
    summary: str = ""
    severity: str = "warning"
    category: str = ""
    fix: str | None = None  # remedy kind
    safety: str = ""  # safe | unsafe, when a fix exists
    docs: dict[str, Any] = field(default_factory=dict)
    enabled_by_default: bool = True  # False: an opt-in rule (runs with --extend-select ID or opt-in)
    opt_in_on: tuple[str, ...] = ()  # target conditions under which an on-by-default rule is opt-in

    @property
    def opt_in_where(self) -> str:
        """The targets on which an on-by-default rule is opt-in, as a reader's condition ("" for none)."""
        return " or ".join(self.opt_in_on)

    def default_text(self) -> str:
        if not self.enabled_by_default:
            return "opt-in"
        return "on" + (f" (opt-in where {self.opt_in_where})" if self.opt_in_on else "")

    def help_text(self) -> str:
        parts = [self.summary]
        for label, key in (("What", "what"), ("Why", "why"), ("Use instead", "use_instead")):
            if self.docs.get(key):
                parts.append(f"{label}: {str(self.docs[key]).strip()}")
        if self.docs.get("example"):
            parts.append("Example:\n" + str(self.docs["example"]).rstrip())
        return "\n\n".join(part for part in parts if part)

    def help_markdown(self) -> str:
        parts = [f"**{self.id} {self.name}**: {self.summary}"]
        if not self.enabled_by_default:
            parts.append(f"Opt-in: off by default; enable it with `--extend-select {self.id}`.")
        elif self.opt_in_on:
            parts.append(f"Opt-in where {self.opt_in_where}: enable it there with `--extend-select {self.id}`.")
        for label, key in (("What it does", "what"), ("Why it matters on AMD", "why"), ("Use instead", "use_instead")):
            if self.docs.get(key):
                parts.append(f"### {label}\n{str(self.docs[key]).strip()}")
        if self.docs.get("example"):
            parts.append(f"### Example\n```python\n{str(self.docs['example']).rstrip()}\n```")
        references = self.docs.get("references") or []
        if references:
            parts.append("### References\n" + "\n".join(f"- {ref}" for ref in references))
        if self.fix:
            parts.append(f"Fix: {self.fix}" + (f" ({self.safety})" if self.safety else ""))
        return "\n\n".join(parts)


PARSE_ERROR = RuleInfo(
    id=PARSE_ERROR_ID,
    name="parse-error",
    summary="the file could not be parsed as Python",
    severity="error",
    category="",
    docs={"what": "porter could not parse this file, so no rule ran on it."},
)

ANALYZER_ERROR = RuleInfo(
    id=ANALYZER_ERROR_ID,
    name="analyzer-error",
    summary="a rule's visitor failed on this file (a porter bug)",
    severity="error",
    category="",
    docs={"what": "One rule could not finish on this file; the other rules' findings stand."},
)
BUILTIN_RULES = {PARSE_ERROR_ID: PARSE_ERROR, ANALYZER_ERROR_ID: ANALYZER_ERROR}


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def rule_info(rule: Any) -> RuleInfo:
    fix = _get(rule, "fix")
    fix_kind = _get(fix, "kind") if fix is not None and not isinstance(fix, str) else fix
    safety = _get(fix, "safety", "") if fix is not None and not isinstance(fix, str) else ""
    docs = _get(rule, "docs") or {}
    return RuleInfo(
        id=str(_get(rule, "id")),
        name=str(_get(rule, "name", "")),
        summary=str(_get(rule, "summary", "") or ""),
        severity=str(_get(rule, "severity", "warning") or "warning"),
        category=str(_get(rule, "category", "") or ""),
        fix=fix_kind,
        safety=safety or "",
        docs=dict(docs) if isinstance(docs, dict) else {},
        enabled_by_default=_get(rule, "enabled_by_default", True) is not False,
        opt_in_on=tuple(
            _condition_text(v["when"]) for v in _get(rule, "variants") or () if v.get("enabled_by_default") is False
        ),
    )


def _condition_text(when: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in when.items())


def rule_infos(ruleset: Any) -> dict[str, RuleInfo]:
    """RuleInfo per id for every rule of a rule set (a RuleSet, or any iterable of rules)."""
    rules = _get(ruleset, "rules", ruleset) if ruleset is not None else ()
    if isinstance(rules, dict):
        rules = rules.values()
    infos = dict(BUILTIN_RULES)
    for rule in rules or ():
        info = rule_info(rule)
        infos[info.id] = info
    return infos


@lru_cache(maxsize=1)
def runtime_rule_infos() -> dict[str, RuleInfo]:
    """RuleInfo per runtime rule (rules/runtime/PT9xx): what the verifier saw on the target."""
    return {rule.id: rule_info(rule) for rule in runtime_rules()}


def info_for(rules: dict[str, RuleInfo], finding) -> RuleInfo:
    """The finding's rule (a runtime rule when the rule set lacks it), or a stand-in built from the finding."""
    return (
        rules.get(finding.rule)
        or runtime_rule_infos().get(finding.rule)
        or RuleInfo(
            id=finding.rule, name=finding.name, severity=finding.severity, category=finding.category, fix=finding.fix
        )
    )
