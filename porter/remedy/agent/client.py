"""Model clients: any OpenAI-compatible endpoint through the openai package, or a saved transcript.

The agent loop only sees `ModelClient.complete(messages) -> Reply`. Transport failures (timeouts,
429s after the client's own retries, malformed bodies) become `ModelError`, which ends the loop
for that finding cleanly instead of crashing the rewrite.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from porter.errors import UsageError


class ModelError(Exception):
    """The model could not be reached or answered with something unusable."""


@dataclass
class Reply:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ModelClient(Protocol):
    name: str

    def complete(self, messages: list[dict[str, str]]) -> Reply: ...


@dataclass
class AgentSettings:
    """`[tool.porter.agent]`, then OPENAI_BASE_URL / OPENAI_API_KEY / PORTER_AGENT_MODEL."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    max_retries: int = 2
    max_rounds: int = 3
    max_calls: int = 20
    max_tokens: int = 200_000
    max_wall_s: float = 900.0
    temperature: float = 0.0
    extra: dict = field(default_factory=dict)

    KEYS = (
        "model", "base_url", "api_key_env", "timeout_s", "max_retries", "max_rounds",
        "max_calls", "max_tokens", "max_wall_s", "temperature",
    )

    @classmethod
    def from_config(cls, table: dict | None, source: str = "[tool.porter.agent]") -> "AgentSettings":
        table = dict(table or {})
        unknown = sorted(set(table) - set(cls.KEYS))
        if unknown:
            raise UsageError(f"{source}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(cls.KEYS)}")
        settings = cls(**table)
        settings.model = settings.model or os.environ.get("PORTER_AGENT_MODEL")
        settings.base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL")
        for name in ("timeout_s", "max_wall_s"):
            if not isinstance(getattr(settings, name), (int, float)) or getattr(settings, name) <= 0:
                raise UsageError(f"{source}: {name} must be a positive number")
        for name in ("max_retries", "max_rounds", "max_calls", "max_tokens"):
            value = getattr(settings, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise UsageError(f"{source}: {name} must be a non-negative integer")
        return settings

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env)


class OpenAIClient:
    """Chat completions against an OpenAI-compatible server (vLLM, Ollama, a gateway...)."""

    def __init__(self, settings: AgentSettings):
        if not settings.model:
            raise UsageError("--agent openai needs a model: set [tool.porter.agent] model or PORTER_AGENT_MODEL")
        import openai  # deferred: offline runs never import it

        self.name = settings.model
        self._settings = settings
        self._errors = (openai.APIError, openai.APITimeoutError, openai.APIConnectionError)
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or "not-set",
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
        )

    def complete(self, messages: list[dict[str, str]]) -> Reply:
        try:
            response = self._client.chat.completions.create(
                model=self._settings.model, messages=messages, temperature=self._settings.temperature
            )
        except self._errors as error:
            raise ModelError(f"{type(error).__name__}: {_first_line(error)}") from None
        except (ValueError, TypeError, KeyError, json.JSONDecodeError) as error:
            raise ModelError(f"malformed response: {_first_line(error)}") from None
        return _reply_from(response)


def _reply_from(response) -> Reply:
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        raise ModelError("malformed response: no choices[0].message.content") from None
    if not isinstance(text, str):
        raise ModelError("malformed response: message content is not text")
    usage = getattr(response, "usage", None)
    return Reply(
        text=text,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
    )


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:300]


class ReplayClient:
    """Answers from a saved transcript, in order, so a CI run reproduces an agent session offline."""

    def __init__(self, transcript_dir: Path):
        path = Path(transcript_dir) / "transcript.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            self._replies = [Reply(**exchange["reply"]) for exchange in data["exchanges"] if exchange.get("reply")]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UsageError(f"--agent replay: cannot read {path}: {_first_line(error)}") from None
        self.name = f"replay:{data.get('model', '?')}"

    def complete(self, messages: list[dict[str, str]]) -> Reply:
        if not self._replies:
            raise ModelError("the transcript has no more replies")
        return self._replies.pop(0)
