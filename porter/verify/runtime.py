"""What the verifier saw on the target, as findings (provenance "runtime").

A kernel launch over the target's thread limit, a compiled kernel over its LDS budget, a compile
error for the target arch (inline PTX, TF32, CUDA libdevice...) and a test a patch broke each become
a Finding, located at the kernel's launch call in the repository (the `kernel[grid](...)` expression
of the launching file) so that a codemod can edit that call. `merge_findings` drops a runtime finding
a static one already reports at the same place.
"""

from __future__ import annotations

import ast
from pathlib import Path

from porter.records import CompileRecord, Finding, Verdict
from porter.targets import Target

# Which rule speaks for each kind of failure on the target, and the remedy kind of that rule.
_COMPILE_ERRORS = (  # (text in the error, rule, name, fix)
    ("inline asm", "PT109", "inline-ptx-asm", "codemod"),
    ("asm", "PT109", "inline-ptx-asm", "codemod"),
    ("tf32", "PT114", "tf32-dot-precision", "codemod"),
    ("libdevice", "PT110", "libdevice-cuda-namespace", "codemod"),
    ("__nv_", "PT110", "libdevice-cuda-namespace", "codemod"),
)
COMPILE_ERROR = ("RT001", "compile-error-on-target", "agent")
BROKEN_TEST = ("RT002", "test-broken-by-patch", "agent")


def runtime_findings(verdict: Verdict, target: Target, root: Path | None = None) -> list[Finding]:
    """One finding per (kernel, failure kind) the verdict's compiles show, and per test the patch broke.
    With `root`, each is located at the kernel's launch call in that tree (else at the kernel's file)."""
    findings: dict[tuple, Finding] = {}
    for record in verdict.compiles:
        finding = _compile_finding(record, target, root)
        if finding is not None:
            findings.setdefault((finding.rule, finding.path, finding.line, record.kernel), finding)
    for test in verdict.newly_failing:
        path = test.split("::")[0]
        message = verdict.tests.messages.get(test, "") if verdict.tests else ""
        rule, name, fix = BROKEN_TEST
        findings.setdefault((rule, path, test), _finding(
            rule, name, fix, path, (1, 1), target,
            f"runtime: {test} passed without patch {verdict.patch_id} and fails with it"
            + (f" ({message})" if message else ""),
            {"test": test, "patch": verdict.patch_id, "evidence": message}))
    return sorted(findings.values(), key=Finding.sort_key)


def merge_findings(static: list[Finding], runtime: list[Finding]) -> list[Finding]:
    """Static findings, plus the runtime ones no static finding of the same rule already covers
    (same file, inside the runtime finding's lines); a covered static finding gains the evidence."""
    merged = list(static)
    for finding in runtime:
        covering = [s for s in static if s.rule == finding.rule and _covers(s, finding)]
        for match in covering:
            match.data.setdefault("runtime", finding.message)
        if not covering and all(runtime_key(finding) != runtime_key(m) for m in merged):
            merged.append(finding)
    return sorted(merged, key=Finding.sort_key)


def _covers(static: Finding, runtime: Finding) -> bool:
    """The static finding reports the same failure: at the launch call, or (a compile error) in the kernel's file."""
    at_launch = static.path == runtime.path and runtime.line <= static.line <= max(runtime.end_line, runtime.line)
    in_kernel = "evidence" in runtime.data and static.path == runtime.data.get("kernel_file")
    return at_launch or in_kernel


def runtime_key(finding: Finding) -> str:
    return f"{finding.rule}@{finding.path}:{finding.line}:{finding.data.get('kernel', '')}"


def _compile_finding(record: CompileRecord, target: Target, root: Path | None) -> Finding | None:
    config = ", ".join(f"{k}={v}" for k, v in record.config.items())
    where = f"{record.kernel} [{config}]" if config else record.kernel
    data = {"kernel": record.kernel, "kernel_file": record.source, "config": dict(record.config), "arch": record.arch}
    if not record.ok:
        rule, name, fix = next(((r, n, f) for text, r, n, f in _COMPILE_ERRORS if text in record.error.lower()),
                               COMPILE_ERROR)
        message = f"runtime: {where} does not compile for {record.arch}: {record.error}"
        data["evidence"] = record.error
    elif record.threads is not None and record.thread_limit is not None and record.threads > record.thread_limit:
        rule, name, fix = "PT101", "num-warps-32", "codemod"
        warps = record.threads // target.wave_size
        message = (f"runtime: {where} launches num_warps={warps} = {record.threads} threads; {target.name} allows "
                   f"at most {record.thread_limit} ({target.max_num_warps} waves of {target.wave_size} lanes)")
        data |= {"value": warps, "threads": record.threads, "suggested": target.max_num_warps}
    elif record.lds_bytes is not None and record.lds_limit is not None and record.lds_bytes > record.lds_limit:
        rule, name, fix = "PT107", "lds-budget-assumed-like-hopper", "codemod"
        message = (f"runtime: {where} needs {record.lds_bytes} B of LDS; {target.name} has {record.lds_limit} B: "
                   "it compiles but fails at launch")
        data |= {"lds_bytes": record.lds_bytes, "lds_limit": record.lds_limit}
    else:
        return None
    path, span = _launch_site(record, root)
    return _finding(rule, name, fix, path, span, target, message, data)


def _finding(rule: str, name: str, fix, path: str, span: tuple[int, int], target: Target, message: str,
             data: dict) -> Finding:
    return Finding(rule=rule, name=name, severity="error", path=path, line=span[0], column=1, end_line=span[1],
                   end_column=1, message=message, fix=fix, category="triton" if rule.startswith("PT1") else "runtime",
                   target=target.name, data=data, provenance="runtime")


def _launch_site(record: CompileRecord, root: Path | None) -> tuple[str, tuple[int, int]]:
    """The first `kernel[grid](...)` call of the record's kernel in its launching files (then its own file)."""
    files = [*record.sites, record.source]
    for rel in (f for f in files if f):
        span = _launch_span(root / rel, record.kernel) if root is not None else None
        if span is not None:
            return rel, span
    return record.source, (1, 1)


def _launch_span(path: Path, kernel: str) -> tuple[int, int] | None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            launched = node.func.value
            name = launched.id if isinstance(launched, ast.Name) else getattr(launched, "attr", None)
            if name == kernel:
                spans.append((node.lineno, node.end_lineno or node.lineno))
    return min(spans) if spans else None
