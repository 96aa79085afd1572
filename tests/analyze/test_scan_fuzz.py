"""Property tests: arbitrary text through analyze_source and arbitrary bytes through scan_tree never crash."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from porter.analyze import analyze_source, load_rules
from porter.analyze.scan import scan_tree
from porter.records import Finding
from porter.targets import get_target

# Fragments of the code the rules look for, so generated text reaches the matchers, not only the parser.
FRAGMENTS = [
    "import torch",
    "import triton",
    "import triton.language as tl",
    "from torch.backends import cuda",
    "@triton.jit",
    "@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=32, num_stages=4)], key=[])",
    "def kernel(x_ptr, BLOCK: tl.constexpr):",
    "    pass",
    "torch.backends.cuda.matmul.allow_tf32 = True",
    "os.environ['CUDA_VISIBLE_DEVICES'] = '0'",
    "x = torch.float8_e4m3fn",
    "y = 448.0",
    "kernel[(1,)](x, num_warps=8)",
    "subprocess.run(['nvidia-smi'])",
    "from flash_attn import flash_attn_func",
    "(",
    ")",
    "]",
    "'''",
    "\\",
    "\t",
    "# noqa: PT101",
    "# porter: ignore[PT101]",
    "lambda: (yield)",
    "x: int = 1",
    "async def f(): await g()",
]
python_ish = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=30), max_size=25).map("\n".join)
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def ruleset():
    return load_rules()


def check(findings, text: str) -> None:
    assert isinstance(findings, list) and all(isinstance(f, Finding) for f in findings)
    for finding in findings:
        assert finding.line >= 1 and finding.column >= 1 and finding.end_line >= finding.line
        assert finding.severity in ("error", "warning", "info")


@FUZZ
@given(text=st.one_of(python_ish, st.text(max_size=400)), target=st.sampled_from(["mi300x", "mi350x"]))
def test_analyze_source_never_raises(ruleset, text, target):
    check(analyze_source(text, "fuzz.py", get_target(target), ruleset), text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.one_of(st.binary(max_size=400), python_ish.map(lambda text: text.encode("utf-8"))))
def test_scan_tree_never_raises_on_arbitrary_bytes(ruleset, data):
    root = Path(tempfile.mkdtemp(prefix="porter-fuzz-"))
    try:
        (root / "fuzz.py").write_bytes(data)
        result = scan_tree(root, "mi350x", ruleset, jobs=1, use_cache=False)
        assert result.stats.files_seen == 1
        accounted = len(result.skipped) + result.stats.analyzed + result.stats.prefiltered
        unreadable = [f for f in result.findings if f.rule == "PT001" and f.message.startswith("not checked")]
        assert accounted + (len(unreadable) if not accounted else 0) == 1  # not UTF-8: a PT001, not a skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
