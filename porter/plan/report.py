"""The co-design report: JSON (everything), markdown (for people) and a PNG chart (optional)."""

from __future__ import annotations

import json
import os
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from porter.plan.evaluate import Evaluation
from porter.plan.gemm import gemm_source
from porter.plan.proposals import CoDesign
from porter.plan.step import plan_constants

CALIBRATED_TARGETS = ("h200",)  # targets whose plan_model was fitted on measurements (bench/plan/)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _attribution(plan: CoDesign) -> list[dict]:
    """Each combined step's throughput factor over the step before it (they multiply to the total)."""
    rows = []
    for title, before, after in zip(plan.step_titles, plan.waterfall, plan.waterfall[1:]):
        rows.append(
            {
                "step": title,
                "factor": round(after.throughput / before.throughput, 4),
                "step_ms": round(after.step.total, 4),
                "throughput": round(after.throughput, 1),
            }
        )
    return rows


def _constants_note(evaluation: Evaluation) -> str:
    name = evaluation.target.name
    state = "calibrated on measurements" if name in CALIBRATED_TARGETS else "not calibrated on this target (assumed)"
    return f"{name}: {state}"


def to_json(plan: CoDesign) -> dict:
    target, source = plan.direct.target, plan.source_current.target
    return {
        "model": plan.direct.model.name,
        "source": source.name,
        "target": target.name,
        "speedup_co_design_vs_direct_port": round(plan.speedup, 4),
        "target_co_design_vs_source_current": round(plan.combined.throughput / plan.source_current.throughput, 4),
        "attribution": _attribution(plan),
        "recipes": {
            "source_current": plan.source_current.to_dict(),
            "direct_port": plan.direct.to_dict(),
            "co_design": plan.combined.to_dict(),
            "fewer_gpus": plan.fewer_gpus_plan.to_dict() if plan.fewer_gpus_plan else None,
        },
        "proposals": [p.to_dict() for p in plan.proposals],
        "model_notes": {
            "gemm_source": {t.name: gemm_source(plan_constants(t)["gemm_source"]) for t in (source, target)},
            "constants": [_constants_note(plan.source_current), _constants_note(plan.direct)],
            "plan_model": {t.name: plan_constants(t) for t in (source, target)},
        },
    }


def _ms(value: float) -> str:
    return f"{value:.2f}"


def _gb(value: float) -> str:
    return f"{value / 1e9:.1f}"


def _recipes_table(rows: list[Evaluation]) -> list[str]:
    out = [
        "| recipe | GPUs | batch/GPU | GEMM precision | step (ms) | samples/s | HBM/GPU (GB) | budget (GB) | fits |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in rows:
        out.append(
            f"| {e.label} | {e.model.gpus} | {e.model.batch_size_per_gpu} | {e.step.precision} | "
            f"{_ms(e.step.total)} | {e.throughput:,.0f} | {_gb(e.memory.total)} | {_gb(e.memory.budget)} | "
            f"{'yes' if e.memory.fits else '**no**'} |"
        )
    return out


def _breakdown_table(rows: list[Evaluation], kind: str) -> list[str]:
    get = (lambda e: e.step.components()) if kind == "step" else (lambda e: e.memory.categories())
    fmt = _ms if kind == "step" else _gb
    keys = list(get(rows[0]))
    out = [
        "| "
        + ("component (ms)" if kind == "step" else "category (GB, busiest GPU)")
        + " | "
        + " | ".join(e.label for e in rows)
        + " |",
        "|---" * (len(rows) + 1) + "|",
    ]
    for key in keys:
        out.append(f"| {key} | " + " | ".join(fmt(get(e)[key]) for e in rows) + " |")
    total = (lambda e: e.step.total) if kind == "step" else (lambda e: e.memory.total)
    out.append("| **total** | " + " | ".join(f"**{fmt(total(e))}**" for e in rows) + " |")
    return out


def to_markdown(plan: CoDesign, chart: str | None = None) -> str:
    source, target = plan.source_current.target, plan.direct.target
    rows = [plan.source_current, plan.direct, plan.combined]
    lines = [f"# porter plan: {plan.direct.model.name}, {source.name} -> {target.name}", ""]
    lines.append(
        f"**Co-design vs direct port: {plan.speedup:.2f}x the throughput** "
        f"({plan.direct.throughput:,.0f} -> {plan.combined.throughput:,.0f} samples/s on "
        f"{plan.combined.model.gpus} GPUs). Against the current recipe on {source.name}: "
        f"{plan.combined.throughput / plan.source_current.throughput:.2f}x."
    )
    lines += ["", "Where it comes from (each step's factor over the one before; they multiply):", ""]
    for row in _attribution(plan):
        lines.append(f"- {row['step']}: x{row['factor']:.3f} ({row['step_ms']:.2f} ms/step)")
    lines += ["", "## Recipes", ""] + _recipes_table(rows + ([plan.fewer_gpus_plan] if plan.fewer_gpus_plan else []))
    lines += ["", "## Step time breakdown (busiest GPU)", ""] + _breakdown_table(rows, "step")
    lines += ["", "## Memory per GPU", ""] + _breakdown_table(rows, "memory")
    lines += ["", "## Proposals", ""]
    for p in plan.proposals:
        e = p.result
        lines += [
            f"### {p.title} (`{p.id}`){'' if p.in_combined else ' (not in the combined plan)'}",
            "",
            f"- **Change:** {p.change}",
            f"- **Why:** {p.why}",
            f"- **Projected on {target.name}:** {e.step.total:.2f} ms/step, {e.throughput:,.0f} samples/s "
            f"({p.speedup:.2f}x the direct port; {p.per_gpu_speedup:.2f}x per GPU), "
            f"{_gb(e.memory.total)} GB of {_gb(e.memory.budget)} GB per GPU",
        ]
        lines += [f"- {note}" for note in p.notes] + [""]
    lines += ["## Placement", "", "| table | " + " | ".join(e.label for e in rows) + " |", "|---" * 4 + "|"]
    for name in plan.direct.plan.summary():
        lines.append(f"| {name} | " + " | ".join(e.plan.summary().get(name, "") for e in rows) + " |")
    lines += ["", "## Model notes", ""]
    for t in (source, target):
        lines.append(f"- GEMMs on {t.name}: {gemm_source(plan_constants(t)['gemm_source'])}")
    lines += [
        f"- Step-model constants: {_constants_note(plan.source_current)}; {_constants_note(plan.direct)}. "
        "The model's error on an H200 is in bench/plan/ (`python bench/plan/compare.py`).",
        "- Communication uses the interconnect facts in porter/targets/specs.yaml; all-reduce is taken to "
        "overlap the dense backward, the all-to-all not at all.",
    ]
    if chart:
        lines += ["", f"![memory and step-time breakdown]({chart})"]
    return "\n".join(lines) + "\n"


MIN_SHARE = 0.005  # categories under this share of the tallest bar are left out of the legend
LABEL_WIDTH = 26  # characters per x-axis label line: four recipes side by side at the chart's width


def chart_rows(plan: CoDesign) -> list[Evaluation]:
    """Every recipe the tables list, in their order."""
    return [plan.source_current, plan.direct, plan.combined] + ([plan.fewer_gpus_plan] if plan.fewer_gpus_plan else [])


def chart_series(rows: list[Evaluation], kind: str) -> dict[str, list[float]]:
    """Per category, the bar heights of each recipe: GB per GPU, or ms per step as the tables give them.
    Categories too small to see in any recipe are dropped."""
    parts = [e.memory.categories() if kind == "memory" else e.step.components() for e in rows]
    scale = 1e9 if kind == "memory" else 1.0
    series = {key: [p[key] / scale for p in parts] for key in parts[0]}
    tallest = max(sum(values) for values in zip(*series.values())) or 1.0
    return {key: values for key, values in series.items() if max(values) >= MIN_SHARE * tallest}


def bar_totals(rows: list[Evaluation], kind: str) -> list[str]:
    """The label over each bar: the recipe's total as the tables print it (categories too small to draw
    still count, so a label never disagrees with the tables)."""
    if kind == "memory":
        return [f"{_gb(e.memory.total)} GB" for e in rows]
    return [f"{_ms(e.step.total)} ms" for e in rows]


def bar_labels(rows: list[Evaluation], width: int = LABEL_WIDTH) -> list[str]:
    """Each recipe's name and figures, wrapped so neighbouring labels do not run into each other."""
    labels = []
    for e in rows:
        parts = [
            *e.label.split(": ", 1),
            f"{e.model.gpus} GPUs, batch {e.model.batch_size_per_gpu}/GPU",
            f"{e.throughput / 1e6:.2f}M samples/s",
        ]
        labels.append("\n".join(line for part in parts for line in textwrap.wrap(part, width)))
    return labels


def _colours(plan: CoDesign, rows: list[Evaluation]) -> dict[str, Any]:
    """One colour per category name across both panels: a shared name is the same category."""
    import matplotlib

    names = list(dict.fromkeys([*rows[0].memory.categories(), *rows[0].step.components()]))
    palette = matplotlib.colormaps["tab20"]
    return {name: palette(index % palette.N) for index, name in enumerate(names)}


def render_chart(plan: CoDesign, path: Path) -> str | None:
    """Stacked bars of memory per GPU and step time of every recipe; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = chart_rows(plan)
    colours = _colours(plan, rows)
    labels = bar_labels(rows)
    fig, axes = plt.subplots(1, 2, figsize=(15, 6))
    for ax, kind in zip(axes, ("memory", "step")):
        bottoms = [0.0] * len(rows)
        for key, values in chart_series(rows, kind).items():
            ax.bar(labels, values, bottom=bottoms, label=key, color=colours[key])
            bottoms = [b + v for b, v in zip(bottoms, values)]
        for i, (height, total) in enumerate(zip(bottoms, bar_totals(rows, kind))):
            ax.annotate(
                total, (i, height), ha="center", va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points"
            )
        if kind == "memory":
            for i, e in enumerate(rows):
                ax.hlines(e.memory.budget / 1e9, i - 0.4, i + 0.4, colors="black", linestyles="dashed")
            ax.set_ylabel("GB per GPU (dashed: HBM less headroom)")
            ax.set_title("Memory per GPU")
        else:
            ax.set_ylabel("ms per step (busiest GPU)")
            ax.set_title("Step time, as in the tables")
        ax.set_ylim(0, max(bottoms) * 1.12 or 1)
        ax.legend(fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
    fig.suptitle(
        f"{plan.direct.model.name}: {plan.source_current.target.name} -> {plan.direct.target.name} "
        f"(co-design {plan.speedup:.2f}x the direct port)"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return path.name


def write_report(plan: CoDesign, out: Path) -> dict[str, Path]:
    """Write plan.json, plan.md and plan.png (when matplotlib is there) into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    chart = render_chart(plan, out / "plan.png")
    written = {"json": out / "plan.json", "md": out / "plan.md"}
    if chart:
        written["png"] = out / chart
    _write_atomic(written["json"], (json.dumps(to_json(plan), indent=2) + "\n").encode())
    markdown = to_markdown(plan, chart)
    if not chart:
        markdown += "\n(chart skipped: matplotlib is not installed; `pip install porter[plot]`)\n"
    _write_atomic(written["md"], markdown.encode())
    return written
