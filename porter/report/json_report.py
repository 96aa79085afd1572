"""`--format json`: one object with findings, skip notes, a summary and the scan's figures.

The layout is published as a JSON Schema (`porter/report/schemas/scan-report.schema.json`, also
`porter.report.json_report.schema()`); `schema_version` changes whenever a field is removed or
changes meaning, so consumers can refuse a layout they do not know.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

from porter import __version__
from porter.report.rules import info_for
from porter.report.summary import summarize

SCHEMA_VERSION = 1
FINDING_KEYS = (
    "rule",
    "name",
    "severity",
    "category",
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "message",
    "fix",
    "target",
    "facts",
    "data",
    "provenance",
    "reach",
)


@cache
def schema() -> dict:
    """The JSON Schema of this output."""
    return json.loads(files("porter.report").joinpath("schemas").joinpath("scan-report.schema.json").read_text("utf-8"))


def finding_record(finding, rules) -> dict:
    record = {key: getattr(finding, key) for key in FINDING_KEYS}
    info = info_for(rules, finding)
    record["fix_safety"] = info.safety or None
    record["reach"] = finding.reach  # target | unknown | nvidia_only | rocm_only | opt_in | unreached
    if finding.reach_reason:
        record["reach_reason"] = finding.reach_reason
    return record


def render_json(result) -> str:
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "porter", "version": __version__},
        "target": result.target,
        "findings": [finding_record(finding, result.rules) for finding in result.findings],
        "skipped": [{"path": note.path, "reason": note.reason} for note in result.skipped],
        "summary": summarize(result.findings),
        "stats": result.stats.to_dict(),
    }
    return json.dumps(document, indent=2, default=str) + "\n"
