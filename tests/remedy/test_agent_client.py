"""The real openai client against a local OpenAI-compatible server: transport behaviour."""

import json

import pytest

from porter.errors import UsageError
from porter.remedy.agent import client_for
from porter.remedy.agent.client import AgentSettings, ModelError, OpenAIClient, ReplayClient
from porter.remedy.agent.transcript import Transcript
from tests.openai_stub_server import Step, StubServer

SECRET = "sk-test-0123456789abcdef"
MESSAGES = [{"role": "user", "content": "hello"}]


def settings_for(server, monkeypatch, **overrides):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    values = {"model": "stub-model", "base_url": server.base_url, "timeout_s": 2.0, "max_retries": 2} | overrides
    return AgentSettings(**values)


def test_success_sends_the_model_and_key_and_returns_text_and_usage(monkeypatch):
    with StubServer([Step(text="done")]) as server:
        reply = OpenAIClient(settings_for(server, monkeypatch)).complete(MESSAGES)
    assert reply.text == "done" and reply.prompt_tokens == 100 and reply.completion_tokens == 20
    assert server.requests[0]["model"] == "stub-model"
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"


def test_429_is_retried_then_succeeds(monkeypatch):
    with StubServer([Step(status=429), Step(text="second time")]) as server:
        reply = OpenAIClient(settings_for(server, monkeypatch)).complete(MESSAGES)
    assert reply.text == "second time" and len(server.requests) == 2


def test_timeout_becomes_a_model_error(monkeypatch):
    with StubServer([Step(text="late", delay_s=1.5), Step(text="late", delay_s=1.5)]) as server:
        client = OpenAIClient(settings_for(server, monkeypatch, timeout_s=0.3, max_retries=1))
        with pytest.raises(ModelError, match="Timeout"):
            client.complete(MESSAGES)


@pytest.mark.parametrize(
    "body", ["this is not json", '{"choices": []}', '{"choices": [{"message": {"content": null}}]}']
)
def test_malformed_body_becomes_a_model_error(monkeypatch, body):
    with StubServer([Step(raw_body=body)]) as server:
        with pytest.raises(ModelError, match="malformed|Error"):
            OpenAIClient(settings_for(server, monkeypatch, max_retries=0)).complete(MESSAGES)


def test_offline_is_the_default_and_openai_needs_a_model(monkeypatch):
    monkeypatch.delenv("PORTER_AGENT_MODEL", raising=False)
    assert client_for(None, AgentSettings()) is None
    assert client_for("none", AgentSettings()) is None
    with pytest.raises(UsageError, match="needs a model"):
        client_for("openai", AgentSettings.from_config({}))
    with pytest.raises(UsageError, match="unknown --agent"):
        client_for("gpt", AgentSettings())


def test_config_errors_name_the_key():
    with pytest.raises(UsageError, match="unknown key.*modle"):
        AgentSettings.from_config({"modle": "x"})
    with pytest.raises(UsageError, match="max_rounds must be"):
        AgentSettings.from_config({"max_rounds": -1})


def test_transcript_scrubs_the_key_and_replays(tmp_path):
    from porter.remedy.agent.client import Reply

    transcript = Transcript(model="m", target="mi350x", secrets=[SECRET])
    transcript.record("PT1@a.py:1:1", 1, [{"role": "user", "content": f"key {SECRET}"}], Reply(text=f"echo {SECRET}"))
    path = transcript.save(tmp_path)
    saved = path.read_text()
    assert SECRET not in saved and "[redacted]" in saved
    replay = ReplayClient(tmp_path)
    assert replay.complete(MESSAGES).text == "echo [redacted]"
    with pytest.raises(ModelError, match="no more replies"):
        replay.complete(MESSAGES)
    assert json.loads(saved)["model"] == "m"


def test_replay_of_a_missing_transcript_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        ReplayClient(tmp_path / "nowhere")
