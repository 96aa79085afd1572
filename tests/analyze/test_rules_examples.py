"""Every rule file's own examples, run through the real engine: adding a rule = one YAML file."""

from __future__ import annotations

import functools

import pytest

from porter.analyze import analyze_source, load_rules
from porter.analyze.rules import OPT_IN, RUNTIME_RULES, rules_dir
from porter.targets import get_target

RULE_FILES = sorted(p for p in rules_dir().rglob("*.yaml") if p.relative_to(rules_dir()).parts[0] != RUNTIME_RULES)
DOC_KEYS = ("what", "why", "example", "use_instead", "references")
DEFAULT_TARGET = "mi300x"


@functools.cache
def _ruleset(path):
    return load_rules([path], extend_select=[OPT_IN])  # opt-in rules are tested like the others


def _example(item, default_target):
    if isinstance(item, str):
        return item, default_target, None, "example.py"
    return item["code"], item.get("target", default_target), item.get("expected"), item.get("path", "example.py")


def _example_cases():
    """One test item per embedded example, so a failing case never hides the others."""
    for path in RULE_FILES:
        tests = _ruleset(path).rules[0].tests
        for kind in ("valid", "invalid"):
            for index, _ in enumerate(tests.get(kind) or ()):
                yield pytest.param(path, kind, index, id=f"{path.stem}-{kind}-{index}")


@pytest.mark.parametrize("path", RULE_FILES, ids=[p.stem for p in RULE_FILES])
def test_rule_has_valid_and_invalid_examples(path):
    tests = _ruleset(path).rules[0].tests
    assert tests.get("valid"), f"{path.name}: needs at least one valid example"
    assert tests.get("invalid"), f"{path.name}: needs at least one invalid example"


@pytest.mark.parametrize(("path", "kind", "index"), list(_example_cases()))
def test_rule_example(path, kind, index):
    ruleset = _ruleset(path)
    (rule,) = ruleset.rules
    code, target, expected, path_name = _example(rule.tests[kind][index], rule.tests.get("target", DEFAULT_TARGET))
    findings = analyze_source(code, path_name, get_target(target), ruleset)
    found = [f for f in findings if f.rule == rule.id]
    if kind == "valid":
        assert not found, f"{path.name}: valid example flagged on {target}:\n{code}\n{[f.message for f in found]}"
        return
    assert not [f for f in findings if f.rule in ("PT000", "PT001")], f"{path.name}: {findings}"
    if expected is None:
        assert found, f"{path.name}: invalid example not flagged on {target}:\n{code}"
    elif isinstance(expected, int):
        assert len(found) == expected, (
            f"{path.name}: expected {expected} on {target}, got {[(f.line, f.message) for f in found]}:\n{code}"
        )
    else:
        assert [f.line for f in found] == expected, f"{path.name}: expected lines {expected} on {target}:\n{code}"
    for finding in found:
        assert "{" not in finding.message or "{" in code, f"{path.name}: unfilled placeholder: {finding.message}"


@pytest.mark.parametrize("path", RULE_FILES, ids=[p.stem for p in RULE_FILES])
def test_rule_documentation(path):
    (rule,) = _ruleset(path).rules
    missing = [k for k in DOC_KEYS if not rule.docs.get(k)]
    assert not missing, f"{path.name}: docs lack {missing}"
    assert rule.docs["references"] and all(isinstance(r, str) and r for r in rule.docs["references"])
    assert "fix" in rule.raw, f"{path.name}: state the fix kind (or fix: null)"


def test_catalog_loads_as_a_whole():
    ruleset = load_rules(extend_select=[OPT_IN])
    assert len(ruleset.rules) == len(RULE_FILES)
    assert len({r.id for r in ruleset.rules}) == len(RULE_FILES)
