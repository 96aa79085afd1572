"""The real-code yardstick (bench/real_code): packages, labels, keys that survive re-scans, scoring.

The excerpt (bench/real_code/excerpt/*.jsonl) is the stored scan of a few dev packages by the analyzer at
the commit that measured it; scoring it with the committed labels must give at least the measured
figures. No network: nothing is downloaded or scanned here.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "real_code"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
import score  # noqa: E402

EXCERPT = BENCH / "excerpt"
# Measured on the excerpt (python bench/real_code/score.py --findings bench/real_code/excerpt --no-ports):
# overall precision per target, and labelled findings per target. The excerpt is the scan of deepspeed,
# lmdeploy, megatron-core and xformers by the analyzer of branch dev-prec (import reach, the precision fixes of
# PT102/103/105/107/108/116/202/315), stored 2026-12-03 from `python bench/real_code/score.py --no-ports --dump DIR`:
# mi300x 25 true / 1 false / 22 debatable (0.96), mi350x 23 / 1 / 19 (0.958). With PT117, PT204,
# PT213, PT301, PT302 and PT305 opt-in (branch dev2-rules; no true label among them on any split) the default
# catalog scores mi300x 25 / 0 / 19 (1.00), mi350x 23 / 0 / 16 (1.00). Re-stored 2026-12-04 with main after the
# dev2-{reach,rules,recall,speed} merges (PT201/PT206/PT207 on by default; xformers' get_max_simd_tflops relabelled
# false, and no longer reported: reached only under capability[0] < 8): mi300x 26 / 0 / 23, mi350x 24 / 0 / 16.
# With PT311 opt-in (branch dev3-rules2: precision 0.29 / 0.22 over all splits, no narrowing keeps its true
# findings) lmdeploy's two true DeepGEMM imports leave the default catalog: mi300x 24 / 0 / 23, mi350x 22 / 0 / 16.
# With PT103 and PT106 opt-in (branch dev4-rules4: 0 and 1 true of ~180 findings over all splits) their 7 debatable
# labels per target leave the default catalog: mi300x 24 / 0 / 16, mi350x 22 / 0 / 9.
# Re-stored with branch dev4-reach4 (autotune-config values decide constexpr branches): deepspeed's PT121 atomic_add,
# the `else` of `if SPLIT_K == 1:` under 9 configs that all set SPLIT_K = 1, is not reached and relabelled false (as
# held_out4's fbgemm labels judge the same code): mi300x 23 / 0 / 23, mi350x 21 / 0 / 16.
# Both: mi300x 23 / 0 / 16, mi350x 21 / 0 / 9.
# lmdeploy and megatron-core re-stored with branch dev8-cfg (gfx942 holds 1-2 byte tiles in one LDS buffer, Triton
# 3.9): lmdeploy's four int8 w8a8 PT107 findings (relabelled false: 32 KiB compiled for gfx942) and two debatable
# fused_lora ones are no longer reported on mi300x: mi300x 19 / 0 / 13, mi350x 21 / 0 / 8.
# (Session 38: that 32 KiB came from a compile without the launcher's alignment hints; aligned it is 96 KiB, and those
# labels are true again. The excerpt keeps the stored scan of that time.)
# Session 39: two lmdeploy true labels re-judged false with evidence (audit39.md: the `fast_dividef` alias nothing reads,
# `return 32` behind a num_routes <= 2048 gate): mi300x 17 / 2 / 13 (0.895), mi350x 19 / 2 / 8 (0.905).
FLOORS = {"mi300x": (0.89, 32), "mi350x": (0.90, 29)}  # PT102 opt-in (prec25) took one debatable label per target
LABEL_CAP_PER_RULE = (
    36  # ~20 per rule; more where a rule changed (PT107: its gone labels stay, new findings got their own)
)


@pytest.fixture(scope="module")
def packages():
    return corpus.load_corpus()


@pytest.fixture(scope="module")
def labels():
    return corpus.load_labels()


@pytest.fixture(scope="module")
def excerpt():
    """The stored findings of the rules the catalog runs by default (what a user sees)."""
    default = score.rules_that_ran([])
    return [f for f in score.read_stored(EXCERPT)[0] if f.rule in default]


def test_packages_are_pinned_and_split(packages):
    assert set(packages.targets) == {"mi300x", "mi350x"}
    assert len(packages.split("all")) >= 16
    assert len(packages.split("dev")) >= 12 and len(packages.split("held_out")) >= 4
    for package in packages.packages:
        assert package.version[0].isdigit() and "*" not in package.version, package
        assert package.requirement == f"{package.name}=={package.version}"


def test_labels_are_valid_stratified_and_dev_only(packages, labels):
    assert len(labels) >= 250
    dev = {p.name for p in packages.split("dev")}
    assert {label.key.package for label in labels} <= dev, "held-out packages get labels only in labels_held_out.jsonl"
    per_rule = Counter(label.key.rule for label in labels)
    assert len(per_rule) >= 30
    assert max(per_rule.values()) <= LABEL_CAP_PER_RULE, per_rule.most_common(3)
    assert all(label.reason and label.verdict in corpus.VERDICTS for label in labels)


def test_excerpt_scores_at_least_the_measured_figures(excerpt, labels):
    packages = {f.package for f in excerpt}
    result = score.score(excerpt, corpus.LabelIndex(labels), list(FLOORS), packages)
    for target, (precision, labelled) in FLOORS.items():
        overall = result[target].overall
        assert overall.true + overall.false + overall.debatable >= labelled
        assert overall.precision is not None and overall.precision >= precision, (target, overall.as_dict())


def _tallies(findings, labels):
    result = score.score(findings, corpus.LabelIndex(labels), list(FLOORS), {f.package for f in findings})
    return {t: s.as_dict() for t, s in result.items()}


def test_labels_survive_code_moving_down(excerpt, labels):
    moved = [replace(f, line=f.line + 17) for f in excerpt]
    assert _tallies(moved, labels) == _tallies(excerpt, labels)


def test_changed_line_is_unlabelled_and_its_label_gone(excerpt, labels):
    index = corpus.LabelIndex(labels)
    labelled = next(f for f in excerpt if index.lookup(f) is not None and index.lookup(f).verdict == "true")
    edited = [replace(f, text=f.text + " # edited") if f.key == labelled.key else f for f in excerpt]  # every target
    before = _tallies(excerpt, labels)[labelled.target]["rules"][labelled.rule]
    after = _tallies(edited, labels)[labelled.target]["rules"][labelled.rule]
    assert after["unlabelled"] == before["unlabelled"] + 1
    assert after["true"] == before["true"] - 1 and after["gone_true"] == before["gone_true"] + 1


def test_nvidia_only_findings_are_not_scored(excerpt, labels):
    dropped = [replace(f, reach="nvidia_only") for f in excerpt]
    for tally in _tallies(dropped, labels).values():
        assert tally["overall"]["findings"] == 0


def test_occurrences_number_equal_lines_in_source_order():
    base = corpus.CorpusFinding("p", "mi300x", "a.py", 0, 1, "PT202", "error", "target", "x = cap >= 9", "m")
    found = corpus.number_occurrences(
        [replace(base, line=30), replace(base, line=10), replace(base, line=20, rule="PT201")]
    )
    assert [(f.line, f.rule, f.occurrence) for f in found] == [(10, "PT202", 0), (20, "PT201", 0), (30, "PT202", 1)]


def test_label_file_errors_name_the_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    good = {"package": "p", "path": "a.py", "rule": "PT202", "text": "x", "n": 0, "label": "true", "why": "r"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "label": "maybe"}) + "\n")
    with pytest.raises(corpus.CorpusError, match=r"labels.jsonl:2: label must be one of"):
        corpus.load_labels(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(corpus.CorpusError, match=r":2: a second label"):
        corpus.load_labels(path)


def test_score_command_runs_offline_on_the_excerpt(capsys):
    assert score.main(["--findings", str(EXCERPT), "--no-ports", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["targets"]) == set(FLOORS)
    assert printed["targets"]["mi300x"]["overall"]["findings"] > 0


def test_a_dump_keeps_a_file_for_a_package_whose_scan_found_nothing(tmp_path, excerpt):
    # a diff of two dumps must tell "every finding went" from "not scanned": the empty file says scanned
    one = excerpt[0]
    score.dump([one], tmp_path, [(one.package, one.target), ("quiet-pkg", one.target)])
    assert (tmp_path / f"quiet-pkg.{one.target}.jsonl").read_text() == ""
    findings, packages = score.read_stored(tmp_path)
    assert [f.package for f in findings] == [one.package] and packages == {one.package, "quiet-pkg"}


def test_unlabelled_listing_refuses_the_held_out_split(capsys):
    assert score.main(["--split", "held_out", "--unlabelled", "PT202", "--findings", str(EXCERPT)]) == 2


def test_a_package_that_cannot_be_downloaded_is_named_and_fails_the_run(tmp_path, monkeypatch, capsys):
    # pip with no index answers at once that it has no such distribution: the real download path, offline
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PORTER_REAL_CODE_CACHE", str(tmp_path / "cache"))
    packages = tmp_path / "packages.yaml"
    packages.write_text(
        "targets: [mi300x]\npackages:\n  - {name: no-such-porter-pkg, version: 0.0.1, source: pypi, split: dev}\n"
    )
    assert score.main(["--packages-file", str(packages), "--no-ports"]) == 1
    out = capsys.readouterr().out
    assert "not scored: no-such-porter-pkg: cannot download no-such-porter-pkg==0.0.1" in out
    assert "gone" in out and "overall" in out  # the table still prints, over what was scored


def test_missing_port_trees_are_named_with_how_to_get_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PORTER_PORTS_CACHE", str(tmp_path / "no-trees"))
    ports = score.port_scores(["mi300x"], "dev")
    assert ports["split"] == "dev" and "liger-pr326" in ports["missing"]
    score.print_ports(ports)
    out = capsys.readouterr().out
    assert "human ports (dev): not scored, trees missing for liger-pr326" in out
    assert "ports.py extract --repos REPOS" in out
    assert not score._ports_scored(ports) and score._ports_scored(None)
