"""`porter rewrite` fails closed and follows the target's evidence (porter.pipeline).

A verifier that cannot run (an import error planted in porter.verify, a test interpreter without
pytest, a test that deletes its tree, an infinite timeout) applies nothing and exits 2 with one
error line; a patch no test exercises is unverified and never applied; a launch over the thread
limit that only the replay sees becomes a runtime finding the next round remedies; a PTX op no
codemod knows goes to the model.
"""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from porter.cli import main
from tests.openai_stub_server import Step, StubServer

ENV_MODULE = 'import os\n\n\ndef debug_mode():\n    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n    return True\n'
IMPORTING_TEST = "from pkg.mod import debug_mode\n\n\ndef test_debug_mode():\n    assert debug_mode()\n"
OTHER_TEST = "def test_arithmetic():\n    assert 1 + 1 == 2\n"
# PT403 (CUDA_LAUNCH_BLOCKING) is opt-in since session 24; these repositories turn it on through the config, as a
# user would, because its one-line codemod is the smallest patch the pipeline can carry. Tests that --select one
# other rule use ONE_RULE_PYPROJECT, where the config adds nothing to the selection.
PYTEST_INI = '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
PYPROJECT = PYTEST_INI + '[tool.porter]\nextend_select = ["PT403"]\n\n[tool.porter.verify]\njobs = 0\n'
ONE_RULE_PYPROJECT = PYTEST_INI + "[tool.porter.verify]\njobs = 0\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args],
        capture_output=True,
        text=True,
        check=True,
    )


def _digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts and ".porter-cache" not in p.parts
    }


def make_repo(
    root: Path, tests: dict[str, str], pyproject: str = PYPROJECT, modules: dict[str, str] | None = None
) -> Path:
    for rel, text in {
        "pkg/__init__.py": "",
        "pkg/mod.py": ENV_MODULE,
        **(modules or {}),
        **tests,
        "pyproject.toml": pyproject,
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "original")
    return root


def rewrite(repo: Path, out: Path, *extra: str) -> int:
    return main(["rewrite", str(repo), "--target", "mi350x", "--out", str(out), "--apply", *extra])


def error_lines(err: str) -> list[str]:
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.startswith("porter: error")]


def test_the_repo_verifies_when_the_verifier_works(tmp_path):
    """The control for the failure cases below: the same repository is ported with exit 0."""
    repo = make_repo(tmp_path / "repo", {"tests/test_mod.py": IMPORTING_TEST})
    assert rewrite(repo, tmp_path / "out") == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["patches"] and {p["state"] for p in report["patches"]} == {"accepted"}
    assert "AMD_SERIALIZE_KERNEL" in (repo / "pkg" / "mod.py").read_text()


def test_an_import_error_planted_in_the_verifier_applies_nothing_and_exits_2(tmp_path, monkeypatch, capsys):
    repo = make_repo(tmp_path / "repo", {"tests/test_mod.py": IMPORTING_TEST})
    before = _digest(repo)
    monkeypatch.setitem(sys.modules, "porter.verify.core", None)  # `import porter.verify.core` raises ImportError
    assert rewrite(repo, tmp_path / "out") == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert "cannot verify" in line and "porter.verify.core" in line and "nothing was applied" in line
    assert _digest(repo) == before


def test_a_test_interpreter_without_pytest_stops_once_with_the_fix(tmp_path, capsys):
    bare = tmp_path / "python-bare"  # the project's interpreter, without site-packages: no pytest there
    bare.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    bare.chmod(bare.stat().st_mode | stat.S_IXUSR)
    pyproject = PYPROJECT + f'test_cmd = "{bare} -m pytest"\n'
    repo = make_repo(tmp_path / "repo", {"tests/test_mod.py": IMPORTING_TEST}, pyproject)
    before = _digest(repo)
    assert rewrite(repo, tmp_path / "out") == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert "pytest not importable" in line and f"fix: {bare} -m pip install pytest" in line
    assert _digest(repo) == before


def test_a_torch_repository_needs_the_gpu_extra(tmp_path):
    from porter.targets import get_target
    from porter.verify.options import VerifyOptions
    from porter.verify.preflight import VerifierUnavailable, check

    bare = tmp_path / "python-bare"
    bare.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    bare.chmod(bare.stat().st_mode | stat.S_IXUSR)
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "k.py").write_text("import torch\nimport triton\n")
    with pytest.raises(VerifierUnavailable, match="pytest, numpy, torch, triton not importable"):
        check(repo, VerifyOptions(test_cmd=(str(bare), "-m", "pytest")), get_target("mi350x"))
    check(repo, VerifyOptions(), get_target("mi350x"))  # porter's own interpreter has the test extra


def test_a_test_that_deletes_its_tree_applies_nothing(tmp_path, capsys):
    wrecker = (
        "import shutil\nfrom pathlib import Path\n\n\ndef test_wreck():\n"
        "    shutil.rmtree(Path(__file__).resolve().parents[1])\n"
    )
    repo = make_repo(
        tmp_path / "repo",
        {"tests/test_mod.py": IMPORTING_TEST, "tests/test_wreck.py": wrecker},
        PYPROJECT + "select_tests = false\n",
    )
    before = _digest(repo)
    code = rewrite(repo, tmp_path / "out")
    assert code == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert "cannot verify" in line
    assert _digest(repo) == before


def test_an_infinite_timeout_is_a_config_error(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", {"tests/test_mod.py": IMPORTING_TEST}, PYPROJECT + "timeout = inf\n")
    before = _digest(repo)
    assert rewrite(repo, tmp_path / "out") == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert "timeout must be a positive finite number" in line
    assert _digest(repo) == before


def test_a_patch_no_test_imports_is_unverified_and_not_applied(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", {"tests/test_other.py": OTHER_TEST})
    before = _digest(repo)
    assert rewrite(repo, tmp_path / "out") == 1
    assert _digest(repo) == before
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {p["state"] for p in report["patches"]} == {"unverified"}
    reasons = " ".join(r for p in report["patches"] for r in p["verdict"]["reasons"])
    assert "no test that imports" in reasons
    text = capsys.readouterr().out
    assert text.startswith("porter rewrite for mi350x (gfx950): NOT DONE") and "[unverified, not applied]" in text


def test_no_verify_writes_only_with_apply_and_says_so(tmp_path):
    repo = make_repo(tmp_path / "repo", {"tests/test_other.py": OTHER_TEST})
    assert main(["rewrite", str(repo), "--target", "mi350x", "--out", str(tmp_path / "out"), "--no-verify"]) == 1
    assert "AMD_SERIALIZE_KERNEL" not in (repo / "pkg" / "mod.py").read_text()
    assert rewrite(repo, tmp_path / "out2", "--no-verify") == 1
    assert "AMD_SERIALIZE_KERNEL" in (repo / "pkg" / "mod.py").read_text()
    report = (tmp_path / "out2" / "report.md").read_text()
    assert "NOT VERIFIED (--no-verify)" in report.splitlines()[2]


# ---------------------------------------------------------------- the loop on runtime evidence

KERNEL_MODULE = """import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def _warps_for(block):
    return max(4, block // 64)  # 32 warps for 2048 elements: 1024 threads on NVIDIA, 2048 on wave64


def copy(x, block=2048):
    y = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block, num_warps=_warps_for(block))
    return y
"""
KERNEL_TEST = (
    "import torch\nfrom pkg.kern import copy\n\n\ndef test_copy():\n"
    "    x = torch.arange(4096, dtype=torch.float32)\n    assert torch.equal(copy(x), x)\n"
)


@pytest.mark.slow
def test_the_loop_remedies_a_launch_only_the_replay_sees(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {"tests/test_kern.py": KERNEL_TEST},
        ONE_RULE_PYPROJECT,
        modules={"pkg/kern.py": KERNEL_MODULE},
    )
    out = tmp_path / "out"
    code = main(["rewrite", str(repo), "--target", "mi350x", "--out", str(out), "--apply", "--select", "PT101"])
    report = json.loads((out / "report.json").read_text())
    rounds = report["options"]["rounds"]
    assert rounds[0]["patches"] == 0 and any("PT906 pkg/kern.py" in item for item in rounds[0]["new_runtime"])
    (finding,) = report["findings"]  # remedied through PT101's codemod, over the whole launch call
    assert (finding["rule"], finding["provenance"], finding["data"]["runtime_rule"]) == ("PT101", "runtime", "PT906")
    assert report["target_failures"] == []
    assert code == 0, (rounds, [p["verdict"] for p in report["patches"]])
    assert "cap_num_warps(_warps_for(block))" in (repo / "pkg" / "kern.py").read_text()


# ---------------------------------------------------------------- the agent takes the leftovers

PTX_MODULE = """import triton
import triton.language as tl


@triton.jit
def brev_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    y = tl.inline_asm_elementwise("brev.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(y_ptr + offsets, y)
"""
PTX_REPLY = (
    "Reverse the bits with portable integer ops.\npkg/ptx.py\n<<<<<<< SEARCH\n"
    '    y = tl.inline_asm_elementwise("brev.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)\n'
    "=======\n    y = x  # placeholder the stub model proposes\n>>>>>>> REPLACE\n"
)


def test_a_ptx_op_no_codemod_knows_goes_to_the_agent(tmp_path, monkeypatch, capsys):
    repo = make_repo(
        tmp_path / "repo", {"tests/test_other.py": OTHER_TEST}, ONE_RULE_PYPROJECT, modules={"pkg/ptx.py": PTX_MODULE}
    )
    with StubServer([Step(text=PTX_REPLY)]) as server:
        monkeypatch.setenv("PORTER_AGENT_MODEL", "stub-model")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        main(
            [
                "rewrite",
                str(repo),
                "--target",
                "mi350x",
                "--out",
                str(tmp_path / "out"),
                "--select",
                "PT109",
                "--no-verify",
                "--agent",
                "openai",
                "--format",
                "json",
            ]
        )
    assert len(server.requests) == 1
    prompt = json.dumps(server.requests[0])
    # the planner hands a declined op to the model as soon as the codemod declines it (in the first round)
    assert "PT109" in prompt and "brev.b32" in prompt
    report = json.loads(capsys.readouterr().out)
    assert [p["kind"] for p in report["patches"]] == ["agent"]
    assert report["needs_review"] == []


@pytest.mark.slow
def test_porter_verify_shows_runtime_findings_in_every_format(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo", {"tests/test_kern.py": KERNEL_TEST}, modules={"pkg/kern.py": KERNEL_MODULE})
    assert main(["verify", str(repo), "--target", "mi350x", "--format", "json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    (finding,) = payload["runtime_findings"]
    launch = next(i for i, line in enumerate(KERNEL_MODULE.splitlines(), 1) if "copy_kernel[" in line)
    assert (finding["rule"], finding["path"], finding["line"], finding["provenance"]) == (
        "PT906",
        "pkg/kern.py",
        launch,
        "runtime",
    )
    assert "2048 threads" in finding["message"]
    assert main(["verify", str(repo), "--target", "mi350x"]) == 1
    text = capsys.readouterr().out
    assert "runtime findings (1)" in text and f"pkg/kern.py:{launch} PT906" in text


ATTENTION = """\
import torch


def attention(q, k, v):
    from flash_attn import flash_attn_func

    return flash_attn_func(q, k, v)
"""


def test_an_opt_in_finding_on_the_line_that_failed_on_the_target_is_reported(tmp_path):
    """Opt-in rules stay off (noisy on real code) until the replay fails on their line: the target's
    evidence then makes the finding real, with provenance runtime, so the loop remedies it."""
    from porter.config import PorterConfig
    from porter.pipeline import RewriteSettings, confirmed_opt_in_findings
    from porter.records import TestRun, Verdict
    from porter.targets import get_target

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "attn.py").write_text(ATTENTION, encoding="utf-8")
    trace = (
        "tests/test_ops.py:7: in test_attention\npkg/attn.py:5: in attention\n"
        "E   ModuleNotFoundError: No module named 'flash_attn'\n"
    )
    run = TestRun(command=["pytest"], errors=["tests/test_ops.py"], output_tail=trace)
    settings = RewriteSettings(target=get_target("mi350x"), config=PorterConfig())
    [finding] = confirmed_opt_in_findings(tmp_path, Verdict("baseline", False, tests=run), settings, [])
    assert (finding.rule, finding.path, finding.line, finding.provenance) == ("PT301", "pkg/attn.py", 5, "runtime")
    green = TestRun(command=["pytest"], passed=["tests/test_ops.py::test_ok"], output_tail=trace)
    assert confirmed_opt_in_findings(tmp_path, Verdict("baseline", True, tests=green), settings, []) == []


def test_an_lds_overflow_seen_only_under_an_unverified_patch_becomes_a_finding_at_the_repository_line():
    """A TF32 dot fixed for gfx950 is what lets the kernel compile at all; only that run sees that a
    config then needs 192 KiB of LDS. The evidence must reach the next round (PT907) at the unpatched
    file's lines, or the fix stays unverified round after round. Rejected patches' runs do not count."""
    from porter.pipeline import limits_seen_unverified
    from porter.records import CompileRecord, FileEdit, Patch, Plan, Verdict, Verification
    from porter.targets import get_target

    target = get_target("mi350x")
    before = "import triton\n\n\ndef run():\n    kernel[grid](x)\n"
    after = "import triton\nfrom pkg import _porter_shim as porter_shim\n\n\ndef run():\n    kernel[grid](x)\n"
    patch = Patch("0002-PT114", "shim", ["PT114"], "t", "r", [FileEdit("pkg/mm.py", before, after)])
    over = CompileRecord(
        "kernel",
        {"BLOCK_K": 64, "num_stages": 3},
        "gfx950",
        True,
        lds_bytes=196608,
        lds_limit=163840,
        source="pkg/mm.py",
        launch_site="pkg/mm.py:6",
        kernel_line=6,
    )
    unverified = Verdict("0002-PT114", False, compiles=[over], state="unverified")
    plan = Plan(target=target, patches=[patch])
    [finding] = limits_seen_unverified(Path("/nonexistent"), plan, Verification([unverified]), target)
    assert (finding.rule, finding.path, finding.line, finding.data["launch"]["line"]) == ("PT907", "pkg/mm.py", 5, 5)
    assert finding.data["value"] == {"name": "lds_bytes", "value": 196608, "limit": 163840}
    rejected = Verdict("0002-PT114", False, compiles=[over])
    assert limits_seen_unverified(Path("/nonexistent"), plan, Verification([rejected]), target) == []
    assert limits_seen_unverified(Path("/nonexistent"), plan, Verification([unverified], problem="x"), target) == []
