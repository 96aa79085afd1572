"""The agent loop: propose, gate, retry with the precise failure, within budgets.

A proposal passes its gates in order, and the first failure goes back to the model:
  1. it parses as SEARCH/REPLACE blocks;   2. every block applies exactly once, to an allowed file;
  3. every edited Python file parses with libcst;
  4. it adds no secret and no process, network, file-system, environment or dynamic-code call
     (porter.remedy.agent.review): such an edit is flagged for review, never run or applied;
  5. re-running the rules clears the finding and adds none;
  6. the verifier accepts it (tests replay green, kernels cross-compile within the target's limits).
Nothing the model writes is executed except through the verifier's test run, in a private copy of
the repository with the isolation porter.verify.isolation could put in force.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from porter.discover.source import parse_hazard
from porter.records import FileEdit, Finding, Patch, Verdict
from porter.remedy.agent.client import AgentSettings, ModelClient, ModelError
from porter.remedy.agent.edits import EditError, apply_edit_blocks, parse_edit_blocks
from porter.remedy.agent.prompt import (
    SHIM_SLOT_PROMPT,
    SYSTEM_PROMPT,
    build_context,
    request_message,
    retry_message,
)
from porter.remedy.agent.review import review_edit
from porter.remedy.agent.shim_slots import ShimRequest, parse_slots, render_agent_shim
from porter.remedy.agent.transcript import Transcript
from porter.targets import Target

Rescan = Callable[[str, str], list[Finding]]  # (text, path) -> findings of the current rule set
Verify = Callable[[Patch], Verdict]
DiffMaker = Callable[[list[FileEdit]], str]
ShimFor = Callable[[Finding], "ShimRequest | None"]  # a library finding with no shim template


@dataclass
class AgentOutcome:
    finding: Finding
    status: str  # accepted | rejected | budget | model-error
    rounds: int
    patch: Patch | None = None
    verdict: Verdict | None = None
    failures: list[str] = field(default_factory=list)

    def why_not(self) -> str:
        """One line for the review list: why this attempt gave no patch (the model never answered is not 'its
        proposals were rejected')."""
        lines = [" ".join(failure.split())[:240] for failure in self.failures]
        last = lines[-1] if lines else ""
        if self.status == "model-error":
            return f"the agent's model could not be reached or failed ({last})"
        if self.status == "budget":
            return f"the agent's budget was spent before it answered ({last})"
        return f"the agent's proposals were not accepted ({last}; the last: {lines[-2]})" if len(lines) > 1 else last


@dataclass
class Budget:
    """Calls, tokens and wall time shared by every finding of one run."""

    settings: AgentSettings
    calls: int = 0
    tokens: int = 0
    started: float = field(default_factory=time.monotonic)

    def exhausted(self) -> str:
        if self.calls >= self.settings.max_calls:
            return f"call budget spent ({self.calls} of {self.settings.max_calls})"
        if self.tokens >= self.settings.max_tokens:
            return f"token budget spent ({self.tokens} of {self.settings.max_tokens})"
        elapsed = time.monotonic() - self.started
        if elapsed >= self.settings.max_wall_s:
            return f"wall-time budget spent ({elapsed:.0f} s of {self.settings.max_wall_s:g} s)"
        return ""


def finding_key(finding: Finding) -> str:
    return f"{finding.rule}@{finding.path}:{finding.line}:{finding.column}"


@dataclass
class AgentLoop:
    client: ModelClient
    files: dict[str, str]  # repository Python files, POSIX path relative to the root -> text
    target: Target
    rescan: Rescan
    make_diff: DiffMaker
    settings: AgentSettings
    transcript: Transcript
    verify: Verify | None = None
    editable: set[str] = field(default_factory=set)  # files with findings, plus the shim module
    rule_docs: dict[str, dict] = field(default_factory=dict)
    exclusive: bool = False
    shim_for: ShimFor | None = None

    def __post_init__(self) -> None:
        self.budget = Budget(self.settings)
        self._patch_count = 0

    def run(self, findings: list[Finding]) -> list[AgentOutcome]:
        return [self.attempt(finding) for finding in findings]

    def attempt(self, finding: Finding) -> AgentOutcome:
        key = finding_key(finding)
        shim = self.shim_for(finding) if self.shim_for else None
        editable = self.editable | ({shim.path} if shim else set())
        context = build_context(finding, self.files, self.rule_docs.get(finding.rule, {}), sorted(editable))
        request = request_message(context, self.target, self.exclusive)
        if shim:
            request += "\n\n" + SHIM_SLOT_PROMPT.format(function=shim.function, params="<signature slot>")
            request += f"\nThe shim module will be {shim.path}, defining `{shim.function}`; switch the import to it."
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": request}]
        outcome = AgentOutcome(finding=finding, status="rejected", rounds=0)
        for round_number in range(1, self.settings.max_rounds + 1):
            spent = self.budget.exhausted()
            if spent:
                return self._end(outcome, "budget", spent)
            outcome.rounds = round_number
            try:
                reply = self.client.complete(messages)
            except ModelError as error:
                self.transcript.record(key, round_number, messages[-1:], None, str(error))
                return self._end(outcome, "model-error", str(error))
            self.budget.calls += 1
            self.budget.tokens += reply.prompt_tokens + reply.completion_tokens
            self.transcript.record(key, round_number, messages[-1:], reply)
            patch, failure = self._gate(reply.text, finding, shim, editable)
            if patch is not None:
                verdict = self.verify(patch) if self.verify else None
                if verdict is None or verdict.accepted:
                    outcome.patch, outcome.verdict = patch, verdict
                    return self._end(outcome, "accepted", "accepted" if verdict else "accepted (not verified)")
                outcome.verdict = verdict
                failure = "the verifier rejected the change:\n" + "\n".join(f"- {r}" for r in verdict.reasons)
            outcome.failures.append(failure)
            messages += [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": retry_message(failure)},
            ]
        return self._end(outcome, "rejected", f"no acceptable proposal in {self.settings.max_rounds} rounds")

    def _end(self, outcome: AgentOutcome, status: str, detail: str) -> AgentOutcome:
        outcome.status = status
        if status != "accepted":
            outcome.failures.append(detail)
        self.transcript.note_outcome(finding_key(outcome.finding), status, detail)
        return outcome

    def _gate(
        self, reply: str, finding: Finding, shim: ShimRequest | None, editable: set[str]
    ) -> tuple[Patch | None, str]:
        try:
            changed = self._apply(reply, shim, editable)
        except EditError as error:
            return None, str(error)
        for path, text in changed.items():
            problem = _parse_problem(path, text)
            if problem:
                return None, problem
        flagged = [
            reason
            for path, text in sorted(changed.items())
            for reason in review_edit(path, self.files.get(path), text, self.transcript.secrets)
        ]
        if flagged:
            return None, (
                "flagged for review, not run or applied: "
                + "; ".join(flagged[:5])
                + ". A port changes numerics and launch parameters only; leave these out."
            )
        problem = self._rule_problem(finding, changed)
        if problem:
            return None, problem
        return self._patch(finding, changed, reply), ""

    def _apply(self, reply: str, shim: ShimRequest | None, editable: set[str]) -> dict[str, str]:
        """Render the shim from its slots (if any), then apply the edit blocks on top."""
        changed: dict[str, str] = {}
        slots = parse_slots(reply)
        if slots:
            if shim is None:
                raise EditError("this finding takes no shim slots; answer with SEARCH/REPLACE blocks only")
            changed[shim.path] = render_agent_shim(shim, slots, self.client.name, self.target.name)
        blocks = parse_edit_blocks(reply)
        if blocks or not changed:
            changed.update(apply_edit_blocks({**self.files, **changed}, blocks, editable))
        return changed

    def _rule_problem(self, finding: Finding, changed: dict[str, str]) -> str:
        """The finding must be gone and no new finding may appear in any edited file.

        Findings are compared by count per rule, not by position or text: edits move lines, and a
        model that rewrites the flagged line without fixing it must not pass as a fix.
        """
        for path, after_text in changed.items():
            before_text = self.files.get(path)
            before = Counter(f.rule for f in self.rescan(before_text, path)) if before_text else Counter()
            after_findings = self.rescan(after_text, path)
            after = Counter(f.rule for f in after_findings)
            if path == finding.path and before[finding.rule] > 0:  # rules cannot see a runtime-only finding
                if after[finding.rule] >= before[finding.rule]:
                    return f"{finding.rule} is still reported in {path}: {finding.message}"
                before[finding.rule] -= 1
            grown = {rule for rule in after if after[rule] > before[rule]}
            if grown:
                added = [f for f in after_findings if f.rule in grown]
                listed = "\n".join(f"- {f.rule} {f.path}:{f.line}: {f.message}" for f in added[:5])
                return f"the change introduces new findings:\n{listed}"
        return ""

    def _patch(self, finding: Finding, changed: dict[str, str], reply: str) -> Patch:
        self._patch_count += 1
        edits = [FileEdit(path=path, before=self.files.get(path), after=text) for path, text in sorted(changed.items())]
        summary = next((line.strip() for line in reply.splitlines() if line.strip()), "")
        return Patch(
            id=f"A{self._patch_count:03d}-{finding.rule}",
            kind="agent",
            rules=[finding.rule],
            title=f"{finding.name}: model-proposed rewrite in {finding.path}",
            rationale=f"Proposed by {self.client.name} for: {finding.message}\nModel summary: {summary[:300]}",
            edits=edits,
            findings=[finding],
            facts=dict(finding.facts),
            safety="unsafe",
            diff=self.make_diff(edits),
        )


def _parse_problem(path: str, text: str) -> str:
    if not path.endswith(".py"):
        return ""
    hazard = parse_hazard(text)
    if hazard:
        return f"{path} is not parsed: {hazard}"
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return (
            f"{path} no longer parses: {str(error).splitlines()[0]} (line {error.raw_line}, column {error.raw_column})"
        )
    return ""


def load_python_files(root: Path, paths: list[str]) -> dict[str, str]:
    files: dict[str, str] = {}
    for relative in paths:
        try:
            files[relative] = (root / relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return files
