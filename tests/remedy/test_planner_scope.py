"""What the planner patches: never the project's tests, mocks or skip conditions (unless asked), and the
shim inside the package each patched module ships in."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.config import PorterConfig
from porter.errors import ConfigError
from porter.records import Finding
from porter.remedy.planner import PlanOptions, plan_patches
from porter.remedy.project_tests import is_test_path, why_test_code
from porter.targets import get_target

TARGET = get_target("mi350x")

TEST_MODULE = """\
import pytest
import torch
from unittest import mock


@pytest.mark.skipif(torch.cuda.get_device_capability() < (9, 0), reason="Hopper fast path")
def test_fast_path():
    pass


def test_grid_uses_the_sm_count():
    with mock.patch("torch.cuda.get_device_properties") as props:
        props.return_value.multi_processor_count = 132
        assert grid(props.return_value) == 132
"""

HELPERS = """\
import torch


def fake_h100(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))


def sm_count():
    return 132


def maybe_skip():
    if torch.cuda.get_device_capability() < (9, 0):
        raise unittest.SkipTest("needs sm_90")
"""


def finding(rule: str, path: str, line: int, fix: str = "codemod", **kwargs) -> Finding:
    return Finding(
        rule=rule,
        name=rule.lower(),
        severity="error",
        path=path,
        line=line,
        column=1,
        end_line=line,
        end_column=80,
        message=f"{rule} here",
        fix=fix,
        **kwargs,
    )


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    "path, expected",
    [
        ("tests/test_x.py", True),
        ("pkg/tests/helpers.py", True),
        ("conftest.py", True),
        ("src/pkg/x_test.py", True),
        ("src/pkg/testing_utils.py", False),
        ("src/pkg/kernels.py", False),
        ("test_data.json", False),
    ],
)
def test_test_paths(path, expected):
    assert is_test_path(path) is expected


def test_findings_in_tests_are_reported_not_patched(tmp_path):
    root = write(tmp_path, {"tests/test_hw.py": TEST_MODULE, "pkg/__init__.py": "", "pkg/helpers.py": HELPERS})
    findings = [
        finding("PT202", "tests/test_hw.py", 6),
        finding("PT116", "tests/test_hw.py", 13),
        finding("PT202", "pkg/helpers.py", 5),
        finding("PT202", "pkg/helpers.py", 13),
        finding("PT116", "pkg/helpers.py", 9),
    ]
    plan = plan_patches(root, findings, TARGET)
    touched = {path for patch in plan.patches for path in patch.paths}
    assert "tests/test_hw.py" not in touched
    reviewed = {(item.finding.path, item.finding.line): item for item in plan.needs_review}
    assert {key for key, item in reviewed.items() if item.kind == "test"} == {
        ("tests/test_hw.py", 6),
        ("tests/test_hw.py", 13),
        ("pkg/helpers.py", 5),
        ("pkg/helpers.py", 13),
    }
    assert "a mock (monkeypatch.setattr)" in reviewed[("pkg/helpers.py", 5)].reason
    assert "a skip condition" in reviewed[("pkg/helpers.py", 13)].reason
    assert "patch_tests = true" in reviewed[("tests/test_hw.py", 13)].reason
    assert [p.rules for p in plan.patches if "pkg/helpers.py" in p.paths] == [["PT116"]]  # the plain SM count


def test_patch_tests_lets_porter_edit_them(tmp_path):
    root = write(tmp_path, {"tests/test_hw.py": TEST_MODULE})
    plan = plan_patches(root, [finding("PT116", "tests/test_hw.py", 13)], TARGET, PlanOptions(patch_tests=True))
    assert any("tests/test_hw.py" in p.paths for p in plan.patches)
    assert not [item for item in plan.needs_review if item.kind == "test"]


def test_patch_tests_from_the_remedy_table():
    config = PorterConfig(tables={"remedy": {"patch_tests": True}}, source="pyproject.toml")
    assert PlanOptions.from_config(config, exclusive=True).patch_tests is True
    assert PlanOptions.from_config(PorterConfig()).patch_tests is False
    with pytest.raises(ConfigError, match=r"\[tool.porter.remedy\] patch_tests: expected true or false"):
        PlanOptions.from_config(PorterConfig(tables={"remedy": {"patch_tests": "yes"}}))
    with pytest.raises(ConfigError, match="unknown key"):
        PlanOptions.from_config(PorterConfig(tables={"remedy": {"patch_test": True}}))


def test_a_mock_in_a_module_is_found_by_its_lines():
    f = finding("PT116", "pkg/helpers.py", 5)
    assert why_test_code("pkg/helpers.py", HELPERS, f) is not None
    assert why_test_code("pkg/helpers.py", HELPERS, finding("PT116", "pkg/helpers.py", 9)) is None


LAUNCH = """\
import triton


def launch(kernel, x):
    kernel[(1,)](x, BLOCK=1024, num_warps=32)
"""


def test_one_shim_per_package_src_layout_and_namespace_packages(tmp_path):
    root = write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "alpha"\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
            "src/alpha/__init__.py": "",
            "src/alpha/ops/__init__.py": "",
            "src/alpha/ops/k.py": LAUNCH,
            "src/beta/__init__.py": "",
            "src/beta/k.py": LAUNCH,
            "src/acme/kernels/__init__.py": "",
            "src/acme/kernels/k.py": LAUNCH,  # acme: a namespace package
            "src/acme/loose/k.py": LAUNCH,  # a namespace package's own module
        },
    )
    paths = ["src/alpha/ops/k.py", "src/beta/k.py", "src/acme/kernels/k.py", "src/acme/loose/k.py"]
    plan = plan_patches(root, [finding("PT101", path, 5) for path in paths], TARGET)
    shims = sorted(p.paths[0] for p in plan.patches if p.kind == "shim" and not p.rules)
    assert shims == [
        "src/acme/kernels/_porter_shim.py",
        "src/acme/loose/_porter_shim.py",
        "src/alpha/_porter_shim.py",
        "src/beta/_porter_shim.py",
    ]
    imports = {p.paths[0]: p.edits[0].after for p in plan.patches if p.rules}
    assert "from alpha import _porter_shim as porter_shim" in imports["src/alpha/ops/k.py"]
    assert "from beta import _porter_shim as porter_shim" in imports["src/beta/k.py"]
    assert "from acme.kernels import _porter_shim as porter_shim" in imports["src/acme/kernels/k.py"]
    assert "from acme.loose import _porter_shim as porter_shim" in imports["src/acme/loose/k.py"]
    by_path = {p.paths[0]: p for p in plan.patches}
    assert by_path["src/beta/k.py"].depends_on == [by_path["src/beta/_porter_shim.py"].id]


def test_a_configured_shim_module_is_shared(tmp_path):
    root = write(
        tmp_path,
        {
            "src/alpha/__init__.py": "",
            "src/alpha/k.py": LAUNCH,
            "src/beta/__init__.py": "",
            "src/beta/k.py": LAUNCH,
            "src/common/__init__.py": "",
        },
    )
    plan = plan_patches(
        root,
        [finding("PT101", p, 5) for p in ("src/alpha/k.py", "src/beta/k.py")],
        TARGET,
        PlanOptions(shim_module="common.gpu"),
    )
    assert [p.paths for p in plan.patches if not p.rules] == [["src/common/gpu.py"]]
    assert all("from common import gpu as porter_shim" in p.edits[0].after for p in plan.patches if p.rules)


def test_an_agent_patch_that_imports_the_shim_depends_on_it(tmp_path):
    from porter.records import FileEdit, Patch

    root = write(tmp_path, {"src/alpha/__init__.py": "", "src/alpha/k.py": "x = 1\n"})
    statement = "from alpha import _porter_shim as porter_shim"

    def agent(findings, text, target):
        return Patch(
            id="",
            kind="agent",
            rules=[findings[0].rule],
            title="agent",
            rationale="",
            edits=[FileEdit("src/alpha/k.py", text, f"{statement}\nx = porter_shim.WARP_SIZE\n")],
        )

    plan = plan_patches(root, [finding("PT109", "src/alpha/k.py", 1)], TARGET, PlanOptions(agent=agent))
    shim, answer = plan.patches
    assert shim.paths == ["src/alpha/_porter_shim.py"] and answer.depends_on == [shim.id]
