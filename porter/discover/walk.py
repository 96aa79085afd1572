"""Walk a tree for the files rules read: gitignore-aware, symlink-safe, size-limited.

Every file passed over for a reason the user might not expect (too large, a symlink loop, a link
leaving the root, an unreadable directory) becomes a SkipNote instead of silently vanishing.
Ignored files (gitignore, default excludes, config globs) are not noted: that is the user's intent.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from porter.config import DEFAULT_MAX_FILE_BYTES
from porter.discover.ignore import (
    DEFAULT_EXCLUDED_DIRS,
    IgnoreLayer,
    ancestor_layers,
    compile_globs,
    is_ignored,
    read_gitignore,
)
from porter.discover.kinds import DEFAULT_KINDS, kind_of
from porter.errors import UsageError
from porter.records import SkipNote, SourceFile


@dataclass(frozen=True)
class DiscoverOptions:
    kinds: frozenset[str] = DEFAULT_KINDS
    exclude: tuple[str, ...] = ()  # gitignore-style globs relative to glob_root
    include: tuple[str, ...] = ()  # when given, a file must match one of them
    # The directory exclude/include are written from (the config file's); None: the scanned root. A scan of
    # packages/kernels with the repository's config matches `packages/kernels/third_party/**` as written.
    glob_root: str | None = None
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    use_gitignore: bool = True
    excluded_dirs: frozenset[str] = DEFAULT_EXCLUDED_DIRS


@dataclass
class Discovery:
    root: str  # absolute directory the relative paths start from
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[SkipNote] = field(default_factory=list)


def discover(path: str | Path, options: DiscoverOptions | None = None) -> Discovery:
    """The source files under `path` (a directory, or one file whose directory becomes the root)."""
    options = options or DiscoverOptions()
    target = Path(path)
    if not target.exists():
        raise UsageError(f"{path}: no such file or directory")
    if target.is_file():
        return _single_file(target, options)
    return _Walker(target, options).run()


def discover_paths(paths: Sequence[str | Path], root: str | Path, options: DiscoverOptions | None = None) -> Discovery:
    """Several files or directories as one Discovery whose paths start from `root` (which holds them all).

    Each path is discovered as if named alone (a named file is read even if ignored); a file reached
    twice (named and inside a named directory) counts once.
    """
    base = str(Path(root).resolve())
    merged = Discovery(root=base)
    seen: set[str] = set()
    for path in paths:
        found = discover(path, options)
        for source in found.files:
            if source.absolute not in seen:
                seen.add(source.absolute)
                merged.files.append(replace(source, path=_rebased(found.root, source.path, base)))
        merged.skipped.extend(replace(note, path=_rebased(found.root, note.path, base)) for note in found.skipped)
    merged.files.sort(key=lambda source: source.path)
    merged.skipped.sort(key=lambda note: note.path)
    return merged


def _rebased(old_root: str, relative: str, new_root: str) -> str:
    return Path(os.path.relpath(os.path.join(old_root, relative), new_root)).as_posix()


def _single_file(path: Path, options: DiscoverOptions) -> Discovery:
    """An explicitly named file is scanned even if ignored, as long as some rule reads its kind."""
    root = str(path.resolve().parent)
    found = Discovery(root=root)
    kind = kind_of(path.name)
    if kind is None or kind not in options.kinds:
        found.skipped.append(SkipNote(path.name, "no rule reads this kind of file"))
        return found
    note_or_file = _source_file(path.name, str(path.resolve()), kind, options)
    if isinstance(note_or_file, SourceFile):
        found.files.append(note_or_file)
    else:
        found.skipped.append(note_or_file)
    return found


def _source_file(rel: str, absolute: str, kind: str, options: DiscoverOptions) -> SourceFile | SkipNote:
    try:
        info = os.stat(absolute)
    except OSError as error:
        return SkipNote(rel, f"unreadable: {error.strerror or error}")
    if not stat.S_ISREG(info.st_mode):
        return SkipNote(rel, "not a regular file (a FIFO, device or socket is never read)")
    size = info.st_size
    if size > options.max_file_bytes:
        return SkipNote(rel, f"larger than max_file_bytes ({size} > {options.max_file_bytes} bytes)")
    return SourceFile(path=rel, absolute=absolute, size=size, kind=kind)


class _Walker:
    def __init__(self, root: Path, options: DiscoverOptions) -> None:
        self.root = str(root.resolve())
        self.options = options
        self.exclude = compile_globs(options.exclude)
        self.include = compile_globs(options.include)
        self.glob_prefix = _glob_prefix(self.root, options.glob_root)
        self.found = Discovery(root=self.root)
        self.seen_dirs: set[str] = {self.root}  # real paths: a symlink back up the tree is a loop
        self.seen_files: set[str] = set()

    def run(self) -> Discovery:
        above = ancestor_layers(self.root) if self.options.use_gitignore else ()
        stack: list[tuple[str, str, tuple[IgnoreLayer, ...]]] = [(self.root, "", above)]
        while stack:
            directory, prefix, layers = stack.pop()
            subdirs = self._visit(directory, prefix, self._with_gitignore(directory, prefix, layers))
            stack.extend(reversed(subdirs))  # depth-first in name order
        self.found.files.sort(key=lambda source: source.path)
        self.found.skipped.sort(key=lambda note: note.path)
        return self.found

    def _with_gitignore(self, directory: str, prefix: str, layers: tuple[IgnoreLayer, ...]):
        if not self.options.use_gitignore:
            return layers
        layer = read_gitignore(directory, prefix)
        return layers + (layer,) if layer else layers

    def _visit(self, directory: str, prefix: str, layers: tuple[IgnoreLayer, ...]) -> list:
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            self.found.skipped.append(SkipNote(prefix.rstrip("/") or ".", f"unreadable directory: {error.strerror}"))
            return []
        subdirs = []
        for entry in entries:
            rel = prefix + entry.name
            try:
                is_dir = entry.is_dir()  # follows symlinks
            except OSError:
                is_dir = False
            if is_dir:
                if self._keep_dir(entry, rel, layers):
                    subdirs.append((entry.path, rel + "/", layers))
            else:
                self._consider_file(entry, rel, layers)
        return subdirs

    def _keep_dir(self, entry: os.DirEntry, rel: str, layers) -> bool:
        if entry.name in self.options.excluded_dirs or self._ignored(rel, True, layers):
            return False
        real = os.path.realpath(entry.path)
        if entry.is_symlink() and not _inside(real, self.root):
            self.found.skipped.append(SkipNote(rel, "symlink to a directory outside the scanned root"))
            return False
        if real in self.seen_dirs:
            self.found.skipped.append(SkipNote(rel, "symlink to a directory already scanned (loop or alias)"))
            return False
        self.seen_dirs.add(real)
        return True

    def _consider_file(self, entry: os.DirEntry, rel: str, layers) -> None:
        kind = kind_of(entry.name)
        if kind is None or kind not in self.options.kinds:
            return
        if self._ignored(rel, False, layers):
            return
        if self.include is not None and not self.include.match_file(self.glob_prefix + rel):
            return
        real = os.path.realpath(entry.path)
        if entry.is_symlink():
            if not os.path.exists(real):
                self.found.skipped.append(SkipNote(rel, "broken symlink"))
                return
            if not _inside(real, self.root):
                self.found.skipped.append(SkipNote(rel, "symlink to a file outside the scanned root"))
                return
        if real in self.seen_files:
            return  # the same file reached through a link: scan it once
        self.seen_files.add(real)
        record = _source_file(rel, entry.path, kind, self.options)
        if isinstance(record, SourceFile):
            self.found.files.append(record)
        else:
            self.found.skipped.append(record)

    def _ignored(self, rel: str, is_dir: bool, layers) -> bool:
        if self.exclude is not None and self.exclude.match_file(self.glob_prefix + rel + ("/" if is_dir else "")):
            return True
        return is_ignored(layers, rel, is_dir)


def _glob_prefix(root: str, glob_root: str | None) -> str:
    """The scanned root's place below the globs' directory, as a path prefix ('' when it is that directory,
    or not below it: then the globs apply from the root, as they did before config files were searched upward)."""
    if glob_root is None:
        return ""
    base = os.path.realpath(glob_root)
    if root == base or not _inside(root, base):
        return ""
    return Path(os.path.relpath(root, base)).as_posix() + "/"


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def kinds_for(ruleset) -> frozenset[str]:
    """The file kinds a rule set reads (python unless the rule set declares more)."""
    kinds: Iterable[str] | None = getattr(ruleset, "file_kinds", None)
    return frozenset(kinds) if kinds else DEFAULT_KINDS
