"""`porter targets`: list the target specs porter knows, with their derived peaks."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

from porter.errors import UsageError
from porter.targets import all_targets, get_target


def _row(target) -> dict:
    peaks = {dtype: round(target.peak_tflops(dtype), 1) for dtype in target.matrix_flops_per_unit_clk}
    return {
        "name": target.name,
        "arch": target.arch,
        "vendor": target.vendor,
        "units": target.units,
        "clock_ghz": target.clock_ghz,
        "wave_size": target.wave_size,
        "lds_kib": target.lds_bytes // 1024,
        "hbm_gb": round(target.hbm_bytes / 1e9),
        "hbm_tbps": target.hbm_gbps / 1000,
        "fp8": target.fp8_formats["e4m3"],
        "tf32": target.tf32,
        "peak_tflops": peaks,
    }


def targets_command(
    name: str = typer.Argument(None, help="Show one target (name or gfx arch) in full."),
    output_format: str = typer.Option("table", "--format", help="table or json"),
) -> None:
    """List the targets porter knows (name, arch, units, LDS, HBM, fp8 format, TF32, derived peaks)."""
    if output_format not in ("table", "json"):
        raise UsageError(f"--format must be table or json, got {output_format!r}")
    chosen = [get_target(name)] if name else list(all_targets().values())
    rows = [_row(t) for t in chosen]
    if output_format == "json":
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="porter targets")
    for column in (
        "name",
        "arch",
        "units",
        "clock",
        "wave",
        "LDS KiB",
        "HBM GB",
        "TB/s",
        "fp8 e4m3",
        "TF32",
        "bf16 TF/s",
        "fp8 TF/s",
    ):
        table.add_column(column)
    for row in rows:
        peaks = row["peak_tflops"]
        table.add_row(
            row["name"],
            row["arch"],
            str(row["units"]),
            f"{row['clock_ghz']:g}",
            str(row["wave_size"]),
            str(row["lds_kib"]),
            str(row["hbm_gb"]),
            f"{row['hbm_tbps']:g}",
            row["fp8"],
            row["tf32"],
            f"{peaks.get('bf16', 0):.0f}",
            f"{peaks.get('fp8', 0):.0f}",
        )
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("targets")(targets_command)
