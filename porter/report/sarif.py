"""`--format sarif`: SARIF 2.1.0 as GitHub code scanning reads it.

URIs are relative to the project root (the git top level, or `--project-root`) and percent-encoded,
so a scan of a subdirectory uploads alerts that resolve from the repository root; each scanned path
is its own `automationDetails.id` category, so the runs of a CI matrix merge without clobbering.
Columns count Unicode code points, 1-based, end exclusive, as porter's findings do.
`partialFingerprints` hash the rule, path and whitespace-normalised line text (plus an occurrence
number for repeats), so an alert survives edits elsewhere in the file and line moves; the same value
is given as `primaryLocationLineHash`, the key GitHub code scanning tracks alerts by.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from importlib.metadata import PackageNotFoundError, metadata
from typing import Any

from porter import __version__
from porter.report.locations import ProjectPaths, project_paths
from porter.report.rules import RuleInfo, info_for
from porter.report.source_lines import SourceLines

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "porterLineHash/v1"
GITHUB_FINGERPRINT_KEY = "primaryLocationLineHash"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def information_uri() -> str | None:
    """The project's home page from the installed metadata (Home-page or the first Project-URL), if any:
    SARIF makes informationUri optional, and an invented address would be worse than none."""
    try:
        meta = metadata("porter")
    except PackageNotFoundError:
        return None
    urls = [meta.get("Home-page")]  # type: ignore[attr-defined]  # runtime has it (email.message.Message); typeshed omits it before 3.12 + [entry.split(",", 1)[-1].strip() for entry in meta.get_all("Project-URL") or []]
    return next((url for url in urls if url and url.startswith("http")), None)


def _rule_descriptor(info: RuleInfo) -> dict:
    descriptor = {
        "id": info.id,
        "name": info.name,
        "shortDescription": {"text": info.summary or info.name},
        "fullDescription": {"text": _full_description(info)},
        "help": {"text": info.help_text() or info.summary or info.name, "markdown": info.help_markdown()},
        "defaultConfiguration": {"level": LEVELS.get(info.severity, "warning")},
        "properties": {"tags": [tag for tag in ("amd", "portability", info.category) if tag]},
    }
    references = [ref for ref in info.docs.get("references") or [] if str(ref).startswith("https://")]
    if references:
        descriptor["helpUri"] = str(references[0])
    return descriptor


def _full_description(info: RuleInfo) -> str:
    parts = [str(info.docs.get(key, "")).strip() for key in ("what", "why")]
    return " ".join(part for part in parts if part) or info.summary or info.name


def normalized(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip()


def fingerprints(findings, source: SourceLines) -> list[str]:
    """A stable hash per finding: rule + path + normalised line text, numbered among equal ones."""
    seen: Counter = Counter()
    prints = []
    for finding in findings:
        basis = "\0".join((finding.rule, finding.path, normalized(source.first_line(finding))))
        digest = hashlib.sha256(basis.encode("utf-8")).hexdigest()[:32]
        seen[digest] += 1
        prints.append(f"{digest}:{seen[digest]}")
    return prints


def _result(finding, rule_index: int, fingerprint: str, paths: ProjectPaths) -> dict:
    region = {
        "startLine": finding.line,
        "startColumn": finding.column,
        "endLine": max(finding.end_line, finding.line),
        "endColumn": finding.end_column,
    }
    if region["endLine"] == region["startLine"] and region["endColumn"] <= region["startColumn"]:
        region["endColumn"] = region["startColumn"] + 1  # SARIF regions may not be empty
    result = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS.get(finding.severity, "warning"),
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": paths.uri(finding.path), "uriBaseId": "%SRCROOT%"},
                    "region": region,
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint, GITHUB_FINGERPRINT_KEY: fingerprint},
        "properties": {
            "fix": finding.fix,
            "target": finding.target or None,
            "provenance": finding.provenance,
            "reach": finding.reach,
        },
    }
    return result


def _notification(note, paths: ProjectPaths) -> dict:
    location = {"artifactLocation": {"uri": paths.uri(note.path), "uriBaseId": "%SRCROOT%"}}
    return {
        "level": "note",
        "message": {"text": f"skipped: {note.reason}"},
        "locations": [{"physicalLocation": location}],
    }


def build_sarif(result, project_root=None) -> dict:
    """The SARIF log of a scan; `project_root` as `--project-root` (default: the git top level)."""
    paths = project_paths(result.root, project_root)
    used = {finding.rule for finding in result.findings}
    infos = dict(result.rules)
    for finding in result.findings:  # findings of rules the rule set does not list still need a descriptor
        infos.setdefault(finding.rule, info_for(result.rules, finding))
    ordered = sorted(infos.values(), key=lambda info: info.id)
    if not result.rules:
        ordered = [info for info in ordered if info.id in used]
    index = {info.id: position for position, info in enumerate(ordered)}
    prints = fingerprints(result.findings, SourceLines(result.root))
    driver: dict[str, Any] = {"name": "porter", "version": __version__, "semanticVersion": __version__}
    uri = information_uri()
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = [_rule_descriptor(info) for info in ordered]
    run = {
        "tool": {"driver": driver},
        "automationDetails": {"id": f"porter/{result.target}/{paths.category}/"},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": paths.project_root.as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.rule], fp, paths) for f, fp in zip(result.findings, prints)],
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [_notification(note, paths) for note in result.skipped],
            }
        ],
        "properties": {"target": result.target},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(result, project_root=None) -> str:
    return json.dumps(build_sarif(result, project_root), indent=2, default=str) + "\n"
