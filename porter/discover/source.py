"""Reading a discovered file: bytes for the cache key, text for the analyzer, or a SkipNote."""

from __future__ import annotations

from porter.records import SkipNote, SourceFile

BOM = "\ufeff"


def read_bytes(source: SourceFile) -> bytes | SkipNote:
    try:
        with open(source.absolute, "rb") as handle:
            return handle.read()
    except OSError as error:
        return SkipNote(source.path, f"unreadable: {error.strerror or error}")


def decode(path: str, data: bytes) -> str | SkipNote:
    """UTF-8 text without a leading BOM; binary or other encodings are skipped, not guessed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return SkipNote(path, f"not UTF-8 (byte {error.start}: {data[error.start:error.start + 1]!r})")
    if "\x00" in text:
        return SkipNote(path, "binary content (NUL bytes)")
    return text[1:] if text.startswith(BOM) else text


def read_source(source: SourceFile) -> str | SkipNote:
    data = read_bytes(source)
    return data if isinstance(data, SkipNote) else decode(source.path, data)
