"""scan_tree through the real engine with small rule files: findings, stats, cache, parallel runs."""

from __future__ import annotations

import json

import pytest

from porter.analyze import load_rules
from porter.analyze import scan as scan_module
from porter.analyze.scan import scan_tree
from porter.config import PorterConfig
from porter.targets import get_target
from tests.scan_helpers import write_rules, write_tree


@pytest.fixture
def ruleset(tmp_path_factory):
    return load_rules([write_rules(tmp_path_factory.mktemp("rules"))])


def keys(result):
    return [(f.path, f.line, f.column, f.rule, f.end_line, f.end_column, f.message) for f in result.findings]


def test_findings_sorted_with_stats(tmp_path, ruleset):
    write_tree(tmp_path, copies=2)
    result = scan_tree(tmp_path, "mi300x", ruleset, jobs=1, use_cache=False)
    assert [(f.path, f.line, f.rule) for f in result.findings] == [
        ("pkg/sub0/smi.py", 3, "PT991"),
        ("pkg/sub0/sync.py", 5, "PT990"),
        ("pkg/sub1/smi.py", 3, "PT991"),
        ("pkg/sub1/sync.py", 5, "PT990"),
    ]
    sync = result.findings[1]
    assert (sync.column, sync.severity, sync.message) == (5, "error", "torch.cuda.synchronize() on mi300x")
    assert result.target == "mi300x" and set(result.rules) >= {"PT990", "PT991"}
    stats = result.stats
    assert stats.files_seen == 5 and stats.analyzed == 4 and stats.prefiltered == 1
    assert stats.cache_hits == 0 and stats.lines == 2 * (5 + 3) + 2 and stats.seconds > 0


def test_warm_rescan_hits_the_cache_and_edits_miss(tmp_path, ruleset):
    write_tree(tmp_path, copies=2)
    cold = scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    assert (tmp_path / ".porter-cache" / ".gitignore").is_file()
    warm = scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    assert keys(warm) == keys(cold)
    assert warm.stats.cache_hits == 5 and warm.stats.analyzed == 0
    (tmp_path / "pkg" / "sub0" / "sync.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    edited = scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    assert edited.stats.cache_hits == 4 and edited.stats.analyzed == 1
    assert ("pkg/sub0/sync.py", 2) in [(f.path, f.line) for f in edited.findings]


def test_cache_is_keyed_by_target_and_rule_set(tmp_path, ruleset, tmp_path_factory):
    write_tree(tmp_path)
    scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    other_target = scan_tree(tmp_path, "mi300x", ruleset, jobs=1)
    assert other_target.stats.cache_hits == 0
    assert {f.target for f in other_target.findings} == {"mi300x"}
    fewer_rules = load_rules([write_rules(tmp_path_factory.mktemp("rules2"))], select=["PT990"])
    assert scan_tree(tmp_path, "mi300x", fewer_rules, jobs=1).stats.cache_hits == 0


def test_cache_is_keyed_by_the_analyzer_code(tmp_path, ruleset, monkeypatch):
    """An edited analyzer keeps porter's version; its scans must not read the findings of the code it replaced."""
    write_tree(tmp_path)
    scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    assert scan_tree(tmp_path, "mi350x", ruleset, jobs=1).stats.cache_hits > 0
    monkeypatch.setattr(scan_module, "_analyzer_fingerprint", lambda: "another analyzer")
    assert scan_tree(tmp_path, "mi350x", ruleset, jobs=1).stats.cache_hits == 0


def test_corrupt_cache_is_ignored_and_rewritten(tmp_path, ruleset):
    write_tree(tmp_path)
    cold = scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    (cache_file,) = (tmp_path / ".porter-cache").glob("scan-*.json")
    cache_file.write_text("{not json", encoding="utf-8")
    assert keys(scan_tree(tmp_path, "mi350x", ruleset, jobs=1)) == keys(cold)
    document = json.loads(cache_file.read_text(encoding="utf-8"))
    first = next(iter(document["entries"]))
    document["entries"][first]["findings"] = [{"rule": "PT990", "bogus_field": 1}]  # a damaged entry
    cache_file.write_text(json.dumps(document), encoding="utf-8")
    again = scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    assert keys(again) == keys(cold) and again.stats.cache_hits == again.stats.files_seen - 1


def test_no_cache_neither_reads_nor_writes(tmp_path, ruleset):
    write_tree(tmp_path)
    result = scan_tree(tmp_path, "mi350x", ruleset, jobs=1, use_cache=False)
    assert not (tmp_path / ".porter-cache").exists() and result.stats.cache_hits == 0


def test_cache_dir_from_config(tmp_path, ruleset):
    write_tree(tmp_path)
    scan_tree(tmp_path, "mi350x", ruleset, jobs=1, config=PorterConfig(cache_dir="var/porter"))
    assert list((tmp_path / "var" / "porter").glob("scan-*.json"))
    assert not (tmp_path / ".porter-cache").exists()


def test_cache_dir_linked_out_of_the_tree_is_neither_written_nor_pruned(tmp_path, ruleset):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    write_tree(repo)
    outside.mkdir()
    for number in range(12):  # more than the cache keeps: the oldest would be pruned
        (outside / f"scan-{number}.json").write_text("someone else's\n")
    (repo / ".porter-cache").symlink_to(outside)
    result = scan_tree(repo, "mi350x", ruleset, jobs=1)
    assert sorted(path.name for path in outside.iterdir()) == sorted(f"scan-{n}.json" for n in range(12))
    assert any("cache not used" in note for note in result.stats.notes)


def test_two_processes_give_the_same_findings_as_one(tmp_path, ruleset, monkeypatch):
    write_tree(tmp_path, copies=6)
    monkeypatch.setattr(scan_module, "IN_PROCESS_BYTES", 0)  # small tree: force the process pool
    serial = scan_tree(tmp_path, "mi350x", ruleset, jobs=1, use_cache=False)
    parallel = scan_tree(tmp_path, "mi350x", ruleset, jobs=2, use_cache=False)
    assert parallel.stats.jobs == 2 and len(serial.findings) == 12
    assert keys(parallel) == keys(serial)


def test_unreadable_encodings_and_parse_errors(tmp_path, ruleset):
    write_tree(tmp_path)
    (tmp_path / "latin.py").write_bytes("# caf\xe9\nimport torch\ntorch.cuda.synchronize()\n".encode("latin-1"))
    (tmp_path / "broken.py").write_text("import torch\ntorch.cuda.synchronize(\n", encoding="utf-8")
    result = scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    # Python porter cannot read is unchecked, an error that fails the scan (it was a quiet skip, exit 0)
    [latin] = [f for f in result.findings if f.path == "latin.py"]
    assert (latin.rule, latin.severity) == ("PT001", "error")
    assert (
        latin.message.startswith("not checked: not UTF-8 (byte 5: b'\\xe9')")
        and "re-encode it as UTF-8" in latin.message
    )
    assert "latin.py" not in [note.path for note in result.skipped]
    broken = [f for f in result.findings if f.path == "broken.py"]
    assert [(f.rule, f.severity, f.fix) for f in broken] == [("PT000", "error", None)]


def test_config_excludes_and_size_limit_apply(tmp_path, ruleset):
    write_tree(tmp_path, copies=2)
    config = PorterConfig(exclude=("pkg/sub1/",), max_file_bytes=60)
    result = scan_tree(tmp_path, "mi350x", ruleset, jobs=1, use_cache=False, config=config)
    assert {f.path for f in result.findings} == {"pkg/sub0/sync.py", "pkg/sub0/smi.py"}
    config = PorterConfig(max_file_bytes=40)
    result = scan_tree(tmp_path, "mi350x", ruleset, jobs=1, use_cache=False, config=config)
    assert {note.path for note in result.skipped} == {
        "pkg/sub0/sync.py",
        "pkg/sub0/smi.py",
        "pkg/sub1/sync.py",
        "pkg/sub1/smi.py",
    }


def test_single_file_scan(tmp_path, ruleset):
    write_tree(tmp_path)
    result = scan_tree(tmp_path / "pkg" / "sub0" / "sync.py", "mi350x", ruleset, jobs=1)
    assert [(f.path, f.rule) for f in result.findings] == [("sync.py", "PT990")]
    assert not (tmp_path / "pkg" / "sub0" / ".porter-cache").exists()


def _die_on_bad(chunk):
    """Analyses a chunk in a worker, and kills the worker on `bad.py` like a native parser crash would."""
    import os

    if any(item.path == "bad.py" for item in chunk):
        os._exit(3)
    return [(item.path, [], item.digest) for item in chunk]


def test_a_crashing_worker_costs_one_file_not_the_scan():
    items = [scan_module.Pending(f"f{index}.py", "x = 1\n", str(index)) for index in range(6)]
    items.insert(3, scan_module.Pending("bad.py", "x = 1\n", "bad"))
    chunks = scan_module.chunked(items, 2, lambda item: len(item.text))
    crashed = scan_module.crashed_analysis(get_target("mi350x"))
    parts = list(scan_module.parallel_map(_die_on_bad, chunks, 2, (None, None), crashed=crashed))
    results = {path: outcome for part in parts for path, outcome, _ in part}
    assert set(results) == {item.path for item in items}
    # the unchecked file fails the scan (an error finding) and is not cached (no digest): never a silent pass
    [finding] = results["bad.py"]
    assert (finding.rule, finding.severity) == ("PT001", "error") and "crashed" in finding.message
    assert [digest for part in parts for path, _, digest in part if path == "bad.py"] == [None]
    assert all(results[f"f{index}.py"] == [] for index in range(6))


def test_a_file_the_analysis_cannot_finish_fails_the_scan(tmp_path, ruleset, monkeypatch):
    import porter.analyze

    def broken(*args, **kwargs):
        raise ValueError("a bug outside the engine's own guard")

    write_tree(tmp_path)
    monkeypatch.setattr(porter.analyze, "analyze_source", broken)
    result = scan_tree(tmp_path, "mi350x", ruleset, jobs=1)
    assert result.findings and all(f.rule == "PT001" and f.severity == "error" for f in result.findings)
    assert "not checked: internal error in the analyzer (ValueError" in result.findings[0].message
    monkeypatch.undo()
    assert {f.rule for f in scan_tree(tmp_path, "mi350x", ruleset, jobs=1).findings} == {"PT990", "PT991"}  # uncached


def test_an_unwritable_cache_is_a_note_not_a_failure(tmp_path, ruleset):
    write_tree(tmp_path)
    (tmp_path / "occupied").write_text("a file where the cache directory should go\n")
    result = scan_tree(tmp_path, "mi350x", ruleset, jobs=1, config=PorterConfig(cache_dir="occupied"))
    assert len(result.findings) == 2
    assert len(result.stats.notes) == 1 and result.stats.notes[0].startswith("cache not written")


def test_porter_generated_modules_are_skipped_with_a_note(tmp_path):
    from porter.analyze import load_rules
    from porter.analyze.scan import scan_tree

    (tmp_path / "_porter_shim.py").write_text("# @generated by porter 0.1.0\nlds_bytes = 232448\n")
    (tmp_path / "user.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    # PT204 (TF32 switches) is opt-in: named here so user.py has a finding to show
    rules = load_rules(extend_select=["PT204"])
    result = scan_tree(tmp_path, "mi350x", rules, jobs=1, use_cache=False)
    assert {f.path for f in result.findings} == {"user.py"}
    assert [note.path for note in result.skipped] == ["_porter_shim.py"]


SETTINGS_HELPER = """\
def calculate_settings(n):
    num_warps = 4
    if n >= 32768:
        num_warps = {warps}
    return n, num_warps
"""
LAUNCH = """\
import triton
import triton.language as tl

from pkg.settings import calculate_settings


@triton.jit
def copy_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))


def copy(x):
    block, num_warps = calculate_settings(x.numel())
    copy_kernel[(1,)](x, BLOCK=block, num_warps=num_warps)
"""


def test_an_edit_to_an_imported_helper_reanalyses_the_launches_it_feeds(tmp_path):
    """Value flow reads the settings helper in another module: the launch module's cached findings
    must not outlive an edit to it (the cache key covers the project modules a file imports)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "settings.py").write_text(SETTINGS_HELPER.format(warps=32))
    (tmp_path / "pkg" / "ops.py").write_text(LAUNCH)
    rules = load_rules(select=["PT101"])
    cold = scan_tree(tmp_path, "mi300x", rules, jobs=1)
    assert [f.rule for f in cold.findings] == ["PT101"]
    assert cold.findings[0].path == "pkg/settings.py" and "pkg/ops.py:14" in cold.findings[0].message
    (tmp_path / "pkg" / "ops.py").write_text(LAUNCH.replace("num_warps=num_warps", "num_warps=min(num_warps, 16)"))
    capped = scan_tree(tmp_path, "mi300x", rules, jobs=1)  # settings.py unchanged, the launch it feeds capped
    assert capped.findings == []
    (tmp_path / "pkg" / "ops.py").write_text(LAUNCH)
    (tmp_path / "pkg" / "settings.py").write_text(SETTINGS_HELPER.format(warps=16))
    fixed = scan_tree(tmp_path, "mi300x", rules, jobs=1)
    assert fixed.findings == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_settings_helper_analysed_after_its_callers_names_every_launch_it_reaches(tmp_path, jobs):
    """Callers analysed before the helper resolved it through value flow's helper copy; the engine then analyses
    the helper over that copy's tree. Every launch must still be named, whatever the order and process layout
    (unsloth's `_settings` once lost one of its two launches this way)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "settings.py").write_text(SETTINGS_HELPER.format(warps=32))
    for name in ("add_norm", "norm"):  # both sort before settings.py
        (tmp_path / "pkg" / f"{name}.py").write_text(LAUNCH)
    found = scan_tree(tmp_path, "mi300x", load_rules(select=["PT101"]), jobs=jobs, use_cache=False).findings
    assert [(f.rule, f.path) for f in found] == [("PT101", "pkg/settings.py")]
    assert "pkg/add_norm.py:14" in found[0].message and "pkg/norm.py:14" in found[0].message
