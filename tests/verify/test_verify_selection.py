"""Import-graph test selection and the isolated workspace (no subprocess, no torch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.records import FileEdit, Patch
from porter.verify.selection import build_import_graph, select_tests
from porter.verify.workspace import PatchApplyError, apply_patch, copy_tree


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def layered(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/core.py": "VALUE = 1\n",
            "pkg/mid.py": "from . import core\n",
            "pkg/top.py": "from pkg.mid import core\n",
            "pkg/other.py": "X = 2\n",
            "tests/test_top.py": "import pkg.top\n",
            "tests/test_other.py": "from pkg import other\n",
            "tests/test_core_direct.py": "from pkg.core import VALUE\n",
            "tests/unit/conftest.py": "import pkg.mid\n",
            "tests/unit/test_plain.py": "def test_x():\n    pass\n",
        },
    )


def test_relative_imports_resolve_to_repository_files(layered: Path) -> None:
    graph = build_import_graph(layered)
    assert graph.modules["pkg.mid"] == "pkg/mid.py"
    assert "pkg.core" in graph.imports["pkg/mid.py"]


def test_transitive_importers_and_conftest_directories_are_selected(layered: Path) -> None:
    selected = select_tests(layered, ["pkg/core.py"])
    assert selected == ["tests/test_core_direct.py", "tests/test_top.py", "tests/unit/test_plain.py"]


def test_unrelated_module_selects_only_its_tests(layered: Path) -> None:
    assert select_tests(layered, ["pkg/other.py"]) == ["tests/test_other.py"]


@pytest.mark.parametrize("touched", [["pyproject.toml"], ["tests/unit/conftest.py"], ["pkg/new_module.py"]])
def test_non_module_changes_fall_back_to_the_full_suite(layered: Path, touched: list[str]) -> None:
    assert select_tests(layered, touched) is None


def test_copy_honours_gitignore_and_skips_default_excludes(tmp_path: Path) -> None:
    source = write(
        tmp_path / "src",
        {
            ".gitignore": "*.log\nbuild-out/\n",
            "a.py": "x\n",
            "run.log": "noise\n",
            "build-out/b.py": "y\n",
            "__pycache__/c.pyc": "z",
            "sub/.gitignore": "keep.txt\n",
            "sub/keep.txt": "no\n",
            "sub/d.py": "w\n",
        },
    )
    copy_tree(source, tmp_path / "copy")
    copied = sorted(p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert copied == [".gitignore", "a.py", "sub/.gitignore", "sub/d.py"]


def test_patch_computed_against_other_text_is_refused_precisely(tmp_path: Path) -> None:
    root = write(tmp_path, {"m.py": "a = 1\nb = 2\n"})
    stale = Patch("0001", "codemod", [], "t", "r", [FileEdit("m.py", "a = 1\nb = 3\n", "a = 1\nb = 4\n")])
    with pytest.raises(PatchApplyError, match=r"m.py: the file differs .* \(line 2\)"):
        apply_patch(root, stale)
    escaping = Patch("0002", "codemod", [], "t", "r", [FileEdit("../outside.py", None, "x = 1\n")])
    with pytest.raises(PatchApplyError, match="leaves the repository"):
        apply_patch(root, escaping)


def test_config_table_fills_options_and_names_bad_keys() -> None:
    from porter.errors import ConfigError
    from porter.verify.options import VerifyOptions

    options = VerifyOptions().with_config({"test_cmd": "python -m pytest -x tests", "timeout": 30, "jobs": 0})
    assert options.test_cmd == ("python", "-m", "pytest", "-x", "tests")
    assert (options.timeout_s, options.jobs) == (30.0, 0)
    flagged = VerifyOptions(test_cmd=("make", "test")).with_config({"test_cmd": "pytest"})
    assert flagged.test_cmd == ("make", "test")  # the flag wins over the file
    with pytest.raises(ConfigError, match=r"pyproject.toml: \[tool.porter.verify\] unknown key\(s\) tets_cmd"):
        VerifyOptions().with_config({"tets_cmd": "pytest"})
    with pytest.raises(ConfigError, match="timeout must be a positive finite number"):
        VerifyOptions().with_config({"timeout": -1})


def test_junit_parsing_maps_node_ids_and_not_replayed(tmp_path: Path) -> None:
    from porter.records import TestRun
    from porter.verify.runner import parse_junit

    junit = tmp_path / "junit.xml"
    junit.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="tests.test_a" name="test_ok[1]"/>'
        '<testcase classname="tests.test_a.TestGroup" name="test_bad"><failure message="m">E   AssertionError: x'
        "</failure></testcase>"
        '<testcase classname="" name="tests.test_broken"><error message="collection failure">'
        "E   ImportError: nope</error></testcase>"
        '<testcase classname="tests.test_a" name="test_asm"><skipped message="porter-not-replayed: uses inline asm"/>'
        '</testcase><testcase classname="tests.test_a" name="test_skip"><skipped message="no gpu"/></testcase>'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    run = TestRun(command=[])
    parse_junit(junit, run)
    assert run.passed == ["tests/test_a.py::test_ok[1]"]
    assert run.failed == ["tests/test_a.py::TestGroup::test_bad"]
    assert run.errors == ["tests/test_broken.py"]
    assert run.messages == {
        "tests/test_a.py::TestGroup::test_bad": "AssertionError: x",
        "tests/test_broken.py": "ImportError: nope",
    }
    assert run.not_replayed == {"tests/test_a.py::test_asm": "uses inline asm"}
    assert run.skipped == ["tests/test_a.py::test_skip"]
