"""The agent remedy: LLM-proposed rewrites for findings no codemod can fix, let in only with proof.

Offline by default: with no model configured, `client_for` returns None and rewrite lists these
findings as needing review with the rule's guidance.
"""

from __future__ import annotations

from pathlib import Path

from porter.errors import UsageError
from porter.remedy.agent.client import AgentSettings, ModelClient, ModelError, OpenAIClient, ReplayClient, Reply
from porter.remedy.agent.edits import EditBlock, EditError, apply_edit_blocks, parse_edit_blocks
from porter.remedy.agent.loop import AgentLoop, AgentOutcome
from porter.remedy.agent.shim_slots import ShimRequest
from porter.remedy.agent.transcript import Transcript

AGENT_MODES = ("none", "openai", "replay")

__all__ = [
    "AGENT_MODES",
    "AgentLoop",
    "AgentOutcome",
    "AgentSettings",
    "EditBlock",
    "EditError",
    "ModelClient",
    "ModelError",
    "OpenAIClient",
    "ReplayClient",
    "Reply",
    "ShimRequest",
    "Transcript",
    "apply_edit_blocks",
    "client_for",
    "parse_edit_blocks",
]


def client_for(mode: str | None, settings: AgentSettings, replay_dir: Path | None = None) -> ModelClient | None:
    """The model client for `--agent MODE`; None means offline (the default)."""
    mode = (mode or "none").lower()
    if mode == "none":
        return None
    if mode == "openai":
        return OpenAIClient(settings)
    if mode == "replay":
        if replay_dir is None:
            raise UsageError("--agent replay needs the transcript directory: --agent replay --agent-replay DIR")
        return ReplayClient(replay_dir)
    raise UsageError(f"unknown --agent {mode!r}; use one of: {', '.join(AGENT_MODES)}")
