"""File discovery: gitignore layers, default excludes, config globs, symlinks, size and encoding."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from porter.discover import DiscoverOptions, decode, discover, read_bytes, read_source
from porter.errors import UsageError
from porter.records import SkipNote, SourceFile


def write(root: Path, rel: str, text: str = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def paths(found) -> list[str]:
    return [source.path for source in found.files]


def notes(found) -> dict[str, str]:
    return {note.path: note.reason for note in found.skipped}


def test_finds_python_files_with_posix_relative_paths_in_order(tmp_path):
    for rel in ("b.py", "a/z.py", "a/b/c.py", "README.md", "setup.cfg"):
        write(tmp_path, rel)
    found = discover(tmp_path)
    assert paths(found) == ["a/b/c.py", "a/z.py", "b.py"]
    first = found.files[0]
    assert first.kind == "python" and Path(first.absolute) == (tmp_path / "a/b/c.py").resolve()
    assert first.size == len("x = 1\n")
    assert found.skipped == []


def test_root_and_nested_gitignore_with_negation_and_directory_patterns(tmp_path):
    write(tmp_path, ".gitignore", "generated/\n*_pb2.py\n")
    write(tmp_path, "keep.py")
    write(tmp_path, "api_pb2.py")
    write(tmp_path, "generated/model.py")
    write(tmp_path, "pkg/.gitignore", "*.py\n!wanted.py\n")
    write(tmp_path, "pkg/wanted.py")
    write(tmp_path, "pkg/unwanted.py")
    write(tmp_path, "pkg/deeper/also_unwanted.py")
    write(tmp_path, "other/unwanted.py")  # the nested file's patterns do not reach siblings
    assert paths(discover(tmp_path)) == ["keep.py", "other/unwanted.py", "pkg/wanted.py"]
    assert "api_pb2.py" in paths(discover(tmp_path, DiscoverOptions(use_gitignore=False)))


def test_anchored_gitignore_pattern_applies_only_at_its_level(tmp_path):
    write(tmp_path, "sub/.gitignore", "/top.py\n")
    write(tmp_path, "sub/top.py")
    write(tmp_path, "sub/inner/top.py")
    write(tmp_path, "top.py")
    assert paths(discover(tmp_path)) == ["sub/inner/top.py", "top.py"]


@pytest.mark.parametrize(
    "directory",
    [
        ".git",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        "build",
        "dist",
        "site-packages",
        ".tox",
        "pkg/__pycache__",
        "lib/site-packages",
    ],
)
def test_default_excluded_directories(tmp_path, directory):
    write(tmp_path, f"{directory}/hidden.py")
    write(tmp_path, "src/seen.py")
    assert paths(discover(tmp_path)) == ["src/seen.py"]


def test_config_exclude_and_include_globs(tmp_path):
    for rel in ("src/a.py", "src/legacy/old.py", "tests/test_a.py", "tools/x.py"):
        write(tmp_path, rel)
    assert paths(discover(tmp_path, DiscoverOptions(exclude=("legacy/", "tests/")))) == ["src/a.py", "tools/x.py"]
    assert paths(discover(tmp_path, DiscoverOptions(include=("src/**",)))) == ["src/a.py", "src/legacy/old.py"]


def test_symlink_loop_terminates_with_a_note(tmp_path):
    write(tmp_path, "pkg/mod.py")
    os.symlink("..", tmp_path / "pkg" / "up")
    os.symlink(".", tmp_path / "pkg" / "self")
    outcome: dict = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("found", discover(tmp_path)), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "discovery did not finish: symlink loop followed"
    found = outcome["found"]
    assert paths(found) == ["pkg/mod.py"]
    assert set(notes(found)) == {"pkg/self", "pkg/up"}
    assert all("already scanned" in reason for reason in notes(found).values())


def test_symlinks_leaving_the_root_and_broken_links_are_noted(tmp_path):
    outside = tmp_path / "outside"
    write(outside, "secret.py")
    root = tmp_path / "repo"
    write(root, "main.py")
    os.symlink(outside, root / "linked_dir")
    os.symlink(outside / "secret.py", root / "linked_file.py")
    os.symlink(root / "missing.py", root / "dangling.py")
    found = discover(root)
    assert paths(found) == ["main.py"]
    reasons = notes(found)
    assert "outside the scanned root" in reasons["linked_dir"]
    assert "outside the scanned root" in reasons["linked_file.py"]
    assert reasons["dangling.py"] == "broken symlink"


def test_a_file_reached_through_a_link_inside_the_root_is_scanned_once(tmp_path):
    write(tmp_path, "real/mod.py")
    os.symlink(tmp_path / "real" / "mod.py", tmp_path / "alias.py")
    assert paths(discover(tmp_path)) == ["alias.py"]


def test_huge_file_is_skipped_with_a_note(tmp_path):
    write(tmp_path, "small.py", "x = 1\n")
    write(tmp_path, "big.py", "x = 1\n" * 200)
    found = discover(tmp_path, DiscoverOptions(max_file_bytes=1000))
    assert paths(found) == ["small.py"]
    assert "larger than max_file_bytes (1200 > 1000" in notes(found)["big.py"]


def test_default_size_limit_is_two_megabytes(tmp_path):
    write(tmp_path, "big.py", "#" * (2 * 1024 * 1024 + 1))
    assert "big.py" in notes(discover(tmp_path))


def test_text_checks_non_utf8_binary_and_bom():
    assert decode("a.py", "x = 'é'\n".encode()) == "x = 'é'\n"
    latin = decode("l.py", "x = 'é'\n".encode("latin-1"))
    assert isinstance(latin, SkipNote) and latin.path == "l.py" and "not UTF-8" in latin.reason
    binary = decode("b.py", b"\x00\x01abc")
    assert isinstance(binary, SkipNote) and "binary" in binary.reason
    assert decode("bom.py", "\ufeffimport torch\n".encode("utf-8")) == "import torch\n"


def test_unreadable_file_gives_a_note_not_an_exception(tmp_path):
    gone = SourceFile(path="gone.py", absolute=str(tmp_path / "gone.py"), size=10)
    note = read_bytes(gone)
    assert isinstance(note, SkipNote) and note.reason.startswith("unreadable")
    assert isinstance(read_source(gone), SkipNote)


def test_single_file_root(tmp_path):
    path = write(tmp_path, "pkg/one.py")
    found = discover(path)
    assert paths(found) == ["one.py"] and Path(found.root) == (tmp_path / "pkg").resolve()
    text_file = write(tmp_path, "notes.txt")
    assert notes(discover(text_file)) == {"notes.txt": "no rule reads this kind of file"}


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file or directory"):
        discover(tmp_path / "nope")


def test_other_kinds_only_when_rules_read_them(tmp_path):
    write(tmp_path, "run.sh", "CUDA_LAUNCH_BLOCKING=1 python x.py\n")
    write(tmp_path, "docker/Dockerfile", "FROM nvidia/cuda\n")
    write(tmp_path, "x.py")
    assert paths(discover(tmp_path)) == ["x.py"]
    found = discover(tmp_path, DiscoverOptions(kinds=frozenset({"python", "shell", "dockerfile"})))
    assert {(s.path, s.kind) for s in found.files} == {
        ("run.sh", "shell"),
        ("docker/Dockerfile", "dockerfile"),
        ("x.py", "python"),
    }


def test_gitignore_files_above_the_root_apply_inside_a_work_tree(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo, ".gitignore", "src/pkg/generated.py\n*.tmp.py\n")
    write(repo, "src/.gitignore", "pkg/vendored/\n")
    write(repo, "src/pkg/generated.py")
    write(repo, "src/pkg/scratch.tmp.py")
    write(repo, "src/pkg/vendored/lib.py")
    write(repo, "src/pkg/real.py")
    assert paths(discover(repo / "src" / "pkg")) == ["real.py"]
    assert paths(discover(repo)) == ["src/pkg/real.py"]


def test_gitignore_files_above_the_root_do_not_apply_outside_a_work_tree(tmp_path):
    write(tmp_path, ".gitignore", "*.py\n")
    write(tmp_path, "pkg/real.py")
    assert paths(discover(tmp_path / "pkg")) == ["real.py"]
