"""The scan against hostile trees: a FIFO named x.py, parser-crashing chains, a forged cache, odd config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from porter.analyze import analyze_source, load_rules
from porter.analyze.scan import scan_tree
from porter.errors import ConfigError
from porter.verify.options import VerifyOptions

RULES = load_rules(extend_select=["PT214"])  # SOURCE is a PT214 finding, an opt-in rule
SOURCE = 'import torch\nprops = torch.cuda.get_device_properties(0)\nflush = torch.empty(props.L2_cache_size * 2, device="cuda")\n'


def test_a_fifo_named_like_source_does_not_block_the_scan(tmp_path):
    (tmp_path / "k.py").write_text(SOURCE)
    os.mkfifo(tmp_path / "x.py")
    start = time.monotonic()
    result = scan_tree(tmp_path, "mi350x", RULES, jobs=1, use_cache=False)
    assert time.monotonic() - start < 20
    assert any(note.path == "x.py" and "not a regular file" in note.reason for note in result.skipped)
    assert any(f.path == "k.py" for f in result.findings)


@pytest.mark.parametrize("chain", ["not " * 30000, "-" * 30000, "lambda: " * 3000, "+".join(["a"] * 70000)])
def test_parser_crashing_or_endless_chains_are_one_pt000_finding(chain):
    start = time.monotonic()
    findings = analyze_source(SOURCE + f"x = {chain}1\n", "deep.py", "mi350x", RULES)
    assert time.monotonic() - start < 10
    assert [f.rule for f in findings] == ["PT000"]
    assert "not parsed" in findings[0].message or "nested" in findings[0].message


def test_a_deep_chain_does_not_crash_the_scan_process(tmp_path):
    (tmp_path / "deep.py").write_text(SOURCE + "x = " + "not " * 40000 + "1\n")
    done = subprocess.run(
        [sys.executable, "-m", "porter", "scan", str(tmp_path), "--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 1, done.stderr  # findings, not a segfault (139)
    assert "PT000" in done.stdout


def test_a_forged_cache_committed_to_the_repository_hides_nothing(tmp_path):
    (tmp_path / "k.py").write_text(SOURCE)
    honest = scan_tree(tmp_path, "mi350x", RULES, jobs=1)
    assert honest.findings
    (cache_file,) = (tmp_path / ".porter-cache").glob("scan-*.json")
    document = json.loads(cache_file.read_text())
    for entry in document["entries"].values():
        entry["findings"] = []  # "nothing to see here", the content hash left intact
        entry["mac"] = "0" * 64
    cache_file.write_text(json.dumps(document))
    again = scan_tree(tmp_path, "mi350x", RULES, jobs=1)
    assert [f.rule for f in again.findings] == [f.rule for f in honest.findings] and again.stats.cache_hits == 0


def test_verify_numbers_must_be_finite():
    for value in (float("inf"), float("nan"), True, "10"):
        with pytest.raises(ConfigError):
            VerifyOptions().with_config({"timeout": value})
