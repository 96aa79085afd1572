"""The step model against the stored H200 measurements (bench/plan/data/): its error on the
held-out cases must stay within what was measured when the constants were calibrated."""

from __future__ import annotations

import json

import pytest

from porter.plan.validation import BENCH, CALIBRATION_CASES, compare, load_cases, summary

STORED = json.loads((BENCH / "data" / "comparison.json").read_text())


def test_measurements_cover_calibration_and_held_out_cases():
    cases = load_cases(sorted((BENCH / "data").glob("h200_run*.json")))
    keys = {c.key for c in cases}
    assert CALIBRATION_CASES <= keys and len(keys - CALIBRATION_CASES) >= 8
    assert {c.placement for c in cases} == {"hbm", "host"} and {c.precision for c in cases} == {"tf32", "bf16"}


def test_error_stays_within_the_stored_comparison():
    rows = compare()
    stored = {(r["precision"], r["placement"], r["batch"]): r for r in STORED["rows"]}
    for row in rows:
        before = stored[(row["precision"], row["placement"], row["batch"])]
        assert abs(row["error"]) <= abs(before["error"]) + 0.02, row
        assert abs(row["peak_error"]) <= abs(before["peak_error"]) + 0.02, row
        dynamic_error = row["predicted_dynamic_gb"] / row["measured_dynamic_gb"] - 1
        assert abs(dynamic_error) <= abs(before["predicted_dynamic_gb"] / before["measured_dynamic_gb"] - 1) + 0.02, row
    now = summary(rows)
    assert now["max_abs_error_held_out"] <= STORED["summary"]["max_abs_error_held_out"] + 0.01
    assert now["mean_abs_error_held_out"] <= 0.15  # what the calibration achieved (about 10%), with margin


def test_calibration_cases_fit_closely():
    for row in compare(only_calibration=True):
        assert row["error"] == pytest.approx(0, abs=0.06), row
