"""The analyzer: rule loading (rules.py), the one-walk index (index.py) and the engine (engine.py).

    ruleset = load_rules(select=["PT2"])
    findings = analyze_source(text, "pkg/mod.py", get_target("mi300x"), ruleset)

Rules are YAML files under rules/ validated by rules/schema.json; Python visitors for what YAML
cannot say live in porter/analyze/visitors/ (and porter/analyze/triton/), registered by name.
"""

from __future__ import annotations

from typing import Any

from porter.analyze.engine import analyze_source, format_message
from porter.analyze.rules import Rule, RuleSet, load_rules, rules_dir

__all__ = ["Rule", "RuleSet", "analyze_source", "format_message", "load_rules", "rules_dir", "scan_tree"]


def __getattr__(name: str) -> Any:
    # scan_tree (discovery + cache + parallel scan) is H3's, in porter/analyze/scan.py.
    if name == "scan_tree":
        from porter.analyze.scan import scan_tree

        return scan_tree
    raise AttributeError(f"module 'porter.analyze' has no attribute {name!r}")
