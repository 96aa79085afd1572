"""`porter verify` progress from the verifier's own count of test runs and compiles (a real replay of a
small pure-Python repository: each test run takes about a second)."""

from __future__ import annotations

import difflib
import io
import re
from pathlib import Path

import pytest

from porter.cli.progress import NORMAL, VERBOSE, Progress
from porter.cli.verify import run_verify
from tests.verify.test_verify_patches import FILES


class Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


def diff_file(repo: Path, rel: str, old: str, new: str, destination: Path) -> Path:
    before = (repo / rel).read_text(encoding="utf-8")
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), before.replace(old, new).splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
    )
    destination.write_text("".join(lines), encoding="utf-8")
    return destination


@pytest.fixture
def patched(tmp_path: Path) -> tuple[Path, list[Path]]:
    """calc-repo and two patches: one adds the missing `whisper`, one breaks `add` (bisection follows)."""
    root = tmp_path / "calc-repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    whisper = "def shout(s):\n    return s.upper()\n\n\ndef whisper(s):\n    return s.lower()\n"
    return root, [
        diff_file(root, "calc/text.py", FILES["calc/text.py"], whisper, tmp_path / "whisper.patch"),
        diff_file(root, "calc/arith.py", "return a + b", "return a - b", tmp_path / "breaks-add.patch"),
    ]


def verify_with(repo: Path, patches: list[Path], progress: Progress) -> int:
    return run_verify(repo, patch_files=patches, cross_compile=False, output_format="json", progress=progress)


def test_heartbeat_names_the_step_and_its_known_total(patched, capsys):
    repo, patches = patched
    stream = Pipe()
    assert verify_with(repo, patches, Progress(NORMAL, stream=stream, heartbeat_s=0.05)) == 1
    beats = re.findall(
        r"^porter: verifying 2 patch\(es\) on mi350x: (\w+) (.*) (\d+)/(\d+) \(\d+ s\)$", stream.getvalue(), re.M
    )
    assert beats, stream.getvalue()
    assert {phase for phase, *_ in beats} <= {"starting", "testing", "tested"}
    assert any(item == "the unpatched tree" and (done, total) == ("0", "2") for _, item, done, total in beats)
    counts = [(int(done), int(total)) for *_, done, total in beats]
    assert all(done <= total for done, total in counts) and counts == sorted(counts)
    assert max(total for _, total in counts) > 2  # the failing batch was bisected: more runs than planned
    assert "porter: tested" not in stream.getvalue()  # per-run lines are -v only
    capsys.readouterr()


def test_verbose_lists_each_test_run_as_it_finishes(patched, capsys):
    repo, patches = patched
    stream = Pipe()
    verify_with(repo, patches, Progress(VERBOSE, stream=stream, heartbeat_s=60))
    lines = stream.getvalue().splitlines()
    runs = [line for line in lines if line.startswith("porter: tested ")]
    assert runs[0].startswith("porter: tested the unpatched tree: 3 passed, 1 failed in ")
    assert "2 patch(es) whisper, breaks-add: 3 passed, 1 failed" in runs[1] and "(failing: tests/" in runs[1]
    assert len(runs) >= 3  # the halves of the bisection, each as it ran
    verdict_lines = [i for i, line in enumerate(lines) if line.startswith("porter: whisper: ")]
    assert verdict_lines and lines.index(runs[-1]) < verdict_lines[0]
    capsys.readouterr()


def test_terminal_bar_shows_done_over_the_total(patched, capsys):
    repo, patches = patched
    stream = io.StringIO()
    verify_with(repo, patches[:1], Progress(NORMAL, stream=stream, interactive=True))
    drawn = stream.getvalue()
    assert "verifying 1 patch(es) on mi350x" in drawn
    assert re.search(r"(?<!\d)[012]/2(?!\d)", drawn), drawn  # baseline and batch: two runs known from the start
    capsys.readouterr()
