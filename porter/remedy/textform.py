"""A file's bytes versus the text porter edits: line endings and a UTF-8 BOM, kept byte for byte.

The planner edits text read with universal newlines (CRLF and CR become LF), so what it writes
back must carry the file's own endings again: lines the edit left alone keep theirs exactly, new
lines take the file's most common ending, and a leading BOM stays. Patch files are rendered from
those bytes as git sees them (split on LF only), so they `git apply` on CRLF and mixed trees.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

BOM = "\ufeff"
_RAW_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_GIT_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def normalize(raw: str) -> str:
    """What `Path.read_text` returns for this decoded content (universal newlines)."""
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def raw_lines(raw: str) -> list[str]:
    return _RAW_LINE.findall(raw)


def _ending(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else line[-1:] if line[-1:] in ("\r", "\n") else ""


def dominant_ending(raw: str) -> str:
    counts = Counter(_ending(line) for line in raw_lines(raw))
    counts.pop("", None)
    return max(counts, key=lambda ending: (counts[ending], ending == "\n")) if counts else "\n"


def restore(original: str | None, text: str) -> str:
    """`text` (LF-normalised, edited) with the endings and BOM of `original` (decoded file content)."""
    if original is None:
        return text
    bom = original.startswith(BOM)
    body_original = original[1:] if bom else original
    body = text[1:] if text.startswith(BOM) else text
    endings = {_ending(line) for line in raw_lines(body_original)} - {""}
    if endings <= {"\n"}:
        restored = body
    elif len(endings) == 1:
        restored = body.replace("\n", endings.pop())
    else:
        restored = _restore_mixed(body_original, body)
    return (BOM if bom else "") + restored


def _restore_mixed(original: str, text: str) -> str:
    """Lines equal to the original's keep their own ending; others take the dominant one."""
    old_raw = raw_lines(original)
    old_norm = [normalize(line) for line in old_raw]
    new_lines = _GIT_LINE.findall(text)
    ending = dominant_ending(original)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_norm, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(old_raw[i1:i2])
        else:
            out.extend(line[:-1] + ending if line.endswith("\n") else line for line in new_lines[j1:j2])
    return "".join(out)


_NO_NEWLINE = "\\ No newline at end of file\n"


def git_diff(path: str, before: str | None, after: str, context: int = 3) -> str:
    """A unified diff of raw (restored) texts as git sees lines: split on LF, CR kept as content."""
    old_lines = _GIT_LINE.findall(before or "")
    new_lines = _GIT_LINE.findall(after)
    if before is not None and old_lines == new_lines:
        return ""
    header = f"diff --git a/{path} b/{path}\n"
    from_file = f"a/{path}"
    if before is None:
        header += "new file mode 100644\n"
        from_file = "/dev/null"
    body = difflib.unified_diff(old_lines, new_lines, fromfile=from_file, tofile=f"b/{path}", n=context, lineterm="\n")
    out = []
    for line in body:
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\r\n") + "\n")
        else:
            out.append(line if line.endswith("\n") else line + "\n" + _NO_NEWLINE)
    if before is None and not out:
        return header + f"--- /dev/null\n+++ b/{path}\n"
    return header + "".join(out)
