"""porter tune's library advice: the vendor BLAS's measured ceiling (specs.yaml vendor_blas) against
the model's best Triton config, checked on the H200 sweeps' cuBLAS timings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.targets import get_target
from porter.tune.library import FASTER_MARGIN, blas_ceiling, library_advice
from porter.tune.scoring import SWEEP_DTYPES, load_rows, model_predictions
from tests.tune.test_tune_validation import SWEEPS as CALIBRATION_SWEEPS

DATA = Path(__file__).resolve().parents[2] / "bench" / "tune" / "data"
# share of (dtype, shape) rows where the advice agrees with the measurement, as bench/tune/blas.py
# measured it (bf16 113/135, fp16 32/40, fp32 48/54, fp8 83/113), less a little
AGREEMENT_FLOOR = {"bf16": 0.82, "fp16": 0.78, "fp32": 0.86, "fp8": 0.71}


@pytest.fixture(scope="module")
def rows():
    # the calibration sweeps only, not a glob: a sealed blind split sits in the same folder and must
    # not be scored before its one scoring
    return [r for name in CALIBRATION_SWEEPS for r in load_rows(DATA / name) if r.cublas_ms]


def test_ceiling_tracks_measured_cublas_on_a_large_tf32_gemm(rows):
    row = next(r for r in rows if r.name == "c4_m4096_o" and r.dtype == "fp32")
    advice = library_advice(get_target("h200"), "fp32", row.m, row.n, row.k, triton_ms=row.best)
    assert advice.library == "cuBLAS" and advice.library_faster
    assert 0.8 < advice.library_ms / row.cublas_ms < 1.25, (advice.library_ms, row.cublas_ms)


def test_advice_agrees_with_the_sweeps(rows):
    target = get_target("h200")
    for tag, floor in AGREEMENT_FLOOR.items():
        subset = [r for r in rows if r.dtype == tag]
        agree = 0
        for r in subset:
            advice = library_advice(target, SWEEP_DTYPES[tag], r.m, r.n, r.k, min(model_predictions(r, target)))
            agree += advice.library_faster == (r.cublas_ms < FASTER_MARGIN * r.best)
        assert agree / len(subset) >= floor, (tag, agree, len(subset))


def test_small_decode_gemm_keeps_triton():
    advice = library_advice(get_target("h200"), "bf16", 16, 4096, 4096, triton_ms=0.018)
    assert not advice.library_faster and advice.library_ms is not None


def test_target_without_a_measured_ceiling_cannot_compare():
    target = get_target("mi350x")
    assert blas_ceiling(target, "bf16") is None
    advice = library_advice(target, "bf16", 4096, 4096, 4096, triton_ms=0.1)
    assert advice.library_ms is None and not advice.library_faster
    assert "no measured hipBLASLt ceiling" in advice.note


def test_cli_prints_both_predictions():
    from porter.cli import app

    runner = CliRunner()
    table = runner.invoke(
        app,
        [
            "tune",
            "gemm",
            "--target",
            "h200",
            "--dtype",
            "fp32",
            "--m",
            "4096",
            "--n",
            "4096",
            "--k",
            "4096",
            "--top",
            "2",
        ],
    )
    assert table.exit_code == 0, table.output
    assert "library: cuBLAS is predicted faster" in table.output and " ms against " in table.output
    doc = json.loads(
        runner.invoke(
            app,
            [
                "tune",
                "gemm",
                "--target",
                "h200",
                "--dtype",
                "fp32",
                "--m",
                "4096",
                "--n",
                "4096",
                "--k",
                "4096",
                "--top",
                "1",
                "--format",
                "json",
            ],
        ).output
    )
    lib = doc["library"]
    assert lib["library_faster"] and lib["library_ms"] < lib["triton_ms"]
    assert abs(lib["triton_ms"] - doc["ranked"][0]["predicted_ms"]) < 1e-5
