"""What the verifier saw on the target, as Findings (provenance "runtime"), and their merge with the static ones.

The rules are data: rules/runtime/PT9xx-*.yaml say when each applies (`when`: compile_error,
threads, lds, test_broken; compile errors are told apart by `error_patterns` over the compiler's
message and `source_patterns` over the kernel's source), the message, the remedy kind, the static
rules a runtime finding confirms (`confirms`), and the docs the reports render (through
porter.report.rules.info_for, which knows these rules without a rule set).

Every runtime finding is located at the launch call the replay recorded (else the kernel's
definition) and carries, in `data`:
- "launch": {"path", "line", "tests"}: where the kernel was launched from, and by which tests;
- "kernel": {"name", "path", "line", "arch", "config", "signature"};
- "value": the offending value when there is one ({"name": "num_warps", "value": 32, "limit": 16});
- "origin": None here; the value flow fills in where the bad value was computed;
- "evidence": the verifier's one-line reason.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from porter.analyze.rules import RUNTIME_RULES, rules_dir
from porter.records import SEVERITY_RANK, CompileRecord, Finding, RemedyKind, Severity, Verdict
from porter.targets import Target


@dataclass(frozen=True)
class RuntimeRule:
    id: str
    name: str
    summary: str
    severity: Severity
    when: str  # compile_error | threads | lds | test_broken
    message: str
    fix: RemedyKind | None
    error_patterns: tuple[str, ...] = ()
    source_patterns: tuple[str, ...] = ()
    confirms: tuple[str, ...] = ()  # static rules this one confirms at runtime
    docs: dict[str, Any] = field(default_factory=dict)
    category: str = "triton"


_WHEN = ("compile_error", "threads", "lds", "test_broken")
_REQUIRED = ("id", "name", "summary", "severity", "when", "message")


def _parse(path: Path) -> RuntimeRule:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    missing = [key for key in _REQUIRED if key not in raw]
    if missing or raw["when"] not in _WHEN or not re.fullmatch(r"PT9\d\d", str(raw["id"])):
        raise ValueError(
            f"{path.name}: a runtime rule needs {', '.join(_REQUIRED)}, an id PT9xx and `when` "
            f"in {_WHEN} (missing: {', '.join(missing) or 'none'})"
        )
    return RuntimeRule(
        id=raw["id"],
        name=raw["name"],
        summary=raw["summary"],
        severity=raw["severity"],
        when=raw["when"],
        message=" ".join(str(raw["message"]).split()),
        fix=raw.get("fix"),
        error_patterns=tuple(raw.get("error_patterns") or ()),
        source_patterns=tuple(raw.get("source_patterns") or ()),
        confirms=tuple(raw.get("confirms") or ()),
        docs=dict(raw.get("docs") or {}),
        category=raw.get("category", "triton"),
    )


@lru_cache(maxsize=1)
def runtime_rules() -> tuple[RuntimeRule, ...]:
    """Every rules/runtime/*.yaml, by id."""
    files = sorted((rules_dir() / RUNTIME_RULES).glob("PT9*.yaml"))
    return tuple(sorted((_parse(path) for path in files), key=lambda rule: rule.id))


# ---------------------------------------------------------------- classification


def _rules_for(when: str) -> list[RuntimeRule]:
    return [rule for rule in runtime_rules() if rule.when == when]


def _compile_rule(record: CompileRecord, source: str) -> RuntimeRule:
    """The most specific compile-error rule: patterns over the error first, then over the kernel's source."""
    candidates = _rules_for("compile_error")
    for rule in candidates:
        if any(re.search(pattern, record.error, re.IGNORECASE) for pattern in rule.error_patterns):
            return rule
    for rule in candidates:
        if source and any(pattern in source for pattern in rule.source_patterns):
            return rule
    fallback = [rule for rule in candidates if not rule.error_patterns and not rule.source_patterns]
    return fallback[0]


def _kernel_source(root: Path | None, record: CompileRecord) -> tuple[str, int]:
    """(the kernel's source text, its last line) when the repository is at hand, else ('', 0)."""
    if root is None or not record.source:
        return "", 0
    try:
        text = (root / record.source).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return "", 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == record.kernel.split(".")[-1]:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            end = node.end_lineno or node.lineno
            return "\n".join(text.splitlines()[start - 1 : end]), end
    return "", 0


# ---------------------------------------------------------------- findings


def _location(record: CompileRecord) -> tuple[str, int]:
    path, _, line = record.launch_site.rpartition(":")
    if path and line.isdigit():
        return path, int(line)
    return record.source, max(record.kernel_line, 1)


def _config_text(record: CompileRecord) -> str:
    return ", ".join(f"{key}={value}" for key, value in record.config.items())


def _finding(
    rule: RuntimeRule, target: Target, path: str, line: int, values: dict[str, Any], data: dict[str, Any]
) -> Finding:
    message = rule.message.format_map(_Blank(values))
    return Finding(
        rule=rule.id,
        name=rule.name,
        severity=rule.severity,
        path=path,
        line=line,
        column=1,
        end_line=line,
        end_column=1,
        message=message,
        fix=rule.fix,
        category=rule.category,
        target=target.name,
        facts=target.facts("max_threads_per_block", "lds_bytes", "wave_size"),
        data=data | {"origin": None, "evidence": message},
        provenance="runtime",
    )


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _kernel_data(record: CompileRecord, end_line: int) -> dict[str, Any]:
    return {
        "name": record.kernel,
        "path": record.source,
        "line": record.kernel_line,
        "end_line": end_line,
        "arch": record.arch,
        "config": dict(record.config),
        "signature": dict(record.signature),
    }


def _compile_findings(record: CompileRecord, target: Target, root: Path | None) -> list[Finding]:
    path, line = _location(record)
    source, end_line = _kernel_source(root, record)
    data = {
        "launch": {"path": path, "line": line, "tests": list(record.tests)},
        "kernel": _kernel_data(record, end_line),
    }
    values = {
        "kernel": record.kernel,
        "arch": record.arch,
        "config": _config_text(record),
        "launch": f"{path}:{line}",
        "target": target.name,
        "error": record.error,
        "lds_bytes": record.lds_bytes,
        "lds_limit": record.lds_limit,
        "threads": record.threads,
        "thread_limit": record.thread_limit,
        "num_warps": record.config.get("num_warps"),
    }
    if not record.checked:
        return []  # the compile could not finish: nothing was seen on the target
    if not record.ok:
        return [_finding(_compile_rule(record, source), target, path, line, values, data)]
    found = []
    if record.threads is not None and record.thread_limit is not None and record.threads > record.thread_limit:
        value = {"name": "num_warps", "value": record.config.get("num_warps"), "limit": target.max_num_warps}
        found += [_finding(rule, target, path, line, values, data | {"value": value}) for rule in _rules_for("threads")]
    if record.lds_bytes is not None and record.lds_limit is not None and record.lds_bytes > record.lds_limit:
        value = {"name": "lds_bytes", "value": record.lds_bytes, "limit": record.lds_limit}
        found += [_finding(rule, target, path, line, values, data | {"value": value}) for rule in _rules_for("lds")]
    return found


def _broken_test_findings(verdict: Verdict, target: Target) -> list[Finding]:
    run = verdict.tests
    found = []
    for test in verdict.newly_failing:
        path = test.split("::", 1)[0]
        error = run.messages.get(test, "") if run is not None else ""
        values = {"test": test, "patch": verdict.patch_id, "error": error or "(no message)"}
        data = {"test": test, "patch": verdict.patch_id, "launch": None, "kernel": None, "value": None}
        found += [_finding(rule, target, path, 1, values, data) for rule in _rules_for("test_broken")]
    return found


def runtime_findings(verdict: Verdict, target: Target, root: Path | None = None) -> list[Finding]:
    """Runtime findings of one verdict: its kernels that would fail on the target (compile errors,
    threads or LDS over the limit) and the tests the patch broke. `root`, the repository, lets a
    compile error be told apart by the kernel's source (inline asm, libdevice)."""
    found: list[Finding] = []
    seen: set[tuple] = set()
    for record in verdict.compiles:
        for finding in _compile_findings(record, target, root):
            key = (finding.rule, finding.path, finding.line, record.kernel, finding.message)
            if key not in seen:
                seen.add(key)
                found.append(finding)
    found += _broken_test_findings(verdict, target)
    return sorted(found, key=Finding.sort_key)


def limit_findings(verdict: Verdict, target: Target, root: Path | None = None) -> list[Finding]:
    """The kernels of `verdict` that compiled but are over the target's thread or LDS limit: facts of
    the kernel and config on the target, whichever patch let it compile."""
    limits = {rule.id for rule in runtime_rules() if rule.when in ("threads", "lds")}
    return [finding for finding in runtime_findings(verdict, target, root) if finding.rule in limits]


# ---------------------------------------------------------------- merge with the static findings


def _confirms(static: Finding, runtime: Finding, rule: RuntimeRule) -> bool:
    """Whether `runtime` is the target's evidence for `static`: a related rule, at the launch line,
    inside the kernel, at the import the kernel's file binds it through, or in the kernel's file
    with the same offending value."""
    if static.rule not in rule.confirms:
        return False
    launch = runtime.data.get("launch") or {}
    kernel = runtime.data.get("kernel") or {}
    if static.path == launch.get("path") and static.line == launch.get("line"):
        return True
    if static.path != kernel.get("path"):
        return False
    start, end = kernel.get("line") or 0, kernel.get("end_line") or 0
    if start and end and start <= static.line <= end:
        return True
    if static.data.get("form") == "import":
        return True  # the import that binds what the kernel calls (libdevice), in the kernel's file
    value = (runtime.data.get("value") or {}).get("value")
    return value is not None and value in (static.data.get("value"), static.data.get("num_warps"))


def merge_findings(static: list[Finding], runtime: list[Finding]) -> list[Finding]:
    """Static and runtime findings without duplicates: a static finding the target confirmed stays
    one entry (its rule and remedy kept), with provenance "runtime", an error, and the runtime
    evidence under data["runtime"]; runtime findings that confirmed nothing are added."""
    rules = {rule.id: rule for rule in runtime_rules()}
    merged = list(static)
    unmatched = []
    for finding in runtime:
        rule = rules.get(finding.rule)
        matches = [i for i, s in enumerate(merged) if rule is not None and _confirms(s, finding, rule)]
        for index in matches:
            merged[index] = _confirmed(merged[index], finding)
        if not matches:
            unmatched.append(finding)
    return sorted(merged + unmatched, key=Finding.sort_key)


def _confirmed(static: Finding, runtime: Finding) -> Finding:
    evidence = list(static.data.get("runtime", []))
    entry = {
        "rule": runtime.rule,
        "message": runtime.message,
        "launch": runtime.data.get("launch"),
        "kernel": runtime.data.get("kernel"),
        "value": runtime.data.get("value"),
    }
    if entry not in evidence:
        evidence.append(entry)
    severity = static.severity if SEVERITY_RANK[static.severity] >= SEVERITY_RANK["error"] else "error"
    return replace(static, severity=severity, provenance="runtime", data=static.data | {"runtime": evidence})
