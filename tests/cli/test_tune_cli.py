"""`porter tune gemm`: JSON shape, candidates files, problems batches, exit codes."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from porter.cli import main
from porter.tune import rank_gemm

CONFIG_KEYS = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"}


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@pytest.fixture
def tune(capsys):
    """Run `porter tune gemm ARGS` through the real entry point (exit-code mapping included)."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(["tune", "gemm", *args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def test_json_shape_best_first(tune):
    result = tune(
        "--target",
        "mi350x",
        "--dtype",
        "bf16",
        "--m",
        "4096",
        "--n",
        "4096",
        "--k",
        "4096",
        "--top",
        "5",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["ranked", "library"] and len(doc["ranked"]) == 5
    for entry in doc["ranked"]:
        assert CONFIG_KEYS | {"GROUP_M", "waves_per_eu", "matrix_instr_nonkdim", "predicted_ms"} == set(entry)
        assert isinstance(entry["predicted_ms"], float) and entry["predicted_ms"] > 0
    times = [e["predicted_ms"] for e in doc["ranked"]]
    assert times == sorted(times)
    top = rank_gemm("mi350x", "bf16", 4096, 4096, 4096, top=1)[0]
    assert {k: v for k, v in doc["ranked"][0].items() if k != "predicted_ms"} == top.config


def test_nvidia_output_has_no_amd_knobs(tune):
    doc = json.loads(
        tune("--target", "h200", "--dtype", "fp8", "--m", "16", "--n", "4096", "--k", "4096", "--format", "json").stdout
    )
    assert doc["ranked"] and all(set(e) == CONFIG_KEYS | {"GROUP_M", "predicted_ms"} for e in doc["ranked"])
    assert any(e["BLOCK_M"] == 32 for e in doc["ranked"])  # small tiles offered for tiny M


def test_table_output_runs(tune):
    result = tune(
        "--target", "gfx942", "--dtype", "fp8e4m3fnuz", "--m", "1", "--n", "8192", "--k", "8192", "--top", "3"
    )
    assert result.exit_code == 0 and "1x8192x8192" in result.stdout and "pred ms" in result.stdout


def test_candidates_file_ranked_and_infeasible_dropped_with_note(tmp_path, tune):
    candidates = [
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2},
        {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 4},
        {
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_K": 64,
            "num_warps": 4,
            "num_stages": 2,
            "GROUP_M": 4,
            "waves_per_eu": 2,
            "matrix_instr_nonkdim": 16,
        },
    ]
    path = tmp_path / "cands.json"
    path.write_text(json.dumps(candidates))
    result = tune(
        "--target",
        "mi300x",
        "--dtype",
        "bf16",
        "--m",
        "4096",
        "--n",
        "4096",
        "--k",
        "4096",
        "--candidates",
        str(path),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    ranked = json.loads(result.stdout)["ranked"]
    assert len(ranked) == 2
    assert ranked[0]["GROUP_M"] == 4 and ranked[0]["matrix_instr_nonkdim"] == 16
    assert "dropped candidate 1" in result.stderr and "LDS" in result.stderr


def test_problems_batch_keeps_order(tmp_path, tune):
    problems = [
        {"m": 1, "n": 4096, "k": 4096, "dtype": "bf16"},
        {"m": 8192, "n": 8192, "k": 8192, "dtype": "fp8e4m3"},
        {"m": 65536, "n": 1000, "k": 480, "dtype": "fp32"},
    ]
    path = tmp_path / "problems.json"
    path.write_text(json.dumps(problems))
    result = tune("--target", "mi355x", "--problems", str(path), "--top", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert isinstance(doc, list) and len(doc) == 3
    for problem, entry in zip(problems, doc):
        expected = rank_gemm("mi355x", problem["dtype"], problem["m"], problem["n"], problem["k"], top=2)
        assert [e["predicted_ms"] for e in entry["ranked"]] == [round(r.predicted_ms, 6) for r in expected]
    assert doc[1]["ranked"][0]["predicted_ms"] > doc[0]["ranked"][0]["predicted_ms"]


@pytest.mark.parametrize(
    "content, message",
    [
        (
            '[{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}, {"BLOCK_M": 64}]',
            "entry 1: missing key 'BLOCK_N'",
        ),
        (
            '[{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": "four", "num_stages": 2}]',
            "entry 0: key 'num_warps' must be an integer",
        ),
        ('{"BLOCK_M": 64}', "expected a non-empty JSON list"),
        ("[1, 2", "not valid JSON"),
    ],
)
def test_malformed_candidates_exit_2_naming_entry_and_key(tmp_path, content, message, tune):
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = tune(
        "--target", "h200", "--dtype", "bf16", "--m", "64", "--n", "64", "--k", "64", "--candidates", str(path)
    )
    assert result.exit_code == 2
    assert message in result.output and str(path) in result.output
    assert "Traceback" not in result.output


def test_usage_errors_exit_2(tmp_path, tune):
    assert tune("--target", "h200", "--dtype", "bf16", "--m", "64").exit_code == 2  # missing --n/--k
    fnuz = tune("--target", "mi350x", "--dtype", "fp8e4m3fnuz", "--m", "64", "--n", "64", "--k", "64")
    assert fnuz.exit_code == 2 and "gfx942" in fnuz.output
    bad = tmp_path / "p.json"
    bad.write_text('[{"m": 1, "n": 2, "k": 0, "dtype": "bf16"}]')
    result = tune("--target", "h200", "--problems", str(bad))
    assert result.exit_code == 2 and "entry 0: key 'k'" in result.output


def test_hostile_sizes_and_files_exit_2_without_traceback(tmp_path, tune):
    huge = str(10**400)  # a float overflow in the model before sizes were capped
    result = tune("--target", "mi350x", "--dtype", "bf16", "--m", huge, "--n", "1", "--k", "1")
    assert result.exit_code == 2 and "GEMM size m must be at most 2**53" in result.output
    problems = tmp_path / "p.json"
    problems.write_text(f'[{{"m": {huge}, "n": 1, "k": 1, "dtype": "bf16"}}]')
    assert tune("--target", "mi350x", "--problems", str(problems)).exit_code == 2
    binary = tmp_path / "c.json"
    binary.write_bytes(b"\xff\xfe[]")
    for flag in ("--candidates", "--problems"):
        result = tune("--target", "mi350x", "--dtype", "bf16", "--m", "8", "--n", "8", "--k", "8", flag, str(binary))
        assert result.exit_code == 2 and f"{binary}: cannot read" in result.output
        assert "Traceback" not in result.output


def test_no_candidate_runs_json_stays_json_and_advice_says_so(tmp_path, tune):
    path = tmp_path / "c.json"
    path.write_text('[{"BLOCK_M": 1024, "BLOCK_N": 1024, "BLOCK_K": 256, "num_warps": 4, "num_stages": 2}]')
    args = ("--dtype", "bf16", "--m", "128", "--n", "128", "--k", "128", "--candidates", str(path), "--format", "json")
    result = tune("--target", "h100", *args)
    assert result.exit_code == 0

    def strict(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    library = json.loads(result.stdout, parse_constant=strict)["library"]  # no Infinity
    assert library["triton_ms"] is None and not library["library_faster"]
    assert library["note"].startswith("no candidate Triton config runs on h100")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\xff\xfe[]", "cannot read: not UTF-8 text"),
        (b"[" + b"9" * 5000 + b"]", "too many digits"),
        (
            b'[{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 1' + b"0" * 400 + b"}]",
            "entry 0: key 'num_stages' must be at most 2**31 - 1",
        ),
    ],
)
def test_unreadable_or_absurd_candidates_exit_2_without_traceback(tmp_path, content, message, tune):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    result = tune(
        "--target", "mi300x", "--dtype", "bf16", "--m", "64", "--n", "64", "--k", "64", "--candidates", str(path)
    )
    assert result.exit_code == 2 and message in result.output and str(path) in result.output
    problems = tmp_path / "problems.json"
    problems.write_bytes(content)
    result = tune("--target", "mi300x", "--problems", str(problems))
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_waves_per_eu_past_the_simd_is_dropped_with_a_note(tmp_path, tune):
    # waves_per_eu=1000 used to divide by zero in the spill model; over the SIMD's 8 waves the hint cannot hold
    path = tmp_path / "c.json"
    cfg = '{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2, "waves_per_eu": %d}'
    path.write_text("[" + ", ".join(cfg % w for w in (8, 9, 1000)) + "]")
    shape = "--target mi300x --dtype bf16 --m 64 --n 64 --k 64".split()
    result = tune(*shape, "--candidates", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    assert [r["waves_per_eu"] for r in json.loads(result.stdout)["ranked"]] == [8]
    assert "waves_per_eu=9 > mi300x's 8 waves per SIMD" in result.stderr


@pytest.mark.parametrize(
    "entry, message",
    [
        (
            '{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2, "BLOCK_SIZE_M": 128}',
            "key 'BLOCK_SIZE_M' sets 'BLOCK_M' a second time",
        ),
        (
            '{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 3, "num_stages": 2}',
            "key 'num_warps' must be a power of two",
        ),
    ],
)
def test_conflicting_synonyms_and_odd_warps_are_refused(tmp_path, entry, message, tune):
    # BLOCK_SIZE_M silently overrode BLOCK_M; num_warps=3 was ranked though Triton refuses it
    path = tmp_path / "c.json"
    path.write_text(f"[{entry}]")
    result = tune(
        "--target", "h100", "--dtype", "bf16", "--m", "64", "--n", "64", "--k", "64", "--candidates", str(path)
    )
    assert result.exit_code == 2 and message in result.output


def test_problems_entry_with_a_dtype_the_target_lacks_is_named(tmp_path, tune):
    path = tmp_path / "p.json"
    path.write_text('[{"m": 1, "n": 2, "k": 3, "dtype": "bf16"}, {"m": 1, "n": 2, "k": 3, "dtype": "fp8e4m3"}]')
    result = tune("--target", "mi300x", "--problems", str(path))
    assert result.exit_code == 2 and f"problems file {path}: entry 1: dtype fp8e4m3" in result.output
