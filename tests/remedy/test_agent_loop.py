"""The agent loop end to end, offline: a scripted model, then the real openai client against a
local server, with the real rule engine and the real verifier (tests replayed in a sandbox copy)."""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

import pytest

from porter.analyze import analyze_source, load_rules
from porter.records import FileEdit
from porter.remedy.agent import AgentLoop, AgentSettings, OpenAIClient, Transcript
from porter.remedy.agent.client import ModelError, Reply
from porter.targets import get_target
from porter.verify import VerifyOptions, verify_patches
from tests.openai_stub_server import Step, StubServer

TARGET = get_target("mi350x")
# PT204 (opt-in) stands for "a new finding" below; PT214 (opt-in) is the finding the agent edits
RULES = load_rules(extend_select=["PT204", "PT214"])
MODULE = "mini/bench_util.py"
ORIGINAL = textwrap.dedent(
    """\
    def flush_bytes(props):
        # a buffer that evicts the cache between timed runs
        return props.L2_cache_size * 2
    """
)
TEST = textwrap.dedent(
    """\
    from types import SimpleNamespace

    from mini.bench_util import flush_bytes


    def test_flush_buffer_is_larger_than_the_cache():
        props = SimpleNamespace(L2_cache_size=4 * 2**20)
        assert flush_bytes(props) >= 2 * props.L2_cache_size
    """
)


def edit(search: str, replace: str, path: str = MODULE) -> str:
    return f"Summary line.\n{path}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


GOOD = edit("    return props.L2_cache_size * 2\n", "    return 512 * 2**20  # larger than L2 + Infinity Cache\n")
BREAKS_TEST = edit("    return props.L2_cache_size * 2\n", "    return 1024\n")
OUTSIDE = edit("", "import os\n", path="../escape.py")


class Scripted:
    """A model whose replies are fixed in advance; it records what it was asked."""

    name = "scripted"

    def __init__(self, replies):
        self.replies, self.seen = list(replies), []

    def complete(self, messages):
        self.seen.append(messages)
        if not self.replies:
            raise ModelError("script exhausted")
        return Reply(text=self.replies.pop(0), prompt_tokens=50, completion_tokens=10)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "mini").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "mini" / "__init__.py").write_text("")
    (root / MODULE).write_text(ORIGINAL)
    (root / "tests" / "test_bench_util.py").write_text(TEST)
    return root


def rescan(text: str, path: str):
    return analyze_source(text, path, TARGET, RULES)


def diff(edits: list[FileEdit]) -> str:
    return "".join(
        "".join(
            difflib.unified_diff(
                (e.before or "").splitlines(True), e.after.splitlines(True), f"a/{e.path}", f"b/{e.path}"
            )
        )
        for e in edits
    )


def make_loop(repo: Path, client, verify=True, **settings) -> AgentLoop:
    files = {MODULE: (repo / MODULE).read_text(), "tests/test_bench_util.py": TEST}
    options = VerifyOptions(cross_compile=False, jobs=0, timeout_s=120)
    return AgentLoop(
        client=client,
        files=files,
        target=TARGET,
        rescan=rescan,
        make_diff=diff,
        settings=AgentSettings(**({"max_rounds": 3} | settings)),
        transcript=Transcript(model=client.name, target=TARGET.name, secrets=["sk-secret-key"]),
        verify=(lambda patch: verify_patches(repo, [patch], TARGET, options)[0]) if verify else None,
        editable={MODULE},
        rule_docs={"PT214": RULES.get("PT214").docs},
    )


def the_finding(repo: Path):
    findings = [f for f in rescan((repo / MODULE).read_text(), MODULE) if f.rule == "PT214"]
    assert len(findings) == 1
    return findings[0]


def test_prompt_carries_the_finding_docs_enclosing_code_and_target_facts(repo):
    client = Scripted([GOOD])
    make_loop(repo, client, verify=False).attempt(the_finding(repo))
    request = client.seen[0][1]["content"]
    assert "PT214" in request and "def flush_bytes(props):" in request
    assert "wave size: 64" in request and "LDS/shared memory per block: 160 KiB" in request
    assert "bf16: 16x16x32 (16 cyc)" in request and "float8_e4m3fn" in request
    assert "Files you may edit: mini/bench_util.py" in request


@pytest.mark.slow
def test_an_edit_that_breaks_a_test_is_rejected_then_repaired(repo):
    client = Scripted([BREAKS_TEST, GOOD])
    outcome = make_loop(repo, client).attempt(the_finding(repo))
    assert outcome.status == "accepted" and outcome.rounds == 2
    assert (
        "verifier rejected" in outcome.failures[0]
        and "test_flush_buffer_is_larger_than_the_cache" in outcome.failures[0]
    )
    retry = client.seen[1][-1]["content"]
    assert "rejected" in retry and "test_flush_buffer_is_larger_than_the_cache" in retry
    assert outcome.verdict.accepted and outcome.patch.kind == "agent"
    assert "+    return 512 * 2**20" in outcome.patch.diff
    assert (repo / MODULE).read_text() == ORIGINAL  # the user's tree is never touched


def test_gates_feed_precise_failures_back_in_order(repo):
    replies = [
        "I would rather explain than edit.",  # no block
        OUTSIDE,  # outside the repository
        edit("def flush_bytes(props):\n", "def flush_bytes(props:\n"),  # breaks parsing
        edit("    return props.L2_cache_size * 2\n", "    return props.L2_cache_size * 4\n"),  # finding stays
    ]
    outcome = make_loop(repo, Scripted(replies), verify=False, max_calls=10).attempt(the_finding(repo))
    assert outcome.status == "rejected" and outcome.rounds == 3
    assert "no SEARCH/REPLACE block" in outcome.failures[0]
    assert "outside the repository" in outcome.failures[1]
    assert "no longer parses" in outcome.failures[2]


def test_finding_still_present_and_new_findings_are_rejected(repo):
    replies = [
        edit("    return props.L2_cache_size * 2\n", "    return props.L2_cache_size * 4\n"),
        edit(
            "    return props.L2_cache_size * 2\n",
            "    import torch\n    torch.backends.cuda.matmul.allow_tf32 = True\n    return 512 * 2**20\n",
        ),
    ]
    outcome = make_loop(repo, Scripted(replies), verify=False, max_rounds=2).attempt(the_finding(repo))
    assert outcome.status == "rejected"
    assert "still reported" in outcome.failures[0]
    assert "introduces new findings" in outcome.failures[1] and "PT204" in outcome.failures[1]
    # what the review list says: the proposals were refused, and the last one why
    assert outcome.why_not().startswith("the agent's proposals were not accepted (no acceptable proposal in 2 rounds")
    assert "the last: the change introduces new findings" in outcome.why_not()


def test_search_matching_twice_goes_back_to_the_model(repo):
    (repo / MODULE).write_text(ORIGINAL + "\n\ndef other(props):\n    return props.L2_cache_size * 2\n")
    loop = make_loop(repo, Scripted([GOOD] * 3), verify=False)
    loop.files[MODULE] = (repo / MODULE).read_text()
    outcome = loop.attempt(rescan(loop.files[MODULE], MODULE)[0])
    assert outcome.status == "rejected"
    assert all("matches 2 places" in failure for failure in outcome.failures[:3])


def test_budgets_end_the_loop_cleanly(repo):
    loop = make_loop(repo, Scripted([BREAKS_TEST] * 5), verify=False, max_calls=1)
    finding = the_finding(repo)
    first = loop.attempt(finding)
    assert first.status == "accepted" and loop.budget.calls == 1
    second = loop.attempt(finding)
    assert second.status == "budget" and "call budget spent" in second.failures[-1]
    assert second.why_not().startswith("the agent's budget was spent before it answered (")


def test_real_openai_client_through_a_local_server(repo, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-key")
    steps = [Step(status=429), Step(text=OUTSIDE), Step(text=GOOD)]
    with StubServer(steps) as server:
        settings = AgentSettings(model="stub", base_url=server.base_url, timeout_s=5, max_retries=2)
        loop = make_loop(repo, OpenAIClient(settings), verify=False)
        outcome = loop.attempt(the_finding(repo))
        saved = loop.transcript.save(tmp_path / "agent").read_text()
    assert outcome.status == "accepted" and outcome.rounds == 2
    assert "outside the repository" in server.requests[2]["messages"][-1]["content"]
    assert "sk-secret-key" not in saved and "sk-secret-key" not in str(server.requests)


def test_timeout_and_malformed_body_end_the_finding_without_a_crash(repo, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with StubServer([Step(text="late", delay_s=1.0), Step(raw_body="{not json")]) as server:
        settings = AgentSettings(model="stub", base_url=server.base_url, timeout_s=0.3, max_retries=0)
        loop = make_loop(repo, OpenAIClient(settings), verify=False)
        timed_out = loop.attempt(the_finding(repo))
        loop.client._settings.timeout_s = 5
        malformed = loop.attempt(the_finding(repo))
    assert timed_out.status == "model-error" and "Timeout" in timed_out.failures[-1]
    assert malformed.status == "model-error"
    # not "its proposals were not accepted": there were none
    assert timed_out.why_not().startswith("the agent's model could not be reached or failed (")
