"""`--apply` as one transaction over every file, with a journal a killed run's next start completes.

Protocol (all inside ROOT/.porter-apply, porter's own hidden directory, removed at the end):
  1. under an exclusive lock, refuse any file whose content changed since porter read it (nothing
     is written then); stage each new file (the original's mode, line endings and BOM) and a backup;
  2. write journal.json (state "commit") atomically: from here the run is decided;
  3. just before the renames, compare each file's hash once more with the bytes staged from;
  4. rename every staged file over its destination; on an error, state "rollback" and put the
     backups back; 5. remove the directory.
`recover` (called at the start of every --apply, and by `porter rewrite` on start) finishes an
interrupted run: "commit" rolls forward, "rollback" rolls back, no journal means nothing was
renamed. A file whose hash is neither the old nor the new one was changed by someone else since:
it is left alone and named.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import BinaryIO

from porter.errors import PorterError
from porter.remedy.textform import normalize, restore
from porter.report.output import environment_error, umask_mode
from porter.secrets import contains_secret

WORK_DIR = ".porter-apply"
JOURNAL = "journal.json"


class ApplyError(PorterError):
    """--apply refused or could not finish; the message names the files and says what was written."""


@dataclass
class Entry:
    path: str  # relative to the root
    staged: str  # file name inside the work directory
    backup: str | None  # None: the file is new
    old_sha: str | None
    new_sha: str
    created_dirs: list[str] = field(default_factory=list)  # relative, outermost first


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def apply_transaction(root: str | Path, texts: dict[str, str], originals: dict[str, str] | None = None) -> list[str]:
    """Write `texts` (LF-normalised new content by relative path) as one transaction; returns the
    paths written. `originals`: the text each file had when porter read it (absent: a new file)."""
    base = Path(root).resolve()
    recover(base)
    prepared = _prepare(base, texts, originals)
    if not prepared:
        return []
    work = base / WORK_DIR
    with _Lock(work, create=True):
        entries = _stage(base, work, prepared)
        _write_journal(work, "commit", entries)
        _recheck(base, work, entries)
        _commit(base, work, entries)
    shutil.rmtree(work, ignore_errors=True)
    return [entry.path for entry in entries]


# ---- preparing -----------------------------------------------------------------------------


def _prepare(base: Path, texts: dict[str, str], originals: dict[str, str] | None):
    """(relative path, current bytes or None, new bytes) per file that actually changes."""
    changed, secret, out = [], [], []
    for rel in sorted(texts):
        destination = _destination(base, rel)
        current = _read(destination)
        if originals is not None and not _unchanged(current, originals.get(rel)):
            changed.append(rel)
            continue
        old_text = None if current is None else current.decode("utf-8")
        new = restore(old_text, texts[rel]).encode("utf-8")
        if contains_secret(new.decode("utf-8")) and not contains_secret(old_text or ""):
            secret.append(rel)
        if new != current:
            out.append((rel, current, new))
    if changed:
        raise ApplyError(
            f"--apply refused: changed since porter read them: {', '.join(changed)}; nothing was written "
            "(run porter again on the current files)"
        )
    if secret:
        raise ApplyError(
            f"--apply refused: the new text of {', '.join(secret)} holds a secret value; nothing was written"
        )
    return out


def _unchanged(current: bytes | None, original: str | None) -> bool:
    if current is None or original is None:
        return current is None and original is None
    try:
        return normalize(current.decode("utf-8")) == original
    except UnicodeDecodeError:
        return False


def _destination(base: Path, rel: str) -> Path:
    destination = base / rel
    resolved = destination.resolve()
    if base not in resolved.parents or WORK_DIR in Path(rel).parts:
        raise ApplyError(f"--apply refused: {rel} lies outside the repository")
    try:
        info = os.lstat(destination)
    except FileNotFoundError:
        return destination
    except OSError as error:
        raise environment_error(destination, error) from None
    if not stat.S_ISREG(info.st_mode):
        raise ApplyError(
            f"--apply refused: {rel} is not a regular file (porter does not write through links or "
            "special files); nothing was written"
        )
    return destination


def _read(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise environment_error(path, error) from None


# ---- staging and committing ----------------------------------------------------------------


def _stage(base: Path, work: Path, prepared) -> list[Entry]:
    entries = []
    try:
        for index, (rel, current, new) in enumerate(prepared):
            destination = base / rel
            mode = stat.S_IMODE(os.stat(destination).st_mode) if current is not None else umask_mode()
            _write_synced(work / f"{index}.new", new, mode)
            backup = None
            if current is not None:
                backup = f"{index}.old"
                _write_synced(work / backup, current, mode)
            entries.append(
                Entry(
                    rel,
                    f"{index}.new",
                    backup,
                    None if current is None else sha256(current),
                    sha256(new),
                    _missing_dirs(base, destination.parent),
                )
            )
    except OSError as error:
        shutil.rmtree(work, ignore_errors=True)
        raise environment_error(getattr(error, "filename", None) or work, error) from None
    return entries


def _missing_dirs(base: Path, directory: Path) -> list[str]:
    missing = []
    while directory != base and not directory.exists():
        missing.append(directory.relative_to(base).as_posix())
        directory = directory.parent
    return list(reversed(missing))


def _write_synced(path: Path, data: bytes, mode: int) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fchmod(stream.fileno(), mode)
        os.fsync(stream.fileno())


def _write_journal(work: Path, state: str, entries: list[Entry]) -> None:
    temporary = work / (JOURNAL + ".tmp")
    payload = json.dumps({"state": state, "entries": [asdict(entry) for entry in entries]}, indent=1).encode()
    _write_synced_replace(temporary, payload)
    os.replace(temporary, work / JOURNAL)
    _sync_dir(work)


def _write_synced_replace(path: Path, data: bytes) -> None:
    path.unlink(missing_ok=True)
    _write_synced(path, data, 0o600)


def _sync_dir(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _recheck(base: Path, work: Path, entries: list[Entry]) -> None:
    """The last look before renaming: a file saved meanwhile stops the run with nothing written."""
    changed = [entry.path for entry in entries if _hash(base / entry.path) != entry.old_sha]
    if changed:
        shutil.rmtree(work, ignore_errors=True)
        raise ApplyError(f"--apply refused: changed while porter ran: {', '.join(changed)}; nothing was written")


def _hash(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            return sha256(handle.read())
    except FileNotFoundError:
        return None


def _commit(base: Path, work: Path, entries: list[Entry]) -> None:
    try:
        for entry in entries:
            for directory in entry.created_dirs:
                (base / directory).mkdir(exist_ok=True)
            os.replace(work / entry.staged, base / entry.path)
    except OSError as error:
        _write_journal(work, "rollback", entries)
        _roll_back(base, work, entries)
        shutil.rmtree(work, ignore_errors=True)
        raise ApplyError(
            f"--apply failed and was rolled back, nothing changed: {error.filename or ''}: {error.strerror or error}"
        ) from None


# ---- recovery ------------------------------------------------------------------------------


def recover(root: str | Path) -> list[str]:
    """Finish an --apply a kill interrupted in `root`; returns one message per thing it did."""
    base = Path(root).resolve()
    work = base / WORK_DIR
    if not work.is_dir() or work.is_symlink():
        return []
    with _Lock(work, create=False):
        try:
            journal = json.loads((work / JOURNAL).read_text(encoding="utf-8"))
            entries = [Entry(**item) for item in journal["entries"]]
            state = journal["state"]
        except FileNotFoundError:
            entries, state = [], "none"
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ApplyError(
                f"{work / JOURNAL}: unreadable journal of an interrupted --apply ({error}); "
                "inspect and remove the directory by hand"
            ) from None
        messages = _roll_forward(base, work, entries) if state == "commit" else _roll_back(base, work, entries)
    shutil.rmtree(work, ignore_errors=True)
    verb = {"commit": "completed", "rollback": "rolled back"}.get(state, "cleaned up (nothing had been written)")
    return [f"porter: an interrupted --apply in {base} was {verb}"] + messages


def _roll_forward(base: Path, work: Path, entries: list[Entry]) -> list[str]:
    notes = []
    for entry in entries:
        current = _hash(base / entry.path)
        if current == entry.new_sha:
            continue
        if current == entry.old_sha and (work / entry.staged).is_file():
            for directory in entry.created_dirs:
                (base / directory).mkdir(exist_ok=True)
            os.replace(work / entry.staged, base / entry.path)
        else:
            notes.append(f"porter: {entry.path}: changed by someone else since; left as it is")
    return notes


def _roll_back(base: Path, work: Path, entries: list[Entry]) -> list[str]:
    notes = []
    for entry in reversed(entries):
        destination = base / entry.path
        current = _hash(destination)
        if current == entry.old_sha:
            continue
        if current != entry.new_sha:
            notes.append(f"porter: {entry.path}: changed by someone else since; left as it is")
        elif entry.backup is None:
            destination.unlink()
        elif (work / entry.backup).is_file():
            os.replace(work / entry.backup, destination)
        for directory in reversed(entry.created_dirs):
            try:
                (base / directory).rmdir()
            except OSError:
                break  # not empty: someone put a file there
    return notes


class _Lock:
    """An exclusive flock on WORK_DIR/lock: the kernel drops it when its holder dies (kill -9)."""

    def __init__(self, work: Path, create: bool):
        self.work, self.create = work, create
        self.handle: BinaryIO | None = None

    def __enter__(self) -> _Lock:
        try:
            if self.create:
                self.work.mkdir()
            self.handle = open(self.work / "lock", "a+b")
        except FileExistsError:
            raise ApplyError(f"{self.work}: another porter --apply is writing this tree") from None
        except OSError as error:
            raise environment_error(self.work, error) from None
        try:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.handle.close()
            raise ApplyError(f"{self.work}: another porter --apply is writing this tree") from None
        return self

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            self.handle.close()
