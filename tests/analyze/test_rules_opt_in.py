"""Opt-in rules (`enabled_by_default: false`): off unless named by id, name or the "opt-in" group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from porter.analyze import load_rules
from porter.analyze.rules import OPT_IN
from porter.cli.scan import run_scan
from porter.errors import ConfigError

RULE = (
    "id: {id}\nname: {name}\ncategory: pytorch\nsummary: s\nseverity: warning\nmessage: m\nmatch: [{{call: {call}}}]\n"
)


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "pytorch"
    folder.mkdir()
    (folder / "PT291-loud.yaml").write_text(RULE.format(id="PT291", name="loud", call="torch.foo"))
    (folder / "PT292-quiet.yaml").write_text(
        RULE.format(id="PT292", name="quiet", call="torch.bar") + "enabled_by_default: false\n"
    )
    return folder


def ids(catalog: Path, **options) -> list[str]:
    return load_rules([catalog], **options).ids


def test_opt_in_rule_is_off_by_default_and_by_prefix_or_category(catalog):
    assert ids(catalog) == ["PT291"]
    assert ids(catalog, select=["PT2"]) == ["PT291"]
    assert ids(catalog, select=["PT29"]) == ["PT291"]
    assert ids(catalog, select=["pytorch"]) == ["PT291"]


def test_opt_in_rule_runs_when_named(catalog):
    assert ids(catalog, select=["PT292"]) == ["PT292"]
    assert ids(catalog, select=["quiet"]) == ["PT292"]
    assert ids(catalog, extend_select=["PT292"]) == ["PT291", "PT292"]
    assert ids(catalog, extend_select=[OPT_IN]) == ["PT291", "PT292"]
    assert ids(catalog, select=["PT2", OPT_IN]) == ["PT291", "PT292"]
    assert ids(catalog, extend_select=[OPT_IN], ignore=["PT292"]) == ["PT291"]


def test_fingerprint_follows_extend_select(catalog):
    assert load_rules([catalog]).fingerprint != load_rules([catalog], extend_select=["PT292"]).fingerprint


def test_unknown_extend_select_key_is_an_error(catalog):
    with pytest.raises(ConfigError, match="extend_select: 'PT999'"):
        load_rules([catalog], extend_select=["PT999"])


def test_bundled_opt_in_rules_are_documented_as_such():
    """Every opt-in rule in the catalog says why in its docs, so `porter rules` readers know."""
    everything = load_rules(extend_select=[OPT_IN])
    default = set(load_rules().ids)
    for rule in everything.rules:
        assert (rule.id in default) == rule.enabled_by_default
        if not rule.enabled_by_default:
            assert "opt-in" in rule.docs.get("why", "").lower(), f"{rule.path}: docs.why must say why it is opt-in"


def _scanned_rules(capsys) -> set[str]:
    return {f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]}


def test_scan_extend_select_flag_and_config(tmp_path, catalog, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "m.py").write_text("import torch\ntorch.foo(1)\ntorch.bar(1)\n")
    run_scan(project, rule_paths=[catalog], use_cache=False, output_format="json", fail_on="never")
    assert _scanned_rules(capsys) == {"PT291"}
    run_scan(project, rule_paths=[catalog], extend_select=("PT292",), use_cache=False, output_format="json")
    assert _scanned_rules(capsys) == {"PT291", "PT292"}
    (project / "pyproject.toml").write_text('[tool.porter]\nextend_select = ["opt-in"]\n')
    run_scan(project, rule_paths=[catalog], use_cache=False, output_format="json")
    assert _scanned_rules(capsys) == {"PT291", "PT292"}


def test_variant_makes_a_rule_opt_in_on_its_targets_only(tmp_path):
    """A variant saying `enabled_by_default: false` silences the rule on the targets it covers unless it is named."""
    from porter.analyze import analyze_source
    from porter.targets import get_target

    folder = tmp_path / "pytorch"
    folder.mkdir()
    (folder / "PT293-split.yaml").write_text(
        RULE.format(id="PT293", name="split", call="torch.baz")
        + "variants:\n- when: {fp8_family: fnuz}\n  enabled_by_default: false\n"
    )
    code = "import torch\ntorch.baz(1)\n"

    def reported(target: str, **options) -> bool:
        ruleset = load_rules([folder], **options)
        return any(f.rule == "PT293" for f in analyze_source(code, "m.py", get_target(target), ruleset))

    assert reported("mi350x") and not reported("mi300x")
    assert not reported("mi300x", select=["PT2"])  # a prefix does not name it
    assert reported("mi300x", extend_select=["PT293"]) and reported("mi300x", extend_select=[OPT_IN])
    assert reported("mi300x", select=["split"])


def test_bundled_per_target_opt_in_is_documented():
    from porter.report.rule_docs import rules_markdown
    from porter.report.rules import rule_info

    pt115 = rule_info(load_rules().get("PT115"))
    assert pt115.enabled_by_default and pt115.opt_in_on == ("fp8_family=fnuz",)
    assert "opt-in" in pt115.docs["why"]
    assert "| on (opt-in where fp8_family=fnuz) |" in rules_markdown([pt115])
