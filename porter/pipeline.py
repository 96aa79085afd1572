"""The rewrite pipeline as a library: discover -> analyze -> remedy -> verify -> report.

`rewrite()` runs the loop a port needs: scan, plan remedies, verify them on the target, turn what
the verifier saw (a launch over the thread limit, a kernel that does not compile for the arch) into
runtime findings, and plan again, until a round adds nothing new (at most `max_rounds`). With a
model configured, every finding left without an accepted patch goes to the agent with its evidence.

Fail closed: a patch is written only with an accepted verdict (or with verification switched off,
said so in the report); the verifier failing in any way stops the run with VerifierFailed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from porter.errors import PorterError
from porter.records import Finding, Patch, ProgressCallback, RewriteResult, RewriteRound, Verdict, Verification
from porter.targets import Target
from porter.verify.memo import StateMemo

MAX_ROUNDS = 3
Progress = Callable[[str], None]


@contextmanager
def _silent(label: str):
    yield lambda phase, done, total, item: None


class VerifierFailed(PorterError):
    """The verifier raised: no verdict exists, so nothing may be written (exit 2)."""


class AgentMemo:
    """The agent run behind a hook that asks about each finding once per rewrite, however many rounds."""

    def __init__(self, run) -> None:
        self.run = run  # porter.remedy.agent.hook.AgentRun
        self.answers: dict[str, Patch | str] = {}

    def asked(self, finding: Finding) -> bool:
        return _key(finding) in self.answers

    def hook(self, findings: list[Finding], source: str, target: Target) -> Patch | str:
        key = _key(findings[0])
        if key not in self.answers:
            self.answers[key] = self.run.hook(findings, source, target)
        return self.answers[key]


@dataclass
class RewriteSettings:
    target: Target
    config: Any  # porter.config.PorterConfig
    exclusive: bool = False
    verify: bool = True
    tune_topk: int | None = None
    max_rounds: int = MAX_ROUNDS
    agent: AgentMemo | None = None  # the model, or None (offline)
    progress: Progress = field(default=lambda line: None)
    # A verification round runs inside steps(label), which yields the callback its test runs and kernel
    # compiles report to (done/total): the CLI draws a bar or prints a heartbeat from it.
    steps: Callable[[str], AbstractContextManager[ProgressCallback]] = field(default=_silent)
    # tree states tested and compiled in an earlier round (or by the agent's gate): reused, not run again
    states: StateMemo = field(default_factory=StateMemo)


# ---------------------------------------------------------------- discover + analyze


def analyze(root: Path, target: Target, config, ruleset=None, progress=None):
    """Discover the repository's files and run the rules: a ScanResult (`progress` as scan_tree's)."""
    from porter.analyze import load_rules
    from porter.analyze.scan import scan_tree

    ruleset = ruleset or load_rules(select=config.select, ignore=config.ignore, extend_select=config.extend_select)
    return scan_tree(root, target, ruleset, config=config, progress=progress)


# ---------------------------------------------------------------- remedy


def remedy(root: Path, findings: list[Finding], scan, settings: RewriteSettings, extra: Sequence[Patch] = ()):
    """Plan a patch per finding (codemod, shim, agent) and add the agent patches of earlier rounds."""
    from porter.remedy.planner import PlanOptions, plan_patches

    config = settings.config
    docs = {rule_id: dict(info.docs) for rule_id, info in scan.rules.items()}
    safety = {rule_id: info.safety or "safe" for rule_id, info in scan.rules.items()}
    hook = settings.agent.hook if settings.agent is not None else None  # an AgentMemo: each finding asked once
    findings = [as_remediable(f, root) for f in findings]
    plan = plan_patches(
        root,
        findings,
        settings.target,
        PlanOptions.from_config(
            config,
            exclusive=settings.exclusive,
            tune_topk=settings.tune_topk,
            rule_docs=docs,
            rule_safety=safety,
            agent=hook,
        ),
    )
    for patch in extra:
        _add_patch(plan, patch)
    _resolve_shim_dependencies(plan)
    for patch in [p for p in plan.patches if p.kind == "agent"]:
        _stack_on_agent_patch(plan, patch)
    return plan


def _resolve_shim_dependencies(plan) -> None:
    """Agent patches name the shim module they need as "shim:<path>" (AgentVerifier): the plan's patch
    creating that module, or nothing where the module is already in the tree."""
    creates = {edit.path: p.id for p in plan.patches for edit in p.edits if p.kind == "shim" and edit.before is None}
    for patch in plan.patches:
        deps = [creates.get(dep[len("shim:") :], "") if dep.startswith("shim:") else dep for dep in patch.depends_on]
        patch.depends_on = list(dict.fromkeys(dep for dep in deps if dep and dep != patch.id))


def _add_patch(plan, patch: Patch) -> None:
    plan.patches.append(patch)
    for edit in patch.edits:
        if edit.before is not None:
            plan.originals.setdefault(edit.path, edit.before)


def _stack_on_agent_patch(plan, patch: Patch) -> None:
    """The plan's other patches of the model's files are judged with its change applied: their evidence
    (the kernel compiling) may need it, e.g. a launch cap in a file whose PTX the model replaced."""
    files = {edit.path for edit in patch.edits}
    for other in plan.patches:
        touches = files & {edit.path for edit in other.edits if edit.before is not None}
        if other is not patch and touches and other.id not in patch.depends_on and patch.id not in other.depends_on:
            other.depends_on.append(patch.id)


def as_remediable(finding: Finding, root: Path) -> Finding:
    """A runtime finding (PT9xx) whose rule confirms a static rule with a codemod goes to that codemod,
    spanning the whole launch call: e.g. a computed num_warps over the limit (PT906) is capped like PT101."""
    from porter.remedy.codemods import get_codemod
    from porter.verify.runtime import runtime_rules

    rule = next((r for r in runtime_rules() if r.id == finding.rule), None)
    if rule is None or finding.fix != "codemod":
        return finding
    static = next((rule_id for rule_id in rule.confirms if get_codemod(rule_id) is not None), None)
    if static is None:
        return finding
    end = _call_end(root / finding.path, finding.line)
    return replace(
        finding, rule=static, end_line=max(end, finding.end_line), data=finding.data | {"runtime_rule": finding.rule}
    )


def _call_end(path: Path, line: int) -> int:
    """The last line of the outermost call starting on `line` (a launch call spread over lines)."""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return line
    ends = [node.end_lineno or line for node in ast.walk(tree) if isinstance(node, ast.Call) and node.lineno == line]
    return max(ends, default=line)


# ---------------------------------------------------------------- verify


def verify_options(config, root: Path):
    from porter.verify.options import VerifyOptions

    return VerifyOptions().with_porter_config(config, root)


def preflight(root: Path, config, target: Target) -> None:
    """Stop once, with the fix, when the replay cannot run here (VerifierUnavailable, exit 2)."""
    from porter.verify import preflight as checks

    checks.check(root, verify_options(config, root), target)


def verify(
    root: Path,
    patches: list[Patch],
    target: Target,
    config,
    progress: ProgressCallback | None = None,
    judge_first: Sequence[str] = (),
    states: StateMemo | None = None,
) -> Verification:
    """The verifier's verdicts on `patches` (`judge_first` judged before the rest, which run on top of
    those accepted; `states` already evaluated are reused); any failure inside it is VerifierFailed,
    never a verdict."""
    try:
        from porter.verify.core import verify_plan  # inside: a broken verifier is no verdict either

        return verify_plan(root, patches, target, verify_options(config, root), progress, judge_first, states)
    except PorterError:
        raise
    except Exception as error:
        raise VerifierFailed(
            f"cannot verify: the verifier failed ({type(error).__name__}: {error}); nothing was applied"
        ) from error


@dataclass
class AgentVerifier:
    """What the agent's last gate calls: the same verifier, failing closed, on the proposal stacked on the
    shim module it imports (the shim patch of the plan, which the proposal's text cannot contain)."""

    root: Path
    target: Target
    config: Any
    states: StateMemo = field(default_factory=StateMemo)  # the rewrite loop's, where it shares them

    def __call__(self, patch: Patch) -> Verdict:
        base = self._shims_for(patch)
        if base:
            patch.depends_on = sorted(set(patch.depends_on) | {p.id for p in base})
        verdicts = verify(self.root, [*base, patch], self.target, self.config, states=self.states).verdicts
        return next(v for v in verdicts if v.patch_id == patch.id)

    def _shims_for(self, patch: Patch) -> list[Patch]:
        """A shim patch per shim module the proposal imports that is not in the tree yet."""
        from porter.remedy.planner import render_shim, shim_location

        shims: dict[str, Patch] = {}
        for edit in patch.edits:
            location = shim_location(self.root, self.config.shim_module, self.config.source, for_file=edit.path)
            imports_it = location.import_statement in (edit.after or "")
            if imports_it and location.path not in shims and not (self.root / location.path).is_file():
                shim = render_shim(self.root, self.target, location)
                shims[location.path] = Patch(
                    id=f"shim:{location.path}",
                    kind="shim",
                    rules=[],
                    title=f"Add the porter shim module {location.path}",
                    rationale="the module the proposal imports",
                    edits=[shim],
                )
        return list(shims.values())


def agent_verifier(root: Path, target: Target, config, states: StateMemo) -> AgentVerifier:
    return AgentVerifier(root, target, config, states)


# ---------------------------------------------------------------- the loop


def rewrite(root: Path, scan, settings: RewriteSettings) -> RewriteResult:
    """scan -> remedies -> verify -> runtime findings -> remedies, until a round adds nothing new."""
    from porter.verify.runtime import merge_findings

    findings = list(scan.findings)
    agent_patches: list[Patch] = []
    if settings.verify:
        preflight(root, settings.config, settings.target)
    result = RewriteResult(plan=None, scan=scan, verdicts={}, verification="", verified=settings.verify)
    for number in range(1, settings.max_rounds + 1):
        fixed_by_agent = {_key(f) for p in agent_patches for f in p.findings}
        plan = remedy(root, [f for f in findings if _key(f) not in fixed_by_agent], scan, settings, agent_patches)
        earlier = _accepted_diffs(result)
        unchanged = result.plan is not None and [p.diff for p in plan.patches] == [p.diff for p in result.plan.patches]
        result.plan = plan
        if unchanged and settings.verify:
            break  # the new findings brought no new patch: the last verification stands
        new: list[Finding] = []
        if settings.verify:
            new = _verify_round(root, plan, findings, settings, result, number, earlier)
            if result.problem:
                break
            findings = merge_findings(findings, new)
        else:
            result.verification = "skipped (--no-verify): every patch is unverified"
            result.rounds.append(RewriteRound(number, len(plan.patches), 0))
        round_record = result.rounds[-1]
        if settings.verify:
            findings, round_record.relocated = relocate_rejected_origins(root, plan, result, findings)
        asked = []
        if settings.agent is not None and number < settings.max_rounds:
            asked = _ask_agent(settings, leftovers(plan, result, fixed_by_agent), root)
            round_record.agent_asked = len(asked)
        added = [p for p in asked if isinstance(p, Patch)]
        agent_patches += added
        if not new and not added and not round_record.relocated:
            break
    result.skipped = {
        pid: _why_not_applied(state, result) for pid, state in result.statuses().items() if state != "accepted"
    }
    return result


def _why_not_applied(state: str, result: RewriteResult) -> str:
    if not result.verified:
        return "unverified (--no-verify): written only with --apply --no-verify"
    if result.problem:
        return "unverified: verification could not run"
    return "rejected by the verifier" if state == "rejected" else "unverified: the replay gave no evidence for it"


def _accepted_diffs(result: RewriteResult) -> set[str]:
    """The diffs of the patches the last round accepted: the next round judges them first."""
    if result.plan is None:
        return set()
    return {p.diff for p in result.plan.patches if p.id in result.verdicts and result.verdicts[p.id].accepted}


def _verify_round(
    root: Path,
    plan,
    findings: list[Finding],
    settings: RewriteSettings,
    result: RewriteResult,
    number: int,
    earlier: set[str],
) -> list[Finding]:
    """Verify the round's plan, the patches the last round accepted (diffs in `earlier`) judged first and
    the rest on top of them; record verdicts and what still fails; return the new runtime findings."""
    from porter.verify.runtime import merge_findings, runtime_findings

    options = verify_options(settings.config, root)
    settings.progress(
        f"round {number}/{settings.max_rounds}: verifying {len(plan.patches)} patch(es) on {settings.target.name} "
        f"({settings.target.arch}): tests {'selected by import graph' if options.select_tests else 'all'}"
        f", at most {options.timeout_s:g} s per test run ([tool.porter.verify] timeout, select_tests)"
    )
    with settings.steps(f"round {number}/{settings.max_rounds}: verifying {len(plan.patches)} patch(es)") as step:
        first = [p.id for p in plan.patches if p.diff in earlier]
        verification = verify(root, plan.patches, settings.target, settings.config, step, first, settings.states)
    result.verdicts = {v.patch_id: v for v in verification.verdicts}
    result.verification, result.problem = verification.summary, verification.problem
    tree = verification.accepted_tree
    result.target_failures = (
        runtime_findings(tree, settings.target, root) if tree is not None and not result.problem else []
    )
    merged = merge_findings(
        findings, result.target_failures + limits_seen_unverified(root, plan, verification, settings.target)
    )
    if not result.problem:
        merged += confirmed_opt_in_findings(root, verification.baseline, settings, merged)
    known = {_key(f) for f in findings}
    new = [f for f in merged if _key(f) not in known]
    result.rounds.append(
        RewriteRound(
            number,
            len(plan.patches),
            sum(v.accepted for v in verification.verdicts),
            new_runtime=[f"{f.rule} {f.path}:{f.line} {_kernel_name(f)}".strip() for f in new],
        )
    )
    return new


_FRAME = re.compile(r"^([\w./-]+\.py):(\d+): in ", re.MULTILINE)


def limits_seen_unverified(root: Path, plan, verification: Verification, target: Target) -> list[Finding]:
    """LDS and thread-limit failures the target showed while an unverified patch was applied. Such a
    patch is often what lets a kernel compile at all (a TF32 dot fixed for gfx950), so only its run can
    show that a config then needs 192 KiB of LDS: the accepted tree, still failing to compile, never
    will, and without this evidence the patch stays unverified round after round. Lines are mapped
    back from the patched file to the repository's."""
    from porter.remedy.patches import line_map
    from porter.verify.runtime import limit_findings

    if verification.problem:
        return []
    patches = {patch.id: patch for patch in plan.patches}
    found = []
    for verdict in verification.verdicts:
        patch = patches.get(verdict.patch_id)
        if verdict.status != "unverified" or patch is None:
            continue
        back = {edit.path: line_map(edit.after, edit.before) for edit in patch.edits if edit.before is not None}
        found += [_unpatched_lines(finding, back) for finding in limit_findings(verdict, target, root)]
    return found


def _unpatched_lines(finding: Finding, back: dict[str, list[int]]) -> Finding:
    def moved(path: str | None, line: int) -> int:
        mapping = back.get(path or "")
        return mapping[line] if mapping and 0 < line < len(mapping) else line

    data = dict(finding.data)
    if isinstance(data.get("launch"), dict):
        data["launch"] = data["launch"] | {"line": moved(data["launch"].get("path"), data["launch"].get("line") or 0)}
    if isinstance(data.get("kernel"), dict):
        data["kernel"] = data["kernel"] | {"line": moved(data["kernel"].get("path"), data["kernel"].get("line") or 0)}
    line = moved(finding.path, finding.line)
    return replace(finding, line=line, end_line=line, data=data)


def confirmed_opt_in_findings(
    root: Path, baseline: Verdict | None, settings: RewriteSettings, known: list[Finding]
) -> list[Finding]:
    """Findings of the opt-in rules (off by default: noisy on real code) on the lines where the project's
    tests failed before any patch, in the replay's tracebacks: the target's evidence makes them real
    (a `torch.version.cuda` check that raises on ROCm at import), so they are reported and remedied."""
    from porter.analyze import analyze_source, load_rules
    from porter.analyze.rules import OPT_IN
    from porter.remedy.project_tests import is_test_path

    tests = baseline.tests if baseline is not None else None
    if tests is None or not (tests.failed or tests.errors):
        return []
    frames: dict[str, set[int]] = {}
    for path, line in _FRAME.findall(tests.output_tail + "\n" + "\n".join(tests.messages.values())):
        if (root / path).is_file() and not is_test_path(path):  # the project's tests judge; never patched
            frames.setdefault(path, set()).add(int(line))
    if not frames:
        return []
    opt_in = load_rules(select=[OPT_IN])
    seen = {(f.rule, f.path, f.line) for f in known}
    found = []
    for path, lines in sorted(frames.items()):
        text = _read(root / path)
        ran = _ran_before_failing(text, lines)
        for finding in analyze_source(text, path, settings.target, opt_in):
            if finding.line in ran and (finding.rule, finding.path, finding.line) not in seen:
                found.append(
                    replace(
                        finding,
                        provenance="runtime",
                        severity="error",
                        data=finding.data
                        | {"evidence": "the project's tests fail here on the target before any patch"},
                    )
                )
    return found


def _ran_before_failing(text: str, lines: set[int]) -> set[int]:
    """The lines of each failing frame's function up to the line that failed (the test that raised
    there), or the line alone at module level."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set(lines)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    ran = set(lines)
    for line in lines:
        around = [f for f in functions if f.lineno <= line <= (f.end_lineno or f.lineno)]
        if around:
            innermost = max(around, key=lambda f: f.lineno)
            ran |= set(range(innermost.lineno, line + 1))
    return ran


def relocate_rejected_origins(
    root: Path, plan, result: RewriteResult, findings: list[Finding]
) -> tuple[list[Finding], list[str]]:
    """Value-flow origins (a helper's `num_warps = 32`) whose patch a project test rejected, moved to the
    launches they reach: the helper's contract is what the test checks, the launch is where the target's
    limit applies (capped through the shim there, NVIDIA unchanged). Returns (findings, one note each)."""
    rejected = {
        _key(f): patch.id
        for patch in plan.patches
        for f in patch.findings
        if (verdict := result.verdicts.get(patch.id)) is not None and verdict.status == "rejected"
    }
    moved: list[Finding] = []
    notes: list[str] = []
    for finding in findings:
        sites = _launch_sites(finding) if _key(finding) in rejected else []
        if not sites:
            moved.append(finding)
            continue
        origin = f"{finding.path}:{finding.line}"
        moved += [
            replace(
                finding,
                path=path,
                line=line,
                column=1,
                end_line=_call_end(root / path, line),
                end_column=1,
                data=finding.data | {"launches": None, "relocated_from": origin},
            )
            for path, line in sites
        ]
        notes.append(
            f"{rejected[_key(finding)]} ({finding.rule} at {origin}) -> "
            + ", ".join(f"{path}:{line}" for path, line in sites)
        )
    return moved, notes


def _launch_sites(finding: Finding) -> list[tuple[str, int]]:
    """The launch calls a value-flow finding names (data["launches"]: "path:line"), other than its own line."""
    from porter.remedy.codemods.runtime import site_location

    places = [site_location(launch) for launch in finding.data.get("launches") or []]
    return [
        (place[0], place[1])
        for place in places
        if place is not None and (place[0], place[1]) != (finding.path, finding.line)
    ]


def leftovers(plan, result: RewriteResult, skip: set[str]) -> list[tuple[Finding, str]]:
    """Each finding without an accepted patch, with the evidence of why: (finding, evidence)."""
    items: list[tuple[Finding, str]] = []
    for patch in plan.patches:
        verdict = result.verdicts.get(patch.id)
        if verdict is not None and not verdict.accepted:
            items += [
                (f, f"the patch {patch.id} was {verdict.status}: " + "; ".join(verdict.reasons)) for f in patch.findings
            ]
    # findings in the project's tests are reported, never patched: no model is asked to edit them
    items += [(item.finding, f"{item.kind}: {item.reason}") for item in plan.needs_review if item.kind != "test"]
    items += [(f, "still fails on the target after the accepted patches") for f in result.target_failures]
    unique: dict[str, tuple[Finding, str]] = {}
    for finding, evidence in items:
        if _key(finding) not in skip:
            unique.setdefault(_key(finding), (finding, evidence))
    return list(unique.values())


def _ask_agent(settings: RewriteSettings, items: list[tuple[Finding, str]], root: Path) -> list[Patch | str]:
    """Hand each leftover to the agent once; its answers (a patch, or why there is none) pass the same gates
    and the verifier."""
    agent = settings.agent
    answers: list[Patch | str] = []
    if agent is None:  # the caller asks only when an agent is configured
        return answers
    for finding, evidence in items:
        if agent.asked(finding):
            continue
        with_evidence = replace(finding, message=f"{finding.message}\nEvidence: {evidence}")
        text = _read(root / finding.path)
        answer = agent.run.hook([with_evidence], text, settings.target)
        agent.answers[_key(finding)] = answer
        if isinstance(answer, Patch):
            answer.findings = [finding]
        answers.append(answer)
    return answers


def _key(finding: Finding) -> str:
    return f"{finding.rule}@{finding.path}:{finding.line}:{finding.column}"


def _kernel_name(finding: Finding) -> str:
    kernel = finding.data.get("kernel")
    return str(kernel.get("name", "")) if isinstance(kernel, dict) else str(kernel or "")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


# ---------------------------------------------------------------- apply + report


def stage(result: RewriteResult, unverified: bool = False) -> dict[str, str]:
    """The new text of every file the accepted patches change (recorded as applied, in result), all or
    nothing; unverified patches only when verification was off and `unverified` asks for them
    (--apply --no-verify); nothing after a verification that could not run."""
    from porter.remedy.patches import compose

    if result.problem:
        return {}
    if result.plan is None:
        return {}
    statuses = result.statuses()
    wanted = {pid for pid, state in statuses.items() if state == "accepted" or (unverified and not result.verified)}
    texts, not_applied = compose(result.plan.patches, result.plan.originals, wanted)
    result.applied = wanted - set(not_applied)
    for pid in result.applied:
        result.skipped.pop(pid, None)
    result.skipped.update(not_applied)
    return texts


def write_tree(root: Path, texts: dict[str, str], originals: dict[str, str] | None = None) -> None:
    """Write the staged texts into the tree as one journaled transaction, after the report (a report
    that cannot be written leaves the tree untouched); `originals`, the texts porter read, make it
    refuse a file the user changed meanwhile."""
    from porter.remedy.patches import write_files_atomically

    if texts:
        write_files_atomically(root, texts, originals)


def report_options(result: RewriteResult, **extra) -> dict[str, Any]:
    """What the report writers need beyond the plan and the verdicts."""
    return extra | {
        "verification": result.verification,
        "verified": result.verified,
        "problem": result.problem,
        "target_failures": [f.to_dict() for f in result.target_failures],
        "rounds": [vars(r) for r in result.rounds],
    }


def write_report(
    out: Path, result: RewriteResult, options: dict[str, Any], extra_files: dict[str, str] | None = None
) -> Path:
    from porter.report.report_dir import write_report_dir

    return write_report_dir(
        out,
        result.plan,
        result.verdicts,
        result.applied,
        result.skipped,
        options,
        scan_result=result.scan,
        extra_files=extra_files,
    )
