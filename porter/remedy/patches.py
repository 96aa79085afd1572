"""Unified diffs that `git apply` accepts, and composition of several patches to one file.

Each patch's diff is computed against the original tree. When several patches touch one file, the
planner composes them by applying each patch's hunks to the text the earlier ones produced
(`apply_hunks`); a hunk whose context no longer matches is a conflict, and the planner then chains
the patch onto the earlier ones instead (Patch.depends_on).
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass

from porter.records import FileEdit

_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(edit: FileEdit, context: int = 3) -> str:
    """One file's diff with a/ b/ prefixes, new-file headers and missing-final-newline markers."""
    before = edit.before or ""
    old_lines = before.splitlines(keepends=True)
    new_lines = edit.after.splitlines(keepends=True)
    if old_lines == new_lines and edit.before is not None:
        return ""
    header = f"diff --git a/{edit.path} b/{edit.path}\n"
    if edit.before is None:
        header += "new file mode 100644\n"
        from_file = "/dev/null"
    else:
        from_file = f"a/{edit.path}"
    lines = list(
        difflib.unified_diff(
            old_lines, new_lines, fromfile=from_file, tofile=f"b/{edit.path}", n=context, lineterm="\n"
        )
    )
    out: list[str] = []
    for line in lines:
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:  # the file's last line has no newline
            out.append(line + "\n" + _NO_NEWLINE)
    if edit.before is None and not out:  # an empty new file
        return header + f"--- /dev/null\n+++ b/{edit.path}\n"
    return header + "".join(out)


def patch_diff(edits: list[FileEdit]) -> str:
    return "".join(unified_diff(edit) for edit in edits)


@dataclass
class Hunk:
    old: list[str]  # context + removed lines
    new: list[str]  # context + added lines
    old_start: int  # 0-based line index in the text the hunk was computed against


def hunks(before: str, after: str, context: int = 3) -> list[Hunk]:
    """The changed blocks of before -> after, each with `context` lines either side."""
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    out = []
    for group in matcher.get_grouped_opcodes(context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        out.append(Hunk(old=old_lines[i1:i2], new=new_lines[j1:j2], old_start=i1))
    return out


def apply_hunks(text: str, before: str, after: str, allow_present: bool = True) -> str | None:
    """Apply the change before -> after onto `text` (which may hold other edits); None on conflict.

    Hunks carry git's default 3 lines of context, so a patch that composes here also applies with
    `git apply` after the earlier ones. With `allow_present`, a hunk whose new block is already there
    (the same import added by an earlier patch) counts as applied; the planner passes False, since
    such a patch file would no longer `git apply` after the earlier one.
    """
    lines = text.splitlines(keepends=True)
    offset = 0
    for hunk in hunks(before, after):
        start = _find(lines, hunk.old, hunk.old_start + offset)
        if start is None:
            if allow_present and (
                _find(lines, hunk.new, hunk.old_start + offset) is not None or _added_lines_present(hunk, lines)
            ):
                continue
            return None
        lines[start : start + len(hunk.old)] = hunk.new
        offset = start - hunk.old_start + len(hunk.new) - len(hunk.old)
    return "".join(lines)


def _added_lines_present(hunk: Hunk, lines: list[str]) -> bool:
    """A pure insertion whose every line is already in the text: the same import that an earlier patch
    added a line higher or lower (the shim import a codemod and the model's proposal both add)."""
    removed = Counter(hunk.old) - Counter(hunk.new)
    added = Counter(hunk.new) - Counter(hunk.old)
    present = Counter(lines)
    return not removed and bool(added) and all(line.strip() and present[line] >= n for line, n in added.items())


def _find(lines: list[str], block: list[str], near: int) -> int | None:
    """Index where `block` occurs in `lines`, the occurrence nearest to `near`."""
    if not block:
        return max(0, min(near, len(lines)))
    size = len(block)
    candidates = [i for i in range(len(lines) - size + 1) if lines[i : i + size] == block]
    if not candidates:
        return None
    return min(candidates, key=lambda i: abs(i - near))


def line_map(before: str, after: str) -> list[int]:
    """For each 1-based line of `before`, the 1-based line of `after` it moved to (approximate for edits)."""
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    mapping = [0] * (len(old_lines) + 2)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(i1, i2):
            mapping[k + 1] = j1 + 1 + (min(k - i1, max(j2 - j1 - 1, 0)) if tag != "equal" else k - i1)
    mapping[len(old_lines) + 1] = len(new_lines) + 1
    return mapping


# ---- applying accepted patches to the tree ------------------------------------------------------


def compose(patches, originals: dict[str, str], accepted: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """New text per path from the accepted patches, in plan order, and why any accepted one was left out."""
    current: dict[str, str] = {}
    applied: set[str] = set()
    skipped: dict[str, str] = {}
    for patch in patches:
        if patch.id not in accepted:
            continue
        missing = [dep for dep in patch.depends_on if dep not in applied]
        if missing:
            skipped[patch.id] = f"depends on {', '.join(missing)}, which was not applied"
            continue
        staged = dict(current)
        for edit in patch.edits:
            if edit.before is None:
                staged[edit.path] = edit.after
                continue
            base = staged.get(edit.path, originals.get(edit.path, edit.before))
            new = apply_hunks(base, edit.before, edit.after)
            if new is None:
                skipped[patch.id] = f"{edit.path}: does not apply on top of the patches before it"
                break
            staged[edit.path] = new
        else:
            current = staged
            applied.add(patch.id)
    return current, skipped


def write_files_atomically(root, texts: dict[str, str], originals: dict[str, str] | None = None) -> list[str]:
    """Write every file or none, as one journaled transaction (porter.remedy.apply); `originals`,
    the texts porter read, make it refuse files changed since. Endings, BOM and modes are kept."""
    from porter.remedy.apply import apply_transaction

    return apply_transaction(root, texts, originals)


def tree_patch_text(root, patch) -> str:
    """The patch file for `patch` as it applies to the files in `root`: their line endings and BOM
    restored, so `git apply` takes it on CRLF and mixed trees. LF-only files give `patch.diff`."""
    from pathlib import Path

    from porter.remedy.textform import git_diff, restore

    parts, plain = [], True
    for edit in patch.edits:
        raw = _raw_text(Path(root) / edit.path) if edit.before is not None else None
        if raw is None or ("\r" not in raw and not raw.startswith("\ufeff")):
            parts.append(unified_diff(edit))
            continue
        plain = False
        parts.append(git_diff(edit.path, restore(raw, edit.before), restore(raw, edit.after)))
    return patch.diff if plain or not patch.edits else "".join(parts)


def _raw_text(path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
