"""`porter rule`, `porter rules` and the generated docs/rules.md."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from porter.cli import app
from porter.cli.rules import _catalog
from porter.report.rule_docs import rules_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_docs_rules_md_is_generated_from_the_catalog():
    assert DOCS.read_text(encoding="utf-8") == rules_markdown(_catalog()), (
        "docs/rules.md is stale: regenerate it with `porter rules --format markdown > docs/rules.md`"
    )


def test_rule_explains_one_rule_by_id_or_name():
    by_id = CliRunner().invoke(app, ["rule", "pt101"])
    assert by_id.exit_code == 0 and by_id.output.startswith("PT101 num-warps-32")
    assert "Why:" in by_id.output and "https://" in by_id.output
    by_name = CliRunner().invoke(app, ["rule", "num-warps-32", "--format", "json"])
    assert json.loads(by_name.output)[0]["id"] == "PT101"


def test_unknown_rule_is_a_usage_error():
    outcome = CliRunner().invoke(app, ["rule", "PT999"])
    assert outcome.exit_code != 0 and "no rule 'PT999'" in str(outcome.exception)


def test_rules_lists_every_rule_once():
    listed = json.loads(CliRunner().invoke(app, ["rules", "--format", "json"]).output)
    ids = [entry["id"] for entry in listed]
    assert ids == sorted(set(ids)) and "PT101" in ids and "PT000" not in ids
    table = CliRunner().invoke(app, ["rules"]).output.splitlines()
    assert len(table) == len(ids) and table[0].startswith(ids[0])
