"""Diffs that `git apply` accepts, composition of overlapping patches, atomic all-or-nothing writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from porter.records import FileEdit, Finding
from porter.remedy.apply import ApplyError
from porter.remedy.patches import apply_hunks, compose, patch_diff, unified_diff, write_files_atomically
from porter.remedy.planner import PlanOptions, plan_patches, shim_location
from porter.targets import get_target

HARDWARE = '''"""Checks."""
import torch


def check():
    if torch.version.cuda is None:
        raise RuntimeError("CUDA only")


def device():
    """Far enough from check() that the two patches' diff contexts do not overlap."""
    return torch.device("hip")
'''


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "init", "-q")
    return repo


def _finding(rule: str, path: str, line: int) -> Finding:
    return Finding(
        rule=rule,
        name=rule.lower(),
        severity="error",
        path=path,
        line=line,
        column=1,
        end_line=line,
        end_column=1,
        message=f"{rule} here",
        fix="codemod",
    )


def _git_apply(repo: Path, diff: str, tmp_path: Path, check_only: bool = False) -> subprocess.CompletedProcess:
    patch_file = tmp_path / f"p{abs(hash(diff))}.patch"
    patch_file.write_text(diff)
    return _git(repo, "apply", *(["--check"] if check_only else []), str(patch_file))


def test_diff_headers_new_file_and_missing_newline(tmp_path):
    repo = _repo(tmp_path, {"a.py": "x = 1\ny = 2"})
    diff = patch_diff([FileEdit("a.py", "x = 1\ny = 2", "x = 1\ny = 3"), FileEdit("pkg/new.py", None, "z = 1\n")])
    assert diff.startswith("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n")
    assert "\\ No newline at end of file" in diff and "new file mode 100644\n--- /dev/null\n+++ b/pkg/new.py" in diff
    done = _git_apply(repo, diff, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (repo / "a.py").read_text() == "x = 1\ny = 3" and (repo / "pkg/new.py").read_text() == "z = 1\n"


def test_unchanged_file_has_no_diff():
    assert unified_diff(FileEdit("a.py", "x\n", "x\n")) == ""


def test_plan_patches_apply_with_git_alone_and_in_series(tmp_path):
    repo = _repo(tmp_path, {"pkg/__init__.py": "", "pkg/hw.py": HARDWARE})
    findings = [
        _finding("PT201", "pkg/hw.py", 6),
        _finding("PT220", "pkg/hw.py", 12),
        _finding("PT999", "pkg/hw.py", 2),
    ]
    plan = plan_patches(repo, findings, get_target("mi300x"))
    assert [p.id for p in plan.patches] == ["0001-PT201", "0002-PT220"]
    assert [item.kind for item in plan.needs_review] == ["no-codemod"]
    for patch in plan.patches:  # each one alone on the original tree
        assert not patch.depends_on
        assert _git_apply(repo, patch.diff, tmp_path, check_only=True).returncode == 0
    for patch in plan.patches:  # and all of them, in order
        assert _git_apply(repo, patch.diff, tmp_path).returncode == 0
    text = (repo / "pkg/hw.py").read_text()
    assert "torch.version.hip is None" in text and 'torch.device("cuda")' in text
    assert (repo / "pkg/hw.py").read_text() == compose(plan.patches, plan.originals, {p.id for p in plan.patches})[0][
        "pkg/hw.py"
    ]


def test_overlapping_patches_chain_with_depends_on(tmp_path):
    source = 'import triton\nkernel[(1,)](x, num_warps=32, input_precision="tf32")\n'
    repo = _repo(tmp_path, {"k.py": source})
    findings = [_finding("PT101", "k.py", 2), _finding("PT114", "k.py", 2)]
    options = PlanOptions(exclusive=True)  # no shim: the two patches touch the same line
    plan = plan_patches(repo, findings, get_target("mi350x"), options)
    first, second = plan.patches
    assert second.depends_on == [first.id]
    assert _git_apply(repo, first.diff, tmp_path).returncode == 0
    assert _git_apply(repo, second.diff, tmp_path).returncode == 0
    assert (repo / "k.py").read_text() == 'import triton\nkernel[(1,)](x, num_warps=16, input_precision="bf16x3")\n'
    texts, skipped = compose(plan.patches, plan.originals, {second.id})
    assert texts == {} and "depends on" in skipped[second.id]


def test_apply_hunks_skips_an_import_already_added():
    middle = "".join(f"v{i} = {i}\n" for i in range(8))
    before = "import a\n\n" + middle + "x = 1\n" + middle + "w = 4\n"
    one = "import a\nimport shim\n\n" + middle + "x = shim.f(1)\n" + middle + "w = 4\n"
    two = "import a\nimport shim\n\n" + middle + "x = 1\n" + middle + "w = shim.g(4)\n"
    assert (
        apply_hunks(one, before, two)
        == "import a\nimport shim\n\n" + middle + "x = shim.f(1)\n" + middle + "w = shim.g(4)\n"
    )
    assert apply_hunks("something else\n", before, two) is None


def test_atomic_write_rolls_back_every_file(tmp_path):
    root = tmp_path / "tree"
    (root / "b").mkdir(parents=True)
    (root / "a.py").write_text("old a\n")
    (root / "c").mkdir()  # a directory where a file should go: os.replace fails on it
    (root / "c" / "x").write_text("keep")
    with pytest.raises(ApplyError, match="c is not a regular file"):
        write_files_atomically(root, {"a.py": "new a\n", "b/new.py": "new b\n", "c": "boom\n"})
    assert (root / "a.py").read_text() == "old a\n"
    assert not (root / "b" / "new.py").exists()
    assert not [p for p in root.rglob("*porter-tmp*")]


def test_atomic_write_refuses_paths_outside_the_tree(tmp_path):
    with pytest.raises(ApplyError, match="outside the repository"):
        write_files_atomically(tmp_path / "tree", {"../escape.py": "x\n"})
    assert not (tmp_path / "escape.py").exists()


def test_shim_location(tmp_path):
    (tmp_path / "nvkernels").mkdir()
    (tmp_path / "nvkernels" / "__init__.py").write_text("")
    location = shim_location(tmp_path)
    assert location.path == "nvkernels/_porter_shim.py"
    assert location.import_statement == "from nvkernels import _porter_shim as porter_shim"
    flat = tmp_path / "scripts_only"
    flat.mkdir()
    (flat / "train.py").write_text("x = 1\n")
    assert shim_location(flat).path == "porter_shim.py" and shim_location(flat).import_statement == "import porter_shim"


@pytest.mark.slow
def test_shim_patch_comes_first_and_codemods_depend_on_it(tmp_path):
    source = "import triton\n\n\ndef launch(x):\n    kernel[(1,)](x, num_warps=32)\n"
    repo = _repo(tmp_path, {"pkg/__init__.py": "", "pkg/k.py": source})
    plan = plan_patches(repo, [_finding("PT101", "pkg/k.py", 5)], get_target("mi300x"))
    shim, fix = plan.patches
    assert shim.id == "0001-shim" and shim.edits[0].path == "pkg/_porter_shim.py" and shim.edits[0].before is None
    assert fix.id == "0002-PT101" and fix.depends_on == ["0001-shim"] and fix.kind == "shim"
    assert "from pkg import _porter_shim as porter_shim" in fix.edits[0].after
    for patch in plan.patches:
        assert _git_apply(repo, patch.diff, tmp_path).returncode == 0
    env = dict(os.environ, PORTER_EMULATE_TARGET="mi300x", PYTHONPATH=str(repo))
    done = subprocess.run(
        [sys.executable, "-c", "from pkg import _porter_shim as s; print(s.cap_num_warps(32))"],
        capture_output=True,
        text=True,
        env=env,
        cwd=repo,
    )
    assert done.stdout.strip() == "16", done.stderr
    again = plan_patches(repo, [_finding("PT101", "pkg/k.py", 6)], get_target("mi300x"))
    assert again.patches == []  # rewriting the output proposes nothing


def test_occurrences_a_codemod_leaves_go_to_review(tmp_path):
    source = "import triton.language as tl\n\n\ndef f(x):\n    a = x.to(tl.float8e4nv)\n    b = x.to(tl.float8e5)\n    return a, b\n"
    repo = _repo(tmp_path, {"k.py": source})
    plan = plan_patches(repo, [_finding("PT115", "k.py", 5), _finding("PT115", "k.py", 6)], get_target("mi300x"))
    fix = plan.patches[-1]
    assert [f.line for f in fix.findings] == [5]
    assert [(item.finding.line, item.kind) for item in plan.needs_review] == [(6, "declined")]


def test_autotune_patch_claims_only_its_sites(tmp_path):
    source = (
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_stages=5, num_warps=8)],"
        " key=['M'])\n@triton.jit\n"
        "def k(a_ptr, M, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):\n"
        "    a = tl.load(a_ptr + tl.arange(0, BLOCK_M)[:, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, :])\n"
        "    tl.store(a_ptr, tl.dot(a, a))\n\n\n"
        "def launch(a):\n    other[(1,)](a, num_stages=5)\n"
    )
    repo = _repo(tmp_path, {"pkg/__init__.py": "", "pkg/k.py": source})
    findings = [_finding("PT103", "pkg/k.py", 5), _finding("PT103", "pkg/k.py", 13)]
    plan = plan_patches(repo, findings, get_target("mi300x"))
    fix = plan.patches[-1]
    assert [f.line for f in fix.findings] == [5] and "K_AMD_CONFIGS" in fix.edits[0].after
    assert [(item.finding.line, item.kind) for item in plan.needs_review] == [(13, "declined")]
