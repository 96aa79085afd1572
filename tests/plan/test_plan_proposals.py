"""porter plan: proposals on the bundled DLRM description, b200 -> mi350x."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import pytest

from porter.plan.evaluate import evaluate
from porter.plan.model import load_model
from porter.plan.proposals import co_design, larger_batch
from porter.targets import get_target

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dlrm.yaml"


@lru_cache(maxsize=1)
def plan():
    return co_design(load_model(FIXTURE), get_target("b200"), get_target("mi350x"))


def proposal(pid):
    return next(p for p in plan().proposals if p.id == pid)


def test_expected_proposals_present():
    ids = {p.id for p in plan().proposals}
    assert {"hbm-resident-tables", "tf32-to-bf16x3", "fp8-format", "aligned-shapes", "larger-batch"} <= ids
    for p in plan().proposals:
        assert p.change and p.why and p.result.memory.fits


def test_gains_where_the_target_has_them():
    assert proposal("hbm-resident-tables").speedup > 1.0
    assert proposal("hbm-resident-tables").result.step.embedding_uvm == 0
    assert proposal("tf32-to-bf16x3").speedup > 1.5  # fp32 fallback -> bf16x3 is the big lever
    assert proposal("larger-batch").speedup > 1.0


def test_more_hbm_gives_a_larger_batch_on_mi350x_than_on_b200():
    model = load_model(FIXTURE)
    b200, mi350x = get_target("b200"), get_target("mi350x")
    on_b200 = larger_batch(model, b200, evaluate(model, b200), auto=False, max_growth=256)
    on_mi350x = larger_batch(model, mi350x, evaluate(model, mi350x), auto=False, max_growth=256)
    b200_batch = on_b200.result.model.batch_size_per_gpu if on_b200 else model.batch_size_per_gpu
    assert on_mi350x.result.model.batch_size_per_gpu > 2 * b200_batch
    for p in (on_b200, on_mi350x):  # the largest that fits: one step more does not
        bigger = p.result.model.replace(batch_size_per_gpu=p.result.model.batch_size_per_gpu + 1024)
        assert not evaluate(bigger, p.result.target).memory.fits


def test_fp8_format_follows_the_target():
    assert "float8_e4m3fn" in proposal("fp8-format").change
    on_mi300x = co_design(load_model(FIXTURE).replace(fp8=True), get_target("b200"), get_target("mi300x"))
    fp8 = next(p for p in on_mi300x.proposals if p.id == "fp8-format")
    assert "float8_e4m3fnuz" in fp8.change and any("448" in n and "240" in n for n in fp8.notes)


def test_no_tf32_proposal_where_tf32_exists():
    plan_mi300x = co_design(load_model(FIXTURE), get_target("b200"), get_target("mi300x"))
    assert "tf32-to-bf16x3" not in {p.id for p in plan_mi300x.proposals}


def test_combined_plan_and_attribution():
    p = plan()
    assert p.speedup > max(q.speedup for q in p.proposals if q.in_combined)
    factors = [after.throughput / before.throughput for before, after in zip(p.waterfall, p.waterfall[1:])]
    assert math.prod(factors) == pytest.approx(p.speedup)
    assert p.combined.memory.fits


def test_job_sizes_are_counts_within_a_node_then_whole_nodes():
    from porter.plan.proposals import job_sizes

    assert job_sizes(8, 8) == [1, 2, 3, 4, 5, 6, 7]
    assert job_sizes(32, 8) == [1, 2, 3, 4, 5, 6, 7, 8, 16, 24]


def test_fewer_gpus_bisects_rather_than_trying_every_count(monkeypatch):
    """A 256-GPU job used to evaluate 255 counts (minutes); bisection over the job sizes takes a few, and
    gives the count an exhaustive search gives on the bundled 8-GPU model."""
    from porter.plan import proposals

    target = get_target("mi350x")
    model = load_model(FIXTURE)
    direct = evaluate(model, target, "direct")

    def trial(gpus):
        return evaluate(
            model.replace(gpus=gpus, batch_size_per_gpu=-(-model.global_batch // gpus)), target, "t", auto=True
        )

    fitting = [g for g in range(1, model.gpus) if trial(g).memory.fits]
    pacing = [g for g in fitting if trial(g).throughput >= direct.throughput]
    exhaustive = min(pacing or fitting)
    calls = []

    def counted(described, *args, **kwargs):
        calls.append(described.gpus)
        return evaluate(described, *args, **kwargs)

    monkeypatch.setattr(proposals, "evaluate", counted)
    eight = proposals.fewer_gpus(model, target, direct)
    assert eight is not None and eight.result.model.gpus == exhaustive
    assert len(calls) <= 6
    calls.clear()
    big = model.replace(gpus=256)
    proposals.fewer_gpus(big, target, evaluate(big, target, "direct"))
    assert len(calls) <= 2 * math.ceil(math.log2(len(proposals.job_sizes(256, 8)))) + 2
