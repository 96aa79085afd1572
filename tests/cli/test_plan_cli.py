"""`porter plan` on the command line: md/json/PNG output, --extract, errors as exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from porter.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_plan_writes_md_json_png(tmp_path, capsys):
    out = tmp_path / "report"
    assert (
        main(
            [
                "plan",
                str(ROOT / "fixtures" / "dlrm.yaml"),
                "--from",
                "b200",
                "--to",
                "mi350x",
                "--out",
                str(out),
                "--format",
                "json",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads((out / "plan.json").read_text())
    assert printed == stored
    assert stored["source"] == "b200" and stored["target"] == "mi350x"
    assert stored["speedup_co_design_vs_direct_port"] > 1
    assert {p["id"] for p in stored["proposals"]} >= {"tf32-to-bf16x3", "larger-batch", "hbm-resident-tables"}
    md = (out / "plan.md").read_text()
    assert "Co-design vs direct port" in md and "![memory and step-time breakdown](plan.png)" in md
    assert (out / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plan_markdown_to_stdout_with_gpus_override(capsys):
    assert main(["plan", str(ROOT / "fixtures" / "dlrm.yaml"), "--gpus", "16"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# porter plan: dlrm-ranking-b200, b200 -> mi350x")
    assert "| mi350x: direct port | 16 |" in text


def test_extract_writes_model_yaml(tmp_path):
    assert main(["plan", "--extract", str(ROOT / "fixtures" / "dlrm_model"), "--out", str(tmp_path)]) == 0
    assert "TODO(porter)" in (tmp_path / "model.yaml").read_text()


def test_bad_input_exits_2_with_file_and_field(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "gpus: 1\nbatch_size_per_gpu: 8\ndense: {num_dense_features: 1, bottom_mlp: [4], top_mlp: [1]}\n"
        "tables: [{name: a, rows: 10, dim: 4, sharding: diagonal}]\n"
    )
    assert main(["plan", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "tables[0] (a).sharding" in err
    assert main(["plan", str(ROOT / "fixtures" / "dlrm.yaml"), "--to", "mi999"]) == 2
    assert main(["plan"]) == 2
    assert main(["plan", "--extract", str(tmp_path / "absent")]) == 2
    assert main(["plan", str(ROOT / "fixtures" / "dlrm.yaml"), "--format", "xml"]) == 2


def test_chart_shows_every_recipe_with_one_colour_per_category():
    from porter.plan.model import load_model
    from porter.plan.proposals import co_design
    from porter.plan.report import _colours, chart_rows, chart_series
    from porter.targets import get_target

    plan = co_design(load_model(ROOT / "fixtures" / "dlrm.yaml"), get_target("b200"), get_target("mi350x"))
    rows = chart_rows(plan)
    assert plan.fewer_gpus_plan is not None and rows[-1] is plan.fewer_gpus_plan
    step = chart_series(rows, "step")
    # bar heights are the step times the tables print, not rescaled per sample
    assert [round(sum(v), 6) for v in zip(*step.values())] == pytest.approx([e.step.total for e in rows], rel=0.01)
    for kind in ("memory", "step"):
        series = chart_series(rows, kind)
        tallest = max(sum(v) for v in zip(*series.values()))
        assert all(max(values) >= 0.005 * tallest for values in series.values())  # no invisible legend entry
    colours = _colours(plan, rows)
    memory, time = set(plan.direct.memory.categories()), set(plan.direct.step.components())
    for a in memory - time:
        for b in time - memory:
            assert colours[a] != colours[b]


def test_chart_totals_and_labels_agree_with_the_tables():
    from porter.plan.model import load_model
    from porter.plan.proposals import co_design
    from porter.plan.report import LABEL_WIDTH, bar_labels, bar_totals, chart_rows, to_markdown
    from porter.targets import get_target

    plan = co_design(load_model(ROOT / "fixtures" / "dlrm.yaml"), get_target("b200"), get_target("mi350x"))
    rows = chart_rows(plan)
    recipes = [line.split(" | ") for line in to_markdown(plan).splitlines() if line.startswith("| ")][1 : len(rows) + 2]
    tables = {cells[0].lstrip("| "): cells for cells in recipes}
    for e, memory, step in zip(rows, bar_totals(rows, "memory"), bar_totals(rows, "step")):
        assert step == f"{tables[e.label][4]} ms" and memory == f"{tables[e.label][6]} GB"  # the recipes table's
    for e, label in zip(rows, bar_labels(rows)):
        assert all(len(line) <= LABEL_WIDTH for line in label.splitlines()) and f"{e.model.gpus} GPUs" in label


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("headroom: 0.10", "headroom: .nan"), "field 'headroom': expected a finite number of at most 2**53, got nan"),
        (("pooling: 40,", "pooling: .inf,"), "pooling': expected a finite number of at most 2**53, got inf"),
        (("rows: 900000000,", f"rows: {10**400},"), "rows': expected a finite number of at most 2**53"),
        (("gpus: 8\n", "gpus: 100000000000\n"), "field 'gpus': 100000000000 is out of range, must be [1, 65536]"),
        (("tables:", "tables: [unclosed\n"), "not valid YAML: "),
    ],
)
def test_hostile_numbers_and_yaml_exit_2_on_one_line(tmp_path, capsys, edit, message):
    path = tmp_path / "m.yaml"
    text = (ROOT / "fixtures" / "dlrm.yaml").read_text()
    assert edit[0] in text
    path.write_text(text.replace(edit[0], edit[1], 1))
    assert main(["plan", str(path), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_unreadable_model_and_out_that_is_a_file_exit_2(tmp_path, capsys):
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe")
    assert main(["plan", str(binary)]) == 2
    assert "cannot read the model description" in capsys.readouterr().err
    a_file = tmp_path / "taken"
    a_file.write_text("mine\n")
    assert main(["plan", str(ROOT / "fixtures" / "dlrm.yaml"), "--out", str(a_file)]) == 2
    assert main(["plan", "--extract", str(ROOT / "fixtures" / "dlrm_model"), "--out", str(a_file)]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err and a_file.read_text() == "mine\n"
    assert main(["plan", str(ROOT / "fixtures" / "dlrm.yaml"), "--gpus", "100000"]) == 2
