"""Codemods for what the verifier saw on the target (Finding.provenance == "runtime").

Runtime findings (porter.verify.runtime, rules/runtime/PT9xx) carry the evidence in `data`:
"launch" ({"path", "line", "tests"}: the launch call the replay recorded), "kernel" ({"name", "path",
"line", "config", ...}: the compiled kernel and the launch options or autotune config it was compiled
for), "value" ({"name": "num_warps" | "lds_bytes", "value", "limit"}) and "origin" (where the value
flow found the bad value computed: {"path", "line", ...} or a list of them, None when unknown). A static
finding the target confirmed keeps its own rule, with the runtime entries under data["runtime"].

- PT906, a launch over the target's threads per workgroup: the launch's `num_warps=` is capped through
  the shim (`num_warps=porter_shim.cap_num_warps(_num_warps(block))`, unchanged on NVIDIA); at the
  origin (the helper's `num_warps = 32`) when the launch passes no num_warps keyword.
- PT907, a compiled kernel's LDS over the budget: the kernel's autotune list for the target is refitted
  with the measured LDS (BLOCK_K, then stages, then the other tiles, until the compiled size would
  fit); an AMD list porter wrote earlier is refitted in place; the NVIDIA list is untouched.

`runtime_attempts(finding)` gives the planner what to try, in order: (rule whose codemod runs, the
finding located at the site). Launch sites come first: the value's origin may be a helper the
project's tests check (a rejected origin patch is what made the target's evidence necessary).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import libcst as cst

from porter.records import Finding
from porter.remedy.codemods import CodemodResult, codemod, warps
from porter.remedy.codemods import autotune as tune
from porter.remedy.codemods._cst import code, ensure_shim_import, int_value, string_value

THREADS_RULE = "PT906"
LDS_RULE = "PT907"


def runtime_attempts(finding: Finding) -> list[tuple[str, Finding]]:
    """(rule id, finding at a site) pairs to try in order: the finding's own rule at every site, then
    each runtime rule that confirmed it, with that entry's evidence, at every site."""
    attempts = [(finding.rule, site) for site in _sites(finding)]
    for entry in finding.data.get("runtime") or []:
        if isinstance(entry, dict) and entry.get("rule") and entry["rule"] != finding.rule:
            evidence = replace(finding, rule=entry["rule"], data={**finding.data, **entry, "runtime": None})
            attempts += [(entry["rule"], site) for site in _sites(evidence)]
    unique: dict[tuple, tuple[str, Finding]] = {}
    for rule, site in attempts:
        unique.setdefault((rule, site.path, site.line, site.end_line), (rule, site))
    return list(unique.values())


def _sites(finding: Finding) -> list[Finding]:
    """The finding at its launch calls, where it points, at the value's origins and in the kernel's file."""
    own = (finding.path, finding.line, finding.end_line)
    places = [site_location(finding.data.get("launch"))]
    places += [
        site_location(entry.get("launch")) for entry in finding.data.get("runtime") or [] if isinstance(entry, dict)
    ]
    places.append(own)
    origins = finding.data.get("origin")
    places += [site_location(o) for o in (origins if isinstance(origins, list) else [origins])]
    kernel = finding.data.get("kernel")
    if isinstance(kernel, dict) and isinstance(kernel.get("path"), str) and kernel["path"]:
        places.append(
            (kernel["path"], int(kernel.get("line") or 1), int(kernel.get("end_line") or kernel.get("line") or 1))
        )
    sites, seen = [], set()
    for place in places:
        if place is None or place in seen:
            continue
        seen.add(place)
        sites.append(
            finding
            if place == own
            else replace(finding, path=place[0], line=place[1], end_line=place[2], column=1, end_column=1)
        )
    return sites


def widen_to_statement(text: str, finding: Finding) -> Finding:
    """The finding over the whole statement that starts on its line (a launch call's keywords may sit on
    later lines; the replay records the call's first line)."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except cst.ParserSyntaxError:
        return finding
    positions = wrapper.resolve(PositionProvider)
    ends = [
        pos.end.line
        for node, pos in positions.items()
        if isinstance(node, cst.SimpleStatementLine) and pos.start.line == finding.line
    ]
    return replace(finding, end_line=max(ends)) if ends and max(ends) > finding.end_line else finding


def site_location(value: Any) -> tuple[str, int, int] | None:
    """(path, line, end line) of a recorded site: a {"path", "line"} dict or a "path:line" string."""
    if isinstance(value, dict) and isinstance(value.get("path"), str) and isinstance(value.get("line"), int):
        return value["path"], value["line"], int(value.get("end_line") or value["line"])
    if isinstance(value, str) and ":" in value:
        path, _, line = value.rpartition(":")
        if line.isdigit():
            return path, int(line), int(line)
    return None


def _kernel_name(finding: Finding) -> str:
    kernel = finding.data.get("kernel")
    name = kernel.get("name", "") if isinstance(kernel, dict) else str(kernel or "")
    return name.split(":")[-1].split(".")[-1]


def _value(finding: Finding) -> tuple[Any, Any]:
    """(measured value, limit) from data["value"] ({"value", "limit"}) or plain data["value"]/data["limit"]."""
    value = finding.data.get("value")
    if isinstance(value, dict):
        return value.get("value"), value.get("limit")
    return value, finding.data.get("limit")


def _config(finding: Finding) -> dict | None:
    kernel = finding.data.get("kernel")
    config = kernel.get("config") if isinstance(kernel, dict) else None
    return config if isinstance(config, dict) else finding.data.get("config")


def _evidence(findings: list[Finding], target) -> str:
    parts = []
    for f in findings:
        value, limit = _value(f)
        site = site_location(f.data.get("launch"))
        where = f"{site[0]}:{site[1]}" if site else f"{f.path}:{f.line}"
        parts.append(
            f"{_kernel_name(f) or '?'}: {value if value is not None else '?'}"
            + (f" > {limit}" if limit is not None else "")
            + f" at {where}"
        )
    return f"the verifier saw on {target.name} ({target.arch}): " + "; ".join(parts)


# ---- PT906 launches over the target's threads per workgroup ---------------------------------------------


@codemod(THREADS_RULE)
def cap_launch_warps(source, findings, target, ctx):
    """Cap num_warps where these findings point: a launch's keyword or the origin's assignment."""
    result = warps.cap_num_warps(source, findings, target, ctx)
    if result is None:
        return None
    result.rationale = (
        f"A launch asked for over {target.max_threads_per_block} threads per workgroup: "
        f"{_evidence(findings, target)}. " + result.rationale
    )
    result.safety = "safe"
    return result


# ---- PT907 compiled LDS over the budget -------------------------------------------------------------


@codemod(LDS_RULE)
def fit_measured_lds(source, findings, target, ctx):
    """Refit the autotune list of each kernel whose compiled LDS was over the budget."""
    from porter.analyze.triton import inventory_for_source

    inventory = inventory_for_source(source, ctx.path)
    by_name = {kernel.name: kernel for kernel in inventory.kernels}
    module = cst.parse_module(source)
    rewrites: dict[str, tuple[str, cst.SimpleStatementLine]] = {}
    new_lists: dict[str, tuple[str, cst.SimpleStatementLine]] = {}
    claimed, changes, notes = [], [], []
    for name, group in _by_kernel(findings).items():
        kernel = by_name.get(name)
        if kernel is None or kernel.autotune is None:
            notes.append(f"{name}: not an autotuned kernel of {ctx.path}; its block sizes come from the launch")
            continue
        fitted = _refit(module, kernel, group, target, ctx, source)
        if fitted is None:
            notes.append(f"{name}: the measured config is not one porter can fold to integers")
            continue
        list_name, statement, existing, plan = fitted
        (rewrites if existing else new_lists)[name] = (list_name, statement)
        claimed += group
        changes += [f"{name}: {change}" for change in plan.changes] or [f"{name}: configs kept (they fit)"]
    if not claimed:
        return None
    if rewrites:
        module = module.visit(_ReplaceList({list_name: stmt for list_name, stmt in rewrites.values()}))
    if new_lists:
        module = module.visit(tune._Rewrite(new_lists, ctx))
    new = module.code
    if new == source:
        return None
    if not ctx.exclusive:
        new = ensure_shim_import(new, ctx)
    rationale = (
        f"Compiled LDS over {target.name}'s {target.lds_bytes} B per workgroup ({_evidence(claimed, target)}); "
        "Triton does not check LDS at compile time, the launch fails on the target. Each config's LDS is "
        "estimated from the measured one (same kernel, scaled by stages and tile sizes) and refitted: fewer "
        "stages first, then smaller tiles; the NVIDIA list is unchanged. " + "; ".join(changes)
    )
    return CodemodResult(
        text=new,
        rationale=rationale,
        notes=notes,
        uses_shim=not ctx.exclusive,
        facts=target.facts("lds_bytes"),
        safety="unsafe",
        claimed=claimed,
    )


def _by_kernel(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        out.setdefault(_kernel_name(finding), []).append(finding)
    return out


def _refit(module: cst.Module, kernel, group: list[Finding], target, ctx, source: str):
    """(list name, the new list statement, whether it replaces a list, the plan) or None."""
    amd_name = _amd_list_name(kernel)
    configs = _literal_list(module, amd_name) if amd_name else None
    existing = configs is not None
    if configs is None:
        if tune._decline_reason(kernel, kernel.autotune, ctx):
            return None
        configs = [tune._folded(c) for c in kernel.autotune.configs]
        amd_name = f"{kernel.name.upper().lstrip('_')}_AMD_CONFIGS"
    if amd_name is None:  # never: a found list has a name, a new one was just named
        return None
    plan = tune._Plan(kernel, target, lds_limit=min(_limits(group) or [target.lds_bytes]))
    scale = _measured_scale(group, plan)
    if scale is None:
        return None
    plan.measured_scale = scale
    fitted = plan.reshape(configs)
    header = (
        f"porter: autotune configs for {target.name} ({target.arch}), refitted to the LDS the compiled kernel "
        f"used (measured {max(_value(f)[0] or 0 for f in group)} B; estimate x{scale:.2f}); LDS <= "
        f"{plan.lds_limit} B."
    )
    statement = tune._render_list(amd_name, fitted, plan, tune._config_call(source), header)
    return amd_name, statement, existing, plan


def _limits(group: list[Finding]) -> list[int]:
    return [int(limit) for limit in (_value(f)[1] for f in group) if isinstance(limit, int)]


def _measured_scale(group: list[Finding], plan) -> float | None:
    """The largest measured / estimated LDS among the findings' configs."""
    ratios = []
    for finding in group:
        config, (value, _limit) = _config(finding), _value(finding)
        if not isinstance(config, dict) or not isinstance(value, (int, float)):
            continue
        meta = {k: v for k, v in config.items() if k not in ("num_warps", "num_stages") and isinstance(v, int)}
        cfg = tune._Cfg(meta, int(config.get("num_warps", 4)), int(config.get("num_stages", 3)))
        estimate = tune._footprint(cfg, plan.elem_bytes)
        if estimate > 0:
            ratios.append(value / estimate)
    return max(ratios) if ratios else None


def _amd_list_name(kernel) -> str | None:
    """The AMD list porter put in the kernel's decorator (`X_AMD_CONFIGS if porter_shim.IS_HIP else ...`)."""
    for decorator in kernel.node.decorators:
        arg = tune._configs_arg(decorator)
        value = arg.value if arg is not None else None
        if isinstance(value, cst.IfExp) and "IS_HIP" in code(value.test) and isinstance(value.body, cst.Name):
            return value.body.value
        if isinstance(value, cst.Name) and value.value.endswith("_AMD_CONFIGS"):  # --exclusive
            return value.value
    return None


def _literal_list(module: cst.Module, name: str) -> list | None:
    """The configs of a module-level `NAME = [triton.Config({...}, num_warps=.., num_stages=..), ...]`."""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine) or not isinstance(stmt.body[0], cst.Assign):
            continue
        assign = stmt.body[0]
        if [code(t.target) for t in assign.targets] != [name] or not isinstance(assign.value, cst.List):
            continue
        configs = [_literal_config(element.value) for element in assign.value.elements]
        return configs if configs and all(c is not None for c in configs) else None
    return None


def _literal_config(node: cst.BaseExpression):
    if not isinstance(node, cst.Call) or not node.args or not isinstance(node.args[0].value, cst.Dict):
        return None
    meta = {}
    for element in node.args[0].value.elements:
        key = string_value(element.key) if isinstance(element, cst.DictElement) else None
        value = int_value(element.value) if isinstance(element, cst.DictElement) else None
        if key is None or value is None:
            return None
        meta[key] = value
    options, extra = {"num_warps": 4, "num_stages": 3}, {}
    for arg in node.args[1:]:
        if arg.keyword is None:
            return None
        value = int_value(arg.value)
        if arg.keyword.value in options and value is not None:
            options[arg.keyword.value] = value
        else:
            extra[arg.keyword.value] = code(arg.value)
    return tune._Cfg(meta, options["num_warps"], options["num_stages"], extra=extra)


class _ReplaceList(cst.CSTTransformer):
    def __init__(self, statements: dict[str, cst.SimpleStatementLine]):
        super().__init__()
        self.statements = statements

    def leave_SimpleStatementLine(self, original, updated):
        assign = updated.body[0] if updated.body else None
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            name = code(assign.targets[0].target)
            if name in self.statements:
                new = self.statements[name]  # its header comment replaces the old one
                blank = [line for line in updated.leading_lines if line.comment is None]
                return new.with_changes(leading_lines=blank + list(new.leading_lines))
        return updated
