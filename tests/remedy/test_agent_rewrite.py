"""`porter rewrite --agent replay`: a saved transcript reproduces an agent session offline, and the
accepted edit lands in the report like any codemod patch."""

from __future__ import annotations

import json
from pathlib import Path

from porter.cli import main

MODULE = "mini/bench_util.py"
ORIGINAL = "def flush_bytes(props):\n    return props.L2_cache_size * 2\n"
GOOD = (
    "Flush with a buffer larger than L2 plus the Infinity Cache.\n"
    f"{MODULE}\n<<<<<<< SEARCH\n    return props.L2_cache_size * 2\n=======\n"
    "    return 512 * 2**20  # larger than L2 + Infinity Cache\n>>>>>>> REPLACE\n"
)


def make_repo(root: Path) -> Path:
    (root / "mini").mkdir(parents=True)
    (root / "mini" / "__init__.py").write_text("")
    (root / MODULE).write_text(ORIGINAL)
    return root


def transcript(directory: Path, replies: list[str]) -> Path:
    directory.mkdir(parents=True)
    exchanges = [{"finding": "x", "round": 1, "messages": [], "reply": {"text": r}} for r in replies]
    (directory / "transcript.json").write_text(json.dumps({"model": "saved-model", "exchanges": exchanges}))
    return directory


def test_replayed_agent_edit_becomes_a_patch_with_its_transcript(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo")
    saved = transcript(tmp_path / "saved", [GOOD])
    out = tmp_path / "report"
    code = main(
        [
            "rewrite",
            str(repo),
            "--target",
            "mi350x",
            "--out",
            str(out),
            "--no-verify",
            "--select",
            "PT214",
            "--agent",
            "replay",
            "--agent-replay",
            str(saved),
            "--format",
            "json",
        ]
    )
    assert code == 1  # --no-verify: the agent's patch is unverified
    report = json.loads(capsys.readouterr().out)
    patches = report["patches"]
    assert [p["kind"] for p in patches] == ["agent"] and patches[0]["rules"] == ["PT214"]
    assert "+    return 512 * 2**20" in patches[0]["diff"]
    outcomes = json.loads((out / "agent" / "outcomes.json").read_text())
    assert outcomes["outcomes"][0]["status"] == "accepted"
    assert (out / "agent" / "transcript.json").is_file()
    assert (repo / MODULE).read_text() == ORIGINAL  # without --apply the tree is untouched


def test_without_a_model_the_finding_is_listed_for_review(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PORTER_AGENT_MODEL", raising=False)
    repo = make_repo(tmp_path / "repo")
    code = main(
        [
            "rewrite",
            str(repo),
            "--target",
            "mi350x",
            "--out",
            str(tmp_path / "r"),
            "--no-verify",
            "--select",
            "PT214",
            "--format",
            "json",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["patches"] == []
    assert [item["kind"] for item in report["needs_review"]] == ["agent"]
    assert not (tmp_path / "r" / "agent").exists()


def test_replay_without_a_directory_is_a_usage_error(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo")
    code = main(
        ["rewrite", str(repo), "--target", "mi350x", "--out", str(tmp_path / "r"), "--no-verify", "--agent", "replay"]
    )
    assert code == 2
    assert "needs the transcript directory" in capsys.readouterr().err
