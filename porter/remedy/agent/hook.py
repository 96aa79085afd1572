"""Wires the agent loop into the rewrite planner: one hook per run, a transcript at the end.

The planner calls the hook for each finding whose remedy is the agent; the hook returns a Patch only
when the loop accepted a proposal (every gate passed, the verifier included). Outcomes and the
transcript go into the report directory, under agent/.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from porter.analyze import analyze_source
from porter.records import Finding, Patch
from porter.remedy.agent.client import AgentSettings, ModelClient
from porter.remedy.agent.loop import AgentLoop, AgentOutcome, finding_key
from porter.remedy.agent.shim_slots import ShimRequest
from porter.remedy.agent.transcript import Transcript
from porter.remedy.patches import patch_diff
from porter.remedy.shim import shim_import, shim_location
from porter.report.output import atomic_write_text
from porter.targets import Target


@dataclass
class AgentRun:
    """The agent's part of one rewrite: the loop, the outcomes it produced, and where they are saved."""

    loop: AgentLoop
    outcomes: list[AgentOutcome] = field(default_factory=list)

    def hook(self, findings: list[Finding], source: str, target: Target) -> Patch | str:
        """The accepted patch, else why there is none."""
        attempts = [self.loop.attempt(finding) for finding in findings]
        self.outcomes += attempts
        patch = next((outcome.patch for outcome in attempts if outcome.patch is not None), None)
        return patch if patch is not None else attempts[-1].why_not()

    def report_files(self) -> dict[str, str]:
        """agent/transcript.json and agent/outcomes.json, by name in the report directory, scrubbed."""
        summary = [
            {
                "finding": finding_key(o.finding),
                "status": o.status,
                "rounds": o.rounds,
                "patch": o.patch.id if o.patch else None,
                "failures": o.failures,
            }
            for o in self.outcomes
        ]
        transcript = self.loop.transcript
        outcomes = json.dumps({"model": self.loop.client.name, "outcomes": summary}, indent=2)
        return {"agent/transcript.json": transcript.render(), "agent/outcomes.json": transcript.scrub(outcomes)}

    def save(self, out_dir: Path) -> Path:
        directory = Path(out_dir) / "agent"
        for name, text in self.report_files().items():
            atomic_write_text(Path(out_dir) / name, text)
        return directory


def start_agent_run(
    root: Path,
    findings: list[Finding],
    files: dict[str, str],
    target: Target,
    ruleset,
    client: ModelClient,
    settings: AgentSettings,
    rule_docs: dict[str, dict],
    exclusive: bool,
    verify=None,
    config=None,
) -> AgentRun:
    """An AgentRun over the repository: editable files are those with findings, plus library shims."""
    shim_path = shim_location(root, config)
    shim_exists = (Path(root) / shim_path).is_file()

    def shim_for(finding: Finding) -> ShimRequest | None:
        # A library with no ROCm build gets a shim from the skeleton. The skeleton branches on the
        # porter shim, so it is offered once that module exists (after the codemod patches are applied).
        module = str(finding.data.get("module") or finding.data.get("qualified_name") or "")
        if finding.category != "libraries" or not module or not shim_exists:
            return None
        library = module.split(".")[0]
        function = str(finding.data.get("function") or module.split(".")[-1])
        path = (PurePosixPath(shim_path).parent / f"_porter_{library}_shim.py").as_posix()
        return ShimRequest(library=library, function=function, path=path, shim_import=shim_import(root, shim_path)[0])

    loop = AgentLoop(
        client=client,
        files=files,
        target=target,
        rescan=lambda text, path: analyze_source(text, path, target, ruleset),
        make_diff=patch_diff,
        settings=settings,
        transcript=Transcript(model=client.name, target=target.name, secrets=[settings.api_key or ""]),
        verify=verify,
        editable={f.path for f in findings},
        rule_docs=rule_docs,
        exclusive=exclusive,
        shim_for=shim_for,
    )
    return AgentRun(loop=loop)
