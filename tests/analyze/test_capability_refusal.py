"""PT225 across modules: the capability helper lives in another module of the scanned tree (issue 14 recall)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from porter.analyze import load_rules
from porter.analyze.scan import scan_tree
from porter.config import PorterConfig

RULES = Path(__file__).resolve().parents[2] / "rules" / "pytorch"

HIP_EXCLUDED = """
    import torch
    def has_cuda_capability(major: int, minor: int) -> bool:
        return torch.cuda.is_available() and torch.version.hip is None and torch.cuda.get_device_capability() >= (major, minor)
"""
CAPABILITY_ONLY = """
    import torch
    def has_cuda_capability(major: int, minor: int) -> bool:
        return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (major, minor)
"""
FLOAT8 = """
    from pkg.tools.utils import has_cuda_capability
    class Float8Converter:
        def __init__(self, emulate: bool):
            if has_cuda_capability(8, 9) or emulate:
                pass
            else:
                raise ValueError("float8 needs SM89")
"""
MX = """
    from pkg.tools.utils import has_cuda_capability
    class MXConverter:
        def __init__(self):
            assert has_cuda_capability(10, 0), "MXFP8 needs SM100"
"""


def _lines(tmp_path: Path, utils: str, module: str, name: str, target: str) -> list[int]:
    (tmp_path / "pkg" / "tools").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tools" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tools" / "utils.py").write_text(textwrap.dedent(utils))
    (tmp_path / "pkg" / name).write_text(textwrap.dedent(module))
    ruleset = load_rules([RULES / "PT225-capability-predicate-refuses-amd-fp8.yaml"])
    found = scan_tree(tmp_path, target, ruleset, jobs=1, use_cache=False, config=PorterConfig())
    return [f.line for f in found.findings if f.rule == "PT225"]


@pytest.mark.parametrize(
    ("utils", "module", "name", "target", "expected"),
    [
        (HIP_EXCLUDED, FLOAT8, "float8.py", "mi300x", [5]),  # torchtitan#3760: False on every ROCm build
        (CAPABILITY_ONLY, FLOAT8, "float8.py", "mi300x", []),  # (9, 4) >= (8, 9): the gate admits gfx942
        (CAPABILITY_ONLY, MX, "mx.py", "mi350x", [5]),  # torchtitan#2222: (9, 5) < (10, 0) refuses gfx950's MX
        (CAPABILITY_ONLY, MX, "mx.py", "mi300x", []),  # gfx942 has no MX hardware: the refusal is right
        (
            HIP_EXCLUDED,
            FLOAT8.replace("Float8", "Attention").replace("float8", "attention"),
            "attention.py",
            "mi300x",
            [],
        ),  # not fp8 / MX code
    ],
)
def test_imported_capability_helper_is_evaluated_at_the_refusal(tmp_path, utils, module, name, target, expected):
    assert _lines(tmp_path, utils, module, name, target) == expected


def test_an_imported_helper_the_tree_does_not_hold_is_not_reported(tmp_path):
    (tmp_path / "float8.py").write_text(textwrap.dedent(FLOAT8).replace("pkg.tools.utils", "elsewhere"))
    ruleset = load_rules([RULES / "PT225-capability-predicate-refuses-amd-fp8.yaml"])
    found = scan_tree(tmp_path, "mi300x", ruleset, jobs=1, use_cache=False, config=PorterConfig())
    assert [f for f in found.findings if f.rule == "PT225"] == []
