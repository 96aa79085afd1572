"""`porter tune gemm`: rank Triton GEMM configs for a target with the analytical model.

JSON output (--format json): {"ranked": [{config keys..., "predicted_ms": float}, ...] best first,
"library": {...}} (the vendor BLAS's predicted time beside the best Triton config's, and whether
it is predicted faster: porter.records.LibraryAdvice);
with --problems FILE, a list of those objects in the order of the problems. Candidates that cannot
run on the target (threads, LDS, accumulator registers) are dropped from the ranking; a note on
stderr names each one and why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from porter.cli.errors import bugs_reported
from porter.errors import UsageError
from porter.targets import get_target
from porter.tune import explain_infeasible, parse_config, rank_gemm
from porter.tune.config import GemmConfig
from porter.tune.library import library_advice

tune_app = typer.Typer(
    help="Pick Triton kernel configs from an analytical model (no warm-up runs).", no_args_is_help=True
)


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"{what} {path}: cannot read ({error.strerror or error})") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"{what} {path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    except UnicodeDecodeError as error:
        raise UsageError(f"{what} {path}: cannot read: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except ValueError:  # an integer past Python's limit for str -> int (4300 digits)
        raise UsageError(f"{what} {path}: cannot read: a number in it has too many digits") from None


def load_candidates(path: Path) -> list[GemmConfig]:
    """Configs from a JSON list of objects; UsageError naming the file, entry and key."""
    raw = _read_json(path, "candidates file")
    if not isinstance(raw, list) or not raw:
        raise UsageError(f"candidates file {path}: expected a non-empty JSON list of config objects")
    return [parse_config(entry, f"candidates file {path}: entry {i}") for i, entry in enumerate(raw)]


def load_problems(path: Path) -> list[dict[str, Any]]:
    """[{"m", "n", "k", "dtype"}, ...] checked entry by entry."""
    raw = _read_json(path, "problems file")
    if not isinstance(raw, list) or not raw:
        raise UsageError(f"problems file {path}: expected a non-empty JSON list of {{m, n, k, dtype}} objects")
    problems = []
    for i, entry in enumerate(raw):
        where = f"problems file {path}: entry {i}"
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: expected an object with keys m, n, k, dtype")
        for key in ("m", "n", "k"):
            value = entry.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{where}: key {key!r} must be a positive integer, got {value!r}")
        if not isinstance(entry.get("dtype"), str):
            raise UsageError(f"{where}: key 'dtype' must be a string such as \"bf16\"")
        problems.append(entry)
    return problems


def _note_dropped(target: str, dtype: str, candidates: list[GemmConfig] | None, where: str) -> None:
    for i, cfg in enumerate(candidates or ()):
        reason = explain_infeasible(target, dtype, cfg)
        if reason:
            typer.echo(f"porter tune: {where}dropped candidate {i} {cfg.to_dict()}: {reason}", err=True)


def _rank_json(target: str, dtype: str, m: int, n: int, k: int, candidates, top) -> dict[str, Any]:
    ranked = rank_gemm(target, dtype, m, n, k, candidates=candidates, top=top)
    best = ranked[0].predicted_ms if ranked else float("inf")
    advice = library_advice(get_target(target), dtype, m, n, k, best)
    return {"ranked": [r.to_json() for r in ranked], "library": advice.to_dict()}


_SHORT = {
    "BLOCK_M": "BM",
    "BLOCK_N": "BN",
    "BLOCK_K": "BK",
    "num_warps": "warps",
    "num_stages": "stages",
    "GROUP_M": "G",
    "waves_per_eu": "wpe",
    "matrix_instr_nonkdim": "nonk",
    "predicted_ms": "pred ms",
}


def _print_table(title: str, result: dict[str, Any]) -> None:
    rows = result["ranked"]
    table = Table(title=title)
    keys = list(rows[0]) if rows else ["predicted_ms"]
    for key in keys:
        table.add_column(_SHORT.get(key, key), justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*(f"{row[key]:.4f}" if key == "predicted_ms" else str(row[key]) for key in keys))
    Console(width=max(100, Console().width)).print(table)
    times = [row["predicted_ms"] for row in rows]
    if times != sorted(times):
        typer.echo("order: near-ties of the best (inside the model's noise) are reordered by the target's tie rule")
    typer.echo(f"library: {result['library']['note']}")


@tune_app.command("gemm")
def gemm_command(
    target: str = typer.Option(..., "--target", help="Target name, alias or arch (mi350x, gfx942, h200)."),
    dtype: str | None = typer.Option(None, "--dtype", help="bf16, fp16, fp8e4m3, fp8e4m3fnuz (gfx942) or fp32."),
    m: int | None = typer.Option(None, "--m", help="Rows of A and C."),
    n: int | None = typer.Option(None, "--n", help="Columns of B and C."),
    k: int | None = typer.Option(None, "--k", help="Reduction size."),
    candidates_file: Path | None = typer.Option(
        None, "--candidates", help="JSON list of configs to rank instead of the standard space."
    ),
    problems_file: Path | None = typer.Option(
        None, "--problems", help="JSON list of {m, n, k, dtype}: rank each, output in the same order."
    ),
    top: int | None = typer.Option(None, "--top", min=1, help="Keep the best K."),
    output_format: str = typer.Option("table", "--format", help="table or json"),
) -> None:
    """Rank GEMM configs for one problem (or a batch) by predicted time, best first."""
    with bugs_reported():
        _gemm(target, dtype, m, n, k, candidates_file, problems_file, top, output_format)


def _gemm(target, dtype, m, n, k, candidates_file, problems_file, top, output_format) -> None:
    if output_format not in ("table", "json"):
        raise UsageError(f"--format must be table or json, got {output_format!r}")
    get_target(target)  # an unknown target fails before any file is read
    candidates = load_candidates(candidates_file) if candidates_file else None
    if problems_file:
        problems, results = load_problems(problems_file), []
        for i, problem in enumerate(problems):
            try:
                _note_dropped(target, problem["dtype"], candidates, f"problem {i}: ")
                results.append(
                    _rank_json(target, problem["dtype"], problem["m"], problem["n"], problem["k"], candidates, top)
                )
            except UsageError as error:  # a dtype the target lacks, a size past the model: say which entry
                raise UsageError(f"problems file {problems_file}: entry {i}: {error}") from None
        if output_format == "json":
            typer.echo(json.dumps(results, indent=2))
        else:
            for problem, result in zip(problems, results):
                _print_table(f"{target} {problem['dtype']} {problem['m']}x{problem['n']}x{problem['k']}", result)
        return
    missing = [flag for flag, value in (("--dtype", dtype), ("--m", m), ("--n", n), ("--k", k)) if value is None]
    if missing or dtype is None or m is None or n is None or k is None:
        raise UsageError(f"porter tune gemm needs {', '.join(missing)} (or --problems FILE)")
    _note_dropped(target, dtype, candidates, "")
    result = _rank_json(target, dtype, m, n, k, candidates, top)
    if output_format == "json":
        typer.echo(json.dumps(result, indent=2))
    else:
        _print_table(f"{target} {dtype} {m}x{n}x{k}: predicted, best first", result)


def register(app: typer.Typer) -> None:
    """Add `porter tune` (subcommand `gemm`) to the app."""
    app.add_typer(tune_app, name="tune")
