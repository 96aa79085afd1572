"""porter plan: description validation, memory arithmetic on a hand-checkable model, the sharder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from porter.errors import ConfigError
from porter.plan.evaluate import evaluate
from porter.plan.memory import DATA_PARALLEL_MAX_BYTES, memory_per_gpu, shard
from porter.plan.model import load_model, parse_model
from porter.targets import get_target

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

TINY = {
    "name": "tiny",
    "gpus": 1,
    "batch_size_per_gpu": 100,
    "activation_dtype": "fp32",
    "optimizer": {"dense": "adam", "embedding": "rowwise_adagrad"},
    "dense": {"num_dense_features": 4, "bottom_mlp": [4], "top_mlp": [2, 1], "interaction": "dot"},
    "tables": [
        {"name": "a", "rows": 1000, "dim": 4, "pooling": 2},
        {"name": "b", "rows": 10, "dim": 4, "optimizer": "adam"},
    ],
}


def tiny(**changes):
    data = yaml.safe_load(yaml.safe_dump(TINY))
    data.update(changes)
    return parse_model(data, "tiny.yaml")


def write(tmp_path, text):
    path = tmp_path / "model.yaml"
    path.write_text(text)
    return path


def test_table_bytes_by_hand():
    model = tiny()
    a, b = model.tables
    assert a.param_bytes == 1000 * 4 * 4 and a.state_bytes == 1000 * 4  # rowwise adagrad: 1 float per row
    assert b.param_bytes == 160 and b.state_bytes == 10 * 4 * 2 * 4  # adam: 2 x dim floats per row


def test_dense_layers_by_hand():
    model = tiny()
    # dot interaction over 2 tables + bottom output: 3 features -> 3 pairs + 4 = 7 inputs to the top MLP
    assert model.interaction_width() == 7
    assert model.mlp_layers() == [("bottom0", 4, 4), ("top0", 7, 2), ("top1", 2, 1)]
    assert model.dense_params() == (16 + 4) + (14 + 2) + (2 + 1)


def test_memory_breakdown_by_hand():
    model, target = tiny(), get_target("mi350x")
    constants = {"activation_factor": 2.0}
    plan = shard(model, 1, table_budget=1e12)
    mem = memory_per_gpu(model, target, plan, constants)
    assert mem.embeddings == 16000 + 4000 + 160 + 320
    assert (mem.dense_params, mem.dense_grads, mem.dense_optimizer) == (39 * 4, 39 * 4, 39 * 8)
    # widths 4 + 4 + 7 + 3 + 8 (pooled embeddings) = 26; interaction 3 x 4 + 3 x 3 = 21 -> 47 floats/sample
    assert mem.activations == 2.0 * 100 * 47 * 4
    # indices (8 B per lookup: 200 + 100) and pooled outputs + grads (2 x 100 x 4 dims x 4 B per table)
    assert mem.embedding_workspace == (200 + 100) * 8 + 2 * (2 * 100 * 4 * 4)
    assert mem.budget == pytest.approx(target.hbm_bytes * 0.9) and mem.fits


def test_uvm_and_host_placement_leave_hbm():
    model = tiny(
        tables=[
            {"name": "a", "rows": 1000, "dim": 4, "placement": "uvm", "cache_fraction": 0.25},
            {"name": "b", "rows": 10, "dim": 4, "placement": "host"},
        ]
    )
    e = evaluate(model, get_target("mi350x"))
    assert e.memory.embeddings == pytest.approx(0.25 * 20000)
    assert e.memory.host_embeddings == pytest.approx(0.75 * 20000 + 200)


def test_sharder_kinds_and_balance():
    gb = 10**9
    big = {"name": "big", "rows": 200 * gb // 516, "dim": 128}  # ~200 GB with rowwise adagrad
    mids = [{"name": f"m{i}", "rows": 10 * gb // 516, "dim": 128} for i in range(4)]
    small = {"name": "small", "rows": 1000, "dim": 128}
    model = tiny(
        gpus=4, tables=[big, *mids, small], dense={"num_dense_features": 4, "bottom_mlp": [128], "top_mlp": [2, 1]}
    )
    plan = shard(model, 4, table_budget=1e12)
    kinds = {s.table.name: s.kind for s in plan.shards}
    assert kinds["big"] == "row_wise" and kinds["small"] == "data_parallel"
    assert all(kinds[f"m{i}"] == "table_wise" for i in range(4))
    assert sorted(s.gpu for s in plan.shards if s.table.name.startswith("m")) == [0, 1, 2, 3]
    assert len([s for s in plan.shards if s.table.name == "small"]) == 4
    assert model.tables[-1].total_bytes <= DATA_PARALLEL_MAX_BYTES


def test_sharder_spills_what_does_not_fit_to_uvm():
    model = tiny(tables=[{"name": "a", "rows": 1000, "dim": 4}, {"name": "b", "rows": 1000, "dim": 4}])
    plan = shard(model, 1, table_budget=30000, auto_placement=True)
    assert plan.hbm_load(0) == pytest.approx(30000)
    spilled = [s for s in plan.shards if s.placement == "uvm"]
    assert len(spilled) == 1 and spilled[0].cache_fraction == pytest.approx(0.5)


def test_column_wise_splits_dims():
    model = tiny(
        gpus=4,
        tables=[
            {"name": "a", "rows": 1000, "dim": 4, "sharding": "column_wise", "shards": 2},
            {"name": "b", "rows": 10, "dim": 4},
        ],
    )
    plan = shard(model, 4, table_budget=1e12)
    pieces = [s for s in plan.shards if s.table.name == "a"]
    assert [s.dim for s in pieces] == [2, 2] and len({s.gpu for s in pieces}) == 2


@pytest.mark.parametrize(
    "text, field",
    [
        (
            "gpus: 1\nbatch_size_per_gpu: 8\ndense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\n"
            "tables: [{name: a, rows: 10, dim: 4, placement: ssd}]",
            "tables[0] (a).placement",
        ),
        (
            "gpus: 1\nbatch_size_per_gpu: 8\ndense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\n"
            "tables: [{name: a, dim: 4}]",
            "tables[0] (a).rows",
        ),
        (
            "gpus: 1\nbatch_size_per_gpu: 8\ndense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\n"
            "tables: [{name: a, rows: 10, dim: 4, placement: uvm}]",
            "tables[0] (a).cache_fraction",
        ),
        (
            "gpus: 1\nbatch_size_per_gpu: 8\ndense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\n"
            "tables: [{name: a, rows: 10, dim: 8}]",
            "tables[0] (a).dim",
        ),
        (
            "gpus: 1\nbatch_size_per_gpu: -8\ndense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\n"
            "tables: [{name: a, rows: 10, dim: 4}]",
            "batch_size_per_gpu",
        ),
        (
            "gpus: 1\nbatch_size_per_gpu: 8\ndense: {num_dense_features: 1, bottom_mlp: [4, x], top_mlp: [1]}\n"
            "tables: [{name: a, rows: 10, dim: 4}]",
            "dense.bottom_mlp",
        ),
        (
            "gpus: 1\nbatch_size_per_gpu: 8\nbatchsize: 3\ndense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\n"
            "tables: [{name: a, rows: 10, dim: 4}]",
            "batchsize",
        ),
        (
            "gpus: 1\nbatch_size_per_gpu: 8\nmatmul_precision: tf64\ndense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\n"
            "tables: [{name: a, rows: 10, dim: 4}]",
            "matmul_precision",
        ),
        (  # 8 GPUs on nodes of 3: a multi-node job runs on whole nodes
            "gpus: 8\ngpus_per_node: 3\nbatch_size_per_gpu: 8\n"
            "dense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\ntables: [{name: a, rows: 10, dim: 4}]",
            "gpus",
        ),
    ],
)
def test_validation_errors_name_file_and_field(tmp_path, text, field):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        load_model(path)
    assert str(path) in str(error.value) and f"'{field}'" in str(error.value)


def test_not_yaml_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_model(write(tmp_path, "tables: [unclosed"))
    with pytest.raises(ConfigError, match="not found"):
        load_model(tmp_path / "absent.yaml")


def test_bundled_fixture_loads_and_fits_b200():
    model = load_model(FIXTURES / "dlrm.yaml")
    assert model.gpus == 8 and any(t.placement == "uvm" for t in model.tables)
    total = sum(t.total_bytes for t in model.tables)
    b200, mi350x = get_target("b200"), get_target("mi350x")
    # too big for 8 B200s in HBM (hence UVM there), small enough for 8 MI350Xs
    assert model.gpus * b200.hbm_bytes * 0.9 < total < model.gpus * mi350x.hbm_bytes * 0.9
    assert evaluate(model, b200).memory.fits


def test_sharder_splits_rows_before_spilling_to_uvm():
    # three equal tables on two GPUs: table-wise leaves one GPU with two of them (over budget),
    # splitting one row-wise balances the load and nothing has to leave HBM
    tables = [{"name": f"t{i}", "rows": 10**7, "dim": 4} for i in range(3)]  # 200 MB each: not replicated
    model = tiny(gpus=2, tables=tables)
    per_table = model.tables[0].total_bytes
    plan = shard(model, 2, table_budget=1.6 * per_table, auto_placement=True)
    assert all(s.placement == "hbm" for s in plan.shards)
    assert any(s.kind == "row_wise" for s in plan.shards)
    assert max(plan.hbm_load(g) for g in range(2)) == pytest.approx(1.5 * per_table)
