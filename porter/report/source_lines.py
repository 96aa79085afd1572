"""Source lines for code frames and fingerprints: from the finding's snippet, else from the file."""

from __future__ import annotations

from pathlib import Path


class SourceLines:
    def __init__(self, root: str | Path | None) -> None:
        self.root = Path(root) if root else None
        self._files: dict[str, list[str] | None] = {}

    def lines(self, path: str) -> list[str] | None:
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: str) -> list[str] | None:
        if self.root is None:
            return None
        try:
            return (self.root / path).read_text(encoding="utf-8").lstrip("\ufeff").splitlines()
        except (OSError, UnicodeDecodeError):
            return None

    def frame(self, finding, context: int = 0) -> list[tuple[int, str]]:
        """(line number, text) for the finding's lines, plus `context` lines around them."""
        lines = self.lines(finding.path)
        if lines is not None and 0 < finding.line <= len(lines):
            first = max(1, finding.line - context)
            last = min(len(lines), max(finding.end_line, finding.line) + context)
            return [(number, lines[number - 1]) for number in range(first, last + 1)]
        if finding.snippet:
            return list(enumerate(finding.snippet.splitlines(), start=finding.line))
        return []

    def first_line(self, finding) -> str:
        """The text of the finding's first line (for fingerprints), '' when unknown."""
        if finding.snippet:
            return finding.snippet.splitlines()[0] if finding.snippet.splitlines() else ""
        lines = self.lines(finding.path)
        if lines is not None and 0 < finding.line <= len(lines):
            return lines[finding.line - 1]
        return ""
