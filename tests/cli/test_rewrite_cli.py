"""`porter rewrite` end to end on the bundled example: report directory, git-applicable patches,
--apply (atomic, refuses a dirty tree), idempotence, exit codes, and a verifier rejection."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from porter.cli import main
from porter.cli.rewrite import parse_tune, run_rewrite
from porter.errors import UsageError


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args], capture_output=True, text=True
    )


def _commit(repo: Path) -> Path:
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "original")
    return repo


def _digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts and ".porter-cache" not in p.parts
    }


def _quiet(*_args, **_kwargs) -> None:
    return None


@pytest.fixture
def repo(example_repo: Path) -> Path:
    return _commit(example_repo)


@pytest.mark.slow
@pytest.mark.parametrize(
    "target, expected_rules",
    [
        # no PT107: the example's GEMM operands are not visible to the scan, and gfx942's (stages - 1) buffers fit
        # even at 2 bytes; an overflow the cross-compile measures comes back as PT907 (tests/test_pipeline.py)
        # no PT115 either: the example's fp8 kernel converts and stores, it feeds no tl.dot (no MFMA operand)
        ("mi300x", {"PT101", "PT102", "PT109", "PT110", "PT116", "PT103"}),
        (
            "mi350x",
            {"PT101", "PT102", "PT109", "PT110", "PT114", "PT116", "PT103"},
        ),
    ],
)
def test_report_dir_and_patches_apply_in_order_on_the_original_tree(repo, tmp_path, target, expected_rules):
    before = _digest(repo)
    out = tmp_path / "report"
    # PT103 (the NVIDIA-tuning group), PT102 and PT116 are opt-in: turned on here so their codemods' patches are
    # checked too
    code = run_rewrite(
        repo, target=target, out=out, verify=False, echo=_quiet, extend_select=["PT103", "PT102", "PT116"]
    )
    assert code == 1  # unverified patches remain
    assert _digest(repo) == before  # without --apply nothing in the tree changes
    report = json.loads((out / "report.json").read_text())
    ids = [p["id"] for p in report["patches"]]
    assert ids and ids[0] == "0001-shim" and all(p["status"].startswith("unverified") for p in report["patches"])
    assert sorted(f.name for f in (out / "patches").iterdir()) == sorted(f"{i}.patch" for i in ids)
    for name in ("report.md", "findings.sarif", "needs-review.md"):
        assert (out / name).is_file()
    assert json.loads((out / "findings.sarif").read_text())["version"] == "2.1.0"
    markdown = (out / "report.md").read_text()
    assert "## Needs review" in markdown and "```diff" in markdown and "Target facts relied on" in markdown
    rules = {r for p in report["patches"] for r in p["rules"]}
    assert expected_rules <= rules
    declined = [i for i in report["needs_review"] if i["kind"] == "declined"]
    assert not [i for i in declined if i["finding"]["rule"] in ("PT103", "PT107")], declined  # the AMD list covers them
    for patch_id in ids:  # each patch applies with git on the original tree plus the patches it depends on
        done = _git(repo, "apply", str(out / "patches" / f"{patch_id}.patch"))
        assert done.returncode == 0, (patch_id, done.stderr)
    for path in repo.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")


@pytest.mark.slow
def test_apply_then_rerun_proposes_nothing(repo, tmp_path):
    assert run_rewrite(repo, target="mi300x", out=tmp_path / "one", verify=False, apply=True, echo=_quiet) == 1
    first = json.loads((tmp_path / "one" / "report.json").read_text())
    assert all("applied" in p["status"] for p in first["patches"])
    assert (repo / "nvkernels" / "_porter_shim.py").is_file()
    assert (
        "porter_shim.cap_num_warps(32 if BLOCK_SIZE >= 4096 else 8)"
        in (repo / "nvkernels/normalization.py").read_text()
    )
    assert (
        run_rewrite(
            repo, target="mi300x", out=tmp_path / "two", verify=False, apply=True, allow_dirty=True, echo=_quiet
        )
        == 0
    )
    second = json.loads((tmp_path / "two" / "report.json").read_text())
    assert second["patches"] == []
    fixed = {p["rules"][0] for p in first["patches"] if p["rules"]}
    remaining = {f["rule"] for f in second["findings"]}
    assert not ({"PT101", "PT102", "PT109", "PT116"} & remaining), remaining & fixed


def test_apply_refuses_a_dirty_tree(repo, tmp_path):
    (repo / "nvkernels" / "gemm.py").write_text((repo / "nvkernels" / "gemm.py").read_text() + "# local edit\n")
    before = _digest(repo)
    with pytest.raises(UsageError, match="uncommitted changes"):
        run_rewrite(repo, target="mi300x", out=tmp_path / "r", verify=False, apply=True, echo=_quiet)
    assert _digest(repo) == before
    assert (
        run_rewrite(repo, target="mi300x", out=tmp_path / "r", verify=False, apply=True, allow_dirty=True, echo=_quiet)
        == 1
    )
    assert (repo / "nvkernels" / "gemm.py").read_text().endswith("# local edit\n")


def test_exclusive_writes_target_values(repo, tmp_path):
    run_rewrite(  # PT103 (opt-in) brings in the autotune codemod, whose AMD list --exclusive writes alone
        repo,
        target="mi350x",
        out=tmp_path / "r",
        verify=False,
        apply=True,
        exclusive=True,
        echo=_quiet,
        extend_select=["PT103"],
    )
    gemm = (repo / "nvkernels" / "gemm.py").read_text()
    assert "@triton.autotune(configs=MATMUL_KERNEL_AMD_CONFIGS, key=" in gemm and "IS_HIP" not in gemm
    assert "num_warps = 16 if BLOCK_SIZE >= 4096 else 8" in (repo / "nvkernels/normalization.py").read_text()


@pytest.mark.slow
def test_cli_formats_and_exit_codes(repo, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["rewrite", str(repo), "--target", "mi300x", "--no-verify", "--format", "json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"]["patches"] == len(payload["patches"]) > 0
    assert (tmp_path / "porter-report" / "report.md").is_file()  # default --out: ./porter-report of the cwd
    assert main(["rewrite", str(repo), "--target", "mi300x", "--no-verify", "--format", "github"]) == 1
    assert all(line.startswith("::") for line in capsys.readouterr().out.splitlines())
    assert main(["rewrite", str(tmp_path / "missing"), "--no-verify"]) == 2
    assert main(["rewrite", str(repo), "--target", "nope", "--no-verify"]) == 2
    assert main(["rewrite", str(repo), "--tune", "best", "--no-verify"]) == 2


def test_parse_tune():
    assert parse_tune(None) is None and parse_tune("topk=3") == 3
    with pytest.raises(UsageError):
        parse_tune("topk=0")


@pytest.mark.slow
def test_verifier_rejection_is_reported_and_not_applied(tmp_path):
    repo = tmp_path / "rej"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "mod.py").write_text('import torch\n\n\ndef device_name():\n    return torch.device("hip").type\n')
    (repo / "tests" / "test_mod.py").write_text(
        "from pkg.mod import device_name\n\n\ndef test_device_name():\n    assert device_name() == 'hip'\n"
    )
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n[tool.porter.verify]\ncross_compile = false\njobs = 0\n'
    )
    _commit(repo)
    before = _digest(repo)
    code = run_rewrite(repo, target="mi300x", out=tmp_path / "out", apply=True, echo=_quiet)
    assert code == 1
    assert _digest(repo) == before
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    (patch,) = report["patches"]
    assert patch["status"] == "rejected, not applied" and "fails with them" in " ".join(patch["verdict"]["reasons"])
    assert "rejected" in (tmp_path / "out" / "report.md").read_text()


def test_report_inside_the_tree_does_not_make_it_dirty(repo, monkeypatch):
    from porter.cli.rewrite import git_dirty
    from porter.report.report_dir import publish

    monkeypatch.chdir(repo)
    publish(repo / "review-out", {"report.md": "previous run\n", "patches/0001-x.patch": "diff\n"})
    assert git_dirty(repo, exclude=Path("review-out")) is False
    assert git_dirty(repo) is True
    (repo / "review-out" / "notes.py").write_text("user work\n")  # not porter's: it still counts
    assert git_dirty(repo, exclude=Path("review-out")) is True
