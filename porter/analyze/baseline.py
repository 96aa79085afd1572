"""`porter scan --diff-base REF`: only the findings a branch introduces (semgrep's --baseline-commit).

The scan runs as usual; its findings in files unchanged since the merge base of REF and HEAD are
dropped, and so is every finding whose fingerprint (rule, path, whitespace-normalised line text,
occurrence number: the SARIF fingerprint) is also a finding of the file's version at the merge base.
The base versions come from `git show` into a temporary directory outside the repository (removed
afterwards), each at the path the file has now, so a renamed file keeps its old findings' prints. A file
new at its path whose text changed too much for git to pair it with its old path (a move and a rewrite)
is also matched, without the path, against the findings of the files deleted since the base.
"Changed" is the working tree against the merge base, untracked files included: what a pull request
or a pre-commit run would add.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from porter.errors import UsageError
from porter.records import Finding
from porter.report.locations import git_top_level
from porter.report.sarif import fingerprints, normalized
from porter.report.source_lines import SourceLines

GIT_TIMEOUT_S = 120


@dataclass(frozen=True)
class BaseRevision:
    top: Path  # the git work tree's top level
    ref: str  # as the user named it
    commit: str  # the merge base of ref and HEAD
    renamed_from: dict[str, str]  # changed file (repo-relative, as now) -> its path at the base when renamed
    changed: frozenset[str]  # repo-relative POSIX paths changed since the base (untracked included)
    deleted: frozenset[str] = frozenset()  # paths at the base gone since (a move git did not pair included)


def resolve_base(paths: Sequence[str | Path], ref: str) -> BaseRevision:
    """The merge base of `ref` and HEAD in the repository holding `paths`, and what changed since."""
    top = _work_tree(paths)
    commit = _git(
        top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", fail=f"--diff-base {ref}: no such commit in {top}"
    )
    base = _git(
        top, "merge-base", commit.strip(), "HEAD", fail=f"--diff-base {ref}: no common ancestor with HEAD in {top}"
    ).strip()
    renamed, changed, deleted = _changes(top, base)
    return BaseRevision(top, ref, base, renamed, frozenset(changed), frozenset(deleted))


def _work_tree(paths: Sequence[str | Path]) -> Path:
    tops = set()
    for path in paths:
        where = Path(path).resolve()
        top = git_top_level(where if where.is_dir() else where.parent)
        if top is None:
            raise UsageError(f"--diff-base: {path} is not inside a git work tree")
        tops.add(Path(os.path.realpath(top)))
    if len(tops) > 1:
        raise UsageError("--diff-base: the paths lie in different git work trees: " + ", ".join(sorted(map(str, tops))))
    return tops.pop()


def _git(top: Path, *args: str, fail: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(top), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            encoding="utf-8",
            errors="surrogateescape",
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"{fail} (git: {error})") from None
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        raise UsageError(f"{fail} (git: {detail})" if "--verify" not in args else fail)
    return done.stdout


def _changes(top: Path, base: str) -> tuple[dict[str, str], set[str], set[str]]:
    """(renamed: new -> old, changed paths, deleted paths) of the working tree against `base`, untracked
    files counted as changed."""
    fail = f"--diff-base: cannot list the changes since {base[:12]}"
    fields = _git(top, "diff", "--name-status", "-z", "-M", base, "--", fail=fail).split("\0")
    renamed: dict[str, str] = {}
    changed: set[str] = set()
    deleted: set[str] = set()
    index = 0
    while index < len(fields) and fields[index]:
        status = fields[index]
        if status[0] in "RC":
            old, new = fields[index + 1], fields[index + 2]
            renamed[new] = old
            changed.add(new)
            index += 3
            continue
        (deleted if status[0] == "D" else changed).add(fields[index + 1])
        index += 2
    untracked = _git(top, "ls-files", "--others", "--exclude-standard", "-z", fail=fail).split("\0")
    changed.update(path for path in untracked if path)
    return renamed, changed, deleted


def new_findings(head, base: BaseRevision, scan_files: Callable[[list[Path]], Any]):
    """`head` (a ScanResult) keeping only findings absent at `base`; `scan_files(paths)` scans named files
    with the head's target, rules and config and returns a ScanResult."""
    in_repo = _repo_paths(head.root, base.top)
    touched = {in_repo(f.path) for f in head.findings + head.unreachable} & base.changed
    with tempfile.TemporaryDirectory(prefix="porter-diff-base-") as scratch:
        written = _write_base_versions(base, sorted(touched), Path(scratch))
        found_at_base = {path.relative_to(scratch).as_posix() for path in written}
        fresh = touched - found_at_base  # no version at the base: new, or moved past rename detection
        gone = _write_base_versions(base, sorted(base.deleted), Path(scratch) / "deleted") if fresh else []
        old = scan_files(written + gone) if written or gone else None
        known: set[str] = set()
        moved_known: Counter = Counter()
        if old is not None:
            old_findings = old.findings + old.unreachable
            in_scratch = _repo_paths(old.root, Path(scratch))
            known = {mark for _, mark in _prints(old_findings, found_at_base, in_scratch, Path(scratch))}
            moved_known = _texts(old_findings, "deleted/", in_scratch, Path(scratch))
    old_prints = _prints(head.findings + head.unreachable, touched, in_repo, base.top)
    kept = {id(finding) for finding, mark in old_prints if mark not in known}
    kept -= _moved_ids(head.findings + head.unreachable, fresh, in_repo, base.top, moved_known)
    reported = [f for f in head.findings if id(f) in kept]
    unreachable = [f for f in head.unreachable if id(f) in kept]
    hidden = len(head.findings) - len(reported)
    note = (
        f"--diff-base {base.ref}: {hidden} finding(s) present at the merge base {base.commit[:12]} or in files "
        "unchanged since it hidden"
    )
    head.stats.notes.append(note)
    return replace(head, findings=reported, unreachable=unreachable)


def _repo_paths(root: str, top: Path) -> Callable[[str], str]:
    base = Path(os.path.realpath(root))
    return lambda path: Path(os.path.relpath(base / path, top)).as_posix()


def _write_base_versions(base: BaseRevision, paths: list[str], scratch: Path) -> list[Path]:
    """Each file's content at the base commit, written at its current repo path under `scratch`."""
    written = []
    for path in paths:
        old = base.renamed_from.get(path, path)
        try:
            done = subprocess.run(
                ["git", "-C", str(base.top), "show", f"{base.commit}:{old}"], capture_output=True, timeout=GIT_TIMEOUT_S
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise UsageError(f"--diff-base: cannot read {old} at {base.commit[:12]} (git: {error})") from None
        if done.returncode != 0:
            continue  # a file new since the base: every finding in it is new
        destination = scratch / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(done.stdout)
        written.append(destination)
    return written


def _text_key(finding: Finding, source: SourceLines) -> tuple[str, str]:
    return finding.rule, normalized(source.first_line(finding))


def _texts(findings: list[Finding], prefix: str, in_repo: Callable[[str], str], root: Path) -> Counter:
    """How often each (rule, normalised line text) occurs among the findings under `prefix`."""
    source = SourceLines(root)
    moved = [replace(f, path=in_repo(f.path)) for f in findings]
    return Counter(_text_key(f, source) for f in moved if f.path.startswith(prefix))


def _moved_ids(
    findings: list[Finding], fresh: set[str], in_repo: Callable[[str], str], root: Path, known: Counter
) -> set[int]:
    """Findings of the `fresh` files that a deleted file had too (rule and line text, by occurrence)."""
    source, left, matched = SourceLines(root), Counter(known), set()
    pairs = sorted(((f, replace(f, path=in_repo(f.path))) for f in findings), key=lambda p: p[1].sort_key())
    for finding, moved in pairs:
        key = _text_key(moved, source)
        if moved.path in fresh and left[key] > 0:
            left[key] -= 1
            matched.add(id(finding))
    return matched


def _prints(
    findings: list[Finding], only: set[str] | None, in_repo: Callable[[str], str], root: Path
) -> list[tuple[Finding, str]]:
    """(finding, fingerprint) for the findings in `only` (None: all), numbered among equal ones, with paths
    from the repository root so that head and base prints compare."""
    pairs = [(f, replace(f, path=in_repo(f.path))) for f in findings]
    pairs = sorted((pair for pair in pairs if only is None or pair[1].path in only), key=lambda p: p[1].sort_key())
    marks = fingerprints([moved for _, moved in pairs], SourceLines(root))
    return [(finding, mark) for (finding, _), mark in zip(pairs, marks)]
