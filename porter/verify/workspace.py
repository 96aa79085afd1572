"""An isolated copy of the repository to verify in: the user's tree is never touched.

A git worktree of HEAD when the path lies in a git repository whose status is clean (cheap and
exact), else a temporary copy that honours the .gitignore files (build output, caches, virtual
environments stay behind). Patches are applied there: Patch records edit by whole file text, patch
files go through `git apply`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from porter.discover.ignore import DEFAULT_EXCLUDED_DIRS, is_ignored, read_gitignore
from porter.errors import UsageError
from porter.records import Patch


class PatchApplyError(Exception):
    """A patch that does not apply to the copy; the message says exactly why."""


@dataclass
class Workspace:
    root: Path  # the copy of the repository being verified (the same relative layout)
    base: Path  # the temporary directory to remove (or the worktree)
    kind: str  # "worktree" | "copy"
    git_toplevel: Path | None = None

    def close(self) -> None:
        if self.kind == "worktree" and self.git_toplevel is not None:
            _git(self.git_toplevel, "worktree", "remove", "--force", str(self.base), check=False)
        shutil.rmtree(self.base.parent if self.kind == "copy" else self.base, ignore_errors=True)


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check, timeout=120)


def _git_toplevel(path: Path) -> Path | None:
    if shutil.which("git") is None:
        return None
    try:
        done = _git(path, "rev-parse", "--show-toplevel", check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def _clean_head(toplevel: Path) -> bool:
    head = _git(toplevel, "rev-parse", "--verify", "-q", "HEAD", check=False)
    status = _git(toplevel, "status", "--porcelain", check=False)
    return head.returncode == 0 and status.returncode == 0 and not status.stdout.strip()


def create_workspace(repo: Path) -> Workspace:
    """A private copy of `repo` (a directory)."""
    repo = repo.resolve()
    if not repo.is_dir():
        raise UsageError(f"{repo}: not a directory")
    toplevel = _git_toplevel(repo)
    if toplevel is not None and _clean_head(toplevel):
        base = Path(tempfile.mkdtemp(prefix="porter-verify-")) / "worktree"
        done = _git(toplevel, "worktree", "add", "--detach", str(base), "HEAD", check=False)
        if done.returncode == 0:
            return Workspace(base / repo.relative_to(toplevel), base, "worktree", toplevel)
        shutil.rmtree(base.parent, ignore_errors=True)
    base = Path(tempfile.mkdtemp(prefix="porter-verify-")) / repo.name
    copy_tree(repo, base)
    return Workspace(base, base, "copy")


def copy_tree(source: Path, destination: Path) -> None:
    """Copy `source` to `destination`, leaving out what .gitignore and porter's defaults exclude."""
    layers: dict[str, tuple] = {"": tuple(filter(None, [read_gitignore(str(source), "")]))}
    for directory, dirnames, filenames in os.walk(source, followlinks=False):
        rel_dir = Path(directory).relative_to(source).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        active = layers[rel_dir]
        target_dir = destination / rel_dir
        target_dir.mkdir(parents=True, exist_ok=True)
        kept = []
        for name in sorted(dirnames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name in DEFAULT_EXCLUDED_DIRS or is_ignored(active, rel, True) or os.path.islink(Path(directory, name)):
                continue
            layer = read_gitignore(os.path.join(directory, name), rel + "/")
            layers[rel] = active + ((layer,) if layer else ())
            kept.append(name)
        dirnames[:] = kept
        for name in filenames:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if is_ignored(active, rel, False):
                continue
            src = Path(directory, name)
            if src.is_symlink():
                continue  # a link could point outside the repository
            shutil.copy2(src, target_dir / name)


def _inside(root: Path, rel: str) -> Path:
    path = (root / rel).resolve()
    if path != root.resolve() and root.resolve() not in path.parents:
        raise PatchApplyError(f"{rel}: path leaves the repository")
    return path


def apply_patch(root: Path, patch: Patch) -> None:
    """Apply a Patch record's file edits; each `before` must match the file as it is now."""
    for edit in patch.edits:
        path = _inside(root, edit.path)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if edit.before is None and current is not None:
            raise PatchApplyError(f"{edit.path}: the patch creates this file, but it already exists")
        if edit.before is not None and current is None:
            raise PatchApplyError(f"{edit.path}: the patch edits this file, but it does not exist")
        if edit.before is not None and current != edit.before:
            raise PatchApplyError(f"{edit.path}: the file differs from the text the patch was computed against "
                                  f"(line {_first_difference(current or '', edit.before)})")
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".porter-tmp")
        temporary.write_text(edit.after, encoding="utf-8")
        os.replace(temporary, path)


def _first_difference(a: str, b: str) -> int:
    for number, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), start=1):
        if x != y:
            return number
    return min(len(a.splitlines()), len(b.splitlines())) + 1


def apply_patch_file(root: Path, patch_file: Path) -> list[str]:
    """`git apply` a unified diff in the copy; returns the paths it touches (relative to root)."""
    if shutil.which("git") is None:
        raise PatchApplyError("git is not installed: patch files are applied with `git apply`")
    text = patch_file.read_bytes()
    # Paths in the patch are relative to the verified root even when it is a subdirectory of a
    # git worktree: stop git from discovering a repository above it.
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(root.resolve().parent))
    check = subprocess.run(["git", "apply", "--check", "--verbose", "-"], cwd=root, input=text,
                           capture_output=True, timeout=60, env=env)
    if check.returncode != 0:
        reason = check.stderr.decode(errors="replace").strip().splitlines()
        errors = [line for line in reason if line.startswith("error:") and not line.endswith("searching for:")]
        errors = errors or reason[-1:]
        raise PatchApplyError(f"{patch_file.name} does not apply: {'; '.join(errors) or 'git apply failed'}")
    numstat = subprocess.run(["git", "apply", "--numstat", "-"], cwd=root, input=text, capture_output=True,
                             timeout=60, env=env)
    subprocess.run(["git", "apply", "-"], cwd=root, input=text, capture_output=True, timeout=60, check=True, env=env)
    paths = []
    for line in numstat.stdout.decode(errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            paths.append(parts[2])
    return paths


def patch_from_file(patch_file: Path) -> Patch:
    """A Patch record standing for a patch file (applied with git apply, not by edits)."""
    if not patch_file.is_file():
        raise UsageError(f"{patch_file}: patch file not found")
    text = patch_file.read_text(encoding="utf-8", errors="replace")
    return Patch(id=patch_file.stem, kind="advice", rules=[], title=patch_file.name,
                 rationale=f"patch file {patch_file}", edits=[], diff=text,
                 notes=[f"patch-file:{patch_file.resolve()}"])


def patch_file_paths(root: Path, patch_file: Path) -> list[str]:
    """The paths a patch file touches, without applying it."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(root.resolve().parent))
    done = subprocess.run(["git", "apply", "--numstat", "-"], cwd=root, input=patch_file.read_bytes(),
                          capture_output=True, timeout=60, env=env)
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        raise PatchApplyError(f"{patch_file.name} is not a patch git can read: {(reason or ['?'])[-1]}")
    return [line.split("\t")[2] for line in done.stdout.decode(errors="replace").splitlines()
            if len(line.split("\t")) == 3]


# ---------------------------------------------------------------- import paths for the project's processes

_PORTER_PACKAGE = Path(__file__).resolve().parents[1]  # the porter package directory itself
_porter_only: list[Path] = []


def porter_only_path() -> Path:
    """A folder holding nothing but the `porter` package (a link to it): what the replay plugin and
    the compile worker need from porter, without porter's own site-packages or repository root
    (whose torch, triton or `tests` package would shadow the project's)."""
    if _porter_only and (_porter_only[0] / "porter").exists():
        return _porter_only[0]
    folder = Path(tempfile.mkdtemp(prefix="porter-path-"))
    try:
        (folder / "porter").symlink_to(_PORTER_PACKAGE, target_is_directory=True)
    except OSError:  # no symlinks here (some Windows setups): a copy of the package
        shutil.copytree(_PORTER_PACKAGE, folder / "porter", ignore=shutil.ignore_patterns("__pycache__"))
    atexit.register(shutil.rmtree, folder, True)
    _porter_only[:] = [folder]
    return folder


def project_import_paths(root: Path) -> list[str]:
    """PYTHONPATH entries for the project's processes, first to last: the workspace copy (and its src/
    folder in a src layout, so the copy is imported rather than an installed one), then porter alone."""
    paths = [str(root)]
    source = root / "src"
    if source.is_dir() and any(child.suffix == ".py" or child.is_dir() for child in source.iterdir()):
        paths.append(str(source))
    return paths + [str(porter_only_path())]
