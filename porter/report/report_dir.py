"""The `porter rewrite` report directory: report.md, report.json, patches/*.patch, findings.sarif,
needs-review.md, and MANIFEST (the files porter wrote there).

Where it may go (`check_out_dir`): a new path, or porter's own previous report; never the scanned
tree itself, an ancestor of it, a file, or a directory holding anything else. How it is written
(`publish`): every file is rendered into a hidden staging directory beside it first, so a failing
write (disk full) leaves the old report and the tree as they were; then the staging directory is
renamed into place, or, over a previous report, each file is renamed over its old self. Only files
a previous MANIFEST lists are ever removed: porter never deletes what it did not write.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from porter.errors import PorterError
from porter.report import patches as patch_report
from porter.report.output import OutputError, environment_error
from porter.secrets import scrub

MANIFEST = ".porter-report.json"
_REPORT_FILES = ("report.md", "report.json", "needs-review.md", "findings.sarif")
_AGENT_FILES = ("agent/transcript.json", "agent/outcomes.json")
# C0 controls but tab and newline, DEL, C1 controls: terminal escape sequences start with these
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_terminal_codes(text: str) -> str:
    """`text` without escape sequences and control characters (a report is read in terminals too)."""
    return _CONTROL.sub("", text)


# ---- where the report may go ---------------------------------------------------------------


def check_out_dir(out_dir: str | Path, tree: str | Path | None = None) -> Path:
    """`out_dir` if porter may write its report there, else an OutputError (exit 2) saying why."""
    out = Path(out_dir)
    resolved = Path(os.path.realpath(out))
    if tree is not None:
        root = Path(os.path.realpath(tree))
        if resolved == root or resolved in root.parents:
            raise OutputError(f"--out {out}: is the scanned tree or holds it; give a directory of its own")
        if root in resolved.parents and ".git" in resolved.relative_to(root).parts:
            raise OutputError(f"--out {out}: inside the repository's .git")
    if out.is_symlink():
        raise OutputError(f"--out {out}: a symbolic link; give the directory itself")
    if not out.exists():
        return out
    if not out.is_dir():
        raise OutputError(f"--out {out}: exists and is not a directory")
    if previous_files(out) is None and any(out.iterdir()):
        raise OutputError(
            f"--out {out}: a non-empty directory that is not a porter report; "
            "give a new or empty directory (porter never deletes files it did not write)"
        )
    return out


def previous_files(out: Path) -> list[str] | None:
    """The files a previous porter report in `out` consists of (relative), or None if it is none."""
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        files = manifest["files"]
        if manifest.get("porter") == "report" and all(isinstance(f, str) for f in files):
            return [f for f in files if _safe_relative(f)]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return _legacy_files(out)


def _legacy_files(out: Path) -> list[str] | None:
    """A report written before MANIFEST existed: its report.json lists its patch files."""
    try:
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
        patches = [record["file"] for record in report["patches"]]
        report["summary"], report["target"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    listed = [*_REPORT_FILES, *_AGENT_FILES, *(p for p in patches if isinstance(p, str) and _safe_relative(p))]
    return [name for name in listed if (out / name).is_file()]


def _safe_relative(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts


def report_pathspecs(out_dir: str | Path, root: str | Path) -> list[str]:
    """git pathspecs that leave porter's own previous report (inside `root`) out of `git status`:
    exactly the files it wrote, so an --out inside the tree cannot hide the user's changes."""
    out, base = Path(os.path.realpath(out_dir)), Path(os.path.realpath(root))
    files = previous_files(out) if out.is_dir() else None
    if not files or base not in out.parents:
        return []
    prefix = out.relative_to(base).as_posix()
    return [f":(exclude,literal){prefix}/{name}" for name in [*files, MANIFEST]]


# ---- writing it ----------------------------------------------------------------------------


def write_report_dir(
    out_dir: str | Path,
    plan,
    verdicts: dict[str, Any],
    applied: set[str],
    skipped: dict[str, str],
    options: dict[str, Any],
    scan_result=None,
    extra_files: dict[str, str] | None = None,
) -> Path:
    """Render the report and publish it to `out_dir` (checked against the tree in options["root"])."""
    root = options.get("root")
    out = check_out_dir(out_dir, root)
    files = render_report_files(plan, verdicts, applied, skipped, options, scan_result, root)
    files.update(extra_files or {})
    return publish(out, files)


def render_report_files(plan, verdicts, applied, skipped, options, scan_result=None, root=None) -> dict[str, str]:
    from porter.remedy.patches import tree_patch_text

    files = {
        f"patches/{patch.id}.patch": tree_patch_text(root, patch) if root else patch.diff for patch in plan.patches
    }
    files["report.md"] = strip_terminal_codes(patch_report.render_markdown(plan, verdicts, applied, skipped, options))
    files["report.json"] = patch_report.render_json(plan, verdicts, applied, skipped, options)
    files["needs-review.md"] = strip_terminal_codes(_needs_review(plan))
    if scan_result is not None:
        from porter.report.sarif import render_sarif  # H3's findings writer

        files["findings.sarif"] = render_sarif(scan_result)
    return files


def publish(out: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative name -> text) as the report in `out`: staged, then moved in."""
    previous = previous_files(out) if out.is_dir() else []
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".porter-tmp", dir=out.parent))
    except OSError as error:
        raise environment_error(out.parent, error) from None
    try:
        _fill(stage, files)
        if not out.exists():
            os.rename(stage, out)
            return out
        _move_into(stage, out, files, previous or [])
    except OSError as error:
        raise environment_error(out, error) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return out


def _fill(stage: Path, files: dict[str, str]) -> None:
    os.chmod(stage, 0o777 & ~_umask())  # mkdtemp's 0700 would hide the report from the user's group
    for name in files:
        if not _safe_relative(name):
            raise PorterError(f"report file name {name!r} leaves the report directory")
    manifest = json.dumps({"porter": "report", "files": sorted(files)}, indent=1) + "\n"
    for name, text in {**files, MANIFEST: manifest}.items():
        path = stage / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as stream:
            stream.write(scrub(text))
            stream.flush()
            os.fsync(stream.fileno())


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _move_into(stage: Path, out: Path, files: dict[str, str], previous: list[str]) -> None:
    for name in [*sorted(files), MANIFEST]:
        destination = out / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.replace(stage / name, destination)
    for stale in sorted(set(previous) - set(files)):
        path = out / stale
        if path.is_file() and not path.is_symlink():
            path.unlink()


def _needs_review(plan) -> str:
    lines = [f"# Needs review ({plan.target.name})", ""]
    for item in plan.needs_review:
        f = item.finding
        head = f"- [ ] `{f.path}:{f.line}:{f.column}` {f.rule} {f.name} ({item.kind}): {f.message}"
        lines += patch_report.review_item_lines(item, head)
    if not plan.needs_review:
        lines.append("Nothing: every finding has a patch.")
    return "\n".join(lines) + "\n"
