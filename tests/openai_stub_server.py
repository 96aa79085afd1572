"""A small OpenAI-compatible chat-completions server on 127.0.0.1 for offline agent tests.

It plays a script: each POST to /v1/chat/completions takes the next step, which is a reply text,
an HTTP error status, a delay (to provoke a client timeout) or a malformed body. Requests are kept
so tests can check what the real openai client sent (and that no secret leaked into a prompt).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Step:
    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    raw_body: str | None = None  # sent verbatim instead of a well-formed completion
    drip_s: float = 0.0  # pause between the body's bytes (a reply that trickles in)


@dataclass
class StubServer:
    steps: list[Step]
    requests: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_step(self) -> Step:
        with self._lock:
            return self.steps.pop(0) if self.steps else Step(status=500, raw_body='{"error": "script exhausted"}')

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append(body)
                stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                step = stub._next_step()
                if step.delay_s:
                    time.sleep(step.delay_s)
                payload = step.raw_body if step.raw_body is not None else _completion(step, body)
                try:
                    self.send_response(step.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("retry-after-ms", "10")
                    self.send_header("Content-Length", str(len(payload.encode())))
                    self.end_headers()
                    data = payload.encode()
                    if not step.drip_s:
                        self.wfile.write(data)
                    for index in range(len(data) if step.drip_s else 0):
                        self.wfile.write(data[index : index + 1])
                        self.wfile.flush()
                        time.sleep(step.drip_s)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the client gave up (timeout test)

        return Handler


def _completion(step: Step, request: dict) -> str:
    if step.status != 200:
        return json.dumps({"error": {"message": f"status {step.status}", "type": "rate_limit"}})
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model", "stub"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": step.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
    )
