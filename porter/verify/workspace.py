"""An isolated copy of the repository to verify in: the user's tree is never touched.

Always a temporary copy that honours the .gitignore files (build output, caches, virtual
environments stay behind), with a .git of its own holding one commit of the copy: tests that run
`git config`, `git tag` or `git stash` reach that, never the user's repository (a worktree would
share the user's .git). Patches are applied there: Patch records edit by whole file text, patch
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
from porter.verify.isolation import hand_over, isolation_for


class PatchApplyError(Exception):
    """A patch that does not apply to the copy; the message says exactly why."""


@dataclass
class Workspace:
    root: Path  # the copy of the repository being verified (the same relative layout)
    base: Path  # the temporary directory to remove (or the worktree)
    kind: str  # "copy" (a worktree would share the user's .git)
    git_toplevel: Path | None = None

    def close(self) -> None:
        shutil.rmtree(self.base.parent, ignore_errors=True)


def create_workspace(repo: Path) -> Workspace:
    """A private copy of `repo` (a directory), with its own .git where git is installed."""
    repo = repo.resolve()
    if not repo.is_dir():
        raise UsageError(f"{repo}: not a directory")
    scratch = Path(tempfile.mkdtemp(prefix="porter-verify-"))
    os.chmod(scratch, 0o711)  # an unprivileged test user may pass through to its copy, not list it
    base = scratch / repo.name
    copy_tree(repo, base)
    _own_git(base)
    hand_over(isolation_for(), base)  # when porter runs as root, the tests run as nobody: the copy is theirs
    return Workspace(base, base, "copy")


def _own_git(root: Path) -> None:
    """`git init` + one commit of the copy, with hooks, signing and the user's config left out."""
    if shutil.which("git") is None:
        return
    env = dict(
        os.environ,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="porter",
        GIT_AUTHOR_EMAIL="porter@localhost",
        GIT_COMMITTER_NAME="porter",
        GIT_COMMITTER_EMAIL="porter@localhost",
    )
    quiet = ["-c", "core.hooksPath=" + os.devnull, "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-verify", "--allow-empty", "-m", "porter copy"]):
        try:
            done = subprocess.run(["git", *quiet, *args], cwd=root, env=env, capture_output=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return
        if done.returncode != 0:
            return


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
            raise PatchApplyError(
                f"{edit.path}: the file differs from the text the patch was computed against "
                f"(line {_first_difference(current or '', edit.before)})"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".porter-tmp")
        temporary.write_text(edit.after, encoding="utf-8")
        os.replace(temporary, path)


def _first_difference(a: str, b: str) -> int:
    for number, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), start=1):
        if x != y:
            return number
    return min(len(a.splitlines()), len(b.splitlines())) + 1


def _git_apply_env(root: Path) -> dict[str, str]:
    """Paths in a patch are relative to the verified root even when it is a subdirectory of a git worktree: stop
    git from discovering a repository above it."""
    return dict(os.environ, GIT_CEILING_DIRECTORIES=str(root.resolve().parent))


def apply_patch_file(root: Path, patch_file: Path) -> None:
    """`git apply` a unified diff in the copy (patch_file_paths lists what it touches)."""
    if shutil.which("git") is None:
        raise PatchApplyError("git is not installed: patch files are applied with `git apply`")
    text = patch_file.read_bytes()
    env = _git_apply_env(root)
    check = subprocess.run(
        ["git", "apply", "--check", "--verbose", "-"], cwd=root, input=text, capture_output=True, timeout=60, env=env
    )
    if check.returncode != 0:
        reason = check.stderr.decode(errors="replace").strip().splitlines()
        errors = [line for line in reason if line.startswith("error:") and not line.endswith("searching for:")]
        errors = errors or reason[-1:]
        raise PatchApplyError(f"{patch_file.name} does not apply: {'; '.join(errors) or 'git apply failed'}")
    subprocess.run(["git", "apply", "-"], cwd=root, input=text, capture_output=True, timeout=60, check=True, env=env)


def patch_from_file(patch_file: Path) -> Patch:
    """A Patch record standing for a patch file (applied with git apply, not by edits)."""
    if not patch_file.is_file():
        raise UsageError(f"{patch_file}: patch file not found")
    text = patch_file.read_text(encoding="utf-8", errors="replace")
    return Patch(
        id=patch_file.stem,
        kind="advice",
        rules=[],
        title=patch_file.name,
        rationale=f"patch file {patch_file}",
        edits=[],
        diff=text,
        notes=[f"patch-file:{patch_file.resolve()}"],
    )


def patch_file_paths(root: Path, patch_file: Path) -> list[str]:
    """The paths a patch file touches, without applying it."""
    env = _git_apply_env(root)
    done = subprocess.run(
        ["git", "apply", "--numstat", "-"],
        cwd=root,
        input=patch_file.read_bytes(),
        capture_output=True,
        timeout=60,
        env=env,
    )
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        raise PatchApplyError(f"{patch_file.name} is not a patch git can read: {(reason or ['?'])[-1]}")
    return [
        line.split("\t")[2] for line in done.stdout.decode(errors="replace").splitlines() if len(line.split("\t")) == 3
    ]


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
