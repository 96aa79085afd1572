"""Shared helpers for the codemod fixture-pair tests (tests/test_codemod_*.py)."""

from __future__ import annotations

import textwrap

from porter.records import Finding
from porter.remedy.codemods import CodemodContext, get_codemod
from porter.targets import get_target


def finding(rule: str, line: int, end_line: int | None = None, **data) -> Finding:
    return Finding(
        rule=rule,
        name=rule.lower(),
        severity="error",
        path="pkg/mod.py",
        line=line,
        column=1,
        end_line=end_line or line,
        end_column=1,
        message="",
        fix="codemod",
        data=data,
    )


def run(rule: str, source: str, lines, target: str = "mi300x", exclusive: bool = False):
    source = textwrap.dedent(source)
    findings = [finding(rule, line) for line in lines]
    ctx = CodemodContext(path="pkg/mod.py", exclusive=exclusive)
    return get_codemod(rule)(source, findings, get_target(target), ctx)


def check(rule: str, source: str, lines, expected: str, target: str = "mi300x", exclusive: bool = False):
    """The codemod turns `source` into `expected`, compiles, and proposes nothing on its own output."""
    result = run(rule, source, lines, target, exclusive)
    assert result is not None, f"{rule} declined"
    expected = textwrap.dedent(expected)
    assert result.text == expected, result.text
    compile(result.text, "pkg/mod.py", "exec")
    everything = [finding(rule, 1, expected.count("\n") + 1)]  # whole file in scope: a stronger re-run
    again = get_codemod(rule)(result.text, everything, get_target(target), CodemodContext(exclusive=exclusive))
    assert again is None, f"{rule} not idempotent:\n{again.text}"
    return result
