"""Writing results: atomically to a file (temp file + os.replace) or to stdout."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write `text` so readers see the old file or the whole new one, never a torn one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.replace(temp, target)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def emit(text: str, output: str | Path | None) -> None:
    """The payload to `output` when given, else to stdout (and nothing else to stdout)."""
    if output:
        atomic_write_text(output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
