"""Model clients: any OpenAI-compatible endpoint through the openai package, or a saved transcript.

The agent loop only sees `ModelClient.complete(messages) -> Reply`. Transport failures (timeouts,
429s after the client's own retries, malformed bodies) become `ModelError`, which ends the loop
for that finding cleanly instead of crashing the rewrite.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from porter.config import SUB_TABLE_KEYS
from porter.errors import UsageError
from porter.secrets import register_secret_env


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
    """`[tool.porter.agent]`, then OPENAI_BASE_URL / OPENAI_API_KEY / PORTER_AGENT_MODEL.

    max_calls (HTTP requests, retries included), max_wall_s and max_reply_bytes are hard limits:
    a request past them is never sent, a reply past them is cut off.
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    max_retries: int = 2
    max_rounds: int = 3
    max_calls: int = 20
    max_tokens: int = 200_000
    max_wall_s: float = 900.0
    max_reply_bytes: int = 2_000_000
    temperature: float = 0.0
    secret_env: tuple[str, ...] = ()  # more environment variables whose values are secrets
    extra: dict = field(default_factory=dict)

    KEYS = SUB_TABLE_KEYS["agent"]

    @classmethod
    def from_config(cls, table: dict | None, source: str = "[tool.porter.agent]") -> AgentSettings:
        table = dict(table or {})
        unknown = sorted(set(table) - set(cls.KEYS))
        if unknown:
            raise UsageError(f"{source}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(cls.KEYS)}")
        settings = cls(**table)
        settings.model = settings.model or os.environ.get("PORTER_AGENT_MODEL")
        settings.base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL")
        settings.validate(source)
        return settings

    def validate(self, source: str) -> None:
        for name in ("timeout_s", "max_wall_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise UsageError(f"{source}: {name} must be a positive finite number, got {value!r}")
        if (
            isinstance(self.temperature, bool)
            or not isinstance(self.temperature, (int, float))
            or not math.isfinite(self.temperature)
            or self.temperature < 0
        ):
            raise UsageError(f"{source}: temperature must be a non-negative finite number, got {self.temperature!r}")
        for name in ("max_retries", "max_rounds", "max_calls", "max_tokens", "max_reply_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise UsageError(f"{source}: {name} must be a non-negative integer, got {value!r}")
        for name in ("model", "base_url"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise UsageError(f"{source}: {name} must be a string")
        names = [self.api_key_env, *self.secret_env] if isinstance(self.secret_env, (list, tuple)) else None
        if not names or not all(isinstance(name, str) and name for name in names):
            raise UsageError(f"{source}: api_key_env must be a variable name and secret_env a list of them")
        self.secret_env = tuple(self.secret_env)
        register_secret_env(*names)

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env)


class Bounds:
    """The hard limits of one run's model traffic, checked on every HTTP request and reply chunk."""

    def __init__(self, settings: AgentSettings):
        self.max_requests = settings.max_calls
        self.max_reply_bytes = settings.max_reply_bytes
        self.deadline = time.monotonic() + settings.max_wall_s
        self.wall_s = settings.max_wall_s
        self.requests = 0
        self.stopped = ""  # why traffic was cut off, once it was

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def before_request(self) -> None:
        if not self.stopped and self.requests >= self.max_requests:
            self.stopped = f"call budget spent ({self.requests} of {self.max_requests} requests)"
        if not self.stopped and self.remaining() <= 0:
            self.stopped = f"wall-time budget spent ({self.wall_s:g} s)"
        if self.stopped:
            raise _Cutoff(self.stopped)
        self.requests += 1

    def check_chunk(self, received: int) -> None:
        if not self.stopped and received > self.max_reply_bytes:
            self.stopped = f"reply larger than max_reply_bytes ({self.max_reply_bytes} bytes)"
        if not self.stopped and self.remaining() <= 0:
            self.stopped = f"wall-time budget spent ({self.wall_s:g} s) while the model was answering"
        if self.stopped:
            raise _Cutoff(self.stopped)


def _httpx():
    """The HTTP library the installed openai package is built on (httpx2 in newer releases)."""
    try:
        import httpx2

        return httpx2
    except ImportError:
        import httpx

        return httpx


class _Cutoff(Exception):
    """Raised inside the HTTP transport; the reason is kept in Bounds.stopped."""


def _bounded_transport(bounds: Bounds):
    """An httpx transport that refuses requests over budget and cuts replies over size or time."""
    httpx = _httpx()

    class BoundedStream(httpx.SyncByteStream):  # type: ignore[name-defined]  # httpx or httpx2, chosen at run time
        def __init__(self, inner):
            self.inner, self.received = inner, 0

        def __iter__(self):
            for chunk in self.inner:
                self.received += len(chunk)
                bounds.check_chunk(self.received)
                yield chunk

        def close(self) -> None:
            self.inner.close()

    class BoundedTransport(httpx.HTTPTransport):  # type: ignore[name-defined]  # httpx or httpx2, chosen at run time
        def handle_request(self, request):
            bounds.before_request()
            response = super().handle_request(request)
            length = response.headers.get("content-length", "")
            if length.isdigit():
                bounds.check_chunk(int(length))
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=BoundedStream(response.stream),
                extensions=response.extensions,
                request=request,
            )

    return BoundedTransport()


class OpenAIClient:
    """Chat completions against an OpenAI-compatible server (vLLM, Ollama, a gateway...).

    Retries (429, 5xx, timeouts) are porter's, each one a request counted against max_calls; each
    call runs in a worker thread joined at the wall budget's end, so a slowly dripping reply cannot
    hold the run past it.
    """

    def __init__(self, settings: AgentSettings):
        if not settings.model:
            raise UsageError("--agent openai needs a model: set [tool.porter.agent] model or PORTER_AGENT_MODEL")
        import openai  # deferred: offline runs never import it

        httpx = _httpx()

        self.name = settings.model
        self._settings = settings
        self.bounds = Bounds(settings)
        self._openai = openai
        self._http = httpx.Client(transport=_bounded_transport(self.bounds))
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or "not-set",
            timeout=settings.timeout_s,
            max_retries=0,
            http_client=self._http,
        )

    def complete(self, messages: list[dict[str, str]]) -> Reply:
        if self.bounds.remaining() <= 0 or self.bounds.stopped:
            raise ModelError(self.bounds.stopped or f"wall-time budget spent ({self.bounds.wall_s:g} s)")
        box: dict = {}
        worker = threading.Thread(target=self._complete_into, args=(messages, box), daemon=True)
        worker.start()
        worker.join(max(self.bounds.remaining(), 0.0))
        if worker.is_alive():
            self.bounds.stopped = (
                self.bounds.stopped
                or f"wall-time budget spent ({self.bounds.wall_s:g} s) while the model was answering"
            )
            self._http.close()
            raise ModelError(self.bounds.stopped)
        if "error" in box:
            raise box["error"]
        return box["reply"]

    def _complete_into(self, messages, box: dict) -> None:
        try:
            box["reply"] = self._with_retries(messages)
        except ModelError as error:
            box["error"] = error
        except Exception as error:  # noqa: BLE001 - a transport surprise is the model's failure, not porter's
            box["error"] = ModelError(self.bounds.stopped or f"{type(error).__name__}: {_first_line(error)}")

    def _with_retries(self, messages) -> Reply:
        retryable = (
            self._openai.APITimeoutError,
            self._openai.APIConnectionError,
            self._openai.RateLimitError,
            self._openai.InternalServerError,
        )
        for attempt in range(self._settings.max_retries + 1):
            try:
                return self._once(messages)
            except retryable as error:
                if self.bounds.stopped or attempt == self._settings.max_retries:
                    raise ModelError(self.bounds.stopped or f"{type(error).__name__}: {_first_line(error)}") from None
                time.sleep(min(0.05 * 2**attempt, max(self.bounds.remaining(), 0.0)))
        raise ModelError("no attempt was made")  # max_retries >= 0 makes this unreachable

    def _once(self, messages) -> Reply:
        timeout = max(0.001, min(self._settings.timeout_s, self.bounds.remaining()))
        try:
            response = self._client.chat.completions.create(
                model=self.name, messages=messages, temperature=self._settings.temperature, timeout=timeout
            )
        except (
            self._openai.APITimeoutError,
            self._openai.APIConnectionError,
            self._openai.RateLimitError,
            self._openai.InternalServerError,
        ):
            raise
        except self._openai.APIError as error:
            raise ModelError(self.bounds.stopped or f"{type(error).__name__}: {_first_line(error)}") from None
        except (ValueError, TypeError, KeyError, json.JSONDecodeError) as error:
            raise ModelError(self.bounds.stopped or f"malformed response: {_first_line(error)}") from None
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
