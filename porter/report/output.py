"""Writing results: atomically to a file (temp file + os.replace) or to stdout.

porter writes only to a regular file or a path that does not exist yet. A device node, FIFO,
socket or directory at the destination is refused (`-o /dev/null` as root must not replace the
machine's /dev/null with a file), and so is a symbolic link unless it resolves to a regular file
inside the link's own directory tree. A replaced file keeps its mode; a new one gets the mode the
umask gives (0666 & ~umask), not mkstemp's 0600. Every value porter treats as a secret is scrubbed
from the text, and an OSError becomes a one-line OutputError naming the path and the cause.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from porter.errors import PorterError
from porter.secrets import scrub

TEMP_SUFFIX = ".porter-tmp"


class OutputError(PorterError):
    """A destination porter must not or cannot write; the message names the path and the cause."""


def environment_error(path: str | Path, error: OSError) -> OutputError:
    """`path: cause` for a disk-full, permission or similar failure (exit 2, not "a bug in porter")."""
    where = error.filename if isinstance(error.filename, str) and error.filename else str(path)
    return OutputError(f"{where}: {error.strerror or error}")


def umask_mode() -> int:
    """The mode a new file gets under the current umask (0666 & ~umask)."""
    current = os.umask(0)
    os.umask(current)
    return 0o666 & ~current


def writable_destination(path: str | Path) -> Path:
    """The path to replace for `path`: itself, or a symlink's in-tree regular target. Refuses the rest."""
    target = Path(path)
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target
    except OSError as error:
        raise environment_error(target, error) from None
    if stat.S_ISLNK(info.st_mode):
        return _link_destination(target)
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(
            f"{target}: not a regular file ({_kind(info.st_mode)}); porter writes only regular files or new paths"
        )
    return target


def _link_destination(link: Path) -> Path:
    resolved = Path(os.path.realpath(link))
    home = Path(os.path.realpath(link.parent))
    if home != resolved.parent and home not in resolved.parents:
        raise OutputError(f"{link}: a symbolic link to {resolved}, outside {home}; porter does not write through it")
    try:
        info = os.stat(resolved)
    except FileNotFoundError:
        raise OutputError(f"{link}: a dangling symbolic link; porter does not write through it") from None
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(f"{link}: a symbolic link to a {_kind(info.st_mode)}; porter writes only regular files")
    return resolved


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


def atomic_write_bytes(path: str | Path, data: bytes, mode: int | None = None) -> Path:
    """Write `data` so readers see the old file or the whole new one, never a torn one.

    `mode`: the new file's permission bits; default the replaced file's, else the umask's.
    Returns the path written (a symlink's target when written through one).
    """
    requested = Path(path)
    if requested.parent.exists() and not requested.parent.is_dir():
        raise OutputError(f"{requested.parent}: not a directory")
    try:
        requested.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise environment_error(requested.parent, error) from None
    target = writable_destination(requested)
    if mode is None:
        mode = _existing_mode(target)
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fchmod(stream.fileno(), mode)
        writable_destination(requested)  # refuse a special file swapped in while we wrote
        os.replace(temp, target)
    except OSError as error:
        _discard(temp)
        raise environment_error(target, error) from None
    except BaseException:
        _discard(temp)
        raise
    return target


def _existing_mode(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return umask_mode()


def _discard(temp: str) -> None:
    try:
        os.unlink(temp)
    except OSError:
        pass


def atomic_write_text(path: str | Path, text: str, mode: int | None = None) -> Path:
    """`atomic_write_bytes` of UTF-8 text with porter's secrets scrubbed (newlines as given)."""
    return atomic_write_bytes(path, scrub(text).encode("utf-8"), mode)


def emit(text: str, output: str | Path | None) -> None:
    """The payload to `output` when given, else to stdout (and nothing else to stdout)."""
    if output:
        atomic_write_text(output, text)
    else:
        sys.stdout.write(scrub(text))
        sys.stdout.flush()
