"""`porter scan --kernels`: Triton kernels and autotune configs against the target's limits."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from porter.report.terminal import _Discard


def show(val) -> str:
    """A folded value for a table cell: the value, the alternatives, or the source text."""
    if not isinstance(val, dict):
        return "-" if val is None else str(val)
    values = val.get("values") or []
    if val.get("known") and values:
        return "|".join(str(value) for value in values)
    return f"? ({val['text']})" if val.get("text") else "?"


def _limit_cell(value, limit, ok) -> Text:
    if value is None:
        return Text("?", style="dim")
    text = f"{value}/{limit}" if limit is not None else str(value)
    return Text(text, style="red" if ok is False else "")


def _config_rows(path: str, kernel: dict):
    autotune = kernel.get("autotune") or {}
    configs = autotune.get("configs") or []
    if not configs:
        yield [path, kernel["name"], str(kernel["line"]), "-", "-", "-", "-", Text("-"), Text("-")]
        return
    for config in configs:
        line = str(config.get("line", kernel["line"]))
        yield _row(path, kernel["name"], line, str(config.get("index", "")), config)


def _row(path: str, kernel: str, line: str, label: str, entry: dict) -> list:
    """One table row for an autotune config or a launch site: its meta-parameters, options and estimates."""
    options = entry.get("options") or {}
    estimate = entry.get("estimate") or {}
    meta = ", ".join(f"{key}={show(val)}" for key, val in (entry.get("meta") or {}).items())
    return [
        path,
        kernel,
        line,
        label,
        meta,
        show(options.get("num_warps")),
        show(options.get("num_stages")),
        _limit_cell(estimate.get("threads"), estimate.get("thread_limit"), estimate.get("threads_ok")),
        _limit_cell(estimate.get("lds_bytes"), estimate.get("lds_limit"), estimate.get("lds_ok")),
    ]


def kernels_table(inventory) -> Table:
    table = Table(title=f"Triton kernels: {inventory.target}", title_justify="left")
    for column in ("file", "kernel", "line", "config", "meta", "warps", "stages", "threads/limit", "LDS est./limit"):
        table.add_column(column, overflow="fold", no_wrap=column in ("file", "kernel", "line", "config"))
    for record in inventory.files:
        for kernel in record.get("kernels") or []:
            for row in _config_rows(record["path"], kernel):
                table.add_row(*row)
        for launch in record.get("launches") or []:
            row = _launch_row(record["path"], launch)
            if row:
                table.add_row(*row)
    return table


def _launch_row(path: str, launch: dict):
    """A launch site that sets launch options itself (`kernel[grid](..., num_warps=8)`)."""
    if not launch.get("options"):
        return None
    return _row(path, launch.get("kernel") or "?", str(launch.get("line", "")), "launch", launch)


def _totals(inventory) -> str:
    kernels = [kernel for record in inventory.files for kernel in record.get("kernels") or []]
    configs = [c for kernel in kernels for c in ((kernel.get("autotune") or {}).get("configs") or [])]
    over = [
        c
        for c in configs
        if (c.get("estimate") or {}).get("threads_ok") is False or (c.get("estimate") or {}).get("lds_ok") is False
    ]
    return (
        f"{len(kernels)} kernel(s), {len(configs)} autotune config(s) in {len(inventory.files)} file(s); "
        f"{len(over)} config(s) over a {inventory.target} limit. LDS figures are estimates; "
        f"`porter verify` reads the compiled kernel's."
    )


def print_kernels(inventory, console: Console) -> None:
    console.print(kernels_table(inventory))
    console.print(_totals(inventory))
    for note in inventory.skipped:
        console.print(Text(f"skipped {note.path}: {note.reason}", style="dim"))


def render_kernels_text(inventory, width: int = 160) -> str:
    console = Console(record=True, width=width, color_system=None, force_terminal=False, file=_Discard())
    print_kernels(inventory, console)
    return console.export_text()


def render_kernels_json(inventory) -> str:
    document = {
        "target": inventory.target,
        "files": inventory.files,
        "skipped": [{"path": note.path, "reason": note.reason} for note in inventory.skipped],
    }
    return json.dumps(document, indent=2, default=str) + "\n"
