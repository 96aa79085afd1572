"""Progress on stderr: a bar on a terminal, heartbeat lines without one, -q silent, -v per file/test."""

from __future__ import annotations

import io
import json
import re
import time

import pytest

from porter.cli import main
from porter.cli.progress import NORMAL, QUIET, VERBOSE, Progress
from tests.scan_helpers import write_rules, write_tree


class Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_steps_heartbeat_names_the_step_and_done_over_total_while_nothing_reports():
    stream = Pipe()
    progress = Progress(NORMAL, stream=stream, heartbeat_s=0.05)
    with progress.steps("round 1/3: verifying 3 patch(es)") as update:
        update("testing", 0, 2, "the unpatched tree")
        time.sleep(0.3)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2
    assert all(
        re.fullmatch(r"porter: round 1/3: verifying 3 patch\(es\): testing the unpatched tree 0/2 \(\d+ s\)", line)
        for line in lines
    )
    settled = len(lines)
    time.sleep(0.15)
    assert len(stream.getvalue().splitlines()) == settled  # the heartbeat stops with the work


def test_counter_heartbeat_carries_the_known_total():
    stream = Pipe()
    progress = Progress(NORMAL, stream=stream, heartbeat_s=0.0)
    with progress.counter("scanning") as update:
        update("reading", 1, 4, "a.py")
        update("analyzing", 2, 3, "b.py")
    assert stream.getvalue().splitlines()[0].startswith("porter: scanning: reading 1/4 (")
    assert stream.getvalue().splitlines()[1].startswith("porter: scanning: analyzing 2/3 (")


def test_quiet_prints_nothing_and_verbose_names_each_analysed_file():
    quiet, verbose = Pipe(), Pipe()
    for level, stream in ((QUIET, quiet), (VERBOSE, verbose)):
        progress = Progress(level, stream=stream, heartbeat_s=0.0)
        with progress.counter("scanning") as update:
            update("reading", 1, 1, "a.py")
            update("analyzing", 1, 1, "a.py")
        with progress.steps("verifying") as step:
            step("tested", 1, 2, "the unpatched tree: 2 passed in 1.0 s")
        progress.note("round 1")
    assert quiet.getvalue() == ""
    assert "porter: analyzed a.py\n" in verbose.getvalue() and "porter: round 1\n" in verbose.getvalue()
    assert "porter: tested the unpatched tree: 2 passed in 1.0 s\n" in verbose.getvalue()


def test_terminal_bar_draws_the_total():
    stream = Pipe()
    progress = Progress(NORMAL, stream=stream, interactive=True)
    with progress.counter("scanning") as update:
        update("analyzing", 3, 3, "c.py")
    assert "3/3" in stream.getvalue() and "scanning: analyzing" in stream.getvalue()


@pytest.mark.parametrize("flag", [[], ["-q"], ["-v"]])
def test_scan_stdout_stays_the_payload(tmp_path, capsys, flag):
    tree = write_tree(tmp_path / "repo")
    rules = write_rules(tmp_path / "rules")
    main(["scan", str(tree), "--rules", str(rules), "--no-cache", "--format", "json", *flag])
    captured = capsys.readouterr()
    assert json.loads(captured.out)["schema_version"]  # stdout parses as the report alone
    assert ("porter: analyzed pkg/sub0/sync.py" in captured.err) == (flag == ["-v"])
    if flag == ["-q"]:
        assert "analyzed" not in captured.err
