"""SEARCH/REPLACE edit blocks, in aider's form, parsed from untrusted model text and applied exactly.

    path/relative/to/repo.py
    <<<<<<< SEARCH
    exact old lines
    =======
    new lines
    >>>>>>> REPLACE

A surrounding code fence is tolerated. No line numbers and no model-written diffs: each SEARCH must
match the current file text exactly once, so an edit can never land somewhere the model did not see.
Every failure is an `EditError` whose message is precise enough to send back to the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

SEARCH_MARK = re.compile(r"^<{5,9} SEARCH\s*$")
DIVIDER_MARK = re.compile(r"^={5,9}\s*$")
REPLACE_MARK = re.compile(r"^>{5,9} REPLACE\s*$")
FENCE = re.compile(r"^```")


class EditError(Exception):
    """A proposal that cannot be parsed or applied; the message goes back to the model verbatim."""


@dataclass(frozen=True)
class EditBlock:
    path: str
    search: str
    replace: str


def _path_line(lines: list[str], index: int) -> str:
    """The file path is the nearest non-fence, non-empty line above a SEARCH marker."""
    for line in reversed(lines[:index]):
        stripped = line.strip()
        if not stripped or FENCE.match(stripped):
            continue
        return stripped.strip("`*: ")
    return ""


def parse_edit_blocks(text: str) -> list[EditBlock]:
    """Every SEARCH/REPLACE block of a reply, in order. Raises EditError on a malformed block."""
    lines = text.splitlines()
    blocks: list[EditBlock] = []
    index = 0
    while index < len(lines):
        if not SEARCH_MARK.match(lines[index]):
            index += 1
            continue
        path = _path_line(lines, index)
        if not path:
            raise EditError(f"the SEARCH block at reply line {index + 1} has no file path on the line above it")
        search, index = _collect(lines, index + 1, DIVIDER_MARK, "=======", path)
        replace, index = _collect(lines, index + 1, REPLACE_MARK, ">>>>>>> REPLACE", path)
        blocks.append(EditBlock(path=path, search=search, replace=replace))
        index += 1
    return blocks


def _collect(lines: list[str], start: int, end_mark: re.Pattern, end_name: str, path: str) -> tuple[str, int]:
    for index in range(start, len(lines)):
        if end_mark.match(lines[index]):
            body = lines[start:index]
            return ("\n".join(body) + "\n") if body else "", index
        if SEARCH_MARK.match(lines[index]):
            break
    raise EditError(f"the block for {path} is missing its `{end_name}` line")


def check_path(path: str, allowed: set[str]) -> str:
    """Normalise a model-given path and refuse anything outside the allowed repository files."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise EditError(f"refused: {path!r} is outside the repository; give paths relative to its root")
    normal = pure.as_posix()
    if normal not in allowed:
        listed = ", ".join(sorted(allowed))
        raise EditError(f"refused: {normal} may not be edited; only these files may: {listed}")
    return normal


def apply_edit_blocks(files: dict[str, str], blocks: list[EditBlock], allowed: set[str]) -> dict[str, str]:
    """Apply blocks to in-memory file texts; returns only the changed files. All or nothing."""
    if not blocks:
        raise EditError("the reply holds no SEARCH/REPLACE block")
    changed: dict[str, str] = {}
    for number, block in enumerate(blocks, 1):
        path = check_path(block.path, allowed)
        current = changed.get(path, files.get(path))
        if current is None:
            if block.search.strip():
                raise EditError(f"block {number}: {path} does not exist; to create it, leave SEARCH empty")
            changed[path] = block.replace
            continue
        changed[path] = _replace_once(current, block, number, path)
    return changed


def _replace_once(text: str, block: EditBlock, number: int, path: str) -> str:
    if not block.search:
        raise EditError(f"block {number}: SEARCH is empty but {path} exists; quote the exact lines to change")
    count = text.count(block.search)
    if count == 0:
        hint = _closest_line_hint(text, block.search)
        raise EditError(f"block {number}: SEARCH does not match {path} exactly{hint}; copy the lines verbatim")
    if count > 1:
        raise EditError(
            f"block {number}: SEARCH matches {count} places in {path}; include more surrounding lines so it matches once"
        )
    return text.replace(block.search, block.replace, 1)


def _closest_line_hint(text: str, search: str) -> str:
    first = next((line.strip() for line in search.splitlines() if line.strip()), "")
    if not first:
        return ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() == first:
            return f" (its first line appears at line {number}, but the following lines differ)"
    return " (its first line appears nowhere in the file)"
