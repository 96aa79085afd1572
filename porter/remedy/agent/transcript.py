"""The saved record of every model exchange, with secrets scrubbed, for review and offline replay."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from porter.remedy.agent.client import Reply
from porter.report.output import atomic_write_text
from porter.secrets import REDACTED, scrub

__all__ = ["REDACTED", "Transcript"]


@dataclass
class Transcript:
    model: str
    target: str
    secrets: list[str] = field(default_factory=list)  # values that must never be written
    exchanges: list[dict] = field(default_factory=list)

    def record(
        self, finding_key: str, round_number: int, messages: list[dict], reply: Reply | None, error: str = ""
    ) -> None:
        self.exchanges.append(
            {
                "finding": finding_key,
                "round": round_number,
                "messages": [self._scrub_message(m) for m in messages],
                "reply": None
                if reply is None
                else {
                    "text": self.scrub(reply.text),
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                },
                "error": self.scrub(error),
            }
        )

    def note_outcome(self, finding_key: str, status: str, detail: str) -> None:
        self.exchanges.append({"finding": finding_key, "outcome": status, "detail": self.scrub(detail), "reply": None})

    def scrub(self, text: str) -> str:
        return scrub(text, self.secrets)

    def _scrub_message(self, message: dict) -> dict:
        return {key: self.scrub(value) if isinstance(value, str) else value for key, value in message.items()}

    def to_dict(self) -> dict:
        return {"model": self.model, "target": self.target, "exchanges": self.exchanges}

    def render(self) -> str:
        return self.scrub(json.dumps(self.to_dict(), indent=2))

    def save(self, directory: Path) -> Path:
        return atomic_write_text(Path(directory) / "transcript.json", self.render())
