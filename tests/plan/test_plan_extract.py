"""porter plan --extract: drafting the description from code."""

from __future__ import annotations

from pathlib import Path

import yaml

from porter.plan.extract import extract, render_yaml
from porter.plan.model import parse_model

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "dlrm_model"


def draft_of(path: Path) -> tuple[str, dict]:
    text = render_yaml(extract(path), path.name)
    return text, yaml.safe_load(text)


def test_extracts_the_example_package():
    text, data = draft_of(EXAMPLE)
    assert data["batch_size_per_gpu"] == 8192
    assert data["matmul_precision"] == "tf32"
    assert data["optimizer"] == {"dense": "adam", "embedding": "rowwise_adagrad"}
    assert data["dense"]["num_dense_features"] == 13
    assert data["dense"]["bottom_mlp"] == [512, 256, 128]
    assert data["dense"]["top_mlp"] == [1024, 1024, 512, 256, 1]
    tables = {t["name"]: t for t in data["tables"]}
    assert tables["user_id"]["rows"] == 900_000_000 and tables["item_id"]["rows"] == 500_000_000
    # expanded from the comprehension over SPARSE_FEATURES (50 * 10**6 folded)
    assert tables["t_advertiser_id"]["rows"] == 50_000_000 and tables["t_page_id"]["dim"] == 128
    assert tables["hour_of_week"]["rows"] == 168  # nn.EmbeddingBag(168, EMBEDDING_DIM)
    # a vocabulary read at run time stays unresolved, with a TODO naming where
    assert tables["geo_city"]["rows"] is None
    assert "rows: null  # TODO(porter): could not resolve num_embeddings at model.py:" in text
    assert data["gpus"] is None and "TODO(porter)" in text.split("gpus:")[1].splitlines()[0]


def test_filled_draft_validates():
    _, data = draft_of(EXAMPLE)
    data["gpus"] = 8
    for table in data["tables"]:
        table["rows"] = table["rows"] or 1000
    model = parse_model(data, "draft.yaml")
    assert len(model.tables) == 7 and model.mlp_layers()[0] == ("bottom0", 13, 512)


def test_linear_chains_fp8_and_argparse(tmp_path):
    (tmp_path / "net.py").write_text(
        "import argparse, torch\nfrom torch import nn\n"
        "torch.set_float32_matmul_precision('highest')\n"
        "class Net(nn.Module):\n"
        "    def __init__(self, rows):\n"
        "        self.emb = nn.Embedding(num_embeddings=rows, embedding_dim=64)\n"
        "        self.bottom = nn.Sequential(nn.Linear(16, 256), nn.ReLU(), nn.Linear(256, 64))\n"
        "        self.top = nn.Sequential(nn.Linear(80, 32), nn.Linear(32, 1))\n"
        "SCALE_DTYPE = torch.float8_e4m3fn\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--batch_size', type=int, default=2048)\n"
    )
    text, data = draft_of(tmp_path)
    assert data["batch_size_per_gpu"] == 2048
    assert data["matmul_precision"] == "fp32"
    assert data["fp8"] is True and "float8_e4m3fn" in text
    assert data["dense"]["bottom_mlp"] == [256, 64] and data["dense"]["top_mlp"] == [32, 1]
    assert data["dense"]["num_dense_features"] == 16
    assert data["tables"] == [
        {"name": "emb", "rows": None, "dim": 64, "pooling": None, "placement": "hbm", "sharding": "auto"}
    ]


def test_tf32_switch_through_a_from_import(tmp_path):
    (tmp_path / "t.py").write_text("from torch.backends import cuda\ncuda.matmul.allow_tf32 = False\n")
    assert draft_of(tmp_path)[1]["matmul_precision"] == "fp32"


def test_unparseable_file_is_skipped(tmp_path):
    (tmp_path / "bad.py").write_text("def broken(:\n")
    (tmp_path / "ok.py").write_text("BATCH_SIZE = 512\n")
    _, data = draft_of(tmp_path)
    assert data["batch_size_per_gpu"] == 512 and data["tables"] == []
