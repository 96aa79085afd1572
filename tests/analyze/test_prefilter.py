"""The `ast` pre-filter (porter.analyze.prefilter): a rule's trigger must hold wherever the rule can hit."""

from __future__ import annotations

import ast
import functools

import pytest

from porter.analyze import analyze_source, load_rules
from porter.analyze.prefilter import VISITOR_TRIGGERS, possible_rules, rule_trigger, source_words
from porter.analyze.rules import OPT_IN, RUNTIME_RULES, rules_dir
from porter.analyze.scan import scan_tree
from porter.analyze.visitors import registered_names
from porter.config import PorterConfig
from porter.targets import get_target

RULE_FILES = sorted(p for p in rules_dir().rglob("*.yaml") if p.relative_to(rules_dir()).parts[0] != RUNTIME_RULES)
DEFAULT_TARGET = "mi300x"


@functools.cache
def _ruleset(path):
    return load_rules([path], extend_select=[OPT_IN])


def _invalid_cases():
    for path in RULE_FILES:
        rule = _ruleset(path).rules[0]
        for index, _ in enumerate(rule.tests.get("invalid") or ()):
            yield pytest.param(path, index, id=f"{path.stem}-invalid-{index}")


def _words(code: str):
    return source_words(ast.parse(code), code)


@pytest.mark.parametrize(("path", "index"), list(_invalid_cases()))
def test_every_invalid_example_passes_its_rules_trigger(path, index):
    """Each rule's own invalid examples: the trigger lets them through, and the engine narrowed to the rules
    the pre-filter leaves reports exactly what it reports with every rule."""
    ruleset = _ruleset(path)
    (rule,) = ruleset.rules
    item = rule.tests["invalid"][index]
    code = item if isinstance(item, str) else item["code"]
    target = get_target(
        item.get("target", rule.tests.get("target", DEFAULT_TARGET))
        if isinstance(item, dict)
        else rule.tests.get("target", DEFAULT_TARGET)
    )
    assert rule_trigger(rule)(_words(code)), f"{path.name}: the ast pre-filter rejects its invalid example:\n{code}"
    everything = analyze_source(code, "example.py", target, ruleset)
    narrowed = analyze_source(code, "example.py", target, ruleset, only=possible_rules(ruleset.rules, _words(code)))
    assert [f.to_dict() for f in narrowed] == [f.to_dict() for f in everything]


def test_declared_triggers_name_registered_visitors():
    unknown = set(VISITOR_TRIGGERS) - set(registered_names())
    assert not unknown, f"triggers for visitors nobody registers: {unknown}"


def test_string_literals_are_read_as_source_text():
    # the engine's string entries read raw text: "\\nvidia-smi" holds the token, its value does not
    code = 'a = "x\\nvidia-smi"\nb = f"{y}rocm"  # hip\nc = "é" + "ü"; d = "tail"\n'
    words = _words(code)
    assert "nvidia-smi" in words.strings
    assert "{y}rocm" in words.strings
    assert "hip" not in words.strings  # a comment is not a literal
    assert "tail" in words.strings  # columns after non-ASCII text are UTF-8 byte offsets


def test_words_hold_names_imports_keywords_and_numbers():
    code = (
        "import triton.language as tl\nfrom torch.backends import cudnn as cd\n"
        "cd.benchmark = True\nf(device='hip', n=32)\nwith torch.cuda.graph(g):\n    pass\n"
    )
    words = _words(code)
    assert {"triton", "language", "tl", "torch", "backends", "cudnn", "cd", "benchmark"} <= words.names
    assert "benchmark" in words.assigned and "device" in words.keywords and 32.0 in words.numbers
    assert words.uses_triton() and "graph" in words.with_calls


def test_project_re_exports_count_as_imports():
    words = _words("from pkg.utils import tl\nx = tl.dot(a, b)\n")
    assert not words.uses_triton()
    assert words.with_project_aliases({"tl": "triton.language"}).uses_triton()


def test_rules_without_a_hit_condition_are_left_out():
    ruleset = load_rules()
    words = _words("import os\n\ndef f(device):\n    return os.path.join(device, 'cuda')  # torch.version.cuda\n")
    assert "PT201" not in possible_rules(ruleset.rules, words)
    assert "PT201" in possible_rules(ruleset.rules, _words("import torch\nv = torch.version.cuda.split('.')\n"))


def test_scan_skips_files_no_rule_can_match(tmp_path):
    (tmp_path / "quiet.py").write_text("# torch.version.cuda and nvidia-smi only in a comment\nx = 1\n")
    (tmp_path / "loud.py").write_text("import torch\nmajor = int(torch.version.cuda.split('.')[0])\n")
    result = scan_tree(tmp_path, "mi300x", load_rules(), jobs=1, use_cache=False, config=PorterConfig())
    assert result.stats.analyzed == 1 and result.stats.prefiltered == 1
    assert [f.path for f in result.findings] == ["loud.py"]


def test_scan_still_reports_text_the_parser_refuses(tmp_path):
    """No rule may match, but the engine reports a file too deeply nested to parse (PT000): it still goes there."""
    nested = "x = " + "(" * 450 + "1" + ")" * 450 + "  # torch.version.cuda\n"
    (tmp_path / "deep.py").write_text(nested)
    result = scan_tree(tmp_path, "mi300x", load_rules(), jobs=1, use_cache=False, config=PorterConfig())
    assert [f.rule for f in result.findings] == ["PT000"]


def test_keyword_values_are_read_as_values():
    """PT220's keyword entry reads the literal's value: an escaped "\\x68ip" is "hip" there."""
    code = 'import torch\nx = torch.ones(2, device="\\x68ip")\n'
    ruleset = load_rules()
    assert "PT220" in possible_rules(ruleset.rules, _words(code))
    findings = analyze_source(
        code, "m.py", get_target("mi300x"), ruleset, only=possible_rules(ruleset.rules, _words(code))
    )
    assert [f.rule for f in findings] == ["PT220"]


def test_triton_names_need_a_triton_or_tl_identifier():
    assert not _words("def atomic_add(a, b):\n    return a + b\n").may_name_triton()
    assert _words("x = tl.atomic_add(p, 1)\n").may_name_triton()  # an unimported tl. reads as triton.language


def test_with_calls_resolve_through_imports():
    words = _words(
        "import torch\nfrom torch.cuda import graph as capture\nwith capture(g):\n    torch.cuda.synchronize()\n"
    )
    assert "graph" in words.with_calls
    ruleset = load_rules()
    assert "PT212" in possible_rules(ruleset.rules, words)
    code = "import torch\nfrom torch.cuda import graph as capture\nwith capture(g):\n    torch.cuda.synchronize()\n"
    only = possible_rules(ruleset.rules, _words(code))
    assert [f.rule for f in analyze_source(code, "m.py", get_target("mi300x"), ruleset, only=only)] == ["PT212"]
    aliased = _words("import torch\nfrom pkg import capture\nwith capture(g):\n    pass\n")
    assert "graph" in aliased.with_project_aliases({"capture": "torch.cuda.graph"}).with_calls
